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
    softmax_attention,
)
from slrlib.core.predictors import attention_cls, attention_layer


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
