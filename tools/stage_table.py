"""Print the table of `make test`'s stages (install, library, book, then pdf, roundoff and package
side by side, browser; and the total).

``make test`` appends one line per finished stage to ``_build/stages.tsv``: the stage's name, its
wall seconds, its exit status and, where the stage is timed by ``make``'s ``stage`` macro, the
second (Unix time) it started. This prints them as a table against the budgets of
``budgets.yml`` (``stages``), with the total, and flags a stage over its budget with ``OVER``
(a flag, not a failure: a slower machine flags more). Stages that ran at the same time (the pdf
stage prints with one core, and the roundoff and package stages use the other meanwhile) say
so, and the total is the wall time they cover together, not the sum of their times.

    python tools/stage_table.py _build/stages.tsv
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


Row = tuple  # (name, seconds, exit status[, start])


def read_stages(path: Path) -> list[Row]:
    """(name, seconds, exit status) of each stage recorded in ``path``, in order, with its start
    (Unix seconds) as a fourth item where the line has one."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            name, seconds, status, *start = line.split("\t")
            rows.append((name, float(seconds), int(status), *(float(x) for x in start[:1])))
    return rows


def _overlaps(rows: list[Row]) -> dict[str, list[str]]:
    """For each stage with a start, the stages whose time overlapped its own."""
    timed = [(r[0], r[3], r[3] + r[1]) for r in rows if len(r) > 3]
    return {a: [b for b, s2, e2 in timed if b != a and s1 < e2 and s2 < e1] for a, s1, e1 in timed}


def total_seconds(rows: list[Row]) -> float:
    """The wall time of all stages: stages without a start one after another, and the union of the
    intervals of those with one (stages side by side count once)."""
    untimed = sum(r[1] for r in rows if len(r) <= 3)
    covered, end = 0.0, float("-inf")
    for start, stop in sorted((r[3], r[3] + r[1]) for r in rows if len(r) > 3):
        covered += max(0.0, stop - max(start, end))
        end = max(end, stop)
    return untimed + covered


def stage_table(rows: list[Row], budgets: dict[str, float]) -> str:
    """The table, one line per stage and a total line; stages over their budget flagged OVER."""
    lines = [f"{'stage':<10} {'seconds':>8} {'budget':>7}", f"{'-' * 10} {'-' * 8} {'-' * 7}"]
    beside = _overlaps(rows)
    entries = [r[:3] for r in rows] + [("total", total_seconds(rows), max((r[2] for r in rows), default=0))]
    for name, seconds, status in entries:
        budget = budgets.get(name)
        flags = []
        if budget is not None and seconds > budget:
            flags.append("OVER")
        if status != 0 and name != "total":
            flags.append(f"FAILED (exit {status})")
        if beside.get(name):
            flags.append("beside " + ", ".join(beside[name]))
        shown = f"{budget:7.0f}" if budget is not None else f"{'':7}"
        lines.append(f"{name:<10} {seconds:8.0f} {shown}" + ("  " + ", ".join(flags) if flags else ""))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    budgets = yaml.safe_load((ROOT / "budgets.yml").read_text(encoding="utf-8"))["stages"]
    print("make test: stages (seconds of wall time; budgets.yml)")
    print(stage_table(read_stages(Path(argv[0])), {k: float(v) for k, v in budgets.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
