"""Tests of slrlib.book.ch08_beyond (chapter 8) and of the chapter-8 figure specs, at small sizes.

Independent checks: the swapped point's closed form against a numerical minimisation of the
closed-form risk and against finite differences on the spheres; Riemannian derivatives
against finite differences along geodesics; the oracle's plane Hessian against central
differences of the risk along rotations; the transverse multipliers against the growth of
a small displacement off M under the actual PGD map (slrlib.training.pgd.pgd); the sweep
against separate pgd runs; bad input -> ValueError naming the parameter.
"""

import math

import jax
import matplotlib
import numpy as np
import pytest
from scipy import optimize

matplotlib.use("Agg")

from slrlib.core.geometry import uniform_directions, overlap_coordinates
from slrlib.book import ch08_beyond as beyond
from slrlib import (
    SLRTask,
    oracle_risk,
    risk_from_overlaps,
    zeta,
)
from slrlib.training.pgd import pgd
from slrlib.experiments import PGD_CONFIGS, run_pgd_experiment

EPS = np.finfo(np.float64).eps  # 2.2e-16
TASK = SLRTask(400, 10)
SMALL = SLRTask(40, 5)


def _risk(k, v, lam, task=TASK):
    """Closed-form risk at coordinates (k, v) in the basis (k*, v*, ...)."""
    return float(risk_from_overlaps(k[0], v[1], v[0], k[1], float(np.dot(k, v)), lam, task))


def _rotate(x, t, h):
    """Geodesic on the unit sphere from x with unit tangent t, at arc length h."""
    return math.cos(h) * x + math.sin(h) * t


# --------------------------------------------------------------------------- outcomes
def _fake_result(kappa, nu, theta, eta, rho):
    class R:  # the fields classify_outcomes reads, with one logged step
        pass

    r = R()
    for name, val in zip(beyond.OVERLAP_NAMES, (kappa, nu, theta, eta, rho)):
        setattr(r, name, np.asarray(val, dtype=float)[:, None])
    r.distance = np.sqrt(r.theta**2 + r.eta**2 + r.rho**2)
    return r


def test_classify_outcomes_codes():
    r = _fake_result(kappa=[1.0, -0.99, 0.3, 0.0, 0.3, 0.5],
                     nu=[1.0, -1.0, 1.0, 0.0, 0.95, 0.5],
                     theta=[0, 0, 0, 0.63, 0.3, 0.0],
                     eta=[0, 0, 0, -1.0, 0.95, 0.0],
                     rho=[0, 0, 0, 0, 0.8, 0.0])
    labels = beyond.classify_outcomes(r)
    assert labels.tolist() == [0, 0, 1, 2, 3, 3]
    assert beyond.outcome_counts(labels) == {"recovered": 2, "stalled on M": 1, "swapped": 1, "off M": 2}


def test_classify_outcomes_bad_tol():
    r = _fake_result([1.0], [1.0], [0.0], [0.0], [0.0])
    with pytest.raises(ValueError, match="tol"):
        beyond.classify_outcomes(r, tol=0.7)
    with pytest.raises(ValueError, match="tol"):
        beyond.classify_outcomes(r, tol=-0.1)


# --------------------------------------------------------------------------- risk pieces
@pytest.mark.roundoff
def test_noise_floor_is_the_oracle_risk_at_large_lambda_and_matches_zeta():
    lam = np.array([0.1, 0.5, 0.9])
    floor = beyond.noise_floor(lam, TASK)
    np.testing.assert_allclose(floor, 9 * np.asarray(zeta(np.zeros(3), lam)), rtol=1e-14)
    np.testing.assert_allclose(floor, 9 * 2 / np.pi * np.arcsin(2 * lam**2 / (1 + 2 * lam**2)), rtol=1e-12)
    # at lambda = 0.9 the relevant token is predicted perfectly: oracle risk = floor
    assert abs(float(oracle_risk(0.9, TASK)) - floor[2]) < 1e-12
    with pytest.raises(ValueError, match="lam"):
        beyond.noise_floor(-1.0, TASK)


def test_relevant_margin():
    a = beyond.relevant_margin(0.5, 0.3, TASK)
    assert a == pytest.approx(0.3 * math.sqrt(200) * 0.5 / math.sqrt(1 + 2 * 0.09 * 0.5))


# --------------------------------------------------------------------------- swapped point
@pytest.mark.parametrize("lam", [0.03, 0.077, 0.1, 0.4, 0.9])
def test_swapped_theta_minimises_the_risk(lam):
    sp = beyond.swapped_point(lam, TASK)
    res = optimize.minimize_scalar(lambda t: float(risk_from_overlaps(0.0, 0.0, t, 1.0, 0.0, lam, TASK)),
                                   bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-10})
    assert float(sp.theta) == pytest.approx(res.x, abs=1e-6)
    assert float(sp.risk) <= res.fun + 1e-12  # the closed form is at least as good as the search
    assert float(sp.risk) == pytest.approx(res.fun, abs=1e-7)
    assert float(sp.distance) == pytest.approx(math.sqrt(1 + float(sp.theta) ** 2))


def test_swapped_small_lambda_approximation():
    lam = 0.02
    sp = beyond.swapped_point(lam, SLRTask(40000, 10))
    assert float(sp.theta_unclipped) == pytest.approx(math.sqrt(math.pi) / (2 * lam * math.sqrt(20000)), rel=2e-3)


@pytest.mark.parametrize("lam", [0.1, 0.5])
def test_swapped_point_is_critical_by_finite_differences(lam):
    th = float(beyond.swapped_point(lam, TASK).theta)
    k = np.array([0.0, 1.0, 0.0, 0.0])
    v = np.array([th, 0.0, math.sqrt(1 - th**2), 0.0])
    h = 1e-5
    for x_is_k in (True, False):
        base = k if x_is_k else v
        for j in range(4):
            t = np.eye(4)[j] - base[j] * base
            if np.linalg.norm(t) < 1e-12:
                continue
            t /= np.linalg.norm(t)
            plus, minus = _rotate(base, t, h), _rotate(base, t, -h)
            fp = _risk(plus, v, lam) if x_is_k else _risk(k, plus, lam)
            fm = _risk(minus, v, lam) if x_is_k else _risk(k, minus, lam)
            assert abs(fp - fm) / (2 * h) < 1e-7


def test_swapped_point_bad_lambda():
    with pytest.raises(ValueError, match="lam"):
        beyond.swapped_point(0.0, TASK)


# --------------------------------------------------------------------------- sphere calculus
def test_embed_overlaps_round_trip_and_errors():
    o = (0.3, 0.5, 0.2, -0.4, 0.1)
    k, v = overlap_coordinates(*o)
    np.testing.assert_allclose(beyond.overlaps_of(k, v), o, atol=1e-14)
    assert abs(np.linalg.norm(k) - 1) < 1e-14 and abs(np.linalg.norm(v) - 1) < 1e-14
    with pytest.raises(ValueError, match="kappa"):
        overlap_coordinates(0.9, 0.0, 0.0, 0.9, 0.0)
    with pytest.raises(ValueError, match="unit vectors"):
        overlap_coordinates(0.0, 0.9, 0.9, 0.0, 0.0)
    k, v = overlap_coordinates(0.0, 0.9, 0.9, 0.0, 0.0, project=True)
    assert abs(np.linalg.norm(v) - 1) < 1e-12


def test_sphere_derivatives_against_finite_differences():
    rng = np.random.default_rng(1)
    k = rng.normal(size=4)
    v = rng.normal(size=4)
    k, v = k / np.linalg.norm(k), v / np.linalg.norm(v)
    lam = 0.4
    der = beyond.sphere_derivatives(k, v, lam, TASK)
    assert der.risk == pytest.approx(_risk(k, v, lam), abs=1e-13)
    h = 1e-4
    B = der.basis
    for j in range(6):
        t = B[:, j]
        tk, tv = t[:4], t[4:]
        # a unit tangent vector lies in one factor (block-diagonal basis)
        if np.linalg.norm(tk) > 0.5:
            def f(s, tk=tk):
                return _risk(_rotate(k, tk, s), v, lam)
        else:
            def f(s, tv=tv):
                return _risk(k, _rotate(v, tv, s), lam)
        grad_fd = (f(h) - f(-h)) / (2 * h)
        assert der.gradient[j] == pytest.approx(grad_fd, rel=1e-7, abs=1e-7)
    # Hessian: at a critical point (the oracle) second differences along geodesics
    e = np.eye(4)
    der = beyond.sphere_derivatives(e[0], e[1], lam, TASK)
    for j in range(6):
        t = der.basis[:, j]
        tk, tv = t[:4], t[4:]
        def f(s, tk=tk, tv=tv):
            return _risk(_rotate(e[0], tk, s) if np.linalg.norm(tk) > 0.5 else e[0],
                         _rotate(e[1], tv, s) if np.linalg.norm(tv) > 0.5 else e[1], lam)
        h2 = 1e-3
        second = (f(h2) - 2 * f(0.0) + f(-h2)) / h2**2
        assert der.hessian[j, j] == pytest.approx(second, rel=1e-4, abs=1e-4)


def test_sphere_derivatives_bad_input():
    with pytest.raises(ValueError, match="k must be a finite unit vector"):
        beyond.sphere_derivatives(np.array([1.0, 1.0, 0, 0]), np.eye(4)[1], 0.5, TASK)
    with pytest.raises(ValueError, match="same length"):
        beyond.sphere_derivatives(np.eye(4)[0], np.eye(3)[1], 0.5, TASK)
    with pytest.raises(ValueError, match="lam"):
        beyond.sphere_derivatives(np.eye(4)[0], np.eye(4)[1], -0.5, TASK)


def test_refine_critical_point_finds_the_oracle_and_is_a_minimum():
    k, v = overlap_coordinates(0.97, 0.96, 0.05, 0.03, 0.02)
    cp = beyond.refine_critical_point(k, v, 0.3, SMALL)
    assert cp.gradient_norm < 1e-10
    np.testing.assert_allclose(np.abs(cp.overlaps), [1, 1, 0, 0, 0], atol=1e-7)
    assert cp.kind == "minimum"
    assert cp.risk == pytest.approx(float(oracle_risk(0.3, SMALL)), abs=1e-10)


# --------------------------------------------------------------------------- oracle stability
def test_oracle_plane_hessian_against_central_differences():
    lam = 0.7

    def f(a, b):
        return float(risk_from_overlaps(math.cos(a), math.cos(b), math.sin(b), math.sin(a), math.sin(a + b), lam, TASK))

    h = 1e-3
    H_fd = np.array([
        [(f(h, 0) - 2 * f(0, 0) + f(-h, 0)) / h**2, (f(h, h) - f(h, -h) - f(-h, h) + f(-h, -h)) / (4 * h**2)],
        [0.0, (f(0, h) - 2 * f(0, 0) + f(0, -h)) / h**2],
    ])
    H_fd[1, 0] = H_fd[0, 1]
    H = beyond.oracle_plane_hessian(lam, TASK)
    np.testing.assert_allclose(H, H_fd, rtol=1e-4, atol=1e-3)
    assert beyond.oracle_plane_hessian(np.array([0.2, 0.7]), TASK).shape == (2, 2, 2)


def test_critical_lambda_is_a_sign_change():
    lam_c = beyond.critical_lambda(TASK)
    assert 0.85 < lam_c < 0.95
    eig = beyond.oracle_transverse_eigenvalue(np.array([lam_c - 1e-3, lam_c + 1e-3]), TASK)
    assert eig[0] > 0 > eig[1]
    with pytest.raises(ValueError, match="lam_max"):
        beyond.critical_lambda(TASK, lam_max=-1.0)
    with pytest.raises(ValueError, match="local minimum"):
        beyond.critical_lambda(TASK, lam_max=0.5)


def test_tilted_branch_lies_below_the_oracle_and_merges_at_lambda_c():
    lam_c = beyond.critical_lambda(TASK)
    lams = np.array([0.85, 0.9, 1.0, 1.1])
    br = beyond.tilted_branch(lams, TASK, max_dlam=0.01)
    assert not br.exists[0] and br.exists[1:].all()
    assert np.all(br.risk[1:] < np.asarray(oracle_risk(lams[1:], TASK)))
    assert np.all(br.min_eigenvalue[1:] > 0)
    assert np.all(br.gradient_norm[1:] < 1e-9)
    # the tilted minimum lies in span{k*, v*}: kappa^2 + eta^2 = theta^2 + nu^2 = 1
    o = br.overlaps[1:]
    np.testing.assert_allclose(o[:, 0] ** 2 + o[:, 3] ** 2, 1.0, atol=1e-8)
    np.testing.assert_allclose(o[:, 2] ** 2 + o[:, 1] ** 2, 1.0, atol=1e-8)
    assert lam_c < 0.9


# --------------------------------------------------------------------------- transverse multipliers
def test_transverse_multipliers_at_the_oracle_are_one_minus_alpha_mu():
    lam, alpha = 0.5, 2e-3
    tm = beyond.transverse_multipliers(1.0, 1.0, lam, alpha, TASK)
    mu = np.linalg.eigvalsh(beyond.oracle_plane_hessian(lam, TASK))
    np.testing.assert_allclose(np.sort(tm.transverse), np.sort(1 - alpha * mu), atol=1e-10)
    assert tm.leak < 1e-12 and tm.step < 1e-12


def test_transverse_multipliers_predict_a_flip_in_pgd():
    """A point of M where the most negative multiplier is below -1: a small displacement off M
    flips sign every step of the real PGD (slrlib.training.pgd.pgd in R^d) and grows."""
    task = SMALL
    lam, alpha = 0.9, 4e-2
    kappa, nu = 1.0, 1.0
    tm = beyond.transverse_multipliers(kappa, nu, lam, alpha, task)
    assert np.min(np.real(tm.transverse)) < -1
    key_star = jax.random.key(0)
    k_star, v_star = task.oracle_directions(key_star)
    a = 1e-10
    k0 = np.asarray(k_star) + a * np.asarray(v_star)
    k0 /= np.linalg.norm(k0)
    r = pgd(k0, v_star, k_star, v_star, task, lam=lam, alpha=alpha, n_steps=15, log_every=1)
    eta = np.asarray(r.eta)
    ratios = eta[9:] / eta[8:-1]  # once the flipping mode dominates, before nonlinearity
    np.testing.assert_allclose(ratios, np.min(np.real(tm.transverse)), rtol=1e-3)


def test_transverse_multipliers_bad_input():
    with pytest.raises(ValueError, match="kappa"):
        beyond.transverse_multipliers(1.5, 0.0, 0.5, 1e-3, TASK)
    with pytest.raises(ValueError, match="alpha"):
        beyond.transverse_multipliers(0.5, 0.0, 0.5, 0.0, TASK)


# --------------------------------------------------------------------------- sweep
@pytest.mark.roundoff
def test_lambda_sweep_equals_separate_pgd_runs():
    lams = [0.1, 0.9]
    key = jax.random.key(3)
    sw = beyond.lambda_sweep(lams, SMALL, key, n_runs=4, alpha=2e-3, n_steps=300)
    star, init = jax.random.split(key)
    k_star, v_star = SMALL.oracle_directions(star)
    k0, v0 = uniform_directions(init, SMALL.d, (4,))
    for i, lam in enumerate(lams):
        r = pgd(k0, v0, k_star, v_star, SMALL, lam=lam, alpha=2e-3, n_steps=300, log_every=300)
        for name in beyond.OVERLAP_NAMES:
            np.testing.assert_allclose(sw.final[name][i], np.asarray(getattr(r, name))[:, -1], atol=1e-14)
        np.testing.assert_allclose(sw.excess_risk[i], np.asarray(r.risk)[:, -1], atol=1e-14)
    # Two programs: kappa_0 in pgd's span coordinates (QR, projections: reductions of length
    # d = 40) against one dot product of length d; each within ~4 d eps of |kappa| <= 1.
    np.testing.assert_allclose(sw.initial["kappa"], np.asarray(k0 @ k_star), rtol=0, atol=8 * SMALL.d * EPS)
    assert sw.labels.shape == (2, 4) and sw.fractions().shape == (2, 4)
    np.testing.assert_allclose(sw.fractions().sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="lams"):
        beyond.lambda_sweep([], SMALL, key, n_runs=2, alpha=1e-3, n_steps=10)
    with pytest.raises(ValueError, match="n_runs"):
        beyond.lambda_sweep([0.1], SMALL, key, n_runs=0, alpha=1e-3, n_steps=10)


# --------------------------------------------------------------------------- figure specs
def test_figure_specs_registered():
    from slrlib import figures

    names = figures.names()
    for name in ("fig4a", "fig7a", "fig7b", "beyond_schedule", "beyond_landscape", "beyond_sweep",
                 "beyond_init", "beyond_endpoints"):
        assert name in names
        assert figures.get(name).chapter == 8


def _equal_lengths(table):
    lengths = {np.asarray(v).size for v in table.values()}
    assert len(lengths) == 1


def test_schedule_and_landscape_figures_small():
    from slrlib.book.figures import beyond as fb
    from slrlib.book.plots import beyond as plots

    exp = run_pgd_experiment(PGD_CONFIGS["fig4a"].scaled(n_runs=3, n_steps=3000, log_every=300))
    data = fb.schedule_data(exp, every=3)
    assert data.multipliers.shape == (data.multiplier_steps.size, 3)
    _equal_lengths(fb.schedule_table(data))
    plots.plot_schedule_anatomy(data)

    land = fb.landscape_data(TASK, np.array([0.05, 0.1, 0.5, 0.95]))
    _equal_lengths(fb.landscape_table(land))
    assert np.isnan(land["tilted"][:3]).all() and np.isfinite(land["tilted"][3])
    plots.plot_landscape(land)


def test_batch_figures_small(monkeypatch):
    from slrlib.book.figures import beyond as fb
    from slrlib.book.plots import beyond as plots

    task = PGD_CONFIGS["fig4a"].task
    sweep = beyond.lambda_sweep([0.1, 1.0], task, jax.random.key(0), n_runs=3, alpha=2e-3, n_steps=200)
    sched = run_pgd_experiment(PGD_CONFIGS["fig4a"].scaled(n_runs=4, n_steps=600, log_every=600))
    small = run_pgd_experiment(PGD_CONFIGS["fig7b"].scaled(n_runs=4, n_steps=400, log_every=400))
    data = fb.BatchData(sweep, np.asarray(oracle_risk(sweep.lams, task)),
                        beyond.tilted_branch(sweep.lams, task, max_dlam=0.01), sched, small, 0.0)
    for table in (fb.sweep_table(data), fb.init_table(data), fb.endpoints_table(data)):
        _equal_lengths(table)
    plots.plot_sweep(data)
    plots.plot_initial_overlaps(data)
    plots.plot_endpoints(data, lam=1.0)
    plots.plot_endpoints_grid(data, lams=(0.1, 1.0))
    with pytest.raises(ValueError, match="lam"):
        plots.plot_endpoints(data, lam=0.5)


# --------------------------------------------------------------------------- head start, Monte Carlo
def test_head_start_swap_rates_against_a_chi_square_test():
    from scipy.stats import chi2_contingency

    labels = np.array([2, 2, 0, 2, 0, 0, 2, 0, 0, 0, 2, 0])
    eta0 = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])
    nu0 = np.array([0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
    h = beyond.head_start_swap_rates(labels, -eta0, nu0)  # signs do not matter
    assert (h.n_ahead, h.swapped_ahead, h.n_behind, h.swapped_behind) == (6, 3, 6, 2)
    assert h.rate_ahead == 0.5 and h.rate_behind == pytest.approx(1 / 3) and h.ratio == pytest.approx(1.5)
    # Pearson's chi-square without continuity correction on the 2x2 table is z^2.
    chi2 = chi2_contingency([[3, 3], [2, 4]], correction=False)[0]
    assert h.z**2 == pytest.approx(chi2, rel=1e-12)
    assert h.z > 0
    with pytest.raises(ValueError, match="non-empty"):
        beyond.head_start_swap_rates(labels, eta0 + 1, nu0)
    with pytest.raises(ValueError, match="same length"):
        beyond.head_start_swap_rates(labels[:3], eta0, nu0)


def test_monte_carlo_risks_agree_with_the_closed_forms():
    from slrlib.core.montecarlo import MonteCarloEstimate

    key = jax.random.key(7)
    k_star, v_star = SMALL.oracle_directions(key)
    k, v = uniform_directions(jax.random.key(8), SMALL.d, ())
    k = 0.8 * k_star + 0.6 * (k - (k @ k_star) * k_star) / np.linalg.norm(k - (k @ k_star) * k_star)
    est, closed = beyond.monte_carlo_risks(k, v_star, k_star, v_star, 0.5, SMALL, jax.random.key(9),
                                           n_samples=20_000)
    assert set(est) == set(closed) == {"end", "oracle", "end - oracle"}
    for name in est:
        assert isinstance(est[name], MonteCarloEstimate)
        assert abs(float(est[name].z_score(closed[name]))) < 4.5
    # the point is worse than the oracle by many standard errors of the paired difference
    assert closed["end - oracle"] > 10 * float(est["end - oracle"].stderr)
