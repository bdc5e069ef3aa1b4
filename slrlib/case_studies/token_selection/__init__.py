"""Token selection in other tasks: three case studies.

Chapter 13; the talk on token selection, Li et al., NeurIPS 2024.

Each case trains a one-layer softmax-attention model by gradient descent and shows the
attention learning to select the one token, or group of tokens, that decides the output,
as the attention layer of single-location regression learns :math:`k^\\star` to find
:math:`X_{J_0}`:

* :mod:`slrlib.case_studies.token_selection.nn1`: in-context one-nearest-neighbour prediction;
* :mod:`slrlib.case_studies.token_selection.group_sparse`: group-sparse linear classification;
* :mod:`slrlib.case_studies.token_selection.random_walk`: next-state prediction of a random walk on a circle.
"""

from __future__ import annotations

import importlib as _importlib

__all__ = ["nn1", "group_sparse", "random_walk"]


def __getattr__(name):
    """Submodules load on first use (``from slrlib.case_studies.token_selection import nn1`` also works)."""
    if name in __all__:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
