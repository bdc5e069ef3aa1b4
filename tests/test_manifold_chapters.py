"""Library code of chapters 6 and 7 (slrlib.book.ch07_theorem5, slrlib.book.plots.manifold, slrlib.book.figures.manifold).

Independent checks: finite differences of the closed forms, the literal d-dimensional PGD,
the Hessian's eigenvector for the saddle's stable direction, exact symmetries of the
reduced map (F(-κ, -ν) = -F(κ, ν)), and the figure specs at small sizes.
"""

import math

import jax
import matplotlib

matplotlib.use("Agg")
import matplotlib.figure
import numpy as np
import pytest
from helpers import random_unit

from slrlib.core.geometry import directions_with_overlaps
from slrlib import SLRTask, manifold_risk, overlaps, risk_from_overlaps
from slrlib.book import ch06_pgd as ch6
from slrlib.book import ch07_theorem5 as t5
from slrlib.training.pgd import (
    classify_limits,
    manifold_hessian,
    manifold_risk_grad,
    pgd_dense,
    reduced_jacobian,
    reduced_pgd,
)
from slrlib.experiments import PGD_CONFIGS, PGDConfig, pgd_initialisation

TASK = SLRTask(d=400, L=10)
SMALL = SLRTask(d=7, L=4, gamma=0.8, eps=0.3)


@pytest.fixture(scope="module")
def directions():
    return SMALL.oracle_directions(jax.random.key(5))


# --------------------------------------------------------------------------- chapter 6
def test_overlap_partials_match_finite_differences():
    rng = np.random.default_rng(0)
    x = rng.uniform(-0.6, 0.6, size=(5, 8))
    lam, h = 0.7, 1e-6
    grads = ch6.overlap_partials(*x, lam, SMALL)
    for i in range(5):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        fd = (np.asarray(risk_from_overlaps(*up, lam, SMALL)) - np.asarray(risk_from_overlaps(*down, lam, SMALL))) / (2 * h)
        np.testing.assert_allclose(np.asarray(grads[i]), fd, rtol=1e-6, atol=1e-8)


def test_lemma14_partials_vanish_on_the_manifold_only():
    rng = np.random.default_rng(1)
    kappa, nu = rng.uniform(-1, 1, (2, 50))
    zero = np.zeros(50)
    _, _, dth, de, dr = ch6.overlap_partials(kappa, nu, zero, zero, zero, 0.4, SMALL)
    assert np.max(np.abs(np.asarray([dth, de, dr]))) == 0.0
    off = rng.uniform(-0.3, 0.3, (3, 50))
    _, _, dth, de, dr = ch6.overlap_partials(kappa, nu, *off, 0.4, SMALL)
    assert np.min(np.max(np.abs(np.asarray([dth, de, dr])), axis=0)) > 1e-4
    # the closed form is even in (theta, eta, rho) jointly
    r1 = risk_from_overlaps(kappa, nu, *off, 0.4, SMALL)
    r2 = risk_from_overlaps(kappa, nu, *(-off), 0.4, SMALL)
    np.testing.assert_allclose(np.asarray(r1), np.asarray(r2), rtol=0, atol=1e-14)


def test_gradients_from_partials_match_autodiff_and_finite_differences(directions):
    ks, vs = directions
    keys = jax.random.split(jax.random.key(2), 2)
    k = random_unit(keys[0], (3, SMALL.d))
    v = random_unit(keys[1], (3, SMALL.d))
    gk, gv = ch6.gradients_from_partials(k, v, ks, vs, 0.6, SMALL)
    ak, av = ch6.euclidean_gradients(k, v, ks, vs, 0.6, SMALL)
    np.testing.assert_allclose(np.asarray(gk), np.asarray(ak), atol=1e-12)
    np.testing.assert_allclose(np.asarray(gv), np.asarray(av), atol=1e-12)

    # finite differences of the formula in R^d along a random direction (run 0)
    def f(kk, vv):
        return float(risk_from_overlaps(*overlaps(kk, vv, ks, vs), 0.6, SMALL))

    u = np.asarray(random_unit(jax.random.key(3), (SMALL.d,)))
    h = 1e-6
    k0, v0 = np.asarray(k[0]), np.asarray(v[0])
    fd_k = (f(k0 + h * u, v0) - f(k0 - h * u, v0)) / (2 * h)
    fd_v = (f(k0, v0 + h * u) - f(k0, v0 - h * u)) / (2 * h)
    assert abs(fd_k - float(np.asarray(gk[0]) @ u)) < 1e-7
    assert abs(fd_v - float(np.asarray(gv[0]) @ u)) < 1e-7


def test_manifold_risk_quadrature_is_lemma6():
    # zeta by quadrature against its independent special values, zeta(0, s) = (2/pi) arcsin(2s^2/(1+2s^2))
    # and zeta(t, 0) = erf(t)^2; then the whole formula against the closed form (Owen's T) on the square.
    from scipy.special import erf

    task = SLRTask(d=50, L=6, gamma=0.8, eps=0.3)
    for lam in (0.05, 0.4, 1.0):
        # at kappa = 0 the relevant token's zeta is zeta(0, lam*gamma): everything has an arcsin form
        arcsin_zeta = lambda s: 2 / math.pi * math.asin(2 * s**2 / (1 + 2 * s**2))  # noqa: E731
        exact = (task.eps**2 + (task.L - 1) * arcsin_zeta(lam)
                 + task.gamma**2 * (1 + arcsin_zeta(lam * task.gamma)))
        got = float(ch6.manifold_risk_quadrature(0.0, 0.7, lam, task))
        assert abs(got - exact) < 1e-14
    # s -> 0: zeta(t, 0) = erf(t)^2 exactly; tiny lam*gamma relative to lam*q*kappa
    flat = SLRTask(d=50, L=1, gamma=1e-9, eps=0.0)
    got = float(ch6.manifold_risk_quadrature(0.6, 0.2, 0.5, flat, n_nodes=20)) / flat.gamma**2
    t = 0.5 * math.sqrt(25) * 0.6
    assert abs(got - (1 - 2 * 0.2 * erf(t) + erf(t) ** 2)) < 1e-6
    # the closed form of Theorem 1 at theta = eta = rho = 0 (Owen's T), over the square
    rng = np.random.default_rng(3)
    kappa, nu = rng.uniform(-1, 1, (2, 200))
    for lam in (0.02, 0.3, 1.0):
        np.testing.assert_allclose(np.asarray(ch6.manifold_risk_quadrature(kappa, nu, lam, TASK)),
                                   np.asarray(manifold_risk(kappa, nu, lam, TASK)), rtol=1e-13)
    # too few nodes is visibly wrong at large s: the test can fail
    coarse = np.asarray(ch6.manifold_risk_quadrature(kappa, nu, 1.0, TASK, n_nodes=3))
    assert np.max(np.abs(coarse - np.asarray(manifold_risk(kappa, nu, 1.0, TASK)))) > 1e-4
    with pytest.raises(ValueError, match="n_nodes"):
        ch6.manifold_risk_quadrature(0.0, 0.0, 0.1, TASK, n_nodes=0)
    with pytest.raises(ValueError, match="lam"):
        ch6.manifold_risk_quadrature(0.0, 0.0, 0.0, TASK)


def test_points_on_manifold_have_the_prescribed_overlaps(directions):
    ks, vs = directions
    kappa = np.array([0.3, -1.0, 1.0, 0.0])
    nu = np.array([-0.5, 0.2, 1.0, 0.0])
    k, v = directions_with_overlaps(kappa, nu, 0.0, 0.0, 0.0, ks, vs, jax.random.key(4))
    o = overlaps(k, v, ks, vs)
    np.testing.assert_allclose(np.asarray(o.kappa), kappa, atol=1e-14)
    np.testing.assert_allclose(np.asarray(o.nu), nu, atol=1e-14)
    for x in (o.theta, o.eta, o.rho):
        assert np.max(np.abs(np.asarray(x))) < 1e-14
    np.testing.assert_allclose(np.linalg.norm(np.asarray(k), axis=-1), 1.0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(v), axis=-1), 1.0, atol=1e-14)


def test_points_on_manifold_rejects_bad_input(directions):
    ks, vs = directions
    with pytest.raises(ValueError, match="kappa"):
        directions_with_overlaps(np.array([1.5]), np.array([0.0]), 0.0, 0.0, 0.0, ks, vs, jax.random.key(0))
    with pytest.raises(ValueError, match="broadcast"):
        directions_with_overlaps(np.array([0.1, 0.2]), np.array([0.0, 0.1, 0.2]), 0.0, 0.0, 0.0, ks, vs, jax.random.key(0))
    small = SLRTask(d=3, L=2)
    k3, v3 = small.oracle_directions(jax.random.key(0))
    with pytest.raises(ValueError, match="k_star"):
        directions_with_overlaps(np.array([0.1]), np.array([0.0]), 0.0, 0.0, 0.0, k3, v3, jax.random.key(0))


SHORT = PGDConfig(name="short", title="short test run", init="manifold", lam=0.1, schedule="constant", alpha=4e-3,
                  n_steps=300, log_every=30, d=40, L=5, n_runs=3)


@pytest.mark.roundoff
def test_manifold_drift_stays_at_roundoff_and_matches_dense_pgd():
    drift = ch6.manifold_drift(SHORT)
    assert drift.steps.shape == (301,)
    assert drift.max_distance.max() < 1e-14
    assert np.all(drift.median_distance <= drift.max_distance)
    # each run's distance is bounded by the largest crossed overlaps over runs
    bound = np.sqrt(drift.max_abs_theta**2 + drift.max_abs_eta**2 + drift.max_abs_rho**2)
    assert np.all(drift.max_distance <= bound * (1 + 1e-12))
    # the literal d-dimensional PGD from the same initialisation ends at the same overlaps

    task = SHORT.task
    ks, vs, k0, v0 = pgd_initialisation(SHORT)
    dense = pgd_dense(k0, v0, ks, vs, task, lam=SHORT.lam, alpha=SHORT.alpha, n_steps=SHORT.n_steps,
                      log_every=SHORT.n_steps)
    np.testing.assert_allclose(drift.final_kappa, np.asarray(dense.kappa)[:, -1], atol=1e-12)
    np.testing.assert_allclose(drift.final_nu, np.asarray(dense.nu)[:, -1], atol=1e-12)


def test_manifold_drift_and_reduced_vs_full_reject_configs_off_the_manifold():
    with pytest.raises(ValueError, match="config"):
        ch6.manifold_drift("fig7b")
    with pytest.raises(ValueError, match="config"):
        ch6.reduced_vs_full("fig4a")
    with pytest.raises(ValueError, match="config"):
        ch6.manifold_drift("nonexistent")


@pytest.mark.roundoff
def test_reduced_vs_full_agree():
    out = ch6.reduced_vs_full(SHORT)
    assert out.gap.max() < 1e-12
    starts = np.array([[0.5, -0.4], [-0.9, 0.9], [0.0, 0.3]])
    out = ch6.reduced_vs_full(SHORT, starts=starts)
    np.testing.assert_allclose(out.full_kappa[:, 0], starts[:, 0], atol=1e-14)
    np.testing.assert_allclose(out.full_nu[:, 0], starts[:, 1], atol=1e-14)
    assert out.gap.max() < 1e-12
    assert out.distance.max() < 1e-14
    assert out.config.n_runs == 3
    with pytest.raises(ValueError, match="starts"):
        ch6.reduced_vs_full(SHORT, starts=np.zeros((3, 3)))


# --------------------------------------------------------------------------- chapter 7
def test_portrait_step_uses_the_top_curvature_at_the_saddle():
    lam = 0.1
    # independent Hessian of the manifold risk at (0, 0) by central differences
    h = 1e-4
    f = lambda k, n: float(manifold_risk(k, n, lam, TASK))
    hkk = (f(h, 0) - 2 * f(0, 0) + f(-h, 0)) / h**2
    hkn = (f(h, h) - f(h, -h) - f(-h, h) + f(-h, -h)) / (4 * h**2)
    hnn = (f(0, h) - 2 * f(0, 0) + f(0, -h)) / h**2
    top = np.max(np.linalg.eigvalsh(np.array([[hkk, hkn], [hkn, hnn]])))
    assert t5.portrait_step(lam, TASK, 0.5) == pytest.approx(0.5 / top, rel=1e-5)
    with pytest.raises(ValueError, match="fraction"):
        t5.portrait_step(lam, TASK, 0.0)


def test_kappa_partial_matches_the_gradient_and_keeps_its_sign_on_the_edges():
    rng = np.random.default_rng(3)
    k, n = rng.uniform(-1, 1, (2, 100))
    for lam in (0.05, 0.3, 1.0):
        np.testing.assert_allclose(np.asarray(t5.kappa_partial(k, n, lam, TASK)),
                                   np.asarray(manifold_risk_grad(k, n, lam, TASK)[0]), rtol=1e-9, atol=1e-13)
    # finite differences at moderate points
    h = 1e-6
    fd = (np.asarray(manifold_risk(k + h * (np.abs(k) < 0.9), n, 0.3, TASK))
          - np.asarray(manifold_risk(k - h * (np.abs(k) < 0.9), n, 0.3, TASK))) / (2 * h)
    ok = np.abs(k) < 0.9
    np.testing.assert_allclose(np.asarray(t5.kappa_partial(k, n, 0.3, TASK))[ok], fd[ok], rtol=1e-5, atol=1e-8)
    # on the top edge the partial is < 0 and on the bottom edge > 0, however small (Prop. 10)
    kk = np.linspace(-1, 1, 41)
    top = np.asarray(t5.kappa_partial(kk, np.ones_like(kk), 2.0, TASK))
    bottom = np.asarray(t5.kappa_partial(kk, -np.ones_like(kk), 2.0, TASK))
    assert np.all(top < 0) and np.all(bottom > 0)
    with pytest.raises(ValueError, match="nu"):
        t5.kappa_partial(0.0, 1.5, 0.1, TASK)


def test_jacobian_determinant_matches_the_jacobian():
    pts = [(0.0, 0.0), (0.3, -0.2), (-0.9, 0.7), (1.0, 1.0)]
    k = np.array([p[0] for p in pts])
    n = np.array([p[1] for p in pts])
    det = t5.jacobian_determinant(k, n, TASK, lam=0.1, alpha=0.2)
    ref = [np.linalg.det(reduced_jacobian(a, b, 0.1, 0.2, TASK)) for a, b in pts]
    np.testing.assert_allclose(det, ref, rtol=1e-10)
    # Proposition 12 at the saddle: det(I - alpha H)
    H = manifold_hessian(0.0, 0.0, 0.1, TASK)
    assert det[0] == pytest.approx(np.linalg.det(np.eye(2) - 0.2 * H), rel=1e-10)


def test_reduced_jacobians_match_finite_differences_of_the_map():
    from slrlib.training.pgd import reduced_map
    pts = np.array([(0.0, 0.0), (0.3, -0.2), (-0.9, 0.7), (0.5, 0.99)])
    J = t5.reduced_jacobians(pts[:, 0], pts[:, 1], TASK, lam=0.1, alpha=0.2)
    assert J.shape == (4, 2, 2)
    h = 1e-6
    for col, (dk, dn) in enumerate([(h, 0.0), (0.0, h)]):
        up = np.stack(reduced_map(pts[:, 0] + dk, pts[:, 1] + dn, 0.1, 0.2, TASK), axis=-1)
        down = np.stack(reduced_map(pts[:, 0] - dk, pts[:, 1] - dn, 0.1, 0.2, TASK), axis=-1)
        np.testing.assert_allclose(J[:, :, col], (np.asarray(up) - np.asarray(down)) / (2 * h), atol=1e-8)
    # broadcasting and the grid shape
    assert t5.reduced_jacobians(np.zeros((2, 3)), 0.5, TASK, lam=0.1, alpha=0.2).shape == (2, 3, 2, 2)
    with pytest.raises(ValueError):
        t5.reduced_jacobians(1.5, 0.0, TASK, lam=0.1, alpha=0.2)
    with pytest.raises(ValueError):
        t5.reduced_jacobians(0.0, 0.0, TASK, lam=0.1, alpha=0.0)


def test_risk_hessians_match_finite_differences_of_the_gradient():
    pts = np.array([(0.0, 0.0), (0.3, -0.2), (-0.7, 0.6)])
    H = t5.risk_hessians(pts[:, 0], pts[:, 1], TASK, lam=0.1)
    assert H.shape == (3, 2, 2)
    np.testing.assert_allclose(H[0], manifold_hessian(0.0, 0.0, 0.1, TASK), rtol=1e-12)
    h = 1e-6
    for col, (dk, dn) in enumerate([(h, 0.0), (0.0, h)]):
        up = np.stack(manifold_risk_grad(pts[:, 0] + dk, pts[:, 1] + dn, 0.1, TASK), axis=-1)
        down = np.stack(manifold_risk_grad(pts[:, 0] - dk, pts[:, 1] - dn, 0.1, TASK), axis=-1)
        np.testing.assert_allclose(H[:, :, col], (np.asarray(up) - np.asarray(down)) / (2 * h), atol=1e-8)
    np.testing.assert_allclose(H[:, 0, 1], H[:, 1, 0], rtol=1e-12)
    with pytest.raises(ValueError):
        t5.risk_hessians(0.0, 0.0, TASK, lam=-1.0)


@pytest.mark.roundoff
def test_descent_check_agrees_with_logged_trajectories():
    k0 = np.array([0.4, -0.7, 0.05])
    n0 = np.array([-0.3, 0.6, 0.0])
    for alpha in (0.05, 0.9):
        chk = t5.descent_check(k0, n0, TASK, lam=0.1, alpha=alpha, n_steps=200)
        red = reduced_pgd(k0, n0, TASK, lam=0.1, alpha=alpha, n_steps=200, log_every=1)
        diffs = np.diff(np.asarray(red.risk), axis=-1)
        np.testing.assert_allclose(chk.max_increase, diffs.max(axis=-1), atol=1e-14)
        np.testing.assert_allclose(chk.kappa, np.asarray(red.kappa)[:, -1], atol=1e-14)
        last = np.hypot(*(np.asarray(x)[:, -1] - np.asarray(x)[:, -2] for x in (red.kappa, red.nu)))
        np.testing.assert_allclose(chk.last_step, last, atol=1e-14)
        first = [int(np.flatnonzero(d > 1e-12)[0]) if np.any(d > 1e-12) else -1 for d in diffs]
        np.testing.assert_array_equal(chk.first_increase, first)
    # small alpha: a descent method; a too large one is not
    assert t5.descent_check(k0, n0, TASK, lam=0.1, alpha=0.05, n_steps=200).max_increase.max() <= 1e-15
    assert t5.descent_check(k0, n0, TASK, lam=0.1, alpha=0.9, n_steps=200).max_increase.max() > 1e-3
    with pytest.raises(ValueError, match="alpha"):
        t5.descent_check(k0, n0, TASK, lam=0.1, alpha=-1.0, n_steps=10)
    with pytest.raises(ValueError, match="n_steps"):
        t5.descent_check(k0, n0, TASK, lam=0.1, alpha=0.1, n_steps=0)


def test_limit_labels_refine_classify_limits():
    k = np.array([0.0, 1.0, -1.0, 1.0, -1.0, 0.5, 0.9995, 0.0])
    n = np.array([0.0, 1.0, -1.0, -1.0, 1.0, 0.5, 0.9999, 1e-4])
    lab = t5.limit_labels(k, n)
    np.testing.assert_array_equal(lab, [0, 1, 2, 3, 4, -1, 1, 0])
    merged = np.select([lab == 0, (lab == 1) | (lab == 2), (lab == 3) | (lab == 4)], [0, 1, 2], -1)
    np.testing.assert_array_equal(merged, classify_limits(k, n))
    with pytest.raises(ValueError, match="tol"):
        t5.limit_labels(k, n, tol=0.0)


def test_basin_grid_small():
    grid = t5.basin_grid(0.1, TASK, alpha=0.2, n_steps=1500, n_grid=11, check_descent=True)
    lab = grid.labels
    assert lab[5, 5] == 0  # the saddle itself
    assert lab[0, 0] == 2 and lab[-1, -1] == 1  # the minima are fixed
    assert lab[0, -1] == 3 and lab[-1, 0] == 4  # the maxima are fixed
    assert np.all(lab >= 0)  # everything converged
    assert np.sum(lab == 0) == 1 and np.sum(lab >= 3) == 2
    assert grid.max_increase.max() <= 1e-15
    # F(-kappa, -nu) = -F(kappa, nu): the picture is symmetric through the origin
    swap = np.array([0, 2, 1, 4, 3])
    np.testing.assert_array_equal(lab[::-1, ::-1], swap[lab])
    fast = t5.basin_grid(0.1, TASK, alpha=0.2, n_steps=1500, n_grid=11)
    np.testing.assert_array_equal(fast.labels, lab)
    assert fast.max_increase is None
    np.testing.assert_allclose(fast.last_step, grid.last_step, atol=1e-12)
    with pytest.raises(ValueError, match="n_grid"):
        t5.basin_grid(0.1, TASK, alpha=0.2, n_steps=10, n_grid=1)
    with pytest.raises(ValueError, match="check_descent"):
        t5.basin_grid(0.1, TASK, alpha=0.2, n_steps=10, n_grid=3, check_descent="yes")


def test_saddle_stable_set_is_tangent_to_the_stable_eigenvector_and_leads_to_the_saddle():
    lam, alpha = 0.1, 0.2
    k0 = np.array([-0.6, -1e-3, 1e-3, 0.6])
    nu0 = t5.saddle_stable_set(k0, TASK, lam=lam, alpha=alpha)
    # odd symmetry of F
    assert nu0[0] == pytest.approx(-nu0[3], abs=1e-12)
    assert nu0[1] == pytest.approx(-nu0[2], abs=1e-15)
    # tangent at the origin: eigenvector of the Hessian's positive eigenvalue
    w, V = np.linalg.eigh(manifold_hessian(0.0, 0.0, lam, TASK))
    stable = V[:, np.argmax(w)]
    assert nu0[2] / k0[2] == pytest.approx(stable[1] / stable[0], rel=1e-3)
    # trajectories started on it come close to the saddle before round-off pushes them away
    red = reduced_pgd(k0, nu0, TASK, lam=lam, alpha=alpha, n_steps=400)
    closest = np.min(np.hypot(np.asarray(red.kappa), np.asarray(red.nu)), axis=-1)
    assert np.all(closest < 1e-10)
    with pytest.raises(ValueError, match="open interval"):
        t5.saddle_stable_set(np.array([1.0]), TASK, lam=lam, alpha=alpha)


def test_landscape_fast_and_numerical_agree():
    fast = t5.landscape(0.1, TASK, n_steps=200, log_every=10, n_grid=21)
    assert fast.risk.shape == (21, 21)
    assert fast.paths_kappa.shape == (24, 21)
    np.testing.assert_array_equal(fast.points, t5.FIVE_POINTS)
    assert fast.kinds == ("saddle", "minimum", "minimum", "maximum", "maximum")
    assert fast.max_increase.max() <= 1e-15
    np.testing.assert_allclose(fast.risk[10, 10], float(manifold_risk(0.0, 0.0, 0.1, TASK)))
    num = t5.landscape(0.1, TASK, n_steps=20, log_every=10, n_grid=5, numerical=True)
    order = np.lexsort((num.points[:, 1], num.points[:, 0]))
    ref = np.lexsort((fast.points[:, 1], fast.points[:, 0]))
    np.testing.assert_allclose(num.points[order], fast.points[ref], atol=1e-9)
    assert [num.kinds[i] for i in order] == [fast.kinds[i] for i in ref]
    with pytest.raises(ValueError, match="starts"):
        t5.landscape(0.1, TASK, starts=np.zeros(3))
    with pytest.raises(ValueError, match="starts"):
        t5.landscape(0.1, TASK, starts=np.array([[2.0, 0.0]]))


# --------------------------------------------------------------------------- figures
def _check_spec(name, data):
    from slrlib import figures

    spec = figures.get(name)
    table = spec.table(data)
    lengths = {k: np.asarray(v).size for k, v in table.items()}
    assert len(set(lengths.values())) == 1, lengths
    fig = spec.plot(data)
    assert isinstance(fig, matplotlib.figure.Figure)
    return table


def test_figure_specs_small(tmp_path):
    from slrlib import figures
    from slrlib.book.figures import manifold as fm

    for name in ("ch6_drift", "ch6_reduced", "fig6", "ch7_basins"):
        assert figures.get(name).chapter in (6, 7)
    drift = fm.compute_drift(SHORT)
    table = _check_spec("ch6_drift", drift)
    assert table["step"].size == SHORT.n_steps + 1
    red = fm.compute_reduced(SHORT, n_grid=11)
    table = _check_spec("ch6_reduced", red)
    assert table["run"].size == 24 * (SHORT.n_steps // SHORT.log_every + 1)
    data = fm.compute_fig6(n_steps=100, log_every=10, n_grid=11, numerical=False, n_flow=9)
    table = _check_spec("fig6", data)
    assert np.sum(table["layer"] == 2) == 5
    assert np.sum(table["layer"] == 3) == 81
    assert np.all(np.isfinite(table["v_kappa"][table["layer"] == 3]))
    assert np.all(np.isnan(table["v_kappa"][table["layer"] != 3]))
    basins = fm.compute_basins(n_grid=9, n_curve=5, n_steps=600)
    table = _check_spec("ch7_basins", basins)
    assert np.sum(table["layer"] == 0) == 81
    figures.write_csv(table, tmp_path / "basins.csv")
    assert (tmp_path / "basins.csv").read_text().startswith("layer,kappa0,nu0,label")


def test_kappa_nullcline_zeroes_the_kappa_derivative_of_the_risk():
    """Independent of the factored form: central differences of the Lemma 6 risk in κ vanish on
    the curve (to the difference's truncation + round-off) and change sign across it."""
    lam, h = 0.3, 1e-5
    kappa = np.linspace(-0.95, 0.95, 39)
    nu = t5.kappa_nullcline(kappa, lam, TASK)
    kappa, nu = kappa[np.abs(nu) < 0.9], nu[np.abs(nu) < 0.9]
    risk = lambda k, n: np.asarray(manifold_risk(k, n, lam, TASK))
    fd = (risk(kappa + h, nu) - risk(kappa - h, nu)) / (2 * h)
    scale = np.abs((risk(kappa + h, nu + 0.05) - risk(kappa - h, nu + 0.05)) / (2 * h)).max()
    assert np.abs(fd).max() < 1e-6 * scale
    above = (risk(kappa + h, nu + 0.02) - risk(kappa - h, nu + 0.02)) / (2 * h)
    below = (risk(kappa + h, nu - 0.02) - risk(kappa - h, nu - 0.02)) / (2 * h)
    assert kappa.size >= 10 and np.all(above < 0) and np.all(below > 0)


def test_flow_field_is_the_small_step_limit_of_the_reduced_map():
    from slrlib.training.pgd import reduced_map

    lam = 0.1
    flow = t5.flow_field(lam, TASK, n_grid=7, n_curve=5)
    K, N = np.meshgrid(flow.kappa, flow.nu)
    errors = []
    for alpha in (1e-4, 1e-5):
        k1, n1 = (np.asarray(x) for x in reduced_map(K, N, lam, alpha, TASK))
        errors.append(max(np.abs((k1 - K) / alpha - flow.v_kappa).max(), np.abs((n1 - N) / alpha - flow.v_nu).max()))
    # (F(x) - x)/α = v + O(α): the error is small and shrinks about tenfold with α
    assert errors[0] < 1e-3 and errors[1] < errors[0] / 5
    assert flow.curve_kappa.shape == (5,) and flow.v_kappa.shape == (7, 7)
    assert np.all(flow.v_kappa[:, [0, -1]] == 0) and np.all(flow.v_nu[[0, -1], :] == 0)   # invariant edges
    with pytest.raises(ValueError, match="n_grid"):
        t5.flow_field(lam, TASK, n_grid=1)
    with pytest.raises(ValueError, match="lam"):
        t5.flow_field(-1.0, TASK)
    with pytest.raises(ValueError, match="kappa"):
        t5.kappa_nullcline(np.array([1.5]), lam, TASK)


def test_plot_landscape_slider_frame():
    from slrlib.book.plots.manifold import plot_landscape

    land = t5.landscape(0.5, TASK, n_steps=50, log_every=10, n_grid=11)
    fig = plot_landscape(0.5, landscapes={0.5: land})
    assert isinstance(fig, matplotlib.figure.Figure)
    fig = plot_landscape(0.2, task=TASK, n_steps=50, log_every=10, n_grid=11)
    assert isinstance(fig, matplotlib.figure.Figure)
    with pytest.raises(ValueError, match="task"):
        plot_landscape(0.3, landscapes={0.5: land})


def test_paper_config_is_the_default():
    assert PGD_CONFIGS["fig4b"].lam == 0.1 and PGD_CONFIGS["fig4b"].alpha == 4e-3
    assert math.isclose(t5.FIVE_POINTS[0, 0], 0.0)
