"""Format the chapters' code cells to the width the book's column shows.

    python book/_ext/format_chapters.py            # rewrite the code cells of every chapter
    python book/_ext/format_chapters.py --check    # list what would change; exit 1 if anything

A code cell is shown in a column 76 characters wide (at 1300 px; ``tests/browser/test_layout.py``
holds that no line is wider), 71 inside a solution's box. Each cell is formatted by yapf (pinned in
requirements.lock) at :data:`WIDTH` characters (:data:`SOLUTION_WIDTH` in a solution), a little less,
for fonts slightly wider than this machine's, in
PEP 8 style with arguments filled along the line (:data:`STYLE`): a call with ten arguments
takes two lines, not ten, so a cell stays short. What yapf leaves long is broken here:

* a long string literal (a check's claim, an f-string) becomes adjacent literals, one per
  line, split at spaces outside ``{...}`` (Python joins them); adjacent literals of one kind are
  first written as one, so that they are split afresh at the cell's width;
* a long comment is wrapped into several comment lines (above its code, if it followed code);
* a long one-line docstring is wrapped over several lines;
* a long ``from ... import a, b, c`` gets parentheses (yapf then breaks it).

Then yapf formats the cell again. Only the code of ``{code-cell}`` blocks changes: their
options (``:tags:``, a ``---`` metadata block) and all markdown are left as they are.
``tests/test_chapter_format.py`` runs the check in ``make test``.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import textwrap
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Characters per line of a code cell: the column shows 76 at 1300 px.
WIDTH = 74
#: Characters per line of a code cell inside a solution (``{solution-start}`` ... ``{solution-end}``),
#: whose box is narrower: it shows 71 at 1300 px.
SOLUTION_WIDTH = 69
SOLUTION = re.compile(r"^`{3,}\{solution-start\}.*?^`{3,}\{solution-end\}", re.M | re.S)
#: yapf's style: PEP 8, arguments filled along the line rather than one per line.
STYLE = {
    "based_on_style": "pep8",
    "column_limit": WIDTH,
    "split_before_named_assigns": False,
    "coalesce_brackets": True,
    "split_penalty_after_opening_bracket": 100,
}
CELL = re.compile(r"^(?P<fence>`{3,})\{code-cell\}[^\n]*\n", re.M)


def yapf_format(code: str, width: int = WIDTH) -> str:
    from yapf.yapflib.yapf_api import FormatCode

    try:
        formatted, _ = FormatCode(code, style_config={**STYLE, "column_limit": width})
    except Exception as err:  # yapf raises its own errors for code it cannot parse
        raise ValueError(f"yapf cannot format this cell:\n{code}\n{err}") from err
    return formatted


def _split_points(body: str) -> list[int]:
    """Indices just after a space of ``body`` that lie outside ``{...}`` (f-string fields)."""
    points, depth = [], 0
    for i, ch in enumerate(body):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif ch == " " and depth == 0:
            points.append(i + 1)
    return points


def split_string(token: str, room: int) -> list[str] | None:
    """A string literal as adjacent literals, each at most ``room`` characters; None if it cannot be."""
    m = re.match(r"^([A-Za-z]*)(['\"])(.*)\2$", token, re.S)
    if not m or "\n" in token or m.group(3).startswith(m.group(2) * 2):  # not a triple-quoted one
        return None
    prefix, quote, body = m.groups()
    overhead = len(prefix) + 2
    parts, start = [], 0
    while len(body) - start + overhead > room:
        candidates = [p for p in _split_points(body) if start < p and p - start + overhead <= room]
        if not candidates:
            return None
        end = candidates[-1]
        parts.append(body[start:end])
        start = end
    parts.append(body[start:])
    return [f"{prefix}{quote}{p}{quote}" for p in parts if p]


IMPORT = re.compile(r"^(?P<head>\s*from\s+\S+\s+import\s+)(?P<names>[^()#]+?)\s*$")


def _wrap_comments(code: str, width: int) -> str:
    lines = code.split("\n")
    for tok in reversed(list(tokenize.generate_tokens(io.StringIO(code).readline))):
        row, col = tok.start
        line = lines[row - 1]
        if tok.type != tokenize.COMMENT or len(line) <= width:
            continue
        indent = len(line) - len(line.lstrip())
        text = tok.string.lstrip("#").strip()
        wrapped = [" " * indent + "# " + w for w in textwrap.wrap(text, width=max(20, width - indent - 2))]
        if line[:col].strip():  # a comment after code: on its own lines, above the code
            lines[row - 1:row] = wrapped + [line[:col].rstrip()]
        else:
            lines[row - 1:row] = wrapped
    return "\n".join(lines)


def _join_strings(code: str) -> str:
    """Adjacent string literals (Python joins them) of one kind, written as one: a claim split at one
    width is split afresh at another, not left with a one-word piece on a line of its own."""
    lines = code.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    at = lambda pos: offsets[pos[0] - 1] + pos[1]  # noqa: E731
    runs, run = [], []
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.NL and run:
            continue
        m = re.match(r"^([A-Za-z]*)(['\"])(.*)\2$", tok.string, re.S) if tok.type == tokenize.STRING else None
        kind = (m.group(1).lower(), m.group(2)) if m and tok.start[0] == tok.end[0] and not \
            m.group(3).startswith(m.group(2) * 2) else None
        if kind is not None and run and run[-1][0] == kind:
            run.append((kind, tok))
            continue
        if len(run) > 1:
            runs.append([t for _, t in run])
        run = [(kind, tok)] if kind is not None else []
    if len(run) > 1:
        runs.append([t for _, t in run])
    for toks in reversed(runs):
        prefix, quote = re.match(r"^([A-Za-z]*)(['\"])", toks[0].string).groups()
        body = "".join(re.match(r"^[A-Za-z]*(['\"])(.*)\1$", t.string, re.S).group(2) for t in toks)
        code = code[:at(toks[0].start)] + prefix + quote + body + quote + code[at(toks[-1].end):]
    return code


def _split_strings(code: str, width: int) -> str:
    lines = code.split("\n")
    edits = []  # (row, start, end, parts, needs parentheses)
    depth = 0
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        row, col = tok.start
        if tok.type != tokenize.STRING or tok.start[0] != tok.end[0] or len(lines[row - 1]) <= width:
            continue
        tail = len(lines[row - 1]) - tok.end[1]
        room = width - col - (0 if depth else 1) - min(tail, 2)
        keyword = re.search(r"\b(\w+=)$", lines[row - 2].rstrip()) if row > 1 and not lines[row - 1][:col].strip() else None
        if keyword:  # yapf wrote `name=` at the end of the line above: it puts the first piece after it
            room -= len(keyword.group(1))
        parts = split_string(tok.string, room)
        if parts and len(parts) > 1:
            edits.append((row, col, tok.end[1], parts, depth == 0))
    for row, start, end, parts, paren in sorted(edits, reverse=True):
        line = lines[row - 1]
        if paren:
            parts = ["(" + parts[0]] + parts[1:-1] + [parts[-1] + ")"]
        new = [line[:start] + parts[0]] + [" " * start + p for p in parts[1:]]
        new[-1] += line[end:]
        lines[row - 1:row] = new
    return "\n".join(lines)


def _wrap_docstrings(code: str, width: int) -> str:
    """A long one-line docstring (a triple-quoted string alone on its line) over several lines."""
    lines = code.split("\n")
    for tok in reversed(list(tokenize.generate_tokens(io.StringIO(code).readline))):
        row, col = tok.start
        line = lines[row - 1]
        m = re.match(r'^(\s*)(\"\"\"|\'\'\')(.*)\2\s*$', line)
        if tok.type != tokenize.STRING or tok.start[0] != tok.end[0] or len(line) <= width or not m:
            continue
        indent, quote, text = m.groups()
        wrapped = textwrap.wrap(text, width=width - len(indent), initial_indent=quote)
        lines[row - 1:row] = [indent + wrapped[0]] + [indent + w for w in wrapped[1:]] + [indent + quote]
    return "\n".join(lines)


def _parenthesise_imports(code: str, width: int) -> str:
    lines = code.split("\n")
    for i, line in enumerate(lines):
        m = IMPORT.match(line)
        if m and len(line) > width:
            lines[i] = f"{m.group('head')}({m.group('names')})"
    return "\n".join(lines)


def break_long_lines(code: str, width: int = WIDTH) -> str:
    """Parenthesise long imports, wrap long comments and docstrings, split long string literals."""
    code = _parenthesise_imports(code, width)
    code = _wrap_comments(code, width)
    code = _wrap_docstrings(code, width)
    return _split_strings(code, width)


def format_code(code: str, width: int = WIDTH) -> str:
    """A cell's code, formatted to ``width`` characters as far as it can be."""
    if not code.strip():
        return code
    formatted = yapf_format(code, width)
    joined = _join_strings(formatted)
    if joined != formatted:
        formatted = yapf_format(joined, width)
    for _ in range(3):  # breaking a line can leave another one to break: to a fixed point
        if max(map(len, formatted.splitlines()), default=0) <= width:
            break
        broken = yapf_format(break_long_lines(_join_strings(formatted), width), width)
        if broken == formatted:
            break
        formatted = broken
    return formatted.rstrip("\n")


def cells(text: str):
    """(start, end) of the code of every ``{code-cell}`` block of a MyST notebook."""
    for m in CELL.finditer(text):
        pos = m.end()
        rest = text[pos:]
        # Options: a '---' YAML block, or ':key: value' lines, then a blank line.
        if rest.startswith("---\n"):
            close = rest.index("\n---\n", 3) + 5
            pos += close
        else:
            opts = re.match(r"(?::[\w-]+:[^\n]*\n)+(?:\n)?", rest)
            if opts:
                pos += opts.end()
        close = text.index("\n" + m.group("fence") + "\n", pos - 1)
        yield pos, close + 1


def cell_width(text: str, start: int, width: int = WIDTH) -> int:
    """The width a cell starting at ``start`` is formatted to: :data:`SOLUTION_WIDTH` inside a solution."""
    inside = any(m.start() < start < m.end() for m in SOLUTION.finditer(text))
    return min(width, SOLUTION_WIDTH) if inside else width


def format_chapter(text: str, width: int = WIDTH) -> str:
    out, last = [], 0
    for start, end in cells(text):
        code = text[start:end]
        new = format_code(code.rstrip("\n"), cell_width(text, start, width)) + "\n"
        out.append(text[last:start])
        out.append(new if code.strip() else code)
        last = end
    out.append(text[last:])
    return "".join(out)


def chapters() -> list[Path]:
    return sorted(p for p in (ROOT / "book").glob("*.md") if "```{code-cell}" in p.read_text(encoding="utf-8"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a chapter would change")
    parser.add_argument("paths", nargs="*", type=Path)
    args = parser.parse_args()
    changed, long_lines = [], []
    for path in args.paths or chapters():
        text = path.read_text(encoding="utf-8")
        new = format_chapter(text)
        for start, end in cells(new):
            room = cell_width(new, start)
            long_lines += [f"{path.name}: {line}" for line in new[start:end].splitlines() if len(line) > room]
        if new != text:
            changed.append(path.name)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    verb = "would change" if args.check else "changed"
    print(f"{len(changed)} chapters {verb}: {', '.join(changed) or 'none'}")
    if long_lines:
        print(f"{len(long_lines)} lines stay longer than their cell's width ({WIDTH}, {SOLUTION_WIDTH} in a solution):")
        print("\n".join(long_lines))
    return 1 if (args.check and changed) or long_lines else 0


if __name__ == "__main__":
    sys.exit(main())
