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
    """Median over samples (axis 1) as a line with markers, the quartiles as a band."""
    q25, med, q75 = np.quantile(
        np.asarray(y, dtype=float), [0.25, 0.5, 0.75], axis=1
    )
    if floor is not None:
        q25, med, q75 = (np.maximum(z, floor) for z in (q25, med, q75))
    ax.plot(x, med, color=color, ls=ls, marker="o", ms=3, lw=1.4, label=label)
    ax.fill_between(x, q25, q75, color=color, alpha=0.15, lw=0)


def _style_handles(ds, Ls, level: float | None = None):
    r"""Legend handles of the ERM panels: one colour per :math:`d`, one line style per :math:`L` (only where there
    are several), and the dotted level of :math:`n^\star` when ``level`` is given."""
    from matplotlib.lines import Line2D

    handles = [
        Line2D(
            [],
            [],
            color=_D_COLORS[i % len(_D_COLORS)],
            marker="o",
            ms=3,
            lw=1.4,
            label=f"$d = {d}$",
        )
        for i, d in enumerate(ds)
    ]
    if len(Ls) > 1:
        handles += [
            Line2D(
                [],
                [],
                color="0.3",
                ls=_L_STYLES[j % len(_L_STYLES)],
                lw=1.4,
                label=f"$L = {L}$",
            )
            for j, L in enumerate(Ls)
        ]
    if level is not None:
        handles.append(
            Line2D(
                [],
                [],
                color=COLORS["bound"],
                lw=0.8,
                ls=":",
                label=f"level {level:g}",
            )
        )
    return handles


def _erm_panels(axes, curves, level, names):
    r"""The panels shared by both figures: excess test risk (log scale, clipped at 1e-4), :math:`\kappa` and
    :math:`\nu` against :math:`n/d` (log scale), medians and quartile bands; colour = :math:`d`, line style =
    :math:`L`, the level of :math:`n^\star` dotted. Returns the legend handles (:func:`_style_handles`)."""
    ax1, ax2, ax3 = axes
    ds = sorted({c.d for c in curves})
    Ls = sorted({c.L for c in curves})
    for c in curves:
        color = _D_COLORS[ds.index(c.d) % len(_D_COLORS)]
        ls = _L_STYLES[Ls.index(c.L) % len(_L_STYLES)]
        label = f"d = {c.d}, L = {c.L}"
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
    return _style_handles(ds, Ls, level)


def plot_learning_curves(data: Any):
    r"""Four panels (2 × 2) against :math:`n/d` (log scale): the excess test risk of ERM by PGD, its overlaps
    :math:`\kappa` and :math:`\nu` (medians, bands between the quartiles over samples; colour = :math:`d`,
    line style = :math:`L`, one legend above the panels), and the linear predictor's excess over Proposition 3
    (least squares and ridge, the same line style per :math:`L`; vertical lines at :math:`n = Ld`, horizontal ones
    at the ridge limit)."""
    fig = new_figure(figsize=(6.8, 6.6))
    (ax1, ax2), (ax3, ax4) = fig.subplots(2, 2)
    handles = _erm_panels(
        (ax1, ax2, ax3),
        data.erm,
        data.level,
        (
            "excess test risk",
            r"$\kappa = \langle \hat k, k^\star\rangle$ (sign fixed)",
            r"$\nu = \langle \hat v, v^\star\rangle$ (sign fixed)",
        ),
    )
    Ls = sorted({c.L for c in data.erm} | {p.L for p in data.linear})
    for p in data.linear:
        ls = _L_STYLES[Ls.index(p.L) % len(_L_STYLES)]
        _band(
            ax4,
            p.ratios,
            p.ls_excess,
            COLORS["linear"],
            ls,
            "least squares" if p is data.linear[0] else None,
            floor=1e-5,
        )
        _band(
            ax4,
            p.ratios,
            p.ridge_excess,
            COLORS["null"],
            ls,
            rf"ridge, $\mu = {p.mu:g}$" if p is data.linear[0] else None,
            floor=1e-5,
        )
        ax4.axhline(
            max(p.ridge_limit_excess, 1e-5),
            color=COLORS["null"],
            lw=0.8,
            ls=ls,
        )
        ax4.axvline(p.L, color=COLORS["linear"], lw=0.6, ls=ls, alpha=0.5)
    ax4.set_xscale("log", base=2)
    ax4.set_yscale("log")
    ax4.set_xlabel(
        f"$n/d$ ($d = {data.linear[0].d}$)" if data.linear else "$n/d$"
    )
    ax4.set_ylabel("linear: excess over Prop. 3")
    ax4.grid(alpha=0.3, which="both")
    ax4.legend(loc="upper right")
    for ax in (ax1, ax2, ax3, ax4):
        ax.xaxis.set_major_locator(_Log2Locator())
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncol=len(handles),
        handlelength=1.6,
        columnspacing=1.0,
    )
    fig.suptitle(
        rf"ERM by PGD, $\lambda = {data.lam:g}$, {data.n_steps} steps, start on $\mathcal{{M}}$; "
        f"medians, quartiles over {data.n_samples} samples"
    )
    return fig


def plot_learning_curves_high_d(data: Any):
    r"""Three panels against :math:`n/d` (log scale) for ERM by L-BFGS up to :math:`d = 400`: the excess test
    risk and the overlaps :math:`\kappa`, :math:`\nu` (medians, bands between the quartiles over samples; colour =
    :math:`d`, line style = :math:`L`), with the level of :math:`n^\star` dotted; 2 × 2, the legend in the fourth
    place."""
    fig = new_figure(figsize=(6.8, 6.0))
    (ax1, ax2), (ax3, ax4) = fig.subplots(2, 2)
    handles = _erm_panels(
        (ax1, ax2, ax3),
        data.erm,
        data.level,
        ("excess test risk", r"$\kappa$ (sign fixed)", r"$\nu$ (sign fixed)"),
    )
    ax4.axis("off")
    ax4.legend(
        handles=handles,
        loc="center",
        ncol=2,
        title=f"medians, quartiles\nover {data.n_samples} samples",
    )
    for ax in (ax1, ax2, ax3):
        ax.xaxis.set_major_locator(_Log2Locator())
    fig.suptitle(
        rf"ERM by Riemannian L-BFGS, $\lambda = {data.lam:g}$, {data.n_iter} iterations, start on "
        rf"$\mathcal{{M}}$"
    )
    return fig


def _Log2Locator():
    """Ticks at every power of two, at most five of them (every second one beyond)."""
    from matplotlib.ticker import LogLocator

    return LogLocator(base=2, numticks=6)
