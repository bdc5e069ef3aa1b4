r"""Figures 8 and 10: a Transformer layer trained by SGD (Appendix E.3).

Plotting only: the numbers come from :mod:`slrlib.training.transformer`. Every curve is the median over
runs with the 2.5–97.5 % band (with a handful of runs the band is the range).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.ticker import LogLocator, NullFormatter

from slrlib.plots.style import COLORS, median_band, new_figure
from slrlib.training.transformer import TransformerResult
from slrlib.experiments.transformer import matched_alignments

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_fig8", "plot_fig10"]

_LOC_COLORS = (
    ("tab:blue", "tab:orange"),
    ("tab:green", "tab:red"),
    ("tab:purple", "tab:brown"),
)


def _risk_panel(ax, res: TransformerResult):
    cfg = res.config
    steps = np.asarray(res.steps)
    median_band(
        ax,
        steps,
        np.maximum(res.excess_risk, 1e-6),
        COLORS["attention"],
        "median, 2.5–97.5 % band",
    )
    null_excess = cfg.null_risk - cfg.eps**2
    ax.axhline(
        null_excess,
        color=COLORS["null"],
        ls="--",
        lw=1,
        label=f"zero predictor ({null_excess:.2g})",
    )
    ax.set_yscale("log")
    ax.set_ylabel(r"$\mathcal{R}_{\rm test} - \varepsilon^2$")


def _parameters(res: TransformerResult) -> str:
    cfg = res.config
    n_runs = res.excess_risk.shape[0]
    return (
        f"d = {cfg.d}, L = {cfg.L}, H = {cfg.n_heads}, r = {cfg.r}, m = {cfg.m}\n"
        f"SGD: α = {cfg.alpha:g}, batch {cfg.batch_size}, {n_runs} runs"
    )


def _step_axis(ax):
    from matplotlib.ticker import MaxNLocator

    ax.set_xlabel("SGD step $t$")
    ax.grid(alpha=0.3)
    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 3))


def plot_fig8(res: TransformerResult) -> Figure:
    r"""Figure 8: a single-head Transformer layer on single-location regression, three panels.

    Panels: (a) excess test risk; (b) :math:`|\langle\hat k, k^\star\rangle|` and
    :math:`|\langle\hat v, v^\star\rangle|` (linearised :math:`\hat v`; dashed: gated :math:`\hat v`,
    median); (c) :math:`s_1/s_2` of :math:`W_Q^\top W_K` (log scale). Step 0 has :math:`W_K = 0`,
    so :math:`\hat k` and :math:`s_1/s_2` start at the first logged step. The fourth place of the
    2 x 2 grid holds the legends of (a) and (b) and the parameters.

    Parameters
    ----------
    res : slrlib.training.transformer.TransformerResult
        A finished single-head experiment (``fig8``).

    Returns
    -------
    matplotlib.figure.Figure
        The three panels in a 2 x 2 grid.
    """
    steps = np.asarray(res.steps)
    fig = new_figure(figsize=(6.8, 5.8))
    grid = fig.subplots(2, 2)
    axes = [grid[0, 0], grid[0, 1], grid[1, 0]]
    _risk_panel(axes[0], res)
    axes[0].set_title("(a) excess test risk")

    ax = axes[1]
    median_band(
        ax,
        steps[1:],
        np.abs(res.kappa[:, 1:, 0, 0]),
        "tab:blue",
        r"(b) $|\langle \hat k, k^\star\rangle|$",
    )
    median_band(
        ax,
        steps,
        np.abs(res.nu[:, :, 0, 0]),
        "tab:orange",
        r"(b) $|\langle \hat v, v^\star\rangle|$",
    )
    ax.plot(
        steps,
        np.median(np.abs(res.nu_gated[:, :, 0, 0]), axis=0),
        color="tab:orange",
        ls="--",
        lw=1.2,
        label=r"(b) same, gated $\hat v$",
    )
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("alignment")
    ax.set_title("(b) directions in the weights")

    ax = axes[2]
    median_band(
        ax, steps[1:], res.ratio[:, 1:, 0], COLORS["linear"], r"$s_1/s_2$"
    )
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(
        LogLocator(subs=(1.0, 2.0, 5.0))
    )  # a few labelled ticks within a decade
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel(r"$s_1/s_2$ of $W_Q^\top W_K$")
    ax.set_title("(c) rank-one check")
    for ax in axes:
        _step_axis(ax)
    axes[2].set_xlim(axes[0].get_xlim())

    key = grid[1, 1]
    key.axis("off")
    handles, labels = [], []
    for ax in axes[:2]:
        h, lab = ax.get_legend_handles_labels()
        handles += h
        labels += [("(a) " + x) if ax is axes[0] else x for x in lab]
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
        "Figure 8\n" + _parameters(res),
        transform=key.transAxes,
        va="bottom",
        ha="left",
        linespacing=1.4,
    )
    return fig


def _each_run(ax, x, runs, color, label):
    """Every run as a thin line and the median over runs as a thick one (outcomes may be bimodal)."""
    runs = np.asarray(runs)
    for y in runs:
        ax.plot(x, y, color=color, lw=0.7, alpha=0.45)
    ax.plot(x, np.median(runs, axis=0), color=color, lw=2.0, label=label)


def plot_fig10(res: TransformerResult) -> Figure:
    r"""Figure 10: a two-head Transformer layer on two-location regression, three panels.

    Panels: (a) excess test risk; (b) :math:`|\langle\hat k_h, k_m^\star\rangle|` and (c)
    :math:`|\langle\hat v_h, v_m^\star\rangle|` after matching heads to locations
    (:func:`~slrlib.experiments.transformer.matched_alignments`). Every run is drawn (thin lines)
    with the median over runs (thick), because runs can end in different states: solid, the head
    matched to location m with :math:`k_m^\star` (resp. :math:`v_m^\star`); dashed, the same head
    with the other locations (median only). The fourth place of the 2 x 2 grid holds the
    legends and the parameters.

    Parameters
    ----------
    res : slrlib.training.transformer.TransformerResult
        A finished multi-head experiment (``fig10``).

    Returns
    -------
    matplotlib.figure.Figure
        The three panels in a 2 x 2 grid.
    """
    from matplotlib.legend_handler import HandlerTuple
    from matplotlib.lines import Line2D

    steps = np.asarray(res.steps)
    matched = matched_alignments(res)
    M = matched["kappa"].shape[-1]
    fig = new_figure(figsize=(6.8, 6.0))
    grid = fig.subplots(2, 2)
    axes = [grid[0, 0], grid[1, 0], grid[1, 1]]
    ax = axes[0]
    _each_run(
        ax,
        steps,
        np.maximum(res.excess_risk, 1e-6),
        COLORS["attention"],
        "Transformer layer",
    )
    null_excess = res.config.null_risk - res.config.eps**2
    ax.axhline(
        null_excess,
        color=COLORS["null"],
        ls="--",
        lw=1,
        label=f"zero predictor ({null_excess:.2g})",
    )
    ax.set_yscale("log")
    ax.set_ylabel(r"$\mathcal{R}_{\rm test} - \varepsilon^2$")
    ax.set_title("(a) excess test risk")
    for ax, name, sym, ci in (
        (axes[1], "kappa", "k", 0),
        (axes[2], "nu", "v", 1),
    ):
        a = np.abs(matched[name])
        start = (
            1 if name == "kappa" else 0
        )  # k-hat is undefined at step 0 (W_K = 0)
        for i in range(M):
            color = _LOC_COLORS[i % len(_LOC_COLORS)][ci]
            _each_run(ax, steps[start:], a[:, start:, i, i], color, None)
            for j in range(M):
                if j != i:
                    ax.plot(
                        steps[start:],
                        np.median(a[:, start:, i, j], axis=0),
                        color=color,
                        ls="--",
                        lw=1.1,
                    )
        ax.set_ylim(-0.02, 1.02)
    axes[1].set_ylabel("alignment")
    axes[1].set_title(r"(b) $|\langle \hat k_h, k^\star_m\rangle|$")
    axes[2].set_title(r"(c) $|\langle \hat v_h, v^\star_m\rangle|$")
    axes[2].tick_params(labelleft=False)
    for ax in axes:
        _step_axis(ax)

    for ax in axes[1:]:
        ax.set_xlim(axes[0].get_xlim())

    key = grid[0, 1]
    key.axis("off")
    thin = dict(lw=0.7, alpha=0.6)
    handles = [
        (
            Line2D([], [], color=COLORS["attention"], **thin),
            Line2D([], [], color=COLORS["attention"], lw=2.0),
        ),
        Line2D([], [], color=COLORS["null"], ls="--", lw=1),
    ]
    labels = [
        "(a) each run, median",
        f"(a) zero predictor ({null_excess:.2g})",
    ]
    for i in range(M):
        handles.append(
            tuple(
                Line2D(
                    [], [], color=_LOC_COLORS[i % len(_LOC_COLORS)][ci], lw=2.0
                )
                for ci in (0, 1)
            )
        )
        labels.append(f"(b), (c) head of location {i + 1}")
    handles += [
        Line2D([], [], color="black", lw=2.0),
        Line2D([], [], color="black", lw=1.1, ls="--"),
    ]
    labels += ["with its own location", "with the other (median)"]
    key.legend(
        handles,
        labels,
        handler_map={tuple: HandlerTuple(ndivide=None, pad=0.0)},
        loc="upper left",
        frameon=False,
        borderaxespad=0.0,
        handlelength=2.4,
    )
    key.text(
        0.0,
        0.0,
        "Figure 10\n" + _parameters(res),
        transform=key.transAxes,
        va="bottom",
        ha="left",
        linespacing=1.4,
    )
    return fig
