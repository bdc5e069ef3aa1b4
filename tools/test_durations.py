"""Write ``tests/durations.json`` from a pytest JUnit report: each library test's seconds.

``tests/conftest.py`` marks a test ``slow`` when its recorded time is above
``SLOW_SECONDS`` (setup included: the test that first needs a costly fixture carries its
cost); ``make check`` runs the others. A test missing from the file counts as fast, so a
new test runs in ``make check`` until the file is regenerated:

    make durations        # = pytest --junitxml=_build/junit.xml; python tools/test_durations.py _build/junit.xml

or until its time is added: ``make durations-new`` runs only the tests the file does not list and
merges their times in (``--merge``), dropping the tests no longer collected.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "durations.json"


def node_id(classname: str, name: str) -> str:
    """pytest's node id of a JUnit test case: ``tests.test_x.TestC`` + ``t[p]`` -> ``tests/test_x.py::TestC::t[p]``."""
    parts = classname.split(".")
    module = next(i for i, p in enumerate(parts) if p.startswith("test_"))
    return "/".join(parts[: module + 1]) + ".py::" + "::".join(parts[module + 1:] + [name])


def durations(report: Path) -> dict[str, float]:
    """Seconds per node id (setup, call and teardown together, as JUnit records them)."""
    root = ET.parse(report).getroot()
    return {node_id(case.get("classname"), case.get("name")): round(float(case.get("time")), 2)
            for case in root.iter("testcase")}


def recorded() -> dict[str, float]:
    """The times in ``tests/durations.json`` (empty when there is none)."""
    return json.loads(OUT.read_text(encoding="utf-8")) if OUT.is_file() else {}


def main(argv: list[str]) -> int:
    usage = ("usage: python tools/test_durations.py JUNIT_XML\n"
             "       python tools/test_durations.py --merge JUNIT_XML COLLECTED_IDS\n"
             "       python tools/test_durations.py --missing COLLECTED_IDS")
    if len(argv) == 2 and argv[0] == "--missing":  # the collected ids the file does not list, one a line
        listed = recorded()
        for node in Path(argv[1]).read_text(encoding="utf-8").splitlines():
            if node and node not in listed:
                print(node)
        return 0
    if len(argv) == 3 and argv[0] == "--merge":  # the recorded times of tests still collected, the report's added
        collected = set(Path(argv[2]).read_text(encoding="utf-8").splitlines())
        table = {k: v for k, v in recorded().items() if k in collected} | durations(Path(argv[1]))
    elif len(argv) == 1 and not argv[0].startswith("--"):
        table = durations(Path(argv[0]))
    else:
        print(usage, file=sys.stderr)
        return 2
    OUT.write_text(json.dumps(dict(sorted(table.items())), indent=0) + "\n", encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(table)} tests, {sum(table.values()):.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
