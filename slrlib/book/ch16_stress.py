r"""Stress tests of the paper's assumptions (chapter 16, "The dynamics quantified").

The analysis of Marion et al. (2025) assumes :math:`\langle k^\star, v^\star\rangle = 0`
(Assumption 1), runs its experiments at :math:`\gamma^2 = 1/2`, draws the noise tokens independent
:math:`\mathcal N(0, I_d)`, and takes a uniform law :math:`\pi` for the relevant position. This module
extends the closed form of Theorem 1 where it extends, and simulates where it does not.

**Two extensions of Theorem 1 (our derivation).** Let :math:`c = \langle k^\star, v^\star\rangle \in (-1, 1)`,
and let the :math:`L - 1` noise tokens be :math:`X_\ell = \sqrt{1-r}\,Z_\ell + \sqrt r\,W` with :math:`Z_\ell, W`
independent :math:`\mathcal N(0, I_d)`: each is still :math:`\mathcal N(0, I_d)`, two of them have correlation
:math:`r \in [0, 1)` in every coordinate, and the relevant token stays independent of them. Then, with the
notation of :func:`slrlib.core.risk.risk_from_overlaps` (:math:`q = \sqrt{d/2}`, :math:`c_2 = 1 + 2\lambda^2\gamma^2`,
:math:`a = \lambda q\kappa/\sqrt{c_2}`, :math:`C = 2\lambda/\sqrt{\pi(1 + 2\lambda^2)}`),

.. math::

    \mathcal R^{c, r}_\lambda = \mathcal R_\lambda
    + q^2c^2 - 2qc\Big[q\theta\operatorname{erf}(a) + \frac{\lambda\gamma^2\rho}{\sqrt{c_2}}\operatorname{erf}'(a)
      + (L-1)C\rho\Big]
    + (L-1)(L-2)\big[S_r(\rho) - C^2\rho^2\big],

where :math:`\mathcal R_\lambda` is the closed form of Theorem 1 (Proposition 15) at the same five overlaps and

.. math::

    S_r(\rho) = \frac{2r}{\pi}\arcsin\frac{2\lambda^2 r}{1 + 2\lambda^2}
    + \rho^2\Big[1 + r^2 - \frac{4\lambda^2r^2}{1 + 2\lambda^2}\Big]
      \frac{4\lambda^2}{\pi\sqrt{(1 + 2\lambda^2)^2 - 4\lambda^4r^2}}

is :math:`\mathbb E[\operatorname{erf}(\lambda U_1)V_1\operatorname{erf}(\lambda U_2)V_2]` for two noise tokens
(:math:`U_\ell = X_\ell^\top k`, :math:`V_\ell = X_\ell^\top v`); :math:`S_0(\rho) = C^2\rho^2`.
(:func:`stress_risk_from_overlaps`.) The first correction comes from :math:`\mathbb E[Y] = qc`, the second
from the pairs of noise tokens, which no longer average out.

The rest: projected gradient descent on :math:`\mathcal R^{c, r}_\lambda` (:func:`stress_pgd`, Definition 1
with the extended closed form), the minimiser in the plane of :math:`k^\star, v^\star`
(:func:`plane_minimiser`), a full-dimensional sampler and Monte Carlo risk for all four departures
(:func:`stress_sample`, :func:`stress_monte_carlo_risk`), the saddle in closed form against
:math:`\gamma` (:func:`saddle_hessian_closed_form`), and the :math:`\gamma^2` at which the oracle stops beating
the null predictor (:func:`break_even_gamma2`).
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import erf
from jax.typing import ArrayLike
from scipy import optimize

from slrlib.core.gaussian import erf_prime
from slrlib.core.montecarlo import MonteCarloEstimate, RunningMoments
from slrlib.core.risk import oracle_risk, risk_kernel
from slrlib.core.task import SLRTask, check_task
from slrlib.training.pgd import pgd_in_span
from slrlib.validation import (
    as_float_array,
    check_finite,
    check_key,
    check_positive_int,
    check_real_scalar,
    check_unit_norm,
)

__all__ = [
    "StressPGD",
    "PlaneMinimiser",
    "check_correlation",
    "check_overlap_c",
    "correlated_directions",
    "start_on_manifold",
    "stress_risk_kernel",
    "stress_risk_from_overlaps",
    "noise_pair_moment",
    "stress_pgd",
    "plane_minima",
    "plane_minimiser",
    "in_plane_fraction",
    "stress_sample",
    "stress_monte_carlo_risk",
    "saddle_hessian_closed_form",
    "break_even_gamma2",
    "oracle_risk_correlated",
    "optimal_lambda_correlated",
]

_SQRT_PI = math.sqrt(math.pi)


# --------------------------------------------------------------------------- validation
def check_overlap_c(c: object) -> float:
    r"""Validate :math:`c = \langle k^\star, v^\star\rangle`: a real number in :math:`(-1, 1)`.

    Parameters
    ----------
    c : object
        The value.

    Returns
    -------
    float
        ``c``.

    Raises
    ------
    ValueError
        When ``c`` is not a finite real number in :math:`(-1, 1)` (at :math:`|c| = 1` the two directions coincide).
    """
    c = check_real_scalar(c, "c")
    if not -1.0 < c < 1.0:
        raise ValueError(
            f"c must lie in (-1, 1) (|c| = 1 makes v* = ±k*), got {c!r}"
        )
    return c


def check_correlation(r: object) -> float:
    r"""Validate the correlation :math:`r` of two noise tokens: a real number in :math:`[0, 1)`.

    Parameters
    ----------
    r : object
        The value.

    Returns
    -------
    float
        ``r``.

    Raises
    ------
    ValueError
        When ``r`` is not a finite real number in :math:`[0, 1)`.
    """
    r = check_real_scalar(r, "r")
    if not 0.0 <= r < 1.0:
        raise ValueError(
            f"r must lie in [0, 1) (noise tokens X = sqrt(1-r) Z + sqrt(r) W), got {r!r}"
        )
    return r


def _check_stars(k_star, v_star, d, *, batched=False):
    k_star = as_float_array(k_star, "k_star")
    v_star = as_float_array(v_star, "v_star")
    for x, name in ((k_star, "k_star"), (v_star, "v_star")):
        ok = x.shape == (d,) or (batched and x.ndim == 2 and x.shape[-1] == d)
        if not ok:
            allowed = f"({d},) or (runs, {d})" if batched else f"({d},)"
            raise ValueError(
                f"{name} must have shape {allowed}, got shape {x.shape}"
            )
        check_finite(x, name)
        check_unit_norm(x, name)
    c = np.asarray(jnp.sum(k_star * v_star, axis=-1))
    if not np.all(np.abs(c) < 1.0 - 1e-9):
        raise ValueError(
            f"k_star and v_star must not be parallel (|<k*, v*>| < 1), got <k*, v*> = {c.tolist()!r}"
        )
    return k_star, v_star, (float(c) if c.ndim == 0 else c)


def _check_lam_alpha(lam, alpha):
    return (
        check_real_scalar(lam, "lam", minimum=0.0, strict=True),
        check_real_scalar(alpha, "alpha", minimum=0.0, strict=True),
    )


# --------------------------------------------------------------------------- directions
def correlated_directions(
    key: jax.Array, d: int, c: float
) -> tuple[jax.Array, jax.Array]:
    r"""Task directions with :math:`\langle k^\star, v^\star\rangle = c`.

    :math:`(k^\star, w)` are drawn as :meth:`SLRTask.oracle_directions` draws :math:`(k^\star, v^\star)`
    (orthonormal), then :math:`v^\star = c\,k^\star + \sqrt{1 - c^2}\,w`: the same key gives the same
    :math:`k^\star` and the same plane for every :math:`c`, and :math:`c = 0` gives the paper's directions.

    Parameters
    ----------
    key : jax.Array
        A ``jax.random`` key.
    d : int
        Dimension, ``>= 2``.
    c : float
        The overlap, in :math:`(-1, 1)`.

    Returns
    -------
    k_star, v_star : jax.Array, shape (d,)
        Unit vectors with :math:`\langle k^\star, v^\star\rangle = c`.

    Raises
    ------
    ValueError
        When ``key``, ``d`` or ``c`` is invalid.
    """
    c = check_overlap_c(c)
    k_star, w = SLRTask(d=check_positive_int(d, "d"), L=1).oracle_directions(
        check_key(key)
    )
    return k_star, c * k_star + math.sqrt(1.0 - c * c) * w


def start_on_manifold(
    key: jax.Array, k_star: ArrayLike, v_star: ArrayLike, n_runs: int
) -> tuple[jax.Array, jax.Array]:
    r"""Initial pairs with :math:`\theta = \eta = \rho = 0`, for any :math:`\langle k^\star, v^\star\rangle`.

    The construction of :func:`slrlib.core.geometry.manifold_directions` (the paper's code), which does not
    use Assumption 1: :math:`k` uniform, orthogonalised against :math:`v^\star`; :math:`v` uniform,
    orthogonalised against :math:`k^\star` and against the part of :math:`k` orthogonal to :math:`k^\star`
    (Gram–Schmidt, since :math:`k^\star` need not be orthogonal to that part here: :math:`v` is projected on
    the orthogonal complement of :math:`\operatorname{span}\{k^\star, k\}`). With :math:`c = 0` and the same
    key it gives the same pairs as ``manifold_directions`` up to round-off.

    Parameters
    ----------
    key : jax.Array
        A ``jax.random`` key, split in two (for :math:`k`, for :math:`v`), as ``manifold_directions`` does.
    k_star, v_star : array_like, shape (d,)
        Unit, non-parallel task directions.
    n_runs : int
        Number of pairs.

    Returns
    -------
    k0, v0 : jax.Array, shape (n_runs, d)

    Raises
    ------
    ValueError
        When an argument is invalid.
    """
    key = check_key(key)
    k_star = as_float_array(k_star, "k_star")
    d = int(k_star.shape[-1]) if k_star.ndim == 1 else -1
    k_star, v_star, _ = _check_stars(k_star, v_star, d)
    n_runs = check_positive_int(n_runs, "n_runs")
    return _start_pairs(key, k_star, v_star, n_runs)


@partial(jax.jit, static_argnums=(3,))
def _start_pairs(key, k_star, v_star, n):
    d = k_star.shape[-1]
    k_key, v_key = jax.random.split(key)
    k = jax.random.normal(k_key, (n, d))
    k = k - (k @ v_star)[:, None] * v_star
    k = k / jnp.linalg.norm(k, axis=-1, keepdims=True)
    v = jax.random.normal(v_key, (n, d))
    v = v - (v @ k_star)[:, None] * k_star
    k_perp = k - (k @ k_star)[:, None] * k_star
    k_perp = k_perp / jnp.linalg.norm(k_perp, axis=-1, keepdims=True)
    v = v - jnp.sum(v * k_perp, axis=-1, keepdims=True) * k_perp
    return k, v / jnp.linalg.norm(v, axis=-1, keepdims=True)


# --------------------------------------------------------------------------- the closed form
def noise_pair_moment(
    rho: ArrayLike, r: ArrayLike, lam: ArrayLike
) -> jax.Array:
    r"""The moment :math:`S_r(\rho) = \mathbb E[\operatorname{erf}(\lambda U_1)V_1\operatorname{erf}(\lambda U_2)V_2]`
    of two correlated noise tokens (our derivation).

    :math:`(U_\ell, V_\ell) = (X_\ell^\top k, X_\ell^\top v)` is centred Gaussian with covariance
    :math:`\begin{pmatrix}1 & \rho\\ \rho & 1\end{pmatrix} \otimes \begin{pmatrix}1 & r\\ r & 1\end{pmatrix}`.
    Gaussian integration by parts in :math:`V_1, V_2`, then Price's theorem and Stein's lemma for the pair
    :math:`(U_1, U_2)` (with :math:`g = \operatorname{erf}(\lambda\cdot)`,
    :math:`g'' = -2\lambda^2 x g'`, so :math:`\mathbb E[g''(U_1)g(U_2)] = -\tfrac{2\lambda^2 r}{1 + 2\lambda^2}\mathbb E[g'(U_1)g'(U_2)]`) give

    .. math::

        S_r(\rho) = r\,\mathbb E[g(U_1)g(U_2)] + \rho^2\Big[1 + r^2 - \frac{4\lambda^2 r^2}{1 + 2\lambda^2}\Big]
        \mathbb E[g'(U_1)g'(U_2)],\quad
        \mathbb E[g g] = \frac2\pi\arcsin\frac{2\lambda^2r}{1 + 2\lambda^2},\quad
        \mathbb E[g'g'] = \frac{4\lambda^2}{\pi\sqrt{(1 + 2\lambda^2)^2 - 4\lambda^4r^2}}.

    Parameters
    ----------
    rho, r, lam : array_like
        :math:`\rho = \langle k, v\rangle`, the correlation :math:`r \in [0, 1)` and :math:`\lambda \ge 0`;
        they broadcast. No validation (a traced kernel).

    Returns
    -------
    jax.Array
        :math:`S_r(\rho)`.
    """
    l2 = lam**2
    b = 1.0 + 2.0 * l2
    gg = 2.0 / math.pi * jnp.arcsin(2.0 * l2 * r / b)
    gpgp = 4.0 * l2 / (math.pi * jnp.sqrt(b**2 - 4.0 * l2**2 * r**2))
    return r * gg + rho**2 * (1.0 + r**2 - 4.0 * l2 * r**2 / b) * gpgp


@jax.jit
def stress_risk_kernel(
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike,
    eta: ArrayLike,
    rho: ArrayLike,
    c: ArrayLike,
    r: ArrayLike,
    lam: ArrayLike,
    d: ArrayLike,
    L: ArrayLike,
    gamma: ArrayLike,
    eps: ArrayLike,
) -> jax.Array:
    r"""The extended closed form :math:`\mathcal R^{c, r}_\lambda` (module docstring) as a compiled, traced kernel.

    The formula of :func:`stress_risk_from_overlaps` without validation: every argument may be traced, so
    ``jax.grad`` differentiates it in the overlaps (PGD, :func:`stress_pgd`). At :math:`c = r = 0` it is
    :func:`slrlib.core.risk.risk_kernel`.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : array_like
        The overlaps.
    c, r : array_like
        :math:`\langle k^\star, v^\star\rangle` and the correlation of two noise tokens.
    lam, d, L, gamma, eps : array_like
        :math:`\lambda` and the task's numbers.

    Returns
    -------
    jax.Array
        :math:`\mathcal R^{c, r}_\lambda`, of the broadcast shape.
    """
    q = jnp.sqrt(d / 2.0)
    g2 = gamma**2
    c2 = 1.0 + 2.0 * lam**2 * g2
    a = lam * q * kappa / jnp.sqrt(c2)
    C = 2.0 * lam / jnp.sqrt(math.pi * (1.0 + 2.0 * lam**2))
    mean_terms = q**2 * c**2 - 2.0 * q * c * (
        q * theta * erf(a)
        + lam * g2 * rho / jnp.sqrt(c2) * erf_prime(a)
        + (L - 1) * C * rho
    )
    pair_terms = (
        (L - 1) * (L - 2) * (noise_pair_moment(rho, r, lam) - C**2 * rho**2)
    )
    return (
        risk_kernel(kappa, nu, theta, eta, rho, lam, d, L, gamma, eps)
        + mean_terms
        + pair_terms
    )


def stress_risk_from_overlaps(
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike,
    eta: ArrayLike,
    rho: ArrayLike,
    lam: ArrayLike,
    task: SLRTask,
    *,
    c: float = 0.0,
    r: float = 0.0,
) -> jax.Array:
    r"""Risk of erf attention (3) when :math:`\langle k^\star, v^\star\rangle = c` and the noise tokens have
    pairwise correlation :math:`r` (our extension of Theorem 1; formula in the module docstring).

    .. math::

        \mathcal R^{c, r}_\lambda = \mathcal R_\lambda
        + q^2c^2 - 2qc\Big[q\theta\operatorname{erf}(a) + \frac{\lambda\gamma^2\rho}{\sqrt{c_2}}\operatorname{erf}'(a)
        + (L-1)C\rho\Big] + (L-1)(L-2)\big[S_r(\rho) - C^2\rho^2\big].

    It does not depend on the law :math:`\pi` of the position (condition on :math:`J_0`; the predictor is a
    sum over tokens). The overlaps must be those of unit vectors with the given :math:`c` (a Gram matrix);
    they are not checked, as in :func:`slrlib.core.risk.risk_from_overlaps`.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : array_like
        The overlaps (:func:`slrlib.core.risk.overlaps`); they broadcast with ``lam``.
    lam : array_like
        Inverse temperature, ``>= 0``.
    task : SLRTask
        The task (:math:`d, L, \gamma, \varepsilon`).
    c : float
        :math:`\langle k^\star, v^\star\rangle \in (-1, 1)`.
    r : float
        Correlation of two noise tokens, in :math:`[0, 1)`.

    Returns
    -------
    jax.Array
        :math:`\mathcal R^{c, r}_\lambda`.

    Raises
    ------
    ValueError
        When ``task`` is not an :class:`SLRTask`, ``c`` is not in :math:`(-1, 1)`, ``r`` not in :math:`[0, 1)`,
        or ``lam`` is negative or not finite.
    """
    task = check_task(task)
    c, r = check_overlap_c(c), check_correlation(r)
    lam = as_float_array(lam, "lam")
    check_finite(lam, "lam")
    if not bool(jnp.all(lam >= 0)):
        raise ValueError(f"lam must be >= 0, got {np.asarray(lam)}")
    return stress_risk_kernel(
        kappa,
        nu,
        theta,
        eta,
        rho,
        c,
        r,
        lam,
        task.d,
        task.L,
        task.gamma,
        task.eps,
    )


# --------------------------------------------------------------------------- PGD
class StressPGD(NamedTuple):
    r"""Logged PGD on :math:`\mathcal R^{c, r}_\lambda` (see :func:`stress_pgd`).

    ``steps`` (n_log,); the overlaps ``kappa, nu, theta, eta, rho``, the ``risk`` and the ``distance``
    :math:`\sqrt{\theta^2 + \eta^2 + \rho^2}` to :math:`\mathcal M` of shape ``(runs, n_log)``; ``c`` (runs,), the
    overlap :math:`\langle k^\star, v^\star\rangle` of each run's directions; ``r``; ``k``, ``v`` (runs, d), the
    final iterates.
    """

    steps: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    theta: np.ndarray
    eta: np.ndarray
    rho: np.ndarray
    risk: np.ndarray
    distance: np.ndarray
    c: np.ndarray
    r: float
    k: np.ndarray
    v: np.ndarray


def _stress_overlap_grad(kappa, nu, theta, eta, rho, t, params):
    """Partial derivatives of the extended closed form in the five overlaps (constant lambda: t unused)."""
    c, r, lam, d, L, gamma, eps = params

    def total(o):
        return jnp.sum(stress_risk_kernel(*o, c, r, lam, d, L, gamma, eps))

    return jax.grad(total)((kappa, nu, theta, eta, rho))


@partial(jax.jit, static_argnames=("buf",))
def _stress_pgd_run(
    k0,
    v0,
    k_star,
    v_star,
    c,
    r,
    lam,
    alpha,
    d,
    L,
    gamma,
    eps,
    log_every,
    n_log,
    *,
    buf,
):
    # The loop of slrlib.training.pgd.pgd, in the orthonormal basis of span{k*, v*, k0, v0}, with the
    # extended closed form's overlap gradient.
    logs, k_end, v_end = pgd_in_span(
        _stress_overlap_grad,
        (c, r, lam, d, L, gamma, eps),
        k0,
        v0,
        k_star,
        v_star,
        alpha,
        log_every,
        n_log,
        buf=buf,
    )
    risk = stress_risk_kernel(
        *jnp.moveaxis(logs, 1, 0), c, r, lam, d, L, gamma, eps
    )
    return logs, risk, k_end, v_end


def stress_pgd(
    k0: ArrayLike,
    v0: ArrayLike,
    k_star: ArrayLike,
    v_star: ArrayLike,
    task: SLRTask,
    *,
    lam: float,
    alpha: float,
    n_steps: int,
    log_every: int = 1,
    r: float = 0.0,
) -> StressPGD:
    r"""PGD (Definition 1, eq. 10, constant :math:`\lambda`) on the extended closed form :math:`\mathcal R^{c, r}_\lambda`.

    :math:`c = \langle k^\star, v^\star\rangle` is read from the directions, which need not be orthogonal; each run
    may have its own pair (a sweep over :math:`c` in one compiled loop).
    The gradients are exact (``jax.grad`` of :func:`stress_risk_kernel` in the overlaps, then
    :math:`\nabla_k\mathcal R = \partial_\kappa\mathcal R\,k^\star + \partial_\eta\mathcal R\,v^\star + \partial_\rho\mathcal R\,v`
    and the same for :math:`v`), and the iterates are carried in an orthonormal basis of
    :math:`\operatorname{span}\{k^\star, v^\star, k_0, v_0\}` by :func:`slrlib.training.pgd.pgd_in_span`, the
    loop of :func:`slrlib.training.pgd.pgd`.
    At :math:`c = r = 0` it is that function's iteration.

    Parameters
    ----------
    k0, v0 : array_like, shape (runs, d)
        Unit initial directions.
    k_star, v_star : array_like, shape (d,) or (runs, d)
        Unit, non-parallel task directions, shared or one pair per run.
    task : SLRTask
        The task.
    lam, alpha : float
        Inverse temperature and step size, ``> 0``.
    n_steps, log_every : int
        Number of steps, and the logging period (must divide ``n_steps``).
    r : float
        Correlation of two noise tokens, in :math:`[0, 1)`.

    Returns
    -------
    StressPGD

    Raises
    ------
    ValueError
        When an argument is invalid (shapes, unit norms, parallel directions, ``log_every`` not dividing
        ``n_steps``, ``r`` out of range).
    """
    task = check_task(task)
    lam, alpha = _check_lam_alpha(lam, alpha)
    r = check_correlation(r)
    k_star, v_star, c = _check_stars(k_star, v_star, task.d, batched=True)
    k0 = task.check_parameter_vector(k0, "k0")
    v0 = task.check_parameter_vector(v0, "v0")
    if k0.ndim != 2 or k0.shape != v0.shape:
        raise ValueError(
            f"k0 and v0 must both have shape (runs, {task.d}), got {k0.shape} and {v0.shape}"
        )
    if k_star.ndim == 2 and (
        k_star.shape != k0.shape or v_star.shape != k0.shape
    ):
        raise ValueError(
            f"per-run k_star, v_star must have the shape of k0 {k0.shape}, got {k_star.shape} and "
            f"{v_star.shape}"
        )
    c = np.broadcast_to(np.asarray(c, dtype=float), k0.shape[:1]).copy()
    n_steps = check_positive_int(n_steps, "n_steps")
    log_every = check_positive_int(log_every, "log_every")
    if n_steps % log_every:
        raise ValueError(
            f"log_every must divide n_steps = {n_steps}, got {log_every}"
        )
    n_log = n_steps // log_every
    logs, risk, k_end, v_end = _stress_pgd_run(
        k0,
        v0,
        k_star,
        v_star,
        jnp.asarray(c),
        r,
        lam,
        alpha,
        float(task.d),
        float(task.L),
        task.gamma,
        task.eps,
        log_every,
        n_log,
        buf=n_log + 1,
    )
    logs = np.moveaxis(np.asarray(logs), 0, -1)  # (5, runs, n_log + 1)
    kappa, nu, theta, eta, rho = logs
    risk = np.moveaxis(np.asarray(risk), 0, -1)
    if not np.all(np.isfinite(risk)):
        raise FloatingPointError(
            "PGD produced non-finite values: is alpha too large?"
        )
    return StressPGD(
        np.arange(0, n_steps + 1, log_every),
        kappa,
        nu,
        theta,
        eta,
        rho,
        risk,
        np.sqrt(theta**2 + eta**2 + rho**2),
        c,
        r,
        np.asarray(k_end),
        np.asarray(v_end),
    )


# --------------------------------------------------------------------------- the minimiser in the plane
class PlaneMinimiser(NamedTuple):
    r"""A local minimiser of :math:`\mathcal R^{c, r}_\lambda` over pairs in :math:`\operatorname{span}\{k^\star, v^\star\}`.

    Fields: the five overlaps and the ``risk`` there; ``angle_k``, ``angle_v`` — the angles of :math:`k` and
    :math:`v` from :math:`k^\star` in that plane (towards :math:`v^\star`).
    """

    kappa: float
    nu: float
    theta: float
    eta: float
    rho: float
    risk: float
    angle_k: float
    angle_v: float


def _plane_overlaps(angles, c):
    a, b = angles[..., 0], angles[..., 1]
    s = jnp.sqrt(1.0 - c * c)
    return (
        jnp.cos(a),
        c * jnp.cos(b) + s * jnp.sin(b),
        jnp.cos(b),
        c * jnp.cos(a) + s * jnp.sin(a),
        jnp.cos(a - b),
    )


@jax.jit
def _plane_value_and_grad(x, c, r, lam, d, L, gamma, eps):
    return jax.value_and_grad(
        lambda y: stress_risk_kernel(
            *_plane_overlaps(y, c), c, r, lam, d, L, gamma, eps
        )
    )(x)


@jax.jit
def _plane_grid(x, c, r, lam, d, L, gamma, eps):
    return stress_risk_kernel(
        *_plane_overlaps(x, c), c, r, lam, d, L, gamma, eps
    )


def plane_minima(
    c: float,
    lam: float,
    task: SLRTask,
    *,
    r: float = 0.0,
    grid: int = 72,
    starts: int | None = None,
) -> list[PlaneMinimiser]:
    r"""The local minimisers of :math:`\mathcal R^{c, r}_\lambda` over :math:`k, v` in the plane of :math:`k^\star, v^\star`,
    best first.

    With :math:`k^\star = e_1`, :math:`v^\star = c\,e_1 + \sqrt{1 - c^2}\,e_2`, :math:`k = \cos a\,e_1 + \sin a\,e_2`,
    :math:`v = \cos b\,e_1 + \sin b\,e_2`: :math:`\kappa = \cos a`, :math:`\theta = \cos b`,
    :math:`\rho = \cos(a - b)`, :math:`\eta = c\cos a + \sqrt{1-c^2}\sin a`, :math:`\nu = c\cos b + \sqrt{1-c^2}\sin b`.
    The plane is invariant under PGD (every gradient is a combination of :math:`k^\star, v^\star, k, v`), so these are
    stationary points of the full iteration too. The risk is evaluated on a ``grid`` × ``grid`` lattice of the torus
    :math:`(a, b)`; BFGS with exact gradients (``jax.grad``) is started from every lattice point lower than its
    eight neighbours; the limits are merged up to the symmetry :math:`(k, v) \mapsto (-k, -v)` (same predictor)
    and returned with :math:`\kappa \ge 0`.

    Parameters
    ----------
    c : float
        :math:`\langle k^\star, v^\star\rangle \in (-1, 1)`.
    lam : float
        Inverse temperature, ``> 0``.
    task : SLRTask
        The task.
    r : float
        Correlation of two noise tokens, in :math:`[0, 1)`.
    grid : int
        Lattice points per angle, ``>= 8``.
    starts : int, optional
        Start BFGS only from the ``starts`` lowest lattice local minima (default: from all of them).

    Returns
    -------
    list of PlaneMinimiser
        The distinct local minimisers, by increasing risk.

    Raises
    ------
    ValueError
        When an argument is out of range.
    """
    task = check_task(task)
    c, r = check_overlap_c(c), check_correlation(r)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    grid = check_positive_int(grid, "grid")
    starts = None if starts is None else check_positive_int(starts, "starts")
    if grid < 8:
        raise ValueError(f"grid must be >= 8, got {grid}")
    args = (c, r, lam, float(task.d), float(task.L), task.gamma, task.eps)
    t = np.linspace(-math.pi, math.pi, grid, endpoint=False)
    A, B = np.meshgrid(t, t, indexing="ij")
    Rg = np.asarray(_plane_grid(jnp.stack([A, B], axis=-1), *args))
    lower = np.ones_like(Rg, dtype=bool)
    for da in (-1, 0, 1):
        for db in (-1, 0, 1):
            if da or db:
                lower &= Rg < np.roll(np.roll(Rg, da, axis=0), db, axis=1)

    def fun(x):
        val, g = _plane_value_and_grad(jnp.asarray(x), *args)
        return float(val), np.asarray(g)

    found: list[PlaneMinimiser] = []
    wrap = lambda x: float((x + math.pi) % (2 * math.pi) - math.pi)  # noqa: E731
    cells = sorted(zip(*np.nonzero(lower)), key=lambda ij: Rg[ij])
    for i, j in cells[:starts]:
        res = optimize.minimize(
            fun,
            np.array([A[i, j], B[i, j]]),
            jac=True,
            method="BFGS",
            options={"gtol": 1e-11},
        )
        x = np.asarray(res.x)
        if float(np.cos(x[0])) < 0:  # (k, v) -> (-k, -v): same predictor
            x = x + math.pi
        x = np.array([wrap(x[0]), wrap(x[1])])
        o = [float(u) for u in _plane_overlaps(jnp.asarray(x), c)]
        if any(
            abs(wrap(x[0] - m.angle_k)) < 1e-5
            and abs(wrap(x[1] - m.angle_v)) < 1e-5
            for m in found
        ):
            continue
        found.append(
            PlaneMinimiser(*o, float(res.fun), float(x[0]), float(x[1]))
        )
    return sorted(found, key=lambda m: m.risk)


def plane_minimiser(
    c: float, lam: float, task: SLRTask, *, r: float = 0.0
) -> PlaneMinimiser:
    r"""The global minimiser of :math:`\mathcal R^{c, r}_\lambda` over the plane of :math:`k^\star, v^\star`:
    The best of :func:`plane_minima` on a 36 × 36 lattice with BFGS started from its three lowest local minima, and
    of BFGS started from the oracle :math:`(a, b) = (0, \arccos c)` (the global basin can be narrower than the
    lattice's spacing).

    Parameters
    ----------
    c : float
        :math:`\langle k^\star, v^\star\rangle \in (-1, 1)`.
    lam : float
        Inverse temperature, ``> 0``.
    task : SLRTask
        The task.
    r : float
        Correlation of two noise tokens, in :math:`[0, 1)`.

    Returns
    -------
    PlaneMinimiser

    Raises
    ------
    ValueError
        When an argument is out of range.
    """
    found = plane_minima(c, lam, task, r=r, grid=36, starts=3)
    c = check_overlap_c(c)
    args = (
        c,
        check_correlation(r),
        float(lam),
        float(task.d),
        float(task.L),
        task.gamma,
        task.eps,
    )

    def fun(x):
        val, g = _plane_value_and_grad(jnp.asarray(x), *args)
        return float(val), np.asarray(g)

    res = optimize.minimize(
        fun,
        np.array([0.0, math.acos(c)]),
        jac=True,
        method="BFGS",
        options={"gtol": 1e-11},
    )
    if res.fun < found[0].risk:
        x = np.asarray(res.x)
        if float(np.cos(x[0])) < 0:
            x = x + math.pi
        x = (x + math.pi) % (2 * math.pi) - math.pi
        o = [float(u) for u in _plane_overlaps(jnp.asarray(x), c)]
        return PlaneMinimiser(*o, float(res.fun), float(x[0]), float(x[1]))
    return found[0]


def in_plane_fraction(
    kappa: ArrayLike, eta: ArrayLike, c: float
) -> np.ndarray:
    r"""Squared norm of the projection of a unit vector on :math:`\operatorname{span}\{k^\star, v^\star\}`.

    For :math:`k` with :math:`\kappa = \langle k, k^\star\rangle` and :math:`\eta = \langle k, v^\star\rangle`,
    :math:`\|P k\|^2 = (\kappa^2 - 2c\kappa\eta + \eta^2)/(1 - c^2)` (the inverse Gram matrix of the two
    directions); for :math:`v`, pass :math:`(\theta, \nu)`. It is 1 exactly when the vector lies in the plane.

    Parameters
    ----------
    kappa, eta : array_like
        The overlaps of the vector with :math:`k^\star` and :math:`v^\star`.
    c : float
        :math:`\langle k^\star, v^\star\rangle \in (-1, 1)`.

    Returns
    -------
    numpy.ndarray
        :math:`\|Pk\|^2 \in [0, 1]` (up to round-off).

    Raises
    ------
    ValueError
        When ``c`` is not in :math:`(-1, 1)`.
    """
    c = check_overlap_c(c)
    kappa, eta = np.asarray(kappa, dtype=float), np.asarray(eta, dtype=float)
    return (kappa**2 - 2.0 * c * kappa * eta + eta**2) / (1.0 - c * c)


# --------------------------------------------------------------------------- simulation
@partial(jax.jit, static_argnums=(1, 2, 3))
def _stress_sample(key, n, L, d, k_star, v_star, gamma, eps, log_pi, r, q):
    j_key, x_key, w_key, noise_key = jax.random.split(key, 4)
    J0 = jax.random.categorical(j_key, log_pi, shape=(n,))
    Z = jax.random.normal(x_key, (n, L, d))
    W = jax.random.normal(w_key, (n, 1, d))
    relevant = jax.nn.one_hot(J0, L, dtype=bool)[..., None]
    X = jnp.where(
        relevant,
        q * k_star + gamma * Z,
        jnp.sqrt(1.0 - r) * Z + jnp.sqrt(r) * W,
    )
    X_rel = jnp.take_along_axis(X, J0[:, None, None], axis=1)[:, 0, :]
    y = X_rel @ v_star + eps * jax.random.normal(noise_key, (n,))
    return X, y, J0


def stress_sample(
    key: jax.Array,
    n: int,
    task: SLRTask,
    k_star: ArrayLike,
    v_star: ArrayLike,
    r: float = 0.0,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    r"""Draw ``n`` sequences of the task with the stressed assumptions, in full dimension.

    :math:`J_0 \sim \pi` (``task.probs``, uniform by default); :math:`X_{J_0} \sim \mathcal N(q k^\star, \gamma^2 I_d)`;
    the other tokens :math:`\sqrt{1-r}\,Z_\ell + \sqrt r\,W` with one common :math:`W \sim \mathcal N(0, I_d)` per
    sequence; :math:`Y = X_{J_0}^\top v^\star + \varepsilon\xi`. :math:`k^\star, v^\star` need not be orthogonal.

    Parameters
    ----------
    key : jax.Array
        A ``jax.random`` key.
    n : int
        Number of sequences.
    task : SLRTask
        The task (:math:`d, L, \gamma, \varepsilon, \pi`).
    k_star, v_star : array_like, shape (d,)
        Unit, non-parallel directions.
    r : float
        Correlation of two noise tokens, in :math:`[0, 1)`.

    Returns
    -------
    X, y, J0 : jax.Array
        Shapes (n, L, d), (n,), (n,) (0-based positions).

    Raises
    ------
    ValueError
        When an argument is invalid.
    """
    task = check_task(task)
    key = check_key(key)
    n = check_positive_int(n, "n")
    r = check_correlation(r)
    k_star, v_star, _ = _check_stars(k_star, v_star, task.d)
    return _stress_sample(
        key,
        n,
        task.L,
        task.d,
        k_star,
        v_star,
        task.gamma,
        task.eps,
        jnp.log(task.pi),
        r,
        task.q,
    )


@jax.jit
def _squared_errors(X, y, K, V, lam):
    # erf attention (3) for m pairs at once: X (n, L, d), K, V (m, d) -> (n, m)
    pred = jnp.sum(erf(lam * (X @ K.T)) * (X @ V.T), axis=1)
    return jnp.square(y[:, None] - pred)


def stress_monte_carlo_risk(
    k: ArrayLike,
    v: ArrayLike,
    k_star: ArrayLike,
    v_star: ArrayLike,
    lam: float,
    task: SLRTask,
    key: jax.Array,
    *,
    r: float = 0.0,
    n_samples: int = 100_000,
    batch_size: int = 20_000,
    reduced: bool = False,
) -> MonteCarloEstimate:
    r"""Monte Carlo risk :math:`\frac1n\sum_i (Y_i - T^{(k,v)}_\lambda(\mathbb X_i))^2` on :func:`stress_sample` draws.

    Parameters
    ----------
    k, v : array_like, shape (d,) or (m, d)
        Unit parameter directions; ``m`` pairs are scored on the same draws.
    k_star, v_star : array_like, shape (d,)
        Unit, non-parallel task directions.
    lam : float
        Inverse temperature, ``>= 0``.
    task : SLRTask
        The task (its ``probs`` set the law of the position).
    key : jax.Array
        A ``jax.random`` key, split into one per batch.
    r : float
        Correlation of two noise tokens, in :math:`[0, 1)`.
    n_samples, batch_size : int
        Number of sequences (``>= 2``) and sequences per batch.
    reduced : bool
        Draw each token's coordinates on an orthonormal basis :math:`Q` of
        :math:`\operatorname{span}\{k^\star, v^\star, k_1, v_1, \dots\}` (dimension :math:`D \le 2 + 2m`) instead of
        the whole token: :math:`Y` and every predictor depend on a token only through :math:`Q^\top X_\ell`, whose law
        is that of the task written in :math:`\mathbb R^D` (mean :math:`q\,Q^\top k^\star`, the same covariances), so
        the estimate has the same law at a cost independent of :math:`d`.

    Returns
    -------
    MonteCarloEstimate
        Mean, standard error and ``n``; shape ``()`` or ``(m,)``.

    Raises
    ------
    ValueError
        When an argument is invalid.
    """
    task = check_task(task)
    key = check_key(key)
    r = check_correlation(r)
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    k_star, v_star, _ = _check_stars(k_star, v_star, task.d)
    k = task.check_parameter_vector(k, "k")
    v = task.check_parameter_vector(v, "v")
    if k.shape != v.shape or k.ndim not in (1, 2):
        raise ValueError(
            f"k and v must have the same shape (d,) or (m, d), got {k.shape} and {v.shape}"
        )
    n_samples = check_positive_int(n_samples, "n_samples")
    if n_samples < 2:
        raise ValueError(
            f"n_samples must be >= 2 to estimate a standard error, got {n_samples}"
        )
    batch_size = min(check_positive_int(batch_size, "batch_size"), n_samples)
    K, V = jnp.atleast_2d(k), jnp.atleast_2d(v)
    dim = task.d
    if reduced:
        A = jnp.concatenate(
            [k_star[:, None], v_star[:, None], K.T, V.T], axis=1
        )
        U, sv, _ = jnp.linalg.svd(A, full_matrices=False)
        Q = U[
            :, np.asarray(sv) > 1e-10 * float(sv[0])
        ]  # orthonormal basis of the span
        k_star, v_star, K, V = k_star @ Q, v_star @ Q, K @ Q, V @ Q
        dim = int(Q.shape[1])
    log_pi = jnp.log(task.pi)
    acc = RunningMoments()
    n_batches = -(-n_samples // batch_size)
    for i, bkey in enumerate(jax.random.split(key, n_batches)):
        n = min(batch_size, n_samples - i * batch_size)
        # the non-partitionable threefry layout draws the same generator's bits about twice as fast on CPU
        with jax.threefry_partitionable(False):
            X, y, _ = _stress_sample(
                bkey,
                n,
                task.L,
                dim,
                k_star,
                v_star,
                task.gamma,
                task.eps,
                log_pi,
                r,
                task.q,
            )
        acc.add(np.asarray(_squared_errors(X, y, K, V, lam)))
    est = acc.estimate()
    if k.ndim == 1:
        return MonteCarloEstimate(est.mean[0], est.stderr[0], est.n)
    return est


# --------------------------------------------------------------------------- gamma
def saddle_hessian_closed_form(lam: float, task: SLRTask) -> np.ndarray:
    r"""The Hessian of the manifold risk (Lemma 6) at the saddle :math:`(0, 0)`, in closed form (our derivation).

    From Lemma 6, :math:`\mathcal R = \text{const} + \gamma^2[1 - 2\nu\operatorname{erf}(\lambda q\kappa/\sqrt{c_2})
    + \zeta(\lambda q\kappa, \lambda\gamma)]` and :math:`\partial_t^2\zeta(0, s) = 2\operatorname{erf}'(0)^2/(c_2\sqrt{c_4})`, so

    .. math::

        \nabla^2\mathcal R(0, 0) = \gamma^2\begin{pmatrix} \dfrac{8\lambda^2q^2}{\pi c_2\sqrt{c_4}} & -\dfrac{4\lambda q}{\sqrt{\pi c_2}}\\[1ex]
        -\dfrac{4\lambda q}{\sqrt{\pi c_2}} & 0\end{pmatrix},\qquad c_2 = 1 + 2\lambda^2\gamma^2,\ c_4 = 1 + 4\lambda^2\gamma^2:

    :math:`\gamma^2` times a matrix that depends on :math:`\gamma` only through :math:`\lambda\gamma`. Hence the
    saddle's eigenvalues :math:`\mu_\pm` (Proposition 12) scale like :math:`\gamma^2` when :math:`\lambda\gamma \ll 1`,
    and the time spent near the saddle like :math:`1/\gamma^2`.

    Parameters
    ----------
    lam : float
        Inverse temperature, ``> 0``.
    task : SLRTask
        The task (:math:`d, \gamma`).

    Returns
    -------
    numpy.ndarray, shape (2, 2)
        The Hessian in :math:`(\kappa, \nu)`.

    Raises
    ------
    ValueError
        When ``lam`` is not ``> 0`` or ``task`` is not an :class:`SLRTask`.
    """
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    g2, q = task.gamma**2, task.q
    c2, c4 = 1.0 + 2.0 * lam**2 * g2, 1.0 + 4.0 * lam**2 * g2
    h = g2 * 8.0 * lam**2 * q**2 / (math.pi * c2 * math.sqrt(c4))
    b = -g2 * 4.0 * lam * q / math.sqrt(math.pi * c2)
    return np.array([[h, b], [b, 0.0]])


def break_even_gamma2(
    lam: float, task: SLRTask, bracket: tuple[float, float] = (1e-4, 10.0)
) -> float:
    r"""The :math:`\gamma^2` below which the oracle :math:`(k^\star, v^\star)` does worse than the null predictor.

    Solves :math:`\mathcal R_\lambda(k^\star, v^\star) = \gamma^2 + \varepsilon^2` (Theorem 1 against the null risk)
    for :math:`\gamma^2` by Brent's method. The noise tokens cost :math:`(L-1)\zeta(0, \lambda)` whatever
    :math:`\gamma`, while the signal is :math:`\gamma^2`: below the root, erf attention at this :math:`\lambda`
    is worse than predicting 0.

    Parameters
    ----------
    lam : float
        Inverse temperature, ``> 0``.
    task : SLRTask
        The task (its ``gamma`` is replaced).
    bracket : tuple of float
        ``(lo, hi)`` with ``0 < lo < hi``, containing the root (a sign change).

    Returns
    -------
    float
        The break-even :math:`\gamma^2`.

    Raises
    ------
    ValueError
        When ``lam`` is not ``> 0``, ``bracket`` is invalid or contains no sign change.
    """
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    lo, hi = (float(x) for x in bracket)
    if not 0.0 < lo < hi < math.inf:
        raise ValueError(
            f"bracket must satisfy 0 < lo < hi < inf, got {bracket!r}"
        )

    def gap(g2):
        t = task.replace(gamma=math.sqrt(g2))
        return float(oracle_risk(lam, t)) - (g2 + t.eps**2)

    if gap(lo) * gap(hi) > 0:
        raise ValueError(
            f"bracket {bracket!r} contains no sign change of R(k*, v*) - null risk"
        )
    return float(optimize.brentq(gap, lo, hi, xtol=1e-14, rtol=1e-13))


# --------------------------------------------------------------------------- correlated noise at the oracle
def oracle_risk_correlated(
    lam: ArrayLike, task: SLRTask, r: float
) -> jax.Array:
    r"""Risk of erf attention at the oracle :math:`(k^\star, v^\star)` when two noise tokens have correlation :math:`r`.

    At :math:`\rho = 0` the pair moment is :math:`S_r(0) = \frac{2r}{\pi}\arcsin\frac{2\lambda^2r}{1 + 2\lambda^2}`, so

    .. math::

        \mathcal R^{0, r}_\lambda(k^\star, v^\star) = \mathcal R_\lambda(k^\star, v^\star)
        + (L-1)(L-2)\,\frac{2r}{\pi}\arcsin\frac{2\lambda^2 r}{1 + 2\lambda^2}
        \approx \mathcal R_\lambda(k^\star, v^\star) + \frac{4}{\pi}(L-1)(L-2)\,\lambda^2r^2 :

    the noise term :math:`(L-1)\zeta(0, \lambda) \approx \frac4\pi(L-1)\lambda^2` is multiplied by about
    :math:`1 + (L-2)r^2`. The same constant is added everywhere on :math:`\mathcal M` (:math:`\rho = 0`).

    Parameters
    ----------
    lam : array_like
        Inverse temperature(s), ``>= 0``.
    task : SLRTask
        The task.
    r : float
        Correlation of two noise tokens, in :math:`[0, 1)`.

    Returns
    -------
    jax.Array
        The risk, of the shape of ``lam``.

    Raises
    ------
    ValueError
        When ``r`` is not in :math:`[0, 1)`, ``lam`` is negative or not finite, or ``task`` is invalid.
    """
    task = check_task(task)
    r = check_correlation(r)
    lam = as_float_array(lam, "lam")
    check_finite(lam, "lam")
    if not bool(jnp.all(lam >= 0)):
        raise ValueError(f"lam must be >= 0, got {np.asarray(lam)}")
    return oracle_risk(lam, task) + (task.L - 1) * (
        task.L - 2
    ) * noise_pair_moment(0.0, r, lam)


def optimal_lambda_correlated(
    task: SLRTask, r: float, bounds: tuple[float, float] = (1e-4, 10.0)
) -> tuple[float, float]:
    r"""The inverse temperature minimising :func:`oracle_risk_correlated`, and the risk there.

    Brent's bounded method on :math:`\log\lambda` (as :func:`slrlib.core.risk.optimal_lambda`, which it equals at
    :math:`r = 0`).

    Parameters
    ----------
    task : SLRTask
        The task.
    r : float
        Correlation of two noise tokens, in :math:`[0, 1)`.
    bounds : tuple of float
        ``(lo, hi)``, ``0 < lo < hi < inf``.

    Returns
    -------
    lam_star, risk : float

    Raises
    ------
    ValueError
        When ``r`` or ``bounds`` is invalid.
    """
    task = check_task(task)
    r = check_correlation(r)
    lo, hi = (float(b) for b in bounds)
    if not (0.0 < lo < hi and math.isfinite(hi)):
        raise ValueError(
            f"bounds must satisfy 0 < lo < hi < inf, got {bounds!r}"
        )
    f = lambda x: float(oracle_risk_correlated(math.exp(x), task, r))  # noqa: E731
    res = optimize.minimize_scalar(
        f,
        bounds=(math.log(lo), math.log(hi)),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return math.exp(res.x), f(res.x)
