"""Figures of Chapter 2, *From attention to the predictor*.

Plotting only: token weights come from :mod:`slrlib.book.ch02_selectors`, risks from
:func:`slrlib.oracle_risk` (closed form) and from Monte Carlo estimates computed by the
chapter with :func:`slrlib.monte_carlo_risk`.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from slrlib.plots.style import COLORS, COLUMN_WIDTH_IN, new_figure
from slrlib.core.risk import MonteCarloEstimate, null_risk, oracle_risk
from slrlib.book.ch02_selectors import erf_weights, softmax_weights
from slrlib.core.task import SLRTask

__all__ = ["attention_weights", "weights_and_risk", "risk_vs_lambda"]

_OTHER = COLORS["null"]
_RELEVANT = COLORS["monte_carlo"]


def _bars(ax, weights, j0, ylim, ylabel):
    L = len(weights)
    colors = [_RELEVANT if ell == j0 else _OTHER for ell in range(L)]
    ax.bar(np.arange(1, L + 1), weights, color=colors)
    ax.axhline(0.0, color="black", lw=0.6)
    ax.set_ylim(*ylim)
    ax.set_xticks(_position_ticks(L))
    ax.set_ylabel(ylabel)


def _position_ticks(L):
    """A few positions 1..L to label: the ends and a middle one."""
    return sorted({1, (L + 1) // 2, L}) if L > 4 else list(range(1, L + 1))


def attention_weights(x, j0: int, k, lams) -> Figure:
    r"""Token weights of one sequence: :math:`\operatorname{erf}(\lambda X_\ell^\top k)` (top row)
    and :math:`\operatorname{softmax}(\lambda \mathbb X k)_\ell` (bottom row), one column per
    :math:`\lambda` in ``lams``.

    ``x`` (L, d) is one sequence, ``j0`` its relevant position (0-based, drawn in orange;
    positions are labelled 1..L on the axis).
    """
    x = np.asarray(x)
    lams = list(lams)
    fig = new_figure(figsize=(COLUMN_WIDTH_IN, 5.0))
    axes = fig.subplots(2, len(lams), sharex=True, sharey="row", squeeze=False)
    for col, lam in enumerate(lams):
        w_erf = np.asarray(erf_weights(x, k, lam))
        w_soft = np.asarray(softmax_weights(x, k, lam))
        _bars(
            axes[0, col],
            w_erf,
            j0,
            (-1.05, 1.05),
            "erf weight" if col == 0 else "",
        )
        axes[0, col].set_title(
            rf"$\lambda = {lam:g}$"
            "\n"
            rf"$\lambda\sqrt{{d}} = {lam * np.sqrt(x.shape[-1]):.3g}$"
        )
        _bars(
            axes[1, col],
            w_soft,
            j0,
            (0.0, 1.05),
            "softmax weight" if col == 0 else "",
        )
        axes[1, col].set_xlabel(r"position $\ell$")
    handles = [
        Patch(color=_RELEVANT, label=r"relevant position $J_0$"),
        Patch(color=_OTHER, label="other positions"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=2)
    return fig


def weights_and_risk(
    x, j0: int, k, lam: float, task: SLRTask, lam_grid
) -> Figure:
    r"""One frame of the λ slider: the two kinds of weights of one sequence at ``lam`` (left)
    and the closed-form risk :math:`\mathcal R_\lambda(k^\star, v^\star)` of the erf predictor
    against :math:`\lambda` with ``lam`` marked (right). Closed forms only.
    """
    x = np.asarray(x)
    L = x.shape[0]
    lam_grid = np.asarray(lam_grid, dtype=float)
    w_erf = np.asarray(erf_weights(x, k, lam))
    w_soft = np.asarray(softmax_weights(x, k, lam))
    fig = new_figure(layout=None, figsize=(COLUMN_WIDTH_IN, 4.0))
    fig.subplots_adjust(
        left=0.1, right=0.98, bottom=0.3, top=0.88, wspace=0.35
    )
    ax_w, ax_r = fig.subplots(1, 2)
    pos = np.arange(1, L + 1)
    edge = [_RELEVANT if ell == j0 else "none" for ell in range(L)]
    ax_w.bar(
        pos - 0.2,
        w_erf,
        width=0.4,
        color=COLORS["attention"],
        edgecolor=edge,
        lw=2,
        label="erf weight (3)",
    )
    ax_w.bar(
        pos + 0.2,
        w_soft,
        width=0.4,
        color=COLORS["softmax"],
        edgecolor=edge,
        lw=2,
        label="softmax weight (2)",
    )
    ax_w.axhline(0.0, color="black", lw=0.6)
    ax_w.set_ylim(-1.05, 1.05)
    ax_w.set_xticks(_position_ticks(L))
    ax_w.set_xlabel(rf"position $\ell$ ($J_0 = {j0 + 1}$ outlined)")
    ax_w.set_ylabel("weight")
    fig.suptitle(
        rf"$\lambda = {lam:.3g}$:   $\lambda\sqrt{{d}} = {lam * np.sqrt(task.d):.3g}$,   "
        rf"$\lambda\sqrt{{L}} = {lam * np.sqrt(task.L):.3g}$   ($d = {task.d}$, $L = {task.L}$)"
    )

    risk = np.asarray(oracle_risk(lam_grid, task))
    ax_r.loglog(
        lam_grid, risk, color=COLORS["attention"], label="erf risk (Theorem 1)"
    )
    ax_r.plot(
        [lam], [float(oracle_risk(lam, task))], "o", color=COLORS["attention"]
    )
    ax_r.axhline(
        null_risk(task), color=COLORS["null"], ls="--", lw=1, label="null risk"
    )
    if task.eps > 0:
        ax_r.axhline(
            task.eps**2,
            color=COLORS["bound"],
            ls=":",
            lw=1,
            label=r"$\varepsilon^2$",
        )
    ax_r.set_xlabel(r"$\lambda$")
    ax_r.set_ylabel(r"risk at $(k^\star, v^\star)$")
    fig.legend(
        loc="lower center",
        ncol=3,
        frameon=False,
        handlelength=1.5,
        columnspacing=1.2,
    )
    return fig


def risk_vs_lambda(
    lams,
    erf_est: MonteCarloEstimate,
    softmax_est: MonteCarloEstimate,
    hard_est: MonteCarloEstimate,
    task: SLRTask,
    lam_curve,
) -> Figure:
    r"""Risks of the three predictors at :math:`(k^\star, v^\star)` against :math:`\lambda`.

    Monte Carlo means with ±2 standard-error bars for the softmax (2) and erf (3)
    predictors at ``lams`` (estimates of shape (m,)), the hard oracle (1) as a horizontal
    band (it has no λ), and the closed form :func:`slrlib.oracle_risk` of the erf predictor
    on ``lam_curve``. Log-log axes.
    """
    lams = np.asarray(lams, dtype=float)
    lam_curve = np.asarray(lam_curve, dtype=float)
    fig = new_figure(figsize=(COLUMN_WIDTH_IN, 4.6))
    ax = fig.subplots()
    ax.plot(
        lam_curve,
        np.asarray(oracle_risk(lam_curve, task)),
        color=COLORS["attention"],
        lw=1.5,
        label="erf (3), closed form",
    )
    ax.errorbar(
        lams,
        erf_est.mean,
        yerr=2 * erf_est.stderr,
        fmt="o",
        color=COLORS["attention"],
        mfc="white",
        label="erf (3), Monte Carlo",
    )
    ax.errorbar(
        lams,
        softmax_est.mean,
        yerr=2 * softmax_est.stderr,
        fmt="s-",
        color=COLORS["softmax"],
        mfc="white",
        lw=1,
        label="softmax (2), Monte Carlo",
    )
    m = float(np.ravel(hard_est.mean)[0])
    s = float(np.ravel(hard_est.stderr)[0])
    ax.axhspan(m - 2 * s, m + 2 * s, color=COLORS["oracle"], alpha=0.4)
    ax.axhline(
        m, color=COLORS["oracle"], lw=1.5, label="hard oracle (1), Monte Carlo"
    )
    ax.axhline(
        null_risk(task),
        color=COLORS["null"],
        ls="--",
        lw=1,
        label=r"null, $\gamma^2 + \varepsilon^2$",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"inverse temperature $\lambda$")
    ax.set_ylabel(r"risk at $(k^\star, v^\star)$")
    ax.set_title(
        rf"$d = {task.d}$, $L = {task.L}$, $\gamma^2 = {task.gamma**2:.3g}$, "
        rf"$\varepsilon = {task.eps:g}$; bars: $\pm 2$ s.e."
    )
    fig.legend(loc="outside lower center", ncol=2)
    return fig
