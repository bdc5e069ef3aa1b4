"""Fixtures for the tests of the built book (_build/html), run by `make test` after the build.

`make test` runs the library tests (`pytest --ignore=tests/browser`), builds the book, then
`pytest tests/browser` with SLR_REQUIRE_BROWSER=1: there a missing build or a missing
Chromium is a failure; run by hand without that variable, they are skipped with the reason.
"""

from __future__ import annotations

import gc
import tempfile
import threading
from pathlib import Path

import pytest

from labserver import LabServer
from sitepaths import CHROMIUM_FLAGS, REQUIRED, SCREENSHOTS, SITE, chromium_path, forget_parses, html_pages, parsed
import visits


def _missing(reason: str):
    if REQUIRED:
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def site() -> Path:
    if not (SITE / "index.html").is_file():
        _missing(f"{SITE} has no built book: run `make book` first")
    return SITE


@pytest.fixture(scope="session", autouse=True)
def parse_pages_meanwhile():
    """Parse every page of the build (sitepaths.parsed, for the static checks) in a thread, while the
    main thread mostly waits on Chromium: the parses are ready when test_site.py needs them."""
    thread = threading.Thread(target=lambda: [parsed(page) for page in html_pages()], daemon=True)
    thread.start()
    yield
    thread.join()
    # The parses are garbage now: freed here, once, rather than walked again by each of the garbage
    # collections pytest runs as it exits (measured: 7.6 s between its summary line and the exit, with them).
    forget_parses()
    gc.collect()


@pytest.fixture(scope="session", autouse=True)
def lab_server(request):
    """JupyterLab for test_jupyterlab.py (labserver.py), started in a thread as the session starts when
    that test is selected; None otherwise."""
    if not any(_test_name(item) in (LAB_FIRST, LAB_LAST) for item in request.session.items):
        yield None
        return
    server = LabServer().start()
    try:
        yield server
    finally:
        server.stop()


def visited_chapters(items) -> list[str]:
    """The chapter pages the selected tests read through ``chapter_visits``: each test's ``rel`` parameter,
    or the chapters its ``visits`` marker names."""
    chapters: list[str] = []
    for item in items:
        if "chapter_visits" not in getattr(item, "fixturenames", ()):
            continue
        marker = item.get_closest_marker("visits")
        callspec = getattr(item, "callspec", None)
        named = list(marker.args) if marker else [callspec.params["rel"]] if callspec and "rel" in callspec.params else []
        if not named:
            raise pytest.UsageError(f"{item.nodeid} reads chapter_visits but names no chapter: "
                                    "parametrize it by `rel` or mark it @pytest.mark.visits(rel)")
        chapters += [rel for rel in named if rel not in chapters]
    return chapters


@pytest.fixture(scope="session", autouse=True)
def chapter_visitor(request):
    """The chapters' visits (visits.py), started in a process of their own as the session starts when a
    test that reads them is selected and the book and Chromium are there: only the chapters the selected
    tests read."""
    wanted = visited_chapters(request.session.items)
    if wanted and (SITE / "index.html").is_file() and chromium_path() is not None:
        visits.start_visitor(wanted)
    yield
    visits.stop_visitor()


@pytest.fixture(scope="session")
def chapter_visits(browser_context):
    """``visits.visit``, for the tests that read the chapters' visits (skipped, or failed under
    ``make test``, as ``browser_context`` is, without a book or Chromium)."""
    return visits.visit


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


def pytest_collection_modifyitems(config, items):
    """The tests in the order that keeps both cores busy (``_in_working_order``); and without a built book
    (and outside `make test`), every test of the built site skipped at once.

    Plain ``pytest`` at the repository's root then runs the library tests and reports these as
    skipped; the JupyterLab test, which needs no build, runs in ``make test`` with the others."""
    _in_working_order(items)
    if REQUIRED or (SITE / "index.html").is_file():
        return
    here = Path(__file__).parent
    skip = pytest.mark.skip(reason=f"{SITE} has no built book: run `make book` first (or `make test`)")
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(skip)


#: The JupyterLab test in two: the first opens the chapters (which then start running, each in its
#: kernel), the second (last of all, one per chapter) reads the runs; the built book's tests run in between.
LAB_FIRST = "test_jupyterlab_serves_the_chapters"
LAB_LAST = "test_chapter_runs_in_jupyterlab_as_in_the_book"


def _test_name(item) -> str:
    """The test's function name (without the parameters of a parametrized test)."""
    return getattr(item, "originalname", None) or item.name


def _in_working_order(items) -> None:
    """The JupyterLab run opened first and read last: its test waits for the server (started with the
    session) while the visitors load their pages, and the run, one kernel on one core and the session's
    longest chain, starts as soon as it can (measured: its page opened 22-29 s into the stage, against 41 s
    after three tests). The tests that read the chapters' visits (visits.py,
    measured meanwhile by processes of their own) after every other: the test process does its own work
    (the other pages in its Chromium, the static checks) while the visits are made, rather than wait for
    a visit and then work alone once they are done (measured before this order: the visits done 109 s
    into the stage, which then went on alone for 34 s)."""
    first = [i for i in items if _test_name(i) == LAB_FIRST]
    last = [i for i in items if _test_name(i) == LAB_LAST]
    rest = [i for i in items if _test_name(i) not in (LAB_FIRST, LAB_LAST)]
    readers = [i for i in rest if "chapter_visits" in getattr(i, "fixturenames", ())]
    own = [i for i in rest if "chapter_visits" not in getattr(i, "fixturenames", ())]
    items[:] = first + own + readers + last
