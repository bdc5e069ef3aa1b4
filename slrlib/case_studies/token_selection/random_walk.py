r"""Random-walk prediction on a circle with one softmax-attention layer (chapter 13).

The talk of Yuan Cao's group (Shi & Cao, *Towards understanding transformers in learning
random walks*, preprint) studies the following task and model.

**Data.** :math:`K` nodes :math:`0, \dots, K-1` on a circle; :math:`s_1` is uniform and each
step goes clockwise, :math:`s \mapsto s + 1 \bmod K`, with probability :math:`p`, else
counter-clockwise, :math:`s \mapsto s - 1 \bmod K`. The transition matrix is

.. math::

    \Pi^\star[s, s + 1] = p, \qquad \Pi^\star[s, s - 1] = 1 - p \qquad (\text{indices mod } K),

so :math:`\mathbb P(x_i \mid x_1, \dots, x_{i-1}) = \Pi^{\star\top} x_{i-1}` for the one-hot
encodings :math:`x_i = e_{s_i} \in \mathbb R^K`. The task: predict :math:`y = s_N` from
:math:`s_1, \dots, s_{N-1}`.

**Model.** With mutually orthogonal positional encodings :math:`p_i = e_i \in \mathbb R^M`,
:math:`M = N`,

.. math::

    H = \begin{bmatrix} x_1 & \cdots & x_{N-1} & 0 \\ p_1 & \cdots & p_{N-1} & p_N \end{bmatrix}
    \in \mathbb R^{(K+M)\times N}, \qquad X = [x_1, \dots, x_{N-1}, 0] \in \mathbb R^{K\times N},

    f(H, V, W) = V X \operatorname{softmax}(H^\top W h_N) \in \mathbb R^K,

with :math:`V \in \mathbb R^{K\times K}`, :math:`W \in \mathbb R^{(K+M)\times(K+M)}` and
:math:`h_N = (0, p_N)` the last column of :math:`H`. Since :math:`h_N = e_{K+N}`, only the last
column :math:`w = W h_N = (w_x, w_p)` of :math:`W` acts: the score of position :math:`i < N` is
:math:`w_x[s_i] + w_p[i]`, that of the query position :math:`N` is :math:`w_p[N]`. The
prediction is :math:`\operatorname{Pred}(f) = \min\{j : f_j = \max_i f_i\}` (the talk's rule).

**Loss and training.** The talk's population log loss
:math:`L(V, W) = \mathbb E[-\log(e_y^\top f(H, V, W) + \epsilon)]` with :math:`\epsilon = \Theta(1)`
(``loss="log"``; :math:`f` is not normalised, and :math:`\epsilon > 0` keeps the loss defined as
long as :math:`f_y > -\epsilon`; from :math:`V_0 = 0` gradient descent keeps :math:`V \ge 0`
entrywise, hence :math:`f \ge 0`). Also available: the cross-entropy of the softmax read-out,
:math:`-\log \operatorname{softmax}(f)_y` (``"cross_entropy"``), and the square loss
:math:`\tfrac12\|f - e_y\|^2` (``"square"``). Gradient descent from :math:`V_0 = 0`,
:math:`W_0 = 0` (or a small Gaussian initialisation). For :math:`p \in \{0, 1\}` the walk is
deterministic given :math:`s_1`: the population is exactly the :math:`K` sequences, enumerated,
and gradient descent on it is exact. For :math:`0 < p < 1` every step uses a fresh Monte Carlo
batch (stochastic gradient descent on the population loss); by default each sampled walk comes
with its :math:`K` rotations :math:`s_i \mapsto s_i + c \bmod K`, which have the same
probability. The estimate stays unbiased and keeps the rotation symmetry of the population
gradient exactly (a circulant :math:`V`, a constant :math:`w_x`): without it, sampling noise
can break that symmetry and let the attention lock onto one node's content (seen at
:math:`p = 0.8`). Accuracy is measured on a fixed set of fresh test walks.

**Claims of the talk.** (1) For :math:`0 < p < 1`: attention on the direct parent
:math:`[\operatorname{softmax}(H^\top W^{(T)} h_N)]_{N-1} \ge 1 - e^{-\Omega(N)}`;
:math:`V^{(T)}/\|V^{(T)}\|_F \to \Pi^{\star\top}/\|\Pi^{\star\top}\|_F` at rate :math:`O(1/\sqrt T)`;
accuracy :math:`\to \max(p, 1-p)`, the Bayes accuracy. (2) For :math:`p \in \{0, 1\}` and
:math:`N = rK + 1`, from zero initialisation, for any loss, step size and time: accuracy
exactly :math:`1/K`, :math:`V^{(T)} \propto \mathbf 1\mathbf 1^\top` and equal attention on
positions :math:`1, \dots, N-1` (see :func:`train`, whose records check this at every step).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import Iterable, Literal

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from slrlib.extras import require

optax = require(
    "optax", "slrlib.case_studies.token_selection.random_walk"
)  # the "case-studies" extra

from slrlib.validation import (
    as_float_array,
    check_finite,
    check_key,
    check_positive_int,
    check_real_scalar,
    check_shape,
    is_concrete,
)

__all__ = [
    "LOSSES",
    "RandomWalkConfig",
    "RandomWalkResult",
    "attention",
    "attention_from_states",
    "bayes_accuracy",
    "deterministic_walks",
    "embed",
    "empirical_loss",
    "exact_accuracy",
    "init_params",
    "loss_values",
    "model",
    "model_from_states",
    "predict",
    "sample",
    "train",
    "train_many",
    "train_seeds",
    "transition_matrix",
    "value_cosine",
]

#: The losses :func:`loss_values` knows: the talk's log loss with ε, cross-entropy, square loss.
LOSSES = ("log", "cross_entropy", "square")


# ----------------------------------------------------------------------------- validation


def _check_K(K) -> int:
    K = check_positive_int(K, "K")
    if K < 3:
        raise ValueError(
            f"K must be an integer >= 3 (for K <= 2 the two directions coincide), got {K!r}"
        )
    return K


def _check_N(N) -> int:
    N = check_positive_int(N, "N")
    if N < 2:
        raise ValueError(
            f"N must be an integer >= 2 (at least one observed state), got {N!r}"
        )
    return N


def _check_p(p) -> float:
    p = check_real_scalar(p, "p")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be a probability in [0, 1], got {p!r}")
    return p


def _check_states(states, K: int, N: int | None = None):
    """Integer states in [0, K), shape (n, N) with N >= 2."""
    arr = jnp.asarray(states)
    if not jnp.issubdtype(arr.dtype, jnp.integer):
        raise ValueError(
            f"states must be an integer array, got dtype {arr.dtype}"
        )
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise ValueError(
            f"states must have shape (n, N) with N >= 2, got shape {arr.shape}"
        )
    if N is not None and arr.shape[1] != N:
        raise ValueError(
            f"states must have shape (n, {N}), got shape {arr.shape}"
        )
    if (
        is_concrete(arr)
        and arr.size
        and not (np.min(arr) >= 0 and np.max(arr) < K)
    ):
        raise ValueError(
            f"states must lie in [0, K) = [0, {K}), got values in [{int(np.min(arr))}, {int(np.max(arr))}]"
        )
    return arr


# ----------------------------------------------------------------------------- data


def transition_matrix(K: int, p: float) -> jax.Array:
    r"""The transition matrix :math:`\Pi^\star` of the walk (talk, Shi & Cao).

    :math:`\Pi^\star[s, s+1] = p`, :math:`\Pi^\star[s, s-1] = 1 - p` (indices mod :math:`K`).

    Parameters
    ----------
    K : int
        Number of nodes, ``>= 3``.
    p : float
        Probability of a clockwise step, in ``[0, 1]``.

    Returns
    -------
    jax.Array, shape (K, K)
        :math:`\Pi^\star`.

    Raises
    ------
    ValueError
        If ``K`` or ``p`` is out of its range.
    """
    K, p = _check_K(K), _check_p(p)
    return _transition(K, p)


@partial(jax.jit, static_argnames="K")
def _transition(K: int, p):
    eye = jnp.eye(K)
    return p * jnp.roll(eye, 1, axis=1) + (1.0 - p) * jnp.roll(eye, -1, axis=1)


def bayes_accuracy(p: float) -> float:
    r"""The Bayes accuracy :math:`\max(p, 1-p)` of predicting :math:`s_N` from the past.

    By the Markov property :math:`s_N \mid s_{1:N-1}` is :math:`s_{N-1} + 1` with probability
    :math:`p`, else :math:`s_{N-1} - 1`; the best guess is right with probability :math:`\max(p, 1-p)`.

    Parameters
    ----------
    p : float
        Probability of a clockwise step, in ``[0, 1]``.

    Returns
    -------
    float
        :math:`\max(p, 1-p)`.

    Raises
    ------
    ValueError
        If ``p`` is not in ``[0, 1]``.
    """
    p = _check_p(p)
    return max(p, 1.0 - p)


def _walks(s1, steps, K: int):
    """States from the start ``s1`` (n,) and the ±1 steps (n, N-1): cumulative sums mod K."""
    moves = jnp.concatenate([s1[:, None], steps], axis=1)
    return jnp.mod(jnp.cumsum(moves, axis=1), K)


@partial(jax.jit, static_argnames=("n", "K", "N"))
def _sample(key, n: int, K: int, N: int, p):
    k1, k2 = jax.random.split(key)
    s1 = jax.random.randint(k1, (n,), 0, K)
    steps = jnp.where(jax.random.bernoulli(k2, p, (n, N - 1)), 1, -1)
    return _walks(s1, steps, K)


def sample(key: jax.Array, n: int, K: int, N: int, p: float) -> jax.Array:
    r"""``n`` walks of length ``N`` on the circle of ``K`` nodes.

    :math:`s_1` uniform on :math:`\{0, \dots, K-1\}`; :math:`s_{i+1} = s_i + 1 \bmod K` with
    probability ``p``, else :math:`s_i - 1 \bmod K` (talk, Shi & Cao).

    Parameters
    ----------
    key : jax.Array
        A JAX random key.
    n : int
        Number of walks.
    K : int
        Number of nodes, ``>= 3``.
    N : int
        Length of a walk, ``>= 2``.
    p : float
        Probability of a clockwise step, in ``[0, 1]``.

    Returns
    -------
    jax.Array of int, shape (n, N)
        The states; the last column is the label :math:`y = s_N`.

    Raises
    ------
    ValueError
        If ``key`` is not a JAX random key or another argument is out of its range.
    """
    key = check_key(key)
    n = check_positive_int(n, "n")
    K, N, p = _check_K(K), _check_N(N), _check_p(p)
    return _sample(key, n, K, N, p)


def deterministic_walks(K: int, N: int, p: float) -> jax.Array:
    r"""The whole population for :math:`p \in \{0, 1\}`: the ``K`` walks.

    One walk per start :math:`s_1 = 0, \dots, K-1`, each of probability :math:`1/K`.

    Parameters
    ----------
    K : int
        Number of nodes, ``>= 3``.
    N : int
        Length of a walk, ``>= 2``.
    p : {0, 1}
        Probability of a clockwise step.

    Returns
    -------
    jax.Array of int, shape (K, N)
        The states.

    Raises
    ------
    ValueError
        If ``K`` or ``N`` is out of its range, or ``p`` is neither 0 nor 1.
    """
    K, N, p = _check_K(K), _check_N(N), _check_p(p)
    if p not in (0.0, 1.0):
        raise ValueError(
            f"p must be 0 or 1 for a deterministic walk, got {p!r}"
        )
    step = 1 if p == 1.0 else -1
    return jnp.mod(jnp.arange(K)[:, None] + step * jnp.arange(N)[None, :], K)


def embed(states: ArrayLike, K: int) -> tuple[jax.Array, jax.Array, jax.Array]:
    r"""The input matrices :math:`H` and :math:`X`, and the labels.

    :math:`H = [x_1 \cdots x_{N-1}\ 0;\ p_1 \cdots p_N]` with :math:`x_i = e_{s_i} \in \mathbb R^K`
    and :math:`p_i = e_i \in \mathbb R^N` (so :math:`M = N`); :math:`X` is the top block.

    Parameters
    ----------
    states : array_like of int, shape (n, N)
        Walks (:func:`sample`), states in ``[0, K)``, ``N >= 2``.
    K : int
        Number of nodes, ``>= 3``.

    Returns
    -------
    H : jax.Array, shape (n, K + N, N)
        The input matrices.
    X : jax.Array, shape (n, K, N)
        Their top blocks.
    y : jax.Array, shape (n,)
        The labels, ``states[:, -1]``.

    Raises
    ------
    ValueError
        If ``K`` is out of its range or ``states`` is not an integer array of shape (n, N) with
        values in ``[0, K)``.
    """
    K = _check_K(K)
    return _embed(_check_states(states, K), K)


@partial(jax.jit, static_argnames="K")
def _embed(states, K: int):
    n, N = states.shape
    X = jax.nn.one_hot(states[:, :-1], K).transpose(0, 2, 1)  # (n, K, N-1)
    X = jnp.concatenate([X, jnp.zeros((n, K, 1))], axis=2)
    P = jnp.broadcast_to(jnp.eye(N), (n, N, N))
    return jnp.concatenate([X, P], axis=1), X, states[:, -1]


# ----------------------------------------------------------------------------- model


def _check_params(V, W, K: int, N: int):
    V, W = as_float_array(V, "V"), as_float_array(W, "W")
    check_shape(V, "V", (K, K))
    check_shape(W, "W", (K + N, K + N))
    check_finite(V, "V")
    check_finite(W, "W")
    return V, W


def attention(H: ArrayLike, W: ArrayLike) -> jax.Array:
    r"""The attention :math:`\operatorname{softmax}(H^\top W h_N)` over the ``N`` columns.

    A literal transcription, :math:`h_N` the last column of :math:`H`.

    Parameters
    ----------
    H : array_like, shape (n, D, N)
        Input matrices (:func:`embed`).
    W : array_like, shape (D, D)
        The attention matrix.

    Returns
    -------
    jax.Array, shape (n, N)
        The attention weights.

    Raises
    ------
    ValueError
        If ``H`` or ``W`` is not a real array of these shapes.
    """
    H, W = as_float_array(H, "H"), as_float_array(W, "W")
    if H.ndim != 3 or W.shape != (H.shape[1], H.shape[1]):
        raise ValueError(
            f"H must have shape (n, D, N) and W shape (D, D), got {H.shape} and {W.shape}"
        )
    return _attention(H, W)


@jax.jit
def _attention(H, W):
    scores = jnp.einsum("nda,de,ne->na", H, W, H[:, :, -1])
    return jax.nn.softmax(scores, axis=-1)


def model(H: ArrayLike, V: ArrayLike, W: ArrayLike) -> jax.Array:
    r""":math:`f(H, V, W) = V X \operatorname{softmax}(H^\top W h_N)`, from the full input matrices.

    A literal transcription of the talk's model; :math:`X` = first ``K`` rows of ``H``.

    Parameters
    ----------
    H : array_like, shape (n, K + N, N)
        Input matrices (:func:`embed`).
    V : array_like, shape (K, K)
        The value matrix.
    W : array_like, shape (K + N, K + N)
        The attention matrix.

    Returns
    -------
    jax.Array, shape (n, K)
        :math:`f(H, V, W)`.

    Raises
    ------
    ValueError
        If an argument is not a real array of its shape.
    """
    V = as_float_array(V, "V")
    H = as_float_array(H, "H")
    K = V.shape[0]
    check_shape(V, "V", (K, K))
    a = attention(H, W)
    return _read_out(H, V, a)


@jax.jit
def _read_out(H, V, a):
    return jnp.einsum("jk,nka,na->nj", V, H[:, : V.shape[0], :], a)


def _scores(states, W, K: int):
    """Scores of the N positions from the states (n, N) (the label column is not read)."""
    N = states.shape[1]
    w = W[:, K + N - 1]  # W h_N, h_N = e_{K+N}
    wx, wp = w[:K], w[K:]
    body = wx[states[:, :-1]] + wp[: N - 1]
    last = jnp.broadcast_to(wp[N - 1], (states.shape[0], 1))
    return jnp.concatenate([body, last], axis=1)


def _forward(states, V, W, K: int):
    """(f, attention) from the states, without building H: f = V Σ_{i<N} a_i e_{s_i}."""
    a = jax.nn.softmax(_scores(states, W, K), axis=-1)
    n = states.shape[0]
    rows = jnp.broadcast_to(jnp.arange(n)[:, None], (n, states.shape[1] - 1))
    xa = (
        jnp.zeros((n, K), a.dtype).at[rows, states[:, :-1]].add(a[:, :-1])
    )  # X a, by scatter-add
    return xa @ V.T, a


_forward_jit = jax.jit(_forward, static_argnames="K")


def attention_from_states(
    states: ArrayLike, W: ArrayLike, K: int
) -> jax.Array:
    """The attention of :func:`attention` computed from the states.

    Score :math:`w_x[s_i] + w_p[i]` at position :math:`i < N`, :math:`w_p[N]` at :math:`N`.

    Parameters
    ----------
    states : array_like of int, shape (n, N)
        Walks (:func:`sample`).
    W : array_like, shape (K + N, K + N)
        The attention matrix.
    K : int
        Number of nodes, ``>= 3``.

    Returns
    -------
    jax.Array, shape (n, N)
        The attention weights.

    Raises
    ------
    ValueError
        If an argument is out of its range or of the wrong shape.
    """
    K = _check_K(K)
    states = _check_states(states, K)
    N = states.shape[1]
    W = as_float_array(W, "W")
    check_shape(W, "W", (K + N, K + N))
    return _forward_jit(states, jnp.zeros((K, K)), W, K)[1]


def model_from_states(
    states: ArrayLike, V: ArrayLike, W: ArrayLike, K: int
) -> jax.Array:
    """:func:`model` computed from the states (the fast path used in training).

    Parameters
    ----------
    states : array_like of int, shape (n, N)
        Walks (:func:`sample`).
    V : array_like, shape (K, K)
        The value matrix.
    W : array_like, shape (K + N, K + N)
        The attention matrix.
    K : int
        Number of nodes, ``>= 3``.

    Returns
    -------
    jax.Array, shape (n, K)
        :math:`f(H, V, W)`.

    Raises
    ------
    ValueError
        If an argument is out of its range, not finite or of the wrong shape.
    """
    K = _check_K(K)
    states = _check_states(states, K)
    V, W = _check_params(V, W, K, states.shape[1])
    return _forward_jit(states, V, W, K)[0]


def predict(f: ArrayLike, rtol: float = 1e-12) -> jax.Array:
    r"""The talk's prediction :math:`\operatorname{Pred}(f) = \min\{j : f_j = \max_i f_i\}`.

    Entries within ``rtol * max(1, |max f|)`` of the maximum count as maxima: an exact tie in
    exact arithmetic (the zero-initialisation result, where :math:`f \propto \mathbf 1`) may
    come out of float64 with a last-bit difference, which must not decide the prediction.

    Parameters
    ----------
    f : array_like, shape (n, K)
        Model outputs.
    rtol : float
        Relative tolerance, ``>= 0`` (default 1e-12); ``rtol = 0`` is the literal rule.

    Returns
    -------
    jax.Array of int, shape (n,)
        The predicted states.

    Raises
    ------
    ValueError
        If ``f`` is not a real array or ``rtol`` is negative.
    """
    f = as_float_array(f, "f")
    rtol = check_real_scalar(rtol, "rtol", minimum=0.0)
    return _predict(f, rtol)


@jax.jit
def _predict(f, rtol):
    top = jnp.max(f, axis=-1, keepdims=True)
    tol = rtol * jnp.maximum(1.0, jnp.abs(top))
    return jnp.argmax(
        f >= top - tol, axis=-1
    )  # first True = smallest index among the maxima


def loss_values(
    f: ArrayLike,
    y: ArrayLike,
    loss: Literal["log", "cross_entropy", "square"] = "log",
    eps: float = 1.0,
) -> jax.Array:
    r"""Per-sample loss of the output ``f`` against labels ``y``.

    Parameters
    ----------
    f : array_like, shape (n, K)
        Model outputs.
    y : array_like of int, shape (n,)
        Labels.
    loss : {"log", "cross_entropy", "square"}
        ``"log"`` (default): :math:`-\log(f_y + \epsilon)` (the talk's log loss with
        :math:`\epsilon`; NaN if :math:`f_y \le -\epsilon`, which :func:`train` reports as an error);
        ``"cross_entropy"``: :math:`-\log \operatorname{softmax}(f)_y`; ``"square"``:
        :math:`\tfrac12\|f - e_y\|^2`.
    eps : float
        :math:`\epsilon > 0` of the log loss (default 1).

    Returns
    -------
    jax.Array, shape (n,)
        The losses.

    Raises
    ------
    ValueError
        If ``loss`` is not one of :data:`LOSSES` or ``eps`` is not positive.
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    eps = check_real_scalar(eps, "eps", minimum=0.0, strict=True)
    return _loss(jnp.asarray(f), jnp.asarray(y), loss, eps)


def empirical_loss(
    states: ArrayLike,
    V: ArrayLike,
    W: ArrayLike,
    K: int,
    loss: Literal["log", "cross_entropy", "square"] = "log",
    eps: float = 1.0,
) -> jax.Array:
    r"""The mean loss over the walks ``states``: :math:`\frac1n \sum_m \ell(f(H_m, V, W), y_m)`.

    The objective :func:`train` descends (exactly the population loss when ``states`` is
    :func:`deterministic_walks`). Differentiable in ``V`` and ``W``.

    Parameters
    ----------
    states : array_like of int, shape (n, N)
        Walks, labels in the last column.
    V : array_like, shape (K, K)
        The value matrix.
    W : array_like, shape (K + N, K + N)
        The attention matrix.
    K : int
        Number of nodes, ``>= 3``.
    loss : {"log", "cross_entropy", "square"}
        The loss :math:`\ell` (:func:`loss_values`; default ``"log"``).
    eps : float
        :math:`\epsilon > 0` of the log loss (default 1).

    Returns
    -------
    jax.Array
        The mean loss, a scalar.

    Raises
    ------
    ValueError
        If an argument is out of its range, not finite or of the wrong shape.
    """
    K = _check_K(K)
    states = _check_states(states, K)
    V, W = _check_params(V, W, K, states.shape[1])
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    eps = check_real_scalar(eps, "eps", minimum=0.0, strict=True)
    f = _forward_jit(states, V, W, K)[0]
    return jnp.mean(_loss(f, states[:, -1], loss, eps))


def _loss(f, y, loss: str, eps):
    """Per-sample loss (no checks)."""
    fy = jnp.take_along_axis(f, y[:, None], axis=1)[:, 0]
    if loss == "log":
        return -jnp.log(fy + eps)
    if loss == "cross_entropy":
        return jax.nn.logsumexp(f, axis=-1) - fy
    return 0.5 * jnp.sum((f - jax.nn.one_hot(y, f.shape[-1])) ** 2, axis=-1)


def value_cosine(V: ArrayLike, K: int, p: float) -> jax.Array:
    r"""Frobenius cosine :math:`\langle V, \Pi^{\star\top}\rangle_F / (\|V\|_F \|\Pi^{\star\top}\|_F)`.

    Parameters
    ----------
    V : array_like, shape (..., K, K)
        Value matrices (a stack works).
    K : int
        Number of nodes, ``>= 3``.
    p : float
        Probability of a clockwise step, in ``[0, 1]``.

    Returns
    -------
    jax.Array, shape (...)
        The cosines (0 when :math:`V = 0`).

    Raises
    ------
    ValueError
        If ``K`` or ``p`` is out of its range or ``V`` is not a real array of shape (..., K, K).
    """
    K, p = _check_K(K), _check_p(p)
    V = as_float_array(V, "V")
    if V.ndim < 2 or V.shape[-2:] != (K, K):
        raise ValueError(
            f"V must have shape (..., {K}, {K}), got shape {V.shape}"
        )
    return _cosine(V, K, p)


def exact_accuracy(
    V: ArrayLike, W: ArrayLike, K: int, N: int, p: float, rtol: float = 1e-12
) -> Fraction:
    r"""Exact population accuracy for :math:`p \in \{0, 1\}`.

    The fraction of the ``K`` equally likely walks (:func:`deterministic_walks`) whose prediction
    (:func:`predict`) is right.

    Parameters
    ----------
    V : array_like, shape (K, K)
        The value matrix.
    W : array_like, shape (K + N, K + N)
        The attention matrix.
    K, N : int
        Number of nodes and length of a walk.
    p : {0, 1}
        Probability of a clockwise step.
    rtol : float
        Tolerance of :func:`predict` (default 1e-12).

    Returns
    -------
    fractions.Fraction
        The accuracy, exactly.

    Raises
    ------
    ValueError
        If an argument is out of its range, not finite or of the wrong shape, or ``p`` is
        neither 0 nor 1.
    """
    states = deterministic_walks(K, N, p)
    V, W = _check_params(V, W, K, N)
    f = _forward_jit(states, V, W, K)[0]
    hits = int(
        np.sum(np.asarray(predict(f, rtol)) == np.asarray(states[:, -1]))
    )
    return Fraction(hits, K)


# ----------------------------------------------------------------------------- training


@dataclass(frozen=True)
class RandomWalkConfig:
    r"""One training run: the walk (``K``, ``N``, ``p``), the loss, plain gradient descent.

    Parameters
    ----------
    K, N : int
        Number of nodes (``>= 3``; default 20) and length of a walk (``>= 2``; default 101).
    p : float
        Probability of a clockwise step, in ``[0, 1]`` (default 0.5).
    steps : int
        The number :math:`T` of updates (default 100).
    lr : float
        The step size :math:`\eta` (default 1).
    loss : {"log", "cross_entropy", "square"}
        The loss (:func:`loss_values`; default ``"log"``).
    eps : float
        The :math:`\epsilon` of the log loss (default 1).
    batch : int
        The fresh walks per step when :math:`0 < p < 1` (ignored for :math:`p \in \{0, 1\}`, where
        the exact population of ``K`` walks is used); with ``rotations`` they are ``batch / K``
        sampled walks, each with its ``K`` rotations, so ``batch`` must then be a multiple of ``K``
        (default 1000).
    n_test : int
        The fixed test walks on which accuracy and attention are recorded (for
        :math:`p \in \{0, 1\}` the population itself; default 10 000).
    init_scale : float
        The standard deviation of a Gaussian initialisation of every entry of :math:`V` and
        :math:`W` (default 0: the talk's zero initialisation).
    rotations : bool
        Complete each sampled walk with its ``K`` rotations (default True).

    Raises
    ------
    ValueError
        If a field is out of its range, or ``batch`` is not a multiple of ``K`` with
        ``rotations`` and :math:`0 < p < 1`.
    """

    K: int = 20
    N: int = 101
    p: float = 0.5
    steps: int = 100
    lr: float = 1.0
    loss: str = "log"
    eps: float = 1.0
    batch: int = 1000
    n_test: int = 10_000
    init_scale: float = 0.0
    rotations: bool = True

    def __post_init__(self):
        _check_K(self.K)
        _check_N(self.N)
        _check_p(self.p)
        check_positive_int(self.steps, "steps")
        check_real_scalar(self.lr, "lr", minimum=0.0, strict=True)
        if self.loss not in LOSSES:
            raise ValueError(
                f"loss must be one of {LOSSES}, got {self.loss!r}"
            )
        check_real_scalar(self.eps, "eps", minimum=0.0, strict=True)
        check_positive_int(self.batch, "batch")
        if not isinstance(self.rotations, (bool, np.bool_)):
            raise ValueError(
                f"rotations must be True or False, got {self.rotations!r}"
            )
        if self.rotations and not self.exact and self.batch % self.K:
            raise ValueError(
                f"batch must be a multiple of K = {self.K} when rotations=True (each sampled walk "
                f"comes with its K rotations), got {self.batch!r}"
            )
        check_positive_int(self.n_test, "n_test")
        check_real_scalar(self.init_scale, "init_scale", minimum=0.0)

    @property
    def exact(self) -> bool:
        """True when the population is the ``K`` deterministic walks (``p`` in {0, 1})."""
        return self.p in (0.0, 1.0)


@dataclass(frozen=True, eq=False)
class RandomWalkResult:
    r"""A training run, recorded at iterations :math:`t = 0, \dots, T` (index ``t``).

    Parameters
    ----------
    config : RandomWalkConfig
        The configuration.
    V, W : jax.Array
        The final parameters.
    loss : numpy.ndarray
        Training loss (exact population loss for :math:`p \in \{0,1\}`, else the batch's).
    attention : numpy.ndarray, shape (T + 1, N)
        Mean attention over the test walks at each position :math:`1, \dots, N`.
    accuracy : numpy.ndarray
        Accuracy on the test walks (``hits / n_test``).
    hits : numpy.ndarray
        The integer count of right predictions.
    parent : numpy.ndarray
        Mean attention on position :math:`N-1` over the test walks.
    parent_min : numpy.ndarray
        Its minimum.
    query : numpy.ndarray
        Mean attention on the query position :math:`N` (the zero token).
    cosine : numpy.ndarray
        :func:`value_cosine` of :math:`V^{(t)}`.
    v_spread : numpy.ndarray
        :math:`\max_{jk} |V_{jk} - \bar V|`.
    attention_spread : numpy.ndarray
        The largest, over test walks, of :math:`\max_{i<N} a_i - \min_{i<N} a_i`.
    bayes : float
        The Bayes predictor's accuracy on the same test walks.
    """

    config: RandomWalkConfig
    V: jax.Array
    W: jax.Array
    loss: np.ndarray
    attention: np.ndarray
    accuracy: np.ndarray
    hits: np.ndarray
    parent: np.ndarray
    parent_min: np.ndarray
    query: np.ndarray
    cosine: np.ndarray
    v_spread: np.ndarray
    attention_spread: np.ndarray
    bayes: float

    @property
    def steps(self) -> np.ndarray:
        """The recorded iterations 0, ..., T."""
        return np.arange(np.asarray(self.loss).shape[-1])


def _metrics(V, W, test, K: int, p):
    f, a = _forward(test, V, W, K)
    body = a[:, :-1]
    return dict(
        hits=jnp.sum(_predict(f, 1e-12) == test[:, -1]),
        attention=jnp.mean(a, axis=0),
        parent=jnp.mean(a[:, -2]),
        parent_min=jnp.min(a[:, -2]),
        query=jnp.mean(a[:, -1]),
        cosine=_cosine(V, K, p),
        v_spread=jnp.max(jnp.abs(V - jnp.mean(V))),
        attention_spread=jnp.max(
            jnp.max(body, axis=1) - jnp.min(body, axis=1)
        ),
    )


@partial(jax.jit, static_argnames="K")
def _cosine(V, K: int, p):
    target = _transition(K, p).T
    num = jnp.sum(V * target, axis=(-2, -1))
    den = jnp.linalg.norm(V, axis=(-2, -1)) * jnp.linalg.norm(target)
    return jnp.where(den > 0, num / jnp.where(den > 0, den, 1.0), 0.0)


def _init(k_init, init_scale, K: int, N: int):
    kv, kw = jax.random.split(k_init)
    return init_scale * jax.random.normal(
        kv, (K, K)
    ), init_scale * jax.random.normal(kw, (K + N, K + N))


def init_params(
    config: "RandomWalkConfig", key: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """The initial :math:`(V_0, W_0)` that :func:`train` uses for ``config`` and ``key``.

    Parameters
    ----------
    config : RandomWalkConfig
        The run's configuration.
    key : jax.Array
        The run's JAX random key.

    Returns
    -------
    tuple of jax.Array
        :math:`V_0` (K, K) and :math:`W_0` (K + N, K + N): zero, or Gaussian entries of standard
        deviation ``config.init_scale``.

    Raises
    ------
    ValueError
        If ``config`` is not a :class:`RandomWalkConfig` or ``key`` is not a JAX random key.
    """
    config = _check_config(config)
    key = check_key(key)
    return _init(
        jax.random.split(key, 3)[0], config.init_scale, config.K, config.N
    )


_STATIC = ("K", "N", "steps", "batch", "n_test", "exact", "rotations")


def _run_impl(
    key,
    p,
    lr,
    eps,
    init_scale,
    loss_index,
    *,
    K,
    N,
    steps,
    batch,
    n_test,
    exact,
    rotations,
):
    """The training loop. Only the sizes are static: one compilation serves every
    (p, lr, eps, init_scale, loss); for ``exact`` the population is the K walks of p = 1 (or 0)."""
    k_init, k_test, k_train = jax.random.split(key, 3)
    V0, W0 = _init(k_init, init_scale, K, N)
    if exact:
        direction = jnp.where(p == 1.0, 1, -1)
        test = jnp.mod(
            jnp.arange(K)[:, None] + direction * jnp.arange(N)[None, :], K
        )
    else:
        test = _sample(k_test, n_test, K, N, p)

    def draw(k):
        if exact:
            return test
        if not rotations:
            return _sample(k, batch, K, N, p)
        base = _sample(k, batch // K, K, N, p)
        return jnp.mod(base[None] + jnp.arange(K)[:, None, None], K).reshape(
            batch, N
        )

    def objective(params, states):
        f, _ = _forward(states, params[0], params[1], K)
        y = states[:, -1]
        branches = [partial(_loss, loss=name, eps=eps) for name in LOSSES]
        return jnp.mean(jax.lax.switch(loss_index, branches, f, y))

    opt = optax.sgd(lr)

    def step(carry, k):
        params, state = carry
        value, grads = jax.value_and_grad(objective)(params, draw(k))
        rec = _metrics(*params, test, K, p)
        rec["loss"] = value
        updates, state = opt.update(grads, state, params)
        return (optax.apply_updates(params, updates), state), rec

    params = (V0, W0)
    keys = jax.random.split(k_train, steps + 1)
    (params, _), rec = jax.lax.scan(
        step, (params, opt.init(params)), keys[:-1]
    )
    last = _metrics(*params, test, K, p)
    last["loss"] = objective(params, draw(keys[-1]))
    rec = {k: jnp.concatenate([v, last[k][None]]) for k, v in rec.items()}
    # The Bayes predictor on the test walks: the likelier neighbour of s_{N-1}, ties (p = 1/2)
    # broken towards the smallest index, as Pred does.
    up, down = jnp.mod(test[:, -2] + 1, K), jnp.mod(test[:, -2] - 1, K)
    guess = jnp.where(
        p > 0.5, up, jnp.where(p < 0.5, down, jnp.minimum(up, down))
    )
    rec["bayes_hits"] = jnp.sum(guess == test[:, -1])
    return params, rec


_run = jax.jit(_run_impl, static_argnames=_STATIC)


@partial(jax.jit, static_argnames=_STATIC)
def _run_many(keys, p, lr, eps, init_scale, loss_index, **static):
    return jax.vmap(partial(_run_impl, **static))(
        keys, p, lr, eps, init_scale, loss_index
    )


def _static(c: RandomWalkConfig) -> dict:
    """The compile-time arguments of ``c`` (its sizes)."""
    if c.exact:  # the population is the K walks: batch, n_test and rotations play no part
        return dict(
            K=c.K,
            N=c.N,
            steps=c.steps,
            batch=c.K,
            n_test=c.K,
            exact=True,
            rotations=False,
        )
    return dict(
        K=c.K,
        N=c.N,
        steps=c.steps,
        batch=c.batch,
        n_test=c.n_test,
        exact=False,
        rotations=bool(c.rotations),
    )


def _dynamic(c: RandomWalkConfig) -> tuple:
    return (c.p, c.lr, c.eps, c.init_scale, LOSSES.index(c.loss))


def _result(config, params, rec) -> RandomWalkResult:
    n = config.K if config.exact else config.n_test
    rec = {k: np.asarray(v) for k, v in rec.items()}
    loss = rec["loss"]
    if not bool(np.all(np.isfinite(loss))):
        raise ValueError(
            f"training diverged (non-finite loss) with loss={config.loss!r}, lr={config.lr}, eps={config.eps}, "
            f"init_scale={config.init_scale}: for the log loss f_y must stay > -eps; "
            "use a smaller lr or init_scale, or a larger eps"
        )
    return RandomWalkResult(
        config=config,
        V=params[0],
        W=params[1],
        loss=loss,
        attention=rec["attention"],
        accuracy=rec["hits"] / n,
        hits=rec["hits"],
        parent=rec["parent"],
        parent_min=rec["parent_min"],
        query=rec["query"],
        cosine=rec["cosine"],
        v_spread=rec["v_spread"],
        attention_spread=rec["attention_spread"],
        bayes=float(rec["bayes_hits"]) / n,
    )


def _check_config(config) -> RandomWalkConfig:
    if not isinstance(config, RandomWalkConfig):
        raise ValueError(
            f"config must be a RandomWalkConfig, got {type(config).__name__}"
        )
    return config


def train(config: RandomWalkConfig, key: jax.Array) -> RandomWalkResult:
    r"""Gradient descent on the population loss of the random-walk task (talk, Shi & Cao).

    :math:`V^{(t+1)} = V^{(t)} - \eta\nabla_V L`, :math:`W^{(t+1)} = W^{(t)} - \eta\nabla_W L`
    (``optax.sgd``), from :math:`V_0 = 0, W_0 = 0` (or Gaussian entries of standard deviation
    ``config.init_scale``, drawn from ``key``). For :math:`p \in \{0, 1\}` :math:`L` is exact
    (the ``K`` walks); otherwise each step draws ``config.batch`` fresh walks (by default
    ``batch / K`` walks and their rotations). The records (see :class:`RandomWalkResult`) are
    taken before each update and after the last one.

    Parameters
    ----------
    config : RandomWalkConfig
        The run's configuration.
    key : jax.Array
        A JAX random key.

    Returns
    -------
    RandomWalkResult
        The records and the final parameters.

    Raises
    ------
    ValueError
        If ``config`` is not a :class:`RandomWalkConfig`, ``key`` is not a JAX random key, or
        the loss becomes non-finite.
    """
    config = _check_config(config)
    key = check_key(key)
    params, rec = _run(key, *_dynamic(config), **_static(config))
    return _result(config, params, rec)


def train_many(
    configs: Iterable[RandomWalkConfig], seeds: Iterable[int]
) -> list[RandomWalkResult]:
    """:func:`train` for each ``(config, jax.random.key(seed))`` pair, vectorised with ``vmap``.

    The configurations must share their sizes (``K``, ``N``, ``steps``, ``batch``, ``n_test``,
    ``rotations``, and whether ``p`` is in {0, 1}); ``p``, ``lr``, ``eps``, ``init_scale`` and
    ``loss`` may differ. One compilation serves them all.

    Parameters
    ----------
    configs : iterable of RandomWalkConfig
        The configurations.
    seeds : iterable of int
        One seed ``>= 0`` per configuration.

    Returns
    -------
    list of RandomWalkResult
        One result per configuration, in order.

    Raises
    ------
    ValueError
        If ``configs`` and ``seeds`` are empty or of different lengths, a seed is not a
        non-negative integer, the configurations do not share their sizes, or a loss becomes
        non-finite.
    """
    configs = [_check_config(c) for c in configs]
    seeds = list(seeds)
    if not configs or len(seeds) != len(configs):
        raise ValueError(
            f"configs and seeds must be non-empty and of equal length, got {len(configs)} and {len(seeds)}"
        )
    if not all(
        isinstance(s, (int, np.integer))
        and not isinstance(s, (bool, np.bool_))
        and s >= 0
        for s in seeds
    ):
        raise ValueError(f"seeds must be integers >= 0, got {seeds!r}")
    static = _static(configs[0])
    for c in configs[1:]:
        if _static(c) != static:
            raise ValueError(
                f"configs must share their sizes, got {static} and {_static(c)}"
            )
    keys = jax.vmap(jax.random.key)(jnp.asarray(seeds))
    dynamic = [jnp.asarray(col) for col in zip(*map(_dynamic, configs))]
    params, rec = _run_many(keys, *dynamic, **static)
    return [
        _result(
            c,
            jax.tree.map(lambda x: x[i], params),
            {k: v[i] for k, v in rec.items()},
        )
        for i, c in enumerate(configs)
    ]


def train_seeds(
    config: RandomWalkConfig, seeds: Iterable[int]
) -> list[RandomWalkResult]:
    """:func:`train` with ``jax.random.key(seed)`` for each integer ``seed >= 0`` (:func:`train_many`).

    Parameters
    ----------
    config : RandomWalkConfig
        The configuration.
    seeds : iterable of int
        The seeds, ``>= 0``.

    Returns
    -------
    list of RandomWalkResult
        One result per seed, in order.

    Raises
    ------
    ValueError
        As :func:`train_many`.
    """
    seeds = list(seeds)
    return train_many([_check_config(config)] * len(seeds), seeds)
