"""No computed result is typed into a chapter's prose: numbers there are glued or are the paper's.

The scan reads each chapter's markdown outside code cells, display math, directive options
and roles (so ``{glue:text}`...` ``, ``{eq}`...` `` and inline code are not prose), and
collects every number: in the text, every number of two digits or more or with a decimal
point, exponent or percent sign, and any count "9 of the 30", that does not follow a structural word ("chapter 6",
"Theorem 1", "eq. (9)", "Figure 4", "Section 2.1"); in inline math, every decimal, power of ten and number
of two digits or more (``$\\kappa = 0.993$``, ``$10^{-14}$``, ``$d = 400$``).

A number found must be a *parameter*: a value of the paper's experiments as the library
records them (``PGD_CONFIGS``, ``SGD_CONFIGS``, ``TRANSFORMER_CONFIGS`` and the case studies'
run parameters), or one listed below for its chapter with the reason it is not a result
(a parameter the chapter's cell sets, a fact stated by the paper, an exercise's suggestion).
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.md"))

STRUCTURAL = re.compile(
    r"(?:chapters?|Chapters?|Figures?|Fig\.|eqs?\.|equations?|Theorems?|Lemmas?|Propositions?|Corollar(?:y|ies)|"
    r"Assumptions?|Definitions?|Sections?|Appendi(?:x|ces)|Tables?|items?|Remarks?|Examples?|Exercises?|"
    r"Algorithms?|Parts?)\s*\(?$")
TEXT_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:[,\u202f\u2009 ]\d{3})+|\d+)(\.\d+)?((?:\s*[×x]\s*10\^?[-−]?\d+)|e[-−+]?\d+)?(%|\s?percent)?(?![\w])")
MATH_NUMBER = re.compile(
    r"(?<![\w.\\{^_])(\d+\.\d+|\d{1,3}(?:\\,\d{3})+|\d{2,}(?:\^\{?[-−]?\d+\}?)?|\d\s*\\cdot\s*10\^\{?[-−]?\d+\}?)(?![\w}])")


def prose_lines(text: str):
    """(line number, line) of the prose: not front matter, code cells, fences or display math."""
    lines = text.splitlines()
    start = 0
    if lines and lines[0].strip() == "---":
        start = lines.index("---", 1) + 1
    fence = None
    in_math = False
    for n in range(start, len(lines)):
        s = lines[n].strip()
        if fence:
            if s.startswith(fence) and not s.strip("`~"):
                fence = None
            continue
        m = re.match(r"^(`{3,}|~{3,})(.*)$", s)
        if m:
            if not m.group(2).startswith("{") or re.match(r"\{(code-cell|math|glue|raw|code|eval-rst)", m.group(2)):
                fence = m.group(1)
            continue  # another directive: its body is prose
        if s.startswith("$$") or in_math:
            if s.count("$$") == 1:
                in_math = not in_math
            continue
        if re.match(r"^(:[\w-]+:|\(.+\)=$|%|<!--|:{3,})", s):
            continue
        yield n + 1, lines[n]


def _value(token: str) -> float:
    t = token.replace("\\,", "").replace(",", "").replace("\u202f", "").replace("\u2009", "").replace(" ", "")
    t = t.replace("−", "-").replace("%", "").replace("percent", "")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)?(?:\\cdot|×|x)?10\^\{?(-?\d+)\}?", t)
    if m:
        return float(m.group(1) or 1) * 10.0 ** int(m.group(2))
    return float(t)


def typed_numbers(text: str) -> list[tuple[int, str, float, str]]:
    """(line, token, value, line text) of each number typed in the prose, structural ones excepted."""
    found = []
    for n, raw in prose_lines(text):
        maths = re.findall(r"(?<![$\\])\$([^$]+)\$(?!\$)", raw)
        line = re.sub(r"(?<![$\\])\$[^$]+\$(?!\$)", " ", raw)
        line = re.sub(r"\{[\w:.-]+\}`[^`]*`", " ", line)          # roles: glue, eq, ref, cite, doc
        line = re.sub(r"`[^`]*`", " ", line)                       # inline code
        line = re.sub(r"\]\([^)]*\)|https?://\S+", " ", line)      # link targets
        line = re.sub(r"^\s*(?:\d+\.|[-*])\s", " ", line)          # list markers
        for m in TEXT_NUMBER.finditer(line):
            integer, decimals, exponent, percent = m.groups()
            count_of = re.match(r"\s+of\s+(?:the\s+|all\s+)?\d", line[m.end():])  # "9 of the 30 runs"
            if not (decimals or exponent or percent or count_of) and len(integer) < 2:
                continue  # a single digit: "2 cores", "1/L", counting
            if not exponent and STRUCTURAL.search(line[: m.start()].rstrip()):
                continue
            found.append((n, m.group(0).strip(), _value(m.group(0).strip().split("x")[0].split("×")[0]), raw.strip()))
        for expr in maths:
            for m in MATH_NUMBER.finditer(expr):
                found.append((n, m.group(0), _value(m.group(0)), raw.strip()))
    return found


# ------------------------------------------------------------------ what may be typed
def _numbers_in(obj, out: set[float], depth: int = 0) -> None:
    if depth > 4:
        return
    if isinstance(obj, bool):
        return
    if isinstance(obj, (int, float)):
        out.add(float(obj))
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            _numbers_in(getattr(obj, f.name), out, depth + 1)
    elif isinstance(obj, dict):
        for v in obj.values():
            _numbers_in(v, out, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _numbers_in(v, out, depth + 1)


def paper_parameters() -> set[float]:
    """Every number in the library's records of the paper's experiments."""
    from slrlib import experiments
    from slrlib.experiments import group_sparse, nn1, random_walk, transformer

    values: set[float] = set()
    for module in (experiments, transformer, nn1, group_sparse, random_walk):
        for name in dir(module):
            if name.isupper():
                _numbers_in(getattr(module, name), values)
    return values


#: Per chapter: numbers typed on purpose, each with why it is not a computed result.
ALLOWED: dict[str, dict[float, str]] = {}


def _allowed(chapter: str, value: float, parameters: set[float]) -> bool:
    candidates = set(parameters) | set(ALLOWED.get(chapter, {}))
    return any(math.isclose(value, p, rel_tol=1e-9, abs_tol=0.0) for p in candidates)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_computed_result_is_typed_in_the_prose(chapter):
    parameters = paper_parameters()
    typed = [(n, token, line) for n, token, value, line in typed_numbers(chapter.read_text(encoding="utf-8"))
             if not _allowed(chapter.stem, value, parameters)]
    assert not typed, f"{chapter.name}: numbers typed in the prose (glue them, or list a parameter in ALLOWED):\n" + \
        "\n".join(f"  line {n}: {token!r} in: {line[:110]}" for n, token, line in typed)


def test_the_scan_finds_typed_results_and_spares_glue_and_references():
    text = "\n".join([
        "---", "jupytext: x", "---",
        "The runs end at $\\kappa = 0.993$, within $10^{-14}$ of PGD; 9 of the 27 runs swap.",
        "By Theorem 1 and eq. (9), see chapter 12; the value is {glue:text}`kappa:.3f`.",
        "```{code-cell} ipython3", "x = 0.5", "```",
        "$$ a = 0.25 $$",
        "Accuracy was 93.4% against 12.5 percent.",
    ])
    tokens = [t for _, t, _, _ in typed_numbers(text)]
    assert tokens == ["9", "27", "0.993", "10^{-14}", "93.4%", "12.5 percent"]


def test_paper_parameters_hold_the_papers_sizes():
    values = paper_parameters()
    assert {400.0, 10.0, 30.0, 120_000.0, 0.004} <= values
