"""The README's "first hour" example runs as printed, and says what it computes."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[1] / "README.md"
MARKER = "<!-- first-hour:"


def first_hour_code() -> str:
    """The Python block that follows the first-hour marker of the README."""
    text = README.read_text(encoding="utf-8")
    assert MARKER in text, f"the README has no {MARKER!r} block"
    block = re.search(r"```python\n(.*?)```", text[text.index(MARKER):], re.S)
    assert block is not None, "no Python block after the first-hour marker"
    return block.group(1)


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
