"""The whole-book PDF (``make pdf``, book/_ext/book_pdf.py), read back.

Its text is read with ``pdftotext`` (poppler), its structure with ``qpdf --json``: every chapter's
title (read from the chapters' sources, not from the script that joined them) is in it, in the
table of contents' order; no MyST markup is left in the text (``$``, ``{glue``, ``{eq}``,
``:::``); the cross-references are links within the PDF and the chapters are its outline; the
checks print as their one-line summaries, and a slider as its default frame with a line
saying where the live one is. ``make test`` writes the PDF (its stage "pdf") before this stage.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml
from sitepaths import REQUIRED, ROOT, SITE, parsed

PDF = ROOT / "_build" / "pdf" / "book.pdf"
#: What no page of the PDF may show: MyST markup that was not rendered.
MARKUP = ("$", "{glue", "{eq}", ":::")


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        if REQUIRED:
            pytest.fail(f"{name} is missing (Debian's poppler-utils and qpdf: make chromium installs them)")
        pytest.skip(f"{name} is missing")
    return path


@pytest.fixture(scope="module")
def pdf_text() -> str:
    if not PDF.is_file():
        if REQUIRED:
            pytest.fail(f"{PDF} is missing: make pdf writes it")
        pytest.skip(f"{PDF} is missing (make pdf)")
    out = subprocess.run([_tool("pdftotext"), "-enc", "UTF-8", str(PDF), "-"], capture_output=True, text=True,
                         check=True).stdout
    return out


@pytest.fixture(scope="module")
def pdf_json() -> dict:
    if not PDF.is_file():
        pytest.fail(f"{PDF} is missing") if REQUIRED else pytest.skip(f"{PDF} is missing")
    out = subprocess.run([_tool("qpdf"), "--json", "--json-key=outlines", "--json-key=pages", str(PDF)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def _flat(text: str) -> str:
    """Text with every run of white space (line and page breaks included) as one space."""
    return re.sub(r"\s+", " ", text)


def chapter_titles() -> list[str]:
    """Each chapter's title, from its source: the first level-1 heading outside code, in the toc's order."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    titles = []
    for part in toc["parts"]:
        for chapter in part["chapters"]:
            if not re.match(r"book/\d\d_", chapter["file"]):
                continue
            fence = None
            for line in (ROOT / f"{chapter['file']}.md").read_text(encoding="utf-8").splitlines():
                opened = re.match(r"^(`{3,}|~{3,})", line)
                if opened and fence is None:
                    fence = opened.group(1)
                elif fence is not None and line.startswith(fence):
                    fence = None
                elif fence is None and line.startswith("# "):
                    titles.append(line[2:].strip())
                    break
    assert len(titles) == 16, titles
    return titles


def _opening_page(pages: list[str], heading: str, start: int) -> int | None:
    """The first page from ``start`` that opens with ``heading`` (within its first lines, after a
    part's banner)."""
    for index in range(start, len(pages)):
        if heading in _flat(pages[index])[:200]:
            return index
    return None


def test_pdf_has_every_chapter_in_order(pdf_text):
    pages = pdf_text.split("\f")
    assert _flat(pages[1]).startswith("Contents"), pages[1][:200]
    # Each chapter, then the bibliography and the appendix, opens a page after the one before it.
    page = 2
    headings = [f"{n}. {_flat(t)}" for n, t in enumerate(chapter_titles(), start=1)]
    for heading in headings + ["Bibliography", "Related work", "What this book verified", "Execution status"]:
        found = _opening_page(pages, heading, page + 1)
        assert found is not None, f"no page after page {page + 1} opens with {heading!r}"
        page = found


def _code_of_the_pages() -> str:
    """The text of every code block and inline code of the built pages in the PDF, white space collapsed."""
    code = []
    for path in sorted((SITE / "book").glob("*.html")):
        code += [_flat(tag.get_text()) for tag in parsed(path).select("article pre, article code")]
    return "\n".join(code)


def test_pdf_text_has_no_markup_left(pdf_text):
    """No ``$``, ``{glue``, ``{eq}`` or ``:::`` in the text, but inside the code the chapters show (a
    matplotlib label such as ``r"$L = 10$"``): every word of the PDF's text that has one is part of a
    code block or inline code of the built pages."""
    words = {word for word in pdf_text.split() if any(mark in word for mark in MARKUP)}
    code = _code_of_the_pages() if words else ""
    left = sorted(word for word in words if word not in code)
    assert not left, f"markup left in the PDF's text, outside code: {left[:10]}"


def test_pdf_checks_fold_and_sliders_print_a_frame(pdf_text):
    flat = _flat(pdf_text)
    # Each cell's checks as one summary line ("✓ 11 checks"), never the list of verdicts.
    summaries = re.findall(r"✓ (\d+) checks?", flat)
    assert len(summaries) >= 50, len(summaries)
    ledger = sum(len(json.loads(p.read_text(encoding="utf-8"))) for p in (ROOT / "_build" / "checks").glob("*.json"))
    assert sum(map(int, summaries)) == ledger, (sum(map(int, summaries)), ledger)
    assert flat.count("The live slider is in the HTML book") >= 2


def test_pdf_links_stay_inside_and_chapters_are_its_outline(pdf_json):
    outline = [_flat(o["title"]) for o in pdf_json["outlines"]]
    for number, title in enumerate(chapter_titles(), start=1):
        # (a title set on two lines in the PDF comes back in the outline without the space at the break)
        assert any(o.replace(" ", "").startswith(f"{number}.{title}".replace(" ", "")) for o in outline), title
    pages = pdf_json["pages"]
    assert len(pages) >= 200, len(pages)


def test_pdf_cross_references_are_links_within_it():
    """Every link to a page of the book is a named destination of the PDF itself, defined in it (Chromium
    writes the names' table and the link annotations uncompressed); links outside go to the web only."""
    if not PDF.is_file():
        pytest.fail(f"{PDF} is missing") if REQUIRED else pytest.skip(f"{PDF} is missing")
    data = PDF.read_bytes()
    links = re.findall(rb"/Subtype /Link", data)
    targets = re.findall(rb"/Dest /([\w.#-]+)", data)
    defined = set(re.findall(rb"/([\w.#-]+) \[\d+ 0 R /XYZ", data))
    assert len(links) >= 1000 and len(targets) >= 1000, (len(links), len(targets))
    assert set(targets) <= defined, sorted(set(targets) - defined)[:10]
    # The references into other chapters arrive: an equation, a chapter, the bibliography.
    names = {t.decode() for t in targets}
    assert any(n.startswith("book-bibliography--") for n in names)
    assert sum(n.startswith("book-") and n[5:7].isdigit() for n in names) >= 200, len(names)
    uris = {u.decode() for u in re.findall(rb"/URI \(([^)]*)\)", data)}
    assert all(u.startswith("https://") for u in uris), sorted(u for u in uris if not u.startswith("https://"))



def test_preface_says_where_the_pdf_is():
    preface = SITE / "book" / "index.html"
    if not preface.is_file():
        pytest.fail(f"{preface} is missing") if REQUIRED else pytest.skip("no built book")
    text = _flat(parsed(preface).select_one("article").get_text(" "))
    assert "make pdf" in text and str(PDF.relative_to(ROOT)) in text, text[:300]
