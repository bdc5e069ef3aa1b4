r"""Companion computations of chapter 9 (learning from samples): checks of :mod:`slrlib.training.sgd`.

* :func:`gradient_draws`, :func:`compare_moments`, :func:`mean_gradient_zscores`,
  :func:`radial_gradient`, :func:`sampler_check` (+ :func:`sampler_table`): many independent
  draws of the batch gradient with either sampler, two-sample z-scores of their moments,
  z-scores of their mean against the gradient of the closed-form risk (tangent and radial
  parts);
* :func:`count_random_draws`: the random numbers one gradient draw consumes, read off the
  traced program (not from a formula);
* :func:`vectors_with_overlaps`, :func:`pgd_counterpart`, :func:`pgd_vs_sgd`
  (+ :func:`pgd_vs_sgd_table`): deterministic PGD (exact gradients) from the same initial
  overlaps and with the same :math:`\lambda_t` as a stochastic experiment;
* :func:`heldout_standard_errors`: the Monte Carlo error of the held-out risk, from fresh samples;
* :func:`one_step_check`, :func:`contraction_rates`: on average a stochastic step is the exact
  step followed by a contraction of the overlaps, at rate :math:`\approx\tfrac{\alpha^2}{2}\operatorname{tr}\operatorname{Cov}`;
* :func:`oracle_fluctuations`, :func:`fluctuations_along_schedule`, :func:`floor_comparison`:
  the spread of stochastic PGD around the oracle predicted by the linearised dynamics (a
  discrete Lyapunov equation), against the floor of the distance to :math:`\mathcal M` and the
  final :math:`|\kappa|, |\nu|`.

Rotation invariance is used throughout: the law of the data and of the batch gradient is
equivariant under rotations of :math:`\mathbb R^d` applied to :math:`k^\star, v^\star, k, v`
together, so everything that is reported depends on the directions only through their five
overlaps :math:`\kappa, \nu, \theta, \eta, \rho` (with :math:`k^\star \perp v^\star`).
"""

from __future__ import annotations

import math
import time
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from scipy.linalg import solve_discrete_lyapunov

from slrlib.core.geometry import vectors_with_overlaps, canonical_directions
from slrlib.validation import check_key, check_positive_int, check_real_scalar
from slrlib.training.pgd import PGDResult, inverse_temperature, pgd
from slrlib.core.risk import population_risk, risk_from_overlaps
from slrlib.training.sgd import sample_gradient
from slrlib.core.task import SLRTask, check_task

__all__ = [
    "tangent",
    "riemannian_population_gradient",
    "gradient_draws",
    "compare_moments",
    "MomentComparison",
    "mean_gradient_zscores",
    "count_random_draws",
    "RandomDraws",
    "CHECK_OVERLAPS",
    "SamplerCheck",
    "radial_gradient",
    "sampler_check",
    "sampler_table",
    "one_step_check",
    "contraction_rates",
    "PGDvsSGD",
    "pgd_counterpart",
    "pgd_vs_sgd",
    "pgd_vs_sgd_table",
    "floor_comparison",
    "FLOOR_WINDOW",
    "heldout_standard_errors",
    "OracleFluctuations",
    "oracle_fluctuations",
    "PREDICTED",
    "FluctuationPath",
    "fluctuations_along_schedule",
    "PREDICTION_START",
]


# ------------------------------------------------------------------------ geometry
def tangent(g, x):
    r"""The Riemannian (tangent) part :math:`(I - xx^\top)g` of a gradient at a unit ``x`` (last axis)."""
    g = jnp.asarray(g)
    x = jnp.asarray(x)
    return g - jnp.sum(g * x, axis=-1, keepdims=True) * x


def riemannian_population_gradient(k, v, k_star, v_star, lam, task: SLRTask):
    r"""Tangent parts of the gradient of the closed-form risk (Theorem 1, Prop. 15): the
    gradient exact PGD uses (Definition 1), by ``jax.grad`` of :func:`slrlib.core.risk.population_risk`."""
    task = check_task(task)
    k = task.check_parameter_vector(k, "k")
    v = task.check_parameter_vector(v, "v")
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    gk, gv = jax.grad(
        lambda a, b: population_risk(a, b, k_star, v_star, lam, task),
        argnums=(0, 1),
    )(k, v)
    return tangent(gk, k), tangent(gv, v)


# ------------------------------------------------------------------ gradient draws
@partial(
    jax.jit, static_argnames=("task", "lam", "batch_size", "sampler", "chunk")
)
def _draws(
    K, V, K_star, V_star, keys, *, task, lam, batch_size, sampler, chunk
):
    def one(k):
        gK, gV = sample_gradient(
            K,
            V,
            K_star,
            V_star,
            task,
            lam=lam,
            key=k,
            batch_size=batch_size,
            sampler=sampler,
        )
        return jnp.stack([gK, gV])

    return jax.lax.map(one, keys, batch_size=chunk)


def gradient_draws(
    K,
    V,
    K_star,
    V_star,
    task,
    *,
    lam,
    batch_size,
    key,
    n_draws,
    sampler="exact",
    chunk: int = 500,
):
    r"""``n_draws`` independent draws of the batch gradient (:func:`slrlib.training.sgd.sample_gradient`).

    Returns a NumPy array of shape ``(n_draws, 2, H, d)``: ``[:, 0]`` the gradient in ``K``,
    ``[:, 1]`` in ``V`` (Euclidean, not projected). Draws are computed ``chunk`` at a time.
    """
    key = check_key(key)
    n_draws = check_positive_int(n_draws, "n_draws")
    chunk = check_positive_int(chunk, "chunk")
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    # Validate once on concrete inputs (the traced calls below skip value checks).
    sample_gradient(
        K,
        V,
        K_star,
        V_star,
        task,
        lam=lam,
        key=key,
        batch_size=batch_size,
        sampler=sampler,
    )
    K, V, K_star, V_star = (
        jnp.asarray(x, float) for x in (K, V, K_star, V_star)
    )
    keys = jax.random.split(key, n_draws)
    out = _draws(
        K,
        V,
        K_star,
        V_star,
        keys,
        task=task,
        lam=lam,
        batch_size=int(batch_size),
        sampler=sampler,
        chunk=min(chunk, n_draws),
    )
    return np.asarray(out)


class MomentComparison(NamedTuple):
    r"""Means and covariances of two samples of the same vector, with Monte Carlo standard errors
    and two-sample z-scores (difference over the root sum of squared standard errors)."""

    mean_a: np.ndarray
    mean_b: np.ndarray
    mean_z: np.ndarray
    cov_a: np.ndarray
    cov_b: np.ndarray
    cov_z: np.ndarray

    def z_scores(self) -> np.ndarray:
        """The z-scores of the means and of the distinct covariance entries (upper triangle)."""
        iu = np.triu_indices(self.cov_z.shape[0])
        return np.concatenate([self.mean_z, self.cov_z[iu]])


def _mean_cov_se(x):
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    m = x.mean(axis=0)
    c = x - m
    prod = c[:, :, None] * c[:, None, :]
    cov = prod.mean(axis=0)
    return (
        m,
        x.std(axis=0, ddof=1) / math.sqrt(n),
        cov,
        prod.std(axis=0, ddof=1) / math.sqrt(n),
    )


def compare_moments(a, b) -> MomentComparison:
    r"""Two-sample comparison of the first two moments of ``a`` (n_a, p) and ``b`` (n_b, p).

    The standard error of a covariance entry is that of the mean of the centred products
    :math:`(x_i - \bar x_i)(x_j - \bar x_j)` (the :math:`O(1/n)` effect of centring is ignored).
    Under equal laws every z-score is approximately standard normal.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(
            f"a and b must have shapes (n_a, p) and (n_b, p), got {a.shape} and {b.shape}"
        )
    if min(a.shape[0], b.shape[0]) < 3:
        raise ValueError(
            f"a and b need at least 3 rows each, got {a.shape[0]} and {b.shape[0]}"
        )
    ma, sa, ca, csa = _mean_cov_se(a)
    mb, sb, cb, csb = _mean_cov_se(b)
    mean_z = (ma - mb) / np.sqrt(sa**2 + sb**2)
    cov_z = (ca - cb) / np.sqrt(csa**2 + csb**2)
    return MomentComparison(ma, mb, mean_z, ca, cb, cov_z)


def mean_gradient_zscores(draws, exact):
    r"""z-scores of the Monte Carlo mean of ``draws`` (n, ...) against ``exact`` (...):
    :math:`(\bar g - g)/(\hat\sigma/\sqrt n)`, componentwise. Components with zero spread (e.g.
    a tangent projection's normal direction) get z = 0 when the mean matches to round-off."""
    draws = np.asarray(draws, dtype=float)
    exact = np.asarray(exact, dtype=float)
    if draws.shape[1:] != exact.shape:
        raise ValueError(
            f"draws must have shape (n,) + exact.shape = (n,) + {exact.shape}, got {draws.shape}"
        )
    n = draws.shape[0]
    if n < 3:
        raise ValueError(f"draws needs at least 3 rows, got {n}")
    se = draws.std(axis=0, ddof=1) / math.sqrt(n)
    diff = draws.mean(axis=0) - exact
    scale = np.maximum(np.abs(exact), 1.0)
    return np.where(
        se > 1e-12 * scale, diff / np.where(se > 1e-12 * scale, se, 1.0), 0.0
    )


class RandomDraws(NamedTuple):
    """The random numbers one call consumes: per call of ``jax.random``'s bit generator, the
    shape and bit width, and the totals."""

    calls: tuple
    numbers: int
    bits: int


def _sub_jaxprs(p):
    if hasattr(p, "eqns"):
        return [p]
    if hasattr(p, "jaxpr"):
        return _sub_jaxprs(p.jaxpr)
    if isinstance(p, (tuple, list)):
        return [j for q in p for j in _sub_jaxprs(q)]
    return []


def count_random_draws(
    K, V, K_star, V_star, task, *, lam, batch_size, sampler
) -> RandomDraws:
    r"""Random numbers drawn by one :func:`slrlib.training.sgd.sample_gradient` call, counted in its traced
    program (``jax.make_jaxpr``): every ``random_bits`` primitive, its shape and bit width."""
    sample_gradient(
        K,
        V,
        K_star,
        V_star,
        task,
        lam=lam,
        key=jax.random.key(0),
        batch_size=batch_size,
        sampler=sampler,
    )  # validation
    jaxpr = jax.make_jaxpr(
        lambda key: sample_gradient(
            K,
            V,
            K_star,
            V_star,
            task,
            lam=lam,
            key=key,
            batch_size=batch_size,
            sampler=sampler,
        )
    )(jax.random.key(0))

    calls = []

    def walk(j):
        for eqn in j.eqns:
            if eqn.primitive.name == "random_bits":
                calls.append(
                    (tuple(eqn.params["shape"]), int(eqn.params["bit_width"]))
                )
            for p in eqn.params.values():
                for sub in _sub_jaxprs(p):
                    walk(sub)

    walk(jaxpr.jaxpr)
    numbers = sum(int(np.prod(s)) for s, _ in calls)
    bits = sum(int(np.prod(s)) * w for s, w in calls)
    return RandomDraws(tuple(calls), numbers, bits)


#: The point of the sampler checks: all five overlaps away from 0 and 1 (a generic point).
CHECK_OVERLAPS = (0.5, 0.6, 0.2, -0.1, 0.3)


class SamplerCheck(NamedTuple):
    r"""Draws of the batch gradient by both samplers at one point (:func:`sampler_check`).

    ``exact`` and ``plain`` (n, 10): the projections named in ``names`` (:math:`g_k` and
    :math:`g_v` on :math:`k^\star, v^\star, k, v, u`); ``moments`` their two-sample comparison;
    ``ks_pvalues`` (10,) two-sample Kolmogorov–Smirnov p-values; ``unbiased_z`` (2, 2, d): for each
    sampler, z-scores of the mean tangent gradient against the Riemannian gradient of the closed
    form (:func:`riemannian_population_gradient`); ``radial`` (2, 2, 2): per sampler, mean and
    standard error of :math:`\langle g_k, k\rangle` and :math:`\langle g_v, v\rangle`;
    ``radial_exact`` (2,): their exact values (:func:`radial_gradient`); ``radial_closed_form``
    (2,): the radial parts of ``jax.grad`` of the closed form, which differ; ``seconds``: per
    sampler, the wall time of the first half of the draws (compilation included) and of the
    second half (``"exact, again"``, ``"plain, again"``: the draws alone); ``n_draws`` in all.
    """

    names: tuple
    lam: float
    overlaps: tuple
    batch_size: int
    exact: np.ndarray
    plain: np.ndarray
    moments: MomentComparison
    ks_pvalues: np.ndarray
    unbiased_z: np.ndarray
    radial: np.ndarray
    radial_exact: np.ndarray
    radial_closed_form: np.ndarray
    seconds: dict
    n_draws: int


def radial_gradient(k, v, k_star, v_star, lam, task: SLRTask):
    r"""The radial parts of the gradient of the expected batch loss (the true risk as a function
    of :math:`(k, v) \in \mathbb R^d\times\mathbb R^d`) at unit ``k, v``, from the closed form:

    * :math:`\langle \nabla_k, k\rangle = \frac{d}{ds}\mathcal R(sk, v)|_{s=1} = \lambda\,\partial_\lambda\mathcal R_\lambda(k, v)`
      (scaling :math:`k` scales :math:`\lambda`);
    * :math:`\langle \nabla_v, v\rangle = \frac{d}{ds}\mathbb E[(Y - sT)^2]|_{s=1} = 2\mathbb E[T^2] - 2\mathbb E[YT]
      = \tfrac32\mathcal R_\lambda(k, v) + \tfrac12\mathcal R_\lambda(k, -v) - 2(\gamma^2 + \varepsilon^2)`
      (the risk is quadratic in the scale of :math:`v`; :math:`\mathbb E[Y^2] = \gamma^2 + \varepsilon^2`).
    """
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    rk = lam * jax.grad(
        lambda l: population_risk(k, v, k_star, v_star, l, task)
    )(lam)
    r_plus = population_risk(k, v, k_star, v_star, lam, task)
    r_minus = population_risk(k, -jnp.asarray(v), k_star, v_star, lam, task)
    rv = 1.5 * r_plus + 0.5 * r_minus - 2.0 * (task.gamma**2 + task.eps**2)
    return float(rk), float(rv)


def sampler_check(
    task: SLRTask | None = None,
    *,
    lam: float = 2.0,
    batch_size: int = 5,
    n_draws: int = 40_000,
    key=None,
    overlaps=CHECK_OVERLAPS,
) -> SamplerCheck:
    r"""Both samplers at the point with the given ``overlaps`` (frame of :func:`vectors_with_overlaps`),
    ``n_draws`` draws each, independent keys; default task and :math:`\lambda`: Figure 5's
    (:math:`d = 80`, :math:`L = 10`, :math:`\varepsilon = 0.1`, :math:`\lambda_0 = 2`)."""
    from scipy.stats import ks_2samp

    if task is None:
        from slrlib.experiments import SGD_CONFIGS

        task = SGD_CONFIGS["fig5"].task
    task = check_task(task)
    key = jax.random.key(2025) if key is None else check_key(key)
    k, v, k_star, v_star = vectors_with_overlaps(*overlaps, d=task.d)
    k, v = k[0], v[0]
    u_key, e_key, p_key = jax.random.split(key, 3)
    u = jax.random.normal(u_key, (task.d,))
    u = u / jnp.linalg.norm(u)
    dirs = np.asarray(jnp.stack([k_star, v_star, k, v, u]))
    dnames = ("k*", "v*", "k", "v", "u")
    names = tuple(f"<g_{p}, {n}>" for p in ("k", "v") for n in dnames)
    gk_exact, gv_exact = riemannian_population_gradient(
        k, v, k_star, v_star, lam, task
    )
    exact_grad = np.stack([np.asarray(gk_exact), np.asarray(gv_exact)])
    proj, unbiased, radial, seconds = {}, [], [], {}
    half = max(n_draws // 2, 3)
    for sampler, sk in (("exact", e_key), ("plain", p_key)):
        # Two halves with one compilation: the second half's wall time is the cost of the draws alone.
        parts = []
        for i, sub in enumerate(jax.random.split(sk, 2)):
            start = time.perf_counter()
            parts.append(
                gradient_draws(
                    k,
                    v,
                    k_star,
                    v_star,
                    task,
                    lam=lam,
                    batch_size=batch_size,
                    key=sub,
                    n_draws=half,
                    sampler=sampler,
                )[:, :, 0, :]
            )
            seconds[sampler + (", again" if i else "")] = (
                time.perf_counter() - start
            )
        g = np.concatenate(parts)
        proj[sampler] = np.concatenate(
            [g[:, 0] @ dirs.T, g[:, 1] @ dirs.T], axis=1
        )
        tg = np.stack(
            [np.asarray(tangent(g[:, 0], k)), np.asarray(tangent(g[:, 1], v))],
            axis=1,
        )
        unbiased.append(mean_gradient_zscores(tg, exact_grad))
        rad = np.stack(
            [g[:, 0] @ np.asarray(k), g[:, 1] @ np.asarray(v)], axis=1
        )
        radial.append(
            np.stack(
                [
                    rad.mean(axis=0),
                    rad.std(axis=0, ddof=1) / math.sqrt(rad.shape[0]),
                ],
                axis=1,
            )
        )
    full = jax.grad(
        lambda a, b: population_risk(a, b, k_star, v_star, lam, task),
        argnums=(0, 1),
    )(k, v)
    return SamplerCheck(
        names=names,
        lam=float(lam),
        overlaps=tuple(overlaps),
        batch_size=int(batch_size),
        exact=proj["exact"],
        plain=proj["plain"],
        moments=compare_moments(proj["exact"], proj["plain"]),
        ks_pvalues=np.array(
            [
                ks_2samp(proj["exact"][:, i], proj["plain"][:, i]).pvalue
                for i in range(len(names))
            ]
        ),
        unbiased_z=np.stack(unbiased),
        radial=np.stack(radial),
        radial_exact=np.array(
            radial_gradient(k, v, k_star, v_star, lam, task)
        ),
        radial_closed_form=np.array([float(full[0] @ k), float(full[1] @ v)]),
        seconds=seconds,
        n_draws=2 * half,
    )


def sampler_table(check: SamplerCheck) -> dict:
    """The plotted numbers of :func:`sampler_check`: per projection and sampler, the quantiles at
    levels 0.001, 0.002, ..., 0.999 (the Q–Q plot). Numeric columns: ``gradient`` (0 for
    :math:`g_k`, 1 for :math:`g_v`), ``direction`` (0 to 4: :math:`k^\\star, v^\\star, k, v, u`, the
    order of ``check.names``), ``level``, ``exact``, ``plain``."""
    levels = np.linspace(0.001, 0.999, 999)
    n = len(check.names)
    idx = np.repeat(np.arange(n), levels.size)
    return {
        "gradient": idx // 5,
        "direction": idx % 5,
        "level": np.tile(levels, n),
        "exact": np.concatenate(
            [np.quantile(check.exact[:, i], levels) for i in range(n)]
        ),
        "plain": np.concatenate(
            [np.quantile(check.plain[:, i], levels) for i in range(n)]
        ),
    }


def one_step_check(
    task: SLRTask | None = None,
    *,
    lam: float = 2.0,
    alpha: float = 1e-3,
    batch_size: int = 5,
    n_draws: int = 10_000,
    key=None,
    overlaps=CHECK_OVERLAPS,
) -> dict:
    r"""The mean of one stochastic PGD step against one exact PGD step, from the point with the
    given ``overlaps`` (frame of :func:`vectors_with_overlaps`; default task: Figure 5's).

    A step maps :math:`k` to :math:`(k - \alpha g_k)\,n_k` with :math:`n_k = (1 + \alpha^2|g_k|^2)^{-1/2}`
    (:math:`g_k` tangent). Write :math:`g_k = \bar g_k + \xi_k`, :math:`\bar g_k` the exact Riemannian
    gradient. Neglecting the correlation between :math:`\xi_k` and its norm, for any fixed :math:`w`

    .. math::

        \mathbb E\langle k', w\rangle \approx \langle k - \alpha\bar g_k, w\rangle\,\mathbb E[n_k]
        = \langle k'_{\rm PGD}, w\rangle\,(1 - s_k), \qquad
        1 - s_k = \mathbb E[n_k]\sqrt{1 + \alpha^2|\bar g_k|^2} \approx 1 - \tfrac{\alpha^2}{2}\operatorname{tr}\operatorname{Cov}(\xi_k),

    likewise for :math:`v`, and :math:`\mathbb E\rho' \approx \big(\langle k - \alpha\bar g_k, v - \alpha\bar g_v\rangle
    + \alpha^2\operatorname{tr}\operatorname{Cov}(\xi_k, \xi_v)\big)\,\mathbb E[n_k]\,\mathbb E[n_v]`: on average a stochastic step
    is the exact step followed by a contraction of every overlap by the factor :math:`1 - s`.

    Returns ``s_k, s_v`` (the contraction rates), ``half_trace_k, half_trace_v``
    (:math:`\tfrac{\alpha^2}{2}\operatorname{tr}\operatorname{Cov}`, their leading term),
    ``expansion_tol_k, expansion_tol_v`` (a bound on :math:`|s - \tfrac{\alpha^2}{2}\operatorname{tr}\operatorname{Cov}|`,
    see below), and for each overlap ``kappa, nu, theta, eta, rho`` a tuple ``(mean stochastic
    change, its standard error, exact PGD change, predicted stochastic change)``.

    **The bound.** With :math:`x_i = \alpha^2|g_i|^2` (draw :math:`i`), :math:`m` their mean and
    :math:`\bar x = \alpha^2|\bar g|^2`, Taylor's theorem with remainder gives
    :math:`(1 + x)^{-1/2} = 1 - x/2 + r(x)`, :math:`0 \le r(x) \le \tfrac38 x^2`, and
    :math:`\sqrt{1 + \bar x} = 1 + \bar x/2 - r_2`, :math:`0 \le r_2 \le \bar x^2/8`. Multiplying out,
    :math:`s - \tfrac{\alpha^2}2\widehat{\operatorname{tr}\operatorname{Cov}} = \tfrac{\alpha^2}{2}(|\hat g|^2 - |\bar g|^2)
    + e`, :math:`\hat g` the sample mean, with
    :math:`|e| \le \big(\tfrac38\overline{x^2} + \tfrac18\bar x^2 + \tfrac14 m\bar x\big)(1 + m + \bar x)` (the
    last factor covers the third-order cross terms). The first term is Monte Carlo error: with
    :math:`\delta = \hat g - \bar g \sim \mathcal N(0, \operatorname{Cov}/n)`,
    :math:`|\hat g|^2 - |\bar g|^2 = 2\bar g^\top\delta + |\delta|^2`, bounded by 4.5 standard errors of
    the first part, :math:`4.5\cdot 2\sqrt{\bar g^\top\operatorname{Cov}\,\bar g/n}`, plus
    :math:`(1 + 4.5\sqrt2)\operatorname{tr}\operatorname{Cov}/n` for the second (its mean plus 4.5 of its
    standard deviations, at most :math:`\sqrt2\operatorname{tr}\operatorname{Cov}/n`).
    ``expansion_tol`` is the sum of the two bounds.
    """
    if task is None:
        from slrlib.experiments import SGD_CONFIGS

        task = SGD_CONFIGS["fig5"].task
    task = check_task(task)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    key = jax.random.key(2026) if key is None else check_key(key)
    k, v, k_star, v_star = vectors_with_overlaps(*overlaps, d=task.d)
    k, v = np.asarray(k[0]), np.asarray(v[0])
    ks, vs = np.asarray(k_star), np.asarray(v_star)
    g = gradient_draws(
        k,
        v,
        k_star,
        v_star,
        task,
        lam=lam,
        batch_size=batch_size,
        key=key,
        n_draws=n_draws,
        sampler="exact",
    )[:, :, 0, :]
    gk, gv = np.asarray(tangent(g[:, 0], k)), np.asarray(tangent(g[:, 1], v))
    bk, bv = (
        np.asarray(x)
        for x in riemannian_population_gradient(
            k, v, k_star, v_star, lam, task
        )
    )
    nk = 1.0 / np.sqrt(1.0 + alpha**2 * np.sum(gk**2, axis=1))
    nv = 1.0 / np.sqrt(1.0 + alpha**2 * np.sum(gv**2, axis=1))
    k1, v1 = (
        (k - alpha * gk) * nk[:, None],
        (v - alpha * gv) * nv[:, None],
    )  # one stochastic step per draw
    kp, vp = k - alpha * bk, v - alpha * bv
    kp, vp = kp / np.linalg.norm(kp), vp / np.linalg.norm(vp)  # one exact step
    ck, cv = gk - gk.mean(0), gv - gv.mean(0)
    out = {
        "s_k": float(1.0 - nk.mean() * math.sqrt(1.0 + alpha**2 * bk @ bk)),
        "s_v": float(1.0 - nv.mean() * math.sqrt(1.0 + alpha**2 * bv @ bv)),
        "half_trace_k": 0.5 * alpha**2 * float(np.sum(ck**2, axis=1).mean()),
        "half_trace_v": 0.5 * alpha**2 * float(np.sum(cv**2, axis=1).mean()),
        "expansion_tol_k": _expansion_tolerance(gk, bk, alpha),
        "expansion_tol_v": _expansion_tolerance(gv, bv, alpha),
    }
    pairs = {
        "kappa": (k, ks, k1, kp, nk, bk),
        "eta": (k, vs, k1, kp, nk, bk),
        "nu": (v, vs, v1, vp, nv, bv),
        "theta": (v, ks, v1, vp, nv, bv),
    }
    for name, (x, w, x1, xp, n, b) in pairs.items():
        change = x1 @ w - x @ w
        out[name] = (
            float(change.mean()),
            float(change.std(ddof=1) / math.sqrt(n_draws)),
            float(xp @ w - x @ w),
            float((x - alpha * b) @ w * n.mean() - x @ w),
        )
    rho = float(k @ v)
    change = np.sum(k1 * v1, axis=1) - rho
    cross = float(np.sum(ck * cv, axis=1).mean())
    pred = (
        (k - alpha * bk) @ (v - alpha * bv) + alpha**2 * cross
    ) * nk.mean() * nv.mean() - rho
    out["rho"] = (
        float(change.mean()),
        float(change.std(ddof=1) / math.sqrt(n_draws)),
        float(kp @ vp - rho),
        float(pred),
    )
    return out


def _expansion_tolerance(g, g_bar, alpha: float) -> float:
    r"""The bound of :func:`one_step_check` on :math:`|s - \tfrac{\alpha^2}2\operatorname{tr}\operatorname{Cov}|`
    from draws ``g`` (n, d) of the tangent gradient with exact mean ``g_bar`` (d,)."""
    n = g.shape[0]
    x = alpha**2 * np.sum(g**2, axis=1)
    m, x_bar = float(x.mean()), float(alpha**2 * g_bar @ g_bar)
    taylor = (
        0.375 * float(np.mean(x**2)) + 0.125 * x_bar**2 + 0.25 * m * x_bar
    ) * (1.0 + m + x_bar)
    c = g - g.mean(axis=0)
    cov_gbar = float(np.mean((c @ g_bar) ** 2))  # g_bar^T Cov g_bar
    tr_cov = float(np.sum(c**2, axis=1).mean())
    monte_carlo = (
        0.5
        * alpha**2
        * (
            4.5 * 2.0 * math.sqrt(cov_gbar / n)
            + (1.0 + 4.5 * math.sqrt(2.0)) * tr_cov / n
        )
    )
    return taylor + monte_carlo


def contraction_rates(
    K,
    V,
    k_star,
    v_star,
    task: SLRTask,
    *,
    lam,
    alpha,
    batch_size,
    key,
    n_draws: int = 10_000,
):
    r"""The contraction rates :math:`s_k, s_v` of :func:`one_step_check` at several points: ``K, V``
    of shape (n, d), one point per row. Returns two arrays of shape (n,)."""
    task = check_task(task)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    key = check_key(key)
    K, V = (
        np.atleast_2d(np.asarray(K, float)),
        np.atleast_2d(np.asarray(V, float)),
    )
    s_k, s_v = [], []
    for k, v, sub in zip(K, V, jax.random.split(key, K.shape[0])):
        g = gradient_draws(
            k,
            v,
            k_star,
            v_star,
            task,
            lam=lam,
            batch_size=batch_size,
            key=sub,
            n_draws=n_draws,
            sampler="exact",
        )[:, :, 0, :]
        bk, bv = (
            np.asarray(x)
            for x in riemannian_population_gradient(
                k, v, k_star, v_star, lam, task
            )
        )
        for x, gx, b, out in ((k, g[:, 0], bk, s_k), (v, g[:, 1], bv, s_v)):
            t = np.asarray(tangent(gx, x))
            out.append(
                1.0
                - np.mean(1.0 / np.sqrt(1.0 + alpha**2 * np.sum(t**2, axis=1)))
                * math.sqrt(1 + alpha**2 * b @ b)
            )
    return np.asarray(s_k), np.asarray(s_v)


# ------------------------------------------------------------------ PGD counterpart
def _schedule_of(config) -> str:
    """The :func:`slrlib.training.pgd.pgd` schedule with the same :math:`\\lambda_t` as ``config``."""
    paper_decay = 1.0 / float(inverse_temperature(1.0, 1.0, "paper")) - 1.0
    if config.freeze_after is not None:
        raise ValueError(
            f"freeze_after must be None to compare with pgd, got {config.freeze_after}"
        )
    if config.decay == 0.0:
        return "constant"
    if math.isclose(config.decay, paper_decay, rel_tol=1e-12):
        return "paper"
    raise ValueError(
        f"decay must be 0 or {paper_decay:g} (the schedules of pgd), got {config.decay}"
    )


def _single(exp):
    cfg = exp.config
    if cfg.M != 1 or cfg.heads != 1:
        raise ValueError(
            f"exp must have one head and one location, got heads = {cfg.heads}, M = {cfg.M}"
        )


def pgd_counterpart(exp) -> PGDResult:
    r"""Deterministic PGD (Definition 1, exact gradients) from the initial overlaps of every run of
    a stochastic experiment ``exp`` (:class:`slrlib.experiments.SGDExperiment`, one head, one
    location), with the same :math:`\lambda_0`, schedule, step size, steps and logging.

    Each run of ``exp`` has its own :math:`k^\star, v^\star`; PGD on the closed-form risk is
    equivariant under rotations, so it is run in the frame of :func:`vectors_with_overlaps`
    (:math:`k^\star = e_1`, :math:`v^\star = e_2`), which has the same trajectories of overlaps.
    """
    _single(exp)
    cfg, r = exp.config, exp.result
    schedule = _schedule_of(cfg)
    ov = [
        np.asarray(x)[:, 0, 0, 0] for x in (r.kappa, r.nu, r.theta, r.eta)
    ] + [np.asarray(r.rho)[:, 0, 0]]
    k0, v0, k_star, v_star = vectors_with_overlaps(*ov, d=cfg.d)
    return pgd(
        k0,
        v0,
        k_star,
        v_star,
        cfg.task,
        lam=cfg.lam,
        alpha=cfg.alpha,
        n_steps=cfg.n_steps,
        schedule=schedule,
        log_every=cfg.log_every,
    )


# ------------------------------------------------------------------ held-out risk
def heldout_standard_errors(exp, key, n_samples: int = 4000, step: int = -1):
    r"""Per run, the standard error of a held-out risk estimate of ``exp.config.test_size``
    samples at logged step ``step`` (default: the last), and a fresh Monte Carlo estimate.

    The squared errors are drawn at the logged overlaps (:func:`vectors_with_overlaps`: the law of
    the error depends on nothing else) and :math:`\lambda_t`, on one fresh sample of ``n_samples``
    sequences shared by the runs. Returns ``(se, fresh_mean, fresh_se)``, each of shape (runs,):
    the standard error of a mean of ``test_size`` squared errors, and the mean of the fresh
    squared errors with its own standard error.
    """
    from slrlib.core.predictors import erf_attention

    _single(exp)
    key = check_key(key)
    n_samples = check_positive_int(n_samples, "n_samples")
    cfg, r = exp.config, exp.result
    ov = [
        np.asarray(x)[:, 0, 0, step] for x in (r.kappa, r.nu, r.theta, r.eta)
    ] + [np.asarray(r.rho)[:, 0, step]]
    k, v, k_star, v_star = vectors_with_overlaps(*ov, d=cfg.d)
    lam = float(np.asarray(r.lam)[step])
    s = cfg.task.sample(key, n_samples, k_star, v_star)
    pred = jax.vmap(lambda a, b: erf_attention(s.X, a, b, lam))(
        k, v
    )  # (runs, n)
    err = np.asarray(jnp.square(s.y[None, :] - pred))
    sd = err.std(axis=1, ddof=1)
    return (
        sd / math.sqrt(cfg.test_size),
        err.mean(axis=1),
        sd / math.sqrt(n_samples),
    )


# ------------------------------------------------------------------ fluctuations around the oracle
class OracleFluctuations(NamedTuple):
    r"""Linearised stochastic PGD at the oracle, at a frozen :math:`\lambda` (:func:`oracle_fluctuations`).

    Coordinates :math:`x = (a, b, p, q)`: :math:`k \propto k^\star + a v^\star + p u`,
    :math:`v \propto v^\star + b k^\star + q u` with :math:`u \perp k^\star, v^\star` a unit vector
    (one of the :math:`d - 2` equivalent directions). ``hessian`` (4, 4) of the closed-form risk
    in :math:`x`, ``gradient`` (4,) (zero: the oracle is critical), ``noise_cov`` (4, 4) the
    covariance :math:`C` of the batch gradient's components along :math:`(v^\star, k^\star, u, u)`
    for :math:`(g_k, g_v, g_k, g_v)`, with ``noise_cov_se``; ``stationary_cov`` (4, 4) the solution
    :math:`\Sigma` of :math:`\Sigma = A\Sigma A^\top + \alpha^2 C`, :math:`A = I - \alpha H`; the
    predicted means (:data:`PREDICTED`) in ``predicted`` and their Monte Carlo standard errors
    (from the estimate of :math:`C`, delta method) in ``predicted_se``.
    """

    lam: float
    alpha: float
    d: int
    hessian: np.ndarray
    gradient: np.ndarray
    noise_cov: np.ndarray
    noise_cov_se: np.ndarray
    stationary_cov: np.ndarray
    predicted: dict
    predicted_se: dict


#: The quantities predicted from the covariance of the linearised dynamics.
PREDICTED = (
    "eta2",
    "theta2",
    "rho2",
    "distance2",
    "one_minus_kappa",
    "one_minus_nu",
    "excess_risk",
)


def _risk_in_coordinates(x, lam, task):
    a, b, p, q = x[0], x[1], x[2], x[3]
    nk = jnp.sqrt(1.0 + a**2 + p**2)
    nv = jnp.sqrt(1.0 + b**2 + q**2)
    kappa, eta = 1.0 / nk, a / nk
    nu, theta = 1.0 / nv, b / nv
    rho = (a + b + p * q) / (nk * nv)
    return risk_from_overlaps(kappa, nu, theta, eta, rho, lam, task)


@partial(jax.jit, static_argnames=("task",))
def _oracle_derivatives(lam, task):
    """Gradient and Hessian of the risk in the coordinates (a, b, p, q) at the oracle (0)."""
    f = lambda x: _risk_in_coordinates(x, lam, task)  # noqa: E731
    x0 = jnp.zeros(4)
    return jax.grad(f)(x0), jax.hessian(f)(x0)


def _predictions(S, H, d) -> dict:
    r"""Means of the reported quantities under a centred Gaussian law of covariance ``S`` of one
    :math:`(a, b)` pair and :math:`d - 2` independent :math:`(p_u, q_u)` pairs (Isserlis)."""
    m = d - 2
    saa, sbb, sab = S[0, 0], S[1, 1], S[0, 1]
    spp, sqq, spq = S[2, 2], S[3, 3], S[2, 3]
    e_s2 = m * (spp * sqq + spq**2) + m**2 * spq**2  # E[(sum_u p_u q_u)^2]
    rho2 = saa + sbb + 2 * sab + e_s2
    return {
        "eta2": float(saa),
        "theta2": float(sbb),
        "rho2": float(rho2),
        "distance2": float(saa + sbb + rho2),
        "one_minus_kappa": float(0.5 * (saa + m * spp)),
        "one_minus_nu": float(0.5 * (sbb + m * sqq)),
        "excess_risk": float(
            0.5 * np.sum(H[:2, :2] * S[:2, :2])
            + 0.5 * m * np.sum(H[2:, 2:] * S[2:, 2:])
        ),
    }


def oracle_fluctuations(
    task: SLRTask, *, lam, alpha, batch_size, key, n_draws: int = 20_000
) -> OracleFluctuations:
    r"""The stationary covariance of stochastic PGD linearised at the oracle :math:`(k^\star, v^\star)`,
    at a frozen :math:`\lambda` (our derivation; chapter 9 states and checks it).

    To first order one step moves the tangent coordinates by
    :math:`x_{t+1} = x_t - \alpha(Hx_t + \xi_t)`, :math:`\xi_t` the batch gradient's tangent
    components (mean 0 at a critical point, covariance :math:`C`, independent across steps).
    By the symmetry of the task under rotations fixing :math:`k^\star, v^\star`, the
    :math:`d - 2` orthogonal directions behave like :math:`u` and independently of :math:`(a, b)`.
    To second order :math:`\eta \approx a`, :math:`\theta \approx b`,
    :math:`\rho \approx a + b + \sum_u p_u q_u`, :math:`1 - \kappa \approx (a^2 + \sum_u p_u^2)/2`,
    :math:`1 - \nu \approx (b^2 + \sum_u q_u^2)/2`, and the risk exceeds its minimum by
    :math:`\tfrac12 x^\top H x` summed over the blocks. ``C`` is estimated from ``n_draws`` draws
    of the exact sampler.
    """
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    key = check_key(key)
    d = task.d
    if d < 3:
        raise ValueError(
            f"task.d must be >= 3 (a direction orthogonal to k*, v*), got {d}"
        )
    k_star, v_star = canonical_directions(d)
    u = jnp.eye(d)[2]
    grad, hess = (np.asarray(x) for x in _oracle_derivatives(lam, task))
    hess = 0.5 * (hess + hess.T)
    draws = gradient_draws(
        k_star,
        v_star,
        k_star,
        v_star,
        task,
        lam=lam,
        batch_size=batch_size,
        key=key,
        n_draws=n_draws,
        sampler="exact",
    )[:, :, 0, :]
    xi = np.stack(
        [
            draws[:, 0] @ np.asarray(v_star),
            draws[:, 1] @ np.asarray(k_star),
            draws[:, 0] @ np.asarray(u),
            draws[:, 1] @ np.asarray(u),
        ],
        axis=1,
    )
    _, _, C, C_se = _mean_cov_se(xi)
    A = np.eye(4) - alpha * hess

    def stationary(Q):
        S = solve_discrete_lyapunov(A, alpha**2 * Q)
        return 0.5 * (S + S.T)

    S = stationary(C)
    pred = _predictions(S, hess, d)
    # Delta method: the predictions are (nearly) linear in C = mean of the centred products
    # c_i c_j, so their error is that of the mean of one linear functional of those products.
    c = xi - xi.mean(axis=0)
    functional = {name: np.zeros(xi.shape[0]) for name in PREDICTED}
    for i in range(4):
        for j in range(i, 4):
            B = np.zeros((4, 4))
            B[i, j] = B[j, i] = 1.0
            h = 1e-6 * max(abs(C[i, j]), 1e-3)
            step = _predictions(S + h * stationary(B), hess, d)
            for name in PREDICTED:
                functional[name] += (
                    (step[name] - pred[name]) / h * c[:, i] * c[:, j]
                )
    pred_se = {
        name: float(f.std(ddof=1) / math.sqrt(f.size))
        for name, f in functional.items()
    }
    return OracleFluctuations(
        lam=lam,
        alpha=alpha,
        d=d,
        hessian=hess,
        gradient=grad,
        noise_cov=C,
        noise_cov_se=C_se,
        stationary_cov=S,
        predicted=pred,
        predicted_se=pred_se,
    )


class FluctuationPath(NamedTuple):
    r"""The linearised covariance along a decreasing :math:`\lambda_t` (:func:`fluctuations_along_schedule`).

    ``steps`` and ``lam`` (n,): the steps where predictions are recorded and :math:`\lambda_t`
    there; ``predicted``: :data:`PREDICTED` name -> (n,) array; ``frozen``: the
    :class:`OracleFluctuations` at the grid of inverse temperatures ``lam_grid`` (between which
    :math:`H` and :math:`C` are interpolated, linearly in :math:`\log\lambda`).
    """

    steps: np.ndarray
    lam: np.ndarray
    predicted: dict
    lam_grid: np.ndarray
    frozen: tuple


def fluctuations_along_schedule(
    task: SLRTask,
    *,
    lam0,
    decay,
    alpha,
    batch_size,
    start,
    n_steps,
    log_every,
    key,
    n_grid: int = 4,
    extra_lams=(),
    n_draws: int = 20_000,
) -> FluctuationPath:
    r"""The covariance of the linearised dynamics at the oracle, iterated along
    :math:`\lambda_t = \lambda_0/(1 + \text{decay}\cdot t)`:
    :math:`\Sigma_{t+1} = A_t\Sigma_t A_t^\top + \alpha^2 C_t` from the stationary :math:`\Sigma` at
    ``start`` to ``n_steps``, recorded every ``log_every`` steps. :math:`H` and :math:`C` are those
    of :func:`oracle_fluctuations` at ``n_grid`` inverse temperatures spaced geometrically over
    :math:`[\lambda_{n}, \lambda_{\rm start}]` (plus ``extra_lams``), interpolated linearly in
    :math:`\log\lambda`, and updated every 10 steps. Unlike the frozen-:math:`\lambda` values, this
    accounts for the lag of slow directions behind a moving :math:`\lambda_t`.
    """
    task = check_task(task)
    key = check_key(key)
    start = int(start)
    n_steps = check_positive_int(n_steps, "n_steps")
    log_every = check_positive_int(log_every, "log_every")
    n_grid = check_positive_int(n_grid, "n_grid")
    if not 0 <= start < n_steps:
        raise ValueError(
            f"start must satisfy 0 <= start < n_steps = {n_steps}, got {start}"
        )
    lam_of = lambda t: lam0 / (1.0 + decay * t)  # noqa: E731
    lo, hi = lam_of(n_steps), lam_of(start)
    grid = np.unique(
        np.concatenate(
            [
                np.geomspace(lo, hi, n_grid) if n_grid > 1 else [lo],
                list(extra_lams),
            ]
        )
    )
    if grid.min() < lo * (1 - 1e-12) or grid.max() > hi * (1 + 1e-12):
        raise ValueError(
            f"extra_lams must lie in [{lo}, {hi}], got {extra_lams}"
        )
    frozen = tuple(
        oracle_fluctuations(
            task,
            lam=float(l),
            alpha=alpha,
            batch_size=batch_size,
            key=k,
            n_draws=n_draws,
        )
        for l, k in zip(grid, jax.random.split(key, grid.size))
    )
    Hs = np.stack([f.hessian for f in frozen])
    Cs = np.stack([f.noise_cov for f in frozen])
    x = np.log(grid)

    def at(M, lam):
        if grid.size == 1:
            return M[0]
        w = np.interp(np.log(lam), x, np.arange(grid.size))
        i = min(int(w), grid.size - 2)
        f = w - i
        return (1 - f) * M[i] + f * M[i + 1]

    A = np.eye(4) - alpha * at(Hs, lam_of(start))
    S = solve_discrete_lyapunov(A, alpha**2 * at(Cs, lam_of(start)))
    steps, lams, preds = [], [], {name: [] for name in PREDICTED}
    for t in range(start, n_steps):
        if (t - start) % 10 == 0:
            lam = lam_of(t)
            A = np.eye(4) - alpha * at(Hs, lam)
            Q = alpha**2 * at(Cs, lam)
        S = A @ S @ A.T + Q
        if (t + 1) % log_every == 0:
            steps.append(t + 1)
            lams.append(lam_of(t + 1))
            for name, val in _predictions(
                S, at(Hs, lam_of(t + 1)), task.d
            ).items():
                preds[name].append(val)
    return FluctuationPath(
        np.asarray(steps),
        np.asarray(lams),
        {k: np.asarray(v) for k, v in preds.items()},
        grid,
        frozen,
    )


# ------------------------------------------------------------------ PGD against stochastic PGD
#: The final part of a run over which the floor is averaged, as a fraction of the run.
FLOOR_WINDOW = 0.1
#: Where the prediction of the fluctuation floor starts, as a fraction of the run.
PREDICTION_START = 0.75


class PGDvsSGD(NamedTuple):
    r"""A stochastic experiment, its deterministic counterpart (:func:`pgd_counterpart`), and the
    fluctuations predicted by the linearised dynamics along the schedule (:func:`fluctuations_along_schedule`,
    from :data:`PREDICTION_START` of the steps); ``window`` = (first, last step) of the final
    :data:`FLOOR_WINDOW` of the run, ``lam_window`` the :math:`\lambda_t` in its middle, where
    ``floor.frozen`` has a frozen-:math:`\lambda` prediction too; ``seconds`` per part."""

    sgd: object  # SGDExperiment
    pgd: PGDResult
    floor: FluctuationPath
    window: tuple
    lam_window: float
    seconds: dict


def pgd_vs_sgd(exp=None, *, n_draws: int = 20_000, key=None) -> PGDvsSGD:
    """``exp`` (default: Figure 5, ``run_sgd_experiment("fig5")``), exact PGD from the same
    initial overlaps with the same :math:`\\lambda_t`, step size and number of steps, and the
    predicted fluctuations at the end of the run."""
    if exp is None:
        from slrlib.experiments import run_sgd_experiment

        exp = run_sgd_experiment("fig5")
    _single(exp)
    key = jax.random.key(9) if key is None else check_key(key)
    cfg = exp.config
    _schedule_of(cfg)
    seconds = {"sgd": exp.seconds}
    start = time.perf_counter()
    res = pgd_counterpart(exp)
    jax.block_until_ready(res.kappa)
    seconds["pgd"] = time.perf_counter() - start
    first = round(cfg.n_steps * (1 - FLOOR_WINDOW))
    lam_window = cfg.lam / (1.0 + cfg.decay * 0.5 * (first + cfg.n_steps))
    start = time.perf_counter()
    floor = fluctuations_along_schedule(
        cfg.task,
        lam0=cfg.lam,
        decay=cfg.decay,
        alpha=cfg.alpha,
        batch_size=cfg.batch_size,
        start=round(cfg.n_steps * PREDICTION_START),
        n_steps=cfg.n_steps,
        log_every=cfg.log_every,
        key=key,
        n_grid=3,
        extra_lams=(lam_window,),
        n_draws=n_draws,
    )
    seconds["floor"] = time.perf_counter() - start
    return PGDvsSGD(exp, res, floor, (first, cfg.n_steps), lam_window, seconds)


def floor_comparison(data: PGDvsSGD) -> dict:
    r"""Observed against predicted fluctuations over the final window of ``data``.

    For each of :data:`PREDICTED` (``excess_risk``: the population risk minus the oracle's at
    :math:`\lambda_t`), a tuple ``(observed, standard error, predicted along the schedule,
    predicted at the frozen λ of the window's middle, Monte Carlo error of the latter)``: the
    mean over runs and logged steps of the window, its standard error from the spread of the
    per-run means (runs are independent; steps within a run are not), the mean of
    :attr:`FluctuationPath.predicted` over the same steps, and the stationary value at
    ``data.lam_window`` with its standard error (from the estimate of the noise covariance).
    """
    from slrlib.core.risk import oracle_risk

    exp = data.sgd
    r, cfg = exp.result, exp.config
    steps = np.asarray(r.steps)
    sel = (steps >= data.window[0]) & (steps <= data.window[1])
    th, et = np.asarray(r.theta)[:, 0, 0, sel], np.asarray(r.eta)[:, 0, 0, sel]
    rh = np.asarray(r.rho)[:, 0, sel]
    ka, nu = (
        np.abs(np.asarray(r.kappa)[:, 0, 0, sel]),
        np.abs(np.asarray(r.nu)[:, 0, 0, sel]),
    )
    orc = np.array(
        [
            float(oracle_risk(float(l), cfg.task))
            for l in np.asarray(r.lam)[sel]
        ]
    )
    excess = exp.population_excess_risk[:, sel] + cfg.eps**2 - orc[None, :]
    obs = {
        "eta2": et**2,
        "theta2": th**2,
        "rho2": rh**2,
        "distance2": th**2 + et**2 + rh**2,
        "one_minus_kappa": 1 - ka,
        "one_minus_nu": 1 - nu,
        "excess_risk": excess,
    }
    fl = data.floor
    psel = (fl.steps >= data.window[0]) & (fl.steps <= data.window[1])
    frozen = min(fl.frozen, key=lambda f: abs(f.lam - data.lam_window))
    out = {}
    for name in PREDICTED:
        per_run = obs[name].mean(axis=1)
        out[name] = (
            float(per_run.mean()),
            float(per_run.std(ddof=1) / math.sqrt(per_run.size)),
            float(fl.predicted[name][psel].mean()),
            float(frozen.predicted[name]),
            float(frozen.predicted_se[name]),
        )
    return out


def pgd_vs_sgd_table(data: PGDvsSGD) -> dict:
    """The plotted numbers: one row per (run, logged step), stochastic and exact PGD side by side,
    with the predicted root-mean-square distance and alignment gaps (NaN before the prediction starts)."""
    exp, p = data.sgd, data.pgd
    r = exp.result
    steps = np.asarray(r.steps)
    runs, n_log = np.asarray(r.kappa).shape[0], steps.size
    sq = lambda x: np.asarray(x)[:, 0, 0, :]  # noqa: E731
    dist = np.sqrt(
        sq(r.theta) ** 2 + sq(r.eta) ** 2 + np.asarray(r.rho)[:, 0, :] ** 2
    )
    pred = {}
    for name in ("distance2", "one_minus_kappa", "one_minus_nu"):
        col = np.full(n_log, np.nan)
        idx = np.searchsorted(steps, data.floor.steps)
        col[idx] = data.floor.predicted[name]
        pred[name] = np.tile(col, runs)
    return {
        "run": np.repeat(np.arange(runs), n_log),
        "step": np.tile(steps, runs),
        "lam": np.tile(np.asarray(r.lam), runs),
        "sgd_heldout_excess_risk": exp.excess_risk.ravel(),
        "sgd_excess_risk": exp.population_excess_risk.ravel(),
        "pgd_excess_risk": (np.asarray(p.risk) - exp.config.eps**2).ravel(),
        "sgd_kappa": sq(r.kappa).ravel(),
        "pgd_kappa": np.asarray(p.kappa).ravel(),
        "sgd_nu": sq(r.nu).ravel(),
        "pgd_nu": np.asarray(p.nu).ravel(),
        "sgd_distance": dist.ravel(),
        "pgd_distance": np.asarray(p.distance).ravel(),
        "predicted_rms_distance": np.sqrt(pred["distance2"]),
        "predicted_one_minus_kappa": pred["one_minus_kappa"],
        "predicted_one_minus_nu": pred["one_minus_nu"],
    }
