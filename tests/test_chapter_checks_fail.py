"""The chapters' checks can fail: a 1 % error in one term of Proposition 15 fails chapter 3.

Chapter 3 compares the closed-form risk of Proposition 15 (``slrlib.core.risk.risk_kernel``)
with an independent quadrature of the same expectation at points off the manifold
(the check labelled ``prop15-quadrature``). Here the chapter runs in a fresh kernel, up to
that check (the cells it needs: those that define a name it reads, and theirs in turn, as
``_cells_needed`` finds them; the figures and other checks between are left out: 6 s instead of 13 s),
with ``erf''`` scaled by 1.01 inside the risk module, which multiplies exactly
one term of Proposition 15, :math:`-2\\lambda^2\\gamma^4\\eta\\rho\\,\\operatorname{erf}''(a)/c_2`,
by 1.01. The run must stop at that check with its ``CheckFailed`` message. That the chapter as it is passes the
same check is shown by the book's build (``make test`` executes every chapter; a failed check
stops it), so it is not run a second time here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "book" / "03_oracle_risk.md"
LABEL = "prop15-quadrature"

PERTURBATION = """\
import slrlib.core.risk as _risk_module
_exact_erf_second = _risk_module.erf_second
_risk_module.erf_second = lambda x: 1.01 * _exact_erf_second(x)  # one term of Proposition 15, 1 % off
"""


def _names(source: str) -> tuple[set[str], set[str]]:
    """The names a cell's code binds (assignments, imports, definitions) and the names it reads."""
    bound, read = set(), set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return bound, read


def _cells_needed(sources: list[str]) -> list[int]:
    """Indices of the cells the last one needs: going back from it, every cell that binds a name
    read by a cell already kept (a cell kept for a name it does not bind only costs time)."""
    needed, keep = _names(sources[-1])[1], [len(sources) - 1]
    for i in range(len(sources) - 2, -1, -1):
        bound, read = _names(sources[i])
        if bound & needed:
            keep.append(i)
            needed |= read
    return sorted(keep)


def _chapter_up_to_the_check(perturb: bool) -> "nbformat.NotebookNode":  # noqa: F821 (imported here)
    import jupytext
    import nbformat  # not at collection: its import builds jsonschema's format checkers (a second)

    nb = jupytext.read(CHAPTER)
    code = [c for c in nb.cells if c.cell_type == "code"]
    last = next((i for i, c in enumerate(code) if LABEL in c.source), None)
    assert last is not None, f"{CHAPTER.name} has no check labelled {LABEL!r}"
    nb.cells = [code[i] for i in _cells_needed([c.source for c in code[: last + 1]])]
    if perturb:
        nb.cells.insert(0, nbformat.v4.new_code_cell(PERTURBATION))
    return nb


def _execute(nb):
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(CHAPTER.parent)}}).execute()


@pytest.fixture(autouse=True)
def no_ledger(monkeypatch):
    monkeypatch.delenv("SLR_CHECKS_FILE", raising=False)  # these runs are not the book's


def test_chapter_3_fails_when_one_term_of_proposition_15_is_off_by_one_percent():
    from nbclient.exceptions import CellExecutionError

    with pytest.raises(CellExecutionError) as failure:
        _execute(_chapter_up_to_the_check(perturb=True))
    message = str(failure.value)
    assert "CheckFailed" in message and "check failed" in message, message[-2000:]
    assert "Proposition 15" in message, message[-2000:]  # the claim of the failed check


def test_the_cells_kept_are_those_the_check_needs():
    sources = ["import numpy as np\nfrom m import f", "x = np.ones(3)", "plot(x)", "y = 2",
               "z = f(x)\ncheck('z', z, y)"]
    assert _cells_needed(sources) == [0, 1, 3, 4]  # the plot is left out; np and f come from cell 0
