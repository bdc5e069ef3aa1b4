"""Input validation at the public boundary of ``slrlib``.

Every check raises a :class:`ValueError` that names the parameter, shows its value and
says what is allowed. Value checks run only on concrete inputs: under ``jax`` tracing
(inside ``jax.grad``, ``jax.jit`` or ``jax.vmap``) values are unknown and the checks on
values are skipped, while shape checks still apply. Wrapped in :func:`checked`, a function
checks its values inside its compiled program too (``jax.experimental.checkify``), and raises
the same ``ValueError``.

Why a wrapper rather than checks that always run under tracing: the library calls its own
public functions inside its compiled loops (PGD, SGD, Monte Carlo), where a check at every step
would cost more than the step; a user who wants checks in compiled code opts in, once.
"""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

__all__ = [
    "Float64Required",
    "require_x64",
    "UNIT_NORM_TOL",
    "ORTHOGONALITY_TOL",
    "checked",
    "check_at_run_time",
    "is_concrete",
    "check_positive_int",
    "check_real_scalar",
    "as_float_array",
    "check_finite",
    "check_nonnegative",
    "check_last_dim",
    "check_broadcast",
    "check_shape",
    "check_unit_norm",
    "check_orthogonal",
    "check_key",
    "numpy_record",
]

#: Tolerance on unit norms (task directions, PGD iterates).
UNIT_NORM_TOL = 1e-6
#: Tolerance on :math:`|\langle k^\star, v^\star\rangle|` (Assumption 1).
ORTHOGONALITY_TOL = 1e-6


class Float64Required(RuntimeError):
    """JAX is in float32 (``jax_enable_x64`` off), and slrlib computes only in float64.

    Not a ``ValueError``: no argument is wrong, the process's JAX configuration is.
    """


#: The message of :class:`Float64Required`: the one line that fixes it.
X64_MESSAGE = (
    'slrlib computes in float64, and JAX is in float32: run jax.config.update("jax_enable_x64", True) '
    "once, after `import jax` and before creating arrays (slrlib leaves JAX's configuration to you; "
    "see ARCHITECTURE.md, float64)"
)


def require_x64() -> None:
    """Raise :class:`Float64Required` unless JAX computes in float64.

    Every public entry point of slrlib reaches it, through :func:`as_float_array`,
    :func:`check_key` or the task's check (:func:`slrlib.core.task.check_task`), so that nothing is
    computed silently in float32. Not :func:`check_real_scalar`: building a task or a run's
    configuration computes nothing, and modules build some at import. At trace time under ``jax.jit`` it is a read of JAX's configuration.

    Raises
    ------
    Float64Required
        When ``jax.config.jax_enable_x64`` is off.
    """
    if not jax.config.jax_enable_x64:
        raise Float64Required(X64_MESSAGE)


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


def _is_traced_argument(x: object) -> bool:
    """Whether :func:`checked` traces ``x`` (arrays and real or complex numbers) rather than keeping
    it static (tasks, integers such as sizes, strings)."""
    if isinstance(x, (bool, np.bool_, numbers.Integral)):
        return False
    return isinstance(x, (jax.Array, np.ndarray, numbers.Number))


def checked(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, compiled with its arguments' values checked inside the compiled program.

    Outside tracing, slrlib's functions check their arguments and raise ``ValueError`` naming
    the parameter. Under ``jax.jit`` (or ``vmap``, ``grad``) the values are unknown, and those
    checks are skipped (shapes are still checked): ``jax.jit(oracle_risk, static_argnums=1)(-0.5,
    task)`` computes a number. ``checked(fn)`` compiles ``fn`` itself (``jax.jit``, with
    ``jax.experimental.checkify``), tracing its arrays and floats and keeping its other arguments
    (a task, integer sizes) static; the value checks met on the way become part of the program,
    and a value out of range raises the same ``ValueError`` as an eager call, message first::

        risk = slrlib.checked(oracle_risk)
        risk(0.1, task)   # compiled once per task and shape; then as fast as jax.jit
        risk(-0.5, task)  # ValueError: lam must be >= 0, got -0.5 ...

    Compose ``jax.jit``, ``vmap`` or ``grad`` inside it, and call it from outside any
    transformation: it raises from outside the program. ``fn`` must be traceable (predictors,
    risks, samplers), not a driver that converts to NumPy (``pgd``, ``sgd``,
    ``monte_carlo_risk``, which check their arguments at once). The checks are in every traced
    program of the library as ``checkify.debug_check``, which compiles to nothing unless
    ``checked`` (checkify) turns it on: a program is traced the same way with or without
    ``checked``, so JAX's caches of traced programs serve both.

    Parameters
    ----------
    fn : callable
        A traceable function that calls slrlib's public functions (or one of them).

    Returns
    -------
    callable
        ``fn``, compiled and checked.

    Raises
    ------
    ValueError
        When ``fn`` is not callable; from the returned function, when a check fails, or when it
        is itself traced (``jax.jit(checked(fn))``: write ``checked(fn)``, or
        ``checked(jax.vmap(fn))``).

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, checked, oracle_risk
    >>> task = SLRTask(d=400, L=10)
    >>> round(float(oracle_risk(0.064, task)), 4)
    0.0671
    >>> risk = checked(oracle_risk)  # compiled, its values checked inside
    >>> round(float(risk(0.064, task)), 4)
    0.0671
    >>> risk(-0.5, task)
    Traceback (most recent call last):
    ...
    ValueError: lam must be >= 0...
    """
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {fn!r}")
    from jax.experimental import checkify

    inner = fn
    compiled: dict[
        Any, Callable
    ] = {}  # one checked program per static part of the arguments

    @functools.wraps(inner)
    def run(*args, **kwargs):
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
        if not all(is_concrete(x) for x in leaves):
            raise ValueError(
                f"checked({getattr(inner, '__name__', 'fn')}) must be the outermost transformation: it "
                "raises from outside the compiled program, so write checked(fn) or checked(jax.vmap(fn)), "
                "not jax.jit(checked(fn)) (it was called with traced arguments)"
            )
        traced = tuple(
            i for i, x in enumerate(leaves) if _is_traced_argument(x)
        )
        static = tuple((i, x) for i, x in enumerate(leaves) if i not in traced)
        key = (tree, traced, static)
        try:
            program = compiled.get(key)
        except (
            TypeError
        ):  # a static argument that cannot be hashed: trace it anew each call
            key, program = None, None
        if program is None:

            def with_traced(values):
                full = list(leaves)
                for i, value in zip(traced, values):
                    full[i] = value
                inner_args, inner_kwargs = jax.tree_util.tree_unflatten(
                    tree, full
                )
                return inner(*inner_args, **inner_kwargs)

            program = jax.jit(checkify.checkify(with_traced))
            if key is not None:
                compiled[key] = program
        error, out = program([leaves[i] for i in traced])
        message = error.get()
        if message is not None:
            raise ValueError(message.removesuffix(" (`check` failed)"))
        return out

    return run


def check_at_run_time(bad: ArrayLike, value: ArrayLike, message: str) -> None:
    """Under tracing: a check in the traced program, failing where the traced ``bad`` is true, with
    ``message`` (``{value}`` in it shows ``value``). It is ``checkify.debug_check``: on only when
    :func:`checked` compiles the program, and compiled to nothing otherwise, so that the library's
    own loops pay nothing. Concrete values are checked at once, by the caller.

    Parameters
    ----------
    bad : array_like of bool
        True where the check fails.
    value : array_like
        The value shown in the message.
    message : str
        The message; ``{value}`` is replaced by ``value``.
    """
    from jax.experimental import checkify

    checkify.debug_check(jnp.logical_not(jnp.any(bad)), message, value=value)


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


def check_positive_int(
    value: object, name: str, *, minimum: int = 1, why: str = ""
) -> int:
    """A positive integer (``bool`` excluded), at least ``minimum``; returns it as ``int``.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        Its name, for the error message.
    minimum : int
        The smallest value allowed (default 1), named in the message.
    why : str
        Why ``minimum`` (said in the message after it), if it is not 1.

    Returns
    -------
    int
        ``value`` as an ``int``.

    Raises
    ------
    ValueError
        When ``value`` is not an integer (a whole float included: the message says to pass an
        ``int``), is a ``bool``, or is ``< minimum``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, numbers.Integral
    ):
        if (
            isinstance(value, float)
            and math.isfinite(value)
            and value == int(value)
        ):
            raise ValueError(
                f"{name} must be a positive integer, got {value!r} (a float); pass {int(value)}"
            )
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if value < minimum:
        because = f": {why}" if why else ""
        raise ValueError(
            f"{name} must be a positive integer (>= {minimum}{because}), got {value!r}"
        )
    return int(value)


def check_real_scalar(
    value: object,
    name: str,
    *,
    minimum: float | None = None,
    strict: bool = False,
) -> float:
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
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, numbers.Real
    ):
        arr = (
            np.asarray(value) if not isinstance(value, (str, bytes)) else None
        )
        if (
            arr is None
            or arr.ndim != 0
            or not np.issubdtype(arr.dtype, np.number)
        ):
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
    require_x64()
    if not is_concrete(x):
        return x
    if isinstance(x, (str, bytes)):
        raise ValueError(f"{name} must be a real array, got {x!r}")
    try:
        arr = jnp.asarray(x)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a real array, got {x!r}") from err
    if not (
        jnp.issubdtype(arr.dtype, jnp.floating)
        or jnp.issubdtype(arr.dtype, jnp.integer)
    ):
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
    if not is_concrete(x):
        check_at_run_time(
            ~jnp.all(jnp.isfinite(x)),
            x,
            f"{name} must be finite (no NaN or inf), got {{value}}",
        )
    elif not np.all(np.isfinite(np.asarray(x))):
        raise ValueError(
            f"{name} must be finite (no NaN or inf), got {_short(x)}"
        )


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
    if not is_concrete(x):
        check_at_run_time(
            ~jnp.all(x >= 0), x, f"{name} must be >= 0, got {{value}}"
        )
    elif not np.all(np.asarray(x) >= 0):
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


def check_broadcast(**shapes: tuple) -> tuple:
    """The shape that the named batch shapes broadcast to (NumPy's rules); a ``ValueError`` naming
    every one of them when they do not.

    Parameters
    ----------
    **shapes : tuple of int
        Each argument's batch shape (its leading axes), by the argument's name.

    Returns
    -------
    tuple of int
        The broadcast shape.

    Raises
    ------
    ValueError
        When the shapes do not broadcast together.
    """
    try:
        return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes.values())))
    except ValueError:
        described = ", ".join(
            f"{name} {tuple(shape)}" for name, shape in shapes.items()
        )
        raise ValueError(
            f"the batch shapes (leading axes) of {described} do not broadcast together"
        ) from None


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
        raise ValueError(
            f"{name} must have shape {tuple(shape)}, got shape {jnp.shape(x)}"
        )


def check_unit_norm(
    x: ArrayLike, name: str, tol: float = UNIT_NORM_TOL
) -> None:
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
        worst = jnp.max(jnp.abs(jnp.linalg.norm(x, axis=-1) - 1.0))
        check_at_run_time(
            worst > tol,
            worst,
            f"{name} must have unit Euclidean norm along its last axis "
            f"(tolerance {tol}); largest | ||{name}|| - 1 | is {{value}}",
        )
        return
    norms = np.linalg.norm(np.asarray(x), axis=-1)
    if not np.all(np.abs(norms - 1.0) <= tol):
        worst = float(np.max(np.abs(norms - 1.0)))
        raise ValueError(
            f"{name} must have unit Euclidean norm along its last axis (tolerance {tol}); "
            f"largest | ||{name}|| - 1 | is {worst:.3g}"
        )


def check_orthogonal(
    a: ArrayLike,
    b: ArrayLike,
    name_a: str,
    name_b: str,
    tol: float = ORTHOGONALITY_TOL,
) -> None:
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
        worst = jnp.max(jnp.abs(jnp.sum(a * b, axis=-1)))
        check_at_run_time(
            worst > tol,
            worst,
            f"{name_a} must be orthogonal to {name_b} (Assumption 1): "
            f"|<{name_a}, {name_b}>| = {{value}} > {tol}",
        )
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
    require_x64()
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


def numpy_record(record: tuple) -> tuple:
    """``record`` (a NamedTuple) with every JAX array field turned into a NumPy array.

    The library's convention for what leaves it (ARCHITECTURE.md, "Return types"): the traceable
    formulas return JAX arrays, so that they compose with ``jax.jit``, ``grad`` and ``vmap``; the
    drivers that run a computation to its end (PGD, SGD, the experiments) return records of NumPy
    arrays and Python scalars, which print, pickle and compare like any NumPy data.

    Parameters
    ----------
    record : NamedTuple
        The result record.

    Returns
    -------
    NamedTuple
        The same type, with ``numpy.asarray`` of each ``jax.Array`` field (other fields kept).
    """
    return type(record)(
        *(
            np.asarray(field) if isinstance(field, jax.Array) else field
            for field in record
        )
    )
