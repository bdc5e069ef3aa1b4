"""slrlib.book.related_work against independent computations: the projection-only posterior against
Gaussian densities from SciPy and, at gamma = 1, against the Bayes posterior on full tokens; the excess
risks against chapter 4's Rao-Blackwellised estimator (a different statistic of other draws)."""

import jax
import numpy as np
import pytest
from scipy import stats

from slrlib import SLRTask, bayes_posterior
from slrlib.book.ch04_bayes import bayes_excess_risk
from slrlib.book.related_work import parameter_counts, posterior_excess_risks, projection_posterior


def test_projection_posterior_is_bayes_rule_with_the_two_gaussian_densities():
    task = SLRTask(d=20, L=5, gamma=np.sqrt(0.5), probs=[0.1, 0.2, 0.3, 0.25, 0.15])
    t = np.random.default_rng(0).normal(size=(7, 5)) * 2
    like = stats.norm.pdf(t, task.q, task.gamma) / stats.norm.pdf(t)
    expected = np.asarray(task.pi) * like
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(projection_posterior(t, task), expected, rtol=1e-12, atol=1e-15)


def test_projection_posterior_is_the_bayes_posterior_when_gamma_is_one():
    # At gamma = 1 the Bayes scores do not read the norms, so the projections are sufficient.
    task = SLRTask(d=30, L=6, gamma=1.0)
    k, v = task.oracle_directions(jax.random.key(0))
    X, _, _ = task.sample(jax.random.key(1), 50, k, v)
    np.testing.assert_allclose(projection_posterior(X @ k, task), bayes_posterior(X, k, task),
                               rtol=1e-10, atol=1e-13)


def test_bayes_excess_agrees_with_chapter_4_and_projections_lose_at_small_d():
    task = SLRTask(d=12, L=5, gamma=np.sqrt(0.5))
    est = posterior_excess_risks(task, jax.random.key(2), n_samples=100_000)
    ref = bayes_excess_risk(task, jax.random.key(3), n_samples=100_000)
    z = (est.mean[0] - ref.mean) / np.hypot(est.stderr[0], ref.stderr)
    assert abs(z) < 4.5, z
    # The norms carry information at gamma^2 = 1/2: dropping them costs risk (paired difference).
    assert est.mean[2] / est.stderr[2] > 4.5
    np.testing.assert_allclose(est.mean[2], est.mean[1] - est.mean[0], rtol=1e-12)


def test_parameter_counts_and_bad_input():
    c = parameter_counts(400, 10, 20)
    assert c["erf attention"] == 800 == parameter_counts(400, 1000, 20)["erf attention"]
    assert c["dense perceptron"] == 400 * 10 * 20 + 20
    with pytest.raises(ValueError, match="width"):
        parameter_counts(400, 10, 0)
    with pytest.raises(ValueError, match="t must have shape"):
        projection_posterior(np.zeros(3), SLRTask(d=4, L=5))
