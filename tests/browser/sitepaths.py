"""Paths and settings shared by the tests of the built book."""

from __future__ import annotations

import collections
import gzip
import os
import re
import shutil
import threading
from pathlib import Path

from bs4 import BeautifulSoup, CData, NavigableString, Tag

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
#: axe-core, the accessibility checker (the npm registry's package, pinned in package-lock.json and
#: installed by `make install` into node_modules/), injected into the pages it checks.
AXE_SCRIPT = ROOT / "node_modules" / "axe-core" / "axe.min.js"
#: The rules axe-core checks: WCAG 2.0 and 2.1, levels A and AA.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
#: Files a web server sends gzipped.
TEXT_SUFFIXES = {".html", ".css", ".js", ".mjs", ".svg", ".json", ".txt", ".map", ".xml"}
REQUIRED = os.environ.get("SLR_REQUIRE_BROWSER") == "1"

# Headless, and no background traffic: the book must work with the network closed.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    """Chromium's executable: $CHROMIUM, else ``chromium`` or ``chromium-browser`` on PATH."""
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def sent_bytes(path: Path) -> int:
    """What a web server that gzips text sends for ``path``: its gzip (level 6) for text, its size otherwise."""
    data = Path(path).read_bytes()
    if Path(path).suffix.lower() in TEXT_SUFFIXES:
        return len(gzip.compress(data, compresslevel=6))
    return len(data)


def html_pages() -> list[Path]:
    """Every HTML page of the built book (not the copied sources or static files)."""
    if not SITE.is_dir():
        return []
    return sorted(
        p for p in SITE.rglob("*.html") if not p.relative_to(SITE).parts[0].startswith("_")
    )


#: What the shared parse leaves out: each formula's drawing and MathML (its ``mjx-container`` stays,
#: empty, with its attributes) and the page's glyph outlines. They are half of a page's HTML (10 MB of the
#: book's 22), and were half the parse's time: test_site.test_formulas_come_typeset reads them in the
#: page's text, and the other static checks leave formulas out.
FORMULA_INSIDES = re.compile(r'(<mjx-container\b[^>]*>).*?(</mjx-container>)|(<svg id="slr-math-glyphs"[^>]*>).*?(</svg>)',
                             re.S)
_PARSES: dict[Path, BeautifulSoup] = {}
_PARSING: dict[Path, threading.Lock] = collections.defaultdict(threading.Lock)


def parsed(page: Path) -> BeautifulSoup:
    """The page's HTML less :data:`FORMULA_INSIDES`, parsed once per session and shared by the static
    checks (do not modify it). Thread-safe: a page being parsed (conftest.py parses them all in a
    thread) is waited for, not parsed again."""
    page = Path(page)
    with _PARSING[page]:
        if page not in _PARSES:
            # (Each match keeps its element's start and end tags: the groups that matched.)
            html = FORMULA_INSIDES.sub(lambda m: "".join(g for g in m.groups() if g), page.read_text(encoding="utf-8"))
            _PARSES[page] = BeautifulSoup(html, "html.parser")
        return _PARSES[page]


def forget_parses() -> None:
    """Drop the shared parses (at the session's end: conftest.py)."""
    _PARSES.clear()


def text_outside(node, skipped) -> str:
    """``node.get_text(" ")`` without the text of the elements in ``skipped`` (a list of tags of
    ``node``), leaving the shared parse unchanged."""
    skip = {id(tag) for tag in skipped}
    strings = []

    def walk(element):
        for child in element.children:
            if type(child) in (NavigableString, CData):
                strings.append(str(child))
            elif isinstance(child, Tag) and id(child) not in skip:
                walk(child)

    walk(node)
    return " ".join(strings)
