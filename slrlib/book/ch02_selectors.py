r"""How a predictor picks the relevant token (Chapters 1 and 2 of the book).

Every predictor of Section 3 of Marion et al. (2025) first weighs the ``L`` tokens, then
reads the weighted tokens along a direction ``v``. This module isolates the first step:

* hard rules that return one position per sequence: :func:`norm_selector` (the token with
  the largest norm) and :func:`projection_selector` (the largest projection
  :math:`X_\ell^\top k`, the rule inside the hard oracle (1));
* their exact accuracies :math:`\mathbb P(\text{rule} = J_0)`, by one-dimensional quadrature
  (:func:`norm_selector_accuracy`, :func:`projection_selector_accuracy`), from the exact laws
  of the squared norms (:func:`sq_norm_laws`);
* the soft weights of the two trainable predictors: :func:`softmax_weights`
  :math:`\operatorname{softmax}(\lambda \mathbb X k)` of eq. (2) and :func:`erf_weights`
  :math:`\operatorname{erf}(\lambda \mathbb X k)` of eq. (3);
* :func:`relevant_token`, which picks :math:`X_{J_0}` out of a sample;
* :func:`compare_monte_carlo`, Monte Carlo means beside exact values as a table, with the
  arrays that :func:`slrlib.verify.check_z` needs (chapters 1 and 2 check their samplers
  and identities this way);
* :func:`density_overlap`, the overlap :math:`\int \min(f, g)` of two densities (how much
  the laws of the squared norms of chapter 1 have in common).

The exact accuracies are our additions (the paper only notes that, with
:math:`\gamma^2 = 1/2`, all tokens have the same expected squared norm).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import erf
from scipy import integrate, special, stats

from slrlib.validation import (
    as_float_array,
    check_finite,
    check_last_dim,
    check_real_scalar,
    is_concrete,
)
from slrlib.core.task import SLRTask, check_task
from slrlib.book.display import Table, table

__all__ = [
    "relevant_token",
    "norm_selector",
    "projection_selector",
    "erf_weights",
    "softmax_weights",
    "sq_norm_laws",
    "norm_selector_accuracy",
    "projection_selector_accuracy",
    "density_overlap",
    "MonteCarloComparison",
    "compare_monte_carlo",
]


def _tokens(X) -> jax.Array:
    X = as_float_array(X, "X")
    if jnp.ndim(X) < 2:
        raise ValueError(
            f"X must have shape (..., L, d), got shape {jnp.shape(X)}"
        )
    check_finite(X, "X")
    return X


def relevant_token(X, J0) -> jax.Array:
    r"""The relevant token :math:`X_{J_0}` of each sequence.

    ``X`` of shape (n, L, d) and ``J0`` of shape (n,) (0-based positions, as returned by
    :meth:`SLRTask.sample`); returns shape (n, d).
    """
    X = _tokens(X)
    J0 = jnp.asarray(J0)
    if X.ndim != 3 or J0.shape != X.shape[:1]:
        raise ValueError(
            f"X must have shape (n, L, d) and J0 shape (n,), got {jnp.shape(X)} and {J0.shape}"
        )
    if not jnp.issubdtype(J0.dtype, jnp.integer):
        raise ValueError(
            f"J0 must hold integer positions, got dtype {J0.dtype}"
        )
    if (
        is_concrete(J0)
        and J0.size
        and not np.all((np.asarray(J0) >= 0) & (np.asarray(J0) < X.shape[1]))
    ):
        raise ValueError(f"J0 must lie in [0, L - 1] = [0, {X.shape[1] - 1}]")
    return jnp.take_along_axis(X, J0[:, None, None], axis=1)[:, 0, :]


def norm_selector(X) -> jax.Array:
    r"""The position of the token with the largest norm, :math:`\arg\max_\ell \|X_\ell\|`.

    ``X`` (..., L, d) → integer positions (...,), 0-based. With :math:`\gamma^2 = 1/2` every
    token has expected squared norm ``d``, so this rule carries (almost) no information
    about :math:`J_0`; see :func:`norm_selector_accuracy`.
    """
    X = _tokens(X)
    return jnp.argmax(jnp.sum(jnp.square(X), axis=-1), axis=-1)


def projection_selector(X, k) -> jax.Array:
    r"""The position of the largest projection, :math:`\arg\max_\ell X_\ell^\top k`.

    The selection step of the hard oracle (1) when ``k = k*``. ``X`` (..., L, d), ``k``
    (..., d) broadcasting against the leading axes of ``X`` → positions (...,), 0-based.
    """
    X = _tokens(X)
    k = as_float_array(k, "k")
    check_last_dim(k, "k", X.shape[-1])
    check_finite(k, "k")
    return jnp.argmax(jnp.einsum("...ld,...d->...l", X, k), axis=-1)


def _lam(lam):
    if is_concrete(lam):
        return check_real_scalar(lam, "lam", minimum=0.0)
    return lam


def erf_weights(X, k, lam) -> jax.Array:
    r"""The token weights of the erf predictor (3): :math:`\operatorname{erf}(\lambda X_\ell^\top k)`.

    ``X`` (..., L, d), ``k`` (..., d), ``lam`` a scalar :math:`\lambda \ge 0` → (..., L).
    Each weight depends on its own token only (no normalisation across tokens), so
    :math:`\sum_\ell \operatorname{erf}(\lambda X_\ell^\top k)\, X_\ell^\top v` is
    :func:`slrlib.erf_attention`.
    """
    X = _tokens(X)
    k = as_float_array(k, "k")
    check_last_dim(k, "k", X.shape[-1])
    check_finite(k, "k")
    lam = _lam(lam)
    return erf(lam * jnp.einsum("...ld,...d->...l", X, k))


def softmax_weights(X, k, lam) -> jax.Array:
    r"""The token weights of softmax attention (2): :math:`\operatorname{softmax}(\lambda \mathbb X k)_\ell`.

    ``X`` (..., L, d), ``k`` (..., d), ``lam`` a scalar :math:`\lambda \ge 0` → (..., L),
    non-negative and summing to one along the last axis (the coupling between tokens that
    the erf predictor removes).
    """
    X = _tokens(X)
    k = as_float_array(k, "k")
    check_last_dim(k, "k", X.shape[-1])
    check_finite(k, "k")
    lam = _lam(lam)
    return jax.nn.softmax(lam * jnp.einsum("...ld,...d->...l", X, k), axis=-1)


def sq_norm_laws(task: SLRTask):
    r"""Exact laws of the squared norms :math:`\|X_{J_0}\|^2` and :math:`\|X_\ell\|^2` (:math:`\ell \ne J_0`).

    :math:`X_{J_0} = \sqrt{d/2}\,k^\star + \gamma Z` with :math:`Z \sim \mathcal N(0, I_d)`, so
    :math:`\|X_{J_0}\|^2/\gamma^2` is non-central chi-squared with ``d`` degrees of freedom and
    non-centrality :math:`(d/2)/\gamma^2`; a noise token's :math:`\|X_\ell\|^2` is chi-squared
    with ``d`` degrees of freedom. Hence

    .. math::

        \mathbb E\|X_{J_0}\|^2 = \frac d2 + \gamma^2 d, \quad
        \operatorname{Var}\|X_{J_0}\|^2 = 2\gamma^2 d + 2\gamma^4 d, \qquad
        \mathbb E\|X_\ell\|^2 = d, \quad \operatorname{Var}\|X_\ell\|^2 = 2d .

    Returns ``(relevant, noise)``: two frozen ``scipy.stats`` distributions (``pdf``,
    ``cdf``, ``mean``, ``var``, ``rvs``...). Neither depends on :math:`k^\star`,
    :math:`v^\star` or :math:`\pi`.
    """
    task = check_task(task)
    g2 = task.gamma**2
    relevant = stats.ncx2(df=task.d, nc=(task.d / 2.0) / g2, scale=g2)
    noise = stats.chi2(df=task.d)
    return relevant, noise


def norm_selector_accuracy(task: SLRTask) -> float:
    r"""Exact probability that the largest-norm token is the relevant one, :math:`\mathbb P(\text{norm\_selector} = J_0)`.

    Given :math:`J_0`, the squared norms are independent, so

    .. math::

        \mathbb P = \int_0^\infty f_{\rm rel}(x)\, F_{\chi^2_d}(x)^{L-1}\,dx ,

    with :math:`f_{\rm rel}` the density of :math:`\|X_{J_0}\|^2` (see :func:`sq_norm_laws`),
    computed by the trapezoid rule on a fine grid (absolute error about 1e-12). It does not depend
    on :math:`\pi` (the noise tokens are exchangeable). Compare with the chance level
    :math:`1/L`: with :math:`\gamma^2 = 1/2` the relevant token's squared norm has the same
    mean but a smaller variance (:math:`1.5d` against :math:`2d`), so it wins the contest
    for the largest norm slightly *less* often than chance.
    """
    task = check_task(task)
    if task.L == 1:
        return 1.0
    relevant, noise = sq_norm_laws(task)
    m, s = float(relevant.mean()), float(relevant.std())
    lo, hi = max(0.0, m - 40.0 * s), m + 40.0 * s
    # Substitute x = u**2: the density behaves like x**(d/2 - 1) near 0, u**(d - 1) is smooth.
    # The trapezoid rule on a fine grid is then accurate to round-off for these smooth,
    # rapidly decaying integrands. (scipy's ncx2.logpdf returns -inf for large d: use pdf.)
    u = np.linspace(math.sqrt(lo), math.sqrt(hi), _GRID)
    x = np.square(u)
    with np.errstate(divide="ignore", under="ignore"):
        f = relevant.pdf(x) * np.exp((task.L - 1) * noise.logcdf(x)) * 2.0 * u
    total = float(np.trapezoid(f, u))
    return float(min(1.0, max(0.0, total)))


_GRID = 20_001


def projection_selector_accuracy(task: SLRTask, kappa: float = 1.0) -> float:
    r"""Exact probability that :math:`\arg\max_\ell X_\ell^\top k` is the relevant position.

    For a unit ``k`` with overlap :math:`\kappa = \langle k, k^\star\rangle`, the projections are
    independent given :math:`J_0`: :math:`X_{J_0}^\top k \sim \mathcal N(q\kappa, \gamma^2)` with
    :math:`q = \sqrt{d/2}`, and :math:`X_\ell^\top k \sim \mathcal N(0, 1)` for the others, so

    .. math:: \mathbb P = \mathbb E\big[\Phi(q\kappa + \gamma G)^{L-1}\big], \qquad G \sim \mathcal N(0, 1),

    by quadrature. ``kappa = 1`` is the hard oracle's selection step (1). Special cases:
    ``L = 2`` gives :math:`\Phi(q\kappa/\sqrt{1+\gamma^2})`; :math:`\kappa = 0`, :math:`\gamma = 1`
    gives :math:`1/L`.
    """
    task = check_task(task)
    kappa = check_real_scalar(kappa, "kappa")
    if abs(kappa) > 1.0 + 1e-12:
        raise ValueError(f"kappa must lie in [-1, 1], got {kappa!r}")
    if task.L == 1:
        return 1.0
    mu, g, L1 = task.q * kappa, task.gamma, task.L - 1

    def integrand(z):
        return math.exp(
            -0.5 * z * z + L1 * special.log_ndtr(mu + g * z)
        ) / math.sqrt(2 * math.pi)

    # The integrand is a Gaussian bump times a smooth step near z = -mu / g: split there.
    z0 = min(max(-mu / g, -40.0), 40.0)
    pieces = sorted({-40.0, z0, 0.0, 40.0})
    total = sum(
        integrate.quad(integrand, a, b, epsabs=1e-14, epsrel=1e-12, limit=200)[
            0
        ]
        for a, b in zip(pieces[:-1], pieces[1:])
    )
    return float(min(1.0, max(0.0, total)))


def density_overlap(f, g, lower: float, upper: float, points=()) -> float:
    r"""The overlap coefficient :math:`\int_{\rm lower}^{\rm upper} \min(f(x), g(x))\,dx` of two densities.

    1 when the laws are equal, 0 when their supports are disjoint; it equals
    :math:`1 - \mathrm{TV}(f, g)`, one minus the total-variation distance, when
    ``[lower, upper]`` carries all the mass of both. By adaptive quadrature
    (``scipy.integrate.quad``), split at ``points`` (e.g. where the densities cross or peak).

    Parameters
    ----------
    f, g : callable
        Densities, float -> float (e.g. the ``pdf`` of frozen ``scipy.stats`` laws).
    lower, upper : float
        The integration interval, finite, ``lower < upper``.
    points : sequence of float
        Break points inside the interval.

    Returns
    -------
    float
        The overlap, in :math:`[0, 1]` up to the quadrature's accuracy.

    Raises
    ------
    ValueError
        When ``f`` or ``g`` is not callable or the interval is not finite and increasing.
    """
    if not (callable(f) and callable(g)):
        raise ValueError("f and g must be callables float -> float")
    lower = check_real_scalar(lower, "lower")
    upper = check_real_scalar(upper, "upper")
    if not lower < upper:
        raise ValueError(f"lower must be < upper, got {lower!r} and {upper!r}")
    edges = sorted(
        {lower, upper, *(float(p) for p in points if lower < float(p) < upper)}
    )
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        total += integrate.quad(
            lambda x: min(float(f(x)), float(g(x))),
            a,
            b,
            epsabs=1e-12,
            epsrel=1e-10,
            limit=400,
        )[0]
    return float(total)


class MonteCarloComparison(NamedTuple):
    """Monte Carlo means beside exact values (:func:`compare_monte_carlo`).

    ``table`` shows them (quantity, exact, Monte Carlo ± SE, z); ``names``, ``mean``,
    ``stderr`` and ``exact`` are flat arrays, one entry per line of the table, for
    :func:`slrlib.verify.check_z` (select ``stderr > 0``: a statistic that is constant over
    the draws has no standard error and no z-score).
    """

    table: Table
    names: tuple
    mean: np.ndarray
    stderr: np.ndarray
    exact: np.ndarray


def compare_monte_carlo(
    rows: Mapping[str, tuple[Any, Any]], digits: int = 5
) -> MonteCarloComparison:
    r"""Monte Carlo estimates against exact values: a table and the flat arrays to check.

    Parameters
    ----------
    rows : mapping of str to (MonteCarloEstimate, float or array_like)
        Maps a label to ``(estimate, exact)``; an estimate of shape (m,) gives m lines
        labelled ``label[1]`` ... ``label[m]`` (1-based, as positions in the text).
    digits : int
        Significant digits of the exact value and the mean.

    Returns
    -------
    MonteCarloComparison
        The table (z is :math:`(\text{mean} - \text{exact})/\text{SE}`, "–" where SE = 0) and
        the arrays.

    Raises
    ------
    ValueError
        When an estimate lacks ``mean``/``stderr``, or ``digits < 1``.
    """
    if int(digits) < 1:
        raise ValueError(f"digits must be >= 1, got {digits!r}")
    names, means, ses, exacts = [], [], [], []
    for label, (est, exact) in rows.items():
        if not (hasattr(est, "mean") and hasattr(est, "stderr")):
            raise ValueError(
                f"the estimate of {label!r} must have .mean and .stderr, got {est!r}"
            )
        mean = np.atleast_1d(np.asarray(est.mean, dtype=float))
        se = np.broadcast_to(np.asarray(est.stderr, dtype=float), mean.shape)
        ex = np.broadcast_to(np.asarray(exact, dtype=float), mean.shape)
        for i in range(mean.size):
            names.append(label if mean.size == 1 else f"{label}[{i + 1}]")
            means.append(mean.flat[i])
            ses.append(se.flat[i])
            exacts.append(ex.flat[i])
    mean, se, ex = np.array(means), np.array(ses), np.array(exacts)
    fmt = f".{int(digits)}g"
    cells = [
        [
            n,
            format(x, fmt),
            f"{format(m, fmt)} ± {s:.2g}",
            f"{(m - x) / s:+.2f}" if s > 0 else "–",
        ]
        for n, x, m, s in zip(names, ex, mean, se)
    ]
    return MonteCarloComparison(
        table(["quantity", "exact", "Monte Carlo ± SE", "z"], cells),
        tuple(names),
        mean,
        se,
        ex,
    )
