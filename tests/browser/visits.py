"""Each chapter page opened once in Chromium, and everything the browser tests check on it measured then.

A visit loads the chapter at the phone's viewport (390 x 844: the load path a phone reader meets,
where slr-book.js marks the equations that scroll once MathJax is done), measures it (on one
chapter it opens the phone menu), widens the same page to 1300 x 900 (slr-book.js marks the
equations again on resize), measures it there, moves its kernel-free slider where it has one (on
one chapter it opens a fold of check verdicts), and last emulates print at an A4 text width. The
tests (``test_layout.py``, ``test_browser.py``) read the report; the page is not opened again.

The visits run in processes of their own (``python visits.py CHAPTER...``), :data:`VISITORS` of
them with a Chromium each, started with the test session (conftest.py). They share the chapters the
selected tests read (their ``rel`` parameter, or their ``visits`` marker), dealt in turn in the
tests' order, and each goes through its share two pages ahead: each report is written to
``_build/visits/<chapter>.json`` as soon as it is measured, and :func:`visit` waits for that file.
Meanwhile the test process checks the other pages in its own Chromium. Measured on 2 cores
(2026-11-29, pytest's time for the whole browser stage): 113.6 s with one visiting process, whose
visits then ended last (the test process idle for its last 35 s), 106.5 s and 107.0 s with two.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from layout import CODE, EQUATIONS, FIGURES, MIN_CONTENT_SHARE, OVERFLOWING_TABLES, RAW_MARKUP, SIDEWAYS, VERDICTS
from sitepaths import CHROMIUM_FLAGS, ROOT, SCREENSHOTS, SITE, chromium_path

DESKTOP = {"width": 1300, "height": 900}
PHONE = {"width": 390, "height": 844}
#: A printed page: A4 (210 mm) less Chromium's default margins (about 1 cm each), in CSS pixels.
PRINT = {"width": 718, "height": 1010}
#: Chapters whose screenshots (at both sizes) go to _build/screenshots/ for review.
SCREENSHOT_CHAPTERS = ("book/03_oracle_risk.html", "book/07_theorem5.html", "book/15_samples.html")
#: Chapters with a kernel-free slider (book/_ext/slider_frames.py), moved during the visit.
SLIDER_CHAPTERS = ("book/03_oracle_risk.html", "book/05_linear.html", "book/07_theorem5.html",
                   "book/08_beyond_manifold.html")
#: The chapter whose typesetting is checked in detail (test_browser.test_math_is_typeset_on_chapter_3),
#: and whose first fold of check verdicts is opened by a click and by a link to a verdict
#: (test_layout.test_a_fold_opens_to_its_verdicts_and_the_ledger_link_opens_it).
MATH_CHAPTER = "book/03_oracle_risk.html"
#: The chapter whose phone menu is opened (test_layout.test_phone_menu_opens_and_lists_the_chapters).
MENU_CHAPTER = "book/07_theorem5.html"
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome-error:")
#: How many times slr-book.js has marked the equations that scroll (once typeset, then 100 ms after
#: the last resize event); 0 before the first, and on a page with no display equation.
MARKED = "() => Number(document.documentElement.getAttribute('data-slr-marked') || 0)"
#: Is the dialog with this id open and shown?
DIALOG_OPEN = "id => { const d = document.getElementById(id); return !!d && d.open && d.checkVisibility(); }"

#: Pages opened ahead of their visit: Chromium loads and typesets the next chapter while the
#: current one is measured (two renderers on two cores).
AHEAD = 2

#: Visiting processes, each with its own Chromium, which share the chapters between them.
VISITORS = 2
#: Where the visiting processes write one report per chapter.
REPORTS_DIR = ROOT / "_build" / "visits"
#: Seconds a test waits for one chapter's report before it fails.
REPORT_TIMEOUT = 300.0

_REPORTS: dict[str, dict] = {}
_OPENING: dict[str, tuple] = {}
_VISITOR: dict[str, object] = {}


def watch(page) -> list[str]:
    """The list that collects the page's console errors, uncaught exceptions, failed requests and
    requests leaving the machine."""
    errors: list[str] = []
    page.on("console", lambda m: m.type == "error" and errors.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url} {r.failure}"))
    page.on("request", lambda r: r.url.startswith(LOCAL_SCHEMES) or errors.append(f"network request: {r.url}"))
    return errors


def wait_for_typesetting(page) -> None:
    """Until MathJax has typeset the page and slr-book.js has marked the equations that scroll."""
    if page.locator('script[src*="mathjax"]').count():
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30_000)
        page.evaluate("() => MathJax.startup.promise.then(() => true)")
        page.wait_for_function(f"() => !document.querySelector('div.math') || ({MARKED})() > 0", timeout=30_000)


def resize(page, viewport: dict) -> None:
    """The page at ``viewport``, once slr-book.js has marked the equations that scroll again."""
    before = page.evaluate(MARKED)
    page.set_viewport_size(viewport)
    if page.locator("div.math").count():
        page.wait_for_function(f"n => ({MARKED})() > n", arg=before, timeout=10_000)


def shot(page, rel: str, size: str) -> None:
    if rel in SCREENSHOT_CHAPTERS:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{rel.split('/')[-1][:-5]}_{size}.png"), full_page=False)


def _math(page) -> dict:
    text = page.locator("article").inner_text()
    page.locator("mjx-container[display='true']").first.scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "math_03_oracle_risk.png"))
    return {"version": page.evaluate("MathJax.version"), "typeset": page.locator("article mjx-container").count(),
            "raw": [raw for raw in ("$$", "\\(", "\\[", "\\begin{") if raw in text]}


def _slider(page, rel: str) -> dict:
    """Move the first kernel-free slider by a real key press; what changed."""
    figures = page.locator(".slr-slider-figure")
    out = {"count": figures.count()}
    if not out["count"]:
        return out
    figure = figures.first
    slider = figure.locator("input[type=range]").first
    image = figure.locator("img").first
    figure.scroll_into_view_if_needed()
    out["before_src"] = image.get_attribute("src")
    out["before_readout"] = figure.locator("output").first.inner_text()
    lo, hi, value = (int(slider.get_attribute(a)) for a in ("min", "max", "value"))
    out.update(lo=lo, hi=hi, value=value)
    slider.focus()
    page.keyboard.press("End" if value < hi else "Home")  # a real key press moves the range
    out["moved_to"] = int(slider.input_value())
    out["after_src"] = image.get_attribute("src")
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    out["after_readout"] = figure.locator("output").first.inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / ("slider_" + rel.replace("/", "__").replace(".html", ".png"))))
    return out


def _fold(page) -> dict:
    """Open the first fold of check verdicts by a click, close it, then open it by a link to its verdict."""
    fold = page.locator("article details.slr-checks").first
    fold.scroll_into_view_if_needed()
    summary = fold.locator("summary")
    verdict = fold.locator(".slr-check").first
    out = {"summary": summary.inner_text().strip(), "hidden_before": not verdict.is_visible()}
    summary.click()
    out.update(shown_on_click=verdict.is_visible(), verdict=verdict.inner_text(), anchor=verdict.get_attribute("id"))
    summary.click()  # folded again; then a link to the verdict (slr-book.js: on hashchange)
    out["hidden_again"] = not verdict.is_visible()
    page.evaluate("id => { window.location.hash = id; }", out["anchor"])
    out["shown_by_link"] = _shown_within(page, "id => document.getElementById(id).checkVisibility()", out["anchor"])
    page.evaluate("() => { document.querySelectorAll('article details.slr-checks').forEach(d => { d.open = false; });"
                  " history.replaceState(null, '', location.pathname); }")
    return out


def _menu(page) -> dict:
    """At the phone's width: open the menu (☰), read its chapter links, close it; open the contents."""
    toggles = [t for t in page.locator(".primary-toggle").all() if t.is_visible()]
    out = {"toggles": len(toggles)}
    if not toggles:
        return out
    toggles[0].click()
    out["open"] = _shown_within(page, DIALOG_OPEN, "pst-primary-sidebar-modal")
    if not out["open"]:
        return out
    dialog = page.locator("#pst-primary-sidebar-modal")
    out["links"] = dialog.locator("a.reference.internal").all_inner_texts()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "phone_menu.png"))
    page.keyboard.press("Escape")
    contents = [t for t in page.locator(".secondary-toggle").all() if t.is_visible()]
    out["contents"] = len(contents)
    if contents:
        contents[0].click()
        out["contents_open"] = _shown_within(page, DIALOG_OPEN, "pst-secondary-sidebar-modal")
        page.keyboard.press("Escape")
        page.locator("#pst-secondary-sidebar-modal").wait_for(state="hidden", timeout=5_000)
    return out


def open_committed(context, rel: str, viewport: dict | None = None):
    """A new page (at ``viewport``, else the context's) navigating to ``rel``, and the list of its errors
    (:func:`watch`); returns once the navigation is committed, so that Chromium loads the page meanwhile."""
    page = context.new_page()
    errors = watch(page)
    if viewport is not None:
        page.set_viewport_size(viewport)
    page.goto((SITE / rel).as_uri(), wait_until="commit")
    return page, errors


def _shown_within(page, expression: str, arg, timeout_ms: int = 5_000) -> bool:
    """Whether ``expression(arg)`` becomes true within ``timeout_ms`` (a finding, not an exception)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(expression, arg=arg, timeout=timeout_ms)
        return True
    except PlaywrightTimeout:
        return False


def _visit_order(selected: list[str] | None = None) -> list[str]:
    """The chapters in the order the tests visit them: test_browser.py's, then test_layout.py's; only
    those of ``selected`` when given (the chapters the session's tests read)."""
    chapters = sorted(str(p.relative_to(SITE)) for p in (SITE / "book").glob("[0-9][0-9]_*.html"))
    first = [MATH_CHAPTER] + [rel for rel in SLIDER_CHAPTERS if rel != MATH_CHAPTER]
    order = first + [rel for rel in chapters if rel not in first]
    return order if selected is None else [rel for rel in order if rel in selected]


def report_path(rel: str) -> Path:
    return REPORTS_DIR / (Path(rel).stem + ".json")


def start_visitor(chapters: list[str] | None = None) -> None:
    """Start the visiting processes (once): :data:`VISITORS` of them, which visit ``chapters`` (every
    chapter when None) between them, dealt in turn in the tests' order, and write each report."""
    if "processes" in _VISITOR:
        return
    order = _visit_order(chapters)
    _VISITOR["chapters"] = order
    if REPORTS_DIR.is_dir():
        for old in REPORTS_DIR.glob("*.json"):
            old.unlink()
    REPORTS_DIR.mkdir(parents=True, exist_ok=True)
    processes = []
    for share in (order[i::VISITORS] for i in range(VISITORS)):
        if not share:
            continue
        log = tempfile.TemporaryFile()
        process = subprocess.Popen([sys.executable, str(Path(__file__)), *share], stdout=log,
                                   stderr=subprocess.STDOUT, cwd=str(Path(__file__).parent))
        processes.append((process, log, share))
    _VISITOR["processes"] = processes


def stop_visitor() -> None:
    for process, _, _ in _VISITOR.pop("processes", []):
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


def _visitor_output(log) -> str:
    log.seek(0)
    return log.read().decode("utf-8", "replace")[-4000:]


def visit(rel: str) -> dict:
    """The measurements of one chapter page: its visiting process's report, waited for."""
    if rel in _REPORTS:
        return _REPORTS[rel]
    start_visitor()
    if rel not in _VISITOR["chapters"]:
        raise ValueError(f"{rel} is not among the chapters this session visits ({_VISITOR['chapters']}): "
                         "mark the test that reads it with @pytest.mark.visits(rel)")
    process, log = next((process, log) for process, log, share in _VISITOR["processes"] if rel in share)
    path = report_path(rel)
    deadline = time.monotonic() + REPORT_TIMEOUT
    while not path.is_file():
        if process.poll() is not None and not path.is_file():
            raise RuntimeError(f"the visiting process ended ({process.returncode}) with no report of {rel}:\n"
                               + _visitor_output(log))
        if time.monotonic() > deadline:
            raise TimeoutError(f"no report of {rel} after {REPORT_TIMEOUT:g} s:\n" + _visitor_output(log))
        time.sleep(0.05)
    report = json.loads(path.read_text(encoding="utf-8"))
    if "exception" in report:
        raise RuntimeError(f"visiting {rel} failed:\n{report['exception']}")
    _REPORTS[rel] = report
    return report


def _write_report(rel: str, report: dict) -> None:
    tmp = report_path(rel).with_suffix(".tmp")
    tmp.write_text(json.dumps(report), encoding="utf-8")
    os.replace(tmp, report_path(rel))  # whole, or not there


def _visit_all(selected: list[str] | None = None) -> int:
    """The visiting process: every chapter (or those ``selected``), in the tests' order, in a Chromium of
    its own."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="slr-visits-") as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(profile, executable_path=chromium_path(), headless=True,
                                                        args=CHROMIUM_FLAGS, viewport={"width": 1280, "height": 900})
        try:
            _VISITOR["order"] = _visit_order(selected)
            for rel in _VISITOR["order"]:
                try:
                    report = _measure(context, rel)
                except Exception:  # the test of this chapter fails with it; the others go on
                    report = {"exception": traceback.format_exc()}
                _write_report(rel, report)
        finally:
            context.close()
    return 0


def _measure(context, rel: str) -> dict:
    """Open one chapter page (unless opened ahead), measure it, close it; the next ones opened ahead."""
    page, errors = _OPENING.pop(rel, None) or open_committed(context, rel, PHONE)
    order = _VISITOR.get("order") or _visit_order()
    for later in [r for r in order[order.index(rel) + 1:] if r not in _OPENING][:AHEAD]:
        _OPENING[later] = open_committed(context, later, PHONE)
    try:
        page.wait_for_load_state("load")
        wait_for_typesetting(page)
        shot(page, rel, "390")
        report = {"phone": {"sideways": page.evaluate(SIDEWAYS), "equations": page.evaluate(EQUATIONS)}}
        if rel == MENU_CHAPTER:
            report["menu"] = _menu(page)

        resize(page, DESKTOP)
        shot(page, rel, "1300")
        report["desktop"] = {
            "equations": page.evaluate(EQUATIONS), "code": page.evaluate(CODE), "figures": page.evaluate(FIGURES),
            "verdicts": page.evaluate(VERDICTS), "raw": page.evaluate(RAW_MARKUP),
            "tables": page.evaluate(OVERFLOWING_TABLES, MIN_CONTENT_SHARE),
        }
        if rel == MATH_CHAPTER:
            report["math"] = _math(page)
            report["fold"] = _fold(page)
        if rel in SLIDER_CHAPTERS:
            report["slider"] = _slider(page, rel)

        page.emulate_media(media="print")
        resize(page, PRINT)
        report["printed"] = {"equations": page.evaluate(EQUATIONS)}
        report["errors"] = errors
    finally:
        page.close()
    return report


if __name__ == "__main__":
    sys.exit(_visit_all(sys.argv[1:] or None))
