"""The built book in headless Chromium (Debian's `chromium`, driven by Playwright).

Pages are opened from disk (file:// URLs) with background networking off. Checks:
every page loads with no console error, no uncaught exception and no request leaving
the machine; math is typeset on the chapter-3 page; moving a kernel-free slider changes
the figure shown; the search page answers. Screenshots go to _build/screenshots/.
"""

from __future__ import annotations

import pytest

from sitepaths import SCREENSHOTS, SITE, html_pages

PAGES = html_pages()
#: The chapters are opened, watched and photographed by test_layout.py (at two sizes); here the
#: other pages.
OTHER_PAGES = [p for p in PAGES if not (p.parent.name == "book" and p.name[:2].isdigit())]
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome-error:")


class PageWatch:
    """Console errors, uncaught exceptions and non-local requests of one page."""

    def __init__(self, page):
        self.errors: list[str] = []
        self.requests: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        page.on("requestfailed", lambda r: self.errors.append(f"request failed: {r.url} {r.failure}"))
        page.on("request", lambda r: r.url.startswith(LOCAL_SCHEMES) or self.requests.append(r.url))


def open_page(context, path: str):
    page = context.new_page()
    watch = PageWatch(page)
    page.goto((SITE / path).as_uri() if "?" not in path else (SITE / path.split("?")[0]).as_uri() + "?" + path.split("?", 1)[1])
    page.wait_for_load_state("load")
    return page, watch


def wait_for_mathjax(page):
    """Returns once MathJax, where the page loads it, has typeset the page."""
    if page.locator('script[src*="mathjax"]').count() == 0:
        return
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30_000)
    page.evaluate("() => MathJax.startup.promise.then(() => true)")


def shot_name(rel: str) -> str:
    return rel.replace("/", "__").replace(".html", ".png")


@pytest.mark.skipif(not PAGES, reason=f"{SITE} has no built book: run `make book` first")
@pytest.mark.parametrize("rel", [str(p.relative_to(SITE)) for p in OTHER_PAGES])
def test_page_loads_without_errors(browser_context, rel):
    page, watch = open_page(browser_context, rel)
    try:
        wait_for_mathjax(page)
        page.wait_for_timeout(300)
        page.screenshot(path=str(SCREENSHOTS / shot_name(rel)), full_page=False)
        assert watch.errors == [], f"{rel}: {watch.errors}"
        assert watch.requests == [], f"{rel} requested from the network: {watch.requests}"
    finally:
        page.close()


def test_math_is_typeset_on_chapter_3(browser_context):
    page, watch = open_page(browser_context, "book/03_oracle_risk.html")
    try:
        wait_for_mathjax(page)
        assert page.evaluate("MathJax.version").startswith("3.")
        n = page.locator("article mjx-container").count()
        assert n >= 20, f"only {n} typeset formulas"
        text = page.locator("article").inner_text()
        for raw in ("$$", "\\(", "\\[", "\\begin{"):
            assert raw not in text, f"untypeset {raw!r} in the chapter text"
        page.locator("mjx-container[display='true']").first.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "math_03_oracle_risk.png"))
        assert watch.errors == [] and watch.requests == []
    finally:
        page.close()


@pytest.mark.parametrize("rel", ["book/03_oracle_risk.html", "book/05_linear.html", "book/07_theorem5.html", "book/08_beyond_manifold.html"])
def test_static_slider_changes_the_figure(browser_context, rel):
    page, watch = open_page(browser_context, rel)
    try:
        figures = page.locator(".slr-slider-figure")
        assert figures.count() >= 1, f"{rel} has no kernel-free slider"
        figure = figures.first
        slider = figure.locator("input[type=range]").first
        image = figure.locator("img").first
        figure.scroll_into_view_if_needed()
        before_src = image.get_attribute("src")
        before_readout = figure.locator("output").first.inner_text()
        lo, hi, value = (int(slider.get_attribute(a)) for a in ("min", "max", "value"))
        slider.focus()
        page.keyboard.press("End" if value < hi else "Home")  # a real key press moves the range
        assert int(slider.input_value()) in (lo, hi) and int(slider.input_value()) != value
        after_src = image.get_attribute("src")
        assert after_src != before_src, "moving the slider did not change the figure"
        # The frames are files of the book (book/_ext/slider_frames.py), loaded when shown.
        assert after_src.startswith("../_images/slr-frames/") and after_src.endswith(".png")
        assert (SITE / "book" / after_src).resolve().is_file()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
        assert figure.locator("output").first.inner_text() != before_readout
        page.screenshot(path=str(SCREENSHOTS / ("slider_" + shot_name(rel))))
        assert watch.errors == [] and watch.requests == []
    finally:
        page.close()


def test_search_page_answers(browser_context):
    page, watch = open_page(browser_context, "search.html?q=attention")
    try:
        results = page.locator("#search-results ul.search li")
        results.first.wait_for(timeout=30_000)
        assert results.count() >= 1
        page.screenshot(path=str(SCREENSHOTS / "search_attention.png"))
        assert watch.errors == [] and watch.requests == []
    finally:
        page.close()


CHAPTER_PAGES = [str(p.relative_to(SITE)) for p in PAGES if p.parent.name == "book" and p.name[:2].isdigit()]

# For each table in the article: is it (or a box between it and the article) wider than its
# box, or does it reach past the article's right edge?
# A table overflows when it or a box around it scrolls or it sticks out of the article; it is
# too close to overflowing when its narrowest layout (CSS min-content) takes more than
# MIN_CONTENT_SHARE of the article's width: another machine's fonts (system-ui) may be a tenth
# wider than this one's, and the project's CI saw tables overflow that fit here.
MIN_CONTENT_SHARE = 0.88
OVERFLOWING_TABLES = """(share) => {
  const article = document.querySelector('article');
  const frame = article.getBoundingClientRect();
  const out = [];
  for (const table of article.querySelectorAll('table')) {
    let box = table, scrolls = false;
    while (box && box !== article) {
      if (box.scrollWidth > box.clientWidth + 1) { scrolls = true; break; }
      box = box.parentElement;
    }
    const width = table.style.width;
    table.style.width = 'min-content';
    const narrowest = table.getBoundingClientRect().width;
    table.style.width = width;
    if (scrolls || table.getBoundingClientRect().right > frame.right + 1 || narrowest > share * frame.width) {
      out.push(`${(narrowest / frame.width).toFixed(3)} of the width: ` + table.innerText.slice(0, 80));
    }
  }
  return out;
}"""


@pytest.mark.skipif(not CHAPTER_PAGES, reason=f"{SITE} has no built book: run `make book` first")
def test_no_table_of_the_ledger_overflows_at_1300px(browser_context):
    """The chapters' tables are held by test_layout.py; here the ledger's."""
    rel = "book/verified.html"
    page, watch = open_page(browser_context, rel)
    try:
        page.set_viewport_size({"width": 1300, "height": 900})
        wait_for_mathjax(page)
        overflowing = page.evaluate(OVERFLOWING_TABLES, MIN_CONTENT_SHARE)
        assert overflowing == [], f"{rel}: tables wider than the page at 1300 px: {overflowing}"
        assert watch.errors == [] and watch.requests == []
    finally:
        page.close()
