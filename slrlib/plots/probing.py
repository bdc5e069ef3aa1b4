"""Chapter 12: linear probes of a pretrained encoder (Figure 1(b)) and embedding directions (Figure 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from slrlib.plots.style import COLORS, CSS_DPI, MIN_FONT_PT, new_figure

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
KIND_COLORS = {
    "positive": COLORS["bayes"],
    "negative": COLORS["linear"],
    "other": COLORS["null"],
}


def _grouped_bars(ax, values, set_names, set_labels):
    n_sets, n_layers = values.shape
    width = 0.8 / n_sets
    x = np.arange(n_layers)
    for i, name in enumerate(set_names):
        ax.bar(
            x + (i - (n_sets - 1) / 2) * width,
            values[i],
            width,
            color=SET_COLORS.get(name, "#999999"),
            edgecolor="#333333",
            linewidth=0.4,
            label=set_labels.get(name, name),
        )
    ax.axhline(0.5, color="k", ls="--", lw=0.8)
    ax.set_xticks(x, ["0\n(embed.)"] + [str(layer) for layer in x[1:]])
    ax.set_xlabel("layer of the [CLS] state")
    ax.set_ylim(0.0, 1.04)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.grid(axis="y", alpha=0.3)


def _bar_figure(values, result, ylabel, title):
    from slrlib.case_studies.probing import SET_LABELS

    fig = new_figure(figsize=(6.8, 4.2))
    ax = fig.add_subplot()
    _grouped_bars(ax, np.asarray(values), result.set_names, SET_LABELS)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.legend(
        *ax.get_legend_handles_labels(),
        ncol=3,
        loc="outside lower center",
        frameon=False,
        columnspacing=1.2,
        handlelength=1.5,
    )
    return fig


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
    return _bar_figure(
        result.accuracy,
        result,
        "accuracy",
        f"Linear probes of [CLS] in {result.encoder} (chance dashed)",
    )


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
    return _bar_figure(
        result.auc,
        result,
        "area under the ROC curve",
        "The same probes without their threshold: AUC (0.5 dashed)",
    )


def _crosses(p, q, a, b) -> bool:
    """Whether the segments pq and ab cross (display coordinates)."""

    def side(u, v, w):
        return (v[0] - u[0]) * (w[1] - u[1]) - (v[1] - u[1]) * (w[0] - u[0])

    return (
        side(p, q, a) * side(p, q, b) < 0 and side(a, b, p) * side(a, b, q) < 0
    )


def _label_points(
    ax, xy, texts, *, fontsize=MIN_FONT_PT, color="#333333", marker_px=6.0
):
    """Write each text next to its point, without overlaps: greedy placement in display space.

    Points are taken from the most crowded to the least; each label goes to the first free spot
    on rings of growing radius around its point, trying first the directions away from its
    neighbours: inside the axes, clear of every marker, of every label placed before and of the
    legend. A label away from its point gets a thin leader line, which may cross no other
    leader, label or marker. Distances are CSS pixels: draw on a figure of ``CSS_DPI`` dots per
    inch for the same placement everywhere.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.transforms import Bbox

    fig = ax.figure
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.canvas.draw()  # the constrained layout fixes the axes before the labels are placed
    renderer = fig.canvas.get_renderer()
    u = fig.dpi / CSS_DPI
    marker_px *= u
    pts = ax.transData.transform(np.asarray(xy, dtype=float))
    frame = ax.get_window_extent(renderer)
    boxes = []  # the labels placed so far
    markers = [
        Bbox.from_extents(
            x - marker_px, y - marker_px, x + marker_px, y + marker_px
        )
        for x, y in pts
    ]
    legend = ax.get_legend()
    if legend is not None:
        boxes.append(legend.get_window_extent(renderer))
    leaders = []  # (point, anchor) of the leaders drawn so far
    sizes = []
    for text in texts:
        t = ax.text(0, 0, text, fontsize=fontsize)
        bb = t.get_window_extent(renderer)
        sizes.append((bb.width, bb.height))
        t.remove()
    dist = np.linalg.norm(pts[:, None] - pts[None], axis=-1)
    crowd = np.sum(dist < 40 * u, axis=1)
    order = np.argsort(-crowd, kind="stable")
    pad = 1.5 * u
    angles = np.deg2rad(np.arange(0, 360, 15))
    radii = (8, 16, 22, 28, 36, 44, 54, 66, 80, 96, 116, 140)

    def leader_ok(P, A):
        if any(_crosses(P, A, p, q) for p, q in leaders):
            return False
        seg = np.linspace(P, A, 24)[1:-1]
        return not any(b.contains(x, y) for b in boxes for x, y in seg)

    for i in order:
        (x, y), (w, h) = pts[i], sizes[i]
        near = dist[i] < 60 * u
        away = (
            np.arctan2(y - pts[near, 1].mean(), x - pts[near, 0].mean())
            if near.sum() > 1
            else 0.0
        )
        order_a = angles[
            np.argsort(
                np.abs(np.angle(np.exp(1j * (angles - away)))), kind="stable"
            )
        ]
        placed = fallback = None
        for r in (
            radii[1:] if crowd[i] > 2 else radii
        ):  # crowded: out of the cluster, with a leader
            for a in order_a:
                c, s_ = np.cos(a), np.sin(a)
                cx, cy = x + r * u * c, y + r * u * s_
                # the label's side that faces the point sits on the candidate point
                x0 = cx if c > 0.3 else (cx - w if c < -0.3 else cx - w / 2)
                y0 = cy if s_ > 0.3 else (cy - h if s_ < -0.3 else cy - h / 2)
                bb = Bbox.from_extents(
                    x0 - pad, y0 - pad, x0 + w + pad, y0 + h + pad
                )
                inside = (
                    bb.x0 >= frame.x0 + 2 * u
                    and bb.x1 <= frame.x1 - 2 * u
                    and bb.y0 >= frame.y0 + 2 * u
                    and bb.y1 <= frame.y1 - 2 * u
                )
                if not inside or any(bb.overlaps(o) for o in boxes + markers):
                    continue
                relpos = (
                    0.0 if c > 0.3 else (1.0 if c < -0.3 else 0.5),
                    0.0 if s_ > 0.3 else (1.0 if s_ < -0.3 else 0.5),
                )
                A = (x0 + relpos[0] * w, y0 + relpos[1] * h)
                if r > 8 and not leader_ok((x, y), A):
                    fallback = fallback or (
                        r,
                        x0,
                        y0,
                        bb,
                        relpos,
                        A,
                    )  # free, but its leader crosses
                    continue
                placed = (r, x0, y0, bb, relpos, A)
                break
            if placed:
                break
        placed = placed or fallback
        if placed is None:  # no free spot: write it on the point's right
            placed = (
                8,
                x + 8 * u,
                y - h / 2,
                Bbox.from_extents(
                    x + 8 * u, y - h / 2, x + 8 * u + w, y + h / 2
                ),
                (0.0, 0.5),
                (x + 8 * u, y),
            )
        r, x0, y0, bb, relpos, A = placed
        boxes.append(bb)
        if r > 8:
            leaders.append(((x, y), A))
        tx, ty = ax.transData.inverted().transform((x0, y0))
        arrow = dict(
            arrowstyle="-",
            color="#999999",
            lw=0.6,
            shrinkA=1,
            shrinkB=4,
            relpos=relpos,
        )
        ann = ax.annotate(
            texts[i],
            xy=tuple(np.asarray(xy[i], dtype=float)),
            xytext=(tx, ty),
            textcoords="data",
            ha="left",
            va="bottom",
            fontsize=fontsize,
            color=color,
            arrowprops=arrow if r > 8 else None,
        )
        ann.set_in_layout(False)


def plot_fig2(directions: EmbeddingDirections) -> Figure:
    """Figure 2: every word of the data in the plane (k_hat, v_hat) of the input embedding space.

    Filled markers: words used to fit the directions; hollow: held out (unseen adjectives,
    test animals and adverb). Dotted lines: the two midpoint thresholds. Each word is written
    next to its point, with a leader line where the points are crowded.

    Parameters
    ----------
    directions : slrlib.case_studies.probing.EmbeddingDirections
        The fitted directions (:func:`slrlib.case_studies.probing.embedding_directions`).

    Returns
    -------
    matplotlib.figure.Figure
        The scatter plot, every word annotated.
    """
    from matplotlib.lines import Line2D

    fig = new_figure(
        figsize=(6.8, 6.0), dpi=CSS_DPI
    )  # the labels are placed at this dpi, the same everywhere
    ax = fig.add_subplot()
    coords = np.asarray(directions.coords)
    kinds = np.array(directions.kind)
    seen = np.asarray(directions.seen)
    for kind in ("positive", "negative", "other"):
        color = KIND_COLORS[kind]
        for fitted in (True, False):
            mask = (kinds == kind) & (seen == fitted)
            if mask.any():
                ax.scatter(
                    coords[mask, 0],
                    coords[mask, 1],
                    s=30,
                    color=color if fitted else "white",
                    edgecolors=color,
                    linewidths=1.4,
                    zorder=3,
                )
    ax.axvline(directions.k_threshold, color="k", ls=":", lw=0.8)
    ax.axhline(directions.v_threshold, color="k", ls=":", lw=0.8)
    ax.set_xlabel(
        r"$\langle e, \hat k\rangle$: a sentiment word? (like $k^\star$)"
    )
    ax.set_ylabel(
        r"$\langle e, \hat v\rangle$: which sentiment? (like $v^\star$)"
    )
    ax.set_title(
        rf"Input embeddings $e$ of the words; $\cos(\hat k, \hat v) = {directions.cosine:.3f}$"
    )
    span = np.ptp(coords, axis=0)
    ax.set_xlim(
        coords[:, 0].min() - 0.12 * span[0],
        coords[:, 0].max() + 0.22 * span[0],
    )
    ax.set_ylim(
        coords[:, 1].min() - 0.1 * span[1], coords[:, 1].max() + 0.1 * span[1]
    )
    handles = [
        Line2D(
            [], [], ls="", marker="o", ms=6, color=KIND_COLORS[k], label=lab
        )
        for k, lab in (
            ("positive", "positive adjective"),
            ("negative", "negative adjective"),
            ("other", "other word"),
        )
    ]
    handles += [
        Line2D(
            [],
            [],
            ls="",
            marker="o",
            ms=6,
            color="#555555",
            label="filled: fitted",
        ),
        Line2D(
            [],
            [],
            ls="",
            marker="o",
            ms=6,
            mfc="white",
            mec="#555555",
            mew=1.4,
            label="hollow: held out",
        ),
    ]
    fig.legend(
        handles=handles,
        ncol=3,
        loc="outside lower center",
        frameon=False,
        columnspacing=1.0,
        handletextpad=0.3,
    )
    _label_points(ax, coords, list(directions.words))
    return fig
