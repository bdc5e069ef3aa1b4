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


def _location_panel(ax, steps, matched, other, name):
    M = matched.shape[1]
    for m in range(M):
        color = LOCATION_COLORS[m % len(LOCATION_COLORS)]
        median_band(ax, steps, np.abs(matched[:, m]), color,
                    rf"$|\langle {name}_{{h(m)}}, {name}_{m + 1}^\star\rangle|$, m = {m + 1}")
        if other is not None:
            ax.plot(steps, np.median(np.abs(other[:, m]), axis=0), color=color, lw=1.2, ls="--",
                    label="same head, other location" if m == 0 else None)
    ax.set_ylim(-0.03, 1.03)
    ax.legend(loc="upper left", fontsize=7)


def plot_fig9(exp: SGDExperiment) -> Figure:
    r"""The paper's Figure 9: stochastic PGD of the multi-head predictor (31) on the task (30).

    Panels: (a) excess risk on the held-out set (test risk :math:`- \varepsilon^2`), median and
    2.5–97.5 % band over runs, with the null predictor's excess risk :math:`M\gamma^2` for
    reference; (b) :math:`|\kappa|` of the head matched to each location
    (:func:`slrlib.experiments.match_heads`, at the last step), median and band, and dashed the
    median alignment of the same head with the other location; (c) the same for the values,
    :math:`|\nu|`.

    Parameters
    ----------
    exp : slrlib.experiments.descent.SGDExperiment
        A finished multi-head stochastic-PGD experiment (``fig9``).

    Returns
    -------
    matplotlib.figure.Figure
        The three panels, side by side.
    """
    r, cfg = exp.result, exp.config
    steps = np.asarray(r.steps)
    ov = matched_overlaps(r)
    fig = new_figure(figsize=(13.5, 3.7))
    axes = fig.subplots(1, 3)

    ax = axes[0]
    median_band(ax, steps, exp.excess_risk, COLORS["attention"], "excess risk (held out)")
    ax.axhline(cfg.M * cfg.gamma**2, color=COLORS["null"], ls=":", lw=1.2, label=r"null predictor, $m\gamma^2$")
    ax.set_ylabel(r"held-out risk $- \varepsilon^2$")
    ax.set_yscale("log")
    ax.legend(loc="upper right", fontsize=7)
    ax.set_title("(a) excess risk", fontsize=9)

    _location_panel(axes[1], steps, ov["kappa"], ov.get("kappa_other"), "k")
    axes[1].set_ylabel("key alignment")
    axes[1].set_title(r"(b) $|\kappa|$ of the matched head", fontsize=9)
    _location_panel(axes[2], steps, ov["nu"], ov.get("nu_other"), "v")
    axes[2].set_ylabel("value alignment")
    axes[2].set_title(r"(c) $|\nu|$ of the matched head", fontsize=9)

    step_axes(axes)
    fig.suptitle(f"{cfg.title}  —  d = {cfg.d}, L = {cfg.L}, {cfg.heads} heads, {cfg.n_runs} runs, "
                 f"batch {cfg.batch_size}, α = {cfg.alpha:g}", fontsize=10)
    return fig


