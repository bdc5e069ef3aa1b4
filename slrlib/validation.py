"""Input validation at the public boundary of ``slrlib``.

Every check raises a :class:`ValueError` that names the parameter, shows its value and
says what is allowed. Value checks run only on concrete inputs: under ``jax`` tracing
(inside ``jax.grad``, ``jax.jit`` or ``jax.vmap``) values are unknown and the checks on
values are skipped, while shape checks still apply.
"""

from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

__all__ = [
    "UNIT_NORM_TOL",
    "ORTHOGONALITY_TOL",
    "is_concrete",
    "check_positive_int",
    "check_real_scalar",
    "as_float_array",
    "check_finite",
    "check_nonnegative",
    "check_last_dim",
    "check_shape",
    "check_unit_norm",
    "check_orthogonal",
    "check_key",
]

#: Tolerance on unit norms (task directions, PGD iterates).
UNIT_NORM_TOL = 1e-6
#: Tolerance on :math:`|\langle k^\star, v^\star\rangle|` (Assumption 1).
ORTHOGONALITY_TOL = 1e-6


def _short(value) -> str:
    """A compact rendering of a value for error messages."""
    try:
        arr = np.asarray(value)
    except Exception:  # pragma: no cover - exotic objects
        return repr(value)
    if arr.ndim == 0:
        return repr(arr.item())
    with np.printoptions(precision=4, threshold=6, edgeitems=2):
        return f"array of shape {arr.shape}: {arr}"


def is_concrete(x: object) -> bool:
    """True when ``x`` carries values (it is not a ``jax`` tracer).

    Checks on concrete values use NumPy, so they also work on constants captured
    inside a function being traced by ``jax.jit``.

    Parameters
    ----------
    x : object
        Any value.

    Returns
    -------
    bool
        ``False`` for a ``jax`` tracer, ``True`` otherwise.
    """
    return not isinstance(x, jax.core.Tracer)


def check_positive_int(value: object, name: str) -> int:
    """A positive integer (``bool`` excluded); returns it as ``int``.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        Its name, for the error message.

    Returns
    -------
    int
        ``value`` as an ``int``.

    Raises
    ------
    ValueError
        When ``value`` is not an integer (a whole float included: the message says to pass an
        ``int``), is a ``bool``, or is ``< 1``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and math.isfinite(value) and value == int(value):
            raise ValueError(
                f"{name} must be a positive integer, got {value!r} (a float); pass {int(value)}"
            )
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be a positive integer (>= 1), got {value!r}")
    return int(value)


def check_real_scalar(value: object, name: str, *, minimum: float | None = None, strict: bool = False) -> float:
    """A finite real number, optionally bounded below; returns it as ``float``.

    Parameters
    ----------
    value : object
        The value to check: a real number or a 0-d numeric array.
    name : str
        Its name, for the error message.
    minimum : float, optional
        Lower bound.
    strict : bool
        If true, ``value`` must be ``> minimum``; otherwise ``>= minimum``.

    Returns
    -------
    float
        ``value`` as a ``float``.

    Raises
    ------
    ValueError
        When ``value`` is not a real number (``bool`` excluded), is not finite, or is below
        ``minimum``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        arr = np.asarray(value) if not isinstance(value, (str, bytes)) else None
        if arr is None or arr.ndim != 0 or not np.issubdtype(arr.dtype, np.number):
            raise ValueError(f"{name} must be a real number, got {value!r}")
        value = arr.item()
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if minimum is not None:
        if strict and not value > minimum:
            raise ValueError(f"{name} must be > {minimum}, got {value!r}")
        if not strict and not value >= minimum:
            raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return value


def as_float_array(x: ArrayLike, name: str) -> jax.Array:
    """Convert to a floating ``jax`` array (tracers pass through).

    Parameters
    ----------
    x : array_like
        Real (floating or integer) values; integers are converted to the default float type.
    name : str
        Its name, for the error message.

    Returns
    -------
    jax.Array
        ``x`` as a floating array, or ``x`` itself if it is a tracer.

    Raises
    ------
    ValueError
        When ``x`` is a string or cannot be converted to a real array.
    """
    if not is_concrete(x):
        return x
    if isinstance(x, (str, bytes)):
        raise ValueError(f"{name} must be a real array, got {x!r}")
    try:
        arr = jnp.asarray(x)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a real array, got {x!r}") from err
    if not (jnp.issubdtype(arr.dtype, jnp.floating) or jnp.issubdtype(arr.dtype, jnp.integer)):
        raise ValueError(f"{name} must be a real array, got dtype {arr.dtype}")
    if not jnp.issubdtype(arr.dtype, jnp.floating):
        arr = arr.astype(jnp.result_type(float))
    return arr


def check_finite(x: ArrayLike, name: str) -> None:
    """No NaN and no infinity.

    Parameters
    ----------
    x : array_like
        The values (skipped under tracing).
    name : str
        Its name, for the error message.

    Raises
    ------
    ValueError
        When an entry is NaN or infinite.
    """
    if is_concrete(x) and not np.all(np.isfinite(np.asarray(x))):
        raise ValueError(f"{name} must be finite (no NaN or inf), got {_short(x)}")


def check_nonnegative(x: ArrayLike, name: str) -> None:
    """All entries ``>= 0``.

    Parameters
    ----------
    x : array_like
        The values (skipped under tracing).
    name : str
        Its name, for the error message.

    Raises
    ------
    ValueError
        When an entry is negative (or NaN).
    """
    if is_concrete(x) and not np.all(np.asarray(x) >= 0):
        raise ValueError(f"{name} must be >= 0, got {_short(x)}")


def check_last_dim(x: ArrayLike, name: str, d: int) -> None:
    """At least one axis, the last of length ``d``.

    Parameters
    ----------
    x : array_like
        The array (checked under tracing too: shapes are known).
    name : str
        Its name, for the error message.
    d : int
        Required length of the last axis.

    Raises
    ------
    ValueError
        When ``x`` has no axis or its last axis is not of length ``d``.
    """
    if jnp.ndim(x) < 1 or jnp.shape(x)[-1] != d:
        raise ValueError(
            f"{name} must have shape (..., {d}) (last axis = d = {d}), got shape {jnp.shape(x)}"
        )


def check_shape(x: ArrayLike, name: str, shape: tuple) -> None:
    """Exactly ``shape``.

    Parameters
    ----------
    x : array_like
        The array (checked under tracing too: shapes are known).
    name : str
        Its name, for the error message.
    shape : tuple
        The required shape.

    Raises
    ------
    ValueError
        When ``x`` does not have shape ``shape``.
    """
    if tuple(jnp.shape(x)) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got shape {jnp.shape(x)}")


def check_unit_norm(x: ArrayLike, name: str, tol: float = UNIT_NORM_TOL) -> None:
    r"""Every vector along the last axis has Euclidean norm 1 (within ``tol``).

    Parameters
    ----------
    x : array_like, shape (..., d)
        The vectors (skipped under tracing).
    name : str
        Its name, for the error message.
    tol : float
        Tolerance on :math:`|\|x\| - 1|`; default :data:`UNIT_NORM_TOL`.

    Raises
    ------
    ValueError
        When some vector's norm differs from 1 by more than ``tol``.
    """
    if not is_concrete(x):
        return
    norms = np.linalg.norm(np.asarray(x), axis=-1)
    if not np.all(np.abs(norms - 1.0) <= tol):
        worst = float(np.max(np.abs(norms - 1.0)))
        raise ValueError(
            f"{name} must have unit Euclidean norm along its last axis (tolerance {tol}); "
            f"largest | ||{name}|| - 1 | is {worst:.3g}"
        )


def check_orthogonal(a: ArrayLike, b: ArrayLike, name_a: str, name_b: str, tol: float = ORTHOGONALITY_TOL) -> None:
    r"""``|<a, b>| <= tol`` (Assumption 1 for k*, v*).

    Parameters
    ----------
    a, b : array_like, shape (..., d)
        The vectors, paired along the leading axes (skipped under tracing).
    name_a, name_b : str
        Their names, for the error message.
    tol : float
        Tolerance on :math:`|\langle a, b\rangle|`; default :data:`ORTHOGONALITY_TOL`.

    Raises
    ------
    ValueError
        When some pair has :math:`|\langle a, b\rangle| > \mathrm{tol}`.
    """
    if not (is_concrete(a) and is_concrete(b)):
        return
    dot = float(np.max(np.abs(np.sum(np.asarray(a) * np.asarray(b), axis=-1))))
    if dot > tol:
        raise ValueError(
            f"{name_a} must be orthogonal to {name_b} (Assumption 1): "
            f"|<{name_a}, {name_b}>| = {dot:.3g} > {tol}"
        )


def check_key(key: object, name: str = "key") -> jax.Array:
    """A ``jax.random`` key: new-style typed key or legacy ``uint32[2]``.

    Parameters
    ----------
    key : object
        The key (passed through under tracing).
    name : str
        Its name, for the error message.

    Returns
    -------
    jax.Array
        ``key`` itself.

    Raises
    ------
    ValueError
        When ``key`` is neither a typed ``jax.random`` key nor a ``uint32`` array of shape (2,).
    """
    if not is_concrete(key):
        return key
    try:
        if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
            return key
    except AttributeError:
        raise ValueError(
            f"{name} must be a jax.random key (jax.random.key(seed) or PRNGKey(seed)), got {key!r}"
        ) from None
    if key.dtype == jnp.uint32 and key.shape == (2,):
        return key
    raise ValueError(
        f"{name} must be a jax.random key (jax.random.key(seed) or PRNGKey(seed)), "
        f"got dtype {key.dtype} and shape {key.shape}"
    )
