"""Chapter 9 (learning from samples): the checks of slrlib.book.ch09_sgd_checks and the plots of slrlib.plots.sgd.

Independent computations throughout:

* the overlaps of vectors_with_overlaps against their definition, and PGD's rotation
  equivariance (the basis of pgd_counterpart) against PGD run from random vectors;
* the batch gradient's mean against the closed form's Riemannian gradient and the radial
  identities, from per-sample gradients by jax.grad of the erf predictor (not slrlib.training.sgd);
* the exact sampler against the plain one (two-sample z-scores), and its random-number count
  against the formula of the chapter's proposition (prop-sgd-exact-sampler);
* the one-step contraction formula against Monte Carlo steps; the Gaussian moment formulas of
  the fluctuation predictions against Gaussian samples; the schedule recursion at a constant λ
  against the stationary (frozen) solution;
* bad input -> ValueError naming the parameter.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import random_unit

from slrlib.core.geometry import vectors_with_overlaps
from slrlib.training.sgd import exact_sampler_draws
from slrlib import SLRTask, erf_attention, population_risk
from slrlib.book import ch09_sgd_checks as sc
from slrlib.training.pgd import pgd
from slrlib.experiments import SGDConfig, SGDExperiment
from slrlib.core.risk import overlaps as overlaps_of
from slrlib.core.risk import risk_from_overlaps
from slrlib.training.sgd import SGDResult

Z_TOL = 4.5
SMALL = SLRTask(6, 3, math.sqrt(0.5), 0.2)
# One set of static arguments for every batch of gradient draws (one compilation, shared).
DRAWS = dict(lam=1.2, batch_size=4, n_draws=10_000)
PGD_KW = dict(lam=1.0, alpha=1e-3, n_steps=30, schedule="paper", log_every=10)  # as the fake experiment below


def _random_pair(key, d):
    """k*, v* orthonormal and random unit k, v (NumPy, from an integer seed)."""
    rng = np.random.default_rng(key)
    x = rng.normal(size=(4, d))
    ks = x[0] / np.linalg.norm(x[0])
    vs = x[1] - (x[1] @ ks) * ks
    vs /= np.linalg.norm(vs)
    k, v = x[2] / np.linalg.norm(x[2]), x[3] / np.linalg.norm(x[3])
    return ks, vs, k, v


def _overlaps(k, v, ks, vs):
    return [float(k @ ks), float(v @ vs), float(v @ ks), float(k @ vs), float(k @ v)]


# ----------------------------------------------------------------------------- geometry
def test_vectors_with_overlaps_reproduce_overlaps():
    d = 9
    rows = []
    for i in range(5):
        ks, vs, k, v = _random_pair(i, d)
        rows.append(_overlaps(k, v, ks, vs))
    rows = np.array(rows)
    k, v, ks, vs = vectors_with_overlaps(*rows.T, d=d)
    assert k.shape == v.shape == (5, d)
    np.testing.assert_allclose(np.linalg.norm(k, axis=1), 1, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1, atol=1e-14)
    got = np.stack([np.asarray(x) for x in overlaps_of(k, v, ks, vs)], axis=1)
    np.testing.assert_allclose(got, rows, atol=1e-12)


def test_vectors_with_overlaps_rejects_impossible_overlaps():
    with pytest.raises(ValueError, match="kappa"):
        vectors_with_overlaps(0.9, 0.5, 0.0, 0.9, 0.0, d=6)
    with pytest.raises(ValueError, match="unit vectors"):
        vectors_with_overlaps(0.0, 0.9, 0.5, 0.0, 0.9, d=6)
    with pytest.raises(ValueError, match=r"d must be a positive integer \(>= 4: k\*, v\* and two more"):
        vectors_with_overlaps(0.1, 0.1, 0.1, 0.1, 0.1, d=3)
    with pytest.raises(ValueError, match="rho must be finite"):
        vectors_with_overlaps(0.1, 0.1, 0.1, 0.1, np.nan, d=6)


def test_vectors_with_overlaps_k_in_the_task_plane():
    # kappa^2 + eta^2 = 1: k lies in span{k*, v*}, so <k, v> = kappa theta + eta nu = 0.7 is forced.
    # Any other rho is unreachable and must raise (it was once silently replaced by 0.7).
    with pytest.raises(ValueError, match="rho must equal kappa theta \\+ eta nu"):
        vectors_with_overlaps(0.6, 0.5, 0.5, 0.8, 0.9, d=6)
    k, v, ks, vs = vectors_with_overlaps(0.6, 0.5, 0.5, 0.8, 0.7, d=6)
    got = np.ravel([np.asarray(x) for x in overlaps_of(k, v, ks, vs)])
    # a few ulps per 6-term dot product and per normalisation
    np.testing.assert_allclose(got, [0.6, 0.5, 0.5, 0.8, 0.7], atol=8 * 6 * np.finfo(float).eps)


@pytest.mark.roundoff
def test_pgd_depends_on_the_initial_overlaps_only():
    """The equivariance behind pgd_counterpart: PGD from random vectors in a random frame and
    PGD from vectors_with_overlaps in the canonical frame have the same overlap paths."""
    ks, vs, _, _ = _random_pair(10, SMALL.d)
    starts = [_random_pair(11 + i, SMALL.d)[2:] for i in range(2)]
    k0, v0 = np.stack([s[0] for s in starts]), np.stack([s[1] for s in starts])
    a = pgd(k0, v0, ks, vs, SMALL, **PGD_KW)
    ov = np.array([_overlaps(k, v, ks, vs) for k, v in zip(k0, v0)])
    k1, v1, ks1, vs1 = vectors_with_overlaps(*ov.T, d=SMALL.d)
    b = pgd(k1, v1, ks1, vs1, SMALL, **PGD_KW)
    for name in ("kappa", "nu", "theta", "eta", "rho", "risk"):
        np.testing.assert_allclose(np.asarray(getattr(b, name)), np.asarray(getattr(a, name)), atol=1e-11)


def test_tangent_is_the_orthogonal_projection():
    x = random_unit(jax.random.key(1), (3, 7))
    g = jax.random.normal(jax.random.key(2), (3, 7))
    t = sc.tangent(g, x)
    np.testing.assert_allclose(np.sum(np.asarray(t) * np.asarray(x), axis=1), 0, atol=1e-14)
    np.testing.assert_allclose(sc.tangent(t, x), t, atol=1e-14)
    np.testing.assert_allclose(np.asarray(g - t), np.sum(np.asarray(g * x), 1, keepdims=True) * np.asarray(x), atol=1e-14)


def test_riemannian_gradient_against_finite_differences_on_the_sphere():
    ks, vs, k, v = _random_pair(3, SMALL.d)
    lam = 0.8
    gk, gv = sc.riemannian_population_gradient(k, v, ks, vs, lam, SMALL)
    w = jax.random.normal(jax.random.key(4), (2, SMALL.d))
    h = 1e-5
    for i, (g, base) in enumerate(((gk, k), (gv, v))):
        def risk_along(t, i=i, base=base):
            x = (base + t * w[i]) / jnp.linalg.norm(base + t * w[i])
            kk, vv = (x, v) if i == 0 else (k, x)
            return float(population_risk(kk, vv, ks, vs, lam, SMALL))

        fd = (risk_along(h) - risk_along(-h)) / (2 * h)
        # d/dt of the normalised curve at t = 0 is the tangent part of w.
        np.testing.assert_allclose(float(g @ sc.tangent(w[i], base)), fd, rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------- unbiasedness
def _per_sample_gradients(k, v, ks, vs, lam, task, n, key):
    s = task.sample(key, n, ks, vs)

    def loss(kk, vv, X, y):
        return jnp.square(erf_attention(X[None], kk, vv, lam)[0] - y)

    return np.asarray(jnp.stack(jax.vmap(jax.grad(loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))(k, v, s.X, s.y), 1))


def test_lemma_unbiased_tangent_and_radial_parts():
    """Per-sample gradients by jax.grad of the predictor itself (not slrlib.training.sgd): tangent parts
    against the closed form's Riemannian gradient, radial parts against radial_gradient."""
    ks, vs, k, v = _random_pair(5, SMALL.d)
    lam = 1.3
    g = _per_sample_gradients(k, v, ks, vs, lam, SMALL, 50_000, jax.random.key(6))  # (n, 2, d)
    gk, gv = sc.riemannian_population_gradient(k, v, ks, vs, lam, SMALL)
    tg = np.stack([np.asarray(sc.tangent(g[:, 0], k)), np.asarray(sc.tangent(g[:, 1], v))], axis=1)
    z = sc.mean_gradient_zscores(tg, np.stack([gk, gv]))
    assert np.abs(z).max() < Z_TOL
    rk, rv = sc.radial_gradient(k, v, ks, vs, lam, SMALL)
    for x, p, exact in ((g[:, 0], k, rk), (g[:, 1], v, rv)):
        rad = x @ np.asarray(p)
        assert abs(rad.mean() - exact) < Z_TOL * rad.std() / math.sqrt(rad.size)
    # and the closed form's own radial part is something else (the lemma's point)
    full = jax.grad(lambda a, b: population_risk(a, b, ks, vs, lam, SMALL), argnums=(0, 1))(k, v)
    assert abs(float(full[0] @ k) - rk) > 0.05 * abs(rk)


def test_mean_gradient_zscores_detects_a_bias_and_checks_shapes():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4000, 3))
    assert np.abs(sc.mean_gradient_zscores(x, np.zeros(3))).max() < Z_TOL
    assert sc.mean_gradient_zscores(x, np.full(3, 0.2)).max() < -5
    with pytest.raises(ValueError, match="draws must have shape"):
        sc.mean_gradient_zscores(x, np.zeros(2))


# ----------------------------------------------------------------------------- samplers
def test_compare_moments_z_scores():
    rng = np.random.default_rng(1)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    a = rng.multivariate_normal([1, -1], cov, size=20_000)
    b = rng.multivariate_normal([1, -1], cov, size=20_000)
    same = sc.compare_moments(a, b)
    np.testing.assert_allclose(same.cov_a, cov, atol=0.1)
    assert np.abs(same.z_scores()).max() < Z_TOL
    assert same.z_scores().size == 2 + 3
    shifted = sc.compare_moments(a, b * 1.1)
    assert np.abs(shifted.cov_z).max() > 5
    with pytest.raises(ValueError, match="a and b must have shapes"):
        sc.compare_moments(a, b[:, :1])
    with pytest.raises(ValueError, match="at least 3 rows"):
        sc.compare_moments(a[:2], b)


def test_exact_and_plain_samplers_agree_in_law():
    ks, vs, k, v = _random_pair(7, SMALL.d)
    u = np.asarray(random_unit(jax.random.key(8), (SMALL.d,)))
    dirs = np.stack([np.asarray(ks), np.asarray(vs), np.asarray(k), np.asarray(v), u])
    proj = {}
    for i, s in enumerate(("exact", "plain")):
        g = sc.gradient_draws(k, v, ks, vs, SMALL, key=jax.random.key(20 + i), sampler=s, **DRAWS)
        assert g.shape == (DRAWS["n_draws"], 2, 1, SMALL.d)
        proj[s] = np.concatenate([g[:, 0, 0] @ dirs.T, g[:, 1, 0] @ dirs.T], axis=1)
    cmp = sc.compare_moments(proj["exact"], proj["plain"])
    assert np.abs(cmp.z_scores()).max() < Z_TOL
    assert np.mean(cmp.z_scores() ** 2) < 2.0


def test_count_random_draws_matches_the_proposition():
    ks, vs, k, v = _random_pair(9, SMALL.d)
    B, L, d, D, H = 4, SMALL.L, SMALL.d, 4, 1
    exact = sc.count_random_draws(k, v, ks, vs, SMALL, lam=1.0, batch_size=B, sampler="exact")
    used = B * L * D + B + 2 * H * d
    # slrlib.training.sgd rounds the draw up to a multiple of 8 (speed); the rest is unused
    assert used <= exact.numbers < used + 8 and exact.numbers % 8 == 0
    # the public count (used by the benchmark's floors) is what the traced program draws
    assert exact.numbers == exact_sampler_draws(B, L, H, 1, d)
    assert exact.bits == 32 * exact.numbers
    plain = sc.count_random_draws(k, v, ks, vs, SMALL, lam=1.0, batch_size=B, sampler="plain")
    # a whole batch, the label noises, and one Gumbel variable per position for the location
    assert plain.numbers == B * L * d + B + B * L
    with pytest.raises(ValueError, match="sampler"):
        sc.count_random_draws(k, v, ks, vs, SMALL, lam=1.0, batch_size=B, sampler="fast")


# ----------------------------------------------------------------------------- noise effects
def test_one_step_contraction_formula():
    out = sc.one_step_check(SMALL, alpha=0.03, overlaps=(0.5, 0.6, 0.2, -0.1, 0.3), **DRAWS)
    assert out["s_k"] > 0 and out["s_v"] > 0
    assert abs(out["s_k"] / out["half_trace_k"] - 1) < 0.2
    for p in ("k", "v"):
        # The Taylor + Monte Carlo bound holds, and is tight enough to reject a leading term off by 20 %.
        gap, tol = abs(out["s_" + p] - out["half_trace_" + p]), out["expansion_tol_" + p]
        assert gap <= tol, (p, gap, tol)
        assert tol < 0.2 * out["half_trace_" + p], (p, tol)
    effect = 0
    for name in ("kappa", "nu", "theta", "eta", "rho"):
        mean, se, pgd_change, pred = out[name]
        assert abs(mean - pred) < Z_TOL * se, name
        effect = max(effect, abs(mean - pgd_change) / se)
    assert effect > 6  # the contraction is really there


def test_prediction_moments_against_gaussian_samples():
    """The Isserlis formulas of _predictions against samples of (a, b, p_u, q_u)."""
    rng = np.random.default_rng(3)
    d = 7
    A = rng.normal(size=(4, 4)) * 0.1
    S = A @ A.T
    H = np.diag([1.0, 2.0, 0.5, 0.7])
    pred = sc._predictions(S, H, d)
    n = 100_000
    x = rng.multivariate_normal(np.zeros(4), S, size=(n, d - 2))  # (n, d-2, 4): one (p, q) pair per u
    a, b = x[:, 0, 0], x[:, 0, 1]
    pq = np.sum(x[:, :, 2] * x[:, :, 3], axis=1)
    samples = {
        "eta2": a**2, "theta2": b**2, "rho2": (a + b + pq) ** 2,
        "one_minus_kappa": 0.5 * (a**2 + np.sum(x[:, :, 2] ** 2, axis=1)),
        "excess_risk": 0.5 * (H[0, 0] * a**2 + H[1, 1] * b**2)
        + 0.5 * np.sum(H[2, 2] * x[:, :, 2] ** 2 + H[3, 3] * x[:, :, 3] ** 2, axis=1),
    }
    for name, s in samples.items():
        assert abs(s.mean() - pred[name]) < Z_TOL * s.std() / math.sqrt(n), name


def test_oracle_fluctuations_and_the_schedule_at_constant_lambda():
    task, lam = SMALL, DRAWS["lam"]
    kw = dict(alpha=2e-3, batch_size=DRAWS["batch_size"], key=jax.random.key(4), n_draws=DRAWS["n_draws"])
    f = sc.oracle_fluctuations(task, lam=lam, **kw)
    assert np.abs(f.gradient).max() < 1e-12  # the oracle is a critical point
    np.testing.assert_allclose(f.hessian[:2, 2:], 0, atol=1e-12)  # the blocks decouple
    A = np.eye(4) - f.alpha * f.hessian
    np.testing.assert_allclose(A @ f.stationary_cov @ A.T + f.alpha**2 * f.noise_cov, f.stationary_cov,
                               atol=1e-12 * np.abs(f.stationary_cov).max())
    assert all(f.predicted[n] > 0 for n in sc.PREDICTED)
    assert all(0 < f.predicted_se[n] < 0.5 * f.predicted[n] for n in sc.PREDICTED)
    # with a constant lambda the recursion starts and stays at the stationary covariance
    path = sc.fluctuations_along_schedule(task, lam0=lam, decay=0.0, start=0, n_steps=200, log_every=50, n_grid=1, **kw)
    np.testing.assert_array_equal(path.steps, [50, 100, 150, 200])
    (frozen,) = path.frozen
    assert frozen.lam == lam
    for n in sc.PREDICTED:
        np.testing.assert_allclose(path.predicted[n], frozen.predicted[n], rtol=1e-9)
    with pytest.raises(ValueError, match="start"):
        sc.fluctuations_along_schedule(task, lam0=lam, decay=0.0, start=200, n_steps=200, log_every=50, **kw)
    with pytest.raises(ValueError, match="lam"):
        sc.oracle_fluctuations(task, lam=0.0, **kw)


# ----------------------------------------------------------------------------- experiments
def _fake_experiment(d=SMALL.d, runs=2, steps=(0, 10, 20, 30), decay=1e-4, heads=1, seed=0, test_size=50):
    """An SGDExperiment whose logged overlaps come from random vectors (no SGD run)."""
    cfg = SGDConfig(name="fake", title="fake", lam=1.0, decay=decay, alpha=1e-3, n_steps=steps[-1], log_every=steps[1] - steps[0],
                    d=d, L=SMALL.L, gamma=SMALL.gamma, eps=SMALL.eps, n_runs=runs, heads=heads, test_size=test_size)
    task = cfg.task
    n_log = len(steps)
    ov = np.zeros((5, runs, n_log))
    for i in range(runs * n_log):
        ks, vs, k, v = _random_pair(1000 * seed + i, d)
        ov[:, i // n_log, i % n_log] = _overlaps(k, v, ks, vs)
    lam = 1.0 / (1 + decay * np.asarray(steps, float))
    risk = np.array([[float(risk_from_overlaps(*ov[:, r, t], lam[t], task)) for t in range(n_log)] for r in range(runs)])
    res = SGDResult(steps=np.asarray(steps), lam=lam, kappa=ov[0][:, None, None], nu=ov[1][:, None, None],
                    theta=ov[2][:, None, None], eta=ov[3][:, None, None], rho=ov[4][:, None],
                    risk=risk * (1 + 0.01 * np.sin(np.arange(runs))[:, None]), k=np.zeros((runs, 1, d)),
                    v=np.zeros((runs, 1, d)))
    return SGDExperiment(cfg, res, 1.0)


@pytest.mark.roundoff
def test_pgd_counterpart_starts_from_each_runs_overlaps_with_the_same_schedule():
    exp = _fake_experiment()
    res = sc.pgd_counterpart(exp)
    r = exp.result
    for name in ("kappa", "nu", "theta", "eta"):
        np.testing.assert_allclose(np.asarray(getattr(res, name))[:, 0], np.asarray(getattr(r, name))[:, 0, 0, 0],
                                   atol=1e-12)
    np.testing.assert_allclose(np.asarray(res.rho)[:, 0], r.rho[:, 0, 0], atol=1e-12)
    np.testing.assert_allclose(res.lam, r.lam, rtol=1e-14)
    # directly with pgd, from the runs' initial overlaps
    k, v, ks, vs = vectors_with_overlaps(*(x[:, 0, 0, 0] for x in (r.kappa, r.nu, r.theta, r.eta)), r.rho[:, 0, 0],
                                            d=SMALL.d)
    direct = pgd(k, v, ks, vs, exp.config.task, **PGD_KW)
    np.testing.assert_allclose(np.asarray(res.kappa), np.asarray(direct.kappa), atol=1e-12)
    with pytest.raises(ValueError, match="decay"):
        sc.pgd_counterpart(_fake_experiment(decay=3e-4))
    with pytest.raises(ValueError, match="heads"):
        sc.pgd_counterpart(exp._replace(config=exp.config.scaled(heads=2)))


def test_heldout_standard_errors_against_the_closed_form():
    exp = _fake_experiment(test_size=100)
    se, fresh, fresh_se = sc.heldout_standard_errors(exp, jax.random.key(3), n_samples=8000)
    exact = exp.population_excess_risk[:, -1] + exp.config.eps**2
    assert np.abs((fresh - exact) / fresh_se).max() < Z_TOL
    np.testing.assert_allclose(se, fresh_se * math.sqrt(8000 / 100), rtol=1e-12)


def test_pgd_vs_sgd_table_and_floor_comparison_on_known_numbers():
    exp = _fake_experiment()
    pgd_res = sc.pgd_counterpart(exp)
    f = sc.OracleFluctuations(0.9, 1e-3, 8, *[None] * 5, {n: 0.5 for n in sc.PREDICTED}, {n: 0.1 for n in sc.PREDICTED})
    path = sc.FluctuationPath(np.array([20, 30]), np.array([0.9, 0.9]),
                              {n: np.array([1.0, 3.0]) for n in sc.PREDICTED}, np.array([0.9]), (f,))
    data = sc.PGDvsSGD(exp, pgd_res, path, (20, 30), 0.9, {})
    tab = sc.pgd_vs_sgd_table(data)
    n = exp.config.n_runs * 4
    assert {len(v) for v in tab.values()} == {n}
    assert np.isnan(tab["predicted_rms_distance"][:2]).all() and tab["predicted_rms_distance"][3] == math.sqrt(3.0)
    comp = sc.floor_comparison(data)
    th = exp.result.theta[:, 0, 0, 2:]
    assert comp["theta2"][0] == pytest.approx(np.mean(th**2), rel=1e-12)
    assert comp["theta2"][2] == 2.0 and comp["theta2"][3] == 0.5


# ----------------------------------------------------------------------------- plots, figures
def test_as_pgd_experiment_maps_the_fields():
    from slrlib.plots.sgd import as_pgd_experiment

    exp = _fake_experiment()
    view = as_pgd_experiment(exp)
    r = exp.result
    np.testing.assert_array_equal(view.result.kappa, r.kappa[:, 0, 0])
    np.testing.assert_allclose(view.result.distance, np.sqrt(r.theta[:, 0, 0] ** 2 + r.eta[:, 0, 0] ** 2 + r.rho[:, 0] ** 2))
    np.testing.assert_allclose(view.excess_risk, exp.excess_risk)
    with pytest.raises(ValueError, match="one head"):
        as_pgd_experiment(exp._replace(config=exp.config.scaled(heads=2)))


def test_plots_return_figures_and_tables_write_as_csv(tmp_path):
    from matplotlib.figure import Figure

    from slrlib.figures import write_csv
    from slrlib.book.plots.sgd_checks import plot_pgd_vs_sgd, plot_sampler_check
    from slrlib.plots.sgd import plot_sgd_panels

    exp = _fake_experiment()
    fig = plot_sgd_panels(exp)
    assert isinstance(fig, Figure) and len(fig.axes) == 4
    path = sc.FluctuationPath(np.array([20, 30]), np.array([0.9, 0.9]),
                              {n: np.array([1e-3, 2e-3]) for n in sc.PREDICTED}, np.array([0.9]), ())
    data = sc.PGDvsSGD(exp, sc.pgd_counterpart(exp), path, (20, 30), 0.9, {})
    fig = plot_pgd_vs_sgd(data)
    assert isinstance(fig, Figure) and len(fig.axes) == 4
    write_csv(sc.pgd_vs_sgd_table(data), tmp_path / "pvs.csv")
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(200, 10)), rng.normal(size=(200, 10))
    check = sc.SamplerCheck(tuple(f"<g_k, x{i}>" for i in range(10)), 2.0, sc.CHECK_OVERLAPS, 5, a, b,
                            sc.compare_moments(a, b), np.ones(10), None, None, None, None, {}, 200)
    fig = plot_sampler_check(check)
    assert isinstance(fig, Figure) and len(fig.axes) == 10
    table = sc.sampler_table(check)
    assert {len(v) for v in table.values()} == {9990}
    np.testing.assert_allclose(table["exact"][999:1998], np.quantile(a[:, 1], np.linspace(0.001, 0.999, 999)))
    assert table["gradient"][5 * 999] == 1 and table["direction"][6 * 999] == 1
    write_csv(table, tmp_path / "sampler.csv")
    assert (tmp_path / "sampler.csv").read_text().count("\n") == 9991


def test_figures_are_registered():
    import slrlib.book.figures  # noqa: F401  (registers the chapter's own figures)
    import slrlib.figures.sgd  # noqa: F401  (registers Figure 5)
    from slrlib import figures
    from slrlib.book.plots.sgd_checks import plot_pgd_vs_sgd
    from slrlib.experiments import run_sgd_experiment, sgd_table
    from slrlib.plots.sgd import plot_sgd_panels

    spec = figures.get("fig5")
    assert spec.chapter == 9 and spec.compute.func is run_sgd_experiment and spec.compute.args == ("fig5",)
    assert spec.plot is plot_sgd_panels and spec.table is sgd_table
    assert figures.get("ch9_pgd_vs_sgd").plot is plot_pgd_vs_sgd
    assert figures.get("ch9_sampler").compute is sc.sampler_check
