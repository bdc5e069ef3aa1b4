r"""Unit vectors with prescribed overlaps, and random start points on the sphere or on :math:`\mathcal M`.

The risk of the attention layer (Theorem 1) depends on :math:`(k, v)` only through the five
overlaps with the task directions,

.. math::

    \kappa = \langle k, k^\star\rangle,\quad \nu = \langle v, v^\star\rangle,\quad
    \theta = \langle v, k^\star\rangle,\quad \eta = \langle k, v^\star\rangle,\quad
    \rho = \langle k, v\rangle,

so chapters and tests often need the converse: a pair of unit vectors with given overlaps.
All three constructors here share one kernel, :func:`overlap_coordinates`, and refuse the
overlaps that no pair of unit vectors has (the Gram matrix of :math:`k^\star, v^\star, k, v`
would not be positive semi-definite).

The start points of projected gradient descent (Definition 1) are drawn here too: uniform on
:math:`\mathbb S^{d-1} \times \mathbb S^{d-1}`, or on the manifold
:math:`\mathcal M = \{\theta = \eta = \rho = 0\}` (eq. 11) as in the paper's code.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from slrlib.core.task import check_directions
from slrlib.validation import check_key, check_positive_int

__all__ = [
    "OVERLAP_NAMES",
    "canonical_directions",
    "overlap_coordinates",
    "vectors_with_overlaps",
    "directions_with_overlaps",
    "uniform_directions",
    "manifold_directions",
]

#: The five overlaps, in the order every function of this module takes them.
OVERLAP_NAMES = ("kappa", "nu", "theta", "eta", "rho")

#: Round-off allowed on the Gram conditions (a slightly negative square is clipped to 0).
GRAM_TOL = 1e-9


def _check_shape_arg(shape) -> tuple[int, ...]:
    try:
        out = tuple(shape)
    except TypeError:
        raise ValueError(
            f"shape must be a tuple of positive integers, got {shape!r}"
        ) from None
    for n in out:
        try:
            check_positive_int(n, "shape entry")
        except ValueError:
            raise ValueError(
                f"shape must be a tuple of positive integers, got {shape!r}"
            ) from None
    return tuple(int(n) for n in out)


def canonical_directions(d: int) -> tuple[jax.Array, jax.Array]:
    r"""The task directions :math:`k^\star = e_1`, :math:`v^\star = e_2` of :math:`\mathbb R^d`.

    Parameters
    ----------
    d : int
        The dimension, at least 2.

    Returns
    -------
    k_star, v_star : jax.Array, shape (d,)
        The first two canonical basis vectors.

    Raises
    ------
    ValueError
        When ``d`` is not an integer ``>= 2``.
    """
    d = check_positive_int(
        d, "d", minimum=2, why="two orthogonal unit vectors"
    )
    eye = jnp.eye(d)
    return eye[0], eye[1]


def overlap_coordinates(
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike,
    eta: ArrayLike,
    rho: ArrayLike,
    *,
    project: bool = False,
    tol: float = GRAM_TOL,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Coordinates of unit vectors :math:`(k, v)` of given overlaps in the basis :math:`(k^\star, v^\star, u_1, u_2)`.

    .. math::

        k = (\kappa, \eta, a, 0), \qquad v = (\theta, \nu, b, c), \qquad
        a = \sqrt{1-\kappa^2-\eta^2},\ b = \frac{\rho - \kappa\theta - \eta\nu}{a},\
        c = \sqrt{1-\theta^2-\nu^2-b^2}.

    Any four unit vectors with these overlaps are the image of these by a rotation (same Gram
    matrix), so every rotation-invariant quantity (the risk of Theorem 1, PGD, the law of a
    batch gradient) takes the same value.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : array_like
        The overlaps; they broadcast together.
    project : bool
        If true, scale :math:`(\kappa, \eta)` and :math:`(\theta, \nu)` back into the unit disc and
        shrink :math:`b` to :math:`\pm\sqrt{1-\theta^2-\nu^2}` instead of raising (:math:`\rho` may
        then change): for rounded overlaps of a point where the Gram matrix is singular.
    tol : float
        Round-off allowed on the conditions :math:`a^2 \ge 0`, :math:`c^2 \ge 0`.

    Returns
    -------
    k, v : numpy.ndarray, shape (..., 4)
        Unit vectors (renormalised against round-off).

    Raises
    ------
    ValueError
        When no pair of unit vectors has these overlaps: :math:`\kappa^2 + \eta^2 > 1`;
        :math:`\kappa^2 + \eta^2 = 1` (so :math:`k \in \operatorname{span}\{k^\star, v^\star\}`)
        and :math:`\rho \ne \kappa\theta + \eta\nu`; or :math:`\theta^2 + \nu^2 + b^2 > 1`.
        Also when an overlap is not finite or the overlaps do not broadcast together.
    """
    arrays = []
    for x, name in zip((kappa, nu, theta, eta, rho), OVERLAP_NAMES):
        a = np.asarray(x, dtype=float)
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite, got {x!r}")
        arrays.append(a)
    try:
        kappa, nu, theta, eta, rho = np.broadcast_arrays(*arrays)
    except ValueError:
        raise ValueError(
            f"the overlaps must broadcast together, got shapes {[a.shape for a in arrays]}"
        ) from None
    kappa, nu, theta, eta, rho = (
        np.array(a, dtype=float) for a in (kappa, nu, theta, eta, rho)
    )
    if project:
        r = np.hypot(kappa, eta)
        scale = np.where(r > 1.0, r, 1.0)
        kappa, eta = kappa / scale, eta / scale
        r = np.hypot(theta, nu)
        scale = np.where(r > 1.0, r, 1.0)
        theta, nu = theta / scale, nu / scale
    a2 = 1.0 - kappa**2 - eta**2
    if np.any(a2 < -tol):
        i = int(np.argmin(a2))
        raise ValueError(
            f"kappa^2 + eta^2 must be <= 1 (k is a unit vector), got kappa = {kappa.flat[i]}, "
            f"eta = {eta.flat[i]} (kappa^2 + eta^2 = {1 - a2.flat[i]})"
        )
    a = np.sqrt(np.maximum(a2, 0.0))
    residual = rho - kappa * theta - eta * nu
    # <k, v> = kappa theta + eta nu + a b with |b| <= 1: when a is round-off (k in span{k*, v*}),
    # rho must be kappa theta + eta nu up to round-off, whatever v.
    flat = (a <= tol) & (np.abs(residual) > 2 * tol)
    if np.any(flat):
        i = int(np.argmax(flat))
        raise ValueError(
            f"rho must equal kappa theta + eta nu when kappa^2 + eta^2 = 1 (k in span{{k*, v*}}), got "
            f"rho = {rho.flat[i]} for kappa = {kappa.flat[i]}, eta = {eta.flat[i]}, theta = {theta.flat[i]}, "
            f"nu = {nu.flat[i]} (kappa theta + eta nu = {rho.flat[i] - residual.flat[i]})"
        )
    b = np.where(a > tol, residual / np.where(a > tol, a, 1.0), 0.0)
    c2 = 1.0 - theta**2 - nu**2 - b**2
    if project:
        room = np.sqrt(np.maximum(1.0 - theta**2 - nu**2, 0.0))
        b = np.where(c2 < 0, np.copysign(room, b), b)
        c2 = np.maximum(c2, 0.0)
    if np.any(c2 < -tol):
        i = int(np.argmin(c2))
        raise ValueError(
            "no unit vectors have overlaps (kappa, nu, theta, eta, rho) = "
            f"{tuple(float(x.flat[i]) for x in (kappa, nu, theta, eta, rho))}: the Gram matrix of "
            "(k*, v*, k, v) is not positive semi-definite (it needs theta^2 + nu^2 + b^2 <= 1 with "
            f"b = (rho - kappa theta - eta nu)/sqrt(1 - kappa^2 - eta^2) = {b.flat[i]:.4g})"
        )
    c = np.sqrt(np.maximum(c2, 0.0))
    zero = np.zeros_like(a)
    k = np.stack([kappa, eta, a, zero], axis=-1)
    v = np.stack([theta, nu, b, c], axis=-1)
    return k / np.linalg.norm(k, axis=-1, keepdims=True), v / np.linalg.norm(
        v, axis=-1, keepdims=True
    )


def vectors_with_overlaps(
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike,
    eta: ArrayLike,
    rho: ArrayLike,
    d: int,
    tol: float = GRAM_TOL,
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    r"""Unit vectors of :math:`\mathbb R^d` with the given overlaps with :math:`k^\star = e_1, v^\star = e_2`.

    The coordinates of :func:`overlap_coordinates` in the canonical basis :math:`e_1, \dots, e_4`.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : array_like
        The overlaps; they broadcast together, to ``n`` entries after flattening.
    d : int
        The dimension, at least 4.
    tol : float
        As in :func:`overlap_coordinates`.

    Returns
    -------
    k, v : jax.Array, shape (n, d)
        The unit vectors.
    k_star, v_star : jax.Array, shape (d,)
        :func:`canonical_directions`.

    Raises
    ------
    ValueError
        When ``d < 4``, or no pair of unit vectors has these overlaps (see :func:`overlap_coordinates`).
    """
    d = check_positive_int(
        d, "d", minimum=4, why="k*, v* and two more directions"
    )
    k4, v4 = overlap_coordinates(kappa, nu, theta, eta, rho, tol=tol)
    k4, v4 = k4.reshape(-1, 4), v4.reshape(-1, 4)
    k = np.zeros((k4.shape[0], d))
    v = np.zeros((v4.shape[0], d))
    k[:, :4], v[:, :4] = k4, v4
    k_star, v_star = canonical_directions(d)
    return jnp.asarray(k), jnp.asarray(v), k_star, v_star


@partial(jax.jit, static_argnums=(3,))
def _complement_basis(key, k_star, v_star, n: int):
    """``n`` orthonormal vectors orthogonal to k_star and v_star, random (uniform rotation)."""
    d = k_star.shape[0]
    A = jax.random.normal(key, (d, n))
    Q, R = jnp.linalg.qr(jnp.column_stack([k_star, v_star, A]))
    Q = Q * jnp.sign(jnp.diag(R))[None, :]
    return Q[:, 2:].T  # (n, d)


@jax.jit
def _combine(k_star, v_star, u, ck, cv):
    k = ck[0] * k_star + ck[1] * v_star + ck[2] * u[0]
    v = cv[0] * k_star + cv[1] * v_star + cv[2] * u[0] + cv[3] * u[1]
    # Renormalise away round-off (the norms are 1 up to ~1e-16).
    return k / jnp.linalg.norm(k), v / jnp.linalg.norm(v)


def directions_with_overlaps(
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike,
    eta: ArrayLike,
    rho: ArrayLike,
    k_star: ArrayLike,
    v_star: ArrayLike,
    key: jax.Array,
) -> tuple[jax.Array, jax.Array]:
    r"""Random unit vectors :math:`(k, v)` with the given overlaps with the task directions.

    .. math::

        k = \kappa k^\star + \eta v^\star + a\, u_1, \qquad
        v = \theta k^\star + \nu v^\star + b\, u_1 + c\, u_2,

    with :math:`a, b, c` of :func:`overlap_coordinates` and :math:`u_1, u_2` random orthonormal
    vectors orthogonal to :math:`k^\star, v^\star` (a uniform rotation of the complement).
    Different keys give different pairs with the same overlaps, hence (Theorem 1) the same risk.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : float or array_like
        The overlaps; they broadcast together.
    k_star, v_star : array_like, shape (d,)
        Orthonormal task directions, :math:`d \ge 4`.
    key : jax.Array
        A ``jax.random`` key.

    Returns
    -------
    k, v : jax.Array
        Shape (d,) for scalar overlaps; shape ``broadcast_shape + (d,)`` otherwise, with an
        independent complement for every entry.

    Raises
    ------
    ValueError
        When no pair of unit vectors has these overlaps (see :func:`overlap_coordinates`), or the
        task directions or the key are invalid (:math:`d < 4` included).
    """
    k_star = jnp.asarray(k_star, dtype=float)
    d = int(k_star.shape[0]) if k_star.ndim == 1 else -1
    if d < 4:
        raise ValueError(
            f"k_star must have shape (d,) with d >= 4, got shape {k_star.shape}"
        )
    k_star, v_star = check_directions(k_star, v_star, d)
    key = check_key(key)
    k4, v4 = overlap_coordinates(kappa, nu, theta, eta, rho)
    if k4.ndim == 1:
        u = _complement_basis(key, k_star, v_star, 2)
        return _combine(
            k_star, v_star, u, jnp.asarray(k4[:3]), jnp.asarray(v4)
        )
    shape = k4.shape[:-1]
    keys = jax.random.split(key, math.prod(shape))
    u = jax.vmap(_complement_basis, in_axes=(0, None, None, None))(
        keys, k_star, v_star, 2
    )
    ck, cv = (
        jnp.asarray(k4.reshape(-1, 4)[:, :3]),
        jnp.asarray(v4.reshape(-1, 4)),
    )
    k, v = jax.vmap(_combine, in_axes=(None, None, 0, 0, 0))(
        k_star, v_star, u, ck, cv
    )
    return k.reshape(shape + (d,)), v.reshape(shape + (d,))


@partial(jax.jit, static_argnums=(1, 2))
def _uniform_pair(key, d, shape):
    k_key, v_key = jax.random.split(key)
    k = jax.random.normal(k_key, shape + (d,))
    v = jax.random.normal(v_key, shape + (d,))
    return k / jnp.linalg.norm(k, axis=-1, keepdims=True), v / jnp.linalg.norm(
        v, axis=-1, keepdims=True
    )


def uniform_directions(
    key: jax.Array, d: int, shape: Sequence[int] = ()
) -> tuple[jax.Array, jax.Array]:
    r"""Pairs :math:`(k, v)`, independent and uniform on :math:`\mathbb S^{d-1}`: the paper's uniform initialisation.

    Parameters
    ----------
    key : jax.Array
        A ``jax.random`` key, split in two: the first half draws every :math:`k`, the second
        every :math:`v` (normalised Gaussian vectors).
    d : int
        The dimension, at least 2 (as :class:`~slrlib.core.task.SLRTask`'s: in dimension 1 the
        "sphere" is :math:`\{-1, 1\}`, and there is no task to start from).
    shape : tuple of int
        Leading shape, e.g. ``(n_runs,)``.

    Returns
    -------
    k, v : jax.Array, shape ``shape + (d,)``
        The unit vectors.

    Raises
    ------
    ValueError
        When ``key`` is not a ``jax.random`` key, ``d`` is not an integer ``>= 2``, or ``shape``
        is not a tuple of positive integers.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> import jax.numpy as jnp
    >>> from slrlib import uniform_directions
    >>> k, v = uniform_directions(jax.random.key(0), 20, (8,))  # 8 runs
    >>> k.shape, v.shape
    ((8, 20), (8, 20))
    >>> bool(jnp.allclose(jnp.linalg.norm(k, axis=-1), 1.0))
    True
    """
    key = check_key(key)
    d = check_positive_int(
        d, "d", minimum=2, why="k* and v* must be orthogonal unit vectors"
    )
    return _uniform_pair(key, d, _check_shape_arg(shape))


@jax.jit
def _manifold_pair(key, k_star, v_star, n):
    d = k_star.shape[-1]
    k_key, v_key = jax.random.split(key)
    k = jax.random.normal(k_key, n.shape + (d,))
    k = k - (k @ v_star)[:, None] * v_star
    k = k / jnp.linalg.norm(k, axis=-1, keepdims=True)
    v = jax.random.normal(v_key, n.shape + (d,))
    v = v - (v @ k_star)[:, None] * k_star
    k_perp = k - (k @ k_star)[:, None] * k_star
    norm = jnp.linalg.norm(k_perp, axis=-1, keepdims=True)
    # When k = ±k* (always so for d = 2) there is no part of k orthogonal to k*: v is
    # already orthogonal to k and must not be projected on a normalised round-off vector.
    k_perp = jnp.where(
        norm > 1e-12, k_perp / jnp.where(norm > 1e-12, norm, 1.0), 0.0
    )
    v = v - jnp.sum(v * k_perp, axis=-1, keepdims=True) * k_perp
    return k, v / jnp.linalg.norm(v, axis=-1, keepdims=True)


def manifold_directions(
    key: jax.Array,
    k_star: ArrayLike,
    v_star: ArrayLike,
    shape: Sequence[int] = (),
) -> tuple[jax.Array, jax.Array]:
    r"""Random pairs :math:`(k, v)` on the manifold :math:`\mathcal M = \{\theta = \eta = \rho = 0\}` (eq. 11).

    As in the paper's code: :math:`k` uniform, then orthogonalised against :math:`v^\star`;
    :math:`v` uniform, orthogonalised against :math:`k^\star` and against the part of :math:`k`
    orthogonal to :math:`k^\star`; both normalised. Then :math:`\theta = \eta = \rho = 0` up to
    round-off.

    Parameters
    ----------
    key : jax.Array
        A ``jax.random`` key, split in two, for :math:`k` and for :math:`v`.
    k_star, v_star : array_like, shape (d,)
        Orthonormal task directions.
    shape : tuple of int
        Leading shape, e.g. ``(n_runs,)``.

    Returns
    -------
    k, v : jax.Array, shape ``shape + (d,)``
        The unit vectors.

    Raises
    ------
    ValueError
        When ``key`` is not a ``jax.random`` key, the task directions violate Assumption 1, or
        ``shape`` is not a tuple of positive integers.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> import jax.numpy as jnp
    >>> from slrlib import SLRTask, manifold_directions, overlaps
    >>> task = SLRTask(d=20, L=5)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> k, v = manifold_directions(jax.random.key(1), k_star, v_star, (8,))
    >>> o = overlaps(k, v, k_star, v_star)
    >>> bool(abs(jnp.stack([o.theta, o.eta, o.rho])).max() < 1e-12)  # on M
    True
    """
    key = check_key(key)
    k_star = jnp.asarray(k_star, dtype=float)
    d = int(k_star.shape[-1]) if k_star.ndim else 0
    k_star, v_star = check_directions(k_star, v_star, d)
    shape = _check_shape_arg(shape)
    k, v = _manifold_pair(key, k_star, v_star, jnp.zeros((math.prod(shape),)))
    return k.reshape(shape + (d,)), v.reshape(shape + (d,))
