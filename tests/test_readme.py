"""The README's "first hour" example runs as printed, and says what it computes."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[1] / "README.md"
MARKER = "<!-- first-hour:"


def first_hour_code(marker: str = MARKER) -> str:
    """The Python block that follows ``marker`` in the README (the first-hour one by default)."""
    text = README.read_text(encoding="utf-8")
    assert marker in text, f"the README has no {marker!r} block"
    block = re.search(r"```python\n(.*?)```", text[text.index(marker):], re.S)
    assert block is not None, f"no Python block after {marker!r}"
    return block.group(1)


def test_using_slrlib_example_prints_the_numbers_its_comments_say():
    """The numbers typed in the comments of "Using slrlib", recomputed: each to the digits shown, and
    the Monte Carlo mean within 3 of its standard errors of the closed form."""
    code = first_hour_code("<!-- using:")
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)
    comments = {line.split("#")[0].strip(): line.split("#", 1)[1] for line in code.splitlines() if "#" in line}

    def typed(expression: str) -> list[str]:
        return re.findall(r"\d+\.\d+", comments[expression])

    def shown(value: float, text: str) -> bool:
        return f"{value:.{len(text.split('.')[1])}f}" == text

    oracle = float(eval("oracle_risk(0.064, task)", namespace))
    linear = float(eval("linear_risk(task)", namespace))
    null = float(eval("slrlib.null_risk(task)", namespace))
    assert shown(oracle, typed("oracle_risk(0.064, task)")[0]), (oracle, comments)
    assert [shown(linear, typed("linear_risk(task)")[0]), shown(null, typed("linear_risk(task)")[1])] == [True, True]
    est = namespace["est"]
    mean, stderr = typed("est.mean, est.stderr")
    assert shown(float(est.mean), mean) and shown(float(est.stderr), stderr), (est, comments)
    assert abs(float(est.mean) - oracle) < 3 * float(est.stderr)


def test_first_hour_example_runs_and_its_comments_hold():
    code = first_hour_code()
    assert len(code.splitlines()) <= 15, "the first-hour example is meant to be short"
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)
    at_oracle, closed, flipped = (float(namespace[n]) for n in ("at_oracle", "closed", "flipped"))
    kappa, nu, found = (np.asarray(namespace[n]) for n in ("kappa", "nu", "found"))
    # "Theorem 1: the same number": two derivations, one float64 computation each.
    np.testing.assert_allclose(at_oracle, closed, rtol=1e-12)
    # "erf is odd: equals at_oracle" (the same operations on negated inputs).
    np.testing.assert_allclose(flipped, at_oracle, rtol=1e-13)
    # "every run found the oracle, up to sign": recovered, and kappa, nu of one sign in each run.
    assert found.shape == (5,) and found.all(), (kappa, nu)
    assert np.all(kappa * nu > 0), (kappa, nu)
    # "Some runs end at (kappa, nu) = (-1, -1)" (the prose under the block).
    assert np.any((kappa < 0) & (nu < 0)) and np.any((kappa > 0) & (nu > 0)), (kappa, nu)
