"""slrlib's optional dependencies, by the extra of ``pyproject.toml`` that installs each.

The numerical core (:mod:`slrlib.core`, PGD and SGD in :mod:`slrlib.training`,
:mod:`slrlib.experiments`) needs NumPy, SciPy and JAX only: ``pip install .``. The rest comes
with extras: ``pip install ".[plots]"`` (figures: :mod:`slrlib.plots`, :mod:`slrlib.figures`,
``python -m slrlib figure``), ``".[widgets]"`` (:mod:`slrlib.widgets`), ``".[optim]"`` (the
Transformer layer's training, :mod:`slrlib.training.transformer`), ``".[case-studies]"``
(:mod:`slrlib.case_studies`), ``".[nlp]"`` (the encoder of the probing case study).
A module that needs a missing extra fails to import with a message that names the extra
(:func:`require`).
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["EXTRAS", "require"]

#: The extra of ``pyproject.toml`` that installs each optional top-level module.
EXTRAS = {
    "matplotlib": "plots",
    "PIL": "plots",
    "ipywidgets": "widgets",
    "IPython": "widgets",
    "optax": "optim",
    "sklearn": "case-studies",
    "torch": "nlp",
    "transformers": "nlp",
}


def require(module: str, needed_by: str) -> ModuleType:
    """Import ``module`` (an optional dependency); if it is missing, say which extra installs it.

    Parameters
    ----------
    module : str
        The module to import, e.g. ``"matplotlib"``; its top-level package is a key of :data:`EXTRAS`.
    needed_by : str
        What needs it, for the message (e.g. ``"slrlib.plots"``).

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    ModuleNotFoundError
        When the module is not installed: the message names ``pip install "slrlib[EXTRA]"``.
    ValueError
        When ``module`` is not one of slrlib's optional dependencies.
    """
    top = module.split(".")[0]
    if top not in EXTRAS:
        raise ValueError(
            f"module must be one of slrlib's optional dependencies {sorted(EXTRAS)}, got {module!r}"
        )
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name is None or err.name.split(".")[0] != top:
            raise  # something else is missing: not ours to explain
        extra = EXTRAS[top]
        raise ModuleNotFoundError(
            f'{needed_by} needs {top}, which is not installed: pip install "slrlib[{extra}]" '
            f'(from a clone: pip install ".[{extra}]")',
            name=top,
        ) from err
