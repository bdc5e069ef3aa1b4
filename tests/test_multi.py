"""Several relevant tokens (chapter 11): the task (30), the predictor (31), and the exact risk.

* :class:`MultiLocationTask`: the law of eq. (30) by Monte Carlo, tolerances from standard
  errors (positions distinct and uniform over ordered tuples; relevant tokens
  N(q k_m*, gamma^2 I), independent of each other; noise tokens N(0, I); Y's mean, variance
  = null_risk, and the residual Y - sum_m X_{J_m}^T v_m* of variance eps^2); bad input.
* :func:`multi_head_erf_attention`: the sum over heads of :func:`erf_attention`;
  permutation invariance over tokens; bad shapes.
* :mod:`slrlib.book.ch11_multi`: the exact risk against Theorem 1 (one head, one location), against
  Monte Carlo (several heads and locations), exact invariances, quadrature convergence, its
  gradient against finite differences; population PGD; the chapter's helpers; bad input.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from helpers import random_unit
from slrlib import (
    MultiLocationTask,
    SLRTask,
    erf_attention,
    multi_head_erf_attention,
    population_risk,
)
from slrlib.book import ch11_multi as multi
from slrlib.experiments import SGD_CONFIGS, match_heads, matched_overlaps, sgd_initialisation
from slrlib.training.sgd import SGDResult

Z_TOL = 4.5  # |gap| in standard errors; with ~150 comparisons P(any > 4.5) ~ 1e-3 under the null
EPS = np.finfo(np.float64).eps  # 2.2e-16


def _z(estimate, stderr, reference):
    return (np.asarray(estimate) - np.asarray(reference)) / np.asarray(stderr)


# =============================================================================== the task (30)
LAW_TASK = MultiLocationTask(d=4, L=4, M=2, gamma=0.6, eps=0.3)
LAW_N = 60_000


@pytest.fixture(scope="module")
def law_sample():
    Ks, Vs = LAW_TASK.oracle_directions(jax.random.key(11))
    s = LAW_TASK.sample(jax.random.key(12), LAW_N, Ks, Vs)
    return Ks, Vs, np.asarray(s.X), np.asarray(s.y), np.asarray(s.J)


def test_oracle_directions_shapes_and_assumption_1():
    task = MultiLocationTask(d=7, L=5, M=3)
    Ks, Vs = task.oracle_directions(jax.random.key(0))
    assert Ks.shape == Vs.shape == (3, 7)
    np.testing.assert_allclose(np.linalg.norm(Ks, axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(Vs, axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.sum(Ks * Vs, axis=-1), 0.0, atol=1e-12)
    assert not np.allclose(Ks[0], Ks[1])  # the pairs are drawn independently
    assert task.null_risk == pytest.approx(3 * task.gamma**2 + task.eps**2)


def test_positions_are_distinct_and_uniform_over_ordered_pairs(law_sample):
    *_, J = law_sample
    L, M = LAW_TASK.L, LAW_TASK.M
    assert J.shape == (LAW_N, M)
    assert J.min() >= 0 and J.max() < L
    assert np.all(J[:, 0] != J[:, 1])
    counts = np.zeros((L, L))
    np.add.at(counts, (J[:, 0], J[:, 1]), 1)
    observed = counts[~np.eye(L, dtype=bool)]  # the L(L-1) = 12 ordered pairs
    expected = LAW_N / observed.size
    chi2 = float(np.sum((observed - expected) ** 2 / expected))
    assert stats.chi2.sf(chi2, observed.size - 1) > 1e-4, chi2


@pytest.fixture(scope="module")
def three_locations():
    task = MultiLocationTask(5, 5, 3, 0.6, 0.1)
    Ks, Vs = task.oracle_directions(jax.random.key(1))
    return task, Ks, Vs, task.sample(jax.random.key(2), 100_000, Ks, Vs)


def test_three_locations_are_distinct(three_locations):
    task, _, _, s = three_locations
    J = np.sort(np.asarray(s.J), axis=1)
    assert np.all(np.diff(J, axis=1) > 0)
    # each position is relevant with probability M / L = 3/5
    freq = np.array([(J == ell).any(axis=1).mean() for ell in range(task.L)])
    assert np.all(np.abs(freq - 0.6) <= Z_TOL * math.sqrt(0.6 * 0.4 / J.shape[0])), freq


def _mean_and_cov_z(Z, mean, cov):
    """z-scores of the sample mean and covariance of Gaussian rows Z against (mean, cov)."""
    n = Z.shape[0]
    z_mean = _z(Z.mean(axis=0), np.sqrt(np.diag(cov) / n), mean)
    C = (Z - mean).T @ (Z - mean) / n
    se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / n)  # Var of a Gaussian product moment
    return z_mean, _z(C, se, cov)


def test_relevant_and_noise_tokens_have_the_law_of_eq_30(law_sample, record_z):
    Ks, _, X, _, J = law_sample
    d, g2, q = LAW_TASK.d, LAW_TASK.gamma**2, LAW_TASK.q
    rows = np.arange(LAW_N)
    for m in range(LAW_TASK.M):
        Xm = X[rows, J[:, m]]
        zm, zc = _mean_and_cov_z(Xm, q * np.asarray(Ks[m]), g2 * np.eye(d))
        record_z(zm, f"relevant token {m} mean")
        assert np.all(np.abs(zm) < Z_TOL) and np.all(np.abs(zc) < Z_TOL), (zm, zc)
    noise = np.ones((LAW_N, LAW_TASK.L), bool)
    noise[rows[:, None], J] = False
    Xn = X[noise]  # every noise token, pooled: independent N(0, I)
    zm, zc = _mean_and_cov_z(Xn, np.zeros(d), np.eye(d))
    assert np.all(np.abs(zm) < Z_TOL) and np.all(np.abs(zc) < Z_TOL), (zm, zc)


def test_the_two_relevant_tokens_have_independent_noises(law_sample):
    """Eq. (30) draws the relevant tokens independently given J (the authors' notebook shares
    one noise between them): their centred cross-covariance must vanish."""
    Ks, _, X, _, J = law_sample
    rows = np.arange(LAW_N)
    E1 = X[rows, J[:, 0]] - LAW_TASK.q * np.asarray(Ks[0])
    E2 = X[rows, J[:, 1]] - LAW_TASK.q * np.asarray(Ks[1])
    cross = E1.T @ E2 / LAW_N
    se = LAW_TASK.gamma**2 / math.sqrt(LAW_N)
    assert np.all(np.abs(cross / se) < Z_TOL), cross / se


def test_label_mean_variance_and_residual(law_sample, record_z):
    _, Vs, X, y, J = law_sample
    rows = np.arange(LAW_N)
    z = _z(y.mean(), y.std() / math.sqrt(LAW_N), 0.0)
    z2 = _z(np.mean(y**2), np.std(y**2) / math.sqrt(LAW_N), LAW_TASK.null_risk)
    record_z([z, z2], "E[Y], E[Y^2] = M gamma^2 + eps^2")
    assert abs(z) < Z_TOL and abs(z2) < Z_TOL
    signal = sum(X[rows, J[:, m]] @ np.asarray(Vs[m]) for m in range(LAW_TASK.M))
    xi = y - signal
    e2 = LAW_TASK.eps**2
    assert abs(_z(xi.mean(), math.sqrt(e2 / LAW_N), 0.0)) < Z_TOL
    assert abs(_z(np.mean(xi**2), e2 * math.sqrt(2 / LAW_N), e2)) < Z_TOL
    # xi is independent of the tokens: uncorrelated with every coordinate of the first token
    corr = X[:, 0, :].T @ xi / LAW_N
    assert np.all(np.abs(corr / (LAW_TASK.eps * np.sqrt(np.mean(X[:, 0, :] ** 2, axis=0) / LAW_N))) < Z_TOL)


def test_sample_is_reproducible():
    Ks, Vs = LAW_TASK.oracle_directions(jax.random.key(3))
    a = LAW_TASK.sample(jax.random.key(4), 10, Ks, Vs)
    b = LAW_TASK.sample(jax.random.key(4), 10, Ks, Vs)
    c = LAW_TASK.sample(jax.random.key(5), 10, Ks, Vs)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.allclose(a.X, c.X)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"d": 1, "L": 4}, "d"),
        ({"d": 0, "L": 4}, "d"),
        ({"d": 4, "L": 0}, "L"),
        ({"d": 4, "L": 3, "M": 4}, "M"),
        ({"d": 4, "L": 3, "M": 0}, "M"),
        ({"d": 4, "L": 3, "gamma": 0.0}, "gamma"),
        ({"d": 4, "L": 3, "eps": -0.1}, "eps"),
        ({"d": 4.5, "L": 3}, "d"),
    ],
)
def test_task_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=name):
        MultiLocationTask(**kwargs)


def test_sample_bad_input():
    task = MultiLocationTask(d=4, L=3, M=2)
    Ks, Vs = task.oracle_directions(jax.random.key(0))
    with pytest.raises(ValueError, match="n"):
        task.sample(jax.random.key(1), 0, Ks, Vs)
    with pytest.raises(ValueError, match="K_star"):
        task.sample(jax.random.key(1), 5, Ks[:1], Vs)
    with pytest.raises(ValueError, match="V_star"):
        task.sample(jax.random.key(1), 5, Ks, 2 * Vs)
    with pytest.raises(ValueError, match="orthogonal"):
        task.sample(jax.random.key(1), 5, Ks, Ks)
    with pytest.raises(ValueError, match="key"):
        task.sample(0, 5, Ks, Vs)


# ========================================================================= the predictor (31)
def _heads(key, H, d):
    kk, kv = jax.random.split(key)
    return random_unit(kk, (H, d)), random_unit(kv, (H, d))


@pytest.mark.parametrize("H, lam", [(1, 0.7), (2, 0.3), (4, 2.0)])
@pytest.mark.roundoff
def test_multi_head_is_the_sum_of_single_heads(H, lam):
    d, L = 5, 6
    X = jax.random.normal(jax.random.key(H), (7, L, d)) * 2.0
    K, V = _heads(jax.random.key(10 + H), H, d)
    total = multi_head_erf_attention(X, K, V, lam)
    by_head = sum(erf_attention(X, K[h], V[h], lam) for h in range(H))
    np.testing.assert_allclose(total, by_head, rtol=1e-12, atol=1e-12)
    assert total.shape == (7,)


def test_multi_head_is_invariant_to_permuting_tokens_and_heads():
    d, L, H = 4, 7, 3
    X = jax.random.normal(jax.random.key(0), (5, L, d))
    K, V = _heads(jax.random.key(1), H, d)
    base = multi_head_erf_attention(X, K, V, 0.9)
    perm = np.asarray(jax.random.permutation(jax.random.key(2), L))
    np.testing.assert_allclose(multi_head_erf_attention(X[:, perm], K, V, 0.9), base, rtol=1e-12)
    hp = np.array([2, 0, 1])
    np.testing.assert_allclose(multi_head_erf_attention(X, K[hp], V[hp], 0.9), base, rtol=1e-12)
    # flipping the sign of one whole head leaves it unchanged (erf is odd)
    np.testing.assert_allclose(multi_head_erf_attention(X, K.at[0].multiply(-1), V.at[0].multiply(-1), 0.9),
                               base, rtol=1e-12)


def test_multi_head_bad_input():
    d = 4
    X = jnp.ones((3, 5, d))
    K, V = _heads(jax.random.key(0), 2, d)
    with pytest.raises(ValueError, match="K"):
        multi_head_erf_attention(X, K[0], V, 1.0)  # K must be (H, d)
    with pytest.raises(ValueError, match="K and V"):
        multi_head_erf_attention(X, K, V[:1], 1.0)
    with pytest.raises(ValueError, match="V"):
        multi_head_erf_attention(X, K, jnp.ones((2, d + 1)) / math.sqrt(d + 1), 1.0)
    with pytest.raises(ValueError, match="K"):
        multi_head_erf_attention(X, 2 * K, V, 1.0)  # not unit
    with pytest.raises(ValueError, match="lam"):
        multi_head_erf_attention(X, K, V, -1.0)
    with pytest.raises(ValueError, match="X"):
        multi_head_erf_attention(jnp.ones((3, 5, d + 1)), K, V, 1.0)


# ===================================================================== the exact risk (multi.py)
@pytest.mark.parametrize("d, L, gamma, eps", [(12, 5, 0.7, 0.2), (12, 5, 1.2, 0.0)])
@pytest.mark.roundoff
def test_one_head_one_location_is_theorem_1(d, L, gamma, eps):
    """M = H = 1: the task is single-location regression with uniform J_0, and the risk is the
    closed form of Theorem 1 (Proposition 15), derived independently. lam = 2 makes erf steep
    on the noise tokens: the hardest case for the quadrature."""
    task = MultiLocationTask(d, L, 1, gamma, eps)
    Ks, Vs = task.oracle_directions(jax.random.key(d))
    K, V = _heads(jax.random.key(d + 1), 4, d)
    mix = lambda a, b: (a + b) / jnp.linalg.norm(a + b, axis=-1, keepdims=True)
    ks = jnp.concatenate([K, Ks, mix(Ks, K[:1])])
    vs = jnp.concatenate([V, Vs, mix(Vs, K[1:2])])
    lams = jnp.array([0.05, 1 / 3, 0.9, 2.0])
    got = multi.multi_head_risk(ks[:, None, None], vs[:, None, None], Ks, Vs, lams[None, :], task)
    ref = population_risk(ks[:, None], vs[:, None], Ks[0], Vs[0], lams[None, :], SLRTask(d, L, gamma, eps))
    assert got.shape == ref.shape == (6, 4)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


def _mc_check(task, Ks, Vs, s, H, lam, record_z):
    K, V = _heads(jax.random.key(7 * H), H, task.d)
    points = [(K, V)]
    if H >= task.M:  # the ideal heads, padded with random ones
        points.append((jnp.concatenate([Ks, K[task.M:]]), jnp.concatenate([Vs, V[task.M:]])))
    tilt = K + jnp.concatenate([Ks, Ks])[:H]
    points.append((tilt / jnp.linalg.norm(tilt, axis=-1, keepdims=True), V))
    for K_, V_ in points:
        err = np.asarray(jnp.square(multi_head_erf_attention(s.X, K_, V_, lam) - s.y))
        exact = float(multi.multi_head_risk(K_, V_, Ks, Vs, lam, task))
        z = _z(err.mean(), err.std() / math.sqrt(err.size), exact)
        record_z(z, f"multi-head risk, M={task.M}, H={H}, lam={lam}")
        assert abs(z) < Z_TOL, (z, err.mean(), exact)


def test_exact_risk_against_monte_carlo_two_locations(record_z):
    task = MultiLocationTask(6, 4, 2, 0.8, 0.3)
    Ks, Vs = task.oracle_directions(jax.random.key(6))
    s = task.sample(jax.random.key(99), 100_000, Ks, Vs)
    for lam in (0.2, 0.7):
        _mc_check(task, Ks, Vs, s, 2, lam, record_z)


def test_exact_risk_against_monte_carlo_three_locations(three_locations, record_z):
    task, Ks, Vs, s = three_locations
    _mc_check(task, Ks, Vs, s, 3, 1.5, record_z)


def test_risk_parts_noise_term_is_the_noise_floor():
    """One head with k orthogonal to v: a noise token contributes
    zeta(0, lam) = (2/pi) arcsin(2 lam^2 / (1 + 2 lam^2)), whatever the directions."""
    task = MultiLocationTask(6, 4, 2, 0.8, 0.3)
    Ks, Vs = task.oracle_directions(jax.random.key(0))
    for lam in (0.1, 0.5, 1.3):
        parts = multi.multi_head_risk_parts(Ks[:1], Vs[:1], Ks, Vs, lam, task)
        floor = (task.L - task.M) * 2 / math.pi * math.asin(2 * lam**2 / (1 + 2 * lam**2))
        np.testing.assert_allclose(parts.noise, floor, rtol=1e-10)
        np.testing.assert_allclose(parts.noise + parts.relevant + parts.bias + parts.eps2, parts.total, rtol=1e-14)
        assert float(parts.eps2) == pytest.approx(task.eps**2)


def test_exact_risk_invariances():
    task = MultiLocationTask(6, 4, 2, 0.8, 0.3)
    Ks, Vs = task.oracle_directions(jax.random.key(1))
    K, V = _heads(jax.random.key(2), 2, task.d)
    lam = 0.8
    base = float(multi.multi_head_risk(K, V, Ks, Vs, lam, task))
    same = [
        multi.multi_head_risk(K[::-1], V[::-1], Ks, Vs, lam, task),  # permute heads
        multi.multi_head_risk(K, V, Ks[::-1], Vs[::-1], lam, task),  # relabel the locations
        multi.multi_head_risk(K.at[1].multiply(-1), V.at[1].multiply(-1), Ks, Vs, lam, task),  # sign of a head
    ]
    R = np.linalg.qr(np.asarray(jax.random.normal(jax.random.key(3), (task.d, task.d))))[0]
    same.append(multi.multi_head_risk(K @ R.T, V @ R.T, Ks @ R.T, Vs @ R.T, lam, task))  # rotate everything
    np.testing.assert_allclose(np.asarray(same, float), base, rtol=1e-11)
    # and a change that matters: flipping a value alone
    assert abs(float(multi.multi_head_risk(K, V.at[0].multiply(-1), Ks, Vs, lam, task)) - base) > 1e-3


def test_quadrature_converges():
    task = MultiLocationTask(6, 4, 2, 0.8, 0.3)
    Ks, Vs = task.oracle_directions(jax.random.key(4))
    K, V = _heads(jax.random.key(5), 2, task.d)
    for lam in (1 / 3, 2.0):
        a = multi.multi_head_risk(K, V, Ks, Vs, lam, task)
        b = multi.multi_head_risk(K, V, Ks, Vs, lam, task, n_nodes=241)
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_gradient_against_finite_differences():
    task = MultiLocationTask(6, 4, 2, 0.8, 0.3)
    Ks, Vs = task.oracle_directions(jax.random.key(6))
    K, V = _heads(jax.random.key(7), 2, task.d)
    lam = 0.9
    f = lambda K_, V_: multi.multi_head_risk(K_, V_, Ks, Vs, lam, task)
    gK, gV = jax.grad(f, argnums=(0, 1))(K, V)
    # tangent directions, and points moved along them then put back on the spheres
    # (second-order change only, so central differences see <grad, direction>)
    dK, dV = (jax.random.normal(k, (2, task.d)) for k in jax.random.split(jax.random.key(8)))
    dK = dK - jnp.sum(dK * K, -1, keepdims=True) * K
    dV = dV - jnp.sum(dV * V, -1, keepdims=True) * V
    unit = lambda x: x / jnp.linalg.norm(x, axis=-1, keepdims=True)
    h = 1e-5
    fd = (f(unit(K + h * dK), unit(V + h * dV)) - f(unit(K - h * dK), unit(V - h * dV))) / (2 * h)
    np.testing.assert_allclose(float(jnp.sum(gK * dK) + jnp.sum(gV * dV)), float(fd), rtol=1e-6)


@pytest.mark.roundoff
def test_risk_broadcasts_over_lam_and_runs():
    task = MultiLocationTask(6, 4, 2, 0.8, 0.3)
    Ks, Vs = task.oracle_directions(jax.random.key(9))
    K, V = _heads(jax.random.key(10), 2, task.d)
    lams = jnp.array([0.1, 0.6])
    grid = multi.multi_head_risk(jnp.stack([K, Ks])[:, None], jnp.stack([V, Vs])[:, None], Ks, Vs, lams[None], task)
    assert grid.shape == (2, 2)
    # Two programs (a (2, 2) grid, a single point); two heads: the pair terms are sums over
    # n^2 = 121^2 quadrature nodes of O(1) terms, <= (n^2 / 2) eps relative with >= 2 SIMD lanes
    np.testing.assert_allclose(grid[1, 1], multi.multi_head_risk(Ks, Vs, Ks, Vs, 0.6, task),
                               rtol=multi.DEFAULT_NODES**2 * EPS / 2)


def test_exact_risk_bad_input():
    task = MultiLocationTask(6, 4, 2, 0.8, 0.3)
    Ks, Vs = task.oracle_directions(jax.random.key(0))
    K, V = _heads(jax.random.key(1), 2, task.d)
    with pytest.raises(ValueError, match="task"):
        multi.multi_head_risk(K, V, Ks[0], Vs[0], 0.5, SLRTask(6, 4))
    with pytest.raises(ValueError, match="K"):
        multi.multi_head_risk(K[0], V, Ks, Vs, 0.5, task)
    with pytest.raises(ValueError, match="V"):
        multi.multi_head_risk(K, 2 * V, Ks, Vs, 0.5, task)
    with pytest.raises(ValueError, match="heads"):
        multi.multi_head_risk(K, V[:1], Ks, Vs, 0.5, task)
    with pytest.raises(ValueError, match="K_star"):
        multi.multi_head_risk(K, V, Ks[:1], Vs[:1], 0.5, task)
    with pytest.raises(ValueError, match="orthogonal"):
        multi.multi_head_risk(K, V, Ks, Ks, 0.5, task)
    with pytest.raises(ValueError, match="lam"):
        multi.multi_head_risk(K, V, Ks, Vs, -0.5, task)
    with pytest.raises(ValueError, match="n_nodes"):
        multi.multi_head_risk(K, V, Ks, Vs, 0.5, task, n_nodes=0)


# ==================================================================== population PGD (multi.py)
@pytest.mark.roundoff
def test_sphere_pgd_descends_and_matches_a_manual_step():
    task = MultiLocationTask(6, 4, 2, 0.8, 0.3)
    Ks, Vs = task.oracle_directions(jax.random.key(20))
    K0, V0 = _heads(jax.random.key(21), 1, task.d)  # one head: the cheapest to compile
    lam, alpha = 0.6, 0.02
    res = multi.sphere_pgd(K0[None], V0[None], Ks, Vs, lam, task, alpha=alpha, n_steps=60, log_every=1)
    assert res.risk.shape == (1, 61) and list(res.steps) == list(range(61))
    assert np.all(np.diff(res.risk[0]) < 1e-12), res.risk
    np.testing.assert_allclose(np.linalg.norm(res.K, axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(res.V, axis=-1), 1.0, atol=1e-12)
    # the first step by hand: Riemannian gradient of the exact risk, step, normalise
    f = lambda K_, V_: multi.multi_head_risk(K_, V_, Ks, Vs, lam, task, n_nodes=61)
    gK, gV = jax.grad(f, argnums=(0, 1))(K0, V0)

    def step(p, g):
        g = g - jnp.sum(g * p, -1, keepdims=True) * p
        p = p - alpha * g
        return p / jnp.linalg.norm(p, axis=-1, keepdims=True)

    np.testing.assert_allclose(res.risk[0, 0], f(K0, V0), rtol=1e-13)
    np.testing.assert_allclose(res.risk[0, 1], f(step(K0, gK), step(V0, gV)), rtol=1e-12)
    assert res.risk[0, 1] < res.risk[0, 0] - 1e-6


def test_sphere_pgd_bad_input():
    task = MultiLocationTask(6, 4, 2, 0.8, 0.3)
    Ks, Vs = task.oracle_directions(jax.random.key(0))
    K, V = _heads(jax.random.key(1), 2, task.d)
    kw = {"alpha": 0.01, "n_steps": 10, "log_every": 5}
    with pytest.raises(ValueError, match="K0"):
        multi.sphere_pgd(K, V[None], Ks, Vs, 0.5, task, **kw)
    with pytest.raises(ValueError, match="alpha"):
        multi.sphere_pgd(K[None], V[None], Ks, Vs, 0.5, task, alpha=0.0, n_steps=10)
    with pytest.raises(ValueError, match="log_every"):
        multi.sphere_pgd(K[None], V[None], Ks, Vs, 0.5, task, alpha=0.01, n_steps=10, log_every=3)
    with pytest.raises(ValueError, match="lam"):
        multi.sphere_pgd(K[None], V[None], Ks, Vs, -1.0, task, **kw)


# =============================================================== the chapter's helpers (multi.py)
def _fake_result(kappa, nu):
    kappa = np.asarray(kappa, float)
    runs, H, _, logs = kappa.shape
    z = np.zeros_like(kappa)
    return SGDResult(np.arange(logs), np.ones(logs), kappa, np.asarray(nu, float), z, z,
                     np.zeros((runs, H, logs)), np.zeros((runs, logs)), None, None)


def test_matched_overlaps_follow_the_matching():
    kappa = np.zeros((2, 2, 2, 3))
    kappa[0, 0, 0], kappa[0, 1, 1] = 0.9, -0.8  # run 0: head 0 <-> location 0
    kappa[1, 1, 0], kappa[1, 0, 1] = -0.7, 0.6  # run 1: head 1 <-> location 0
    nu = np.arange(24, dtype=float).reshape(2, 2, 2, 3) / 100
    res = _fake_result(kappa, nu)
    ov = matched_overlaps(res)
    np.testing.assert_array_equal(ov["perm"], [[0, 1], [1, 0]])
    np.testing.assert_array_equal(ov["perm"], match_heads(res.kappa[..., -1]))
    np.testing.assert_allclose(ov["kappa"][:, :, -1], [[0.9, -0.8], [-0.7, 0.6]])
    np.testing.assert_allclose(ov["nu"][1, 0], nu[1, 1, 0])
    np.testing.assert_allclose(ov["kappa_other"][1, 0], kappa[1, 1, 1])
    np.testing.assert_allclose(ov["nu_other"][0, 1], nu[0, 1, 0])
    with pytest.raises(ValueError, match="perm"):
        matched_overlaps(res, perm=np.zeros((3, 2), int))


def test_sgd_task_directions_are_those_of_the_experiment():
    """The same draws as run_sgd_experiment (checked against its initialisation routine; a full
    run would cost a compilation of the SGD loop)."""
    cfg = SGD_CONFIGS["fig9"].scaled(n_runs=3)
    Ks, Vs = multi.sgd_task_directions(cfg)
    K_ref, V_ref, _, _ = sgd_initialisation(cfg)
    assert Ks.shape == (3, 2, cfg.d)
    np.testing.assert_array_equal(Ks, K_ref)
    np.testing.assert_array_equal(Vs, V_ref)
    assert not np.allclose(Ks[0], Ks[1])


@pytest.mark.roundoff
def test_ideal_risk_curves():
    task = MultiLocationTask(6, 4, 2, 0.8, 0.3)
    stars = [task.oracle_directions(k) for k in jax.random.split(jax.random.key(30), 2)]
    Ks = jnp.stack([s[0] for s in stars])
    Vs = jnp.stack([s[1] for s in stars])
    curves = multi.ideal_risk_curves(Ks, Vs, task, [0.2, 1.0])
    assert curves.ideal.shape == curves.one_head.shape == (2, 2)
    # Two programs; two heads: sums over n^2 = 121^2 nodes, (n^2 / 2) eps as above. One head
    # (below): sums over n = 121 nodes, 1e-13 > n eps.
    np.testing.assert_allclose(curves.ideal[1, 0], multi.multi_head_risk(Ks[1], Vs[1], Ks[1], Vs[1], 0.2, task),
                               rtol=multi.DEFAULT_NODES**2 * EPS / 2)
    np.testing.assert_allclose(curves.one_head[0, 1],
                               multi.multi_head_risk(Ks[0, :1], Vs[0, :1], Ks[0], Vs[0], 1.0, task), rtol=1e-13)
    assert curves.null == pytest.approx(task.null_risk)
    with pytest.raises(ValueError, match="lams"):
        multi.ideal_risk_curves(Ks, Vs, task, [])
    with pytest.raises(ValueError, match="K_star"):
        multi.ideal_risk_curves(Ks[0], Vs[0], task, [0.5])


def test_multi_head_risk_mc_against_the_exact_risk(record_z):
    """Fresh sequences per run, each with its own task directions, agree with the quadrature
    within their standard errors; the standard error is that of the squared errors' mean."""
    task = MultiLocationTask(6, 4, 2, 0.8, 0.3)
    stars = [task.oracle_directions(k) for k in jax.random.split(jax.random.key(40), 3)]
    Ks = jnp.stack([s[0] for s in stars])
    Vs = jnp.stack([s[1] for s in stars])
    K, V = _heads(jax.random.key(41), 2, task.d)
    K = jnp.stack([K, Ks[1], K])  # run 1: the ideal heads of its own task
    V = jnp.stack([V, Vs[1], V])
    for lam in (0.3, 1.2):
        est = multi.multi_head_risk_mc(K, V, Ks, Vs, lam, task, jax.random.key(42), 30_000, batch_size=7000)
        exact = np.asarray(multi.multi_head_risk(K, V, Ks, Vs, lam, task))
        assert est.mean.shape == est.stderr.shape == (3,) and est.n == 30_000
        z = _z(est.mean, est.stderr, exact)
        for zi in z:
            record_z(zi, f"multi_head_risk_mc, lam={lam}")
        assert np.all(np.abs(z) < Z_TOL), (z, est.mean, exact)
    # the same key gives the same draws
    a = multi.multi_head_risk_mc(K, V, Ks, Vs, 0.3, task, jax.random.key(5), 100, batch_size=100)
    b = multi.multi_head_risk_mc(K, V, Ks, Vs, 0.3, task, jax.random.key(5), 100, batch_size=100)
    np.testing.assert_array_equal(a.mean, b.mean)
    with pytest.raises(ValueError, match="K and V"):
        multi.multi_head_risk_mc(K[0], V[0], Ks, Vs, 0.3, task, jax.random.key(0), 10)
    with pytest.raises(ValueError, match="K_star"):
        multi.multi_head_risk_mc(K, V, Ks[:2], Vs[:2], 0.3, task, jax.random.key(0), 10)
    with pytest.raises(ValueError, match="n_samples"):
        multi.multi_head_risk_mc(K, V, Ks, Vs, 0.3, task, jax.random.key(0), 1)
    with pytest.raises(ValueError, match="lam"):
        multi.multi_head_risk_mc(K, V, Ks, Vs, -1.0, task, jax.random.key(0), 10)


def test_heads_separated():
    """Against the criterion written out by hand for two heads (both assignments)."""
    rng = np.random.default_rng(0)
    k = rng.uniform(-1, 1, size=(500, 2, 2))
    a = np.abs(k)
    by_hand = (((a[:, 0, 0] > 0.8) & (a[:, 1, 1] > 0.8) & (a[:, 0, 1] < 0.3) & (a[:, 1, 0] < 0.3))
               | ((a[:, 0, 1] > 0.8) & (a[:, 1, 0] > 0.8) & (a[:, 0, 0] < 0.3) & (a[:, 1, 1] < 0.3)))
    got = multi.heads_separated(k)
    assert got.shape == (500,)
    np.testing.assert_array_equal(got, by_hand)
    assert 0 < by_hand.sum() < 500
    assert bool(multi.heads_separated([[0.1, -0.95], [0.9, 0.2]]))          # swapped heads
    assert not bool(multi.heads_separated([[0.9, 0.85], [0.1, 0.2]]))        # one head for both
    assert bool(multi.heads_separated([[0.5, 0.0], [0.0, 0.5]], own_min=0.4))
    three = np.eye(3)[[2, 0, 1]] * 0.9
    assert bool(multi.heads_separated(three))
    with pytest.raises(ValueError, match="shape"):
        multi.heads_separated(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="finite"):
        multi.heads_separated([[np.nan, 0.0], [0.0, 1.0]])
