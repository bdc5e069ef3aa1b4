r"""The task and its closed forms: what the paper proves things about.

* :mod:`slrlib.core.task`: the task SLR(k*, v*) (Section 2), its multiple-location version (30), samplers;
* :mod:`slrlib.core.gaussian`: Gaussian expectations of erf, :math:`\zeta(t, s)` in closed form;
* :mod:`slrlib.core.predictors`: hard oracle (1), softmax (2) and erf (3) attention, multi-head (31),
  linear, Bayes;
* :mod:`slrlib.core.risk`: overlaps, the closed-form risk (Theorem 1, Lemma 6, Proposition 3), Monte Carlo;
* :mod:`slrlib.core.montecarlo`: means with standard errors, in batches;
* :mod:`slrlib.core.geometry`: unit vectors with prescribed overlaps, random start points.
"""

from __future__ import annotations

from slrlib.core import gaussian, geometry, montecarlo, predictors, risk, task

__all__ = ["task", "gaussian", "predictors", "risk", "montecarlo", "geometry"]
