"""Every chapter ends with exercises that have solutions (sphinx-exercise, the QuantEcon convention).

Read from the chapters' MyST source: each ``{exercise}`` has a ``:label:``; each label has exactly
one solution (``{solution} label`` or the gated ``{solution-start} label`` … ``{solution-end}``),
folded (``:class: dropdown``); every chapter has at least three exercises, and at least one solution
runs code (a ``{code-cell}`` between ``solution-start`` and ``solution-end``) that ends in a check of
:mod:`slrlib.verify`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
CHAPTERS = sorted(BOOK.glob("[0-9][0-9]_*.md")) + [BOOK / "related_work.md"]
FENCE = re.compile(r"^(`{3,}|:{3,})\{([a-z-]+)\}\s*(.*)$")
PLAIN_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([A-Za-z0-9_+-]*)\s*$")
CHECKS = ("check(", "check_z(", "check_bound(", "check_that(")


def directives(text: str):
    """(name, argument, options, body) of every top-level fenced directive of a MyST file."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            plain = PLAIN_FENCE.match(lines[i])
            if plain:  # a plain code block (or a stray fence): everything up to its close is literal
                j = i + 1
                while j < len(lines) and lines[j].rstrip() != plain.group(1):
                    j += 1
                yield "literal", "", {}, "\n".join(lines[i + 1 : j]), i
                i = j + 1
                continue
            i += 1
            continue
        fence, name, arg = m.groups()
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != fence:
            j += 1
        body = lines[i + 1 : j]
        options = dict(re.match(r"^:([a-z-]+):\s*(.*)$", b).groups() for b in body
                       if re.match(r"^:([a-z-]+):", b))
        yield name, arg.strip(), options, "\n".join(body), i
        i = j + 1


def exercises_of(path: Path):
    text = path.read_text()
    found = list(directives(text))
    lines = text.splitlines()
    exercises = [opts.get("label") for name, _, opts, _, _ in found if name == "exercise"]
    solutions: dict[str, dict] = {}
    for k, (name, arg, opts, body, start) in enumerate(found):
        if name in ("solution", "solution-start"):
            code = False
            content = body
            if name == "solution-start":
                end = next((s for n, _, _, _, s in found[k + 1:] if n in ("solution-end", "solution-start")), None)
                if end is None or found[[s for *_, s in found].index(end)][0] != "solution-end":
                    solutions.setdefault(arg, []).append({"folded": False, "code": False, "checked": False,
                                                          "unclosed": True})
                    continue
                content = "\n".join(lines[start:end])
                code = "{code-cell}" in content
            solutions.setdefault(arg, []).append({"folded": opts.get("class") == "dropdown", "code": code,
                                                  "checked": code and any(c in content for c in CHECKS)})
    return exercises, solutions


def test_the_scanner_reads_exercises_and_gated_solutions(tmp_path):
    text = ("```{exercise}\n:label: ex-a\nQ\n```\n\n```{solution-start} ex-a\n:class: dropdown\n```\n"
            "A\n```{code-cell} ipython3\ncheck('x', 1, 1, rtol=0)\n```\n```{solution-end}\n```\n"
            "```{exercise}\n:label: ex-b\nQ\n```\n```{solution} ex-b\nA\n```\n")
    p = tmp_path / "chapter.md"
    p.write_text(text)
    ex, sol = exercises_of(p)
    assert ex == ["ex-a", "ex-b"]
    assert sol["ex-a"] == [{"folded": True, "code": True, "checked": True}]
    assert sol["ex-b"] == [{"folded": False, "code": False, "checked": False}]
    # A stray fence inside a gated solution swallows its solution-end (the build then fails).
    p.write_text("```{exercise}\n:label: ex-a\nQ\n```\n```{solution-start} ex-a\n:class: dropdown\n```\n"
                 "A\n```\n\n```{solution-end}\n```\n")
    _, sol = exercises_of(p)
    assert sol["ex-a"][0].get("unclosed")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_has_three_exercises_each_with_one_folded_solution(path):
    exercises, solutions = exercises_of(path)
    assert len(exercises) >= 3, f"{path.name}: {len(exercises)} exercises"
    assert all(exercises), f"{path.name}: an exercise without a :label:"
    assert len(set(exercises)) == len(exercises), f"{path.name}: duplicated exercise labels"
    for label in exercises:
        assert len(solutions.get(label, [])) == 1, f"{path.name}: exercise {label} has no (or several) solution"
        assert not solutions[label][0].get("unclosed"), f"{path.name}: the solution of {label} has no solution-end"
        assert solutions[label][0]["folded"], f"{path.name}: the solution of {label} is not folded (:class: dropdown)"
    assert set(solutions) <= set(exercises), f"{path.name}: solutions to unknown exercises"
    assert any(s[0]["checked"] for s in solutions.values()), \
        f"{path.name}: no solution runs code ending in a check of slrlib.verify"
