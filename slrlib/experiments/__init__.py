"""The paper's experiments by name: their run parameters, how they start, tidy results.

Every run parameter of the paper's experiments lives here, as keyword-built, frozen
configurations:

* :mod:`slrlib.experiments.descent`: PGD (Figures 4 and 7,
  :data:`~slrlib.experiments.descent.PGD_CONFIGS`) and stochastic
  PGD (Figures 5 and 9, :data:`~slrlib.experiments.descent.SGD_CONFIGS`); their initialisations
  (:func:`~slrlib.experiments.descent.pgd_initialisation`, :func:`~slrlib.experiments.descent.sgd_initialisation`);
* :mod:`slrlib.experiments.heads`: which head serves which location (:func:`~slrlib.experiments.heads.match_heads`);
* :mod:`slrlib.experiments.transformer`: the Transformer layer (Figures 8 and 10,
  :data:`~slrlib.experiments.transformer.TRANSFORMER_CONFIGS`).

The names of the first two modules are re-exported here (``from slrlib.experiments import
SGD_CONFIGS``); the Transformer's load with ``from slrlib.experiments import transformer``.
"""

from __future__ import annotations

import importlib as _importlib

from slrlib.experiments import descent, heads
from slrlib.experiments.descent import *  # noqa: F401,F403
from slrlib.experiments.descent import __all__ as _descent_all
from slrlib.experiments.heads import *  # noqa: F401,F403
from slrlib.experiments.heads import __all__ as _heads_all

__all__ = ["descent", "heads", "transformer", *_descent_all, *_heads_all]


def __getattr__(name):
    if name == "transformer":
        return _importlib.import_module(f"{__name__}.transformer")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
