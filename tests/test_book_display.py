"""slrlib.book.display: tables that render as tables, first-passage times."""

import numpy as np
import pytest

from slrlib.book.display import first_passage, table, text_table


def test_table_text_and_html():
    t = table(["name", "value"], [("a<b", 1.23456), ("c", -2.0)], ["", "+.2f"])
    assert str(t).splitlines() == ["name  value", "----  -----", " a<b  +1.23", "   c  -2.00"]
    assert text_table(["name", "value"], [("a<b", 1.23456), ("c", -2.0)], ["", "+.2f"]) == str(t)
    h = t._repr_html_()
    assert h.count("<tr>") == 3 and "a&lt;b" in h and "+1.23" in h and "<th>value</th>" in h


def test_table_bad_input():
    with pytest.raises(ValueError, match="formats"):
        table(["a", "b"], [(1, 2)], [""])
    with pytest.raises(ValueError, match="rows"):
        table(["a", "b"], [(1, 2, 3)])


def test_first_passage_against_a_loop():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 30)).cumsum(axis=1)
    steps = np.arange(30) * 10
    for absolute in (False, True):
        got = first_passage(x, 2.0, steps, absolute=absolute)
        for r in range(7):
            y = np.abs(x[r]) if absolute else x[r]
            hits = [s for s, val in zip(steps, y) if val > 2.0]
            assert (np.isnan(got[r]) and not hits) or got[r] == hits[0]
    with pytest.raises(ValueError, match="shape"):
        first_passage(x, 1.0, steps[:-1])


def test_build_environment_reports_the_pinned_versions():
    """The appendix's versions are those of requirements.lock (an independent record of the pins)."""
    from pathlib import Path

    from slrlib.book.reproducibility import PACKAGES, build_environment

    pins = {}
    for line in (Path(__file__).resolve().parents[1] / "requirements.lock").read_text().splitlines():
        if "==" in line and not line.lstrip().startswith("#"):
            name, version = line.split(";")[0].strip().split("==")
            pins[name.lower().replace("_", "-")] = version.strip()
    rows = dict(build_environment())
    shown = [name for name in PACKAGES if name in rows]
    assert {"jax", "numpy", "myst-nb"} <= set(shown)
    for name in shown:
        assert rows[name] == pins[name], name
    assert rows["float64"] == "enabled"


def test_glued_numbers_for_jupyterlab_prose():
    """{eval}`glued("key", ".3f")`: the glued number formatted; before it is glued, a label that
    glue_numbers fills in (the prose of a chapter run in JupyterLab, book/_ext/to_notebook.py)."""
    from slrlib.book import display

    early = display.glued("test_glued_x", ".3f")
    assert early.value == display.PENDING
    display.glue_numbers(test_glued_x=np.float64(2.0) / 3)
    assert early.value == "0.667"
    late = display.glued("test_glued_x", ".3f")
    assert repr(late) == "0.667" and isinstance(late, display.ProseNumber)
    assert repr(display.glued("test_glued_x")) == repr(2.0 / 3)
