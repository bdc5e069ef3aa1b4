r"""Figure of chapter 14 (softmax attention on an equal footing): plotting only.

The numbers come from :mod:`slrlib.book.figures.softmax` (which calls :mod:`slrlib.book.ch14_softmax`,
:mod:`slrlib.book.ch04_bayes` and :mod:`slrlib.core.risk`). Returns a matplotlib Figure detached
from pyplot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from slrlib.plots.style import COLORS, median_band, new_figure, step_axes

__all__ = [
    "SERIES_STYLE",
    "plot_beyond_softmax",
    "ARM_STYLE",
    "plot_softmax_training",
]

#: Label, colour, marker and line style of each series.
SERIES_STYLE = {
    "bayes": ("Bayes (reduced MC)", COLORS["bayes"], "o", "-"),
    "softmax": (
        r"softmax, best $\lambda$ (reduced MC)",
        COLORS["softmax"],
        "s",
        "-",
    ),
    "erf": (
        r"erf, best $\lambda$ (closed form)",
        COLORS["attention"],
        None,
        "-",
    ),
    "linear": ("best linear (Prop. 3)", COLORS["linear"], None, "--"),
    "hard_oracle": (
        r"hard oracle (softmax, $\lambda\to\infty$)",
        COLORS["oracle"],
        None,
        ":",
    ),
}


_FLOOR = 1e-20


def _draw_panel(ax, panel: Any) -> None:
    x = np.asarray(panel.x, dtype=float)
    for s, (label, color, marker, ls) in SERIES_STYLE.items():
        y = np.asarray(panel.excess[s], dtype=float)
        y = np.where(
            y > 0, y, np.nan
        )  # an excess of 0 (underflow) has no place on a log scale
        if marker is None:
            ax.plot(x, y, color=color, ls=ls, lw=1.6, label=label)
            continue
        se = np.asarray(panel.stderr[s], dtype=float)
        ok = np.asarray(panel.resolved[s], dtype=bool)
        lower = np.minimum(
            se, 0.999 * y
        )  # keep the lower bar on the log scale
        ax.plot(x[ok], y[ok], color=color, ls=ls, lw=1.0, alpha=0.6)
        ax.errorbar(
            x[ok],
            y[ok],
            yerr=[lower[ok], se[ok]],
            color=color,
            marker=marker,
            ls="none",
            ms=5,
            capsize=2,
            label=label,
        )
        if np.any(~ok):
            ax.plot(
                x[~ok],
                y[~ok],
                color=color,
                marker=marker,
                ls="none",
                ms=5,
                mfc="white",
                label=f"{label.split(',')[0].split(' (')[0]}: unresolved",
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    # the bottom of the scale: the smallest closed form or resolved estimate (unresolved points below it
    # are left out of view: they only say that the sample saw no confusion)
    shown = [
        np.asarray(panel.excess[s], dtype=float)[
            np.asarray(panel.resolved[s], dtype=bool)
        ]
        for s in SERIES_STYLE
    ]
    shown = np.concatenate(shown)
    shown = shown[shown > 0]
    if shown.size:
        ax.set_ylim(
            max(_FLOOR, 0.2 * float(shown.min())), 3.0 * float(shown.max())
        )
    ax.grid(alpha=0.3, which="both")
    ax.set_ylabel(r"excess risk $\mathcal{R} - \varepsilon^2$")


def plot_beyond_softmax(data: Any):
    r"""Two panels, log–log: the excess risks of :data:`SERIES_STYLE`'s predictors against :math:`d`
    (at fixed :math:`L`) and against :math:`L` (at fixed :math:`d`). Monte Carlo points carry their
    standard errors; open markers flag points whose sample holds too few confusions between tokens
    to resolve the excess (there the estimate is too small)."""
    fig = new_figure(figsize=(6.8, 5.0))
    ax1, ax2 = fig.subplots(1, 2)
    _draw_panel(ax1, data.panel_d)
    _draw_panel(ax2, data.panel_L)
    ax2.set_ylabel("")
    ax1.set_xlabel("dimension $d$")
    ax2.set_xlabel("sequence length $L$")
    ax1.set_title(f"against $d$ at $L = {data.panel_d.fixed}$")
    ax2.set_title(f"against $L$ at $d = {data.panel_L.fixed}$")
    for ax in (ax1, ax2):
        ax.yaxis.set_major_locator(_LogTicks())
    handles, labels = ax1.get_legend_handles_labels()
    rank = [v[0] for v in SERIES_STYLE.values()]
    order = sorted(
        range(len(labels)),
        key=lambda i: (
            "unresolved" in labels[i],
            rank.index(labels[i]) if labels[i] in rank else i,
        ),
    )  # SERIES_STYLE's order
    fig.legend(
        [handles[i] for i in order],
        [labels[i] for i in order],
        loc="outside lower center",
        ncol=2,
        handlelength=1.8,
        columnspacing=1.0,
    )
    nb = max(int(np.max(p.n_bayes)) for p in (data.panel_d, data.panel_L))
    ns = max(int(np.max(p.n_softmax)) for p in (data.panel_d, data.panel_L))
    fig.suptitle(
        rf"Each predictor at its best, $\gamma^2 = {data.gamma**2:.3g}$, $\varepsilon = 0$; up to"
        f"\n{nb:,} sequences per point (Bayes), {ns:,} (softmax)"
    )
    return fig


def _LogTicks():
    """Decades on a log axis, at most five labelled."""
    from matplotlib.ticker import LogLocator

    return LogLocator(numticks=6)


#: Label and colour of each arm of ``softmax_training``.
ARM_STYLE = {
    "erf": (r"erf, $\lambda_t = 2/(1 + 10^{-4}t)$", COLORS["attention"]),
    "softmax": (r"softmax, $\lambda_t = 2/(1 + 10^{-4}t)$", COLORS["softmax"]),
    "softmax_const": (r"softmax, $\lambda = 2$", COLORS["monte_carlo"]),
}


def plot_softmax_training(data: Any):
    r"""Three panels against the step: :math:`\kappa` and :math:`\nu` (for erf attention, whose predictor
    is unchanged by :math:`(k, v) \mapsto (-k, -v)`, multiplied by the sign of the final :math:`\nu`) and the
    held-out excess risk (log scale); median over runs with the 2.5–97.5 % band, one colour per arm."""
    from matplotlib.ticker import MaxNLocator, StrMethodFormatter

    fig = new_figure(figsize=(6.8, 6.0))
    axes = fig.subplots(2, 2).ravel()
    eps2 = data.task.eps**2
    for name, arm in data.arms.items():
        label, color = ARM_STYLE.get(name, (name, "k"))
        sign = np.sign(arm.nu[:, -1:]) if arm.attention == "erf" else 1.0
        median_band(axes[0], arm.steps, sign * arm.kappa, color, label)
        median_band(axes[1], arm.steps, sign * arm.nu, color, label)
        median_band(
            axes[2],
            arm.steps,
            np.maximum(arm.heldout - eps2, 1e-6),
            color,
            label,
        )
    axes[0].set_ylabel(r"$\kappa = \langle k_t, k^\star\rangle$")
    axes[1].set_ylabel(r"$\nu = \langle v_t, v^\star\rangle$")
    axes[2].set_ylabel(r"held-out risk $-\ \varepsilon^2$")
    axes[2].set_yscale("log")
    for ax in axes[:2]:
        ax.axhline(0.9, color="k", lw=0.6, ls=":")
        ax.set_ylim(-1.05, 1.05)
    step_axes(axes[:3])
    for ax in axes[:3]:
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    runs = next(iter(data.arms.values())).kappa.shape[0]
    axes[3].axis("off")
    axes[3].legend(
        *axes[0].get_legend_handles_labels(),
        loc="center",
        title=f"median of {runs} runs, 95 % band\n"
        + r"(erf: $\kappa, \nu$ times sign $\nu_T$)",
    )
    fig.suptitle(
        rf"Stochastic PGD from the sphere, $d = {data.task.d}$, $L = {data.task.L}$, "
        rf"$B = {data.batch_size}$, $\alpha = {data.alpha:g}$"
    )
    return fig
