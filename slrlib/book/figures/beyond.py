r"""Figures of chapter 8 (beyond the manifold) other than Figures 4(a), 7(a), 7(b).

Those three are registered by :mod:`slrlib.figures.pgd`. Here:

* ``beyond_schedule`` — anatomy of Figure 4(a): alignments against :math:`\lambda_t`, the
  relevant token's margin, the distance to :math:`\mathcal M` around :math:`\lambda_t = \lambda_c`;
* ``beyond_landscape`` — closed forms against :math:`\lambda`: the risks of the oracle, of the
  swapped and of the tilted critical points, the noise floor; the oracle's transverse curvature;
* ``beyond_sweep`` — where PGD ends for a grid of constant :math:`\lambda` and for the schedule;
* ``beyond_init`` — which initialisations end at the swapped point;
* ``beyond_endpoints`` — end points of the runs for a few constant :math:`\lambda` (the chapter's
  slider shows one :math:`\lambda` at a time with the same panel function).

Every ``compute`` is deterministic (explicit seeds); the batch experiments are computed once
per process (:func:`batch_data` is cached) and shared by the last three figures.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import NamedTuple

import jax
import numpy as np

from slrlib.book import ch08_beyond as beyond
from slrlib.experiments import PGD_CONFIGS, PGDExperiment, run_pgd_experiment
from slrlib.figures import FigureSpec, register
from slrlib.book.plots import beyond as plots
from slrlib.core.risk import linear_risk, null_risk, oracle_risk

__all__ = [
    "BATCH_SEED",
    "SCHEDULE_RUNS",
    "SMALL_RUNS",
    "SWEEP_ALPHA",
    "SWEEP_LAMS",
    "SWEEP_RUNS",
    "SWEEP_SEED",
    "SWEEP_STEPS",
    "BatchData",
    "ScheduleData",
    "batch_data",
    "endpoints_table",
    "init_table",
    "landscape_data",
    "landscape_table",
    "schedule_data",
    "schedule_table",
    "sweep_table",
]

#: Constant inverse temperatures of the sweep (``beyond_sweep``), the runs per value, the
#: step size and the number of steps (one α for all: 2e-3 is between the paper's 1e-3 of
#: Figure 7(a) and 4e-3 of Figure 7(b), and stable up to λ = 1.2 at least).
SWEEP_LAMS = (0.05, 0.1, 0.2, 0.5, 0.7, 0.85, 0.9, 1.0)
SWEEP_RUNS = 100
SWEEP_ALPHA = 2e-3
SWEEP_STEPS = 40_000
SWEEP_SEED = 2
#: Sizes and seed of the two large batches at the paper's parameters (Figures 4(a) and 7(b)):
#: seed 1, so that they are independent of the 30 runs of the paper's figures (seed 0).
SCHEDULE_RUNS = 300
SMALL_RUNS = 500
BATCH_SEED = 1


# --------------------------------------------------------------------------- beyond_schedule
class ScheduleData(NamedTuple):
    exp: PGDExperiment
    lam_c: float
    multiplier_steps: (
        np.ndarray
    )  # logged steps where the multipliers are evaluated
    multipliers: np.ndarray  # (n, 3): transverse multipliers at the median (|kappa_t|, |nu_t|), lambda_t


def schedule_data(
    exp: PGDExperiment | None = None, every: int = 8
) -> ScheduleData:
    r"""Figure 4(a)'s experiment (run here unless given), the critical λ_c of its task, and the
    transverse multipliers of :math:`\mathcal M` (:func:`slrlib.book.ch08_beyond.transverse_multipliers`)
    along the median path :math:`(|\kappa_t|, |\nu_t|, \lambda_t)`, every ``every``-th logged step."""
    exp = run_pgd_experiment("fig4a") if exp is None else exp
    r, cfg = exp.result, exp.config
    kappa = np.minimum(np.median(np.abs(np.asarray(r.kappa)), axis=0), 1.0)
    nu = np.minimum(np.median(np.abs(np.asarray(r.nu)), axis=0), 1.0)
    idx = np.unique(
        np.r_[
            np.arange(1, min(12, len(r.steps))),
            np.arange(1, len(r.steps), every),
        ]
    )
    mult = np.full((idx.size, 3), np.nan)
    for j, i in enumerate(idx):
        m = np.real(
            beyond.transverse_multipliers(
                kappa[i], nu[i], float(r.lam[i]), cfg.alpha, cfg.task
            ).transverse
        )
        mult[j, : m.size] = np.sort(m)
    return ScheduleData(
        exp, beyond.critical_lambda(cfg.task), np.asarray(r.steps)[idx], mult
    )


def _median_band(x):
    x = np.asarray(x)
    return np.percentile(x, [2.5, 50, 97.5], axis=0)


def schedule_table(data: ScheduleData) -> dict[str, np.ndarray]:
    r = data.exp.result
    task = data.exp.config.task
    margin = beyond.relevant_margin(np.abs(np.asarray(r.kappa)), r.lam, task)
    cols = {"step": np.asarray(r.steps), "lam": np.asarray(r.lam)}
    for name, values in (
        ("abs_kappa", np.abs(np.asarray(r.kappa))),
        ("abs_nu", np.abs(np.asarray(r.nu))),
        ("margin", margin),
        ("distance", np.asarray(r.distance)),
    ):
        lo, med, hi = _median_band(values)
        cols[f"{name}_median"], cols[f"{name}_p2.5"], cols[f"{name}_p97.5"] = (
            med,
            lo,
            hi,
        )
    # multipliers only at some steps: NaN elsewhere
    where = np.searchsorted(cols["step"], data.multiplier_steps)
    for j, name in enumerate(
        ("multiplier_min", "multiplier_mid", "multiplier_max")
    ):
        col = np.full(cols["step"].shape, np.nan)
        col[where] = data.multipliers[:, j]
        cols[name] = col
    return cols


# --------------------------------------------------------------------------- beyond_landscape
def landscape_data(task=None, lams=None) -> dict[str, np.ndarray]:
    r"""Closed forms along a grid of :math:`\lambda` (default: Figure 4's task, 0.02 to 1.3).

    Returns the grid, the oracle risk (Theorem 1), the swapped point's :math:`\theta^\star` and
    risk, the tilted minimum's risk and overlaps (NaN below :math:`\lambda_c`), the noise floor
    :math:`(L-1)\zeta(0,\lambda)`, the oracle's transverse eigenvalue, :math:`\lambda_c`, and the
    constant linear and null risks.
    """
    task = PGD_CONFIGS["fig4a"].task if task is None else task
    lam_c = beyond.critical_lambda(task)
    if lams is None:
        lams = np.unique(
            np.r_[
                np.geomspace(0.02, 1.3, 60),
                lam_c + np.array([2e-4, 1e-3, 3e-3, 1e-2]),
            ]
        )
    lams = np.asarray(lams, dtype=float)
    swapped = beyond.swapped_point(lams, task)
    tilted = beyond.tilted_branch(lams, task)
    plane = np.linalg.eigvalsh(beyond.oracle_plane_hessian(lams, task))
    eps2 = task.eps**2
    return {
        "lam": lams,
        "oracle": np.asarray(oracle_risk(lams, task)) - eps2,
        "swapped": swapped.risk - eps2,
        "swapped_theta": swapped.theta,
        "tilted": tilted.risk - eps2,
        "tilted_kappa": tilted.overlaps[:, 0],
        "tilted_nu": tilted.overlaps[:, 1],
        "tilted_eta": tilted.overlaps[:, 3],
        "tilted_distance": tilted.distance,
        "floor": beyond.noise_floor(lams, task),
        "transverse_eigenvalue": plane[:, 0],
        "transverse_eigenvalue_max": plane[:, 1],
        "lam_c": np.full(lams.shape, lam_c),
        "linear": np.full(lams.shape, linear_risk(task) - eps2),
        "null": np.full(lams.shape, null_risk(task) - eps2),
    }


def landscape_table(data) -> dict[str, np.ndarray]:
    return dict(data)


# --------------------------------------------------------------------------- batches
class BatchData(NamedTuple):
    """The batch experiments of chapter 8."""

    sweep: beyond.Sweep
    sweep_oracle_risk: np.ndarray  # excess risk of the oracle at each sweep λ
    sweep_tilted: (
        beyond.TiltedBranch
    )  # the tilted minimum at each sweep λ (NaN below λ_c)
    schedule: PGDExperiment  # Figure 4(a)'s parameters, SCHEDULE_RUNS runs
    small: PGDExperiment  # Figure 7(b)'s parameters, SMALL_RUNS runs
    seconds: float


@lru_cache(maxsize=1)
def batch_data() -> BatchData:
    """Run the sweep over constant λ and the two large batches (computed once per process)."""
    start = time.perf_counter()
    task = PGD_CONFIGS["fig4a"].task
    sweep = beyond.lambda_sweep(
        SWEEP_LAMS,
        task,
        jax.random.key(SWEEP_SEED),
        n_runs=SWEEP_RUNS,
        alpha=SWEEP_ALPHA,
        n_steps=SWEEP_STEPS,
    )
    schedule = run_pgd_experiment(
        PGD_CONFIGS["fig4a"].scaled(
            n_runs=SCHEDULE_RUNS,
            seed=BATCH_SEED,
            log_every=PGD_CONFIGS["fig4a"].n_steps,
        )
    )
    small = run_pgd_experiment(
        PGD_CONFIGS["fig7b"].scaled(
            n_runs=SMALL_RUNS,
            seed=BATCH_SEED,
            log_every=PGD_CONFIGS["fig7b"].n_steps,
        )
    )
    orc = np.asarray(oracle_risk(np.asarray(SWEEP_LAMS), task)) - task.eps**2
    tilted = beyond.tilted_branch(np.asarray(SWEEP_LAMS), task)
    return BatchData(
        sweep, orc, tilted, schedule, small, time.perf_counter() - start
    )


def sweep_table(data: BatchData) -> dict[str, np.ndarray]:
    """One row per constant λ of the sweep, then one row for the schedule (lam = λ at the end)."""
    sw = data.sweep
    fr = sw.fractions()
    sched_labels = beyond.classify_outcomes(data.schedule.result)
    sched_fr = np.array(
        [(sched_labels == i).mean() for i in range(len(beyond.OUTCOMES))]
    )
    on_m = sw.labels <= 1
    kappa = np.abs(sw.final["kappa"])
    kappa_med = np.array(
        [
            np.median(kappa[i][on_m[i]]) if on_m[i].any() else np.nan
            for i in range(len(sw.lams))
        ]
    )
    sched_kappa = np.abs(np.asarray(data.schedule.result.kappa)[:, -1])
    cols = {
        "schedule": np.r_[np.zeros(len(sw.lams), dtype=int), 1],
        "lam": np.r_[sw.lams, data.schedule.result.lam[-1]],
        "runs": np.r_[
            np.full(len(sw.lams), sw.labels.shape[1]), sched_labels.size
        ],
    }
    for i, name in enumerate(beyond.OUTCOMES):
        cols["frac_" + name.replace(" ", "_")] = np.r_[fr[:, i], sched_fr[i]]
    on_m_sched = sched_labels <= 1
    cols["median_abs_kappa_on_M"] = np.r_[
        kappa_med,
        np.median(sched_kappa[on_m_sched]) if on_m_sched.any() else np.nan,
    ]
    cols["median_excess_risk"] = np.r_[
        np.median(sw.excess_risk, axis=1),
        np.median(data.schedule.excess_risk[:, -1]),
    ]
    cols["oracle_excess_risk"] = np.r_[
        data.sweep_oracle_risk,
        float(
            oracle_risk(
                data.schedule.result.lam[-1], data.schedule.config.task
            )
        ),
    ]
    return cols


def init_table(data: BatchData) -> dict[str, np.ndarray]:
    """One row per run of the two large batches: initial ``|nu|``, ``|eta|`` and the outcome code."""
    rows = {
        "batch": [],
        "run": [],
        "abs_nu0": [],
        "abs_eta0": [],
        "outcome": [],
    }
    for name, exp in (("fig7b", data.small), ("fig4a", data.schedule)):
        r = exp.result
        n = np.asarray(r.kappa).shape[0]
        rows["batch"].append(np.full(n, 0 if name == "fig7b" else 1))
        rows["run"].append(np.arange(n))
        rows["abs_nu0"].append(np.abs(np.asarray(r.nu)[:, 0]))
        rows["abs_eta0"].append(np.abs(np.asarray(r.eta)[:, 0]))
        rows["outcome"].append(beyond.classify_outcomes(r))
    return {k: np.concatenate(v) for k, v in rows.items()}


def endpoints_table(data: BatchData) -> dict[str, np.ndarray]:
    """One row per (λ, run) of the sweep: final ``|kappa|``, ``|nu|``, ``|eta|``, distance and outcome code."""
    sw = data.sweep
    n_lam, n_runs = sw.labels.shape
    return {
        "lam": np.repeat(sw.lams, n_runs),
        "run": np.tile(np.arange(n_runs), n_lam),
        "abs_kappa": np.abs(sw.final["kappa"]).ravel(),
        "abs_nu": np.abs(sw.final["nu"]).ravel(),
        "abs_eta": np.abs(sw.final["eta"]).ravel(),
        "distance": sw.final["distance"].ravel(),
        "outcome": sw.labels.ravel(),
    }


# --------------------------------------------------------------------------- registry
register(
    FigureSpec(
        "beyond_schedule",
        "Anatomy of Figure 4(a): decreasing λ_t, margins, distance to M",
        8,
        schedule_data,
        plots.plot_schedule_anatomy,
        schedule_table,
    )
)
register(
    FigureSpec(
        "beyond_landscape",
        "Critical points of the risk against λ: oracle, swapped, tilted",
        8,
        landscape_data,
        plots.plot_landscape,
        landscape_table,
    )
)
register(
    FigureSpec(
        "beyond_sweep",
        "Where PGD ends: constant λ against the decreasing schedule",
        8,
        batch_data,
        plots.plot_sweep,
        sweep_table,
    )
)
register(
    FigureSpec(
        "beyond_init",
        "Which initialisations end at the swapped point",
        8,
        batch_data,
        plots.plot_initial_overlaps,
        init_table,
    )
)
register(
    FigureSpec(
        "beyond_endpoints",
        "End points of PGD runs for a few constant λ",
        8,
        batch_data,
        plots.plot_endpoints_grid,
        endpoints_table,
    )
)
