"""Tests of slrlib.book.ch05_linear (Proposition 3 and around) and slrlib.book.plots.linear.

Closed forms are compared with independent computations: Monte Carlo with a tolerance from
the standard error, a numerical linear solve instead of Sherman–Morrison, an iterative
solver instead of the closed-form group Lasso, scipy's scalar minimiser instead of the
grid search.
"""

from __future__ import annotations

import jax
import matplotlib
import numpy as np
import pytest

from slrlib import (
    SLRTask,
    best_linear_weights,
    linear_predictor,
    linear_risk,
    monte_carlo_risk,
    optimal_lambda,
    oracle_risk,
)
from slrlib.book.ch05_linear import (
    best_oracle_lambdas,
    empirical_moments,
    group_lasso_fit,
    group_lasso_from_moments,
    group_lasso_population_weights,
    least_squares_fit,
    linear_moments,
    linear_risk_lower_bound,
    linear_risk_of_weights,
    risk_table,
    solve_normal_equations,
)

matplotlib.use("Agg")

EPS = np.finfo(np.float64).eps  # 2.2e-16
Z_MAX = 5.0  # a gap of more than 5 standard errors fails (false alarm rate ~ 1e-6 per entry)


def _task(non_uniform: bool, eps=0.2, gamma=0.8, d=3, L=4):
    probs = (0.1, 0.2, 0.3, 0.4) if non_uniform else None
    return SLRTask(d=d, L=L, gamma=gamma, eps=eps, probs=probs)


@pytest.mark.parametrize("non_uniform", [False, True])
def test_moments_match_monte_carlo(non_uniform):
    task = _task(non_uniform)
    k, v = task.oracle_directions(jax.random.key(10))
    X, y, _ = task.sample(jax.random.key(11), 100_000, k, v)
    m = linear_moments(task, k, v)
    e = empirical_moments(X, y)
    assert np.max(np.abs(e.Sigma - m.Sigma) / e.Sigma_se) < Z_MAX
    assert np.max(np.abs(e.b - m.b) / e.b_se) < Z_MAX
    assert m.y2 == pytest.approx(float(np.mean(np.asarray(y) ** 2)), abs=Z_MAX * np.std(np.asarray(y) ** 2) / np.sqrt(len(y)))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.roundoff
def test_sherman_morrison_matches_linear_solve(seed):
    rng = np.random.default_rng(seed)
    L, d = int(rng.integers(1, 7)), int(rng.integers(2, 6))
    task = SLRTask(d=d, L=L, gamma=float(rng.uniform(0.2, 2.0)), eps=float(rng.uniform(0, 1)),
                   probs=tuple(rng.dirichlet(np.ones(L))))
    k, v = task.oracle_directions(jax.random.key(seed))
    W = np.asarray(best_linear_weights(task, v))
    np.testing.assert_allclose(solve_normal_equations(task, k, v), W, atol=1e-12)
    # and its exact risk is Proposition 3's
    assert linear_risk_of_weights(W, task, k, v) == pytest.approx(linear_risk(task), abs=1e-12)
    # the risk as a quadratic form with the full moment matrices agrees
    m = linear_moments(task, k, v)
    w = rng.normal(size=L * d)
    quad = m.y2 - 2 * w @ m.b + w @ m.Sigma @ w
    assert linear_risk_of_weights(w.reshape(L, d), task, k, v) == pytest.approx(quad, rel=1e-12)


def test_no_weight_beats_proposition_3():
    task = _task(True)
    k, v = task.oracle_directions(jax.random.key(3))
    W0 = np.asarray(best_linear_weights(task, v))
    rng = np.random.default_rng(0)
    W = W0 + rng.normal(scale=0.3, size=(500,) + W0.shape)
    risks = linear_risk_of_weights(W, task, k, v)
    assert risks.shape == (500,)
    assert np.all(risks >= linear_risk(task) - 1e-12)


@pytest.mark.parametrize("non_uniform", [False, True])
def test_risk_of_weights_matches_monte_carlo(non_uniform):
    task = _task(non_uniform)
    k, v = task.oracle_directions(jax.random.key(4))
    W = np.random.default_rng(1).normal(scale=0.5, size=(task.L, task.d))
    est = monte_carlo_risk(lambda X: linear_predictor(X, W), task, k, v, jax.random.key(5), n_samples=100_000)
    assert abs(est.z_score(linear_risk_of_weights(W, task, k, v))) < Z_MAX


def test_least_squares_recovers_proposition_3():
    task = _task(True, d=2, L=4)
    k, v = task.oracle_directions(jax.random.key(6))
    X, y, _ = task.sample(jax.random.key(7), 200_000, k, v)
    fit = least_squares_fit(X, y)
    W = np.asarray(best_linear_weights(task, v))
    assert np.max(np.abs(fit.W - W) / fit.stderr) < Z_MAX


def test_sandwich_standard_errors_match_replicates():
    task = SLRTask(d=2, L=3, eps=0.1)
    k, v = task.oracle_directions(jax.random.key(8))
    n, reps = 2_000, 300
    X, y, _ = task.sample(jax.random.key(9), n * reps, k, v)
    X = np.asarray(X).reshape(reps, n, task.L, task.d)
    y = np.asarray(y).reshape(reps, n)
    fits = [least_squares_fit(X[r], y[r]) for r in range(reps)]
    spread = np.std([f.W for f in fits], axis=0, ddof=1)
    predicted = np.mean([f.stderr for f in fits], axis=0)
    # the std of 300 replicates is itself uncertain by ~ 1/sqrt(2*300) ~ 4%
    np.testing.assert_allclose(predicted, spread, rtol=0.2)


@pytest.mark.parametrize("non_uniform", [False, True])
@pytest.mark.parametrize("alpha", [0.0, 0.05, 0.12, 0.3])
def test_group_lasso_closed_form_matches_solver(non_uniform, alpha):
    task = _task(non_uniform, gamma=0.7)
    k, v = task.oracle_directions(jax.random.key(12))
    m = linear_moments(task, k, v)
    solved = group_lasso_from_moments(m.Sigma, m.b, task.L, alpha)
    np.testing.assert_allclose(solved, group_lasso_population_weights(task, v, alpha), atol=1e-8)


def test_group_lasso_fit_satisfies_kkt():
    task = _task(True)
    k, v = task.oracle_directions(jax.random.key(13))
    X, y, _ = task.sample(jax.random.key(14), 20_000, k, v)
    alpha = 0.09  # between pi_1 gamma^2 = 0.064 and pi_2 gamma^2 = 0.128: group 1 dropped
    W = group_lasso_fit(X, y, alpha)
    e = empirical_moments(X, y)
    grad = (e.Sigma @ W.ravel() - e.b).reshape(task.L, task.d)
    for ell in range(task.L):
        norm = np.linalg.norm(W[ell])
        if norm > 0:
            np.testing.assert_allclose(grad[ell], -alpha * W[ell] / norm, atol=1e-7)
        else:
            assert np.linalg.norm(grad[ell]) <= alpha + 1e-9
    assert np.any(np.linalg.norm(W, axis=1) == 0) and np.any(np.linalg.norm(W, axis=1) > 0)
    # alpha = 0 is least squares
    np.testing.assert_allclose(group_lasso_fit(X, y, 0.0), least_squares_fit(X, y).W, atol=1e-7)


@pytest.mark.parametrize("seed", range(20))
def test_lower_bound_through_max_probability(seed):
    rng = np.random.default_rng(seed)
    L = int(rng.integers(1, 30))
    task = SLRTask(d=2, L=L, gamma=float(rng.uniform(0.1, 3)), eps=0.3,
                   probs=tuple(rng.dirichlet(np.full(L, float(rng.uniform(0.05, 5))))))
    assert linear_risk(task) >= linear_risk_lower_bound(task) - 1e-12
    uniform = task.replace(probs=None)
    assert linear_risk(uniform) == pytest.approx(linear_risk_lower_bound(uniform), abs=1e-12)


@pytest.mark.parametrize("d,L", [(400, 10), (100, 300), (1600, 3)])
@pytest.mark.roundoff
def test_best_lambdas_grid_search_matches_brent(d, L):
    # Two algorithms for the same minimiser: the vectorised grid zoom of best_oracle_lambdas
    # and Brent's method of slrlib.core.risk.optimal_lambda.
    task = SLRTask(d=d, L=L)
    lams, risks = best_oracle_lambdas(task, [L])
    lam_brent, risk_brent = optimal_lambda(task, bounds=(1e-4, 10.0))
    assert risks[0] <= risk_brent + 1e-12  # > 8 L eps (5.3e-13 at L = 300): the formulas' gap, below
    assert lams[0] == pytest.approx(lam_brent, rel=1e-3)
    # Two formulas for the same risk: L=1 risk + (L-1) zeta(0, lam) with zeta = 1 - 8 T(0, a)
    # (Owen's T, absolute error a few ulps of 1) against Theorem 1 with (2/pi) arcsin: 8 L eps.
    assert risks[0] == pytest.approx(float(oracle_risk(lams[0], task)), abs=8 * L * EPS)


def test_risk_table_consistency():
    task = SLRTask(d=200, L=1, eps=0.1)
    lams = [0.01, 0.05, 0.2]
    table = risk_table(task, [1, 5, 50], lams)
    assert table.oracle.shape == (3, 3)
    assert np.all(table.best[None, :] <= table.oracle + 1e-12)
    for j, L in enumerate(table.L):
        assert table.linear[j] == pytest.approx(linear_risk(task.replace(L=int(L))))
        assert table.oracle[1, j] == pytest.approx(float(oracle_risk(0.05, task.replace(L=int(L)))))
    assert table.null == pytest.approx(0.5 + 0.01) and table.bound == pytest.approx(0.01)


def test_validation():
    task = _task(False)
    k, v = task.oracle_directions(jax.random.key(0))
    with pytest.raises(ValueError, match="W must have shape"):
        linear_risk_of_weights(np.zeros((task.L + 1, task.d)), task, k, v)
    with pytest.raises(ValueError, match="alpha"):
        group_lasso_population_weights(task, v, -1.0)
    with pytest.raises(ValueError, match="uniform"):
        risk_table(_task(True), [4])
    with pytest.raises(ValueError, match="X must have shape"):
        least_squares_fit(np.zeros((5, 3)), np.zeros(5))
    with pytest.raises(ValueError, match="task must be an SLRTask"):
        linear_moments("task", k, v)
    with pytest.raises(ValueError, match="lam_min"):
        best_oracle_lambdas(task, [task.L], lam_min=1.0, lam_max=0.5)


def test_plots_return_figures():
    from matplotlib.figure import Figure

    from slrlib.book.plots import linear as plots

    task = SLRTask(d=100, L=1)
    table = risk_table(task, [1, 2, 10, 100], [0.05, 0.1])
    fig = plots.plot_figure3([table, risk_table(SLRTask(d=400, L=1), [1, 2, 10, 100])], main_d=100, fixed_lam=0.1,
                             mc={"L": [10], "linear": [0.48], "linear_se": [0.01],
                                 "attention": [0.1], "attention_se": [0.01]})
    assert isinstance(fig, Figure)
    # the bold curves are the tabulated closed forms: linear (Prop. 3) and attention at its best λ
    ydata = {line.get_label(): line.get_ydata() for line in fig.axes[0].lines}
    np.testing.assert_allclose(ydata["best linear (Prop. 3, any $d$)"], table.linear)
    np.testing.assert_allclose(ydata["attention, best $\\lambda$, $d=100$ (Thm. 1)"], table.best)
    frame = plots.plot_risk_slider(table, 0.1, 10)
    bars = [bar.get_height() for bar in frame.axes[1].patches]
    np.testing.assert_allclose(bars[1:3], [table.oracle[1, 2], table.linear[2]])
    W = np.ones((2, 3))
    assert isinstance(plots.plot_fitted_weights({"a": (W, W, 0.1 * W)}), Figure)
    p = np.linspace(0.05, 1, 5)
    assert isinstance(plots.plot_linear_vs_max_prob(p, p, p, p, 0.5, 0.0, p, p), Figure)
    with pytest.raises(ValueError, match="lam"):
        plots.plot_risk_slider(table, 0.3, 10)  # λ not tabulated
    with pytest.raises(ValueError, match="L must"):
        plots.plot_risk_slider(table, 0.1, 7)


@pytest.mark.parametrize("d", [50, 400])
@pytest.mark.roundoff
def test_oracle_risk_lengths_matches_library(d):
    from slrlib.book.ch05_linear import oracle_risk_lengths

    task = SLRTask(d=d, L=1, eps=0.2, gamma=0.9)
    lam = np.array([0.003, 0.05, 0.4, 2.0])
    for L in [1, 2, 7, 150]:
        np.testing.assert_allclose(oracle_risk_lengths(lam, L, task),
                                   np.asarray(oracle_risk(lam, task.replace(L=L))), rtol=1e-12, atol=1e-14)
    grid = oracle_risk_lengths(lam[:, None], np.array([1, 7])[None, :], task)
    assert grid.shape == (4, 2)
    with pytest.raises(ValueError, match="L must hold positive integers"):
        oracle_risk_lengths(lam, 0, task)
