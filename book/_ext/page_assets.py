"""Sphinx extension: the style sheet and script that every page of the book loads.

``book/_ext/static/slr-book.css`` and ``slr-book.js`` (their headers say what each rule does):
display equations whole in the column or scrolling inside their own box with a visible
affordance, inline code that wraps on a phone, the folded check verdicts
(``fold_checks``), captions, the paper's numbers on its results (``paper_numbers``), print
rules, and the phone menu's buttons (a fix for the theme's toggles).

The folder is added to ``html_static_path`` here rather than in ``_config.yml``: jupyter-book
adds every ``.js`` under the configured static paths to every page, and MathJax's files
(``_vendor``) must not be.

The API reference pages (``book/api/``) typeset their formulas lazily (MathJax's ``ui/lazy``, shipped
with the vendored MathJax): a formula is typeset when it nears the screen. They hold hundreds of
inline formulas each (about 650 on the page of ``slrlib.book``), which typeset at once kept a phone
busy for seconds before the page answered; the chapters, whose equations the browser tests measure
one by one, typeset everything at load as before.
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


#: Pages whose formulas MathJax typesets as they near the screen (``ui/lazy``).
LAZY_MATH_PREFIX = "book/api/"
#: Runs after Sphinx's ``window.MathJax = {...}`` (priority 500) and before MathJax itself (deferred).
LAZY_MATH = ("window.MathJax = window.MathJax || {}; "
             "window.MathJax.loader = Object.assign(window.MathJax.loader || {}, {load: ['ui/lazy']});")


def _lazy_math(app, pagename, templatename, context, doctree) -> None:
    if pagename.startswith(LAZY_MATH_PREFIX):
        app.add_js_file(None, body=LAZY_MATH, priority=501)


def setup(app):
    app.connect("config-inited", _add_static_path)
    app.connect("html-page-context", _lazy_math)
    app.add_css_file(CSS)
    app.add_js_file(JS, loading_method="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
