"""A chapter in a real JupyterLab, as a reader on Binder or with `make lab` meets it.

Chapter 1 is written as a notebook by ``book/_ext/to_notebook.py`` (what ``postBuild`` and
``make lab`` do) into a temporary folder; JupyterLab, started as ``make lab`` starts it
(``book/_ext/lab.py``: jupyterlab-myst, the ipywidgets manager), serves it on localhost, and headless Chromium opens it in a fresh
workspace, runs every cell, and checks what a reader sees:

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
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from sitepaths import CHROMIUM_FLAGS, REQUIRED, ROOT, SCREENSHOTS
from slrlib.book.display import PENDING

CHAPTER = ROOT / "book" / "01_task.md"
PYTHON = Path(sys.executable)
JUPYTER = PYTHON.parent / "jupyter"
#: How long the chapter may take to run in JupyterLab (it executes in about 25 s in the build).
RUN_TIMEOUT_S = 600
#: What a role or markup left unrendered looks like in the prose.
UNRENDERED = re.compile(r"\{(?:eval|glue(?::\w+)?|prf:ref|numref|ref|eq|cite(?::\w+)?|doc|func|mod)\}|\$")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def lab():
    """JupyterLab serving chapter 1 as a notebook, in folders of its own; yields (url, notebook name)."""
    if not JUPYTER.exists():
        if REQUIRED:
            pytest.fail(f"{JUPYTER} is missing (jupyterlab is pinned in requirements.lock)")
        pytest.skip("jupyterlab is not installed")
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import lab as book_lab

    with tempfile.TemporaryDirectory(prefix="slr-lab-") as tmp:
        tmp = Path(tmp)
        env = book_lab.lab_env(JUPYTER_DATA_DIR=str(tmp / "data"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
                               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
                               JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"), IPYTHONDIR=str(tmp / "ipython"))
        env.pop("SLR_CHECKS_FILE", None)
        # Every cell in the page at once (no windowing), so that all the prose is rendered.
        settings = tmp / "settings" / "@jupyterlab" / "notebook-extension"
        settings.mkdir(parents=True)
        (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
        notebooks = tmp / "notebooks"
        (written,) = book_lab.write_notebooks(notebooks, [CHAPTER], env=env)
        extensions = book_lab.link_extensions(tmp / "labextensions")
        port = _free_port()
        log = open(tmp / "lab.log", "w")
        command = book_lab.lab_command(notebooks, extensions, port, [
            "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1", "--ServerApp.token=",
            "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True", "--LabApp.expose_app_in_browser=True"])
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(120):
                try:
                    urllib.request.urlopen(url + "/api/status", timeout=2)
                    break
                except OSError:
                    if server.poll() is not None:
                        break
                    time.sleep(0.5)
            else:
                pytest.fail("JupyterLab did not start: " + (tmp / "lab.log").read_text()[-2000:])
            if server.poll() is not None:
                pytest.fail("JupyterLab exited: " + (tmp / "lab.log").read_text()[-2000:])
            yield url, written.name, written
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
            log.close()


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
    """The chapter opened in JupyterLab, its kernel idle, and "Run all" started: (page, console errors).

    Session-scoped, and started by the first browser test (conftest.py puts
    ``test_the_chapter_opens_in_jupyterlab_and_starts_running`` first and the test that reads the
    run last): the chapter runs in its kernel while the other tests open the built book."""
    url, name, path = lab
    page = browser_context.new_page()
    console: list[str] = []
    page.on("console", lambda m: m.type == "error" and console.append(m.text[:300]))
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    page.set_viewport_size({"width": 1300, "height": 900})
    page.goto(f"{url}/lab/workspaces/slr-test/tree/{name}?reset")
    page.wait_for_function(KERNEL_IDLE, timeout=120_000)
    cells = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")
    page.evaluate("() => { window.__ran = false; window.jupyterapp.commands.execute('notebook:run-all-cells')"
                  ".then(() => { window.__ran = true; }); }")
    try:
        yield page, console, cells
    finally:
        page.close()


def test_the_chapter_opens_in_jupyterlab_and_starts_running(lab_run, lab):
    page, console, cells = lab_run
    import nbformat

    assert cells == len(nbformat.read(lab[2], as_version=4).cells), "JupyterLab shows another number of cells"
    assert console == [], console


def test_chapter_renders_runs_and_its_slider_moves_in_jupyterlab(lab_run):
    page, console, _ = lab_run
    source = CHAPTER.read_text(encoding="utf-8")
    glued = len(re.findall(r"\{glue:text\}`", source))
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

