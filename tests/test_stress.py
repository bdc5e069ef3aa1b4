"""Library code of chapter 16's stress tests (slrlib.book.ch16_stress, figures/plots.stress).

Independent checks:

* the extended closed form R^{c, r} (<k*, v*> = c, noise tokens with correlation r, any gamma, any pi) against
  full-dimensional Monte Carlo of the task written out by hand here (numpy, not the module's sampler), with a
  tolerance of 4.5 standard errors; the pair moment S_r against a direct simulation of the 4-dimensional Gaussian;
* the reduced Monte Carlo against the full-dimensional one (two-sample z);
* PGD on the extended form at c = r = 0 against slrlib.training.pgd.pgd; its gradient against central finite
  differences; the plane minimiser against brute force over the plane and as a fixed point of PGD;
* the saddle's Hessian in closed form against jax.hessian (manifold_hessian) and finite differences, for several gamma;
* the break-even gamma^2 against a sign change of the oracle-minus-null risk on a grid;
* the starts on M, the directions with <k*, v*> = c, the sampler's correlations and positions;
* bad input raises a ValueError naming the parameter.

Runtime: about 30 s on two cores.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import erf

from slrlib import SLRTask
from slrlib.book import ch16_stress as st
from slrlib.core.geometry import manifold_directions
from slrlib.core.risk import manifold_risk, optimal_lambda, oracle_risk, overlaps
from slrlib.training.pgd import manifold_hessian, pgd

Z_MAX = 4.5


def _unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _directions(rng, d, c):
    k_star = _unit(rng.standard_normal(d))
    w = rng.standard_normal(d)
    w = _unit(w - (w @ k_star) * k_star)
    return k_star, c * k_star + math.sqrt(1 - c * c) * w


def _mc_by_hand(rng, k, v, k_star, v_star, lam, d, L, gamma, r, pi, n, batch=20_000):
    """Risk of erf attention by simulating the stressed task directly in R^d (numpy)."""
    errs = []
    for start in range(0, n, batch):
        b = min(batch, n - start)
        J0 = rng.choice(L, size=b, p=pi)
        Z = rng.standard_normal((b, L, d))
        W = rng.standard_normal((b, 1, d))
        X = math.sqrt(1 - r) * Z + math.sqrt(r) * W
        X[np.arange(b), J0] = math.sqrt(d / 2) * k_star + gamma * Z[np.arange(b), J0]
        y = X[np.arange(b), J0] @ v_star
        pred = np.sum(erf(lam * (X @ k)) * (X @ v), axis=1)
        errs.append((y - pred) ** 2)
    e = np.concatenate(errs)
    return e.mean(), e.std(ddof=1) / math.sqrt(e.size)


def _generic_point(rng, k_star, v_star, spread=0.6):
    k = _unit(k_star + spread * _unit(rng.standard_normal(k_star.size)))
    v = _unit(v_star + spread * _unit(rng.standard_normal(k_star.size)) + 0.5 * k)
    return k, v


@pytest.mark.parametrize("c, r, gamma2, p1", [(0.4, 0.0, 0.5, None), (0.0, 0.6, 0.5, None), (-0.3, 0.35, 1.5, 0.6),
                                              (0.0, 0.0, 0.15, 0.9)])
def test_extended_closed_form_matches_monte_carlo(c, r, gamma2, p1):
    rng = np.random.default_rng(17)
    d, L, lam = 16, 5, 0.35
    k_star, v_star = _directions(rng, d, c)
    k, v = _generic_point(rng, k_star, v_star)
    pi = np.full(L, 1 / L) if p1 is None else np.r_[p1, np.full(L - 1, (1 - p1) / (L - 1))]
    task = SLRTask(d=d, L=L, gamma=math.sqrt(gamma2), probs=None if p1 is None else tuple(pi))
    o = overlaps(jnp.asarray(k), jnp.asarray(v), jnp.asarray(k_star), jnp.asarray(v_star))
    assert abs(float(o.rho)) > 0.2  # the rho terms are exercised
    exact = float(st.stress_risk_from_overlaps(*o, lam, task, c=c, r=r))
    mean, se = _mc_by_hand(rng, k, v, k_star, v_star, lam, d, L, math.sqrt(gamma2), r, pi, 200_000)
    assert abs(mean - exact) / se < Z_MAX, (mean, exact, se)
    if c != 0.0:  # Theorem 1 used blindly is far off
        naive = float(st.stress_risk_from_overlaps(*o, lam, task, c=0.0, r=r))
        assert abs(mean - naive) / se > 20


def test_pair_moment_against_simulation():
    rng = np.random.default_rng(3)
    lam, rho, r, n = 0.7, 0.55, 0.45, 2_000_000
    cov2 = np.array([[1, r], [r, 1]])
    cov = np.kron(np.array([[1, rho], [rho, 1]]), cov2)  # order (U1, U2, V1, V2)
    x = rng.multivariate_normal(np.zeros(4), cov, size=n)
    f = erf(lam * x[:, 0]) * x[:, 2] * erf(lam * x[:, 1]) * x[:, 3]
    exact = float(st.noise_pair_moment(rho, r, lam))
    assert abs(f.mean() - exact) / (f.std() / math.sqrt(n)) < Z_MAX
    C2 = 4 * lam**2 / (math.pi * (1 + 2 * lam**2))
    np.testing.assert_allclose(float(st.noise_pair_moment(rho, 0.0, lam)), C2 * rho**2, rtol=1e-14)


def test_reduced_monte_carlo_has_the_law_of_the_full_one():
    task = SLRTask(d=60, L=6, probs=(0.5, 0.1, 0.1, 0.1, 0.1, 0.1))
    k_star, v_star = st.correlated_directions(jax.random.key(0), task.d, 0.25)
    rng = np.random.default_rng(5)
    k, v = _generic_point(rng, np.asarray(k_star), np.asarray(v_star))
    full = st.stress_monte_carlo_risk(k, v, k_star, v_star, 0.3, task, jax.random.key(1), r=0.3, n_samples=60_000)
    red = st.stress_monte_carlo_risk(k, v, k_star, v_star, 0.3, task, jax.random.key(2), r=0.3, n_samples=60_000,
                                     reduced=True)
    o = overlaps(jnp.asarray(k), jnp.asarray(v), k_star, v_star)
    exact = float(st.stress_risk_from_overlaps(*o, 0.3, task, c=0.25, r=0.3))
    assert abs(full.mean - red.mean) / math.hypot(full.stderr, red.stderr) < Z_MAX
    assert abs(red.mean - exact) / red.stderr < Z_MAX


def test_gradient_matches_finite_differences():
    task = SLRTask(d=400, L=10)
    x = np.array([0.6, 0.5, 0.3, 0.2, 0.25])
    f = lambda o: float(st.stress_risk_from_overlaps(*o, 0.1, task, c=0.3, r=0.4))  # noqa: E731
    g = jax.grad(lambda o: st.stress_risk_kernel(*o, 0.3, 0.4, 0.1, 400.0, 10.0, task.gamma, 0.0))(tuple(x))
    h = 1e-5
    fd = [(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(5)]
    np.testing.assert_allclose(np.array(g), fd, rtol=1e-7, atol=1e-8)


def test_pgd_at_c_zero_is_the_library_pgd():
    task = SLRTask(d=30, L=10)
    k_star, v_star = task.oracle_directions(jax.random.key(4))
    k0 = jnp.asarray(_unit(np.random.default_rng(1).standard_normal((3, 30))))
    v0 = jnp.asarray(_unit(np.random.default_rng(2).standard_normal((3, 30))))
    ref = pgd(k0, v0, k_star, v_star, task, lam=0.5, alpha=4e-3, n_steps=400, log_every=100)
    res = st.stress_pgd(k0, v0, k_star, v_star, task, lam=0.5, alpha=4e-3, n_steps=400, log_every=100)
    for name in ("kappa", "nu", "theta", "eta", "rho", "risk"):
        np.testing.assert_allclose(getattr(res, name), np.asarray(getattr(ref, name)), atol=1e-12)
    np.testing.assert_allclose(res.k, np.asarray(ref.k), atol=1e-12)


def test_plane_minimiser_is_a_minimum_and_a_fixed_point_of_pgd():
    task = SLRTask(d=400, L=10)
    c, lam = 0.5, 0.1
    m = st.plane_minimiser(c, lam, task)
    rng = np.random.default_rng(0)
    ang = rng.uniform(-math.pi, math.pi, size=(20_000, 2))
    s = math.sqrt(1 - c * c)
    a, b = ang[:, 0], ang[:, 1]
    brute = st.stress_risk_from_overlaps(np.cos(a), c * np.cos(b) + s * np.sin(b), np.cos(b),
                                         c * np.cos(a) + s * np.sin(a), np.cos(a - b), lam, task, c=c)
    assert m.risk <= float(jnp.min(brute)) + 1e-12
    # build k, v in R^d and run PGD from there: they must not move
    k_star, v_star = st.correlated_directions(jax.random.key(0), 400, c)
    w = (v_star - c * k_star) / s
    k = math.cos(m.angle_k) * k_star + math.sin(m.angle_k) * w
    v = math.cos(m.angle_v) * k_star + math.sin(m.angle_v) * w
    res = st.stress_pgd(k[None], v[None], k_star, v_star, task, lam=lam, alpha=4e-3, n_steps=1000, log_every=1000)
    np.testing.assert_allclose(res.kappa[0], m.kappa, atol=1e-8)
    np.testing.assert_allclose(res.nu[0], m.nu, atol=1e-8)
    np.testing.assert_allclose(res.risk[0, -1], m.risk, rtol=1e-12)
    found = st.plane_minima(c, lam, task, grid=24)
    assert abs(found[0].risk - m.risk) < 1e-10 and all(f.risk >= m.risk - 1e-12 for f in found)
    np.testing.assert_allclose(st.in_plane_fraction(m.kappa, m.eta, c), 1.0, atol=1e-12)


@pytest.mark.parametrize("gamma2", [0.1, 0.5, 2.0])
def test_saddle_hessian_closed_form(gamma2):
    task = SLRTask(d=400, L=10, gamma=math.sqrt(gamma2))
    H = st.saddle_hessian_closed_form(0.1, task)
    np.testing.assert_allclose(H, manifold_hessian(0.0, 0.0, 0.1, task), rtol=1e-12, atol=1e-12)
    h = 1e-4
    f = lambda x, y: float(manifold_risk(x, y, 0.1, task))  # noqa: E731
    fd_kk = (f(h, 0) - 2 * f(0, 0) + f(-h, 0)) / h**2
    fd_kn = (f(h, h) - f(h, -h) - f(-h, h) + f(-h, -h)) / (4 * h**2)
    np.testing.assert_allclose([fd_kk, fd_kn], [H[0, 0], H[0, 1]], rtol=1e-5)


def test_break_even_gamma2_is_a_sign_change():
    task = SLRTask(d=400, L=10)
    g2 = st.break_even_gamma2(0.1, task)
    grid = np.linspace(0.05, 0.5, 451)
    gap = np.array([float(oracle_risk(0.1, task.replace(gamma=math.sqrt(x)))) - x for x in grid])
    i = int(np.nonzero(np.diff(np.sign(gap)))[0][0])
    assert grid[i] <= g2 <= grid[i + 1]


def test_oracle_risk_correlated_and_its_best_lambda():
    task = SLRTask(d=400, L=10)
    for r in (0.0, 0.3):
        np.testing.assert_allclose(float(st.oracle_risk_correlated(0.1, task, r)),
                                   float(st.stress_risk_from_overlaps(1.0, 1.0, 0.0, 0.0, 0.0, 0.1, task, r=r)),
                                   rtol=1e-14)
    lam0, risk0 = st.optimal_lambda_correlated(task, 0.0)
    ref_lam, ref_risk = optimal_lambda(task)
    np.testing.assert_allclose([lam0, risk0], [ref_lam, ref_risk], rtol=1e-6)
    lam_r, risk_r = st.optimal_lambda_correlated(task, 0.5)
    grid = np.exp(np.linspace(math.log(0.01), math.log(1.0), 2001))
    vals = np.asarray(st.oracle_risk_correlated(grid, task, 0.5))
    assert risk_r <= vals.min() + 1e-12 and lam_r < lam0


def test_directions_and_starts():
    d = 50
    for c in (0.0, 0.7):
        k_star, v_star = st.correlated_directions(jax.random.key(3), d, c)
        np.testing.assert_allclose([float(k_star @ k_star), float(v_star @ v_star), float(k_star @ v_star)],
                                   [1.0, 1.0, c], atol=1e-14)
        k0, v0 = st.start_on_manifold(jax.random.key(9), k_star, v_star, 5)
        o = overlaps(k0, v0, k_star, v_star)
        np.testing.assert_allclose(np.array([o.theta, o.eta, o.rho]), 0.0, atol=1e-14)
        np.testing.assert_allclose(np.linalg.norm(np.asarray(k0), axis=1), 1.0, atol=1e-14)
    k_star, v_star = st.correlated_directions(jax.random.key(3), d, 0.0)
    ref = SLRTask(d=d, L=1).oracle_directions(jax.random.key(3))
    np.testing.assert_allclose(np.asarray(v_star), np.asarray(ref[1]), atol=1e-15)
    k0, v0 = st.start_on_manifold(jax.random.key(9), k_star, v_star, 5)
    mk, mv = manifold_directions(jax.random.key(9), k_star, v_star, (5,))
    np.testing.assert_allclose(np.asarray(k0), np.asarray(mk), atol=1e-12)
    np.testing.assert_allclose(np.asarray(v0), np.asarray(mv), atol=1e-12)


def test_sampler_correlations_and_positions():
    task = SLRTask(d=8, L=4, probs=(0.7, 0.1, 0.1, 0.1))
    k_star, v_star = st.correlated_directions(jax.random.key(0), 8, 0.3)
    n, r = 40_000, 0.4
    X, y, J0 = (np.asarray(a) for a in st.stress_sample(jax.random.key(1), n, task, k_star, v_star, r=r))
    freq = np.bincount(J0, minlength=4) / n
    se = np.sqrt(np.array(task.probs) * (1 - np.array(task.probs)) / n)
    assert np.all(np.abs(freq - np.array(task.probs)) < Z_MAX * se)
    sel = J0 == 0  # tokens 1 and 2 are noise tokens: per-coordinate correlation r
    prod = (X[sel, 1, :] * X[sel, 2, :]).ravel()
    assert abs(prod.mean() - r) / (prod.std() / math.sqrt(prod.size)) < Z_MAX
    np.testing.assert_allclose(y, X[np.arange(n), J0] @ np.asarray(v_star), atol=1e-12)


def test_bad_input_raises():
    task = SLRTask(d=10, L=3)
    k_star, v_star = st.correlated_directions(jax.random.key(0), 10, 0.2)
    with pytest.raises(ValueError, match="c must lie in"):
        st.correlated_directions(jax.random.key(0), 10, 1.0)
    with pytest.raises(ValueError, match="r must lie in"):
        st.stress_risk_from_overlaps(1, 1, 0, 0, 0, 0.1, task, r=1.0)
    with pytest.raises(ValueError, match="r must lie in"):
        st.oracle_risk_correlated(0.1, task, -0.1)
    with pytest.raises(ValueError, match="lam must be >= 0"):
        st.stress_risk_from_overlaps(1, 1, 0, 0, 0, -0.1, task)
    with pytest.raises(ValueError, match="not be parallel"):
        st.stress_sample(jax.random.key(0), 5, task, k_star, k_star)
    with pytest.raises(ValueError, match="k_star must have shape"):
        st.stress_sample(jax.random.key(0), 5, task, k_star[:5], v_star)
    with pytest.raises(ValueError, match="log_every must divide"):
        st.stress_pgd(k_star[None], v_star[None], k_star, v_star, task, lam=0.1, alpha=0.1, n_steps=10, log_every=3)
    with pytest.raises(ValueError, match="bracket"):
        st.break_even_gamma2(0.1, SLRTask(d=400, L=10), bracket=(1.0, 2.0))
    with pytest.raises(ValueError, match="grid must be"):
        st.plane_minima(0.1, 0.1, task, grid=4)
    with pytest.raises(ValueError, match="lam must be > 0"):
        st.saddle_hessian_closed_form(0.0, task)


def test_figure_small():
    from slrlib.book.figures.stress import compute_stress_tests, stress_tests_table
    from slrlib.book.plots.stress import plot_c_frame, plot_stress_tests
    from slrlib.figures import get

    assert get("stress_tests").chapter == 16
    data = compute_stress_tests(cs=(0.0, 0.5), gamma2s=(0.25, 0.5), rs=(0.0, 0.5), p1s=(0.1, 0.9), d=20, runs=2,
                                n_steps=400, log_every=200, n_mc=2_000)
    table = stress_tests_table(data)
    sizes = {len(v) for v in table.values()}
    assert len(sizes) == 1
    np.testing.assert_allclose(data.pi.closed, float(oracle_risk(data.lam, data.task)), rtol=1e-14)
    from slrlib.book.ch16_dynamics import timescales_at_oracle
    ts = timescales_at_oracle(data.lam, 4e-3, data.task.replace(gamma=math.sqrt(0.25)))
    np.testing.assert_allclose([data.gamma.time_kappa[0], data.gamma.time_nu[0]], [ts.time_kappa, ts.time_nu], rtol=1e-9)
    assert plot_stress_tests(data) is not None
    assert plot_c_frame(0.5, data=data) is not None
