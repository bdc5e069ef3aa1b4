"""slrlib.core.montecarlo: Monte Carlo means of statistics of the task."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from slrlib import SLRTask, erf_attention, monte_carlo_risk, null_risk
from slrlib.core.montecarlo import comparison_table, default_batch_size, mean_with_stderr, monte_carlo_mean
from slrlib.book.ch02_selectors import relevant_token

N = 20_000
BATCH = 5_000


@pytest.fixture(scope="module")
def task(small_task):
    return small_task  # conftest: SLRTask(d=6, L=4, gamma=0.8, eps=0.3)


@pytest.fixture(scope="module")
def dirs(small_directions):
    return small_directions


def test_mean_with_stderr_matches_numpy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1000, 3))
    est = mean_with_stderr(x)
    np.testing.assert_allclose(est.mean, x.mean(0))
    np.testing.assert_allclose(est.stderr, x.std(0, ddof=1) / math.sqrt(1000))
    assert est.n == 1000
    # 0/1 values: the binomial standard error, up to sqrt(n / (n - 1)).
    b = rng.random(5000) < 0.3
    e = mean_with_stderr(b)
    p = b.mean()
    assert e.stderr == pytest.approx(math.sqrt(p * (1 - p) / 5000) * math.sqrt(5000 / 4999))
    with pytest.raises(ValueError, match="at least 2"):
        mean_with_stderr(np.ones(1))
    with pytest.raises(ValueError, match="finite"):
        mean_with_stderr(np.array([1.0, np.nan]))


@pytest.mark.roundoff
def test_same_samples_as_monte_carlo_risk(task, dirs):
    k_star, v_star = dirs
    predict = lambda X: erf_attention(X, k_star, v_star, 0.4)  # noqa: E731
    risk = monte_carlo_risk(predict, task, k_star, v_star, jax.random.key(1), n_samples=N, batch_size=BATCH)
    mean = monte_carlo_mean(
        lambda s: (s.y - predict(s.X)) ** 2, task, k_star, v_star, jax.random.key(1),
        n_samples=N, batch_size=BATCH,
    )
    np.testing.assert_allclose(mean.mean, risk.mean, rtol=1e-12)
    np.testing.assert_allclose(mean.stderr, risk.stderr, rtol=1e-9)
    assert mean.n == risk.n == N


def test_moments_of_the_task(task, dirs, record_z):
    k_star, v_star = dirs
    est = monte_carlo_mean(
        lambda s: {
            "proj": relevant_token(s.X, s.J0) @ k_star,
            "y2": s.y**2,
            "pair": jnp.stack([s.y, s.J0], -1),
        },
        task, k_star, v_star, jax.random.key(2), n_samples=N, batch_size=BATCH,
    )
    assert set(est) == {"proj", "y2", "pair"}
    assert est["pair"].mean.shape == (2,)
    mean_j0 = (task.L - 1) / 2  # J0 uniform on {0, ..., L - 1}
    for name, exact in (("proj", task.q), ("y2", null_risk(task)), ("pair", np.array([0.0, mean_j0]))):
        z = est[name].z_score(exact)
        record_z(z, f"monte_carlo_mean {name}")
        assert np.all(np.abs(z) < 5), (name, est[name])


@pytest.mark.roundoff
def test_deterministic_and_uneven_batches(task, dirs):
    k_star, v_star = dirs
    stat = lambda s: s.y  # noqa: E731
    a = monte_carlo_mean(stat, task, k_star, v_star, jax.random.key(9), n_samples=N, batch_size=BATCH)
    b = monte_carlo_mean(stat, task, k_star, v_star, jax.random.key(9), n_samples=N, batch_size=BATCH)
    assert a.mean == b.mean and a.stderr == b.stderr
    # Merging batches gives the same mean and variance as one pass over the same draws.
    draws = np.concatenate(
        [np.asarray(task.sample(kk, BATCH, k_star, v_star).y) for kk in jax.random.split(jax.random.key(9), N // BATCH)]
    )
    one = mean_with_stderr(draws)
    np.testing.assert_allclose(a.mean, one.mean, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(a.stderr, one.stderr, rtol=1e-10)


def test_default_batch_size():
    assert default_batch_size(SLRTask(d=400, L=10), 5000) == 1000
    assert default_batch_size(SLRTask(d=4, L=2), 10) == 10


def test_bad_input(task, dirs):
    k_star, v_star = dirs
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="statistic"):
        monte_carlo_mean("y", task, k_star, v_star, key, n_samples=10)
    with pytest.raises(ValueError, match="task"):
        monte_carlo_mean(lambda s: s.y, None, k_star, v_star, key, n_samples=10)
    with pytest.raises(ValueError, match="n_samples"):
        monte_carlo_mean(lambda s: s.y, task, k_star, v_star, key, n_samples=1)
    with pytest.raises(ValueError, match="shape"):
        monte_carlo_mean(lambda s: s.y.sum(), task, k_star, v_star, key, n_samples=BATCH, batch_size=BATCH)
    with pytest.raises(ValueError, match="non-finite"):
        monte_carlo_mean(lambda s: s.y / 0.0, task, k_star, v_star, key, n_samples=BATCH, batch_size=BATCH)
    with pytest.raises(ValueError, match="orthogonal"):
        monte_carlo_mean(lambda s: s.y, task, k_star, k_star, key, n_samples=10)


def test_comparison_table():
    est = mean_with_stderr(np.array([[1.0, 2.0], [3.0, 4.0], [2.0, 3.0]]))  # means 2, 3; SE 1/sqrt(3)
    text = comparison_table({"a": (est, [2.0, 2.0]), "b": (mean_with_stderr(np.array([0.0, 2.0])), 1.0)})
    lines = text.splitlines()
    assert lines[0].split() == ["quantity", "exact", "Monte", "Carlo", "std.", "error", "gap", "(SE)"]
    assert lines[2].split()[0] == "a[0]" and lines[2].split()[-1] == "+0.00"
    assert lines[3].split()[0] == "a[1]" and float(lines[3].split()[-1]) == pytest.approx(math.sqrt(3), abs=0.01)
    assert lines[4].split()[0] == "b" and lines[4].split()[-1] == "+0.00"
    constant = comparison_table({"c": (mean_with_stderr(np.ones(4)), 1.0)}).splitlines()[2].split()
    assert constant == ["c", "1", "1", "0", "-"]
