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
from slrlib.core.geometry import uniform_directions
from slrlib.core.predictors import softmax_attention
from slrlib.training import sgd as S


def _unit(x):
    return x / jnp.linalg.norm(x, axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def small():
    task = slrlib.SLRTask(12, 4, eps=0.1)
    ks, vs = task.oracle_directions(jax.random.key(0))
    K = _unit(0.6 * _unit(jax.random.normal(jax.random.key(1), (1, 12))) + 0.5 * ks)
    V = _unit(jax.random.normal(jax.random.key(2), (1, 12)) + 0.8 * vs)
    return task, ks, vs, K, V


@pytest.fixture(scope="module")
def batch(small):
    task, ks, vs, K, V = small
    X, y, _ = task.sample(jax.random.key(3), 7, ks, vs)
    return X, y


@pytest.mark.roundoff
def test_softmax_batch_loss_is_the_mean_squared_error_of_softmax_attention(small, batch):
    task, ks, vs, K, V = small
    X, y = batch
    lam = 1.7
    ref = jnp.mean(jnp.square(softmax_attention(X, K[0], V[0], lam) - y))
    got = S.batch_loss(K, V, X, y, lam, attention="softmax")
    np.testing.assert_allclose(got, ref, rtol=1e-13)
    # and it is not the erf loss
    assert abs(float(S.batch_loss(K, V, X, y, lam)) - float(got)) > 1e-3


@pytest.mark.parametrize("lam", [0.3, 2.5])
def test_softmax_batch_gradient_matches_finite_differences(small, batch, lam):
    """Central differences of the batch loss in a few random directions (the loss accepts only unit
    vectors, so the differences go through the unchecked loss): error O(h^2) + round-off/h."""
    task, ks, vs, K, V = small
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
def test_softmax_coefficients_are_the_gradient_in_the_projections(small, H):
    """The closed-form coefficients (module docstring) against jax.grad of the loss written in the
    projections, with the softmax spelt out (exp over a sum of exp)."""
    task, ks, vs, _, _ = small
    B, L, D, lam = 5, task.L, 6, 1.3
    a = jax.random.normal(jax.random.key(5), (B, L, D))
    y = jax.random.normal(jax.random.key(6), (B,))
    Kc = _unit(jax.random.normal(jax.random.key(7), (H, D)))
    Vc = _unit(jax.random.normal(jax.random.key(8), (H, D)))

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
def test_softmax_exact_batch_gradient_equals_autodiff_on_the_completed_batch(small):
    """Completing the drawn coordinates with an explicit orthogonal part gives a real batch; jax.grad
    of its softmax batch loss is the span part plus sum c * w."""
    task, ks, vs, K, V = small
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


def _moment_z_scores(x, y):
    """z-scores of the differences of means and of second moments of two samples (columns)."""
    m = x.shape[1]
    pairs = [(i, j) for i in range(m) for j in range(i, m)]
    fx = [x[:, i] for i in range(m)] + [x[:, i] * x[:, j] for i, j in pairs]
    fy = [y[:, i] for i in range(m)] + [y[:, i] * y[:, j] for i, j in pairs]
    return np.asarray([(a.mean() - b.mean()) / math.sqrt(a.var() / a.size + b.var() / b.size)
                       for a, b in zip(fx, fy)])


def test_softmax_exact_sampler_has_the_law_of_the_plain_sampler(small):
    """Means and all second moments of the gradient's projections on k*, v*, k, v and a direction
    orthogonal to all of them, exact vs plain sampler, 20 000 independent draws each:
    2 vectors x 5 directions = 10 coordinates, 65 statistics, |z| < 4.5 (probability of a false
    alarm under equal laws about 4e-4)."""
    task, ks, vs, K, V = small
    n, B, lam = 20_000, 3, 2.0
    u = jax.random.normal(jax.random.key(11), (task.d,))
    Q = S._orthonormal_span(jnp.concatenate([K, V, ks[None], vs[None]]))
    U = jnp.stack([ks, vs, K[0], V[0], _unit(u - Q @ (Q.T @ u))])
    proj = {}
    for sampler, seed in (("exact", 12), ("plain", 13)):
        keys = jax.random.split(jax.random.key(seed), n)
        f = jax.jit(jax.vmap(lambda k, s=sampler: jnp.concatenate(S.sample_gradient(
            K, V, ks, vs, task, lam=lam, key=k, batch_size=B, sampler=s, attention="softmax"), axis=0)))
        proj[sampler] = np.einsum("nhd,ud->nhu", np.asarray(f(keys)), np.asarray(U)).reshape(n, -1)
    z = _moment_z_scores(proj["exact"], proj["plain"])
    assert z.size == 10 + 55
    assert np.max(np.abs(z)) < 4.5, np.round(z, 2)
    assert np.std(z) > 0.3  # independent samples: the statistics are not trivially equal
    # the law is not the erf one: the mean projection of grad_v on v* differs by many standard errors
    f_erf = jax.jit(jax.vmap(lambda k: S.sample_gradient(K, V, ks, vs, task, lam=lam, key=k, batch_size=B)[1][0]))
    g_erf = np.asarray(f_erf(jax.random.split(jax.random.key(14), n))) @ np.asarray(vs)
    g_soft = proj["exact"][:, 6]  # row 1 (grad_v), direction 1 (v*)
    se = math.sqrt(g_erf.var() / n + g_soft.var() / n)
    assert abs(g_erf.mean() - g_soft.mean()) > 10 * se


def test_softmax_sgd_logs_the_softmax_heldout_risk():
    """The held-out risk logged at step 0 is the softmax risk of the initial directions: compared with
    the reduced Monte Carlo of chapter 14 (softmax_risk), standard errors added in quadrature (the
    held-out one from the per-sequence variance that the Monte Carlo estimates)."""
    from slrlib.book.ch14_softmax import softmax_risk

    task = slrlib.SLRTask(10, 4, eps=0.1)
    ks, vs = task.oracle_directions(jax.random.key(0))
    k0, v0 = uniform_directions(jax.random.key(1), task.d, (3,))
    k0 = _unit(k0 + 1.5 * ks)  # keys with a clear signal: the risk depends on lambda
    n_test, lam = 4000, 2.0
    r = S.sgd(k0, v0, ks, vs, task, lam=lam, alpha=1e-2, n_steps=200, batch_size=5, key=jax.random.key(2),
              log_every=100, test_size=n_test, attention="softmax")
    assert r.kappa.shape == (3, 1, 1, 3)
    np.testing.assert_allclose(np.linalg.norm(r.K, axis=-1), 1.0, atol=1e-12)
    z = []
    for i in range(3):
        mc = softmax_risk(k0[i], v0[i], ks, vs, lam, task, jax.random.key(10 + i), n_samples=100_000)
        se_test = float(mc.stderr) * math.sqrt(mc.n / n_test)
        z.append((r.test_risk[i, 0] - float(mc.mean)) / math.hypot(se_test, float(mc.stderr)))
    assert np.max(np.abs(z)) < 4.5, np.round(z, 2)
    erf_run = S.sgd(k0, v0, ks, vs, task, lam=lam, alpha=1e-2, n_steps=200, batch_size=5, key=jax.random.key(2),
                    log_every=100, test_size=n_test)
    # same key, same held-out set: the erf predictor's loss is another number
    assert np.all(np.abs(r.test_risk[:, 0] - erf_run.test_risk[:, 0]) > 1e-3)


@pytest.mark.parametrize("call", ["sgd", "batch_loss", "batch_gradient", "sample_gradient"])
def test_unknown_attention_is_rejected_by_name(small, batch, call):
    task, ks, vs, K, V = small
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
