"""Run parameters of chapter 13's group-sparse classification case, by name.

The model, its training and the downstream regressions are
:mod:`slrlib.case_studies.token_selection.group_sparse`; the figure ``group_sparse``
(:mod:`slrlib.figures.group_sparse`) runs these.
"""

from __future__ import annotations

from slrlib.case_studies.token_selection.group_sparse import GroupSparseConfig

__all__ = [
    "PRETRAIN_CONFIGS",
    "PRETRAIN_SEED",
    "DOWNSTREAM_NS",
    "DOWNSTREAM_SEEDS",
    "DOWNSTREAM_TEST",
    "DOWNSTREAM_SEED",
    "DOWNSTREAM_C",
    "DOWNSTREAM_FROM",
]

#: The pre-training runs (name → configuration), all with ``jax.random.key(PRETRAIN_SEED)``.
PRETRAIN_CONFIGS = {
    "raw": GroupSparseConfig(
        n=500, d=4, D=6, j_star=1, eta=1.0, n_steps=1000, log_every=10
    ),
    "sym": GroupSparseConfig(
        n=500,
        d=4,
        D=6,
        j_star=1,
        eta=1.0,
        n_steps=1000,
        log_every=10,
        symmetrize=True,
    ),
    "D16": GroupSparseConfig(
        n=500,
        d=4,
        D=16,
        j_star=1,
        eta=0.5,
        n_steps=1000,
        log_every=10,
        symmetrize=True,
    ),
}
#: Seed of the pre-training runs.
PRETRAIN_SEED = 0
#: Downstream training-set sizes.
DOWNSTREAM_NS = (25, 50, 100, 200, 400, 800)
#: Downstream repetitions (training sets) per size.
DOWNSTREAM_SEEDS = 10
#: Downstream test-set size.
DOWNSTREAM_TEST = 2500
#: Seed of the downstream data (``jax.random.key(DOWNSTREAM_SEED)``).
DOWNSTREAM_SEED = 1
#: scikit-learn's inverse penalty for the three logistic regressions (nearly unregularised).
DOWNSTREAM_C = 1e4
#: Which pre-trained W serves downstream, per D.
DOWNSTREAM_FROM = {6: "sym", 16: "D16"}
