"""Tests for slrlib.book.ch15_samples: empirical risk minimisation by full-batch PGD, and the linear predictor
fitted on samples.

Independent references: ``jax.grad`` of :func:`slrlib.training.sgd.batch_loss` and finite differences along
geodesics for the empirical gradient; a literal Python loop for the compiled, batched PGD; population PGD
(:func:`slrlib.training.pgd.pgd`) as the large-sample limit, with a tolerance from the spread over samples;
full-dimensional Monte Carlo for the exact test risk of a linear predictor; the normal equations of
:func:`slrlib.book.ch05_linear.linear_moments` for the ridge limit.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import slrlib
from slrlib import SLRTask, figures, linear_predictor, monte_carlo_risk, best_linear_weights
from slrlib.core.geometry import manifold_directions, uniform_directions
from slrlib.core.risk import population_risk
from slrlib.core.task import sample_kernel
from slrlib.training.pgd import pgd
from slrlib.training.sgd import batch_gradient, batch_loss
from slrlib.book.ch05_linear import linear_moments, linear_risk_of_weights
from slrlib.book import ch15_samples as C

# Their tests share costly fixtures: `make test` keeps them on one pytest-xdist worker, and the
# fixtures are session-scoped, so that tests of other modules run between them do not tear them down.
pytestmark = pytest.mark.xdist_group("test_samples")

Z_MAX = 4.5


@pytest.fixture(scope="session")
def small():
    task = SLRTask(d=6, L=3, eps=0.1)
    ks, vs = task.oracle_directions(jax.random.key(0))
    sample = task.sample(jax.random.key(1), 40, ks, vs)
    k, v = uniform_directions(jax.random.key(2), task.d)
    return task, ks, vs, sample, k, v


# ----------------------------------------------------------------------------- the gradient
def test_empirical_gradient_matches_jax_grad(small):
    task, ks, vs, s, k, v = small
    lam = 0.7
    loss, gk, gv = C.empirical_gradient(k, v, s.X, s.y, lam)
    ek, ev = (np.asarray(g)[0] for g in batch_gradient(k, v, s.X, s.y, lam))
    k, v = np.asarray(k), np.asarray(v)
    scale = float(np.max(np.abs(np.concatenate([ek, ev]))))
    np.testing.assert_allclose(gk, ek - np.dot(k, ek) * k, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(gv, ev - np.dot(v, ev) * v, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(float(loss), float(batch_loss(k, v, s.X, s.y, lam)), rtol=1e-13)
    assert abs(np.dot(gk, k)) < 1e-13 * scale and abs(np.dot(gv, v)) < 1e-13 * scale


def test_empirical_gradient_finite_differences_on_the_sphere(small):
    """d/dt R_n(cos t k + sin t u, v) at t = 0 is <grad_k, u> for a unit tangent u (central differences,
    error O(h^2) ~ 1e-10 relative, far below the tolerance)."""
    task, ks, vs, s, k, v = small
    lam, h = 0.7, 1e-5
    _, gk, gv = C.empirical_gradient(k, v, s.X, s.y, lam)
    rng = np.random.default_rng(0)
    for which, g, base in (("k", gk, k), ("v", gv, v)):
        for _ in range(3):
            u = rng.normal(size=task.d)
            u -= np.dot(u, base) * np.asarray(base)
            u /= np.linalg.norm(u)

            def f(t):
                x = math.cos(t) * np.asarray(base) + math.sin(t) * u
                kk, vv = (x, v) if which == "k" else (k, x)
                return float(batch_loss(kk, vv, s.X, s.y, lam))

            fd = (f(h) - f(-h)) / (2 * h)
            assert fd == pytest.approx(float(np.dot(g, u)), rel=1e-6, abs=1e-9)


# ----------------------------------------------------------------------------- batched = reference
def test_batched_loop_equals_unbatched_reference():
    task = SLRTask(d=7, L=3, eps=0.2)
    ks, vs = task.oracle_directions(jax.random.key(3))
    S, R, ns = 2, 1, (9, 17)
    keys = jax.random.split(jax.random.key(4), S)
    k0, v0 = uniform_directions(jax.random.key(5), task.d, (S, R))
    lam, alpha, steps = 0.8, 0.05, 12
    res = C.erm_pgd(task, ks, vs, keys, k0, v0, ns=ns, lam=lam, alpha=alpha, n_steps=steps, log_every=4)
    assert res.kappa.shape == (S, len(ns), R, steps // 4 + 1)
    assert res.k.shape == (S, len(ns), R, task.d)
    for s in range(S):
        X, y, _ = sample_kernel(keys[s], max(ns), task.L, task.d, ks, vs, task.gamma, task.eps, jnp.log(task.pi))
        for j, n in enumerate(ns):
            for r in range(R):
                k, v = C.erm_pgd_reference(k0[s, r], v0[s, r], X[:n], y[:n], lam=lam, alpha=alpha, n_steps=steps)
                # round-off of float64 over 12 steps of a map with Lipschitz constant ~ 1 + alpha * |Hessian|
                np.testing.assert_allclose(res.k[s, j, r], k, rtol=0, atol=1e-11)
                np.testing.assert_allclose(res.v[s, j, r], v, rtol=0, atol=1e-11)
                assert res.train_risk[s, j, r, -1] == pytest.approx(float(batch_loss(k, v, X[:n], y[:n], lam)),
                                                                    rel=1e-10)
                assert res.test_risk[s, j, r, -1] == pytest.approx(
                    float(population_risk(k, v, ks, vs, lam, task)), rel=1e-10)
                assert res.kappa[s, j, r, -1] == pytest.approx(float(np.dot(k, ks)), abs=1e-11)
                assert res.rho[s, j, r, -1] == pytest.approx(float(np.dot(k, v)), abs=1e-11)
    # step 0 is the initialisation
    np.testing.assert_allclose(res.kappa[:, 0, :, 0], np.asarray(k0 @ ks), atol=1e-14)


def test_large_n_erm_approaches_population_pgd():
    """With n = 5 000 sequences, ERM by PGD after T steps differs from population PGD by a mean-zero
    O(n^{-1/2}) fluctuation plus an O(1/n) bias: the mean over S samples of each overlap agrees with
    population PGD within Z_MAX standard errors of that mean (from the spread over samples)."""
    task = SLRTask(d=6, L=3)
    ks, vs = task.oracle_directions(jax.random.key(6))
    S, n, lam, alpha, steps = 12, 5_000, 0.5, 0.05, 40
    k0, v0 = manifold_directions(jax.random.key(7), ks, vs)
    K0 = jnp.broadcast_to(k0, (S, 1, task.d))
    V0 = jnp.broadcast_to(v0, (S, 1, task.d))
    res = C.erm_pgd(task, ks, vs, jax.random.split(jax.random.key(8), S), K0, V0, ns=(n,), lam=lam, alpha=alpha,
                    n_steps=steps)
    pop = pgd(k0, v0, ks, vs, task, lam=lam, alpha=alpha, n_steps=steps, log_every=steps)
    for name in ("kappa", "nu", "theta", "eta", "rho"):
        x = getattr(res, name)[:, 0, 0, -1]
        ref = float(np.asarray(getattr(pop, name))[-1])
        se = x.std(ddof=1) / math.sqrt(S)
        assert abs(x.mean() - ref) <= Z_MAX * se, (name, x.mean(), ref, se)
        # and it moved: the comparison is not at the start point
        assert abs(ref - float(np.asarray(getattr(pop, name))[0])) > 10 * se or name in ("theta", "eta", "rho")
    r = res.test_risk[:, 0, 0, -1]
    assert abs(r.mean() - float(pop.risk[-1])) <= Z_MAX * r.std(ddof=1) / math.sqrt(S) + 1e-12


# ----------------------------------------------------------------------------- the linear predictor
def test_linear_test_risk_matches_full_dimensional_monte_carlo():
    task = SLRTask(d=5, L=4, eps=0.3, probs=(0.1, 0.2, 0.3, 0.4))
    ks, vs = task.oracle_directions(jax.random.key(9))
    W_random = 0.3 * np.asarray(jax.random.normal(jax.random.key(10), (task.L, task.d)))
    s = task.sample(jax.random.key(11), 30, ks, vs)
    W_ls, _ = C.ridge_fit(s.X, s.y, 0.0)
    for W in (W_random, np.asarray(W_ls)):
        exact = float(linear_risk_of_weights(W, task, ks, vs))
        est = monte_carlo_risk(lambda X, W=W: linear_predictor(X, W), task, ks, vs, jax.random.key(12),
                               n_samples=200_000)
        assert abs(est.mean - exact) <= Z_MAX * est.stderr, (est.mean, exact, est.stderr)


def test_ridge_fit_against_lstsq_and_dual_form(small):
    task, ks, vs, s, _, _ = small
    Z = np.asarray(s.X).reshape(40, -1)
    W, tr = C.ridge_fit(s.X, s.y, 0.0)  # n = 40 > p = 18: least squares
    w_ref, *_ = np.linalg.lstsq(Z, np.asarray(s.y), rcond=None)
    np.testing.assert_allclose(np.asarray(W).ravel(), w_ref, rtol=1e-9, atol=1e-11)
    assert float(tr) == pytest.approx(np.mean((Z @ w_ref - np.asarray(s.y)) ** 2), rel=1e-9)
    # n = 10 < p = 18: the minimum-norm interpolator, train risk 0
    W, tr = C.ridge_fit(s.X[:10], s.y[:10], 0.0)
    w_ref, *_ = np.linalg.lstsq(Z[:10], np.asarray(s.y)[:10], rcond=None)
    np.testing.assert_allclose(np.asarray(W).ravel(), w_ref, rtol=1e-8, atol=1e-10)
    assert float(tr) < 1e-20
    # ridge: primal form (n >= p) against the explicit formula
    mu = 0.3
    W, _ = C.ridge_fit(s.X, s.y, mu)
    w_ref = np.linalg.solve(Z.T @ Z + 40 * mu * np.eye(Z.shape[1]), Z.T @ np.asarray(s.y))
    np.testing.assert_allclose(np.asarray(W).ravel(), w_ref, rtol=1e-10, atol=1e-12)


def test_ridge_population_weights_solve_the_normal_equations():
    task = SLRTask(d=5, L=3, gamma=0.8, probs=(0.5, 0.3, 0.2))
    ks, vs = task.oracle_directions(jax.random.key(13))
    m = linear_moments(task, ks, vs)
    for mu in (0.0, 0.25, 2.0):
        W = C.ridge_population_weights(task, vs, mu)
        ref = np.linalg.solve(m.Sigma + mu * np.eye(m.Sigma.shape[0]), m.b).reshape(task.L, task.d)
        np.testing.assert_allclose(W, ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(C.ridge_population_weights(task, vs, 0.0), best_linear_weights(task, vs), atol=1e-15)


def test_linear_learning_curve_tends_to_proposition_3():
    task = SLRTask(d=4, L=3)
    ks, vs = task.oracle_directions(jax.random.key(14))
    curve = C.linear_learning_curve(task, ks, vs, jax.random.key(15), [24, 6000], 6)
    lin = slrlib.linear_risk(task)
    assert curve.test_risk.shape == (2, 6)
    assert np.all(curve.test_risk >= lin - 1e-12)  # Proposition 3: no linear predictor beats it
    assert np.median(curve.test_risk[1]) - lin < np.median(curve.test_risk[0]) - lin
    # excess of least squares ~ (residual variance) p / n: at n = 6000, p = 12, well below 0.02
    assert np.max(curve.test_risk[1]) - lin < 0.02


# ----------------------------------------------------------------------------- helpers
def test_samples_needed_interpolates_in_log_ratio():
    ratios = [1.0, 2.0, 4.0, 8.0]
    kappa = np.array([[0.1, 0.2, 0.3], [0.5, 0.6, 0.7], [0.85, 0.8, 0.9], [0.95, 0.97, 0.99]])
    nu = np.ones_like(kappa)
    # medians 0.2, 0.6, 0.85, 0.97; level 0.9 between 4 and 8 at fraction (0.9 - 0.85) / 0.12
    t = 0.05 / 0.12
    assert C.samples_needed(ratios, kappa, nu, 0.9) == pytest.approx(math.exp(math.log(4) + t * math.log(2)))
    assert math.isnan(C.samples_needed(ratios, kappa, nu, 0.995))
    assert C.samples_needed(ratios, kappa, nu, 0.1) == 1.0


def test_sign_fixed_overlaps_and_the_symmetry_of_erf(small):
    task, ks, vs, _, k, v = small
    r1 = float(population_risk(k, v, ks, vs, 0.5, task))
    r2 = float(population_risk(-k, -v, ks, vs, 0.5, task))
    assert r1 == pytest.approx(r2, rel=1e-13)
    kap, nu = C.sign_fixed_overlaps([-0.5, 0.3], [-0.9, 0.2])
    np.testing.assert_allclose(kap, [0.5, 0.3])
    np.testing.assert_allclose(nu, [0.9, 0.2])


def test_learning_curves_figure_small():
    from slrlib.book.figures.samples import compute_learning_curves, learning_curves_table

    assert "learning_curves" in figures.names()
    data = compute_learning_curves(ds=(6,), Ls=(3,), ratios={3: (1.0, 2.0)}, linear_ratios=(2.0, 8.0), linear_d=4,
                                   n_samples=3, n_steps=10, log_every=5)
    tab = learning_curves_table(data)
    sizes = {len(v) for v in tab.values()}
    assert len(sizes) == 1
    c = data.erm[0]
    assert c.excess.shape == (2, 3) and c.kappa.shape == (2, 3)
    assert np.all(c.excess_min <= c.excess + 1e-15)
    fig = figures.get("learning_curves").plot(data)
    assert len(fig.axes) == 4


def test_learning_curves_high_d_figure_small():
    """The L-BFGS figure on tiny sizes: shapes, the long table, the plot; the curve's samples and starts are
    the PGD curve's (curve_setup): L-BFGS's train risk is below the start's on every sample."""
    from slrlib.book.figures.samples import (compute_learning_curves_high_d, curve_setup,
                                             learning_curves_high_d_table, tokens_per_pass)

    assert "learning_curves_high_d" in figures.names()
    # Two pairs (d, L), which differ in both: each pair and ratio is an L-BFGS program of its own to compile.
    data = compute_learning_curves_high_d(configs=((8, 3), (6, 4)), ratios=(2.0, 4.0), n_samples=3, n_iter=30)
    tab = learning_curves_high_d_table(data)
    assert len({len(v) for v in tab.values()}) == 1 and len(tab["d"]) == 2 * 5 * 2
    c = data.erm[0]
    assert c.d == 8 and c.kappa.shape == (2, 3) and np.all(c.kappa >= 0)
    assert data.erm[1].L == 4 and set(tab["L"]) == {3, 4} and set(tab["d"]) == {6, 8}
    task, ks, vs, keys, k0, v0 = curve_setup(8, 3, 3)
    for s in range(3):
        X, y, _ = sample_kernel(keys[s], 32, task.L, task.d, ks, vs, task.gamma, task.eps, jnp.log(task.pi))
        assert X.size == tokens_per_pass(8, 3, data.erm[0].ratios)  # the largest sample: n/d = 4 at d = 8
        assert c.train_risk[1, s] < float(batch_loss(k0[s, 0], v0[s, 0], X, y, data.lam))
    assert np.all(c.grad_ratio < 1.0)
    fig = figures.get("learning_curves_high_d").plot(data)
    assert sum(ax.axison for ax in fig.axes) == 3  # three panels, 2 x 2: the legend in the fourth place


# ----------------------------------------------------------------------------- validation
def test_input_validation(small):
    task, ks, vs, s, k, v = small
    keys = jax.random.split(jax.random.key(0), 2)
    k0, v0 = uniform_directions(jax.random.key(1), task.d, (2, 1))
    ok = dict(ns=(5,), lam=0.5, alpha=0.1, n_steps=4)
    with pytest.raises(ValueError, match="ns"):
        C.erm_pgd(task, ks, vs, keys, k0, v0, **{**ok, "ns": (0,)})
    with pytest.raises(ValueError, match="ns"):
        C.erm_pgd(task, ks, vs, keys, k0, v0, **{**ok, "ns": ()})
    with pytest.raises(ValueError, match="keys"):
        C.erm_pgd(task, ks, vs, np.zeros(3), k0, v0, **ok)
    with pytest.raises(ValueError, match="k0"):
        C.erm_pgd(task, ks, vs, keys, k0[0], v0, **ok)
    with pytest.raises(ValueError, match="k0"):
        C.erm_pgd(task, ks, vs, keys, 2 * k0, v0, **ok)
    with pytest.raises(ValueError, match="log_every"):
        C.erm_pgd(task, ks, vs, keys, k0, v0, **ok, log_every=3)
    with pytest.raises(ValueError, match="alpha"):
        C.erm_pgd(task, ks, vs, keys, k0, v0, **{**ok, "alpha": 0.0})
    with pytest.raises(ValueError, match="lam"):
        C.erm_pgd(task, ks, vs, keys, k0, v0, **{**ok, "lam": -1.0})
    with pytest.raises(ValueError, match="task"):
        C.erm_pgd("task", ks, vs, keys, k0, v0, **ok)
    with pytest.raises(ValueError, match="k"):
        C.empirical_gradient(2 * k, v, s.X, s.y, 0.5)
    with pytest.raises(ValueError, match="y"):
        C.empirical_gradient(k, v, s.X, s.y[:3], 0.5)
    with pytest.raises(ValueError, match="X"):
        C.empirical_gradient(k, v, s.X[0], s.y, 0.5)
    with pytest.raises(ValueError, match="mu"):
        C.ridge_fit(s.X, s.y, -1.0)
    with pytest.raises(ValueError, match="mu"):
        C.ridge_population_weights(task, vs, -0.1)
    with pytest.raises(ValueError, match="ns"):
        C.linear_learning_curve(task, ks, vs, jax.random.key(0), [1, 5], 2)
    with pytest.raises(ValueError, match="level"):
        C.samples_needed([1.0, 2.0], np.ones((2, 3)), np.ones((2, 3)), 1.5)
    with pytest.raises(ValueError, match="ratios"):
        C.samples_needed([2.0, 1.0], np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="n_steps"):
        C.erm_pgd_reference(k, v, s.X, s.y, lam=0.5, alpha=0.1, n_steps=0)


# ----------------------------------------------------------------------------- ERM by L-BFGS
def test_tangent_hessian_against_finite_differences_of_the_gradient(small):
    """H v = d/dt grad(retraction(x + t v)) at t = 0, projected on the tangent space, at a stationary point
    (reached by L-BFGS): central differences of the hand-written gradient (empirical_gradient), an independent
    path from jax.hessian; error O(h^2) ~ 1e-8 relative."""
    task, ks, vs, s, k, v = small
    lam, h = 0.7, 1e-4
    res = C.erm_lbfgs(task, ks, vs, jax.random.split(jax.random.key(1), 1), k[None, None], v[None, None],
                      ns=(40,), lam=lam, alpha0=0.1, n_iter=200)
    X, y, _ = sample_kernel(jax.random.split(jax.random.key(1), 1)[0], 40, task.L, task.d, ks, vs, task.gamma,
                            task.eps, jnp.log(task.pi))
    k, v = res.k[0, 0, 0], res.v[0, 0, 0]
    H, B = C.tangent_hessian(k, v, X, y, lam)
    d = task.d
    assert np.allclose(B.T @ B, np.eye(2 * d - 2), atol=1e-12) and np.allclose(B[:d].T @ k, 0, atol=1e-12)
    for j in (0, d - 2, d - 1, 2 * d - 3):
        t = B[:, j]

        def grad_at(e):
            a, b = k + e * t[:d], v + e * t[d:]
            _, gk, gv = C.empirical_gradient(a / np.linalg.norm(a), b / np.linalg.norm(b), X, y, lam)
            return np.r_[np.asarray(gk), np.asarray(gv)]

        fd = B.T @ (grad_at(h) - grad_at(-h)) / (2 * h)
        np.testing.assert_allclose(H[:, j], fd, rtol=0, atol=1e-6 * np.abs(H).max())


def _tangent_hessian(k, v, X, y, lam):
    return C.tangent_hessian(k, v, X, y, lam)[0]


@pytest.fixture(scope="session")
def lbfgs_run():
    task = SLRTask(d=6, L=3, eps=0.1)
    ks, vs = task.oracle_directions(jax.random.key(11))
    S, ns, lam = 3, (30, 200), 0.7
    keys = jax.random.split(jax.random.key(12), S)
    k0, v0 = manifold_directions(jax.random.key(13), ks, vs, (S, 2))
    res = C.erm_lbfgs(task, ks, vs, keys, k0, v0, ns=ns, lam=lam, alpha0=0.1, n_iter=150)
    return task, ks, vs, keys, k0, v0, ns, lam, res


def test_erm_lbfgs_ends_at_local_minima(lbfgs_run):
    """Every run ends where the gradient of the batch loss (jax.grad, not the hand-written gradient the method
    uses) vanishes on the tangent space and the tangent Hessian (jax.hessian) is positive definite; its
    train risk is the batch loss there, below the start's, and its test risk Theorem 1's at those directions."""
    task, ks, vs, keys, k0, v0, ns, lam, res = lbfgs_run
    assert res.kappa.shape == (3, 2, 2) and res.k.shape == (3, 2, 2, task.d)
    for s in range(3):
        X, y, _ = sample_kernel(keys[s], max(ns), task.L, task.d, ks, vs, task.gamma, task.eps, jnp.log(task.pi))
        for j, n in enumerate(ns):
            for r in range(2):
                k, v = res.k[s, j, r], res.v[s, j, r]
                gk, gv = (np.asarray(g)[0] for g in batch_gradient(k, v, X[:n], y[:n], lam))
                g = np.r_[gk - np.dot(k, gk) * k, gv - np.dot(v, gv) * v]
                assert np.linalg.norm(g) <= 1e-7, (s, j, r, np.linalg.norm(g))
                eig = np.linalg.eigvalsh(_tangent_hessian(jnp.asarray(k), jnp.asarray(v), X[:n], y[:n], lam))
                assert eig[0] > 1e-4, eig  # a strict local minimum, far above round-off
                loss = float(batch_loss(k, v, X[:n], y[:n], lam))
                assert res.train_risk[s, j, r] == pytest.approx(loss, rel=1e-10)
                assert loss < float(batch_loss(k0[s, r], v0[s, r], X[:n], y[:n], lam))
                assert res.test_risk[s, j, r] == pytest.approx(float(population_risk(k, v, ks, vs, lam, task)),
                                                               rel=1e-10)
                assert res.grad_norm[s, j, r] == pytest.approx(np.linalg.norm(g), abs=1e-9)
    assert np.all(res.evaluations >= 2) and np.all(res.evaluations <= 150 * 21 + 1)


def test_erm_lbfgs_and_long_pgd_reach_the_same_minimum(lbfgs_run):
    """At n = 200 sequences in d = 6 the empirical risk near the start has one minimum: PGD run long enough
    reaches it too. Tolerance: PGD's distance to the minimum is at most |grad| / (smallest tangent Hessian
    eigenvalue) to first order; 10 times that, plus L-BFGS's own 1e-7 gradient over the same eigenvalue."""
    task, ks, vs, keys, k0, v0, ns, lam, res = lbfgs_run
    pg = C.erm_pgd(task, ks, vs, keys, k0, v0, ns=ns[1:], lam=lam, alpha=0.1, n_steps=4000)
    for s in range(3):
        X, y, _ = sample_kernel(keys[s], ns[1], task.L, task.d, ks, vs, task.gamma, task.eps, jnp.log(task.pi))
        for r in range(2):
            k, v = pg.k[s, 0, r], pg.v[s, 0, r]
            gk, gv = (np.asarray(g)[0] for g in batch_gradient(k, v, X, y, lam))
            gnorm = np.linalg.norm(np.r_[gk - np.dot(k, gk) * k, gv - np.dot(v, gv) * v])
            mu = np.linalg.eigvalsh(_tangent_hessian(jnp.asarray(k), jnp.asarray(v), X, y, lam))[0]
            tol = 10 * (gnorm + 1e-7) / mu
            assert tol < 1e-3, tol  # PGD has converged: the comparison is sharp
            np.testing.assert_allclose(res.k[s, 1, r], k, rtol=0, atol=tol)
            np.testing.assert_allclose(res.v[s, 1, r], v, rtol=0, atol=tol)


def test_erm_lbfgs_sizes_are_the_nested_samples(lbfgs_run):
    """Size n of a multi-size call is the size-n call alone (its first n sequences): the same minimum, up to the
    methods' own stopping (gradient 1e-7 over the smallest Hessian eigenvalue, ~1e-6 here)."""
    task, ks, vs, keys, k0, v0, ns, lam, res = lbfgs_run
    alone = C.erm_lbfgs(task, ks, vs, keys, k0, v0, ns=ns[:1], lam=lam, alpha0=0.1, n_iter=150)
    np.testing.assert_allclose(alone.k[:, 0], res.k[:, 0], rtol=0, atol=1e-5)
    np.testing.assert_allclose(alone.v[:, 0], res.v[:, 0], rtol=0, atol=1e-5)


def test_tangent_hessian_against_the_hessian_of_batch_loss(lbfgs_run):
    """The compiled Hessian of tangent_hessian against jax.hessian of the public batch_loss (an independent code of
    the same risk) at an end point of L-BFGS, projected on the same basis; round-off of sums of n L terms."""
    task, ks, vs, keys, k0, v0, ns, lam, res = lbfgs_run
    X, y, _ = sample_kernel(keys[0], max(ns), task.L, task.d, ks, vs, task.gamma, task.eps, jnp.log(task.pi))
    k, v = jnp.asarray(res.k[0, 1, 0]), jnp.asarray(res.v[0, 1, 0])
    H, B = C.tangent_hessian(k, v, X, y, lam)
    d = task.d
    f = lambda z: batch_loss(z[:d] / jnp.linalg.norm(z[:d]), z[d:] / jnp.linalg.norm(z[d:]), X, y, lam)
    ref = B.T @ np.asarray(jax.hessian(f)(jnp.concatenate([k, v]))) @ B
    np.testing.assert_allclose(H, 0.5 * (ref + ref.T), rtol=0, atol=1e-11 * np.abs(ref).max())


def test_erm_lbfgs_evaluations_to_reduction(lbfgs_run):
    """The evaluations recorded when the gradient norm first falls to GRAD_REDUCTION times its start: at most the
    run's evaluations; the same in a longer run (the first iterations are the same); recorded in every run that
    ends below the reduction; and a run stopped at the recorded cost really is below the reduction there."""
    task, ks, vs, keys, k0, v0, ns, lam, res = lbfgs_run
    e = res.evaluations_to_reduction
    ratio = res.grad_norm / res.start_grad_norm
    assert np.all(np.isfinite(e[ratio <= C.GRAD_REDUCTION]))
    done = np.isfinite(e)
    assert done.any()
    assert np.all(e[done] <= res.evaluations[done]) and np.all(e[done] >= 2)
    short = C.erm_lbfgs(task, ks, vs, keys, k0, v0, ns=ns, lam=lam, alpha0=0.1, n_iter=40)
    both = np.isfinite(short.evaluations_to_reduction)
    assert np.all(np.isfinite(e[both]))
    np.testing.assert_array_equal(short.evaluations_to_reduction[both], e[both])
    # where a 40-iteration run has not reached the reduction, its cost so far is below the recorded one
    later = ~both & done
    assert np.all(short.evaluations[later] < e[later])


def test_erm_lbfgs_input_validation(small):
    task, ks, vs, s, k, v = small
    keys = jax.random.split(jax.random.key(0), 2)
    k0, v0 = uniform_directions(jax.random.key(1), task.d, (2, 1))
    ok = dict(ns=(5,), lam=0.5, alpha0=0.1, n_iter=4)
    with pytest.raises(ValueError, match="alpha0"):
        C.erm_lbfgs(task, ks, vs, keys, k0, v0, **{**ok, "alpha0": 0.0})
    with pytest.raises(ValueError, match="n_iter"):
        C.erm_lbfgs(task, ks, vs, keys, k0, v0, **{**ok, "n_iter": 0})
    with pytest.raises(ValueError, match="memory"):
        C.erm_lbfgs(task, ks, vs, keys, k0, v0, **ok, memory=0)
    with pytest.raises(ValueError, match="ns"):
        C.erm_lbfgs(task, ks, vs, keys, k0, v0, **{**ok, "ns": (0,)})
    with pytest.raises(ValueError, match="keys"):
        C.erm_lbfgs(task, ks, vs, np.zeros(3), k0, v0, **ok)
    with pytest.raises(ValueError, match="k0"):
        C.erm_lbfgs(task, ks, vs, keys, 2 * k0, v0, **ok)
    with pytest.raises(ValueError, match="lam"):
        C.erm_lbfgs(task, ks, vs, keys, k0, v0, **{**ok, "lam": 0.0})
