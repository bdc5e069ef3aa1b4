"""The library suite's own machinery: what `make test` relies on to run it on two workers.

`make test` runs the library tests with ``--dist loadgroup`` so that the modules marked
``xdist_group`` (costly shared fixtures: the encoder of chapter 12, the cross-ISA subprocesses,
...) stay on one worker and set their fixtures up once. pytest 9.2 broke that silently: the
grouping is done by renaming the tests, which pytest 9.2 no longer honours, and the groups
were dealt out test by test (pytest-dev/pytest-xdist#1386; measured: the cross-ISA
subprocesses, 37 s, ran on both workers). requirements.lock pins pytest 9.1.1; this test
fails when the grouping stops holding.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

GROUPED = textwrap.dedent(
    """
    import os, pathlib, pytest, time
    pytestmark = pytest.mark.xdist_group("together")

    @pytest.mark.parametrize("i", range(6))
    def test_grouped(i):
        time.sleep(0.05)
        pathlib.Path(f"grouped_{i}.worker").write_text(os.environ["PYTEST_XDIST_WORKER"])
    """
)
LOOSE = textwrap.dedent(
    """
    import os, pathlib, pytest, time

    @pytest.mark.parametrize("i", range(6))
    def test_loose(i):
        time.sleep(0.05)
        pathlib.Path(f"loose_{i}.worker").write_text(os.environ["PYTEST_XDIST_WORKER"])
    """
)


def test_loadgroup_keeps_a_group_on_one_worker(tmp_path):
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "test_loose.py").write_text(LOOSE)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           "--dist", "loadgroup", "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    grouped = {p.read_text() for p in tmp_path.glob("grouped_*.worker")}
    loose = {p.read_text() for p in tmp_path.glob("loose_*.worker")}
    assert len(list(tmp_path.glob("grouped_*.worker"))) == 6
    assert len(grouped) == 1, f"the group ran on {sorted(grouped)}"
    # The other tests are dealt out to both workers: two workers really ran.
    assert len(grouped | loose) == 2, (grouped, loose)


def test_not_slow_leaves_out_the_slow_tests_of_a_group_on_two_workers():
    """`make check` (``-m "not slow"``, two workers, ``--dist loadgroup``) leaves out the tests that
    tests/durations.json records as slow, also in a module marked ``xdist_group``, whose ids loadgroup
    suffixes with ``@group`` (``conftest._recorded_id`` strips it; without it, the four cross-ISA tests,
    35 s, ran in every `make check`)."""
    root = Path(__file__).resolve().parents[1]
    recorded = json.loads((root / "tests" / "durations.json").read_text(encoding="utf-8"))
    ids = [k for k in recorded if k.startswith("tests/test_cross_isa.py::")]
    # Recorded far above SLOW_SECONDS (1 s, tests/conftest.py): its first test sets up the module's runs.
    assert ids and recorded[ids[0]] > 10
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           "--dist", "loadgroup", "-m", "not slow", "tests/test_cross_isa.py"],
                          cwd=root, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 5, proc.stdout[-2000:] + proc.stderr[-2000:]  # 5: no test ran
