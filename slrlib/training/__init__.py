"""Training: projected gradient descent on the population risk, stochastic PGD, the Transformer layer.

* :mod:`slrlib.training.pgd`: PGD (Definition 1) with exact gradients, many runs at once; the
  reduced map (Lemma 7), its fixed points, Jacobians and Hessians;
* :mod:`slrlib.training.sgd`: stochastic PGD on the empirical risk, with an exact low-dimensional sampler;
* :mod:`slrlib.training.transformer`: the Transformer layer of Appendix E.3 (eq. 29), trained with
  optax (loaded on first use: ``from slrlib.training import transformer``).
"""

from __future__ import annotations

import importlib as _importlib

from slrlib.training import pgd, sgd

__all__ = ["pgd", "sgd", "transformer"]


def __getattr__(name):
    if name == "transformer":
        return _importlib.import_module(f"{__name__}.transformer")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
