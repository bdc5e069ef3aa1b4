r"""Figures 8 and 10: a Transformer layer trained by SGD (Appendix E.3).

Plotting only: the numbers come from :mod:`slrlib.training.transformer`. Every curve is the median over
runs with the 2.5–97.5 % band (with a handful of runs the band is the range).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from slrlib.plots.style import COLORS, median_band, new_figure
from slrlib.training.transformer import TransformerResult
from slrlib.experiments.transformer import matched_alignments

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_fig8", "plot_fig10"]

_LOC_COLORS = (("tab:blue", "tab:orange"), ("tab:green", "tab:red"), ("tab:purple", "tab:brown"))


def _risk_panel(ax, res: TransformerResult):
    cfg = res.config
    steps = np.asarray(res.steps)
    median_band(ax, steps, np.maximum(res.excess_risk, 1e-6), COLORS["attention"], "Transformer layer")
    null_excess = cfg.null_risk - cfg.eps**2
    ax.axhline(null_excess, color=COLORS["null"], ls="--", lw=1,
               label=f"zero predictor ({null_excess:.2g})")
    ax.set_yscale("log")
    ax.set_ylabel(r"excess test risk $\mathcal{R}_{\rm test} - \varepsilon^2$")
    ax.legend(loc="upper right", fontsize=8)


def _finish(fig, axes, res: TransformerResult, title: str):
    for ax in axes:
        ax.set_xlabel("SGD step $t$")
        ax.grid(alpha=0.3)
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 3))
    cfg = res.config
    n_runs = res.excess_risk.shape[0]
    fig.suptitle(f"{title}  —  d = {cfg.d}, L = {cfg.L}, H = {cfg.n_heads}, r = {cfg.r}, m = {cfg.m}, "
                 f"α = {cfg.alpha:g}, batch {cfg.batch_size}, {n_runs} runs", fontsize=10)
    return fig


def plot_fig8(res: TransformerResult) -> Figure:
    r"""Figure 8: a single-head Transformer layer on single-location regression, three panels.

    Panels: (a) excess test risk; (b) :math:`|\langle\hat k, k^\star\rangle|` and
    :math:`|\langle\hat v, v^\star\rangle|` (linearised :math:`\hat v`; dashed: gated :math:`\hat v`,
    median); (c) :math:`s_1/s_2` of :math:`W_Q^\top W_K` (log scale). Step 0 has :math:`W_K = 0`,
    so :math:`\hat k` and :math:`s_1/s_2` start at the first logged step.

    Parameters
    ----------
    res : slrlib.training.transformer.TransformerResult
        A finished single-head experiment (``fig8``).

    Returns
    -------
    matplotlib.figure.Figure
        The three panels, side by side.
    """
    steps = np.asarray(res.steps)
    fig = new_figure(figsize=(15.0, 3.8))
    axes = fig.subplots(1, 3)
    _risk_panel(axes[0], res)
    axes[0].set_title("(a) excess risk", fontsize=10)

    ax = axes[1]
    median_band(ax, steps[1:], np.abs(res.kappa[:, 1:, 0, 0]), "tab:blue",
                r"$|\langle \hat k, k^\star\rangle|$")
    median_band(ax, steps, np.abs(res.nu[:, :, 0, 0]), "tab:orange",
                r"$|\langle \hat v, v^\star\rangle|$")
    ax.plot(steps, np.median(np.abs(res.nu_gated[:, :, 0, 0]), axis=0), color="tab:orange", ls="--",
            lw=1.2, label=r"same, gated $\hat v$")
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("alignment with the oracle")
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("(b) directions read from the weights", fontsize=10)

    ax = axes[2]
    median_band(ax, steps[1:], res.ratio[:, 1:, 0], COLORS["linear"], r"$s_1/s_2$")
    ax.set_yscale("log")
    ax.set_ylabel(r"$s_1/s_2$ of $W_Q^\top W_K$")
    ax.set_title("(c) rank-one check", fontsize=10)
    return _finish(fig, axes, res, "Figure 8")


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
    with the other locations (median only).

    Parameters
    ----------
    res : slrlib.training.transformer.TransformerResult
        A finished multi-head experiment (``fig10``).

    Returns
    -------
    matplotlib.figure.Figure
        The three panels, side by side.
    """
    steps = np.asarray(res.steps)
    matched = matched_alignments(res)
    M = matched["kappa"].shape[-1]
    fig = new_figure(figsize=(15.0, 3.8))
    axes = fig.subplots(1, 3)
    ax = axes[0]
    _each_run(ax, steps, np.maximum(res.excess_risk, 1e-6), COLORS["attention"], "Transformer layer")
    null_excess = res.config.null_risk - res.config.eps**2
    ax.axhline(null_excess, color=COLORS["null"], ls="--", lw=1, label=f"zero predictor ({null_excess:.2g})")
    ax.set_yscale("log")
    ax.set_ylabel(r"excess test risk $\mathcal{R}_{\rm test} - \varepsilon^2$")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title("(a) excess risk (each run, median thick)", fontsize=10)
    for ax, name, sym, ci in ((axes[1], "kappa", "k", 0), (axes[2], "nu", "v", 1)):
        a = np.abs(matched[name])
        start = 1 if name == "kappa" else 0  # k-hat is undefined at step 0 (W_K = 0)
        for i in range(M):
            color = _LOC_COLORS[i % len(_LOC_COLORS)][ci]
            _each_run(ax, steps[start:], a[:, start:, i, i], color,
                      rf"head of loc. {i + 1} with ${sym}^\star_{i + 1}$")
            for j in range(M):
                if j != i:
                    ax.plot(steps[start:], np.median(a[:, start:, i, j], axis=0), color=color, ls="--",
                            lw=1.1, label=rf"head of loc. {i + 1} with ${sym}^\star_{j + 1}$ (median)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel("alignment with the oracle")
        ax.legend(loc="center right", bbox_to_anchor=(1.0, 0.32), fontsize=7, framealpha=0.85)
    axes[1].set_title(r"(b) $|\langle \hat k_h, k^\star_m\rangle|$, heads matched to locations", fontsize=10)
    axes[2].set_title(r"(c) $|\langle \hat v_h, v^\star_m\rangle|$ (linearised $\hat v_h$)", fontsize=10)
    return _finish(fig, axes, res, "Figure 10")
