"""The built book in headless Chromium (Debian's `chromium`, driven by Playwright).

Pages are opened from disk (file:// URLs) with background networking off. Checks:
every page loads with no console error, no uncaught exception and no request leaving
the machine; the formulas of the chapter-3 page come typeset and drawn; moving a kernel-free slider changes
the figure shown; the search page answers. The chapters' checks read their one visit
(``visits.py``), shared with test_layout.py. Screenshots go to _build/screenshots/.
"""

from __future__ import annotations

import pytest

from layout import MIN_CONTENT_SHARE, OVERFLOWING_TABLES
from sitepaths import SCREENSHOTS, SITE, html_pages
from visits import MATH_CHAPTER, SLIDER_CHAPTERS, open_committed, wait_for_page, watch

PAGES = html_pages()
#: The chapters are opened, watched and photographed once each by visits.py (at two sizes); here the
#: other pages.
OTHER_PAGES = [p for p in PAGES if not (p.parent.name == "book" and p.name[:2].isdigit())]
OTHER_RELS = [str(p.relative_to(SITE)) for p in OTHER_PAGES]
#: Other pages opened ahead of their test, in the tests' order: Chromium loads and typesets them
#: while the current one is checked (measured on the 20 other pages of the book: 27-31 s with two
#: ahead, 33 s with none).
AHEAD = 3
_OPENING: dict[str, tuple] = {}


def open_page(context, path: str):
    """The page, loaded, and the list that collects its console errors, uncaught exceptions,
    failed requests and requests leaving the machine (visits.watch)."""
    page = context.new_page()
    errors = watch(page)
    page.goto((SITE / path).as_uri() if "?" not in path else (SITE / path.split("?")[0]).as_uri() + "?" + path.split("?", 1)[1])
    page.wait_for_load_state("load")
    return page, errors


def shot_name(rel: str) -> str:
    return rel.replace("/", "__").replace(".html", ".png")


@pytest.mark.skipif(not PAGES, reason=f"{SITE} has no built book: run `make book` first")
@pytest.mark.parametrize("rel", OTHER_RELS)
def test_page_loads_without_errors(browser_context, rel):
    page, errors = _OPENING.pop(rel, None) or open_committed(browser_context, rel)
    i = OTHER_RELS.index(rel)
    for later in OTHER_RELS[i + 1:i + 1 + AHEAD]:
        if later not in _OPENING:
            _OPENING[later] = open_committed(browser_context, later)
    try:
        wait_for_page(page)
        page.screenshot(path=str(SCREENSHOTS / shot_name(rel)), full_page=False)
        assert errors == [], f"{rel}: {errors}"
    finally:
        page.close()


@pytest.mark.visits(MATH_CHAPTER)
def test_math_is_typeset_on_chapter_3(chapter_visits):
    """The page loads no MathJax; its formulas come as SVG (book/_ext/typeset_math.py), and those of the
    first screen are drawn: each has a size, and each of its glyphs an outline."""
    report = chapter_visits(MATH_CHAPTER)  # the chapter's one visit (visits.py)
    math = report["math"]
    assert not math["mathjax_script"], "the page loads MathJax: its formulas should come typeset"
    assert math["typeset"] >= 20, f"only {math['typeset']} typeset formulas"
    assert math["drawn"]["shown"] >= 1 and math["drawn"]["drawn"] == math["drawn"]["shown"], math["drawn"]
    assert math["raw"] == [], f"untypeset {math['raw']} in the chapter text"
    assert report["errors"] == []


@pytest.mark.parametrize("rel", SLIDER_CHAPTERS)
def test_static_slider_changes_the_figure(chapter_visits, rel):
    report = chapter_visits(rel)  # the slider is moved during the chapter's one visit
    slider = report["slider"]
    assert slider["count"] >= 1, f"{rel} has no kernel-free slider"
    assert slider["moved_to"] in (slider["lo"], slider["hi"]) and slider["moved_to"] != slider["value"]
    assert slider["after_src"] != slider["before_src"], "moving the slider did not change the figure"
    # The frames are files of the book (book/_ext/slider_frames.py), loaded when shown.
    assert slider["after_src"].startswith("../_images/slr-frames/") and slider["after_src"].endswith(".png")
    assert (SITE / "book" / slider["after_src"]).resolve().is_file()
    assert slider["after_readout"] != slider["before_readout"]
    assert report["errors"] == []


def test_search_page_answers(browser_context):
    page, errors = open_page(browser_context, "search.html?q=attention")
    try:
        results = page.locator("#search-results ul.search li")
        results.first.wait_for(timeout=30_000)
        assert results.count() >= 1
        page.screenshot(path=str(SCREENSHOTS / "search_attention.png"))
        assert errors == [], errors
    finally:
        page.close()


CHAPTER_PAGES = [str(p.relative_to(SITE)) for p in PAGES if p.parent.name == "book" and p.name[:2].isdigit()]




@pytest.mark.skipif(not CHAPTER_PAGES, reason=f"{SITE} has no built book: run `make book` first")
def test_no_table_of_the_ledger_overflows_at_1300px(browser_context):
    """The chapters' tables are held by test_layout.py; here the ledger's."""
    rel = "book/verified.html"
    page, errors = open_page(browser_context, rel)
    try:
        page.set_viewport_size({"width": 1300, "height": 900})
        wait_for_page(page)
        overflowing = page.evaluate(OVERFLOWING_TABLES, MIN_CONTENT_SHARE)
        assert overflowing == [], f"{rel}: tables wider than the page at 1300 px: {overflowing}"
        assert errors == [], errors
    finally:
        page.close()
