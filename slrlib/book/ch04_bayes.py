r"""Bayes optimality (Section 4 of Marion et al., 2025: eq. 8, Corollary 2).

Computations behind chapter 4 of the book that the rest of ``slrlib`` does not provide:

* :func:`oracle_risk_terms` — the oracle risk split into the relevant token's term and the
  noise tokens' term (the two parts of eq. 9); :func:`oracle_excess_terms`, the same batched
  over ``d`` and ``L`` (for sweeps over the dimension, as in Corollary 2);
* :func:`optimal_lambda_asymptotic` — the large-``d`` approximation of
  :func:`slrlib.core.risk.optimal_lambda`, the inverse temperature that minimises the oracle risk;
* :func:`excess_decay_rates` — exponential rates in ``d`` of the hard oracle's and the Bayes
  predictor's excess risks;
* :func:`hard_oracle_error` and :func:`hard_oracle_risk` — the hard oracle (1) in closed form
  up to a one-dimensional quadrature (our derivation): an *upper* bound on the Bayes risk;
* :func:`bayes_excess_risk` — a Rao–Blackwellised Monte Carlo estimate of the Bayes risk's
  excess over :math:`\varepsilon^2`, :math:`\mathbb E[\operatorname{Var}(X_{J_0}^\top v^\star \mid \mathbb X)]`;
* :func:`paired_risk_difference` — Monte Carlo of a *difference* of risks on common random
  numbers, with the standard error of the paired difference;
* :func:`reliability_table` — calibration of a posterior over positions.

The Bayes predictor itself is :func:`slrlib.core.predictors.bayes_predictor`.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from scipy import integrate, optimize, special

from slrlib.validation import (
    as_float_array,
    check_finite,
    check_key,
    check_nonnegative,
    check_positive_int,
    check_real_scalar,
)
from slrlib.core.gaussian import expected_erf_sq_centered, zeta
from slrlib.core.montecarlo import (
    MonteCarloEstimate,
    RunningMoments,
    monte_carlo_mean,
)
from slrlib.core.task import SLRTask, check_task

__all__ = [
    "OracleRiskTerms",
    "oracle_excess_terms",
    "oracle_risk_terms",
    "optimal_lambda_asymptotic",
    "excess_decay_rates",
    "hard_oracle_error",
    "hard_oracle_risk",
    "bayes_excess_risk",
    "reduced_token_draws",
    "reduced_bayes_posterior",
    "paired_risk_difference",
    "ReliabilityTable",
    "reliability_table",
]


def _check_n_samples(n_samples) -> int:
    n_samples = check_positive_int(n_samples, "n_samples")
    if n_samples < 2:
        raise ValueError(
            f"n_samples must be >= 2 to estimate a standard error, got {n_samples}"
        )
    return n_samples


# --------------------------------------------------------------------------- closed forms
class OracleRiskTerms(NamedTuple):
    r"""The oracle risk :math:`\mathcal R_\lambda(k^\star, v^\star) = \varepsilon^2 + \text{relevant} + \text{noise}`."""

    relevant: jax.Array
    noise: jax.Array


def oracle_excess_terms(lam, d, L, gamma=math.sqrt(0.5)) -> OracleRiskTerms:
    r"""The two terms of the oracle excess risk :math:`\mathcal R_\lambda(k^\star, v^\star) - \varepsilon^2`, batched over
    ``lam``, ``d`` and ``L`` (broadcast arrays).

    Same values as :func:`oracle_risk_terms`, without building an :class:`~slrlib.SLRTask`
    per point: one compiled function serves a whole grid of dimensions and lengths (a sweep
    over ``d`` costs microseconds per point). ``d`` may be any positive real (it only enters
    through :math:`q = \sqrt{d/2}`), ``L >= 1``, ``gamma > 0``, ``lam >= 0``.
    """
    lam = as_float_array(lam, "lam")
    d = as_float_array(d, "d")
    L = as_float_array(L, "L")
    gamma = as_float_array(gamma, "gamma")
    for x, name in ((lam, "lam"), (d, "d"), (L, "L"), (gamma, "gamma")):
        check_finite(x, name)
    check_nonnegative(lam, "lam")
    if np.any(np.asarray(d) <= 0):
        raise ValueError(f"d must be > 0, got {np.asarray(d)!r}")
    if np.any(np.asarray(L) < 1):
        raise ValueError(f"L must be >= 1, got {np.asarray(L)!r}")
    if np.any(np.asarray(gamma) <= 0):
        raise ValueError(f"gamma must be > 0, got {np.asarray(gamma)!r}")
    relevant, noise = _excess_terms(*jnp.broadcast_arrays(lam, d, L, gamma))
    return OracleRiskTerms(relevant=relevant, noise=noise)


@jax.jit
def _excess_terms(lam, d, L, gamma):
    q = jnp.sqrt(d / 2.0)
    s = lam * gamma
    a = lam * q / jnp.sqrt(1.0 + 2.0 * jnp.square(s))
    relevant = jnp.square(gamma) * (
        1.0 - 2.0 * jax.scipy.special.erf(a) + zeta(lam * q, s)
    )
    noise = (L - 1.0) * expected_erf_sq_centered(lam)
    return relevant, noise


def oracle_risk_terms(lam, task: SLRTask) -> OracleRiskTerms:
    r"""The two terms of the oracle excess risk, one per part of the decomposition (9).

    Write :math:`T^{(k^\star, v^\star)}_\lambda(\mathbb X) = \operatorname{erf}(\lambda X_{J_0}^\top k^\star) X_{J_0}^\top v^\star
    + \sum_{\ell \ne J_0} \operatorname{erf}(\lambda X_\ell^\top k^\star) X_\ell^\top v^\star`. The cross terms have mean
    zero, so :math:`\mathcal R_\lambda(k^\star, v^\star) - \varepsilon^2` is the sum of

    * ``relevant`` :math:`= \gamma^2\,\mathbb E\big[(1 - \operatorname{erf}(\lambda X_{J_0}^\top k^\star))^2\big]
      = \gamma^2\big[1 - 2\operatorname{erf}\big(\tfrac{\lambda q}{\sqrt{1+2\lambda^2\gamma^2}}\big) + \zeta(\lambda q, \lambda\gamma)\big]`
      (the oracle risk of the task with ``L = 1`` and ``eps = 0``): small when
      :math:`\lambda\sqrt d` is large (erf saturates on the relevant token);
    * ``noise`` :math:`= (L-1)\,\zeta(0, \lambda) = (L-1)\tfrac{2}{\pi}\arcsin\tfrac{2\lambda^2}{1+2\lambda^2}
      \le \tfrac{4}{\pi}\lambda^2 (L-1)`: small when :math:`\lambda\sqrt L` is small.

    ``lam`` may be an array (non-negative); both terms have its shape. Batched over ``d``
    and ``L`` as well: :func:`oracle_excess_terms`.
    """
    task = check_task(task)
    return oracle_excess_terms(lam, task.d, task.L, task.gamma)


def optimal_lambda_asymptotic(
    d: float, L: float, gamma: float = math.sqrt(0.5)
) -> tuple[float, float]:
    r"""Large-:math:`d` approximation of :func:`slrlib.core.risk.optimal_lambda` and of the minimal excess risk (our derivation).

    For small :math:`\lambda` and large :math:`\lambda q`, the two terms of :func:`oracle_risk_terms` are
    :math:`\text{relevant} \approx \frac{2\gamma^2}{\pi}\frac{e^{-x}}{x}` (from
    :math:`\operatorname{erfc}(y)^2 \approx e^{-2y^2}/(\pi y^2)` at :math:`y = \lambda q`) and
    :math:`\text{noise} \approx \frac{4(L-1)}{\pi}\frac{x}{d}`, with :math:`x = \lambda^2 d`. Setting the
    derivative in :math:`x` to zero,

    .. math:: \frac{(x+1)\,e^{-x}}{x^2} = \frac{2(L-1)}{\gamma^2 d}, \qquad
              \lambda^\star \approx \sqrt{x^\star/d}, \qquad
              \mathcal R_{\lambda^\star} - \varepsilon^2 \approx \frac{4(L-1)}{\pi}\,\frac{x^\star}{d}\,\frac{x^\star+2}{x^\star+1},

    and :math:`x^\star = \log d + O(\log\log d)`: :math:`\lambda^\star\sqrt d \to \infty` like :math:`\sqrt{\log d}` and the
    best excess risk decays like :math:`\log(d)/d`. Needs ``L >= 2`` and ``d`` large enough that
    :math:`x^\star > 0` (relative error about 1% on :math:`\lambda^\star` at ``d = 1e6``, ``L = 10``).
    Returns ``(lam, excess)``.
    """
    d = check_real_scalar(d, "d", minimum=0.0, strict=True)
    L = check_real_scalar(L, "L", minimum=2.0)
    gamma = check_real_scalar(gamma, "gamma", minimum=0.0, strict=True)
    c = 2.0 * (L - 1.0) / (gamma**2 * d)

    def f(
        x: float,
    ) -> float:  # log of the left side minus log c, decreasing in x > 0
        return -x + math.log1p(x) - 2.0 * math.log(x) - math.log(c)

    lo, hi = 1e-12, 10.0
    while f(hi) > 0:
        hi *= 2.0
    x = optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-14)
    lam = math.sqrt(x / d)
    excess = 4.0 * (L - 1.0) / math.pi * (x / d) * (x + 2.0) / (x + 1.0)
    return lam, excess


def excess_decay_rates(gamma: float = math.sqrt(0.5)) -> tuple[float, float]:
    r"""Exponential rates, per unit of :math:`d`, at which the hard oracle's and the Bayes predictor's
    excess risks vanish (our derivation): ``(hard, bayes)``.

    * Hard oracle (1): :math:`\mathbb P(\hat\jmath \ne J_0) \le (L-1)\,\bar\Phi\big(q/\sqrt{1+\gamma^2}\big)`
      (a noise projection beats the relevant one), so the excess decays like
      :math:`e^{-r_{\rm hard} d}` with :math:`r_{\rm hard} = \dfrac{1}{4(1+\gamma^2)}`.
    * Bayes (heuristic, Chernoff–Bhattacharyya): the posterior confuses two tokens when their
      likelihood ratios are comparable; importance sampling at the geometric mean of the two token
      laws shows the excess is :math:`e^{-2 D_B}` up to factors polynomial in :math:`d`, where
      :math:`D_B` is the Bhattacharyya distance between :math:`\mathcal N(q k^\star, \gamma^2 I_d)` and
      :math:`\mathcal N(0, I_d)`:

      .. math:: r_{\rm Bayes} = \frac{2 D_B}{d} = \frac{1}{4(1+\gamma^2)} + \log\frac{1+\gamma^2}{2\gamma}.

      The second term is the information in the token's *norm* (its spread :math:`\gamma \ne 1`),
      which the Bayes predictor uses and the projection on :math:`k^\star` ignores; for
      :math:`\gamma = 1` the two rates coincide.
    """
    gamma = check_real_scalar(gamma, "gamma", minimum=0.0, strict=True)
    g2 = gamma**2
    hard = 1.0 / (4.0 * (1.0 + g2))
    return hard, hard + math.log((1.0 + g2) / (2.0 * gamma))


def hard_oracle_error(task: SLRTask) -> float:
    r"""Probability that the hard oracle (1) picks the wrong token, :math:`\mathbb P(\hat\jmath \ne J_0)`.

    Given :math:`J_0`, :math:`X_{J_0}^\top k^\star = q + \gamma G` and the :math:`L-1` other projections are
    independent standard normals, so (for any law :math:`\pi` of :math:`J_0`)

    .. math:: \mathbb P(\hat\jmath \ne J_0) = 1 - \mathbb E\big[\Phi(q + \gamma G)^{L-1}\big],

    a one-dimensional integral, computed by adaptive quadrature of
    :math:`\varphi(z)\,[-\operatorname{expm1}((L-1)\log\Phi(q + \gamma z))]` around its peak (accurate to
    about 1e-10 relative even when the error probability is tiny). Our derivation.
    """
    task = check_task(task)
    if task.L == 1:
        return 0.0
    q, g, m = task.q, task.gamma, task.L - 1

    def log_integrand(z: float) -> float:
        # log of phi(z) sqrt(2 pi) (1 - Phi(x)^m), x = q + g z, stable for tiny values:
        # 1 - Phi(x)^m = m (1 - Phi(x)) (1 + O(m (1 - Phi(x)))) once m log Phi(x) is ~ 0.
        x = q + g * z
        log_phi_m = m * special.log_ndtr(x)
        if log_phi_m > -1e-12:
            log_err = math.log(m) + special.log_ndtr(-x)
        else:
            log_err = math.log(-math.expm1(log_phi_m))
        return -0.5 * z * z + log_err

    # The integrand is a narrow bump (Gaussian weight times a Gaussian tail): find its peak,
    # then integrate exp(log_integrand - peak) over a window wide enough for both tails.
    res = optimize.minimize_scalar(
        lambda z: -log_integrand(z),
        bounds=(-q / g - 10.0, 10.0),
        method="bounded",
        options={"xatol": 1e-10},
    )
    z_star, h_star = float(res.x), -float(res.fun)
    val, _ = integrate.quad(
        lambda z: math.exp(log_integrand(z) - h_star),
        z_star - 40.0,
        z_star + 40.0,
        points=[z_star],
        epsabs=0.0,
        epsrel=1e-11,
        limit=500,
    )
    return float(val * math.exp(h_star) / math.sqrt(2.0 * math.pi))


def hard_oracle_risk(task: SLRTask) -> float:
    r"""Risk of the hard oracle (1), :math:`T^\star(\mathbb X) = X_{\hat\jmath}^\top v^\star` (our derivation):

    .. math:: \mathbb E[(Y - T^\star)^2] = \varepsilon^2 + (1 + \gamma^2)\,\mathbb P(\hat\jmath \ne J_0).

    The values :math:`X_\ell^\top v^\star` are centred, independent of the projections on
    :math:`k^\star` (Assumption 1) and of variance :math:`\gamma^2` (relevant) or 1 (noise): on an error the
    squared gap :math:`(X_{J_0}^\top v^\star - X_{\hat\jmath}^\top v^\star)^2` has mean :math:`1 + \gamma^2`.
    Since the Bayes predictor is optimal, :math:`\varepsilon^2 \le \text{Bayes risk} \le` this value.
    """
    task = check_task(task)
    return task.eps**2 + (1.0 + task.gamma**2) * hard_oracle_error(task)


# --------------------------------------------------------------------------- Monte Carlo
def bayes_excess_risk(
    task: SLRTask, key, n_samples: int = 100_000, batch_size: int = 50_000
) -> MonteCarloEstimate:
    r"""Monte Carlo estimate of the Bayes risk's excess over :math:`\varepsilon^2` (Rao–Blackwellised).

    The Bayes risk is :math:`\varepsilon^2 + \mathbb E\big[\operatorname{Var}(X_{J_0}^\top v^\star \mid \mathbb X)\big]` and the
    conditional variance is explicit: with :math:`u_\ell = X_\ell^\top v^\star`, the posterior :math:`p_\ell(\mathbb X)`
    (:func:`slrlib.core.predictors.bayes_posterior`) and :math:`m = \sum_\ell p_\ell u_\ell`,

    .. math:: \operatorname{Var}(X_{J_0}^\top v^\star \mid \mathbb X) = \sum_\ell p_\ell(\mathbb X)\,(u_\ell - m)^2 .

    Averaging it over samples of :math:`\mathbb X` estimates the excess without the noise of
    :math:`\xi` and of :math:`J_0` given :math:`\mathbb X`: smaller standard errors than
    ``monte_carlo_risk(bayes_predictor) - eps**2``.

    **Reduced sampling (our observation).** The posterior scores :math:`s_\ell` and the values
    :math:`u_\ell` depend on a token only through :math:`t_\ell = X_\ell^\top k^\star`, :math:`u_\ell` and
    :math:`r_\ell = \|X_\ell\|^2 - t_\ell^2 - u_\ell^2`. Given :math:`J_0`, these are independent:
    :math:`(t, u, r) = (q + \gamma G_1, \gamma G_2, \gamma^2\chi^2_{d-2})` for the relevant token and
    :math:`(G_1, G_2, \chi^2_{d-2})` for the others. Sampling them directly costs :math:`O(L)` per sample
    instead of :math:`O(Ld)`; the result does not depend on
    :math:`(k^\star, v^\star)` (rotation invariance), so none are asked for.

    The draws come from NumPy's generator seeded with the JAX ``key`` (same key, same result),
    in batches of equal size ``batch_size`` (the last batch is completed: ``n`` of the result
    may exceed ``n_samples`` by less than one batch).

    Caveat: when confusions between tokens become rarer than about :math:`1/n` (large ``d``),
    the mean is carried by events the sample does not contain, and the estimate (and its
    standard error) comes out too small. :func:`hard_oracle_risk` is a rigorous upper bound.
    """
    task = check_task(task)
    key = check_key(key)
    n_samples = _check_n_samples(n_samples)
    batch_size = min(check_positive_int(batch_size, "batch_size"), n_samples)
    n_batches = -(-n_samples // batch_size)
    # NumPy's generator, seeded from the JAX key: jax.random.gamma is slow on CPU.
    rng = np.random.default_rng(
        np.asarray(jax.random.key_data(key)).ravel().tolist()
    )
    log_pi = np.log(np.asarray(task.pi, dtype=np.float64))
    acc = RunningMoments()
    for _ in range(n_batches):
        acc.add(_reduced_posterior_variance(rng, batch_size, task, log_pi))
    return acc.estimate()


def reduced_token_draws(
    rng: np.random.Generator, n: int, task: SLRTask, probs: np.ndarray
):
    r"""Draw ``n`` sequences through the three statistics per token that the Bayes posterior reads.

    Returns ``(J0, t, u, r)``: the relevant positions (n,) and, per token (n, L),
    :math:`t = X_\ell^\top k^\star`, :math:`u = X_\ell^\top v^\star`, :math:`r = \|X_\ell\|^2 - t^2 - u^2`;
    given :math:`J_0` they are :math:`(q + \gamma G_1, \gamma G_2, \gamma^2\chi^2_{d-2})` for the relevant
    token and :math:`(G_1, G_2, \chi^2_{d-2})` for the others. ``probs`` is the law of :math:`J_0`.
    """
    L, gamma, q = task.L, task.gamma, task.q
    J0 = rng.choice(L, size=n, p=probs)
    rel = np.zeros((n, L), dtype=bool)
    rel[np.arange(n), J0] = True
    scale = np.where(rel, gamma, 1.0)
    t = np.where(rel, q, 0.0) + scale * rng.standard_normal((n, L))
    u = scale * rng.standard_normal((n, L))
    r = np.square(scale) * (
        rng.chisquare(task.d - 2, (n, L)) if task.d > 2 else 0.0
    )
    return J0, t, u, r


def reduced_bayes_posterior(
    t: np.ndarray,
    u: np.ndarray,
    r: np.ndarray,
    task: SLRTask,
    log_pi: np.ndarray,
) -> np.ndarray:
    """The Bayes posterior of :func:`slrlib.core.predictors.bayes_posterior` from ``(t, u, r)`` per token."""
    g2inv = 1.0 / task.gamma**2
    s = (
        log_pi
        + task.q * g2inv * t
        + 0.5 * (1.0 - g2inv) * (np.square(t) + np.square(u) + r)
    )
    s -= s.max(axis=1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=1, keepdims=True)
    return p


def _reduced_posterior_variance(
    rng: np.random.Generator, n: int, task: SLRTask, log_pi: np.ndarray
) -> np.ndarray:
    """Conditional variances Var(X_J0^T v* | X) for n samples drawn through (t, u, r) per token."""
    _, t, u, r = reduced_token_draws(
        rng, n, task, np.exp(log_pi) / np.exp(log_pi).sum()
    )
    p = reduced_bayes_posterior(t, u, r, task, log_pi)
    m = np.sum(p * u, axis=1, keepdims=True)
    return np.sum(p * np.square(u - m), axis=1)


def paired_risk_difference(
    predict: Callable[[jax.Array], jax.Array],
    task: SLRTask,
    k_star,
    v_star,
    key,
    n_samples: int = 100_000,
    reference: int = 0,
    batch_size: int | None = None,
) -> MonteCarloEstimate:
    r"""Differences of risks on common random numbers, with their paired standard errors.

    ``predict`` maps ``X`` (b, L, d) to ``m`` predictions per sample, shape (b, m). On the same
    samples :math:`(\mathbb X_i, Y_i)`, the per-sample loss differences

    .. math:: D_{ij} = (Y_i - f_j(\mathbb X_i))^2 - (Y_i - f_{r}(\mathbb X_i))^2, \qquad r = \texttt{reference},

    are averaged: the estimate of :math:`\mathcal R(f_j) - \mathcal R(f_r)` has shape (m,) and its
    standard error is the standard deviation of :math:`D_{\cdot j}` over :math:`\sqrt n`, usually much
    smaller than the two risks' standard errors combined, since the errors of two good
    predictors on the same sample are strongly correlated. Column ``reference`` is 0.
    """
    task = check_task(task)
    if not callable(predict):
        raise ValueError(
            f"predict must be a callable X -> predictions (b, m), got {predict!r}"
        )
    if not isinstance(reference, (int, np.integer)) or isinstance(
        reference, bool
    ):
        raise ValueError(
            f"reference must be a column index (int), got {reference!r}"
        )

    def loss_difference(sample):
        pred = jnp.asarray(predict(sample.X))
        n = sample.y.shape[0]
        if pred.ndim != 2 or pred.shape[0] != n:
            raise ValueError(
                f"predict must return shape (b, m) = ({n}, m) for X of shape {sample.X.shape}, "
                f"got {pred.shape}"
            )
        if not -pred.shape[1] <= reference < pred.shape[1]:
            raise ValueError(
                f"reference must be in [0, {pred.shape[1]}), got {reference}"
            )
        if not bool(jnp.all(jnp.isfinite(pred))):
            raise ValueError(
                "predict returned non-finite predictions (NaN or inf)"
            )
        loss = jnp.square(sample.y[:, None] - pred)
        return loss - loss[:, [reference]]

    return monte_carlo_mean(
        loss_difference, task, k_star, v_star, key, n_samples, batch_size
    )


# --------------------------------------------------------------------------- calibration
class ReliabilityTable(NamedTuple):
    r"""Calibration of a posterior over positions, one row per bin of :math:`\max_\ell p_\ell`.

    ``count``: samples in the bin; ``confidence``: mean of :math:`\max_\ell p_\ell` there;
    ``accuracy``: frequency of :math:`\arg\max_\ell p_\ell = J_0` there; ``stderr``: its binomial
    standard error :math:`\sqrt{c(1-c)/n}` computed at the *predicted* confidence ``c``
    (the spread expected if the posterior is calibrated); ``z``: (accuracy - confidence) / stderr.
    """

    lower: np.ndarray
    upper: np.ndarray
    count: np.ndarray
    confidence: np.ndarray
    accuracy: np.ndarray
    stderr: np.ndarray
    z: np.ndarray


def reliability_table(p, J0, edges) -> ReliabilityTable:
    r"""Reliability table of posterior probabilities ``p`` (n, L) against true positions ``J0`` (n,).

    A posterior is calibrated when, among the samples where it puts mass :math:`c` on its
    most probable position, that position is right with frequency :math:`c`. Bins are
    ``[edges[i], edges[i+1])`` (the last one closed); empty bins give ``nan``.
    Pure NumPy: works for any probabilistic classifier.
    """
    p = np.asarray(p, dtype=np.float64)
    J0 = np.asarray(J0)
    edges = np.asarray(edges, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"p must have shape (n, L), got shape {p.shape}")
    if J0.shape != (p.shape[0],):
        raise ValueError(
            f"J0 must have shape (n,) = ({p.shape[0]},), got shape {J0.shape}"
        )
    if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0):
        raise ValueError(
            f"edges must be an increasing sequence of at least 2 numbers, got {edges!r}"
        )
    conf = p.max(axis=1)
    correct = (p.argmax(axis=1) == J0).astype(np.float64)
    idx = np.searchsorted(edges, conf, side="right") - 1
    idx[conf == edges[-1]] = edges.size - 2
    k = edges.size - 1
    count = np.zeros(k, dtype=np.int64)
    confidence = np.full(k, np.nan)
    accuracy = np.full(k, np.nan)
    for b in range(k):
        mask = idx == b
        count[b] = mask.sum()
        if count[b]:
            confidence[b] = conf[mask].mean()
            accuracy[b] = correct[mask].mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        stderr = np.sqrt(confidence * (1.0 - confidence) / count)
        z = (accuracy - confidence) / stderr
    return ReliabilityTable(
        edges[:-1], edges[1:], count, confidence, accuracy, stderr, z
    )
