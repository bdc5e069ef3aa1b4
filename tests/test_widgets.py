"""Sliders: the static HTML holds one frame per grid point, in the order the JavaScript expects."""

import base64
import io
import json
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from slrlib import Slider, slider_figure  # noqa: E402


def colour_plot(a, b, scale=1.0):
    """A figure whose colour encodes its parameters, so frames can be told apart."""
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.set_axis_off()
    fig.patch.set_facecolor((a / 4, b / 2 * scale, 0.5))
    return fig


def pixel(src):
    assert src.startswith("data:image/png;base64,")
    img = plt.imread(io.BytesIO(base64.b64decode(src.split(",", 1)[1])), format="png")
    return img[img.shape[0] // 2, img.shape[1] // 2, :3]


def test_static_html_frames_follow_the_grid():
    sf = slider_figure(colour_plot, Slider("a", (0, 1, 2, 3), default=2), Slider("b", (0, 1, 2)), dpi=20)
    html = sf.static_html()
    data = json.loads(re.search(r'<script type="application/json" class="slr-frames">(.*?)</script>', html).group(1))
    frames = data["src"]
    assert len(frames) == 12 and len(data["width"]) == 12
    # Row-major order over (a, b): the JavaScript computes idx = a_index * 3 + b_index.
    for ia, a in enumerate((0, 1, 2, 3)):
        for ib, b in enumerate((0, 1, 2)):
            np.testing.assert_allclose(pixel(frames[ia * 3 + ib]), (a / 4, b / 2, 0.5), atol=0.01)
    # The initial image is the default frame (a = 2, b = 1 the middle value).
    first = re.search(r'<img alt="[^"]+" width="(\d+)" style="[^"]*" src="([^"]+)"', html)
    assert first.group(2) == frames[2 * 3 + 1]
    # Drawn at its size: a 1-inch figure at 20 CSS pixels per inch is shown 20 px wide (up to the
    # pixel that the tight bounding box may crop), with twice the pixels.
    pixels = plt.imread(io.BytesIO(base64.b64decode(first.group(2).split(",", 1)[1])), format="png").shape[1]
    assert int(first.group(1)) == data["width"][2 * 3 + 1] == round(pixels / 2)
    assert 38 <= pixels <= 40
    # The range inputs start at the default indices and cannot leave the grid.
    inputs = re.findall(r'<input type="range" min="0" max="(\d+)" step="1" value="(\d+)"', html)
    assert inputs == [("3", "2"), ("2", "1")]


def test_frames_are_palette_pngs_unless_transparent():
    """Opaque frames are stored with a palette (light pages); transparent ones stay RGBA."""
    from PIL import Image

    from slrlib.widgets import _figure_png

    def line_plot():
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.plot(np.linspace(0, 1, 50), np.linspace(0, 1, 50) ** 2, lw=2)
        return fig

    opaque = _figure_png(line_plot(), 80)
    assert Image.open(io.BytesIO(opaque)).mode == "P"
    fig = line_plot()
    fig.patch.set_alpha(0.0)
    assert Image.open(io.BytesIO(_figure_png(fig, 80))).mode == "RGBA"


def test_fixed_keywords_and_frame_validation():
    sf = slider_figure(colour_plot, Slider("a", (0, 1)), Slider("b", (0, 1)), scale=0.5)
    fig = sf.frame(a=1, b=1)
    assert fig.get_facecolor()[1] == pytest.approx(0.25)
    plt.close(fig)
    with pytest.raises(ValueError, match=r"\bb\b"):
        sf.frame(b=5)
    with pytest.raises(ValueError, match="not a slider"):
        sf.frame(c=1)


def test_mimebundle_offers_static_and_live_versions():
    sf = slider_figure(colour_plot, Slider("a", (0, 1)), Slider("b", (0, 1)), dpi=10)
    bundle = sf._repr_mimebundle_()
    assert "text/html" in bundle and "slr-slider-figure" in bundle["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in bundle
    plt.close("all")


def test_without_ipywidgets_the_live_version_names_the_extra_and_the_static_one_stays(monkeypatch):
    import sys

    sf = slider_figure(colour_plot, Slider("a", (0, 1)), Slider("b", (0, 1)), dpi=10)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets now fails, as when not installed
    with pytest.raises(ModuleNotFoundError, match=r'pip install "slrlib\[widgets\]"'):
        sf.widget()
    bundle = sf._repr_mimebundle_()
    assert "slr-slider-figure" in bundle["text/html"]
    assert "application/vnd.jupyter.widget-view+json" not in bundle
    plt.close("all")


def test_live_widget_redraws_with_the_moved_values():
    calls = []

    def plot(a, b):
        calls.append((a, b))
        return colour_plot(a, b)

    sf = slider_figure(plot, Slider("a", (0, 1, 2, 3)), Slider("b", (0, 1, 2)))
    box = sf.widget()
    sliders = box.children[:2]
    # Only the grid is offered, so no invalid value is reachable.
    assert [v for _, v in sliders[0].options] == [0, 1, 2, 3]
    assert [v for _, v in sliders[1].options] == [0, 1, 2]
    calls.clear()
    sliders[0].value = 3
    sliders[1].value = 0
    assert calls == [(3, 1), (3, 0)]
    with pytest.raises(Exception):
        sliders[0].value = 7  # not an option: ipywidgets refuses it
    plt.close("all")


def test_frames_are_legible_and_described():
    """Each frame's texts are raised to the book's smallest size; the alt text says what it shows."""
    from slrlib.plots.style import MIN_FONT_PT

    sizes = []

    def plot(a):
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.plot([0, 1], [0, a])
        ax.set_title("tiny", fontsize=5)
        fig.canvas.draw()
        sizes.append(fig)
        return fig

    sf = slider_figure(plot, Slider("a", (1, 2)), dpi=20, alt="A line of slope a")
    html = sf.static_html()
    assert 'alt="A line of slope a"' in html
    from slrlib.plots.style import text_sizes

    assert all(min(text_sizes(fig)) >= MIN_FONT_PT for fig in sizes)
    with pytest.raises(ValueError, match="pixel_ratio"):
        slider_figure(plot, Slider("a", (1, 2)), pixel_ratio=0)
