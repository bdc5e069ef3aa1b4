"""A chapter in a real JupyterLab, as a reader on Binder or with `make lab` meets it.

Chapter 1 is written as a notebook by ``book/_ext/to_notebook.py`` (what ``postBuild`` and
``make lab`` do) into a temporary folder; JupyterLab, started as ``make lab`` starts it
(``book/_ext/lab.py``: jupyterlab-myst, the ipywidgets manager; ``labserver.py`` starts it in a
thread as the session starts), serves it on localhost, and headless Chromium opens it in a
fresh workspace, runs every cell, and checks what a reader sees:

* every cell runs without error, and every check of the chapter passes (its verdicts show);
* the prose is rendered MyST: no role (``{glue:text}``, ``{prf:ref}``, ``{numref}``, ...) or
  ``$`` left as text, and every number of the prose (``{eval}`glued(...)```, one per
  ``{glue:text}`` of the source) shows its value, the ones glued further down included;
* moving a live slider (ipywidgets) redraws its figure;
* no console error.

Needs no built book; runs in ``make test`` with the other browser tests.
"""

from __future__ import annotations

import json
import re

import pytest

from labserver import CHAPTER
from sitepaths import REQUIRED, SCREENSHOTS
from slrlib.book.display import PENDING

#: How long the chapter may take to run in JupyterLab (it executes in about 25 s in the build).
RUN_TIMEOUT_S = 600
#: How long JupyterLab may take to show the notebook with its kernel idle.
OPEN_TIMEOUT_S = 120
#: What a role or markup left unrendered looks like in the prose.
UNRENDERED = re.compile(r"\{(?:eval|glue(?::\w+)?|prf:ref|numref|ref|eq|cite(?::\w+)?|doc|func|mod)\}|\$")


def _cells(notebook) -> int:
    """The number of cells of a notebook file (read as JSON: nbformat's import, which builds jsonschema's
    format checkers, costs a second of this process's time)."""
    return len(json.loads(notebook.read_text(encoding="utf-8"))["cells"])


@pytest.fixture(scope="session")
def lab(lab_server):
    """JupyterLab serving chapter 1 as a notebook (labserver.py, started with the session by conftest.py)."""
    server = lab_server.wait()
    if server.problem:
        if REQUIRED or "missing" not in server.problem:
            pytest.fail(server.problem)
        pytest.skip(server.problem)
    return server


#: Run in the page as it opens (an init script, so that the test need not wait): once the notebook's
#: kernel is idle, the number of cells shown, then "Run all"; ``window.__ran`` when it is done.
RUN_ALL_WHEN_IDLE = """(() => { if (window.top !== window) return;
  const timer = setInterval(() => {
    const app = window.jupyterapp, widget = app && app.shell.currentWidget;
    const session = widget && widget.sessionContext && widget.sessionContext.session;
    if (!session || !session.kernel || session.kernel.status !== 'idle') return;
    clearInterval(timer);
    window.__cells = widget.content.widgets.length;
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


@pytest.fixture(scope="session")
def lab_run(lab, browser_context):
    """The chapter's page in JupyterLab, opening: (page, console errors, the server's response).

    Session-scoped, and opened by an early browser test (conftest.py orders
    ``test_jupyterlab_serves_the_chapter`` among the first, and the test that reads the run
    last): JupyterLab loads, the kernel starts and the chapter runs (``RUN_ALL_WHEN_IDLE``)
    while the other tests open the built book."""
    page = browser_context.new_page()
    console: list[str] = []
    page.on("console", lambda m: m.type == "error" and console.append(m.text[:300]))
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    page.set_viewport_size({"width": 1300, "height": 900})
    page.add_init_script(RUN_ALL_WHEN_IDLE)
    response = page.goto(f"{lab.url}/lab/workspaces/slr-test/tree/{lab.name}?reset", wait_until="commit")
    try:
        yield page, console, response
    finally:
        page.close()


def test_jupyterlab_serves_the_chapter(lab_run, lab):
    _, console, response = lab_run
    assert response is not None and response.ok, f"JupyterLab answered {response and response.status}"
    assert _cells(lab.notebook) > 10  # the chapter, written as a notebook
    assert console == [], console


def test_chapter_renders_runs_and_its_slider_moves_in_jupyterlab(lab_run, lab):
    page, console, _ = lab_run
    source = CHAPTER.read_text(encoding="utf-8")
    glued = len(re.findall(r"\{glue:text\}`", source))
    page.wait_for_function("() => window.__cells !== undefined", timeout=OPEN_TIMEOUT_S * 1000)
    cells = _cells(lab.notebook)
    assert page.evaluate("window.__cells") == cells, "JupyterLab shows another number of cells"
    page.wait_for_function("() => window.__ran === true", timeout=RUN_TIMEOUT_S * 1000)
    page.wait_for_function(KERNEL_IDLE, timeout=RUN_TIMEOUT_S * 1000, polling=500)
    page.wait_for_timeout(1000)

    assert page.evaluate(ERRORS) == []
    verdicts = page.locator(".jp-OutputArea .slr-check")
    assert verdicts.count() >= 1 and page.locator(".jp-OutputArea .slr-check-fail").count() == 0

    # Every number of the prose was evaluated in the kernel, and shows.
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
    assert page.locator(".jp-MarkdownCell .myst-RenderedExpression, .jp-MarkdownCell span").count() > 0
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "jupyterlab_01_task.png"))

    # A live slider: moving it redraws the figure in its output.
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
    page.screenshot(path=str(SCREENSHOTS / "jupyterlab_01_task_slider.png"))
    assert console == [], console

