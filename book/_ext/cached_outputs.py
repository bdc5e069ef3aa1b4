"""Sphinx extension: the executed notebook of a cached chapter keeps its outputs.

With ``execute_notebooks: cache``, myst-nb 1.4 renders a chapter whose code cells match
the jupyter-cache from the cached outputs, but the notebook it writes to
``_build/jupyter_execute/`` is the one it read from the source, without outputs (the
cached outputs are merged into a copy, and only a notebook executed in this build is
updated in place). sphinx-book-theme copies that file to ``_sources/`` as the page's
``.ipynb`` download. This extension rewrites it with the cached outputs merged in, so
the download is the executed notebook whether the chapter ran in this build or not.
"""

from __future__ import annotations

from pathlib import Path


def merge_cached_outputs(app, doctree) -> None:
    config = getattr(app.env, "mystnb_config", None)
    if config is None or config.execution_mode != "cache":
        return
    path = Path(app.outdir).parent / "jupyter_execute" / (app.env.docname + ".ipynb")
    if not path.is_file():
        return  # not a notebook
    import nbformat
    from jupyter_cache import get_cache

    notebook = nbformat.read(path, as_version=4)
    try:
        # cell_meta=(): keep the source's cell metadata (tags), take outputs from the cache
        cache = get_cache(config.execution_cache_path)
        _, merged = cache.merge_match_into_notebook(notebook, cell_meta=())
    except KeyError:
        return  # no cached execution of this code (a failed run is never cached)
    # As for a notebook executed in this build: glue outputs (myst_nb.glue) are taken out
    # of their cells (a glue with display=False leaves no output in the notebook).
    from myst_nb.ext.glue import extract_glue_data_cell

    for cell in merged.cells:
        if cell.cell_type == "code":
            extract_glue_data_cell(cell)
    path.write_text(nbformat.writes(merged), encoding="utf-8")


def setup(app):
    app.connect("doctree-read", merge_cached_outputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
