"""Chapter 11's own figure: the exact risk of the ideal heads against λ."""

from __future__ import annotations

import numpy as np

from slrlib.book.ch11_multi import IdealCurves
from slrlib.plots.style import COLORS, new_figure

__all__ = ["plot_ideal_risk"]


def plot_ideal_risk(
    curves: IdealCurves, marks: dict | None = None, lines: dict | None = None
):
    r"""Excess risk against :math:`\lambda` of the ideal heads (one head per location, at the
    oracle directions) and of a single oracle head, median and range over task draws, with
    the null predictor. ``marks`` adds labelled points, ``{label: (lam, excess_risk)}``;
    ``lines`` labelled vertical lines, ``{label: lam}``.
    """
    lam = curves.lam
    fig = new_figure(figsize=(6.8, 4.4))
    ax = fig.subplots()
    for values, color, label in (
        (
            curves.ideal,
            COLORS["attention"],
            "two heads at the oracle directions",
        ),
        (
            curves.one_head,
            COLORS["linear"],
            r"one head at $(k_1^\star, v_1^\star)$",
        ),
    ):
        ex = np.asarray(values) - curves.eps2
        ax.fill_between(
            lam, ex.min(axis=0), ex.max(axis=0), color=color, alpha=0.25, lw=0
        )
        ax.plot(lam, np.median(ex, axis=0), color=color, lw=1.8, label=label)
    ax.axhline(
        curves.null - curves.eps2,
        color=COLORS["null"],
        ls=":",
        lw=1.2,
        label="null predictor",
    )
    for i, (label, x) in enumerate((lines or {}).items()):
        ax.axvline(
            x, color="black", lw=1.0, ls=("--", "-.", ":")[i % 3], label=label
        )
    markers = ("o", "s", "^", "D", "v")
    for i, (label, (x, y)) in enumerate((marks or {}).items()):
        ax.plot(
            x,
            y,
            markers[i % len(markers)],
            color="black",
            mfc="white",
            ms=7,
            label=label,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"inverse temperature $\lambda$")
    ax.set_ylabel(r"excess risk $\mathcal{R}_\lambda - \varepsilon^2$")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="upper left")
    return fig
