"""slrlib.book.ch02_selectors: selection rules, soft weights and exact selection accuracies.

The exact accuracies are checked against an independent integration (scipy's adaptive
quadrature on the original variable), against closed-form special cases, and against
Monte Carlo draws of the task with a tolerance from the binomial standard error.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, stats

from slrlib import SLRTask, erf_attention, softmax_attention
from slrlib.core.montecarlo import monte_carlo_mean
from slrlib.book.ch02_selectors import (
    erf_weights,
    norm_selector,
    norm_selector_accuracy,
    projection_selector,
    projection_selector_accuracy,
    relevant_token,
    softmax_weights,
    sq_norm_laws,
)

N_MC = 40_000
BATCH = 10_000


@pytest.fixture(scope="module")
def mc_task(small_task):
    # conftest's small task (d = 6): neither rule is trivially perfect or at chance.
    return small_task


@pytest.fixture(scope="module")
def mc_dirs(small_directions):
    return small_directions


@pytest.fixture(scope="module")
def mc_sample(mc_task, mc_dirs):
    return mc_task.sample(jax.random.key(8), BATCH, *mc_dirs)


# ------------------------------------------------------------------ hard rules
def test_relevant_token_picks_the_row(mc_sample):
    X, _, J0 = mc_sample
    got = np.asarray(relevant_token(X, J0))
    want = np.asarray(X)[np.arange(X.shape[0]), np.asarray(J0)]
    np.testing.assert_array_equal(got, want)


def test_relevant_token_rejects_bad_input():
    X = jnp.zeros((3, 4, 5))
    with pytest.raises(ValueError, match="J0"):
        relevant_token(X, jnp.array([0, 1]))
    with pytest.raises(ValueError, match="J0"):
        relevant_token(X, jnp.array([0, 1, 4]))
    with pytest.raises(ValueError, match="integer"):
        relevant_token(X, jnp.array([0.0, 1.0, 2.0]))


def test_selectors_on_a_hand_made_sequence():
    X = np.zeros((2, 3, 2))
    X[0] = [[1.0, 0.0], [0.0, -3.0], [2.0, 0.0]]  # largest norm: 1; largest first coord: 2
    X[1] = [[5.0, 5.0], [0.1, 0.0], [-9.0, 0.0]]  # largest norm: 2; largest first coord: 0
    np.testing.assert_array_equal(norm_selector(X), [1, 2])
    np.testing.assert_array_equal(projection_selector(X, jnp.array([1.0, 0.0])), [2, 0])
    with pytest.raises(ValueError, match="k must have shape"):
        projection_selector(X, jnp.ones(3))
    with pytest.raises(ValueError, match="X must have shape"):
        norm_selector(jnp.ones(3))


# ------------------------------------------------------------------ soft weights
def test_weights_reproduce_the_predictors(mc_sample, mc_dirs):
    X = mc_sample.X[:500]
    k_star, v_star = mc_dirs
    key = jax.random.key(3)
    k = jax.random.normal(key, (6,))
    k = k / jnp.linalg.norm(k)
    proj_v = jnp.einsum("nld,d->nl", X, v_star)
    for lam in (0.0, 0.3, 2.0):
        np.testing.assert_allclose(
            jnp.sum(erf_weights(X, k, lam) * proj_v, -1), erf_attention(X, k, v_star, lam),
            rtol=1e-12, atol=1e-12,
        )
        w = softmax_weights(X, k, lam)
        np.testing.assert_allclose(jnp.sum(w, -1), 1.0, atol=1e-13)
        np.testing.assert_allclose(
            jnp.sum(w * proj_v, -1), softmax_attention(X, k, v_star, lam), rtol=1e-12, atol=1e-12
        )
    np.testing.assert_allclose(softmax_weights(X, k, 0.0), 1.0 / 4)
    with pytest.raises(ValueError, match="lam"):
        erf_weights(X, k, -1.0)
    with pytest.raises(ValueError, match="lam"):
        softmax_weights(X, k, float("nan"))


# ------------------------------------------------------------------ laws of the norms
@pytest.mark.parametrize("d, g2", [(2, 0.5), (6, 0.64), (400, 0.5), (50, 2.0)])
def test_sq_norm_laws_moments(d, g2):
    relevant, noise = sq_norm_laws(SLRTask(d=d, L=3, gamma=math.sqrt(g2)))
    assert relevant.mean() == pytest.approx(d / 2 + g2 * d, rel=1e-12)
    assert relevant.var() == pytest.approx(2 * g2 * d + 2 * g2**2 * d, rel=1e-12)
    assert noise.mean() == pytest.approx(d, rel=1e-12)
    assert noise.var() == pytest.approx(2 * d, rel=1e-12)


def test_sq_norm_laws_against_samples(mc_task, mc_sample, record_z):
    X, _, J0 = mc_sample
    rel_sq = np.asarray(jnp.sum(relevant_token(X, J0) ** 2, -1))
    mask = np.asarray(jax.nn.one_hot(J0, mc_task.L, dtype=bool))
    noise_sq = np.asarray(jnp.sum(X**2, -1))[~mask]
    relevant, noise = sq_norm_laws(mc_task)
    # Kolmogorov-Smirnov against the exact laws (independent samples, exact cdfs).
    assert stats.kstest(rel_sq, relevant.cdf).pvalue > 1e-3
    assert stats.kstest(noise_sq[: len(rel_sq)], noise.cdf).pvalue > 1e-3
    z = (rel_sq.mean() - relevant.mean()) / (rel_sq.std(ddof=1) / math.sqrt(len(rel_sq)))
    record_z(z, "E||X_J0||^2")
    assert abs(z) < 5


# ------------------------------------------------------------------ exact accuracies
@pytest.mark.parametrize(
    "d, L, g2", [(2, 10, 0.5), (3, 4, 3.0), (6, 4, 0.64), (50, 10, 1.0), (400, 10, 0.5), (400, 2, 0.3)]
)
def test_norm_accuracy_against_adaptive_quadrature(d, L, g2):
    task = SLRTask(d=d, L=L, gamma=math.sqrt(g2))
    relevant, noise = sq_norm_laws(task)
    m, s = relevant.mean(), relevant.std()
    cuts = [0.0, max(0.0, m - 12 * s), m, m + 12 * s, np.inf]  # adaptive quadrature needs the peak
    ref = sum(
        integrate.quad(
            lambda x: relevant.pdf(x) * noise.cdf(x) ** (L - 1), a, b,
            epsabs=1e-14, epsrel=1e-13, limit=1000,
        )[0]
        for a, b in zip(cuts[:-1], cuts[1:])
        if b > a
    )
    assert norm_selector_accuracy(task) == pytest.approx(ref, abs=1e-10)


def test_norm_accuracy_special_values():
    assert norm_selector_accuracy(SLRTask(d=10, L=1)) == 1.0
    # gamma^2 = 1/2: equal mean norms, smaller spread -> slightly below chance, for any d.
    for d in (50, 400, 3200):
        acc = norm_selector_accuracy(SLRTask(d=d, L=10))
        assert 0.07 < acc < 0.1
    # A large gamma makes the relevant token the largest one.
    assert norm_selector_accuracy(SLRTask(d=400, L=10, gamma=1.0)) > 0.999
    # The probability does not depend on pi.
    assert norm_selector_accuracy(SLRTask(d=20, L=3, probs=(0.1, 0.2, 0.7))) == pytest.approx(
        norm_selector_accuracy(SLRTask(d=20, L=3))
    )


def test_projection_accuracy_closed_forms():
    for kappa, g in ((1.0, 0.7), (0.1, 0.7), (-0.2, 1.3)):
        task = SLRTask(d=40, L=2, gamma=g)
        want = stats.norm.cdf(task.q * kappa / math.sqrt(1 + g**2))
        assert projection_selector_accuracy(task, kappa) == pytest.approx(want, abs=1e-12)
    for L in (1, 3, 10):
        assert projection_selector_accuracy(SLRTask(d=40, L=L, gamma=1.0), 0.0) == pytest.approx(
            1 / L, abs=1e-12
        )
    assert projection_selector_accuracy(SLRTask(d=400, L=10)) == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError, match="kappa"):
        projection_selector_accuracy(SLRTask(d=40, L=2), 1.5)
    with pytest.raises(ValueError, match="task"):
        projection_selector_accuracy("not a task")


def test_accuracies_against_monte_carlo(mc_task, mc_dirs, record_z):
    k_star, v_star = mc_dirs
    # A direction with overlap kappa = 0.6 with k*, orthogonal part along v*.
    kappa = 0.6
    k = kappa * k_star + math.sqrt(1 - kappa**2) * v_star
    est = monte_carlo_mean(
        lambda s: {
            "norm": norm_selector(s.X) == s.J0,
            "oracle": projection_selector(s.X, k_star) == s.J0,
            "kappa": projection_selector(s.X, k) == s.J0,
        },
        mc_task, k_star, v_star, jax.random.key(11), n_samples=N_MC, batch_size=BATCH,
    )
    exact = {
        "norm": norm_selector_accuracy(mc_task),
        "oracle": projection_selector_accuracy(mc_task),
        "kappa": projection_selector_accuracy(mc_task, kappa),
    }
    for name, value in exact.items():
        z = float(est[name].z_score(value))
        record_z(z, f"selection accuracy ({name})")
        assert abs(z) < 5, (name, est[name], value)


@pytest.mark.roundoff
def test_rules_and_weights_work_under_jit_with_closed_over_arrays(mc_sample, mc_dirs):
    # Concrete arrays closed over by a jitted function must not trip the value checks.
    X, _, J0 = mc_sample
    k_star, _ = mc_dirs
    X = X[:64]
    J0 = J0[:64]

    def stats(X):
        return (relevant_token(X, J0), norm_selector(X), projection_selector(X, k_star),
                erf_weights(X, k_star, 0.3), softmax_weights(X, k_star, 0.3))

    for got, want in zip(jax.jit(stats)(X), stats(X)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ overlap and comparison helpers
@pytest.mark.parametrize("mu", [0.0, 0.5, 2.0, 6.0])
def test_density_overlap_of_two_normals(mu):
    from slrlib.book.ch02_selectors import density_overlap

    # N(0, 1) and N(mu, 1) cross at mu/2: the overlap is 2 Phi(-mu/2) (= 1 - total variation).
    got = density_overlap(stats.norm(0, 1).pdf, stats.norm(mu, 1).pdf, -30.0, 30.0, points=[mu / 2])
    assert got == pytest.approx(2 * stats.norm.cdf(-mu / 2), abs=1e-9)


def test_density_overlap_rejects_bad_input():
    from slrlib.book.ch02_selectors import density_overlap

    with pytest.raises(ValueError, match="callables"):
        density_overlap(1.0, stats.norm.pdf, 0, 1)
    with pytest.raises(ValueError, match="lower must be < upper"):
        density_overlap(stats.norm.pdf, stats.norm.pdf, 1.0, 0.0)


def test_compare_monte_carlo_table_and_arrays():
    from slrlib.core.montecarlo import MonteCarloEstimate
    from slrlib.book.ch02_selectors import compare_monte_carlo

    a = MonteCarloEstimate(mean=np.float64(1.02), stderr=np.float64(0.01), n=100)
    b = MonteCarloEstimate(mean=np.array([0.5, 2.0]), stderr=np.array([0.1, 0.0]), n=100)
    c = compare_monte_carlo({"a": (a, 1.0), "b": (b, [0.3, 2.0])}, digits=4)
    assert c.names == ("a", "b[1]", "b[2]")
    np.testing.assert_array_equal(c.mean, [1.02, 0.5, 2.0])
    np.testing.assert_array_equal(c.stderr, [0.01, 0.1, 0.0])
    np.testing.assert_array_equal(c.exact, [1.0, 0.3, 2.0])
    assert c.table.headers == ["quantity", "exact", "Monte Carlo ± SE", "z"]
    assert c.table.cells[0] == ["a", "1", "1.02 ± 0.01", "+2.00"]
    assert c.table.cells[1][-1] == "+2.00" and c.table.cells[2][-1] == "–"
    with pytest.raises(ValueError, match="mean and .stderr|\\.mean"):
        compare_monte_carlo({"x": (1.0, 1.0)})
