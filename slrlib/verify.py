r"""Checks that fail: the book's on-screen claims, verified where they are shown.

Every comparison a chapter shows goes through one of four functions. Each shows a one-line
verdict under the cell (the claim, the numbers, the tolerance) and raises
:class:`CheckFailed` when the claim does not hold, so that the chapter, and with it the book
build, fails instead of printing a number nobody reads.

* :func:`check` — two computations agree: :math:`|x - y| \le \mathrm{atol} + \mathrm{rtol}\,|y|`
  elementwise (tolerances from round-off or from a stated accuracy, never chosen to pass);
* :func:`check_z` — a Monte Carlo estimate agrees with its exact value:
  :math:`|z| = |\hat x - x| / \mathrm{SE} \le z_{\max}` (4.5 by default: for 100
  comparisons, a correct formula fails with probability below :math:`10^{-3}`);
* :func:`check_bound` — a value lies in an interval (:math:`\kappa > 0.99`, a risk below
  another);
* :func:`check_that` — a qualitative fact stated in the prose ("all 30 runs recover").

A one-sided comparison of Monte Carlo estimates ("softmax is no better than Bayes, within 4.5
standard errors") checks :func:`z_scores` with :func:`check_bound`: a zero standard error would
make an infinite z, which a one-sided bound could pass, so :func:`z_scores` refuses it.

**The ledger.** Each check is recorded. When the environment variable ``SLR_CHECKS_FILE``
names a file (the book's build sets it to ``_build/checks/<chapter>.json`` for each chapter it
executes), the records so far are written there as JSON after every check, a failed one
included; the appendix "What this book verified" lists them, each linked to its verdict
(whose HTML ``id`` is the record's ``anchor``). :func:`records` returns them in a session.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "Check",
    "CheckFailed",
    "check",
    "check_z",
    "check_bound",
    "check_that",
    "z_scores",
    "records",
    "show_verdicts_with",
    "DEFAULT_Z_MAX",
]

#: Largest absolute z-score that :func:`check_z` accepts by default.
DEFAULT_Z_MAX = 4.5

_LEDGER: list["Check"] = []
_LABEL = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class CheckFailed(AssertionError):
    """A claim shown in the book does not hold (raised by the functions of :mod:`slrlib.verify`)."""


@dataclass(frozen=True)
class Check:
    """One verified claim: what was compared, how, and the verdict.

    Attributes
    ----------
    number : int
        Position in the session (1, 2, ...).
    anchor : str
        The HTML ``id`` of the verdict (``check-<label>`` or ``check-<number>``).
    claim : str
        The claim, in words.
    kind : str
        ``"close"``, ``"z"``, ``"bound"`` or ``"that"``.
    value, reference, tolerance : str
        The compared numbers and the tolerance, as shown.
    passed : bool
    detail : str
        The measured gap (``max |Δ| = 2e-16``, ``max |z| = 1.3``), or what was checked.
    """

    number: int
    anchor: str
    claim: str
    kind: str
    value: str
    reference: str
    tolerance: str
    passed: bool
    detail: str

    def _parts(self) -> list[str]:
        parts = []
        if self.value:
            parts.append(
                self.value
                + (f" vs {self.reference}" if self.reference else "")
            )
        parts.extend(p for p in (self.detail, self.tolerance) if p)
        return parts

    def __str__(self) -> str:
        mark = "✓" if self.passed else "✗ FAILED"
        parts = self._parts()
        return f"{mark} {self.claim}" + (
            f" — {'; '.join(parts)}" if parts else ""
        )

    __repr__ = __str__

    def _ipython_display_(self) -> None:
        """Nothing: the verdict was displayed when the check was made (not again as a cell's value)."""

    def _repr_html_(self) -> str:
        colour = "#1b7f3b" if self.passed else "#b00020"
        mark = "✓" if self.passed else "✗ failed:"
        numbers = [html.escape(p) for p in self._parts()]
        tail = (
            f' <span class="slr-check-numbers">— {"; ".join(numbers)}</span>'
            if numbers
            else ""
        )
        return (
            f'<div class="slr-check slr-check-{"pass" if self.passed else "fail"}" id="{self.anchor}" '
            f'style="border-left: 3px solid {colour}; padding: 0.1em 0.6em; margin: 0.2em 0; '
            f'font-size: 0.9em; overflow-wrap: anywhere">'
            f'<span style="color: {colour}; font-weight: bold">{mark}</span> '
            f'<span class="slr-check-claim">{html.escape(self.claim)}</span>{tail}</div>'
        )


def records() -> list[Check]:
    """The checks made so far in this session, in order."""
    return list(_LEDGER)


# --------------------------------------------------------------------------- helpers
def _fmt(x: float) -> str:
    if x == 0 or (1e-3 <= abs(x) < 1e5):
        return f"{x:.6g}"
    return f"{x:.2e}"


def _summary(a: np.ndarray) -> str:
    if a.size == 1:
        return _fmt(float(a.reshape(-1)[0]))
    return f"{a.size} values in [{_fmt(float(np.min(a)))}, {_fmt(float(np.max(a)))}]"


def _array(name: str, x: Any) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"{name} must be a number or an array of numbers, got {x!r}"
        ) from err
    if a.size == 0:
        raise ValueError(
            f"{name} must hold at least one number, got an empty array"
        )
    return a


def _tolerance(name: str, x: float | None) -> float:
    if x is None:
        return 0.0
    x = float(x)
    if not (math.isfinite(x) and x >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {x!r}")
    return x


def _claim(claim: Any) -> str:
    if not isinstance(claim, str) or not claim.strip():
        raise ValueError(f"claim must be a non-empty string, got {claim!r}")
    return " ".join(claim.split())


def _record(
    claim: str,
    kind: str,
    value: str,
    reference: str,
    tolerance: str,
    passed: bool,
    detail: str,
    label: str | None,
) -> Check:
    number = len(_LEDGER) + 1
    if label is None:
        anchor = f"check-{number}"
    else:
        if not isinstance(label, str) or not _LABEL.match(label):
            raise ValueError(
                f"label must be lower-case letters, digits and hyphens, got {label!r}"
            )
        anchor = f"check-{label}"
    if any(c.anchor == anchor for c in _LEDGER):
        raise ValueError(
            f"label {label!r} is already used by an earlier check in this session"
        )
    result = Check(
        number,
        anchor,
        claim,
        kind,
        value,
        reference,
        tolerance,
        bool(passed),
        detail,
    )
    _LEDGER.append(result)
    path = os.environ.get("SLR_CHECKS_FILE")
    if path:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(target.suffix + ".tmp")
        tmp.write_text(
            json.dumps(
                [asdict(c) for c in _LEDGER], indent=1, ensure_ascii=False
            ),
            encoding="utf-8",
        )
        tmp.replace(target)
    (_SHOW_WITH or _show)(result)
    if not result.passed:
        raise CheckFailed(f"check failed: {result}")
    return result


#: What shows each verdict instead of :func:`_show` (:func:`show_verdicts_with`), or None.
_SHOW_WITH = None


def show_verdicts_with(show: Callable[[Check], None] | None) -> None:
    """Show each check's verdict with ``show(check)`` rather than as an output of its own.

    ``slrlib.book.display.fold_verdicts`` folds a cell's verdicts into one line this way in
    JupyterLab; ``None`` shows each verdict as its own output again (the default).

    Parameters
    ----------
    show : callable or None
        Called with each :class:`Check` once it is recorded, before a failed one raises.
    """
    global _SHOW_WITH
    if show is not None and not callable(show):
        raise ValueError(
            f"show must be callable or None, got {show!r} "
            f"of type {type(show).__name__}"
        )
    _SHOW_WITH = show


def _show(result: Check) -> None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the book, not of the library
        return
    if get_ipython() is None:
        return
    from IPython.display import display

    display(
        {"text/html": result._repr_html_(), "text/plain": str(result)},
        raw=True,
    )


# --------------------------------------------------------------------------- the checks
def check(
    claim: str,
    value: Any,
    reference: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    label: str | None = None,
) -> Check:
    r"""Check that two computations agree: :math:`|x - y| \le \mathrm{atol} + \mathrm{rtol}\,|y|`, elementwise.

    Parameters
    ----------
    claim : str
        What agreement shows, in words ("Proposition 15 at the oracle is eq. (9)").
    value, reference : array_like
        The two computations (they broadcast); ``reference`` is the one that scales ``rtol``.
    rtol, atol : float, optional
        Relative and absolute tolerances, >= 0 (default 0: exact equality, for counts).
        Derive them: round-off (a few ulps times the condition of the computation), a
        quadrature's or an expansion's stated accuracy.
    label : str, optional
        A stable name for the verdict's anchor (``check-<label>``); default its number.

    Returns
    -------
    Check
        The verdict (also displayed under the cell, and recorded).

    Raises
    ------
    CheckFailed
        When some entry differs by more than the tolerance, or is not finite.
    ValueError
        When a tolerance is negative or not finite, or the arrays do not broadcast.
    """
    claim = _claim(claim)
    rtol, atol = _tolerance("rtol", rtol), _tolerance("atol", atol)
    x, y = _array("value", value), _array("reference", reference)
    try:
        x, y = np.broadcast_arrays(x, y)
    except ValueError as err:
        raise ValueError(
            f"value and reference must broadcast, got shapes {x.shape} and {y.shape}"
        ) from err
    gap = np.abs(x - y)
    allowed = atol + rtol * np.abs(y)
    finite = np.isfinite(x) & np.isfinite(y)
    passed = bool(np.all(finite) and np.all(gap <= allowed))
    with np.errstate(invalid="ignore", divide="ignore"):
        worst = int(np.argmax(np.where(finite, gap - allowed, np.inf)))
    if rtol == 0 and atol == 0:
        tolerance = "exact"
    else:
        tolerance = "tolerance " + " + ".join(
            t
            for t in (
                (atol and f"{_fmt(atol)}"),
                (rtol and f"{_fmt(rtol)}·|reference|"),
            )
            if t
        )
    detail = (
        "not finite"
        if not np.all(finite)
        else ("|Δ|" if gap.size == 1 else "max |Δ|")
        + f" = {_fmt(float(gap.reshape(-1)[worst]))}"
    )
    return _record(
        claim,
        "close",
        _summary(x),
        _summary(y),
        tolerance,
        passed,
        detail,
        label,
    )


def z_scores(difference: Any, stderr: Any) -> np.ndarray:
    r"""Standardised differences :math:`z = \Delta / \mathrm{SE}`, elementwise, for a bound on them.

    Parameters
    ----------
    difference : array_like
        The differences (an estimate minus its reference, or two estimates' difference).
    stderr : array_like
        Their standard errors; they broadcast with ``difference``.

    Returns
    -------
    numpy.ndarray
        The z-scores.

    Raises
    ------
    ValueError
        When a standard error is not finite and > 0 (a z-score from it would be infinite or
        undefined, and could pass a one-sided bound), or a difference is not finite, or the
        two do not broadcast.
    """
    x, se = _array("difference", difference), _array("stderr", stderr)
    try:
        x, se = np.broadcast_arrays(x, se)
    except ValueError as err:
        raise ValueError(
            f"difference and stderr must broadcast, got shapes {x.shape} "
            f"and {se.shape}"
        ) from err
    if not np.all(np.isfinite(se) & (se > 0)):
        bad = se[~(np.isfinite(se) & (se > 0))]
        raise ValueError(
            "stderr must be finite and > 0 everywhere (a z-score from it "
            f"would be infinite or undefined), got {float(bad[0])!r}"
        )
    if not np.all(np.isfinite(x)):
        raise ValueError("difference must be finite everywhere")
    return x / se


def check_z(
    claim: str,
    estimate: Any,
    reference: Any,
    stderr: Any = None,
    *,
    z_max: float = DEFAULT_Z_MAX,
    label: str | None = None,
) -> Check:
    r"""Check that Monte Carlo estimates agree with exact values: :math:`\max |z| \le z_{\max}`.

    :math:`z = (\hat x - x)/\mathrm{SE}`. Under a correct formula each :math:`z` is about
    standard normal, so :math:`|z| > 4.5` has probability :math:`6.8\cdot 10^{-6}` per
    comparison.

    Parameters
    ----------
    claim : str
        What agreement shows.
    estimate : array_like or MonteCarloEstimate
        The Monte Carlo means; an object with ``mean`` and ``stderr`` attributes
        (:class:`slrlib.core.montecarlo.MonteCarloEstimate`) supplies both.
    reference : array_like
        The exact values.
    stderr : array_like, optional
        The standard errors (> 0); required unless ``estimate`` carries them.
    z_max : float
        Largest accepted :math:`|z|` (> 0).
    label : str, optional
        A stable name for the verdict's anchor.

    Returns
    -------
    Check

    Raises
    ------
    CheckFailed
        When some :math:`|z| > z_{\max}` or an entry is not finite.
    ValueError
        When ``stderr`` is missing or not > 0, ``z_max`` is not > 0, or the arrays do not
        broadcast.
    """
    claim = _claim(claim)
    if (
        hasattr(estimate, "mean")
        and hasattr(estimate, "stderr")
        and not isinstance(estimate, np.ndarray)
    ):
        if stderr is None:
            stderr = estimate.stderr
        estimate = estimate.mean
    if stderr is None:
        raise ValueError(
            "stderr must be given (or estimate must carry .mean and .stderr), got None"
        )
    z_max = float(z_max)
    if not (math.isfinite(z_max) and z_max > 0):
        raise ValueError(f"z_max must be a finite number > 0, got {z_max!r}")
    x, y, se = (
        _array("estimate", estimate),
        _array("reference", reference),
        _array("stderr", stderr),
    )
    try:
        x, y, se = np.broadcast_arrays(x, y, se)
    except ValueError as err:
        raise ValueError(
            f"estimate, reference and stderr must broadcast, got shapes {x.shape}, {y.shape}, "
            f"{se.shape}"
        ) from err
    if not np.all(se > 0):
        raise ValueError(
            f"stderr must be > 0 everywhere, got minimum {float(np.min(se))!r}"
        )
    z = (x - y) / se
    finite = np.isfinite(z)
    passed = bool(np.all(finite) and np.all(np.abs(z) <= z_max))
    zabs = float(np.max(np.abs(z))) if np.all(finite) else math.inf
    detail = (
        f"|z| = {zabs:.2f}"
        if z.size == 1
        else f"{z.size} comparisons, max |z| = {zabs:.2f}"
    )
    return _record(
        claim,
        "z",
        _summary(x)
        + (f" ± {_fmt(float(se.reshape(-1)[0]))}" if z.size == 1 else ""),
        _summary(y),
        f"|z| ≤ {z_max:g}",
        passed,
        detail,
        label,
    )


def check_bound(
    claim: str,
    value: Any,
    *,
    lower: float | None = None,
    upper: float | None = None,
    label: str | None = None,
) -> Check:
    r"""Check that every entry of ``value`` lies in ``[lower, upper]``.

    Parameters
    ----------
    claim : str
        What the bound shows ("every run ends with κ > 0.99").
    value : array_like
    lower, upper : float or array_like, optional
        The bounds (inclusive; at least one). They broadcast with ``value``.
    label : str, optional
        A stable name for the verdict's anchor.

    Returns
    -------
    Check

    Raises
    ------
    CheckFailed
        When some entry is outside the bounds or not finite.
    ValueError
        When neither bound is given, or ``lower > upper`` somewhere.
    """
    claim = _claim(claim)
    if lower is None and upper is None:
        raise ValueError(
            "lower and upper are both None: give at least one bound"
        )
    x = _array("value", value)
    lo = _array("lower", -np.inf if lower is None else lower)
    hi = _array("upper", np.inf if upper is None else upper)
    if np.any(lo > hi):
        raise ValueError(
            f"lower must be <= upper, got lower={lower!r}, upper={upper!r}"
        )
    passed = bool(np.all(np.isfinite(x)) and np.all((x >= lo) & (x <= hi)))
    if lower is not None and upper is not None:
        bound = f"in [{_summary(lo)}, {_summary(hi)}]"
    elif lower is not None:
        bound = f"≥ {_summary(lo)}"
    else:
        bound = f"≤ {_summary(hi)}"
    if x.size == 1:
        value_text = _fmt(float(x.reshape(-1)[0]))
    else:
        value_text = f"{x.size} values, min {_fmt(float(np.min(x)))}, max {_fmt(float(np.max(x)))}"
    return _record(claim, "bound", value_text, "", "", passed, bound, label)


def check_that(
    claim: str, condition: Any, *, detail: str = "", label: str | None = None
) -> Check:
    """Check a qualitative fact: ``condition`` (a bool, or an array that must be all true) holds.

    Parameters
    ----------
    claim : str
        The fact, as the prose states it ("all 30 runs reach κ > 0.99").
    condition : bool or array_like of bool
        True when the fact holds; an array must be true everywhere.
    detail : str
        The numbers behind it, shown beside the verdict ("30 of 30").
    label : str, optional
        A stable name for the verdict's anchor.

    Returns
    -------
    Check

    Raises
    ------
    CheckFailed
        When ``condition`` is false (somewhere).
    ValueError
        When ``condition`` is empty or not boolean.
    """
    claim = _claim(claim)
    c = np.asarray(condition)
    if c.size == 0 or c.dtype != bool:
        raise ValueError(
            f"condition must be a bool or a non-empty array of bools, got {condition!r}"
        )
    passed = bool(np.all(c))
    if c.size > 1:
        detail = ", ".join(
            p for p in (detail, f"{int(np.sum(c))} of {c.size} hold") if p
        )
    return _record(claim, "that", "", "", "", passed, str(detail), label)
