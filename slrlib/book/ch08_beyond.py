r"""Beyond the invariant manifold (chapter 8): PGD from a uniform initialisation, and the role of λ.

Appendix E.2 of Marion et al. (2025) reports what projected gradient descent does when it
starts off the manifold :math:`\mathcal M` of eq. (11), for a decreasing and for constant
inverse temperatures, and leaves the theory open. This module holds the computations the
book uses to explain those observations; most are our derivations, not the paper's:

* :func:`classify_outcomes` — where a PGD run ended: recovery of :math:`\pm(k^\star, v^\star)`,
  stalled on :math:`\mathcal M`, the *swapped* point, or elsewhere off :math:`\mathcal M`;
* :func:`noise_floor` and :func:`relevant_margin` — the part of the risk that no
  :math:`(k, v)` can remove, and the relevant token's pre-activation inside erf;
* :func:`swapped_point` — the critical point :math:`k = \pm v^\star`,
  :math:`v = \pm(\theta^\star k^\star + \dots)` in closed form;
* second-order analysis on the sphere product: :func:`~slrlib.core.geometry.overlap_coordinates`,
  :func:`sphere_derivatives` (Riemannian gradient and Hessian), :func:`refine_critical_point`
  (Riemannian Newton), :func:`oracle_plane_hessian` and :func:`critical_lambda` (the
  inverse temperature above which the oracle is a saddle of the full risk), and
  :func:`tilted_branch` (the minimum off :math:`\mathcal M` that replaces it);
* :func:`transverse_multipliers` — the linearised PGD step across :math:`\mathcal M`: whether
  nearby iterates are attracted to :math:`\mathcal M`, repelled, or flip sides every step;
* :func:`lambda_sweep` — many PGD runs for a grid of constant λ, same initialisations.

**Coordinates.** The risk depends on :math:`(k, v)` only through the five overlaps
:math:`(\kappa, \nu, \theta, \eta, \rho)` (Theorem 1), and :math:`k^\star, v^\star, k, v` span
at most four dimensions. So every second-order question can be asked on
:math:`\mathbb S^{m-1}\times\mathbb S^{m-1}` with :math:`m \le 4` and the orthonormal basis
:math:`e_1 = k^\star`, :math:`e_2 = v^\star`, :math:`e_3, e_4`: a point is a pair of unit
vectors ``(k, v)`` of :math:`\mathbb R^m` and

.. math:: \kappa = k_1,\quad \eta = k_2,\quad \theta = v_1,\quad \nu = v_2,\quad \rho = \langle k, v\rangle .
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from scipy import optimize

from slrlib.core.geometry import uniform_directions, overlap_coordinates
from slrlib.validation import (
    as_float_array,
    check_key,
    check_positive_int,
    check_real_scalar,
)
from slrlib.training.pgd import PGDResult, pgd
from slrlib.core.gaussian import zeta
from slrlib.core.predictors import erf_attention
from slrlib.core.montecarlo import monte_carlo_mean
from slrlib.core.risk import (
    oracle_risk,
    population_risk,
    risk_kernel,
    risk_from_overlaps,
)
from slrlib.core.task import SLRTask, check_task

__all__ = [
    "OUTCOMES",
    "OVERLAP_NAMES",
    "TILTED_GUESS",
    "CriticalPoint",
    "SphereDerivatives",
    "SwappedPoint",
    "HeadStart",
    "Sweep",
    "TiltedBranch",
    "TransverseMultipliers",
    "classify_outcomes",
    "critical_lambda",
    "final_overlaps",
    "head_start_swap_rates",
    "lambda_sweep",
    "monte_carlo_risks",
    "noise_floor",
    "oracle_plane_hessian",
    "oracle_transverse_eigenvalue",
    "outcome_counts",
    "overlaps_of",
    "refine_critical_point",
    "relevant_margin",
    "sphere_derivatives",
    "swapped_point",
    "tilted_branch",
    "transverse_multipliers",
]

#: Outcome labels of :func:`classify_outcomes`, in the order of their integer codes.
OUTCOMES = ("recovered", "stalled on M", "swapped", "off M")
#: The overlaps, in the order used throughout (Theorem 1).
OVERLAP_NAMES = ("kappa", "nu", "theta", "eta", "rho")


# --------------------------------------------------------------------------- outcomes
def final_overlaps(result: PGDResult) -> dict[str, np.ndarray]:
    """The last logged overlaps and distance to :math:`\\mathcal M` of every run (NumPy arrays)."""
    out = {
        name: np.asarray(getattr(result, name))[..., -1]
        for name in OVERLAP_NAMES
    }
    out["distance"] = np.asarray(result.distance)[..., -1]
    return out


def classify_outcomes(result: PGDResult, tol: float = 0.05) -> np.ndarray:
    r"""Where each run of a PGD result ended, as integer codes into :data:`OUTCOMES`.

    With the final overlaps and :math:`\operatorname{dist} = \sqrt{\theta^2+\eta^2+\rho^2}`:

    * 0, ``"recovered"``: :math:`|\kappa| > 1 - \text{tol}` and :math:`|\nu| > 1 - \text{tol}`
      (the criterion of :func:`slrlib.experiments.recovered`);
    * 1, ``"stalled on M"``: not recovered, :math:`\operatorname{dist} < \text{tol}` and
      :math:`|\nu| > 1 - \text{tol}`: the value is found, :math:`|\kappa|` is still short of 1;
    * 2, ``"swapped"``: :math:`|\eta| > 1 - \text{tol}`, :math:`|\kappa| < \text{tol}`,
      :math:`|\nu| < \text{tol}`: the key has found :math:`v^\star` (see :func:`swapped_point`);
    * 3, ``"off M"``: anything else (for a constant :math:`\lambda > \lambda_c`, the tilted
      minimum of :func:`tilted_branch`, or a run still on its way).
    """
    tol = check_real_scalar(tol, "tol", minimum=0.0, strict=True)
    if tol >= 0.5:
        raise ValueError(f"tol must be in (0, 0.5), got {tol}")
    return _classify(final_overlaps(result), tol)


def _classify(o: dict, tol: float) -> np.ndarray:
    kappa, nu, eta = np.abs(o["kappa"]), np.abs(o["nu"]), np.abs(o["eta"])
    labels = np.full(kappa.shape, 3, dtype=int)
    swapped = (eta > 1 - tol) & (kappa < tol) & (nu < tol)
    stalled = (o["distance"] < tol) & (nu > 1 - tol)
    recovered = (kappa > 1 - tol) & (nu > 1 - tol)
    labels[swapped] = 2
    labels[stalled] = 1
    labels[recovered] = 0
    return labels


def outcome_counts(labels) -> dict[str, int]:
    """How many runs have each outcome: ``{name: count}`` over :data:`OUTCOMES`."""
    labels = np.asarray(labels)
    return {name: int(np.sum(labels == i)) for i, name in enumerate(OUTCOMES)}


class HeadStart(NamedTuple):
    r"""Swap frequencies of the runs whose key starts closer to :math:`v^\star` than the value
    (:math:`|\eta_0| > |\nu_0|`, "ahead") and of the others ("behind"), see :func:`head_start_swap_rates`."""

    n_ahead: int
    swapped_ahead: int
    n_behind: int
    swapped_behind: int
    rate_ahead: float
    rate_behind: float
    ratio: float  # rate_ahead / rate_behind (inf when no run behind swaps)
    z: float  # two-proportion z-statistic of rate_ahead - rate_behind (pooled standard error)


def head_start_swap_rates(labels, eta0, nu0) -> HeadStart:
    r"""How often runs swap, split by the key's head start :math:`|\eta_0| > |\nu_0|`.

    Parameters
    ----------
    labels : array_like of int, shape (runs,)
        Outcome codes of :func:`classify_outcomes` (2 = swapped).
    eta0, nu0 : array_like, shape (runs,)
        Initial overlaps :math:`\eta_0 = \langle k_0, v^\star\rangle` and
        :math:`\nu_0 = \langle v_0, v^\star\rangle`.

    Returns
    -------
    HeadStart
        Counts and frequencies in the two groups, their ratio, and the two-proportion
        z-statistic :math:`z = (\hat p_1 - \hat p_2)/\sqrt{\hat p(1-\hat p)(1/n_1 + 1/n_2)}`
        with the pooled frequency :math:`\hat p` (about standard normal when both groups swap
        equally often).

    Raises
    ------
    ValueError
        When the arrays do not have the same length, or one group is empty.
    """
    labels = np.asarray(labels)
    eta0 = np.abs(np.asarray(eta0, dtype=float))
    nu0 = np.abs(np.asarray(nu0, dtype=float))
    if (
        labels.ndim != 1
        or eta0.shape != labels.shape
        or nu0.shape != labels.shape
    ):
        raise ValueError(
            f"labels, eta0 and nu0 must be 1-d of the same length, got shapes "
            f"{labels.shape}, {eta0.shape}, {nu0.shape}"
        )
    ahead = eta0 > nu0
    swapped = labels == 2
    n1, n2 = int(ahead.sum()), int((~ahead).sum())
    if n1 == 0 or n2 == 0:
        raise ValueError(
            f"both groups must be non-empty, got {n1} runs ahead and {n2} behind"
        )
    s1, s2 = int(swapped[ahead].sum()), int(swapped[~ahead].sum())
    p1, p2 = s1 / n1, s2 / n2
    pooled = (s1 + s2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    z = (p1 - p2) / se if se > 0 else 0.0
    ratio = p1 / p2 if p2 > 0 else math.inf
    return HeadStart(n1, s1, n2, s2, p1, p2, ratio, z)


# --------------------------------------------------------------------------- risk pieces
def noise_floor(lam, task: SLRTask):
    r"""The noise tokens' own contribution to the risk, :math:`(L-1)\,\zeta(0, \lambda)`.

    It is the noise tokens' term of Lemma 6: on the manifold :math:`\mathcal M`
    (:math:`k \perp v`, both orthogonal to the other task direction) it does not depend on
    :math:`(k, v)`, so every predictor on :math:`\mathcal M` pays it, the oracle included. Off
    :math:`\mathcal M` the noise tokens' term depends on :math:`\langle k, v\rangle` (Theorem 1). At small :math:`\lambda` it is
    about :math:`4\lambda^2(L-1)/\pi`. ``lam`` may be an array.
    """
    task = check_task(task)
    lam = as_float_array(lam, "lam")
    if np.any(np.asarray(lam) < 0) or not np.all(np.isfinite(np.asarray(lam))):
        raise ValueError(f"lam must be finite and >= 0, got {np.asarray(lam)}")
    return np.asarray((task.L - 1) * zeta(jnp.zeros_like(lam), lam))


def relevant_margin(kappa, lam, task: SLRTask):
    r"""The relevant token's scaled pre-activation :math:`a = \lambda q\kappa/\sqrt{1 + 2\lambda^2\gamma^2}`.

    :math:`q = \sqrt{d/2}`. It is the argument of erf in the manifold risk (Lemma 6):
    :math:`\mathbb E\operatorname{erf}(\lambda X_{J_0}^\top k) = \operatorname{erf}(a)` on
    :math:`\mathcal M`. Once :math:`|a|` is a few units erf saturates on the relevant token and
    the gradient in :math:`\kappa` carries a factor :math:`\operatorname{erf}'(a) \propto e^{-a^2}`.
    Arguments broadcast.
    """
    task = check_task(task)
    kappa = np.asarray(kappa, dtype=float)
    lam = np.asarray(lam, dtype=float)
    q = math.sqrt(task.d / 2.0)
    return lam * q * kappa / np.sqrt(1.0 + 2.0 * lam**2 * task.gamma**2)


# --------------------------------------------------------------------------- the swapped point
class SwappedPoint(NamedTuple):
    r"""The swapped critical point at one or several :math:`\lambda`: :math:`\theta^\star`, its risk,
    the unconstrained minimiser (before clipping to 1) and the distance to :math:`\mathcal M`."""

    theta: np.ndarray
    risk: np.ndarray
    theta_unclipped: np.ndarray
    distance: np.ndarray


def swapped_point(lam, task: SLRTask) -> SwappedPoint:
    r"""The critical point with :math:`k = v^\star` and :math:`v = \theta k^\star + \sqrt{1-\theta^2}\,u`
    (:math:`u \perp k^\star, v^\star`), that is :math:`\kappa = \nu = \rho = 0`, :math:`\eta = 1`.

    There (our derivation, from Theorem 1 with :math:`\kappa = \rho = 0`, :math:`\eta = 1`) the risk
    is a quadratic in :math:`\theta`,

    .. math::

        \mathcal R_\lambda = \varepsilon^2 + (L-1)\zeta(0,\lambda) + \gamma^2\big(1 + \zeta(0, \lambda\gamma)\big)
        - \frac{4\lambda\gamma^2 q}{\sqrt\pi\,\sqrt{1+2\lambda^2\gamma^2}}\,\theta + q^2\zeta(0,\lambda\gamma)\,\theta^2,

    minimised at :math:`\theta^\star = \dfrac{2\lambda\gamma^2}{\sqrt\pi\, q\sqrt{1+2\lambda^2\gamma^2}\,
    \zeta(0,\lambda\gamma)}` (about :math:`\sqrt\pi/(2\lambda q)` for small :math:`\lambda`), clipped
    to 1. The risk is evaluated with :func:`slrlib.risk_from_overlaps` at that :math:`\theta`.
    ``lam`` may be an array (> 0).
    """
    task = check_task(task)
    lam = np.asarray(as_float_array(lam, "lam"), dtype=float)
    if np.any(~np.isfinite(lam)) or np.any(lam <= 0):
        raise ValueError(f"lam must be finite and > 0, got {lam}")
    q = math.sqrt(task.d / 2.0)
    g2 = task.gamma**2
    z = np.asarray(zeta(jnp.zeros_like(lam), lam * task.gamma))
    theta_free = (
        2.0
        * lam
        * g2
        / (math.sqrt(math.pi) * q * np.sqrt(1.0 + 2.0 * lam**2 * g2) * z)
    )
    theta = np.minimum(theta_free, 1.0)
    zero = np.zeros_like(lam)
    risk = np.asarray(
        risk_from_overlaps(zero, zero, theta, zero + 1.0, zero, lam, task)
    )
    return SwappedPoint(theta, risk, theta_free, np.sqrt(1.0 + theta**2))


def monte_carlo_risks(
    k,
    v,
    k_star,
    v_star,
    lam,
    task: SLRTask,
    key,
    n_samples: int = 20_000,
    batch_size: int = 5_000,
) -> tuple[dict, dict]:
    r"""The risks of :math:`(k, v)` and of the oracle at one :math:`\lambda`, and their difference,
    by Monte Carlo on common sequences and in closed form (Theorem 1).

    Parameters
    ----------
    k, v, k_star, v_star : array_like, shape (d,)
        The point and the task's directions.
    lam : float
        The inverse temperature.
    task : SLRTask
    key : jax.Array
        Key of :func:`slrlib.core.montecarlo.monte_carlo_mean`.
    n_samples, batch_size : int
        Number of sequences and batch size.

    Returns
    -------
    estimates : dict of MonteCarloEstimate
        Keys ``"end"``, ``"oracle"``, ``"end - oracle"``: means of the squared errors of the erf
        predictor at :math:`(k, v)`, at :math:`(k^\star, v^\star)`, and of their difference on the
        same sequences (whose standard error is that of the difference).
    closed : dict of float
        The same three quantities from :func:`slrlib.core.risk.population_risk` and
        :func:`slrlib.core.risk.oracle_risk`.
    """
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)

    def stat(s):
        e_end = jnp.square(s.y - erf_attention(s.X, k, v, lam))
        e_orc = jnp.square(s.y - erf_attention(s.X, k_star, v_star, lam))
        return {"end": e_end, "oracle": e_orc, "end - oracle": e_end - e_orc}

    est = monte_carlo_mean(
        stat, task, k_star, v_star, key, n_samples, batch_size=batch_size
    )
    closed = {
        "end": float(population_risk(k, v, k_star, v_star, lam, task)),
        "oracle": float(oracle_risk(lam, task)),
    }
    closed["end - oracle"] = closed["end"] - closed["oracle"]
    return dict(est), closed


# --------------------------------------------------------------------------- sphere-product calculus
def overlaps_of(k, v) -> np.ndarray:
    """The overlaps ``(kappa, nu, theta, eta, rho)`` of coordinates ``(k, v)`` in the basis ``(k*, v*, ...)``."""
    k = np.asarray(k, dtype=float)
    v = np.asarray(v, dtype=float)
    return np.array([k[0], v[1], v[0], k[1], float(k @ v)])


def _coord_risk(x, lam, d, L, gamma, eps):
    m = x.shape[0] // 2
    k, v = x[:m], x[m:]
    return risk_kernel(
        k[0], v[1], v[0], k[1], jnp.dot(k, v), lam, d, L, gamma, eps
    )


_coord_grad = jax.jit(jax.grad(_coord_risk))
_coord_hess = jax.jit(jax.hessian(_coord_risk))


class SphereDerivatives(NamedTuple):
    r"""Riemannian gradient and Hessian of :math:`\mathcal R_\lambda` on :math:`\mathbb S^{m-1}\times\mathbb S^{m-1}`,
    in the orthonormal tangent basis ``basis`` (columns, shape (2m, 2m-2))."""

    gradient: np.ndarray
    hessian: np.ndarray
    basis: np.ndarray
    risk: float


def _tangent_basis(x: np.ndarray) -> np.ndarray:
    q, _ = np.linalg.qr(np.column_stack([x, np.eye(x.size)]))
    return q[:, 1 : x.size]


def _check_pair(k, v):
    k = np.asarray(k, dtype=float)
    v = np.asarray(v, dtype=float)
    if k.ndim != 1 or k.shape != v.shape or k.size < 2:
        raise ValueError(
            f"k and v must be vectors of the same length m >= 2, got shapes {k.shape} and {v.shape}"
        )
    for x, name in ((k, "k"), (v, "v")):
        if not np.all(np.isfinite(x)) or abs(np.linalg.norm(x) - 1.0) > 1e-8:
            raise ValueError(
                f"{name} must be a finite unit vector, got norm {np.linalg.norm(x)}"
            )
    return k, v


def sphere_derivatives(k, v, lam, task: SLRTask) -> SphereDerivatives:
    r"""Riemannian gradient and Hessian of the risk at ``(k, v)`` on the sphere product.

    ``k``, ``v``: unit vectors of :math:`\mathbb R^m` in the basis :math:`(k^\star, v^\star, \dots)`
    (module docstring). With :math:`g = \nabla f` and :math:`H = \nabla^2 f` the Euclidean
    derivatives of :math:`f(k, v) = \mathcal R_\lambda` in :math:`\mathbb R^{2m}`, the Riemannian
    Hessian of the product of unit spheres is
    :math:`P\big(H - \operatorname{diag}(\langle k, g_k\rangle I_m, \langle v, g_v\rangle I_m)\big)P`
    with :math:`P` the projection on the tangent space (Boumal, 2023, §7.7 and §5.5). Both are
    returned in an orthonormal basis of the tangent space, so the Hessian's eigenvalues are
    the curvatures along unit-speed geodesics.
    """
    task = check_task(task)
    k, v = _check_pair(k, v)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    m = k.size
    x = jnp.asarray(np.concatenate([k, v]))
    args = (lam, float(task.d), float(task.L), task.gamma, task.eps)
    g = np.asarray(_coord_grad(x, *args))
    H = np.asarray(_coord_hess(x, *args))
    B = np.zeros((2 * m, 2 * m - 2))
    B[:m, : m - 1] = _tangent_basis(k)
    B[m:, m - 1 :] = _tangent_basis(v)
    corr = np.diag(np.r_[np.full(m, k @ g[:m]), np.full(m, v @ g[m:])])
    hess = B.T @ (H - corr) @ B
    return SphereDerivatives(
        B.T @ g, 0.5 * (hess + hess.T), B, float(_coord_risk(x, *args))
    )


class CriticalPoint(NamedTuple):
    """A critical point of the risk on the sphere product, found by :func:`refine_critical_point`."""

    k: np.ndarray
    v: np.ndarray
    overlaps: np.ndarray  # (kappa, nu, theta, eta, rho)
    risk: float
    gradient_norm: float
    hessian_eigenvalues: np.ndarray  # ascending
    kind: str  # "minimum", "saddle" or "maximum" (flat directions allowed)


def _kind(eigs: np.ndarray, rel: float = 1e-8) -> str:
    scale = max(float(np.max(np.abs(eigs))), 1e-300)
    neg = bool(np.any(eigs < -rel * scale))
    pos = bool(np.any(eigs > rel * scale))
    if neg and pos:
        return "saddle"
    return "maximum" if neg else "minimum"


def refine_critical_point(
    k,
    v,
    lam,
    task: SLRTask,
    *,
    n_iter: int = 60,
    tol: float = 1e-12,
    max_step: float = 0.2,
) -> CriticalPoint:
    r"""Riemannian Newton's method on the sphere product from ``(k, v)`` (coordinates as in
    :func:`sphere_derivatives`), retraction by normalisation.

    Each step solves :math:`\operatorname{Hess}\,\xi = -\operatorname{grad}` in the tangent
    space with the pseudo-inverse (eigenvalues below :math:`10^{-10}` of the largest are
    dropped: flat directions from symmetries, or from erf's saturation), the step's norm
    capped at ``max_step``. Stops when the gradient's norm is below ``tol``. Newton finds
    critical points of any kind: ``kind`` says which (from the Hessian's eigenvalues).
    """
    task = check_task(task)
    k, v = _check_pair(k, v)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    n_iter = check_positive_int(n_iter, "n_iter")
    m = k.size
    for _ in range(n_iter):
        der = sphere_derivatives(k, v, lam, task)
        if np.linalg.norm(der.gradient) < tol:
            break
        w, V = np.linalg.eigh(der.hessian)
        keep = np.abs(w) > 1e-10 * np.max(np.abs(w))
        step = -V[:, keep] @ ((V[:, keep].T @ der.gradient) / w[keep])
        norm = np.linalg.norm(step)
        if norm > max_step:
            step *= max_step / norm
        xi = der.basis @ step
        k = (k + xi[:m]) / np.linalg.norm(k + xi[:m])
        v = (v + xi[m:]) / np.linalg.norm(v + xi[m:])
    der = sphere_derivatives(k, v, lam, task)
    eigs = np.linalg.eigvalsh(der.hessian)
    return CriticalPoint(
        k,
        v,
        overlaps_of(k, v),
        der.risk,
        float(np.linalg.norm(der.gradient)),
        eigs,
        _kind(eigs),
    )


# --------------------------------------------------------------------------- stability of M
@jax.jit
def _pgd_map(x, lam, alpha, d, L, gamma, eps):
    """One step of Definition 1 (eq. 10) on coordinates x = (k, v) of the sphere product."""
    m = x.shape[0] // 2
    g = jax.grad(_coord_risk)(x, lam, d, L, gamma, eps)
    k, v = x[:m], x[m:]
    gk = g[:m] - jnp.dot(k, g[:m]) * k
    gv = g[m:] - jnp.dot(v, g[m:]) * v
    k2, v2 = k - alpha * gk, v - alpha * gv
    return jnp.concatenate(
        [k2 / jnp.linalg.norm(k2), v2 / jnp.linalg.norm(v2)]
    )


_pgd_map_jac = jax.jit(jax.jacfwd(_pgd_map))


class TransverseMultipliers(NamedTuple):
    r"""Linearisation of one PGD step at a point of :math:`\mathcal M`, across :math:`\mathcal M`."""

    transverse: (
        np.ndarray
    )  # eigenvalues of the normal block, by decreasing modulus
    leak: float  # norm of the part of DF mapping T M to the normal space (0: M is invariant)
    step: (
        float  # distance between the point and its image (0 at a fixed point)
    )


def _on_manifold_coords(kappa: float, nu: float):
    k = np.array([kappa, 0.0, math.sqrt(max(1.0 - kappa**2, 0.0)), 0.0])
    v = np.array([0.0, nu, 0.0, math.sqrt(max(1.0 - nu**2, 0.0))])
    return k, v


def _normal_basis(x: np.ndarray) -> np.ndarray:
    """Orthonormal normal vectors to M at x = (k, v) = ((κ, 0, a, 0), (0, ν, 0, c)): columns (8, 2 or 3)."""
    a, c = x[2], x[7]
    cols = [
        np.eye(8)[1],
        np.eye(8)[4],
    ]  # k towards v* (eta), v towards k* (theta)
    r = math.hypot(a, c)
    if (
        r > 1e-12
    ):  # k towards e4 and v towards e3 together (rho), orthogonal to the e3-e4 rotation
        n = np.zeros(8)
        n[3], n[6] = c / r, a / r
        cols.append(n)
    return np.column_stack(cols)


def transverse_multipliers(
    kappa, nu, lam, alpha, task: SLRTask
) -> TransverseMultipliers:
    r"""The multipliers of the PGD map (Definition 1) across :math:`\mathcal M` at the point with
    overlaps :math:`(\kappa, \nu, 0, 0, 0)`.

    In the coordinates of the module docstring the point is :math:`x = (k, v)` with
    :math:`k = (\kappa, 0, a, 0)`, :math:`v = (0, \nu, 0, c)`, :math:`a = \sqrt{1-\kappa^2}`,
    :math:`c = \sqrt{1-\nu^2}`; one step maps it to a point :math:`F(x)` of the same form
    (Lemma 4). The normal space of :math:`\mathcal M` is spanned by three unit vectors: :math:`k`
    towards :math:`v^\star` (:math:`\eta`), :math:`v` towards :math:`k^\star` (:math:`\theta`), and
    :math:`(k, v)` towards :math:`(c\,e_4, a\,e_3)/\sqrt{a^2 + c^2}` (:math:`\rho`); two when
    :math:`a = c = 0`. With :math:`N_x` and :math:`N_{F(x)}` these bases at :math:`x` and at
    :math:`F(x)` and :math:`DF` the Jacobian of one step (``jax.jacfwd``), the transverse
    multipliers are the eigenvalues of :math:`N_{F(x)}^\top DF\, N_x`: a small distance to
    :math:`\mathcal M` is multiplied by them at each step (exactly at a fixed point, where
    :math:`DF = I - \alpha\operatorname{Hess}`; "frozen-time" elsewhere, accurate when the
    point moves little, see ``step``). All of modulus < 1: :math:`\mathcal M` attracts nearby
    iterates; one > 1: it repels them; one < -1: they overshoot :math:`\mathcal M` and flip
    sides every step. ``leak`` is the norm of :math:`N_{F(x)}^\top DF` on :math:`T_x\mathcal M`,
    zero up to round-off because :math:`\mathcal M` is invariant.
    """
    task = check_task(task)
    vals = []
    for x, name in ((kappa, "kappa"), (nu, "nu")):
        x = check_real_scalar(x, name)
        if abs(x) > 1:
            raise ValueError(f"{name} must lie in [-1, 1], got {x}")
        vals.append(x)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    x = np.concatenate(_on_manifold_coords(*vals))
    args = (lam, alpha, float(task.d), float(task.L), task.gamma, task.eps)
    J = np.asarray(_pgd_map_jac(jnp.asarray(x), *args))
    y = np.asarray(_pgd_map(jnp.asarray(x), *args))
    n_in, n_out = _normal_basis(x), _normal_basis(y)
    if n_in.shape != n_out.shape:
        raise ValueError(
            "the step changed the dimension of the normal space: take a smaller alpha"
        )
    # projector on T_x M: tangent space of the sphere product minus the normal space
    P = np.eye(8)
    P[:4, :4] -= np.outer(x[:4], x[:4])
    P[4:, 4:] -= np.outer(x[4:], x[4:])
    P -= n_in @ n_in.T
    eig = np.linalg.eigvals(n_out.T @ J @ n_in)
    eig = np.real_if_close(eig[np.argsort(-np.abs(eig))])
    return TransverseMultipliers(
        eig,
        float(np.linalg.norm(n_out.T @ J @ P)),
        float(np.linalg.norm(y - x)),
    )


# --------------------------------------------------------------------------- stability of the oracle
def oracle_plane_hessian(lam, task: SLRTask) -> np.ndarray:
    r"""The Riemannian Hessian of :math:`\mathcal R_\lambda` at the oracle :math:`(k^\star, v^\star)`,
    restricted to the plane :math:`\operatorname{span}\{k^\star, v^\star\}`.

    Rotate :math:`k` by an angle :math:`a` towards :math:`v^\star` and :math:`v` by :math:`b` towards
    :math:`k^\star`: :math:`\kappa = \cos a`, :math:`\eta = \sin a`, :math:`\theta = \sin b`,
    :math:`\nu = \cos b`, :math:`\rho = \sin(a + b)`. These are unit-speed geodesics and the oracle
    is a critical point, so the Hessian of :math:`(a, b) \mapsto \mathcal R_\lambda` at 0 is the
    Riemannian Hessian on that plane. Moving :math:`(a, b)` leaves :math:`\mathcal M`
    (:math:`\eta, \theta, \rho \ne 0`): this block decides the *transverse* stability of the
    oracle. The other tangent directions give the curvatures
    :math:`-\partial_\kappa\mathcal R` and :math:`-\partial_\nu\mathcal R` (see the chapter).
    Returns an array of shape ``lam.shape + (2, 2)``.
    """
    task = check_task(task)
    lam = np.asarray(as_float_array(lam, "lam"), dtype=float)
    if np.any(~np.isfinite(lam)) or np.any(lam <= 0):
        raise ValueError(f"lam must be finite and > 0, got {lam}")
    e = np.eye(4)
    x = jnp.asarray(np.concatenate([e[0], e[1]]))  # k = k*, v = v*
    T = np.zeros((8, 2))
    T[1, 0] = 1.0  # k moves towards v*
    T[4, 1] = 1.0  # v moves towards k*
    out = np.empty(lam.shape + (2, 2))
    for idx, lam_i in np.ndenumerate(lam):
        args = (
            float(lam_i),
            float(task.d),
            float(task.L),
            task.gamma,
            task.eps,
        )
        g = np.asarray(_coord_grad(x, *args))
        H = np.asarray(_coord_hess(x, *args))
        corr = np.diag(
            np.r_[np.full(4, g[0]), np.full(4, g[5])]
        )  # <k, g_k>, <v, g_v>
        out[idx] = T.T @ (H - corr) @ T
    return out


def oracle_transverse_eigenvalue(lam, task: SLRTask) -> np.ndarray:
    """The smallest eigenvalue of :func:`oracle_plane_hessian` (negative: the oracle is a saddle)."""
    return np.linalg.eigvalsh(oracle_plane_hessian(lam, task))[..., 0]


def critical_lambda(task: SLRTask, lam_max: float = 10.0) -> float:
    r"""The smallest :math:`\lambda_c` at which :func:`oracle_transverse_eigenvalue` changes sign.

    For :math:`\lambda < \lambda_c` the oracle is a strict local minimum of the risk in the
    plane of :func:`oracle_plane_hessian`; above, a saddle. Scans a logarithmic grid of
    :math:`(10^{-3}, \text{lam\_max}]` for the first sign change, then refines it with Brent's
    method. Raises ``ValueError`` if there is none.
    """
    task = check_task(task)
    lam_max = check_real_scalar(lam_max, "lam_max", minimum=1e-3, strict=True)
    grid = np.geomspace(1e-3, lam_max, 120)
    eig = oracle_transverse_eigenvalue(grid, task)
    neg = np.flatnonzero(eig < 0)
    if neg.size == 0:
        raise ValueError(
            f"the oracle stays a local minimum for every lambda in (1e-3, {lam_max}]"
        )
    i = int(neg[0])
    if i == 0:
        raise ValueError("the oracle is already a saddle at lambda = 1e-3")
    f = lambda lam: float(
        oracle_transverse_eigenvalue(np.array([lam]), task)[0]
    )
    return float(optimize.brentq(f, grid[i - 1], grid[i], xtol=1e-13))


# --------------------------------------------------------------------------- the tilted minimum
#: Overlaps (κ, ν, θ, η, ρ) near the tilted minimum at λ = 1, d = 400, L = 10, γ² = 1/2 (from a
#: long PGD run), in the sign convention κ > 0: the starting point of :func:`tilted_branch`.
TILTED_GUESS = (0.243, 0.940, 0.342, -0.970, -0.829)


class TiltedBranch(NamedTuple):
    """The tilted minimum along a grid of λ (NaN where it does not exist)."""

    lam: np.ndarray
    overlaps: np.ndarray  # (n, 5): kappa, nu, theta, eta, rho
    risk: np.ndarray
    min_eigenvalue: np.ndarray
    gradient_norm: np.ndarray

    @property
    def exists(self) -> np.ndarray:
        return np.isfinite(self.risk)

    @property
    def distance(self) -> np.ndarray:
        """Distance of the point to :math:`\\mathcal M`."""
        return np.sqrt(np.sum(self.overlaps[:, 2:] ** 2, axis=1))


def tilted_branch(
    lams,
    task: SLRTask,
    *,
    start_lam: float = 1.0,
    guess=TILTED_GUESS,
    max_dlam: float = 0.002,
) -> TiltedBranch:
    r"""Follow the minimum of the risk off :math:`\mathcal M` that exists for :math:`\lambda > \lambda_c`.

    Newton (:func:`refine_critical_point`) from ``guess`` (overlaps, embedded by
    :func:`~slrlib.core.geometry.overlap_coordinates`) at ``start_lam``, then numerical continuation in :math:`\lambda`, up to
    the largest and down to the smallest value of ``lams``, in steps of at most ``max_dlam``.
    Going down, the branch merges with the oracle at :math:`\lambda_c` (a pitchfork
    bifurcation): once Newton lands on :math:`|\kappa| > 1 - 10^{-6}` the branch is over and the
    remaining (smaller) :math:`\lambda` get NaN. Each point reported is checked to be a
    critical point (gradient norm below 1e-9), else NaN.
    """
    task = check_task(task)
    lams = np.asarray(lams, dtype=float)
    if (
        lams.ndim != 1
        or lams.size == 0
        or np.any(~np.isfinite(lams))
        or np.any(lams <= 0)
    ):
        raise ValueError(
            f"lams must be a non-empty 1-d array of positive numbers, got {lams}"
        )
    start_lam = check_real_scalar(
        start_lam, "start_lam", minimum=0.0, strict=True
    )
    max_dlam = check_real_scalar(
        max_dlam, "max_dlam", minimum=0.0, strict=True
    )
    k, v = overlap_coordinates(*guess, project=True)
    cp = refine_critical_point(k, v, start_lam, task)
    if cp.gradient_norm > 1e-9 or abs(cp.overlaps[0]) > 1 - 1e-6:
        raise ValueError(
            f"no tilted critical point found from guess {guess} at lambda = {start_lam}"
        )

    n = lams.size
    out = np.full((n, 5), np.nan)
    risk = np.full(n, np.nan)
    mineig = np.full(n, np.nan)
    gnorm = np.full(n, np.nan)

    def walk(targets, cp):
        lam_now = start_lam
        alive = True
        for i in targets:
            if not alive:
                continue
            target = lams[i]
            n_sub = max(1, math.ceil(abs(target - lam_now) / max_dlam))
            for lam_sub in np.linspace(lam_now, target, n_sub + 1)[1:]:
                cp = refine_critical_point(cp.k, cp.v, float(lam_sub), task)
                if abs(cp.overlaps[0]) > 1 - 1e-6 or cp.gradient_norm > 1e-9:
                    alive = False
                    break
            lam_now = target
            if alive:
                sign = 1.0 if cp.overlaps[0] >= 0 else -1.0
                o = cp.overlaps.copy()
                o[[0, 3]] *= (
                    sign  # (k, v) -> (-k, -v) flips kappa, eta, nu, theta
                )
                o[[1, 2]] *= sign
                out[i], risk[i] = o, cp.risk
                mineig[i], gnorm[i] = (
                    cp.hessian_eigenvalues[0],
                    cp.gradient_norm,
                )

    order = np.argsort(lams)
    walk([i for i in order if lams[i] >= start_lam], cp)
    walk([i for i in order[::-1] if lams[i] < start_lam], cp)
    return TiltedBranch(lams, out, risk, mineig, gnorm)


# --------------------------------------------------------------------------- batches over λ
class Sweep(NamedTuple):
    r"""PGD runs from the same initialisations for each constant :math:`\lambda` of a grid.

    ``initial`` and ``final`` map each overlap name (and ``"distance"``) to arrays: initial of
    shape (runs,), final of shape (n_lam, runs). ``excess_risk`` (n_lam, runs) is the final
    :math:`\mathcal R_\lambda - \varepsilon^2`; ``labels`` (n_lam, runs) the codes of
    :func:`classify_outcomes`.
    """

    lams: np.ndarray
    alpha: float
    n_steps: int
    initial: dict
    final: dict
    excess_risk: np.ndarray
    labels: np.ndarray
    seconds: float

    def fractions(self) -> np.ndarray:
        """Fraction of runs with each outcome, shape (n_lam, len(OUTCOMES))."""
        return np.stack(
            [(self.labels == i).mean(axis=1) for i in range(len(OUTCOMES))],
            axis=1,
        )


def lambda_sweep(
    lams: Sequence[float],
    task: SLRTask,
    key,
    *,
    n_runs: int,
    alpha: float,
    n_steps: int,
    tol: float = 0.05,
) -> Sweep:
    r"""Run PGD (Definition 1, constant :math:`\lambda`) for each value of ``lams`` from the *same*
    ``n_runs`` uniform initialisations, and classify where each run ends.

    ``key`` draws :math:`(k^\star, v^\star)` then the initialisations, as
    :func:`slrlib.experiments.run_pgd_experiment` does. Each :math:`\lambda` is one call of
    :func:`slrlib.training.pgd.pgd` (exact gradients, every step computed); only the first and
    last steps are kept. The cost is about ``len(lams) * n_runs * n_steps`` run-steps.
    """
    task = check_task(task)
    key = check_key(key)
    lams = np.asarray(lams, dtype=float)
    if (
        lams.ndim != 1
        or lams.size == 0
        or np.any(~np.isfinite(lams))
        or np.any(lams <= 0)
    ):
        raise ValueError(
            f"lams must be a non-empty 1-d sequence of positive numbers, got {lams}"
        )
    n_runs = check_positive_int(n_runs, "n_runs")
    n_steps = check_positive_int(n_steps, "n_steps")
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    start = time.perf_counter()
    star_key, init_key = jax.random.split(key)
    k_star, v_star = task.oracle_directions(star_key)
    k0, v0 = uniform_directions(init_key, task.d, (n_runs,))
    final = {name: [] for name in (*OVERLAP_NAMES, "distance")}
    excess, initial = [], None
    for lam in lams:  # one compilation for all λ: the loop's inputs are traced
        res = pgd(
            k0,
            v0,
            k_star,
            v_star,
            task,
            lam=float(lam),
            alpha=alpha,
            n_steps=n_steps,
            log_every=n_steps,
        )
        if initial is None:
            initial = {
                name: np.asarray(getattr(res, name))[:, 0]
                for name in (*OVERLAP_NAMES, "distance")
            }
        for name, value in final_overlaps(res).items():
            final[name].append(value)
        excess.append(np.asarray(res.risk)[:, -1] - task.eps**2)
    final = {name: np.stack(vals) for name, vals in final.items()}
    excess = np.stack(excess)
    labels = _classify(final, tol)
    return Sweep(
        lams,
        alpha,
        n_steps,
        initial,
        final,
        excess,
        labels,
        time.perf_counter() - start,
    )
