r"""Chapter 13, random walks on a circle (talk, Shi & Cao): the experiments and figure ``random_walk``.

``compute`` runs every experiment of the section once per process (``functools.cache``,
fixed seeds): gradient descent at the talk's sizes :math:`K = 20`, :math:`N = 101` for
:math:`p = 1/2` and for the drifting walk :math:`p = 0.8` (at two values of :math:`\epsilon`),
and the exact population runs at :math:`p = 1`, :math:`K = 5`, :math:`N = rK + 1 = 21` (zero and
random initialisation, two losses) and at :math:`N = 22` (off the ridge).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import jax
import numpy as np

from slrlib.figures import FigureSpec, register
from slrlib.plots.random_walk import plot_random_walk
from slrlib.case_studies.token_selection.random_walk import (
    RandomWalkResult,
    train,
    train_many,
)
from slrlib.experiments.random_walk import (
    DRIFT,
    DRIFT_LARGE_EPS,
    HALF,
    INIT_SCALE,
    OFF_RIDGE,
    RIDGE,
    RIDGE_CE,
    RIDGE_SMALL_STEP,
    SEEDS,
)

__all__ = [
    "RandomWalkExperiments",
    "compute",
    "random_walk_table",
]


@dataclass(frozen=True, eq=False)
class RandomWalkExperiments:
    r"""Every run of the section (see :mod:`slrlib.experiments.random_walk` for the configurations).

    Parameters
    ----------
    half, drift, drift_large_eps : RandomWalkResult
        Gradient descent at :math:`K = 20`, :math:`N = 101`: :math:`p = 1/2`; :math:`p = 0.8`;
        :math:`p = 0.8` with :math:`\epsilon = 10` and step size 300.
    ridge, ridge_small_step, ridge_ce : RandomWalkResult
        The exact population at :math:`p = 1`, :math:`K = 5`, :math:`N = 21`, from zero: log loss;
        a step size 100 times smaller; cross-entropy.
    off_ridge : RandomWalkResult
        The same at :math:`N = 22`, from zero.
    random_log, random_ce : list of RandomWalkResult
        Random initialisations at :math:`N = 21`, one run per seed: log loss; cross-entropy.
    """

    half: RandomWalkResult
    drift: RandomWalkResult
    drift_large_eps: RandomWalkResult
    ridge: RandomWalkResult
    ridge_small_step: RandomWalkResult
    ridge_ce: RandomWalkResult
    off_ridge: RandomWalkResult
    random_log: list[RandomWalkResult]
    random_ce: list[RandomWalkResult]


@cache
def compute() -> RandomWalkExperiments:
    """All runs (three compilations), once per process.

    Seed 0, and seeds :data:`slrlib.experiments.random_walk.SEEDS` for the random initialisations.

    Returns
    -------
    RandomWalkExperiments
        Every run of the section.
    """
    half, drift, drift_large_eps = train_many(
        [HALF, DRIFT, DRIFT_LARGE_EPS], [0, 0, 0]
    )
    n = len(SEEDS)
    ridge_runs = train_many(
        [RIDGE, RIDGE_SMALL_STEP, RIDGE_CE]
        + [replace(RIDGE, init_scale=INIT_SCALE)] * n
        + [replace(RIDGE_CE, init_scale=INIT_SCALE)] * n,
        [0, 0, 0, *SEEDS, *SEEDS],
    )
    return RandomWalkExperiments(
        half=half,
        drift=drift,
        drift_large_eps=drift_large_eps,
        ridge=ridge_runs[0],
        ridge_small_step=ridge_runs[1],
        ridge_ce=ridge_runs[2],
        off_ridge=train(OFF_RIDGE, jax.random.key(0)),
        random_log=ridge_runs[3 : 3 + n],
        random_ce=ridge_runs[3 + n :],
    )


def random_walk_table(data: RandomWalkExperiments) -> dict[str, np.ndarray]:
    """The plotted curves, one row per iteration t = 0, ..., T (all runs have T = 200).

    Parameters
    ----------
    data : RandomWalkExperiments
        The runs (:func:`compute`).

    Returns
    -------
    dict of str to numpy.ndarray
        Panels (a), (b): accuracy, mean attention on the parent and cos(V, Π*ᵀ) of the three runs
        at K = 20, N = 101; panel (c): accuracy of the exact runs at p = 1, and the mean over seeds
        of the random initialisations (per-seed columns follow).
    """
    cols = {"iteration": data.half.steps}
    for name in ("half", "drift", "drift_large_eps"):
        r = getattr(data, name)
        cols[f"{name}_accuracy"] = r.accuracy
        cols[f"{name}_parent_attention"] = r.parent
        cols[f"{name}_value_cosine"] = r.cosine
    cols["drift_attention_N_minus_3"] = data.drift.attention[:, -4]
    for name in ("ridge", "ridge_ce", "off_ridge"):
        cols[f"{name}_accuracy"] = getattr(data, name).accuracy
    for name in ("random_log", "random_ce"):
        runs = getattr(data, name)
        cols[f"{name}_accuracy_mean"] = np.mean(
            [r.accuracy for r in runs], axis=0
        )
        for seed, r in zip(SEEDS, runs):
            cols[f"{name}_accuracy_seed{seed}"] = r.accuracy
    return cols


register(
    FigureSpec(
        name="random_walk",
        title="Random walk on a circle: parent selection (p = 1/2, 0.8) and the zero-initialisation ridge (p = 1)",
        chapter=13,
        compute=compute,
        plot=plot_random_walk,
        table=random_walk_table,
    )
)
