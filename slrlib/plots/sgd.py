r"""Figures of chapter 9 (learning from samples): stochastic PGD on the empirical risk.

Plotting only: the numbers come from :mod:`slrlib.experiments` (:func:`slrlib.training.sgd.sgd`).

* :func:`plot_sgd_panels`: Figure 5 of the paper, the four panels of the PGD figures, drawn by
  :func:`slrlib.plots.dynamics.plot_pgd_panels` itself through :func:`as_pgd_experiment`;
* :data:`SGD_COLOR`, :data:`PGD_COLOR`: the colours of stochastic and exact PGD, shared with
  chapter 9's own figures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from slrlib.training.pgd import PGDResult, distance_to_manifold
from slrlib.experiments import PGDExperiment
from slrlib.plots.style import COLORS
from slrlib.plots.dynamics import plot_pgd_panels

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from slrlib.experiments import SGDExperiment

__all__ = [
    "as_pgd_experiment",
    "plot_sgd_panels",
    "SGD_DISTANCE_RANGE",
    "SGD_COLOR",
    "PGD_COLOR",
]

#: The distance panel's range for stochastic runs: their distance to M stays above ~1e-3.
SGD_DISTANCE_RANGE = (1e-4, 3.0)
#: Colour of stochastic PGD.
SGD_COLOR = COLORS["attention"]
#: Colour of exact PGD.
PGD_COLOR = COLORS["bound"]


def as_pgd_experiment(exp: SGDExperiment) -> PGDExperiment:
    r"""An :class:`~slrlib.experiments.SGDExperiment` seen as a :class:`~slrlib.experiments.PGDExperiment`.

    One head and one location only, so that the PGD figure code draws it unchanged. The
    overlaps lose their head and location axes, ``risk`` is the held-out risk (so
    ``excess_risk`` is the paper's curve, held-out risk minus :math:`\varepsilon^2`),
    ``distance`` is :math:`\sqrt{\theta^2 + \eta^2 + \rho^2}`, ``k, v`` the final directions.
    The configuration is the :class:`~slrlib.experiments.SGDConfig` itself: the figure reads
    only its ``title, d, L, n_runs, alpha`` and ``task``, which it has.

    Parameters
    ----------
    exp : slrlib.experiments.descent.SGDExperiment
        A finished stochastic-PGD experiment with one head and one location.

    Returns
    -------
    slrlib.experiments.descent.PGDExperiment
        The same runs, as a PGD experiment.

    Raises
    ------
    ValueError
        If ``exp`` has more than one head or more than one location.
    """
    cfg, r = exp.config, exp.result
    if cfg.heads != 1 or cfg.M != 1:
        raise ValueError(
            f"exp must have one head and one location, got heads = {cfg.heads}, M = {cfg.M}"
        )
    sq = lambda x: np.asarray(x)[:, 0, 0, :]  # noqa: E731
    theta, eta, rho = sq(r.theta), sq(r.eta), np.asarray(r.rho)[:, 0, :]
    res = PGDResult(
        steps=np.asarray(r.steps),
        lam=np.asarray(r.lam),
        kappa=sq(r.kappa),
        nu=sq(r.nu),
        theta=theta,
        eta=eta,
        rho=rho,
        risk=np.asarray(r.risk),
        distance=np.asarray(distance_to_manifold(theta, eta, rho)),
        k=np.asarray(r.k)[:, 0],
        v=np.asarray(r.v)[:, 0],
    )
    return PGDExperiment(cfg, res, exp.seconds)


def plot_sgd_panels(
    exp: SGDExperiment, runs: Sequence[int] | None = None
) -> Figure:
    r"""Figure 5: the four panels of :func:`~slrlib.plots.dynamics.plot_pgd_panels` for a stochastic experiment.

    Excess risk on the held-out set, :math:`|\kappa|` and :math:`|\nu|`, three
    :math:`(\kappa,\nu)` paths, distance to :math:`\mathcal M` on a log scale limited to
    :data:`SGD_DISTANCE_RANGE`.

    Parameters
    ----------
    exp : slrlib.experiments.descent.SGDExperiment
        A finished stochastic-PGD experiment with one head and one location.
    runs : sequence of int, optional
        The runs whose paths the third panel draws (default: the first three).

    Returns
    -------
    matplotlib.figure.Figure
        The four panels, two by two.

    Raises
    ------
    ValueError
        If ``exp`` has more than one head or more than one location (:func:`as_pgd_experiment`).
    """
    view = as_pgd_experiment(exp)
    if runs is None:
        runs = list(range(min(3, view.result.kappa.shape[0])))
    fig = plot_pgd_panels(view, runs)
    axes = fig.axes
    axes[0].set_ylabel(r"held-out risk $-\ \varepsilon^2$")
    axes[3].set_ylim(*SGD_DISTANCE_RANGE)
    cfg = exp.config
    fig.suptitle(
        f"{cfg.title}\nd = {cfg.d}, L = {cfg.L}, batch {cfg.batch_size}, {cfg.n_runs} runs, "
        f"α = {cfg.alpha:g}"
    )
    return fig
