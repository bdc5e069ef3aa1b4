"""slrlib: single-location regression, the library behind the book.

Marion, Berthier, Biau & Boyer, *Attention layers provably solve single-location
regression*, ICLR 2025. The library, in layers (each imports only the ones above it):

* :mod:`slrlib.core` — the task (Section 2, eq. 30), Gaussian identities, the predictors, the
  closed-form risks (Theorem 1, Lemma 6, Proposition 3), Monte Carlo, overlap geometry;
* :mod:`slrlib.training` — projected gradient descent (Definition 1, Lemma 7), stochastic PGD,
  the Transformer layer of Appendix E.3 (eq. 29);
* :mod:`slrlib.experiments` — every run parameter of the paper's experiments, by name;
* :mod:`slrlib.plots` and :mod:`slrlib.figures` — the paper's figures, regenerable by name
  (``python -m slrlib figure``);
* :mod:`slrlib.case_studies` — linear probing of a pretrained encoder, token selection;
* :mod:`slrlib.widgets` (sliders), :mod:`slrlib.validation` (the checks behind every
  ``ValueError``), :mod:`slrlib.threefry` (a faster CPU lowering of JAX's generator),
  :mod:`slrlib.extras` (which extra of ``pyproject.toml`` installs what).

The core needs NumPy, SciPy and JAX only; :mod:`slrlib.plots`, :mod:`slrlib.figures` and
:mod:`slrlib.widgets` need extras and load on first use (``slrlib.plots``).

:mod:`slrlib.book` holds what exists for one chapter of the book; the library never imports it.

**Importing slrlib switches JAX to float64** (``jax_enable_x64``), for the whole process. The
closed forms are compared with simulations to standard errors of 1e-4 and plotted on log
scales down to 1e-12, where float32 (7 digits) cannot serve, and every function of the
library assumes it. Other JAX code in the same process then gets float64 wherever it creates
arrays without a dtype: pass ``dtype=jnp.float32`` where float32 is wanted (slrlib's
Transformer training does). :func:`x64_enabled` says whether the switch still holds.
Importing slrlib also lowers JAX's Threefry generator on CPU with its rounds unrolled
(:mod:`slrlib.threefry`): the same random bits, several times faster.
"""

from __future__ import annotations

import jax as _jax

_jax.config.update("jax_enable_x64", True)

from slrlib.threefry import use_unrolled_threefry as _use_unrolled_threefry  # noqa: E402

_use_unrolled_threefry()  # same random bits, faster on CPU (see slrlib.threefry)

from slrlib import (
    case_studies,
    core,
    experiments,
    extras,
    training,
    validation,
)  # noqa: E402
from slrlib.core.gaussian import zeta  # noqa: E402
from slrlib.core.predictors import (  # noqa: E402
    bayes_posterior,
    bayes_predictor,
    best_linear_weights,
    erf_attention,
    hard_oracle,
    multi_head_erf_attention,
    linear_predictor,
    softmax_attention,
)
from slrlib.core.risk import (  # noqa: E402
    MonteCarloEstimate,
    Overlaps,
    linear_risk,
    manifold_risk,
    monte_carlo_risk,
    null_risk,
    OptimalLambda,
    optimal_lambda,
    oracle_risk,
    overlaps,
    population_risk,
    risk_from_overlaps,
)
from slrlib.core.task import MultiLocationTask, MultiSample, Sample, SLRTask  # noqa: E402
from slrlib.core.geometry import manifold_directions, uniform_directions  # noqa: E402
from slrlib.training.pgd import PGDResult, pgd  # noqa: E402
from slrlib.training.sgd import SGDResult, sgd  # noqa: E402
from slrlib.experiments.descent import recovered  # noqa: E402
from slrlib.validation import checked  # noqa: E402

__version__ = "0.1.0"

#: The paper's main objects, in the order a first session meets them: the task, the predictors,
#: the risks, the start points, PGD and SGD with their results, and the test of recovery.
__all__ = [
    # the task (Section 2)
    "SLRTask",
    "Sample",
    "MultiLocationTask",
    "MultiSample",
    # predictors
    "erf_attention",
    "multi_head_erf_attention",
    "softmax_attention",
    "hard_oracle",
    "bayes_posterior",
    "bayes_predictor",
    "linear_predictor",
    "best_linear_weights",
    # risks (Theorem 1, Lemma 6, Proposition 3) and Monte Carlo
    "zeta",
    "Overlaps",
    "overlaps",
    "risk_from_overlaps",
    "population_risk",
    "manifold_risk",
    "oracle_risk",
    "OptimalLambda",
    "optimal_lambda",
    "null_risk",
    "linear_risk",
    "MonteCarloEstimate",
    "monte_carlo_risk",
    # start points, training (Definition 1, Section 5) and recovery
    "uniform_directions",
    "manifold_directions",
    "pgd",
    "PGDResult",
    "sgd",
    "SGDResult",
    "recovered",
    # argument checks under jax.jit; the float64 switch; the subpackages that need no extra
    "checked",
    "x64_enabled",
    "core",
    "training",
    "experiments",
    "case_studies",
    "validation",
    "extras",
]

#: Loaded on first use, because they need an extra (:mod:`slrlib.extras`): ``slrlib.plots``,
#: ``slrlib.figures`` (matplotlib: ``pip install "slrlib[plots]"``) and ``slrlib.widgets``
#: with ``Slider`` and ``slider_figure`` (``"slrlib[widgets]"``).
_ON_FIRST_USE = {
    "plots": "slrlib.plots",
    "figures": "slrlib.figures",
    "widgets": "slrlib.widgets",
    "Slider": "slrlib.widgets",
    "slider_figure": "slrlib.widgets",
}


def __getattr__(name: str):
    if name in _ON_FIRST_USE:
        import importlib

        module = importlib.import_module(_ON_FIRST_USE[name])
        return (
            module
            if module.__name__ == f"slrlib.{name}"
            else getattr(module, name)
        )
    raise AttributeError(f"module 'slrlib' has no attribute {name!r}")


def x64_enabled() -> bool:
    """True while JAX computes in float64 (``jax_enable_x64``), as every slrlib function assumes.

    ``import slrlib`` switches it on for the process; code that turns it off afterwards
    (``jax.config.update("jax_enable_x64", False)``) would get float32 closed forms.
    """
    return bool(_jax.config.jax_enable_x64)
