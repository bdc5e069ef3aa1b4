"""The whole book as one PDF, printed by Chromium from the built HTML pages.

    python book/_ext/book_pdf.py [--html _build/html] [--out _build/pdf/book.pdf]

``make pdf`` runs it after ``make book``: it executes nothing and builds nothing again. It reads
the built pages of the table of contents (``_toc.yml``: the preface, the sixteen chapters, the
bibliography and the appendix, less the API reference, which the PDF says is left out), joins
their articles into one HTML document, ``_build/pdf/book.html``, with a title page and a table
of contents, and prints it with the headless Chromium that the browser tests use (Playwright):
A4, page numbers in the footer, the chapters as the PDF's outline (bookmarks), tagged.

Why this route, measured when it was chosen (the closing note of issue 41 has the numbers): the
pages already carry everything a reader sees, typeset — formulas as SVG (with their assistive
MathML), figures as images, numbered equations, theorems and figures, and the print rules of the
book's style sheet (``slr-book.css``, section 6: every formula and code line whole). Jupyter
Book's LaTeX route would need TeX from Debian (about 110 MB to download, 360 MB installed) and
would drop every HTML output of the chapters (the verdicts, the tables of ``slrlib.book.display``,
the sliders' frames).

What the join does to each page:

* every ``id`` becomes ``<page>--<id>`` (two pages may use the same section id), and every link
  to a page of the PDF becomes a link within it (``04_bayes.html#eq-x`` → ``#04_bayes--eq-x``);
  a link to a page left out (the API reference, the index, the search) keeps its text, unlinked;
* the formulas are set aside before the page is parsed and put back after (their SVG is most of
  a page's bytes), and the glyphs they share (``<use href="#MJX-…">``, one block per page in the
  book) are gathered into one block;
* a slider's figure shows its default frame, its controls replaced by a line saying what the
  slider moves and where the live one is;
* the folded checks show their one-line summary ("✓ 11 checks"), not the list;
* a solution is printed open (paper cannot unfold it), under its heading;
* the appendix "What this book verified" keeps its table of checks per chapter and leaves the
  list of every check (about 60 pages) to the HTML book.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import posixpath
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))

from check_ledger import commit_described  # noqa: E402  (the status page names the build's commit the same way)
#: The formulas (MathJax's SVG with its MathML), set aside while a page is parsed.
FORMULA = re.compile(r"<mjx-container\b.*?</mjx-container>", re.S)
#: A page's glyph block and each glyph in it (book/_ext/typeset_math.py).
GLYPH_BLOCK = re.compile(r'<svg id="slr-math-glyphs".*?</svg>', re.S)
GLYPH = re.compile(r'<path id="(MJX-[A-Za-z0-9-]+)" d="([^"]*)"></path>')
ARTICLE = re.compile(r'<article class="bd-article"[^>]*>(.*?)</article>', re.S)
LINK = re.compile(r"<link\b[^>]*>")
HREF = re.compile(r'href="([^"]+)"')
PLACEHOLDER = "slr-formula-{}"
#: Chromium as the browser tests start it (tests/browser/sitepaths.py): no background traffic.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: Documents of the table of contents left out of the PDF, by prefix.
LEFT_OUT = ("book/api/",)
#: The PDF's own rules, after the book's style sheets.
PDF_CSS = """
@page { size: A4; margin: 18mm 16mm 20mm 16mm; }
html { font-size: 13.33px !important; }  /* 10 pt */
html, body { background: #fff; }
/* Long code cells and tables break across pages rather than leave a page blank. */
div.cell, div.cell_input, div.cell_output, div[class*="highlight"], pre, table, .admonition, div.proof,
.solution { break-inside: auto !important; }
div.cell_input, div[class*="highlight"] { display: block !important; }
/* A box that scrolls cannot break across pages (Chromium prints it whole, on the next page, and
   leaves an empty frame behind): on paper nothing scrolls. */
pre, div.highlight, div.cell_output, div.output, .pst-scrollable-table-container {
  overflow: visible !important; max-height: none !important; }
h1, h2, h3, h4, .admonition-title, p.rubric { break-after: avoid; }
body { margin: 0; }
.bd-article { padding: 0 !important; max-width: none !important; }
section.slr-pdf-page { break-before: page; }
.slr-pdf-title { break-after: page; text-align: center; padding-top: 30vh; }
.slr-pdf-title h1 { font-size: 2.2rem; margin-bottom: 1rem; }
.slr-pdf-title p { font-size: 1.05rem; margin: .4rem 0; }
.slr-pdf-contents { break-after: page; }
.slr-pdf-contents ol { list-style: none; padding-left: 0; }
.slr-pdf-contents li.slr-pdf-part { font-weight: 600; margin-top: .8rem; }
.slr-pdf-contents li.slr-pdf-chapter { padding-left: 1.5rem; }
.slr-pdf-part-banner { font-size: .9rem; text-transform: uppercase; letter-spacing: .05em;
                       color: #555; margin: 0 0 .5rem; }
/* The checks: the summary line, not the list ("verdicts stay folded"). */
details.slr-checks:not([open]) { display: block !important; }
/* Solutions printed open, as a framed block under their heading. */
.toggle-hidden, .toggle-details__container, details.dropdown > *:not(summary) { display: block !important;
  visibility: visible !important; height: auto !important; opacity: 1 !important; }
.toggle-button, button.toggle-button { display: none !important; }
.slr-pdf-slider-note { font-size: .9rem; font-style: italic; margin: .2rem 0 .6rem; }
.headerlink, .copybtn, .slr-no-print { display: none !important; }
a { color: inherit; text-decoration: none; }
a[href^="#"] { color: #1258bd; }
"""


def toc_pages(root: Path = ROOT) -> list[tuple[str, str | None]]:
    """The documents of ``_toc.yml`` in reading order, each with its part's caption (None for the preface);
    the documents of :data:`LEFT_OUT` not included."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    pages: list[tuple[str, str | None]] = [(toc["root"], None)]

    def walk(entries, caption):
        for entry in entries or []:
            if not entry["file"].startswith(LEFT_OUT):
                pages.append((entry["file"], caption))
            walk(entry.get("sections"), caption)

    for part in toc.get("parts", []):
        walk(part.get("chapters"), part.get("caption"))
    return pages


def anchor(docname: str, fragment: str = "") -> str:
    """The id, in the joined document, of ``fragment`` on page ``docname`` (the page itself when empty)."""
    page = docname.replace("/", "-")
    return f"{page}--{fragment}" if fragment else page


def _resolve(docname: str, href: str) -> tuple[str, str]:
    """The target document (without ``.html``) and fragment of a relative link on page ``docname``."""
    path, _, fragment = href.partition("#")
    if not path:
        return docname, fragment
    target = posixpath.normpath(posixpath.join(posixpath.dirname(docname), path))
    return (target[:-5] if target.endswith(".html") else target), fragment


def slider_note(figure) -> str:
    """The line that replaces a slider's controls: what it moves, the value shown, where the live one is."""
    parts = []
    for label in figure.select("label"):
        name = label.select_one("span")
        readout = label.select_one("output")
        values = json.loads(label.select_one("script[data-labels]").string or "[]")
        if name is None or readout is None or not values:
            continue
        parts.append(f"{name.get_text(strip=True)} = {readout.get_text(strip=True)} "
                     f"(the slider moves it over {values[0]} … {values[-1]})")
    shown = "; ".join(parts) or "its default frame"
    return f"Shown at {shown}. The live slider is in the HTML book and in the chapter's notebook."


def join_page(docname: str, source: str, included: set[str], html_dir: Path, out_dir: Path,
              glyphs: dict[str, str], formulas: list[str]) -> str:
    """Page ``docname``'s article for the joined document (see the module's docstring)."""
    from bs4 import BeautifulSoup

    for block in GLYPH_BLOCK.findall(source):
        glyphs.update(GLYPH.findall(block))
    found = ARTICLE.search(source)
    if found is None:
        raise SystemExit(f"book_pdf: {docname}.html has no <article class=\"bd-article\">")

    def set_aside(match: re.Match) -> str:
        formulas.append(match.group(0))
        return f'<span id="{PLACEHOLDER.format(len(formulas) - 1)}"></span>'

    soup = BeautifulSoup(FORMULA.sub(set_aside, found.group(1)), "html.parser")
    for tag in soup.select("script, .headerlink, button.copybtn"):
        if tag.name == "script" and tag.get("type") == "application/json" and tag.find_parent(
                class_="slr-slider-figure"):
            continue
        tag.decompose()
    for figure in soup.select("div.slr-slider-figure"):
        note = soup.new_tag("p", attrs={"class": "slr-pdf-slider-note"})
        note.string = slider_note(figure)
        for tag in figure.select("label, script"):
            tag.decompose()
        figure.append(note)
    ledger = soup.select("div.slr-ledger-chapter")
    if ledger:  # the appendix "What this book verified": its summary; the full list stays in the HTML book
        note = soup.new_tag("p", attrs={"class": "slr-pdf-ledger-note"})
        note.string = (f"The list of every check, chapter by chapter ({len(ledger)} tables), is in the HTML book; "
                       "in this PDF each cell's checks print as one line under the cell.")
        ledger[0].insert_before(note)
        for table in ledger:
            table.decompose()
    for tag in soup.find_all(id=True):
        if not tag["id"].startswith("slr-formula-"):
            tag["id"] = anchor(docname, tag["id"])
    for tag in soup.find_all(src=True):
        if re.match(r"^[a-z]+:", tag["src"]):
            continue
        target = (html_dir / posixpath.dirname(docname) / tag["src"]).resolve()
        tag["src"] = os.path.relpath(target, out_dir)
        tag.attrs.pop("loading", None)
    for link in soup.find_all("a", href=True):
        href = link["href"]
        if re.match(r"^[a-z]+:", href):
            continue
        target, fragment = _resolve(docname, href)
        if target in included:
            link["href"] = "#" + anchor(target, fragment)
        else:
            link.unwrap()
    text = str(soup)
    return re.sub(r'<span id="slr-formula-(\d+)"></span>', lambda m: formulas[int(m.group(1))], text)


def book_settings(root: Path = ROOT) -> dict:
    import yaml

    return yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))


def joined_document(html_dir: Path, out_dir: Path) -> tuple[str, list[tuple[str, str]]]:
    """The whole book as one HTML document, and its chapters (anchor, title) for the record."""
    from bs4 import BeautifulSoup

    pages = toc_pages()
    if os.environ.get("SLR_PDF_ONLY"):  # a quick look at some pages while working on this script
        pages = [p for p in pages if p[0].split("/")[-1] in os.environ["SLR_PDF_ONLY"].split(",")]
    included = {doc for doc, _ in pages}
    glyphs: dict[str, str] = {}
    formulas: list[str] = []
    sections, contents, titles = [], [], []
    stylesheets: list[str] = []
    part = None
    for docname, caption in pages:
        path = html_dir / f"{docname}.html"
        source = path.read_text(encoding="utf-8")
        if not stylesheets:
            for link in LINK.findall(source):
                href = HREF.search(link)
                if 'rel="stylesheet"' in link and href and not re.match(r"^[a-z]+:", href := href.group(1)):
                    target = (html_dir / posixpath.dirname(docname) / href.split("?")[0]).resolve()
                    stylesheets.append(os.path.relpath(target, out_dir))
        body = join_page(docname, source, included, html_dir, out_dir, glyphs, formulas)
        h1 = BeautifulSoup(body[:body.find("</h1>") + 5], "html.parser").find("h1") if "</h1>" in body else None
        title = re.sub(r"\s+", " ", h1.get_text(" ", strip=True)).replace("#", "").strip() if h1 else docname
        banner = ""
        if caption != part and caption is not None:
            contents.append(f'<li class="slr-pdf-part">{html.escape(caption)}</li>')
            banner = f'<p class="slr-pdf-part-banner">{html.escape(caption)}</p>'
        part = caption
        contents.append(f'<li class="slr-pdf-chapter"><a href="#{anchor(docname)}">{html.escape(title)}</a></li>')
        titles.append((anchor(docname), title))
        sections.append(f'<section class="slr-pdf-page" id="{anchor(docname)}">{banner}{body}</section>')
    settings = book_settings()
    url = ((settings.get("repository") or {}).get("url") or "").strip()
    where = (f"The HTML book, with its live sliders, is published from {html.escape(url)}."
             if url else "The HTML book, with its live sliders, is built by <code>make book</code>.")
    title_page = (
        '<div class="slr-pdf-title">'
        f'<h1>{html.escape(settings["title"])}</h1>'
        "<p>After Marion, Berthier, Biau &amp; Boyer, <em>Attention layers provably solve single-location "
        "regression</em> (ICLR 2025)</p>"
        f'<p>{html.escape(settings.get("author", ""))}</p>'
        f"<p>Printed {time.strftime('%Y-%m-%d', time.gmtime())} from {html.escape(commit_described(ROOT))}.</p>"
        f"<p>{where} The API reference of <code>slrlib</code> is left out of this PDF: it is an appendix of "
        "the HTML book, and in the library's docstrings.</p></div>")
    contents_page = ('<nav class="slr-pdf-contents" aria-label="Contents"><h1>Contents</h1><ol>'
                     + "".join(contents) + "</ol></nav>")
    glyph_block = ('<svg id="slr-math-glyphs" style="display:none" xmlns="http://www.w3.org/2000/svg"><defs>'
                   + "".join(f'<path id="{i}" d="{d}"></path>' for i, d in sorted(glyphs.items()))
                   + "</defs></svg>")
    links = "".join(f'<link rel="stylesheet" href="{html.escape(s)}">' for s in stylesheets)
    document = (
        f'<!DOCTYPE html><html lang="en" data-theme="light" data-mode="light"><head><meta charset="utf-8">'
        f"<title>{html.escape(settings['title'])}</title>{links}<style>{PDF_CSS}</style></head>"
        f'<body>{glyph_block}<div class="bd-content"><div class="bd-article-container">'
        f'<article class="bd-article" role="main">{title_page}{contents_page}{"".join(sections)}</article>'
        "</div></div></body></html>")
    return document, titles


def print_pdf(document: Path, pdf: Path, chromium: str) -> None:
    """Print ``document`` to ``pdf`` with headless Chromium (Playwright): A4, page numbers, outline, tagged."""
    from playwright.sync_api import sync_playwright

    footer = ('<div style="font-size:8px;width:100%;text-align:center;color:#555">'
              '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(document.resolve().as_uri(), wait_until="load", timeout=300_000)
        page.emulate_media(media="print")
        page.pdf(path=str(pdf), format="A4", print_background=True, prefer_css_page_size=True,
                 display_header_footer=True, header_template="<span></span>", footer_template=footer,
                 outline=True, tagged=True)
        browser.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", default=str(ROOT / "_build" / "html"), help="the built book (make book)")
    parser.add_argument("--out", default=str(ROOT / "_build" / "pdf" / "book.pdf"), help="the PDF to write")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "chromium"),
                        help="the Chromium to print with (default: chromium on PATH)")
    args = parser.parse_args(argv)
    html_dir, pdf = Path(args.html).resolve(), Path(args.out).resolve()
    if not (html_dir / "book" / "index.html").is_file():
        parser.error(f"--html {html_dir}: no built book there (run make book first)")
    import shutil

    chromium = shutil.which(args.chromium) or args.chromium
    if not Path(chromium).is_file():
        parser.error(f"--chromium {args.chromium}: not found (make chromium installs Debian's)")
    pdf.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    document, titles = joined_document(html_dir, pdf.parent)
    source = pdf.with_suffix(".html")
    source.write_text(document, encoding="utf-8")
    joined = time.perf_counter() - start
    print_pdf(source, pdf, chromium)
    printed = time.perf_counter() - start - joined
    (pdf.parent / "chapters.json").write_text(json.dumps(titles, ensure_ascii=False, indent=1) + "\n",
                                              encoding="utf-8")
    print(f"book_pdf: {pdf} ({pdf.stat().st_size / 1e6:.1f} MB, {len(titles)} pages of the book joined in "
          f"{joined:.0f} s, printed in {printed:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
