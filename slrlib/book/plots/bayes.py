r"""Figures of chapter 4, *Bayes optimality*.

One function per figure, each returning a matplotlib Figure. Each figure is created with
pyplot (which sets up the notebook's display backend) and then removed from pyplot's
registry: a notebook shows it once, as the value of its cell, and none lingers in memory.
Every number plotted is either passed in (Monte Carlo estimates computed in the chapter)
or computed here through the public closed forms of :mod:`slrlib.book.ch04_bayes` (:func:`~slrlib.book.ch04_bayes.oracle_excess_terms`,
:func:`~slrlib.book.ch04_bayes.hard_oracle_risk`).
"""

from __future__ import annotations

import functools
import math

import matplotlib
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np

from slrlib.book.ch04_bayes import (
    ReliabilityTable,
    hard_oracle_risk,
    oracle_excess_terms,
)
from slrlib.plots.style import COLORS, COLUMN_WIDTH_IN
from slrlib.core.task import SLRTask

__all__ = [
    "plot_reliability",
    "plot_corollary2_scalings",
    "plot_optimal_lambda",
    "plot_bayes_vs_attention",
    "plot_excess_vs_d",
]


def _figure(figsize, nrows=1, ncols=1, **kwargs):
    """A new figure and its axes, detached from pyplot (shown once when returned from a cell)."""
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, **kwargs)
    plt.close(fig)
    return fig, axes


def plot_reliability(table: ReliabilityTable, title: str | None = None):
    r"""Reliability diagram of the Bayes posterior: frequency of :math:`\arg\max_\ell p_\ell = J_0` against
    the mean of :math:`\max_\ell p_\ell`, per bin, with two binomial standard errors; the diagonal is
    perfect calibration. A bar chart below gives the number of samples per bin."""
    ok = table.count > 0
    fig, (ax, axc) = _figure(
        (5.6, 5.0),
        2,
        1,
        sharex=True,
        layout="constrained",
        gridspec_kw={"height_ratios": [3, 1]},
    )
    ax.plot(
        [0, 1],
        [0, 1],
        color=COLORS["bound"],
        lw=0.8,
        ls="--",
        label="calibrated",
    )
    ax.errorbar(
        table.confidence[ok],
        table.accuracy[ok],
        yerr=2 * table.stderr[ok],
        fmt="o",
        ms=5,
        color=COLORS["bayes"],
        capsize=3,
        label=r"Bayes posterior, $\pm 2$ s.e.",
    )
    lo = float(np.nanmin(table.lower[ok]))
    ax.set_xlim(lo - 0.02, 1.01)
    ax.set_ylim(lo - 0.05, 1.02)
    ax.set_ylabel(r"frequency of $\arg\max\, p = J_0$")
    ax.legend(loc="upper left")
    if title:
        ax.set_title(title)
    centres = 0.5 * (table.lower + table.upper)
    widths = 0.9 * (table.upper - table.lower)
    axc.bar(
        centres, table.count, width=widths, color=COLORS["bayes"], alpha=0.5
    )
    axc.set_yscale("log")
    axc.yaxis.set_major_locator(matplotlib.ticker.LogLocator(numticks=3))
    axc.set_ylabel("samples")
    axc.set_xlabel(r"posterior confidence $\max\, p$ (bin mean)")
    fig.align_ylabels((ax, axc))
    return fig


def plot_corollary2_scalings(d, curves):
    r"""Oracle excess risk :math:`\mathcal R_\lambda(k^\star, v^\star) - \varepsilon^2` against :math:`d` (log–log)
    along several joint scalings of :math:`(\lambda, L)` with :math:`d`.

    ``curves``: a sequence of ``(label, excess, holds)`` with ``excess`` of the shape of ``d``;
    ``holds`` says whether the scaling satisfies Corollary 2's conditions (solid line) or not
    (dashed line).
    """
    d = np.asarray(d, dtype=float)
    fig, ax = _figure((COLUMN_WIDTH_IN, 5.4), layout="constrained")
    cmap = matplotlib.colormaps["tab10"]
    for i, (label, excess, holds) in enumerate(curves):
        ax.plot(
            d,
            np.asarray(excess),
            ls="-" if holds else "--",
            lw=2 if holds else 1.5,
            marker="o" if holds else None,
            ms=3,
            color=cmap(i),
            label=("✓ " if holds else "✗ ") + label,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("token dimension $d$")
    ax.set_ylabel(
        r"excess risk $\mathcal{R}_\lambda(k^\star, v^\star) - \varepsilon^2$"
    )
    ax.set_title(
        r"Corollary 2: $\lambda\sqrt{d}\to\infty$ and $\lambda\sqrt{L}\to 0$ (✓) or not (✗)"
    )
    fig.legend(loc="outside lower center", ncol=1, frameon=False)
    ax.grid(True, which="major", alpha=0.3)
    return fig


def plot_optimal_lambda(
    d, lam_star, excess_star, lam_asym=None, excess_asym=None, L=None
):
    r"""The best inverse temperature :math:`\lambda^\star(d)` and the oracle excess risk there, against :math:`d`.

    Left: :math:`\lambda^\star` with the Corollary 2 boundaries :math:`1/\sqrt d` (below it the relevant
    token does not saturate) and :math:`1/\sqrt L` (above it the noise tokens add up).
    Right: the minimal excess risk. Dotted: the large-:math:`d` approximations, if given.
    """
    d = np.asarray(d, dtype=float)
    fig, (a1, a2) = _figure((COLUMN_WIDTH_IN, 3.8), 1, 2, layout="constrained")
    a1.plot(
        d,
        lam_star,
        "o-",
        ms=3,
        color=COLORS["attention"],
        label="exact minimiser",
    )
    if lam_asym is not None:
        a1.plot(
            d, lam_asym, ":", lw=2, color=COLORS["bound"], label="asymptotic"
        )
    a1.plot(
        d,
        1 / np.sqrt(d),
        "--",
        lw=1,
        color=COLORS["null"],
        label=r"$1/\sqrt{d}$",
    )
    if L is not None:
        a1.axhline(
            1 / math.sqrt(L),
            ls="-.",
            lw=1,
            color=COLORS["linear"],
            label=rf"$1/\sqrt{{L}}$, $L = {L}$",
        )
    a1.set_ylabel(r"best inverse temperature $\lambda^\star$")
    a2.plot(d, excess_star, "o-", ms=3, color=COLORS["attention"])
    if excess_asym is not None:
        a2.plot(d, excess_asym, ":", lw=2, color=COLORS["bound"])
    a2.set_ylabel(r"excess risk at $\lambda^\star$")
    for ax in (a1, a2):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(numticks=4))
        ax.set_xlabel("token dimension $d$")
        ax.grid(True, which="major", alpha=0.3)
    fig.legend(
        loc="outside lower center",
        ncol=4,
        frameon=False,
        handlelength=1.6,
        columnspacing=1.2,
    )
    return fig


def plot_bayes_vs_attention(
    d_curve,
    attention_excess,
    hard_excess,
    d_mc,
    bayes_mean,
    bayes_stderr,
    eps: float,
    null_excess: float,
    fit=None,
):
    r"""The Bayes risk beside the oracle attention predictor's, as :math:`d` grows.

    Left: risks (log scale) with the lower bound :math:`\varepsilon^2` of eq. (8): the attention
    predictor at its best :math:`\lambda` (closed form), the hard oracle (an upper bound on the Bayes
    risk, closed form) and the Bayes predictor (Monte Carlo, two standard errors). Right: the
    same minus :math:`\varepsilon^2` (log scale against a linear :math:`d`: an exponential decay is a
    straight line). ``fit``: optional ``(slope, intercept)`` of :math:`\log(\text{excess})` against
    :math:`d`, drawn dotted over ``d_curve``.
    """
    d_curve = np.asarray(d_curve, dtype=float)
    d_mc = np.asarray(d_mc, dtype=float)
    att, hard = np.asarray(attention_excess), np.asarray(hard_excess)
    bm, bs = np.asarray(bayes_mean), np.asarray(bayes_stderr)
    e2 = eps**2
    fig, (a1, a2) = _figure((COLUMN_WIDTH_IN, 4.8), 1, 2, layout="constrained")
    a1.plot(
        d_curve,
        att + e2,
        color=COLORS["attention"],
        lw=2,
        label=r"erf attention, best $\lambda$",
    )
    a1.plot(
        d_curve,
        hard + e2,
        color=COLORS["oracle"],
        lw=1.5,
        label="hard oracle (1)",
    )
    a1.errorbar(
        d_mc,
        bm + e2,
        yerr=2 * bs,
        fmt="o",
        ms=4,
        color=COLORS["bayes"],
        capsize=2,
        label=r"Bayes predictor, Monte Carlo $\pm 2$ s.e.",
    )
    a1.axhline(
        e2,
        color=COLORS["bound"],
        ls="--",
        lw=1,
        label=r"lower bound $\varepsilon^2$, eq. (8)",
    )
    a1.axhline(
        null_excess + e2,
        color=COLORS["null"],
        ls=":",
        lw=1,
        label=r"null, $\gamma^2+\varepsilon^2$",
    )
    a1.set_yscale("log")
    a1.set_xscale("log")
    a1.set_ylabel("risk")
    a1.set_title("(a) risks")
    a1.set_ylim(0.5 * e2, 2 * (null_excess + e2))
    a1.yaxis.set_major_locator(matplotlib.ticker.LogLocator(numticks=4))
    a2.plot(d_curve, att, color=COLORS["attention"], lw=2)
    a2.plot(
        d_curve,
        np.where(hard > 0, hard, np.nan),
        color=COLORS["oracle"],
        lw=1.5,
    )
    pos = bm > 0
    a2.errorbar(
        d_mc[pos],
        bm[pos],
        yerr=np.minimum(2 * bs[pos], 0.999 * bm[pos]),
        fmt="o",
        ms=4,
        color=COLORS["bayes"],
        capsize=2,
    )
    if fit is not None:
        slope, intercept = fit
        a2.plot(
            d_curve,
            np.exp(intercept + slope * d_curve),
            ":",
            color=COLORS["bayes"],
            lw=1.5,
            label=f"fit $e^{{{intercept:.2f} {slope:+.3f}\\,d}}$, extrapolated",
        )
    a2.set_yscale("log")
    a2.set_ylabel(r"excess risk over $\varepsilon^2$")
    a2.set_title(r"(b) excess, linear $d$")
    a2.set_ylim(1e-30, 2)
    a2.yaxis.set_major_locator(matplotlib.ticker.LogLocator(numticks=4))
    a2.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4))
    for ax in (a1, a2):
        ax.set_xlabel("token dimension $d$")
        ax.grid(True, which="major", alpha=0.3)
    fig.legend(loc="outside lower center", ncol=2, frameon=False)
    return fig


_PLAIN_LOG = matplotlib.ticker.FuncFormatter(
    lambda x, _: f"1e{round(math.log10(x)):d}" if x > 0 else "0"
)
_D_GRID = np.unique(np.round(np.geomspace(10, 1e6, 61)))
_LAM_GRID = np.geomspace(1e-5, 10, 400)


@functools.lru_cache(maxsize=32)
def _references(L: int, gamma: float):
    """Best-λ envelope and hard-oracle excess over the slider's d grid (cached per L, γ)."""
    terms = oracle_excess_terms(_LAM_GRID[:, None], _D_GRID[None, :], L, gamma)
    envelope = np.min(np.asarray(terms.relevant + terms.noise), axis=0)
    hard = np.array(
        [
            hard_oracle_risk(SLRTask(d=int(d), L=L, gamma=gamma))
            for d in _D_GRID
        ]
    )
    return envelope, hard


def plot_excess_vs_d(lam: float, L: int, gamma: float = math.sqrt(0.5)):
    r"""One frame of the chapter's slider figure: the oracle excess risk at a *fixed* :math:`\lambda`
    against :math:`d`, and where that :math:`\lambda` sits.

    Curves (log–log): the excess risk at the chosen :math:`\lambda` and its two terms, the best-:math:`\lambda`
    envelope :math:`\min_\lambda \mathcal R_\lambda - \varepsilon^2`, and the hard oracle's excess (an upper bound
    on the Bayes excess). Marked: :math:`d = 1/\lambda^2` (where :math:`\lambda\sqrt d = 1`) and the noise floor
    :math:`(L-1)\zeta(0, \lambda)` that a fixed :math:`\lambda` cannot go below. Closed forms only.
    """
    d = _D_GRID
    terms = oracle_excess_terms(lam, d, L, gamma)
    rel, noi = np.asarray(terms.relevant), np.asarray(terms.noise)
    envelope, hard = _references(int(L), float(gamma))
    floor = 1e-6
    fig, ax = _figure((COLUMN_WIDTH_IN, 4.6))
    fig.subplots_adjust(left=0.13, right=0.97, bottom=0.3, top=0.87)
    # Plain-text labels and tick labels (no mathtext): a frame renders several times faster.
    ax.plot(
        d,
        rel + noi,
        color=COLORS["attention"],
        lw=2.5,
        label=f"excess risk at λ = {lam:g}",
    )
    ax.plot(
        d,
        np.maximum(rel, floor / 10),
        color=COLORS["oracle"],
        lw=1,
        ls="-.",
        label="relevant-token term",
    )
    ax.plot(
        d,
        noi,
        color=COLORS["softmax"],
        lw=1,
        ls="--",
        label="noise term (L−1) ζ(0, λ)",
    )
    ax.plot(
        d,
        envelope,
        color=COLORS["bound"],
        lw=1.2,
        ls=":",
        label="best λ for each d",
    )
    ax.plot(
        d,
        np.where(hard > 0, hard, np.nan),
        color=COLORS["bayes"],
        lw=1.5,
        label="hard oracle (≥ Bayes excess)",
    )
    d_sat = 1.0 / lam**2
    if d[0] <= d_sat <= d[-1]:
        ax.axvline(d_sat, color=COLORS["null"], lw=0.8)
        ax.text(
            d_sat * 1.1,
            2.5 * max(L, 1),
            "λ√d = 1",
            color=COLORS["null"],
            va="top",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(floor, 5 * max(L, 1))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(_PLAIN_LOG)
        axis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(numticks=5))
    ax.set_xlabel("token dimension d")
    ax.set_ylabel("excess risk over ε²")
    ax.set_title(
        f"L = {L}, λ = {lam:g}:   λ√L = {lam * math.sqrt(L):.3g}\n"
        f"noise floor (L−1) ζ(0, λ) = {float(noi[0]):.2e}"
    )
    fig.legend(
        loc="lower center",
        ncol=2,
        frameon=False,
        handlelength=1.8,
        columnspacing=1.2,
    )
    return fig
