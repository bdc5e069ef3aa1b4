"""Predictors against direct, independent computations."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special, stats

from helpers import random_unit
from slrlib import (
    SLRTask,
    bayes_posterior,
    bayes_predictor,
    best_linear_weights,
    erf_attention,
    hard_oracle,
    linear_predictor,
    multi_head_erf_attention,
    softmax_attention,
)
from slrlib.core.predictors import attention_cls, attention_layer, bayes_scores


@pytest.fixture(scope="module")
def data():
    task = SLRTask(d=5, L=6, gamma=0.8, eps=0.1)
    k_star, v_star = task.oracle_directions(jax.random.key(0))
    X, y, J0 = task.sample(jax.random.key(1), 64, k_star, v_star)
    return task, k_star, v_star, X, y, J0


@pytest.mark.roundoff
def test_predictors_against_loops(data):
    task, k_star, v_star, X, _, _ = data
    Xn, ks, vs = np.asarray(X), np.asarray(k_star), np.asarray(v_star)
    lam = 1.3
    for i in range(3):
        scores = Xn[i] @ ks
        vals = Xn[i] @ vs
        assert float(hard_oracle(X[i], k_star, v_star)) == pytest.approx(vals[np.argmax(scores)])
        w = np.exp(lam * scores - np.max(lam * scores))
        assert float(softmax_attention(X[i], k_star, v_star, lam)) == pytest.approx(
            np.sum(w / w.sum() * vals), abs=1e-12
        )
        assert float(erf_attention(X[i], k_star, v_star, lam)) == pytest.approx(
            np.sum(special.erf(lam * scores) * vals), abs=1e-12
        )
    W = np.asarray(jax.random.normal(jax.random.key(2), (task.L, task.d)))
    np.testing.assert_allclose(linear_predictor(X, W), np.einsum("nld,ld->n", Xn, W), atol=1e-12)


@pytest.mark.roundoff
def test_broadcasting_over_parameters(data):
    task, k_star, v_star, X, _, _ = data
    K = random_unit(jax.random.key(3), (7, task.d))
    V = random_unit(jax.random.key(4), (7, task.d))
    out = erf_attention(X[:, None], K, V, 0.5)
    assert out.shape == (X.shape[0], 7)
    np.testing.assert_allclose(out[:, 2], erf_attention(X, K[2], V[2], 0.5), atol=1e-14)


def test_softmax_tends_to_hard_oracle(data):
    _, k_star, v_star, X, _, _ = data
    np.testing.assert_allclose(
        softmax_attention(X, k_star, v_star, 1e4), hard_oracle(X, k_star, v_star), atol=1e-8
    )


def test_bayes_posterior_against_gaussian_densities(data):
    # Bayes' rule evaluated directly with scipy's multivariate normal densities.
    task = SLRTask(d=3, L=4, gamma=0.6, eps=0.0, probs=(0.1, 0.2, 0.3, 0.4))
    k_star, v_star = task.oracle_directions(jax.random.key(5))
    X, _, _ = task.sample(jax.random.key(6), 20, k_star, v_star)
    Xn = np.asarray(X)
    rel = stats.multivariate_normal(mean=task.q * np.asarray(k_star), cov=task.gamma**2 * np.eye(3))
    noise = stats.multivariate_normal(mean=np.zeros(3), cov=np.eye(3))
    post = np.asarray(bayes_posterior(X, k_star, task))
    for i in range(Xn.shape[0]):
        logp = np.array(
            [
                math.log(task.pi[j])
                + rel.logpdf(Xn[i, j])
                + sum(noise.logpdf(Xn[i, m]) for m in range(task.L) if m != j)
                for j in range(task.L)
            ]
        )
        expected = np.exp(logp - special.logsumexp(logp))
        np.testing.assert_allclose(post[i], expected, atol=1e-12)
    assert np.allclose(post.sum(-1), 1.0)


def test_bayes_is_softmax_attention_when_gamma_is_one():
    task = SLRTask(d=8, L=5, gamma=1.0)
    k_star, v_star = task.oracle_directions(jax.random.key(7))
    X, _, _ = task.sample(jax.random.key(8), 100, k_star, v_star)
    np.testing.assert_allclose(
        bayes_predictor(X, k_star, v_star, task),
        softmax_attention(X, k_star, v_star, task.q),
        atol=1e-12,
    )


def test_bayes_posterior_is_calibrated():
    # P(J0 = l | X) = p_l(X): the mean posterior mass on the true position equals the
    # mean of sum_l p_l^2 (both are E[P(J0 = J0' | X)] for J0' ~ p(X)).
    task = SLRTask(d=4, L=5, gamma=math.sqrt(0.5))
    k_star, v_star = task.oracle_directions(jax.random.key(9))
    X, _, J0 = task.sample(jax.random.key(10), 200_000, k_star, v_star)
    post = np.asarray(bayes_posterior(X, k_star, task))
    on_true = post[np.arange(post.shape[0]), np.asarray(J0)]
    sq = (post**2).sum(-1)
    diff = on_true - sq
    assert abs(diff.mean()) < 4.5 * diff.std() / math.sqrt(diff.size)


def test_attention_cls_reduces_to_softmax_attention(data):
    task, k_star, v_star, X, _, _ = data
    x_cls = jax.random.normal(jax.random.key(11), (task.d,))
    Q = 0.4 * x_cls[:, None]
    lam = 1.7
    out = attention_cls(X, x_cls, Q, k_star[:, None], v_star[:, None], jnp.ones((1, 1)), lam)[..., 0]
    temp = lam * float(x_cls @ Q[:, 0])
    np.testing.assert_allclose(out, softmax_attention(X, k_star, v_star, temp), atol=1e-12)
    # the [CLS] row of the full layer over (x_cls, X) with x_cls among the keys differs only
    # by the weight on x_cls itself; with keys restricted to X it is attention_cls.
    full = attention_layer(X, Q, k_star[:, None], v_star[:, None], jnp.ones((1, 1)), lam)
    assert full.shape == (X.shape[0], task.L, 1)


def test_best_linear_weights_shape_and_direction():
    task = SLRTask(d=4, L=3, gamma=0.5, probs=(0.5, 0.25, 0.25))
    k_star, v_star = task.oracle_directions(jax.random.key(12))
    W = best_linear_weights(task, v_star)
    assert W.shape == (3, 4)
    np.testing.assert_allclose(W @ k_star, 0, atol=1e-14)
    coef = np.asarray(W @ v_star)
    assert coef[0] > coef[1] == pytest.approx(coef[2])


# --------------------------------------------------------------------------- bad input (issue 42)
def _mismatched_batches(data):
    """Directions whose batch shapes do not broadcast with each other or with that of X (64,)."""
    task, k_star, v_star, X, _, _ = data
    k3 = random_unit(jax.random.key(20), (3, task.d))
    v4 = random_unit(jax.random.key(21), (4, task.d))
    K3, V4 = k3[:, None].repeat(2, axis=1), v4[:, None].repeat(2, axis=1)  # (3, H=2, d), (4, 2, d)
    return task, k_star, v_star, X, k3, v4, K3, V4


@pytest.mark.parametrize(
    "call, message",
    [
        # X (64,) against k (3,) and v (4,): JAX alone raised an einsum label error
        (lambda t, ks, vs, X, k3, v4, K3, V4: erf_attention(X, k3, v4, 0.5), r"X \(64,\), k \(3,\), v \(4,\)"),
        (lambda t, ks, vs, X, k3, v4, K3, V4: softmax_attention(X, k3, vs, 0.5), r"X \(64,\), k \(3,\), v \(\)"),
        # one sequence, k (3,) against v (4,): JAX alone raised a TypeError about `mul`
        (lambda t, ks, vs, X, k3, v4, K3, V4: erf_attention(X[0], k3, v4, 0.5), r"X \(\), k \(3,\), v \(4,\)"),
        (lambda t, ks, vs, X, k3, v4, K3, V4: softmax_attention(X[0], k3, v4, 0.5), r"X \(\), k \(3,\), v \(4,\)"),
        (lambda t, ks, vs, X, k3, v4, K3, V4: hard_oracle(X[0], k3, v4), r"X \(\), k_star \(3,\), v_star \(4,\)"),
        (lambda t, ks, vs, X, k3, v4, K3, V4: multi_head_erf_attention(X[0], K3, V4, 0.5), r"X \(\), K \(3,\), V \(4,\)"),
        (lambda t, ks, vs, X, k3, v4, K3, V4: multi_head_erf_attention(X, K3, K3, 0.5), r"X \(64,\), K \(3,\), V \(3,\)"),
        (lambda t, ks, vs, X, k3, v4, K3, V4: bayes_predictor(X[0], k3, v4, t), r"X \(\), k_star \(3,\), v_star \(4,\)"),
        (lambda t, ks, vs, X, k3, v4, K3, V4: bayes_scores(X, k3, t), r"X \(64,\), k_star \(3,\)"),
        (lambda t, ks, vs, X, k3, v4, K3, V4: bayes_posterior(X, k3, t), r"X \(64,\), k_star \(3,\)"),
        # shapes are known under jit: the same message at trace time
        (lambda t, ks, vs, X, k3, v4, K3, V4: jax.jit(erf_attention)(X[0], k3, v4, 0.5), r"X \(\), k \(3,\), v \(4,\)"),
    ],
    ids=["erf-X-k-v", "softmax-X-k", "erf-k-v", "softmax-k-v", "hard_oracle-k-v", "multi-K-V", "multi-X-K",
         "bayes_predictor-k-v", "bayes_scores-X-k", "bayes_posterior-X-k", "erf-jit"],
)
def test_batch_shapes_that_do_not_broadcast_are_named(data, call, message):
    """k of shape (3, d) with v of shape (4, d), or k's batch shape against X's: a ValueError naming
    X and the directions with their batch shapes, not JAX's TypeError about `mul` or einsum error."""
    with pytest.raises(ValueError, match=rf"^the batch shapes \(leading axes\) of {message} do not broadcast together"):
        call(*_mismatched_batches(data))


def test_batch_shapes_that_broadcast_still_work(data):
    task, k_star, v_star, X, k3, v4, K3, V4 = _mismatched_batches(data)
    assert erf_attention(X[:, None], k3, v_star, 0.5).shape == (64, 3)
    assert hard_oracle(X[0], k3[:, None], v4[None]).shape == (3, 4)
    assert multi_head_erf_attention(X[:, None], K3, K3, 0.5).shape == (64, 3)
    assert bayes_predictor(X[:, None], k3, v_star, task).shape == (64, 3)


_PREDICTORS = {
    "hard_oracle": lambda t, X, ks, vs: hard_oracle(X, ks, vs),
    "softmax_attention": lambda t, X, ks, vs: softmax_attention(X, ks, vs, 0.5),
    "erf_attention": lambda t, X, ks, vs: erf_attention(X, ks, vs, 0.5),
    "multi_head_erf_attention": lambda t, X, ks, vs: multi_head_erf_attention(X, ks[None], vs[None], 0.5),
    "linear_predictor": lambda t, X, ks, vs: linear_predictor(X, best_linear_weights(t, vs)),
    "bayes_predictor": lambda t, X, ks, vs: bayes_predictor(X, ks, vs, t),
    "bayes_posterior": lambda t, X, ks, vs: bayes_posterior(X, ks, t),
    "attention_layer": lambda t, X, ks, vs: attention_layer(X, ks[:, None], ks[:, None], vs[:, None],
                                                            jnp.ones((1, 1)), 0.5),
}


@pytest.mark.parametrize("name", sorted(_PREDICTORS))
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_tokens_are_refused(data, name, bad):
    """NaN (or inf) in X made every predictor return NaN silently: now a ValueError naming X, the
    number of bad entries and the first one."""
    task, k_star, v_star, X, _, _ = data
    predict = _PREDICTORS[name]
    assert np.all(np.isfinite(np.asarray(predict(task, X, k_star, v_star))))  # valid X works
    Xbad = X.at[2, 3, 1].set(bad).at[5, 0, 4].set(bad)
    with pytest.raises(ValueError, match=rf"^X must be finite \(no NaN or inf\), got 2 non-finite entries in X "
                                         rf"of shape \(64, 6, 5\), the first X\[2, 3, 1\] = {bad}$"):
        predict(task, Xbad, k_star, v_star)
    with pytest.raises(ValueError, match=r"^X must be finite .* got 1 non-finite entry in X of shape \(6, 5\)"):
        predict(task, _with(X[0], (0, 0), bad), k_star, v_star)  # a NumPy array, one sequence


def _with(x, index, value):
    x = np.array(x)
    x[index] = value
    return x


def test_non_finite_tokens_under_jit(data):
    """Under jit the values are unknown: no check unless wrapped in slrlib.checked, which raises at run time."""
    import slrlib

    task, k_star, v_star, X, _, _ = data
    Xbad = X.at[0, 0, 0].set(jnp.nan)
    plain = jax.jit(erf_attention)
    assert np.isnan(float(plain(Xbad, k_star, v_star, 0.5)[0]))  # the documented gap, as for lam
    assert np.all(np.isfinite(np.asarray(plain(X, k_star, v_star, 0.5))))
    checked = slrlib.checked(jax.jit(erf_attention))
    np.testing.assert_allclose(checked(X, k_star, v_star, 0.5), erf_attention(X, k_star, v_star, 0.5), atol=1e-14)
    with pytest.raises(ValueError, match=r"^X must be finite \(no NaN or inf\), got 1 non-finite"):
        checked(Xbad, k_star, v_star, 0.5)
