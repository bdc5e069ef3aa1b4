"""Run parameters of chapter 13's in-context one-nearest-neighbour case (talk: Li et al., NeurIPS 2024).

The model and its training are :mod:`slrlib.case_studies.token_selection.nn1`; the figure
``nn1`` (:mod:`slrlib.figures.nn1`) runs these.
"""

from __future__ import annotations

import numpy as np

from slrlib.case_studies.token_selection import nn1

__all__ = [
    "CONFIG",
    "SEED",
    "MARGIN_SEED",
    "MARGIN_DELTAS",
    "MARGIN_N",
    "MARGIN_R",
]

#: The run of the chapter: d = 4, N = 16, σ = 4, step size 1.5, 20 000 steps of 128 fresh prompts.
CONFIG = nn1.NN1Config()
#: Seed of the training run (``jax.random.key(SEED)``).
SEED = 0
#: Seed of the shifted prompts.
MARGIN_SEED = 1
#: Margins of the distribution-shift panel.
MARGIN_DELTAS = np.round(np.linspace(0.0, 0.6, 13), 12)
#: Shifted prompts per margin.
MARGIN_N = 10_000
#: Label bound of the shifted prompts (labels uniform on [-R, R]; training labels are ±1).
MARGIN_R = 2.0
