r"""Chapter 13's own computations: exact values that the chapter's Monte Carlo numbers are checked against.

The in-context one-nearest-neighbour model of :mod:`slrlib.case_studies.token_selection.nn1` at
its initialisation :math:`W_0 = \operatorname{diag}(0, \dots, 0, -\sigma)`: every context token
gets the score 0 and the query :math:`-\sigma`, so the prediction depends only on the labels.
With :math:`N` i.i.d. fair signs :math:`y_i` and the target :math:`y^\star = y_{i^\star}`, where
:math:`i^\star` does not depend on the labels, everything is an average over the number
:math:`k` of positive labels (binomial) and, given :math:`k`, over :math:`y^\star`
(:math:`\mathbb E[y^\star \mid k] = (2k - N)/N`).

* :func:`nn1_initial_loss`: :math:`L(W_0) = \tfrac12(N a^2 - 2a + 1)`, :math:`a = 1/(N + e^{-\sigma})`
  the weight of each context token;
* :func:`nn1_curvature_c`: the second derivative of the population loss at :math:`W_0` along
  :math:`c = W_{d+1,d+2}`, which adds :math:`c\,y_i` to the score of token :math:`i`, with the
  query's weight :math:`e^{-\sigma}` included (the chapter's formula
  :math:`1 - 2/N + 3/N^2 - 2/N^3` is its limit :math:`\sigma \to \infty`);
* :func:`nn1_per_prompt_loss`: the loss of each prompt, whose spread gives the Monte Carlo
  standard error of a held-out loss.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from slrlib.case_studies.token_selection import nn1 as _nn1
from slrlib.validation import check_positive_int, check_real_scalar

__all__ = ["nn1_initial_loss", "nn1_curvature_c", "nn1_per_prompt_loss"]


def nn1_initial_loss(N: int, sigma: float) -> float:
    r"""Population loss :math:`L(W_0) = \tfrac12\,\mathbb E(f_{W_0}(H) - y_{i^\star})^2` at the initialisation.

    At :math:`W_0` each of the :math:`N` context tokens has weight :math:`a = 1/(N + e^{-\sigma})`,
    so :math:`f = a\sum_i y_i`, :math:`\mathbb E f^2 = N a^2` and
    :math:`\mathbb E[f y_{i^\star}] = a`: :math:`L(W_0) = \tfrac12(N a^2 - 2a + 1)`, which is
    :math:`\tfrac12(1 - 1/N)` as :math:`\sigma \to \infty`.

    Parameters
    ----------
    N : int
        Labelled points per prompt, >= 1.
    sigma : float
        The query's mask, >= 0.

    Returns
    -------
    float
        The loss.

    Raises
    ------
    ValueError
        If ``N`` is not a positive integer or ``sigma`` is negative or not finite.
    """
    N = check_positive_int(N, "N")
    sigma = check_real_scalar(sigma, "sigma", minimum=0.0)
    a = 1.0 / (N + math.exp(-sigma))
    return 0.5 * (N * a * a - 2 * a + 1)


def nn1_curvature_c(N: int, sigma: float) -> float:
    r"""Second derivative of the population loss at :math:`W_0` along :math:`c = W_{d+1,d+2}`.

    With :math:`k` positive labels the prediction along :math:`c` is
    :math:`f(c) = (k e^{c} - (N-k) e^{-c}) / (k e^{c} + (N-k) e^{-c} + e^{-\sigma})` and the loss
    :math:`\ell = \tfrac12 (f - y^\star)^2` has :math:`\ell'' = f'^2 + (f - y^\star) f''`; the
    result is the average of :math:`f'(0)^2 + (f(0) - (2k-N)/N) f''(0)` over
    :math:`k \sim \operatorname{Binomial}(N, 1/2)` (derivatives by automatic differentiation).
    As :math:`\sigma \to \infty` it tends to :math:`\mathbb E[(1 - m^2)^2] = 1 - 2/N + 3/N^2 - 2/N^3`
    with :math:`m = \frac1N\sum_i y_i`.

    Parameters
    ----------
    N : int
        Labelled points per prompt, >= 1.
    sigma : float
        The query's mask, >= 0 (``math.inf`` for no query weight).

    Returns
    -------
    float
        The curvature.

    Raises
    ------
    ValueError
        If ``N`` is not a positive integer or ``sigma`` is negative.
    """
    N = check_positive_int(N, "N")
    sigma = float(sigma)
    if not sigma >= 0:
        raise ValueError(f"sigma must be >= 0, got {sigma!r}")
    query = math.exp(-sigma)  # 0.0 for sigma = inf

    def f(c, k):
        up, down = k * jnp.exp(c), (N - k) * jnp.exp(-c)
        return (up - down) / (up + down + query)

    df = jax.grad(f)
    d2f = jax.grad(df)
    total = 0.0
    for k in range(N + 1):
        weight = math.comb(N, k) / 2.0**N
        kk = float(k)
        f0, f1, f2 = float(f(0.0, kk)), float(df(0.0, kk)), float(d2f(0.0, kk))
        total += weight * (f1 * f1 + (f0 - (2 * k - N) / N) * f2)
    return total


def nn1_per_prompt_loss(
    W: jax.Array | np.ndarray, data: _nn1.NN1Data
) -> np.ndarray:
    r"""The loss :math:`\tfrac12 (f_W(H) - y_{i^\star})^2` of each prompt of ``data``.

    Its mean is :func:`slrlib.case_studies.token_selection.nn1.evaluate`'s ``loss``; its standard
    deviation over :math:`\sqrt n` is the Monte Carlo standard error of that mean.

    Parameters
    ----------
    W : array_like, shape (d+2, d+2)
        The attention matrix.
    data : NN1Data
        The prompts.

    Returns
    -------
    numpy.ndarray, shape (n,)
        One loss per prompt.

    Raises
    ------
    ValueError
        If ``data`` is not an ``NN1Data`` or ``W`` has the wrong shape.
    """
    if not isinstance(data, _nn1.NN1Data):
        raise ValueError(f"data must be an NN1Data, got {type(data).__name__}")
    H = _nn1.embed(data.X, data.xq, data.y)
    f = np.asarray(_nn1.predict(W, H))
    return 0.5 * np.square(f - np.asarray(data.target))
