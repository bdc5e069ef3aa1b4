r"""The appendix on related work (Appendix F of Marion et al., 2025): the task as a multi-index
model and as a mixture of linear regressions, and what attention saves over a multi-layer
perceptron.

Computations behind the appendix page *Related work* of the book:

* :func:`projection_posterior` — the posterior of the relevant position computed from the
  projections :math:`t_\ell = X_\ell^\top k^\star` alone, the best a predictor can do that sees the
  tokens through the :math:`2L` indices :math:`(X_\ell^\top k^\star, X_\ell^\top v^\star)_\ell` only;
* :func:`posterior_excess_risks` — Monte Carlo of the excess risks over :math:`\varepsilon^2` of the
  Bayes predictor and of the projection-only predictor, on common draws;
* :func:`parameter_counts` — the number of trainable weights of attention and of two
  perceptrons for single-location regression.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import logsumexp

from slrlib.book.ch04_bayes import reduced_bayes_posterior, reduced_token_draws
from slrlib.core.montecarlo import MonteCarloEstimate, RunningMoments
from slrlib.core.task import SLRTask, check_task
from slrlib.validation import check_key, check_positive_int

__all__ = [
    "projection_posterior",
    "posterior_excess_risks",
    "parameter_counts",
]


def projection_posterior(t, task: SLRTask) -> jax.Array:
    r"""Posterior of :math:`J_0` given only the projections :math:`t_\ell = X_\ell^\top k^\star`.

    Given :math:`J_0`, the projections are independent, :math:`\mathcal N(q, \gamma^2)` for the
    relevant token and :math:`\mathcal N(0, 1)` for the others (:math:`q = \sqrt{d/2}`), so by
    Bayes' rule

    .. math:: \mathbb P(J_0 = \ell \mid t) \propto \pi_\ell
              \exp\Big(-\frac{(t_\ell - q)^2}{2\gamma^2} + \frac{t_\ell^2}{2}\Big).

    Parameters
    ----------
    t : array_like, shape (..., L)
        The projections of the tokens on :math:`k^\star`.
    task : SLRTask
        The task.

    Returns
    -------
    jax.Array, shape (..., L)
        The posterior probabilities; they sum to 1 along the last axis.

    Raises
    ------
    ValueError
        When ``task`` is not an :class:`SLRTask` or ``t`` is not finite with last axis ``L``.
    """
    task = check_task(task)
    t = jnp.asarray(t, dtype=jnp.float64)
    if t.ndim < 1 or t.shape[-1] != task.L:
        raise ValueError(
            f"t must have shape (..., L) = (..., {task.L}), got shape {t.shape}"
        )
    if not bool(jnp.all(jnp.isfinite(t))):
        raise ValueError("t must be finite")
    logits = (
        jnp.log(jnp.asarray(task.pi))
        - jnp.square(t - task.q) / (2 * task.gamma**2)
        + 0.5 * jnp.square(t)
    )
    return jnp.exp(logits - logsumexp(logits, axis=-1, keepdims=True))


def posterior_excess_risks(
    task: SLRTask, key, n_samples: int = 100_000, batch_size: int = 50_000
) -> MonteCarloEstimate:
    r"""Excess risks over :math:`\varepsilon^2` of two posterior-mean predictors, on common draws.

    A predictor :math:`f = \sum_\ell p_\ell\, X_\ell^\top v^\star` built from a posterior
    :math:`p` has risk :math:`\varepsilon^2 + \mathbb E[(X_{J_0}^\top v^\star - f)^2]`, since the noise
    :math:`\varepsilon\xi` is independent of the tokens. Entries of the result: ``[0]`` with the
    Bayes posterior (which also reads the norms, :func:`slrlib.core.predictors.bayes_posterior`),
    ``[1]`` with :func:`projection_posterior`, ``[2]`` their difference ``[1] - [0]`` (paired,
    so its standard error is that of the difference).

    The tokens enter only through :math:`t_\ell = X_\ell^\top k^\star`, :math:`u_\ell = X_\ell^\top v^\star`
    and :math:`r_\ell = \|X_\ell\|^2 - t_\ell^2 - u_\ell^2`, drawn directly as in
    :func:`slrlib.book.ch04_bayes.bayes_excess_risk`: :math:`(q + \gamma G_1, \gamma G_2, \gamma^2\chi^2_{d-2})`
    for the relevant token and :math:`(G_1, G_2, \chi^2_{d-2})` for the others. NumPy's generator is
    seeded with the JAX ``key`` (same key, same result).

    Parameters
    ----------
    task : SLRTask
        The task.
    key : jax.Array
        A JAX PRNG key.
    n_samples, batch_size : int
        Number of sequences, drawn in batches of ``batch_size`` (the last batch is completed).

    Returns
    -------
    MonteCarloEstimate
        Means and standard errors of the three quantities, shape (3,).
    """
    task = check_task(task)
    key = check_key(key)
    n_samples = check_positive_int(n_samples, "n_samples")
    batch_size = min(check_positive_int(batch_size, "batch_size"), n_samples)
    rng = np.random.default_rng(
        np.asarray(jax.random.key_data(key)).ravel().tolist()
    )
    pi = np.asarray(task.pi, dtype=np.float64)
    acc = RunningMoments()
    for _ in range(-(-n_samples // batch_size)):
        n = batch_size
        J0, t, u, r = reduced_token_draws(rng, n, task, pi)
        p_bayes = reduced_bayes_posterior(t, u, r, task, np.log(pi))
        p_proj = np.asarray(projection_posterior(t, task))
        target = u[np.arange(n), J0]
        err_bayes = np.square(target - np.sum(p_bayes * u, axis=1))
        err_proj = np.square(target - np.sum(p_proj * u, axis=1))
        acc.add(np.stack([err_bayes, err_proj, err_proj - err_bayes], axis=1))
    return acc.estimate()


def parameter_counts(d: int, L: int, width: int) -> dict[str, int]:
    r"""Trainable weights of three predictors for sequences of ``L`` tokens in :math:`\mathbb R^d`.

    * erf attention (3): :math:`k, v \in \mathbb R^d`, so :math:`2d`, whatever ``L``;
    * a *diagonal* two-layer perceptron whose first layer acts on each token separately with
      weights of its own position (two units per token, for :math:`X_\ell^\top k` and
      :math:`X_\ell^\top v`) and whose second layer maps the :math:`2L` units to the output through
      ``width`` hidden units: :math:`2Ld + 2L\cdot\mathrm{width} + \mathrm{width}`;
    * a dense two-layer perceptron on the flattened sequence with ``width`` hidden units:
      :math:`Ld\cdot\mathrm{width} + \mathrm{width}`.

    Biases are left out. Raises ``ValueError`` when an argument is not a positive integer.
    """
    d = check_positive_int(d, "d")
    L = check_positive_int(L, "L")
    width = check_positive_int(width, "width")
    return {
        "erf attention": 2 * d,
        "diagonal perceptron": 2 * L * d + 2 * L * width + width,
        "dense perceptron": L * d * width + width,
    }
