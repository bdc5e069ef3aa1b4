"""Paths and settings shared by the tests of the built book."""

from __future__ import annotations

import os
from pathlib import Path

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


def html_pages() -> list[Path]:
    """Every HTML page of the built book (not the copied sources or static files)."""
    if not SITE.is_dir():
        return []
    return sorted(
        p for p in SITE.rglob("*.html") if not p.relative_to(SITE).parts[0].startswith("_")
    )
