"""Each chapter page opened once in Chromium, and everything the browser tests check on it measured then.

A visit loads the chapter at the phone's viewport (390 x 844: the load path a phone reader meets),
measures it (on one chapter it opens the phone menu), widens the same page to 1300 x 900, measures it
there, scrolls through it (as a reader does: the figures below the first screen load, and slr-book.js
makes the blocks that scroll reachable by keyboard as they near the screen) and counts the bytes the
page loaded, runs axe-core's WCAG 2.1 A and AA rules on it, in light mode and (the rule on colour
contrast) in dark mode, moves its kernel-free slider where it has one (on one chapter it opens a fold of check
verdicts and works the page's controls by keyboard), and last emulates print at an A4 text width.
The tests (``test_layout.py``, ``test_browser.py``, ``test_page_access.py``) read the report; the
page is not opened again.

The visits run in processes of their own (``python visits.py CHAPTER...``), :data:`VISITORS` of
them with a Chromium each, started with the test session (conftest.py). They share the chapters the
selected tests read (their ``rel`` parameter, or their ``visits`` marker), dealt in turn in the
tests' order, and each goes through its share two pages ahead: each report is written to
``_build/visits/<chapter>.json`` as soon as it is measured, and :func:`visit` waits for that file.
Meanwhile the test process checks the other pages in its own Chromium, and reads the reports last
(conftest.py). Measured on 2 cores (2026-11-29, pytest's time for the whole browser stage): 113.6 s
with one visiting process, whose visits then ended last (the test process idle for its last 35 s),
106.5 s and 107.0 s with two.
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
from sitepaths import AXE_SCRIPT, AXE_TAGS, CHROMIUM_FLAGS, ROOT, SCREENSHOTS, SITE, chromium_path, sent_bytes

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


#: The files each open page asked for (url -> path on disk), recorded from its first request.
_FILES: dict[int, dict] = {}


def watch(page) -> list[str]:
    """The list that collects the page's console errors, uncaught exceptions, failed requests and
    requests leaving the machine; the files it loads are recorded too (:func:`loaded_files`)."""
    errors: list[str] = []
    files = _FILES.setdefault(id(page), {})
    page.on("request", lambda r: r.url.startswith("file:") and files.setdefault(r.url.split("?")[0], _local_path(r.url)))
    page.on("console", lambda m: m.type == "error" and errors.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url} {r.failure}"))
    page.on("request", lambda r: r.url.startswith(LOCAL_SCHEMES) or errors.append(f"network request: {r.url}"))
    return errors


def wait_for_page(page) -> None:
    """Until the page has loaded and its fonts are ready (its formulas come typeset in the HTML:
    book/_ext/typeset_math.py)."""
    page.wait_for_load_state("load")
    page.evaluate("() => document.fonts.ready.then(() => true)")


def next_frames(page) -> None:
    """Return once the page has drawn two more frames (what was changed is laid out and painted)."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def resize(page, viewport: dict) -> None:
    """The page at ``viewport``, laid out again (a frame later)."""
    page.set_viewport_size(viewport)
    next_frames(page)


#: Scroll through the page, as a reader does, then back to the top: two screens at a step, so that every
#: part of the page comes within a screen of the one shown, the distance at which the book's script
#: makes a box that scrolls reachable by keyboard (slr-book.js) and closer than Chromium's for loading a
#: lazy image (1 250 px and more); the wait for every image to have loaded, at the end, holds the second.
#: (Given 1, a screen at a step: ``audit.py --axe`` on the API reference's long pages, whose sections
#: take their size as they are laid out, where two screens can step over a block.)
SCROLL_THROUGH = """async screens => {
  // (Two screens at a step unless told: Playwright passes null, not undefined, for no argument.)
  const step = (screens || 2) * window.innerHeight;
  for (let y = 0; y < document.documentElement.scrollHeight; y += step) {
    window.scrollTo(0, y);
    await new Promise(r => requestAnimationFrame(() => setTimeout(r, 10)));
  }
  window.scrollTo(0, 0);
  await Promise.all([...document.images].map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; })));
  await document.fonts.ready;
}"""

#: axe-core on the page (less the parts in ``exclude``, CSS selectors): the violations of the given
#: rules (all of AXE_TAGS when none), each with its first elements and axe's summary of what fails; the
#: elements of the sampled colour rules (:data:`AXE_SAMPLE`) that axe could not decide, but for text of
#: no letter or digit (a check mark), which it never decides; and how many elements the sample spared.
AXE_RUN = """async ({tags, rules, exclude, sample}) => {
  const only = rules ? {type: 'rule', values: rules} : {type: 'tag', values: tags};
  const context = exclude.length ? {include: [['html']], exclude: exclude.map(s => [s])} : document;
  // preload: false: axe would fetch the style sheets (for its rule on orientation), which a page opened
  // from disk may not do (a console error).
  const options = {runOnly: only, resultTypes: ['violations', 'incomplete'], preload: false};
  const S = window.__slrSample;
  S.reset(sample);
  const first = await axe.run(context, options);
  const sampled = Object.fromEntries(Object.entries(S.rules).map(([id, r]) => [id, {kinds: r.covered.size, spared: r.spared}]));
  // A kind whose element axe-core could not decide (text over another element, say) stands for nothing:
  // every element of that kind is checked, in a second run of the sampled rules.
  const undecided = result => result.incomplete.filter(v => v.id in S.rules).flatMap(v => v.nodes.map(n => ({rule: v.id, node: n})))
    .filter(({node}) => !node.any.some(c => /non-text characters/.test(c.message)));  // a check mark: never decided
  const retry = new Set(undecided(first).map(({node}) => S.keyOf.get(document.querySelector(node.target[0]))).filter(k => k));
  let results = [first];
  if (sample && retry.size) {
    const ids = Object.keys(S.rules).filter(id => first.incomplete.some(v => v.id === id));
    S.reset(true, retry);
    results.push(await axe.run(context, {...options, runOnly: {type: 'rule', values: ids}}));
  }
  const seen = new Set();
  const violations = {};
  for (const r of results) for (const v of r.violations) {
    const into = violations[v.id] = violations[v.id] || {id: v.id, count: 0, nodes: []};
    for (const n of v.nodes) {
      const where = n.target.join(' ');
      if (seen.has(v.id + where)) continue;
      seen.add(v.id + where);
      into.count++;
      if (into.nodes.length < 4) into.nodes.push(where + ': ' + (n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 240));
    }
  }
  return {violations: Object.values(violations), sampled, retried: retry.size,
          undecided: undecided(results[results.length - 1]).map(({rule, node}) => rule + ': ' + node.target.join(' '))};
}"""
#: axe-core's two rules on colours, each run on one element of every kind: of the elements a rule applies
#: to, the first whose kind it has not met yet. An element's kind is everything the rule's verdict reads
#: of it (axe-core 4.14's code): for color-contrast, the computed colour, size, weight and shadow of its
#: text, whether that text has a letter or digit, and the colours, images, opacity, filters and
#: positioning of it and of every element it sits in (what is painted beneath it, in a page whose
#: content flows, as the book's does); for link-in-text-block, the link's and its block's text
#: decoration, borders, fonts and colours (``elementIsDistinct``) with the same. Two elements of one kind
#: get one verdict: the sample checks every colour the page shows, on every background it shows it on
#: (chapter 16 in light mode: 77 kinds of text checked, 697 elements spared; 10 kinds of link, 70
#: spared). A kind whose element axe-core cannot decide is checked whole (:data:`AXE_RUN`), and
#: ``reset(false)`` (``audit.py --axe --whole``) turns the sample off: every element.
AXE_SAMPLE = """() => {
  if (window.__slrSample) return;
  const style = (el, props) => { const s = getComputedStyle(el); return props.map(p => s.getPropertyValue(p)).join(','); };
  const TEXT = ['color', 'opacity', 'font-size', 'font-weight', 'font-style', 'font-family', 'text-shadow',
                '-webkit-text-stroke-width', '-webkit-text-stroke-color', 'visibility'];
  const LINK = TEXT.concat(['display', 'text-decoration', 'text-decoration-line', 'text-decoration-style',
                            'background-image', 'border-bottom-style', 'border-bottom-width', 'border-bottom-color',
                            'border-top-style', 'border-top-width', 'border-top-color', 'outline-style',
                            'outline-width', 'outline-color']);
  const BENEATH = ['background-color', 'background-image', 'background-clip', 'opacity', 'filter',
                   'backdrop-filter', 'mix-blend-mode', 'position', 'z-index', 'transform', 'overflow'];
  const beneath = el => {  // it and every element it sits in (cached for one run: the mode changes them)
    if (!el) return '';
    let key = sample.beneath.get(el);
    if (key === undefined) { key = style(el, BENEATH) + '<' + beneath(el.parentElement); sample.beneath.set(el, key); }
    return key;
  };
  const BLOCK = ['block', 'list-item', 'table', 'flex', 'grid', 'inline-block'];  // axe-core's isBlock
  const block = el => {
    let b = el.parentElement;
    while (b) { const d = getComputedStyle(b).display; if (BLOCK.includes(d) || d.startsWith('table-')) return b; b = b.parentElement; }
    return null;
  };
  const ownText = el => { let t = ''; for (const n of el.childNodes) if (n.nodeType === 3) t += n.nodeValue; return t; };
  const FORMS = ['INPUT', 'SELECT', 'TEXTAREA'];
  const kinds = {
    // (An element with no text of its own, but a form's, is not color-contrast's: axe-core's
    // hasRealTextChildren; it is passed to the rule's own test without being sorted.)
    'color-contrast': el => {
      const text = ownText(el);
      if (!text.trim() && !FORMS.includes(el.tagName)) return null;
      return style(el, TEXT) + '|' + /[\\p{L}\\p{N}]/u.test(text) + '|' + beneath(el);
    },
    'link-in-text-block': el => { const b = block(el); return style(el, LINK) + '|' + (b ? style(b, LINK) : '') + '|' + beneath(el); },
  };
  const sample = window.__slrSample = {on: true, beneath: new Map(), keyOf: new Map(), retry: null, rules: {},
    reset(on, retry = null) {
      this.on = on; this.retry = retry; this.beneath.clear(); this.keyOf.clear();
      for (const r of Object.values(this.rules)) { r.covered.clear(); r.spared = 0; }
    }};
  for (const rule of axe._audit.rules.filter(r => r.id in kinds)) {
    const kind = kinds[rule.id], applies = rule.matches;
    const record = sample.rules[rule.id] = {covered: new Set(), spared: 0};
    rule.matches = function (node, virtualNode, context) {
      if (!sample.on) return applies.call(this, node, virtualNode, context);
      const key = kind(node);
      if (key === null) return applies.call(this, node, virtualNode, context);
      if (sample.retry ? !sample.retry.has(key) : record.covered.has(key)) { record.spared++; return false; }
      if (!applies.call(this, node, virtualNode, context)) return false;
      record.covered.add(key);
      sample.keyOf.set(node, key);
      return true;
    };
  }
}"""
#: The rules whose verdict depends on the colour mode: run again in dark mode. (axe's other rule on
#: colours, link-in-text-block, passes on an underline, and the book's links in text are underlined
#: in both modes: it runs in light mode, with every rule.)
AXE_COLOUR_RULES = ["color-contrast"]
#: The theme's frame around a chapter (header, sidebars, footer): the same template on every page,
#: checked whole on the preface (test_page_access.test_preface_has_no_accessibility_violation) and left
#: out of each chapter's run.
THEME_FRAME = [".bd-header", ".bd-sidebar-primary", ".bd-sidebar-secondary", ".bd-footer", ".prev-next-footer",
               ".bd-header-article", ".prev-next-area"]
#: What axe-core checks of the page's many copies of one kind of markup. Its time grows with the
#: elements of the page (chapter 16: 19 s for its 31 000), and three kinds make most of them, each the
#: same markup many times over:
#:
#: * formulas (a thousand in chapter 16), all from one renderer (book/_ext/typeset_math.py: an SVG hidden
#:   from screen readers and drawn in the text's colour, beside its MathML, which test_site.py checks on
#:   every formula of every page): the first AXE_FORMULAS are checked;
#: * highlighted code (8 000 spans in chapter 16), where each class of token has one colour on one
#:   background: the first token of each class is checked, in its block;
#: * the tables of the cells' outputs, where a cell's colours come from its classes: one table of each
#:   kind (its class and the tags and classes inside it) is checked.
#:
#: The others are set aside while axe-core runs (chapter 16: about 2 600 elements left, every section
#: laid out: :data:`LAID_OUT`), and put back. The first fold of check verdicts is opened meanwhile: its
#: verdicts' colours are checked too. The rules on colours then check one element of each kind
#: (:data:`AXE_SAMPLE`): about 2 s for both modes on the developers' machine, against 3-6 s for every
#: element (2026-12-07, 16 chapters: 32 s against 50 s in all).
AXE_FORMULAS = 20
SET_ASIDE = """keep => {
  const aside = window.__slrAside = [];
  // (Each stands in as a comment: no element for axe to walk.)
  const setAside = element => { const stand_in = document.createComment(''); element.replaceWith(stand_in); aside.push([stand_in, element]); };
  // (An inline formula goes with its span.math, which would be left empty: one element fewer each.)
  [...document.querySelectorAll('mjx-container')].slice(keep).forEach(f => {
    const wrapper = f.parentElement;
    setAside(wrapper.matches('span.math') && wrapper.children.length === 1 ? wrapper : f);
  });
  // Code: the first token of each class (its colour), in the block that has it; the other tokens
  // and the blocks left with none are set aside.
  const classes = new Set();
  let blocks = 0;
  for (const block of document.querySelectorAll('article div.highlight pre')) {
    let kept = false;
    for (const token of block.querySelectorAll('span[class]')) {
      if (classes.has(token.className)) setAside(token); else { classes.add(token.className); kept = true; }
    }
    if (kept) blocks++; else setAside(block);
  }
  const kinds = new Set();
  for (const table of document.querySelectorAll('article .cell_output table')) {
    const kind = table.className + '|' + [...new Set([...table.querySelectorAll('*')].map(e => e.tagName + '.' + e.className))].sort().join(' ');
    if (kinds.has(kind)) setAside(table); else kinds.add(kind);
  }
  // The verdicts of the first fold of checks, shown (the others are alike, and folded).
  const fold = document.querySelector('article details.slr-checks:not([open])');
  if (fold) { fold.open = true; window.__slrOpened = fold; }
  return {formulas: document.querySelectorAll('mjx-container').length, code_blocks: blocks, token_classes: classes.size,
          verdicts_shown: fold ? fold.querySelectorAll('.slr-check').length : 0,
          tables: kinds.size,
          elements: document.getElementsByTagName('*').length};
}"""
#: Every section laid out while axe-core runs (on: True), and back to being laid out as it nears the
#: screen (False). A section that content-visibility skips is not painted, and axe-core's colour rule
#: finds an element's background by what is painted under it: there it reported a link of chapter 4 in
#: dark mode on a light grey that no reader sees (a false violation), and it can as well miss a real one.
LAID_OUT = """on => {
  const old = document.getElementById('slr-laid-out');
  if (old) old.remove();
  if (on) {
    const style = document.createElement('style');
    style.id = 'slr-laid-out';
    style.textContent = '* { content-visibility: visible !important; }';  // whatever rule set it
    document.head.append(style);
  }
}"""
PUT_BACK = """() => { for (const [stand_in, element] of window.__slrAside || []) stand_in.replaceWith(element);
  if (window.__slrOpened) window.__slrOpened.open = false; }"""


#: No transitions: the theme fades colours in over 0.3 s, and a colour is measured the moment it is set.
NO_TRANSITIONS = "*, *::before, *::after { transition: none !important; }"


def set_mode(page, mode: str) -> None:
    """Light or dark, as the theme's switch sets it (the attributes its CSS reads), at once."""
    if not page.evaluate("() => !!document.getElementById('slr-no-transitions')"):
        page.add_style_tag(content=NO_TRANSITIONS)
        page.evaluate("() => { document.head.lastElementChild.id = 'slr-no-transitions'; }")
    page.evaluate("mode => { document.documentElement.dataset.theme = mode; document.documentElement.dataset.mode = mode; }",
                  mode)
    next_frames(page)


def accessibility(page, frame: bool = True, sample: bool = True) -> dict:
    """axe-core's violations in light mode (every rule of AXE_TAGS) and in dark mode (the rules on colours);
    with ``frame`` False, of the page less the theme's frame (:data:`THEME_FRAME`); with ``sample``, the
    rules on colours on one element of each kind (:data:`AXE_SAMPLE`). ``sample_light`` and ``sample_dark``:
    per rule, the kinds checked and the elements spared; the kinds checked whole because axe-core could not
    decide their element; and the elements it could still not decide (reported, as axe-core reports them)."""
    page.add_script_tag(path=str(AXE_SCRIPT))
    page.evaluate(AXE_SAMPLE)
    # (Set aside before every section is laid out, and put back after: the page is never laid out whole.)
    checked = page.evaluate(SET_ASIDE, AXE_FORMULAS)
    page.evaluate(LAID_OUT, True)
    exclude = [] if frame else THEME_FRAME
    out = {"checked": checked}
    try:
        for mode, rules in (("light", None), ("dark", AXE_COLOUR_RULES)):
            set_mode(page, mode)
            run = page.evaluate(AXE_RUN, {"tags": AXE_TAGS, "rules": rules, "exclude": exclude, "sample": sample})
            out[mode] = run["violations"]
            out[f"sample_{mode}"] = {"rules": run["sampled"], "kinds_retried": run["retried"], "undecided": run["undecided"]}
        set_mode(page, "light")
    finally:
        page.evaluate(LAID_OUT, False)
        page.evaluate(PUT_BACK)
    return out


def shot(page, rel: str, size: str) -> None:
    if rel in SCREENSHOT_CHAPTERS:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{rel.split('/')[-1][:-5]}_{size}.png"), full_page=False)


#: The text of the article outside code, scripts and formulas.
ARTICLE_TEXT = """() => {
  const walker = document.createTreeWalker(document.querySelector('article'), NodeFilter.SHOW_TEXT, {
    acceptNode: n => n.parentElement.closest('pre, code, script, style, mjx-container') ? NodeFilter.FILTER_REJECT
                                                                                       : NodeFilter.FILTER_ACCEPT});
  const parts = [];
  for (let n; (n = walker.nextNode());) parts.push(n.textContent);
  return parts.join('');
}"""


def _math(page) -> dict:
    # The article's text outside code (textContent: a section that content-visibility skips has no
    # innerText), where TeX delimiters left over would show.
    text = page.evaluate(ARTICLE_TEXT)
    page.locator("mjx-container[display='true']").first.scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "math_03_oracle_risk.png"))
    return {"mathjax_script": page.evaluate("() => !!window.MathJax || !!document.querySelector('script[src*=mathjax]')"),
            "typeset": page.locator("article mjx-container[jax='SVG'] > svg").count(),
            "drawn": page.evaluate(DRAWN_FORMULAS),
            "raw": [raw for raw in ("$$", "\\(", "\\[", "\\begin{") if raw in text]}


#: The formulas on the first screen: how many, and how many are drawn (their SVG has a size, and its
#: glyphs, <use> elements, have one: each refers to an outline on the page).
DRAWN_FORMULAS = """() => {
  const shown = [...document.querySelectorAll('article mjx-container > svg')].filter(svg => {
    const r = svg.getBoundingClientRect(); return r.bottom > 0 && r.top < window.innerHeight; });
  const drawn = shown.filter(svg => svg.getBoundingClientRect().width > 0 &&
    [...svg.querySelectorAll('use')].every(u => u.getBBox().width > 0 || u.getBBox().height > 0));
  return {shown: shown.length, drawn: drawn.length};
}"""


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


#: Can the element be reached by Tab (in the tab order, shown) and take the focus?
FOCUSABLE = """el => { el.focus(); return el.tabIndex >= 0 && !el.disabled && el.checkVisibility() && document.activeElement === el; }"""


def _keyboard(page) -> dict:
    """The page's controls worked by keyboard alone: a fold of verdicts (Enter opens, Enter closes), a
    solution (Enter on its button shows it), a folded code cell, a formula box or code block that scrolls."""
    out = {}
    fold = page.locator("article details.slr-checks > summary").first
    fold.scroll_into_view_if_needed()
    out["fold_reachable"] = fold.evaluate(FOCUSABLE)
    page.keyboard.press("Enter")
    out["fold_opened"] = fold.evaluate("s => s.parentElement.open")
    page.keyboard.press("Enter")
    out["fold_closed"] = not fold.evaluate("s => s.parentElement.open")
    button = page.locator("article .solution .toggle-button").first
    if button.count():
        button.scroll_into_view_if_needed()
        out["solution_reachable"] = button.evaluate(FOCUSABLE)
        page.keyboard.press("Enter")
        out["solution_opened"] = button.evaluate("b => !b.closest('.solution').classList.contains('toggle-hidden')")
        page.keyboard.press("Enter")
    hidden = page.locator("article details.hide > summary").first
    if hidden.count():
        hidden.scroll_into_view_if_needed()
        out["hidden_cell_reachable"] = hidden.evaluate(FOCUSABLE)
        page.keyboard.press("Space")
        out["hidden_cell_opened"] = hidden.evaluate("s => s.parentElement.open")
        page.keyboard.press("Space")
    return out


def _theme_controls(page) -> dict:
    """At 1300 px, the theme's controls with their icons (Font Awesome's font cut to the book's icons,
    book/_ext/light_pages.py): the contents in the sidebar, the search button opening its dialog, the
    download menu opening to its files, and the colour-mode switch turning the page dark."""
    out = {"sidebar_links": page.evaluate(
        "() => [...document.querySelectorAll('.bd-sidebar-primary a.reference.internal')].filter(a => a.checkVisibility()).length")}
    # Icons drawn: the icon font's glyph has a width (a missing glyph would be an empty box or nothing).
    out["icons"] = page.evaluate("""() => [...document.querySelectorAll('.fa-solid, .fas, .fa-regular, .fa-brands')]
      .filter(i => i.checkVisibility()).map(i => ({cls: i.className, width: i.getBoundingClientRect().width,
        font: getComputedStyle(i, '::before').fontFamily, loaded: document.fonts.check('900 16px "Font Awesome 6 Free"')}))""")
    search = page.locator("header .search-button__button").first
    search.click()
    out["search_opens"] = _shown_within(page, "() => document.getElementById('pst-search-dialog').open", None)
    out["search_goes_to"] = page.evaluate("() => document.querySelector('#pst-search-dialog form').getAttribute('action')")
    page.keyboard.press("Escape")
    download = page.locator(".dropdown-download-buttons button.dropdown-toggle").first
    download.click()
    out["download_opens"] = _shown_within(page, "() => document.querySelector('.dropdown-download-buttons .dropdown-menu').checkVisibility()", None)
    out["download_links"] = page.evaluate(
        "() => [...document.querySelectorAll('.dropdown-download-buttons .dropdown-menu a')].map(a => a.getAttribute('href'))")
    page.keyboard.press("Escape")
    # The switch cycles the theme's modes (light, auto, dark: auto follows the system, light here):
    # the theme the page shows after each click.
    mode = "() => [document.documentElement.dataset.mode, document.documentElement.dataset.theme]"
    out["modes"] = [page.evaluate(mode)]
    for _ in range(3):
        page.locator(".theme-switch-button").first.click()
        out["modes"].append(page.evaluate(mode))
    set_mode(page, "light")
    return out


def _menu(page) -> dict:
    """At the phone's width: open the menu (☰), read its chapter links, close it; open the contents."""
    toggles = [t for t in page.locator(".primary-toggle").all() if t.is_visible()]
    out = {"toggles": len(toggles)}
    if not toggles:
        return out
    out["reachable"] = toggles[0].evaluate(FOCUSABLE)
    page.keyboard.press("Enter")  # opened by keyboard, as by a tap
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
    files = _FILES.get(id(page), {})
    try:
        # The tab in front: the pages opened ahead came after it, and a tab behind them gets no
        # animation frames, which the measurements wait for.
        page.bring_to_front()
        clock = [time.perf_counter()]
        phases = {}

        def lap(name):
            clock.append(time.perf_counter())
            phases[name] = round(clock[-1] - clock[-2], 2)

        wait_for_page(page)
        lap("load")
        shot(page, rel, "390")
        report = {"phone": {"sideways": page.evaluate(SIDEWAYS), "equations": page.evaluate(EQUATIONS)}}
        if rel == MENU_CHAPTER:
            report["menu"] = _menu(page)

        lap("phone")
        resize(page, DESKTOP)
        shot(page, rel, "1300")
        report["desktop"] = {
            "equations": page.evaluate(EQUATIONS), "code": page.evaluate(CODE), "figures": page.evaluate(FIGURES),
            "verdicts": page.evaluate(VERDICTS), "raw": page.evaluate(RAW_MARKUP),
            "tables": page.evaluate(OVERFLOWING_TABLES, MIN_CONTENT_SHARE),
        }
        lap("desktop")
        page.evaluate(SCROLL_THROUGH)
        lap("scroll")
        report["sent"] = {url.split("/_build/html/")[-1]: sent_bytes(path) for url, path in files.items()
                          if path is not None and path.is_file()}
        report["axe"] = accessibility(page, frame=False)  # the frame: checked on the preface
        lap("axe")
        if rel == MATH_CHAPTER:
            report["math"] = _math(page)
            report["fold"] = _fold(page)
            report["keyboard"] = _keyboard(page)
            report["controls"] = _theme_controls(page)
        if rel in SLIDER_CHAPTERS:
            report["slider"] = _slider(page, rel)

        lap("controls")
        # The width first, then the medium: print lays out every section (content-visibility is off in
        # print), which is done once, at the printed width, and not first at the desktop's.
        resize(page, PRINT)
        page.emulate_media(media="print")
        next_frames(page)
        report["printed"] = {"equations": page.evaluate(EQUATIONS)}
        lap("print")
        report["phases"] = phases  # seconds each part of the visit took (for audit.py, not a test)
        report["errors"] = errors
    finally:
        _FILES.pop(id(page), None)
        page.close()
    return report


def _local_path(url: str) -> Path | None:
    from urllib.parse import unquote, urlparse

    parsed = urlparse(url)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


if __name__ == "__main__":
    sys.exit(_visit_all(sys.argv[1:] or None))
