"""Shared figure conventions: one colour per predictor across the whole book, and the axis helpers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from jax.typing import ArrayLike
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["COLORS", "FIGSIZE", "new_figure", "median_band", "step_axes"]

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


def median_band(ax: Axes, x: ArrayLike, runs: ArrayLike, color: str, label: str, alpha: float = 0.25) -> None:
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
