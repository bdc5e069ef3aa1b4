"""The chapters' code cells fit the column the book shows them in (book/_ext/format_chapters.py)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import format_chapters as fmt  # noqa: E402


def test_every_chapter_is_formatted_to_the_column():
    """Formatting changes nothing, and no line of a code cell is longer than WIDTH."""
    unformatted, long_lines = [], []
    for path in fmt.chapters():
        text = path.read_text(encoding="utf-8")
        new = fmt.format_chapter(text)
        if new != text:
            unformatted.append(path.name)
        for start, end in fmt.cells(text):
            long_lines += [f"{path.name}: {line}" for line in text[start:end].splitlines() if len(line) > fmt.WIDTH]
    assert unformatted == [], f"run `python book/_ext/format_chapters.py`: {unformatted}"
    assert long_lines == [], long_lines[:5]


def test_the_formatter_breaks_what_yapf_leaves_long():
    """A long claim string, comment and import are broken; the code means the same."""
    import ast

    code = ('from slrlib.book.ch15_samples import empirical_gradient, erm_lbfgs, erm_pgd, erm_pgd_reference, ridge_fit\n'
            'check(f"d = {d}: the median excess test risk falls from the smallest to the largest n/d '
            'at every step of the grid", x, y)  # a comment that is long enough to need wrapping, too long\n')
    out = fmt.format_code(code)
    assert max(map(len, out.splitlines())) <= fmt.WIDTH
    assert ast.dump(ast.parse(out)) == ast.dump(ast.parse(code))
    assert fmt.format_code(out) == out  # a fixed point
