"""Shared figure conventions: one colour per predictor across the whole book, and the axis helpers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from jax.typing import ArrayLike
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "COLORS",
    "FIGSIZE",
    "COLUMN_WIDTH_IN",
    "CSS_DPI",
    "PIXEL_RATIO",
    "MIN_FONT_PT",
    "new_figure",
    "median_band",
    "step_axes",
    "legible",
    "text_sizes",
]

#: One colour per predictor, across the whole book.
COLORS = {
    "attention": "#1f77b4",
    "softmax": "#9467bd",
    "oracle": "#17becf",
    "bayes": "#2ca02c",
    "linear": "#d62728",
    "null": "#7f7f7f",
    "bound": "#000000",
    "monte_carlo": "#ff7f0e",
}
#: The widest figure, in inches at :data:`CSS_DPI`: 680 CSS pixels, 700 with the 0.1 in margin
#: that a tight bounding box adds on each side, within the book's column (704 px in a 1300 px
#: window). No figure is drawn wider, so every figure is shown at the size it is drawn.
COLUMN_WIDTH_IN = 6.8
#: CSS pixels per inch of a figure: a figure ``w`` inches wide is shown ``CSS_DPI * w`` pixels wide.
CSS_DPI = 100
#: Image pixels per CSS pixel: figures are rendered at ``CSS_DPI * PIXEL_RATIO`` dots per inch,
#: crisp on high-density screens.
PIXEL_RATIO = 2
#: Smallest text in a figure, in points: at :data:`CSS_DPI`, 10.5 pt is 14.6 CSS px, the size of
#: the book's small text (14.4 px, against 16 px for the body).
MIN_FONT_PT = 10.5
#: Default size of a one-panel figure: six tenths of its width for its height.
FIGSIZE = (6.4, 4.0)


def new_figure(layout: str | None = "constrained", **kwargs: Any) -> Figure:
    """A figure to return from a plot function: created by ``pyplot``, then closed.

    Closing it detaches it from pyplot, so a notebook shows it once (as the cell's value)
    rather than twice.

    Parameters
    ----------
    layout : str or None
        Matplotlib layout engine (default ``"constrained"``). Slider frames pass ``layout=None``:
        constrained layout costs an extra draw per frame.
    **kwargs
        Further keyword arguments of ``pyplot.figure`` (e.g. ``figsize``).

    Returns
    -------
    matplotlib.figure.Figure
        The new, empty figure.
    """
    import matplotlib.pyplot as plt

    fig = plt.figure(layout=layout, **kwargs)
    plt.close(fig)
    return fig


def median_band(
    ax: Axes,
    x: ArrayLike,
    runs: ArrayLike,
    color: str,
    label: str,
    alpha: float = 0.25,
) -> None:
    """Median over runs (axis 0) as a line, with the 2.5–97.5 % band shaded.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to draw on.
    x : array_like, shape (n,)
        Abscissae.
    runs : array_like, shape (runs, n)
        One curve per run.
    color, label : str
        Colour of the line and band; legend label of the line.
    alpha : float
        Opacity of the band (default 0.25).
    """
    import numpy as np

    lo, med, hi = np.percentile(np.asarray(runs), [2.5, 50, 97.5], axis=0)
    ax.fill_between(x, lo, hi, color=color, alpha=alpha, lw=0)
    ax.plot(x, med, color=color, lw=1.8, label=label)


def step_axes(axes: Iterable[Axes], *, xlabel: str = "step $t$") -> None:
    """Format axes whose x-axis counts training steps: label, light grid, scientific ticks.

    Parameters
    ----------
    axes : iterable of matplotlib.axes.Axes
        The axes to format.
    xlabel : str
        Label of the x-axis (default ``"step $t$"``).
    """
    for ax in axes:
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 3))


def text_sizes(fig: Figure) -> list[float]:
    """Font sizes (points) of every visible, non-empty text of a drawn figure: titles, labels,
    tick labels, legends, annotations."""
    from matplotlib.text import Text

    fig.canvas.draw()
    return [
        t.get_fontsize()
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip()
    ]


def legible(
    fig: Figure,
    min_font_pt: float = MIN_FONT_PT,
    max_width_in: float = COLUMN_WIDTH_IN,
) -> Figure:
    """Make a figure legible where the book shows it: no text smaller than ``min_font_pt``.

    Every place that renders a figure for a reader (the chapters' display, the kernel-free
    sliders, ``python -m slrlib figure``) calls it. Smaller tick labels are raised through
    ``tick_params`` (so that ticks created later follow), other texts directly.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, as a plot function returned it.
    min_font_pt : float
        Smallest font size, in points (default :data:`MIN_FONT_PT`).
    max_width_in : float
        Widest figure, in inches (default :data:`COLUMN_WIDTH_IN`).

    Returns
    -------
    matplotlib.figure.Figure
        The same figure, its small texts enlarged.

    Raises
    ------
    ValueError
        When the figure is wider than ``max_width_in`` (it would be shown smaller than drawn).
    """
    from matplotlib.text import Text

    width = float(fig.get_size_inches()[0])
    if width > max_width_in + 1e-9:
        raise ValueError(
            f"fig is {width:.2f} in wide; at most {max_width_in} in (the book's column) is allowed"
        )
    fig.canvas.draw()
    for ax in fig.axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            for which, ticks in (
                ("major", axis.get_major_ticks()),
                ("minor", axis.get_minor_ticks()),
            ):
                if ticks and ticks[0].label1.get_fontsize() < min_font_pt:
                    ax.tick_params(
                        axis=name, which=which, labelsize=min_font_pt
                    )
    for text in fig.findobj(Text):
        if text.get_fontsize() < min_font_pt:
            text.set_fontsize(min_font_pt)
    return fig
