"""Chapters in a real JupyterLab, as a reader on Binder or with `make lab` meets them.

Chapters 7 and 14 are written as notebooks by ``book/_ext/to_notebook.py`` (what ``postBuild`` and
``make lab`` do) into a temporary folder; JupyterLab, started as ``make lab`` starts it
(``book/_ext/lab.py``: jupyterlab-myst, the ipywidgets manager; ``labserver.py`` starts it in a
thread as the session starts), serves them on localhost, and headless Chromium opens each in a
page of its own, with a kernel of its own, runs every cell ("Run all" as soon as the kernel is
idle, the page possibly still rendering), and checks what a reader sees against the built book:

* every cell runs without error, and every check of the chapter passes: as many verdicts as the
  book's build recorded, each folded into a closed "✓ N checks" line, as in the book;
* the prose is rendered MyST: no role or ``$`` left as text, and every number of the prose
  (``{eval}`glued(...)```, one per ``{glue:text}`` of the source) shows its value;
* every box (theorem, proposition, exercise, proof) has the number and title of the built book's,
  every numbered equation its number, and the reading time is the book's;
* the solutions are folded: their prose in closed dropdowns under the book's titles, their code
  cells' input collapsed and their outputs in one closed fold each;
* moving a live slider (ipywidgets) redraws its figure (chapter 7);
* no console error.

Needs the built book (``_build/html``: the numbers it shows, the checks it recorded).
"""

from __future__ import annotations

import json
import re

import pytest

from labserver import CHAPTERS
from sitepaths import REQUIRED, ROOT, SCREENSHOTS, SITE
from slrlib.book.display import PENDING

#: How long a chapter may take to run in JupyterLab (chapter 14 ran in 107 s, alone).
RUN_TIMEOUT_S = 600
#: How long JupyterLab may take to show the notebook with its kernel idle.
OPEN_TIMEOUT_S = 120
#: What a role or markup left unrendered looks like in the prose.
UNRENDERED = re.compile(r"\{(?:eval|glue(?::\w+)?|prf:ref|numref|ref|eq|cite(?::\w+)?|doc|func|mod)\}|\$")
STEMS = [c.stem for c in CHAPTERS]


def _notebook(path) -> dict:
    """A notebook file, read as JSON (nbformat's import, which builds jsonschema's format checkers, costs a
    second of this process's time)."""
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def lab(lab_server):
    """JupyterLab serving the chapters as notebooks (labserver.py, started with the session by conftest.py)."""
    server = lab_server.wait()
    if server.problem:
        if REQUIRED or "missing" not in server.problem:
            pytest.fail(server.problem)
        pytest.skip(server.problem)
    return server


#: Run in the page as it opens (an init script, so that the test need not wait): once the notebook's
#: kernel is idle, the number of cells shown and how many markdown cells jupyterlab-myst has not
#: rendered yet, then "Run all"; ``window.__ran`` when it is done.
RUN_ALL_WHEN_IDLE = """(() => { if (window.top !== window) return;
  const timer = setInterval(() => {
    const app = window.jupyterapp, widget = app && app.shell.currentWidget;
    const session = widget && widget.sessionContext && widget.sessionContext.session;
    if (!session || !session.kernel || session.kernel.status !== 'idle') return;
    clearInterval(timer);
    window.__cells = widget.content.widgets.length;
    window.__unrendered = widget.content.widgets.filter(c => c.model.type === 'markdown'
      && !(c.mystModel && c.mystModel.mdast)).length;
    window.__ran = false;
    app.commands.execute('notebook:run-all-cells').then(() => { window.__ran = true; });
  }, 200); })();"""
KERNEL_IDLE = "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'"
ERRORS = """() => { const w = window.jupyterapp.shell.currentWidget; const out = [];
  w.content.widgets.forEach((cell, i) => { if (cell.model.type !== 'code') return;
    const outputs = cell.model.outputs;
    for (let j = 0; j < outputs.length; j++) { const o = outputs.get(j).toJSON();
      if (o.output_type === 'error') out.push(`cell ${i}: ${o.ename}: ${o.evalue}`.slice(0, 300)); } });
  return out; }"""
PROSE = """() => [...document.querySelectorAll('.jp-MarkdownCell')].map(e => e.innerText)"""
EXPRESSIONS = """() => { const out = [];
  window.jupyterapp.shell.currentWidget.content.widgets.forEach(cell => {
    if (cell.model.type !== 'markdown') return;
    for (const e of (cell.model.getMetadata('user_expressions') || [])) out.push(e); });
  return out; }"""
#: What the page shows of the boxes, the equations, the solutions and the verdicts.
SHOWN = """() => { const text = e => e.innerText.replace(/\\s+/g, ' ').trim();
  const words = e => { const c = e.cloneNode(true); c.querySelectorAll('.katex').forEach(k => k.remove());
    return c.textContent.replace(/\\s+/g, ' ').trim(); };
  const cells = window.jupyterapp.shell.currentWidget.content.widgets;
  const verdicts = [...document.querySelectorAll('.jp-OutputArea .slr-check')];
  return {
    boxes: [...document.querySelectorAll('.jp-MarkdownCell .myst-proof-title, .jp-MarkdownCell .myst-exercise-title')]
      .map(e => [e.closest('.myst-proof, .myst-exercise').id || '', words(e)]),
    equations: [...document.querySelectorAll('.jp-MarkdownCell div[id].group')].filter(e => e.querySelector('.katex'))
      .map(e => [e.id, e.lastElementChild.querySelector('.katex') ? '' : text(e.lastElementChild)]),
    dropdowns: [...document.querySelectorAll('.jp-MarkdownCell details')]
      .map(e => [e.open, words(e.querySelector('summary'))]),
    solution_code: cells.filter(c => c.model.type === 'code' && c.model.getMetadata('slr')?.solution)
      .map(c => [c.inputHidden, c.model.outputs.toJSON().filter(o => o.output_type !== 'display_data'
                   || Object.keys(o.data).some(k => !k.startsWith('application/papermill.record/'))).length,
                 c.outputArea.node.querySelectorAll(':scope details.slr-solution:not([open])').length]),
    verdicts: verdicts.length,
    failed: verdicts.filter(v => v.classList.contains('slr-check-fail')).length,
    unfolded: verdicts.filter(v => !v.classList.contains('slr-check-fail') && !v.closest('details.slr-checks')).length,
    folds: [...document.querySelectorAll('.jp-OutputArea details.slr-checks')]
      .map(d => [d.open, words(d.querySelector('summary')), d.querySelectorAll('.slr-check').length]),
    reading: [...document.querySelectorAll('.jp-MarkdownCell p')].map(text).filter(t => t.startsWith('Reading.')),
  }; }"""
#: A markdown cell that "Run all" runs before jupyterlab-myst has rendered it (the last one quoting a
#: number): its rendering forgotten, its numbers' values deleted, then run; its numbers come back.
RUN_UNRENDERED = """async () => { const app = window.jupyterapp, notebook = app.shell.currentWidget.content;
  const index = notebook.widgets.map(c => c.model.type === 'markdown'
    && c.model.sharedModel.getSource().includes('{eval}')).lastIndexOf(true);
  const cell = notebook.widgets[index];
  cell.mystModel.mdast = undefined;
  cell.model.deleteMetadata('user_expressions');
  notebook.activeCellIndex = index;
  await app.commands.execute('notebook:run-cell');
  for (let i = 0; i < 100 && !cell.model.getMetadata('user_expressions'); i++) {
    await new Promise(r => setTimeout(r, 100));
  }
  return [cell.model.sharedModel.getSource().match(/\\{eval\\}/g).length,
          cell.model.getMetadata('user_expressions') || []]; }"""


def book_shows(stem: str) -> dict:
    """What the built book shows of a chapter (``_build/html``), read independently of the converter:
    its boxes in order, (id, title) with the formulas of the title left out ("Proposition 8 of the
    paper (Descent)": paper_numbers.py's style sheet adds "of the paper" to a box of class
    slr-paper; a proof reads "Proof"), its solutions' titles, its equations' numbers by label, its
    reading time, and the number of checks its build recorded (``_build/checks``)."""
    import copy

    from bs4 import BeautifulSoup

    soup = BeautifulSoup((SITE / "book" / f"{stem}.html").read_text(encoding="utf-8"), "html.parser")

    def words(node) -> str:
        node = copy.copy(node)
        for formula in node.select(".math, mjx-container, a.headerlink"):
            formula.decompose()
        return " ".join(node.get_text(" ", strip=True).split())

    boxes = []
    for box in soup.select("div.proof, div.exercise"):
        title = box.find("p", class_="admonition-title", recursive=False)
        if title is None:  # a proof: "Proof." opens its first paragraph
            boxes.append(("", "Proof"))
            continue
        number = title.select_one(".caption-number")
        shown = words(title)
        if number is not None and "slr-paper" in box.get("class", []):
            shown = words(number) + " of the paper " + shown[len(words(number)):]
        boxes.append((box.get("id", ""), " ".join(shown.split())))
    solutions = [words(box.find("p", class_="admonition-title")) for box in soup.select("div.solution")]
    equations = {}
    for eqno in soup.select(".eqno"):
        holder = eqno.find_parent(id=re.compile(r"^equation-"))
        equations[holder["id"].removeprefix("equation-")] = str(eqno.contents[0]).strip()  # "(7.4)", then "#"
    checks = json.loads((ROOT / "_build" / "checks" / f"{stem}.json").read_text(encoding="utf-8"))
    return {"boxes": boxes, "solutions": solutions, "equations": equations,
            "reading": words(soup.select_one(".slr-reading-time")), "checks": len(checks)}


@pytest.fixture(scope="session")
def lab_runs(lab, browser_context):
    """Each chapter's page in JupyterLab, opening: {stem: (page, console errors, the server's response)}.

    Session-scoped, and opened by an early browser test (conftest.py orders
    ``test_jupyterlab_serves_the_chapters`` among the first, and the tests that read the runs
    last): JupyterLab loads, the kernels start and the chapters run (``RUN_ALL_WHEN_IDLE``), in
    two pages at once, while the other tests open the built book."""
    runs = {}
    try:
        for stem, notebook in lab.notebooks.items():
            page = browser_context.new_page()
            console: list[str] = []
            page.on("console", lambda m, console=console: m.type == "error" and console.append(m.text[:300]))
            page.on("pageerror", lambda e, console=console: console.append(f"pageerror: {e}"))
            page.set_viewport_size({"width": 1300, "height": 900})
            page.add_init_script(RUN_ALL_WHEN_IDLE)
            response = page.goto(f"{lab.url}/lab/workspaces/slr-test-{stem}/tree/{notebook.name}?reset",
                                 wait_until="commit")
            runs[stem] = (page, console, response)
        yield runs
    finally:
        for page, _, _ in runs.values():
            page.close()


def test_jupyterlab_serves_the_chapters(lab_runs, lab):
    for stem, (_, console, response) in lab_runs.items():
        assert response is not None and response.ok, f"JupyterLab answered {response and response.status} for {stem}"
        assert len(_notebook(lab.notebooks[stem])["cells"]) > 10  # the chapter, written as a notebook
        assert console == [], (stem, console)


@pytest.mark.parametrize("stem", STEMS)
def test_chapter_runs_in_jupyterlab_as_in_the_book(lab_runs, lab, stem):
    page, console, _ = lab_runs[stem]
    source = next(c for c in CHAPTERS if c.stem == stem).read_text(encoding="utf-8")
    glued = len(re.findall(r"\{glue:text\}`", source))
    notebook = _notebook(lab.notebooks[stem])
    page.wait_for_function("() => window.__cells !== undefined", timeout=OPEN_TIMEOUT_S * 1000)
    assert page.evaluate("window.__cells") == len(notebook["cells"]), "JupyterLab shows another number of cells"
    page.wait_for_function("() => window.__ran === true", timeout=RUN_TIMEOUT_S * 1000, polling=500)
    page.wait_for_function(KERNEL_IDLE, timeout=RUN_TIMEOUT_S * 1000, polling=500)
    page.wait_for_timeout(1000)
    book = book_shows(stem)

    assert page.evaluate(ERRORS) == []
    shown = page.evaluate(SHOWN)
    # Every check passed, as many as the book's build made, each in a closed fold as in the book.
    assert shown["failed"] == 0 and shown["verdicts"] == book["checks"], (shown["verdicts"], book["checks"])
    assert shown["unfolded"] == 0, "a passed verdict is not folded"
    assert shown["folds"] and not any(is_open for is_open, _, _ in shown["folds"]), "a fold of verdicts is open"
    wrong = [(summary, n) for _, summary, n in shown["folds"] if summary != f"✓ {n} check{'' if n == 1 else 's'}"]
    assert wrong == [], wrong
    assert sum(n for _, _, n in shown["folds"]) == shown["verdicts"]

    # Every number of the prose was evaluated in the kernel, and shows (the markdown cells that "Run all"
    # ran before jupyterlab-myst had rendered them included: window.__unrendered of them).
    expressions = page.evaluate(EXPRESSIONS)
    assert len(expressions) == glued, f"{len(expressions)} evaluated expressions for {glued} glued numbers"
    failed = [e["expression"] for e in expressions if e["result"].get("status") != "ok"]
    assert failed == [], failed
    prose = "\n".join(page.evaluate(PROSE))
    assert len(prose) > 5000, "the prose is not rendered"
    left = [prose[max(0, m.start() - 60):m.end() + 60] for m in UNRENDERED.finditer(prose)]
    assert left == [], f"unrendered markup in the prose: {left[:5]}"
    assert "glued(" not in prose, "a number of the prose shows its expression, not its value"
    assert PENDING not in prose, "a number of the prose glued further down was never filled in"
    assert page.locator(".jp-MarkdownCell .katex").count() > 20, "jupyterlab-myst did not typeset the math"

    # The boxes and the equations: the book's numbers and titles.
    boxes = [(ident if title != "Proof" else "", title) for ident, title in shown["boxes"]]
    assert boxes == book["boxes"]
    numbered = {ident: number for ident, number in shown["equations"] if number}
    assert numbered == book["equations"]
    assert shown["reading"] == [f"Reading. {book['reading']}"]

    # The solutions: folded, each under the book's title; their code's input collapsed, its outputs (but
    # the glued numbers' records, which show nothing) in one closed fold.
    solutions = [summary for _, summary in shown["dropdowns"] if not summary.endswith("(continued)")]
    assert solutions == book["solutions"] and not any(is_open for is_open, _ in shown["dropdowns"])
    assert shown["solution_code"] and all(hidden and n == closed for hidden, n, closed in shown["solution_code"]), \
        shown["solution_code"]

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"jupyterlab_{stem}.png"))
    # Where to look: a proposition's box with its number, and the last exercise with its folded solution.
    for name, where in (("box", page.locator(".jp-MarkdownCell .myst-proof", has_text="Proposition").first),
                        ("solution", page.locator(".jp-MarkdownCell .myst-exercise").last)):
        where.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        page.screenshot(path=str(SCREENSHOTS / f"jupyterlab_{stem}_{name}.png"))
    if stem == "07_theorem5":
        _slider_redraws(page)
    # A markdown cell run before it has rendered evaluates its numbers (jupyterlab-myst patched by lab.py).
    count, values = page.evaluate(RUN_UNRENDERED)
    assert len(values) == count and all(v["result"].get("status") == "ok" for v in values), values
    assert console == [], console


def _slider_redraws(page) -> None:
    """A live slider: moving it redraws the figure in its output."""
    slider = page.locator(".jp-OutputArea .widget-slider").first
    slider.scroll_into_view_if_needed()
    box = slider.locator("xpath=ancestor::div[contains(@class, 'widget-vbox')][1]")
    image = box.locator("img").first
    image.wait_for(timeout=30_000)
    before = image.get_attribute("src")
    handle = slider.locator(".noUi-handle").first
    handle.focus()
    page.keyboard.press("End")
    page.wait_for_function("([img, src]) => img.isConnected ? img.getAttribute('src') !== src : true",
                           arg=[image.element_handle(), before], timeout=60_000)
    after = box.locator("img").first.get_attribute("src")
    assert after and after != before, "moving the slider did not redraw the figure"
    page.screenshot(path=str(SCREENSHOTS / "jupyterlab_07_theorem5_slider.png"))
