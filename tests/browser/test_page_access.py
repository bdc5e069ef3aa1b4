"""Every reader can use the book, and a page does not cost a phone reader more than it must.

* axe-core (pinned in package-lock.json) finds no violation of the WCAG 2.1 A and AA rules on any
  chapter or the preface, in light mode and, for the rules on colours, in dark mode (the chapters are
  checked during their one visit, ``visits.py``, after a scroll through the page; of a chapter's many
  copies of one markup, the first formulas, the first token of each class of its code, one output
  table of each kind and the verdicts of its first fold: ``visits.SET_ASIDE`` says why; the theme's
  frame, the same on every page, is checked on the preface);
* the page's controls work by keyboard alone: a fold of verdicts, a solution, a folded code cell
  (chapter 3), the phone menu (chapter 7), a slider (``test_browser.test_static_slider_changes_the_figure``
  moves it by a key press); and the theme's controls still work after what was cut from it
  (``book/_ext/light_pages.py``): the sidebar, search, the download menu, the colour-mode switch;
* a chapter page, with every figure and font it loads as it is read to the end, sends at most
  :data:`PAGE_BYTES`, counted as a web server that gzips text sends it; it loads neither MathJax, nor
  Font Awesome's script, nor the search index (``book/_ext/typeset_math.py``, ``light_pages.py``).
"""

from __future__ import annotations

import pytest

from sitepaths import SITE, html_pages
from visits import MATH_CHAPTER, MENU_CHAPTER, accessibility, open_committed, wait_for_page, SCROLL_THROUGH

PAGES = html_pages()
CHAPTERS = [str(p.relative_to(SITE)) for p in PAGES if p.parent.name == "book" and p.name[:2].isdigit()]
#: The most a chapter page may send (issue 40): 1.5 MB, gzipped as a server sends text.
PAGE_BYTES = 1_500_000
#: Files no page of the book loads any more.
NOT_LOADED = ("fontawesome.js", "searchindex.js", "tex-chtml.js", "fa-solid-900")

needs_book = pytest.mark.skipif(not CHAPTERS, reason=f"{SITE} has no built book: run `make book` first")


def _violations(found: list[dict]) -> str:
    return "; ".join(f"{v['id']} ({v['count']}): {v['nodes']}" for v in found)


@needs_book
@pytest.mark.parametrize("rel", CHAPTERS)
def test_chapter_has_no_accessibility_violation(chapter_visits, rel):
    axe = chapter_visits(rel)["axe"]
    checked = axe["checked"]
    assert checked["formulas"] >= 1 and checked["token_classes"] >= 5 and checked["verdicts_shown"] >= 1, checked
    assert axe["light"] == [], f"{rel}, light mode: {_violations(axe['light'])}"
    assert axe["dark"] == [], f"{rel}, dark mode: {_violations(axe['dark'])}"


@needs_book
def test_preface_has_no_accessibility_violation(browser_context):
    page, errors = open_committed(browser_context, "book/index.html", {"width": 1300, "height": 900})
    try:
        page.bring_to_front()  # (a tab behind others gets no animation frames, which the scroll waits for)
        wait_for_page(page)
        page.evaluate(SCROLL_THROUGH)
        axe = accessibility(page)
        assert axe["light"] == [], f"preface, light mode: {_violations(axe['light'])}"
        assert axe["dark"] == [], f"preface, dark mode: {_violations(axe['dark'])}"
        assert errors == [], errors
    finally:
        page.close()


#: Pages other than the chapters whose markup no chapter has: the bibliography (docutils' citations) and
#: the indexes of proofs and modules (Sphinx's index tables), each of which axe-core once found at fault
#: (a deprecated role; a letter row grey in dark mode). The API reference, the other appendices, the
#: general index and search are checked by ``audit.py --axe``, not here: together about 25 s.
OTHER_PAGES = ["book/bibliography.html", "prf-prf.html", "py-modindex.html"]


@needs_book
@pytest.mark.parametrize("rel", OTHER_PAGES)
def test_other_page_has_no_accessibility_violation(browser_context, rel):
    page, errors = open_committed(browser_context, rel, {"width": 1300, "height": 900})
    try:
        page.bring_to_front()
        wait_for_page(page)
        page.evaluate(SCROLL_THROUGH)
        axe = accessibility(page, frame=False)  # (the frame: checked on the preface)
        assert axe["light"] == [], f"{rel}, light mode: {_violations(axe['light'])}"
        assert axe["dark"] == [], f"{rel}, dark mode: {_violations(axe['dark'])}"
        assert errors == [], errors
    finally:
        page.close()


#: A page that breaks axe-core's rules on colours as a chapter could, many times over: grey text on white
#: (color-contrast) after many paragraphs of the same kind that pass; a link told from its text by a
#: colour too close to the text's (link-in-text-block); text that fails in dark mode only; and a kind
#: whose first element axe-core cannot decide (half under another element), so that only a later one of
#: its kind shows the violation.
SAMPLE_PAGE = """<!doctype html><html lang="en" data-theme="light" data-mode="light"><head><title>sample</title>
<style>
  body { font: 16px sans-serif; color: #222; background: #fff; }
  a { color: #0645ad; text-decoration: underline; }
  .faint { color: #b0b0b0; }
  .plain a { color: #555; text-decoration: none; }
  html[data-theme=dark] body { color: #eee; background: #111; }
  html[data-theme=dark] .dim { color: #3a3a3a; }
  .box { position: relative; }
  .cover { position: absolute; left: 0; top: 0; width: 50%; height: 100%; background: #000; }
</style></head><body><main>
  <h1>A page to check</h1>
  {fine}
  <p class="dim">Readable in light mode only.</p>
  <div class="box"><div class="cover"></div><p class="faint">Half under a box: undecided.</p></div>
  <div class="box"><p class="faint">The same grey, in the open: a violation.</p></div>
  <p class="plain">A paragraph long enough to be a block of text, with <a href="#x">a link</a> told from the
  words around it by a colour too close to theirs, and by nothing else: no underline, no border, no weight.</p>
</main></body></html>""".replace("{fine}", "\n".join(f"<p>Paragraph {i}, with <a href='#p{i}'>a link</a> in it.</p>"
                                                     for i in range(40)))


def test_axe_sample_finds_what_every_element_finds(browser_context):
    """The sample of the rules on colours (visits.AXE_SAMPLE: one element of each kind) finds the rules
    and kinds that checking every element finds, the one behind an undecided element included, and
    spares the elements of kinds already checked."""
    found = {}
    for sample in (True, False):
        page = browser_context.new_page()
        try:
            page.set_content(SAMPLE_PAGE)
            found[sample] = accessibility(page, sample=sample)
        finally:
            page.close()
    every, sampled = found[False], found[True]
    for mode in ("light", "dark"):
        assert {v["id"] for v in sampled[mode]} == {v["id"] for v in every[mode]}, (mode, sampled[mode], every[mode])
    assert {v["id"] for v in every["light"]} == {"color-contrast", "link-in-text-block"}, every["light"]
    assert [v["id"] for v in every["dark"]] == ["color-contrast"], every["dark"]
    # Light: the open grey paragraph, found through the retry of its kind (its first element undecided).
    light = {v["id"]: v for v in sampled["light"]}
    assert any("faint" in node for node in light["color-contrast"]["nodes"]), light["color-contrast"]
    assert sampled["sample_light"]["kinds_retried"] >= 1, sampled["sample_light"]
    spared = sampled["sample_light"]["rules"]
    assert spared["color-contrast"]["spared"] >= 40 and spared["link-in-text-block"]["spared"] >= 30, spared


@needs_book
@pytest.mark.parametrize("rel", CHAPTERS)
def test_chapter_page_sends_at_most_1_5_MB(chapter_visits, rel):
    sent = chapter_visits(rel)["sent"]
    assert any(name.endswith(rel) for name in sent), f"{rel} is not among the files it loaded: {sorted(sent)[:5]}"
    total = sum(sent.values())
    largest = sorted(sent.items(), key=lambda item: -item[1])[:5]
    assert total <= PAGE_BYTES, f"{rel} sends {total:,} bytes (at most {PAGE_BYTES:,}); the largest: {largest}"
    heavy = [name for name in sent if any(part in name for part in NOT_LOADED)]
    assert heavy == [], f"{rel} loads {heavy}"


@needs_book
@pytest.mark.visits(MATH_CHAPTER)
def test_controls_work_by_keyboard(chapter_visits):
    keys = chapter_visits(MATH_CHAPTER)["keyboard"]
    assert keys["fold_reachable"] and keys["fold_opened"] and keys["fold_closed"], keys
    assert keys.get("solution_reachable") and keys.get("solution_opened"), keys
    assert keys.get("hidden_cell_reachable") and keys.get("hidden_cell_opened"), keys


@needs_book
@pytest.mark.visits(MATH_CHAPTER)
def test_the_themes_controls_still_work(chapter_visits):
    """What was cut from the theme (its icon script, the search index on every page, its pass over the
    page) breaks none of its controls: the sidebar, search, the download menu, the colour-mode switch."""
    controls = chapter_visits(MATH_CHAPTER)["controls"]
    assert controls["sidebar_links"] >= 16, controls
    assert controls["icons"] and all(i["width"] > 4 for i in controls["icons"]), controls["icons"]
    assert all(i["loaded"] for i in controls["icons"]), "the icon font is not loaded"
    assert controls["search_opens"] and controls["search_goes_to"].endswith("search.html"), controls
    assert controls["download_opens"], controls
    assert any(link.endswith(".ipynb") for link in controls["download_links"]), controls["download_links"]
    modes = controls["modes"]  # [mode, theme] before and after each of three clicks
    assert modes[0] == ["light", "light"], modes
    assert ["dark", "dark"] in modes[1:] and modes[-1] == modes[0], f"the switch does not cycle to dark and back: {modes}"


@needs_book
@pytest.mark.visits(MENU_CHAPTER)
def test_phone_menu_opens_by_keyboard(chapter_visits):
    menu = chapter_visits(MENU_CHAPTER)["menu"]
    assert menu["reachable"] and menu["open"], menu
