"""Chapter 12: linear probes of a pretrained encoder (Figure 1(b)) and embedding directions (Figure 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from slrlib.plots.style import COLORS, new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from slrlib.case_studies.probing import EmbeddingDirections, ProbingResult

__all__ = ["SET_COLORS", "plot_fig1b", "plot_auc", "plot_fig2"]

#: One colour per set: orange for the training set (as in the paper), greens for the tests.
SET_COLORS = {
    "train": "#ff7f0e",
    "baseline": "#1b7837",
    "unseen_adjectives": "#5aae61",
    "other_structure": "#a6dba0",
    "both": "#d9f0d3",
}
KIND_COLORS = {"positive": COLORS["bayes"], "negative": COLORS["linear"], "other": COLORS["null"]}


def _grouped_bars(ax, values, set_names, set_labels):
    n_sets, n_layers = values.shape
    width = 0.8 / n_sets
    x = np.arange(n_layers)
    for i, name in enumerate(set_names):
        ax.bar(x + (i - (n_sets - 1) / 2) * width, values[i], width, color=SET_COLORS.get(name, "#999999"),
               edgecolor="#333333", linewidth=0.4, label=set_labels.get(name, name))
    ax.axhline(0.5, color="k", ls="--", lw=0.8)
    ax.set_xticks(x, ["0\n(embeddings)"] + [str(layer) for layer in x[1:]])
    ax.set_xlabel("layer of the [CLS] state")
    ax.set_ylim(0.0, 1.04)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.grid(axis="y", alpha=0.3)


def plot_fig1b(result: ProbingResult) -> Figure:
    """Figure 1(b): accuracy of the probe of each layer, one bar per set, chance dashed.

    Parameters
    ----------
    result : slrlib.case_studies.probing.ProbingResult
        The probing experiment (:func:`slrlib.case_studies.probing.run_probing`).

    Returns
    -------
    matplotlib.figure.Figure
        The grouped bar chart.
    """
    from slrlib.case_studies.probing import SET_LABELS

    fig = new_figure(figsize=(7.6, 4.0))
    ax = fig.add_subplot()
    _grouped_bars(ax, np.asarray(result.accuracy), result.set_names, SET_LABELS)
    ax.set_ylabel("accuracy")
    ax.set_title(f"Linear probes of [CLS] in {result.encoder} (chance = 0.5, dashed)", fontsize=10)
    fig.legend(*ax.get_legend_handles_labels(), fontsize=7.5, ncol=5, loc="outside lower center", frameon=False)
    return fig


def plot_auc(result: ProbingResult) -> Figure:
    """The same probes scored without their threshold: area under the ROC curve per layer and set.

    Parameters
    ----------
    result : slrlib.case_studies.probing.ProbingResult
        The probing experiment (:func:`slrlib.case_studies.probing.run_probing`).

    Returns
    -------
    matplotlib.figure.Figure
        The grouped bar chart (0.5 dashed).
    """
    from slrlib.case_studies.probing import SET_LABELS

    fig = new_figure(figsize=(7.6, 4.0))
    ax = fig.add_subplot()
    _grouped_bars(ax, np.asarray(result.auc), result.set_names, SET_LABELS)
    ax.set_ylabel("area under the ROC curve")
    ax.set_title("The same probes, threshold-free: AUC of the probe's score (0.5 dashed)", fontsize=10)
    fig.legend(*ax.get_legend_handles_labels(), fontsize=7.5, ncol=5, loc="outside lower center", frameon=False)
    return fig


def plot_fig2(directions: EmbeddingDirections) -> Figure:
    """Figure 2: every word of the data in the plane (k_hat, v_hat) of the input embedding space.

    Filled markers: words used to fit the directions; hollow: held out (unseen adjectives,
    test animals and adverb). Dotted lines: the two midpoint thresholds.

    Parameters
    ----------
    directions : slrlib.case_studies.probing.EmbeddingDirections
        The fitted directions (:func:`slrlib.case_studies.probing.embedding_directions`).

    Returns
    -------
    matplotlib.figure.Figure
        The scatter plot, every word annotated.
    """
    fig = new_figure(figsize=(6.4, 4.6))
    ax = fig.add_subplot()
    coords = np.asarray(directions.coords)
    for kind, label in (("positive", "positive adjective"), ("negative", "negative adjective"), ("other", "other word")):
        for seen in (True, False):
            mask = (np.array(directions.kind) == kind) & (np.asarray(directions.seen) == seen)
            if not mask.any():
                continue
            color = KIND_COLORS[kind]
            ax.scatter(coords[mask, 0], coords[mask, 1], s=34, color=color if seen else "white",
                       edgecolors=color, linewidths=1.4,
                       label=f"{label} ({'fitted' if seen else 'held out'})")
    for (x, y), word in zip(coords, directions.words):
        ax.annotate(word, (x, y), xytext=(3, 3), textcoords="offset points", fontsize=6.5, color="#333333")
    ax.axvline(directions.k_threshold, color="k", ls=":", lw=0.8)
    ax.axhline(directions.v_threshold, color="k", ls=":", lw=0.8)
    ax.set_xlabel(r"$\langle e, \hat k\rangle$: is it a sentiment word? (like $k^\star$)")
    ax.set_ylabel(r"$\langle e, \hat v\rangle$: which sentiment? (like $v^\star$)")
    ax.set_title(rf"Input embeddings $e$ of the words; $\cos(\hat k, \hat v) = {directions.cosine:.3f}$", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", framealpha=0.95)
    return fig
