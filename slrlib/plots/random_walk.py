r"""Figure ``random_walk`` of chapter 13 (talk, Shi & Cao): random-walk prediction on a circle.

Plotting only: the numbers come from :mod:`slrlib.figures.random_walk`
(:func:`slrlib.case_studies.token_selection.random_walk.train`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from slrlib.plots.style import COLORS, new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_random_walk"]

_RUNS = (  # attribute, label, colour
    ("half", r"$p = 1/2$, $\epsilon = 1$, $\eta = 100$", COLORS["attention"]),
    ("drift", r"$p = 0.8$, $\epsilon = 1$, $\eta = 100$", COLORS["linear"]),
    ("drift_large_eps", r"$p = 0.8$, $\epsilon = 10$, $\eta = 300$", COLORS["softmax"]),
)


def plot_random_walk(data: Any) -> Figure:
    r"""Figure ``random_walk``: random-walk prediction on a circle, three panels.

    Panels: (a) test accuracy against the iteration at :math:`K = 20`, :math:`N = 101`, with the
    Bayes accuracies :math:`\max(p, 1-p)` dotted and :math:`p^3 = 0.512` dashed (the accuracy of a
    read-out from position :math:`N-3`); (b) mean attention on the direct parent (solid), on
    :math:`N-3` for the drifting run at :math:`\epsilon = 1` (dotted) and
    :math:`\cos(V, \Pi^{\star\top})` (dashed) for the same runs; (c) :math:`p = 1`, :math:`K = 5`,
    :math:`N = 21`, exact population: zero initialisation (log loss and cross-entropy, both at
    :math:`1/K`), the mean accuracy over random initialisations, and :math:`N = 22` from zero.

    Parameters
    ----------
    data : slrlib.figures.random_walk.RandomWalkExperiments
        Every run of the section (:func:`slrlib.figures.random_walk.compute`).

    Returns
    -------
    matplotlib.figure.Figure
        The three panels, side by side.
    """
    fig = new_figure(figsize=(13.5, 3.8))
    axes = fig.subplots(1, 3)
    t = data.half.steps

    ax = axes[0]
    for name, label, color in _RUNS:
        r = getattr(data, name)
        ax.plot(t, r.accuracy, color=color, lw=1.6, label=label)
    for p, color in ((0.5, COLORS["attention"]), (0.8, COLORS["linear"])):
        ax.axhline(max(p, 1 - p), color=color, ls=":", lw=1.1)
    ax.axhline(0.8**3, color=COLORS["null"], ls="--", lw=0.9, label=r"$p^3$ (great-grandparent)")
    ax.set_ylabel("test accuracy")
    ax.set_ylim(0, 0.9)
    ax.set_title(r"(a) accuracy, $K = 20$, $N = 101$ (Bayes dotted)", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")

    ax = axes[1]
    for name, label, color in _RUNS:
        r = getattr(data, name)
        ax.plot(t, r.parent, color=color, lw=1.6, label=label)
        ax.plot(t, r.cosine, color=color, lw=1.2, ls="--")
    ax.plot(t, data.drift.attention[:, -4], color=COLORS["linear"], lw=1.2, ls=":")
    ax.plot([], [], color="black", lw=1.6, label="attention on parent $N-1$")
    ax.plot([], [], color="black", lw=1.2, ls=":", label="attention on $N-3$")
    ax.plot([], [], color="black", lw=1.2, ls="--", label=r"$\cos(V, \Pi^{\star\top})$")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title("(b) attention and value alignment", fontsize=9)
    ax.legend(fontsize=7, loc="center right")

    ax = axes[2]
    K = data.ridge.config.K
    ax.plot(t, np.mean([r.accuracy for r in data.random_log], axis=0), color=COLORS["attention"], lw=1.6,
            label=f"random init, log loss (mean of {len(data.random_log)})")
    ax.plot(t, np.mean([r.accuracy for r in data.random_ce], axis=0), color=COLORS["softmax"], lw=1.6,
            label=f"random init, cross-entropy (mean of {len(data.random_ce)})")
    ax.plot(t, data.off_ridge.accuracy, color=COLORS["bayes"], lw=1.4, ls="-.",
            label=f"zero init, $N = {data.off_ridge.config.N}$")
    ax.plot(t, data.ridge.accuracy, color="black", lw=2.0, label=f"zero init, log loss, $N = {data.ridge.config.N}$")
    ax.plot(t, data.ridge_ce.accuracy, color=COLORS["monte_carlo"], lw=1.2, ls="--",
            label="zero init, cross-entropy")
    ax.axhline(1 / K, color=COLORS["null"], ls=":", lw=1.1)
    ax.set_ylim(0, 1.05)
    ax.set_title(rf"(c) $p = 1$, $K = {K}$: exact population (1/K dotted)", fontsize=9)
    ax.legend(fontsize=7, loc="center right")

    for ax in axes:
        ax.set_xlabel("iteration $t$")
        ax.grid(alpha=0.3)
    return fig
