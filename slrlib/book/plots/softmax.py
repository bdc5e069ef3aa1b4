r"""Figure of chapter 14 (softmax attention on an equal footing): plotting only.

The numbers come from :mod:`slrlib.book.figures.softmax` (which calls :mod:`slrlib.book.ch14_softmax`,
:mod:`slrlib.book.ch04_bayes` and :mod:`slrlib.core.risk`). Returns a matplotlib Figure detached
from pyplot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from slrlib.plots.style import COLORS, median_band, new_figure, step_axes

__all__ = ["SERIES_STYLE", "plot_beyond_softmax", "ARM_STYLE", "plot_softmax_training"]

#: Label, colour, marker and line style of each series.
SERIES_STYLE = {
    "bayes": ("Bayes (reduced MC)", COLORS["bayes"], "o", "-"),
    "softmax": (r"softmax, best $\lambda$ (reduced MC)", COLORS["softmax"], "s", "-"),
    "erf": (r"erf, best $\lambda$ (closed form)", COLORS["attention"], None, "-"),
    "linear": ("best linear (Prop. 3)", COLORS["linear"], None, "--"),
    "hard_oracle": (r"hard oracle = softmax at $\lambda\to\infty$", COLORS["oracle"], None, ":"),
}


_FLOOR = 1e-20


def _draw_panel(ax, panel: Any) -> None:
    x = np.asarray(panel.x, dtype=float)
    for s, (label, color, marker, ls) in SERIES_STYLE.items():
        y = np.asarray(panel.excess[s], dtype=float)
        y = np.where(y > 0, y, np.nan)  # an excess of 0 (underflow) has no place on a log scale
        if marker is None:
            ax.plot(x, y, color=color, ls=ls, lw=1.6, label=label)
            continue
        se = np.asarray(panel.stderr[s], dtype=float)
        ok = np.asarray(panel.resolved[s], dtype=bool)
        lower = np.minimum(se, 0.999 * y)  # keep the lower bar on the log scale
        ax.plot(x[ok], y[ok], color=color, ls=ls, lw=1.0, alpha=0.6)
        ax.errorbar(x[ok], y[ok], yerr=[lower[ok], se[ok]], color=color, marker=marker, ls="none", ms=5,
                    capsize=2, label=label)
        if np.any(~ok):
            ax.plot(x[~ok], y[~ok], color=color, marker=marker, ls="none", ms=5, mfc="white",
                    label=f"{label.split(' (')[0]}: unresolved by the sample")
    ax.set_xscale("log")
    ax.set_yscale("log")
    # the bottom of the scale: the smallest closed form or resolved estimate (unresolved points below it
    # are left out of view: they only say that the sample saw no confusion)
    shown = [np.asarray(panel.excess[s], dtype=float)[np.asarray(panel.resolved[s], dtype=bool)] for s in SERIES_STYLE]
    shown = np.concatenate(shown)
    shown = shown[shown > 0]
    if shown.size:
        ax.set_ylim(max(_FLOOR, 0.2 * float(shown.min())), 3.0 * float(shown.max()))
    ax.grid(alpha=0.3, which="both")
    ax.set_ylabel(r"excess risk $\mathcal{R} - \varepsilon^2$")


def plot_beyond_softmax(data: Any):
    r"""Two panels, log–log: the excess risks of :data:`SERIES_STYLE`'s predictors against :math:`d`
    (at fixed :math:`L`) and against :math:`L` (at fixed :math:`d`). Monte Carlo points carry their
    standard errors; open markers flag points whose sample holds too few confusions between tokens
    to resolve the excess (there the estimate is too small)."""
    fig = new_figure(figsize=(11.0, 4.4))
    ax1, ax2 = fig.subplots(1, 2)
    _draw_panel(ax1, data.panel_d)
    _draw_panel(ax2, data.panel_L)
    ax1.set_xlabel("dimension $d$")
    ax2.set_xlabel("sequence length $L$")
    ax1.set_title(f"against $d$ at $L = {data.panel_d.fixed}$", fontsize=10)
    ax2.set_title(f"against $L$ at $d = {data.panel_L.fixed}$", fontsize=10)
    ax1.legend(fontsize=7, loc="lower left")
    nb = max(int(np.max(p.n_bayes)) for p in (data.panel_d, data.panel_L))
    ns = max(int(np.max(p.n_softmax)) for p in (data.panel_d, data.panel_L))
    fig.suptitle(rf"Each predictor at its best, $\gamma^2 = {data.gamma**2:.3g}$, $\varepsilon = 0$; "
                 f"up to {nb} sequences per point (Bayes), {ns} (softmax)", fontsize=10)
    return fig


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
    fig = new_figure(figsize=(12.0, 3.8))
    axes = fig.subplots(1, 3)
    eps2 = data.task.eps**2
    for name, arm in data.arms.items():
        label, color = ARM_STYLE.get(name, (name, "k"))
        sign = np.sign(arm.nu[:, -1:]) if arm.attention == "erf" else 1.0
        median_band(axes[0], arm.steps, sign * arm.kappa, color, label)
        median_band(axes[1], arm.steps, sign * arm.nu, color, label)
        median_band(axes[2], arm.steps, np.maximum(arm.heldout - eps2, 1e-6), color, label)
    axes[0].set_ylabel(r"$\kappa = \langle k_t, k^\star\rangle$ (erf: $\times\,$sign $\nu_T$)")
    axes[1].set_ylabel(r"$\nu = \langle v_t, v^\star\rangle$ (erf: $\times\,$sign $\nu_T$)")
    axes[2].set_ylabel(r"held-out risk $-\ \varepsilon^2$")
    axes[2].set_yscale("log")
    for ax in axes[:2]:
        ax.axhline(0.9, color="k", lw=0.6, ls=":")
        ax.set_ylim(-1.05, 1.05)
    step_axes(axes)
    axes[0].legend(fontsize=7, loc="lower right")
    runs = next(iter(data.arms.values())).kappa.shape[0]
    fig.suptitle(rf"Stochastic PGD from the sphere, $d = {data.task.d}$, $L = {data.task.L}$, "
                 rf"$B = {data.batch_size}$, $\alpha = {data.alpha:g}$; {runs} runs per arm (median, 95 % band)",
                 fontsize=10)
    return fig
