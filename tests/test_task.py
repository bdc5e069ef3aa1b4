"""The task's sampler: determinism and moments against the model of Section 2."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from slrlib import SLRTask


def test_same_key_same_sample_different_key_different_sample(small_task, small_directions):
    k_star, v_star = small_directions
    a = small_task.sample(jax.random.key(0), 50, k_star, v_star)
    b = small_task.sample(jax.random.key(0), 50, k_star, v_star)
    c = small_task.sample(jax.random.key(1), 50, k_star, v_star)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a.X, c.X)
    d1 = small_task.oracle_directions(jax.random.key(9))
    d2 = small_task.oracle_directions(jax.random.key(9))
    np.testing.assert_array_equal(d1[0], d2[0])
    # legacy uint32 keys are accepted too
    small_task.sample(jax.random.PRNGKey(0), 3, k_star, v_star)


def test_oracle_directions_satisfy_assumption_1():
    for d in (2, 3, 50, 400):
        k, v = SLRTask(d=d, L=3).oracle_directions(jax.random.key(d))
        assert k.shape == v.shape == (d,)
        assert abs(float(jnp.linalg.norm(k)) - 1) < 1e-14
        assert abs(float(jnp.linalg.norm(v)) - 1) < 1e-14
        assert abs(float(k @ v)) < 1e-14


def test_oracle_direction_k_is_uniform_on_the_sphere():
    # E[k k^T] = I / d for the uniform law: check the diagonal by Monte Carlo.
    task = SLRTask(d=3, L=2)
    # The public method over 3000 keys at once (vmap: the same draws as 3000 calls, one dispatch).
    ks = jax.vmap(lambda key: task.oracle_directions(key)[0])(jax.random.split(jax.random.key(0), 3000))
    second = np.asarray(jnp.mean(ks**2, axis=0))
    se = np.asarray(jnp.std(ks**2, axis=0)) / math.sqrt(ks.shape[0])
    assert np.all(np.abs(second - 1 / 3) < 4.5 * se)


@pytest.mark.parametrize("probs", [None, (0.1, 0.6, 0.0, 0.3)])
def test_sample_moments(probs):
    task = SLRTask(d=5, L=4, gamma=0.7, eps=0.4, probs=probs)
    k_star, v_star = task.oracle_directions(jax.random.key(3))
    n = 200_000
    X, y, J0 = task.sample(jax.random.key(4), n, k_star, v_star)
    assert X.shape == (n, 4, 5) and y.shape == (n,) and J0.shape == (n,)
    # Law of J0: frequencies within 4.5 binomial standard errors of pi.
    pi = np.asarray(task.pi)
    freq = np.bincount(np.asarray(J0), minlength=task.L) / n
    se = np.sqrt(np.maximum(pi * (1 - pi), 1e-12) / n)
    assert np.all(np.abs(freq - pi) <= 4.5 * se)
    assert np.all(freq[pi == 0] == 0)
    rows = np.arange(n)
    X = np.asarray(X)
    relevant = X[rows, np.asarray(J0)]
    mask = np.ones((n, task.L), bool)
    mask[rows, np.asarray(J0)] = False
    noise = X[mask]
    ks, vs = np.asarray(k_star), np.asarray(v_star)
    # Relevant token: mean q k*, covariance gamma^2 I.
    proj = relevant @ ks
    assert abs(proj.mean() - task.q) < 4.5 * proj.std() / math.sqrt(n)
    # Gaussian sample moments: SE of a variance s^2 is s^2 sqrt(2/n); of a covariance
    # entry s_i s_j sqrt((1 + r_ij^2)/n), i.e. s^2/sqrt(n) off the diagonal here.
    g2 = task.gamma**2
    assert abs(proj.var() - g2) < 4.5 * g2 * math.sqrt(2 / n)
    centred = relevant - task.q * ks
    cov = centred.T @ centred / n
    se_cov = g2 / math.sqrt(n) * (1 + (math.sqrt(2) - 1) * np.eye(5))
    assert np.all(np.abs(cov - g2 * np.eye(5)) < 4.5 * se_cov)
    # Other tokens: standard normal.
    assert np.all(np.abs(noise.mean(0)) < 4.5 / math.sqrt(noise.shape[0]))
    m = noise.shape[0]
    se_noise = (1 + (math.sqrt(2) - 1) * np.eye(5)) / math.sqrt(m)
    assert np.all(np.abs(noise.T @ noise / m - np.eye(5)) < 4.5 * se_noise)
    # Output: y = X_{J0}^T v* + noise of variance eps^2.
    resid = np.asarray(y) - relevant @ vs
    assert abs(resid.var() - task.eps**2) < 4.5 * task.eps**2 * math.sqrt(2 / n)
    assert abs(np.corrcoef(resid, relevant @ vs)[0, 1]) < 4.5 / math.sqrt(n)
    # E[Y^2] = gamma^2 + eps^2.
    y2 = np.asarray(y) ** 2
    assert abs(y2.mean() - (task.gamma**2 + task.eps**2)) < 4.5 * y2.std() / math.sqrt(n)


def test_equal_expected_norms_at_gamma_squared_half():
    # Section 2: with gamma^2 = 1/2 every token has expected squared norm d.
    task = SLRTask(d=20, L=3)
    k_star, v_star = task.oracle_directions(jax.random.key(0))
    X, _, J0 = task.sample(jax.random.key(1), 50_000, k_star, v_star)
    sq = np.asarray(jnp.sum(X**2, axis=-1))
    rel = sq[np.arange(sq.shape[0]), np.asarray(J0)]
    assert abs(rel.mean() - task.d) < 4.5 * rel.std() / math.sqrt(rel.size)


def test_task_is_immutable_and_hashable():
    task = SLRTask(d=4, L=3, probs=[0.2, 0.3, 0.5])
    assert task.probs == (0.2, 0.3, 0.5)
    with pytest.raises(Exception):
        task.d = 5
    assert hash(task) == hash(SLRTask(d=4, L=3, probs=(0.2, 0.3, 0.5)))
    assert task.replace(L=3, probs=None).is_uniform
    assert SLRTask(d=4, L=3).gamma == pytest.approx(math.sqrt(0.5))


def test_sample_kernels_are_the_task_samplers():
    """The public traced samplers give the draws of SLRTask.sample and MultiLocationTask.sample,
    also under jax.vmap over keys (how the training loops use them)."""
    from slrlib.core.task import MultiLocationTask, multi_sample_kernel, sample_kernel

    task = SLRTask(d=6, L=4, gamma=0.8, eps=0.3)
    ks, vs = task.oracle_directions(jax.random.key(0))
    keys = jax.random.split(jax.random.key(1), 3)
    batched = jax.vmap(lambda k: sample_kernel(k, 5, task.L, task.d, ks, vs, task.gamma, task.eps,
                                               jnp.log(task.pi)))(keys)
    for i, key in enumerate(keys):
        one = task.sample(key, 5, ks, vs)
        np.testing.assert_allclose(batched.X[i], one.X, rtol=0, atol=1e-14)
        np.testing.assert_allclose(batched.y[i], one.y, rtol=0, atol=1e-14)
        np.testing.assert_array_equal(batched.J0[i], one.J0)
    multi = MultiLocationTask(d=6, L=4, M=2)
    Ks, Vs = multi.oracle_directions(jax.random.key(2))
    a = multi_sample_kernel(jax.random.key(3), 5, multi.L, multi.d, Ks, Vs, multi.gamma, multi.eps)
    b = multi.sample(jax.random.key(3), 5, Ks, Vs)
    np.testing.assert_array_equal(a.J, b.J)
    np.testing.assert_allclose(a.X, b.X, rtol=0, atol=1e-14)
