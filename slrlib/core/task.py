r"""The single-location regression task (Section 2 of Marion et al., 2025).

A sequence of :math:`L` tokens :math:`X_1, \dots, X_L \in \mathbb R^d` hides one relevant
token at a random position :math:`J_0 \sim \pi`. Given :math:`J_0`, tokens are independent,

.. math::

    X_{J_0} \sim \mathcal N\big(\sqrt{d/2}\, k^\star,\ \gamma^2 I_d\big), \qquad
    X_\ell \sim \mathcal N(0, I_d)\ (\ell \ne J_0), \qquad
    Y = X_{J_0}^\top v^\star + \xi,

with :math:`\xi \sim \mathcal N(0, \varepsilon^2)` independent of the rest,
:math:`\|k^\star\| = \|v^\star\| = 1` and :math:`k^\star \perp v^\star` (Assumption 1).
"""

from __future__ import annotations

import math
from functools import partial
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from slrlib.validation import (
    as_float_array,
    check_finite,
    check_key,
    check_last_dim,
    check_orthogonal,
    check_positive_int,
    check_real_scalar,
    check_shape,
    check_unit_norm,
    require_x64,
)

__all__ = [
    "SLRTask",
    "Sample",
    "sample_kernel",
    "multi_sample_kernel",
    "MultiLocationTask",
    "MultiSample",
    "check_directions",
    "check_task",
]


class Sample(NamedTuple):
    """``n`` draws of the single-location regression task.

    Fields: tokens ``X`` (n, L, d), outputs ``y`` (n,), positions ``J0`` (n,) (0-based).
    """

    X: jax.Array
    y: jax.Array
    J0: jax.Array


def check_directions(
    k_star: ArrayLike, v_star: ArrayLike, d: int, *, batched: bool = False
) -> tuple[jax.Array, jax.Array]:
    r"""Validate the oracle directions: shape (d,), finite, unit norm, orthogonal (Assumption 1).

    Parameters
    ----------
    k_star, v_star : array_like, shape (d,) or (..., d)
        The task's directions :math:`k^\star, v^\star`.
    d : int
        The token dimension.
    batched : bool
        With ``batched=True`` each may have leading axes, shape (..., d), one pair per run; the
        two are broadcast together and every pair is checked.

    Returns
    -------
    k_star, v_star : jax.Array
        The directions as float arrays (broadcast together when ``batched``).

    Raises
    ------
    ValueError
        When a shape is wrong, the leading axes do not broadcast, or a direction is not finite,
        not of unit norm, or not orthogonal to the other.
    """
    k_star = as_float_array(k_star, "k_star")
    v_star = as_float_array(v_star, "v_star")
    if batched:
        for x, name in ((k_star, "k_star"), (v_star, "v_star")):
            if jnp.ndim(x) < 1 or jnp.shape(x)[-1] != d:
                raise ValueError(
                    f"{name} must have shape (..., {d}) (last axis = d = {d}), got shape {jnp.shape(x)}"
                )
        try:
            shape = jnp.broadcast_shapes(jnp.shape(k_star), jnp.shape(v_star))
        except ValueError:
            raise ValueError(
                f"k_star and v_star must have broadcastable leading (run) axes, got shapes "
                f"{jnp.shape(k_star)} and {jnp.shape(v_star)}"
            ) from None
        k_star, v_star = (
            jnp.broadcast_to(k_star, shape),
            jnp.broadcast_to(v_star, shape),
        )
    else:
        check_shape(k_star, "k_star", (d,))
        check_shape(v_star, "v_star", (d,))
    check_finite(k_star, "k_star")
    check_finite(v_star, "v_star")
    check_unit_norm(k_star, "k_star")
    check_unit_norm(v_star, "v_star")
    check_orthogonal(k_star, v_star, "k_star", "v_star")
    return k_star, v_star


@dataclass(frozen=True)
class SLRTask:
    r"""Parameters of the single-location regression task SLR(k*, v*).

    A sample is :math:`L` tokens :math:`X_1, \dots, X_L \in \mathbb R^d` and a label
    :math:`Y`. The relevant position :math:`J_0 \sim \pi` (``probs``); given :math:`J_0`, the
    tokens are independent,

    .. math::

        X_{J_0} \sim \mathcal N\big(\sqrt{d/2}\, k^\star,\ \gamma^2 I_d\big), \qquad
        X_\ell \sim \mathcal N(0, I_d)\ (\ell \ne J_0), \qquad
        Y = X_{J_0}^\top v^\star + \xi,

    with :math:`\xi \sim \mathcal N(0, \varepsilon^2)` independent of the rest and
    :math:`k^\star \perp v^\star` unit vectors (Section 2 and Assumption 1 of the paper).

    Immutable and hashable (so it can be a static argument of ``jax.jit``). The oracle
    directions are not part of the task: draw them with :meth:`oracle_directions` and pass
    them explicitly, as the risk functions do.

    Parameters
    ----------
    d : int
        Token dimension, ``d >= 2`` (two orthogonal unit directions must fit).
    L : int
        Sequence length, ``L >= 1``.
    gamma : float
        Standard deviation of the relevant token around its mean, ``> 0``. The default
        :math:`\sqrt{1/2}` makes every token's expected squared norm equal to ``d``.
    eps : float
        Standard deviation of the output noise :math:`\xi`, ``>= 0``.
    probs : sequence of float or None
        Law :math:`\pi` of :math:`J_0`: ``L`` non-negative numbers summing to 1.
        ``None`` (default) means uniform.

    Raises
    ------
    ValueError
        When a parameter is out of range or ``probs`` is not a probability vector of length ``L``.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask
    >>> task = SLRTask(d=400, L=10)  # the paper's experiments
    >>> round(task.q, 4), round(task.gamma**2, 12), task.eps  # sqrt(d/2)
    (14.1421, 0.5, 0.0)
    >>> SLRTask(d=1, L=10)
    Traceback (most recent call last):
    ...
    ValueError: d must be a positive integer (>= 2: k* and v* must be ...
    """

    d: int
    L: int
    gamma: float = math.sqrt(0.5)
    eps: float = 0.0
    probs: tuple[float, ...] | None = field(default=None)

    def __post_init__(self):
        d = check_positive_int(
            self.d,
            "d",
            minimum=2,
            why="k* and v* must be orthogonal unit vectors",
        )
        L = check_positive_int(self.L, "L")
        gamma = check_real_scalar(
            self.gamma, "gamma", minimum=0.0, strict=True
        )
        eps = check_real_scalar(self.eps, "eps", minimum=0.0)
        probs = self.probs
        if probs is not None:
            arr = (
                np.asarray(probs, dtype=float)
                if _is_numeric_sequence(probs)
                else None
            )
            if arr is None or arr.ndim != 1 or arr.shape[0] != L:
                raise ValueError(
                    f"probs must be a probability vector of length L = {L}, got {probs!r}"
                )
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"probs must be finite, got {probs!r}")
            if np.any(arr < 0):
                raise ValueError(f"probs must be non-negative, got {probs!r}")
            if abs(arr.sum() - 1.0) > 1e-9:
                raise ValueError(
                    f"probs must sum to 1, got sum {arr.sum()!r} for {probs!r}"
                )
            probs = tuple(float(p) for p in arr / arr.sum())
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "L", L)
        object.__setattr__(self, "gamma", gamma)
        object.__setattr__(self, "eps", eps)
        object.__setattr__(self, "probs", probs)

    # ------------------------------------------------------------------ derived
    @property
    def q(self) -> float:
        r"""Norm of the relevant token's mean, :math:`\sqrt{d/2}`."""
        return math.sqrt(self.d / 2.0)

    @property
    def pi(self) -> jax.Array:
        r"""The law :math:`\pi` of :math:`J_0` as an array of shape (L,)."""
        if self.probs is None:
            return jnp.full((self.L,), 1.0 / self.L)
        return jnp.asarray(self.probs)

    @property
    def is_uniform(self) -> bool:
        """Whether :math:`J_0` is uniform on ``{1, ..., L}``."""
        return self.probs is None or bool(
            np.allclose(self.probs, 1.0 / self.L, rtol=0, atol=1e-15)
        )

    def replace(self, **changes: Any) -> "SLRTask":
        """A copy with some parameters changed (validated again).

        Parameters
        ----------
        **changes
            New values of ``d``, ``L``, ``gamma``, ``eps`` or ``probs``.

        Returns
        -------
        SLRTask
            The new task.

        Raises
        ------
        ValueError
            When a new value is invalid (as in :class:`SLRTask`).
        """
        params = {
            "d": self.d,
            "L": self.L,
            "gamma": self.gamma,
            "eps": self.eps,
            "probs": self.probs,
        }
        params.update(changes)
        return SLRTask(**params)

    # ------------------------------------------------------------------ sampling
    def oracle_directions(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        r"""Draw :math:`(k^\star, v^\star)` as in the paper's experiments.

        :math:`k^\star` uniform on the sphere :math:`\mathbb S^{d-1}`; :math:`v^\star` uniform,
        orthogonalised against :math:`k^\star` and normalised, so Assumption 1 holds
        (:math:`v^\star` is then uniform on the sphere of :math:`k^{\star\perp}`).

        Parameters
        ----------
        key : jax.Array
            A ``jax.random`` key.

        Returns
        -------
        k_star, v_star : jax.Array, shape (d,)
            Orthonormal task directions.

        Raises
        ------
        ValueError
            When ``key`` is not a ``jax.random`` key.

        Examples
        --------
        >>> import jax
        >>> jax.config.update("jax_enable_x64", True)
        >>> from slrlib import SLRTask
        >>> task = SLRTask(d=20, L=5)
        >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
        >>> k_star.shape, v_star.shape
        ((20,), (20,))
        >>> [round(float(x), 12) for x in (k_star @ k_star, v_star @ v_star)]
        [1.0, 1.0]
        >>> bool(abs(k_star @ v_star) < 1e-12)  # orthogonal (Assumption 1)
        True
        """
        key = check_key(key)
        return _oracle_directions(key, self.d)

    def sample(
        self, key: jax.Array, n: int, k_star: ArrayLike, v_star: ArrayLike
    ) -> Sample:
        r"""Draw ``n`` independent samples :math:`(\mathbb X, Y, J_0)`.

        The same key gives the same sample.

        Parameters
        ----------
        key : jax.Array
            A ``jax.random`` key.
        n : int
            Number of samples, ``>= 1``.
        k_star, v_star : array_like, shape (d,)
            The task's directions (validated by :func:`check_directions`).

        Returns
        -------
        Sample
            ``X`` of shape (n, L, d), ``y`` (n,) and ``J0`` (n,) (0-based positions).

        Raises
        ------
        ValueError
            When ``key``, ``n`` or the directions are invalid.

        Examples
        --------
        >>> import jax
        >>> jax.config.update("jax_enable_x64", True)
        >>> from slrlib import SLRTask
        >>> task = SLRTask(d=400, L=10)
        >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
        >>> X, y, J0 = task.sample(jax.random.key(1), 100, k_star, v_star)
        >>> X.shape, y.shape, J0.shape
        ((100, 10, 400), (100,), (100,))
        >>> # the relevant token stands out along k* (its mean is sqrt(d/2) k*)
        >>> bool(((X @ k_star).argmax(axis=-1) == J0).all())
        True
        """
        key = check_key(key)
        n = check_positive_int(n, "n")
        k_star, v_star = check_directions(k_star, v_star, self.d)
        return _sample(key, n, k_star, v_star, self)

    def check_directions(
        self, k_star: ArrayLike, v_star: ArrayLike
    ) -> tuple[jax.Array, jax.Array]:
        """Validate ``(k_star, v_star)`` for this task (see :func:`check_directions`).

        Parameters
        ----------
        k_star, v_star : array_like, shape (d,)
            The task's directions.

        Returns
        -------
        k_star, v_star : jax.Array, shape (d,)
            The directions as float arrays.

        Raises
        ------
        ValueError
            When they are not finite, orthogonal unit vectors of shape (d,).
        """
        return check_directions(k_star, v_star, self.d)

    def check_parameter_vector(self, x: ArrayLike, name: str) -> jax.Array:
        """Validate a trainable direction (``k`` or ``v``): shape (..., d), finite, unit norm.

        Parameters
        ----------
        x : array_like, shape (..., d)
            The direction(s).
        name : str
            Its name, for the error message.

        Returns
        -------
        jax.Array
            ``x`` as a float array.

        Raises
        ------
        ValueError
            When ``x`` has the wrong last axis, is not finite or is not of unit norm.
        """
        x = as_float_array(x, name)
        check_last_dim(x, name, self.d)
        check_finite(x, name)
        check_unit_norm(x, name)
        return x


def check_task(task: object) -> SLRTask:
    """Validate that ``task`` is an :class:`SLRTask` (the argument every risk function takes).

    Parameters
    ----------
    task : object
        The object to check.

    Returns
    -------
    SLRTask
        ``task`` itself.

    Raises
    ------
    ValueError
        When ``task`` is not an :class:`SLRTask`.
    """
    require_x64()
    if not isinstance(task, SLRTask):
        raise ValueError(
            f"task must be an SLRTask, got {type(task).__name__}: {task!r}"
        )
    return task


def _is_numeric_sequence(obj) -> bool:
    try:
        arr = np.asarray(obj)
    except Exception:
        return False
    return arr.dtype.kind in "biuf" and arr.dtype.kind != "b"


@partial(jax.jit, static_argnums=(1,))
def _oracle_directions(key, d):
    k_key, v_key = jax.random.split(key)
    k = jax.random.normal(k_key, (d,))
    k = k / jnp.linalg.norm(k)
    v = jax.random.normal(v_key, (d,))
    v = v - jnp.dot(v, k) * k
    v = v / jnp.linalg.norm(v)
    return k, v


def _sample(key, n, k_star, v_star, task: SLRTask) -> Sample:
    return sample_kernel(
        key,
        n,
        task.L,
        task.d,
        k_star,
        v_star,
        task.gamma,
        task.eps,
        jnp.log(task.pi),
    )


@partial(jax.jit, static_argnums=(1, 2, 3))
def sample_kernel(
    key: jax.Array,
    n: int,
    L: int,
    d: int,
    k_star: ArrayLike,
    v_star: ArrayLike,
    gamma: ArrayLike,
    eps: ArrayLike,
    log_pi: ArrayLike,
) -> Sample:
    r"""The sampler of :meth:`SLRTask.sample` as a pure, compiled function (no validation).

    Compiled once per shape ``(n, L, d)`` (static); :math:`k^\star, v^\star, \gamma,
    \varepsilon` and the log-probabilities ``log_pi`` (L,) of the position :math:`J_0` are
    traced, so the training loops draw batches inside ``jax.lax.scan`` and ``jax.vmap`` over
    runs with their own task directions. Same key, same draws as :meth:`SLRTask.sample`.

    Parameters
    ----------
    key : jax.Array
        A ``jax.random`` key.
    n, L, d : int
        Number of samples, sequence length and token dimension (static).
    k_star, v_star : array_like, shape (d,)
        The task's directions.
    gamma, eps : array_like
        :math:`\gamma` and :math:`\varepsilon` of the task.
    log_pi : array_like, shape (L,)
        Log-probabilities of the position :math:`J_0`.

    Returns
    -------
    Sample
        ``X`` (n, L, d), ``y`` (n,), ``J0`` (n,).
    """
    j_key, x_key, noise_key = jax.random.split(key, 3)
    J0 = jax.random.categorical(j_key, log_pi, shape=(n,))
    Z = jax.random.normal(x_key, (n, L, d))
    relevant = jax.nn.one_hot(J0, L, dtype=bool)[..., None]
    X = jnp.where(relevant, jnp.sqrt(d / 2.0) * k_star + gamma * Z, Z)
    X_rel = jnp.take_along_axis(X, J0[:, None, None], axis=1)[:, 0, :]
    y = X_rel @ v_star + eps * jax.random.normal(noise_key, (n,))
    return Sample(X, y, J0)


# ---------------------------------------------------------------------- multiple locations
class MultiSample(NamedTuple):
    """``n`` draws of the multiple-location task.

    Fields: tokens ``X`` (n, L, d), outputs ``y`` (n,), positions ``J`` (n, M).
    """

    X: jax.Array
    y: jax.Array
    J: jax.Array


@dataclass(frozen=True)
class MultiLocationTask:
    r"""Multiple-location regression, eq. (30) of Appendix E.3.

    :math:`M` latent, distinct positions :math:`J_1, \dots, J_M`, uniform among the ordered
    :math:`M`-tuples of distinct positions. Given them, tokens are independent with

    .. math::

        X_{J_m} \sim \mathcal N\big(\sqrt{d/2}\, k_m^\star,\ \gamma^2 I_d\big), \qquad
        X_\ell \sim \mathcal N(0, I_d)\ (\ell \notin \{J_1, \dots, J_M\}), \qquad
        Y = \sum_{m=1}^M X_{J_m}^\top v_m^\star + \xi,

    :math:`\xi \sim \mathcal N(0, \varepsilon^2)`. Each pair :math:`(k_m^\star, v_m^\star)`
    satisfies Assumption 1 (unit, orthogonal); the pairs are drawn independently.
    ``M = 1`` is :class:`SLRTask` with a uniform :math:`J_0`.

    Parameters
    ----------
    d : int
        Token dimension, ``d >= 2``.
    L : int
        Sequence length, ``L >= M``.
    M : int
        Number of relevant tokens, ``M >= 1``.
    gamma, eps : float
        As in :class:`SLRTask`: ``gamma > 0``, ``eps >= 0``.

    Raises
    ------
    ValueError
        When a parameter is out of range (e.g. ``M > L``).
    """

    d: int
    L: int
    M: int = 2
    gamma: float = math.sqrt(0.5)
    eps: float = 0.0

    def __post_init__(self):
        d = check_positive_int(
            self.d,
            "d",
            minimum=2,
            why="k* and v* must be orthogonal unit vectors",
        )
        L = check_positive_int(self.L, "L")
        M = check_positive_int(self.M, "M")
        if M > L:
            raise ValueError(
                f"M must be <= L = {L} (the M relevant positions are distinct), got {M}"
            )
        gamma = check_real_scalar(
            self.gamma, "gamma", minimum=0.0, strict=True
        )
        eps = check_real_scalar(self.eps, "eps", minimum=0.0)
        for name, value in (
            ("d", d),
            ("L", L),
            ("M", M),
            ("gamma", gamma),
            ("eps", eps),
        ):
            object.__setattr__(self, name, value)

    @property
    def q(self) -> float:
        r"""Norm of a relevant token's mean, :math:`\sqrt{d/2}`."""
        return math.sqrt(self.d / 2.0)

    @property
    def null_risk(self) -> float:
        r"""Risk of the null predictor, :math:`\mathbb E[Y^2] = M\gamma^2 + \varepsilon^2`."""
        return self.M * self.gamma**2 + self.eps**2

    def replace(self, **changes: Any) -> "MultiLocationTask":
        """A copy with some parameters changed (validated again).

        Parameters
        ----------
        **changes
            New values of ``d``, ``L``, ``M``, ``gamma`` or ``eps``.

        Returns
        -------
        MultiLocationTask
            The new task.

        Raises
        ------
        ValueError
            When a new value is invalid (as in :class:`MultiLocationTask`).
        """
        params = {
            "d": self.d,
            "L": self.L,
            "M": self.M,
            "gamma": self.gamma,
            "eps": self.eps,
        }
        params.update(changes)
        return MultiLocationTask(**params)

    def oracle_directions(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        r"""Draw :math:`(k_m^\star, v_m^\star)_{m \le M}`.

        Each pair is drawn as :meth:`SLRTask.oracle_directions` does, from its own key.

        Parameters
        ----------
        key : jax.Array
            A ``jax.random`` key, split into ``M``.

        Returns
        -------
        K_star, V_star : jax.Array, shape (M, d)
            Row ``m`` holds :math:`k_m^\star` (resp. :math:`v_m^\star`).

        Raises
        ------
        ValueError
            When ``key`` is not a ``jax.random`` key.
        """
        key = check_key(key)
        return jax.vmap(lambda k: _oracle_directions(k, self.d))(
            jax.random.split(key, self.M)
        )

    def check_directions(
        self, K_star: ArrayLike, V_star: ArrayLike
    ) -> tuple[jax.Array, jax.Array]:
        """Validate ``K_star, V_star``: shape (M, d), finite, unit rows, row m of each orthogonal.

        Parameters
        ----------
        K_star, V_star : array_like, shape (M, d)
            The task's directions, one pair per row.

        Returns
        -------
        K_star, V_star : jax.Array, shape (M, d)
            The directions as float arrays.

        Raises
        ------
        ValueError
            When a shape is wrong, or a row is not finite, not of unit norm, or not orthogonal to
            its partner.
        """
        K_star = as_float_array(K_star, "K_star")
        V_star = as_float_array(V_star, "V_star")
        check_shape(K_star, "K_star", (self.M, self.d))
        check_shape(V_star, "V_star", (self.M, self.d))
        for name, x in (("K_star", K_star), ("V_star", V_star)):
            check_finite(x, name)
            check_unit_norm(x, name)
        check_orthogonal(K_star, V_star, "K_star[m]", "V_star[m]")
        return K_star, V_star

    def sample(
        self, key: jax.Array, n: int, K_star: ArrayLike, V_star: ArrayLike
    ) -> MultiSample:
        """Draw ``n`` independent samples of the multiple-location task.

        Parameters
        ----------
        key : jax.Array
            A ``jax.random`` key.
        n : int
            Number of samples, ``>= 1``.
        K_star, V_star : array_like, shape (M, d)
            The task's directions (validated by :meth:`check_directions`).

        Returns
        -------
        MultiSample
            ``X`` (n, L, d), ``y`` (n,), and ``J`` (n, M) holding the distinct relevant positions (0-based).

        Raises
        ------
        ValueError
            When ``key``, ``n`` or the directions are invalid.
        """
        key = check_key(key)
        n = check_positive_int(n, "n")
        K_star, V_star = self.check_directions(K_star, V_star)
        return multi_sample_kernel(
            key, n, self.L, self.d, K_star, V_star, self.gamma, self.eps
        )


@partial(jax.jit, static_argnums=(1, 2, 3))
def multi_sample_kernel(
    key: jax.Array,
    n: int,
    L: int,
    d: int,
    K_star: ArrayLike,
    V_star: ArrayLike,
    gamma: ArrayLike,
    eps: ArrayLike,
) -> MultiSample:
    r"""The sampler of :meth:`MultiLocationTask.sample` as a pure, compiled function (no validation).

    Static ``(n, L, d)``; ``K_star, V_star`` (M, d), :math:`\gamma, \varepsilon` traced. Same key,
    same draws as :meth:`MultiLocationTask.sample`.

    Parameters
    ----------
    key : jax.Array
        A ``jax.random`` key.
    n, L, d : int
        Number of samples, sequence length and token dimension (static).
    K_star, V_star : array_like, shape (M, d)
        The task's directions, one pair per row.
    gamma, eps : array_like
        :math:`\gamma` and :math:`\varepsilon` of the task.

    Returns
    -------
    MultiSample
        ``X`` (n, L, d), ``y`` (n,), ``J`` (n, M).
    """
    M = K_star.shape[0]
    j_key, x_key, noise_key = jax.random.split(key, 3)
    # The first M entries of a uniform random permutation: distinct, uniform positions.
    J = jnp.argsort(jax.random.uniform(j_key, (n, L)), axis=-1)[:, :M]
    Z = jax.random.normal(x_key, (n, L, d))
    onehot = jax.nn.one_hot(J, L)  # (n, M, L)
    means = jnp.sqrt(d / 2.0) * jnp.einsum("nml,md->nld", onehot, K_star)
    relevant = onehot.sum(axis=1)[..., None] > 0
    X = jnp.where(relevant, means + gamma * Z, Z)
    X_rel = jnp.take_along_axis(X, J[..., None], axis=1)  # (n, M, d)
    y = jnp.einsum("nmd,md->n", X_rel, V_star) + eps * jax.random.normal(
        noise_key, (n,)
    )
    return MultiSample(X, y, J)
