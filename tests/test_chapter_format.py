"""The chapters' code cells fit the column the book shows them in (book/_ext/format_chapters.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import format_chapters as fmt  # noqa: E402


@pytest.mark.parametrize("path", fmt.chapters(), ids=lambda path: path.stem)
def test_every_chapter_is_formatted_to_the_column(path):
    """Formatting changes nothing, and no line of a code cell is longer than WIDTH.

    One test per chapter, so that the test workers share the formatter's time (about 45 s in all).
    """
    text = path.read_text(encoding="utf-8")
    assert fmt.format_chapter(text) == text, f"run `python book/_ext/format_chapters.py`: {path.name}"
    long_lines = [line for start, end in fmt.cells(text) for line in text[start:end].splitlines()
                  if len(line) > fmt.WIDTH]
    assert long_lines == [], f"{path.name}: {long_lines[:5]}"


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


#: Characters per line of a code block of the book at 1300 px (tests/browser/test_layout.py measures
#: them): a block of the library's code included in a chapter shows 79 (PEP 8's width, to which the
#: library is formatted), one inside a solution's box 71.
INCLUDED_WIDTH = 79
INCLUDED_WIDTH_IN_SOLUTION = 71
LITERALINCLUDE = fmt.re.compile(r"^(?P<fence>`{3,})\{literalinclude\}\s+(?P<path>\S+)\n(?P<options>(?::[^\n]*\n)*)",
                                fmt.re.M)


def included_excerpts():
    """(chapter, line, width, excerpt) for every ``literalinclude`` of the chapters, read as Sphinx reads it."""
    from sphinx.config import Config
    from sphinx.directives.code import LiteralIncludeReader

    for path in sorted((ROOT / "book").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        for m in LITERALINCLUDE.finditer(text):
            options = {}
            for line in m.group("options").splitlines():
                key, _, value = line[1:].partition(":")
                value = value.strip()
                if len(value) > 1 and value[0] == value[-1] == '"':
                    value = value[1:-1]
                options[key.strip()] = int(value) if key.strip() == "dedent" and value else (value or True)
            if options.get("dedent") is True:
                options["dedent"] = None
            source = (path.parent / m.group("path")).resolve()
            excerpt, _ = LiteralIncludeReader(str(source), options, Config()).read()
            width = INCLUDED_WIDTH_IN_SOLUTION if fmt.cell_width(text, m.start()) < fmt.WIDTH else INCLUDED_WIDTH
            yield path.name, text.count("\n", 0, m.start()) + 1, width, excerpt


def test_the_library_code_the_chapters_include_fits_its_block():
    """Every line of the library's code that a chapter shows (``literalinclude``) fits the block it is shown in."""
    excerpts = list(included_excerpts())
    assert len(excerpts) >= 20
    long_lines = [f"{chapter}:{line}: {len(code_line)} > {width}: {code_line.strip()[:60]}"
                  for chapter, line, width, excerpt in excerpts
                  for code_line in excerpt.splitlines() if len(code_line) > width]
    assert long_lines == [], "\n".join(long_lines)
