r"""Figures of chapter 16 (the dynamics quantified): ``escape_time``, ``dynamics_timescales`` and ``swap_race``.

``swap_race``: the fraction of uniform starts that end at the swapped point under PGD at constant
:math:`\lambda` (Figure 7(b)'s step size), against :math:`\lambda` for several :math:`d`, with the prediction of the
race between the two unstable directions at the saddle (:func:`slrlib.book.ch16_dynamics.swap_race`).

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
from slrlib.book.ch16_dynamics import (
    escape_time_linear,
    escape_time_pgd,
    saddle_rates,
    timescales_at_oracle,
)
from slrlib.book.plots.dynamics import (
    plot_dynamics_timescales,
    plot_escape_time,
    plot_swap_race,
)
from slrlib.training.pgd import pgd, reduced_pgd

__all__ = [
    "R0_DECADES",
    "RACE_DS",
    "RACE_LAMS",
    "EscapeTime",
    "SwapRaceData",
    "Timescales",
    "compute_escape_time",
    "compute_dynamics_timescales",
    "compute_swap_race",
    "dynamics_timescales_table",
    "escape_time_table",
    "swap_race_table",
]

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


def compute_escape_time(
    lam: float = 0.1,
    alpha: float = 4e-3,
    radius: float = 0.5,
    decades: Sequence[int] = R0_DECADES,
    d: int = 400,
    L: int = 10,
    gamma: float = math.sqrt(0.5),
) -> EscapeTime:
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
    return EscapeTime(
        r0,
        lin.steps,
        lin.lower,
        lin.upper,
        red.steps,
        lin.continuous,
        math.log(10.0) / math.log(rates.expanding),
        rates.mu_minus,
        float(lam),
        float(alpha),
        float(radius),
        int(d),
        int(L),
        float(gamma),
    )


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


register(
    FigureSpec(
        "escape_time",
        "Escape from the saddle (0, 0): steps against log10(1/r0), linearised map "
        "(exact, bounds) and reduced map",
        16,
        compute_escape_time,
        plot_escape_time,
        escape_time_table,
    )
)


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


def compute_dynamics_timescales(
    lam: float = 0.1,
    alpha: float = 4e-3,
    r0: float = 1e-6,
    n_steps: int = 200_000,
    log_every: int = 20,
    d: int = 400,
    L: int = 10,
    gamma: float = math.sqrt(0.5),
) -> Timescales:
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
    run = reduced_pgd(
        x0,
        x0,
        task,
        lam=lam,
        alpha=alpha,
        n_steps=n_steps,
        log_every=log_every,
    )
    kappa, nu = np.asarray(run.kappa), np.asarray(run.nu)
    rates = saddle_rates(lam, alpha, task)
    ts = timescales_at_oracle(lam, alpha, task)
    return Timescales(
        np.asarray(run.steps),
        kappa,
        nu,
        _angle(kappa),
        _angle(nu),
        np.hypot(kappa, nu),
        rates.expanding,
        ts.multiplier_kappa,
        ts.multiplier_nu,
        float(r0),
        float(lam),
        float(alpha),
    )


def dynamics_timescales_table(data: Timescales) -> dict[str, np.ndarray]:
    """One row per logged step: ``step``, ``kappa``, ``nu``, ``phi``, ``psi``, ``distance``."""
    return {
        "step": np.asarray(data.steps, dtype=int),
        "kappa": data.kappa,
        "nu": data.nu,
        "phi": data.phi,
        "psi": data.psi,
        "distance": data.distance,
    }


register(
    FigureSpec(
        "dynamics_timescales",
        "One reduced run from near the saddle to the oracle: escape at rate "
        "1 - alpha mu_-, then psi and phi at the oracle's rates m_nu and m_kappa",
        16,
        compute_dynamics_timescales,
        plot_dynamics_timescales,
        dynamics_timescales_table,
    )
)


# ------------------------------------------------------------------------------ swap_race
#: Dimensions and inverse temperatures of ``swap_race`` (constant λ, Figure 7(b)'s step size).
RACE_DS = (100, 200, 400)
RACE_LAMS = (0.05, 0.1, 0.2, 0.35, 0.5, 0.7)


class SwapRaceData(NamedTuple):
    r"""The data of ``swap_race``: per dimension (rows, ``ds``) and inverse temperature (columns, ``lams``), the
    simulated fractions of uniform starts that end ``swapped``, ``recovered``, ``stalled`` on :math:`\mathcal M`
    and ``undecided`` (chapter 8's classes, :func:`slrlib.book.ch08_beyond.classify_outcomes`), with ``n_runs``
    runs each; the predicted swapped fraction of the race at the saddle at ``radius`` (``predicted``) and at half
    that radius (``predicted_half``); the parameters ``alpha``, ``n_steps``, ``L``."""

    ds: np.ndarray
    lams: np.ndarray
    swapped: np.ndarray
    recovered: np.ndarray
    stalled: np.ndarray
    undecided: np.ndarray
    predicted: np.ndarray
    predicted_half: np.ndarray
    n_runs: int
    alpha: float
    n_steps: int
    L: int
    radius: float


def compute_swap_race(
    ds: Sequence[int] = RACE_DS,
    lams: Sequence[float] = RACE_LAMS,
    n_runs: int = 400,
    alpha: float = 4e-3,
    n_steps: int = 20_000,
    L: int = 10,
    radius: float = 1.0,
    seed: int = 0,
) -> SwapRaceData:
    r"""Where uniform starts end under PGD at constant :math:`\lambda`, against the race at the saddle.

    For each :math:`d`: task directions and ``n_runs`` uniform starts from ``fold_in(key(seed), d)``, the same
    starts for every :math:`\lambda`; full PGD (:func:`slrlib.training.pgd.pgd`, exact gradients) for ``n_steps``
    steps, classified as in chapter 8. The prediction is :func:`slrlib.book.ch16_dynamics.swap_race` (400 000
    drawn starts, key ``fold_in(key(seed + 1), d)``). Default sizes: about 25 s on two CPU cores.
    """
    import jax

    from slrlib.book.ch08_beyond import classify_outcomes
    from slrlib.book.ch16_dynamics import swap_race
    from slrlib.core.geometry import uniform_directions

    ds, lams = np.asarray(ds, dtype=int), np.asarray(lams, dtype=float)
    shape = (ds.size, lams.size)
    out = {
        name: np.zeros(shape)
        for name in (
            "swapped",
            "recovered",
            "stalled",
            "undecided",
            "predicted",
            "predicted_half",
        )
    }
    for i, d in enumerate(ds):
        task = SLRTask(d=int(d), L=int(L))
        k_dir, k_init = jax.random.split(
            jax.random.fold_in(jax.random.key(seed), int(d))
        )
        ks, vs = task.oracle_directions(k_dir)
        k0, v0 = uniform_directions(k_init, task.d, (int(n_runs),))
        race_key = jax.random.fold_in(jax.random.key(seed + 1), int(d))
        for j, lam in enumerate(lams):
            res = pgd(
                k0,
                v0,
                ks,
                vs,
                task,
                lam=float(lam),
                alpha=alpha,
                n_steps=n_steps,
                log_every=n_steps,
            )
            counts = (
                np.bincount(np.asarray(classify_outcomes(res)), minlength=4)
                / n_runs
            )
            (
                out["recovered"][i, j],
                out["stalled"][i, j],
                out["swapped"][i, j],
                out["undecided"][i, j],
            ) = counts
            out["predicted"][i, j] = swap_race(
                float(lam), alpha, task, race_key, radius
            ).swap_fraction
            out["predicted_half"][i, j] = swap_race(
                float(lam), alpha, task, race_key, radius / 2
            ).swap_fraction
    return SwapRaceData(
        ds,
        lams,
        **out,
        n_runs=int(n_runs),
        alpha=float(alpha),
        n_steps=int(n_steps),
        L=int(L),
        radius=float(radius),
    )


def swap_race_table(data: SwapRaceData) -> dict[str, np.ndarray]:
    """One row per (d, λ): the simulated fractions, their binomial standard error and the predictions."""
    d, lam = np.meshgrid(data.ds, data.lams, indexing="ij")
    se = np.sqrt(data.swapped * (1 - data.swapped) / data.n_runs)
    return {
        "d": d.ravel(),
        "lam": lam.ravel(),
        "swapped": data.swapped.ravel(),
        "swapped_se": se.ravel(),
        "recovered": data.recovered.ravel(),
        "stalled": data.stalled.ravel(),
        "undecided": data.undecided.ravel(),
        "predicted": data.predicted.ravel(),
        "predicted_half_radius": data.predicted_half.ravel(),
    }


register(
    FigureSpec(
        "swap_race",
        "Fraction of uniform starts that end swapped at constant λ: PGD against the race "
        "of the two unstable directions at the saddle",
        16,
        compute_swap_race,
        plot_swap_race,
        swap_race_table,
    )
)
