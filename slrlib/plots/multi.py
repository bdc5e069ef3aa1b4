r"""Figures of chapter 11 (several relevant tokens): Figure 9 of the paper and the ideal heads' risk.

Plotting only: the numbers come from :mod:`slrlib.experiments` (stochastic PGD,
:func:`slrlib.training.sgd.sgd`) and :mod:`slrlib.book.ch11_multi` (exact risks of the multi-head predictor).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from slrlib.experiments import SGDExperiment
from slrlib.experiments.heads import matched_overlaps
from slrlib.plots.style import COLORS, median_band, new_figure, step_axes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["LOCATION_COLORS", "plot_fig9"]

#: One colour per location m = 1, 2 (then cycled).
LOCATION_COLORS = ("#1f77b4", "#d95f02", "#7570b3")


def _location_panel(ax, steps, matched, other):
    M = matched.shape[1]
    for m in range(M):
        color = LOCATION_COLORS[m % len(LOCATION_COLORS)]
        median_band(ax, steps, np.abs(matched[:, m]), color, None)
        if other is not None:
            ax.plot(
                steps,
                np.median(np.abs(other[:, m]), axis=0),
                color=color,
                lw=1.2,
                ls="--",
            )
    ax.set_ylim(-0.03, 1.03)


def plot_fig9(exp: SGDExperiment) -> Figure:
    r"""The paper's Figure 9: stochastic PGD of the multi-head predictor (31) on the task (30).

    Panels: (a) excess risk on the held-out set (test risk :math:`- \varepsilon^2`), median and
    2.5–97.5 % band over runs, with the null predictor's excess risk :math:`M\gamma^2` for
    reference; (b) :math:`|\kappa|` of the head matched to each location
    (:func:`slrlib.experiments.match_heads`, at the last step), median and band, and dashed the
    median alignment of the same head with the other location; (c) the same for the values,
    :math:`|\nu|`. The fourth place of the 2 x 2 grid holds the legend and the parameters.

    Parameters
    ----------
    exp : slrlib.experiments.descent.SGDExperiment
        A finished multi-head stochastic-PGD experiment (``fig9``).

    Returns
    -------
    matplotlib.figure.Figure
        The three panels in a 2 x 2 grid.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    r, cfg = exp.result, exp.config
    steps = np.asarray(r.steps)
    ov = matched_overlaps(r)
    fig = new_figure(figsize=(6.8, 6.0))
    grid = fig.subplots(2, 2)
    axes = [grid[0, 0], grid[1, 0], grid[1, 1]]

    ax = axes[0]
    median_band(
        ax,
        steps,
        exp.excess_risk,
        COLORS["attention"],
        "(a) median, 2.5–97.5 % band",
    )
    ax.axhline(
        cfg.M * cfg.gamma**2,
        color=COLORS["null"],
        ls=":",
        lw=1.2,
        label=r"(a) null predictor, $m\gamma^2$",
    )
    ax.set_ylabel(r"held-out risk $- \varepsilon^2$")
    ax.set_yscale("log")
    ax.set_title("(a) excess risk")

    _location_panel(axes[1], steps, ov["kappa"], ov.get("kappa_other"))
    axes[1].set_ylabel("alignment")
    axes[1].set_title(r"(b) keys: $|\kappa|$")
    _location_panel(axes[2], steps, ov["nu"], ov.get("nu_other"))
    axes[2].tick_params(labelleft=False)
    axes[2].set_title(r"(c) values: $|\nu|$")
    step_axes(axes)
    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(4))

    key = grid[0, 1]
    key.axis("off")
    handles, labels = axes[0].get_legend_handles_labels()
    M = ov["kappa"].shape[1]
    for m in range(M):
        color = LOCATION_COLORS[m % len(LOCATION_COLORS)]
        handles.append(
            (
                Patch(color=color, alpha=0.25, lw=0),
                Line2D([], [], color=color, lw=1.8),
            )
        )
        labels.append(f"(b), (c) matched head, location {m + 1}")
    if "kappa_other" in ov:
        handles.append(Line2D([], [], color="black", lw=1.2, ls="--"))
        labels.append("same head, other location")
    key.legend(
        handles,
        labels,
        loc="upper left",
        frameon=False,
        borderaxespad=0.0,
        handlelength=1.8,
    )
    key.text(
        0.0,
        0.0,
        f"{cfg.title.split(':')[0]}\nd = {cfg.d}, L = {cfg.L}, {cfg.heads} heads, {cfg.n_runs} runs\n"
        f"batch {cfg.batch_size}, α = {cfg.alpha:g}",
        transform=key.transAxes,
        va="bottom",
        ha="left",
        linespacing=1.4,
    )
    return fig
