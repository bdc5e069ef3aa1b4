"""Tests for slrlib.training.sgd: stochastic PGD on the empirical risk and its exact sampler.

Independent references: ``jax.grad`` of the batch loss on explicit batches, the plain
sampler (whole batches from the task) for the law of the exact one, the closed-form
population gradient (Theorem 1) for unbiasedness, and deterministic PGD (slrlib.training.pgd)
as the large-batch limit.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import slrlib
from helpers import moment_z_scores, unit
from slrlib.core.geometry import uniform_directions
from slrlib.training import sgd as S
from slrlib.training.pgd import pgd
from slrlib.experiments import (
    SGD_CONFIGS,
    SGDConfig,
    match_heads,
    run_sgd_experiment,
    sgd_initialisation,
    sgd_table,
    sgd_task_directions,
)
from slrlib.core.risk import population_risk

# Their tests share costly fixtures: `make test` keeps them on one pytest-xdist worker, and the
# fixtures are session-scoped, so that tests of other modules run between them do not tear them down.
pytestmark = pytest.mark.xdist_group("test_sgd")


@pytest.fixture(scope="session")
def multi():
    task = slrlib.MultiLocationTask(10, 5, M=2, eps=0.1)
    Ks, Vs = task.oracle_directions(jax.random.key(3))
    K = unit(jax.random.normal(jax.random.key(4), (2, 10)) + Ks)
    V = unit(jax.random.normal(jax.random.key(5), (2, 10)) + Vs[::-1])
    return task, Ks, Vs, K, V


# ------------------------------------------------------------------ the pieces of the sampler
@pytest.mark.roundoff
def test_exact_batch_gradient_equals_autodiff_on_the_completed_batch(sgd_small):
    """Completing the drawn coordinates with an explicit orthogonal part gives a real batch;
    jax.grad of its batch loss must be the span part plus sum c * sigma * w, exactly."""
    task, ks, vs, K, V = sgd_small
    B, L, d, lam = 6, task.L, task.d, 1.3
    z = jax.random.normal(jax.random.key(7), (S.exact_sampler_draws(B, L, 1, 1, d),))
    Q, a, y, _, sigma = S._exact_batch(K, V, ks[None], vs[None], z, B, L, task.gamma, task.eps)
    P_perp = jnp.eye(d) - Q @ Q.T
    W = sigma[None, :, None] * (jax.random.normal(jax.random.key(8), (B, L, d)) @ P_perp)
    X = jnp.einsum("blD,dD->bld", a, Q) + W
    gK, gV = S.batch_gradient(K, V, X, y, lam)
    ck, cv = S._coefficients(a, y, K @ Q, V @ Q, lam)
    for g, c in ((gK, ck), (gV, cv)):
        expected = jnp.einsum("blh,blD->hD", c, a) @ Q.T + jnp.einsum("blh,bld->hd", c, W)
        np.testing.assert_allclose(g, expected, atol=1e-11, rtol=1e-10)
    # the relevant token's output: y - X_0 . v* is the output noise only (std eps)
    resid = np.asarray(y - X[:, 0] @ vs)
    assert np.all(np.abs(resid) < 6 * task.eps)


@pytest.mark.roundoff
def test_coefficients_are_the_gradient_in_the_projections(sgd_small):
    task, ks, vs, K, V = sgd_small
    z = jax.random.normal(jax.random.key(9), (S.exact_sampler_draws(4, task.L, 1, 1, task.d),))
    Q, a, y, _, _ = S._exact_batch(K, V, ks[None], vs[None], z, 4, task.L, task.gamma, task.eps)
    Kc, Vc = K @ Q, V @ Q

    def loss(Sk, Sv):
        return jnp.mean(jnp.square(jnp.sum(jax.scipy.special.erf(0.7 * Sk) * Sv, axis=(1, 2)) - y))

    Sk = jnp.einsum("blD,hD->blh", a, Kc)
    Sv = jnp.einsum("blD,hD->blh", a, Vc)
    ref = jax.grad(loss, argnums=(0, 1))(Sk, Sv)
    got = S._coefficients(a, y, Kc, Vc, 0.7)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r, atol=1e-12, rtol=1e-10)


def test_orthonormal_span_contains_the_vectors_and_handles_dependence():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 9))
    vecs = jnp.asarray(np.vstack([A, A[0] - 2 * A[2], rng.standard_normal(9)]))  # 4th dependent
    Q = S._orthonormal_span(vecs)
    G = np.asarray(Q.T @ Q)
    nonzero = np.linalg.norm(np.asarray(Q), axis=0) > 0.5
    assert nonzero.tolist() == [True, True, True, False, True]
    np.testing.assert_allclose(G, np.diag(nonzero.astype(float)), atol=1e-13)
    np.testing.assert_allclose(np.asarray(vecs @ Q @ Q.T), np.asarray(vecs), atol=1e-12)
    assert np.all(np.isfinite(np.asarray(Q)))


@pytest.mark.parametrize("rank", [4, 3, 1, 0])
def test_gram_factor_reproduces_psd_matrices_without_nan(rank):
    rng = np.random.default_rng(rank)
    A = rng.standard_normal((4, rank)) if rank else np.zeros((4, 1))
    Smat = jnp.asarray(A @ A.T)
    F = S._gram_factor(Smat)
    assert np.all(np.isfinite(np.asarray(F)))
    np.testing.assert_allclose(np.asarray(F @ F.T), np.asarray(Smat), atol=1e-12)
    assert np.allclose(np.triu(np.asarray(F), 1), 0)


# --------------------------------------------------------------- the law of the exact sampler
def _draws(task, K, V, ks, vs, sampler, n, B, lam, seed):
    keys = jax.random.split(jax.random.key(seed), n)
    f = jax.jit(jax.vmap(lambda k: jnp.concatenate(S.sample_gradient(
        K, V, ks, vs, task, lam=lam, key=k, batch_size=B, sampler=sampler), axis=0)))
    return np.asarray(f(keys))  # (n, 2H, d)


def test_exact_sampler_has_the_law_of_the_plain_sampler(sgd_small):
    """Means and all second moments of the gradient's projections on k*, v*, k, v, a fixed random
    direction and a direction orthogonal to all of them: exact vs plain sampler, 40 000 draws
    each. 2 heads' worth of vectors x 6 directions = 12 coordinates, 90 statistics."""
    task, ks, vs, K, V = sgd_small
    n = 40_000
    u = jax.random.normal(jax.random.key(11), (task.d,))
    Q = S._orthonormal_span(jnp.concatenate([K, V, ks[None], vs[None]]))
    w = unit(u - Q @ (Q.T @ u))
    U = jnp.stack([ks, vs, K[0], V[0], unit(u), w])
    proj = {}
    for sampler, seed in (("exact", 1), ("plain", 2)):
        G = _draws(task, K, V, ks, vs, sampler, n, 3, 1.5, seed)
        proj[sampler] = np.einsum("nhd,ud->nhu", G, np.asarray(U)).reshape(n, -1)
    z = moment_z_scores(proj["exact"], proj["plain"])
    assert z.size == 12 + 78
    # 90 statistics: under equal laws |z| > 4.5 has probability ~ 6e-4 in all.
    assert np.max(np.abs(z)) < 4.5, np.round(z, 2)
    # and the statistics are not trivially equal (the samples are independent)
    assert np.std(z) > 0.3


def test_exact_sampler_law_multi_head_multi_location(multi):
    task, Ks, Vs, K, V = multi
    n = 30_000
    U = jnp.concatenate([Ks, Vs, K, V])  # 8 directions
    proj = {}
    for sampler, seed in (("exact", 3), ("plain", 4)):
        G = _draws(task, K, V, Ks, Vs, sampler, n, 2, 1.0, seed)
        proj[sampler] = np.einsum("nhd,ud->nhu", G, np.asarray(U))[:, :, [0, 2, 5, 7]].reshape(n, -1)
    z = moment_z_scores(proj["exact"], proj["plain"])
    assert np.max(np.abs(z)) < 4.7, np.round(z, 2)


def test_batch_gradient_is_unbiased_for_the_population_gradient(sgd_small):
    """E[batch gradient] = gradient of the closed-form risk (Theorem 1), tangent parts."""
    task, ks, vs, K, V = sgd_small
    lam, n = 0.8, 40_000
    G = _draws(task, K, V, ks, vs, "exact", n, 2, lam, 5)  # (n, 2, d)
    k, v = K[0], V[0]
    gk, gv = jax.grad(lambda k, v: population_risk(k, v, ks, vs, lam, task), argnums=(0, 1))(k, v)
    for g_mc, g_exact, x in ((G[:, 0], gk, k), (G[:, 1], gv, v)):
        P = np.eye(task.d) - np.outer(x, x)
        mc = g_mc @ P
        mean, se = mc.mean(0), mc.std(0) / math.sqrt(n)
        z = (mean - np.asarray(g_exact) @ P) / se
        assert np.max(np.abs(z)) < 4.5, np.round(z, 2)
        assert np.linalg.norm(np.asarray(g_exact) @ P) > 10 * np.linalg.norm(se)  # a real signal


# ------------------------------------------------------------------------------- the loop
def test_large_batch_sgd_follows_deterministic_pgd():
    """With a huge batch the stochastic gradient is the population gradient up to ~1/sqrt(B):
    the trajectory must stay close to PGD with exact gradients from the same initialisation."""
    task = slrlib.SLRTask(10, 4, eps=0.0)
    ks, vs = task.oracle_directions(jax.random.key(0))
    k0, v0 = uniform_directions(jax.random.key(1), task.d, (4,))
    n, alpha, lam = 40, 0.1, 0.7
    ref = pgd(k0, v0, ks, vs, task, lam=lam, alpha=alpha, n_steps=n, log_every=n)
    kw = dict(lam=lam, alpha=alpha, n_steps=n, key=jax.random.key(2), log_every=n, test_size=10)
    big = S.sgd(k0, v0, ks, vs, task, batch_size=10_000, **kw)
    small_batch = S.sgd(k0, v0, ks, vs, task, batch_size=20, **kw)
    dist = lambda r: np.abs(np.asarray(r.kappa)[:, 0, 0, -1] - np.asarray(ref.kappa)[:, -1])  # noqa: E731
    moved = np.abs(np.asarray(ref.kappa)[:, -1] - np.asarray(ref.kappa)[:, 0])
    assert np.all(moved > 0.05)  # PGD really moves in 40 steps
    # the deviation is a random walk of 40 steps of size ~ alpha * sd / sqrt(B): ~1e-2 for B = 1e4
    assert np.all(dist(big) < 0.25 * moved), (dist(big), moved)
    # and it grows like 1/sqrt(B): B = 20 is ~22x noisier, check at least 5x on average
    assert np.mean(dist(small_batch)) > 5 * np.mean(dist(big)), (dist(small_batch), dist(big))
    np.testing.assert_allclose(np.linalg.norm(big.k, axis=-1), 1.0, atol=1e-12)


def test_short_training_beats_the_null_risk():
    """A short run on a small task brings the held-out risk well below the null risk gamma^2 + eps^2."""
    # d = 20, L = 3: at the final lambda = 2/(1 + 5.8) = 0.29 the oracle's risk is 0.23, 45 % of
    # the null risk 0.51 (Theorem 1); lambda decreases from 2 so that k is found first (Section 5).
    cfg = SGDConfig(name="t", title="t", lam=2.0, decay=2.9e-3, alpha=0.03, n_steps=2000, log_every=500, d=20, L=3,
                    n_runs=4, test_size=2000)
    exp = run_sgd_experiment(cfg)
    null = cfg.gamma**2 + cfg.eps**2
    final = exp.result.risk[:, -1]
    assert np.all(exp.result.risk[:, 0] > null)  # random directions start above it
    assert np.all(final < 0.7 * null), final
    assert np.all(np.abs(exp.result.kappa[:, 0, 0, -1]) > 0.8) and np.all(np.abs(exp.result.nu[:, 0, 0, -1]) > 0.9)
    # the held-out estimate agrees with the closed form of the same (k_t, v_t)
    pop = exp.population_excess_risk[:, -1] + cfg.eps**2
    assert np.all(np.abs(final - pop) < 0.25 * pop + 0.02)


def test_same_key_same_trajectory_and_sampler_choice():
    cfg = SGD_CONFIGS["fig5"].scaled(n_steps=200, log_every=100, n_runs=2, test_size=50, d=10, L=3)
    a, b = run_sgd_experiment(cfg), run_sgd_experiment(cfg)
    np.testing.assert_array_equal(a.result.k, b.result.k)
    np.testing.assert_array_equal(a.result.risk, b.result.risk)
    c = run_sgd_experiment(cfg.scaled(seed=1))
    assert not np.allclose(a.result.k, c.result.k)
    p = run_sgd_experiment(cfg.scaled(sampler="plain"))
    assert p.result.risk.shape == a.result.risk.shape


@pytest.fixture(scope="session")
def fig9_small():
    cfg = SGD_CONFIGS["fig9"].scaled(n_steps=400, log_every=200, n_runs=3, test_size=20, decay=0.01,
                                     freeze_after=300, d=12, L=4)
    return run_sgd_experiment(cfg)


def test_task_directions_are_those_of_the_run(fig9_small):
    """sgd_task_directions gives the directions run_sgd_experiment used: the step-0 overlaps
    logged by the run are those of the initial directions with them."""
    exp = fig9_small
    Ks, Vs = sgd_task_directions(exp.config)
    assert Ks.shape == (3, 2, 12)
    _, _, K0, V0 = sgd_initialisation(exp.config)
    np.testing.assert_allclose(exp.result.kappa[..., 0], np.einsum("rhd,rmd->rhm", K0, Ks), atol=1e-12)
    np.testing.assert_allclose(exp.result.nu[..., 0], np.einsum("rhd,rmd->rhm", V0, Vs), atol=1e-12)
    k1, _ = sgd_task_directions(SGD_CONFIGS["fig5"].scaled(n_runs=2))
    assert k1.shape == (2, 80)


def test_schedule_and_logged_lambda(fig9_small):
    np.testing.assert_allclose(S.lam_schedule(2.0, np.array([0, 10_000, 30_000]), 2e-4, 25_000),
                               [2.0, 2.0 / 3.0, 2.0 / 6.0])
    r = fig9_small.result
    np.testing.assert_allclose(r.lam, [2.0, 2.0 / 3.0, 2.0 / 4.0])
    assert r.kappa.shape == (3, 2, 2, 3) and r.rho.shape == (3, 2, 3)
    np.testing.assert_allclose(np.linalg.norm(r.k, axis=-1), 1.0, atol=1e-12)


def test_tables_and_head_matching(fig9_small):
    exp = fig9_small
    cols = sgd_table(exp)
    assert len({len(v) for v in cols.values()}) == 1 and len(cols["run"]) == 3 * 2 * 2 * 3
    kappa = np.zeros((2, 2, 2, 1))
    kappa[0, :, :, 0] = [[0.1, 0.9], [0.8, 0.2]]
    kappa[1, :, :, 0] = [[0.7, 0.1], [0.3, 0.4]]
    fake = exp.result._replace(kappa=kappa)
    np.testing.assert_array_equal(match_heads(fake.kappa[..., -1]), [[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="population_excess_risk"):
        exp.population_excess_risk


# ---------------------------------------------------------------------------------- input
@pytest.mark.parametrize(
    "change, match",
    [
        (dict(lam=0.0), "lam"),
        (dict(alpha=-1e-3), "alpha"),
        (dict(batch_size=0), "batch_size"),
        (dict(n_steps=10, log_every=3), "log_every"),
        (dict(sampler="fast"), "sampler"),
        (dict(decay=-1.0), "decay"),
        (dict(test_size=0), "test_size"),
    ],
)
def test_bad_input_raises(sgd_small, change, match):
    task, ks, vs, K, V = sgd_small
    kw = dict(lam=1.0, alpha=1e-3, n_steps=10, batch_size=2, key=jax.random.key(0), log_every=5, test_size=5)
    kw.update(change)
    with pytest.raises(ValueError, match=match):
        S.sgd(K, V, ks, vs, task, **kw)


def test_bad_directions_and_task(sgd_small, multi):
    task, ks, vs, K, V = sgd_small
    kw = dict(lam=1.0, alpha=1e-3, n_steps=10, batch_size=2, key=jax.random.key(0), log_every=5)
    with pytest.raises(ValueError, match="k0"):
        S.sgd(2 * K, V, ks, vs, task, **kw)
    with pytest.raises(ValueError, match="k0 and v0"):
        S.sgd(jnp.stack([K, K], 1), V, ks, vs, task, **kw)
    with pytest.raises(ValueError, match="task"):
        S.sgd(K, V, ks, vs, "task", **kw)
    with pytest.raises(ValueError, match="k_star"):
        S.sgd(K, V, 2 * ks, vs, task, **kw)
    mtask, Ks, Vs, MK, MV = multi
    with pytest.raises(ValueError, match="k_star"):
        S.sgd(MK[None], MV[None], Ks[:1], Vs[:1], mtask, **kw)
    with pytest.raises(ValueError, match="config"):
        run_sgd_experiment("fig99")
    with pytest.raises(ValueError, match="sampler"):
        S.sample_gradient(K, V, ks, vs, task, lam=1.0, key=jax.random.key(0), batch_size=2, sampler="x")


@pytest.mark.roundoff
def test_one_sgd_step_is_the_projected_step_of_the_autodiff_gradient(sgd_small):
    """The loop's first update, rebuilt by hand: the same batch (same keys), jax.grad of the
    batch loss, the Riemannian projection and the normalisation of Definition 1 (eq. 10)."""
    task, ks, vs, K, V = sgd_small
    K0 = jnp.stack([K, unit(K + 0.3 * vs)])  # two runs, (2, 1, d)
    V0 = jnp.stack([V, unit(V - 0.2 * ks)])
    lam, alpha, B, key = 1.1, 0.05, 7, jax.random.key(21)
    out = S.sgd(K0, V0, ks, vs, task, lam=lam, alpha=alpha, n_steps=1, batch_size=B, key=key,
                test_size=3, sampler="plain")
    run_key, _ = jax.random.split(key)
    with jax.threefry_partitionable(False):  # as inside sgd()
        keys = jax.random.split(jax.random.fold_in(run_key, 0), 2)
        batches = [slrlib.core.task.sample_kernel(k, B, task.L, task.d, ks, vs, task.gamma, task.eps,
                                            jnp.log(task.pi)) for k in keys]
    for r, (X, y, _) in enumerate(batches):
        gK, gV = jax.grad(lambda K, V: jnp.mean((slrlib.multi_head_erf_attention(X, K, V, lam) - y) ** 2),
                          argnums=(0, 1))(K0[r], V0[r])
        for x0, g, x1 in ((K0[r, 0], gK[0], out.k[r, 0]), (V0[r, 0], gV[0], out.v[r, 0])):
            step = x0 - alpha * (g - jnp.dot(g, x0) * x0)
            np.testing.assert_allclose(x1, step / jnp.linalg.norm(step), atol=1e-12)
            assert np.linalg.norm(np.asarray(x1 - x0)) > 1e-4  # it moved


def test_final_lam_is_the_last_logged_lambda(fig9_small):
    """SGDConfig.final_lam (a property) is the λ the run used at its last step, frozen or not."""
    exp = fig9_small
    assert exp.config.final_lam == pytest.approx(float(exp.result.lam[-1]), rel=1e-12)
    unfrozen = exp.config.scaled(freeze_after=None)
    assert unfrozen.final_lam == pytest.approx(unfrozen.lam / (1 + unfrozen.decay * unfrozen.n_steps), rel=1e-15)
    assert SGD_CONFIGS["fig9"].final_lam == pytest.approx(2.0 / (1 + 2e-4 * 25_000), rel=1e-15)  # 1/3, chapter 11


def test_sgd_and_pgd_results_name_the_same_things_alike(multi):
    """Issue 42, point 2: one idea, one vocabulary. SGDResult has PGDResult's fields (less the
    distance to M and the divergence flag, which are PGD's), and recovered reads both: one entry
    per run for PGD, per run, head and location for SGD, from the same rule on kappa and nu."""
    from slrlib.training.pgd import PGDResult

    assert set(S.SGDResult._fields) == set(PGDResult._fields) - {"distance", "diverged"}
    task, Ks, Vs, K, V = multi
    res = S.sgd(jnp.stack([K, V[::-1]]), jnp.stack([V, K[::-1]]), Ks, Vs, task, lam=1.0, alpha=0.05,
                n_steps=20, batch_size=8, key=jax.random.key(9), log_every=10, test_size=16)
    assert res.k.shape == res.v.shape == (2, 2, task.d) and res.risk.shape == (2, 3)
    found = slrlib.recovered(res, tol=0.5)
    assert found.shape == (2, 2, 2)  # runs, heads, locations
    by_hand = (np.abs(res.kappa[..., -1]) > 0.5) & (np.abs(res.nu[..., -1]) > 0.5)
    np.testing.assert_array_equal(found, by_hand)
