"""Sphinx extension: the kernel-free sliders' frames as image files, not inside the page.

A slider (:func:`slrlib.widgets.slider_figure`) renders every frame of its grid, at twice the
pixels it is shown with, as a ``data:`` URI in its HTML: the notebook stays self-contained.
Embedded in the page, forty such frames would weigh more than the rest of the chapter. Here
each frame is written once to ``_images/slr-frames/<hash>.png`` and the slider's HTML names
the file instead: the page loads the frame it shows, and the next one when the slider moves
(from disk or from the server; no network beyond the book's own files).
"""

from __future__ import annotations

import base64
import hashlib
import json
import posixpath
import re
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

FRAMES = re.compile(r'(<script type="application/json" class="slr-frames">)(.*?)(</script>)', re.S)
DATA_URI = re.compile(r'data:image/png;base64,([A-Za-z0-9+/=]+)')
FOLDER = "_images/slr-frames"


def externalise(html: str, docname: str, outdir: Path) -> str:
    """The slider's HTML with every ``data:`` PNG written to a file and named by its path."""
    written: dict[str, str] = {}

    def to_file(match: re.Match) -> str:
        data = match.group(1)
        if data not in written:
            png = base64.b64decode(data)
            name = hashlib.sha256(png).hexdigest()[:20] + ".png"
            target = outdir / FOLDER / name
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(png)
            written[data] = posixpath.relpath(f"{FOLDER}/{name}", posixpath.dirname(docname) or ".")
        return written[data]

    def frames(match: re.Match) -> str:
        data = json.loads(match.group(2))
        data["src"] = [DATA_URI.sub(to_file, src) for src in data["src"]]
        return match.group(1) + json.dumps(data) + match.group(3)

    html = FRAMES.sub(frames, html)
    return DATA_URI.sub(to_file, html)


class ExternaliseSliderFrames(SphinxPostTransform):
    default_priority = 60
    formats = ("html",)

    def run(self, **kwargs) -> None:
        outdir = Path(self.app.outdir)
        for node in list(self.document.findall(nodes.raw)):
            text = node.astext()
            if node.get("format") == "html" and 'class="slr-slider-figure"' in text:
                new = nodes.raw("", externalise(text, self.env.docname, outdir), format="html",
                                classes=node.get("classes", []))
                node.replace_self(new)


def setup(app):
    app.add_post_transform(ExternaliseSliderFrames)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
