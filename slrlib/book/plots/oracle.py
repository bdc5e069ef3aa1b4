r"""Figures of chapter 3, *The risk of the oracle in closed form*.

One function per figure, each returning a matplotlib Figure. Each function closes its
figure in pyplot before returning it, so that a notebook displays it exactly once (as the
cell's value, not a second time when the inline backend flushes open figures). Every number plotted is
either passed in (Monte Carlo estimates computed in the chapter) or computed here through
the public closed forms of ``slrlib`` (:func:`slrlib.oracle_risk`, :func:`slrlib.zeta`,
:func:`slrlib.book.ch04_bayes.oracle_risk_terms`, :func:`slrlib.null_risk`, :func:`slrlib.linear_risk`).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import colormaps
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from slrlib.book.ch04_bayes import oracle_risk_terms
from slrlib.core.gaussian import zeta
from slrlib.plots.style import COLORS, COLUMN_WIDTH_IN
from slrlib.core.risk import linear_risk, null_risk, oracle_risk
from slrlib.core.task import SLRTask

__all__ = [
    "plot_zeta",
    "plot_oracle_risk_vs_lambda",
    "plot_oracle_terms",
    "plot_oracle_tradeoff",
]

# The two parts of the oracle risk, in colours of the book's palette.
TERM_COLORS = {
    "relevant": COLORS["oracle"],
    "noise": COLORS["softmax"],
    "total": COLORS["attention"],
}


def plot_zeta(t, s_values, t_quad=None, zeta_quad=None):
    r""":math:`\zeta(t, s)` against :math:`t` for a few :math:`s`: closed form (lines) and quadrature (dots).

    ``t``: grid for the curves; ``s_values``: one curve each; ``t_quad`` (n,) and
    ``zeta_quad`` (len(s_values), n): optional quadrature values drawn as markers.
    """
    t = np.asarray(t, dtype=float)
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH_IN, 4.0))
    cmap = colormaps["viridis"]
    for i, s in enumerate(s_values):
        color = cmap(i / max(1, len(s_values) - 1) * 0.9)
        ax.plot(t, np.asarray(zeta(t, s)), color=color, label=f"$s = {s:g}$")
        if t_quad is not None and zeta_quad is not None:
            ax.plot(t_quad, zeta_quad[i], "o", ms=4, mfc="none", color=color)
    if t_quad is not None and zeta_quad is not None:
        ax.plot([], [], "o", mfc="none", color="k", label="quadrature")
    ax.set_xlabel("$t$")
    ax.set_ylabel(r"$\zeta(t, s) = \mathbb{E}\,\mathrm{erf}(t + sG)^2$")
    ax.set_ylim(-0.02, 1.05)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.set_title(r"$\zeta(t, s)$ rises from $\zeta(0, s)$ to 1 as $|t|$ grows")
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_oracle_risk_vs_lambda(
    task: SLRTask, lam_grid, lam_mc=None, mc_mean=None, mc_stderr=None
):
    r"""Oracle risk :math:`\mathcal R_\lambda(k^\star, v^\star)` against :math:`\lambda` (log–log).

    The closed form (Theorem 1) on ``lam_grid``; Monte Carlo means at ``lam_mc`` with
    ±2 standard-error bars; the null and best-linear risks as references.
    """
    lam_grid = np.asarray(lam_grid, dtype=float)
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH_IN, 4.2))
    ax.plot(
        lam_grid,
        np.asarray(oracle_risk(lam_grid, task)),
        color=COLORS["attention"],
        lw=2,
        label=r"closed form (Theorem 1)",
    )
    if lam_mc is not None:
        ax.errorbar(
            lam_mc,
            mc_mean,
            yerr=2 * np.asarray(mc_stderr),
            fmt="o",
            ms=4,
            capsize=3,
            color=COLORS["monte_carlo"],
            label=r"Monte Carlo, $\pm 2$ SE",
        )
    ax.axhline(
        null_risk(task),
        color=COLORS["null"],
        ls="--",
        lw=1,
        label=r"null, $\gamma^2 + \varepsilon^2$",
    )
    ax.axhline(
        linear_risk(task),
        color=COLORS["linear"],
        ls=":",
        lw=1.2,
        label="best linear (Prop. 3)",
    )
    if task.eps > 0:
        ax.axhline(
            task.eps**2,
            color=COLORS["bound"],
            ls="-.",
            lw=1,
            label=r"$\varepsilon^2$ (Bayes bound)",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"inverse temperature $\lambda$")
    ax.set_ylabel(r"risk $\mathcal{R}_\lambda(k^\star, v^\star)$")
    ax.set_title(
        f"Oracle erf attention, $d = {task.d}$, $L = {task.L}$, "
        rf"$\gamma^2 = {task.gamma**2:.3g}$, $\varepsilon = {task.eps:g}$"
    )
    ax.legend(loc="lower right")
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_oracle_terms(task: SLRTask, lam_grid):
    r"""The two terms of the oracle excess risk against :math:`\lambda` (log–log).

    Relevant token :math:`\gamma^2[1 - 2\operatorname{erf}(\lambda q/\sqrt{1 + 2\lambda^2\gamma^2}) + \zeta(\lambda q, \lambda\gamma)]`,
    noise tokens :math:`(L-1)\zeta(0, \lambda)` with its small-:math:`\lambda` form
    :math:`4\lambda^2(L-1)/\pi`, and their sum; dotted verticals at :math:`\lambda\sqrt d = 1`
    and :math:`\lambda\sqrt L = 1`.
    """
    lam_grid = np.asarray(lam_grid, dtype=float)
    terms = oracle_risk_terms(lam_grid, task)
    relevant, noise = np.asarray(terms.relevant), np.asarray(terms.noise)
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH_IN, 4.4))
    ax.plot(
        lam_grid,
        relevant + noise,
        color=TERM_COLORS["total"],
        lw=2.5,
        alpha=0.6,
        label=r"excess risk, $\mathcal{R}_\lambda - \varepsilon^2$",
    )
    ax.plot(
        lam_grid,
        relevant,
        color=TERM_COLORS["relevant"],
        lw=1.8,
        label="relevant token",
    )
    ax.plot(
        lam_grid,
        noise,
        color=TERM_COLORS["noise"],
        lw=1.8,
        label=r"noise, $(L-1)\,\zeta(0,\lambda)$",
    )
    ax.plot(
        lam_grid,
        4 * lam_grid**2 * (task.L - 1) / math.pi,
        color=TERM_COLORS["noise"],
        ls="--",
        lw=1,
        label=r"$4\lambda^2(L-1)/\pi$",
    )
    for x, txt in (
        (1 / math.sqrt(task.d), r"$\lambda\sqrt{d} = 1$"),
        (1 / math.sqrt(task.L), r"$\lambda\sqrt{L} = 1$"),
    ):
        ax.axvline(x, color=COLORS["bound"], ls=":", lw=1)
        ax.text(
            x,
            0.97,
            txt,
            transform=ax.get_xaxis_transform(),
            rotation=90,
            ha="right",
            va="top",
            bbox={"fc": "white", "ec": "none", "pad": 1},
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(1e-5, 3 * float(np.max(relevant + noise)))
    ax.set_xlabel(r"inverse temperature $\lambda$")
    ax.set_ylabel("contribution to the excess risk")
    ax.set_title(
        f"Two terms pulling $\\lambda$ apart ($d = {task.d}$, $L = {task.L}$)"
    )
    ax.legend(loc="lower right")
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_oracle_tradeoff(
    lam: float, L: int, d: int, gamma: float = math.sqrt(0.5), lam_grid=None
):
    r"""One frame of the chapter's slider figure: the trade-off at inverse temperature ``lam``.

    The oracle excess risk of ``SLRTask(d, L, gamma)`` and its two terms against
    :math:`\lambda` (log–log), the current ``lam`` marked on each curve with its values
    written out, and the best :math:`\lambda` of the grid starred. Closed forms only
    (milliseconds); the rest is matplotlib, kept light (plain-text labels, no minor ticks)
    because the static book renders every frame of the slider grid.
    """
    task = SLRTask(d=int(d), L=int(L), gamma=gamma)
    if lam_grid is None:
        lam_grid = np.geomspace(1e-3, 10, 200)
    lam_grid = np.asarray(lam_grid, dtype=float)
    terms = oracle_risk_terms(lam_grid, task)
    rel, noi = np.asarray(terms.relevant), np.asarray(terms.noise)
    tot = rel + noi
    now = oracle_risk_terms(lam, task)
    r_now, n_now = float(now.relevant), float(now.noise)
    i_best = int(np.argmin(tot))
    floor = 1e-5

    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH_IN, 3.8))
    fig.subplots_adjust(left=0.12, right=0.66, bottom=0.15, top=0.9)
    ax.plot(
        lam_grid,
        tot,
        color=TERM_COLORS["total"],
        lw=2.5,
        alpha=0.6,
        label="excess risk (sum)",
    )
    ax.plot(
        lam_grid,
        rel,
        color=TERM_COLORS["relevant"],
        lw=1.5,
        label="relevant token",
    )
    ax.plot(
        lam_grid, noi, color=TERM_COLORS["noise"], lw=1.5, label="noise tokens"
    )
    ax.axvline(lam, color=COLORS["bound"], lw=0.8)
    ax.plot(
        [lam] * 3,
        np.maximum([r_now + n_now, r_now, n_now], floor),
        "o",
        ms=5,
        color=COLORS["bound"],
        mfc="white",
        zorder=5,
    )
    ax.plot(
        lam_grid[i_best],
        tot[i_best],
        "*",
        ms=11,
        color=TERM_COLORS["total"],
        label=f"best λ = {lam_grid[i_best]:.3g}",
    )
    ax.text(
        1.04,
        0.0,
        f"at λ = {lam:g}:\nrelevant {r_now:.2e}\nnoise    {n_now:.2e}\nsum      {r_now + n_now:.2e}",
        transform=ax.transAxes,
        ha="left",
        va="bottom",
        family="monospace",
        bbox={"fc": "white", "ec": "0.7"},
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(floor, 3 * max(L, 1))
    ax.set_xlabel("inverse temperature λ")
    ax.set_ylabel("excess risk at the oracle")
    ax.set_title(
        f"d = {d}, L = {L}:   λ√d = {lam * math.sqrt(d):.3g},   λ√L = {lam * math.sqrt(L):.3g}"
    )
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    # Mathtext tick labels and minor ticks on two log axes are most of a frame's drawing
    # time: plain labels, no minor ticks.
    plain = FuncFormatter(lambda x, _: f"{x:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.yaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_locator(LogLocator(base=10.0, numticks=5))
    plt.close(fig)
    return fig
