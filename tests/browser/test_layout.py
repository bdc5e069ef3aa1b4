"""The page a reader reads: every chapter in Chromium at 1300×900 and at a 390×844 phone viewport.

On every chapter page (the measurements are in ``layout.py``; ``audit.py`` prints them all):

* at 1300 px no display equation is wider than its box, and no equation number overlaps its
  formula; at 390 px an equation that is wider scrolls inside its own box and shows that it
  does (edge shadows in its background and a scrollbar: slr-book.css); printed, every formula is whole;
* no line of code is wider than its block at 1300 px: code cells, the library's code the chapter
  includes, the code of its solutions and of its folded cells (opened for the measurement);
* every figure (slider frames included) is shown at ≥ 0.8 of the width it was drawn for, with
  twice the pixels (crisp on high-density screens), a numbered caption and an alt text that
  describes it (not a file path);
* a cell's check verdicts are folded: none is shown until its fold is opened;
* no page scrolls sideways at 390 px, and the phone menu opens and lists the chapters;
* no `$` or MyST role (``{prf:ref}``) is left unrendered in the text, no table is wider than
  the page (``layout.OVERFLOWING_TABLES``), and the page loads with no console error, no
  uncaught exception and no request leaving the machine.

Each chapter is opened once (``visits.py``: at 390 px, then widened to 1300 px, then printed);
the two tests per chapter read the same visit. Screenshots of chapters 3, 7 and 15 at both sizes
go to ``_build/screenshots/`` for review.
"""

from __future__ import annotations

import re

import pytest

from sitepaths import SCREENSHOTS, SITE, html_pages, parsed
from visits import MATH_CHAPTER, MENU_CHAPTER, PRINT

PAGES = html_pages()
CHAPTERS = [str(p.relative_to(SITE)) for p in PAGES if p.parent.name == "book" and p.name[:2].isdigit()]
#: A figure is shown at no less than this share of the width it was drawn for.
MIN_FIGURE_SCALE = 0.8
#: Pixels per shown pixel of a figure: 2 (high-density screens), up to PNG rounding.
MIN_FIGURE_DENSITY = 1.9

needs_book = pytest.mark.skipif(not CHAPTERS, reason=f"{SITE} has no built book: run `make book` first")


def _eq(e: dict) -> str:
    return f"{e['id'] or 'unlabelled'} ({e['width']} px in {e['box']} px)"


@needs_book
@pytest.mark.parametrize("rel", CHAPTERS)
def test_chapter_at_1300px(chapter_visits, rel):
    report = chapter_visits(rel)
    desktop = report["desktop"]
    equations = desktop["equations"]
    assert equations, f"{rel}: no display equation measured"
    wide = [_eq(e) for e in equations if e["wider"] or e["outside"]]
    assert not wide, f"{rel}: {len(wide)} display equations wider than the column at 1300 px: {wide}"
    errors_tex = [_eq(e) for e in equations if e["error"]]
    assert not errors_tex, f"{rel}: MathJax could not typeset {errors_tex}"
    overlaps = [_eq(e) for e in equations if e["overlap"]]
    assert not overlaps, f"{rel}: equation numbers overlap their formulas: {overlaps}"

    wide_code = [f"{c['first']!r} ({c['longest']} characters, {c['chars']} fit)" for c in desktop["code"] if c["wide"]]
    assert not wide_code, f"{rel}: {len(wide_code)} code blocks have lines wider than the block: {wide_code[:3]}"

    figures = desktop["figures"]
    small = [f"{f['src']}… shown {f['shown']} of {f['drawn']} px" for f in figures if f["scale"] < MIN_FIGURE_SCALE]
    assert not small, f"{rel}: figures shown below {MIN_FIGURE_SCALE} of their drawn width: {small}"
    blurry = [f"{f['caption'][:40]!r}: {f['density']:.2f}" for f in figures if f["density"] < MIN_FIGURE_DENSITY]
    assert not blurry, f"{rel}: figures without 2× pixels: {blurry}"
    uncaptioned = [f["src"] for f in figures if not (f["caption"] and f["numbered"])]
    assert not uncaptioned, f"{rel}: figures without a numbered caption: {uncaptioned}"
    no_alt = [f["caption"][:40] for f in figures if len(f["alt"]) < 15 or f["altIsPath"]]
    assert not no_alt, f"{rel}: figures without an alt text that describes them: {no_alt}"

    verdicts = desktop["verdicts"]
    assert verdicts["total"] >= 1 and verdicts["failed"] == 0
    assert verdicts["visible"] == 0, f"{rel}: {verdicts['visible']} check verdicts shown unfolded"
    assert verdicts["folds"] >= 1

    assert not desktop["raw"], f"{rel}: unrendered markup in the text: {desktop['raw'][:5]}"
    assert desktop["tables"] == [], f"{rel}: tables wider than the page at 1300 px: {desktop['tables']}"
    assert report["errors"] == [], report["errors"]


@needs_book
@pytest.mark.parametrize("rel", CHAPTERS)
def test_chapter_at_390px_and_printed(chapter_visits, rel):
    report = chapter_visits(rel)
    sideways = report["phone"]["sideways"]
    assert sideways["scrollWidth"] <= sideways["width"] + 1, \
        f"{rel}: the page is {sideways['scrollWidth']} px wide at 390 px: {sideways['culprits']}"
    hidden = [_eq(e) for e in report["phone"]["equations"] if (e["wider"] and not e["shown"]) or e["outside"]]
    assert not hidden, f"{rel}: display equations cut at 390 px (no scrolling box that shows it): {hidden}"
    printed = [_eq(e) for e in report["printed"]["equations"] if e["wider"] or e["outside"]]
    assert not printed, f"{rel}: display equations cut when printed ({PRINT['width']} px of text): {printed}"
    assert report["errors"] == []


@needs_book
@pytest.mark.visits(MATH_CHAPTER)
def test_a_fold_opens_to_its_verdicts_and_the_ledger_link_opens_it(chapter_visits):
    fold = chapter_visits(MATH_CHAPTER)["fold"]  # opened during the chapter's one visit
    assert re.fullmatch(r"✓ \d+ checks?", fold["summary"]), fold["summary"]
    assert fold["hidden_before"], "a verdict shows before its fold is opened"
    assert fold["shown_on_click"] and fold["verdict"].startswith("✓")
    assert fold["hidden_again"], "a second click does not fold the verdicts again"
    assert fold["shown_by_link"], "a link to a verdict does not open its fold"


@needs_book
@pytest.mark.visits(MENU_CHAPTER)
def test_phone_menu_opens_and_lists_the_chapters(chapter_visits):
    report = chapter_visits(MENU_CHAPTER)  # opened during the chapter's one visit, at 390 px
    menu = report["menu"]
    assert menu["toggles"], "no visible menu button at 390 px"
    assert menu["open"], "the menu button does not open the menu"
    assert sum(bool(re.match(r"\d+\. ", t)) for t in menu["links"]) >= 16, menu["links"][:20]
    assert menu["contents"] == 0 or menu["contents_open"], "the contents button does not open the contents"
    assert report["errors"] == []


@needs_book
def test_search_ranks_the_chapter_first_and_shows_snippets(browser_context):
    page = browser_context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    try:
        for query, expected in (("Theorem 5", "book/07_theorem5.html"), ("softmax", "book/14_softmax.html")):
            page.goto((SITE / "search.html").as_uri() + "?q=" + query.replace(" ", "+"))
            results = page.locator("#search-results ul.search li")
            results.first.wait_for(timeout=30_000)
            page.wait_for_timeout(300)
            hrefs = [a.get_attribute("href") for a in page.locator("#search-results ul.search li > a").all()[:5]]
            assert hrefs and "book/api/" not in hrefs[0], f"{query!r}: first hits {hrefs}"
            assert any(expected in h for h in hrefs[:3]), f"{query!r}: {expected} not in the first three {hrefs}"
            snippets = page.locator("#search-results ul.search li p.context")
            snippets.first.wait_for(timeout=10_000)
            assert query.split()[0].lower() in snippets.first.inner_text().lower()
        # An identifier still finds its API entry first.
        page.goto((SITE / "search.html").as_uri() + "?q=oracle_risk")
        page.locator("#search-results ul.search li").first.wait_for(timeout=30_000)
        first = page.locator("#search-results ul.search li > a").first.get_attribute("href")
        assert first.startswith("book/api/") and "oracle_risk" in first, first
        page.screenshot(path=str(SCREENSHOTS / "search_theorem5.png"))
        assert errors == [], errors
    finally:
        page.close()


# ------------------------------------------------------------------ static checks of the HTML
@needs_book
@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(SITE)))
def test_no_link_to_a_placeholder_repository(page):
    soup = parsed(page)
    links = [a["href"] for a in soup.find_all("a", href=True) if "example/" in a["href"]]
    links += [t.get_text() for t in soup.find_all(string=re.compile(r"github\.com/example/"))]
    assert links == []
