"""Sphinx extension: the style sheet and script that every page of the book loads.

``book/_ext/static/slr-book.css`` and ``slr-book.js`` (their headers say what each rule does):
sections laid out as they near the screen, display equations whole in the column or scrolling
inside their own box with a visible affordance, inline code that wraps on a phone, the folded
check verdicts (``fold_checks``), captions, the paper's numbers on its results
(``paper_numbers``), print rules, the phone menu's buttons (a fix for the theme's toggles), and
blocks that scroll reachable by keyboard.

The folder is added to ``html_static_path`` here rather than in ``_config.yml``: jupyter-book
adds every ``.js`` under the configured static paths to every page.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).parent / "static"
CSS = "slr-book.css"
JS = "slr-book.js"


def _add_static_path(app, config) -> None:
    path = str(STATIC)
    if path not in config.html_static_path:
        config.html_static_path.append(path)


def setup(app):
    app.connect("config-inited", _add_static_path)
    app.add_css_file(CSS)
    app.add_js_file(JS, loading_method="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
