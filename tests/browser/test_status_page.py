"""The appendix "Execution status" and each chapter guide's line "Executed: in 41 s, 62 checks".

Both are written by the build from what it recorded (book/_ext/check_ledger.py,
book/_ext/chapter_guide.py); here they are compared with the records themselves, read
independently: the jupyter-cache's record of each chapter's current code (its execution
seconds), the ledger files of the checks (``_build/checks``), ``budgets.yml`` and git.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml
from sitepaths import REQUIRED, ROOT, SITE, parsed

STATUS = SITE / "book" / "status.html"


def _cached_seconds() -> dict[str, float]:
    """Each chapter's execution seconds, from the jupyter-cache's record of its current notebook."""
    from jupyter_cache import get_cache
    from myst_nb.core.read import myst_nb_reader_plugin

    cache = get_cache(str(ROOT / "_build" / ".jupyter_cache"))
    seconds = {}
    for path in sorted((ROOT / "book").glob("[0-9][0-9]_*.md")):
        record = cache.match_cache_notebook(myst_nb_reader_plugin(str(path)))
        seconds[path.stem] = float(record.data["execution_seconds"])
    return seconds


def _checks(stem: str) -> int:
    return len(json.loads((ROOT / "_build" / "checks" / f"{stem}.json").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def status():
    if not STATUS.is_file():
        if REQUIRED:
            pytest.fail(f"{STATUS} is missing")
        pytest.skip("no built book")
    return parsed(STATUS)


def test_status_page_lists_every_chapter_with_its_recorded_time_and_checks(status):
    budgets = yaml.safe_load((ROOT / "budgets.yml").read_text(encoding="utf-8"))["chapters"]
    table = status.select_one("table.slr-execution-status")
    assert table is not None
    rows = {}
    for tr in table.select("tbody tr"):
        cells = [td.get_text(" ", strip=True) for td in tr.select("td")]
        href = tr.select_one("a")["href"]
        rows[href.split("#")[0].removesuffix(".html")] = cells
    seconds = _cached_seconds()
    assert set(seconds) <= set(rows), sorted(set(seconds) - set(rows))
    for stem, recorded in seconds.items():
        page, executed, budget, checks, failed, when = rows[stem]
        assert int(re.match(r"\d+", executed).group()) == round(recorded), (stem, executed, recorded)
        alone = (budgets.get("exceptions") or {}).get(stem, {}).get("budget", budgets["default"])
        assert budget.split(" ×")[0] == f"{alone:.0f}", (stem, budget)
        assert int(checks) == _checks(stem) and int(failed) == 0, (stem, checks, failed)
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", when), when
        assert ("(over)" in executed) == (recorded > alone * (1.5 if "×" in budget else 1)), (stem, executed, budget)
    intro = status.select_one("article").get_text(" ", strip=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=10", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    assert f"commit {commit}" in intro, intro[:400]


def test_chapter_guides_say_how_long_the_chapter_ran_and_link_the_status_page(status):
    seconds = _cached_seconds()
    for stem, recorded in seconds.items():
        page = parsed(SITE / "book" / f"{stem}.html")
        guide = page.select_one(".slr-chapter-guide")
        line = guide.select_one("p.slr-executed")
        assert line is not None, stem
        link = line.select_one("a")
        assert link is not None and link["href"].startswith("status.html"), (stem, line)
        assert line.get_text(" ", strip=True) == f"in {recorded:.0f} s, {_checks(stem)} checks", (stem, line)


def test_ledger_page_links_the_status_page(status):
    ledger = parsed(SITE / "book" / "verified.html")
    assert any(a["href"].startswith("status.html") for a in ledger.select("article a[href]"))
