"""Sphinx extension: one copy of each script on a page.

sphinx-thebe 0.3.1 (and sphinx-togglebutton) register their inline configuration twice,
once with filename None and once with "", which Sphinx does not recognise as the same
script, so every page carries ``const THEBE_JS_URL = ...`` twice: the second ``const``
declaration is a JavaScript error in the browser. This extension drops repeated entries
from the page's script list.
"""

from __future__ import annotations


def _key(script) -> tuple:
    # An inline script is registered with filename None by one call and "" by another
    # (sphinx-thebe, sphinx-togglebutton); both mean "no file", so they compare equal here.
    attributes = getattr(script, "attributes", {}) or {}
    return (getattr(script, "filename", str(script)) or None, tuple(sorted(attributes.items())))


def dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        key = _key(script)
        if key in seen:
            continue
        seen.add(key)
        unique.append(script)
    context["script_files"] = unique


def setup(app):
    app.connect("html-page-context", dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
