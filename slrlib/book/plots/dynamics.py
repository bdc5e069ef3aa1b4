r"""Figure of chapter 16 (the dynamics quantified): plotting only.

The numbers come from :mod:`slrlib.book.figures.dynamics` (which calls
:mod:`slrlib.book.ch16_dynamics`). Returns a matplotlib Figure detached from pyplot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from slrlib.plots.style import COLORS, new_figure

__all__ = ["draw_escape_time", "plot_escape_time"]


def draw_escape_time(ax, data: Any, *, label_suffix: str = "", color: str | None = None,
                     bounds: bool = True) -> None:
    r"""Draw one ``escape_time`` data set on ``ax``: reduced map (markers), linearised map (line),
    its bounds (band) and the continuous-time estimate (dotted)."""
    x = np.log10(1.0 / np.asarray(data.r0, dtype=float))
    c = color or COLORS["attention"]
    if bounds:
        ax.fill_between(x, data.lower, data.upper, color=COLORS["bound"], alpha=0.15, lw=0,
                        label=r"bounds $t_- \leq t^* \leq t_+$ (linear)")
    ax.plot(x, data.linear, color=c, lw=1.4, label="linearised map, exact" + label_suffix)
    ok = np.asarray(data.reduced) >= 0
    ax.plot(x[ok], np.asarray(data.reduced)[ok], "o", color=c, ms=4, label="reduced map (Lemma 7)" + label_suffix)
    ax.plot(x, data.continuous, ":", color=COLORS["bound"], lw=1.0,
            label=r"$\log(R/r_0)/(\alpha|\mu_-|)$" + label_suffix)


def plot_escape_time(data: Any):
    r"""Escape steps from the saddle against :math:`\log_{10}(1/r_0)`. Left: the linearised map (exact first
    passage and its bounds), the nonlinear reduced map, and the continuous-time estimate; the slope
    :math:`\log 10/\log(1 - \alpha\mu_-)` steps per decade is written in the title. Right: the same minus the
    exact linear first passage, where the constant lag of the reduced map and the growing deficit of the
    continuous-time estimate show."""
    fig = new_figure(figsize=(11.0, 4.2))
    ax, ax2 = fig.subplots(1, 2)
    draw_escape_time(ax, data)
    x = np.log10(1.0 / np.asarray(data.r0, dtype=float))
    lin = np.asarray(data.linear, dtype=float)
    ax2.fill_between(x, np.asarray(data.lower) - lin, np.asarray(data.upper) - lin, color=COLORS["bound"], alpha=0.15,
                     lw=0, label=r"bounds $t_\pm - t^*$")
    ok = np.asarray(data.reduced) >= 0
    ax2.plot(x[ok], (np.asarray(data.reduced, dtype=float) - lin)[ok], "o-", color=COLORS["attention"], ms=4,
             label="reduced map $-$ linearised map")
    ax2.plot(x, np.asarray(data.continuous) - lin, ":", color=COLORS["bound"],
             label=r"$\log(R/r_0)/(\alpha|\mu_-|)$ $-$ linearised map")
    ax2.axhline(0.0, color="0.5", lw=0.8)
    for a in (ax, ax2):
        a.set_xlabel(r"$\log_{10}(1/r_0)$")
        a.grid(alpha=0.3)
    ax.set_ylabel(f"steps to distance R = {data.radius:g}")
    ax2.set_ylabel("difference (steps)")
    ax.legend(fontsize=8, loc="upper left")
    ax2.legend(fontsize=8, loc="center left")
    ax.set_title(rf"$\lambda = {data.lam:g}$, $\alpha = {data.alpha:g}$, $d = {data.d}$, $L = {data.L}$: "
                 f"slope {data.per_decade:.1f} steps per decade", fontsize=10)
    ax2.set_title("against the exact first passage of the linearised map", fontsize=10)
    return fig
