r"""Figures of chapters 6 and 7: the invariant manifold and the proof of Theorem 5.

========================  =======  ===============================================================
name                      chapter  what
========================  =======  ===============================================================
``ch6_drift``             6        distance to :math:`\mathcal M` at every step of Figure 4(b)'s runs (Lemma 4)
``ch6_reduced``           6        full PGD in :math:`\mathbb R^{400}` against the reduced map (Lemma 7)
``fig6``                  7        Figure 6 (our reconstruction): (a) the risk landscape on :math:`\mathcal M`, (b) the flow
``ch7_basins``            7        limits of reduced PGD from a 201 × 201 grid, the saddle's stable set
========================  =======  ===============================================================

Figure 4(b) itself (chapter 7) is registered by :mod:`slrlib.figures.pgd`. All at the
paper's task (:math:`d = 400`, :math:`L = 10`, :math:`\gamma^2 = 1/2`) and :math:`\lambda = 0.1`;
the step sizes are Figure 4(b)'s :math:`\alpha = 4\cdot 10^{-3}`, except for the basin grid
(:data:`BASIN_ALPHA`, checked to be in the descent regime in chapter 7).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from slrlib.experiments import PGD_CONFIGS, PGDConfig
from slrlib.figures import FigureSpec, register
from slrlib.book.plots.manifold import (
    plot_basins,
    plot_figure6,
    plot_manifold_drift,
    plot_reduced_vs_full,
)
from slrlib.core.risk import manifold_risk
from slrlib.book.ch06_pgd import (
    ManifoldDrift,
    ReducedVsFull,
    manifold_drift,
    reduced_vs_full,
)
from slrlib.book.ch07_theorem5 import (
    BasinGrid,
    FlowField,
    Landscape,
    basin_grid,
    default_starts,
    flow_field,
    landscape,
    saddle_stable_set,
)

__all__ = [
    "BASIN_ALPHA",
    "BASIN_GRID",
    "BASIN_STEPS",
    "FIG6_LAM",
    "BasinFigure",
    "Figure6",
    "ReducedFigure",
    "compute_basins",
    "compute_drift",
    "compute_fig6",
    "compute_reduced",
    "plot_basin_figure",
    "plot_fig6",
    "plot_reduced",
]

_FIG4B = PGD_CONFIGS["fig4b"]
#: λ of Figure 6 and of the basin grid: Figure 4(b)'s.
FIG6_LAM = _FIG4B.lam
#: Step size of the basin grid: 50 times Figure 4(b)'s, still in the descent regime
#: (chapter 7 checks it) and below 1/μ (μ the top Hessian eigenvalue at the saddle),
#: so that Proposition 12 applies literally.
BASIN_ALPHA = 0.2
BASIN_STEPS = 2000
BASIN_GRID = 201
# Figure 4(b)'s parameters, logged every 20 steps (smooth paths in ch6_reduced).
_REDUCED_CONFIG = _FIG4B.scaled(log_every=20)


# --------------------------------------------------------------------------- ch6_drift
def compute_drift(config: PGDConfig = _FIG4B) -> ManifoldDrift:
    """Figure 4(b)'s 30 runs (same seed), every one of the 20 000 steps logged (``config``:
    another configuration started on the manifold, e.g. a shorter one for tests)."""
    return manifold_drift(config)


def _drift_table(d: ManifoldDrift):
    return {
        "step": d.steps,
        "max_distance": d.max_distance,
        "median_distance": d.median_distance,
        "max_abs_theta": d.max_abs_theta,
        "max_abs_eta": d.max_abs_eta,
        "max_abs_rho": d.max_abs_rho,
    }


# --------------------------------------------------------------------------- ch6_reduced
class ReducedFigure(NamedTuple):
    """The data of ``ch6_reduced``: the comparison and the risk grid drawn under it."""

    comparison: ReducedVsFull
    kappa: np.ndarray
    nu: np.ndarray
    risk: np.ndarray


def compute_reduced(
    config: PGDConfig = _REDUCED_CONFIG, n_grid: int = 121
) -> ReducedFigure:
    """Full PGD at Figure 4(b)'s parameters from the 24 starts of
    :func:`slrlib.book.ch07_theorem5.default_starts` (vectors on :math:`\\mathcal M` with those overlaps),
    logged every 20 steps, against the reduced map; with the manifold risk on an
    ``n_grid`` × ``n_grid`` grid."""
    comparison = reduced_vs_full(config, starts=default_starts())
    axis = np.linspace(-1.0, 1.0, n_grid)
    K, N = np.meshgrid(axis, axis)
    risk = np.asarray(manifold_risk(K, N, config.lam, config.task))
    return ReducedFigure(comparison, axis, axis, risk)


def plot_reduced(data: ReducedFigure):
    """:func:`slrlib.book.plots.manifold.plot_reduced_vs_full` with every run and the level sets."""
    n = data.comparison.full_kappa.shape[0]
    return plot_reduced_vs_full(
        data.comparison,
        runs=range(n),
        risk_grid=(data.kappa, data.nu, data.risk),
    )


def _reduced_table(data: ReducedFigure):
    c = data.comparison
    n_runs, n_log = c.full_kappa.shape
    return {
        "run": np.repeat(np.arange(n_runs), n_log),
        "step": np.tile(c.steps, n_runs),
        "full_kappa": c.full_kappa.ravel(),
        "full_nu": c.full_nu.ravel(),
        "reduced_kappa": c.reduced_kappa.ravel(),
        "reduced_nu": c.reduced_nu.ravel(),
    }


# --------------------------------------------------------------------------- fig6
class Figure6(NamedTuple):
    """The data of ``fig6``: panel (a) the landscape, panel (b) the flow, at the same λ."""

    landscape: Landscape
    flow: FlowField


def compute_fig6(
    n_steps: int = _FIG4B.n_steps,
    log_every: int = 50,
    n_grid: int = 121,
    numerical: bool = True,
    n_flow: int = 121,
) -> Figure6:
    """Panel (a): the landscape at λ = 0.1 with the fixed points found by Newton's method and the
    reduced trajectories at Figure 4(b)'s α = 4e-3 for 20 000 steps (logged every 50). Panel (b):
    the direction field on an ``n_flow`` × ``n_flow`` grid and the nullclines."""
    land = landscape(
        FIG6_LAM,
        _FIG4B.task,
        alpha=_FIG4B.alpha,
        n_steps=n_steps,
        log_every=log_every,
        n_grid=n_grid,
        numerical=numerical,
    )
    return Figure6(land, flow_field(FIG6_LAM, _FIG4B.task, n_grid=n_flow))


def plot_fig6(data: Figure6):
    """:func:`slrlib.book.plots.manifold.plot_figure6`."""
    return plot_figure6(data.landscape, data.flow)


_KIND_CODE = {"saddle": 0, "minimum": 1, "maximum": 2}


def _landscape_table(data: Figure6):
    """Panel (a): layer 0 the risk grid; layer 1 trajectory points (index = path, step); layer 2
    fixed points (index = 0 saddle, 1 minimum, 2 maximum). Panel (b): layer 3 the direction field
    (``v_kappa``, ``v_nu``); layer 4 the nullcline of κ. Columns a layer does not use hold NaN (or -1)."""
    land, flow = data.landscape, data.flow
    K, N = np.meshgrid(land.kappa, land.nu)
    FK, FN = np.meshgrid(flow.kappa, flow.nu)
    n_paths, n_log = land.paths_kappa.shape
    steps = np.arange(n_log) * (land.n_steps // (n_log - 1))
    p = len(land.kinds)
    sizes = [K.size, n_paths * n_log, p, FK.size, flow.curve_kappa.size]

    def nan(n):
        return np.full(n, np.nan)

    def minus(n):
        return np.full(n, -1)

    return {
        "layer": np.concatenate(
            [np.full(n, i) for i, n in enumerate(sizes)]
        ).astype(int),
        "index": np.concatenate(
            [
                minus(K.size),
                np.repeat(np.arange(n_paths), n_log),
                [_KIND_CODE[k] for k in land.kinds],
                minus(FK.size),
                minus(sizes[4]),
            ]
        ).astype(int),
        "step": np.concatenate(
            [
                minus(K.size),
                np.tile(steps, n_paths),
                minus(p),
                minus(FK.size),
                minus(sizes[4]),
            ]
        ).astype(int),
        "kappa": np.concatenate(
            [
                K.ravel(),
                land.paths_kappa.ravel(),
                land.points[:, 0],
                FK.ravel(),
                flow.curve_kappa,
            ]
        ),
        "nu": np.concatenate(
            [
                N.ravel(),
                land.paths_nu.ravel(),
                land.points[:, 1],
                FN.ravel(),
                flow.curve_nu,
            ]
        ),
        "risk": np.concatenate(
            [
                land.risk.ravel(),
                nan(n_paths * n_log),
                land.point_risk,
                nan(FK.size),
                nan(sizes[4]),
            ]
        ),
        "v_kappa": np.concatenate(
            [nan(sum(sizes[:3])), flow.v_kappa.ravel(), nan(sizes[4])]
        ),
        "v_nu": np.concatenate(
            [nan(sum(sizes[:3])), flow.v_nu.ravel(), nan(sizes[4])]
        ),
    }


# --------------------------------------------------------------------------- ch7_basins
class BasinFigure(NamedTuple):
    """The data of ``ch7_basins``: the grid of limits and the saddle's stable set."""

    grid: BasinGrid
    curve_kappa: np.ndarray
    curve_nu: np.ndarray


def compute_basins(
    n_grid: int = BASIN_GRID, n_curve: int = 101, n_steps: int = BASIN_STEPS
) -> BasinFigure:
    """Reduced PGD from a 201 × 201 grid at λ = 0.1, α = 0.2, 2000 steps; the saddle's
    stable set by bisection at 101 values of κ₀ in [−0.999, 0.999]."""
    task = _FIG4B.task
    grid = basin_grid(
        FIG6_LAM, task, alpha=BASIN_ALPHA, n_steps=n_steps, n_grid=n_grid
    )
    curve_kappa = np.linspace(-0.999, 0.999, n_curve)
    curve = saddle_stable_set(
        curve_kappa, task, lam=FIG6_LAM, alpha=BASIN_ALPHA, n_steps=n_steps
    )
    return BasinFigure(grid, curve_kappa, curve)


def plot_basin_figure(data: BasinFigure):
    """:func:`slrlib.book.plots.manifold.plot_basins` with the stable set drawn."""
    return plot_basins(data.grid, data.curve_kappa, data.curve_nu)


def _basin_table(data: BasinFigure):
    """Layer 0: grid starts with their label (``slrlib.book.ch07_theorem5.LIMIT_NAMES``); layer 1: the
    stable set of the saddle (label 0)."""
    g = data.grid
    K, N = np.meshgrid(g.kappa0, g.nu0)
    m = data.curve_kappa.size
    return {
        "layer": np.concatenate([np.zeros(K.size, int), np.ones(m, int)]),
        "kappa0": np.concatenate([K.ravel(), data.curve_kappa]),
        "nu0": np.concatenate([N.ravel(), data.curve_nu]),
        "label": np.concatenate([g.labels.ravel(), np.zeros(m, int)]).astype(
            int
        ),
    }


register(
    FigureSpec(
        "ch6_drift",
        "Distance to M along PGD started on M (Lemma 4), Figure 4(b)'s runs",
        6,
        compute_drift,
        plot_manifold_drift,
        _drift_table,
    )
)
register(
    FigureSpec(
        "ch6_reduced",
        "Full PGD in R^400 vs the reduced map F of Lemma 7",
        6,
        compute_reduced,
        plot_reduced,
        _reduced_table,
    )
)
register(
    FigureSpec(
        "fig6",
        "Figure 6 (reconstruction): (a) the risk on M, (b) the flow and its nullclines, λ = 0.1",
        7,
        compute_fig6,
        plot_fig6,
        _landscape_table,
    )
)
register(
    FigureSpec(
        "ch7_basins",
        "Limits of reduced PGD and the saddle's stable set (Props 11, 13)",
        7,
        compute_basins,
        plot_basin_figure,
        _basin_table,
    )
)
