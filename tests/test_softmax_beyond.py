"""Softmax attention on an equal footing (slrlib.book.ch14_softmax, figure ``beyond_softmax``).

Independent checks: the reduced Monte Carlo against full d-dimensional simulation with
``task.sample`` and ``softmax_attention``; the closed form at λ = 0 (derived by hand); the hard
oracle's closed form at large λ; the Bayes predictor against softmax attention (γ = 1) and
against the softmax of ``bayes_scores``; the figure's ordering Bayes ≤ any predictor.
"""

import math

import jax
import jax.numpy as jnp
import matplotlib

matplotlib.use("Agg")
import matplotlib.figure
import numpy as np
import pytest
from helpers import random_unit

from slrlib import SLRTask, bayes_predictor, monte_carlo_risk, softmax_attention
from slrlib.core.predictors import bayes_scores
from slrlib.book import ch14_softmax as sm
from slrlib.book.ch04_bayes import hard_oracle_risk
from slrlib.figures import get

Z = 4.5


def _mixed_directions(key, k_star, v_star, n):
    """Unit (k, v) with sizeable overlaps with k*, v* (random mixtures plus a random part)."""
    d = k_star.shape[0]
    c = jax.random.normal(key, (n, 2, 3))
    r = random_unit(jax.random.fold_in(key, 1), (n, 2, d))
    x = c[..., 0:1] * k_star + c[..., 1:2] * v_star + 0.7 * c[..., 2:3] * r
    return x / jnp.linalg.norm(x, axis=-1, keepdims=True)


@pytest.mark.parametrize("d", [20, 200])
def test_reduced_risk_matches_full_dimensional_monte_carlo(d, record_z):
    task = SLRTask(d=d, L=5, eps=0.3, probs=(0.1, 0.2, 0.3, 0.25, 0.15))
    ks, vs = task.oracle_directions(jax.random.key(d))
    kv = _mixed_directions(jax.random.key(d + 1), ks, vs, 3)
    cases = [(kv[i, 0], kv[i, 1], lam) for i, lam in enumerate((0.2, 0.7, 2.0))]
    cases += [(ks, vs, 0.5), (vs, vs, 1.0)]  # the oracle; k = v = v* (degenerate Gram matrices)
    for i, (k, v, lam) in enumerate(cases):
        red = sm.softmax_risk(k, v, ks, vs, lam, task, jax.random.key(10 + i), n_samples=40_000)
        full = monte_carlo_risk(lambda X: softmax_attention(X, k, v, lam), task, ks, vs, jax.random.key(50 + i),
                                n_samples=20_000, batch_size=5_000)
        z = (red.mean - full.mean) / math.hypot(red.stderr, full.stderr)
        record_z(z, f"reduced vs full softmax risk, d={d}, case {i}")
        assert abs(z) <= Z, (d, i, red, full)


def test_bayes_predictor_is_softmax_attention_at_gamma_one_only():
    d = 30
    task1 = SLRTask(d=d, L=6, gamma=1.0, eps=0.1)
    ks, vs = task1.oracle_directions(jax.random.key(0))
    X = task1.sample(jax.random.key(1), 500, ks, vs).X
    bayes = np.asarray(bayes_predictor(X, ks, vs, task1))
    soft = np.asarray(softmax_attention(X, ks, vs, math.sqrt(d / 2)))
    np.testing.assert_allclose(bayes, soft, rtol=1e-12, atol=1e-12)
    # gamma^2 = 1/2: the norm term does not vanish
    task = SLRTask(d=d, L=6, eps=0.1, probs=(0.3, 0.1, 0.1, 0.2, 0.2, 0.1))
    X = task.sample(jax.random.key(2), 500, ks, vs).X
    bayes = np.asarray(bayes_predictor(X, ks, vs, task))
    for lam in (math.sqrt(d / 2), 2 * math.sqrt(d / 2)):
        gap = np.max(np.abs(bayes - np.asarray(softmax_attention(X, ks, vs, lam))))
        assert gap > 1e-2, (lam, gap)
    s = bayes_scores(X, ks, task)
    p = np.asarray(jax.nn.softmax(s, axis=-1))
    # independent of the formula: the posterior from the Gaussian densities, token by token
    # (token l from N(q k*, gamma^2 I), the others from N(0, I)); log-densities of size ~100
    # carry round-off ~1e-13, and so do the probabilities
    from scipy import special, stats

    Xn, q = np.asarray(X), math.sqrt(d / 2)
    log_rel = stats.norm.logpdf(Xn, loc=q * np.asarray(ks), scale=task.gamma).sum(-1)
    log_noise = stats.norm.logpdf(Xn).sum(-1)
    log_lik = log_rel - log_noise + log_noise.sum(-1, keepdims=True)
    np.testing.assert_allclose(p, special.softmax(np.log(np.asarray(task.pi)) + log_lik, axis=-1), atol=1e-11)
    via_scores = np.sum(p * np.asarray(X @ vs), axis=-1)
    np.testing.assert_allclose(via_scores, bayes, rtol=1e-11, atol=1e-12)
    # the formula of the docstring at gamma^2 = 1/2: s = log pi + 2q X^T k* - ||X||^2 / 2
    q = math.sqrt(d / 2)
    expected = np.log(np.asarray(task.pi)) + 2 * q * np.asarray(X @ ks) - 0.5 * np.sum(np.asarray(X) ** 2, axis=-1)
    np.testing.assert_allclose(np.asarray(s), expected, rtol=1e-12, atol=1e-10)


def test_lambda_zero_closed_form(record_z):
    task = SLRTask(d=50, L=7, eps=0.2)
    for i, ov in enumerate([(1.0, 1.0, 0.0, 0.0, 0.0), (0.5, 0.4, 0.3, -0.2, 0.1), (0.0, 0.0, 0.9, 0.0, 0.0)]):
        est = sm.softmax_risk_from_overlaps(*ov, 0.0, task, jax.random.key(i), n_samples=100_000)
        exact = sm.softmax_risk_at_lam0(*ov, task)
        if i == 0:
            L, g2 = task.L, task.gamma**2
            assert exact == pytest.approx(task.eps**2 + g2 * (1 - 1 / L) ** 2 + (L - 1) / L**2, rel=1e-14)
        z = est.z_score(exact)
        record_z(z, f"softmax risk at lam=0, overlaps {ov}")
        assert abs(z) <= Z, (ov, est, exact)
    # the closed form itself against full-dimensional simulation of the mean predictor
    ks, vs = task.oracle_directions(jax.random.key(7))
    full = monte_carlo_risk(lambda X: jnp.mean(X @ vs, axis=-1), task, ks, vs, jax.random.key(8), n_samples=40_000)
    z = full.z_score(sm.softmax_risk_at_lam0(1.0, 1.0, 0.0, 0.0, 0.0, task))
    record_z(z, "lam=0 closed form vs full simulation")
    assert abs(z) <= Z


def test_large_lambda_tends_to_the_hard_oracle(record_z):
    for i, task in enumerate([SLRTask(d=10, L=5, eps=0.3), SLRTask(d=24, L=20)]):
        est = sm.softmax_risk_from_overlaps(1.0, 1.0, 0.0, 0.0, 0.0, 1e6, task, jax.random.key(i), n_samples=100_000)
        z = est.z_score(hard_oracle_risk(task))
        record_z(z, f"softmax at lam=1e6 vs hard oracle, d={task.d}, L={task.L}")
        assert abs(z) <= Z, (task, est, hard_oracle_risk(task))


def test_best_lambda_is_a_minimum_on_common_random_numbers():
    task = SLRTask(d=20, L=8)
    key = jax.random.key(3)
    grid = np.geomspace(0.05, 50, 13)
    lam, best = sm.best_softmax_lambda(task, key, grid, n_samples=5_000)
    assert grid[0] < lam < grid[-1]
    around = sm.softmax_risk_from_overlaps(1, 1, 0, 0, 0, np.array([lam / 1.3, lam, lam * 1.3]), task, key, 5_000)
    assert around.mean[1] == pytest.approx(float(best.mean), rel=1e-12)
    assert around.mean[1] <= around.mean[0] and around.mean[1] <= around.mean[2]
    assert np.all(sm.softmax_risk_from_overlaps(1, 1, 0, 0, 0, grid, task, key, 5_000).mean >= float(best.mean) - 1e-15)


def test_bad_inputs_raise_value_errors_naming_the_parameter():
    task = SLRTask(d=6, L=3)
    ks, vs = task.oracle_directions(jax.random.key(0))
    key = jax.random.key(1)
    with pytest.raises(ValueError, match="^k must"):
        sm.softmax_risk(2 * ks, vs, ks, vs, 1.0, task, key, 100)
    with pytest.raises(ValueError, match="^v must"):
        sm.softmax_risk(ks, vs[:4], ks, vs, 1.0, task, key, 100)
    with pytest.raises(ValueError, match="lam must be >= 0"):
        sm.softmax_risk(ks, vs, ks, vs, -0.5, task, key, 100)
    with pytest.raises(ValueError, match="positive semidefinite.*smallest eigenvalue"):
        sm.softmax_risk_from_overlaps(0.9, 0.9, 0.9, 0.0, 0.0, 1.0, task, key, 100)
    with pytest.raises(ValueError, match="kappa must be in"):
        sm.softmax_risk_from_overlaps(1.5, 0.0, 0.0, 0.0, 0.0, 1.0, task, key, 100)
    with pytest.raises(ValueError, match="n_samples must be >= 2"):
        sm.softmax_risk(ks, vs, ks, vs, 1.0, task, key, 1)
    with pytest.raises(ValueError, match="^task must"):
        sm.softmax_risk(ks, vs, ks, vs, 1.0, "task", key, 100)
    with pytest.raises(ValueError, match="^X must"):
        bayes_scores(np.zeros((2, 4, 6)), ks, task)
    with pytest.raises(ValueError, match="lam_grid must"):
        sm.best_softmax_lambda(task, key, [1.0, 0.5, 2.0], 100)
    with pytest.raises(ValueError, match="n_samples must be >= 2"):
        sm.bayes_excess_reduced(task, key, 1)


def test_fit_decay_rate_recovers_a_known_rate_and_its_standard_error():
    """Exact exponentials give the rate to round-off; on noisy replicates (relative errors sigma), the fitted
    rates scatter around the true one with the spread that rate_se reports (ratio within sampling error of
    the standard deviation over 2 000 replicates, about 1.6 %: allow 8 %)."""
    d = np.arange(10, 42, 4, dtype=float)
    truth = 0.2 * np.exp(-0.17 * d)
    exact = sm.fit_decay_rate(d, truth)
    assert exact.rate == pytest.approx(0.17, rel=1e-12) and exact.rate_se < 1e-12
    rng = np.random.default_rng(0)
    sigma = 0.05 * (1 + d / 40)
    rates, ses = [], []
    for _ in range(2000):
        y = truth * (1 + sigma * rng.standard_normal(d.size))
        fit = sm.fit_decay_rate(d, y, sigma * truth)
        rates.append(fit.rate)
        ses.append(fit.rate_se)
    rates, ses = np.array(rates), np.array(ses)
    assert abs(rates.mean() - 0.17) < Z * rates.std() / math.sqrt(rates.size)
    assert rates.std() / np.median(ses) == pytest.approx(1.0, abs=0.08)
    with pytest.raises(ValueError, match="^y must be positive"):
        sm.fit_decay_rate(d, -truth)
    with pytest.raises(ValueError, match="^d must hold at least 3"):
        sm.fit_decay_rate([1.0, 2.0, 2.0], [1.0, 0.5, 0.5])
    with pytest.raises(ValueError, match="^stderr must be positive"):
        sm.fit_decay_rate(d, truth, 0 * truth)


def test_excess_against_d_orders_bayes_softmax_and_hard_oracle():
    """Bayes optimality: at every d the Bayes excess is at most the best softmax excess (within 4.5 s.e.), which is
    at most the hard oracle's (its lambda -> infinity limit, a closed form), within 4.5 s.e."""
    ex = sm.excess_against_d((6, 10, 14), 4, math.sqrt(0.5), jax.random.key(5), n_bayes=20_000, n_softmax=20_000)
    assert ex.d.tolist() == [6, 10, 14]
    assert np.all(ex.bayes - ex.softmax <= Z * np.hypot(ex.bayes_se, ex.softmax_se))
    assert np.all(ex.softmax - ex.hard_oracle <= Z * ex.softmax_se)
    assert np.all(np.diff(ex.hard_oracle) < 0) and np.all(ex.bayes_confusions > 0)
    with pytest.raises(ValueError, match="^ds must"):
        sm.excess_against_d((), 4, 0.7, jax.random.key(0))
    with pytest.raises(ValueError, match="^L must be >= 2"):
        sm.excess_against_d((6,), 1, 0.7, jax.random.key(0))
    with pytest.raises(ValueError, match="^gamma"):
        sm.excess_against_d((6,), 4, 0.0, jax.random.key(0))


def test_figure_at_small_sizes(tmp_path):
    from slrlib import figures

    assert "beyond_softmax" in figures.names()
    spec = get("beyond_softmax")
    assert spec.chapter == 14
    data = spec.compute(ds=(6, 12, 24), Ls=(3, 30), n_bayes=5_000, n_softmax=2_000,
                        lam_grid=np.geomspace(0.1, 100, 10))
    table = spec.table(data)
    assert {"panel", "series", "x", "y", "y_se"} <= set(table)
    lengths = {k: np.asarray(v).size for k, v in table.items()}
    assert len(set(lengths.values())) == 1 and lengths["x"] == 5 * (3 + 2), lengths
    assert isinstance(spec.plot(data), matplotlib.figure.Figure)
    figures.write_csv(table, tmp_path / "beyond_softmax.csv")
    rows = (tmp_path / "beyond_softmax.csv").read_text().splitlines()
    assert len(rows) == 1 + lengths["x"] and rows[0].startswith("panel,series,x,y,y_se")
    for panel in (data.panel_d, data.panel_L):
        bayes, se = panel.excess["bayes"], panel.stderr["bayes"]
        for other in ("softmax", "erf", "linear", "hard_oracle"):
            slack = Z * np.hypot(se, panel.stderr[other])
            assert np.all(bayes <= panel.excess[other] + slack), (panel.name, other, bayes, panel.excess[other])
        # the closed forms: erf attention at its best beats the best linear predictor here
        assert np.all(panel.excess["erf"] <= panel.excess["linear"])
