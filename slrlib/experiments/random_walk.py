"""Run parameters of chapter 13's random walks on a circle (talk: Shi & Cao), by name.

The models and their training are :mod:`slrlib.case_studies.token_selection.random_walk`; the
figure ``random_walk`` (:mod:`slrlib.figures.random_walk`) runs these.
"""

from __future__ import annotations

from dataclasses import replace

from slrlib.case_studies.token_selection.random_walk import RandomWalkConfig

__all__ = [
    "HALF",
    "DRIFT",
    "DRIFT_LARGE_EPS",
    "RIDGE",
    "RIDGE_SMALL_STEP",
    "RIDGE_CE",
    "OFF_RIDGE",
    "INIT_SCALE",
    "SEEDS",
]

#: The talk's experiment: p = 1/2, K = 20, N = 101 (log loss, ε = 1; step size 100, see the chapter).
HALF = RandomWalkConfig(
    K=20, N=101, p=0.5, steps=200, lr=100.0, eps=1.0, batch=1000, n_test=10_000
)
#: A drifting walk, p = 0.8, same training.
DRIFT = replace(HALF, p=0.8)
#: The drifting walk with ε = 10 and step size 300.
DRIFT_LARGE_EPS = replace(DRIFT, eps=10.0, lr=300.0)
#: The negative result: p = 1, K = 5, N = rK + 1 with r = 4; exact population, zero initialisation.
RIDGE = RandomWalkConfig(K=5, N=21, p=1.0, steps=200, lr=100.0, eps=1.0)
#: The same with a step size 100 times smaller.
RIDGE_SMALL_STEP = replace(RIDGE, lr=1.0)
#: The same with the cross-entropy of the softmax read-out.
RIDGE_CE = replace(RIDGE, loss="cross_entropy")
#: Off the ridge: N = rK + 2 = 22, zero initialisation.
OFF_RIDGE = replace(RIDGE, N=22)
#: Random initialisation: Gaussian entries of standard deviation 0.1, one run per seed.
INIT_SCALE = 0.1
#: The seeds of the random initialisations, one run each.
SEEDS = tuple(range(16))
