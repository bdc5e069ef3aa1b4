"""The chapters as Jupyter notebooks that JupyterLab renders as the book does.

    python book/_ext/to_notebook.py book/03_oracle_risk.md --out DIR   # one chapter
    python book/_ext/to_notebook.py --all --out DIR                      # every chapter

A chapter (``book/NN_*.md``, MyST markdown for Jupyter Book) opened as it is in JupyterLab
shows its markup where the book shows numbers and links: myst-nb's ``{glue:text}`` roles, the
Sphinx roles that point into other chapters, the directives that only Sphinx extensions know.
JupyterLab with jupyterlab-myst renders MyST markdown itself (math, proofs, exercises,
admonitions, and the ``{eval}`` role, evaluated in the kernel), so this converter writes each
chapter as a notebook in which only what it cannot render as the book does is rewritten:

* ``{glue:text}`key:.3f``` becomes ``{eval}`glued("key", ".3f")```: the number the chapter's
  code glued under that key (:func:`slrlib.book.display.glued`), shown once the cells above it
  have run (a number glued further down shows "(computed below)" until its cell runs). The
  build's guarantee holds: the prose quotes what the code computed.
* **The book's numbers.** jupyterlab-myst numbers boxes and equations per notebook ("Theorem 1",
  "Proof 1", "(5)"); the book numbers them per chapter, a box that states a result of the paper
  by the paper's number (``paper_numbers.py``: "Proposition 8 of the paper"), and does not number
  proofs or equations without a label. :class:`Book` numbers every chapter as the book's build
  does (Sphinx's ``numfig`` and ``math_numfig``, sphinx-proof, sphinx-exercise, ``paper_numbers``),
  and each box, exercise and labelled equation carries its number explicitly
  (``:enumerator: 7.4``, ``:enumerated: false``; a display equation becomes a ``{math}``
  directive, which takes these options);
* **References as the book writes them.** ``{eq}``, ``{prf:ref}``, ``{numref}`` and ``{ref}``
  become the text the book shows ("(7.4)", "Proposition 8", "Exercise 7.1", "Fig. 7.2", a
  section's title), as a link: within the chapter an HTML link to the target's id, into another
  chapter a link to that chapter's notebook (``04_bayes.ipynb#eq-bayes-risk``; "Chapter 4" for a
  chapter). None is left for jupyterlab-myst to resolve: it resolves a notebook's references
  as its cells render, and logs "Cross reference target was not found" for each that points to
  a cell not rendered yet;
* ``{cite}`key``` becomes "(Marion et al., 2025)", from ``book/references.bib``;
  ``{func}`` and ``{mod}`` become inline code;
* ``{literalinclude}`` becomes the included code, as a fenced block;
* ``{chapter-guide}`` becomes a note "In this chapter" with the same three lines, the reading
  time counted from the same words as the book (:func:`prose_words`);
* a gated solution (``{solution-start}`` ... ``{solution-end}``, which spans code cells) is
  folded, as the book's closed dropdown: its prose in closed dropdowns "Solution to Exercise
  7.1", its code cells with their input collapsed and the solution's title in their metadata
  (``"slr": {"solution": ...}``), by which the kernel folds their outputs (JupyterLab shows a
  cell's outputs again whenever it runs it, collapsed or not);
* a figure's caption (the cell's ``mystnb.figure`` metadata) is added under the figure as a
  line "Fig. 7.2. ...".

A hidden first cell sets the notebook up: it imports ``glued`` and folds each run of a cell's
check verdicts into one line "✓ 3 checks", as the book does
(:func:`slrlib.book.display.fold_verdicts`, ``book/_ext/fold_checks.py``), the equations a
verdict names by label shown by their numbers.

``postBuild`` (Binder) and ``make lab`` write the notebooks with it; the browser test
``tests/browser/test_jupyterlab.py`` runs chapters in a real JupyterLab, and
``tests/test_to_notebook.py`` checks the conversion.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
sys.path.insert(0, str(Path(__file__).parent))

from chapter_guide import WORD, reading_text  # noqa: E402

LABEL = re.compile(r"^\((?P<label>[\w-]+)\)=\s*$", re.M)
OPTION_LABEL = re.compile(r"^\s*:label:\s*(?P<label>[\w-]+)\s*$", re.M)
EQ_LABEL = re.compile(r"^\s*\$\$\s*\((?P<label>[\w-]+)\)\s*$", re.M)
FIG_NAME = re.compile(r"^\s+name:\s*(?P<label>[\w-]+)\s*$", re.M)
ROLE = re.compile(r"\{(?P<role>[a-z]+(?::[a-z]+)?)\}`(?P<content>[^`]*)`")
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)

#: The box types that sphinx-proof numbers (each with a counter of its own per chapter); a
#: ``{prf:proof}`` is not numbered.
NUMBERED_BOXES = ("axiom", "theorem", "lemma", "algorithm", "definition", "remark", "conjecture", "corollary",
                  "criterion", "example", "property", "observation", "proposition", "assumption", "notation")
#: What ``{numref}`` writes for a target without a text of its own: Sphinx's defaults, sphinx-proof's
#: ("theorem %s", in lower case) and sphinx-exercise's.
NUMREF_FORMAT = {"figure": "Fig. %s", "exercise": "Exercise %s", "section": "Section %s",
                 **{kind: f"{kind} %s" for kind in NUMBERED_BOXES}}
PAPER_CLASS = re.compile(r"^paper-(\d+)$")
#: A code cell of a chapter's source; the ``mystnb`` options above its code.
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
CELL_OPTIONS = re.compile(r"\A---\n(?P<yaml>.*?)^---[ \t]*$", re.M | re.S)
FRONT_MATTER = re.compile(r"\A---\n.*?^---[ \t]*\n", re.M | re.S)
BOX_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})\{(?P<name>prf:[a-z]+|exercise)\}"
                      r"[ \t]*(?P<arg>[^\n]*)$")
OPTION_LINE = re.compile(r"^[ \t]*:(?P<key>[\w-]+):[ \t]*(?P<value>.*?)[ \t]*$")
MATH_OPEN = re.compile(r"^(?P<indent>[ \t]*)\$\$[ \t]*$")
MATH_CLOSE = re.compile(r"^[ \t]*\$\$[ \t]*(?:\((?P<label>[\w-]+)\))?[ \t]*$")
HEADING = re.compile(r"^#{1,6}[ \t]+(?P<title>.+?)[ \t]*$")
#: Where a solution opens and closes in a cell's markdown, once its directives are rewritten.
SOLUTION_MARK = re.compile(r"\x00solution-(?P<edge>start|end)(?: (?P<label>[\w-]+))?\x00")


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


# --------------------------------------------------------------------------- the book's numbers
@dataclass
class Target:
    """Something the book numbers or names, and how the book shows it."""

    kind: str  #: "equation", "figure", "exercise", "section", "chapter", or a box's type ("theorem", "proof")
    label: str | None
    stem: str  #: the chapter
    number: str | None = None  #: "7.4"; "8" for a box of the paper; None: not numbered
    paper: bool = False  #: a box that states a result of the paper (class ``paper-N``)
    title: str = ""  #: a box's, an exercise's or a section's title (markdown)

    @property
    def enumerator(self) -> str | None:
        """The number as the box's title shows it: "8 of the paper" (``paper_numbers.py``), "7.1"."""
        if self.number is None:
            return None
        return f"{self.number} of the paper" if self.paper else self.number

    @property
    def html_id(self) -> str:
        """The id jupyterlab-myst gives the target's element (myst-common's ``createHtmlId``)."""
        ident = re.sub(r"[^a-z0-9-]", "-", (self.label or "").lower())
        ident = re.sub(r"^([0-9-])", r"id-\1", ident)
        return re.sub(r"-{2,}", "-", ident).strip("-")

    def implicit_text(self, role: str) -> str:
        """What the book writes for a reference with no text of its own (``{eq}`label```)."""
        kind = self.kind
        if role == "eq" or (kind == "equation" and role in ("ref", "numref")):
            return f"({self.number})"
        if kind == "chapter":
            return f"Chapter {self.number}" if role != "ref" else self.title
        if kind == "section" and role == "ref":
            return self.title
        if role == "prf:ref" and kind in NUMBERED_BOXES + ("proof",):
            return f"{kind.title()} {self.number or ''}".strip()
        if kind == "exercise" and role in ("ref", "numref"):
            return f"Exercise {self.number}"
        if role == "numref" and kind in NUMREF_FORMAT and self.number:
            return NUMREF_FORMAT[kind].replace("%s", self.number)
        return self.title or self.label or ""


def _options_at(lines: list[str], i: int) -> dict[str, str]:
    options = {}
    while i < len(lines) and (m := OPTION_LINE.match(lines[i])):
        options[m.group("key")] = m.group("value")
        i += 1
    return options


def _paper(options: dict[str, str]) -> int | None:
    numbers = [int(m.group(1)) for c in options.get("class", "").split() if (m := PAPER_CLASS.match(c))]
    return numbers[0] if numbers else None


def scan(markdown: str, stem: str, chapter: int) -> list[Target]:
    """The boxes, exercises, display equations and labelled sections of a chapter's markdown (its
    prose, without code cells), in order, numbered as the book's build numbers them.

    Equations: the labelled ones (``$$ ... $$ (label)``) per chapter, ``chapter.k`` (Sphinx's
    ``math_numfig``); the others not at all. Boxes: per type (sphinx-proof), ``chapter.k``, a
    box of class ``paper-N`` numbered N and left out of the count (``paper_numbers.py``); a proof,
    or a box with ``:nonumber:``, not at all. Exercises: ``chapter.k`` (sphinx-exercise).
    """
    found: list[Target] = []
    counts: dict[str, int] = {}

    def count(kind: str) -> str:
        counts[kind] = counts.get(kind, 0) + 1
        return f"{chapter}.{counts[kind]}"

    lines = markdown.split("\n")
    pending_label = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if (m := LABEL.match(line)) is not None:
            pending_label = m.group("label")
        elif (m := HEADING.match(line)) is not None and pending_label:
            found.append(Target("section", pending_label, stem, title=m.group("title")))
            pending_label = None
        elif (m := BOX_OPEN.match(line)) is not None:
            name, options = m.group("name"), _options_at(lines, i + 1)
            kind = name.removeprefix("prf:")
            label, title = options.get("label"), m.group("arg").strip()
            if kind == "exercise":
                number = None if "nonumber" in options else count("exercise")
                found.append(Target("exercise", label, stem, number, title=title))
            elif kind in NUMBERED_BOXES and "nonumber" not in options:
                paper = _paper(options)
                number = str(paper) if paper is not None else count(kind)
                found.append(Target(kind, label, stem, number, paper=paper is not None, title=title))
            else:
                found.append(Target(kind, label, stem, title=title))
        elif MATH_OPEN.match(line):
            for j in range(i + 1, len(lines)):
                if (close := MATH_CLOSE.match(lines[j])) is not None:
                    label = close.group("label")
                    found.append(Target("equation", label, stem, count("equation") if label else None))
                    i = j
                    break
        elif line.strip():
            pending_label = None
        i += 1
    return found


def figures_of(text: str, stem: str, chapter: int) -> list[Target]:
    """The figures of a chapter's source: the code cells whose ``mystnb.figure`` has a caption, numbered
    in order (a figure that has a name is a target)."""
    import yaml

    found = []
    for cell in CODE_CELL.finditer(text):
        head = CELL_OPTIONS.match(cell.group("body"))
        options = (yaml.safe_load(head.group("yaml")) or {}) if head else {}
        figure = (options.get("mystnb") or {}).get("figure") or {}
        if figure.get("caption"):
            found.append(Target("figure", figure.get("name"), stem, f"{chapter}.{len(found) + 1}"))
    return found


def prose_of(text: str) -> str:
    """A chapter's markdown without its front matter and its code cells."""
    return CODE_CELL.sub("", FRONT_MATTER.sub("", text, count=1))


class Book:
    """What the converter needs to know about every chapter: number, file, labels, numbers, citations."""

    def __init__(self):
        self.chapters = chapters()
        self.number = {p.stem: i + 1 for i, p in enumerate(self.chapters)}
        self.owner: dict[str, str] = {}
        self.chapter_label: dict[str, str] = {}
        self.targets: dict[str, Target] = {}
        for path in self.chapters:
            text = path.read_text(encoding="utf-8")
            for label in labels_of(text):
                self.owner.setdefault(label, path.stem)
            first = LABEL.search(text)
            if first:
                self.chapter_label[first.group("label")] = path.stem
                heading = re.search(r"^#[ \t]+(?P<title>.+?)[ \t]*$", text[first.end():], re.M)
                self.targets[first.group("label")] = Target("chapter", first.group("label"), path.stem,
                                                            str(self.number[path.stem]),
                                                            title=heading.group("title") if heading else "")
            number = self.number[path.stem]
            for target in scan(prose_of(text), path.stem, number) + figures_of(text, path.stem, number):
                if target.label and target.label not in self.targets:
                    self.targets[target.label] = target
        self.citations = _citations(BOOK / "references.bib")

    def link(self, stem: str, text: str | None = None, fragment: str = "") -> str:
        return f"[{text or f'Chapter {self.number[stem]}'}]({stem}.ipynb{'#' + fragment if fragment else ''})"

    def equation_numbers(self, code: str) -> dict[str, str]:
        """``{"(eq-t5-remainder)": "(7.6)"}``: the labels that ``code`` (a chapter's code cells) names in
        parentheses, as a verdict's claim does, and what the book calls them."""
        out = {}
        for m in re.finditer(r"\((?P<label>[a-z][\w-]*)\)", code):
            target = self.targets.get(m.group("label"))
            if target is None or target.number is None or target.kind == "chapter":
                continue
            role = "eq" if target.kind == "equation" else "prf:ref"
            text = target.implicit_text(role)
            out[m.group(0)] = text if text.startswith("(") else f"({text})"
        return out


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


def reference(book: Book, role: str, target: Target, shown: str | None, here: str) -> str:
    """A reference as the book writes it (its text), as a link to the target: within the chapter an
    HTML link to the element's id (jupyterlab-myst resolves no reference then, and reports none
    missing); into another chapter, a link to its notebook."""
    if shown is None:
        text = target.implicit_text(role)
    else:
        text = shown.replace("%s", target.number or "").replace("{number}", target.number or "") \
            if role == "numref" else shown
    if target.kind == "chapter":
        return book.link(target.stem, text)
    if target.stem != here:
        return book.link(target.stem, text, target.html_id)
    if target.kind == "figure":  # a figure is a code cell's output: no element to link to
        return text
    return f'<a href="#{target.html_id}">{html.escape(text, quote=False)}</a>'


def rewrite_roles(text: str, book: Book, here: str, figures: dict[str, str] | None = None) -> str:
    """The markdown of one cell with every role JupyterLab cannot resolve rewritten.

    ``figures`` maps the names of the chapter's figures to their numbers ("7.2"), when
    ``book`` does not know them (a chapter outside the table of contents).
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
            found = book.targets.get(target)
            if found is None and target in figures:
                found = Target("figure", target, here, figures[target])
            if found is not None:
                return reference(book, name, found, shown, here)
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
            f"**Reading.** {reading_text(words)}\n:::")


def _colon_fence(body: str) -> str:
    """A colon fence longer than any in ``body`` (a fence closes at one at least as long)."""
    inner = [len(m.group(0)) for m in re.finditer(r"^[ \t]*(:{3,})", body, re.M)]
    return ":" * max([3] + [n + 1 for n in inner])


class Numbering:
    """The chapter's numbered things, handed out in order as the cells are rewritten."""

    def __init__(self, targets: list[Target]):
        self.boxes = [t for t in targets if t.kind not in ("equation", "section", "figure", "chapter")]
        self.equations = [t for t in targets if t.kind == "equation"]
        self.exercises = {t.label: t for t in self.boxes if t.kind == "exercise" and t.label}

    @staticmethod
    def _next(queue: list[Target], kind: str, label: str | None) -> Target:
        if not queue:
            raise ValueError(f"a {kind} ({label}) that the chapter's numbering did not see")
        target = queue.pop(0)
        if target.label != label:
            raise ValueError(f"numbering out of step: {kind} {label!r} where {target.kind} {target.label!r} "
                             "was counted")
        return target

    def box(self, kind: str, label: str | None) -> Target:
        return self._next(self.boxes, kind, label)

    def equation(self, label: str | None) -> Target:
        return self._next(self.equations, "equation", label)


def rewrite_directives(text: str, book: Book, words: int, numbering: Numbering | None = None) -> str:
    def directive(m: re.Match) -> str:
        name, arg = m.group("name"), m.group("arg").strip()
        options, body = _options(m.group("body"))
        if name == "literalinclude":
            language = options.pop("language", "python")
            return f"```{language}\n{literal_include(arg, options)}\n```"
        if name == "chapter-guide":
            return guide_note(options, body, book, words)
        if name == "solution-start":
            return f"\x00solution-start {arg}\x00"
        if name == "solution-end":
            return "\x00solution-end\x00"
        if name in ("chapter-map", "only"):
            return ""
        if numbering is not None and (name.startswith("prf:") or name == "exercise"):
            target = numbering.box(name.removeprefix("prf:"), options.get("label"))
            options.pop("nonumber", None)
            if target.enumerator is None:
                options["enumerated"] = "false"
            else:
                options["enumerator"] = target.enumerator
            # A colon fence: the display equations inside become backtick fences ({math}).
            fence = _colon_fence(body)
            head = f"{fence}{{{name}}}" + (f" {arg}" if arg else "")
            return "\n".join([head, *(f":{k}: {v}" for k, v in options.items()), "", body, fence])
        return m.group(0)

    return FENCE.sub(directive, text)


def rewrite_math(text: str, numbering: Numbering) -> str:
    """Each display equation (``$$ ... $$``, with a label or not) as a ``{math}`` directive that carries
    the book's number (``:enumerator: 7.4``), or none (``:enumerated: false``): jupyterlab-myst
    numbers every display equation otherwise, from 1."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        opening = MATH_OPEN.match(lines[i])
        close = next((j for j in range(i + 1, len(lines)) if MATH_CLOSE.match(lines[j])), None) if opening else None
        if opening is None or close is None:
            out.append(lines[i])
            i += 1
            continue
        indent = opening.group("indent")
        label = MATH_CLOSE.match(lines[close]).group("label")
        target = numbering.equation(label)
        options = ([f":label: {label}"] if label else []) + (
            [f":enumerator: {target.number}"] if target.number else [":enumerated: false"])
        out += [f"{indent}```{{math}}", *(indent + o for o in options), *lines[i + 1:close], f"{indent}```"]
        i = close + 1
    return "\n".join(out)


#: What a directive's opening line reads as in the book's doctree when the chapter is read (where
#: ``chapter_guide.count_words`` counts the words): a box its title, " (Descent)"; a proof
#: "Proof."; an exercise "Exercise"; a solution "Solution to".
DIRECTIVE_WORDS = {"prf:proof": "Proof.", "exercise": "Exercise", "solution-start": "Solution to",
                   "solution": "Solution to"}
#: Directives whose content the book does not read as prose: code, formulas, the chapter guide.
NOT_PROSE = ("literalinclude", "code", "code-block", "math", "chapter-guide", "chapter-map", "solution-end")


def glued_values(stem: str) -> dict[str, object]:
    """The numbers a chapter glued in the book's last build (myst-nb's ``<stem>.glue.json``), or none."""
    import json

    path = ROOT / "_build" / "jupyter_execute" / "book" / f"{stem}.glue.json"
    if not path.is_file():
        return {}
    out = {}
    for key, output in json.loads(path.read_text(encoding="utf-8")).items():
        text = output.get("data", {}).get("text/plain", "")
        try:
            out[key] = int(text) if re.fullmatch(r"-?\d+", text) else float(text)
        except ValueError:
            out[key] = text.strip("'\"")
    return out


def _glue_text(key: str, spec: str, values: dict[str, object]) -> str:
    """The text of a glued number as the book shows it, or, not built, one like it: a number in
    exponent notation reads as two words ("3e-08"), any other as one."""
    if key in values:
        try:
            return format(values[key], spec)
        except (TypeError, ValueError):
            return str(values[key])
    return "1e-08" if spec.rstrip().endswith(("e", "E")) else "1"


def prose_text(markdown: str, values: dict[str, object] | None = None) -> str:
    """A chapter's markdown as the text the book counts as prose (``chapter_guide.count_words``, on
    the doctree as Sphinx has read it): no code, formulas, targets or chapter guide; a directive
    by its title (:data:`DIRECTIVE_WORDS`); a reference by its text as written, or by its target
    before Sphinx resolves it; a glued number by its value (``values``, :func:`glued_values`)."""
    values = values or {}

    def directive(m: re.Match) -> str:
        name, arg = m.group("name"), m.group("arg").strip()
        _, body = _options(m.group("body"))
        if name in NOT_PROSE or name == "code-cell":
            return " "
        if name.startswith("prf:") and name != "prf:proof":
            head = f" ({arg})" if arg else ""
        else:
            head = DIRECTIVE_WORDS.get(name, "") + (f" ({arg})" if arg and name == "exercise" else "")
        return head + "\n\n" + FENCE.sub(directive, body)

    def role(m: re.Match) -> str:
        name, content = m.group("role"), m.group("content")
        explicit = EXPLICIT.match(content)
        if name == "glue:text":
            key, _, spec = content.partition(":")
            return _glue_text(key, spec, values)
        if name in ("func", "meth", "class", "attr", "data", "mod"):
            target = content.strip()
            return target.lstrip("~").split(".")[-1] if target.startswith("~") else target
        if explicit:
            return explicit.group("text")
        return content

    text = FENCE.sub(directive, markdown)
    text = re.sub(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1[ \t]*$", " ", text, flags=re.M | re.S)  # code blocks
    text = LABEL.sub(" ", text)
    text = _without_list_numbers(text)
    # A role is a node of its own: its text does not run into the words around it.
    text = ROLE.sub(lambda m: f" {role(m)} ", text)
    code: list[str] = []  # inline code, set aside while the formulas go (a `$` in code is no formula)
    text = re.sub(r"`([^`\n]+)`", lambda m: code.append(m.group(1)) or f" \x00{len(code) - 1}\x00 ", text)
    text = re.sub(r"\$\$.*?\$\$(?:[ \t]*\([\w-]+\))?", " ", text, flags=re.S)
    text = re.sub(r"(?<![\\$])\$(?:[^$\\\n]|\\.|\n(?![ \t]*\n))+?\$", " ", text)  # inline, within a paragraph
    text = re.sub(r"\x00(\d+)\x00", lambda m: code[int(m.group(1))], text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link reads as its text
    return re.sub(r"<!--.*?-->", " ", text, flags=re.S)


def _without_list_numbers(text: str) -> str:
    """``text`` without the numbers of its numbered lists ("1. "), which are not words of the doctree.
    A number that starts a line inside a paragraph is one ("step\n6000) and"): an ordered list
    interrupts a paragraph only when it starts at 1 (CommonMark)."""
    out, in_list, blank_before = [], False, True
    for line in text.split("\n"):
        m = re.match(r"^([ \t]*)(\d{1,9})[.)][ \t]", line)
        if m and (blank_before or in_list or m.group(2) == "1"):
            line, in_list = m.group(1) + line[m.end():], True
        elif line.strip() and blank_before and not line[:1].isspace():
            in_list = False
        blank_before = not line.strip()
        out.append(line)
    return "\n".join(out)


def prose_words(markdown: str, values: dict[str, object] | None = None) -> int:
    """Words of prose of a chapter's markdown, counted as the book counts them (:func:`prose_text`)."""
    return len(WORD.findall(prose_text(markdown, values)))


def _solution_title(numbering: Numbering, label: str | None, continued: bool) -> str:
    exercise = numbering.exercises.get(label or "")
    title = f"Solution to Exercise {exercise.number}" if exercise and exercise.number else "Solution"
    if exercise and exercise.title:
        title += f" ({exercise.title})"
    return title + (" (continued)" if continued else "")


def _dropdown(body: str, title: str) -> str:
    fence = _colon_fence(body)
    return f"{fence}{{admonition}} {title}\n:class: dropdown\n\n{body.strip()}\n{fence}"


def fold_solutions(text: str, numbering: Numbering, state: dict) -> str:
    """A cell's markdown with the parts inside a solution (between the marks that ``rewrite_directives``
    left, the open solution carried across cells in ``state``) as closed dropdowns."""
    parts, last = [], 0
    label, continued = state.get("solution"), state.get("continued", False)
    for m in SOLUTION_MARK.finditer(text):
        parts.append((text[last:m.start()], label, continued))
        label, continued = (m.group("label"), False) if m.group("edge") == "start" else (None, False)
        last = m.end()
    parts.append((text[last:], label, continued))
    out = []
    for chunk, label, continued in parts:
        if label is None or not chunk.strip():
            out.append(chunk)
            continue
        out.append("\n\n" + _dropdown(chunk, _solution_title(numbering, label, continued)) + "\n\n")
    last_chunk, label, continued = parts[-1]
    state["solution"], state["continued"] = label, continued or bool(label and last_chunk.strip())
    return re.sub(r"\n{3,}", "\n\n", "".join(out)).strip("\n")


SETUP = '''# Setup: fills in the numbers the prose quotes, and folds the checks' verdicts as the book does
from slrlib.book.display import fold_verdicts, glued

fold_verdicts({numbers})'''


def convert(path: Path, book: Book | None = None):
    """The chapter at ``path`` as a notebook for JupyterLab with jupyterlab-myst."""
    import jupytext
    import nbformat

    book = book or Book()
    nb = jupytext.read(path)
    here = path.stem
    number = book.number.get(here, 0)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    words = prose_words(markdown, glued_values(here))
    numbering = Numbering(scan(markdown, here, number))
    named = [c.metadata.get("mystnb", {}).get("figure", {}) for c in nb.cells if c.cell_type == "code"]
    named = [f for f in named if f.get("caption")]
    figure_numbers = {f["name"]: f"{number}.{k}" for k, f in enumerate(named, 1) if f.get("name")}
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    setup = SETUP.format(numbers=book.equation_numbers(code) or "")
    cells = [nbformat.v4.new_code_cell(setup, metadata={"tags": ["hide-input"], "jupyter": {"source_hidden": True}})]
    figures, state = 0, {"solution": None}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            source = rewrite_directives(rewrite_roles(cell.source, book, here, figure_numbers), book, words, numbering)
            source = fold_solutions(rewrite_math(source, numbering), numbering, state)
            if source.strip():
                cell.source = source
                cells.append(cell)
            continue
        if "hide-input" in cell.metadata.get("tags", []):
            cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
        if state["solution"] is not None:  # a solution's code: folded as the prose around it
            cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
            # Its outputs: the kernel folds them (fold_verdicts), JupyterLab sending this with the code.
            cell.metadata["slr"] = {"solution": _solution_title(numbering, state["solution"], False)}
            state["continued"] = True
        cells.append(cell)
        caption = cell.metadata.get("mystnb", {}).get("figure", {}).get("caption")
        if caption:
            figures += 1
            text = rewrite_roles(" ".join(str(caption).split()), book, here, figure_numbers)
            cells.append(nbformat.v4.new_markdown_cell(f"**Fig. {number}.{figures}.** {text}"))
    if numbering.boxes or numbering.equations:
        left = [t.label for t in numbering.boxes + numbering.equations]
        raise ValueError(f"{path.name}: numbered but not met: {left}")
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
