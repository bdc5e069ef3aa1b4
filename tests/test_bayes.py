"""slrlib.book.ch04_bayes: closed forms against Monte Carlo, estimators against independent estimators."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from slrlib import (
    SLRTask,
    bayes_posterior,
    bayes_predictor,
    erf_attention,
    hard_oracle,
    monte_carlo_risk,
    optimal_lambda,
    oracle_risk,
)
from slrlib.book.ch04_bayes import (
    bayes_excess_risk,
    hard_oracle_error,
    hard_oracle_risk,
    excess_decay_rates,
    optimal_lambda_asymptotic,
    oracle_excess_terms,
    oracle_risk_terms,
    paired_risk_difference,
    reliability_table,
)

EPS = np.finfo(np.float64).eps  # 2.2e-16
Z_MAX = 4.5  # a closed form is consistent with a simulation within this many standard errors


@pytest.fixture(scope="module")
def task():
    return SLRTask(d=8, L=5, gamma=math.sqrt(0.5), eps=0.2)


@pytest.fixture(scope="module")
def dirs(task):
    return task.oracle_directions(jax.random.key(7))


# ------------------------------------------------------------------ oracle_risk_terms
@pytest.mark.roundoff
def test_terms_add_up_to_oracle_risk(task):
    lam = jnp.logspace(-3, 1, 40)
    terms = oracle_risk_terms(lam, task)
    np.testing.assert_allclose(terms.relevant + terms.noise + task.eps**2, oracle_risk(lam, task), rtol=0, atol=1e-13)
    # Lemma 17: erf(x)^2 <= 4 x^2 / pi, so the noise term is at most 4 lam^2 (L-1) / pi.
    assert np.all(np.asarray(terms.noise) <= 4 * lam**2 * (task.L - 1) / math.pi + 1e-15)
    assert np.all(np.asarray(terms.relevant) >= 0)


@pytest.mark.roundoff
def test_batched_terms_match_oracle_risk_task_by_task():
    lam = np.geomspace(1e-3, 3, 7)[:, None]
    ds = np.array([2, 50, 10_000, 1_000_000])
    for L, gamma in ((1, 0.4), (2, math.sqrt(0.5)), (300, 1.7)):
        terms = oracle_excess_terms(lam, ds[None, :], L, gamma)
        assert terms.relevant.shape == (7, 4)
        for j, d in enumerate(ds):
            t = SLRTask(d=int(d), L=L, gamma=gamma, eps=0.25)
            # Two programs, the same formulas summed in another order: a few ulps of each term,
            # gamma^2 (1, 2 erf, zeta) <= 4 gamma^2 and (L - 1) zeta(0, lam) <= R (R up to 240
            # here, whose ulp is 2.8e-14): 8 eps (4 gamma^2 + R).
            np.testing.assert_allclose(terms.relevant[:, j] + terms.noise[:, j] + 0.25**2,
                                       oracle_risk(lam[:, 0], t), rtol=8 * EPS, atol=32 * EPS * gamma**2)
    with pytest.raises(ValueError, match="L"):
        oracle_excess_terms(0.1, 10, 0, 0.5)
    with pytest.raises(ValueError, match="lam"):
        oracle_excess_terms(-0.1, 10, 3, 0.5)


def test_relevant_term_against_monte_carlo(task, dirs):
    k_star, v_star = dirs
    lam = 0.4
    one = task.replace(L=1, eps=0.0)
    est = monte_carlo_risk(lambda X: erf_attention(X, k_star, v_star, lam), one, k_star, v_star,
                           jax.random.key(1), n_samples=100_000)
    assert abs(float(est.z_score(oracle_risk_terms(lam, task).relevant))) < Z_MAX


def test_noise_term_against_monte_carlo(task, dirs):
    # E[(sum over noise tokens of erf(lam X.k*) X.v*)^2], noise tokens only.
    k_star, v_star = dirs
    lam = 0.7
    Z = jax.random.normal(jax.random.key(2), (100_000, task.L - 1, task.d))
    vals = jnp.sum(jax.scipy.special.erf(lam * Z @ k_star) * (Z @ v_star), axis=-1) ** 2
    mean, se = float(vals.mean()), float(vals.std() / math.sqrt(vals.shape[0]))
    assert abs(mean - float(oracle_risk_terms(lam, task).noise)) / se < Z_MAX


# ------------------------------------------------------------------ optimal_lambda
@pytest.mark.roundoff
def test_optimal_lambda_beats_a_dense_grid(task):
    lam_star, r_star = optimal_lambda(task)
    grid = np.logspace(-4, 2, 4001)
    r = np.asarray(oracle_risk(jnp.asarray(grid), task))
    assert r_star <= r.min() + 1e-12
    assert abs(math.log(lam_star) - math.log(grid[r.argmin()])) < 0.01
    assert abs(r_star - float(oracle_risk(lam_star, task))) < 1e-15


def test_optimal_lambda_with_one_token_is_interior_and_beats_a_dense_grid():
    """L = 1: no noise term, yet the risk has an interior minimum (its docstring once said the upper
    bound was returned)."""
    task = SLRTask(d=10, L=1)
    lam_star, r_star = optimal_lambda(task)
    grid = np.logspace(-4, 2, 4001)
    r = np.asarray(oracle_risk(jnp.asarray(grid), task))
    assert 0 < r.argmin() < grid.size - 1  # interior on the grid
    assert r_star <= r.min() + 1e-12
    assert abs(math.log(lam_star) - math.log(grid[r.argmin()])) < 0.01
    assert r[-1] > r_star + 1e-4  # the upper bound would be far from optimal


@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_optimal_lambda_on_a_flat_floor_returns_its_left_end_and_the_floor(eps):
    """d = 400, L = 1: the risk reaches its floor eps^2 (eq. 8) to round-off over a whole interval of
    lambda (Brent's point once carried a risk of -5.55e-17): the smallest lambda that reaches it is
    returned, with the floor itself as the risk."""
    from slrlib.core.risk import FLOOR_TOL

    task = SLRTask(d=400, L=1, eps=eps)
    tol = FLOOR_TOL * (task.gamma**2 + eps**2)
    lam_star, r_star = optimal_lambda(task)
    assert r_star == eps**2
    risk = lambda lam: float(oracle_risk(lam, task)) - eps**2  # noqa: E731
    assert abs(risk(lam_star)) <= tol  # it reaches the floor ...
    assert risk(lam_star * (1 - 1e-6)) > tol  # ... and no smaller lambda does
    grid = np.logspace(math.log10(lam_star), 2, 200)
    assert np.all(np.abs(np.asarray(oracle_risk(jnp.asarray(grid), task)) - eps**2) <= tol)  # flat beyond


def test_optimal_lambda_bad_bounds(task):
    with pytest.raises(ValueError, match="bounds"):
        optimal_lambda(task, bounds=(1.0, 0.1))


def test_optimal_lambda_asymptotic_converges():
    errs = []
    for d in (1e3, 1e4, 1e6):
        lam_a, ex_a = optimal_lambda_asymptotic(d, 10)
        lam, r = optimal_lambda(SLRTask(d=int(d), L=10))
        errs.append((abs(lam_a / lam - 1), abs(ex_a / r - 1)))
    assert errs[-1][0] < 0.02 and errs[-1][1] < 0.03
    assert errs[0][0] > errs[1][0] > errs[2][0] and errs[0][1] > errs[1][1] > errs[2][1]


# ------------------------------------------------------------------ hard oracle
@pytest.mark.parametrize("d,L,gamma", [(8, 5, math.sqrt(0.5)), (3, 10, 1.3), (20, 4, 0.5)])
def test_hard_oracle_risk_against_monte_carlo(d, L, gamma):
    task = SLRTask(d=d, L=L, gamma=gamma, eps=0.1)
    k_star, v_star = task.oracle_directions(jax.random.key(d))
    est = monte_carlo_risk(lambda X: hard_oracle(X, k_star, v_star), task, k_star, v_star,
                           jax.random.key(3), n_samples=100_000)
    assert abs(float(est.z_score(hard_oracle_risk(task)))) < Z_MAX


def test_hard_oracle_error_special_cases():
    assert hard_oracle_error(SLRTask(d=5, L=1)) == 0.0
    # Does not depend on the law of J0.
    t = SLRTask(d=6, L=3, gamma=0.9)
    assert abs(hard_oracle_error(t) - hard_oracle_error(t.replace(probs=(0.7, 0.2, 0.1)))) < 1e-13
    # Better than a uniform guess (error 1 - 1/L) already at d = 2, and decreasing in d.
    errs = [hard_oracle_error(SLRTask(d=d, L=4)) for d in (2, 8, 32, 128)]
    assert errs[0] < 0.75 and all(a > b for a, b in zip(errs, errs[1:]))


def test_excess_decay_rates():
    from scipy import integrate, stats

    for gamma in (0.5, math.sqrt(0.5), 1.0, 1.6):
        hard, bayes = excess_decay_rates(gamma)
        # Hard oracle: slope of -log P(error) between two large d, less the slope of the
        # Gaussian tail's prefactor, -log P = r d + (1/2) log d + O(1).
        d1, d2 = 600, 1200
        e1, e2 = (hard_oracle_error(SLRTask(d=d, L=5, gamma=gamma)) for d in (d1, d2))
        slope = -(math.log(e2) - math.log(e1)) / (d2 - d1) - 0.5 * math.log(d2 / d1) / (d2 - d1)
        assert abs(slope - hard) < 1e-3 * hard
        # Bayes: -2 log of the one-coordinate Bhattacharyya coefficient between N(0, 1) and
        # N(1/sqrt(2), gamma^2) (k* = (1, ..., 1)/sqrt(d) splits the mean evenly over coordinates).
        bc, _ = integrate.quad(lambda x: math.sqrt(stats.norm.pdf(x) * stats.norm.pdf(x, math.sqrt(0.5), gamma)),
                               -30, 30, epsabs=1e-14)
        assert abs(-2 * math.log(bc) - bayes) < 1e-10
        assert bayes >= hard - 1e-15
    assert excess_decay_rates(1.0)[0] == excess_decay_rates(1.0)[1]


# ------------------------------------------------------------------ Bayes excess risk
@pytest.mark.parametrize(
    "d,L,gamma,probs",
    [(8, 5, math.sqrt(0.5), None), (4, 3, 1.4, None), (12, 4, 0.6, (0.1, 0.2, 0.3, 0.4))],
)
def test_bayes_excess_against_plain_monte_carlo(d, L, gamma, probs):
    # Two independent estimators: reduced statistics + conditional variance, versus full tokens
    # and squared errors of the Bayes predictor.
    task = SLRTask(d=d, L=L, gamma=gamma, eps=0.3, probs=probs)
    k_star, v_star = task.oracle_directions(jax.random.key(11))
    ex = bayes_excess_risk(task, jax.random.key(4), n_samples=200_000)
    mc = monte_carlo_risk(lambda X: bayes_predictor(X, k_star, v_star, task), task, k_star, v_star,
                          jax.random.key(5), n_samples=100_000)
    z = (mc.mean - task.eps**2 - ex.mean) / math.hypot(mc.stderr, ex.stderr)
    assert abs(z) < Z_MAX
    assert ex.stderr < mc.stderr  # Rao-Blackwellisation pays


def test_bayes_excess_against_full_token_conditional_variance(task, dirs):
    k_star, v_star = dirs
    X, _, _ = task.sample(jax.random.key(8), 100_000, k_star, v_star)
    p = bayes_posterior(X, k_star, task)
    u = X @ v_star
    m = jnp.sum(p * u, axis=-1, keepdims=True)
    v = np.asarray(jnp.sum(p * (u - m) ** 2, axis=-1))
    ex = bayes_excess_risk(task, jax.random.key(9), n_samples=100_000)
    z = (v.mean() - ex.mean) / math.hypot(v.std() / math.sqrt(v.size), ex.stderr)
    assert abs(z) < Z_MAX


def test_bayes_excess_between_zero_and_hard_oracle():
    for d in (4, 16, 32):
        task = SLRTask(d=d, L=6, eps=0.1)
        ex = bayes_excess_risk(task, jax.random.key(d), n_samples=50_000)
        assert 0 <= ex.mean < hard_oracle_risk(task) - task.eps**2
    assert bayes_excess_risk(SLRTask(d=5, L=1), jax.random.key(0), n_samples=10).mean == 0.0


def test_bayes_excess_deterministic_and_sized():
    task = SLRTask(d=10, L=4)
    a = bayes_excess_risk(task, jax.random.key(3), n_samples=1000, batch_size=300)
    b = bayes_excess_risk(task, jax.random.key(3), n_samples=1000, batch_size=300)
    c = bayes_excess_risk(task, jax.random.key(4), n_samples=1000, batch_size=300)
    assert a.mean == b.mean and a.mean != c.mean and a.n == 1200
    with pytest.raises(ValueError, match="n_samples"):
        bayes_excess_risk(task, jax.random.key(3), n_samples=1)


# ------------------------------------------------------------------ paired differences
def test_paired_difference_known_values(task, dirs):
    k_star, v_star = dirs
    c = 0.3

    def predict(X):
        b = bayes_predictor(X, k_star, v_star, task)
        return jnp.stack([b, b, b + c], axis=-1)

    est = paired_risk_difference(predict, task, k_star, v_star, jax.random.key(6), n_samples=60_000)
    assert est.mean[0] == 0.0 and est.stderr[0] == 0.0 and est.mean[1] == 0.0
    # (Y - B - c)^2 - (Y - B)^2 = c^2 - 2c (Y - B), and E[Y - B] = 0 for the Bayes predictor B.
    assert abs(est.mean[2] - c**2) / est.stderr[2] < Z_MAX


def test_paired_difference_agrees_with_closed_forms_and_is_sharper(task, dirs):
    k_star, v_star = dirs
    lams = jnp.array([0.1, 0.5])

    def predict(X):
        cols = [erf_attention(X, k_star, v_star, lam) for lam in lams]
        return jnp.stack(cols, axis=-1)

    est = paired_risk_difference(predict, task, k_star, v_star, jax.random.key(12), n_samples=100_000)
    closed = oracle_risk(lams, task)
    assert abs(est.mean[1] - float(closed[1] - closed[0])) / est.stderr[1] < Z_MAX
    marg = monte_carlo_risk(predict, task, k_star, v_star, jax.random.key(12), n_samples=100_000)
    assert est.stderr[1] < math.hypot(*marg.stderr)


def test_paired_difference_bad_input(task, dirs):
    k_star, v_star = dirs
    with pytest.raises(ValueError, match="shape"):
        paired_risk_difference(lambda X: X[..., 0, 0], task, k_star, v_star, jax.random.key(0), n_samples=10)
    with pytest.raises(ValueError, match="reference"):
        paired_risk_difference(lambda X: X[..., 0, :2], task, k_star, v_star, jax.random.key(0),
                               n_samples=10, reference=5)


# ------------------------------------------------------------------ reliability table
def _synthetic(key, n, L, sharpen):
    logits = 2.0 * jax.random.normal(key, (n, L))
    p = jax.nn.softmax(logits, axis=-1)
    truth = jax.nn.softmax(sharpen * logits, axis=-1)  # the law J0 is really drawn from
    J0 = jax.random.categorical(jax.random.fold_in(key, 1), jnp.log(truth), axis=-1)
    return np.asarray(p), np.asarray(J0)


def test_reliability_table_calibrated_and_not():
    edges = np.linspace(0.2, 1.0, 9)
    p, J0 = _synthetic(jax.random.key(0), 100_000, 5, sharpen=1.0)
    tab = reliability_table(p, J0, edges)
    ok = tab.count > 100
    assert np.all(np.abs(tab.z[ok]) < Z_MAX)
    assert tab.count.sum() == np.sum(p.max(axis=1) >= 0.2)
    p, J0 = _synthetic(jax.random.key(0), 100_000, 5, sharpen=2.0)  # p is underconfident
    bad = reliability_table(p, J0, edges)
    assert np.nanmax(np.abs(bad.z)) > 10


def test_reliability_table_edges_and_validation():
    p = np.array([[1.0, 0.0], [0.5, 0.5], [0.6, 0.4]])
    tab = reliability_table(p, np.array([0, 1, 0]), [0.5, 0.55, 1.0])
    assert list(tab.count) == [1, 2]  # 1.0 falls in the last (closed) bin
    assert tab.accuracy[0] == 0.0  # argmax picks position 0 on a tie, J0 = 1
    with pytest.raises(ValueError, match="edges"):
        reliability_table(p, np.array([0, 1, 0]), [0.5, 0.4])
    with pytest.raises(ValueError, match="J0"):
        reliability_table(p, np.array([0, 1]), [0.0, 1.0])


# ------------------------------------------------------------------ figures (slrlib.book.plots.bayes)
def test_figures_build_and_stay_out_of_pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from slrlib.book.plots import bayes as plots

    before = set(plt.get_fignums())
    p, J0 = _synthetic(jax.random.key(1), 2000, 4, sharpen=1.0)
    d = np.geomspace(10, 1e4, 5)
    figs = [
        plots.plot_reliability(reliability_table(p, J0, np.linspace(0.25, 1, 7)), title="t"),
        plots.plot_corollary2_scalings(d, [("a", 1 / d, True), ("b", np.ones_like(d), False)]),
        plots.plot_optimal_lambda(d, d**-0.4, 1 / d, d**-0.45, 1.1 / d, L=10),
        plots.plot_bayes_vs_attention(d, 1 / d, np.exp(-d / 6), d[:3], np.exp(-d[:3] / 4), 1e-3 * np.ones(3),
                                      eps=0.1, null_excess=0.5, fit=(-0.25, 0.0)),
        plots.plot_excess_vs_d(lam=0.03, L=10),
    ]
    assert all(isinstance(f, Figure) for f in figs)
    assert [len(f.axes) for f in figs] == [2, 1, 2, 2, 1]
    assert set(plt.get_fignums()) == before  # detached: a notebook displays each figure once
    # The slider frame plots the closed form it claims: its first line is the excess at lam.
    line = figs[-1].axes[0].lines[0]
    terms = oracle_excess_terms(0.03, line.get_xdata(), 10, math.sqrt(0.5))
    np.testing.assert_allclose(line.get_ydata(), terms.relevant + terms.noise, rtol=1e-12)
