r"""Figure ``random_walk`` of chapter 13 (talk, Shi & Cao): random-walk prediction on a circle.

Plotting only: the numbers come from :mod:`slrlib.figures.random_walk`
(:func:`slrlib.case_studies.token_selection.random_walk.train`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from matplotlib.ticker import MaxNLocator

from slrlib.plots.style import COLORS, new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_random_walk"]

_RUNS = (  # attribute, label, colour
    ("half", r"$p = 1/2$, $\mu = 1$, $\alpha = 100$", COLORS["attention"]),
    ("drift", r"$p = 0.8$, $\mu = 1$, $\alpha = 100$", COLORS["linear"]),
    (
        "drift_large_eps",
        r"$p = 0.8$, $\mu = 10$, $\alpha = 300$",
        COLORS["softmax"],
    ),
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
        The three panels: (a) and (b) side by side above their legend, (c) below.
    """
    from matplotlib.lines import Line2D

    fig = new_figure(figsize=(6.8, 7.4))
    top, bottom = fig.subfigures(2, 1, height_ratios=(1.25, 1.0))
    axes = list(top.subplots(1, 2)) + [bottom.subplots()]
    t = data.half.steps

    ax = axes[0]
    for name, label, color in _RUNS:
        r = getattr(data, name)
        ax.plot(t, r.accuracy, color=color, lw=1.6)
    for p, color in ((0.5, COLORS["attention"]), (0.8, COLORS["linear"])):
        ax.axhline(max(p, 1 - p), color=color, ls=":", lw=1.1)
    ax.axhline(0.8**3, color=COLORS["null"], ls="--", lw=0.9)
    ax.set_ylabel("test accuracy")
    ax.set_ylim(0, 0.9)
    ax.set_title("(a) accuracy")

    ax = axes[1]
    for name, label, color in _RUNS:
        r = getattr(data, name)
        ax.plot(t, r.parent, color=color, lw=1.6)
        ax.plot(t, r.cosine, color=color, lw=1.2, ls="--")
    ax.plot(
        t, data.drift.attention[:, -4], color=COLORS["linear"], lw=1.2, ls=":"
    )
    ax.set_ylim(-0.03, 1.03)
    ax.set_title("(b) attention, alignment")

    runs = [
        Line2D([], [], color=color, lw=1.6, label=label)
        for _, label, color in _RUNS
    ]
    keys = [
        Line2D(
            [],
            [],
            color=COLORS["null"],
            ls="--",
            lw=0.9,
            label=r"(a) $p^3$ (great-grandparent)",
        ),
        Line2D(
            [], [], color="black", ls=":", lw=1.1, label="(a) Bayes accuracy"
        ),
        Line2D(
            [],
            [],
            color="black",
            lw=1.6,
            label="(b) attention on parent $N-1$",
        ),
        Line2D(
            [],
            [],
            color="black",
            lw=1.2,
            ls=":",
            label="(b) attention on $N-3$",
        ),
        Line2D(
            [],
            [],
            color="black",
            lw=1.2,
            ls="--",
            label=r"(b) $\cos(V, \Pi^{\star\top})$",
        ),
    ]
    top.legend(
        handles=runs + keys,
        ncol=2,  # column by column: the runs, then the line styles
        loc="outside lower center",
        frameon=False,
        handlelength=1.6,
        columnspacing=1.0,
        handletextpad=0.5,
    )
    top.suptitle(f"$K = {data.half.config.K}$, $N = {data.half.config.N}$")

    ax = axes[2]
    K = data.ridge.config.K
    ax.plot(
        t,
        np.mean([r.accuracy for r in data.random_log], axis=0),
        color=COLORS["attention"],
        lw=1.6,
        label=f"random init., log loss (mean of {len(data.random_log)})",
    )
    ax.plot(
        t,
        np.mean([r.accuracy for r in data.random_ce], axis=0),
        color=COLORS["softmax"],
        lw=1.6,
        label=f"random init., cross-entropy (mean of {len(data.random_ce)})",
    )
    ax.plot(
        t,
        data.off_ridge.accuracy,
        color=COLORS["bayes"],
        lw=1.4,
        ls="-.",
        label=f"zero init., $N = {data.off_ridge.config.N}$",
    )
    ax.plot(
        t,
        data.ridge.accuracy,
        color="black",
        lw=2.0,
        label=f"zero init., log loss, $N = {data.ridge.config.N}$",
    )
    ax.plot(
        t,
        data.ridge_ce.accuracy,
        color=COLORS["monte_carlo"],
        lw=1.2,
        ls="--",
        label="zero init., cross-entropy",
    )
    ax.axhline(1 / K, color=COLORS["null"], ls=":", lw=1.1, label="$1/K$")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy")
    ax.set_title(rf"(c) $p = 1$, $K = {K}$: exact population")
    ax.legend(
        loc="center left",
        bbox_to_anchor=(1.02, 0.5),
        frameon=False,
        handlelength=1.6,
    )

    for ax in axes:
        ax.set_xlabel("iteration $t$")
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(4))
    return fig
