"""The chapters as notebooks for JupyterLab (book/_ext/to_notebook.py): the book's numbers, references
that jupyterlab-myst leaves alone, folded solutions and verdicts, the reading time. No browser: the
browser test (tests/browser/test_jupyterlab.py) runs chapters 7 and 14 in JupyterLab."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import fold_checks  # noqa: E402
import lab  # noqa: E402
import to_notebook  # noqa: E402
from slrlib.book import display  # noqa: E402
from slrlib.verify import Check  # noqa: E402

BUILT = ROOT / "_build" / "html" / "book"

CHAPTER = """(ch-demo)=
# A demo chapter

(sec-demo-first)=
## The first section

:::{prf:theorem} The paper's main result
:label: thm-demo-paper
:class: paper-5

$$
x = 1
$$
:::

:::{prf:proof}
Unnumbered, as sphinx-proof has it.
:::

```{prf:proposition} Our own (this book)
:label: prop-demo-own

1. A list with an equation:

   $$
   y = 2
   $$ (eq-demo-in-list)
```

:::{prf:proposition} Another of the paper
:label: prop-demo-paper
:class: paper-8
:::

:::{prf:proposition} Our second
:label: prop-demo-second
:::

$$
z = 3
$$ (eq-demo-last)

```{exercise}
:label: ex-demo
Do it.
```
"""


@pytest.fixture(scope="module")
def book():
    return to_notebook.Book()


def _by_label(targets):
    return {t.label: t for t in targets if t.label}


def test_numbers_as_the_book_numbers_them():
    """Hand-written expectations: Sphinx's math_numfig (labelled equations only, per chapter),
    sphinx-proof (per type, proofs not numbered), paper_numbers.py (a paper box takes the paper's
    number and is left out of the count), sphinx-exercise."""
    found = to_notebook.scan(CHAPTER, "03_demo", 3)
    targets = _by_label(found)
    assert targets["thm-demo-paper"].enumerator == "5 of the paper"
    assert targets["prop-demo-own"].enumerator == "3.1"
    assert targets["prop-demo-paper"].enumerator == "8 of the paper"
    assert targets["prop-demo-second"].enumerator == "3.2"
    assert targets["eq-demo-in-list"].number == "3.1" and targets["eq-demo-last"].number == "3.2"
    assert targets["ex-demo"].number == "3.1"
    assert targets["sec-demo-first"].title == "The first section"
    assert [t.number for t in found if t.kind == "equation"] == [None, "3.1", "3.2"]
    assert [t.number for t in found if t.kind == "proof"] == [None]
    # References write what the book writes.
    assert targets["eq-demo-last"].implicit_text("eq") == "(3.2)"
    assert targets["prop-demo-paper"].implicit_text("prf:ref") == "Proposition 8"
    assert targets["prop-demo-second"].implicit_text("prf:ref") == "Proposition 3.2"
    assert targets["ex-demo"].implicit_text("ref") == "Exercise 3.1"
    assert targets["sec-demo-first"].implicit_text("ref") == "The first section"


def test_boxes_and_equations_carry_their_numbers(book):
    targets = to_notebook.scan(CHAPTER, "03_demo", 3)
    numbering = to_notebook.Numbering(targets)
    text = to_notebook.rewrite_directives(CHAPTER, book, 100, numbering)
    text = to_notebook.rewrite_math(text, numbering)
    assert not numbering.boxes and not numbering.equations
    assert ":enumerator: 5 of the paper" in text and ":enumerator: 3.1" in text
    assert ":::{prf:proof}\n:enumerated: false" in text
    assert "$$" not in text
    assert "   ```{math}\n   :label: eq-demo-in-list\n   :enumerator: 3.1\n   y = 2\n   ```" in text
    assert "```{math}\n:enumerated: false\nx = 1\n```" in text
    # A box is a colon fence, so that the backtick fence of an equation inside does not close it.
    assert "```{prf:proposition}" not in text and ":::{prf:proposition} Our own (this book)" in text


def test_references_are_the_books_text_and_none_is_left_to_jupyterlab_myst(book):
    here = "07_theorem5"
    text = ("{eq}`eq-t5-grad`, {prf:ref}`Proposition 9 <prop-t5-fixed-points>`, {prf:ref}`thm-t5-main`, "
            "{eq}`eq-pgd-step`, {numref}`Chapter %s <ch-pgd>`, {ref}`ex-t5-edges`, {numref}`fig-t5-basins`")
    out = to_notebook.rewrite_roles(text, book, here)
    eq = book.targets["eq-t5-grad"].number
    assert out.startswith(f'<a href="#eq-t5-grad">({eq})</a>, <a href="#prop-t5-fixed-points">Proposition 9</a>, '
                          '<a href="#thm-t5-main">Theorem 5</a>, ')
    assert f"[({book.targets['eq-pgd-step'].number})](06_pgd.ipynb#eq-pgd-step)" in out
    assert "[Chapter 6](06_pgd.ipynb)" in out
    assert '<a href="#ex-t5-edges">Exercise 7.3</a>' in out
    assert f"Fig. {book.targets['fig-t5-basins'].number}" in out and "{" not in out


@pytest.mark.slow
def test_every_chapter_converts_with_its_numbers_and_no_reference_left(book):
    """Every box, exercise and display equation carries its number (or none), and no MyST reference is left
    for jupyterlab-myst to resolve: it resolves them as cells render, and logs each one whose target is in
    a cell not rendered yet as a console error ("Cross reference target was not found")."""
    xref = re.compile(r"\{(?:numref|ref|eq|prf:ref|doc)\}`|\]\(#")
    for path in book.chapters:
        nb = to_notebook.convert(path, book)
        markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert not xref.search(markdown), (path.name, xref.search(markdown))
        assert not re.search(r"^\s*\$\$", markdown, re.M), path.name
        for box in re.finditer(r"^:{3,}\{(?:prf:\w+|exercise)\}[^\n]*\n(?P<options>(?::[\w-]+:[^\n]*\n)*)", markdown,
                               re.M):
            assert ":enumerator:" in box.group("options") or ":enumerated: false" in box.group("options"), box.group(0)
        # Every link to an element of the notebook points to an element it has.
        ids = {to_notebook.Target("x", label, "").html_id for label in to_notebook.labels_of(markdown)}
        links = set(re.findall(r'<a href="#([\w-]+)">', markdown))
        assert links <= ids, (path.name, links - ids)


@pytest.mark.slow
def test_the_numbers_of_a_chapter_are_those_of_its_source_read_whole(book):
    """The converter numbers a chapter from its markdown cells (jupytext), the references into it from
    its file read whole (to_notebook.prose_of): the same numbers."""
    import jupytext

    for path in book.chapters:
        nb = jupytext.read(path)
        cells = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        from_cells = _by_label(to_notebook.scan(cells, path.stem, book.number[path.stem]))
        for label, target in from_cells.items():
            if book.owner.get(label) == path.stem and target.kind != "section":
                assert book.targets[label].number == target.number, (path.name, label)


def test_solutions_fold_and_verdicts_name_equations_by_number(book):
    nb = to_notebook.convert(ROOT / "book" / "07_theorem5.md", book)
    source = (ROOT / "book" / "07_theorem5.md").read_text(encoding="utf-8")
    exercises = len(re.findall(r"^```\{exercise\}", source, re.M))
    solutions = [c.source for c in nb.cells if c.cell_type == "markdown" and ":class: dropdown" in c.source]
    titles = [re.search(r"\{admonition\} (.*)", s).group(1) for s in solutions]
    expected = [f"Solution to Exercise 7.{k}" for k in range(1, exercises + 1)]
    assert [t for t in titles if "continued" not in t] == expected
    assert not any("solution-" in c.source or "\x00" in c.source for c in nb.cells)
    # The code of a solution: input and outputs folded, as the prose around it.
    inside = re.findall(r"```\{solution-start\}.*?```\{solution-end\}", source, re.S)
    code_in_solutions = sum(len(re.findall(r"^```\{code-cell\}", s, re.M)) for s in inside)
    folded = [c for c in nb.cells if c.cell_type == "code" and c.metadata.get("slr", {}).get("solution")]
    assert len(folded) == code_in_solutions > 0
    assert all(c.metadata["jupyter"]["source_hidden"] for c in folded)
    assert {c.metadata["slr"]["solution"] for c in folded} == {f"Solution to Exercise 7.{k}" for k in (1, 2, 3)}
    # The hidden first cell: a sentence first, then the setup, which names the verdicts' equations by number.
    setup = nb.cells[0]
    assert setup.metadata["jupyter"]["source_hidden"]
    first = setup.source.splitlines()[0]
    assert first.startswith("# Setup:") and not re.search(r"[{}`]", first)
    remainder = book.targets["eq-t5-remainder"].number
    assert f"fold_verdicts({{'(eq-t5-remainder)': '({remainder})'}})" in setup.source


def test_a_run_of_verdicts_folds_into_one_output_as_in_the_book():
    shown = []
    execution = ["cell-1"]
    folder = display._Folder(lambda bundle, display_id, update: shown.append((bundle, display_id, update)),
                             lambda: execution[0])
    folder.names = {"(eq-a)": "(7.7)"}

    def verdict(n, passed=True, claim=None):
        return Check(n, f"check-{n}", claim or f"claim {n}", "that", "", "", "", passed, "")

    folder.show(verdict(1, claim="the bound (eq-a)"))
    folder.show(verdict(2))
    assert [(d, u) for _, d, u in shown] == [(shown[0][1], False), (shown[0][1], True)]
    html = shown[-1][0]["text/html"]
    assert html.startswith('<details class="slr-checks">' + fold_checks.summary_html(2))
    assert 'id="check-1"' in html and 'id="check-2"' in html and "the bound (7.7)" in html
    assert shown[-1][0]["text/plain"].splitlines()[0] == "✓ 2 checks"
    # Another output between two verdicts parts them, as does a new cell; a failed verdict stays open.
    folder.observe({"header": {"msg_type": "display_data"}, "content": {"transient": {}}})
    folder.show(verdict(3))
    assert shown[-1][2] is False and shown[-1][1] != shown[0][1]
    assert shown[-1][0]["text/html"].startswith('<details class="slr-checks">' + fold_checks.summary_html(1))
    execution[0] = "cell-2"
    folder.show(verdict(4))
    assert shown[-1][2] is False
    folder.show(verdict(5, passed=False))
    assert shown[-1][1] is None and shown[-1][0]["text/html"].startswith('<div class="slr-check slr-check-fail"')
    folder.show(verdict(6))
    assert shown[-1][2] is False


def test_a_solution_that_spans_cells_folds_in_each(book):
    """A solution's prose, cut by its code cells, is a closed dropdown in each markdown cell it spans; a cell
    that ends one solution and starts the next has one of each."""
    numbering = to_notebook.Numbering(to_notebook.scan(CHAPTER + "\n```{exercise}\n:label: ex-demo-2\nAgain.\n```\n",
                                                       "03_demo", 3))
    state = {"solution": None}
    start = to_notebook.rewrite_directives(
        "Before.\n\n```{solution-start} ex-demo\n:class: dropdown\n```\n\nFirst part.", book, 0)
    first = to_notebook.fold_solutions(start, numbering, state)
    assert first.startswith("Before.\n\n:::{admonition} Solution to Exercise 3.1\n:class: dropdown\n\nFirst part.\n:::")
    both = to_notebook.rewrite_directives("Second part.\n\n```{solution-end}\n```\n\nBetween.\n\n"
                                          "```{solution-start} ex-demo-2\n:class: dropdown\n```\n\nIts start.", book, 0)
    second = to_notebook.fold_solutions(both, numbering, state)
    assert re.findall(r"\{admonition\} (.*)", second) == ["Solution to Exercise 3.1 (continued)",
                                                         "Solution to Exercise 3.2"]
    assert "\n:::\n\nBetween.\n\n:::{admonition}" in second and state["solution"] == "ex-demo-2"
    end = to_notebook.rewrite_directives("```{solution-end}\n```", book, 0)
    assert to_notebook.fold_solutions(end, numbering, state) == "" and state["solution"] is None


@pytest.mark.slow
def test_a_kernel_folds_the_verdicts_of_a_cell(tmp_path):
    """fold_verdicts in a real kernel (as the notebook's hidden first cell calls it): the runs, parted by a
    table and by printed text, each one output."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from slrlib.book.display import fold_verdicts\n"
                                          "fold_verdicts({'(eq-a)': '(7.7)'})"),
                nbformat.v4.new_code_cell("from IPython.display import HTML, display\n"
                                          "from slrlib.verify import check_that\n"
                                          "check_that('one (eq-a)', True)\ncheck_that('two', True)\n"
                                          "display(HTML('<table></table>'))\ncheck_that('three', True)\n"
                                          "print('text')\ncheck_that('four', True)"),
                nbformat.v4.new_code_cell("check_that('five', True)\ncheck_that('six', True)"),
                nbformat.v4.new_code_cell("check_that('seven', True)\ndisplay(HTML('<table id=\"t\"></table>'))\n"
                                          "check_that('eight', True)",
                                          metadata={"slr": {"solution": "Solution to Exercise 7.1"}})]
    client = NotebookClient(nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})

    def with_metadata(cell, cell_index):
        """As JupyterLab does (and nbclient does not), each cell's metadata sent with its code."""
        kc = client.kc

        def execute(code, silent=False, store_history=True, user_expressions=None, allow_stdin=None,
                    stop_on_error=True):
            content = {"code": code, "silent": silent, "store_history": store_history, "allow_stdin": False,
                       "user_expressions": user_expressions or {}, "stop_on_error": stop_on_error}
            msg = kc.session.msg("execute_request", content, metadata=dict(cell.metadata))
            kc.shell_channel.send(msg)
            return msg["header"]["msg_id"]

        kc.execute = execute

    client.on_cell_execute = with_metadata
    client.execute()
    shown = [[o.get("data", {}).get("text/plain", o.get("text", "")).splitlines()[0] for o in c.outputs]
             for c in nb.cells[1:]]
    assert shown == [["✓ 2 checks", "<IPython.core.display.HTML object>", "✓ 1 check", "text", "✓ 1 check"],
                     ["✓ 2 checks"], ["Solution to Exercise 7.1: the code's output (3 outputs, folded)"]]
    assert "one (7.7)" in nb.cells[1].outputs[0]["data"]["text/html"]
    solution = nb.cells[3].outputs[0]["data"]["text/html"]
    assert solution.startswith('<details class="slr-solution"><summary>Solution to Exercise 7.1: the code')
    assert solution.count('<details class="slr-checks">') == 2 and '<table id="t"></table>' in solution


def test_jupyterlab_myst_is_patched_to_evaluate_a_cell_not_rendered_yet(tmp_path):
    """lab.py's copy of jupyterlab-myst evaluates the {eval} numbers of a markdown cell that "Run all" runs
    before it has rendered (the pinned version, 2.7.0, finds none there: they stayed unevaluated)."""
    source = lab.installed_extensions() / "jupyterlab-myst"
    if not source.is_dir():
        pytest.skip("jupyterlab-myst is not installed")
    assert lab.patch_myst(source, tmp_path / "jupyterlab-myst")
    patched = [p.read_text(encoding="utf-8", errors="surrogateescape")
               for p in (tmp_path / "jupyterlab-myst" / "static").glob("*.js")]
    found = [m for text in patched for m in re.finditer(
        r"\((?P<cell>\w)\.fragmentMDAST\|\|\(null!==\((?P<n>\w)=null===\((?P<s>\w)=.*?:\{\}\)\)", text)]
    assert len(found) == 1
    assert not any(p.is_symlink() for p in (tmp_path / "jupyterlab-myst").rglob("*"))
    # What it reads: the source's parse, else the last rendering, else nothing.
    import shutil
    import subprocess

    if shutil.which("node") is None:
        pytest.skip("no node to evaluate the patched expression")
    m = found[0]
    script = (f"const read = ({m['cell']}) => {{ let {m['n']}, {m['s']}; return {m.group(0)}; }};\n"
              "console.log(JSON.stringify([read({fragmentMDAST: 'source', mystModel: {mdast: 'rendered'}}),"
              " read({mystModel: {mdast: 'rendered'}}), read({mystModel: {}}), read({})]));")
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == ["source", "rendered", {}, {}]


# --------------------------------------------------------------------------- against the built book
def _built(stem: str) -> Path:
    page = BUILT / f"{stem}.html"
    if not page.is_file():
        pytest.skip(f"{page} is not built (make book)")
    return page


def _book_numbers(page: Path) -> dict[str, str]:
    """{id: number} of the boxes, exercises and equations of a built chapter, read from its HTML."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    out = {}
    for box in soup.select("div.proof, div.exercise"):
        number = box.select_one(".caption-number")
        if box.get("id") and number is not None:
            out[box["id"]] = number.get_text(" ", strip=True).split()[-1]
    for eqno in soup.select(".eqno"):
        holder = eqno.find_parent(id=re.compile(r"^equation-"))
        if holder is not None:  # "(7.4)", then the equation's link "#"
            out[holder["id"].removeprefix("equation-")] = str(eqno.contents[0]).strip().strip("()")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("stem", [p.stem for p in to_notebook.chapters()])
def test_the_numbers_are_the_built_books(book, stem):
    expected = _book_numbers(_built(stem))
    assert expected
    got = {label.lower(): t.number for label, t in book.targets.items()  # HTML ids are in lower case
           if t.stem == stem and t.number and t.kind not in ("chapter", "figure")}
    assert got == expected


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["07_theorem5", "14_softmax"])
def test_the_reading_time_is_the_built_books(book, stem):
    text = _built(stem).read_text(encoding="utf-8")
    reading = re.search(r'class="slr-reading-time">([^<]*)<', text)
    assert reading, "no reading time in the built chapter"
    nb = to_notebook.convert(ROOT / "book" / f"{stem}.md", book)
    note = next(c.source for c in nb.cells if c.cell_type == "markdown" and "In this chapter" in c.source)
    assert f"**Reading.** {reading.group(1).strip()}" in note
