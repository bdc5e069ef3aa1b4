r"""Figures of chapter 16 (the dynamics quantified): ``escape_time`` and ``dynamics_timescales``.

``dynamics_timescales``: one run of the reduced map from distance :math:`r_0` of the saddle, on the
diagonal, to the oracle: the distance to the saddle while it escapes (against :math:`r_0\Lambda_u^t`), then the
angles :math:`\varphi_t = \arccos\kappa_t` and :math:`\psi_t = \arccos\nu_t` to the targets (against the rates
:math:`m_\kappa^t`, :math:`m_\nu^t` of :func:`slrlib.book.ch16_dynamics.timescales_at_oracle`).

``escape_time``:

How many steps the reduced PGD of Lemma 7 spends near the saddle :math:`(0, 0)` before reaching
distance :math:`R` from it, against :math:`\log_{10}(1/r_0)` for starts at distance :math:`r_0` on the
diagonal :math:`\kappa_0 = \nu_0`:

* the exact first passage of the linearised map :math:`x \mapsto DF(0, 0)\,x` and its two bounds
  (:func:`slrlib.book.ch16_dynamics.escape_time_linear`);
* the first passage of the nonlinear reduced map (:func:`slrlib.book.ch16_dynamics.escape_time_pgd`);
* the continuous-time estimate :math:`\log(R/r_0)/(\alpha|\mu_-|)`.

Both grow by :math:`\log 10/\log(1 - \alpha\mu_-)` steps per decade of :math:`r_0`.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np

from slrlib.core.task import SLRTask
from slrlib.figures import FigureSpec, register
from slrlib.book.ch16_dynamics import escape_time_linear, escape_time_pgd, saddle_rates, timescales_at_oracle
from slrlib.book.plots.dynamics import plot_escape_time, plot_dynamics_timescales
from slrlib.training.pgd import reduced_pgd

__all__ = ["R0_DECADES", "EscapeTime", "Timescales", "compute_escape_time", "compute_dynamics_timescales",
           "dynamics_timescales_table", "escape_time_table"]

#: The start distances :math:`r_0 = 10^{-j}` of the default figure.
R0_DECADES = tuple(range(1, 13))


class EscapeTime(NamedTuple):
    r"""The data of ``escape_time``: per start distance ``r0`` the escape steps of the linearised
    map (``linear``, with bounds ``lower`` and ``upper``), of the reduced map (``reduced``) and the
    continuous-time estimate (``continuous``); ``per_decade`` :math:`= \log 10/\log(1 - \alpha\mu_-)`;
    the parameters ``lam``, ``alpha``, ``radius``, ``d``, ``L``, ``gamma``; ``mu_minus``."""

    r0: np.ndarray
    linear: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    reduced: np.ndarray
    continuous: np.ndarray
    per_decade: float
    mu_minus: float
    lam: float
    alpha: float
    radius: float
    d: int
    L: int
    gamma: float


def compute_escape_time(lam: float = 0.1, alpha: float = 4e-3, radius: float = 0.5,
                        decades: Sequence[int] = R0_DECADES, d: int = 400, L: int = 10,
                        gamma: float = math.sqrt(0.5)) -> EscapeTime:
    r"""The numbers of ``escape_time`` (defaults: the paper's task and the :math:`\lambda`, :math:`\alpha` of
    Theorem 5 and Figure 4(b); about a second).

    Parameters
    ----------
    lam, alpha : float
        Inverse temperature and step size.
    radius : float
        The escape radius :math:`R`.
    decades : sequence of int
        Start distances :math:`r_0 = 10^{-j}`.
    d, L : int
        Dimension and sequence length.
    gamma : float
        :math:`\gamma` of the task.

    Returns
    -------
    EscapeTime
    """
    task = SLRTask(d=int(d), L=int(L), gamma=gamma)
    r0 = 10.0 ** -np.asarray(decades, dtype=float)
    lin = escape_time_linear(r0, lam, alpha, task, radius)
    red = escape_time_pgd(r0, lam, alpha, task, radius)
    rates = saddle_rates(lam, alpha, task)
    return EscapeTime(r0, lin.steps, lin.lower, lin.upper, red.steps, lin.continuous,
                      math.log(10.0) / math.log(rates.expanding), rates.mu_minus, float(lam), float(alpha),
                      float(radius), int(d), int(L), float(gamma))


def escape_time_table(data: EscapeTime) -> dict[str, np.ndarray]:
    """One row per start distance: ``r0``, ``log10_inv_r0``, ``linear``, ``lower``, ``upper``, ``reduced``
    (steps) and ``continuous`` (the real-valued estimate)."""
    return {
        "r0": np.asarray(data.r0, dtype=float),
        "log10_inv_r0": np.log10(1.0 / np.asarray(data.r0, dtype=float)),
        "linear": np.asarray(data.linear, dtype=int),
        "lower": np.asarray(data.lower, dtype=int),
        "upper": np.asarray(data.upper, dtype=int),
        "reduced": np.asarray(data.reduced, dtype=int),
        "continuous": np.asarray(data.continuous, dtype=float),
    }


register(FigureSpec("escape_time", "Escape from the saddle (0, 0): steps against log10(1/r0), linearised map "
                    "(exact, bounds) and reduced map", 16, compute_escape_time, plot_escape_time, escape_time_table))


class Timescales(NamedTuple):
    r"""The data of ``dynamics_timescales``: the logged ``steps``, ``kappa``, ``nu`` of one reduced run, the
    angles ``phi`` :math:`= \arccos\kappa` and ``psi`` :math:`= \arccos\nu` (computed without cancellation),
    ``distance`` :math:`= \sqrt{\kappa^2 + \nu^2}`; the multipliers ``expanding`` :math:`= 1 - \alpha\mu_-`,
    ``m_kappa``, ``m_nu``; the parameters ``r0``, ``lam``, ``alpha``."""

    steps: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    phi: np.ndarray
    psi: np.ndarray
    distance: np.ndarray
    expanding: float
    m_kappa: float
    m_nu: float
    r0: float
    lam: float
    alpha: float


def _angle(c: np.ndarray) -> np.ndarray:
    return 2.0 * np.arcsin(np.sqrt(np.clip((1.0 - c) / 2.0, 0.0, 1.0)))


def compute_dynamics_timescales(lam: float = 0.1, alpha: float = 4e-3, r0: float = 1e-6, n_steps: int = 200_000,
                                log_every: int = 20, d: int = 400, L: int = 10,
                                gamma: float = math.sqrt(0.5)) -> Timescales:
    r"""The numbers of ``dynamics_timescales``: :func:`slrlib.training.pgd.reduced_pgd` from
    :math:`\kappa_0 = \nu_0 = r_0/\sqrt2` (about a second).

    Parameters
    ----------
    lam, alpha : float
        Inverse temperature and step size.
    r0 : float
        Start distance from the saddle.
    n_steps, log_every : int
        Steps of the run and logging interval.
    d, L : int
        Dimension and sequence length.
    gamma : float
        :math:`\gamma` of the task.

    Returns
    -------
    Timescales
    """
    task = SLRTask(d=int(d), L=int(L), gamma=gamma)
    x0 = float(r0) / math.sqrt(2.0)
    run = reduced_pgd(x0, x0, task, lam=lam, alpha=alpha, n_steps=n_steps, log_every=log_every)
    kappa, nu = np.asarray(run.kappa), np.asarray(run.nu)
    rates = saddle_rates(lam, alpha, task)
    ts = timescales_at_oracle(lam, alpha, task)
    return Timescales(np.asarray(run.steps), kappa, nu, _angle(kappa), _angle(nu), np.hypot(kappa, nu),
                      rates.expanding, ts.multiplier_kappa, ts.multiplier_nu, float(r0), float(lam), float(alpha))


def dynamics_timescales_table(data: Timescales) -> dict[str, np.ndarray]:
    """One row per logged step: ``step``, ``kappa``, ``nu``, ``phi``, ``psi``, ``distance``."""
    return {"step": np.asarray(data.steps, dtype=int), "kappa": data.kappa, "nu": data.nu, "phi": data.phi,
            "psi": data.psi, "distance": data.distance}


register(FigureSpec("dynamics_timescales", "One reduced run from near the saddle to the oracle: escape at rate "
                    "1 - alpha mu_-, then psi and phi at the oracle's rates m_nu and m_kappa", 16,
                    compute_dynamics_timescales, plot_dynamics_timescales, dynamics_timescales_table))
