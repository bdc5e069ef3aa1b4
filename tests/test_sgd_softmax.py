"""Stochastic PGD for softmax attention (2): ``attention="softmax"`` of slrlib.training.sgd.

Independent references: ``softmax_attention`` of slrlib.core.predictors for the predictor,
central finite differences of the batch loss and ``jax.grad`` of a separately written loss in
the projections for the gradient, and the plain sampler (whole batches from the task, then
``jax.grad``) for the law of the exact low-dimensional sampler.
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
from slrlib.core.predictors import softmax_attention
from slrlib.training import sgd as S


@pytest.fixture(scope="module")
def batch(sgd_small):
    task, ks, vs, K, V = sgd_small
    X, y, _ = task.sample(jax.random.key(3), 7, ks, vs)
    return X, y


@pytest.mark.roundoff
def test_softmax_batch_loss_is_the_mean_squared_error_of_softmax_attention(sgd_small, batch):
    task, ks, vs, K, V = sgd_small
    X, y = batch
    lam = 1.7
    ref = jnp.mean(jnp.square(softmax_attention(X, K[0], V[0], lam) - y))
    got = S.batch_loss(K, V, X, y, lam, attention="softmax")
    np.testing.assert_allclose(got, ref, rtol=1e-13)
    # and it is not the erf loss
    assert abs(float(S.batch_loss(K, V, X, y, lam)) - float(got)) > 1e-3


@pytest.mark.parametrize("lam", [0.3, 2.5])
def test_softmax_batch_gradient_matches_finite_differences(sgd_small, batch, lam):
    """Central differences of the batch loss in a few random directions (the loss accepts only unit
    vectors, so the differences go through the unchecked loss): error O(h^2) + round-off/h."""
    task, ks, vs, K, V = sgd_small
    X, y = batch
    gK, gV = S.batch_gradient(K, V, X, y, lam, attention="softmax")
    h = 1e-5
    rng = np.random.default_rng(4)
    for _ in range(4):
        dK = jnp.asarray(rng.standard_normal(K.shape))
        dV = jnp.asarray(rng.standard_normal(V.shape))
        f = lambda s: S._batch_loss(K + s * dK, V + s * dV, X, y, lam, "softmax")  # noqa: E731
        fd = (f(h) - f(-h)) / (2 * h)
        an = jnp.sum(gK * dK) + jnp.sum(gV * dV)
        # h^2 * third derivative (O(10) here) + eps_mach * loss / h
        np.testing.assert_allclose(float(an), float(fd), atol=1e-7, rtol=1e-7)


@pytest.mark.roundoff
@pytest.mark.parametrize("H", [1, 2])
def test_softmax_coefficients_are_the_gradient_in_the_projections(sgd_small, H):
    """The closed-form coefficients (module docstring) against jax.grad of the loss written in the
    projections, with the softmax spelt out (exp over a sum of exp)."""
    task, ks, vs, _, _ = sgd_small
    B, L, D, lam = 5, task.L, 6, 1.3
    a = jax.random.normal(jax.random.key(5), (B, L, D))
    y = jax.random.normal(jax.random.key(6), (B,))
    Kc = unit(jax.random.normal(jax.random.key(7), (H, D)))
    Vc = unit(jax.random.normal(jax.random.key(8), (H, D)))

    def loss(Sk, Sv):
        w = jnp.exp(lam * Sk) / jnp.sum(jnp.exp(lam * Sk), axis=1, keepdims=True)
        return jnp.mean(jnp.square(jnp.sum(w * Sv, axis=(1, 2)) - y))

    Sk = jnp.einsum("blD,hD->blh", a, Kc)
    Sv = jnp.einsum("blD,hD->blh", a, Vc)
    ref = jax.grad(loss, argnums=(0, 1))(Sk, Sv)
    got = S._coefficients(a, y, Kc, Vc, lam, "softmax")
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r, atol=1e-12, rtol=1e-10)


@pytest.mark.roundoff
def test_softmax_exact_batch_gradient_equals_autodiff_on_the_completed_batch(sgd_small):
    """Completing the drawn coordinates with an explicit orthogonal part gives a real batch; jax.grad
    of its softmax batch loss is the span part plus sum c * w."""
    task, ks, vs, K, V = sgd_small
    B, L, d, lam = 6, task.L, task.d, 2.2
    z = jax.random.normal(jax.random.key(9), (S.exact_sampler_draws(B, L, 1, 1, d),))
    Q, a, y, _, sigma = S._exact_batch(K, V, ks[None], vs[None], z, B, L, task.gamma, task.eps)
    P_perp = jnp.eye(d) - Q @ Q.T
    W = sigma[None, :, None] * (jax.random.normal(jax.random.key(10), (B, L, d)) @ P_perp)
    X = jnp.einsum("blD,dD->bld", a, Q) + W
    gK, gV = S.batch_gradient(K, V, X, y, lam, attention="softmax")
    ck, cv = S._coefficients(a, y, K @ Q, V @ Q, lam, "softmax")
    for g, c in ((gK, ck), (gV, cv)):
        expected = jnp.einsum("blh,blD->hD", c, a) @ Q.T + jnp.einsum("blh,bld->hd", c, W)
        np.testing.assert_allclose(g, expected, atol=1e-11, rtol=1e-10)


def test_softmax_exact_sampler_has_the_law_of_the_plain_sampler(sgd_small):
    """Means and all second moments of the gradient's projections on k*, v*, k, v and a direction
    orthogonal to all of them, exact vs plain sampler, 20 000 independent draws each:
    2 vectors x 5 directions = 10 coordinates, 65 statistics, |z| < 4.5 (probability of a false
    alarm under equal laws about 4e-4)."""
    task, ks, vs, K, V = sgd_small
    n, B, lam = 20_000, 3, 2.0
    u = jax.random.normal(jax.random.key(11), (task.d,))
    Q = S._orthonormal_span(jnp.concatenate([K, V, ks[None], vs[None]]))
    U = jnp.stack([ks, vs, K[0], V[0], unit(u - Q @ (Q.T @ u))])
    proj = {}
    for sampler, seed in (("exact", 12), ("plain", 13)):
        keys = jax.random.split(jax.random.key(seed), n)
        f = jax.jit(jax.vmap(lambda k, s=sampler: jnp.concatenate(S.sample_gradient(
            K, V, ks, vs, task, lam=lam, key=k, batch_size=B, sampler=s, attention="softmax"), axis=0)))
        proj[sampler] = np.einsum("nhd,ud->nhu", np.asarray(f(keys)), np.asarray(U)).reshape(n, -1)
    z = moment_z_scores(proj["exact"], proj["plain"])
    assert z.size == 10 + 55
    assert np.max(np.abs(z)) < 4.5, np.round(z, 2)
    assert np.std(z) > 0.3  # independent samples: the statistics are not trivially equal
    # the law is not the erf one: the mean projection of grad_v on v* differs by many standard errors
    f_erf = jax.jit(jax.vmap(lambda k: S.sample_gradient(K, V, ks, vs, task, lam=lam, key=k, batch_size=B)[1][0]))
    g_erf = np.asarray(f_erf(jax.random.split(jax.random.key(14), n))) @ np.asarray(vs)
    g_soft = proj["exact"][:, 6]  # row 1 (grad_v), direction 1 (v*)
    se = math.sqrt(g_erf.var() / n + g_soft.var() / n)
    assert abs(g_erf.mean() - g_soft.mean()) > 10 * se


@pytest.mark.parametrize("call", ["sgd", "batch_loss", "batch_gradient", "sample_gradient"])
def test_unknown_attention_is_rejected_by_name(sgd_small, batch, call):
    task, ks, vs, K, V = sgd_small
    X, y = batch
    with pytest.raises(ValueError, match="attention must be one of"):
        if call == "sgd":
            S.sgd(K, V, ks, vs, task, lam=1.0, alpha=1e-2, n_steps=2, batch_size=2, key=jax.random.key(0),
                  attention="relu")
        elif call == "batch_loss":
            S.batch_loss(K, V, X, y, 1.0, attention="relu")
        elif call == "batch_gradient":
            S.batch_gradient(K, V, X, y, 1.0, attention="relu")
        else:
            S.sample_gradient(K, V, ks, vs, task, lam=1.0, key=jax.random.key(0), batch_size=2, attention="relu")


# ------------------------------------------------------------------ chapter 14's helpers and figure
def test_recovery_steps_against_a_loop():
    from slrlib.book.ch14_softmax import recovery_steps

    rng = np.random.default_rng(20)
    steps = np.arange(12) * 100
    kappa = np.clip(np.cumsum(rng.uniform(-0.1, 0.3, (6, 12)), axis=1), -1, 1) * rng.choice([-1, 1], (6, 1))
    nu = np.clip(np.cumsum(rng.uniform(-0.1, 0.3, (6, 12)), axis=1), -1, 1) * rng.choice([-1, 1], (6, 1))
    for signed in (True, False):
        got = recovery_steps(kappa, nu, steps, 0.9, signed=signed)
        for r in range(6):
            first = np.nan
            for i in range(12):
                k, n = kappa[r, i], nu[r, i]
                ok = (k > 0.9 and n > 0.9) if signed else (abs(k) > 0.9 and abs(n) > 0.9 and k * n > 0)
                if ok:
                    first = steps[i]
                    break
            assert (np.isnan(first) and np.isnan(got[r])) or first == got[r]
    # (-k*, -v*) is a recovery for erf only; (k*, -v*) for neither
    two = np.array([[-0.95, -0.95], [0.95, 0.95]])  # run 0 at -(k*, v*), run 1 at +(k*, v*), two logs
    np.testing.assert_array_equal(recovery_steps(two, two, [0, 1], signed=False), [0, 0])
    assert np.isnan(recovery_steps(two, two, [0, 1], signed=True)[0])
    assert np.all(np.isnan(recovery_steps(two, -two, [0, 1], signed=False)))
    with pytest.raises(ValueError, match="level"):
        recovery_steps(two, two, [0, 1], level=1.5)


def test_softmax_risk_of_runs_matches_the_closed_form_at_lambda_zero():
    from slrlib.book.ch14_softmax import softmax_risk_at_lam0, softmax_risk_of_runs

    task = slrlib.SLRTask(80, 10, eps=0.1)
    ov = np.array([[0.3, 0.2, 0.6, 0.1, 0.4], [0.9, 0.95, 0.0, 0.1, 0.1], [-0.5, 0.1, 0.2, 0.0, 0.3]])
    est = softmax_risk_of_runs(*ov.T, 0.0, task, jax.random.key(21), n_samples=50_000)
    closed = np.array([softmax_risk_at_lam0(*o, task) for o in ov])
    z = (est.mean - closed) / est.stderr
    assert est.mean.shape == (3,) and np.max(np.abs(z)) < 4.5, np.round(z, 2)
    with pytest.raises(ValueError, match="1-d arrays of one length"):
        softmax_risk_of_runs(ov[:, 0], ov[:2, 1], ov[:, 2], ov[:, 3], ov[:, 4], 1.0, task, jax.random.key(0))


def test_softmax_training_figure_small_and_its_heldout_risk(tmp_path):
    """A small ``softmax_training``: one initialisation for all arms, the schedules, the table; and the
    held-out risk that sgd logs at step 0 for softmax is the softmax risk of the initial pair (reduced
    Monte Carlo from the logged overlaps; held-out standard error from the per-sequence variance
    that the Monte Carlo estimates)."""
    from slrlib.book.ch14_softmax import softmax_risk_from_overlaps
    from slrlib.book.figures.softmax import TRAINING_ARMS, compute_softmax_training, softmax_training_table
    from slrlib.book.plots.softmax import plot_softmax_training

    data = compute_softmax_training(n_runs=3, n_steps=1000, log_every=500, n_risk=2000)
    assert set(data.arms) == set(TRAINING_ARMS)
    k0 = [a.kappa[:, 0] for a in data.arms.values()]
    for k in k0[1:]:  # one initialisation for every arm
        np.testing.assert_array_equal(k, k0[0])
    np.testing.assert_allclose(data.arms["softmax_const"].lam, 2.0)
    assert data.arms["softmax"].lam[-1] < 2.0
    tab = softmax_training_table(data)
    assert len({len(v) for v in tab.values()}) == 1 and len(tab["arm"]) == 3 * 3 * 3
    assert plot_softmax_training(data) is not None
    from slrlib import figures
    import slrlib.book.figures  # noqa: F401  (registration)

    assert "softmax_training" in figures.names()
    figures.write_csv(tab, tmp_path / "softmax_training.csv")
    assert len((tmp_path / "softmax_training.csv").read_text().splitlines()) == 1 + 27

    a = data.arms["softmax_const"]
    n_test = 1000  # Figure 5's held-out size
    z = []
    for r in range(3):
        ov = [float(np.clip(x[r, 0], -1, 1)) for x in (a.kappa, a.nu, a.theta, a.eta, a.rho)]
        mc = softmax_risk_from_overlaps(*ov, 2.0, data.task, jax.random.key(30 + r), n_samples=40_000)
        se_test = float(mc.stderr) * math.sqrt(mc.n / n_test)
        z.append((a.heldout[r, 0] - float(mc.mean)) / math.hypot(se_test, float(mc.stderr)))
    assert np.max(np.abs(z)) < 4.5, np.round(z, 2)
    # and it is not the erf predictor's: erf's logged risk at step 0 (same held-out set) is far larger
    assert np.all(data.arms["erf"].heldout[:, 0] > 2 * a.heldout[:, 0])
