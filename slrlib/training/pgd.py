r"""Projected gradient descent on the closed-form risk (Section 5 of Marion et al., 2025).

* :func:`pgd` — Definition 1 (eq. 10): Riemannian gradient step on each sphere, then
  projection back onto it, with *exact* gradients of the closed form of Theorem 1, many
  runs at once, every step computed; its loop is :func:`pgd_in_span`, which takes any risk of
  the five overlaps (chapter 16's extended closed form uses it too);
* :func:`pgd_dense` — the same iteration written literally in :math:`\mathbb R^d` (slow; the
  reference that :func:`pgd` is tested against);
* initialisations: see :mod:`slrlib.core.geometry` (:func:`~slrlib.core.geometry.uniform_directions`,
  :func:`~slrlib.core.geometry.manifold_directions` on the invariant manifold :math:`\mathcal M` of eq. 11);
* the reduced dynamics on :math:`\mathcal M`: :func:`manifold_risk_grad`,
  :func:`reduced_map` (Lemma 7, eqs. 12–13), :func:`reduced_pgd`;
* the fixed points of (14) found numerically (:func:`stationary_points`, Proposition 9),
  the Hessians of the manifold risk (:func:`manifold_hessian`,
  :func:`riemannian_hessian`, Proposition 10) and the Jacobian of :math:`F`
  (:func:`reduced_jacobian`, Proposition 12); :func:`classify_limits` for Proposition 13.

**Why it is fast and exact.** The Euclidean gradients are
:math:`\nabla_k\mathcal R = \partial_\kappa\mathcal R\,k^\star + \partial_\eta\mathcal R\,v^\star
+ \partial_\rho\mathcal R\,v` and :math:`\nabla_v\mathcal R = \partial_\nu\mathcal R\,v^\star
+ \partial_\theta\mathcal R\,k^\star + \partial_\rho\mathcal R\,k`, so every iterate stays in
:math:`\operatorname{span}\{k^\star, v^\star, k_0, v_0\}`, of dimension at most 4
(our observation). :func:`pgd` computes an orthonormal basis of that span once per run (a QR
factorisation) and iterates the coordinates: the arithmetic is the same as in
:math:`\mathbb R^d` (no approximation), the cost of a step does not depend on :math:`d`,
and all runs advance together inside one compiled loop (``jax.lax.fori_loop``).
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable, Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import erf, erfc
from jax.typing import ArrayLike
from scipy import optimize

from slrlib.validation import (
    as_float_array,
    numpy_record,
    check_finite,
    check_positive_int,
    check_real_scalar,
    is_concrete,
)
from slrlib.core.gaussian import erf_prime, zeta_dt
from slrlib.core.risk import risk_kernel, manifold_risk, overlaps
from slrlib.core.task import SLRTask, check_directions, check_task

__all__ = [
    "SCHEDULES",
    "DIVERGENCE_RISE",
    "DIVERGENCE_STEP",
    "reduced_map_kernel",
    "PGDResult",
    "inverse_temperature",
    "pgd",
    "pgd_in_span",
    "pgd_dense",
    "distance_to_manifold",
    "manifold_risk_grad",
    "reduced_map",
    "reduced_pgd",
    "ReducedResult",
    "stationary_points",
    "manifold_hessian",
    "riemannian_hessian",
    "reduced_jacobian",
    "FixedPoint",
    "classify_hessian",
    "fixed_point_table",
    "classify_limits",
]

#: Inverse-temperature schedules: ``"constant"`` (:math:`\lambda_t = \lambda`) and
#: ``"paper"`` (:math:`\lambda_t = \lambda_0 / (1 + 10^{-4} t)`, Appendix E.2).
SCHEDULES = ("constant", "paper")
_PAPER_DECAY = 1e-4

#: A PGD run is flagged as diverged (:attr:`PGDResult.diverged`) when its logged risk rises above
#: this factor times its value at step 0.
DIVERGENCE_RISE = 10.0
#: ... or when its next step is this long: :math:`\alpha\|(I - kk^\top)\nabla_k\mathcal R\|`
#: (or the same for :math:`v`) at the last iterate, the tangent step before the projection.
DIVERGENCE_STEP = 1.0


# --------------------------------------------------------------------------- validation
def _check_schedule(schedule) -> str:
    if schedule not in SCHEDULES:
        raise ValueError(
            f"schedule must be one of {SCHEDULES}, got {schedule!r}"
        )
    return schedule


def _check_steps(n_steps, log_every) -> tuple[int, int]:
    n_steps = check_positive_int(n_steps, "n_steps")
    log_every = check_positive_int(log_every, "log_every")
    if log_every > n_steps or n_steps % log_every:
        raise ValueError(
            f"log_every must divide n_steps (1 <= log_every <= n_steps = {n_steps}, "
            f"n_steps % log_every == 0), got log_every = {log_every}"
        )
    return n_steps, log_every


def _check_point(x, name) -> float:
    """One coordinate of one point of the square [-1, 1]^2, as a float."""
    x = _check_interval(x, name)
    if np.ndim(x) != 0:
        raise ValueError(
            f"{name} must be a scalar (one point), got shape {np.shape(x)}"
        )
    return float(x)


def _check_tol(tol) -> float:
    return check_real_scalar(tol, "tol", minimum=0.0, strict=True)


def _check_interval(x, name):
    x = as_float_array(x, name)
    check_finite(x, name)
    if is_concrete(x) and not bool(
        np.all(np.abs(np.asarray(x)) <= 1.0 + 1e-12)
    ):
        raise ValueError(f"{name} must lie in [-1, 1], got {np.asarray(x)}")
    return x


def inverse_temperature(
    lam: float,
    steps: ArrayLike,
    schedule: Literal["constant", "paper"] = "constant",
) -> np.ndarray:
    r"""The inverse temperature :math:`\lambda_t` used for the step from ``t`` to ``t + 1``.

    ``"constant"``: :math:`\lambda_t = \lambda`; ``"paper"``:
    :math:`\lambda_t = \lambda_0/(1 + 10^{-4} t)`, with :math:`t = 0` for the first step
    (Appendix E.2).

    Parameters
    ----------
    lam : float
        :math:`\lambda` (:math:`\lambda_0` for ``"paper"``), ``> 0``.
    steps : array_like
        Step indices ``t >= 0``; may be an array.
    schedule : {"constant", "paper"}
        One of :data:`SCHEDULES`.

    Returns
    -------
    numpy.ndarray
        :math:`\lambda_t`, of the shape of ``steps``.

    Raises
    ------
    ValueError
        When ``schedule`` is unknown, ``lam`` is not a real number ``> 0``, or ``steps`` are not
        finite and ``>= 0``.
    """
    _check_schedule(schedule)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    try:
        steps = np.asarray(steps, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"steps must be an array of step indices >= 0, got {steps!r}"
        ) from None
    if not np.all(np.isfinite(steps)) or np.any(steps < 0):
        raise ValueError(f"steps must be finite and >= 0, got {steps}")
    return np.asarray(_lam_t(lam, jnp.asarray(steps, dtype=float), schedule))


def _lam_t(lam, t, schedule):
    return lam / (1.0 + _decay(schedule) * t)


# --------------------------------------------------------------------------- initialisations
def distance_to_manifold(
    theta: ArrayLike, eta: ArrayLike, rho: ArrayLike
) -> jax.Array:
    r"""Distance to :math:`\mathcal M` as the paper plots it: :math:`\sqrt{\theta^2 + \eta^2 + \rho^2}`.

    Parameters
    ----------
    theta, eta, rho : array_like
        The overlaps that vanish on :math:`\mathcal M`; they broadcast together.

    Returns
    -------
    jax.Array
        The distance, elementwise.
    """
    return jnp.sqrt(jnp.square(theta) + jnp.square(eta) + jnp.square(rho))


# --------------------------------------------------------------------------- PGD
class PGDResult(NamedTuple):
    r"""Logged trajectory of :func:`pgd` (or :func:`pgd_dense`).

    ``steps`` (n_log,) are the logged steps :math:`0, \Delta, 2\Delta, \dots, n` (with
    :math:`\Delta` = ``log_every``, :math:`n` = ``n_steps``) and ``lam`` (n_log,) the
    inverse temperature :math:`\lambda_t` at those steps. The overlaps ``kappa, nu, theta,
    eta, rho``, the ``risk`` :math:`\mathcal R_{\lambda_t}(k_t, v_t)` and the ``distance`` to
    :math:`\mathcal M` have shape ``(*batch, n_log)``: last axis = logged steps. ``k``, ``v``
    are the final iterates, shape ``(*batch, d)``.

    Notes
    -----
    *Two oracles.* erf is odd, so :math:`(k, v)` and :math:`(-k, -v)` give the same predictor
    and the same risk: a run that ends at :math:`\kappa = \nu = -1` has recovered the oracle
    as well as one at :math:`\kappa = \nu = 1` (Theorem 5 allows either limit; the book's
    chapter 7).

    *The swapped point.* Started off the manifold (``uniform_directions``), a run can end with
    the roles exchanged: :math:`k \approx \pm v^\star` and :math:`v` turned towards
    :math:`k^\star`, so :math:`\kappa \approx \nu \approx 0` while :math:`|\eta| \approx 1`.
    It is a critical point of the population risk whose risk is close to the oracle's at small
    :math:`\lambda`, below it at some parameters (the proposition "the swapped critical point"
    and Figure 7(b), chapter 8 of the book).

    *Testing recovery.* :func:`slrlib.experiments.descent.recovered` (also
    ``slrlib.experiments.recovered``) says which runs end with :math:`|\kappa| > 1 - \text{tol}`
    and :math:`|\nu| > 1 - \text{tol}` at the last logged step (``result.kappa[..., -1]``,
    ``result.nu[..., -1]``); the sign of :math:`\kappa\nu` (positive at both oracles) tells
    them from a run that found :math:`k^\star` with the wrong sign of :math:`v^\star`.

    *Divergence.* ``diverged`` (shape ``batch``, bool) flags the runs whose step size was too
    large for the iteration to follow the gradient (see :data:`DIVERGENCE_RISE` and
    :data:`DIVERGENCE_STEP`): their overlaps are the end of an erratic walk on the spheres, not
    the limit of gradient descent. A run is flagged when

    * its logged risk rose above :data:`DIVERGENCE_RISE` (= 10) times its value at step 0. Below
      the stability limit a gradient step does not increase the risk (the descent lemma); at the
      paper's settings a run rises at most 2.5 times, briefly, in its first steps (1 uniform
      start in 2000 at Figure 4(a)'s), while 2.5 times Figure 4(a)'s step size makes every run
      rise 30 to 60 times; or
    * the step it would take next is long: :math:`\alpha\|(I - kk^\top)\nabla_k\mathcal R\| >`
      :data:`DIVERGENCE_STEP` (= 1), or the same for :math:`v`, at the last iterate. The step,
      before the projection back onto the sphere, is then longer than the unit vector it moves
      (it turns it by more than 45°); a converging run's steps shrink to 0 (at the paper's step
      sizes they are below 0.06). This catches the runs that jump back and forth between two
      points (huge ``alpha``), whose risk, logged every even number of steps, looks flat.

    ``False`` means not detected, not "converged". Non-finite values raise a
    ``FloatingPointError`` instead. ``None`` in records built by hand (e.g. from SGD).
    """

    steps: np.ndarray
    lam: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    theta: np.ndarray
    eta: np.ndarray
    rho: np.ndarray
    risk: np.ndarray
    distance: np.ndarray
    k: np.ndarray
    v: np.ndarray
    diverged: np.ndarray | None = None


def _check_pgd_inputs(
    k0, v0, k_star, v_star, task, lam, alpha, n_steps, log_every, schedule
):
    task = check_task(task)
    k0 = task.check_parameter_vector(k0, "k0")
    v0 = task.check_parameter_vector(v0, "v0")
    k_star, v_star = check_directions(k_star, v_star, task.d, batched=True)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    n_steps, log_every = _check_steps(n_steps, log_every)
    schedule = _check_schedule(schedule)
    try:
        batch = jnp.broadcast_shapes(
            k0.shape[:-1], v0.shape[:-1], k_star.shape[:-1]
        )
    except ValueError:
        raise ValueError(
            f"k0, v0 and k_star, v_star must have broadcastable leading (run) axes, got shapes {k0.shape}, "
            f"{v0.shape} and {k_star.shape}"
        ) from None
    k0 = jnp.broadcast_to(k0, batch + (task.d,))
    v0 = jnp.broadcast_to(v0, batch + (task.d,))
    B = int(np.prod(batch)) if batch else 1
    if (
        k_star.ndim > 1
    ):  # one pair of directions per run: (B, d), like k0 and v0
        k_star = jnp.reshape(
            jnp.broadcast_to(k_star, batch + (task.d,)), (B, task.d)
        )
        v_star = jnp.reshape(
            jnp.broadcast_to(v_star, batch + (task.d,)), (B, task.d)
        )
    return (
        task,
        k0,
        v0,
        k_star,
        v_star,
        lam,
        alpha,
        n_steps,
        log_every,
        schedule,
        batch,
    )


def _overlap_grad(kappa, nu, theta, eta, rho, lam, d, L, gamma, eps):
    """Partial derivatives of the closed-form risk in the five overlaps (elementwise)."""

    def total(o):
        return jnp.sum(risk_kernel(*o, lam, d, L, gamma, eps))

    return jax.grad(total)((kappa, nu, theta, eta, rho))


def _riemannian_step(k, v, gk, gv, alpha):
    """One step of eq. (10) on coordinate (or full) vectors.

    The last axis is space.
    """
    gk = gk - jnp.sum(k * gk, axis=-1, keepdims=True) * k
    gv = gv - jnp.sum(v * gv, axis=-1, keepdims=True) * v
    k = k - alpha * gk
    v = v - alpha * gv
    return k / jnp.linalg.norm(k, axis=-1, keepdims=True), v / jnp.linalg.norm(
        v, axis=-1, keepdims=True
    )


def _decay(schedule: str) -> float:
    r"""The schedule as a number: :math:`\lambda_t = \lambda_0 / (1 + \text{decay}\cdot t)`."""
    return _PAPER_DECAY if schedule == "paper" else 0.0


def _log_buffer(n_log: int) -> int:
    """Static size of the log buffer: 1024 rows, or the next power of two above ``n_log + 1``."""
    return max(1024, 1 << (n_log).bit_length())


@partial(jax.jit, static_argnames=("overlap_grad", "buf"))
def pgd_in_span(
    overlap_grad: Callable[..., tuple[jax.Array, ...]],
    params: Any,
    k0: ArrayLike,
    v0: ArrayLike,
    k_star: ArrayLike,
    v_star: ArrayLike,
    alpha: ArrayLike,
    log_every: ArrayLike,
    n_log: ArrayLike,
    *,
    buf: int,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    r"""The iteration of Definition 1 (eq. 10) for any risk of the five overlaps, run in the span of the data.

    For a risk :math:`\mathcal R_t(\kappa, \nu, \theta, \eta, \rho)` of the overlaps
    :math:`\kappa = \langle k, k^\star\rangle`, :math:`\nu = \langle v, v^\star\rangle`,
    :math:`\theta = \langle v, k^\star\rangle`, :math:`\eta = \langle k, v^\star\rangle`,
    :math:`\rho = \langle k, v\rangle` (possibly depending on the step :math:`t`, e.g. through
    :math:`\lambda_t`), the chain rule gives the Euclidean gradients

    .. math::

        g_k = \partial_\kappa\mathcal R_t\,k^\star + \partial_\eta\mathcal R_t\,v^\star
              + \partial_\rho\mathcal R_t\,v_t, \qquad
        g_v = \partial_\nu\mathcal R_t\,v^\star + \partial_\theta\mathcal R_t\,k^\star
              + \partial_\rho\mathcal R_t\,k_t,

    and the step of eq. (10) is

    .. math::

        k_{t+1} = \frac{k_t - \alpha (I - k_t k_t^\top) g_k}{\|k_t - \alpha (I - k_t k_t^\top) g_k\|},
        \qquad
        v_{t+1} = \frac{v_t - \alpha (I - v_t v_t^\top) g_v}{\|v_t - \alpha (I - v_t v_t^\top) g_v\|}.

    Every iterate stays in :math:`E = \operatorname{span}\{k^\star, v^\star, k_0, v_0\}`
    (dimension at most 4). The kernel computes, per run, an orthonormal basis
    :math:`Q \in \mathbb R^{d\times 4}` of :math:`E` (Householder QR of
    :math:`[k^\star, v^\star, k_0, v_0]`, whose columns span :math:`E` even when the four
    vectors are linearly dependent), iterates the coordinates :math:`Q^\top k_t, Q^\top v_t`
    with the same arithmetic as in :math:`\mathbb R^d`, and maps the final iterates back
    with :math:`Q`. It is the loop of :func:`pgd` (with the closed form of Theorem 1); chapter 16
    runs it on an extended closed form (:math:`\langle k^\star, v^\star\rangle \ne 0`, correlated noise tokens).

    No validation: a pure function of arrays, compiled once per ``overlap_grad`` and ``buf``
    (and per array shape); ``params``, ``alpha``, ``log_every`` and ``n_log`` are traced.

    Parameters
    ----------
    overlap_grad : callable, static
        ``overlap_grad(kappa, nu, theta, eta, rho, t, params)`` returns the five partial
        derivatives :math:`(\partial_\kappa, \partial_\nu, \partial_\theta, \partial_\eta,
        \partial_\rho)\mathcal R_t` at the overlaps (arrays of shape ``(runs,)``) for the step
        ``t`` (an integer scalar, 0 for the first step). It must be hashable and stable (a
        module-level function), as it keys the compilation.
    params : pytree of arrays
        Passed to ``overlap_grad`` unchanged (e.g. :math:`\lambda_0`, the task's constants).
    k0, v0 : array_like, shape (runs, d)
        Initial vectors (normalised in the span before the first step).
    k_star, v_star : array_like, shape (d,) or (runs, d)
        The task's directions, shared or one pair per run.
    alpha : array_like
        Step size :math:`\alpha`.
    log_every : array_like of int
        Steps between two logged points.
    n_log : array_like of int
        Number of logged points after step 0; ``n_log * log_every`` steps are run.
    buf : int, static
        Rows of the log buffer, ``>= n_log + 1``.

    Returns
    -------
    logs : jax.Array, shape (buf, 5, runs)
        Row ``i`` (for ``i <= n_log``) holds :math:`(\kappa, \nu, \theta, \eta, \rho)` after
        ``i * log_every`` steps; the rows after ``n_log`` are zero.
    k, v : jax.Array, shape (runs, d)
        The final iterates, in :math:`\mathbb R^d`.
    """
    k0, v0 = jnp.asarray(k0), jnp.asarray(v0)
    k_star = jnp.broadcast_to(k_star, k0.shape)
    v_star = jnp.broadcast_to(v_star, k0.shape)
    # Orthonormal basis of span{k*, v*, k0, v0} per run: Q (runs, d, 4). Householder QR gives
    # orthonormal columns whose span contains the four vectors even when they are
    # linearly dependent (e.g. k0 = k*), so the coordinates below are exact.
    Q, _ = jnp.linalg.qr(jnp.stack([k_star, v_star, k0, v0], axis=-1))
    coords = lambda x: jnp.einsum("bdi,bd->bi", Q, x)  # noqa: E731
    ks, vs = coords(k_star), coords(v_star)
    k, v = coords(k0), coords(v0)
    k = k / jnp.linalg.norm(k, axis=-1, keepdims=True)
    v = v / jnp.linalg.norm(v, axis=-1, keepdims=True)

    def ovl(k, v):
        dot = lambda a, b: jnp.sum(a * b, axis=-1)  # noqa: E731
        return jnp.stack(
            [dot(k, ks), dot(v, vs), dot(v, ks), dot(k, vs), dot(k, v)]
        )

    def step(t, carry):
        k, v = carry
        dk, dn, dth, de, dr = overlap_grad(*ovl(k, v), t, params)
        gk = dk[:, None] * ks + de[:, None] * vs + dr[:, None] * v
        gv = dn[:, None] * vs + dth[:, None] * ks + dr[:, None] * k
        return _riemannian_step(k, v, gk, gv, alpha)

    def chunk(i, state):
        k, v, logs = state
        k, v = jax.lax.fori_loop(
            i * log_every, (i + 1) * log_every, step, (k, v)
        )
        return k, v, logs.at[i + 1].set(ovl(k, v))

    logs = jnp.zeros((buf, 5, k0.shape[0])).at[0].set(ovl(k, v))
    k, v, logs = jax.lax.fori_loop(0, n_log, chunk, (k, v, logs))
    return logs, jnp.einsum("bdi,bi->bd", Q, k), jnp.einsum("bdi,bi->bd", Q, v)


def _closed_form_overlap_grad(kappa, nu, theta, eta, rho, t, params):
    """Partial derivatives of the closed form of Theorem 1 at lambda_t = lam0 / (1 + decay t)."""
    lam0, decay, d, L, gamma, eps = params
    return _overlap_grad(
        kappa, nu, theta, eta, rho, lam0 / (1.0 + decay * t), d, L, gamma, eps
    )


@partial(jax.jit, static_argnames=("buf",))
def _pgd_span(
    k0,
    v0,
    k_star,
    v_star,
    lam0,
    decay,
    alpha,
    log_every,
    n_log,
    d,
    L,
    gamma,
    eps,
    *,
    buf,
):
    # Only the size of the log buffer is static: the schedule, the step size, log_every and
    # the number of logged points are traced, so the paper's four configurations share one
    # compilation.
    logs, k_full, v_full = pgd_in_span(
        _closed_form_overlap_grad,
        (lam0, decay, d, L, gamma, eps),
        k0,
        v0,
        k_star,
        v_star,
        alpha,
        log_every,
        n_log,
        buf=buf,
    )
    lam_log = lam0 / (1.0 + decay * log_every * jnp.arange(buf))
    risk = risk_kernel(*logs.transpose(1, 2, 0), lam_log, d, L, gamma, eps)
    last = logs[n_log]  # the overlaps after the last step, (5, runs)
    grads = _closed_form_overlap_grad(
        *last, n_log * log_every, (lam0, decay, d, L, gamma, eps)
    )
    return logs, risk, k_full, v_full, _tangent_steps(grads, last, alpha)


def _tangent_steps(grads, ovl, alpha):
    r"""The tangent steps :math:`\alpha\|(I - kk^\top)\nabla_k\mathcal R\|` and
    :math:`\alpha\|(I - vv^\top)\nabla_v\mathcal R\|` at unit :math:`(k, v)` from the overlaps
    ``ovl`` and the partial derivatives ``grads`` of the risk in them (orthonormal
    :math:`k^\star, v^\star`): with :math:`\nabla_k\mathcal R = \partial_\kappa k^\star +
    \partial_\eta v^\star + \partial_\rho v` and :math:`\nabla_v\mathcal R = \partial_\nu v^\star
    + \partial_\theta k^\star + \partial_\rho k`, their norms and their components along
    :math:`k`, :math:`v` are functions of the overlaps. Shape ``(2, runs)``.
    """
    dk, dn, dth, de, dr = grads
    kappa, nu, theta, eta, rho = ovl
    gk2 = dk**2 + de**2 + dr**2 + 2 * dk * dr * theta + 2 * de * dr * nu
    gk_along_k = dk * kappa + de * eta + dr * rho
    gv2 = dn**2 + dth**2 + dr**2 + 2 * dn * dr * eta + 2 * dth * dr * kappa
    gv_along_v = dn * nu + dth * theta + dr * rho
    return alpha * jnp.sqrt(
        jnp.maximum(jnp.stack([gk2 - gk_along_k**2, gv2 - gv_along_v**2]), 0.0)
    )


def _diverged(risk, steps):
    """Per run: the criterion of :attr:`PGDResult.diverged`, from the logged risk (runs, n_log)
    and the next steps (2, runs) of :func:`_tangent_steps`."""
    risk = np.asarray(risk)
    rose = np.max(risk, axis=-1) > DIVERGENCE_RISE * risk[:, 0]
    return rose | np.any(np.asarray(steps) > DIVERGENCE_STEP, axis=0)


def _finish(
    task,
    batch,
    n_steps,
    log_every,
    lam,
    schedule,
    logged,
    k,
    v,
    risk=None,
    *,
    next_steps,
) -> PGDResult:
    steps = np.arange(0, n_steps + 1, log_every)
    lam_log = np.asarray(
        _lam_t(lam, jnp.asarray(steps, dtype=float), schedule)
    )
    kappa, nu, theta, eta, rho = logged
    if risk is None:
        risk = risk_kernel(
            kappa,
            nu,
            theta,
            eta,
            rho,
            jnp.asarray(lam_log),
            task.d,
            task.L,
            task.gamma,
            task.eps,
        )
    dist = distance_to_manifold(theta, eta, rho)
    shape = batch + (steps.size,)
    re = lambda x: jnp.reshape(x, shape)  # noqa: E731
    out = PGDResult(
        steps,
        lam_log,
        re(kappa),
        re(nu),
        re(theta),
        re(eta),
        re(rho),
        re(risk),
        re(dist),
        jnp.reshape(k, batch + (task.d,)),
        jnp.reshape(v, batch + (task.d,)),
    )
    if not bool(jnp.all(jnp.isfinite(out.risk))):
        raise FloatingPointError(
            "PGD produced non-finite values: is alpha too large?"
        )
    diverged = np.reshape(_diverged(risk, next_steps), batch)
    return numpy_record(out._replace(diverged=diverged))


def pgd(
    k0: ArrayLike,
    v0: ArrayLike,
    k_star: ArrayLike,
    v_star: ArrayLike,
    task: SLRTask,
    *,
    lam: float,
    alpha: float,
    n_steps: int,
    schedule: Literal["constant", "paper"] = "constant",
    log_every: int = 1,
) -> PGDResult:
    r"""Projected (Riemannian) gradient descent, Definition 1 (eq. 10), with exact gradients.

    .. math::

        k_{t+1} = \frac{k_t - \alpha (I - k_t k_t^\top)\nabla_k\mathcal R_{\lambda_t}(k_t, v_t)}{\|\cdot\|},
        \qquad
        v_{t+1} = \frac{v_t - \alpha (I - v_t v_t^\top)\nabla_v\mathcal R_{\lambda_t}(k_t, v_t)}{\|\cdot\|},

    where :math:`\mathcal R_\lambda` is the closed form of Theorem 1 / Proposition 15 and its
    gradient is taken by automatic differentiation.

    Parameters
    ----------
    k0, v0 : array_like, shape (..., d)
        Unit initial vectors; leading axes (broadcast together) are independent runs.
    k_star, v_star : array_like, shape (d,) or (..., d)
        The task's directions (unit, orthogonal): one pair for every run, or one pair per run
        (leading axes broadcast with those of ``k0, v0``), as the authors' code draws them.
    task : SLRTask
        The task.
    lam : float
        Inverse temperature :math:`\lambda > 0` (:math:`\lambda_0` for ``schedule="paper"``).
    alpha : float
        Step size :math:`\alpha > 0`.
    n_steps : int
        Number of steps, ``>= 1``; every step is computed.
    schedule : {"constant", "paper"}
        :math:`\lambda_t = \lambda`, or :math:`\lambda_t = \lambda_0/(1 + 10^{-4}t)` (t = 0 first).
    log_every : int
        Log every ``log_every`` steps; must divide ``n_steps``. Step 0 is logged too.

    Returns
    -------
    PGDResult
        Logged overlaps (last axis = logged steps, ending at ``n_steps``), :math:`\lambda_t`,
        the risk :math:`\mathcal R_{\lambda_t}(k_t, v_t)`, the distance to :math:`\mathcal M`,
        the final vectors, and ``diverged``: per run, whether the step size ``alpha`` was too
        large for it (its risk rose, or its steps do not shrink; :class:`PGDResult`, "Divergence").

    Raises
    ------
    ValueError
        When an argument is invalid (e.g. ``log_every`` not dividing ``n_steps``, leading axes
        that do not broadcast, directions that are not unit vectors).
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.
    FloatingPointError
        When the iteration produces non-finite values (``alpha`` too large).

    Notes
    -----
    The iteration runs in the span of :math:`\{k^\star, v^\star, k_0, v_0\}` (see the module
    docstring): the same arithmetic as in :math:`\mathbb R^d`, at a cost per step
    independent of :math:`d`; :func:`pgd_dense` is the literal version it is tested against.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, manifold_directions, pgd, recovered
    >>> task = SLRTask(d=20, L=5)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> k0, v0 = manifold_directions(jax.random.key(1), k_star, v_star, (4,))
    >>> res = pgd(k0, v0, k_star, v_star, task, lam=0.1, alpha=0.1,
    ...           n_steps=1000, log_every=100)
    >>> res.kappa.shape  # 4 runs, logged at steps 0, 100, ..., 1000
    (4, 11)
    >>> recovered(res)  # started on M with a small lam (Theorem 5)
    array([ True,  True,  True,  True])
    >>> bool(res.distance.max() < 1e-12)  # M is invariant (Lemma 7)
    True
    """
    (
        task,
        k0,
        v0,
        k_star,
        v_star,
        lam,
        alpha,
        n_steps,
        log_every,
        schedule,
        batch,
    ) = _check_pgd_inputs(
        k0, v0, k_star, v_star, task, lam, alpha, n_steps, log_every, schedule
    )
    B = int(np.prod(batch)) if batch else 1
    n_log = n_steps // log_every
    logs, risk, k, v, next_steps = _pgd_span(
        jnp.reshape(k0, (B, task.d)),
        jnp.reshape(v0, (B, task.d)),
        k_star,
        v_star,
        lam,
        _decay(schedule),
        alpha,
        log_every,
        n_log,
        float(task.d),
        float(task.L),
        task.gamma,
        task.eps,
        buf=_log_buffer(n_log),
    )
    logged = tuple(np.asarray(logs[: n_log + 1, i, :]).T for i in range(5))
    risk = np.asarray(risk[:, : n_log + 1])
    return _finish(
        task,
        batch,
        n_steps,
        log_every,
        lam,
        schedule,
        logged,
        k,
        v,
        risk,
        next_steps=next_steps,
    )


@partial(jax.jit, static_argnames=("n_log", "log_every", "schedule"))
def _pgd_dense(
    k0,
    v0,
    k_star,
    v_star,
    lam0,
    alpha,
    d,
    L,
    gamma,
    eps,
    *,
    n_log,
    log_every,
    schedule,
):
    def risk(k, v, lam):
        return jnp.sum(
            risk_kernel(*overlaps(k, v, k_star, v_star), lam, d, L, gamma, eps)
        )

    grad = jax.grad(risk, argnums=(0, 1))

    def step(carry, t):
        k, v = carry
        gk, gv = grad(k, v, _lam_t(lam0, t, schedule))
        return _riemannian_step(k, v, gk, gv, alpha), None

    def chunk(carry, i):
        ts = (i * log_every + jnp.arange(log_every)).astype(float)
        carry, _ = jax.lax.scan(step, carry, ts)
        return carry, overlaps(*carry, k_star, v_star)

    first = overlaps(k0, v0, k_star, v_star)
    (k, v), logged = jax.lax.scan(chunk, (k0, v0), jnp.arange(n_log))
    logged = tuple(
        jnp.concatenate([f[None], g], axis=0).T for f, g in zip(first, logged)
    )
    # The next step's tangent lengths, literally in R^d (pgd reads them off the overlaps).
    gk, gv = grad(k, v, _lam_t(lam0, float(n_log * log_every), schedule))
    tangent = lambda x, g: g - jnp.sum(x * g, axis=-1, keepdims=True) * x  # noqa: E731
    steps = alpha * jnp.stack(
        [
            jnp.linalg.norm(tangent(k, gk), axis=-1),
            jnp.linalg.norm(tangent(v, gv), axis=-1),
        ]
    )
    return logged, k, v, steps


def pgd_dense(
    k0: ArrayLike,
    v0: ArrayLike,
    k_star: ArrayLike,
    v_star: ArrayLike,
    task: SLRTask,
    *,
    lam: float,
    alpha: float,
    n_steps: int,
    schedule: Literal["constant", "paper"] = "constant",
    log_every: int = 1,
) -> PGDResult:
    r"""Definition 1 written literally in :math:`\mathbb R^d`: same arguments and result as :func:`pgd`.

    The gradients :math:`\nabla_k\mathcal R`, :math:`\nabla_v\mathcal R` are ``jax.grad`` of the
    closed form with respect to the :math:`d`-dimensional vectors, the tangent projection
    and the normalisation act in :math:`\mathbb R^d`. A step costs :math:`O(d)` per run:
    this is the reference for :func:`pgd`, not the fast path.

    Parameters
    ----------
    k0, v0, k_star, v_star, task, lam, alpha, n_steps, schedule, log_every
        As in :func:`pgd`.

    Returns
    -------
    PGDResult
        As in :func:`pgd`.

    Raises
    ------
    ValueError
        When an argument is invalid (as in :func:`pgd`).
    FloatingPointError
        When the iteration produces non-finite values (``alpha`` too large).
    """
    (
        task,
        k0,
        v0,
        k_star,
        v_star,
        lam,
        alpha,
        n_steps,
        log_every,
        schedule,
        batch,
    ) = _check_pgd_inputs(
        k0, v0, k_star, v_star, task, lam, alpha, n_steps, log_every, schedule
    )
    B = int(np.prod(batch)) if batch else 1
    logged, k, v, next_steps = _pgd_dense(
        jnp.reshape(k0, (B, task.d)),
        jnp.reshape(v0, (B, task.d)),
        k_star,
        v_star,
        lam,
        alpha,
        float(task.d),
        float(task.L),
        task.gamma,
        task.eps,
        n_log=n_steps // log_every,
        log_every=log_every,
        schedule=schedule,
    )
    return _finish(
        task,
        batch,
        n_steps,
        log_every,
        lam,
        schedule,
        logged,
        k,
        v,
        next_steps=next_steps,
    )


# --------------------------------------------------------------------------- reduced dynamics on M
def manifold_risk_grad(
    kappa: ArrayLike, nu: ArrayLike, lam: float, task: SLRTask
) -> tuple[jax.Array, jax.Array]:
    r"""The partial derivatives of the manifold risk (Lemma 6) in :math:`(\kappa, \nu)`.

    .. math::

        \partial_\nu\mathcal R = -2\gamma^2\operatorname{erf}(a),\qquad
        \partial_\kappa\mathcal R = \gamma^2\lambda q\Big[-\frac{2\nu}{\sqrt{1 + 2\lambda^2\gamma^2}}
        \operatorname{erf}'(a) + \partial_t\zeta(\lambda q\kappa, \lambda\gamma)\Big],

    with :math:`a = \lambda q\kappa/\sqrt{1+2\lambda^2\gamma^2}` and :math:`q = \sqrt{d/2}`
    (proof of Proposition 9).

    Parameters
    ----------
    kappa, nu : array_like
        The point of :math:`\mathcal M`, in :math:`[-1, 1]`; they broadcast together.
    lam : float
        Inverse temperature :math:`\lambda > 0`.
    task : SLRTask
        The task.

    Returns
    -------
    d_kappa, d_nu : jax.Array
        :math:`\partial_\kappa\mathcal R` and :math:`\partial_\nu\mathcal R`.

    Raises
    ------
    ValueError
        When ``kappa`` or ``nu`` lies outside :math:`[-1, 1]` or is not finite, or ``lam`` is not
        a real number ``> 0``.
    """
    task = check_task(task)
    kappa = _check_interval(kappa, "kappa")
    nu = _check_interval(nu, "nu")
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    return _manifold_grad(kappa, nu, lam, task.d, task.gamma)


def _manifold_grad(kappa, nu, lam, d, gamma):
    q = jnp.sqrt(d / 2.0)
    g2 = gamma**2
    sc2 = jnp.sqrt(1.0 + 2.0 * lam**2 * g2)
    a = lam * q * kappa / sc2
    d_nu = -2.0 * g2 * erf(a)
    d_kappa = (
        g2
        * lam
        * q
        * (
            -2.0 * nu / sc2 * erf_prime(a)
            + zeta_dt(lam * q * kappa, lam * gamma)
        )
    )
    return d_kappa, d_nu


def reduced_map_kernel(
    kappa: ArrayLike,
    nu: ArrayLike,
    lam: ArrayLike,
    alpha: ArrayLike,
    d: ArrayLike,
    gamma: ArrayLike,
) -> tuple[jax.Array, jax.Array]:
    r"""The map :math:`F` of Lemma 7 (eqs. 12–13) as a pure function of arrays (see :func:`reduced_map`).

    .. math::

        \kappa_{t+1} = \frac{\kappa_t - \alpha(1-\kappa_t^2)\,\partial_\kappa\mathcal R}
                            {\sqrt{1 + \alpha^2(1-\kappa_t^2)(\partial_\kappa\mathcal R)^2}},\qquad
        \nu_{t+1} = \frac{\nu_t - \alpha(1-\nu_t^2)\,\partial_\nu\mathcal R}
                         {\sqrt{1 + \alpha^2(1-\nu_t^2)(\partial_\nu\mathcal R)^2}},

    with the derivatives of :func:`manifold_risk_grad`. No validation and nothing static:
    :math:`\lambda`, :math:`\alpha`, :math:`d` and :math:`\gamma` may
    be traced, so ``jax.jacfwd`` gives the Jacobian of :math:`F` in :math:`(\kappa, \nu)` or in
    :math:`(\lambda, \alpha)`, and ``jax.vmap`` maps it over a grid of start points. The map
    does not depend on :math:`L` or :math:`\varepsilon` (their terms are constant on :math:`\mathcal M`).

    Parameters
    ----------
    kappa, nu : array_like
        The current point :math:`(\kappa_t, \nu_t)`.
    lam, alpha : array_like
        Inverse temperature :math:`\lambda` and step size :math:`\alpha`.
    d, gamma : array_like
        Dimension and :math:`\gamma` of the task.

    Returns
    -------
    kappa_next, nu_next : jax.Array
        :math:`(\kappa_{t+1}, \nu_{t+1})`.
    """
    dk, dn = _manifold_grad(kappa, nu, lam, d, gamma)
    ck, cn = 1.0 - kappa**2, 1.0 - nu**2
    k_new = (kappa - alpha * ck * dk) / jnp.sqrt(1.0 + alpha**2 * ck * dk**2)
    n_new = (nu - alpha * cn * dn) / jnp.sqrt(1.0 + alpha**2 * cn * dn**2)
    return k_new, n_new


def reduced_map(
    kappa: ArrayLike, nu: ArrayLike, lam: float, alpha: float, task: SLRTask
) -> tuple[jax.Array, jax.Array]:
    r"""The map :math:`F` of Lemma 7 (eqs. 12–13): one PGD step on :math:`\mathcal M` in :math:`(\kappa, \nu)`.

    .. math::

        \kappa_{t+1} = \frac{\kappa_t - \alpha(1-\kappa_t^2)\,\partial_\kappa\mathcal R}
                            {\sqrt{1 + \alpha^2(1-\kappa_t^2)(\partial_\kappa\mathcal R)^2}},\qquad
        \nu_{t+1} = \frac{\nu_t - \alpha(1-\nu_t^2)\,\partial_\nu\mathcal R}
                         {\sqrt{1 + \alpha^2(1-\nu_t^2)(\partial_\nu\mathcal R)^2}}

    (derivatives of the Lemma 6 risk at :math:`(\kappa_t, \nu_t)`). The explicit form is our
    derivation: write :math:`k = \kappa k^\star + \sqrt{1-\kappa^2}\,u` with
    :math:`u \perp k^\star, v^\star, v`; the tangent gradient is
    :math:`\partial_\kappa\mathcal R\,(k^\star - \kappa k)`, of squared norm
    :math:`(1-\kappa^2)(\partial_\kappa\mathcal R)^2`. Arguments broadcast.

    Parameters
    ----------
    kappa, nu : array_like
        The current point :math:`(\kappa_t, \nu_t) \in [-1, 1]^2`.
    lam : float
        Inverse temperature :math:`\lambda > 0`.
    alpha : float
        Step size :math:`\alpha > 0`.
    task : SLRTask
        The task.

    Returns
    -------
    kappa_next, nu_next : jax.Array
        :math:`(\kappa_{t+1}, \nu_{t+1})`.

    Raises
    ------
    ValueError
        When ``kappa`` or ``nu`` lies outside :math:`[-1, 1]`, or ``lam`` or ``alpha`` is not a
        real number ``> 0``.
    """
    task = check_task(task)
    kappa = _check_interval(kappa, "kappa")
    nu = _check_interval(nu, "nu")
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    return reduced_map_kernel(kappa, nu, lam, alpha, task.d, task.gamma)


class ReducedResult(NamedTuple):
    """Logged iterates of :func:`reduced_pgd`.

    Fields: ``steps`` (n_log,); ``kappa``, ``nu`` and the manifold ``risk`` (..., n_log).
    """

    steps: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    risk: np.ndarray


@partial(jax.jit, static_argnames=("n_log", "log_every"))
def _reduced_run(kappa, nu, lam, alpha, d, gamma, *, n_log, log_every):
    def step(carry, _):
        return reduced_map_kernel(*carry, lam, alpha, d, gamma), None

    def chunk(carry, _):
        carry, _ = jax.lax.scan(step, carry, None, length=log_every, unroll=1)
        return carry, carry

    _, (ks, ns) = jax.lax.scan(chunk, (kappa, nu), None, length=n_log)
    ks = jnp.concatenate([kappa[None], ks], axis=0)
    ns = jnp.concatenate([nu[None], ns], axis=0)
    return jnp.moveaxis(ks, 0, -1), jnp.moveaxis(ns, 0, -1)


def reduced_pgd(
    kappa0: ArrayLike,
    nu0: ArrayLike,
    task: SLRTask,
    *,
    lam: float,
    alpha: float,
    n_steps: int,
    log_every: int = 1,
) -> ReducedResult:
    r"""Iterate the reduced map :math:`F` of Lemma 7 (constant :math:`\lambda`) from :math:`(\kappa_0, \nu_0)`.

    Parameters
    ----------
    kappa0, nu0 : array_like
        Start points in :math:`[-1, 1]`; they broadcast (e.g. a grid of initialisations).
    task : SLRTask
        The task.
    lam : float
        Inverse temperature :math:`\lambda > 0`.
    alpha : float
        Step size :math:`\alpha > 0`.
    n_steps : int
        Number of steps, ``>= 1``.
    log_every : int
        Logging period :math:`\Delta`; must divide ``n_steps``.

    Returns
    -------
    ReducedResult
        The last axis is the logged steps :math:`0, \Delta, \dots, n`, with the manifold risk there.

    Raises
    ------
    ValueError
        When a start point lies outside :math:`[-1, 1]`, ``lam`` or ``alpha`` is not ``> 0``, or
        ``log_every`` does not divide ``n_steps``.
    """
    task = check_task(task)
    kappa0 = _check_interval(kappa0, "kappa0")
    nu0 = _check_interval(nu0, "nu0")
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    n_steps, log_every = _check_steps(n_steps, log_every)
    kappa0, nu0 = jnp.broadcast_arrays(kappa0, nu0)
    ks, ns = _reduced_run(
        kappa0,
        nu0,
        lam,
        alpha,
        float(task.d),
        task.gamma,
        n_log=n_steps // log_every,
        log_every=log_every,
    )
    risk = manifold_risk(
        jnp.clip(ks, -1.0, 1.0), jnp.clip(ns, -1.0, 1.0), lam, task
    )
    return numpy_record(
        ReducedResult(np.arange(0, n_steps + 1, log_every), ks, ns, risk)
    )


# --------------------------------------------------------------------------- fixed points
class FixedPoint(NamedTuple):
    """A solution of (14) with what Propositions 10 and 12 say about it.

    Fields: the point ``kappa``, ``nu``; the manifold ``risk`` there; its ``kind``
    (``"minimum"``, ``"maximum"`` or ``"saddle"``); ``hessian_eigenvalues``, of the Riemannian
    Hessian (angles), ascending; ``jacobian_eigenvalues``, of :math:`F` at the point, ascending
    by modulus.
    """

    kappa: float
    nu: float
    risk: float
    kind: str  # "minimum", "maximum" or "saddle"
    hessian_eigenvalues: (
        np.ndarray
    )  # of the Riemannian Hessian (angles), ascending
    jacobian_eigenvalues: np.ndarray  # of F at the point, ascending by modulus


def _stationarity_angles(x, lam, d, gamma):
    r"""System (14) in angle coordinates :math:`\kappa = \cos\varphi`, :math:`\nu = \cos\psi`,
    positive factors divided out, each remaining factor evaluated to full relative accuracy.

    With :math:`a = \lambda q\kappa/\sqrt{c_2}` and :math:`b = a/\sqrt{c_4}`,
    :math:`\partial_\kappa\mathcal R = \frac{2\gamma^2\lambda q}{\sqrt{c_2}}\operatorname{erf}'(a)
    [\operatorname{erf}(b) - \nu]` (use :math:`\partial_t\zeta` with :math:`t/\sqrt{c_2} = a`) and
    :math:`\partial_\nu\mathcal R = -2\gamma^2\operatorname{erf}(a)`; with
    :math:`1 - \kappa^2 = \sin^2\varphi` and :math:`1 - \nu^2 = \sin^2\psi`, (14) has the same
    zeros as

    .. math:: \sin\varphi\,[\operatorname{erf}(b) - \cos\psi] = 0,\qquad \sin\psi\,\operatorname{erf}(a) = 0,

    where the bracket is computed as :math:`2\sin^2(\psi/2) - \operatorname{erfc}(b)` (or its
    mirror for :math:`\nu < 0`). In :math:`(\kappa, \nu)` the curve :math:`\nu = \operatorname{erf}(b)`
    lies within round-off of the edge :math:`\nu = 1` as soon as erf saturates, so the two
    equations look solved along the whole edge; in angles the gap is
    :math:`\psi \approx \sqrt{2\operatorname{erfc}(b)}`, resolvable down to
    :math:`\operatorname{erfc}(b) \approx 10^{-18}`.
    """
    phi, psi = x[0], x[1]
    q = jnp.sqrt(d / 2.0)
    s2 = (lam * gamma) ** 2
    a = lam * q * jnp.cos(phi) / jnp.sqrt(1.0 + 2.0 * s2)
    b = a / jnp.sqrt(1.0 + 4.0 * s2)
    bracket = jnp.where(
        jnp.cos(psi) >= 0,
        2.0 * jnp.sin(psi / 2.0) ** 2 - erfc(b),
        erfc(-b) - 2.0 * jnp.cos(psi / 2.0) ** 2,
    )
    return jnp.stack([jnp.sin(phi), bracket, jnp.sin(psi), erf(a)])


_FACTOR_DISTANCE = 1e-10


def stationary_points(
    lam: float, task: SLRTask, *, n_starts: int = 21, tol: float = 1e-12
) -> np.ndarray:
    r"""All solutions of (14) on :math:`[-1,1]^2`, found numerically.

    The system (14) is

    .. math::

        (1-\kappa^2)\partial_\kappa\mathcal R = 0, \qquad (1-\nu^2)\partial_\nu\mathcal R = 0.

    Newton's method (``scipy.optimize.root``, exact Jacobian by ``jax.jacfwd``) from an
    ``n_starts`` × ``n_starts`` grid of starting angles :math:`(\varphi, \psi) \in [0, \pi]^2`
    on the system written in angle coordinates with its positive factors divided out
    (in angle coordinates; same zeros, well scaled where erf saturates). A
    converged point is kept when both equations are below ``tol`` *and* each has a factor
    with a zero within ``1e-10`` (Newton-step estimate ``|f| / |∇f|``), then merged with
    points closer than ``1e-6`` in :math:`(\kappa, \nu)`. Proposition 9 says the result is
    the four corners and :math:`(0, 0)`; this function does not assume it.

    Parameters
    ----------
    lam : float
        Inverse temperature :math:`\lambda > 0`.
    task : SLRTask
        The task.
    n_starts : int
        Number of starting angles per axis, ``>= 2``.
    tol : float
        Tolerance on both equations, ``> 0``.

    Returns
    -------
    numpy.ndarray, shape (m, 2)
        The points :math:`(\kappa, \nu)`, sorted.

    Raises
    ------
    ValueError
        When erf saturates so much that float64 cannot separate the curve
        :math:`\nu = \operatorname{erf}(b)` from the edges (:math:`b_{\max} = \lambda q/\sqrt{c_2 c_4}`
        above about 6.2, e.g. :math:`\lambda = 1` at :math:`d = 10\,000`); at the paper's
        :math:`d = 400` every :math:`\lambda` up to at least 1 is resolved. Also on invalid
        arguments.
    """
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    n_starts = check_positive_int(n_starts, "n_starts")
    tol = _check_tol(tol)
    if n_starts < 2:
        raise ValueError(f"n_starts must be >= 2, got {n_starts}")
    d, gamma = float(task.d), task.gamma
    s2 = (lam * gamma) ** 2
    b_max = (
        lam
        * math.sqrt(d / 2.0)
        / math.sqrt((1.0 + 2.0 * s2) * (1.0 + 4.0 * s2))
    )
    gap = math.sqrt(2.0 * math.erfc(b_max))
    if gap <= 10.0 * _FACTOR_DISTANCE:
        raise ValueError(
            f"lam = {lam} is too large for d = {task.d} to resolve (14) in float64: erf saturates "
            f"(erfc({b_max:.3g}) = {math.erfc(b_max):.2g}), so near the corners the curve "
            f"nu = erf(b) lies within {gap:.1g} of the edge nu = ±1 in angle; "
            f"need lam*sqrt(d/2)/sqrt((1+2 lam^2 gamma^2)(1+4 lam^2 gamma^2)) below about 6.2"
        )

    def factors(x):
        return _stationarity_angles(x, lam, d, gamma)

    def G(x):
        f = factors(x)
        return jnp.stack([f[0] * f[1], f[2] * f[3]])

    G_jit = jax.jit(G)
    J_jit = jax.jit(jax.jacfwd(G))
    F_jit = jax.jit(factors)
    FJ_jit = jax.jit(jax.jacfwd(factors))
    found: list[np.ndarray] = []
    grid = np.linspace(0.0, math.pi, n_starts)
    for p0 in grid:
        for s0 in grid:
            sol = optimize.root(
                lambda x: np.asarray(G_jit(jnp.asarray(x))),
                np.array([p0, s0]),
                jac=lambda x: np.asarray(J_jit(jnp.asarray(x))),
                method="hybr",
                options={"xtol": 1e-14},
            )
            x = jnp.asarray(sol.x)
            if not sol.success or np.max(np.abs(np.asarray(G_jit(x)))) > tol:
                continue
            f = np.abs(np.asarray(F_jit(x)))
            g = np.linalg.norm(np.asarray(FJ_jit(x)), axis=1)
            dist = np.where(f == 0.0, 0.0, f / np.where(g > 0, g, np.inf))
            if (
                min(dist[0], dist[1]) > _FACTOR_DISTANCE
                or min(dist[2], dist[3]) > _FACTOR_DISTANCE
            ):
                continue
            point = np.cos(np.asarray(sol.x))
            if all(np.max(np.abs(point - y)) > 1e-6 for y in found):
                found.append(point)
    pts = np.array(
        sorted(found, key=lambda p: (round(p[0], 6), round(p[1], 6)))
    )
    pts = np.where(np.abs(pts) < 1e-12, 0.0, pts)
    return np.where(np.abs(np.abs(pts) - 1.0) < 1e-12, np.sign(pts), pts)


def manifold_hessian(
    kappa: float, nu: float, lam: float, task: SLRTask
) -> np.ndarray:
    r"""Hessian of the manifold risk (Lemma 6) in :math:`(\kappa, \nu)` at one point (2 × 2).

    At :math:`(0,0)`, the only interior critical point, it is :math:`\begin{pmatrix}
    \partial^2_{\kappa}\mathcal R & \partial_\kappa\partial_\nu\mathcal R\\
    \partial_\kappa\partial_\nu\mathcal R & 0\end{pmatrix}` with a non-zero off-diagonal
    entry: eigenvalues of opposite signs, a saddle (proof of Proposition 10).

    Parameters
    ----------
    kappa, nu : float
        The point, in :math:`[-1, 1]`.
    lam : float
        Inverse temperature :math:`\lambda > 0`.
    task : SLRTask
        The task.

    Returns
    -------
    numpy.ndarray, shape (2, 2)
        The Hessian.

    Raises
    ------
    ValueError
        When ``kappa`` or ``nu`` is not a scalar in :math:`[-1, 1]`, or ``lam`` is not ``> 0``.
    """
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    x = jnp.array([_check_point(kappa, "kappa"), _check_point(nu, "nu")])
    f = lambda x: risk_kernel(
        x[0],
        x[1],
        0.0,
        0.0,
        0.0,
        lam,
        float(task.d),
        float(task.L),
        task.gamma,
        task.eps,
    )  # noqa: E731
    return np.asarray(jax.hessian(f)(x))


def riemannian_hessian(
    kappa: float, nu: float, lam: float, task: SLRTask
) -> np.ndarray:
    r"""Hessian of the risk on :math:`\mathcal M` in angle coordinates :math:`(\varphi, \psi)` (2 × 2).

    The Hessian of :math:`(\varphi, \psi) \mapsto \mathcal R(\cos\varphi, \cos\psi)` at
    :math:`\kappa = \cos\varphi`, :math:`\nu = \cos\psi`.
    :math:`\kappa, \nu` are cosines of angles on the spheres, so this is the Hessian that
    classifies critical points of the risk on the manifold, corners included: at
    :math:`\kappa = \pm 1` its diagonal entry is :math:`-\kappa\,\partial_\kappa\mathcal R`
    (the corner is a minimum in that direction iff the gradient points outwards); at
    :math:`(0, 0)` it is the Euclidean Hessian of :func:`manifold_hessian`.

    Parameters
    ----------
    kappa, nu : float
        The point, in :math:`[-1, 1]`.
    lam : float
        Inverse temperature :math:`\lambda > 0`.
    task : SLRTask
        The task.

    Returns
    -------
    numpy.ndarray, shape (2, 2)
        The Hessian in :math:`(\varphi, \psi)`.

    Raises
    ------
    ValueError
        When ``kappa`` or ``nu`` is not a scalar in :math:`[-1, 1]`, or ``lam`` is not ``> 0``.
    """
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    kappa = float(np.clip(_check_point(kappa, "kappa"), -1.0, 1.0))
    nu = float(np.clip(_check_point(nu, "nu"), -1.0, 1.0))
    angles = jnp.array([math.acos(kappa), math.acos(nu)])
    f = lambda a: risk_kernel(
        jnp.cos(a[0]),
        jnp.cos(a[1]),
        0.0,
        0.0,
        0.0,
        lam,
        float(task.d),
        float(task.L),
        task.gamma,
        task.eps,
    )  # noqa: E731
    return np.asarray(jax.hessian(f)(angles))


def reduced_jacobian(
    kappa: float, nu: float, lam: float, alpha: float, task: SLRTask
) -> np.ndarray:
    r"""Jacobian of the reduced map :math:`F` (Lemma 7) at one point (2 × 2), by ``jax.jacfwd``.

    At :math:`(0,0)` it is :math:`I - \alpha\nabla^2\mathcal R(0,0)` (Proposition 12): one
    eigenvalue in :math:`(0, 1)` and one in :math:`(1, \infty)` for small :math:`\alpha`.

    Parameters
    ----------
    kappa, nu : float
        The point, in :math:`[-1, 1]`.
    lam : float
        Inverse temperature :math:`\lambda > 0`.
    alpha : float
        Step size :math:`\alpha > 0`.
    task : SLRTask
        The task.

    Returns
    -------
    numpy.ndarray, shape (2, 2)
        The Jacobian of :math:`F` in :math:`(\kappa, \nu)`.

    Raises
    ------
    ValueError
        When ``kappa`` or ``nu`` is not a scalar in :math:`[-1, 1]`, or ``lam`` or ``alpha`` is
        not ``> 0``.
    """
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    x = jnp.array([_check_point(kappa, "kappa"), _check_point(nu, "nu")])
    f = lambda x: jnp.stack(
        reduced_map_kernel(x[0], x[1], lam, alpha, float(task.d), task.gamma)
    )  # noqa: E731
    return np.asarray(jax.jacfwd(f)(x))


def classify_hessian(eigenvalues: ArrayLike) -> str:
    """The kind of a critical point from its Hessian's eigenvalues (Proposition 10).

    ``"minimum"`` when every Hessian eigenvalue is > 0, ``"maximum"`` when every one is < 0,
    ``"saddle"`` otherwise.

    Parameters
    ----------
    eigenvalues : array_like
        The Hessian's eigenvalues.

    Returns
    -------
    str
        ``"minimum"``, ``"maximum"`` or ``"saddle"``.
    """
    h = np.asarray(eigenvalues)
    if np.all(h > 0):
        return "minimum"
    if np.all(h < 0):
        return "maximum"
    return "saddle"


def fixed_point_table(
    lam: float, alpha: float, task: SLRTask
) -> list[FixedPoint]:
    r"""The fixed points of (14) found by :func:`stationary_points`, each classified (Propositions 9, 10, 12).

    ``kind`` comes from the signs of the Riemannian Hessian's eigenvalues (both > 0:
    minimum; both < 0: maximum; mixed: saddle).

    Parameters
    ----------
    lam : float
        Inverse temperature :math:`\lambda > 0`.
    alpha : float
        Step size :math:`\alpha > 0` (for the Jacobian of :math:`F`).
    task : SLRTask
        The task.

    Returns
    -------
    list of FixedPoint
        One entry per point, in the order of :func:`stationary_points`.

    Raises
    ------
    ValueError
        As :func:`stationary_points`, or when ``alpha`` is not ``> 0``.
    """
    task = check_task(task)
    out = []
    for kappa, nu in stationary_points(lam, task):
        hess = np.linalg.eigvalsh(riemannian_hessian(kappa, nu, lam, task))
        jac = np.linalg.eigvals(reduced_jacobian(kappa, nu, lam, alpha, task))
        jac = jac[np.argsort(np.abs(jac))]
        jac = np.real_if_close(jac)
        kind = classify_hessian(hess)
        risk = float(manifold_risk(kappa, nu, lam, task))
        out.append(FixedPoint(float(kappa), float(nu), risk, kind, hess, jac))
    return out


def classify_limits(
    kappa: ArrayLike, nu: ArrayLike, *, tol: float = 1e-3
) -> np.ndarray:
    """Label the end points of reduced trajectories by the fixed point they reached.

    Parameters
    ----------
    kappa, nu : array_like
        End points; they broadcast together.
    tol : float
        Largest distance (in each coordinate) to a fixed point, ``> 0``.

    Returns
    -------
    numpy.ndarray of int
        0 for :math:`(0, 0)`, 1 for :math:`(1, 1)` or :math:`(-1,-1)` (recovery), 2 for
        :math:`(1,-1)` or :math:`(-1, 1)`, and -1 when the point is farther than ``tol`` from all
        five (not converged).

    Raises
    ------
    ValueError
        When ``tol`` is not a real number ``> 0``.
    """
    tol = _check_tol(tol)
    kappa = np.asarray(kappa, dtype=float)
    nu = np.asarray(nu, dtype=float)
    labels = np.full(np.broadcast(kappa, nu).shape, -1, dtype=int)
    close = lambda a, b: (np.abs(kappa - a) <= tol) & (np.abs(nu - b) <= tol)  # noqa: E731
    labels[close(0.0, 0.0)] = 0
    labels[close(1.0, 1.0) | close(-1.0, -1.0)] = 1
    labels[close(1.0, -1.0) | close(-1.0, 1.0)] = 2
    return labels
