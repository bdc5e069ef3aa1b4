"""Sphinx extension: Binder launch buttons only where the book names its repository.

The one setting is ``repository.url`` in ``_config.yml`` (CONTRIBUTING.md,
"Publishing", says how to set it). While it is empty:

* no page shows a launch button (the theme's ``binderhub_url`` is dropped), and content under
  ``{only} binder`` (the preface's paragraph on Binder) is left out;
* every chapter still offers its executed notebook (``.ipynb``) for download: the theme copies
  it only when launch buttons are on, so this extension does it then.

When it is set, the ``binder`` tag is on and the theme builds the buttons from it and from
``launch_buttons`` in ``_config.yml``; each button opens the chapter's notebook,
``book/NN_name.ipynb``, which Binder's ``postBuild`` writes (``book/_ext/to_notebook.py``:
MyST rendered in JupyterLab), not its MyST source, which JupyterLab would show as markup. A URL
that names the placeholder organisation ``example`` is a build warning (an error under ``make``).
"""

from __future__ import annotations

import re
from pathlib import Path
from shutil import copy2

from sphinx.util import logging

logger = logging.getLogger(__name__)

PLACEHOLDER = "/example/"


def repository_url(config) -> str:
    return str((config.html_theme_options or {}).get("repository_url", "") or "").strip()


def configure(app, config) -> None:
    url = repository_url(config)
    if PLACEHOLDER in url + "/":
        logger.warning(f"repository.url in _config.yml is a placeholder ({url}): set the book's repository, "
                       "or leave it empty for no launch buttons")
    if url:
        app.tags.add("binder")
        return
    launch = dict(config.html_theme_options.get("launch_buttons", {}) or {})
    launch.pop("binderhub_url", None)
    config.html_theme_options["launch_buttons"] = launch


def offer_notebook(app, pagename, templatename, context, doctree) -> None:
    """Without launch buttons, copy the executed notebook where the download menu links it."""
    if repository_url(app.config) or "kernelspec" not in app.env.metadata.get(pagename, {}):
        return
    if not str(context.get("sourcename", "")).endswith((".md", ".md.txt")):
        return
    out_dir = Path(app.outdir)
    notebook = out_dir.parent / "jupyter_execute" / (pagename + ".ipynb")
    if not notebook.is_file():
        return
    target = out_dir / "_sources" / (pagename + ".ipynb")
    target.parent.mkdir(parents=True, exist_ok=True)
    copy2(notebook, target)
    context["ipynb_source"] = pagename + ".ipynb"


SOURCE_IN_URL = re.compile(r"(urlpath=[^&\"']*?)\.md\b")


def _to_notebooks(item):
    if isinstance(item, dict):
        return {k: (SOURCE_IN_URL.sub(r"\1.ipynb", v) if k == "url" and isinstance(v, str) else _to_notebooks(v))
                for k, v in item.items()}
    if isinstance(item, list):
        return [_to_notebooks(x) for x in item]
    return item


def open_notebooks(app, pagename, templatename, context, doctree) -> None:
    """Launch buttons open the chapter's notebook (``.ipynb``), written on Binder by ``postBuild``."""
    if repository_url(app.config) and "header_buttons" in context:
        context["header_buttons"] = _to_notebooks(context["header_buttons"])


def setup(app):
    app.connect("config-inited", configure, priority=900)
    # Before sphinx-book-theme's header buttons (priority 501), which read ipynb_source.
    app.connect("html-page-context", offer_notebook, priority=500)
    # After the theme's launch buttons (priority 501).
    app.connect("html-page-context", open_notebooks, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
