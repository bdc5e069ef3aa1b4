"""The built book is self-contained: no script, style, font or image from the network.

Static checks of every page of _build/html (BeautifulSoup) and of the CSS it ships.
Plain outward links (<a href="https://...">) are allowed; anything the browser loads by
itself (script src, stylesheet/preload/icon links, img/iframe/source src, CSS url() and
@import) must be a relative path or a data: URL.
"""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup

from sitepaths import SITE, html_pages, parsed, sent_bytes, text_outside

NETWORK = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
CSS_URL = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"])([^'")\s]+)""", re.IGNORECASE)
LOADED_LINK_RELS = {"stylesheet", "preload", "modulepreload", "prefetch", "icon", "shortcut", "apple-touch-icon", "manifest"}
PAGES = html_pages()


def network_loads(html: str | BeautifulSoup) -> list[str]:
    soup = html if isinstance(html, BeautifulSoup) else BeautifulSoup(html, "html.parser")
    found = []
    for tag in soup.find_all(["script", "img", "iframe", "source", "audio", "video", "embed", "track", "input"]):
        for attr in ("src", "srcset", "poster"):
            value = tag.get(attr)
            if value and NETWORK.match(value):
                found.append(f"<{tag.name} {attr}={value}>")
    for tag in soup.find_all("object"):
        if tag.get("data") and NETWORK.match(tag["data"]):
            found.append(f"<object data={tag['data']}>")
    for tag in soup.find_all("link"):
        rels = {r.lower() for r in tag.get("rel", [])}
        href = tag.get("href", "")
        if rels & LOADED_LINK_RELS and NETWORK.match(href):
            found.append(f"<link rel={' '.join(sorted(rels))} href={href}>")
    css = [t.get_text() for t in soup.find_all("style")] + [t["style"] for t in soup.find_all(style=True)]
    for text in css:
        found += [f"CSS url {u}" for u in CSS_URL.findall(text) if NETWORK.match(u)]
    return found


def test_network_loads_detected():
    """The checker itself: it sees each kind of network load and allows plain links."""
    html = (
        '<script src="https://cdn.example/x.js"></script><link rel="stylesheet" href="//cdn/x.css">'
        '<img src="http://x/y.png"><style>@font-face{src:url(https://f/x.woff2)}</style>'
        '<a href="https://arxiv.org/abs/2410.01537">paper</a><script src="_static/ok.js"></script>'
        '<img src="data:image/png;base64,AAAA">'
    )
    assert len(network_loads(html)) == 4


@pytest.mark.skipif(not PAGES, reason=f"{SITE} has no built book: run `make book` first")
@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(SITE)))
def test_page_loads_nothing_from_the_network(page):
    assert network_loads(parsed(page)) == []


#: The roles WAI-ARIA deprecates (axe-core 4.14's ``aria-deprecated-role``), which docutils wrote on the
#: bibliography's entries (book/_ext/accessible_pages.py).
DEPRECATED_ROLES = {"directory", "doc-biblioentry", "doc-endnote"}


def test_no_page_uses_a_deprecated_role_and_the_bibliography_is_a_list(site):
    """axe-core checks the chapters and the preface in the browser (test_page_access.py); the roles of
    the other pages, which it found deprecated on the bibliography, are held here."""
    deprecated = [(page.name, tag.name, tag["role"]) for page in html_pages() for tag in parsed(page).find_all(role=True)
                  if tag["role"] in DEPRECATED_ROLES]
    assert deprecated == [], deprecated[:5]
    entries = parsed(site / "book" / "bibliography.html").select("article .citation")
    assert len(entries) >= 20 and all(e.get("role") == "listitem" and e.parent.get("role") == "list" for e in entries)


@pytest.mark.skipif(not PAGES, reason=f"{SITE} has no built book: run `make book` first")
@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(SITE)))
def test_page_has_one_copy_of_each_script_and_no_widget_state(page):
    """book/_ext/offline_assets: inline scripts once each, no inert ipywidgets state."""
    soup = parsed(page)
    head = [str(s) for s in (soup.head or soup).find_all("script")]
    assert len(head) == len(set(head)), "a script appears twice in <head>"
    assert not soup.find_all("script", type="application/vnd.jupyter.widget-state+json")


def test_static_css_loads_nothing_from_the_network(site):
    offenders = []
    for css in (site / "_static").rglob("*.css"):
        for url in CSS_URL.findall(css.read_text(encoding="utf-8", errors="replace")):
            if NETWORK.match(url):
                offenders.append(f"{css.relative_to(site)}: {url}")
    assert offenders == []


#: A formula as the build leaves it (book/_ext/typeset_math.py), and what it holds.
FORMULA = re.compile(r'<mjx-container class="MathJax" jax="SVG"[^>]*>(.*?)</mjx-container>', re.S)
GLYPH_REF = re.compile(r'xlink:href="#([^"]+)"')


@pytest.mark.skipif(not PAGES, reason=f"{SITE} has no built book: run `make book` first")
@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(SITE)))
def test_formulas_come_typeset(page):
    """No page loads MathJax or carries TeX for it to typeset: each formula is an SVG drawn from glyph
    outlines that the page holds, with MathJax's assistive MathML beside it for screen readers."""
    text = page.read_text(encoding="utf-8")
    soup = parsed(page)
    scripts = [s.get("src", "") for s in soup.find_all("script") if "mathjax" in (s.get("src", "") + s.get_text()).lower()]
    assert scripts == [], f"{page.name} loads MathJax: {scripts}"
    raw = [m.group(0)[:80] for m in re.finditer(r'class="math notranslate nohighlight"[^>]*>\s*(?:<span class="eqno">.*?</span>)?'
                                                  r'\s*\\[(\[]', text, re.S)]
    assert raw == [], f"{page.name}: formulas left as TeX: {raw[:3]}"
    formulas = FORMULA.findall(text)
    without_mathml = [f[:80] for f in formulas if "<mjx-assistive-mml" not in f or "<math" not in f]
    assert without_mathml == [], f"{page.name}: formulas with no MathML for a screen reader: {without_mathml[:3]}"
    hidden_svg = [f[:80] for f in formulas if not re.search(r'<svg[^>]*aria-hidden="true"', f)]
    assert hidden_svg == [], f"{page.name}: a formula's drawing is not hidden from screen readers: {hidden_svg[:3]}"
    defined = set(re.findall(r'<path id="([^"]+)"', text))
    missing = sorted(set(GLYPH_REF.findall(text)) - defined)
    assert missing == [], f"{page.name}: glyphs with no outline on the page: {missing[:5]}"


def test_the_formulas_style_sheet_is_in_the_build(site):
    css = site / "_static" / "slr-math.css"
    assert css.is_file() and "mjx-container" in css.read_text(encoding="utf-8")
    page = parsed(site / "book" / "03_oracle_risk.html")
    links = [link.get("href", "") for link in page.find_all("link", rel="stylesheet")]
    assert any("_static/slr-math.css" in href for href in links), links


def _repository_url() -> str:
    import yaml

    config = yaml.safe_load((SITE.parents[1] / "_config.yml").read_text(encoding="utf-8"))
    return str((config.get("repository") or {}).get("url") or "").strip()


def test_launch_buttons_follow_the_repository_setting(site):
    """A Binder button on every chapter when `repository.url` is set; none, and no word of Binder, when not."""
    url = _repository_url()
    preface = parsed(site / "book" / "index.html").select_one("article")
    for page in sorted((site / "book").glob("[0-9][0-9]_*.html")):
        soup = parsed(page)
        links = [a["href"] for a in soup.find_all("a", href=True) if a["href"].startswith("https://mybinder.org/v2/")]
        if url:
            repo = url.rstrip("/").split("github.com/")[-1]
            assert links and all(repo in link for link in links), f"{page.name}: launch links {links} for {url}"
        else:
            assert links == [], f"{page.name} has launch buttons, but _config.yml names no repository"
    assert ("Binder" in preface.get_text()) == bool(url)


def test_every_chapter_is_downloadable_as_ipynb(site):
    """The header's download menu offers the executed notebook (.ipynb) of each chapter."""
    import nbformat

    for page in sorted((site / "book").glob("[0-9][0-9]_*.html")):
        soup = parsed(page)
        links = [a["href"] for a in soup.find_all("a", href=True) if a["href"].endswith(page.stem + ".ipynb")]
        assert links, f"{page.name} offers no .ipynb download"
        notebook = (page.parent / links[0]).resolve()
        assert notebook.is_file(), f"{page.name}: {links[0]} is not in the build"
        nb = nbformat.read(notebook, as_version=4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code and any("slrlib" in c.source for c in code), f"{notebook.name} has no slrlib code"
        # Executed: with execute_notebooks: cache, a chapter taken from the cache must still
        # ship its outputs (book/_ext/cached_outputs.py).
        assert any(c.outputs for c in code), f"{notebook.name} has no outputs: not the executed notebook"
        assert nb.metadata.get("kernelspec", {}).get("language") == "python"


#: The most a page's HTML may send, gzipped as a web server sends it. A chapter of a thousand formulas
#: sends about 0.2 MB; an image or a slider's frames put inside a page (rather than in files beside it,
#: which test_page_access.py counts with everything else the page loads) would exceed it.
PAGE_HTML_BYTES = 400_000


@pytest.mark.skipif(not PAGES, reason=f"{SITE} has no built book: run `make book` first")
@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(SITE)))
def test_page_html_within_budget(page):
    sent = sent_bytes(page)
    assert sent <= PAGE_HTML_BYTES, f"{page.name}: {sent:,} bytes gzipped (at most {PAGE_HTML_BYTES:,})"


def test_no_chapter_shows_a_warning_or_stderr(site):
    """No executed chapter shows output written to stderr (a Python warning, a library's message):
    execute_chapters.py fails the build on it; this holds it on the pages themselves."""
    for page in _chapter_pages(site):
        soup = parsed(page)
        stderr = [o.get_text(" ", strip=True)[:120] for o in soup.select("article div.output.stderr")]
        assert stderr == [], f"{page.name} shows stderr: {stderr}"
        warnings = [t[:120] for t in soup.select_one("article").find_all(string=re.compile(r"\w+Warning: "))]
        assert warnings == [], f"{page.name} shows a warning: {warnings}"


# ------------------------------------------------------------------ the ledger of checks
CHECKS = SITE.parent / "checks"


def _chapter_pages(site):
    return sorted((site / "book").glob("[0-9][0-9]_*.html"))


def test_every_chapter_recorded_checks_and_all_passed(site):
    """Each chapter made at least one check (slrlib.verify), every one passed, and each verdict is on its page."""
    import json

    pages = _chapter_pages(site)
    assert len(pages) >= 13
    for page in pages:
        ledger = CHECKS / f"{page.stem}.json"
        assert ledger.is_file(), f"{page.stem} recorded no checks ({ledger} is missing)"
        records = json.loads(ledger.read_text(encoding="utf-8"))
        assert records, f"{page.stem} made no check"
        failed = [r["claim"] for r in records if not r["passed"]]
        assert not failed, f"{page.stem}: failed checks {failed}"
        by_id = {tag["id"]: tag for tag in parsed(page).find_all(id=True)}
        for r in records:
            verdict = by_id.get(r["anchor"])
            assert verdict is not None and "slr-check-pass" in verdict.get("class", []), \
                f"{page.name}: verdict {r['anchor']} ({r['claim']!r}) is not on the page"


def test_ledger_page_links_every_check_to_its_verdict(site):
    import json

    soup = parsed(site / "book" / "verified.html")
    links = {a["href"] for a in soup.select("article a[href]")}
    total = 0
    for page in _chapter_pages(site):
        for r in json.loads((CHECKS / f"{page.stem}.json").read_text(encoding="utf-8")):
            assert f"{page.name}#{r['anchor']}" in links, f"the ledger does not link {page.name}#{r['anchor']}"
            total += 1
    assert f"{total} checks in" in soup.select_one("article").get_text()


def test_reproducibility_page_reports_every_chapter_execution(site):
    soup = parsed(site / "book" / "reproducibility.html")
    text = soup.select_one("article").get_text()
    for page in _chapter_pages(site):
        assert page.stem in text, f"the execution table does not list {page.stem}"
    assert "jax" in text and "float64" in text


# ------------------------------------------------------------------ figures as drawn
def test_every_figure_was_drawn_for_the_column_and_legible(site):
    """Each figure of the executed chapters came through slrlib.book.display.figure_png: at most
    the column's width (its CSS width in the metadata, 2x pixels), no text below MIN_FONT_PT."""
    import base64
    import io
    import json

    from PIL import Image

    from slrlib.plots.style import COLUMN_WIDTH_IN, CSS_DPI, MIN_FONT_PT, PIXEL_RATIO

    executed = sorted((SITE.parent / "jupyter_execute" / "book").glob("[0-9][0-9]_*.ipynb"))
    assert len(executed) >= 13
    bad, count = [], 0
    for nb_path in executed:
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for i, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
            for output in cell.get("outputs", []):
                if "image/png" not in output.get("data", {}):
                    continue
                count += 1
                meta = output.get("metadata", {}).get("image/png", {})
                slr = meta.get("slr") or {}
                width = Image.open(io.BytesIO(base64.b64decode(output["data"]["image/png"]))).size[0]
                where = f"{nb_path.stem}, code cell {i}"
                if not slr:
                    bad.append(f"{where}: not drawn by figure_png (no size metadata)")
                    continue
                if slr["figure_width_in"] > COLUMN_WIDTH_IN + 1e-9 or meta["width"] > (COLUMN_WIDTH_IN + 0.2) * CSS_DPI:
                    bad.append(f"{where}: {slr['figure_width_in']} in, {meta['width']} px wide")
                if slr["min_font_pt"] is not None and slr["min_font_pt"] < MIN_FONT_PT:
                    bad.append(f"{where}: text at {slr['min_font_pt']} pt")
                if abs(width - PIXEL_RATIO * meta["width"]) > PIXEL_RATIO:
                    bad.append(f"{where}: {width} pixels for {meta['width']} CSS px")
    assert count >= 30 and bad == [], bad[:10]


#: A MyST role left as text ("{prf:ref}`...`" shows as "{prf:ref}" before a code span).
UNRENDERED_ROLE = re.compile(r"\{(?:prf:ref|eq|ref|numref|doc|cite(?::[a-z]+)?|glue(?::[a-z]+)?|math|term|eval)\}")


@pytest.mark.skipif(not PAGES, reason=f"{SITE} has no built book: run `make book` first")
@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(SITE)))
def test_no_markup_left_unrendered(page):
    """No `$` (an inline formula the parser did not take) and no MyST role in a page's text,
    outside formulas, code and outputs' code (every page; test_layout.py checks the chapters
    again in the browser)."""
    soup = parsed(page)
    main = soup.select_one("article") or soup
    text = text_outside(main, main.select("pre, code, script, style, span.math, div.math, .highlight, textarea, "
                                          "kbd, samp, dt.sig, span.pre"))  # an API signature shows defaults as code
    found = [text[max(0, m.start() - 50):m.end() + 50] for m in re.finditer(r"\$|" + UNRENDERED_ROLE.pattern, text)]
    assert found == [], found[:5]


# ------------------------------------------------------------------ orientation
def test_every_chapter_opens_with_its_guide_and_ends_with_a_summary(site):
    """The guide box (book/_ext/chapter_guide.py) first, with what it shows, what it needs and a
    reading time, and how long it executed with how many checks (test_status_page.py checks the numbers);
    a "Summary" section last but for the exercises and further questions."""
    for page in _chapter_pages(site):
        soup = parsed(page)
        article = soup.select_one("article")
        guide = article.select_one(".slr-chapter-guide")
        assert guide is not None, f"{page.name} has no chapter guide"
        first_section = article.select_one("section section")
        assert first_section is None or guide.sourceline < first_section.sourceline, \
            f"{page.name}: the guide is not at the top"
        fields = {" ".join(dt.get_text().split()).rstrip(":").strip(): " ".join(dd.get_text().split())
                  for dt, dd in zip(guide.select("dt"), guide.select("dd"))}
        assert set(fields) == {"Shows", "Needs", "Reading", "Executed"}, (page.name, fields)
        assert re.fullmatch(r"in \d+ s, \d+ checks", fields["Executed"]), fields["Executed"]
        assert len(fields["Shows"]) > 40
        assert re.fullmatch(r"about \d+ min \([\d ]+ words of prose\)", fields["Reading"]), fields["Reading"]
        assert fields["Needs"] == "the preface only" or re.fullmatch(r"Chapter \d+(, Chapter \d+)*", fields["Needs"])
        titles = [h.get_text(" ", strip=True).rstrip("#").strip() for h in article.select("section > h2")]
        assert any(t.split(" ", 1)[-1] == "Summary" for t in titles), f"{page.name} has no Summary: {titles}"


def test_the_preface_maps_the_chapters_and_the_core_path(site):
    soup = parsed(site / "book" / "index.html")
    table = soup.select_one("table.slr-chapter-map")
    assert table is not None
    rows = [[td.get_text(" ", strip=True) for td in tr.select("td")] for tr in table.select("tbody tr")]
    assert [r[0] for r in rows] == [str(i) for i in range(1, len(_chapter_pages(site)) + 1)]
    core = [int(r[0]) for r in rows if r[3] == "core"]
    assert core == [1, 2, 3, 4, 5, 6, 7, 9]
    assert all(r[3] in ("core", "extension") for r in rows)
    assert all(re.fullmatch(r"\d+ min", r[4]) for r in rows)
    # Prerequisites come before: the map is a reading order.
    for r in rows:
        assert all(int(n) < int(r[0]) for n in re.findall(r"\d+", r[2])), r


def test_the_papers_results_carry_the_papers_numbers(site):
    """Proposition 8 of the paper is "Proposition 8" on its box and in every reference to it."""
    soup = parsed(site / "book" / "07_theorem5.html")
    box = soup.find(id="prop-t5-descent") or soup.select_one("div.proof.slr-paper")
    boxes = soup.select("div.proof.slr-paper")
    numbers = [b.select_one(".caption-number").get_text(strip=True) for b in boxes]
    assert "Proposition 8" in numbers and "Theorem 5" in numbers, numbers
    assert box is not None
    refs = [a.get_text(" ", strip=True) for a in soup.select("a.reference") if "#prop-t5-descent" in a.get("href", "")]
    assert refs and all(r == "Proposition 8" for r in refs), refs
    # The book's own boxes keep the chapter's numbering, from 1 without gaps.
    own = [b.select_one(".caption-number").get_text(strip=True) for b in soup.select("div.proof")
           if "slr-paper" not in b.get("class", []) and b.select_one(".caption-number")]
    assert all(re.fullmatch(r"[A-Z][a-z]+ 7\.\d+", n) for n in own), own
