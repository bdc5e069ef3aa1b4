"""Sphinx extension: search that ranks the chapters first and shows a snippet under each result.

**Ranking.** ``static/search-scorer.js`` (``html_search_scorer``) puts the API reference
(``book/api/``) below the book's text, unless the query names an object exactly.

**Snippets.** Sphinx shows a result's summary by fetching its page, which a browser refuses
for a book opened from disk (``file://``), with a console error per result; the book had
summaries off. Here every page's text (its main content, without tags, scripts, styles, and
code blocks: a snippet quotes the prose) is written to ``_static/slr-page-texts.js``, which
only the search page loads; it answers Sphinx's fetch of a page of the book from that text,
so the summaries work from disk and from a server alike, with no request. The texts of pages
not written by an incremental build are kept from the previous build
(``_build/.slr-page-texts.json``).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from sphinx.builders.html._assets import _JavaScript

STATIC = Path(__file__).parent / "static"
TEXTS_JS = "slr-page-texts.js"
SHIM_JS = "slr-search-snippets.js"

#: Left out of the pages' texts: scripts, styles, and code (a snippet quotes the prose).
_DROP = re.compile(r"<(script|style|pre)\b.*?</\1>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")


def page_text(body_html: str) -> str:
    """The text of a page's body: no tags, scripts, styles or code blocks; whitespace collapsed."""
    text = _TAG.sub(" ", _DROP.sub(" ", body_html))
    return _SPACE.sub(" ", html.unescape(text)).strip()


def _store(app) -> Path:
    return Path(app.outdir).parent / ".slr-page-texts.json"


def configure(app, config) -> None:
    config.html_search_scorer = str(STATIC / "search-scorer.js")
    config.html_show_search_summary = True


def load_texts(app) -> None:
    path = _store(app)
    try:
        app.slr_page_texts = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        app.slr_page_texts = {}


def record_text(app, pagename, templatename, context, doctree) -> None:
    if doctree is not None and "body" in context:
        app.slr_page_texts[pagename] = page_text(context["body"])
    if pagename == "search":
        context["script_files"] = list(context.get("script_files", [])) + [
            _JavaScript(f"_static/{TEXTS_JS}"), _JavaScript(f"_static/{SHIM_JS}")]


def write_texts(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    texts = {d: t for d, t in app.slr_page_texts.items() if d in app.env.found_docs}
    _store(app).write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    suffix = app.builder.link_suffix
    by_page = {d + suffix: "<div role=\"main\">" + html.escape(t) + "</div>" for d, t in texts.items()}
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    (static / TEXTS_JS).write_text(
        "/* The text of every page, for the search page's snippets (book/_ext/search_tuning.py). */\n"
        "window.SLR_PAGE_TEXTS = " + json.dumps(by_page, ensure_ascii=False) + ";\n", encoding="utf-8")
    (static / SHIM_JS).write_text((STATIC / SHIM_JS).read_text(encoding="utf-8"), encoding="utf-8")


def setup(app):
    app.connect("config-inited", configure)
    app.connect("builder-inited", load_texts)
    app.connect("html-page-context", record_text)
    app.connect("build-finished", write_texts)
    return {"parallel_read_safe": True, "parallel_write_safe": False}
