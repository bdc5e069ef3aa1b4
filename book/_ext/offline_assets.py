"""Sphinx extension: one copy of each script on a page, and no inert widget state.

sphinx-thebe 0.3.1 (and sphinx-togglebutton) register their inline configuration twice,
once with filename None and once with "", which Sphinx does not recognise as the same
script, so every page carries ``const THEBE_JS_URL = ...`` twice: the second ``const``
declaration is a JavaScript error in the browser. This extension drops repeated entries
from the page's script list.

myst-nb also embeds each notebook's ipywidgets state (60-70 KB per chapter, a copy of
the live sliders' figures) for the ipywidgets JavaScript to render. The book loads no
ipywidgets JavaScript (``nb_ipywidgets_js: {}``; the sliders show their kernel-free HTML
version), so while that setting is empty the state is dead weight and is dropped.
"""

from __future__ import annotations


def _key(script) -> tuple:
    # An inline script is registered with filename None by one call and "" by another
    # (sphinx-thebe, sphinx-togglebutton); both mean "no file", so they compare equal here.
    attributes = getattr(script, "attributes", {}) or {}
    return (getattr(script, "filename", str(script)) or None, tuple(sorted(attributes.items())))


WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def clean_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    drop_widget_state = not app.config.nb_ipywidgets_js
    seen, unique = set(), []
    for script in scripts:
        key = _key(script)
        if key in seen:
            continue
        if drop_widget_state and (getattr(script, "attributes", {}) or {}).get("type") == WIDGET_STATE:
            continue
        seen.add(key)
        unique.append(script)
    context["script_files"] = unique


def setup(app):
    app.connect("html-page-context", clean_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
