"""JupyterLab for the chapters: the notebooks, the front-end extensions, the settings.

    python book/_ext/lab.py                      # what `make lab` runs: write, then start JupyterLab
    python book/_ext/lab.py --no-start --out DIR # only write the notebooks and the settings
    python book/_ext/lab.py --port 8899 --no-browser   # other options go to JupyterLab
                                                 # (`make lab LAB_ARGS="--port 8899 --no-browser"`)

Writes every chapter (or those of ``--chapters``) as a notebook for JupyterLab
(``to_notebook.py``) into ``--out`` (default ``_build/lab``), trusted (jupyterlab-myst
evaluates the prose's ``{eval}`` numbers only in a trusted notebook), then starts JupyterLab
there with:

* the front-end extensions the chapters need, and only those (:data:`EXTENSIONS`, linked
  into ``<out>/.labextensions``): jupyterlab-myst (MyST), the ipywidgets manager (live
  sliders), Pygments' styles. jupytext 1.19's own JupyterLab extension is built for
  JupyterLab 4.6 and fails to load in the 4.4 that jupyterlab-myst needs (a console error on
  every page), so it is left out; the chapters open as notebooks, not through jupytext;
* jupyterlab-myst with one fix (:func:`patch_myst`): "Run all" runs every markdown cell at
  once, and jupyterlab-myst evaluates a cell's ``{eval}`` numbers from the cell's last
  rendering; a cell not rendered yet (a long chapter renders for seconds after it opens) had
  none to evaluate, and its numbers stayed unevaluated. Patched, it reads them from the
  cell's source, which it has just parsed;
* the settings of ``book/_ext/jupyter`` (``JUPYTER_CONFIG_DIR``): no news announcements;
* what JupyterLab writes as it runs (workspaces, the reader's settings) under ``<out>/.jupyterlab``,
  not in ``book/_ext/jupyter`` (a file there would be the repository's);
* ``--allow-root`` when run as root (JupyterLab refuses to start otherwise, as in a container).

``tests/browser/test_jupyterlab.py`` starts JupyterLab the same way (:func:`lab_command`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "book" / "_ext" / "jupyter"
#: The front-end extensions that the chapters use in JupyterLab.
EXTENSIONS = ("jupyterlab-myst", "@jupyter-widgets/jupyterlab-manager", "jupyterlab_pygments")


def installed_extensions() -> Path:
    """Where pip installs JupyterLab's front-end extensions in this environment."""
    return Path(sysconfig.get_paths()["data"]) / "share" / "jupyter" / "labextensions"


#: jupyterlab-myst 2.7.0's ``executeUserExpressions`` reads the expressions of the markdown cell that
#: "Run all" has just run from the cell's last rendering (``cell.mystModel.mdast``), undefined until
#: the cell has rendered once; :func:`patch_myst` makes it read them from the cell's source, parsed a
#: line above (``cell.fragmentMDAST``), first.
MYST_EXPRESSIONS = re.compile(r"null!==\((?P<n>\w)=null===\((?P<s>\w)=(?P<cell>\w)\.mystModel\)\|\|void 0===(?P=s)"
                              r"\?void 0:(?P=s)\.mdast\)&&void 0!==(?P=n)\?(?P=n):\{\}")


def patch_myst(source: Path, target: Path) -> bool:
    """jupyterlab-myst (installed at ``source``) copied to ``target`` (JupyterLab serves no file that
    links out of its extension's folder), the file that evaluates a cell's expressions
    (:data:`MYST_EXPRESSIONS`) patched; returns whether it was found. Not found (another
    version), the extension is linked as it is."""
    patched = {}
    for chunk in (source / "static").glob("*.js"):
        text = chunk.read_text(encoding="utf-8", errors="surrogateescape")
        new, count = MYST_EXPRESSIONS.subn(lambda m: f"({m.group('cell')}.fragmentMDAST||({m.group(0)}))", text)
        if count == 1:
            patched[chunk.name] = new
    if target.is_symlink():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    if not patched:
        target.symlink_to(source, target_is_directory=True)
        return False
    for path in source.rglob("*"):
        if path.is_dir():
            continue
        here = target / path.relative_to(source)
        here.parent.mkdir(parents=True, exist_ok=True)
        if path.parent.name == "static" and path.name in patched:
            here.write_text(patched[path.name], encoding="utf-8", errors="surrogateescape")
        else:
            shutil.copyfile(path, here)
    return True


def link_extensions(target: Path) -> Path:
    """A folder holding links to :data:`EXTENSIONS` only (jupyterlab-myst patched, :func:`patch_myst`);
    returns it."""
    source = installed_extensions()
    for name in EXTENSIONS:
        link = target / name
        if not (source / name).is_dir():
            raise FileNotFoundError(f"the JupyterLab extension {name} is not installed in {source}")
        link.parent.mkdir(parents=True, exist_ok=True)
        if name == "jupyterlab-myst":
            patch_myst(source / name, link)
            continue
        if link.is_symlink() or link.exists():
            continue
        link.symlink_to(source / name, target_is_directory=True)
    return target


def write_notebooks(out: Path, chapters: list[Path] | None = None, env: dict | None = None) -> list[Path]:
    """Every chapter (or ``chapters``) as a trusted notebook in ``out``."""
    sys.path.insert(0, str(Path(__file__).parent))
    import nbformat
    from to_notebook import Book, convert

    book = Book()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in chapters or book.chapters:
        target = out / (path.stem + ".ipynb")
        nbformat.write(convert(path, book), target)
        written.append(target)
    jupyter = Path(sys.executable).parent / "jupyter"
    subprocess.run([str(jupyter), "trust", *map(str, written)], check=True, capture_output=True, env=env)
    return written


def lab_command(root: Path, extensions: Path, port: int | None = None, extra: list[str] = ()) -> list[str]:
    """The command line that starts JupyterLab on ``root`` with the extensions in ``extensions``."""
    jupyter = Path(sys.executable).parent / "jupyter"
    command = [str(jupyter), "lab", f"--ServerApp.root_dir={root}", f"--LabApp.labextensions_path={extensions}",
               "--LabApp.extra_labextensions_path=[]"]
    if port is not None:
        command.append(f"--port={port}")
    return command + list(extra)


def lab_env(state: Path | None = None, **extra: str) -> dict:
    """The environment for JupyterLab: this book's settings (``book/_ext/jupyter``), and, with ``state``,
    the workspaces and the reader's settings written there."""
    if state is not None:
        extra = {"JUPYTERLAB_WORKSPACES_DIR": str(state / "workspaces"),
                 "JUPYTERLAB_SETTINGS_DIR": str(state / "user-settings"), **extra}
    return dict(os.environ, JUPYTER_CONFIG_DIR=str(CONFIG), **extra)


def as_root() -> bool:
    """Whether this process runs as root (JupyterLab then starts only with ``--allow-root``)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "lab")
    parser.add_argument("--chapters", default="", help="chapter stems, comma-separated (default: all)")
    parser.add_argument("--no-start", action="store_true", help="write the notebooks, do not start JupyterLab")
    args, to_lab = parser.parse_known_args()
    chapters = [ROOT / "book" / f"{stem}.md" for stem in args.chapters.split(",") if stem] or None
    written = write_notebooks(args.out, chapters)
    extensions = link_extensions(args.out / ".labextensions")
    print(f"{len(written)} chapters written to {args.out}")
    if args.no_start:
        return 0
    extra = to_lab + (["--allow-root"] if as_root() and "--allow-root" not in to_lab else [])
    return subprocess.call(lab_command(args.out, extensions, extra=extra), env=lab_env(args.out / ".jupyterlab"))


if __name__ == "__main__":
    sys.exit(main())
