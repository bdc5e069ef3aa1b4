"""slrlib.verify: the checks pass what holds, fail what does not, and record both."""

import json
import math

import numpy as np
import pytest

from slrlib import verify
from slrlib.core.montecarlo import MonteCarloEstimate


@pytest.fixture(autouse=True)
def fresh_ledger(monkeypatch, tmp_path):
    """Each test starts with an empty ledger written to its own file."""
    monkeypatch.setattr(verify, "_LEDGER", [])
    path = tmp_path / "checks" / "chapter.json"
    monkeypatch.setenv("SLR_CHECKS_FILE", str(path))
    return path


def test_check_passes_within_tolerance_and_fails_beyond():
    ulp = np.spacing(1.0)
    assert verify.check("one ulp apart", 1.0 + ulp, 1.0, rtol=4 * ulp).passed
    with pytest.raises(verify.CheckFailed, match="ten ulps apart"):
        verify.check("ten ulps apart", 1.0 + 10 * ulp, 1.0, rtol=4 * ulp)


def test_check_uses_atol_plus_rtol_times_reference():
    # allowed gap at reference 100: 0.5 + 0.01 * 100 = 1.5
    assert verify.check("inside", 101.4, 100.0, atol=0.5, rtol=0.01).passed
    with pytest.raises(verify.CheckFailed):
        verify.check("outside", 101.6, 100.0, atol=0.5, rtol=0.01)


def test_check_on_arrays_fails_on_one_bad_entry_and_on_nan():
    ref = np.linspace(1, 2, 50)
    assert verify.check("close everywhere", ref * (1 + 1e-14), ref, rtol=1e-13).passed
    bad = ref.copy()
    bad[17] += 1e-6
    with pytest.raises(verify.CheckFailed, match=r"max \|Δ\| = 1.00e-06"):
        verify.check("one entry off", bad, ref, rtol=1e-13)
    bad[17] = np.nan
    with pytest.raises(verify.CheckFailed, match="not finite"):
        verify.check("a NaN", bad, ref, rtol=1.0)


def test_exact_check_for_counts():
    assert verify.check("nine of thirty", 9, 9).tolerance == "exact"
    with pytest.raises(verify.CheckFailed):
        verify.check("ten is not nine", 10, 9)


def test_check_z_from_numbers_and_from_an_estimate():
    assert verify.check_z("z = 4", 1.04, 1.0, 0.01).passed
    with pytest.raises(verify.CheckFailed, match=r"\|z\| = 5.00"):
        verify.check_z("z = 5", 1.05, 1.0, 0.01)
    est = MonteCarloEstimate(mean=np.array([1.0, 2.03]), stderr=np.array([0.1, 0.01]), n=1000)
    with pytest.raises(verify.CheckFailed, match="2 comparisons, max"):
        verify.check_z("from an estimate", est, np.array([1.0, 2.0]), z_max=2.5)


def test_check_z_is_calibrated_on_correct_estimates():
    """Under the null hypothesis the default z_max almost never rejects (P < 1e-3 for 100 draws)."""
    rng = np.random.default_rng(0)
    truth = rng.uniform(1, 2, size=100)
    se = 0.01 * truth
    estimate = truth + se * rng.standard_normal(100)
    assert verify.check_z("calibrated", estimate, truth, se).passed
    assert 2 * 100 * 0.5 * math.erfc(verify.DEFAULT_Z_MAX / math.sqrt(2)) < 1e-3


def test_z_scores_for_a_one_sided_bound():
    """z = difference / stderr; a zero standard error raises (chapter 14 divided by one at points it
    then masked out, with a warning on the page: issue 40) rather than giving an infinite z."""
    z = verify.z_scores(np.array([-3.0, 1.0]), np.array([1.5, 0.5]))
    np.testing.assert_array_equal(z, [-2.0, 2.0])
    assert verify.check_bound("within 4.5 s.e.", z, upper=4.5).passed
    with pytest.raises(ValueError, match="stderr must be finite and > 0"):
        verify.z_scores([-1.0], [0.0])
    with np.errstate(divide="ignore"), pytest.raises(verify.CheckFailed):
        verify.check_bound("an infinite z is not a pass", np.array([-1.0]) / 0.0, upper=4.5)


def test_check_bound_and_check_that():
    assert verify.check_bound("kappa above 0.99", [0.995, 0.999], lower=0.99).passed
    with pytest.raises(verify.CheckFailed):
        verify.check_bound("kappa above 0.99", [0.995, 0.98], lower=0.99)
    with pytest.raises(verify.CheckFailed):
        verify.check_bound("risk below one", [0.2, np.nan], upper=1.0)
    assert verify.check_that("all runs recover", np.ones(30, bool)).detail == "30 of 30 hold"
    with pytest.raises(verify.CheckFailed, match="29 of 30 hold"):
        verify.check_that("all runs recover", np.r_[np.ones(29, bool), False])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: verify.check("c", 1.0, 1.0, rtol=-1e-3), "rtol must be a finite number >= 0"),
        (lambda: verify.check("c", 1.0, 1.0, atol=math.nan), "atol must be a finite number >= 0"),
        (lambda: verify.check("c", [1.0, 2.0], [1.0, 2.0, 3.0]), "value and reference must broadcast"),
        (lambda: verify.check("", 1.0, 1.0), "claim must be a non-empty string"),
        (lambda: verify.check("c", [], 1.0), "value must hold at least one number"),
        (lambda: verify.check_z("c", 1.0, 1.0), "stderr must be given"),
        (lambda: verify.check_z("c", 1.0, 1.0, 0.0), "stderr must be > 0"),
        (lambda: verify.check_z("c", 1.0, 1.0, 0.1, z_max=0), "z_max must be a finite number > 0"),
        (lambda: verify.check_bound("c", 1.0), "give at least one bound"),
        (lambda: verify.check_bound("c", 1.0, lower=2, upper=1), "lower must be <= upper"),
        (lambda: verify.check_that("c", 1), "condition must be a bool"),
        (lambda: verify.check("c", 1.0, 1.0, label="Not A Label"), "label must be lower-case"),
        (lambda: verify.z_scores([1.0, 2.0], [0.5, 0.0]), "stderr must be finite and > 0"),
        (lambda: verify.z_scores([1.0], [math.inf]), "stderr must be finite and > 0"),
        (lambda: verify.z_scores([math.nan], [1.0]), "difference must be finite"),
        (lambda: verify.z_scores([1.0, 2.0], [1.0, 2.0, 3.0]), "difference and stderr must broadcast"),
    ],
)
def test_bad_input_raises_value_error_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_ledger_records_every_check_in_order_failed_ones_included(fresh_ledger):
    verify.check("first", 1.0, 1.0, rtol=1e-15)
    verify.check_z("second", 0.5, 0.5, 0.1, label="second-one")
    with pytest.raises(verify.CheckFailed):
        verify.check_that("third", False)
    written = json.loads(fresh_ledger.read_text(encoding="utf-8"))
    assert [r["claim"] for r in written] == ["first", "second", "third"]
    assert [r["passed"] for r in written] == [True, True, False]
    assert [r["anchor"] for r in written] == ["check-1", "check-second-one", "check-3"]
    assert [r.claim for r in verify.records()] == ["first", "second", "third"]
    with pytest.raises(ValueError, match="already used"):
        verify.check("again", 1.0, 1.0, label="second-one")


def test_verdict_renders_as_html_with_its_anchor_and_escaped_claim():
    result = verify.check("a < b & c", 1.0, 1.0, rtol=1e-12, label="html")
    page = result._repr_html_()
    assert 'id="check-html"' in page and "a &lt; b &amp; c" in page and "slr-check-pass" in page
    assert str(result).startswith("✓ a < b & c")


def test_show_verdicts_with_routes_each_verdict_and_none_restores():
    from slrlib import verify

    shown = []
    verify.show_verdicts_with(shown.append)
    try:
        result = verify.check_that("a shown verdict goes to the hook", True)
    finally:
        verify.show_verdicts_with(None)
    assert shown == [result]
    verify.check_that("after None, no longer", True)
    assert shown == [result]
    with pytest.raises(ValueError, match="show must be callable or None, got 3"):
        verify.show_verdicts_with(3)
