"""The chapters' checks can fail: a 1 % error in one term of Proposition 15 fails chapter 3.

Chapter 3 compares the closed-form risk of Proposition 15 (``slrlib.core.risk.risk_kernel``)
with an independent quadrature of the same expectation at points off the manifold
(the check labelled ``prop15-quadrature``). Here the chapter runs in a fresh kernel, up to
that check, with ``erf''`` scaled by 1.01 inside the risk module, which multiplies exactly
one term of Proposition 15, :math:`-2\\lambda^2\\gamma^4\\eta\\rho\\,\\operatorname{erf}''(a)/c_2`,
by 1.01. The run must stop at that check with its ``CheckFailed`` message. That the chapter as it is passes the
same check is shown by the book's build (``make test`` executes every chapter; a failed check
stops it), so it is not run a second time here.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "book" / "03_oracle_risk.md"
LABEL = "prop15-quadrature"

PERTURBATION = """\
import slrlib.core.risk as _risk_module
_exact_erf_second = _risk_module.erf_second
_risk_module.erf_second = lambda x: 1.01 * _exact_erf_second(x)  # one term of Proposition 15, 1 % off
"""


def _chapter_up_to_the_check(perturb: bool) -> nbformat.NotebookNode:
    import jupytext

    nb = jupytext.read(CHAPTER)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    last = next((i for i in code if LABEL in nb.cells[i].source), None)
    assert last is not None, f"{CHAPTER.name} has no check labelled {LABEL!r}"
    nb.cells = [c for c in nb.cells[: last + 1] if c.cell_type == "code"]
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
