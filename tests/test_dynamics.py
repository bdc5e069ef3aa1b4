"""Projected gradient descent (Section 5) against independent computations.

* the span trick of :func:`pgd` against the literal d-dimensional iteration
  (:func:`pgd_dense`) and against a hand-written loop of Definition 1;
* exact fixed points and invariances: the oracle, the sign flip (k, v) -> (-k, -v),
  rotations fixing k* and v*, the manifold M (Lemma 4);
* the reduced map F (Lemma 7) against full PGD on M;
* gradients, Hessians and Jacobians against finite differences and hand derivations;
* Propositions 8-13 and Theorem 5 on small tasks;
* bad input raises a ValueError naming the parameter.

Runtime is dominated by compilation: a PGD run with a new batch size, d or number of
logged points, and each new array shape given to the closed-form risk, compiles anew
(~1-4 s). The tests below therefore share a few configurations: d = 20 everywhere except
the paper's d = 400, batches of 4 or 6 runs, 500 steps logged at every step.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import erf as sp_erf

from slrlib.core.geometry import uniform_directions, manifold_directions
from slrlib import (
    SLRTask,
    manifold_risk,
    oracle_risk,
    overlaps,
    population_risk,
    risk_from_overlaps,
)
from slrlib.training.pgd import (SCHEDULES, classify_limits, distance_to_manifold, fixed_point_table, inverse_temperature, manifold_hessian, manifold_risk_grad, pgd, pgd_dense, reduced_jacobian, reduced_map, reduced_pgd, riemannian_hessian, stationary_points)

# Their tests share costly fixtures: `make test` keeps them on one pytest-xdist worker, and the
# fixtures are session-scoped, so that tests of other modules run between them do not tear them down.
pytestmark = pytest.mark.xdist_group("test_dynamics")

EPS = np.finfo(np.float64).eps  # 2.2e-16: round-off tolerances below are multiples of it

CORNERS_AND_SADDLE = np.array([[-1.0, -1.0], [-1.0, 1.0], [0.0, 0.0], [1.0, -1.0], [1.0, 1.0]])

# Off-manifold PGD runs: a small task where every term of the closed form matters.
TASK = SLRTask(d=20, L=5, gamma=0.8, eps=0.1)
# Runs on M: d = 20 converges in a few thousand steps. alpha = 0.05 is "small" here: M is
# transversally stable, so full PGD stays on M (with alpha = 0.2 the rho-direction
# overshoots and round-off grows by ~4.5 per step: full PGD leaves M although the reduced
# map is still well behaved).
TASK_M = SLRTask(d=20, L=5)
LAM_M, ALPHA_M = 0.3, 0.05
# Every d = 20 run (full or reduced) has 6 runs / starting points: one compilation each.
N_RUNS = 6


@pytest.fixture(scope="session")
def dirs():
    return TASK.oracle_directions(jax.random.key(100))


@pytest.fixture(scope="session")
def dirs_m():
    return TASK_M.oracle_directions(jax.random.key(200))


# --------------------------------------------------------------------------- helpers
def manifold_point(kappa, nu, k_star, v_star, u, w):
    """(k, v) on M with the given overlaps: k = kappa k* + sqrt(1 - kappa^2) u, v likewise.

    u, w must be orthonormal and orthogonal to k*, v*; then theta = eta = rho = 0.
    """
    k = kappa * k_star + math.sqrt(1.0 - kappa**2) * u
    v = nu * v_star + math.sqrt(1.0 - nu**2) * w
    return k, v


def orthonormal_complement(seed, k_star, v_star, m):
    """m orthonormal vectors orthogonal to k* and v* (QR in numpy)."""
    A = np.random.default_rng(seed).standard_normal((k_star.shape[0], m))
    Q = np.linalg.qr(np.column_stack([np.asarray(k_star), np.asarray(v_star), A]))[0]
    return Q[:, 2:]


def rotation_fixing(seed, k_star, v_star):
    """A random orthogonal matrix R with R k* = k*, R v* = v* (numpy)."""
    d = k_star.shape[0]
    B = np.column_stack([np.asarray(k_star), np.asarray(v_star), orthonormal_complement(seed, k_star, v_star, d - 2)])
    block = np.eye(d)
    block[2:, 2:] = np.linalg.qr(np.random.default_rng(seed + 1).standard_normal((d - 2, d - 2)))[0]
    return B @ block @ B.T


def np_overlaps(k, v, k_star, v_star):
    k_star, v_star = np.asarray(k_star), np.asarray(v_star)
    return [np.sum(a * b, axis=-1) for a, b in ((k, k_star), (v, v_star), (v, k_star), (k, v_star), (k, v))]


_GRADS = {}


def _risk_grad(task):
    """jax.grad of sum(risk_from_overlaps o overlaps), compiled once per task."""
    if task not in _GRADS:

        def total(k, v, k_star, v_star, lam):
            return jnp.sum(risk_from_overlaps(*overlaps(k, v, k_star, v_star), lam, task))

        _GRADS[task] = jax.jit(jax.grad(total, argnums=(0, 1)))
    return _GRADS[task]


def hand_pgd(k, v, k_star, v_star, task, lam0, alpha, n_steps, offset=0):
    """Definition 1 written from scratch, in R^d, lam_t = lam0 / (1 + 1e-4 (t + offset)).

    Gradient: jax.grad of the public closed form risk_from_overlaps o overlaps; the tangent
    projection and the renormalisation in numpy. ``offset=1`` is an off-by-one schedule
    (t = 1 for the first step), used to show the comparison can fail.
    """

    grad = _risk_grad(task)
    k, v = np.asarray(k, dtype=float), np.asarray(v, dtype=float)
    history = [np_overlaps(k, v, k_star, v_star)]
    for t in range(n_steps):
        lam = lam0 / (1.0 + 1e-4 * (t + offset))
        gk, gv = (np.asarray(g) for g in grad(k, v, k_star, v_star, lam))
        gk = gk - np.sum(k * gk, axis=-1, keepdims=True) * k
        gv = gv - np.sum(v * gv, axis=-1, keepdims=True) * v
        k, v = k - alpha * gk, v - alpha * gv
        k = k / np.linalg.norm(k, axis=-1, keepdims=True)
        v = v / np.linalg.norm(v, axis=-1, keepdims=True)
        history.append(np_overlaps(k, v, k_star, v_star))
    stacked = [np.stack([h[i] for h in history], axis=-1) for i in range(5)]
    return stacked, k, v


OVERLAP_FIELDS = ("kappa", "nu", "theta", "eta", "rho")


# --------------------------------------------------------------------------- 1. the oracle is fixed
# The oracle test and the Lemma 4 test share the Figure 4(b) configuration (d = 400,
# L = 10, 20 000 steps logged every 200, 3 runs): one compilation for both.
TASK_PAPER = SLRTask(d=400, L=10)
PAPER_KW = dict(alpha=4e-3, n_steps=20_000, log_every=200)


@pytest.fixture(scope="session")
def dirs_paper():
    return TASK_PAPER.oracle_directions(jax.random.key(501))


def test_pgd_started_at_the_oracle_stays_there(dirs_paper):
    k_star, v_star = dirs_paper
    k0 = jnp.stack([k_star, -k_star, k_star])
    v0 = jnp.stack([v_star, -v_star, v_star])
    lam = 0.1
    res = pgd(k0, v0, k_star, v_star, TASK_PAPER, lam=lam, **PAPER_KW)
    # At +-(k*, v*) the tangent gradient is d_kappa R (k* - kappa k) = 0 up to round-off
    # (1e-16 per step); with lam = 0.1 the oracle attracts under this step, so round-off
    # does not accumulate: 1e-12 leaves a factor 1e4 of margin. (Not for every lam: at
    # alpha = 4e-3 and constant lam >= 0.3 the oracle is linearly unstable in the
    # (theta, eta) plane, curvature ~ d = 400 there, and a 1e-10 perturbation grows ~1.8x
    # per step with period 2, in pgd and pgd_dense alike.)
    sign = np.array([1.0, -1.0, 1.0])[:, None]
    np.testing.assert_allclose(res.kappa, np.broadcast_to(sign, res.kappa.shape), rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.nu, np.broadcast_to(sign, res.nu.shape), rtol=0, atol=1e-12)
    for name in ("theta", "eta", "rho", "distance"):
        assert float(np.max(np.abs(getattr(res, name)))) <= 1e-12, name
    np.testing.assert_allclose(res.k, k0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.v, v0, rtol=0, atol=1e-12)
    # and the logged risk is the oracle risk of Theorem 1 (an independent formula)
    np.testing.assert_allclose(res.risk, float(oracle_risk(lam, TASK_PAPER)), rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- 2. reduced map = PGD on M
@pytest.fixture(scope="session")
def manifold_run(dirs_m):
    k_star, v_star = dirs_m
    k0, v0 = manifold_directions(jax.random.key(201), k_star, v_star, (N_RUNS,))
    res = pgd(k0, v0, k_star, v_star, TASK_M, lam=LAM_M, alpha=ALPHA_M, n_steps=500, log_every=1)
    return k0, v0, res


@pytest.mark.roundoff
def test_reduced_pgd_equals_full_pgd_on_the_manifold(manifold_run):
    _, _, full = manifold_run
    red = reduced_pgd(full.kappa[:, 0], full.nu[:, 0], TASK_M, lam=LAM_M, alpha=ALPHA_M, n_steps=500, log_every=1)
    np.testing.assert_array_equal(red.steps, full.steps)
    # Lemma 7: reduced PGD on M against full PGD, to 1e-8. Round-off per step ~1e-16,
    # amplified only transiently (largest gap seen ~2e-15): 1e-8 is generous.
    assert float(np.max(np.abs(red.kappa - full.kappa))) <= 1e-8
    assert float(np.max(np.abs(red.nu - full.nu))) <= 1e-8
    assert float(np.max(np.abs(red.risk - full.risk))) <= 1e-8
    # The comparison is not vacuous: the trajectories move a lot in 500 steps.
    assert float(np.min(np.abs(full.kappa[:, -1] - full.kappa[:, 0]))) > 0.3


@pytest.mark.roundoff
def test_reduced_map_equals_dense_pgd_on_the_manifold(dirs_m):
    # Explicit points of M, edges and the saddle included; pgd_dense is the literal
    # iteration in R^d.
    k_star, v_star = dirs_m
    u, w = orthonormal_complement(202, k_star, v_star, 2).T
    pts = np.array([(0.3, -0.6), (1.0, 0.4), (-0.5, -1.0), (0.0, 0.0), (-0.9, 0.8), (0.0, -0.5)])
    K, V = zip(*(manifold_point(a, b, np.asarray(k_star), np.asarray(v_star), u, w) for a, b in pts))
    K, V = jnp.asarray(np.stack(K)), jnp.asarray(np.stack(V))
    dense = pgd_dense(K, V, k_star, v_star, TASK_M, lam=LAM_M, alpha=ALPHA_M, n_steps=500, log_every=1)
    kap, nu = reduced_map(pts[:, 0], pts[:, 1], LAM_M, ALPHA_M, TASK_M)
    # One step: only round-off (~1e-16 times O(1) constants) separates the two.
    np.testing.assert_allclose(kap, dense.kappa[:, 1], rtol=0, atol=1e-13)
    np.testing.assert_allclose(nu, dense.nu[:, 1], rtol=0, atol=1e-13)
    # Edges kappa = +-1, nu = +-1 are invariant (factor 1 - kappa^2), (0, 0) is fixed.
    assert float(kap[1]) == 1.0 and float(nu[2]) == -1.0
    assert float(kap[3]) == 0.0 and float(nu[3]) == 0.0
    # 500 steps: same tolerance as against pgd (Lemma 7, 1e-8), and the run stayed on M.
    red = reduced_pgd(pts[:, 0], pts[:, 1], TASK_M, lam=LAM_M, alpha=ALPHA_M, n_steps=500, log_every=1)
    assert float(np.max(np.abs(red.kappa - dense.kappa))) <= 1e-8
    assert float(np.max(np.abs(red.nu - dense.nu))) <= 1e-8
    assert float(np.max(dense.distance)) <= 1e-12


# --------------------------------------------------------------------------- 3. Proposition 8
# Risk increments must be <= 1e-12: the risk is O(1), so round-off in one evaluation is
# ~1e-15; an increase beyond 1e-12 is a real increase, not noise.
RISK_SLACK = 1e-12


@pytest.fixture(scope="session")
def grid_run():
    """reduced_pgd from a 9 x 9 grid of [-0.95, 0.95]^2 (the centre is the saddle)."""
    g = np.linspace(-0.95, 0.95, 9)
    K, N = np.meshgrid(g, g, indexing="ij")
    return K, N, reduced_pgd(K, N, TASK_M, lam=LAM_M, alpha=ALPHA_M, n_steps=2000, log_every=100)


def test_risk_decreases_along_reduced_pgd(grid_run):
    _, _, res = grid_run
    assert float(np.max(np.diff(np.asarray(res.risk), axis=-1))) <= RISK_SLACK
    # and it does decrease (except from the saddle (0, 0), a fixed point)
    drop = np.array(res.risk[..., 0] - res.risk[..., -1])
    drop[4, 4] = 1.0
    assert np.all(drop > 1e-3)


def test_risk_decreases_along_full_pgd_on_the_manifold(manifold_run):
    _, _, res = manifold_run
    assert float(np.max(np.diff(np.asarray(res.risk), axis=-1))) <= RISK_SLACK
    assert np.all(np.asarray(res.risk[:, -1]) < np.asarray(res.risk[:, 0]) - 0.1)


def test_risk_decreases_along_full_pgd_from_a_uniform_start(dirs_m):
    k_star, v_star = dirs_m
    k0, v0 = uniform_directions(jax.random.key(203), TASK_M.d, (N_RUNS,))
    # alpha = 0.02: off M the curvature (in theta, eta, rho) is larger, and with alpha = 0.05
    # we have seen the risk go up by 0.2 from some uniform starts of this task.
    res = pgd(k0, v0, k_star, v_star, TASK_M, lam=LAM_M, alpha=0.02, n_steps=500, log_every=1)
    assert float(np.max(np.diff(np.asarray(res.risk), axis=-1))) <= RISK_SLACK
    assert np.all(np.asarray(res.risk[:, -1]) < np.asarray(res.risk[:, 0]) - 0.1)


# --------------------------------------------------------------------------- 4. exact derivatives
def test_population_risk_gradient_matches_finite_differences(dirs):
    k_star, v_star = dirs
    d, h = TASK.d, 1e-6
    E = h * jnp.eye(d)
    for i, lam in enumerate([0.2, 0.7, 2.0]):
        k, v = (x[0] for x in uniform_directions(jax.random.key(300 + i), d, (N_RUNS,)))
        k = (k + k_star) / jnp.linalg.norm(k + k_star)  # exercise every term (kappa large)
        gk, gv = jax.grad(population_risk, argnums=(0, 1))(k, v, k_star, v_star, lam, TASK)
        # All 4d perturbed points in one call (rows: k + h e_j, k - h e_j, then v moved).
        # |‖k ± h e_j‖ - 1| <= h |k_j| + h^2 < 1e-6: the unit-norm check still passes.
        K = jnp.concatenate([k + E, k - E, jnp.broadcast_to(k, (2 * d, d))])
        V = jnp.concatenate([jnp.broadcast_to(v, (2 * d, d)), v + E, v - E])
        r = np.asarray(population_risk(K, V, k_star, v_star, lam, TASK)).reshape(4, d)
        fd_k = (r[0] - r[1]) / (2 * h)
        fd_v = (r[2] - r[3]) / (2 * h)
        # Central differences: truncation ~h^2 R"' ~ 1e-12, round-off ~1e-16 R / h
        # ~ 1e-10; a relative 1e-6 (floor 1e-8) is far above both.
        np.testing.assert_allclose(gk, fd_k, rtol=1e-6, atol=1e-8, err_msg=str(lam))
        np.testing.assert_allclose(gv, fd_v, rtol=1e-6, atol=1e-8, err_msg=str(lam))


@pytest.mark.parametrize("lam", [0.1, 0.6, 1.5])
@pytest.mark.roundoff
def test_manifold_risk_grad_matches_finite_differences_and_autodiff(lam):
    # 16 points (the shape the second-difference tests use: one compilation of the risk)
    rand = np.random.default_rng(310).uniform(-0.99, 0.99, (10, 2))
    pts = np.concatenate([[[0.3, -0.6], [-0.9, 0.2], [0.0, 0.7], [0.99, 0.99], [-0.5, 0.0], [0.0, 0.0]], rand])
    dk, dn = manifold_risk_grad(pts[:, 0], pts[:, 1], lam, TASK_M)
    # the risk is elementwise, so the gradient of the sum is the pointwise derivative
    ag_k, ag_n = jax.grad(lambda a, b: jnp.sum(manifold_risk(a, b, lam, TASK_M)), argnums=(0, 1))(
        jnp.asarray(pts[:, 0]), jnp.asarray(pts[:, 1])
    )
    # jax.grad of the Lemma 6 closed form vs the hand-derived derivatives: same function,
    # two derivations, agreement to round-off.
    np.testing.assert_allclose(dk, ag_k, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(dn, ag_n, rtol=1e-12, atol=1e-13)
    h = 1e-6
    f = lambda a, b: np.asarray(manifold_risk(a, b, lam, TASK_M))  # noqa: E731
    fd_k = (f(pts[:, 0] + h, pts[:, 1]) - f(pts[:, 0] - h, pts[:, 1])) / (2 * h)
    fd_n = (f(pts[:, 0], pts[:, 1] + h) - f(pts[:, 0], pts[:, 1] - h)) / (2 * h)
    # truncation ~h^2 (lam q)^3 ~ 1e-10, round-off ~1e-10: 1e-7 absolute.
    np.testing.assert_allclose(dk, fd_k, rtol=0, atol=1e-7)
    np.testing.assert_allclose(dn, fd_n, rtol=0, atol=1e-7)
    # At (0, 0): erf(0) = 0 and d_t zeta(0, s) = 0, so both derivatives vanish exactly.
    assert float(dn[5]) == 0.0 and float(dk[5]) == 0.0


def test_reduced_jacobian_matches_finite_differences():
    h = 1e-6
    cases = [(0.3, -0.6, 0.3, 0.05), (-0.8, 0.4, 1.2, 0.2), (0.0, 0.0, 0.5, 0.1), (0.6, 0.95, 0.7, 0.5)]
    for kappa, nu, lam, alpha in cases:
        J = reduced_jacobian(kappa, nu, lam, alpha, TASK_M)
        # F at (kappa + h, nu), (kappa - h, nu), (kappa, nu + h), (kappa, nu - h) in one call
        out = np.array(reduced_map(kappa + np.array([h, -h, 0, 0]), nu + np.array([0, 0, h, -h]), lam, alpha, TASK_M))
        fd = np.column_stack([(out[:, 0] - out[:, 1]) / (2 * h), (out[:, 2] - out[:, 3]) / (2 * h)])
        # truncation ~h^2 F''' <= 1e-10, round-off ~1e-16 / h = 1e-10: 1e-7 absolute.
        np.testing.assert_allclose(J, fd, rtol=0, atol=1e-7)


def second_differences(f, x, h):
    """Hessian of f: R^2 -> R at x by central second differences.

    ``f`` takes two arrays (first and second coordinates) and is evaluated once.
    """
    E = np.eye(2) * h
    pts, signs = [], []
    for i in range(2):
        for j in range(2):
            for si, sj, c in ((1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1)):
                pts.append(x + si * E[i] + sj * E[j])
                signs.append(c)
    pts = np.array(pts)
    vals = np.asarray(f(pts[:, 0], pts[:, 1])) * np.array(signs)
    return vals.reshape(2, 2, 4).sum(-1) / (4 * h**2)


# Second differences with h = 1e-4: truncation ~h^2 f'''' / 6 <= 1e-7 for f'''' ~ 10,
# round-off ~1e-16 * 4 / (4 h^2) = 1e-8. Hence 1e-6 absolute.
H_STEP, H_TOL = 1e-4, 1e-6


@pytest.mark.parametrize("kappa,nu,lam", [(0.0, 0.0, 0.3), (0.4, -0.3, 0.7), (-0.7, 0.8, 1.5), (0.2, 0.5, 0.1)])
def test_manifold_hessian_matches_second_differences(kappa, nu, lam):
    H = manifold_hessian(kappa, nu, lam, TASK_M)
    f = lambda a, b: manifold_risk(a, b, lam, TASK_M)  # noqa: E731
    np.testing.assert_allclose(H, second_differences(f, np.array([kappa, nu]), H_STEP), rtol=0, atol=H_TOL)
    assert abs(H[1, 1]) <= 1e-14  # the risk is affine in nu (Lemma 6)


@pytest.mark.parametrize(
    "kappa,nu,lam", [(0.0, 0.0, 0.3), (0.4, -0.3, 0.7), (1.0, 1.0, 0.3), (-1.0, 1.0, 0.6), (1.0, -0.2, 1.0)]
)
def test_riemannian_hessian_matches_second_differences(kappa, nu, lam):
    H = riemannian_hessian(kappa, nu, lam, TASK_M)
    # cos(phi +- h) stays in [-1, 1], so the corners are fine for differences in angles.
    f = lambda p, s: manifold_risk(np.cos(p), np.cos(s), lam, TASK_M)  # noqa: E731
    angles = np.array([math.acos(kappa), math.acos(nu)])
    np.testing.assert_allclose(H, second_differences(f, angles, H_STEP), rtol=0, atol=H_TOL)
    dk, dn = (float(x) for x in manifold_risk_grad(kappa, nu, lam, TASK_M))
    if abs(kappa) == 1.0:
        # d^2/dphi^2 R(cos phi) = R'' sin^2 - R' cos = -kappa d_kappa R at phi in {0, pi}
        assert H[0, 0] == pytest.approx(-kappa * dk, abs=1e-12)
        assert H[0, 1] == pytest.approx(0.0, abs=1e-12)
    if abs(nu) == 1.0:
        assert H[1, 1] == pytest.approx(-nu * dn, abs=1e-12)
    if kappa == 0.0 and nu == 0.0:
        # at phi = psi = pi / 2, sin = 1 and cos = 0: the Euclidean Hessian
        np.testing.assert_allclose(H, manifold_hessian(0.0, 0.0, lam, TASK_M), rtol=0, atol=1e-13)


# --------------------------------------------------------------------------- 5. schedules
def test_inverse_temperature_values():
    t = np.array([0, 1, 7, 300, 10_000, 120_000])
    np.testing.assert_allclose(inverse_temperature(1.3, t, "paper"), 1.3 / (1.0 + 1e-4 * t), rtol=1e-15)
    assert float(inverse_temperature(1.3, 0, "paper")) == 1.3  # t = 0 is the first step
    np.testing.assert_array_equal(inverse_temperature(1.3, t, "constant"), np.full(t.shape, 1.3))
    np.testing.assert_array_equal(inverse_temperature(1.3, t), np.full(t.shape, 1.3))  # default
    assert SCHEDULES == ("constant", "paper")


@pytest.fixture(scope="session")
def paper_runs(dirs_m):
    """500 steps, every step logged, paper schedule and constant lam0, N_RUNS uniform runs
    (manifold_run's shapes: no new compilation)."""
    k_star, v_star = dirs_m
    k0, v0 = uniform_directions(jax.random.key(400), TASK_M.d, (N_RUNS,))
    kw = dict(lam=1.0, alpha=0.02, n_steps=500, log_every=1)
    paper = pgd(k0, v0, k_star, v_star, TASK_M, schedule="paper", **kw)
    const = pgd(k0, v0, k_star, v_star, TASK_M, schedule="constant", **kw)
    return k0, v0, paper, const


def test_logged_lambda_follows_the_schedule(paper_runs):
    _, _, paper, const = paper_runs
    np.testing.assert_array_equal(paper.steps, np.arange(501))
    np.testing.assert_allclose(paper.lam, 1.0 / (1.0 + 1e-4 * np.arange(501)), rtol=1e-15)
    np.testing.assert_array_equal(const.lam, np.ones(501))


@pytest.mark.roundoff
def test_logged_lambda_with_sparse_logging(dirs):
    k_star, v_star = dirs
    k0, v0 = uniform_directions(jax.random.key(401), TASK.d, (6,))  # same shapes as batched_run
    res = pgd(k0, v0, k_star, v_star, TASK, lam=2.0, alpha=0.01, n_steps=400, log_every=20, schedule="paper")
    np.testing.assert_array_equal(res.steps, np.arange(0, 401, 20))
    np.testing.assert_allclose(res.lam, 2.0 / (1.0 + 1e-4 * res.steps), rtol=1e-15)
    np.testing.assert_allclose(res.lam, inverse_temperature(2.0, res.steps, "paper"), rtol=1e-15)
    # The logged risk is R_{lam_t}(k_t, v_t): check the last one against population_risk.
    for i in (0, 5):
        expected = float(population_risk(res.k[i], res.v[i], k_star, v_star, float(res.lam[-1]), TASK))
        assert float(res.risk[i, -1]) == pytest.approx(expected, abs=1e-12)


@pytest.mark.roundoff
def test_first_step_of_the_paper_schedule_uses_lam0(paper_runs):
    _, _, paper, const = paper_runs
    for name in OVERLAP_FIELDS:
        a, b = np.asarray(getattr(paper, name)), np.asarray(getattr(const, name))
        # step 0 -> 1 uses lam_0 = lam0 in both: same arithmetic, equal to round-off
        np.testing.assert_allclose(a[:, 1], b[:, 1], rtol=0, atol=1e-15)
    # from the second step on, lam_1 = lam0 / 1.0001 differs: the schedule is really used
    assert float(np.max(np.abs(np.asarray(paper.kappa[:, 2]) - np.asarray(const.kappa[:, 2])))) > 1e-9


@pytest.mark.roundoff
def test_pgd_with_paper_schedule_matches_a_hand_written_loop(dirs_m, paper_runs):
    k_star, v_star = dirs_m
    k0, v0, paper, _ = paper_runs
    hist, k, v = hand_pgd(k0, v0, k_star, v_star, TASK_M, 1.0, 0.02, 500)
    # Same iteration, different code paths (span coordinates vs R^d): 500 steps of
    # round-off, ~1e-16 each, not amplified at this small alpha: 1e-12.
    for name, h in zip(OVERLAP_FIELDS, hist):
        np.testing.assert_allclose(getattr(paper, name), h, rtol=0, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(paper.k, k, rtol=0, atol=1e-12)
    np.testing.assert_allclose(paper.v, v, rtol=0, atol=1e-12)
    # The tolerance is tight enough to see an off-by-one in the schedule (t = 1 first).
    off, _, _ = hand_pgd(k0, v0, k_star, v_star, TASK_M, 1.0, 0.02, 500, offset=1)
    assert float(np.max(np.abs(np.asarray(paper.kappa) - off[0]))) > 1e-9


# --------------------------------------------------------------------------- 6. Lemma 4
def test_init_on_manifold_lies_on_the_manifold(dirs_m):
    k_star, v_star = dirs_m
    k, v = manifold_directions(jax.random.key(500), k_star, v_star, (4000,))
    assert k.shape == v.shape == (4000, TASK_M.d)
    np.testing.assert_allclose(jnp.linalg.norm(k, axis=-1), 1.0, rtol=0, atol=1e-14)
    np.testing.assert_allclose(jnp.linalg.norm(v, axis=-1), 1.0, rtol=0, atol=1e-14)
    o = overlaps(k, v, k_star, v_star)
    for name in ("theta", "eta", "rho"):
        assert float(jnp.max(jnp.abs(getattr(o, name)))) <= 1e-14, name
    assert float(jnp.max(distance_to_manifold(o.theta, o.eta, o.rho))) <= 1e-14


def test_manifold_is_invariant_in_the_paper_setting(dirs_paper):
    # Figure 4(b): d = 400, L = 10, lam = 0.1 (constant), alpha = 4e-3, 20 000 steps.
    k_star, v_star = dirs_paper
    k0, v0 = manifold_directions(jax.random.key(502), k_star, v_star, (3,))
    res = pgd(k0, v0, k_star, v_star, TASK_PAPER, lam=0.1, **PAPER_KW)
    assert res.distance.shape == (3, 101)
    # Exact invariance (Lemma 4): only round-off leaves M, and M attracts transversally
    # here (largest distance seen ~4e-15); the paper's plot goes down to 1e-8.
    assert float(jnp.max(res.distance)) <= 1e-12
    # Theorem 5 is under way: nu recovered, kappa far from 0 and with the sign of nu.
    assert np.all(np.abs(np.asarray(res.nu[:, -1])) > 0.99)
    assert np.all(np.asarray(res.kappa[:, -1] * res.nu[:, -1]) > 0.9)


# --------------------------------------------------------------------------- 7. span trick = literal
@pytest.fixture(scope="session")
def batched_inits(dirs):
    k_star, v_star = dirs
    ku, vu = uniform_directions(jax.random.key(600), TASK.d, (6,))
    k0 = np.array(ku).reshape(2, 3, TASK.d)
    v0 = np.array(vu[:3])  # shape (3, d): broadcasts against k0's (2, 3)
    k0[0, 0] = k_star  # k0 = k*, v0 arbitrary
    k0[0, 1] = v0[1]  # k0 = v0
    k0[1, 2] = -np.asarray(v_star)  # k0 = -v*: eta = -1
    return jnp.asarray(k0), jnp.asarray(v0)


BATCH_KW = dict(lam=1.0, alpha=0.05, n_steps=400, log_every=20, schedule="paper")


@pytest.fixture(scope="session")
def batched_run(dirs, batched_inits):
    k_star, v_star = dirs
    k0, v0 = batched_inits
    return pgd(k0, v0, k_star, v_star, TASK, **BATCH_KW)


@pytest.mark.roundoff
def test_pgd_equals_pgd_dense(dirs, batched_inits, batched_run):
    k_star, v_star = dirs
    k0, v0 = batched_inits
    kw = BATCH_KW
    fast = batched_run
    slow = pgd_dense(k0, v0, k_star, v_star, TASK, **kw)
    for res in (fast, slow):
        np.testing.assert_array_equal(res.steps, np.arange(0, 401, 20))
        assert res.steps[-1] == 400 and res.steps.size == 400 // 20 + 1
        assert res.kappa.shape == res.risk.shape == res.distance.shape == (2, 3, 21)
        assert res.k.shape == res.v.shape == (2, 3, TASK.d)
    # Same arithmetic in a different basis: only round-off (largest gap seen ~1e-15).
    for name in OVERLAP_FIELDS + ("risk", "distance", "k", "v"):
        np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=0, atol=1e-12, err_msg=name)
    np.testing.assert_array_equal(fast.lam, slow.lam)
    # logged step 0 is the initialisation itself, and the final logged overlaps are those of k, v.
    # Two programs: overlaps in pgd's span coordinates (QR, projections, k = Q k_coords:
    # reductions of length d = 20) against dot products of length d; each within ~4 d eps.
    o0 = overlaps(k0, jnp.broadcast_to(v0, k0.shape), k_star, v_star)
    of = overlaps(fast.k, fast.v, k_star, v_star)
    for i, name in enumerate(OVERLAP_FIELDS):
        np.testing.assert_allclose(getattr(fast, name)[..., 0], o0[i], rtol=0, atol=8 * TASK.d * EPS)
        np.testing.assert_allclose(getattr(fast, name)[..., -1], of[i], rtol=0, atol=8 * TASK.d * EPS)
    # final vectors are unit vectors; the runs did move
    np.testing.assert_allclose(jnp.linalg.norm(fast.k, axis=-1), 1.0, atol=1e-14)
    assert float(jnp.min(jnp.abs(fast.risk[..., -1] - fast.risk[..., 0]))) > 1e-3


@pytest.mark.roundoff
def test_pgd_commutes_with_the_symmetries_of_the_risk(dirs, batched_inits, batched_run):
    # R(k, v) depends only on the overlaps (Theorem 1), and R(-k, -v) = R(k, v): PGD
    # commutes with rotations fixing k*, v* and with the sign flip.
    k_star, v_star = dirs
    k0, v0 = batched_inits
    v0 = jnp.broadcast_to(v0, k0.shape)
    kw = BATCH_KW
    base = batched_run
    R = jnp.asarray(rotation_fixing(601, k_star, v_star))
    np.testing.assert_allclose(R @ k_star, k_star, atol=1e-14)
    np.testing.assert_allclose(R @ v_star, v_star, atol=1e-14)
    rot = pgd(k0 @ R.T, v0 @ R.T, k_star, v_star, TASK, **kw)
    flip = pgd(-k0, -v0, k_star, v_star, TASK, **kw)
    # round-off only (1e-12 as above)
    for name in OVERLAP_FIELDS:
        np.testing.assert_allclose(getattr(rot, name), getattr(base, name), rtol=0, atol=1e-12)
    np.testing.assert_allclose(rot.k, base.k @ R.T, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rot.v, base.v @ R.T, rtol=0, atol=1e-12)
    for name, sign in zip(OVERLAP_FIELDS, (-1, -1, -1, -1, 1)):  # rho = <k, v> is even
        np.testing.assert_allclose(getattr(flip, name), sign * getattr(base, name), rtol=0, atol=1e-12)
    np.testing.assert_allclose(flip.k, -base.k, rtol=0, atol=1e-12)
    np.testing.assert_allclose(flip.risk, base.risk, rtol=0, atol=1e-12)


@pytest.mark.roundoff
def test_pgd_broadcasts_leading_axes(dirs_m):
    # k0 of shape (d,) against v0 of shape (6, d): 6 runs from the same k0 (same shapes as
    # manifold_run, no new compilation).
    k_star, v_star = dirs_m
    k0, v0 = uniform_directions(jax.random.key(602), TASK_M.d, (N_RUNS,))
    kw = dict(lam=LAM_M, alpha=0.02, n_steps=500, log_every=1)
    shared = pgd(k0[0], v0, k_star, v_star, TASK_M, **kw)
    explicit = pgd(jnp.broadcast_to(k0[0], v0.shape), v0, k_star, v_star, TASK_M, **kw)
    assert shared.kappa.shape == (N_RUNS, 501) and shared.k.shape == (N_RUNS, TASK_M.d)
    # Exact: pgd broadcasts k0 to (N_RUNS, d) before the compiled loop, so both calls run the
    # same compiled program on bitwise-equal inputs.
    for name in OVERLAP_FIELDS + ("risk", "k", "v"):
        np.testing.assert_array_equal(getattr(shared, name), getattr(explicit, name))
    # Two programs: kappa_0 in the span coordinates (QR, projections: reductions of length
    # d = 20) against one dot product of length d; each within ~4 d eps of |kappa| <= 1.
    np.testing.assert_allclose(shared.kappa[:, 0], np.full(N_RUNS, float(k0[0] @ k_star)),
                               rtol=0, atol=8 * TASK_M.d * EPS)


def _random_rotations(key, n, d):
    """n random orthogonal d x d matrices (QR of Gaussian matrices)."""
    q, _ = jnp.linalg.qr(jax.random.normal(key, (n, d, d)))
    return q


@pytest.mark.roundoff
def test_pgd_per_run_directions_by_rotation_invariance(dirs, batched_inits, batched_run):
    # One task pair per run, as the authors' code draws them: run r gets (R_r k*, R_r v*) and
    # starts at (R_r k0_r, R_r v0_r) for a random rotation R_r. The risk is rotation invariant,
    # so every logged overlap must be that of the shared-direction run (batched_run).
    k_star, v_star = dirs
    k0, v0 = batched_inits
    v0 = jnp.broadcast_to(v0, k0.shape)
    R = _random_rotations(jax.random.key(610), 6, TASK.d).reshape(2, 3, TASK.d, TASK.d)
    rot = lambda x: jnp.einsum("abij,abj->abi", R, jnp.broadcast_to(x, k0.shape))  # noqa: E731
    K_star, V_star, K0, V0 = rot(k_star), rot(v_star), rot(k0), rot(v0)
    per_run = pgd(K0, V0, K_star, V_star, TASK, **BATCH_KW)
    assert per_run.kappa.shape == batched_run.kappa.shape == (2, 3, 21)
    # Round-off only: the rotated vectors' overlaps differ by a few d eps, and the span
    # coordinates are computed in another basis (as for pgd against pgd_dense, same bound).
    for name in OVERLAP_FIELDS + ("risk", "distance"):
        np.testing.assert_allclose(getattr(per_run, name), getattr(batched_run, name), rtol=0, atol=1e-12,
                                   err_msg=name)
    np.testing.assert_allclose(per_run.k, rot(batched_run.k), rtol=0, atol=1e-12)
    np.testing.assert_allclose(per_run.v, rot(batched_run.v), rtol=0, atol=1e-12)
    # and the literal iteration in R^d accepts them too, with the same arithmetic
    dense = pgd_dense(K0, V0, K_star, V_star, TASK, **BATCH_KW)
    for name in OVERLAP_FIELDS + ("risk", "k", "v"):
        np.testing.assert_allclose(getattr(dense, name), getattr(per_run, name), rtol=0, atol=1e-12, err_msg=name)


def test_pgd_flags_diverged_runs(dirs, batched_inits, batched_run):
    """alpha = 1e6 returned overlaps with nothing to say they are garbage: `diverged` (one flag per
    run, after the existing fields) says so, for pgd and pgd_dense, also when only the first and
    last steps are logged; the stable runs of BATCH_KW are not flagged."""
    k_star, v_star = dirs
    k0, v0 = batched_inits
    assert batched_run._fields[-1] == "diverged" and batched_run._fields[:11] == (
        "steps", "lam", "kappa", "nu", "theta", "eta", "rho", "risk", "distance", "k", "v")
    assert isinstance(batched_run.diverged, np.ndarray) and batched_run.diverged.dtype == bool
    assert batched_run.diverged.shape == (2, 3) and not batched_run.diverged.any()
    huge = {**BATCH_KW, "alpha": 1e6}
    for fn in (pgd, pgd_dense):
        res = fn(k0, v0, k_star, v_star, TASK, **huge)
        assert res.diverged.shape == (2, 3) and res.diverged.all(), fn.__name__
        assert np.all(np.isfinite(res.risk))  # finite: no FloatingPointError, only the flag tells
    sparse = pgd(k0, v0, k_star, v_star, TASK, **{**huge, "log_every": huge["n_steps"]})
    assert sparse.diverged.all()
    one = pgd(k0[0, 0], v0[0], k_star, v_star, TASK, **huge)
    assert one.diverged.shape == () and bool(one.diverged)


@pytest.mark.parametrize("alpha", [0.05, 3.0])
def test_next_step_length_is_the_step_pgd_takes(dirs, batched_inits, alpha):
    """The step criterion of `diverged`, alpha ||(I - k k^T) grad_k R||, computed from the overlaps,
    equals tan of the angle by which one step of pgd turns k (and the same for v)."""
    from slrlib.training.pgd import _overlap_grad, _tangent_steps

    k_star, v_star = dirs
    k0, v0 = batched_inits
    res = pgd(k0, v0, k_star, v_star, TASK, lam=0.7, alpha=alpha, n_steps=1, log_every=1)
    ov = [np.asarray(getattr(res, n))[..., 0] for n in ("kappa", "nu", "theta", "eta", "rho")]
    grads = _overlap_grad(*ov, 0.7, float(TASK.d), float(TASK.L), TASK.gamma, TASK.eps)
    step_k, step_v = np.asarray(_tangent_steps(grads, ov, alpha))

    def tan_angle(a, b):
        a = np.broadcast_to(np.asarray(a, float), np.shape(b))
        a = a / np.linalg.norm(a, axis=-1, keepdims=True)
        c = np.sum(a * b, axis=-1)
        return np.linalg.norm(b - c[..., None] * a, axis=-1) / c

    np.testing.assert_allclose(step_k, tan_angle(k0, res.k), rtol=1e-9)
    np.testing.assert_allclose(step_v, tan_angle(v0, res.v), rtol=1e-9)


def test_pgd_per_run_directions_bad_input(dirs, batched_inits):
    k_star, v_star = dirs
    k0, v0 = batched_inits  # runs (2, 3)
    kw = dict(lam=1.0, alpha=0.05, n_steps=2)
    four = jnp.broadcast_to(k_star, (4, TASK.d))
    with pytest.raises(ValueError, match="k0, v0 and k_star, v_star must have broadcastable"):
        pgd(k0, v0, four, jnp.broadcast_to(v_star, (4, TASK.d)), TASK, **kw)
    bad_v = jnp.stack([v_star, k_star, v_star])  # run 1: v* = k*, not orthogonal
    with pytest.raises(ValueError, match="k_star must be orthogonal to v_star"):
        pgd(k0, v0, jnp.broadcast_to(k_star, (3, TASK.d)), bad_v, TASK, **kw)
    with pytest.raises(ValueError, match="k_star must have shape"):
        pgd(k0, v0, k_star[:-1], v_star, TASK, **kw)


# --------------------------------------------------------------------------- 8. Propositions 9, 10, 12
@pytest.mark.parametrize(
    "lam,task",
    [
        (0.1, SLRTask(d=400, L=10)),  # Figure 4(b)
        (0.3, TASK_M),
        (1.0, SLRTask(d=6, L=4, gamma=0.8, eps=0.3)),
    ],
)
def test_stationary_points_are_the_corners_and_the_origin(lam, task):
    pts = stationary_points(lam, task)
    assert pts.shape == (5, 2)
    np.testing.assert_allclose(pts, CORNERS_AND_SADDLE, rtol=0, atol=1e-8)


@pytest.mark.parametrize("lam", [0.5, 0.9, 1.0])
def test_stationary_points_in_the_saturated_regime(lam):
    # Figure 7(a)'s setting: d = 400, L = 10, lam = 0.9 (lam q = 12.7): erf saturates and
    # (14) is below 1e-20 along whole stretches of the edges nu = +-1 in (kappa, nu); the
    # angle formulation must still return exactly Proposition 9's five points.
    pts = stationary_points(lam, SLRTask(d=400, L=10))
    assert pts.shape == (5, 2), f"{len(pts)} 'stationary points', e.g. {pts[len(pts) // 2 + 1]}"
    np.testing.assert_allclose(pts, CORNERS_AND_SADDLE, rtol=0, atol=1e-8)


def test_stationary_points_on_the_plateau_are_not_zeros():
    # Independent check of what the filter rejects: on the edge nu = 1 at lam = 0.9 the
    # kappa-derivative is tiny but non-zero, by the factored form
    # d_kappa R = (2 gamma^2 lam q / sqrt(c2)) erf'(a) [erf(a/sqrt(c4)) - 1], whose bracket is
    # -erfc(a/sqrt(c4)) (computed here with scipy, not with slrlib).
    from scipy.special import erfc as sp_erfc

    task = SLRTask(d=400, L=10)
    lam, kappa = 0.9, 0.8
    q, g2 = math.sqrt(task.d / 2), task.gamma**2
    c2, c4 = 1 + 2 * lam**2 * g2, 1 + 4 * lam**2 * g2
    a = lam * q * kappa / math.sqrt(c2)
    expected = -(2 * g2 * lam * q / math.sqrt(c2)) * (2 / math.sqrt(math.pi)) * math.exp(-a * a) * sp_erfc(a / math.sqrt(c4))
    d_kappa = float(manifold_risk_grad(kappa, 1.0, lam, task)[0])
    assert expected < 0 and abs(expected) < 1e-20
    # slrlib computes erf(b) - 1 by cancellation: relative error about 1.1e-16 / erfc(b)
    # = 1.1e-16 / 3e-11 ~ 4e-6 here, hence rel = 1e-4.
    assert d_kappa == pytest.approx(expected, rel=1e-4)


def test_stationary_points_refuses_unresolvable_saturation():
    # d = 10 000, lam = 1: b_max = 28.9, erfc underflows; the edges cannot be told apart
    # from the curve nu = erf(b) in float64, and the function says so.
    with pytest.raises(ValueError, match="^lam"):
        stationary_points(1.0, SLRTask(d=10_000, L=10))


@pytest.fixture(scope="session")
def table():
    return fixed_point_table(LAM_M, ALPHA_M, TASK_M)


def test_fixed_point_table_classifies_the_five_points(table):
    kinds = {(round(p.kappa), round(p.nu)): p for p in table}
    assert sorted(kinds) == [(-1, -1), (-1, 1), (0, 0), (1, -1), (1, 1)]
    assert kinds[(1, 1)].kind == kinds[(-1, -1)].kind == "minimum"
    assert kinds[(1, -1)].kind == kinds[(-1, 1)].kind == "maximum"
    assert kinds[(0, 0)].kind == "saddle"
    # risks: minima < saddle < maxima; minima = oracle risk (Theorem 1); maxima =
    # R(k*, -v*) from the full closed form; (1, 1) and (-1, -1) equal by the sign flip.
    k_star, v_star = TASK_M.oracle_directions(jax.random.key(200))
    r_min, r_sad, r_max = kinds[(1, 1)].risk, kinds[(0, 0)].risk, kinds[(1, -1)].risk
    assert r_min < r_sad < r_max
    assert r_min == pytest.approx(float(oracle_risk(LAM_M, TASK_M)), abs=1e-13)
    assert kinds[(-1, -1)].risk == pytest.approx(r_min, abs=1e-13)
    assert r_max == pytest.approx(float(population_risk(k_star, -v_star, k_star, v_star, LAM_M, TASK_M)), abs=1e-13)
    # the table's eigenvalues are those of the public Hessian and Jacobian
    for p in table:
        np.testing.assert_allclose(
            p.hessian_eigenvalues, np.linalg.eigvalsh(riemannian_hessian(p.kappa, p.nu, LAM_M, TASK_M)), atol=1e-13
        )
        jac = np.linalg.eigvals(reduced_jacobian(p.kappa, p.nu, LAM_M, ALPHA_M, TASK_M))
        np.testing.assert_allclose(np.sort(np.abs(p.jacobian_eigenvalues)), np.sort(np.abs(jac)), atol=1e-13)
    # the minima attract (|eigenvalues| < 1), the maxima repel (> 1)
    assert np.all(np.abs(kinds[(1, 1)].jacobian_eigenvalues) < 1)
    assert np.all(np.abs(kinds[(1, -1)].jacobian_eigenvalues) > 1)


def zeta_tt_at_zero(s, n=120):
    """d^2/dt^2 E erf(t + sG)^2 at t = 0 = 2 E[erf'(sG)^2 + erf(sG) erf''(sG)], by
    Gauss-Hermite quadrature (independent of slrlib's closed forms)."""
    x, w = hermegauss(n)
    w = w / w.sum()
    ep = 2 / math.sqrt(math.pi) * np.exp(-((s * x) ** 2))
    return float(np.sum(w * 2 * (ep**2 + sp_erf(s * x) * (-2 * s * x) * ep)))


@pytest.mark.parametrize("lam,alpha", [(LAM_M, ALPHA_M), (1.0, 0.01)])
def test_saddle_jacobian_is_identity_minus_alpha_hessian(lam, alpha):
    task = TASK_M
    H = manifold_hessian(0.0, 0.0, lam, task)
    # Hand derivation from Lemma 6: d_kk R = gamma^2 (lam q)^2 zeta_tt(0, lam gamma),
    # d_kn R = -2 gamma^2 lam q erf'(0) / sqrt(1 + 2 lam^2 gamma^2), d_nn R = 0.
    g2, q = task.gamma**2, task.q
    d_kk = g2 * (lam * q) ** 2 * zeta_tt_at_zero(lam * task.gamma)
    d_kn = -2 * g2 * lam * q * (2 / math.sqrt(math.pi)) / math.sqrt(1 + 2 * lam**2 * g2)
    expected = np.array([[d_kk, d_kn], [d_kn, 0.0]])
    np.testing.assert_allclose(H, expected, rtol=1e-12, atol=1e-14)
    # Proposition 12: J_F(0, 0) = I - alpha H (d_kappa R = d_nu R = 0 there), and it has one
    # eigenvalue in (0, 1) and one in (1, inf).
    J = reduced_jacobian(0.0, 0.0, lam, alpha, task)
    np.testing.assert_allclose(J, np.eye(2) - alpha * H, rtol=0, atol=1e-14)
    ev = np.sort(np.linalg.eigvals(J).real)
    assert 0 < ev[0] < 1 < ev[1]
    assert np.linalg.det(J) > 0  # a local diffeomorphism


# --------------------------------------------------------------------------- 9. limits, Theorem 5
def test_classify_limits_labels():
    kappa = np.array([0.0, 1.0, -1.0, 1.0, -1.0, 0.5, 1 - 5e-4, 1 - 2e-3, 4e-4, 0.0])
    nu = np.array([0.0, 1.0, -1.0, -1.0, 1.0, 0.5, 1.0, 1.0, -4e-4, 1.0])
    np.testing.assert_array_equal(classify_limits(kappa, nu), [0, 1, 1, 2, 2, -1, 1, -1, 0, -1])
    np.testing.assert_array_equal(classify_limits(kappa, nu, tol=1e-5), [0, 1, 1, 2, 2, -1, -1, -1, -1, -1])
    assert classify_limits(np.zeros((2, 3)), 0.0).shape == (2, 3)  # broadcasts


def test_generic_starts_on_the_manifold_reach_a_minimum(grid_run):
    # Theorem 5 (constant lam, small alpha): from a grid avoiding (0, 0), every start ends
    # at (1, 1) or (-1, -1). Convergence to 1e-6 takes ~1300 steps here.
    K, N, res = grid_run
    labels = classify_limits(res.kappa[..., -1], res.nu[..., -1], tol=1e-6)
    expected = np.ones_like(labels)
    expected[4, 4] = 0  # the saddle is a fixed point
    np.testing.assert_array_equal(labels, expected)
    # starts in the quadrant kappa nu > 0 keep their sign (the attraction basins contain it)
    same = (K * N) > 0
    np.testing.assert_array_equal(np.sign(res.kappa[..., -1])[same], np.sign(K)[same])


def test_reduced_map_on_the_axes_and_edges():
    lam, alpha, task = LAM_M, ALPHA_M, TASK_M
    nu0 = np.array([-0.7, -0.4, -0.2, 0.1, 0.3, 0.9])
    # kappa = 0 is NOT invariant: d_kappa R(0, nu) = -2 gamma^2 lam q nu erf'(0) / sqrt(c2)
    # != 0 for nu != 0, while d_nu R(0, nu) = -2 gamma^2 erf(0) = 0 keeps nu fixed.
    k1, n1 = reduced_map(0.0, nu0, lam, alpha, task)
    g2, q = task.gamma**2, task.q
    dk = -2 * g2 * lam * q * nu0 * (2 / math.sqrt(math.pi)) / math.sqrt(1 + 2 * lam**2 * g2)
    np.testing.assert_allclose(k1, -alpha * dk / np.sqrt(1 + alpha**2 * dk**2), rtol=1e-13)
    np.testing.assert_array_equal(n1, nu0)
    assert np.all(np.sign(k1) == np.sign(nu0))
    # ... and those starts go to the minimum with the sign of nu0 (the saddle's stable
    # manifold is not the nu-axis: its tangent, the eigenvector of the positive eigenvalue
    # of H(0, 0) = [[a, b], [b, 0]] with a > 0 > b, lies in the quadrant kappa nu < 0).
    # (500 steps, shapes shared with the Lemma 7 test: within 5e-3 of the corner by then)
    res = reduced_pgd(np.zeros(6), nu0, task, lam=lam, alpha=alpha, n_steps=500, log_every=1)
    np.testing.assert_allclose(res.kappa[:, -1], np.sign(nu0), atol=5e-3)
    np.testing.assert_allclose(res.nu[:, -1], np.sign(nu0), atol=5e-3)
    w, V = np.linalg.eigh(manifold_hessian(0.0, 0.0, lam, task))
    assert w[0] < 0 < w[1] and V[0, 1] * V[1, 1] < 0
    # nu = 0 is not invariant either (d_nu R = -2 gamma^2 erf(a) != 0 for kappa != 0)
    _, n1 = reduced_map(np.array([-0.5, 0.5]), 0.0, lam, alpha, task)
    assert np.all(np.sign(n1) == [-1, 1])
    # the edges kappa = +-1 and nu = +-1 are invariant (factor 1 - x^2), (0, 0) is fixed
    res = reduced_pgd(np.array([1.0, -1.0, 0.3, 0.0, -0.6, 1.0]), np.array([0.2, -0.4, -1.0, 0.0, 1.0, -1.0]), task,
                      lam=lam, alpha=alpha, n_steps=500, log_every=1)
    ones = np.ones(501)
    res = res._replace(kappa=np.asarray(res.kappa), nu=np.asarray(res.nu))
    np.testing.assert_array_equal(res.kappa[[0, 1, 5]], np.array([[1.0], [-1.0], [1.0]]) * ones)
    np.testing.assert_array_equal(res.nu[[2, 3, 4, 5]], np.array([[-1.0], [0.0], [1.0], [-1.0]]) * ones)
    np.testing.assert_array_equal(res.kappa[3], 0 * ones)  # (0, 0) and the maximum (1, -1) are fixed
    # on an invariant edge the other coordinate goes to the minimum of that edge
    np.testing.assert_allclose(
        [res.nu[0, -1], res.nu[1, -1], res.kappa[2, -1], res.kappa[4, -1]], [1.0, -1.0, -1.0, 1.0], atol=5e-3
    )


def test_reduced_map_is_odd():
    # R(-kappa, -nu) = R(kappa, nu) (erf odd, zeta even in t): F(-x) = -F(x).
    x = np.array([0.3, -0.9, 0.0, 0.77, 1.0])
    y = np.array([-0.6, 0.2, 0.7, 0.1, -0.3])
    a = np.array(reduced_map(x, y, 0.7, 0.1, TASK_M))
    b = np.array(reduced_map(-x, -y, 0.7, 0.1, TASK_M))
    np.testing.assert_allclose(a, -b, rtol=0, atol=1e-15)


def test_the_saddle_has_a_stable_curve():
    # Proposition 13: starts converging to the saddle exist (a measure-zero curve). On the
    # segment nu = 1/2, kappa in [-0.95, 0], the end sign of kappa switches; narrow the
    # switch down to round-off (6 starts per call, the interval shrinks 7x per call):
    # the trajectories from both sides then pass very close to (0, 0) before leaving.
    # 500 steps logged at every step (the Lemma 7 test's shapes). The side is read from
    # the sign of kappa at step 500: by then the component along the saddle's stable
    # direction has decayed (factor ~0.92 per step) and kappa's sign is that of the
    # unstable component, which decides the minimum (checked at the end by restarting).
    kw = dict(lam=LAM_M, alpha=ALPHA_M, n_steps=500, log_every=1)
    half = np.full(N_RUNS, 0.5)  # explicit arrays: a Python scalar would recompile (weak type)
    lo, hi = -0.95, 0.0
    ends = np.sign(reduced_pgd(np.array([lo, -0.8, -0.5, -0.3, -0.2, hi]), half, TASK_M, **kw).kappa[:, -1])
    assert ends[0] == -1.0 and ends[-1] == 1.0
    for _ in range(25):
        grid = np.linspace(lo, hi, N_RUNS + 2)[1:-1]
        ends = np.sign(np.asarray(reduced_pgd(grid, half, TASK_M, **kw).kappa[:, -1]))
        assert set(ends) <= {-1.0, 1.0}  # never exactly at kappa = 0 at the end
        edges = np.concatenate([[lo], grid, [hi]])
        signs = np.concatenate([[-1.0], ends, [1.0]])
        i = int(np.argmax(signs > 0))  # first start ending at (1, 1): signs are monotone
        assert np.all(signs[:i] < 0) and np.all(signs[i:] > 0)
        lo, hi = edges[i - 1], edges[i]
        if hi - lo <= 1e-15:
            break
    res = reduced_pgd(np.array([lo, hi, -0.95, 0.0, -0.3, -0.8]), half, TASK_M, **kw)
    closest = np.min(np.hypot(res.kappa, res.nu), axis=-1)
    # Every step is logged; generic starts stay farther than 0.1 from the saddle.
    assert np.all(closest[:2] < 1e-8) and np.all(closest[2:] > 0.1)
    # Escaping from ~1e-16 at rate ~1.03 per step takes > 1000 steps: continue the two
    # runs (restart from their last iterate) until they reach opposite minima.
    kap, nu = res.kappa[:, -1], res.nu[:, -1]
    for _ in range(3):
        more = reduced_pgd(kap, nu, TASK_M, **kw)
        kap, nu = more.kappa[:, -1], more.nu[:, -1]
    np.testing.assert_allclose(kap[:2], [-1.0, 1.0], atol=5e-3)
    np.testing.assert_allclose(nu[:2], [-1.0, 1.0], atol=5e-3)
    assert -0.95 < lo < 0  # the stable curve crosses nu = 1/2 where kappa nu < 0


# --------------------------------------------------------------------------- 10. bad input
def _pgd_call(fn=pgd, **overrides):
    task = SLRTask(d=5, L=3)
    k_star, v_star = jnp.eye(5)[0], jnp.eye(5)[1]
    k0, v0 = jnp.eye(5)[:2], jnp.eye(5)[2:4]
    args = dict(k0=k0, v0=v0, k_star=k_star, v_star=v_star, task=task, lam=0.5, alpha=0.1, n_steps=4, log_every=2)
    args.update(overrides)

    def call():
        return fn(**args)

    return call


nan = float("nan")
_e = jnp.eye(5)


@pytest.mark.parametrize("fn", [pgd, pgd_dense])
@pytest.mark.parametrize(
    "overrides,name",
    [
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": -0.1}, "alpha"),
        ({"alpha": nan}, "alpha"),
        ({"alpha": float("inf")}, "alpha"),
        ({"lam": 0.0}, "lam"),
        ({"lam": -1.0}, "lam"),
        ({"lam": nan}, "lam"),
        ({"n_steps": 0}, "n_steps"),
        ({"n_steps": 4.0}, "n_steps"),
        ({"n_steps": "4"}, "n_steps"),
        ({"n_steps": True}, "n_steps"),
        ({"log_every": 3}, "log_every"),
        ({"log_every": 8}, "log_every"),
        ({"log_every": 0}, "log_every"),
        ({"log_every": 2.0}, "log_every"),
        ({"k0": 2 * _e[:2]}, "k0"),
        ({"v0": 0.5 * _e[2:4]}, "v0"),
        ({"k0": _e[:2, :4]}, "k0"),
        ({"v0": jnp.ones((2, 6)) / math.sqrt(6)}, "v0"),
        ({"k0": _e[:2].at[0, 0].set(nan)}, "k0"),
        ({"schedule": "linear"}, "schedule"),
        ({"schedule": None}, "schedule"),
        ({"v_star": _e[0]}, "k_star"),  # not orthogonal
        ({"v_star": (_e[0] + _e[1]) / math.sqrt(2)}, "k_star"),
        ({"k_star": 2 * _e[0]}, "k_star"),
        ({"k_star": _e[0, :4]}, "k_star"),
        ({"task": "task"}, "task"),
    ],
)
def test_pgd_bad_input(fn, overrides, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        _pgd_call(fn, **overrides)()


T5 = SLRTask(d=5, L=3)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: reduced_map(1.5, 0.0, 0.5, 0.1, T5), "kappa"),
        (lambda: reduced_map(-1.01, 0.0, 0.5, 0.1, T5), "kappa"),
        (lambda: reduced_map(nan, 0.0, 0.5, 0.1, T5), "kappa"),
        (lambda: reduced_map(0.0, 2.0, 0.5, 0.1, T5), "nu"),
        (lambda: reduced_map(0.0, 0.0, 0.0, 0.1, T5), "lam"),
        (lambda: reduced_map(0.0, 0.0, 0.5, 0.0, T5), "alpha"),
        (lambda: reduced_map(0.0, 0.0, 0.5, nan, T5), "alpha"),
        (lambda: reduced_map(0.0, 0.0, 0.5, 0.1, "T5"), "task"),
        (lambda: reduced_pgd(1.5, 0.0, T5, lam=0.5, alpha=0.1, n_steps=2), "kappa0"),
        (lambda: reduced_pgd(0.0, -3.0, T5, lam=0.5, alpha=0.1, n_steps=2), "nu0"),
        (lambda: reduced_pgd(0.0, 0.0, T5, lam=-0.5, alpha=0.1, n_steps=2), "lam"),
        (lambda: reduced_pgd(0.0, 0.0, T5, lam=0.5, alpha=-0.1, n_steps=2), "alpha"),
        (lambda: reduced_pgd(0.0, 0.0, T5, lam=0.5, alpha=0.1, n_steps=0), "n_steps"),
        (lambda: reduced_pgd(0.0, 0.0, T5, lam=0.5, alpha=0.1, n_steps=2.5), "n_steps"),
        (lambda: reduced_pgd(0.0, 0.0, T5, lam=0.5, alpha=0.1, n_steps=5, log_every=2), "log_every"),
        (lambda: reduced_pgd(0.0, 0.0, T5, lam=0.5, alpha=0.1, n_steps=5, log_every=10), "log_every"),
        (lambda: reduced_pgd(0.0, 0.0, T5, lam=0.5, alpha=0.1, n_steps=5, log_every=0), "log_every"),
        (lambda: manifold_risk_grad(1.2, 0.0, 0.5, T5), "kappa"),
        (lambda: manifold_risk_grad(0.0, nan, 0.5, T5), "nu"),
        (lambda: manifold_risk_grad(0.0, 0.0, 0.0, T5), "lam"),
        (lambda: inverse_temperature(0.0, 3, "paper"), "lam"),
        (lambda: inverse_temperature(nan, 3), "lam"),
        (lambda: inverse_temperature(1.0, 3, "linear"), "schedule"),
        (lambda: inverse_temperature(1.0, -1, "paper"), "steps"),
        (lambda: uniform_directions(7, 5, (2,)), "key"),
        (lambda: uniform_directions(jax.random.key(0), 5, (0,)), "shape"),
        (lambda: uniform_directions(jax.random.key(0), 5, (2.0,)), "shape"),
        (lambda: uniform_directions(jax.random.key(0), 0, (2,)), "d"),
        (lambda: manifold_directions(jax.random.key(0), _e[0], _e[0], (2,)), "k_star"),
        (lambda: manifold_directions(jax.random.key(0), 2 * _e[0], _e[1], (2,)), "k_star"),
        (lambda: manifold_directions(jax.random.key(0), _e[0], 3 * _e[1], (2,)), "v_star"),
        (lambda: manifold_directions(jax.random.key(0), _e[0], _e[1, :4], (2,)), "v_star"),
        (lambda: manifold_directions(jax.random.key(0), _e[0], _e[1], (-1,)), "shape"),
        (lambda: manifold_directions("key", _e[0], _e[1], (2,)), "key"),
        (lambda: stationary_points(0.0, T5), "lam"),
        (lambda: stationary_points(0.5, T5, n_starts=1), "n_starts"),
        (lambda: stationary_points(0.5, "T5"), "task"),
        (lambda: manifold_hessian(1.5, 0.0, 0.5, T5), "kappa"),
        (lambda: manifold_hessian(0.0, 0.0, -0.5, T5), "lam"),
        (lambda: riemannian_hessian(0.0, -1.1, 0.5, T5), "nu"),
        (lambda: riemannian_hessian(0.0, 0.0, nan, T5), "lam"),
        (lambda: reduced_jacobian(nan, 0.0, 0.5, 0.1, T5), "kappa"),
        (lambda: reduced_jacobian(0.0, 0.0, 0.5, 0.0, T5), "alpha"),
        (lambda: fixed_point_table(-0.5, 0.1, T5), "lam"),
        (_pgd_call(k0=jnp.stack([_e[0]] * 3), v0=_e[1:3]), "k0"),  # batches (3,) vs (2,)
        (lambda: manifold_hessian(np.array([0.1, 0.2]), 0.0, 0.5, T5), "kappa"),  # one point only
        (lambda: riemannian_hessian(0.1, np.array([0.1, 0.2]), 0.5, T5), "nu"),
        (lambda: reduced_jacobian(0.0, np.array([0.1, 0.2]), 0.5, 0.1, T5), "nu"),
        (lambda: inverse_temperature(1.0, nan, "paper"), "steps"),
        (lambda: inverse_temperature(1.0, "a", "paper"), "steps"),
        (lambda: classify_limits(1.0, 1.0, tol=-1.0), "tol"),
        (lambda: classify_limits(1.0, 1.0, tol=0.0), "tol"),
        (lambda: classify_limits(1.0, 1.0, tol=nan), "tol"),
        (lambda: stationary_points(0.5, T5, tol=-1.0), "tol"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()


def test_fixed_point_table_rejects_bad_alpha():
    with pytest.raises(ValueError, match=r"^alpha\b"):
        fixed_point_table(0.5, 0.0, T5)


# --------------------------------------------------------------------------- 11. initialisations
def test_initialisations_are_deterministic(dirs):
    k_star, v_star = dirs
    a = uniform_directions(jax.random.key(7), TASK.d, (N_RUNS,))
    b = uniform_directions(jax.random.key(7), TASK.d, (N_RUNS,))
    c = uniform_directions(jax.random.key(8), TASK.d, (N_RUNS,))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.allclose(a[0], c[0])
    assert not np.allclose(a[0], a[1])  # k0 and v0 are drawn independently
    m1 = manifold_directions(jax.random.key(7), k_star, v_star, (N_RUNS,))
    m2 = manifold_directions(jax.random.key(7), k_star, v_star, (N_RUNS,))
    np.testing.assert_array_equal(m1[0], m2[0])
    np.testing.assert_array_equal(m1[1], m2[1])
    assert not np.allclose(m1[0], manifold_directions(jax.random.key(8), k_star, v_star, (N_RUNS,))[0])
    # legacy uint32 keys work too
    np.testing.assert_array_equal(
        uniform_directions(jax.random.PRNGKey(3), TASK.d, (N_RUNS,))[0], uniform_directions(jax.random.PRNGKey(3), TASK.d, (N_RUNS,))[0]
    )


# With ~10 moment checks, P(any |z| > 4.5) under the null is ~1e-4.
Z_TOL = 4.5


def test_uniform_initialisation_moments(dirs):
    k_star, v_star = dirs
    d, n = TASK.d, 4000
    k, v = uniform_directions(jax.random.key(800), d, (n,))
    np.testing.assert_allclose(jnp.linalg.norm(k, axis=-1), 1.0, atol=1e-14)
    np.testing.assert_allclose(jnp.linalg.norm(v, axis=-1), 1.0, atol=1e-14)
    o = overlaps(k, v, k_star, v_star)
    # uniform on S^{d-1}: each overlap with a fixed unit vector (and rho = <k, v>, k, v
    # independent) has mean 0, variance 1/d; E x^4 = 3 / (d (d + 2)).
    var4 = 3.0 / (d * (d + 2)) - 1.0 / d**2
    for name in OVERLAP_FIELDS:
        x = np.asarray(getattr(o, name))
        assert abs(x.mean()) <= Z_TOL / math.sqrt(d * n), name
        assert abs(np.mean(x**2) - 1.0 / d) <= Z_TOL * math.sqrt(var4 / n), name


def test_manifold_initialisation_moments(dirs_m):
    # k uniform on the unit sphere of v*^perp (dimension d - 1): E kappa^2 = 1/(d - 1);
    # v uniform on the sphere of span{k*, k_perp}^perp (dimension d - 2, contains v*):
    # E nu^2 = 1/(d - 2). Both have mean 0.
    k_star, v_star = dirs_m
    d, n = TASK_M.d, 4000
    k, v = manifold_directions(jax.random.key(801), k_star, v_star, (n,))
    kappa, nu = np.asarray(k @ k_star), np.asarray(v @ v_star)
    for x, m in ((kappa, d - 1), (nu, d - 2)):
        assert abs(x.mean()) <= Z_TOL / math.sqrt(m * n)
        var4 = 3.0 / (m * (m + 2)) - 1.0 / m**2
        assert abs(np.mean(x**2) - 1.0 / m) <= Z_TOL * math.sqrt(var4 / n)


def test_init_on_manifold_in_dimension_two():
    # d = 2: k = +-k* exactly and v = +-v*; the part of k orthogonal to k* is round-off and
    # must not be normalised into a direction to project v against.
    c, s = math.cos(0.3), math.sin(0.3)
    k_star, v_star = jnp.array([c, s]), jnp.array([-s, c])
    k, v = manifold_directions(jax.random.key(1), k_star, v_star, (4,))
    o = overlaps(k, v, k_star, v_star)
    assert float(jnp.max(distance_to_manifold(o.theta, o.eta, o.rho))) <= 1e-12
    np.testing.assert_allclose(np.abs(o.kappa), 1.0, atol=1e-14)
    np.testing.assert_allclose(np.abs(o.nu), 1.0, atol=1e-14)


def test_reduced_map_kernel_derivatives_in_lambda_and_alpha():
    """The public kernel of Lemma 7's map, differentiated in λ and α (traced) with jax.jacfwd,
    against central finite differences of the validated reduced_map."""
    from slrlib.training.pgd import reduced_map, reduced_map_kernel

    kappa, nu, lam, alpha, h = 0.3, -0.4, 0.7, 0.05, 1e-6
    J = jax.jacfwd(lambda p: jnp.stack(reduced_map_kernel(kappa, nu, p[0], p[1], TASK.d, TASK.gamma)))(
        jnp.array([lam, alpha]))
    for j, (dl, da) in enumerate(((h, 0.0), (0.0, h))):
        plus = np.array(reduced_map(kappa, nu, lam + dl, alpha + da, TASK))
        minus = np.array(reduced_map(kappa, nu, lam - dl, alpha - da, TASK))
        np.testing.assert_allclose(np.asarray(J[:, j]), (plus - minus) / (2 * h), rtol=1e-6, atol=1e-9)
