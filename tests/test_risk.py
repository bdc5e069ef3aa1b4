"""Closed-form risks against independent computations.

* Theorem 1 / Proposition 15 against Monte Carlo at many (k, v), tolerance from the
  Monte Carlo standard error;
* its gradient against finite differences along the sphere;
* exact invariances (rotations fixing k*, v*; the sign flip (k, v) -> (-k, -v));
* Proposition 3 against the normal equations solved numerically from exact second
  moments, and against an empirical least-squares fit;
* Bayes <= oracle attention, on common random numbers.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from helpers import orthogonal_fixing, random_unit
from slrlib.core.geometry import manifold_directions
from slrlib import (
    SLRTask,
    bayes_predictor,
    best_linear_weights,
    erf_attention,
    linear_predictor,
    linear_risk,
    manifold_risk,
    monte_carlo_risk,
    null_risk,
    oracle_risk,
    population_risk,
)

# A comparison passes when |closed form - Monte Carlo| <= Z_TOL standard errors. With
# ~50 comparisons, P(any |Z| > 4.5) under the null is about 3e-4: a failure means a wrong
# formula, not bad luck.
Z_TOL = 4.5
EPS = np.finfo(np.float64).eps  # 2.2e-16

CONFIGS = [
    # d, L, lam, gamma, eps
    (6, 4, 0.8, 0.8, 0.3),
    (10, 3, 0.3, math.sqrt(0.5), 0.0),
    (5, 8, 1.5, 0.5, 0.5),
    (16, 2, 0.05, 1.2, 0.1),
    (3, 6, 3.0, math.sqrt(0.5), 0.2),
    (40, 10, 0.4, math.sqrt(0.5), 0.1),
]


def parameter_points(key, k_star, v_star):
    """Nine (k, v) pairs: the oracle, its opposite, on and off the manifold, extreme overlaps."""
    d = k_star.shape[0]
    keys = jax.random.split(key, 6)
    k_m, v_m = manifold_directions(keys[0], k_star, v_star, (2,))
    k_r = random_unit(keys[1], (2, d))
    v_r = random_unit(keys[2], (2, d))
    u = random_unit(keys[3], (d,))
    near_k = (k_star + 0.3 * u) / jnp.linalg.norm(k_star + 0.3 * u)
    w = random_unit(keys[4], (d,))
    near_v = (v_star + 0.5 * w) / jnp.linalg.norm(v_star + 0.5 * w)
    K = jnp.stack([k_star, k_star, k_m[0], k_m[1], k_r[0], k_r[1], k_r[0], v_star, near_k])
    V = jnp.stack([v_star, -v_star, v_m[0], v_m[1], v_r[0], v_r[1], k_r[0], k_star, near_v])
    return K, V


@pytest.mark.parametrize("d,L,lam,gamma,eps", CONFIGS)
def test_population_risk_matches_monte_carlo(d, L, lam, gamma, eps, record_z):
    task = SLRTask(d=d, L=L, gamma=gamma, eps=eps)
    k_star, v_star = task.oracle_directions(jax.random.key(d * 100 + L))
    K, V = parameter_points(jax.random.key(7 + d), k_star, v_star)
    closed = np.asarray(population_risk(K, V, k_star, v_star, lam, task))
    est = monte_carlo_risk(
        lambda X: erf_attention(X[:, None], K, V, lam),
        task,
        k_star,
        v_star,
        jax.random.key(11 + L),
        # 100 000 sequences (300 000 before issue 28): a closed form 2 % off fails every
        # configuration here (|z| 4.9 to 10.8), 1 % off fails two of six (5.2, 5.5; at 300 000,
        # five of six). One term 1 % off is the quadrature's to catch (test_risk_checks.py,
        # chapter 3's prop15-quadrature).
        n_samples=100_000,
    )
    z = est.z_score(closed)
    record_z(z, f"d={d} L={L} lam={lam}")
    assert np.all(np.abs(z) < Z_TOL), (closed, est.mean, est.stderr, z)


def test_risk_does_not_depend_on_the_law_of_J0(record_z):
    probs = (0.55, 0.05, 0.3, 0.1, 0.0)
    task = SLRTask(d=7, L=5, gamma=0.9, eps=0.2, probs=probs)
    k_star, v_star = task.oracle_directions(jax.random.key(5))
    K, V = parameter_points(jax.random.key(6), k_star, v_star)
    lam = 0.7
    closed = np.asarray(population_risk(K, V, k_star, v_star, lam, task))
    uniform = np.asarray(population_risk(K, V, k_star, v_star, lam, task.replace(probs=None)))
    # Exact: the law of J0 never enters the computation, so both calls run the same compiled
    # programs on the same inputs.
    np.testing.assert_array_equal(closed, uniform)
    est = monte_carlo_risk(
        lambda X: erf_attention(X[:, None], K, V, lam), task, k_star, v_star, jax.random.key(8), 300_000
    )
    z = est.z_score(closed)
    record_z(z, "non-uniform probs")
    assert np.all(np.abs(z) < Z_TOL)


@pytest.mark.roundoff
def test_oracle_and_manifold_risk_are_special_cases(small_task, small_directions):
    k_star, v_star = small_directions
    lam = jnp.array([0.0, 0.1, 0.5, 2.0, 10.0])
    np.testing.assert_allclose(
        oracle_risk(lam, small_task),
        population_risk(k_star, v_star, k_star, v_star, lam, small_task),
        rtol=0,
        atol=1e-14,
    )
    k, v = manifold_directions(jax.random.key(3), k_star, v_star, (5,))
    kappa, nu = k @ k_star, v @ v_star
    np.testing.assert_allclose(
        manifold_risk(kappa, nu, 0.4, small_task),
        population_risk(k, v, k_star, v_star, 0.4, small_task),
        rtol=0,
        atol=1e-13,
    )
    # lambda = 0: the predictor is 0, the risk is the null risk.
    K = random_unit(jax.random.key(4), (3, small_task.d))
    np.testing.assert_allclose(
        population_risk(K, K[::-1], k_star, v_star, 0.0, small_task), null_risk(small_task), atol=1e-14
    )


@pytest.mark.roundoff
def test_population_risk_is_batched(small_task, small_directions):
    k_star, v_star = small_directions
    K = random_unit(jax.random.key(1), (3, 4, small_task.d))
    V = random_unit(jax.random.key(2), (4, small_task.d))
    batched = population_risk(K, V, k_star, v_star, 0.6, small_task)
    assert batched.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            single = population_risk(K[i, j], V[j], k_star, v_star, 0.6, small_task)
            # Two programs (shapes (3, 4) and ()): the overlaps are dot products of length d = 6
            # (<= 6 eps each; sum of |dR/d overlap| <= 13 here), then O(1) terms (R <= 4) with a
            # few ulps each: 128 eps.
            assert float(single) == pytest.approx(float(batched[i, j]), abs=128 * EPS)


def test_risk_is_invariant_under_rotations_fixing_the_oracle(small_task, small_directions):
    # Theorem 1: the risk depends on (k, v) only through the five overlaps.
    k_star, v_star = small_directions
    K = random_unit(jax.random.key(10), (6, small_task.d))
    V = random_unit(jax.random.key(11), (6, small_task.d))
    R = jnp.asarray(orthogonal_fixing(jax.random.key(12), np.asarray(k_star), np.asarray(v_star)))
    np.testing.assert_allclose(R @ k_star, k_star, atol=1e-12)
    base = population_risk(K, V, k_star, v_star, 0.9, small_task)
    rotated = population_risk(K @ R.T, V @ R.T, k_star, v_star, 0.9, small_task)
    np.testing.assert_allclose(base, rotated, atol=1e-12)
    flipped = population_risk(-K, -V, k_star, v_star, 0.9, small_task)
    np.testing.assert_allclose(base, flipped, atol=1e-12)


@pytest.mark.parametrize("lam", [0.05, 0.7, 3.0])
def test_gradient_matches_finite_differences_along_the_sphere(lam):
    task = SLRTask(d=9, L=5, gamma=0.75, eps=0.1)
    k_star, v_star = task.oracle_directions(jax.random.key(21))
    k, v = random_unit(jax.random.key(22), (2, task.d))
    # Move towards the oracle so that every term of the formula is exercised.
    k = (k + k_star) / jnp.linalg.norm(k + k_star)
    grad_k, grad_v = jax.grad(population_risk, argnums=(0, 1))(k, v, k_star, v_star, lam, task)
    h = 1e-5
    for u in random_unit(jax.random.key(23), (3, task.d)):
        for which, x, g in (("k", k, grad_k), ("v", v, grad_v)):
            t = u - (u @ x) * x  # tangent direction
            curve = lambda s: (x + s * t) / jnp.linalg.norm(x + s * t)  # noqa: E731
            args = (lambda s: (curve(s), v)) if which == "k" else (lambda s: (k, curve(s)))
            f = lambda s: float(population_risk(*args(s), k_star, v_star, lam, task))  # noqa: E731
            fd = (f(h) - f(-h)) / (2 * h)
            assert abs(float(g @ t) - fd) < 1e-7 * max(1.0, abs(fd)), (which, lam)


def test_gradient_in_lambda_matches_finite_differences(small_task, small_directions):
    k_star, v_star = small_directions
    k, v = random_unit(jax.random.key(31), (2, small_task.d))
    g = jax.grad(population_risk, argnums=4)(k, v, k_star, v_star, 0.8, small_task)
    h = 1e-6
    fd = (
        float(population_risk(k, v, k_star, v_star, 0.8 + h, small_task))
        - float(population_risk(k, v, k_star, v_star, 0.8 - h, small_task))
    ) / (2 * h)
    assert abs(float(g) - fd) < 1e-7


# ----------------------------------------------------------------------- Proposition 3


def linear_risk_by_normal_equations(task):
    """Best linear risk from exact second moments, solved numerically (a second derivation).

    E[X_l X_m^T] = 0 for l != m; E[X_l X_l^T] = pi_l (q^2 k* k*^T + gamma^2 I) + (1 - pi_l) I;
    E[X_l Y] = pi_l gamma^2 v*; E[Y^2] = gamma^2 + eps^2. Any orthonormal (k*, v*) will do,
    take the first two basis vectors.
    """
    d, L = task.d, task.L
    pi = np.asarray(task.pi)
    k_star, v_star = np.eye(d)[0], np.eye(d)[1]
    S = np.zeros((L * d, L * d))
    c = np.zeros(L * d)
    for ell in range(L):
        block = pi[ell] * (task.q**2 * np.outer(k_star, k_star) + task.gamma**2 * np.eye(d))
        block += (1 - pi[ell]) * np.eye(d)
        S[ell * d : (ell + 1) * d, ell * d : (ell + 1) * d] = block
        c[ell * d : (ell + 1) * d] = pi[ell] * task.gamma**2 * v_star
    w = np.linalg.solve(S, c)
    return task.gamma**2 + task.eps**2 - c @ w, w.reshape(L, d), v_star


@pytest.mark.parametrize(
    "d,L,gamma,eps,probs",
    [
        (4, 5, math.sqrt(0.5), 0.1, None),
        (3, 3, 1.3, 0.0, (0.6, 0.3, 0.1)),
        (5, 4, 0.4, 0.5, (0.0, 1.0, 0.0, 0.0)),
        (2, 1, 0.9, 0.2, None),
        (6, 50, math.sqrt(0.5), 0.0, None),
    ],
)
def test_linear_risk_matches_normal_equations(d, L, gamma, eps, probs):
    task = SLRTask(d=d, L=L, gamma=gamma, eps=eps, probs=probs)
    risk, w, v_star = linear_risk_by_normal_equations(task)
    assert linear_risk(task) == pytest.approx(risk, abs=1e-12)
    W = best_linear_weights(task, jnp.asarray(v_star))
    np.testing.assert_allclose(W, w, atol=1e-12)


@pytest.mark.parametrize("probs", [None, (0.5, 0.2, 0.2, 0.1)])
def test_linear_risk_matches_least_squares_fit(probs, record_z):
    task = SLRTask(d=3, L=4, gamma=math.sqrt(0.5), eps=0.2, probs=probs)
    k_star, v_star = task.oracle_directions(jax.random.key(40))
    X, y, _ = task.sample(jax.random.key(41), 400_000, k_star, v_star)
    design = np.asarray(X).reshape(X.shape[0], -1)
    w_fit, *_ = np.linalg.lstsq(design, np.asarray(y), rcond=None)
    W_fit = w_fit.reshape(task.L, task.d)
    W = best_linear_weights(task, v_star)
    # Coefficients: sampling error O(1/sqrt(n)) ~ 2e-3 here; 1e-2 is five times that.
    np.testing.assert_allclose(W_fit, W, atol=1e-2)
    # Held-out risk of the theoretical and the fitted predictors against Proposition 3.
    held = monte_carlo_risk(
        lambda X: jnp.stack([linear_predictor(X, W), linear_predictor(X, jnp.asarray(W_fit))], -1),
        task,
        k_star,
        v_star,
        jax.random.key(42),
        400_000,
    )
    z = held.z_score(linear_risk(task))
    record_z(z[:1], f"linear probs={probs}")
    assert abs(z[0]) < Z_TOL
    # The fitted predictor cannot beat the optimum by more than Monte Carlo error.
    assert held.mean[1] > linear_risk(task) - Z_TOL * held.stderr[1]


def test_linear_risk_tends_to_null_risk():
    gamma, eps = math.sqrt(0.5), 0.1
    Ls = [1, 2, 5, 10, 100, 1000, 10_000]
    risks = [linear_risk(SLRTask(d=4, L=L, gamma=gamma, eps=eps)) for L in Ls]
    null = null_risk(SLRTask(d=4, L=1, gamma=gamma, eps=eps))
    assert risks[0] == pytest.approx(eps**2, abs=1e-15)  # L = 1: plain linear regression
    assert all(a < b for a, b in zip(risks, risks[1:]))
    gaps = [(null - r) * L / gamma**4 for r, L in zip(risks, Ls)]
    assert gaps[-1] == pytest.approx(1.0, rel=1e-3)  # null - linear ~ gamma^4 / L
    deterministic = SLRTask(d=4, L=7, gamma=gamma, eps=eps, probs=(0, 0, 1, 0, 0, 0, 0))
    assert linear_risk(deterministic) == pytest.approx(eps**2, abs=1e-15)


# ----------------------------------------------------------------------- Bayes


@pytest.mark.parametrize("d,L,gamma", [(8, 5, math.sqrt(0.5)), (4, 10, 1.0), (20, 3, 0.6)])
def test_bayes_is_no_worse_than_oracle_attention(d, L, gamma):
    task = SLRTask(d=d, L=L, gamma=gamma, eps=0.1)
    k_star, v_star = task.oracle_directions(jax.random.key(50 + d))
    lams = jnp.array([0.1, 0.3, 1.0, 3.0])
    X, y, _ = task.sample(jax.random.key(51), 200_000, k_star, v_star)
    bayes_loss = jnp.square(y - bayes_predictor(X, k_star, v_star, task))
    for lam in lams:
        att_loss = jnp.square(y - erf_attention(X, k_star, v_star, lam))
        diff = np.asarray(bayes_loss - att_loss)  # paired: common random numbers
        se = diff.std(ddof=1) / math.sqrt(diff.size)
        assert diff.mean() < 3 * se, (float(lam), diff.mean(), se)
    # and it is strictly better than the closed-form oracle risk at the best of these lambdas
    assert float(bayes_loss.mean()) < float(jnp.min(oracle_risk(lams, task)))
    # Bayes risk >= eps^2 (eq. 8), within Monte Carlo error
    se = float(bayes_loss.std(ddof=1)) / math.sqrt(bayes_loss.size)
    assert float(bayes_loss.mean()) > task.eps**2 - 3 * se


def test_linear_risk_is_a_lower_bound_for_random_linear_predictors():
    task = SLRTask(d=4, L=3, gamma=0.8, eps=0.2)
    k_star, v_star = task.oracle_directions(jax.random.key(60))
    W0 = best_linear_weights(task, v_star)
    Ws = jnp.stack([W0 + 0.1 * jax.random.normal(jax.random.key(61 + i), W0.shape) for i in range(4)])
    est = monte_carlo_risk(
        lambda X: jnp.einsum("nld,mld->nm", X, Ws), task, k_star, v_star, jax.random.key(62), 200_000
    )
    assert np.all(est.mean > linear_risk(task))


def test_risk_kernel_is_differentiable_in_lambda_and_the_task_numbers():
    """The public kernel: jax.grad in λ and in γ (traced task numbers) against central finite
    differences of the validated risk_from_overlaps, to the round-off of a difference quotient."""
    from slrlib.core.risk import risk_from_overlaps, risk_kernel

    ov = (0.4, 0.7, 0.1, -0.2, 0.15)
    task = SLRTask(d=30, L=6, gamma=0.6, eps=0.2)
    h = 1e-5
    for name, x0 in (("lam", 0.8), ("gamma", 0.6)):
        def f(x):
            lam, gamma = (x, task.gamma) if name == "lam" else (0.8, x)
            return risk_kernel(*ov, lam, task.d, task.L, gamma, task.eps)

        def g(x):
            lam, t = (x, task) if name == "lam" else (0.8, SLRTask(d=30, L=6, gamma=x, eps=0.2))
            return float(risk_from_overlaps(*ov, lam, t))

        fd = (g(x0 + h) - g(x0 - h)) / (2 * h)
        assert abs(float(jax.grad(f)(x0)) - fd) < 1e-7 * max(1.0, abs(fd))
