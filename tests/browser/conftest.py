"""Fixtures for the tests of the built book (_build/html), run by `make test` after the build.

`make test` runs the library tests (`pytest --ignore=tests/browser`), builds the book, then
`pytest tests/browser` with SLR_REQUIRE_BROWSER=1: there a missing build or a missing
Chromium is a failure; run by hand without that variable, they are skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from sitepaths import CHROMIUM_FLAGS, REQUIRED, SCREENSHOTS, SITE


def _missing(reason: str):
    if REQUIRED:
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def site() -> Path:
    if not (SITE / "index.html").is_file():
        _missing(f"{SITE} has no built book: run `make book` first")
    return SITE


def chromium_path() -> str | None:
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="session")
def browser_context(site):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover
        _missing("playwright is not installed (it is pinned in requirements.lock)")
    executable = chromium_path()
    if executable is None:
        _missing("no chromium on PATH (`make chromium` installs Debian's package)")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="slr-chromium-") as profile:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile,
                executable_path=executable,
                headless=True,
                args=CHROMIUM_FLAGS,
                viewport={"width": 1280, "height": 900},
            )
            try:
                yield context
            finally:
                context.close()
