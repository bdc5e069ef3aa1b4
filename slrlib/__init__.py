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

**slrlib computes in float64, and leaves JAX's configuration to you.** Enable it once, before
any computation::

    import jax
    jax.config.update("jax_enable_x64", True)

Every entry point checks that it is on and raises :class:`Float64Required` (naming that line)
when it is not: the closed forms are compared with simulations to standard errors of 1e-4 and
plotted on log scales down to 1e-12, where float32 (7 digits) cannot serve, so no slrlib
function computes silently in float32. ``import slrlib`` changes no global state and imports
no JAX: the names below load on first use. :func:`slrlib.threefry.use_unrolled_threefry` is an
opt-in, faster CPU lowering of JAX's random generator (the same random bits).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if (
    TYPE_CHECKING
):  # what the names below are, for type checkers and IDEs; loaded on first use
    from slrlib import (
        case_studies,
        core,
        experiments,
        extras,
        figures,
        plots,
        threefry,
        training,
        validation,
        widgets,
    )
    from slrlib.core.gaussian import zeta
    from slrlib.core.geometry import manifold_directions, uniform_directions
    from slrlib.core.predictors import (
        bayes_posterior,
        bayes_predictor,
        best_linear_weights,
        erf_attention,
        hard_oracle,
        linear_predictor,
        multi_head_erf_attention,
        softmax_attention,
    )
    from slrlib.core.risk import (
        MonteCarloEstimate,
        OptimalLambda,
        Overlaps,
        linear_risk,
        manifold_risk,
        monte_carlo_risk,
        null_risk,
        optimal_lambda,
        oracle_risk,
        overlaps,
        population_risk,
        risk_from_overlaps,
    )
    from slrlib.core.task import (
        MultiLocationTask,
        MultiSample,
        Sample,
        SLRTask,
    )
    from slrlib.experiments.descent import recovered
    from slrlib.training.pgd import PGDResult, pgd
    from slrlib.training.sgd import SGDResult, sgd
    from slrlib.validation import Float64Required, checked
    from slrlib.widgets import Slider, slider_figure

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
    # argument checks under jax.jit; float64; the subpackages that need no extra
    "checked",
    "x64_enabled",
    "Float64Required",
    "core",
    "training",
    "experiments",
    "case_studies",
    "validation",
    "extras",
]

#: Where each public name lives. Nothing is imported by ``import slrlib``: a name loads its module on
#: first use (PEP 562), so that ``python -m slrlib --help`` needs no JAX and ``import slrlib`` sets no
#: global state. ``plots``, ``figures`` and ``widgets`` need extras (:mod:`slrlib.extras`).
_WHERE = {
    **{
        name: "slrlib.core.task"
        for name in ("SLRTask", "Sample", "MultiLocationTask", "MultiSample")
    },
    **{
        name: "slrlib.core.predictors"
        for name in (
            "erf_attention",
            "multi_head_erf_attention",
            "softmax_attention",
            "hard_oracle",
            "bayes_posterior",
            "bayes_predictor",
            "linear_predictor",
            "best_linear_weights",
        )
    },
    "zeta": "slrlib.core.gaussian",
    **{
        name: "slrlib.core.risk"
        for name in (
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
        )
    },
    **{
        name: "slrlib.core.geometry"
        for name in ("uniform_directions", "manifold_directions")
    },
    **{name: "slrlib.training.pgd" for name in ("pgd", "PGDResult")},
    **{name: "slrlib.training.sgd" for name in ("sgd", "SGDResult")},
    "recovered": "slrlib.experiments.descent",
    **{name: "slrlib.validation" for name in ("checked", "Float64Required")},
    **{name: "slrlib.widgets" for name in ("Slider", "slider_figure")},
}
#: The subpackages and modules reachable as attributes (``slrlib.core``), loaded on first use too.
_SUBMODULES = (
    "core",
    "training",
    "experiments",
    "case_studies",
    "validation",
    "extras",
    "threefry",
    "verify",
    "plots",
    "figures",
    "widgets",
)


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"slrlib.{name}")
    else:
        raise AttributeError(f"module 'slrlib' has no attribute {name!r}")
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE) | set(_SUBMODULES))


def x64_enabled() -> bool:
    """True while JAX computes in float64 (``jax_enable_x64``), as every slrlib function requires.

    Turn it on with ``jax.config.update("jax_enable_x64", True)``; while it is off, slrlib's entry
    points raise :class:`Float64Required`.
    """
    import jax

    return bool(jax.config.jax_enable_x64)
