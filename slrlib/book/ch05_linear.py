r"""Linear predictors on single-location regression (Proposition 3 of Marion et al., 2025).

A linear predictor :math:`f_W(\mathbb X) = \sum_\ell w_\ell^\top X_\ell` sees the tokens only through
their first two moments. This module computes those moments in closed form, the exact risk of
*any* weight matrix ``W`` (so fitted weights can be scored without simulation), empirical
least-squares and group-Lasso fits with their uncertainty, a lower bound on the best linear
risk in terms of :math:`\max_\ell \pi_\ell`, and the tables behind the comparison with the
oracle attention predictor (Figure 3 of the paper).

Conventions: tokens ``X`` have shape (n, L, d); weights ``W`` have shape (L, d); the
flattened design ``X.reshape(n, L * d)`` indexes coordinate ``i`` of token ``l`` as
``l * d + i``, and ``Sigma``/``b`` below use the same order. Everything is NumPy float64.

The closed forms (notation of the book, :math:`q = \sqrt{d/2}`, :math:`a_\ell = 1 - \pi_\ell + \pi_\ell\gamma^2`):

.. math::

    \mathbb E[X_\ell X_m^\top] = 0\ (\ell \ne m),\qquad
    \mathbb E[X_\ell X_\ell^\top] = a_\ell I_d + \pi_\ell q^2 k^\star k^{\star\top},\qquad
    \mathbb E[X_\ell Y] = \pi_\ell\gamma^2 v^\star,\qquad \mathbb E[Y^2] = \gamma^2 + \varepsilon^2 .
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from slrlib.core.gaussian import zeta
from slrlib.core.risk import linear_risk, oracle_risk
from slrlib.core.task import SLRTask, check_directions, check_task

__all__ = [
    "LinearMoments",
    "linear_moments",
    "solve_normal_equations",
    "linear_risk_of_weights",
    "EmpiricalMoments",
    "empirical_moments",
    "LeastSquaresFit",
    "least_squares_fit",
    "group_lasso_from_moments",
    "group_lasso_fit",
    "group_lasso_population_weights",
    "linear_risk_lower_bound",
    "oracle_risk_lengths",
    "best_oracle_lambdas",
    "RiskTable",
    "risk_table",
]


def _tokens_and_targets(X, y) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 3:
        raise ValueError(f"X must have shape (n, L, d), got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(
            f"y must have shape (n,) = ({X.shape[0]},), got shape {y.shape}"
        )
    if X.shape[0] < 2:
        raise ValueError(f"X must hold at least 2 samples, got {X.shape[0]}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("X and y must be finite")
    return X, y


def _check_alpha(alpha) -> float:
    try:
        alpha = float(alpha)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"alpha must be a real number >= 0, got {alpha!r}"
        ) from err
    if not np.isfinite(alpha) or alpha < 0:
        raise ValueError(f"alpha must be a real number >= 0, got {alpha!r}")
    return alpha


# --------------------------------------------------------------------------- population
class LinearMoments(NamedTuple):
    r"""Second moments of the flattened tokens: ``Sigma`` :math:`= \mathbb E[\mathrm{vec}(\mathbb X)\mathrm{vec}(\mathbb X)^\top]`
    (L·d, L·d), ``b`` :math:`= \mathbb E[\mathrm{vec}(\mathbb X)\,Y]` (L·d,), ``y2`` :math:`= \mathbb E[Y^2]`."""

    Sigma: np.ndarray
    b: np.ndarray
    y2: float


def linear_moments(task: SLRTask, k_star, v_star) -> LinearMoments:
    r"""The second moments entering the normal equations of Proposition 3 (proof in Appendix B.3).

    Block-diagonal ``Sigma`` with blocks :math:`(1 - \pi_\ell + \pi_\ell\gamma^2) I_d + \pi_\ell q^2 k^\star k^{\star\top}`,
    ``b`` with blocks :math:`\pi_\ell \gamma^2 v^\star` (Assumption 1: :math:`k^\star \perp v^\star`),
    ``y2`` :math:`= \gamma^2 + \varepsilon^2`.
    """
    task = check_task(task)
    k_star, v_star = (
        np.asarray(u, dtype=np.float64)
        for u in check_directions(k_star, v_star, task.d)
    )
    pi = np.asarray(task.pi, dtype=np.float64)
    g2 = task.gamma**2
    L, d = task.L, task.d
    Sigma = np.zeros((L * d, L * d))
    b = np.zeros(L * d)
    kk = np.outer(k_star, k_star)
    for ell in range(L):
        block = slice(ell * d, (ell + 1) * d)
        Sigma[block, block] = (1.0 - pi[ell] + pi[ell] * g2) * np.eye(d) + pi[
            ell
        ] * task.q**2 * kk
        b[block] = pi[ell] * g2 * v_star
    return LinearMoments(Sigma=Sigma, b=b, y2=g2 + task.eps**2)


def solve_normal_equations(task: SLRTask, k_star, v_star) -> np.ndarray:
    r"""The best linear weights by solving :math:`\Sigma\,\mathrm{vec}(W) = b` numerically (shape (L, d)).

    A check on :func:`slrlib.best_linear_weights`, which uses the closed form obtained with
    the Sherman–Morrison formula instead of a linear solve.
    """
    m = linear_moments(task, k_star, v_star)
    return np.linalg.solve(m.Sigma, m.b).reshape(task.L, task.d)


def linear_risk_of_weights(W, task: SLRTask, k_star, v_star) -> np.ndarray:
    r"""Exact risk :math:`\mathbb E[(Y - f_W(\mathbb X))^2]` of the linear predictor with weights ``W``.

    ``W`` has shape (..., L, d) (batched over leading axes). Because the token blocks are
    uncorrelated,

    .. math::

        \mathcal R(W) = \gamma^2 + \varepsilon^2 - 2\gamma^2\sum_\ell \pi_\ell\, w_\ell^\top v^\star
        + \sum_\ell \Big[(1 - \pi_\ell + \pi_\ell\gamma^2)\|w_\ell\|^2 + \pi_\ell q^2 (w_\ell^\top k^\star)^2\Big].

    Its minimum over ``W`` is :func:`slrlib.linear_risk` (Proposition 3).
    """
    task = check_task(task)
    k_star, v_star = (
        np.asarray(u, dtype=np.float64)
        for u in check_directions(k_star, v_star, task.d)
    )
    W = np.asarray(W, dtype=np.float64)
    if W.ndim < 2 or W.shape[-2:] != (task.L, task.d):
        raise ValueError(
            f"W must have shape (..., L, d) = (..., {task.L}, {task.d}), got shape {W.shape}"
        )
    if not np.all(np.isfinite(W)):
        raise ValueError("W must be finite")
    pi = np.asarray(task.pi, dtype=np.float64)
    g2 = task.gamma**2
    a = 1.0 - pi + pi * g2
    wv = W @ v_star
    wk = W @ k_star
    quad = np.sum(a * np.sum(W**2, axis=-1) + pi * task.q**2 * wk**2, axis=-1)
    return g2 + task.eps**2 - 2.0 * g2 * np.sum(pi * wv, axis=-1) + quad


# --------------------------------------------------------------------------- samples
class EmpiricalMoments(NamedTuple):
    """Sample means of ``vec(X) vec(X)^T`` and ``vec(X) y`` with their standard errors (same shapes)."""

    Sigma: np.ndarray
    Sigma_se: np.ndarray
    b: np.ndarray
    b_se: np.ndarray
    n: int


def empirical_moments(X, y) -> EmpiricalMoments:
    r"""Empirical second moments of a sample (``X`` (n, L, d), ``y`` (n,)) and their standard errors.

    Each entry is a sample mean of products; its standard error is the sample standard
    deviation of those products over :math:`\sqrt n`, so the gap to
    :func:`linear_moments` can be read in standard errors.
    """
    X, y = _tokens_and_targets(X, y)
    n = X.shape[0]
    Z = X.reshape(n, -1)
    Sigma = Z.T @ Z / n
    Sigma_sq = (Z**2).T @ (Z**2) / n
    b = Z.T @ y / n
    b_sq = (Z**2).T @ (y**2) / n
    corr = n / (n - 1)
    Sigma_se = np.sqrt(np.maximum(Sigma_sq - Sigma**2, 0.0) * corr / n)
    b_se = np.sqrt(np.maximum(b_sq - b**2, 0.0) * corr / n)
    return EmpiricalMoments(
        Sigma=Sigma, Sigma_se=Sigma_se, b=b, b_se=b_se, n=n
    )


class LeastSquaresFit(NamedTuple):
    """Least-squares weights ``W`` (L, d) and their (heteroscedasticity-robust) standard errors."""

    W: np.ndarray
    stderr: np.ndarray


def least_squares_fit(X, y) -> LeastSquaresFit:
    r"""Ordinary least squares of ``y`` on the flattened tokens, without intercept.

    ``W`` solves :math:`\min_W \sum_i (y_i - f_W(\mathbb X_i))^2` (``numpy.linalg.lstsq``). The
    standard errors are the sandwich (HC0) ones,
    :math:`\sqrt{\mathrm{diag}(\hat\Sigma^{-1}\hat\Omega\hat\Sigma^{-1})/n}` with
    :math:`\hat\Omega = \frac1n\sum_i r_i^2 z_i z_i^\top`: valid although the residuals of
    the best linear predictor are neither Gaussian nor independent of the tokens here.
    """
    X, y = _tokens_and_targets(X, y)
    n, L, d = X.shape
    Z = X.reshape(n, -1)
    w, *_ = np.linalg.lstsq(Z, y, rcond=None)
    r = y - Z @ w
    S_inv = np.linalg.inv(Z.T @ Z / n)
    Omega = (Z * r[:, None] ** 2).T @ Z / n
    cov = S_inv @ Omega @ S_inv / n
    return LeastSquaresFit(
        W=w.reshape(L, d), stderr=np.sqrt(np.diag(cov)).reshape(L, d)
    )


def group_lasso_from_moments(
    Sigma, b, L: int, alpha: float, n_iter: int = 20_000, tol: float = 1e-13
) -> np.ndarray:
    r"""Minimise :math:`\tfrac12 w^\top\Sigma w - b^\top w + \alpha\sum_\ell \|w_\ell\|_2` (one group per token).

    With population moments (:func:`linear_moments`) this is half the risk plus the group
    penalty; with empirical ones (:func:`empirical_moments`) it is the usual group Lasso
    :math:`\frac1{2n}\sum_i (y_i - f_W(\mathbb X_i))^2 + \alpha\sum_\ell\|w_\ell\|` up to a constant.
    Solved by FISTA (accelerated proximal gradient, step :math:`1/\lambda_{\max}(\Sigma)`,
    group soft-thresholding) until successive iterates differ by less than ``tol``. Returns (L, d).
    """
    Sigma = np.asarray(Sigma, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    alpha = _check_alpha(alpha)
    p = b.shape[0]
    if Sigma.shape != (p, p) or p % L:
        raise ValueError(
            f"Sigma must be (p, p) and b (p,) with p a multiple of L = {L}; got {Sigma.shape}, {b.shape}"
        )
    d = p // L
    step = 1.0 / np.linalg.eigvalsh(Sigma)[-1]

    def prox(w):
        w = w.reshape(L, d)
        norms = np.linalg.norm(w, axis=1, keepdims=True)
        scale = np.maximum(0.0, 1.0 - step * alpha / np.maximum(norms, 1e-300))
        return (scale * w).ravel()

    w = np.zeros(p)
    z, t = w.copy(), 1.0
    for _ in range(n_iter):
        w_new = prox(z - step * (Sigma @ z - b))
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        z = w_new + (t - 1.0) / t_new * (w_new - w)
        done = np.max(np.abs(w_new - w)) < tol
        w, t = w_new, t_new
        if done:
            break
    return w.reshape(L, d)


def group_lasso_fit(X, y, alpha: float, **kwargs) -> np.ndarray:
    r"""Group Lasso on a sample, one group per token position: weights (L, d) minimising
    :math:`\frac1{2n}\sum_i (y_i - f_W(\mathbb X_i))^2 + \alpha\sum_\ell \|w_\ell\|_2` (see :func:`group_lasso_from_moments`)."""
    X, y = _tokens_and_targets(X, y)
    m = empirical_moments(X, y)
    return group_lasso_from_moments(m.Sigma, m.b, X.shape[1], alpha, **kwargs)


def group_lasso_population_weights(
    task: SLRTask, v_star, alpha: float
) -> np.ndarray:
    r"""The population group Lasso in closed form (our derivation):

    .. math::

        \arg\min_W\ \tfrac12\mathcal R(W) + \alpha\sum_\ell\|w_\ell\|_2:\qquad
        w_\ell = \frac{(\pi_\ell\gamma^2 - \alpha)_+}{1 - \pi_\ell + \pi_\ell\gamma^2}\, v^\star .

    (Blocks decouple; :math:`v^\star` is an eigenvector of each block with eigenvalue
    :math:`1 - \pi_\ell + \pi_\ell\gamma^2`; group soft-thresholding does the rest.)
    With a uniform :math:`\pi` every group gets the same weight: all are kept or all are zero.
    """
    task = check_task(task)
    alpha = _check_alpha(alpha)
    v_star = np.asarray(v_star, dtype=np.float64)
    if v_star.shape != (task.d,):
        raise ValueError(
            f"v_star must have shape (d,) = ({task.d},), got shape {v_star.shape}"
        )
    pi = np.asarray(task.pi, dtype=np.float64)
    g2 = task.gamma**2
    coef = np.maximum(pi * g2 - alpha, 0.0) / (1.0 - pi + pi * g2)
    return coef[:, None] * v_star[None, :]


def linear_risk_lower_bound(task: SLRTask) -> float:
    r"""A lower bound on the best linear risk through :math:`p = \max_\ell \pi_\ell` (our derivation):

    .. math::

        \mathcal R_{\rm lin} \ \ge\ \varepsilon^2 + \gamma^2 - \frac{p\,\gamma^4}{1 - p + p\gamma^2},

    because :math:`g(x) = x\gamma^4 / (1 - x + x\gamma^2)` increases on :math:`[0, 1]`, so
    :math:`\sum_\ell \pi_\ell\, g(\pi_\ell) \le g(p)`. Equality for a law uniform on :math:`1/p`
    positions. The linear risk thus tends to the null risk whenever :math:`\max_\ell \pi_\ell \to 0`.
    """
    task = check_task(task)
    p = float(np.max(np.asarray(task.pi)))
    g2 = task.gamma**2
    return task.eps**2 + g2 - p * g2**2 / (1.0 - p + p * g2)


# --------------------------------------------------------------------------- attention vs linear
def oracle_risk_lengths(lam, L, task: SLRTask) -> np.ndarray:
    r"""The oracle attention risk :math:`\mathcal R_\lambda(k^\star, v^\star)` (Theorem 1) for many
    sequence lengths at once.

    In Theorem 1's oracle risk the length enters only through the noise tokens,
    :math:`\mathcal R_\lambda(L) = \mathcal R_\lambda(1) + (L - 1)\,\zeta(0, \lambda)`, so one call of
    :func:`slrlib.oracle_risk` at ``L = 1`` and :func:`slrlib.zeta` serve a whole grid of ``L``. ``lam`` and ``L`` broadcast;
    the task's own ``L`` and ``probs`` are ignored (the risk does not depend on :math:`\pi`).
    """
    task = check_task(task)
    lam = np.asarray(lam, dtype=np.float64)
    L = np.asarray(L)
    if np.any(L < 1) or not np.all(L == np.round(L)):
        raise ValueError(f"L must hold positive integers, got {L!r}")
    base = np.asarray(oracle_risk(lam, task.replace(L=1, probs=None)))
    return base + (L - 1) * np.asarray(zeta(0.0, lam))


def best_oracle_lambdas(
    task: SLRTask,
    L_values,
    lam_min: float = 1e-4,
    lam_max: float = 10.0,
    n_grid: int = 100,
    rounds: int = 3,
) -> tuple[np.ndarray, np.ndarray]:
    r"""For each ``L`` in ``L_values``, the inverse temperature minimising the oracle attention risk
    :math:`\lambda \mapsto \mathcal R_\lambda(k^\star, v^\star)` (Theorem 1), and the minimum.

    Searches a log-spaced grid of ``n_grid`` points on ``[lam_min, lam_max]``, then zooms
    ``rounds`` times into the two grid cells around the best point (each round divides the
    spacing by about ``n_grid / 2``). When the risk decreases all the way to ``lam_max``
    (e.g. ``L = 1``) the answer sits at that boundary. Returns two arrays of shape ``(len(L_values),)``.
    """
    task = check_task(task)
    if not (0 < lam_min < lam_max):
        raise ValueError(
            f"need 0 < lam_min < lam_max, got lam_min={lam_min!r}, lam_max={lam_max!r}"
        )
    L = np.asarray([int(v) for v in np.atleast_1d(L_values)])[:, None]
    lo = np.full(L.shape, np.log(lam_min))
    hi = np.full(L.shape, np.log(lam_max))
    rows = np.arange(L.shape[0])
    for _ in range(rounds + 1):
        logs = lo + (hi - lo) * np.linspace(0.0, 1.0, n_grid)[None, :]
        risks = oracle_risk_lengths(np.exp(logs), L, task)
        i = np.argmin(risks, axis=1)
        lo = logs[rows, np.maximum(i - 1, 0)][:, None]
        hi = logs[rows, np.minimum(i + 1, n_grid - 1)][:, None]
    return np.exp(logs[rows, i]), risks[rows, i]


class RiskTable(NamedTuple):
    """Closed-form risks over grids of ``L`` and ``lam`` (one task otherwise).

    ``oracle[i, j]`` is the oracle attention risk at ``lam[i]``, ``L[j]`` (Theorem 1);
    ``best_lam[j]``, ``best[j]`` its minimiser over λ and minimum; ``linear[j]`` the best linear
    risk (Proposition 3); ``null`` :math:`= \\gamma^2 + \\varepsilon^2`; ``bound`` :math:`= \\varepsilon^2`.
    """

    L: np.ndarray
    lam: np.ndarray
    oracle: np.ndarray
    best_lam: np.ndarray
    best: np.ndarray
    linear: np.ndarray
    null: float
    bound: float
    d: int


def risk_table(
    task: SLRTask, L_values, lam_values=(), **best_kwargs
) -> RiskTable:
    """Tabulate the risks of :class:`RiskTable` for ``task`` with ``L`` replaced by each of ``L_values``.

    The task's law of :math:`J_0` must be uniform (``probs=None``); extra keyword arguments go
    to :func:`best_oracle_lambdas`.
    """
    task = check_task(task)
    if task.probs is not None:
        raise ValueError(
            "risk_table varies L, so the task must have a uniform law (probs=None)"
        )
    L_values = np.asarray([int(L) for L in L_values])
    lam_values = np.asarray(lam_values, dtype=np.float64).reshape(-1)
    if lam_values.size:
        oracle = oracle_risk_lengths(
            lam_values[:, None], L_values[None, :], task
        )
    else:
        oracle = np.empty((0, L_values.size))
    best_lam, best = best_oracle_lambdas(task, L_values, **best_kwargs)
    linear = np.array([linear_risk(task.replace(L=int(L))) for L in L_values])
    return RiskTable(
        L=L_values,
        lam=lam_values,
        oracle=oracle,
        best_lam=best_lam,
        best=best,
        linear=linear,
        null=task.gamma**2 + task.eps**2,
        bound=task.eps**2,
        d=task.d,
    )
