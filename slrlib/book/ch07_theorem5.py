r"""Computations behind chapter 7: steps 2 and 3 of the proof of Theorem 5, on the manifold :math:`\mathcal M`.

Pure functions on top of :mod:`slrlib.training.pgd` and :mod:`slrlib.core.risk` (Marion et al.,
2025, Section 5 and Appendix B): :func:`kappa_partial` (:math:`\partial_\kappa\mathcal R` on
:math:`\mathcal M` in factored form), :func:`landscape` (the risk on :math:`\mathcal M` with
its fixed points and reduced trajectories: Figure 6), :func:`descent_check`
(Proposition 8, the risk along trajectories), :func:`jacobian_determinant`
(Proposition 12), :func:`limit_labels` and :func:`basin_grid` (Propositions 11 and 13),
:func:`saddle_stable_set` (the initialisations that converge to the saddle
:math:`(0, 0)`, by bisection between the two basins), :func:`flow_field` and
:func:`kappa_nullcline` (the direction of the dynamics and its nullclines: Figure 6(b)). Step 1 (chapter 6) is
:mod:`slrlib.book.ch06_pgd`.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from slrlib.validation import (
    as_float_array,
    check_finite,
    check_positive_int,
    check_real_scalar,
)
from slrlib.training.pgd import (
    reduced_map_kernel,  # the map F of Lemma 7 with traced λ, α
    classify_hessian,
    fixed_point_table,
    manifold_hessian,
    reduced_map,
    reduced_pgd,
    riemannian_hessian,
)
from slrlib.core.risk import manifold_risk, risk_kernel
from slrlib.core.task import SLRTask, check_task

__all__ = [
    "FIVE_POINTS",
    "LIMIT_NAMES",
    "BasinGrid",
    "DescentCheck",
    "FlowField",
    "Landscape",
    "basin_grid",
    "default_starts",
    "descent_check",
    "flow_field",
    "jacobian_determinant",
    "kappa_nullcline",
    "kappa_partial",
    "landscape",
    "limit_labels",
    "portrait_step",
    "reduced_jacobians",
    "risk_hessians",
    "saddle_stable_set",
]

#: The solutions of (14) according to Proposition 9, in the order of :data:`LIMIT_NAMES`.
FIVE_POINTS = np.array(
    [[0.0, 0.0], [1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]]
)
#: Names of the labels returned by :func:`limit_labels` (label ``i`` is ``LIMIT_NAMES[i]``,
#: label ``-1`` means "not within tolerance of any of the five points").
LIMIT_NAMES = ("(0, 0)", "(1, 1)", "(-1, -1)", "(1, -1)", "(-1, 1)")


def _check_square(x, name):
    x = as_float_array(x, name)
    check_finite(x, name)
    if not bool(np.all(np.abs(np.asarray(x)) <= 1.0)):
        raise ValueError(
            f"{name} must lie in [-1, 1], got values up to {float(np.max(np.abs(np.asarray(x))))}"
        )
    return x


# --------------------------------------------------------------------------- chapter 7
def portrait_step(lam: float, task: SLRTask, fraction: float = 0.2) -> float:
    r"""A step size for phase portraits: ``fraction`` divided by the largest eigenvalue of
    the Hessian of the manifold risk at the saddle :math:`(0, 0)`.

    The curvature of :math:`\mathcal R` on :math:`\mathcal M` grows like :math:`\lambda^2 d`,
    so a step that is small for :math:`\lambda = 0.02` is too large for :math:`\lambda = 1`;
    scaling α this way draws comparable trajectories for every :math:`\lambda` (the caller
    should still check that the risk decreases along them, :func:`descent_check`).
    """
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    fraction = check_real_scalar(
        fraction, "fraction", minimum=0.0, strict=True
    )
    top = float(
        np.max(np.linalg.eigvalsh(manifold_hessian(0.0, 0.0, lam, task)))
    )
    return fraction / top


class Landscape(NamedTuple):
    r"""The risk on :math:`\mathcal M` and the reduced dynamics drawn on it (Figure 6).

    ``kappa``, ``nu`` (n,) grid axes; ``risk`` (n, n), indexed ``[i_nu, i_kappa]``;
    ``starts`` (m, 2) initial :math:`(\kappa_0, \nu_0)`; ``paths_kappa``, ``paths_nu``
    (m, n_log) reduced-PGD trajectories; ``max_increase`` (m,) the largest step-to-step
    increase of the risk along each (:func:`descent_check`; :math:`\le 0` up to round-off
    in the descent regime); ``points`` (p, 2) fixed points, ``kinds`` (p,) their kinds,
    ``point_risk`` (p,); ``numerical`` whether the points were found by Newton's method
    (:func:`slrlib.training.pgd.fixed_point_table`) or taken from Proposition 9 and classified
    by the Riemannian Hessian; ``table`` the :class:`~slrlib.training.pgd.FixedPoint` list when
    numerical, else ``None``.
    """

    lam: float
    alpha: float
    n_steps: int
    kappa: np.ndarray
    nu: np.ndarray
    risk: np.ndarray
    starts: np.ndarray
    paths_kappa: np.ndarray
    paths_nu: np.ndarray
    max_increase: np.ndarray
    points: np.ndarray
    kinds: tuple
    point_risk: np.ndarray
    numerical: bool
    table: list | None


def default_starts() -> np.ndarray:
    r"""Initial points for phase portraits: the 5 × 5 grid :math:`\{-0.9, -0.45, 0, 0.45, 0.9\}^2`
    without its centre (the saddle itself), shape (24, 2)."""
    g = np.array([-0.9, -0.45, 0.0, 0.45, 0.9])
    pts = np.array([(a, b) for b in g for a in g if (a, b) != (0.0, 0.0)])
    return pts


def landscape(
    lam: float,
    task: SLRTask,
    *,
    alpha: float | None = None,
    n_steps: int = 2000,
    log_every: int = 10,
    n_grid: int = 121,
    starts=None,
    numerical: bool = False,
) -> Landscape:
    r"""Everything Figure 6 draws at one :math:`\lambda`: the manifold risk (Lemma 6) on an
    ``n_grid`` × ``n_grid`` grid of :math:`[-1, 1]^2`, reduced-PGD trajectories (Lemma 7)
    from ``starts`` (default :func:`default_starts`), and the fixed points of (14).

    ``alpha`` defaults to :func:`portrait_step`. With ``numerical=True`` the fixed points
    are found by :func:`slrlib.training.pgd.fixed_point_table` (Newton from a 21 × 21 grid,
    a few seconds); otherwise the five points of Proposition 9 are classified by the signs
    of the eigenvalues of :func:`slrlib.training.pgd.riemannian_hessian` (fast: for sliders).
    """
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha = (
        portrait_step(lam, task)
        if alpha is None
        else check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    )
    n_grid = check_positive_int(n_grid, "n_grid")
    if n_grid < 2:
        raise ValueError(f"n_grid must be >= 2, got {n_grid}")
    starts = (
        default_starts() if starts is None else np.asarray(starts, dtype=float)
    )
    if starts.ndim != 2 or starts.shape[1] != 2:
        raise ValueError(
            f"starts must have shape (m, 2), got shape {starts.shape}"
        )
    _check_square(starts, "starts")
    axis = np.linspace(-1.0, 1.0, n_grid)
    K, N = np.meshgrid(axis, axis)
    risk = np.asarray(manifold_risk(K, N, lam, task))
    red = reduced_pgd(
        starts[:, 0],
        starts[:, 1],
        task,
        lam=lam,
        alpha=alpha,
        n_steps=n_steps,
        log_every=log_every,
    )
    check = descent_check(
        starts[:, 0], starts[:, 1], task, lam=lam, alpha=alpha, n_steps=n_steps
    )
    if numerical:
        table = fixed_point_table(lam, alpha, task)
        points = np.array([[p.kappa, p.nu] for p in table])
        kinds = tuple(p.kind for p in table)
        point_risk = np.array([p.risk for p in table])
    else:
        table = None
        points = FIVE_POINTS.copy()
        kinds = tuple(
            classify_hessian(
                np.linalg.eigvalsh(riemannian_hessian(k, n, lam, task))
            )
            for k, n in points
        )
        point_risk = np.asarray(
            manifold_risk(points[:, 0], points[:, 1], lam, task)
        )
    return Landscape(
        lam,
        alpha,
        n_steps,
        axis,
        axis,
        risk,
        starts,
        np.asarray(red.kappa),
        np.asarray(red.nu),
        check.max_increase,
        points,
        kinds,
        point_risk,
        numerical,
        table,
    )


class FlowField(NamedTuple):
    r"""The direction of reduced PGD on :math:`\mathcal M` for a vanishing step (Figure 6(b)).

    ``kappa``, ``nu`` (n,) grid axes; ``v_kappa``, ``v_nu`` (n, n), indexed ``[i_nu, i_kappa]``:
    :math:`\lim_{\alpha\to 0}(F(x) - x)/\alpha = -\big((1-\kappa^2)\,\partial_\kappa\mathcal R,\;
    (1-\nu^2)\,\partial_\nu\mathcal R\big)` (from eqs. 12–13), with the derivatives of
    :func:`slrlib.training.pgd.manifold_risk_grad`; ``curve_kappa``, ``curve_nu`` (m,) the
    interior nullcline of :math:`\kappa` (:func:`kappa_nullcline`).
    """

    lam: float
    kappa: np.ndarray
    nu: np.ndarray
    v_kappa: np.ndarray
    v_nu: np.ndarray
    curve_kappa: np.ndarray
    curve_nu: np.ndarray


def kappa_nullcline(kappa, lam: float, task: SLRTask) -> np.ndarray:
    r"""The curve of :math:`[-1, 1]^2` where :math:`\partial_\kappa\mathcal R = 0`, as
    :math:`\nu` against :math:`\kappa` (our rewriting, from the factored form of
    :func:`kappa_partial`):

    .. math::

        \nu = \operatorname{erf}\Big(\frac{\lambda q \kappa}{\sqrt{c_2 c_4}}\Big), \qquad
        q = \sqrt{d/2},\; c_2 = 1 + 2\lambda^2\gamma^2,\; c_4 = 1 + 4\lambda^2\gamma^2.

    Off it, :math:`\partial_\kappa\mathcal R` has the sign of :math:`\nu_{\rm curve} - \nu`,
    so :math:`\kappa` grows above the curve and shrinks below it; :math:`\partial_\nu\mathcal R
    = -2\gamma^2\operatorname{erf}(\lambda q\kappa/\sqrt{c_2})` vanishes only on :math:`\kappa = 0`.
    """
    task = check_task(task)
    kappa = _check_square(kappa, "kappa")
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    from scipy.special import erf

    g2 = task.gamma**2
    c2 = 1.0 + 2.0 * lam**2 * g2
    c4 = 1.0 + 4.0 * lam**2 * g2
    return erf(
        lam * np.sqrt(task.d / 2.0) * np.asarray(kappa) / np.sqrt(c2 * c4)
    )


def flow_field(
    lam: float, task: SLRTask, *, n_grid: int = 41, n_curve: int = 401
) -> FlowField:
    r"""The :class:`FlowField` at one :math:`\lambda` on an ``n_grid`` × ``n_grid`` grid of
    :math:`[-1, 1]^2`, with the nullcline of :func:`kappa_nullcline` at ``n_curve`` values of
    :math:`\kappa`."""
    from slrlib.training.pgd import manifold_risk_grad

    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    n_grid = check_positive_int(n_grid, "n_grid")
    n_curve = check_positive_int(n_curve, "n_curve")
    for name, n in (("n_grid", n_grid), ("n_curve", n_curve)):
        if n < 2:
            raise ValueError(f"{name} must be >= 2, got {n}")
    axis = np.linspace(-1.0, 1.0, n_grid)
    K, N = np.meshgrid(axis, axis)
    dk, dn = manifold_risk_grad(K, N, lam, task)
    v_kappa = -(1.0 - K**2) * np.asarray(dk)
    v_nu = -(1.0 - N**2) * np.asarray(dn)
    curve_kappa = np.linspace(-1.0, 1.0, n_curve)
    return FlowField(
        lam,
        axis,
        axis,
        v_kappa,
        v_nu,
        curve_kappa,
        kappa_nullcline(curve_kappa, lam, task),
    )


class DescentCheck(NamedTuple):
    r"""Proposition 8 along reduced trajectories, per initial point (arrays of the starts' shape).

    ``max_increase``: :math:`\max_t\,[\mathcal R(\kappa_{t+1}, \nu_{t+1}) - \mathcal R(\kappa_t, \nu_t)]`;
    ``first_increase``: the first step ``t`` where the risk increased by more than
    ``tol`` (``-1`` if never); ``last_step``: :math:`|(\kappa_n, \nu_n) - (\kappa_{n-1}, \nu_{n-1})|`
    (Euclidean); ``kappa``, ``nu``: the final iterates; ``risk``: the final risk.
    """

    max_increase: np.ndarray
    first_increase: np.ndarray
    last_step: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    risk: np.ndarray


def descent_check(
    kappa0,
    nu0,
    task: SLRTask,
    *,
    lam: float,
    alpha: float,
    n_steps: int,
    tol: float = 1e-12,
) -> DescentCheck:
    r"""Iterate the reduced map :math:`F` (Lemma 7) ``n_steps`` times from each
    :math:`(\kappa_0, \nu_0)` (arrays that broadcast) and record, without storing the
    trajectories, the largest one-step increase of the manifold risk, the first step where
    it exceeded ``tol``, and the length of the last step (Proposition 8: for small α the
    risk decreases and successive iterates get arbitrarily close).
    """
    task = check_task(task)
    kappa0 = _check_square(kappa0, "kappa0")
    nu0 = _check_square(nu0, "nu0")
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    n_steps = check_positive_int(n_steps, "n_steps")
    tol = check_real_scalar(tol, "tol", minimum=0.0)
    kappa0, nu0 = jnp.broadcast_arrays(kappa0, nu0)
    k, n, r, inc, first, last = _descent_run(
        kappa0,
        nu0,
        lam,
        alpha,
        float(task.d),
        float(task.L),
        task.gamma,
        task.eps,
        tol,
        n_steps=n_steps,
    )
    return DescentCheck(
        np.asarray(inc),
        np.asarray(first),
        np.asarray(last),
        np.asarray(k),
        np.asarray(n),
        np.asarray(r),
    )


# The raw kernels of slrlib.training.pgd (the map F of Lemma 7) and slrlib.core.risk (Proposition 15)
# take the task's numbers and λ, α as traced arrays: one compilation serves every λ and α
# (the bisection of saddle_stable_set calls this 60 times).
@partial(jax.jit, static_argnames=("n_steps",))
def _descent_run(kappa0, nu0, lam, alpha, d, L, gamma, eps, tol, *, n_steps):
    def risk(k, n):
        return risk_kernel(
            jnp.clip(k, -1.0, 1.0),
            jnp.clip(n, -1.0, 1.0),
            0.0,
            0.0,
            0.0,
            lam,
            d,
            L,
            gamma,
            eps,
        )

    def step(carry, t):
        k, n, r, inc, first, last = carry
        k1, n1 = reduced_map_kernel(k, n, lam, alpha, d, gamma)
        r1 = risk(k1, n1)
        diff = r1 - r
        first = jnp.where((first < 0) & (diff > tol), t, first)
        last = jnp.sqrt(jnp.square(k1 - k) + jnp.square(n1 - n))
        return (k1, n1, r1, jnp.maximum(inc, diff), first, last), None

    init = (
        kappa0,
        nu0,
        risk(kappa0, nu0),
        jnp.full(kappa0.shape, -jnp.inf),
        jnp.full(kappa0.shape, -1),
        jnp.zeros_like(kappa0),
    )
    out, _ = jax.lax.scan(step, init, jnp.arange(n_steps))
    return out


def kappa_partial(kappa, nu, lam: float, task: SLRTask):
    r""":math:`\partial_\kappa\mathcal R` on :math:`\mathcal M` in factored form (our rewriting):

    .. math::

        \partial_\kappa\mathcal R(\kappa, \nu) = \frac{2\gamma^2\lambda q}{\sqrt{c_2}}\,
        \operatorname{erf}'(a)\,\Big[\operatorname{erf}\Big(\frac{a}{\sqrt{c_4}}\Big) - \nu\Big],
        \qquad a = \frac{\lambda q\kappa}{\sqrt{c_2}},

    with :math:`c_2 = 1 + 2\lambda^2\gamma^2`, :math:`c_4 = 1 + 4\lambda^2\gamma^2` (insert
    :math:`\partial_t\zeta(t, s) = \frac{2}{\sqrt{c_2}}\operatorname{erf}(\frac{t}{\sqrt{c_2 c_4}})
    \operatorname{erf}'(\frac{t}{\sqrt{c_2}})` into the formula of
    :func:`slrlib.training.pgd.manifold_risk_grad`). On the edges :math:`\nu = \pm 1` the bracket
    is computed as :math:`\mp\operatorname{erfc}(\pm a/\sqrt{c_4})`, without the cancellation
    of :math:`\operatorname{erf} - 1`: the result keeps its sign and relative accuracy when
    it is as small as :math:`10^{-300}`. Arguments broadcast.
    """
    from jax.scipy.special import erf, erfc

    from slrlib.core.gaussian import erf_prime

    task = check_task(task)
    kappa = _check_square(kappa, "kappa")
    nu = _check_square(nu, "nu")
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    q = np.sqrt(task.d / 2.0)
    g2 = task.gamma**2
    c2 = 1.0 + 2.0 * lam**2 * g2
    c4 = 1.0 + 4.0 * lam**2 * g2
    a = lam * q * kappa / np.sqrt(c2)
    x = a / np.sqrt(c4)
    bracket = jnp.where(
        nu == 1.0, -erfc(x), jnp.where(nu == -1.0, erfc(-x), erf(x) - nu)
    )
    return 2.0 * g2 * lam * q / np.sqrt(c2) * erf_prime(a) * bracket


def reduced_jacobians(
    kappa, nu, task: SLRTask, *, lam: float, alpha: float
) -> np.ndarray:
    r"""Jacobian matrices of the reduced map :math:`F` (Lemma 7) at each :math:`(\kappa, \nu)`
    (arrays that broadcast), by ``jax.jacfwd`` under ``jax.vmap``; shape ``(..., 2, 2)``.

    Used for Proposition 12: :math:`DF = I - \alpha D\Phi_\alpha` with :math:`D\Phi_\alpha`
    bounded uniformly in :math:`\alpha`, so :math:`(I - DF)/\alpha` is the matrix to bound.
    """
    task = check_task(task)
    kappa = _check_square(kappa, "kappa")
    nu = _check_square(nu, "nu")
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    kappa, nu = jnp.broadcast_arrays(kappa, nu)
    d, gamma = float(task.d), task.gamma
    jac = jax.jacfwd(
        lambda x: jnp.stack(
            reduced_map_kernel(x[0], x[1], lam, alpha, d, gamma)
        )
    )
    flat = jax.jit(jax.vmap(lambda k, n: jac(jnp.stack([k, n]))))(
        kappa.ravel(), nu.ravel()
    )
    return np.asarray(flat).reshape(kappa.shape + (2, 2))


def risk_hessians(kappa, nu, task: SLRTask, *, lam: float) -> np.ndarray:
    r"""Hessian matrices of the manifold risk :math:`\mathcal R_\lambda(\kappa, \nu)` (Lemma 6) at each
    :math:`(\kappa, \nu)` (arrays that broadcast), by ``jax.hessian`` under ``jax.vmap``; shape
    ``(..., 2, 2)``. Their largest spectral norm over the square is the Lipschitz constant
    :math:`\ell` of the gradient in the proof of Proposition 8.
    """
    task = check_task(task)
    kappa = _check_square(kappa, "kappa")
    nu = _check_square(nu, "nu")
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    kappa, nu = jnp.broadcast_arrays(kappa, nu)
    d, L = float(task.d), float(task.L)
    hess = jax.hessian(
        lambda x: risk_kernel(
            x[0], x[1], 0.0, 0.0, 0.0, lam, d, L, task.gamma, task.eps
        )
    )
    flat = jax.jit(jax.vmap(lambda k, n: hess(jnp.stack([k, n]))))(
        kappa.ravel(), nu.ravel()
    )
    return np.asarray(flat).reshape(kappa.shape + (2, 2))


def jacobian_determinant(
    kappa, nu, task: SLRTask, *, lam: float, alpha: float
):
    r"""Determinant of the Jacobian of the reduced map :math:`F` (Lemma 7) at each
    :math:`(\kappa, \nu)` (arrays that broadcast): the determinants of :func:`reduced_jacobians`.

    Proposition 12 says it does not vanish on :math:`[-1, 1]^2` for small α; at
    :math:`(0, 0)` it is :math:`\det(I - \alpha\nabla^2\mathcal R(0, 0))`.
    """
    return np.linalg.det(
        reduced_jacobians(kappa, nu, task, lam=lam, alpha=alpha)
    )


def limit_labels(kappa, nu, *, tol: float = 1e-3) -> np.ndarray:
    r"""Which of the five fixed points each :math:`(\kappa, \nu)` is within ``tol`` of
    (max-norm): label ``i`` for ``FIVE_POINTS[i]`` (names in :data:`LIMIT_NAMES`: 0 the
    saddle, 1 and 2 the minima :math:`(1,1)` and :math:`(-1,-1)`, 3 and 4 the maxima), ``-1``
    for none. Finer than :func:`slrlib.training.pgd.classify_limits`, which merges the two
    minima and the two maxima."""
    tol = check_real_scalar(tol, "tol", minimum=0.0, strict=True)
    kappa = np.asarray(kappa, dtype=float)
    nu = np.asarray(nu, dtype=float)
    labels = np.full(np.broadcast(kappa, nu).shape, -1, dtype=int)
    for i, (a, b) in enumerate(FIVE_POINTS):
        labels[(np.abs(kappa - a) <= tol) & (np.abs(nu - b) <= tol)] = i
    return labels


class BasinGrid(NamedTuple):
    r"""Where reduced PGD goes from each point of a grid of initialisations (Propositions 11, 13).

    ``kappa0``, ``nu0`` (n,) grid axes; ``labels`` (n, n) from :func:`limit_labels`,
    indexed ``[i_nu, i_kappa]``; ``kappa``, ``nu`` (n, n) final iterates;
    ``max_increase`` (n, n) from :func:`descent_check` (or ``None``), ``last_step`` (n, n)
    the length of one more step from the final point.
    """

    lam: float
    alpha: float
    n_steps: int
    kappa0: np.ndarray
    nu0: np.ndarray
    labels: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    max_increase: np.ndarray | None
    last_step: np.ndarray


def basin_grid(
    lam: float,
    task: SLRTask,
    *,
    alpha: float,
    n_steps: int,
    n_grid: int = 201,
    tol: float = 1e-3,
    check_descent: bool = False,
) -> BasinGrid:
    r"""Run the reduced map from every point of an ``n_grid`` × ``n_grid`` grid of
    :math:`[-1, 1]^2` (which contains :math:`(0, 0)` and the corners when ``n_grid`` is odd)
    and label the point reached after ``n_steps`` steps (:func:`limit_labels` with ``tol``).

    ``last_step`` is the length of one more step of :math:`F` from the final point. With
    ``check_descent=True`` the trajectories are run by :func:`descent_check`, which also
    records the largest one-step increase of the risk (about three times slower: the risk
    is evaluated at every step); otherwise ``max_increase`` is ``None``.
    """
    n_grid = check_positive_int(n_grid, "n_grid")
    if n_grid < 2:
        raise ValueError(f"n_grid must be >= 2, got {n_grid}")
    if not isinstance(check_descent, (bool, np.bool_)):
        raise ValueError(
            f"check_descent must be True or False, got {check_descent!r}"
        )
    axis = np.linspace(-1.0, 1.0, n_grid)
    K, N = np.meshgrid(axis, axis)
    if check_descent:
        check = descent_check(
            K, N, task, lam=lam, alpha=alpha, n_steps=n_steps
        )
        kappa, nu, increase = check.kappa, check.nu, check.max_increase
    else:
        out = reduced_pgd(
            K,
            N,
            task,
            lam=lam,
            alpha=alpha,
            n_steps=n_steps,
            log_every=n_steps,
        )
        kappa, nu, increase = (
            np.asarray(out.kappa)[..., -1],
            np.asarray(out.nu)[..., -1],
            None,
        )
    k1, n1 = reduced_map(
        np.clip(kappa, -1.0, 1.0), np.clip(nu, -1.0, 1.0), lam, alpha, task
    )
    last = np.hypot(np.asarray(k1) - kappa, np.asarray(n1) - nu)
    labels = limit_labels(kappa, nu, tol=tol)
    return BasinGrid(
        float(lam),
        float(alpha),
        int(n_steps),
        axis,
        axis,
        labels,
        kappa,
        nu,
        increase,
        last,
    )


def saddle_stable_set(
    kappa0,
    task: SLRTask,
    *,
    lam: float,
    alpha: float,
    n_steps: int = 2000,
    n_bisect: int = 52,
) -> np.ndarray:
    r"""For each :math:`\kappa_0 \in (-1, 1)`, the :math:`\nu_0` whose reduced trajectory
    converges to the saddle :math:`(0, 0)`, by bisection.

    On the bottom edge :math:`\nu_0 = -1` the dynamics go to :math:`(-1, -1)` and on the top
    edge to :math:`(1, 1)` (both edges are invariant); the two basins are open, so between
    them along the vertical line there is a point reaching neither minimum, which by
    Propositions 11 and 10 goes to the saddle (the maxima are reached only from
    themselves). The bisection keeps the sign of :math:`\kappa_n` after ``n_steps`` steps
    (the side of the saddle's stable set the trajectory left on) and halves
    :math:`[-1, 1]` ``n_bisect`` times: the result is within about :math:`2^{1-n}` of that
    point, i.e. at round-off for the default. ``n_steps`` must be large enough for a start
    one round-off away from the set to leave the saddle's neighbourhood.
    Returns an array of the shape of ``kappa0``.
    """
    task = check_task(task)
    kappa0 = _check_square(kappa0, "kappa0")
    if bool(np.any(np.abs(np.asarray(kappa0)) >= 1.0)):
        raise ValueError(
            "kappa0 must lie in the open interval (-1, 1): the edges kappa = ±1 are invariant"
        )
    n_bisect = check_positive_int(n_bisect, "n_bisect")
    kappa0 = np.asarray(kappa0, dtype=float)
    lo = np.full(kappa0.shape, -1.0)
    hi = np.full(kappa0.shape, 1.0)
    for _ in range(n_bisect):
        mid = 0.5 * (lo + hi)
        out = reduced_pgd(
            kappa0,
            mid,
            task,
            lam=lam,
            alpha=alpha,
            n_steps=n_steps,
            log_every=n_steps,
        )
        up = np.asarray(out.kappa)[..., -1] > 0
        hi = np.where(up, mid, hi)
        lo = np.where(up, lo, mid)
    return 0.5 * (lo + hi)
