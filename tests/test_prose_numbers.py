"""No computed result is typed into a chapter's prose: numbers there are glued or are the paper's.

The scan reads each chapter's markdown outside code cells, display math, directive options
and roles (so ``{glue:text}`...` ``, ``{eq}`...` `` and inline code are not prose), and
collects every number: in the text, every number of two digits or more or with a decimal
point, exponent or percent sign, and any count "9 of the 30", that does not follow a structural word ("chapter 6",
"Theorem 1", "eq. (9)", "Figure 4", "Section 2.1") or is a year after an author; in inline math, every decimal, power of ten and number
of two digits or more (``$\\kappa = 0.993$``, ``$10^{-14}$``, ``$d = 400$``).

A number found must be a *parameter*: a value of the paper's experiments as the library
records them (``PGD_CONFIGS``, ``SGD_CONFIGS``, ``TRANSFORMER_CONFIGS`` and the case studies'
run parameters), a literal of the chapter's own code cells (a size or a grid the chapter
sets: a computed result is never a literal), or one listed in ``ALLOWED`` for its chapter
with the reason it is not a result (a fact stated by the paper, an exercise's suggestion).
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.md")) + [ROOT / "book" / "related_work.md"]

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
            if line[m.start() - 1: m.start()] == "(" and line[m.end(): m.end() + 1] == ")" and not decimals:
                continue  # "(31)": an equation of the paper
            if re.fullmatch(r"(19|20)\d\d", m.group(0)) and re.search(r"(al\.|[A-Z][a-z]+)\s*$", line[: m.start()]):
                continue  # a year after an author: "Li et al. 2024"
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
ALLOWED: dict[str, dict[float, str]] = {
    "01_task": {1e-5: "P(|z| > 4.5) of a normal law, the threshold of check_z",
                3000: "300 sequences of L = 10 tokens, the figure's sample size",
                99: "an exercise's target accuracy"},
    "03_oracle_risk": {1e-16: "float64 round-off (machine epsilon 2.2e-16)",
                       1e-15: "float64 round-off of sums of numbers of order 1",
                       1e-13: "the accuracy requested from scipy.integrate.quad",
                       120: "120 million = 30 000 samples x 4000 coordinates, the cell's sizes"},
    "06_pgd": {0.05: "1/sqrt(400), the paper's d", 24: "the starting points the cell builds (a 4 x 6 grid)",
               1e-6: "an exercise's perturbation"},
    "07_theorem5": {1e-300: "the smallest float64 values erfc keeps", 24: "the starting points the cell builds",
                    40401: "201 x 201, the grid the cell sets", 95: "the band's definition (2.5% and 97.5% quantiles)"},
    "08_beyond_manifold": {2.5: "the band's definition", 97.5: "the band's definition",
                           95: "the confidence level of an interval", 1600: "an exercise's dimension",
                           6000: "the logged step that the check above the sentence reads"},
    "09_sgd": {0.6: "a test point's overlap (set in the cell through a helper)", 0.2: "a test point's overlap",
               0.3: "a test point's overlap", 160: "2d tangent coordinates, d = 80",
               55: "10 x 11 / 2 covariances of 10 statistics", 65: "10 means + 55 covariances",
               1e-7: "float32 resolution (2^-24 = 6e-8)", 4000: "the fresh sequences the companion draws",
               1e-16: "float64 round-off"},
    "10_transformer": {1e-5: "LayerNorm's epsilon in the paper's architecture", 2.1: "2^21 = 2.1 x 10^6, arithmetic",
                       98: "the definition of 'partly active' (2 % to 98 %)"},
    "11_multi": {121: "the quadrature's nodes per axis (slrlib.book.ch11_multi's rule)",
                 60000: "the simulated sequences of the cell (3 x 20 000)",
                 3.5: "2/3.5: the schedule's arithmetic", 0.57: "2/3.5, arithmetic", 0.095: "2/21, arithmetic",
                 2.5: "the band's definition", 97.5: "the band's definition"},
    "12_probing": {768: "bert-base-uncased's width, as the paper states", 15552: "the paper's training set size",
                   440: "the download size of bert-base-uncased"},
    "13_token_selection": {90: "the accuracy the exercise-style question asks about"},
    "04_bayes": {1e-300: "the range of hard_oracle_risk's quadrature, a property of the method"},
}


def code_literals(text: str) -> set[float]:
    """The numeric literals of a chapter's code cells (``50_000``, ``1e-3``, ``10**6``)."""
    import io
    import tokenize

    values: set[float] = set()
    for cell in re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, flags=re.S | re.M):
        try:
            tokens = [t for t in tokenize.generate_tokens(io.StringIO(cell).readline)]
        except (tokenize.TokenError, IndentationError, SyntaxError):
            continue
        for i, tok in enumerate(tokens):
            if tok.type != tokenize.NUMBER or tok.string.endswith(("j", "J")):
                continue
            value = float(eval(tok.string))  # a literal only
            values.add(value)
            if i + 2 < len(tokens) and tokens[i + 1].string == "**" and tokens[i + 2].type == tokenize.NUMBER:
                values.add(value ** float(eval(tokens[i + 2].string)))
            if i >= 1 and tokens[i - 1].string == "-":
                values.add(-value)
    return values


def _allowed(chapter: str, value: float, parameters: set[float]) -> bool:
    candidates = set(parameters) | set(ALLOWED.get(chapter, {}))
    return any(math.isclose(value, p, rel_tol=1e-9, abs_tol=0.0) for p in candidates)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_computed_result_is_typed_in_the_prose(chapter):
    text = chapter.read_text(encoding="utf-8")
    parameters = paper_parameters() | code_literals(text)
    typed = [(n, token, line) for n, token, value, line in typed_numbers(text)
             if not _allowed(chapter.stem, value, parameters)]
    assert not typed, f"{chapter.name}: numbers typed in the prose (glue them, or list a parameter in ALLOWED):\n" + \
        "\n".join(f"  line {n}: {token!r} in: {line[:110]}" for n, token, line in typed)


def test_the_scan_finds_typed_results_and_spares_glue_and_references():
    text = "\n".join([
        "---", "jupytext: x", "---",
        "The runs end at $\\kappa = 0.993$, within $10^{-14}$ of PGD; 9 of the 27 runs swap.",
        "By Theorem 1 and eq. (9), see chapter 12 (Li et al. 2024); the value is {glue:text}`kappa:.3f`.",
        "```{code-cell} ipython3", "x = 0.5", "```",
        "$$ a = 0.25 $$",
        "Accuracy was 93.4% against 12.5 percent.",
    ])
    tokens = [t for _, t, _, _ in typed_numbers(text)]
    assert tokens == ["9", "27", "0.993", "10^{-14}", "93.4%", "12.5 percent"]


def test_code_literals_are_the_cells_numbers():
    text = "Prose 7.\n```{code-cell} ipython3\nn = 50_000\nlam = np.geomspace(1e-3, 10**6, 5)\nx = -0.25\n```\n"
    assert code_literals(text) == {50_000.0, 1e-3, 10.0, 6.0, 1e6, 5.0, 0.25, -0.25}


def test_paper_parameters_hold_the_papers_sizes():
    values = paper_parameters()
    assert {400.0, 10.0, 30.0, 120_000.0, 0.004} <= values
