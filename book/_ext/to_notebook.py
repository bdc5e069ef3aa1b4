"""The chapters as Jupyter notebooks that JupyterLab renders as the book does.

    python book/_ext/to_notebook.py book/03_oracle_risk.md --out DIR   # one chapter
    python book/_ext/to_notebook.py --all --out DIR                      # every chapter

A chapter (``book/NN_*.md``, MyST markdown for Jupyter Book) opened as it is in JupyterLab
shows its markup where the book shows numbers and links: myst-nb's ``{glue:text}`` roles, the
Sphinx roles that point into other chapters, the directives that only Sphinx extensions know.
JupyterLab with jupyterlab-myst renders MyST markdown itself (math, proofs, exercises,
admonitions, references within the notebook, and the ``{eval}`` role, evaluated in the
kernel), so this converter writes each chapter as a notebook in which only what it cannot
render is rewritten:

* ``{glue:text}`key:.3f``` becomes ``{eval}`glued("key", ".3f")```: the number the chapter's
  code glued under that key (:func:`slrlib.book.display.glued`), shown once the cells above it
  have run (a number glued further down shows "…" until its cell runs). A hidden first cell
  imports ``glued``. The build's guarantee holds: the prose quotes what the code computed.
* a reference to one of the chapter's figures becomes "Figure 1.2" (jupyterlab-myst does not
  know the names that code cells' metadata give figures);
* a reference into another chapter (``{numref}``, ``{ref}``, ``{eq}``, ``{prf:ref}``,
  ``{doc}``) becomes a link to that chapter's notebook ("Chapter 4"); one within the chapter
  is kept (jupyterlab-myst resolves it);
* ``{cite}`key``` becomes "(Marion et al., 2025)", from ``book/references.bib``;
  ``{func}`` and ``{mod}`` become inline code;
* ``{literalinclude}`` becomes the included code, as a fenced block;
* ``{chapter-guide}`` becomes a note "In this chapter" with the same three lines;
* a gated solution (``{solution-start}`` ... ``{solution-end}``, which spans code cells)
  becomes a "Solution" heading and a closing rule;
* a figure's caption (the cell's ``mystnb.figure`` metadata) is added under the figure as a
  line "Figure N.k. ...".

``postBuild`` (Binder) and ``make lab`` write the notebooks with it; the browser test
``tests/browser/test_jupyterlab.py`` runs one in a real JupyterLab.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
sys.path.insert(0, str(Path(__file__).parent))

from chapter_guide import WORD, reading_minutes  # noqa: E402

LABEL = re.compile(r"^\((?P<label>[\w-]+)\)=\s*$", re.M)
OPTION_LABEL = re.compile(r"^:label:\s*(?P<label>[\w-]+)\s*$", re.M)
EQ_LABEL = re.compile(r"^\$\$\s*\((?P<label>[\w-]+)\)\s*$", re.M)
FIG_NAME = re.compile(r"^\s+name:\s*(?P<label>[\w-]+)\s*$", re.M)
ROLE = re.compile(r"\{(?P<role>[a-z]+(?::[a-z]+)?)\}`(?P<content>[^`]*)`")
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)


def chapters() -> list[Path]:
    """The chapters in the order of the table of contents."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [chapter["file"] for part in toc.get("parts", []) for chapter in part.get("chapters", [])]
    return [ROOT / (f + ".md") for f in files if re.match(r"^book/\d\d_", f)]


def labels_of(text: str) -> set[str]:
    """Every label a chapter defines: targets, directive labels, equations, figures."""
    found = set()
    for pattern in (LABEL, OPTION_LABEL, EQ_LABEL, FIG_NAME):
        found |= {m.group("label") for m in pattern.finditer(text)}
    return found


class Book:
    """What the converter needs to know about every chapter: number, file, labels, citations."""

    def __init__(self):
        self.chapters = chapters()
        self.number = {p.stem: i + 1 for i, p in enumerate(self.chapters)}
        self.owner: dict[str, str] = {}
        self.chapter_label: dict[str, str] = {}
        for path in self.chapters:
            text = path.read_text(encoding="utf-8")
            for label in labels_of(text):
                self.owner.setdefault(label, path.stem)
            first = LABEL.search(text)
            if first:
                self.chapter_label[first.group("label")] = path.stem
        self.citations = _citations(BOOK / "references.bib")

    def link(self, stem: str, text: str | None = None) -> str:
        return f"[{text or f'Chapter {self.number[stem]}'}]({stem}.ipynb)"


def _citations(bib: Path) -> dict[str, str]:
    from pybtex.database import parse_file

    out = {}
    for key, entry in parse_file(str(bib)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = ["".join(p.last_names).replace("{", "").replace("}", "") for p in people]
        who = names[0] + (" et al." if len(names) > 2 else f" and {names[1]}" if len(names) == 2 else "") \
            if names else key
        out[key] = f"{who}, {entry.fields.get('year', 'n.d.')}"
    return out


def rewrite_roles(text: str, book: Book, here: str, figures: dict[str, str] | None = None) -> str:
    """The markdown of one cell with every role JupyterLab cannot resolve rewritten.

    ``figures`` maps the names of the chapter's figures (``mystnb.figure.name`` of a code cell,
    which jupyterlab-myst does not know) to their numbers, "1.2": a reference to one becomes
    "Figure 1.2", the number of the caption line under the figure.
    """
    figures = figures or {}

    def role(m: re.Match) -> str:
        name, content = m.group("role"), m.group("content")
        explicit = EXPLICIT.match(content)
        shown, target = (explicit.group("text"), explicit.group("target")) if explicit else (None, content)
        if name == "glue:text":
            key, _, spec = content.partition(":")
            return f'{{eval}}`glued("{key}", "{spec}")`'
        if name in ("func", "mod", "meth", "class", "attr", "data"):
            return f"`{target.lstrip('~')}`"
        if name.startswith("cite"):
            refs = [book.citations.get(k.strip(), k.strip()) for k in content.split(",")]
            return "(" + "; ".join(refs) + ")"
        if name == "doc":
            stem = Path(target).name
            if stem in book.number:
                return book.link(stem, shown)
            return shown or stem
        if name in ("numref", "ref", "eq", "prf:ref"):
            if target in book.chapter_label:
                stem = book.chapter_label[target]
                text_shown = shown.replace("%s", str(book.number[stem])) if shown else None
                return book.link(stem, text_shown)
            if target in figures:
                shown_number = f"Figure {figures[target]}"
                return shown.replace("%s", figures[target]) if shown and "%s" in shown else shown or shown_number
            owner = book.owner.get(target)
            if owner == here:
                return m.group(0)
            if owner is not None:
                where = f"Chapter {book.number[owner]}"
                return book.link(owner, (shown.replace("%s", "").strip() + f" ({where})") if shown else where)
        return m.group(0)

    return ROLE.sub(role, text)


# --------------------------------------------------------------------------- directives
FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}(?P<arg>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
                   re.M | re.S)


def _options(body: str) -> tuple[dict[str, str], str]:
    options, lines = {}, body.split("\n")
    i = 0
    while i < len(lines) and re.match(r"^:[\w-]+:", lines[i]):
        key, _, value = lines[i][1:].partition(":")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]  # MyST reads option values as YAML: a quoted string loses its quotes
        options[key.strip()] = value
        i += 1
    return options, "\n".join(lines[i:]).strip("\n")


def literal_include(arg: str, options: dict[str, str]) -> str:
    """The code a ``{literalinclude}`` shows, read as Sphinx reads it."""
    from sphinx.directives.code import LiteralIncludeReader

    class _Config:
        source_encoding = "utf-8"
        tab_width = 8

    opts = {k.replace("-", "_") if k not in ("start-at", "end-at", "start-after", "end-before") else k: v
            for k, v in options.items()}
    if "dedent" in opts:
        opts["dedent"] = int(opts["dedent"]) if opts["dedent"] else None  # Sphinx's option converter
    reader = LiteralIncludeReader(str((BOOK / arg.strip()).resolve()), opts, _Config())
    code, _ = reader.read()
    return code.rstrip("\n")


def guide_note(options: dict[str, str], body: str, book: Book, words: int) -> str:
    needs = [x.strip() for x in options.get("needs", "").split(",") if x.strip() and x.strip() != "none"]
    links = ", ".join(book.link(book.chapter_label[n]) for n in needs if n in book.chapter_label) or "the preface only"
    return (f":::{{note}} In this chapter\n**Shows.** {body.strip()}\n\n**Needs.** {links}\n\n"
            f"**Reading.** about {reading_minutes(words)} min ({words} words of prose)\n:::")


def rewrite_directives(text: str, book: Book, words: int) -> str:
    def directive(m: re.Match) -> str:
        name, arg = m.group("name"), m.group("arg").strip()
        options, body = _options(m.group("body"))
        if name == "literalinclude":
            language = options.pop("language", "python")
            return f"```{language}\n{literal_include(arg, options)}\n```"
        if name == "chapter-guide":
            return guide_note(options, body, book, words)
        # A rule as `***`: a cell that starts with `---` opens MyST front matter.
        if name == "solution-start":
            return "***\n\n**Solution.**"
        if name == "solution-end":
            return "***"
        if name in ("chapter-map", "only"):
            return ""
        return m.group(0)

    return FENCE.sub(directive, text)


def prose_words(markdown: str) -> int:
    """Words of prose of a chapter's markdown (no code, no display math), as the book counts them."""
    text = re.sub(r"^```.*?^```", " ", markdown, flags=re.M | re.S)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"\$[^$\n]+\$", " ", text)
    return len(WORD.findall(text))


def convert(path: Path, book: Book | None = None):
    """The chapter at ``path`` as a notebook for JupyterLab with jupyterlab-myst."""
    import jupytext
    import nbformat

    book = book or Book()
    nb = jupytext.read(path)
    here = path.stem
    words = prose_words("\n".join(c.source for c in nb.cells if c.cell_type == "markdown"))
    number, figures = book.number.get(here, 0), 0
    named = [c.metadata.get("mystnb", {}).get("figure", {}) for c in nb.cells if c.cell_type == "code"]
    named = [f for f in named if f.get("caption")]
    figure_numbers = {f["name"]: f"{number}.{k}" for k, f in enumerate(named, 1) if f.get("name")}
    cells = [nbformat.v4.new_code_cell(
        "# The prose's numbers: {eval}`glued(...)` shows what the code below glued\n"
        "from slrlib.book.display import glued", metadata={"tags": ["hide-input"], "jupyter": {"source_hidden": True}})]
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = rewrite_directives(rewrite_roles(cell.source, book, here, figure_numbers), book, words)
            cells.append(cell)
            continue
        if "hide-input" in cell.metadata.get("tags", []):
            cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
        cells.append(cell)
        caption = cell.metadata.get("mystnb", {}).get("figure", {}).get("caption")
        if caption:
            figures += 1
            text = rewrite_roles(" ".join(str(caption).split()), book, here, figure_numbers)
            cells.append(nbformat.v4.new_markdown_cell(f"**Figure {number}.{figures}.** {text}"))
    nb.cells = cells
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    return nb


def main() -> int:
    import nbformat

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--all", action="store_true", help="every chapter of the table of contents")
    parser.add_argument("--out", type=Path, default=BOOK, help="where to write NN_name.ipynb (default: book/)")
    args = parser.parse_args()
    book = Book()
    paths = book.chapters if args.all else args.paths
    args.out.mkdir(parents=True, exist_ok=True)
    for path in paths:
        nb = convert(path, book)
        nbformat.write(nb, args.out / (path.stem + ".ipynb"))
        print(f"{path.name} -> {args.out / (path.stem + '.ipynb')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
