r"""Group-sparse linear classification with one softmax-attention layer (chapter 13).

The case study of Zhang, Meng & Cao, *Transformer learns optimal variable selection in
group-sparse classification* (ICLR 2025), as presented in a talk by Yuan Cao's group.

**Data.** :math:`X = [x_1, \dots, x_D] \in \mathbb R^{d\times D}` with i.i.d. groups
:math:`x_j \sim \mathcal N(0, \sigma_x^2 I_d)`, and the label
:math:`y = \operatorname{sign}\langle x_{j^\star}, v^\star\rangle` for a unit vector
:math:`v^\star \in \mathbb R^d` and one label-relevant group :math:`j^\star`. Groups are numbered
from 0 in the code (``j_star``); the talk numbers them from 1 (its :math:`j^\star = 2` is
``j_star=1``). A zero inner product (probability 0) is labelled :math:`+1`.

**Embedding.** :math:`H = [X; P] \in \mathbb R^{(d+D)\times D}` with positional encodings
:math:`P = I_D`: column :math:`j` is :math:`h_j = [x_j; e_j]` (our inference: the talk's parameters
live in :math:`\mathbb R^{d+D}`, hence this choice of :math:`P`).

**Model.** With :math:`v = [v_1; v_2] \in \mathbb R^{d+D}` and
:math:`W \in \mathbb R^{(d+D)\times(d+D)}`,

.. math::

    f(H, v, W) = \sum_{j=1}^D v^\top H \operatorname{softmax}(H^\top W h_j)
               = v^\top H S \mathbf 1, \qquad
    S_{ij} = \frac{e^{h_i^\top W h_j}}{\sum_{k} e^{h_k^\top W h_j}},

so column :math:`j` of :math:`S` is the attention of query :math:`j` over the keys :math:`i`.
Writing :math:`c = S\mathbf 1` (the attention each key receives, summed over queries),
:math:`f = v_1^\top X c + v_2^\top c`. With :math:`P = I_D` the scores split into blocks,
:math:`H^\top W H = X^\top W_{11} X + X^\top W_{12} + W_{21} X + W_{22}`; training uses this form
(:math:`O(dD^2 + d^2 D)` per sample instead of :math:`O((d+D)^2 D)`), :func:`model` the definition.

**Training.** Logistic loss :math:`\ell(a) = \log(1 + e^{-a})` on :math:`y f`, full-batch
gradient descent on a fixed training set of :math:`n` samples (as in the talk's experiments;
the theorem is about the population loss), from :math:`v_0 = 0`, :math:`W_0 = 0`.
At :math:`v = 0` the model is 0 and, being linear in :math:`v`, has zero gradient in :math:`W`:
the first step moves :math:`v` only.

**Sign symmetry.** Under :math:`(X, y) \mapsto (-X, -y)` the population law is invariant, and
:math:`f(-X; v_1, v_2, W) = -f(X; v_1, -v_2, W')` with :math:`W'` the matrix :math:`W` with its
cross blocks :math:`W_{12}, W_{21}` negated. Hence the population loss is invariant under
:math:`R: (v_1, v_2, W_{11}, W_{12}, W_{21}, W_{22}) \mapsto (v_1, -v_2, W_{11}, -W_{12}, -W_{21}, W_{22})`
and gradient descent from 0 stays in the fixed subspace :math:`\{v_2 = 0, W_{12} = W_{21} = 0\}`:
this is why the talk finds :math:`v = [v_1; 0_D]`. A finite training set breaks the symmetry;
``symmetrize=True`` trains on the sign-symmetrised empirical loss
:math:`\frac1n\sum_k \tfrac12[\ell(y_k f(X_k)) + \ell(-y_k f(-X_k))]`, whose gradient keeps
:math:`v_2 = 0` and :math:`W_{12} = W_{21} = 0` exactly (the two halves are computed by the same
operations on exactly negated inputs, so they cancel bit for bit).

**Claims of the talk** (Zhang, Meng & Cao 2025): for :math:`D = \omega(\log^2(1/\epsilon))`,
:math:`\eta = \Theta(1)`, after :math:`T^\star = \Theta(D^3 \vee D^{-3}\epsilon^{-3})` steps on the
population loss, :math:`S_{j^\star j} \ge 1 - e^{-\Theta(D)}` for every :math:`j`,
:math:`v = [v_1; 0_D]` with :math:`\|v_1/\|v_1\| - v^\star\| \le \epsilon D e^{-\Theta(\sqrt D)}`, and the
loss is :math:`\Theta(\epsilon \wedge D^{-2})`; fine-tuning :math:`v` with :math:`W` fixed needs
:math:`\tilde O((d+D)/\epsilon)` samples on a downstream task with the same :math:`j^\star`, where
logistic regression on :math:`\operatorname{vec}(X)` needs :math:`\Omega(dD/\epsilon)`
(:func:`sample_efficiency`).
"""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import dataclass
from functools import partial
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from slrlib.validation import (
    as_float_array,
    check_finite,
    check_key,
    check_positive_int,
    check_real_scalar,
    check_shape,
    check_unit_norm,
    is_concrete,
)

__all__ = [
    "GroupSparseConfig",
    "GroupSparseRun",
    "SampleEfficiency",
    "attention",
    "bayes_accuracy",
    "embed",
    "features",
    "logistic_loss",
    "model",
    "random_unit",
    "sample",
    "sample_efficiency",
    "train",
]


# ------------------------------------------------------------------------- validation
def _check_index(value, name: str, D: int) -> int:
    """An integer in ``[0, D)`` (a group index, 0-based)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, numbers.Integral
    ):
        raise ValueError(
            f"{name} must be an integer in [0, D = {D}) (0-based group index), got {value!r}"
        )
    if not 0 <= int(value) < D:
        raise ValueError(
            f"{name} must be an integer in [0, D = {D}) (0-based group index), got {value!r}"
        )
    return int(value)


def _check_D(D) -> int:
    D = check_positive_int(D, "D")
    if D < 2:
        raise ValueError(
            f"D must be >= 2 (at least two groups to select from), got {D!r}"
        )
    return D


def _check_v_star(v_star, d: int):
    v_star = as_float_array(v_star, "v_star")
    check_shape(v_star, "v_star", (d,))
    check_finite(v_star, "v_star")
    check_unit_norm(v_star, "v_star")
    return v_star


def _check_H(H, name: str = "H"):
    H = as_float_array(H, name)
    if jnp.ndim(H) < 2:
        raise ValueError(
            f"{name} must have shape (..., d + D, D), got shape {jnp.shape(H)}"
        )
    p, D = jnp.shape(H)[-2:]
    if p <= D:
        raise ValueError(
            f"{name} must have shape (..., d + D, D) with d >= 1, got shape {jnp.shape(H)}"
        )
    check_finite(H, name)
    return H


def _check_W(W, p: int):
    W = as_float_array(W, "W")
    check_shape(W, "W", (p, p))
    check_finite(W, "W")
    return W


def _check_v(v, p: int):
    v = as_float_array(v, "v")
    check_shape(v, "v", (p,))
    check_finite(v, "v")
    return v


def _check_labels(y, n: int, name: str = "y"):
    y = as_float_array(y, name)
    check_shape(y, name, (n,))
    if is_concrete(y) and not np.all(np.isin(np.asarray(y), (-1.0, 1.0))):
        raise ValueError(
            f"{name} must hold labels in {{-1, +1}}, got values {np.unique(np.asarray(y))[:6]}"
        )
    return y


# ------------------------------------------------------------------------- data
def random_unit(key: jax.Array, d: int) -> jax.Array:
    r"""A uniform draw on the unit sphere of :math:`\mathbb R^d` (a normalised Gaussian).

    Parameters
    ----------
    key : jax.Array
        A JAX random key.
    d : int
        Dimension.

    Returns
    -------
    jax.Array, shape (d,)
        A unit vector.

    Raises
    ------
    ValueError
        If ``key`` is not a JAX random key or ``d`` is not a positive integer.
    """
    key = check_key(key)
    d = check_positive_int(d, "d")
    z = jax.random.normal(key, (d,))
    return z / jnp.linalg.norm(z)


def _normal(key, shape):
    """Standard Gaussians of ``shape``, drawn flat then reshaped (XLA on CPU compiles a flat draw
    several times faster than a multi-axis one)."""
    return jax.random.normal(key, (math.prod(shape),)).reshape(shape)


@partial(jax.jit, static_argnames=("n", "d", "D", "j_star"))
def _sample(key, v_star, sigma_x, *, n, d, D, j_star):
    X = sigma_x * _normal(key, (n, d, D))
    y = jnp.where(X[:, :, j_star] @ v_star >= 0, 1.0, -1.0)
    return X, y


def sample(
    key: jax.Array,
    n: int,
    d: int,
    D: int,
    j_star: int,
    v_star: ArrayLike,
    sigma_x: float = 1.0,
) -> tuple[jax.Array, jax.Array]:
    r"""``n`` draws of the group-sparse task.

    Column ``X[k, :, j]`` is group :math:`x_j \sim \mathcal N(0, \sigma_x^2 I_d)` (all independent),
    and :math:`y = \operatorname{sign}\langle x_{j^\star}, v^\star\rangle` (:math:`+1` on the null
    event of a zero inner product). The same key gives the same sample.

    Parameters
    ----------
    key : jax.Array
        A JAX random key.
    n, d : int
        Samples, and dimension of a group.
    D : int
        Number of groups, ``>= 2``.
    j_star : int
        The label-relevant group, 0-based, in ``[0, D)``.
    v_star : array_like, shape (d,)
        Unit vector of :math:`\mathbb R^d`.
    sigma_x : float
        Standard deviation :math:`\sigma_x > 0` of the groups (default 1).

    Returns
    -------
    X : jax.Array, shape (n, d, D)
        The groups.
    y : jax.Array, shape (n,)
        The labels, in :math:`\{-1, +1\}`.

    Raises
    ------
    ValueError
        If an argument is out of its range, or ``v_star`` is not a finite unit vector of shape (d,).
    """
    key = check_key(key)
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    D = _check_D(D)
    j_star = _check_index(j_star, "j_star", D)
    v_star = _check_v_star(v_star, d)
    sigma_x = check_real_scalar(sigma_x, "sigma_x", minimum=0.0, strict=True)
    return _sample(key, v_star, sigma_x, n=n, d=d, D=D, j_star=j_star)


def embed(X: ArrayLike) -> jax.Array:
    """The input matrix :math:`H = [X; I_D]`.

    Parameters
    ----------
    X : array_like, shape (..., d, D)
        Groups as columns.

    Returns
    -------
    jax.Array, shape (..., d + D, D)
        :math:`H`.

    Raises
    ------
    ValueError
        If ``X`` is not a finite real array with at least two axes.
    """
    X = as_float_array(X, "X")
    if jnp.ndim(X) < 2:
        raise ValueError(
            f"X must have shape (..., d, D), got shape {jnp.shape(X)}"
        )
    check_finite(X, "X")
    D = jnp.shape(X)[-1]
    P = jnp.broadcast_to(jnp.eye(D, dtype=X.dtype), (*jnp.shape(X)[:-2], D, D))
    return jnp.concatenate([X, P], axis=-2)


def bayes_accuracy() -> float:
    r"""The Bayes accuracy of the task: 1, the label being a function of :math:`x_{j^\star}`.

    Returns
    -------
    float
        1.0.
    """
    return 1.0


# ------------------------------------------------------------------------- model (the definition)
def attention(H: ArrayLike, W: ArrayLike) -> jax.Array:
    r"""The attention matrix :math:`S = \operatorname{softmax}_{\text{keys}}(H^\top W H)`.

    ``S[..., i, j]`` is the weight of key :math:`i` for query :math:`j`: column :math:`j` is
    :math:`\operatorname{softmax}(H^\top W h_j)` and sums to 1.

    Parameters
    ----------
    H : array_like, shape (..., d + D, D)
        Input matrices (:func:`embed`).
    W : array_like, shape (d + D, d + D)
        The attention matrix.

    Returns
    -------
    jax.Array, shape (..., D, D)
        :math:`S`.

    Raises
    ------
    ValueError
        If ``H`` or ``W`` is not finite or of the wrong shape.
    """
    H = _check_H(H)
    W = _check_W(W, jnp.shape(H)[-2])
    return _attention(H, W)


def _attention(H, W):
    scores = jnp.swapaxes(H, -1, -2) @ (W @ H)
    return jax.nn.softmax(scores, axis=-2)


def features(H: ArrayLike, W: ArrayLike) -> jax.Array:
    r"""The features :math:`H S \mathbf 1 = \sum_j H\operatorname{softmax}(H^\top W h_j)`.

    The model is :math:`f = v^\top H S\mathbf 1`, linear in :math:`v` with these features
    (fine-tuning fits them).

    Parameters
    ----------
    H : array_like, shape (..., d + D, D)
        Input matrices (:func:`embed`).
    W : array_like, shape (d + D, d + D)
        The attention matrix.

    Returns
    -------
    jax.Array, shape (..., d + D)
        :math:`H S \mathbf 1`.

    Raises
    ------
    ValueError
        If ``H`` or ``W`` is not finite or of the wrong shape.
    """
    H = _check_H(H)
    W = _check_W(W, jnp.shape(H)[-2])
    return _features(H, W)


def _features(H, W):
    c = jnp.sum(
        _attention(H, W), axis=-1
    )  # attention received by each key, summed over queries
    return jnp.einsum("...pi,...i->...p", H, c)


def model(H: ArrayLike, v: ArrayLike, W: ArrayLike) -> jax.Array:
    r"""The one-layer transformer :math:`f(H, v, W) = \sum_{j=1}^D v^\top H\operatorname{softmax}(H^\top W h_j)`.

    The model of the talk (Zhang, Meng & Cao 2025).

    Parameters
    ----------
    H : array_like, shape (..., d + D, D)
        Input matrices (:func:`embed`).
    v : array_like, shape (d + D,)
        The value vector.
    W : array_like, shape (d + D, d + D)
        The attention matrix.

    Returns
    -------
    jax.Array, shape (...,)
        :math:`f(H, v, W)`.

    Raises
    ------
    ValueError
        If an argument is not finite or of the wrong shape.
    """
    H = _check_H(H)
    p = jnp.shape(H)[-2]
    v = _check_v(v, p)
    W = _check_W(W, p)
    return _features(H, W) @ v


def logistic_loss(
    v: ArrayLike, W: ArrayLike, H: ArrayLike, y: ArrayLike
) -> jax.Array:
    r"""The empirical logistic loss :math:`\frac1n\sum_k \log(1 + e^{-y_k f(H_k, v, W)})`.

    Parameters
    ----------
    v : array_like, shape (d + D,)
        The value vector.
    W : array_like, shape (d + D, d + D)
        The attention matrix.
    H : array_like, shape (n, d + D, D)
        Input matrices (:func:`embed`).
    y : array_like, shape (n,)
        Labels in :math:`\{-1, +1\}`.

    Returns
    -------
    jax.Array
        The loss, a scalar.

    Raises
    ------
    ValueError
        If an argument is not finite or of the wrong shape, or ``y`` holds other values than ±1.
    """
    H = _check_H(H)
    if jnp.ndim(H) != 3:
        raise ValueError(
            f"H must have shape (n, d + D, D), got shape {jnp.shape(H)}"
        )
    p = jnp.shape(H)[-2]
    v = _check_v(v, p)
    W = _check_W(W, p)
    y = _check_labels(y, jnp.shape(H)[0])
    return jnp.mean(jax.nn.softplus(-y * (_features(H, W) @ v)))


# ------------------------------------------------------------------------- fast path (P = I_D)
def _scores_x(X, W, d):
    """:math:`H^\\top W H` for :math:`H = [X; I_D]`, by blocks: (n, D, D), entry [i, j] = h_i^T W h_j."""
    W11, W12, W21, W22 = W[:d, :d], W[:d, d:], W[d:, :d], W[d:, d:]
    XT = jnp.swapaxes(X, -1, -2)
    return XT @ (W11 @ X) + XT @ W12 + W21 @ X + W22


def _attention_x(X, W, d):
    return jax.nn.softmax(_scores_x(X, W, d), axis=-2)


def _f_x(X, v, W, d):
    c = jnp.sum(_attention_x(X, W, d), axis=-1)  # (n, D)
    return jnp.einsum("nai,ni,a->n", X, c, v[:d]) + c @ v[d:]


def _loss_x(params, X, y, d, symmetrize):
    v, W = params
    loss = jnp.mean(jax.nn.softplus(-y * _f_x(X, v, W, d)))
    if symmetrize:
        loss = 0.5 * (loss + jnp.mean(jax.nn.softplus(y * _f_x(-X, v, W, d))))
    return loss


# ------------------------------------------------------------------------- training
@dataclass(frozen=True)
class GroupSparseConfig:
    r"""One pre-training run: the task, the training set, and gradient descent.

    Gradient descent is stable along the bias-like direction :math:`v_2 \propto \mathbf 1` only for
    :math:`\eta \lesssim 8/D` (at :math:`v = W = 0` the loss Hessian in :math:`v` has top eigenvalue
    :math:`\approx D/4`, from :math:`H S\mathbf 1 = [\sum_j x_j; \mathbf 1_D]`): the talk's
    :math:`\eta = \Theta(1)` hides this constant.

    Parameters
    ----------
    n : int
        Training samples (fixed; default 500).
    d : int
        Dimension of a group (default 4).
    D : int
        Number of groups, ``>= 2`` (default 6).
    j_star : int
        Label-relevant group, 0-based (default 1).
    sigma_x : float
        Standard deviation of the groups (default 1).
    eta : float
        Step size (default 1).
    n_steps : int
        Full-batch steps (default 1000); a multiple of ``log_every``.
    log_every : int
        Metrics every ``log_every`` steps (default 10).
    n_test : int
        Fresh samples on which the metrics are computed (default 2500).
    symmetrize : bool
        Train on the sign-symmetrised loss (module docstring; default False).

    Raises
    ------
    ValueError
        If a field is out of its range, or ``n_steps`` is not a multiple of ``log_every``.
    """

    n: int = 500
    d: int = 4
    D: int = 6
    j_star: int = 1
    sigma_x: float = 1.0
    eta: float = 1.0
    n_steps: int = 1000
    log_every: int = 10
    n_test: int = 2500
    symmetrize: bool = False

    def __post_init__(self):
        for name in ("n", "d", "n_steps", "log_every", "n_test"):
            check_positive_int(getattr(self, name), name)
        D = _check_D(self.D)
        _check_index(self.j_star, "j_star", D)
        check_real_scalar(self.sigma_x, "sigma_x", minimum=0.0, strict=True)
        check_real_scalar(self.eta, "eta", minimum=0.0, strict=True)
        if self.n_steps % self.log_every:
            raise ValueError(
                f"n_steps must be a multiple of log_every = {self.log_every}, got {self.n_steps!r}"
            )
        if not isinstance(self.symmetrize, (bool, np.bool_)):
            raise ValueError(
                f"symmetrize must be a bool, got {self.symmetrize!r}"
            )

    @property
    def n_logs(self) -> int:
        """Logged steps, 0 included."""
        return self.n_steps // self.log_every + 1


@dataclass(frozen=True, eq=False)
class GroupSparseRun:
    r"""A finished run of :func:`train`.

    Curves have one entry per logged step ``steps``.

    Parameters
    ----------
    config : GroupSparseConfig
        The configuration.
    v_star : numpy.ndarray, shape (d,)
        The task's direction.
    steps : numpy.ndarray
        The logged steps.
    train_loss : numpy.ndarray
        The training objective (sign-symmetrised if ``config.symmetrize``).
    test_acc : numpy.ndarray
        Accuracy of :math:`\operatorname{sign} f` on the ``n_test`` fresh samples (a tie
        :math:`f = 0`, as at :math:`v = 0`, counts one half).
    cosine : numpy.ndarray
        :math:`\cos(v_1, v^\star)` (0 while :math:`v_1 = 0`).
    norm_ratio : numpy.ndarray
        :math:`\|v_2\|/\|v\|` (0 while :math:`v = 0`), the talk's "norm ratio".
    attention_jstar : numpy.ndarray
        :math:`S_{j^\star j}` averaged over the queries :math:`j` and the test samples.
    cross_norm : numpy.ndarray
        :math:`\|W_{12}\|_F + \|W_{21}\|_F`, the blocks mixing content and position.
    v, W : numpy.ndarray
        Final state.
    attention_matrix : numpy.ndarray, shape (D, D)
        The test-sample mean of :math:`S`, final state.
    attention_min : float
        :math:`\min_j` of its row :math:`j^\star`.
    attention_min_sample : float
        The smallest :math:`S_{j^\star j}` over queries and test samples.
    seconds : float
        Wall time, compilation included.
    """

    config: GroupSparseConfig
    v_star: np.ndarray
    steps: np.ndarray
    train_loss: np.ndarray
    test_acc: np.ndarray
    cosine: np.ndarray
    norm_ratio: np.ndarray
    attention_jstar: np.ndarray
    cross_norm: np.ndarray
    v: np.ndarray
    W: np.ndarray
    attention_matrix: np.ndarray
    attention_min: float
    attention_min_sample: float
    seconds: float


def _safe_ratio(a, b):
    return jnp.where(b > 0, a / jnp.where(b > 0, b, 1.0), 0.0)


@partial(jax.jit, static_argnames=("d", "symmetrize", "n_logs", "log_every"))
def _train_loop(X, y, eta, *, d, symmetrize, n_logs, log_every):
    """Gradient descent from zero; returns the iterates at steps 0, log_every, ... (``n_logs`` of them)."""
    grad = jax.grad(_loss_x)

    def step(_, params):
        g = grad(params, X, y, d, symmetrize)
        return jax.tree.map(lambda p, gp: p - eta * gp, params, g)

    def interval(params, i):  # interval 0 records the initial point
        params = jax.lax.fori_loop(
            0, jnp.where(i == 0, 0, log_every), step, params
        )
        return params, params

    p = X.shape[-2] + X.shape[-1]
    params0 = (jnp.zeros(p, X.dtype), jnp.zeros((p, p), X.dtype))
    return jax.lax.scan(interval, params0, jnp.arange(n_logs))[1]


@partial(jax.jit, static_argnames=("d", "j_star"))
def _metrics(vs, Ws, X, y, X_test, y_test, v_star, sym_weight, *, d, j_star):
    """The logged quantities of :class:`GroupSparseRun` at each iterate (``lax.map``: one compiled body,
    shared by the raw and symmetrised runs through the traced weight ``sym_weight`` in {0, 1})."""

    def one(params):
        v, W = params
        loss_plus = jnp.mean(jax.nn.softplus(-y * _f_x(X, v, W, d)))
        loss_minus = jnp.mean(jax.nn.softplus(y * _f_x(-X, v, W, d)))
        S = _attention_x(X_test, W, d)
        c = jnp.sum(S, axis=-1)
        f = jnp.einsum("nai,ni,a->n", X_test, c, v[:d]) + c @ v[d:]
        n1, nv = jnp.linalg.norm(v[:d]), jnp.linalg.norm(v)
        return {
            "train_loss": (loss_plus + sym_weight * loss_minus)
            / (1.0 + sym_weight),
            "test_acc": jnp.mean(
                jnp.where(y_test * f > 0, 1.0, jnp.where(f == 0, 0.5, 0.0))
            ),
            "cosine": _safe_ratio(v[:d] @ v_star, n1),
            "norm_ratio": _safe_ratio(jnp.linalg.norm(v[d:]), nv),
            "attention_jstar": jnp.mean(S[:, j_star, :]),
            "cross_norm": jnp.linalg.norm(W[:d, d:])
            + jnp.linalg.norm(W[d:, :d]),
        }

    logs = jax.lax.map(one, (vs, Ws))
    S = _attention_x(X_test, Ws[-1], d)
    return logs, jnp.mean(S, axis=0), jnp.min(S[:, j_star, :])


def train(config: GroupSparseConfig, key: jax.Array) -> GroupSparseRun:
    r"""Pre-train the model by full-batch gradient descent from :math:`v_0 = 0, W_0 = 0`.

    :math:`v \leftarrow v - \eta\nabla_v\hat L`, :math:`W \leftarrow W - \eta\nabla_W\hat L` for
    ``config.n_steps`` steps, with :math:`\hat L` the empirical logistic loss (sign-symmetrised if
    ``config.symmetrize``).

    Parameters
    ----------
    config : GroupSparseConfig
        The run's configuration.
    key : jax.Array
        Gives :math:`v^\star` (uniform on the sphere), the ``n`` training samples and the
        ``n_test`` test samples.

    Returns
    -------
    GroupSparseRun
        The logged curves and the final state.

    Raises
    ------
    ValueError
        If ``config`` is not a :class:`GroupSparseConfig` or ``key`` is not a JAX random key.
    FloatingPointError
        If the iterates stop being finite (``eta`` too large).
    """
    if not isinstance(config, GroupSparseConfig):
        raise ValueError(
            f"config must be a GroupSparseConfig, got {type(config).__name__}"
        )
    key = check_key(key)
    start = time.perf_counter()
    star_key, train_key, test_key = jax.random.split(key, 3)
    c = config
    v_star = random_unit(star_key, c.d)
    X, y = _sample(
        train_key, v_star, c.sigma_x, n=c.n, d=c.d, D=c.D, j_star=c.j_star
    )
    X_test, y_test = _sample(
        test_key, v_star, c.sigma_x, n=c.n_test, d=c.d, D=c.D, j_star=c.j_star
    )
    vs, Ws = _train_loop(
        X,
        y,
        c.eta,
        d=c.d,
        symmetrize=bool(c.symmetrize),
        n_logs=c.n_logs,
        log_every=c.log_every,
    )
    if not (
        np.all(np.isfinite(np.asarray(vs)))
        and np.all(np.isfinite(np.asarray(Ws)))
    ):
        raise FloatingPointError(
            f"gradient descent diverged (non-finite iterates) with eta = {c.eta}; lower eta"
        )
    logs, S_mean, S_min = _metrics(
        vs,
        Ws,
        X,
        y,
        X_test,
        y_test,
        v_star,
        float(c.symmetrize),
        d=c.d,
        j_star=c.j_star,
    )
    logs = {k: np.asarray(a) for k, a in logs.items()}
    v, W = np.asarray(vs)[-1], np.asarray(Ws)[-1]
    S_mean = np.asarray(S_mean)
    return GroupSparseRun(
        config=c,
        v_star=np.asarray(v_star),
        steps=np.arange(c.n_logs) * c.log_every,
        v=v,
        W=W,
        attention_matrix=S_mean,
        attention_min=float(S_mean[c.j_star].min()),
        attention_min_sample=float(S_min),
        seconds=time.perf_counter() - start,
        **logs,
    )


# ------------------------------------------------------------------------- downstream
@dataclass(frozen=True, eq=False)
class SampleEfficiency:
    r"""Test accuracy against the training-set size of three logistic regressions on a downstream task.

    The downstream task has the same :math:`j^\star` and a fresh :math:`\tilde v^\star` per seed
    (:func:`sample_efficiency`).

    Parameters
    ----------
    ns : numpy.ndarray
        The training-set sizes.
    d, D, j_star : int
        The task.
    C : float
        scikit-learn's inverse L2 penalty (the same for all three).
    n_test : int
        Test samples per seed.
    acc_vec : numpy.ndarray, shape (len(ns), n_seeds)
        Accuracies on :math:`\operatorname{vec}(X) \in \mathbb R^{dD}`.
    acc_attention : numpy.ndarray, shape (len(ns), n_seeds)
        On the features :math:`H S\mathbf 1 \in \mathbb R^{d+D}` of the pre-trained, frozen
        :math:`W` (fine-tuning :math:`v` only).
    acc_oracle : numpy.ndarray, shape (len(ns), n_seeds)
        On :math:`x_{j^\star} \in \mathbb R^d` (the group known in advance).
    seconds : float
        Wall time.
    """

    ns: np.ndarray
    d: int
    D: int
    j_star: int
    C: float
    n_test: int
    acc_vec: np.ndarray
    acc_attention: np.ndarray
    acc_oracle: np.ndarray
    seconds: float

    def mean_accuracy(self, method: str) -> np.ndarray:
        """Mean over seeds of ``acc_<method>``.

        Computed from the integer counts of correct test predictions, so the result does not
        depend on the order of a floating-point sum (these means are multiples of
        ``1/(n_seeds n_test)`` and can sit exactly on a rounding boundary).

        Parameters
        ----------
        method : {"vec", "attention", "oracle"}
            The representation.

        Returns
        -------
        numpy.ndarray, shape (len(ns),)
            The mean accuracies.

        Raises
        ------
        ValueError
            If ``method`` is not one of the three.
        """
        if method not in ("vec", "attention", "oracle"):
            raise ValueError(
                f"method must be one of 'vec', 'attention', 'oracle', got {method!r}"
            )
        acc = getattr(self, f"acc_{method}")
        return np.rint(acc * self.n_test).sum(axis=1) / (
            acc.shape[1] * self.n_test
        )


def _fit_accuracy(F_train, y_train, F_test, y_test, C):
    from sklearn.linear_model import LogisticRegression

    if np.unique(y_train).size < 2:  # one class only: predict it
        return float(np.mean(y_test == y_train[0]))
    clf = LogisticRegression(
        C=C,
        solver="liblinear",
        fit_intercept=False,
        tol=1e-10,
        max_iter=10_000,
        random_state=0,
    )
    clf.fit(F_train, y_train)
    return float(np.mean(clf.predict(F_test) == y_test))


@jax.jit
def _features_x(X, W):
    """:func:`features` of :math:`H = [X; I_D]`, compiled once per shape."""
    return _features(embed(X), W)


def sample_efficiency(
    W: ArrayLike,
    d: int,
    D: int,
    j_star: int,
    ns: Sequence[int] | np.ndarray,
    key: jax.Array,
    *,
    n_seeds: int = 10,
    n_test: int = 2500,
    C: float = 1e4,
    sigma_x: float = 1.0,
) -> SampleEfficiency:
    r"""Downstream sample efficiency of the pre-trained attention against plain logistic regression.

    For each seed: a new :math:`\tilde v^\star` (uniform on the sphere, independent of pre-training;
    the talk's downstream theorem keeps only :math:`j^\star`), one sample of ``max(ns)`` training
    and ``n_test`` test points; for each ``n`` in ``ns`` the first ``n`` training points fit three
    scikit-learn ``LogisticRegression(C=C, solver="liblinear", fit_intercept=False)`` (the task has
    no intercept; liblinear is the fastest solver at these sizes; all three minimise
    :math:`\tfrac12\|w\|^2 + C\sum_k \log(1 + e^{-y_k w^\top F_k})`): on
    :math:`\operatorname{vec}(X)`, on :math:`H S\mathbf 1` with ``W`` frozen (:func:`features`), and
    on :math:`x_{j^\star}` alone.

    Parameters
    ----------
    W : array_like, shape (d + D, d + D)
        The pre-trained attention matrix, frozen.
    d, D, j_star : int
        The task (``j_star`` 0-based).
    ns : sequence of int
        Training-set sizes, positive.
    key : jax.Array
        A JAX random key.
    n_seeds : int
        Repetitions (default 10).
    n_test : int
        Test samples per seed (default 2500).
    C : float
        scikit-learn's inverse L2 penalty, ``> 0`` (default 1e4).
    sigma_x : float
        Standard deviation of the groups (default 1).

    Returns
    -------
    SampleEfficiency
        The accuracies of the three regressions.

    Raises
    ------
    ValueError
        If an argument is out of its range, or ``ns`` is not a non-empty 1-d sequence of positive
        integers.

    Notes
    -----
    The default ``C = 1e4`` is nearly unregularised: the fitted direction is then close to the
    maximum-margin one (on separable training sets), which does not depend on the scale of each
    representation (:math:`H S\mathbf 1` is about :math:`D` times larger than :math:`x_{j^\star}`),
    so the three are compared on an equal footing. The solver runs to ``tol = 1e-10``: nearly
    unregularised problems are flat near their optimum, and a loosely converged fit would depend
    on round-off. The talk fine-tunes by online SGD with a margin condition; this is the batch
    analogue.
    """
    d = check_positive_int(d, "d")
    D = _check_D(D)
    j_star = _check_index(j_star, "j_star", D)
    W = _check_W(W, d + D)
    key = check_key(key)
    n_seeds = check_positive_int(n_seeds, "n_seeds")
    n_test = check_positive_int(n_test, "n_test")
    C = check_real_scalar(C, "C", minimum=0.0, strict=True)
    sigma_x = check_real_scalar(sigma_x, "sigma_x", minimum=0.0, strict=True)
    ns_arr = np.asarray(ns)
    if (
        ns_arr.ndim != 1
        or ns_arr.size == 0
        or not np.issubdtype(ns_arr.dtype, np.integer)
        or np.any(ns_arr < 1)
    ):
        raise ValueError(
            f"ns must be a non-empty 1-d sequence of positive integers, got {ns!r}"
        )
    start = time.perf_counter()
    n_max = int(ns_arr.max())
    acc = np.zeros((3, ns_arr.size, n_seeds))
    for s, k in enumerate(jax.random.split(key, n_seeds)):
        k_star, k_train, k_test = jax.random.split(k, 3)
        v_tilde = random_unit(k_star, d)
        reps = []
        for kk, m in ((k_train, n_max), (k_test, n_test)):
            X, y = _sample(kk, v_tilde, sigma_x, n=m, d=d, D=D, j_star=j_star)
            Xn = np.asarray(X)
            reps.append(
                (
                    [
                        Xn.reshape(m, d * D),
                        np.asarray(_features_x(X, W)),
                        Xn[:, :, j_star],
                    ],
                    np.asarray(y),
                )
            )
        (F, y), (Ft, yt) = reps
        for i, n in enumerate(ns_arr):
            for r in range(3):
                acc[r, i, s] = _fit_accuracy(F[r][:n], y[:n], Ft[r], yt, C)
    return SampleEfficiency(
        ns=ns_arr.astype(int),
        d=d,
        D=D,
        j_star=j_star,
        C=C,
        n_test=n_test,
        acc_vec=acc[0],
        acc_attention=acc[1],
        acc_oracle=acc[2],
        seconds=time.perf_counter() - start,
    )
