"""Case studies beyond the toy task: linear probing of a pretrained encoder, token selection.

* :mod:`slrlib.case_studies.probing`: Appendix E.1, Figures 1(b) and 2 (needs ``transformers``);
* :mod:`slrlib.case_studies.token_selection`: three tasks where attention learns to select a token.

Modules load on first use.
"""

from __future__ import annotations

import importlib as _importlib

__all__ = ["probing", "token_selection"]


def __getattr__(name):
    if name in __all__:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
