"""slrlib.book.plots.oracle: every figure of chapter 3 builds, is closed in pyplot (so a notebook
shows it once), and plots what the closed forms say."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from slrlib import SLRTask, oracle_risk, zeta  # noqa: E402
from slrlib.book.plots import oracle as plots  # noqa: E402


@pytest.fixture(scope="module")
def task():
    return SLRTask(d=400, L=10)


def _check(fig):
    assert isinstance(fig, Figure)
    assert fig.number not in plt.get_fignums(), "the figure should be closed in pyplot before it is returned"
    for ax in fig.axes:
        assert ax.get_xlabel()


def test_plot_zeta():
    t = np.linspace(-3, 3, 31)
    fig = plots.plot_zeta(t, [0.0, 1.0], t[::5], np.array([np.asarray(zeta(t[::5], s)) for s in (0.0, 1.0)]))
    _check(fig)
    np.testing.assert_allclose(fig.axes[0].lines[0].get_ydata(), np.asarray(zeta(t, 0.0)))


def test_plot_oracle_risk_vs_lambda(task):
    lam = np.geomspace(1e-3, 10, 50)
    lam_mc = np.array([0.01, 0.1, 1.0])
    fig = plots.plot_oracle_risk_vs_lambda(task, lam, lam_mc, np.asarray(oracle_risk(lam_mc, task)), 0.01 * np.ones(3))
    _check(fig)
    np.testing.assert_allclose(fig.axes[0].lines[0].get_ydata(), np.asarray(oracle_risk(lam, task)))


def test_plot_oracle_terms_add_up_to_the_excess_risk(task):
    lam = np.geomspace(1e-3, 10, 50)
    fig = plots.plot_oracle_terms(task, lam)
    _check(fig)
    total, relevant, noise, approx = (line.get_ydata() for line in fig.axes[0].lines[:4])
    np.testing.assert_allclose(total, np.asarray(oracle_risk(lam, task)) - task.eps**2, rtol=1e-12)
    np.testing.assert_allclose(relevant + noise, total, rtol=1e-12)
    np.testing.assert_allclose(approx, 4 * lam**2 * (task.L - 1) / math.pi)


@pytest.mark.parametrize("lam, L, d", [(0.06, 10, 400), (1e-3, 2, 10_000), (3.0, 100, 400)])
def test_plot_oracle_tradeoff_frame(lam, L, d):
    fig = plots.plot_oracle_tradeoff(lam, L, d)
    _check(fig)
    assert f"d = {d}" in fig.axes[0].get_title()
