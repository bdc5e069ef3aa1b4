"""Print the table of `make test`'s stages (install, library, package, roundoff, book, pdf, browser, total).

``make test`` appends one line per finished stage to ``_build/stages.tsv``: the stage's name, its
wall seconds and its exit status. This prints them as a table against the budgets of
``budgets.yml`` (``stages``), with the total, and flags a stage over its budget with ``OVER``
(a flag, not a failure: a slower machine flags more).

    python tools/stage_table.py _build/stages.tsv
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def read_stages(path: Path) -> list[tuple[str, float, int]]:
    """(name, seconds, exit status) of each stage recorded in ``path``, in order."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            name, seconds, status = line.split("\t")
            rows.append((name, float(seconds), int(status)))
    return rows


def stage_table(rows: list[tuple[str, float, int]], budgets: dict[str, float]) -> str:
    """The table, one line per stage and a total line; stages over their budget flagged OVER."""
    lines = [f"{'stage':<10} {'seconds':>8} {'budget':>7}", f"{'-' * 10} {'-' * 8} {'-' * 7}"]
    entries = list(rows) + [("total", sum(s for _, s, _ in rows), max((c for *_, c in rows), default=0))]
    for name, seconds, status in entries:
        budget = budgets.get(name)
        flags = []
        if budget is not None and seconds > budget:
            flags.append("OVER")
        if status != 0 and name != "total":
            flags.append(f"FAILED (exit {status})")
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
