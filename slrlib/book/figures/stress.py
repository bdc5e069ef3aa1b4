r"""Figure of chapter 16 ("The dynamics quantified", stress tests of the assumptions): ``stress_tests``.

Four panels, one per assumption of the paper, at its task (:math:`d = 400`, :math:`L = 10`, :math:`\varepsilon = 0`) and
:math:`\lambda = 0.1` (the :math:`\lambda` of Theorem 5, Figure 4(b)):

* ``c``: :math:`\langle k^\star, v^\star\rangle = c`. PGD (Definition 1, :math:`\alpha = 4\cdot10^{-3}`, 20 000 steps) on the
  extended closed form (:func:`slrlib.book.ch16_stress.stress_pgd`) from starts with :math:`\theta = \eta = \rho = 0`
  (:func:`slrlib.book.ch16_stress.start_on_manifold`), against the minimiser in the plane of :math:`k^\star, v^\star`
  (:func:`slrlib.book.ch16_stress.plane_minimiser`); runs that end with :math:`|\eta| > 0.9` (:math:`k` along
  :math:`\pm v^\star`) are counted apart;
* ``gamma``: the oracle's risk over the null risk :math:`\gamma^2`, at :math:`\lambda = 0.1` and at the best :math:`\lambda`
  (Theorem 1, :func:`slrlib.core.risk.optimal_lambda`), with the saddle's eigenvalue :math:`\mu_-`
  (:func:`slrlib.book.ch16_stress.saddle_hessian_closed_form`) and the oracle's timescales
  :math:`-1/\log(1 + \alpha\,\partial\mathcal R(1, 1))` (those of :func:`slrlib.book.ch16_dynamics.timescales_at_oracle`,
  from the gradient of Lemma 6, :func:`slrlib.training.pgd.manifold_risk_grad`);
* ``r``: noise tokens with pairwise correlation :math:`r`: the oracle's risk in closed form
  (:func:`slrlib.book.ch16_stress.oracle_risk_correlated`) and by Monte Carlo (tokens drawn in the span of
  :math:`k^\star, v^\star`, the same law as in full dimension: ``reduced=True`` of
  :func:`slrlib.book.ch16_stress.stress_monte_carlo_risk`), and at the best :math:`\lambda`;
* ``pi``: :math:`\pi = (p_1, \frac{1-p_1}{L-1}, \dots)`: the oracle's risk by Monte Carlo (flat: Theorem 1 does not
  depend on :math:`\pi`) and the best linear predictor's (Proposition 3), which does.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import jax
import numpy as np

from slrlib.core.risk import linear_risk, optimal_lambda, oracle_risk
from slrlib.core.task import SLRTask
from slrlib.figures import FigureSpec, register
from slrlib.training.pgd import manifold_risk_grad
from slrlib.book.ch16_stress import (
    StressPGD,
    break_even_gamma2,
    correlated_directions,
    optimal_lambda_correlated,
    saddle_hessian_closed_form,
    oracle_risk_correlated,
    plane_minimiser,
    start_on_manifold,
    stress_monte_carlo_risk,
    stress_pgd,
    stress_risk_from_overlaps,
)
from slrlib.book.plots.stress import plot_stress_tests

__all__ = [
    "CS",
    "GAMMA2S",
    "RS",
    "P1S",
    "LAM",
    "ALPHA",
    "N_STEPS",
    "LOG_EVERY",
    "SWAP_LEVEL",
    "R_PGD",
    "CPanel",
    "GammaPanel",
    "RPanel",
    "PiPanel",
    "StressTests",
    "compute_stress_tests",
    "stress_tests_table",
]

#: The values of :math:`c = \langle k^\star, v^\star\rangle` of panel ``c``.
CS = tuple(round(0.1 * i, 1) for i in range(10))
#: The values of :math:`\gamma^2` of panel ``gamma``.
GAMMA2S = (0.1, 0.15, 0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0)
#: The correlations :math:`r` of panel ``r``.
RS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
#: The probabilities :math:`\pi_1` of panel ``pi``.
P1S = (0.1, 0.3, 0.5, 0.7, 0.9)
#: Inverse temperature of every panel: that of Figure 4(b) (Theorem 5).
LAM = 0.1
#: PGD step size (Figure 4(b)).
ALPHA = 4e-3
#: PGD steps (Figure 4(b)).
N_STEPS = 20_000
#: PGD logging period (Figure 4(b)).
LOG_EVERY = 200
#: The correlation of the noise tokens in the second PGD sweep of panel ``c``.
R_PGD = 0.5
#: A run ends "swapped" when its final :math:`|\eta| = |\langle k, v^\star\rangle|` exceeds this.
SWAP_LEVEL = 0.9


class CPanel(NamedTuple):
    r"""Panel ``c``. ``cs`` (m,); ``pgd`` — one :class:`~slrlib.book.ch16_stress.StressPGD` with ``m * runs`` runs,
    run ``i * runs + j`` being start ``j`` at ``cs[i]``; ``pgd_r`` — the same runs with noise tokens of correlation
    :data:`R_PGD`; ``plane`` — (m, 6) overlaps and risk of the plane minimiser
    (columns ``kappa, nu, theta, eta, rho, risk``); ``swapped`` (m, runs) bool; ``oracle`` (m,) — the risk at
    :math:`(k^\star, v^\star)`; ``runs``.
    """

    cs: np.ndarray
    pgd: StressPGD
    pgd_r: StressPGD
    plane: np.ndarray
    swapped: np.ndarray
    oracle: np.ndarray
    runs: int


class GammaPanel(NamedTuple):
    r"""Panel ``gamma``: per :math:`\gamma^2` (m,): ``ratio_lam`` and ``ratio_best`` (oracle risk / null risk at
    :math:`\lambda` and at the best :math:`\lambda`), ``lam_best``, ``mu_minus`` (the saddle's negative eigenvalue),
    ``time_kappa``, ``time_nu`` (oracle timescales in steps); ``break_even`` the :math:`\gamma^2` where the ratio at
    :math:`\lambda` is 1."""

    gamma2: np.ndarray
    ratio_lam: np.ndarray
    ratio_best: np.ndarray
    lam_best: np.ndarray
    mu_minus: np.ndarray
    time_kappa: np.ndarray
    time_nu: np.ndarray
    break_even: float


class RPanel(NamedTuple):
    r"""Panel ``r``: per correlation (m,): the oracle's risk in closed form (``closed``), by Monte Carlo (``mc``,
    ``mc_se``, ``n_mc`` sequences), the best :math:`\lambda` and the risk there."""

    rs: np.ndarray
    closed: np.ndarray
    mc: np.ndarray
    mc_se: np.ndarray
    lam_best: np.ndarray
    risk_best: np.ndarray
    n_mc: int


class PiPanel(NamedTuple):
    r"""Panel ``pi``: per :math:`p_1` (m,): the oracle's risk by Monte Carlo (``mc``, ``mc_se``), the closed form
    (``closed``, one number), the best linear risk (``linear``)."""

    p1: np.ndarray
    mc: np.ndarray
    mc_se: np.ndarray
    closed: float
    linear: np.ndarray
    n_mc: int


class StressTests(NamedTuple):
    """The data of ``stress_tests``: the four panels, the task, :math:`\\lambda`."""

    c: CPanel
    gamma: GammaPanel
    r: RPanel
    pi: PiPanel
    task: SLRTask
    lam: float


def _pi(p1: float, L: int) -> tuple[float, ...]:
    return (p1,) + ((1.0 - p1) / (L - 1),) * (L - 1)


def compute_stress_tests(
    cs: Sequence[float] = CS,
    gamma2s: Sequence[float] = GAMMA2S,
    rs: Sequence[float] = RS,
    p1s: Sequence[float] = P1S,
    *,
    d: int = 400,
    L: int = 10,
    runs: int = 30,
    n_steps: int = N_STEPS,
    log_every: int = LOG_EVERY,
    n_mc: int = 100_000,
    seed: int = 0,
) -> StressTests:
    r"""The numbers of ``stress_tests`` (default sizes: about 25 s on two CPU cores).

    Parameters
    ----------
    cs, gamma2s, rs, p1s : sequence of float
        The grids of the four panels.
    d, L : int
        The task (:math:`\gamma^2 = 1/2`, :math:`\varepsilon = 0` unless a panel varies them).
    runs : int
        PGD starts per value of :math:`c` (the same starts' key for every :math:`c`).
    n_steps, log_every : int
        PGD steps and logging period.
    n_mc : int
        Sequences per Monte Carlo point.
    seed : int
        ``key(seed)`` is split into: task directions, PGD starts, Monte Carlo of panel ``r``, of panel ``pi``.

    Returns
    -------
    StressTests
    """
    task = SLRTask(d=d, L=L)
    star_key, init_key, r_key, pi_key = jax.random.split(
        jax.random.key(seed), 4
    )
    # ---- c
    cs = np.asarray(cs, dtype=float)
    stars = [correlated_directions(star_key, d, float(c)) for c in cs]
    starts = [start_on_manifold(init_key, ks, vs, runs) for ks, vs in stars]
    K0 = np.concatenate([s[0] for s in starts])
    V0 = np.concatenate([s[1] for s in starts])
    KS = np.concatenate([np.broadcast_to(ks, (runs, d)) for ks, _ in stars])
    VS = np.concatenate([np.broadcast_to(vs, (runs, d)) for _, vs in stars])
    res = stress_pgd(
        K0,
        V0,
        KS,
        VS,
        task,
        lam=LAM,
        alpha=ALPHA,
        n_steps=n_steps,
        log_every=log_every,
    )
    res_r = stress_pgd(
        K0,
        V0,
        KS,
        VS,
        task,
        lam=LAM,
        alpha=ALPHA,
        n_steps=n_steps,
        log_every=log_every,
        r=R_PGD,
    )
    plane = np.array(
        [list(plane_minimiser(float(c), LAM, task)[:6]) for c in cs]
    )
    swapped = (np.abs(res.eta[:, -1]) > SWAP_LEVEL).reshape(cs.size, runs)
    oracle = np.array(
        [
            float(
                stress_risk_from_overlaps(
                    1.0, 1.0, c, c, c, LAM, task, c=float(c)
                )
            )
            for c in cs
        ]
    )
    c_panel = CPanel(cs, res, res_r, plane, swapped, oracle, runs)
    # ---- gamma
    g2 = np.asarray(gamma2s, dtype=float)
    rows = []
    for x in g2:
        t = task.replace(gamma=math.sqrt(x))
        lam_b, risk_b = optimal_lambda(t)
        mu_minus = float(
            np.linalg.eigvalsh(saddle_hessian_closed_form(LAM, t))[0]
        )
        # the angle Hessian at the oracle is diag(-dR/dkappa, -dR/dnu) (ch16_dynamics.timescales_at_oracle)
        d_kappa, d_nu = (
            float(g) for g in manifold_risk_grad(1.0, 1.0, LAM, t)
        )
        times = [-1.0 / math.log(1.0 + ALPHA * g) for g in (d_kappa, d_nu)]
        rows.append(
            (
                float(oracle_risk(LAM, t)) / x,
                risk_b / x,
                lam_b,
                mu_minus,
                *times,
            )
        )
    rows = np.array(rows)
    gamma_panel = GammaPanel(g2, *rows.T, break_even_gamma2(LAM, task))
    # ---- r
    k_star, v_star = task.oracle_directions(star_key)
    rs = np.asarray(rs, dtype=float)
    closed = np.array(
        [float(oracle_risk_correlated(LAM, task, float(r))) for r in rs]
    )
    mcs = [
        stress_monte_carlo_risk(
            k_star,
            v_star,
            k_star,
            v_star,
            LAM,
            task,
            jax.random.fold_in(r_key, i),
            r=float(r),
            n_samples=n_mc,
            batch_size=min(n_mc, 50_000),
            reduced=True,
        )
        for i, r in enumerate(rs)
    ]
    best = np.array([optimal_lambda_correlated(task, float(r)) for r in rs])
    r_panel = RPanel(
        rs,
        closed,
        np.array([float(m.mean) for m in mcs]),
        np.array([float(m.stderr) for m in mcs]),
        best[:, 0],
        best[:, 1],
        n_mc,
    )
    # ---- pi
    p1 = np.asarray(p1s, dtype=float)
    tasks = [task.replace(probs=_pi(float(p), L)) for p in p1]
    mcp = [
        stress_monte_carlo_risk(
            k_star,
            v_star,
            k_star,
            v_star,
            LAM,
            t,
            jax.random.fold_in(pi_key, i),
            n_samples=n_mc,
            batch_size=min(n_mc, 50_000),
            reduced=True,
        )
        for i, t in enumerate(tasks)
    ]
    pi_panel = PiPanel(
        p1,
        np.array([float(m.mean) for m in mcp]),
        np.array([float(m.stderr) for m in mcp]),
        float(oracle_risk(LAM, task)),
        np.array([linear_risk(t) for t in tasks]),
        n_mc,
    )
    return StressTests(c_panel, gamma_panel, r_panel, pi_panel, task, LAM)


def stress_tests_table(data: StressTests) -> dict[str, np.ndarray]:
    """Long format: one row per (panel, series, x) with the plotted value ``y`` and its standard error ``y_se``
    (0 for closed forms and PGD medians)."""
    cols: dict[str, list] = {
        "panel": [],
        "series": [],
        "x": [],
        "y": [],
        "y_se": [],
    }

    def add(panel, series, x, y, se=None):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        cols["panel"] += [panel] * x.size
        cols["series"] += [series] * x.size
        cols["x"] += list(x)
        cols["y"] += list(y)
        cols["y_se"] += list(
            np.zeros(x.size) if se is None else np.asarray(se, dtype=float)
        )

    c = data.c
    m, R = c.cs.size, c.runs
    for j, name in enumerate(("kappa", "nu", "theta", "eta", "rho")):
        final = np.abs(getattr(c.pgd, name)[:, -1]).reshape(m, R)
        med = np.array(
            [
                np.median(final[i][~c.swapped[i]])
                if np.any(~c.swapped[i])
                else np.nan
                for i in range(m)
            ]
        )
        add("c", f"pgd_{name}", c.cs, med)
        add("c", f"plane_{name}", c.cs, np.abs(c.plane[:, j]))
    add("c", "swapped_fraction", c.cs, c.swapped.mean(axis=1))
    add("c", "plane_risk", c.cs, c.plane[:, 5])
    add("c", "oracle_risk", c.cs, c.oracle)
    g = data.gamma
    add("gamma", "ratio_lam", g.gamma2, g.ratio_lam)
    add("gamma", "ratio_best", g.gamma2, g.ratio_best)
    add("gamma", "mu_minus_over_gamma2", g.gamma2, g.mu_minus / g.gamma2)
    r = data.r
    add("r", "oracle_closed", r.rs, r.closed)
    add("r", "oracle_mc", r.rs, r.mc, r.mc_se)
    add("r", "best_lambda_risk", r.rs, r.risk_best)
    p = data.pi
    add("pi", "oracle_mc", p.p1, p.mc, p.mc_se)
    add("pi", "oracle_closed", p.p1, np.full(p.p1.size, p.closed))
    add("pi", "linear", p.p1, p.linear)
    return {
        "panel": np.asarray(cols["panel"]),
        "series": np.asarray(cols["series"]),
        "x": np.asarray(cols["x"], dtype=float),
        "y": np.asarray(cols["y"], dtype=float),
        "y_se": np.asarray(cols["y_se"], dtype=float),
    }


register(
    FigureSpec(
        "stress_tests",
        "Stress tests of the assumptions: <k*, v*> = c, gamma^2, correlated noise tokens, "
        "non-uniform position",
        16,
        compute_stress_tests,
        plot_stress_tests,
        stress_tests_table,
    )
)
