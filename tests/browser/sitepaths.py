"""Paths and settings shared by the tests of the built book."""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

from bs4 import BeautifulSoup, CData, NavigableString, Tag

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
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


def html_pages() -> list[Path]:
    """Every HTML page of the built book (not the copied sources or static files)."""
    if not SITE.is_dir():
        return []
    return sorted(
        p for p in SITE.rglob("*.html") if not p.relative_to(SITE).parts[0].startswith("_")
    )


@functools.lru_cache(maxsize=None)
def parsed(page: Path) -> BeautifulSoup:
    """The page's HTML, parsed once per session and shared by the static checks: do not modify it."""
    return BeautifulSoup(Path(page).read_text(encoding="utf-8"), "html.parser")


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
