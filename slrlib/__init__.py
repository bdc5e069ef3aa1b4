"""slrlib: single-location regression, the library behind the book.

Marion, Berthier, Biau & Boyer, *Attention layers provably solve single-location
regression*, ICLR 2025. Modules (one concern each):

* :mod:`slrlib.task` — the task SLR(k*, v*), its multiple-location version (30), their samplers;
* :mod:`slrlib.gaussian` — Gaussian expectations of erf, ζ(t, s) in closed form;
* :mod:`slrlib.predictors` — oracle, softmax and erf attention, multi-head (31), linear, Bayes;
* :mod:`slrlib.risk` — closed-form risks (Theorem 1, Lemma 6, Proposition 3) and Monte Carlo;
* :mod:`slrlib.dynamics` — projected gradient descent (Definition 1), the reduced map (Lemma 7);
* :mod:`slrlib.sgd` — stochastic PGD on the empirical risk, with an exact low-dimensional sampler;
* :mod:`slrlib.transformer` — the Transformer layer of Appendix E.3 (eq. 29), trained with optax;
* :mod:`slrlib.experiments` — the paper's PGD and SGD experiments by name;
* :mod:`slrlib.figures` — every figure of chapters 6–11 by name (``python -m slrlib figure``);
* :mod:`slrlib.widgets` — sliders, live and kernel-free;
* :mod:`slrlib.plots` — one function per figure of the book.

Importing ``slrlib`` switches JAX to float64 (``jax_enable_x64``): the closed forms are
compared with simulations and plotted on log scales, where float32 is not enough. It also lowers JAX's Threefry generator on CPU with its
rounds unrolled (:mod:`slrlib._threefry`): the same random bits, several times faster.
"""

import jax as _jax

_jax.config.update("jax_enable_x64", True)

from slrlib._threefry import use_unrolled_threefry as _use_unrolled_threefry  # noqa: E402

_use_unrolled_threefry()  # same random bits, faster on CPU (see slrlib._threefry)

from slrlib import dynamics, experiments, gaussian, predictors, risk, sgd, task, widgets  # noqa: E402
from slrlib.gaussian import zeta  # noqa: E402
from slrlib.predictors import (  # noqa: E402
    bayes_posterior,
    bayes_predictor,
    best_linear_weights,
    erf_attention,
    hard_oracle,
    multi_head_erf_attention,
    linear_predictor,
    softmax_attention,
)
from slrlib.risk import (  # noqa: E402
    MonteCarloEstimate,
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
from slrlib.task import MultiLocationTask, MultiSample, Sample, SLRTask  # noqa: E402
from slrlib.widgets import Slider, slider_figure  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "SLRTask",
    "Sample",
    "MultiLocationTask",
    "MultiSample",
    "multi_head_erf_attention",
    "zeta",
    "hard_oracle",
    "softmax_attention",
    "erf_attention",
    "linear_predictor",
    "best_linear_weights",
    "bayes_posterior",
    "bayes_predictor",
    "Overlaps",
    "overlaps",
    "risk_from_overlaps",
    "population_risk",
    "manifold_risk",
    "oracle_risk",
    "optimal_lambda",
    "null_risk",
    "linear_risk",
    "MonteCarloEstimate",
    "monte_carlo_risk",
    "Slider",
    "slider_figure",
    "dynamics",
    "experiments",
    "gaussian",
    "predictors",
    "risk",
    "task",
    "widgets",
]
