r"""Risks of predictors for single-location regression (Sections 4–5 of Marion et al., 2025).

* :func:`population_risk`: the risk :math:`\mathcal R_\lambda(k, v)` of the erf-attention
  predictor (3) in closed form (Theorem 1 with the expression of Proposition 15);
* :func:`manifold_risk`: its restriction to the invariant manifold (Lemma 6);
* :func:`oracle_risk`, :func:`null_risk`, :func:`linear_risk` (Proposition 3);
* :func:`monte_carlo_risk`: the risk of *any* predictor by simulation, with its standard error.

All closed forms are ``jax`` functions of arrays: differentiable with ``jax.grad``, batched
over leading axes, accurate to float64 round-off.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from scipy import optimize
from jax.scipy.special import erf
from jax.typing import ArrayLike

from slrlib.validation import (
    as_float_array,
    check_at_run_time,
    check_broadcast,
    check_finite,
    check_nonnegative,
    is_concrete,
    require_x64,
)
from slrlib.core.gaussian import (
    erf_prime,
    erf_second,
    expected_erf_sq_centered,
    zeta,
)
from slrlib.core.montecarlo import MonteCarloEstimate, monte_carlo_mean
from slrlib.core.task import SLRTask, check_directions, check_task

__all__ = [
    "Overlaps",
    "OptimalLambda",
    "risk_kernel",
    "overlaps",
    "risk_from_overlaps",
    "population_risk",
    "manifold_risk",
    "oracle_risk",
    "optimal_lambda",
    "null_risk",
    "linear_risk",
    "MonteCarloEstimate",
    "monte_carlo_risk",
]

_SQRT_PI = math.sqrt(math.pi)


class Overlaps(NamedTuple):
    r"""The five scalar products on which the risk depends (Theorem 1).

    .. math::

        \kappa = \langle k, k^\star\rangle,\quad \nu = \langle v, v^\star\rangle,\quad
        \theta = \langle v, k^\star\rangle,\quad \eta = \langle k, v^\star\rangle,\quad
        \rho = \langle k, v\rangle.
    """

    kappa: jax.Array
    nu: jax.Array
    theta: jax.Array
    eta: jax.Array
    rho: jax.Array


def _check_lam(lam):
    lam = as_float_array(lam, "lam")
    check_finite(lam, "lam")
    check_nonnegative(lam, "lam")
    return lam


def overlaps(
    k: ArrayLike, v: ArrayLike, k_star: ArrayLike, v_star: ArrayLike
) -> Overlaps:
    r"""The five overlaps (:class:`Overlaps`) of ``(k, v)`` with ``(k_star, v_star)``.

    .. math::

        \kappa = \langle k, k^\star\rangle,\quad \nu = \langle v, v^\star\rangle,\quad
        \theta = \langle v, k^\star\rangle,\quad \eta = \langle k, v^\star\rangle,\quad
        \rho = \langle k, v\rangle.

    Parameters
    ----------
    k, v, k_star, v_star : array_like, shape (..., d)
        The vectors; they broadcast together. No validation, beyond float64 being on.

    Returns
    -------
    Overlaps
        ``(kappa, nu, theta, eta, rho)``, each of the broadcast leading shape.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, overlaps
    >>> task = SLRTask(d=20, L=5)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> o = overlaps(k_star, v_star, k_star, v_star)  # at the oracle
    >>> o._fields
    ('kappa', 'nu', 'theta', 'eta', 'rho')
    >>> [round(abs(float(x)), 12) for x in o]
    [1.0, 1.0, 0.0, 0.0, 0.0]
    """
    require_x64()
    dot = lambda a, b: jnp.sum(a * b, axis=-1)  # noqa: E731
    return Overlaps(
        dot(k, k_star),
        dot(v, v_star),
        dot(v, k_star),
        dot(k, v_star),
        dot(k, v),
    )


def risk_from_overlaps(
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike,
    eta: ArrayLike,
    rho: ArrayLike,
    lam: ArrayLike,
    task: SLRTask,
) -> jax.Array:
    r"""Closed-form risk :math:`\mathcal R_\lambda` as a function of the five overlaps (Proposition 15).

    With :math:`q = \sqrt{d/2}`, :math:`s = \lambda\gamma`, :math:`c_2 = 1 + 2s^2`,
    :math:`c_4 = 1 + 4s^2`, :math:`a = \lambda q\kappa/\sqrt{c_2}` and
    :math:`C = 2\lambda/\sqrt{\pi(1 + 2\lambda^2)}`,

    .. math::

        \begin{aligned}
        \mathcal R_\lambda = \varepsilon^2 &+ (L-1)\zeta(0,\lambda) + \gamma^2
         - 2\Big[\gamma^2\nu\operatorname{erf}(a)
                 + \tfrac{\lambda\gamma^2 q\eta\theta}{\sqrt{c_2}}\operatorname{erf}'(a)
                 + \tfrac{\lambda^2\gamma^4\eta\rho}{c_2}\operatorname{erf}''(a)\Big]
         + (q^2\theta^2 + \gamma^2)\,\zeta(\lambda q\kappa, s) \\
        &+ \tfrac{4\lambda\gamma^2 q}{\sqrt{c_2}}\Big(\theta\rho - \tfrac{\lambda^2\gamma^2\rho^2\kappa}{c_2}\Big)
              \operatorname{erf}\big(\tfrac{a}{\sqrt{c_4}}\big)\operatorname{erf}'(a)
         + \tfrac{4\lambda^2\gamma^4\rho^2}{\sqrt\pi c_2\sqrt{c_4}}
              \operatorname{erf}'\big(\tfrac{\sqrt2\lambda q\kappa}{\sqrt{c_4}}\big) \\
        &+ (L-1)\tfrac{8\lambda^2\rho^2}{\pi(1+2\lambda^2)\sqrt{1+4\lambda^2}}
         + (L-1)(L-2)C^2\rho^2
         + 2(L-1)C\rho\Big[q\theta\operatorname{erf}(a)
           + \tfrac{\lambda\gamma^2\rho}{\sqrt{c_2}}\operatorname{erf}'(a)\Big].
        \end{aligned}

    The three lines gather the relevant token alone, the noise tokens alone, and the
    cross terms. It does not depend on the law of :math:`J_0`. Arguments broadcast.
    No validation of the overlaps here: this is the raw formula, also meant for points off
    the sphere product (use :func:`population_risk` at the public boundary). Compiled once
    per shape: the task's numbers are traced, not static, so sweeps over ``d`` or ``L``
    do not recompile.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : array_like
        The overlaps (:func:`overlaps`); they broadcast together with ``lam``.
    lam : array_like
        Inverse temperature :math:`\lambda`.
    task : SLRTask
        The task (:math:`d, L, \gamma, \varepsilon`).

    Returns
    -------
    jax.Array
        :math:`\mathcal R_\lambda`, of the broadcast shape of the arguments.

    Raises
    ------
    ValueError
        When ``task`` is not an :class:`SLRTask`.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, oracle_risk, risk_from_overlaps
    >>> task = SLRTask(d=400, L=10)
    >>> # (kappa, nu, theta, eta, rho) = (1, 1, 0, 0, 0) is (k*, v*)
    >>> r = risk_from_overlaps(1.0, 1.0, 0.0, 0.0, 0.0, 0.064, task)
    >>> round(float(r), 4), round(float(oracle_risk(0.064, task)), 4)
    (0.0671, 0.0671)
    """
    task = check_task(task)
    return risk_kernel(
        kappa, nu, theta, eta, rho, lam, task.d, task.L, task.gamma, task.eps
    )


@jax.jit
def risk_kernel(
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike,
    eta: ArrayLike,
    rho: ArrayLike,
    lam: ArrayLike,
    d: ArrayLike,
    L: ArrayLike,
    gamma: ArrayLike,
    eps: ArrayLike,
) -> jax.Array:
    r"""The closed-form risk of Theorem 1 (eq. 8) as a pure, compiled function of arrays.

    The formula of :func:`risk_from_overlaps`, with the task's numbers :math:`d, L, \gamma,
    \varepsilon` passed as numbers or arrays instead of an :class:`SLRTask`, and without input
    validation: every argument may be traced, so ``jax.grad`` and ``jax.jacfwd`` differentiate
    it in any of them (:math:`\lambda` included) and ``jax.vmap`` maps it over any of them. Use
    :func:`risk_from_overlaps` at the public boundary; this kernel is for code that
    differentiates or iterates the risk itself (PGD, the chapters' Hessians).

    Parameters
    ----------
    kappa, nu, theta, eta, rho : array_like
        The overlaps (:func:`overlaps`); they broadcast together with ``lam``.
    lam : array_like
        Inverse temperature :math:`\lambda`.
    d, L, gamma, eps : array_like
        Dimension, sequence length, :math:`\gamma`, :math:`\varepsilon` of the task.

    Returns
    -------
    jax.Array
        :math:`\mathcal R_\lambda`, of the broadcast shape of the arguments.
    """
    q = jnp.sqrt(d / 2.0)
    g2 = gamma**2
    s = lam * gamma
    c2 = 1.0 + 2.0 * s**2
    c4 = 1.0 + 4.0 * s**2
    sc2 = jnp.sqrt(c2)
    sc4 = jnp.sqrt(c4)
    a = lam * q * kappa / sc2
    C = 2.0 * lam / jnp.sqrt(math.pi * (1.0 + 2.0 * lam**2))
    erf_a, erfp_a = erf(a), erf_prime(a)

    noise_alone = (L - 1) * zeta(jnp.zeros_like(lam), lam)
    relevant = (
        g2
        - 2.0
        * (
            g2 * nu * erf_a
            + lam * g2 * q * eta * theta / sc2 * erfp_a
            + lam**2 * g2**2 * eta * rho / c2 * erf_second(a)
        )
        + (q**2 * theta**2 + g2) * zeta(lam * q * kappa, s)
        + 4.0
        * lam
        * g2
        * q
        / sc2
        * (theta * rho - lam**2 * g2 * rho**2 * kappa / c2)
        * erf(a / sc4)
        * erfp_a
        + 4.0
        * lam**2
        * g2**2
        * rho**2
        / (_SQRT_PI * c2 * sc4)
        * erf_prime(jnp.sqrt(2.0) * lam * q * kappa / sc4)
    )
    noise_rho = (L - 1) * 8.0 * lam**2 * rho**2 / (
        math.pi * (1.0 + 2.0 * lam**2) * jnp.sqrt(1.0 + 4.0 * lam**2)
    ) + (L - 1) * (L - 2) * C**2 * rho**2
    cross = (
        2.0
        * (L - 1)
        * C
        * rho
        * (q * theta * erf_a + lam * g2 * rho / sc2 * erfp_a)
    )
    return eps**2 + noise_alone + relevant + noise_rho + cross


def population_risk(
    k: ArrayLike,
    v: ArrayLike,
    k_star: ArrayLike,
    v_star: ArrayLike,
    lam: ArrayLike,
    task: SLRTask,
) -> jax.Array:
    r"""The risk of the erf-attention predictor (3), in closed form (Theorem 1, Proposition 15).

    .. math::

        \mathcal R_\lambda(k, v) = \mathbb E[(Y - T^{(k,v)}_\lambda(\mathbb X))^2],

    evaluated by :func:`risk_from_overlaps` at the overlaps of :math:`(k, v)`.

    Parameters
    ----------
    k, v : array_like, shape (..., d)
        Unit vectors; leading axes broadcast (many parameter points at once).
    k_star, v_star : array_like, shape (d,)
        The task's directions: unit norm and orthogonal (Assumption 1).
    lam : float or array_like
        Inverse temperature :math:`\lambda \ge 0` (broadcasts with the leading axes).
    task : SLRTask
        The task.

    Returns
    -------
    jax.Array
        The risk, of shape ``broadcast(k.shape[:-1], v.shape[:-1], lam.shape)``.

    Raises
    ------
    ValueError
        When an argument is invalid: ``k`` or ``v`` not finite unit vectors of dimension ``d``,
        the task's directions violating Assumption 1, ``lam`` negative or not finite.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Notes
    -----
    Differentiable with ``jax.grad`` in ``k``, ``v`` and ``lam``: the Euclidean gradient of
    the closed form, e.g. :math:`\nabla_k\mathcal R = \partial_\kappa\mathcal R\, k^\star
    + \partial_\eta\mathcal R\, v^\star + \partial_\rho\mathcal R\, v`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, oracle_risk, population_risk
    >>> task = SLRTask(d=400, L=10)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> r = population_risk(k_star, v_star, k_star, v_star, 0.064, task)
    >>> round(float(r), 4), round(float(oracle_risk(0.064, task)), 4)
    (0.0671, 0.0671)
    >>> # (k*, v*) is a critical point: the gradient is normal to the sphere
    >>> grad_k = jax.grad(population_risk)  # with respect to k
    >>> g = grad_k(k_star, v_star, k_star, v_star, 0.064, task)
    >>> bool(abs(g - (g @ k_star) * k_star).max() < 1e-12)
    True
    """
    task = check_task(task)
    k = task.check_parameter_vector(k, "k")
    v = task.check_parameter_vector(v, "v")
    k_star, v_star = check_directions(k_star, v_star, task.d)
    lam = _check_lam(lam)
    check_broadcast(k=k.shape[:-1], v=v.shape[:-1], lam=jnp.shape(lam))
    return risk_from_overlaps(*overlaps(k, v, k_star, v_star), lam, task)


def manifold_risk(
    kappa: ArrayLike, nu: ArrayLike, lam: ArrayLike, task: SLRTask
) -> jax.Array:
    r"""The risk on the invariant manifold :math:`\mathcal M = \{\theta = \eta = \rho = 0\}` (Lemma 6).

    .. math::

        \mathcal R_\lambda = \varepsilon^2 + (L-1)\zeta(0,\lambda) + \gamma^2\Big[1 - 2\nu
        \operatorname{erf}\Big(\frac{\lambda q \kappa}{\sqrt{1 + 2\lambda^2\gamma^2}}\Big)
        + \zeta(\lambda q \kappa, \lambda\gamma)\Big],

    with :math:`q = \sqrt{d/2}`: a function of :math:`(\kappa, \nu) \in [-1, 1]^2` only.

    Parameters
    ----------
    kappa, nu : array_like
        The overlaps :math:`\kappa, \nu \in [-1, 1]`; they broadcast together with ``lam``.
    lam : float or array_like
        Inverse temperature :math:`\lambda \ge 0`.
    task : SLRTask
        The task.

    Returns
    -------
    jax.Array
        The risk, of the broadcast shape of the arguments.

    Raises
    ------
    ValueError
        When ``kappa`` or ``nu`` is not finite or lies outside :math:`[-1, 1]`, or ``lam`` is
        negative or not finite.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> import jax.numpy as jnp
    >>> from slrlib import SLRTask, manifold_directions, manifold_risk
    >>> from slrlib import population_risk
    >>> task = SLRTask(d=400, L=10)
    >>> round(float(manifold_risk(1.0, 1.0, 0.064, task)), 4)  # (k*, v*)
    0.0671
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> k, v = manifold_directions(jax.random.key(1), k_star, v_star)
    >>> on_m = manifold_risk(k @ k_star, v @ v_star, 0.064, task)
    >>> full = population_risk(k, v, k_star, v_star, 0.064, task)
    >>> bool(jnp.isclose(on_m, full))  # Lemma 6: the same risk on M
    True
    """
    task = check_task(task)
    kappa = as_float_array(kappa, "kappa")
    nu = as_float_array(nu, "nu")
    for x, name in ((kappa, "kappa"), (nu, "nu")):
        check_finite(x, name)
        if not is_concrete(x):
            check_at_run_time(
                ~jnp.all(jnp.abs(x) <= 1.0 + 1e-12),
                x,
                f"{name} must lie in [-1, 1], got {{value}}",
            )
        elif not bool(jnp.all(jnp.abs(x) <= 1.0 + 1e-12)):
            raise ValueError(
                f"{name} must lie in [-1, 1], got {np.asarray(x)}"
            )
    lam = _check_lam(lam)
    zero = jnp.zeros(())
    return risk_from_overlaps(kappa, nu, zero, zero, zero, lam, task)


def oracle_risk(lam: ArrayLike, task: SLRTask) -> jax.Array:
    r"""Risk of the erf-attention predictor at the oracle, :math:`\mathcal R_\lambda(k^\star, v^\star)` (Theorem 1).

    .. math::

        \varepsilon^2 + \gamma^2\Big[1 - 2\operatorname{erf}\Big(\frac{\lambda q}{\sqrt{1+2\lambda^2\gamma^2}}\Big)
        + \zeta(\lambda q, \lambda\gamma)\Big] + (L-1)\,\zeta(0, \lambda),

    with :math:`q = \sqrt{d/2}`. Under the scaling of Corollary 2 (:math:`\lambda\sqrt d \to \infty`,
    :math:`\lambda\sqrt L \to 0`) it tends to :math:`\varepsilon^2`, the Bayes risk's lower bound.

    Parameters
    ----------
    lam : float or array_like
        Inverse temperature :math:`\lambda \ge 0`.
    task : SLRTask
        The task.

    Returns
    -------
    jax.Array
        The risk, of the shape of ``lam``.

    Raises
    ------
    ValueError
        When ``lam`` is negative or not finite, or ``task`` is not an :class:`SLRTask`.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> import jax.numpy as jnp
    >>> from slrlib import SLRTask, null_risk, oracle_risk
    >>> task = SLRTask(d=400, L=10)
    >>> round(float(oracle_risk(0.064, task)), 4)  # near the best lam
    0.0671
    >>> risks = oracle_risk(jnp.array([0.01, 0.064, 1.0]), task)  # batched
    >>> [round(float(r), 4) for r in risks]
    [0.3552, 0.0671, 4.181]
    >>> round(float(null_risk(task)), 4)  # predicting 0
    0.5
    """
    task = check_task(task)
    lam = _check_lam(lam)
    return _oracle_risk(lam, task.d, task.L, task.gamma, task.eps)


@jax.jit
def _oracle_risk(lam, d, L, gamma, eps):
    q = jnp.sqrt(d / 2.0)
    g2 = gamma**2
    s = lam * gamma
    a = lam * q / jnp.sqrt(1.0 + 2.0 * s**2)
    return (
        eps**2
        + g2 * (1.0 - 2.0 * erf(a) + zeta(lam * q, s))
        + (L - 1) * expected_erf_sq_centered(lam)
    )


class OptimalLambda(NamedTuple):
    r"""The result of :func:`optimal_lambda`: ``lam`` :math:`= \lambda^\star` and ``risk``, the oracle
    risk there (Python floats; it unpacks as ``lam, risk = optimal_lambda(task)``)."""

    lam: float
    risk: float


#: :func:`optimal_lambda` takes the oracle risk as at its floor :math:`\varepsilon^2` within this
#: fraction of the null risk: the closed form's round-off (float64) is a few 1e-17 of it.
FLOOR_TOL = 1e-12


def optimal_lambda(
    task: SLRTask,
    bounds: tuple[float, float] = (1e-6, 1e2),
    xtol: float = 1e-10,
) -> OptimalLambda:
    r"""The inverse temperature :math:`\lambda^\star = \arg\min_\lambda \mathcal R_\lambda(k^\star, v^\star)`.

    Minimises the closed-form oracle risk (Theorem 1, :func:`oracle_risk`) over :math:`\log\lambda`
    in ``bounds`` with Brent's bounded method (``scipy.optimize.minimize_scalar``).

    Parameters
    ----------
    task : SLRTask
        The task.
    bounds : tuple of float
        ``(lo, hi)`` with ``0 < lo < hi < inf``: the search interval for :math:`\lambda`.
    xtol : float
        Tolerance on :math:`\log\lambda`.

    Returns
    -------
    OptimalLambda
        ``lam``, the minimiser :math:`\lambda^\star`, and ``risk``, the oracle risk there.

    Raises
    ------
    ValueError
        When ``bounds`` does not satisfy ``0 < lo < hi < inf``, or ``task`` is not an :class:`SLRTask`.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Notes
    -----
    For ``L >= 2`` the relevant term falls and the noise term rises with :math:`\lambda`, and the
    sum has a single minimum in the cases we checked (the tests compare with a dense grid).
    For ``L = 1`` there is no noise term, yet the relevant term alone is not monotone: at
    ``d = 10`` it is least at :math:`\lambda \approx 3.67` and rises beyond (the tests compare
    with a dense grid there too). An interior minimiser is returned whenever there is one; the
    upper bound is returned only when the risk still falls there.

    **A floor reached.** No predictor's risk is below :math:`\varepsilon^2` (eq. 8). Where the
    oracle risk reaches that floor to round-off (within ``1e-12`` of the null risk
    :math:`\gamma^2 + \varepsilon^2`), it is flat over a whole interval of :math:`\lambda`: at
    ``d = 400, L = 1`` the erf saturates, and the risk stays at :math:`\varepsilon^2` to that
    tolerance for every :math:`\lambda` from about 0.26 to 100 (Brent's point there once carried
    a risk of ``-5.55e-17``). Then the smallest :math:`\lambda` in ``bounds`` that reaches the
    floor is returned (to ``xtol``), with ``risk`` equal to :math:`\varepsilon^2`: a value below it
    is round-off of the closed form, not a risk.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, optimal_lambda
    >>> lam, risk = optimal_lambda(SLRTask(d=400, L=10))
    >>> round(lam, 4), round(risk, 4)
    (0.0638, 0.0671)
    """
    task = check_task(task)
    lo, hi = (float(b) for b in bounds)
    if not (0.0 < lo < hi and math.isfinite(hi)):
        raise ValueError(
            f"bounds must satisfy 0 < lo < hi < inf, got {bounds!r}"
        )

    def objective(log_lam: float) -> float:
        return float(
            _oracle_risk(
                math.exp(log_lam), task.d, task.L, task.gamma, task.eps
            )
        )

    res = optimize.minimize_scalar(
        objective,
        bounds=(math.log(lo), math.log(hi)),
        method="bounded",
        options={"xatol": xtol},
    )
    floor = task.eps**2  # eq. 8: no predictor does better
    tol = FLOOR_TOL * (task.gamma**2 + task.eps**2)
    if objective(res.x) - floor > tol:
        return OptimalLambda(math.exp(res.x), float(objective(res.x)))
    # flat at the floor: the smallest lambda that reaches it (the risk falls before it)
    below, above = math.log(lo), res.x
    if objective(below) - floor <= tol:
        return OptimalLambda(lo, floor)
    while above - below > xtol:
        middle = 0.5 * (below + above)
        if objective(middle) - floor <= tol:
            above = middle
        else:
            below = middle
    return OptimalLambda(math.exp(above), floor)


def null_risk(task: SLRTask) -> jax.Array:
    r"""Risk of the null predictor :math:`f \equiv 0`: :math:`\mathbb E[Y^2] = \gamma^2 + \varepsilon^2`.

    Parameters
    ----------
    task : SLRTask
        The task.

    Returns
    -------
    jax.Array, shape ()
        :math:`\gamma^2 + \varepsilon^2` (a formula: a JAX array, as every risk).

    Raises
    ------
    ValueError
        When ``task`` is not an :class:`SLRTask`.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, null_risk
    >>> task = SLRTask(d=400, L=10)
    >>> round(float(null_risk(task)), 12)  # gamma^2 + eps^2 = 1/2 + 0
    0.5
    >>> round(float(null_risk(task.replace(eps=0.1))), 12)
    0.51
    """
    task = check_task(task)
    return jnp.asarray(task.gamma**2 + task.eps**2)


def linear_risk(task: SLRTask) -> jax.Array:
    r"""Risk of the best linear predictor (Proposition 3), for any law :math:`\pi` of :math:`J_0`.

    .. math::

        \mathcal R_{\rm lin} = \varepsilon^2 + \gamma^2
        - \sum_{\ell=1}^L \frac{\pi_\ell^2\gamma^4}{1 - \pi_\ell + \pi_\ell\gamma^2}
        \ \overset{\pi\ \rm uniform}{=}\ \varepsilon^2 + \gamma^2 - \frac{\gamma^4}{\gamma^2 + L - 1}.

    It tends to the null risk :math:`\gamma^2 + \varepsilon^2` as :math:`L \to \infty`
    (uniform :math:`\pi`), and equals :math:`\varepsilon^2` when :math:`J_0` is deterministic.

    Parameters
    ----------
    task : SLRTask
        The task.

    Returns
    -------
    jax.Array, shape ()
        :math:`\mathcal R_{\rm lin}` (a formula: a JAX array, as every risk).

    Raises
    ------
    ValueError
        When ``task`` is not an :class:`SLRTask`.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, linear_risk
    >>> task = SLRTask(d=400, L=10)
    >>> round(float(linear_risk(task)), 4)  # 1/2 - (1/4) / (1/2 + 9)
    0.4737
    >>> # J0 = 1 always: the linear predictor w_1 = v* is exact (eps = 0)
    >>> one = task.replace(probs=(1.0,) + (0.0,) * 9)
    >>> round(float(linear_risk(one)), 12)
    0.0
    """
    task = check_task(task)
    pi = task.pi
    g2 = task.gamma**2
    return task.eps**2 + g2 - jnp.sum(pi**2 * g2**2 / (1.0 - pi + pi * g2))


def monte_carlo_risk(
    predict: Callable[[jax.Array], jax.Array],
    task: SLRTask,
    k_star: ArrayLike,
    v_star: ArrayLike,
    key: jax.Array,
    n_samples: int = 100_000,
    batch_size: int | None = None,
) -> MonteCarloEstimate:
    r"""Monte Carlo estimate of the risk :math:`\mathbb E[(Y - f(\mathbb X))^2]` of any predictor.

    Draws ``n_samples`` fresh samples of the task in batches (memory stays bounded) and
    averages the squared errors,

    .. math::

        \widehat{\mathcal R} = \frac1n \sum_{i=1}^n \big(Y_i - f(\mathbb X_i)\big)^2.

    The standard error is the sample standard deviation of the squared errors over
    :math:`\sqrt{n}`: a closed form ``R`` is consistent with the simulation when
    ``|mean - R| / stderr`` is a few units at most (see :meth:`MonteCarloEstimate.z_score`).

    Parameters
    ----------
    predict : callable
        Maps ``X`` of shape (b, L, d) to predictions of shape (b,) or (b, m): in the second case
        ``m`` predictors are scored on the *same* samples (common random numbers).
    task : SLRTask
        The task.
    k_star, v_star : array_like, shape (d,)
        The task's directions.
    key : jax.Array
        A ``jax.random`` key; the batches are drawn as in
        :func:`~slrlib.core.montecarlo.monte_carlo_mean`.
    n_samples : int
        Total number of draws, ``>= 2``.
    batch_size : int, optional
        Draws per batch; default :func:`~slrlib.core.montecarlo.default_batch_size`.

    Returns
    -------
    MonteCarloEstimate
        ``mean``, ``stderr`` and ``n``; scalar, or of shape (m,) for ``m`` predictors.

    Raises
    ------
    ValueError
        When ``predict`` is not callable or returns an array of the wrong shape or non-finite
        values, or another argument is invalid.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, erf_attention, monte_carlo_risk
    >>> from slrlib import oracle_risk
    >>> task = SLRTask(d=20, L=5)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> predict = lambda X: erf_attention(X, k_star, v_star, 0.15)
    >>> key = jax.random.key(2)
    >>> mc = monte_carlo_risk(predict, task, k_star, v_star, key, 10_000)
    >>> mc.n, round(float(mc.mean), 2), round(float(mc.stderr), 3)
    (10000, 0.25, 0.004)
    >>> bool(abs(mc.z_score(oracle_risk(0.15, task))) < 3)  # Theorem 1
    True
    """
    task = check_task(task)
    if not callable(predict):
        raise ValueError(
            f"predict must be a callable X -> predictions, got {predict!r}"
        )

    def squared_error(sample):
        pred = jnp.asarray(predict(sample.X))
        n = sample.y.shape[0]
        if pred.ndim not in (1, 2) or pred.shape[0] != n:
            raise ValueError(
                f"predict must return an array of shape (b,) or (b, m) for X of shape {sample.X.shape} "
                f"(b = {n}), got shape {pred.shape}"
            )
        if not bool(jnp.all(jnp.isfinite(pred))):
            raise ValueError(
                "predict returned non-finite predictions (NaN or inf)"
            )
        return jnp.square(
            sample.y.reshape((n,) + (1,) * (pred.ndim - 1)) - pred
        )

    return monte_carlo_mean(
        squared_error, task, k_star, v_star, key, n_samples, batch_size
    )
