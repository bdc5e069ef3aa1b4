"""Sliders for the book: one description, two renderings.

A chapter writes one call::

    slider_figure(plot_risk, Slider("lam", lam_grid, label="λ"), Slider("L", [2, 5, 10, 20]))

where ``plot_risk(lam=..., L=...)`` returns a matplotlib Figure. The result displays as

* **live** ipywidgets sliders in Jupyter, Binder or Thebe (the figure is redrawn by the
  kernel when a slider moves), and
* a **kernel-free** version in the static HTML book: every frame of the grid is rendered
  once, embedded as an image, and a few lines of JavaScript swap images as an HTML range
  input moves (no kernel, no network).

Both renderings only offer the values of the grid, so a reader cannot reach an invalid
parameter. The two come in one display bundle; Jupyter front ends pick the live widget,
the book (``_config.yml``, ``nb_mime_priority_overrides``) picks the static HTML.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import json
import math
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

if TYPE_CHECKING:
    import ipywidgets
    from matplotlib.figure import Figure

from slrlib.extras import require
from slrlib.plots.style import CSS_DPI, PIXEL_RATIO, legible

__all__ = ["Slider", "SliderFigure", "slider_figure", "format_value"]

MAX_STATIC_FRAMES = 400


def format_value(value: Any) -> str:
    """A short label for a grid value (``0.316``, ``1.0e-03``, ``20``).

    Parameters
    ----------
    value : object
        A grid value: bool, int, float or anything else (shown with ``str``).

    Returns
    -------
    str
        Integers in full; floats with three significant digits, in scientific notation below
        1e-2 or from 1e4 on (zero excepted).
    """
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if v != 0 and (abs(v) < 1e-2 or abs(v) >= 1e4):
            return f"{v:.1e}"
        return f"{v:.3g}"
    return str(value)


@dataclass(frozen=True)
class Slider:
    """A slider over a finite grid of values.

    Parameters
    ----------
    name : str
        Keyword argument of the plotting function that the slider sets.
    values : sequence
        The allowed values, in slider order (at least one, no duplicates).
    label : str, optional
        Text shown beside the slider (default: ``name``).
    default : optional
        Initial value; must be one of ``values`` (default: the middle one).

    Raises
    ------
    ValueError
        If ``name`` is not a Python identifier, ``values`` is empty, repeats a value or holds a
        non-finite float, or ``default`` is not one of ``values``.
    """

    name: str
    values: tuple
    label: str | None = None
    default: Any = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(
                f"name must be a Python identifier, got {self.name!r}"
            )
        values = tuple(
            v.item() if isinstance(v, np.generic) else v for v in self.values
        )
        if len(values) == 0:
            raise ValueError(
                f"values must hold at least one value, got {self.values!r}"
            )
        if len(set(map(repr, values))) != len(values):
            raise ValueError(f"values must not repeat, got {values!r}")
        for v in values:
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"values must be finite, got {values!r}")
        default = self.default
        if default is None:
            default = values[len(values) // 2]
        elif default not in values:
            raise ValueError(
                f"default must be one of values {values!r}, got {default!r}"
            )
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "label", self.label or self.name)

    @property
    def default_index(self) -> int:
        """Position of ``default`` in ``values``."""
        return self.values.index(self.default)


def _figure_png(fig, dpi: int) -> bytes:
    """The figure as a PNG; an opaque one is stored with a 256-colour palette.

    Line plots use few colours, so a palette PNG looks the same and is about a third of
    the size of the RGBA one: the static sliders embed every frame, and this keeps the
    pages light. A figure with transparent pixels stays RGBA.
    """
    import matplotlib.pyplot as plt
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    image = Image.open(io.BytesIO(buf.getvalue()))
    if image.mode == "RGBA" and image.getextrema()[3] != (255, 255):
        return buf.getvalue()
    palette = io.BytesIO()
    image.convert("RGB").quantize(colors=256).save(
        palette, format="PNG", optimize=True
    )
    return palette.getvalue()


def _png_size(png: bytes) -> tuple[int, int]:
    """Width and height of a PNG, from its header."""
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


class SliderFigure:
    """A figure driven by sliders; displays as a live widget or as kernel-free HTML.

    Build it with :func:`slider_figure`. :meth:`frame` returns the matplotlib Figure for one point
    of the grid; :meth:`static_html` renders every frame.

    Parameters
    ----------
    plot : callable
        ``plot(**slider_values, **fixed)`` returns a matplotlib Figure.
    sliders : sequence of Slider
        At least one, with distinct names.
    fixed : dict
        Further keyword arguments passed unchanged to ``plot``.
    dpi : int
        CSS pixels per inch of the frames shown in the static HTML; each frame is rendered
        with ``pixel_ratio`` times as many pixels, and shown at its drawn size.
    pixel_ratio : int
        Image pixels per CSS pixel (2: crisp on high-density screens).
    alt : str
        What the figure shows, for readers who cannot see it (the frames' ``alt`` text).

    Raises
    ------
    ValueError
        If ``plot`` is not callable, there is no slider, two sliders share a name, a keyword is
        both a slider and fixed, or the grid has more than 400 frames (the static HTML embeds
        every frame: use coarser grids).
    """

    def __init__(
        self,
        plot: Callable[..., Any],
        sliders: Sequence[Slider],
        fixed: dict,
        dpi: int,
        pixel_ratio: int = PIXEL_RATIO,
        alt: str = "",
    ):
        if not callable(plot):
            raise ValueError(
                f"plot must be a callable returning a matplotlib Figure, got {plot!r}"
            )
        if len(sliders) == 0:
            raise ValueError("slider_figure needs at least one Slider")
        names = [s.name for s in sliders]
        if len(set(names)) != len(names):
            raise ValueError(f"slider names must be distinct, got {names}")
        clash = set(names) & set(fixed)
        if clash:
            raise ValueError(
                f"a keyword cannot be both a slider and fixed: {sorted(clash)}"
            )
        n_frames = math.prod(len(s.values) for s in sliders)
        if n_frames > MAX_STATIC_FRAMES:
            raise ValueError(
                f"the slider grid has {n_frames} frames; at most {MAX_STATIC_FRAMES} are allowed "
                "(the static HTML embeds every frame): use coarser grids"
            )
        self.plot = plot
        self.sliders = tuple(sliders)
        if not (isinstance(pixel_ratio, int) and pixel_ratio >= 1):
            raise ValueError(
                f"pixel_ratio must be an integer >= 1, got {pixel_ratio!r}"
            )
        self.fixed = dict(fixed)
        self.dpi = dpi
        self.pixel_ratio = pixel_ratio
        self.alt = str(alt).strip() or (
            f"Figure drawn by {getattr(plot, '__name__', 'the plot function')} "
            "at the values chosen with the sliders"
        )

    # -------------------------------------------------------------- computing
    def frame(self, **values: Any) -> Figure:
        """The Figure at one grid point (missing sliders take their default).

        Parameters
        ----------
        **values
            Slider name to value, each one of that slider's values.

        Returns
        -------
        matplotlib.figure.Figure
            What ``plot`` returns at that point.

        Raises
        ------
        ValueError
            If a name is not a slider of this figure or a value is not on its grid.
        """
        params = {s.name: s.default for s in self.sliders}
        for name, value in values.items():
            slider = next((s for s in self.sliders if s.name == name), None)
            if slider is None:
                raise ValueError(f"{name!r} is not a slider of this figure")
            if value not in slider.values:
                raise ValueError(
                    f"{name} must be one of {slider.values}, got {value!r}"
                )
            params[name] = value
        return self.plot(**params, **self.fixed)

    # -------------------------------------------------------------- static HTML
    def static_html(self) -> str:
        """Kernel-free HTML: every frame as an embedded PNG, range inputs that swap them.

        Returns
        -------
        str
            The HTML fragment, its JavaScript included (no kernel, no network).
        """
        uid = "slr-" + uuid.uuid4().hex[:10]
        frames, widths = [], []
        for combo in itertools.product(*(s.values for s in self.sliders)):
            fig = legible(
                self.frame(**dict(zip((s.name for s in self.sliders), combo)))
            )
            png = _figure_png(fig, self.dpi * self.pixel_ratio)
            frames.append(
                "data:image/png;base64,"
                + base64.b64encode(png).decode("ascii")
            )
            widths.append(round(_png_size(png)[0] / self.pixel_ratio))
        sizes = [len(s.values) for s in self.sliders]
        first = 0
        for s, size in zip(self.sliders, sizes):
            first = first * size + s.default_index
        controls = []
        for i, s in enumerate(self.sliders):
            labels = [format_value(v) for v in s.values]
            controls.append(
                f'<label style="display:flex;align-items:center;gap:.6em;margin:.2em 0">'
                f'<span style="min-width:5em">{html.escape(s.label)}</span>'
                f'<input type="range" min="0" max="{len(s.values) - 1}" step="1" '
                f'value="{s.default_index}" data-slider="{i}" aria-label="{html.escape(s.label)}" '
                f'style="flex:1;max-width:22em">'
                f'<output data-readout="{i}">{html.escape(labels[s.default_index])}</output>'
                f'<script type="application/json" data-labels="{i}">{json.dumps(labels)}</script>'
                f"</label>"
            )
        images = json.dumps({"src": frames, "width": widths})
        return (
            f'<div class="slr-slider-figure" id="{uid}" data-frames="{len(frames)}">'
            + "".join(controls)
            + f'<img alt="{html.escape(self.alt)}" width="{widths[first]}" style="max-width:100%;height:auto" '
            + f'src="{frames[first]}">'
            + f'<script type="application/json" class="slr-frames">{images}</script>'
            + "<script>(function(){"
            + f"var root=document.getElementById('{uid}');"
            + "var frames=JSON.parse(root.querySelector('.slr-frames').textContent);"
            + f"var sizes={json.dumps(sizes)};"
            + "var inputs=root.querySelectorAll('input[data-slider]');"
            + "var img=root.querySelector('img');"
            + "function update(){var idx=0;inputs.forEach(function(inp,i){"
            + "idx=idx*sizes[i]+parseInt(inp.value,10);"
            + "var labels=JSON.parse(root.querySelector('[data-labels=\"'+i+'\"]').textContent);"
            + "root.querySelector('[data-readout=\"'+i+'\"]').textContent=labels[parseInt(inp.value,10)];});"
            + "img.src=frames.src[idx];img.width=frames.width[idx];img.setAttribute('data-frame',idx);}"
            + "inputs.forEach(function(inp){inp.addEventListener('input',update);});"
            + "})();</script></div>"
        )

    # -------------------------------------------------------------- live widget
    def widget(self) -> ipywidgets.VBox:
        """The live ipywidgets version: one SelectionSlider per parameter and an output area.

        Returns
        -------
        ipywidgets.VBox
            The sliders above the output area, in which the kernel redraws the figure.

        Raises
        ------
        ModuleNotFoundError
            Without ipywidgets or IPython: the message names ``pip install "slrlib[widgets]"``.
        """
        import matplotlib.pyplot as plt

        widgets = require("ipywidgets", "SliderFigure.widget (live sliders)")
        display = require(
            "IPython.display", "SliderFigure.widget (live sliders)"
        ).display

        controls = {
            s.name: widgets.SelectionSlider(
                options=[(format_value(v), v) for v in s.values],
                value=s.default,
                description=s.label,
                continuous_update=True,
                style={"description_width": "initial"},
                layout=widgets.Layout(width="28em"),
            )
            for s in self.sliders
        }
        out = widgets.Output()

        def redraw(**values):
            fig = self.plot(**values, **self.fixed)
            with out:
                out.clear_output(wait=True)
                display(fig)
            plt.close(fig)

        widgets.interactive_output(redraw, controls)
        return widgets.VBox([*controls.values(), out])

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/html": self.static_html(), "text/plain": repr(self)}
        try:
            live = self.widget()
        except (
            ImportError
        ):  # without the extra "widgets": the static sliders only
            return bundle
        self._live = (
            live  # keep the widget (and its comm) alive with this object
        )
        live_bundle = live._repr_mimebundle_() or {}
        if "application/vnd.jupyter.widget-view+json" in live_bundle:
            bundle["application/vnd.jupyter.widget-view+json"] = live_bundle[
                "application/vnd.jupyter.widget-view+json"
            ]
        return bundle

    def __repr__(self) -> str:
        names = ", ".join(
            f"{s.name}∈{len(s.values)} values" for s in self.sliders
        )
        return (
            f"SliderFigure({getattr(self.plot, '__name__', 'plot')}; {names})"
        )


def slider_figure(
    plot: Callable[..., Any],
    *sliders: Slider,
    dpi: int = CSS_DPI,
    pixel_ratio: int = PIXEL_RATIO,
    alt: str = "",
    **fixed: Any,
) -> SliderFigure:
    """A figure with sliders, live in Jupyter and kernel-free in the static book.

    Parameters
    ----------
    plot : callable
        ``plot(**slider_values, **fixed)`` returns a matplotlib Figure.
    *sliders : Slider
        One per parameter the reader may move; each over a finite grid.
    dpi : int
        CSS pixels per inch of the frames in the static HTML (default: the book's, so that a
        frame is shown at the size it is drawn).
    pixel_ratio : int
        Image pixels per CSS pixel of the frames (default 2: crisp on high-density screens).
    alt : str
        What the figure shows, for readers who cannot see it (the frames' ``alt`` text).
    **fixed
        Further keyword arguments passed unchanged to ``plot``.

    Returns
    -------
    SliderFigure
        Display it (make it the last expression of a cell).

    Raises
    ------
    ValueError
        On an invalid combination of sliders (see :class:`SliderFigure`).
    """
    return SliderFigure(plot, sliders, fixed, dpi, pixel_ratio, alt)
