"""Shared fixtures. The tests run as the book does: JAX in float64, the unrolled Threefry lowering."""

import json
from pathlib import Path

import jax
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)  # slrlib computes in float64

import slrlib  # noqa: E402
from slrlib import SLRTask  # noqa: E402
from slrlib.threefry import use_unrolled_threefry  # noqa: E402

use_unrolled_threefry()  # the same random bits, faster on CPU

from helpers import unit

#: A library test is marked ``slow`` when its recorded time (tests/durations.json, written by
#: `make durations`) is above this; `make check` runs the others. Unrecorded tests count as fast.
SLOW_SECONDS = 1.0
DURATIONS = Path(__file__).with_name("durations.json")


def _shared_fixtures(item) -> set[tuple[str, str]]:
    """The module- and session-scoped fixtures ``item`` uses, as (name, where defined)."""
    out = set()
    for name in item.fixturenames:
        defs = item._fixtureinfo.name2fixturedefs.get(name)
        if defs and defs[-1].scope != "function":
            out.add((name, defs[-1].baseid))
    return out


def _recorded_id(item) -> str:
    """The test's id as tests/durations.json records it (a serial run): without the ``@group`` that
    pytest-xdist's ``--dist loadgroup`` appends to the id of a test marked ``xdist_group``."""
    marker = item.get_closest_marker("xdist_group")
    group = (marker.args[0] if marker.args else marker.kwargs.get("name")) if marker else None
    suffix = f"@{group}"
    return item.nodeid[: -len(suffix)] if group and item.nodeid.endswith(suffix) else item.nodeid


def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` each test recorded above SLOW_SECONDS, and each test that shares a module- or
    session-scoped fixture first set up by such a test (the recorded time of the first user of a
    fixture includes its setup: without it, the next user would pay for it)."""
    recorded = json.loads(DURATIONS.read_text(encoding="utf-8")) if DURATIONS.is_file() else {}
    slow = {item.nodeid for item in items if recorded.get(_recorded_id(item), 0.0) > SLOW_SECONDS}
    shared = {item.nodeid: _shared_fixtures(item) for item in items}
    first_user: dict[tuple[str, str], str] = {}
    for item in items:
        for fixture in shared[item.nodeid]:
            first_user.setdefault(fixture, item.nodeid)
    costly = {fixture for fixture, nodeid in first_user.items() if nodeid in slow}
    for item in items:
        if item.nodeid in slow or shared[item.nodeid] & costly:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def small_task():
    return SLRTask(d=6, L=4, gamma=0.8, eps=0.3)


@pytest.fixture(scope="session")
def small_directions(small_task):
    return small_task.oracle_directions(jax.random.key(123))


@pytest.fixture(scope="session")
def sgd_small():
    """One head (K, V) off the oracle on a d = 12, L = 4 task, with its directions: (task, ks, vs, K, V).

    Shared by the erf and softmax tests of the stochastic gradient (test_sgd.py, test_sgd_softmax.py)."""
    task = SLRTask(12, 4, eps=0.1)
    ks, vs = task.oracle_directions(jax.random.key(0))
    K = unit(0.6 * unit(jax.random.normal(jax.random.key(1), (1, 12))) + 0.5 * ks)
    V = unit(jax.random.normal(jax.random.key(2), (1, 12)) + 0.8 * vs)
    return task, ks, vs, K, V


# ------------------------------------------------------------------ z-score report
_Z_RECORDS: list[tuple[float, str]] = []


@pytest.fixture
def record_z():
    """Record closed-form-vs-Monte-Carlo gaps (in standard errors) for the final summary."""

    def record(z, label):
        for value in np.atleast_1d(np.asarray(z, dtype=float)):
            _Z_RECORDS.append((float(value), label))

    return record


def pytest_terminal_summary(terminalreporter):
    if not _Z_RECORDS:
        return
    worst = max(_Z_RECORDS, key=lambda r: abs(r[0]))
    terminalreporter.write_line(
        f"closed form vs Monte Carlo: {len(_Z_RECORDS)} comparisons, "
        f"largest |gap| = {abs(worst[0]):.2f} standard errors ({worst[1]})"
    )
