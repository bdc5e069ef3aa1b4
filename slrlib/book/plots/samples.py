r"""Figure of chapter 15 (learning from :math:`n` samples): plotting only.

The numbers come from :mod:`slrlib.book.figures.samples` (which calls :mod:`slrlib.book.ch15_samples`).
Returns a matplotlib Figure detached from pyplot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from slrlib.plots.style import COLORS, new_figure

__all__ = ["plot_learning_curves", "plot_learning_curves_high_d"]

_D_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")
_L_STYLES = ("-", "--", ":", "-.")


def _band(ax, x, y, color, ls, label, floor=None):
    q25, med, q75 = np.quantile(np.asarray(y, dtype=float), [0.25, 0.5, 0.75], axis=1)
    if floor is not None:
        q25, med, q75 = (np.maximum(z, floor) for z in (q25, med, q75))
    ax.plot(x, med, color=color, ls=ls, marker="o", ms=3, lw=1.4, label=label)
    ax.fill_between(x, q25, q75, color=color, alpha=0.15, lw=0)


def _erm_panels(axes, curves, level, names):
    r"""The panels shared by both figures: excess test risk (log scale, clipped at 1e-4), :math:`\kappa` and
    :math:`\nu` against :math:`n/d` (log scale), medians and quartile bands; colour = :math:`d`, line style =
    :math:`L` (named in the legend only where there are several), the level of :math:`n^\star` dotted."""
    ax1, ax2, ax3 = axes
    ds = sorted({c.d for c in curves})
    Ls = sorted({c.L for c in curves})
    for c in curves:
        color = _D_COLORS[ds.index(c.d) % len(_D_COLORS)]
        ls = _L_STYLES[Ls.index(c.L) % len(_L_STYLES)]
        label = f"d = {c.d}, L = {c.L}" if len(Ls) > 1 else f"d = {c.d}"
        _band(ax1, c.ratios, c.excess, color, ls, label, floor=1e-4)
        _band(ax2, c.ratios, c.kappa, color, ls, label)
        _band(ax3, c.ratios, c.nu, color, ls, label)
    for ax, name in zip(axes, names):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("$n/d$")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3, which="both")
    ax1.set_yscale("log")
    for ax in (ax2, ax3):
        ax.axhline(level, color=COLORS["bound"], lw=0.8, ls=":")
        ax.set_ylim(-0.1, 1.05)


def plot_learning_curves(data: Any):
    r"""Four panels against :math:`n/d` (log scale): the excess test risk of ERM by PGD, its overlaps
    :math:`\kappa` and :math:`\nu` (medians, bands between the quartiles over samples; colour = :math:`d`,
    line style = :math:`L`), and the linear predictor's excess over Proposition 3 (least squares and ridge)."""
    fig = new_figure(figsize=(11.0, 7.6))
    (ax1, ax2), (ax3, ax4) = fig.subplots(2, 2)
    _erm_panels((ax1, ax2, ax3), data.erm, data.level,
                (r"excess test risk $\mathcal{R}_\lambda(\hat k,\hat v) - \mathcal{R}_\lambda(k^\star,v^\star)$",
                 r"$\kappa = \langle \hat k, k^\star\rangle$ (sign fixed)",
                 r"$\nu = \langle \hat v, v^\star\rangle$ (sign fixed)"))
    ax1.legend(fontsize=7, ncol=2)
    for j, p in enumerate(data.linear):
        ls = _L_STYLES[j % len(_L_STYLES)]
        _band(ax4, p.ratios, p.ls_excess, COLORS["linear"], ls, f"least squares, L = {p.L}", floor=1e-5)
        _band(ax4, p.ratios, p.ridge_excess, COLORS["null"], ls, rf"ridge $\mu = {p.mu:g}$, L = {p.L}", floor=1e-5)
        ax4.axhline(max(p.ridge_limit_excess, 1e-5), color=COLORS["null"], lw=0.8, ls=ls)
        ax4.axvline(p.L, color=COLORS["linear"], lw=0.6, ls=ls, alpha=0.5)
    ax4.set_xscale("log", base=2)
    ax4.set_yscale("log")
    ax4.set_xlabel(f"$n/d$ (d = {data.linear[0].d}; vertical lines: $n = Ld$)" if data.linear else "$n/d$")
    ax4.set_ylabel("linear: test risk $-$ Proposition 3's risk")
    ax4.grid(alpha=0.3, which="both")
    ax4.legend(fontsize=7)
    fig.suptitle(rf"Learning from $n$ samples: ERM by full-batch PGD, $\lambda = {data.lam:g}$, "
                 f"{data.n_steps} steps, init. on $\\mathcal{{M}}$; medians and quartiles over {data.n_samples} samples",
                 fontsize=10)
    return fig


def plot_learning_curves_high_d(data: Any):
    r"""Three panels against :math:`n/d` (log scale) for ERM by L-BFGS up to :math:`d = 400`: the excess test
    risk and the overlaps :math:`\kappa`, :math:`\nu` (medians, bands between the quartiles over samples; colour =
    :math:`d`, line style = :math:`L`), with the level of :math:`n^\star` dotted."""
    fig = new_figure(figsize=(12.0, 3.9))
    ax1, ax2, ax3 = fig.subplots(1, 3)
    _erm_panels((ax1, ax2, ax3), data.erm, data.level,
                ("excess test risk", r"$\kappa$ (sign fixed)", r"$\nu$ (sign fixed)"))
    ax1.legend(fontsize=7, ncol=2)
    Ls = ", ".join(str(L) for L in sorted({c.L for c in data.erm}))
    fig.suptitle(rf"ERM by Riemannian L-BFGS, $L \in \{{{Ls}\}}$, $\lambda = {data.lam:g}$, {data.n_iter} iterations, init. on "
                 rf"$\mathcal{{M}}$; medians and quartiles over {data.n_samples} samples", fontsize=10)
    return fig
