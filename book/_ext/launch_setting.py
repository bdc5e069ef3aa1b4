"""Sphinx extension: Binder launch buttons only where the book names its repository.

The one setting is ``repository.url`` in ``_config.yml`` (CONTRIBUTING.md,
"Publishing", says how to set it). While it is empty:

* no page shows a launch button (the theme's ``binderhub_url`` is dropped), and content under
  ``{only} binder`` (the preface's paragraph on Binder) is left out;
* every chapter still offers its executed notebook (``.ipynb``) for download: the theme copies
  it only when launch buttons are on, so this extension does it then.

When it is set, the ``binder`` tag is on and the theme builds the buttons from it and from
``launch_buttons`` in ``_config.yml``; the preface's ``{only} binder`` paragraph names the site
where the publishing workflow deploys the book (``.github/workflows/publish.yml``: GitHub Pages,
``https://ORG.github.io/REPO/``), through the MyST substitutions ``book_site`` and ``book_pdf``
set here (:func:`site_address`); each button opens the chapter's notebook,
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
#: A repository on GitHub, as ``repository.url`` names it.
GITHUB_REPOSITORY = re.compile(r"https://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?")


def repository_url(config) -> str:
    return str((config.html_theme_options or {}).get("repository_url", "") or "").strip()


def site_address(url: str) -> str:
    """Where GitHub Pages serves the book of the repository ``url`` (``https://github.com/ORG/REPO``):
    ``https://org.github.io/REPO/`` (GitHub lowercases the owner in the host name); "" for no URL.

    Raises ValueError for a URL that does not name a GitHub repository: the publishing workflow
    deploys to GitHub Pages, so only such a repository has a site."""
    url = url.strip()
    if not url:
        return ""
    found = GITHUB_REPOSITORY.fullmatch(url)
    if found is None:
        raise ValueError(f"repository.url = {url!r} in _config.yml: expected https://github.com/ORG/REPO "
                         "(the publishing workflow deploys to GitHub Pages), or empty")
    owner, repo = found.groups()
    return f"https://{owner.lower()}.github.io/{repo}/"


def site_substitutions(url: str) -> dict[str, str]:
    """The preface's MyST substitutions: the site and its PDF as links (empty without a repository)."""
    site = site_address(url)
    if not site:
        return {"book_site": "", "book_pdf": ""}
    return {"book_site": f"[{site}]({site})", "book_pdf": f"[{site}book.pdf]({site}book.pdf)"}


def configure(app, config) -> None:
    url = repository_url(config)
    if PLACEHOLDER in url + "/":
        logger.warning(f"repository.url in _config.yml is a placeholder ({url}): set the book's repository, "
                       "or leave it empty for no launch buttons")
    config.myst_substitutions = {**(getattr(config, "myst_substitutions", None) or {}), **site_substitutions(url)}
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
