r"""In-context one-nearest-neighbour prediction by one softmax-attention layer (chapter 13).

The first case study of the talk, after Li, Cao, Gao, He, Liu, Klusowski, Fan and Wang,
*One-layer transformer provably learns one-nearest neighbor in context* (NeurIPS 2024).
A prompt holds :math:`N` labelled points and a query,

.. math::

    x_1, \dots, x_N, x_q \overset{\text{iid}}{\sim} \mathcal U(\mathbb S^{d-1}), \qquad
    y_i \in \{\pm 1\},\ \mathbb E[y_i y_j \mid x] = \delta_{ij},

and the response is the label of the query's nearest neighbour,
:math:`y_{i^\star}` with :math:`i^\star = \arg\min_j \|x_q - x_j\|`. The prompt is embedded as

.. math::

    H = \begin{bmatrix} x_1 & \cdots & x_N & x_q \\ y_1 & \cdots & y_N & 0 \\ 0 & \cdots & 0 & 1
    \end{bmatrix} \in \mathbb R^{(d+2)\times(N+1)},

and one attention layer with the value matrix fixed to the identity predicts the label entry of
its last output column,

.. math::

    f_W(H) = [y_1, \dots, y_N, 0]\, \operatorname{softmax}(H^\top W h_q),

with :math:`h_q` the last column of :math:`H`. Gradient descent on
:math:`L(W) = \tfrac12\,\mathbb E\,(f_W(H) - y_{i^\star})^2` starts from
:math:`W_0 = \operatorname{diag}(0_{d+1}, -\sigma)` (the :math:`-\sigma` keeps the query from
attending to itself). The talk's claims: with :math:`\sigma = \Omega(\mathrm{poly}\,d)` and
:math:`N = \Omega(\sqrt d \log d)` the loss tends to 0 and :math:`W_t = \operatorname{diag}(\xi_1 I_d,
0, -\xi_2)` with :math:`\xi_1, \xi_2 > 0`, so the attention tends to the hardmax of
:math:`-\|x_i - x_q\|^2`.

Here (our choices): :func:`train` runs stochastic gradient descent on the *population* loss,
a fresh batch of prompts at every step (an unbiased estimate of the population gradient; the
talk's gradient descent is on the population loss, which has no closed form here), and scores
the logged iterates on a fixed held-out set. :func:`form_summary` measures how far an iterate
is from the talk's form; :func:`symmetrise` adds to each prompt its orbit under a finite group
of symmetries of the task (the gradient of such a set keeps the talk's form exactly, chapter
13); :func:`sample_margin` draws shifted prompts with a prescribed margin for the talk's
distribution-shift bound and :func:`margin_curve` scores a ``W`` on them.

The step size must stay below about :math:`2 / \mathbb E[(1 - m^2)^2]`, :math:`m` the mean label
(:class:`NN1Config`): beyond it gradient descent is unstable along the entry that lets a token's
score depend on its own label.

Normals are drawn in float32 and the points normalised in float64: sampling dominates the cost
of a step, and float32 normals take a fifth of the time (as in :mod:`slrlib.training.sgd`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Literal, NamedTuple

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
)

__all__ = [
    "LABELS",
    "heldout_set",
    "NN1Data",
    "sample",
    "sample_margin",
    "margins",
    "MAX_ORBIT_PROMPTS",
    "symmetrise",
    "embed",
    "initial_W",
    "attention",
    "predict",
    "loss",
    "gradient",
    "evaluate",
    "mask_query",
    "margin_curve",
    "form_summary",
    "project_form",
    "NN1Config",
    "NN1Result",
    "log_steps",
    "train",
]

#: Label rules of :func:`sample`: i.i.d. Rademacher labels independent of the points (the
#: talk's assumption), or the sign of the first coordinate (a shift: labels then depend on x).
LABELS = ("rademacher", "sign")


class NN1Data(NamedTuple):
    """``n`` prompts of in-context 1-NN, with their responses.

    Parameters
    ----------
    X : jax.Array, shape (n, N, d)
        The labelled points.
    xq : jax.Array, shape (n, d)
        The queries.
    y : jax.Array, shape (n, N)
        The labels.
    target : jax.Array, shape (n,)
        The response ``y[i_star]``.
    i_star : jax.Array, shape (n,)
        The nearest neighbour of the query.
    """

    X: jax.Array
    xq: jax.Array
    y: jax.Array
    target: jax.Array
    i_star: jax.Array


# ------------------------------------------------------------------------------ sampling
def _unit(key, shape):
    """Uniform points on the sphere along the last axis (float32 normals, float64 result)."""
    g = jax.random.normal(key, shape, jnp.float32).astype(
        jnp.result_type(float)
    )
    return g / jnp.linalg.norm(g, axis=-1, keepdims=True)


def _nearest(X, xq):
    """Index of the nearest point, :math:`\\arg\\min_j \\|x_q - x_j\\|^2`, and the squared distances."""
    D = jnp.sum(jnp.square(X - xq[..., None, :]), axis=-1)
    return jnp.argmin(D, axis=-1), D


@partial(jax.jit, static_argnames=("n", "d", "N", "labels"))
def _sample(key, n, d, N, labels="rademacher"):
    kx, ky = jax.random.split(key)
    points = _unit(
        kx, (n, N + 1, d)
    )  # one draw for the points and the query: one sampler to compile
    X, xq = points[:, :N], points[:, N]
    if (
        labels == "rademacher"
    ):  # the lowest bit of uniform random bits: a fair sign
        y = (
            2.0 * (jax.random.bits(ky, (n, N), jnp.uint32) & 1).astype(X.dtype)
            - 1.0
        )
    else:  # "sign"
        y = jnp.where(X[..., 0] >= 0, 1.0, -1.0).astype(X.dtype)
    i_star, _ = _nearest(X, xq)
    target = jnp.take_along_axis(y, i_star[:, None], axis=1)[:, 0]
    return NN1Data(X, xq, y, target, i_star)


def _check_sizes(n, d, N):
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    N = check_positive_int(N, "N")
    if d < 2:
        raise ValueError(
            f"d must be >= 2 (on the sphere S^0 = {{-1, 1}} nearest neighbours tie), got {d}"
        )
    return n, d, N


def sample(
    key: jax.Array,
    n: int,
    d: int,
    N: int,
    labels: Literal["rademacher", "sign"] = "rademacher",
) -> NN1Data:
    r"""``n`` prompts of in-context 1-NN: :math:`x_1..x_N, x_q \sim \mathcal U(\mathbb S^{d-1})` i.i.d.

    The response is :math:`y_{i^\star}`, :math:`i^\star = \arg\min_j \|x_q - x_j\|` (unique with
    probability one).

    Parameters
    ----------
    key : jax.Array
        A JAX random key.
    n, d, N : int
        Prompts, dimension (``d >= 2``: on the sphere :math:`\mathbb S^0 = \{-1, 1\}` nearest
        neighbours tie) and labelled points per prompt.
    labels : {"rademacher", "sign"}
        ``"rademacher"`` (the talk's setting, default): :math:`y_i = \pm1` i.i.d. fair signs
        independent of the points, so :math:`\mathbb E[y_iy_j\mid x] = \delta_{ij}` and the law of
        :math:`y` given :math:`x` is that given :math:`-x`. ``"sign"`` (a shift):
        :math:`y_i = \operatorname{sign}(x_{i1})`, a deterministic function of the point.

    Returns
    -------
    NN1Data
        The prompts and their responses.

    Raises
    ------
    ValueError
        If ``key`` is not a JAX random key, ``n``, ``d`` or ``N`` is not a positive integer,
        ``d < 2``, or ``labels`` is not one of :data:`LABELS`.
    """
    check_key(key)
    n, d, N = _check_sizes(n, d, N)
    if labels not in LABELS:
        raise ValueError(f"labels must be one of {LABELS}, got {labels!r}")
    return _sample(key, n, d, N, labels)


def margins(
    X: ArrayLike, xq: ArrayLike, y: ArrayLike, i_star: ArrayLike
) -> jax.Array:
    r"""The margin of each prompt in the talk's distribution-shift theorem.

    .. math::

        \delta = \min_{j:\ y_j \ne y_{i^\star}} \big(\|x_j - x_q\|^2 - \|x_{i^\star} - x_q\|^2\big)

    Parameters
    ----------
    X, xq, y, i_star : array_like
        The prompts; shapes as in :class:`NN1Data`.

    Returns
    -------
    jax.Array, shape (n,)
        The margins (``inf`` where every label equals :math:`y_{i^\star}`).

    Raises
    ------
    ValueError
        If ``X``, ``xq`` or ``y`` is not a real array.
    """
    X = as_float_array(X, "X")
    xq = as_float_array(xq, "xq")
    y = as_float_array(y, "y")
    i_star = jnp.asarray(i_star)
    D = jnp.sum(jnp.square(X - xq[..., None, :]), axis=-1)
    D_star = jnp.take_along_axis(D, i_star[..., None], axis=-1)
    y_star = jnp.take_along_axis(y, i_star[..., None], axis=-1)
    return jnp.min(jnp.where(y != y_star, D - D_star, jnp.inf), axis=-1)


def sample_margin(
    key: jax.Array, n: int, d: int, N: int, delta: float, R: float = 1.0
) -> NN1Data:
    r"""Shifted prompts with margin ``delta``: points pushed out of a shell, labels uniform on ``[-R, R]``.

    Draw a prompt as in :func:`sample`; keep the query and its nearest neighbour
    :math:`x_{i^\star}`; move every other point :math:`x_j` along the great circle through
    :math:`x_q` and :math:`x_j` so that its squared distance to the query becomes
    :math:`\max(\|x_j - x_q\|^2, \|x_{i^\star} - x_q\|^2 + \delta)` (capped at 4, the antipode).
    The points are then no longer uniform (none lies in the shell), and the labels, i.i.d.
    uniform on :math:`[-R, R]`, are neither signs nor of unit variance: the talk's theorem covers
    any such data, :math:`|y_i| \le R` with margin :math:`\delta` (:func:`margins`). The margin is
    exactly ``delta`` unless the cap binds (:math:`\|x_{i^\star} - x_q\|^2 + \delta > 4`).

    Parameters
    ----------
    key : jax.Array
        A JAX random key.
    n, d, N : int
        As in :func:`sample`.
    delta : float
        The margin, in ``[0, 2]`` (squared distances on the sphere are at most 4).
    R : float
        Label bound, ``> 0`` (default 1).

    Returns
    -------
    NN1Data
        The shifted prompts and their responses.

    Raises
    ------
    ValueError
        If ``key`` is not a JAX random key, the sizes are invalid (as in :func:`sample`), ``delta``
        is not in ``[0, 2]`` or ``R`` is not positive.
    """
    check_key(key)
    n, d, N = _check_sizes(n, d, N)
    delta = check_real_scalar(delta, "delta", minimum=0.0)
    if delta > 2.0:
        raise ValueError(
            f"delta must be <= 2 (squared distances on the sphere are at most 4), got {delta}"
        )
    R = check_real_scalar(R, "R", minimum=0.0, strict=True)
    return _sample_margin(key, n, d, N, delta, R)


@partial(jax.jit, static_argnames=("n", "d", "N"))
def _sample_margin(key, n, d, N, delta, R):
    k1, k2 = jax.random.split(key)
    base = _sample(k1, n, d, N, "rademacher")
    X, xq, i_star = base.X, base.xq, base.i_star
    _, D = _nearest(X, xq)
    D_star = jnp.take_along_axis(D, i_star[:, None], axis=1)
    is_star = jnp.arange(N)[None, :] == i_star[:, None]
    D_new = jnp.where(
        is_star, D, jnp.minimum(jnp.maximum(D, D_star + delta), 4.0)
    )
    c = jnp.einsum("nid,nd->ni", X, xq)
    U = X - c[..., None] * xq[:, None, :]
    u_norm = jnp.linalg.norm(U, axis=-1, keepdims=True)
    U = U / jnp.where(u_norm > 0, u_norm, 1.0)
    c_new = 1.0 - D_new / 2.0
    s_new = jnp.sqrt(jnp.clip(1.0 - c_new**2, 0.0, None))
    X_new = jnp.where(
        is_star[..., None],
        X,
        c_new[..., None] * xq[:, None, :] + s_new[..., None] * U,
    )
    y = jax.random.uniform(k2, (n, N), X.dtype, -R, R)
    target = jnp.take_along_axis(y, i_star[:, None], axis=1)[:, 0]
    return NN1Data(X_new, xq, y, target, i_star)


#: Largest number of prompts :func:`symmetrise` returns.
MAX_ORBIT_PROMPTS = 2_000_000


def symmetrise(data: NN1Data) -> NN1Data:
    r"""Each prompt with its orbit under a finite group :math:`G` of symmetries of the task.

    :math:`G` is generated by the sign flips of single coordinates of :math:`x` (applied to every
    point and to the query), the cyclic shift of the coordinates, and the flip :math:`y \mapsto -y`
    of all labels: :math:`2^{d+1} d` elements. Each maps a prompt of the task to a prompt of the
    same law with the same nearest neighbour, so the returned set is invariant under :math:`G`;
    since the only matrices commuting with :math:`G` are :math:`\operatorname{diag}(a I_d, b, c)`,
    the gradient of its loss at a :math:`W` of that form is of that form too (chapter 13, the
    symmetry proposition).

    Parameters
    ----------
    data : NN1Data
        ``n`` prompts (:func:`sample`).

    Returns
    -------
    NN1Data
        ``n * 2**(d+1) * d`` prompts, orbit by orbit.

    Raises
    ------
    ValueError
        If ``data`` is not an :class:`NN1Data`, or the result would hold more than
        :data:`MAX_ORBIT_PROMPTS` prompts.
    """
    if not isinstance(data, NN1Data):
        raise ValueError(
            f"data must be an NN1Data (from sample), got {type(data).__name__}"
        )
    n, N, d = data.X.shape
    size = n * d * 2 ** (d + 1)
    if size > MAX_ORBIT_PROMPTS:
        raise ValueError(
            f"data is too large to symmetrise: n * d * 2**(d+1) = {size} prompts "
            f"> {MAX_ORBIT_PROMPTS}; pass fewer prompts or a smaller d"
        )
    return _symmetrise(data)


@jax.jit
def _symmetrise(data: NN1Data) -> NN1Data:
    n, N, d = data.X.shape
    signs = jnp.asarray(
        np.array(list(np.ndindex(*(2,) * d))) * -2.0 + 1.0
    )  # (2^d, d)
    perms = np.stack([np.roll(np.arange(d), k) for k in range(d)])  # (d, d)
    Xp = jnp.moveaxis(
        data.X[..., perms], -2, 1
    )  # (n, d, N, d): the d cyclic shifts
    qp = data.xq[..., perms]  # (n, d, d)
    Xs = Xp[:, :, None] * signs[None, None, :, None, :]  # (n, d, 2^d, N, d)
    qs = qp[:, :, None] * signs[None, None, :, :]  # (n, d, 2^d, d)
    flips = jnp.array([1.0, -1.0])
    k = d * 2**d
    X = jnp.broadcast_to(Xs[:, None], (n, 2) + Xs.shape[1:]).reshape(
        n * 2 * k, N, d
    )
    xq = jnp.broadcast_to(qs[:, None], (n, 2) + qs.shape[1:]).reshape(
        n * 2 * k, d
    )
    y = flips[None, :, None] * data.y[:, None, :]  # (n, 2, N)
    y = jnp.broadcast_to(y[:, :, None], (n, 2, k, N)).reshape(n * 2 * k, N)
    i_star = jnp.repeat(data.i_star, 2 * k)
    target = jnp.take_along_axis(y, i_star[:, None], axis=1)[:, 0]
    return NN1Data(X, xq, y, target, i_star)


def embed(X: ArrayLike, xq: ArrayLike, y: ArrayLike) -> jax.Array:
    """The prompt matrices :math:`H`: columns :math:`(x_i, y_i, 0)` then :math:`(x_q, 0, 1)`.

    Parameters
    ----------
    X : array_like, shape (n, N, d)
        The labelled points.
    xq : array_like, shape (n, d)
        The queries.
    y : array_like, shape (n, N)
        The labels.

    Returns
    -------
    jax.Array, shape (n, d+2, N+1)
        The prompt matrices.

    Raises
    ------
    ValueError
        If the arrays are not finite real arrays of these shapes.
    """
    X = as_float_array(X, "X")
    xq = as_float_array(xq, "xq")
    y = as_float_array(y, "y")
    if jnp.ndim(X) != 3:
        raise ValueError(
            f"X must have shape (n, N, d), got shape {jnp.shape(X)}"
        )
    n, N, d = X.shape
    if jnp.shape(xq) != (n, d):
        raise ValueError(
            f"xq must have shape (n, d) = ({n}, {d}), got shape {jnp.shape(xq)}"
        )
    if jnp.shape(y) != (n, N):
        raise ValueError(
            f"y must have shape (n, N) = ({n}, {N}), got shape {jnp.shape(y)}"
        )
    for a, name in ((X, "X"), (xq, "xq"), (y, "y")):
        check_finite(a, name)
    return _embed(X, xq, y)


@jax.jit
def _embed(X, xq, y):
    n, N, _ = X.shape
    ctx = jnp.concatenate(
        [X, y[..., None], jnp.zeros((n, N, 1), X.dtype)], axis=-1
    )
    q = jnp.concatenate(
        [xq, jnp.zeros((n, 1), X.dtype), jnp.ones((n, 1), X.dtype)], axis=-1
    )
    return jnp.swapaxes(jnp.concatenate([ctx, q[:, None, :]], axis=1), 1, 2)


def initial_W(d: int, sigma: float) -> jax.Array:
    r"""The talk's initialisation :math:`W_0 = \operatorname{diag}(0_{d+1}, -\sigma)`.

    Parameters
    ----------
    d : int
        Dimension of the points.
    sigma : float
        The mask :math:`\sigma \ge 0` (keeps the query from attending to itself).

    Returns
    -------
    jax.Array, shape (d+2, d+2)
        :math:`W_0`.

    Raises
    ------
    ValueError
        If ``d`` is not a positive integer or ``sigma`` is negative.
    """
    d = check_positive_int(d, "d")
    sigma = check_real_scalar(sigma, "sigma", minimum=0.0)
    return jnp.zeros((d + 2, d + 2)).at[d + 1, d + 1].set(-sigma)


# --------------------------------------------------------------------------------- model
def _attention(W, H):
    hq = H[..., :, -1]
    return jax.nn.softmax(jnp.einsum("...ki,...k->...i", H, hq @ W.T), axis=-1)


def _predict(W, H):
    d = H.shape[-2] - 2
    return jnp.sum(_attention(W, H) * H[..., d, :], axis=-1)


def _loss(W, H, target):
    return 0.5 * jnp.mean(jnp.square(_predict(W, H) - target))


_jit_attention = jax.jit(_attention)
_jit_predict = jax.jit(_predict)
_jit_loss = jax.jit(_loss)


def _check_model(W, H):
    H = as_float_array(H, "H")
    if jnp.ndim(H) < 2:
        raise ValueError(
            f"H must have shape (..., d+2, N+1), got shape {jnp.shape(H)}"
        )
    k = H.shape[-2]
    if k < 3:
        raise ValueError(
            f"H must have at least 3 rows (d + 2 with d >= 1), got shape {jnp.shape(H)}"
        )
    W = as_float_array(W, "W")
    if jnp.shape(W) != (k, k):
        raise ValueError(
            f"W must have shape (d+2, d+2) = ({k}, {k}) to match H, got shape {jnp.shape(W)}"
        )
    check_finite(W, "W")
    check_finite(H, "H")
    return W, H


def attention(W: ArrayLike, H: ArrayLike) -> jax.Array:
    r"""The query's attention :math:`\operatorname{softmax}(H^\top W h_q)` over the N+1 columns.

    Parameters
    ----------
    W : array_like, shape (d+2, d+2)
        The attention matrix.
    H : array_like, shape (..., d+2, N+1)
        Prompt matrices (:func:`embed`).

    Returns
    -------
    jax.Array, shape (..., N+1)
        The attention weights.

    Raises
    ------
    ValueError
        If ``W`` or ``H`` is not finite or their shapes do not match.
    """
    W, H = _check_model(W, H)
    return _jit_attention(W, H)


def predict(W: ArrayLike, H: ArrayLike) -> jax.Array:
    r"""The prediction :math:`f_W(H)`: the label entry of the last output column.

    .. math::

        f_W(H) = [\text{self-attention}(H)]_{d+1, N+1} = [y_1..y_N, 0]\,\operatorname{softmax}(H^\top W h_q)

    Parameters
    ----------
    W : array_like, shape (d+2, d+2)
        The attention matrix.
    H : array_like, shape (..., d+2, N+1)
        Prompt matrices (:func:`embed`).

    Returns
    -------
    jax.Array, shape (...)
        One prediction per prompt.

    Raises
    ------
    ValueError
        If ``W`` or ``H`` is not finite or their shapes do not match.
    """
    W, H = _check_model(W, H)
    return _jit_predict(W, H)


def loss(W: ArrayLike, H: ArrayLike, target: ArrayLike) -> jax.Array:
    r"""The sample loss :math:`\frac1{2n}\sum_b (f_W(H_b) - y_{b,i^\star})^2`.

    Parameters
    ----------
    W : array_like, shape (d+2, d+2)
        The attention matrix.
    H : array_like, shape (..., d+2, N+1)
        Prompt matrices (:func:`embed`).
    target : array_like, shape (...)
        The responses :math:`y_{b,i^\star}`, one per prompt.

    Returns
    -------
    jax.Array
        The loss, a scalar.

    Raises
    ------
    ValueError
        If an argument is not finite or the shapes do not match.
    """
    W, H = _check_model(W, H)
    target = as_float_array(target, "target")
    if jnp.shape(target) != H.shape[:-2]:
        raise ValueError(
            f"target must have shape {H.shape[:-2]} (one per prompt), got shape {jnp.shape(target)}"
        )
    check_finite(target, "target")
    return _jit_loss(W, H, target)


@jax.jit
def _data_gradient(W, data: NN1Data):
    return jax.grad(_loss)(W, _embed(data.X, data.xq, data.y), data.target)


def gradient(W: ArrayLike, data: NN1Data) -> jax.Array:
    r"""The gradient in :math:`W` of the sample loss :math:`\frac1{2n}\sum_b (f_W(H_b) - y_{b,i^\star})^2`.

    Computed by ``jax.grad`` on the prompts ``data``.

    Parameters
    ----------
    W : array_like, shape (d+2, d+2)
        The attention matrix.
    data : NN1Data
        The prompts (:func:`sample` or :func:`sample_margin`).

    Returns
    -------
    jax.Array, shape (d+2, d+2)
        The gradient.

    Raises
    ------
    ValueError
        If ``data`` is not an :class:`NN1Data`, or ``W`` is not finite or of the wrong shape.
    """
    if not isinstance(data, NN1Data):
        raise ValueError(
            f"data must be an NN1Data (from sample or sample_margin), got {type(data).__name__}"
        )
    H = embed(data.X, data.xq, data.y)
    W, _ = _check_model(W, H)
    return _data_gradient(W, data)


def _evaluate(W, data: NN1Data):
    H = _embed(data.X, data.xq, data.y)
    a = _attention(W, H)
    f = jnp.sum(a * H[..., -2, :], axis=-1)
    a_star = jnp.take_along_axis(a, data.i_star[:, None], axis=1)[:, 0]
    return {
        "loss": 0.5 * jnp.mean(jnp.square(f - data.target)),
        "attn_mass": jnp.mean(a_star),
        "argmax_frac": jnp.mean(jnp.argmax(a, axis=-1) == data.i_star),
        "sign_acc": jnp.mean(jnp.sign(f) == jnp.sign(data.target)),
        "query_mass": jnp.mean(a[:, -1]),
    }


def evaluate(W: ArrayLike, data: NN1Data) -> dict[str, float]:
    r"""Scores of ``W`` on a set of prompts.

    Parameters
    ----------
    W : array_like, shape (d+2, d+2)
        The attention matrix.
    data : NN1Data
        The prompts (:func:`sample` or :func:`sample_margin`).

    Returns
    -------
    dict of str to float
        ``loss``: :math:`\frac12` mean squared error against :math:`y_{i^\star}`; ``attn_mass``:
        mean attention on the nearest neighbour :math:`i^\star`; ``argmax_frac``: fraction of
        prompts whose largest attention weight is on :math:`i^\star`; ``sign_acc``: fraction with
        :math:`\operatorname{sign} f_W(H) = \operatorname{sign} y_{i^\star}`; ``query_mass``: mean
        attention of the query on itself.

    Raises
    ------
    ValueError
        If ``data`` is not an :class:`NN1Data`, or ``W`` is not finite or of the wrong shape.
    """
    if not isinstance(data, NN1Data):
        raise ValueError(
            f"data must be an NN1Data (from sample or sample_margin), got {type(data).__name__}"
        )
    H = embed(data.X, data.xq, data.y)
    W, _ = _check_model(W, H)
    return {k: float(v) for k, v in _evaluate_jit(W, data).items()}


_evaluate_jit = jax.jit(_evaluate)


def mask_query(W: ArrayLike) -> jax.Array:
    r"""``W`` with :math:`W_{d+2,d+2} = -\infty` (a large negative number).

    The query's score :math:`h_q^\top W h_q` is the only one that entry enters, so the query no
    longer attends to itself and every other score is unchanged (the limit
    :math:`\xi_2 \to \infty`).

    Parameters
    ----------
    W : array_like, shape (..., d+2, d+2)
        Attention matrices.

    Returns
    -------
    jax.Array
        A copy of ``W`` with its last diagonal entry set to -1e4.

    Raises
    ------
    ValueError
        If ``W`` is not a real array.
    """
    W = as_float_array(W, "W")
    return W.at[..., -1, -1].set(-1e4)


@jax.jit
def _margin_scores(W, data: NN1Data):
    out = _evaluate(W, data)
    masked = _evaluate(W.at[-1, -1].set(-1e4), data)
    D = jnp.sum(jnp.square(data.X - data.xq[:, None, :]), axis=-1)
    D_star = jnp.take_along_axis(D, data.i_star[:, None], axis=1)
    gap = jnp.min(
        jnp.where(data.y != data.target[:, None], D - D_star, jnp.inf), axis=-1
    )
    return {
        "min_margin": jnp.min(gap),
        "loss": out["loss"],
        "loss_query_masked": masked["loss"],
        "attn_mass": out["attn_mass"],
        "query_mass": out["query_mass"],
    }


def margin_curve(
    W: ArrayLike,
    key: jax.Array,
    deltas: ArrayLike,
    *,
    n: int,
    N: int,
    R: float = 1.0,
) -> dict[str, np.ndarray]:
    r"""Scores of ``W`` on shifted prompts (:func:`sample_margin`) against the margin :math:`\delta`.

    The same base prompts (one ``key``) are pushed to every margin in ``deltas``, so the curves
    are smooth in :math:`\delta`.

    Parameters
    ----------
    W : array_like, shape (d+2, d+2)
        The attention matrix, ``d >= 2``.
    key : jax.Array
        A JAX random key.
    deltas : array_like, shape (m,)
        Margins in ``[0, 2]``, at least one.
    n, N : int
        Prompts per margin, and labelled points per prompt.
    R : float
        Label bound of the shifted prompts, ``> 0`` (default 1).

    Returns
    -------
    dict of str to numpy.ndarray
        Columns ``delta``; ``min_margin`` (the smallest margin of the set, :func:`margins`: equal
        to ``delta`` unless the cap at the antipode binds); ``loss``, ``attn_mass``,
        ``query_mass`` (:func:`evaluate`); ``loss_query_masked``, the loss of :func:`mask_query`
        of ``W`` (the query's self-attention removed).

    Raises
    ------
    ValueError
        If ``key`` is not a JAX random key, ``W`` not finite or of the wrong shape, ``n`` or
        ``N`` not a positive integer, ``R`` not positive, or ``deltas`` not a non-empty 1-d array
        in ``[0, 2]``.
    """
    check_key(key)
    W = as_float_array(W, "W")
    if jnp.ndim(W) != 2 or W.shape[0] != W.shape[1] or W.shape[0] < 4:
        raise ValueError(
            f"W must have shape (d+2, d+2) with d >= 2, got shape {jnp.shape(W)}"
        )
    check_finite(W, "W")
    n, d, N = _check_sizes(n, W.shape[0] - 2, N)
    R = check_real_scalar(R, "R", minimum=0.0, strict=True)
    deltas = np.asarray(deltas, dtype=float)
    if deltas.ndim != 1 or deltas.size == 0:
        raise ValueError(
            f"deltas must be a non-empty 1-d array, got shape {deltas.shape}"
        )
    if not np.all(np.isfinite(deltas)) or deltas.min() < 0 or deltas.max() > 2:
        raise ValueError(f"deltas must lie in [0, 2], got {deltas}")
    rows = [
        _margin_scores(W, _sample_margin(key, n, d, N, float(delta), R))
        for delta in deltas
    ]
    return {
        "delta": deltas,
        **{k: np.array([float(r[k]) for r in rows]) for k in rows[0]},
    }


# ------------------------------------------------------------------------- the ξ form
def form_summary(W: ArrayLike) -> dict[str, np.ndarray]:
    r"""How close ``W`` is to the talk's form :math:`\operatorname{diag}(\xi_1 I_d, 0, -\xi_2)`.

    Parameters
    ----------
    W : array_like, shape (..., d+2, d+2)
        Attention matrices, ``d >= 1``.

    Returns
    -------
    dict of str to numpy.ndarray
        ``xi1``: mean of the diagonal of the :math:`x` block; ``xi1_range``: max − min of that
        diagonal; ``xi2``: :math:`-W_{d+2,d+2}`; ``off_form``: :math:`\|W - P(W)\|_F / \|W\|_F`
        with :math:`P` = :func:`project_form`; ``offdiag_x``: Frobenius norm of the off-diagonal
        part of the :math:`x` block; ``label_norm``: norm of the label row and column (row and
        column :math:`d+1`); ``c``: :math:`W_{d+1, d+2}`, the entry that makes a token's score
        depend on its own label (:math:`s_i \mathrel{+}= c\,y_i`).

    Raises
    ------
    ValueError
        If ``W`` does not have shape (..., d+2, d+2) with ``d >= 1``.
    """
    W = np.asarray(W, dtype=float)
    if W.ndim < 2 or W.shape[-1] != W.shape[-2] or W.shape[-1] < 3:
        raise ValueError(
            f"W must have shape (..., d+2, d+2) with d >= 1, got shape {W.shape}"
        )
    d = W.shape[-1] - 2
    A = W[..., :d, :d]
    diag = np.diagonal(A, axis1=-2, axis2=-1)
    P = np.asarray(project_form(W))
    w_norm = np.linalg.norm(W, axis=(-2, -1))
    label = np.concatenate(
        [W[..., d, :], np.delete(W[..., :, d], d, axis=-1)], axis=-1
    )
    return {
        "xi1": diag.mean(axis=-1),
        "xi1_range": diag.max(axis=-1) - diag.min(axis=-1),
        "xi2": -W[..., d + 1, d + 1],
        "off_form": np.linalg.norm(W - P, axis=(-2, -1))
        / np.where(w_norm > 0, w_norm, 1.0),
        "offdiag_x": np.linalg.norm(
            A - diag[..., None] * np.eye(d), axis=(-2, -1)
        ),
        "label_norm": np.linalg.norm(label, axis=-1),
        "c": W[..., d, d + 1],
    }


def project_form(W: ArrayLike) -> jax.Array:
    r"""The talk's form nearest to ``W`` in Frobenius norm.

    That is :math:`\operatorname{diag}(\hat\xi_1 I_d, 0, W_{d+2,d+2})`, with
    :math:`\hat\xi_1 = \operatorname{tr}(W_{xx})/d`.

    Parameters
    ----------
    W : array_like, shape (..., d+2, d+2)
        Attention matrices, ``d >= 1``.

    Returns
    -------
    jax.Array, shape (..., d+2, d+2)
        The projections.

    Raises
    ------
    ValueError
        If ``W`` does not have shape (..., d+2, d+2) with ``d >= 1``.
    """
    W = jnp.asarray(W, dtype=float)
    if W.ndim < 2 or W.shape[-1] != W.shape[-2] or W.shape[-1] < 3:
        raise ValueError(
            f"W must have shape (..., d+2, d+2) with d >= 1, got shape {W.shape}"
        )
    d = W.shape[-1] - 2
    xi1 = jnp.trace(W[..., :d, :d], axis1=-2, axis2=-1) / d
    diag = jnp.concatenate(
        [
            jnp.repeat(xi1[..., None], d, axis=-1),
            jnp.zeros(xi1.shape + (1,)),
            W[..., d + 1, d + 1][..., None],
        ],
        axis=-1,
    )
    return diag[..., None, :] * jnp.eye(d + 2)


# ------------------------------------------------------------------------------ training
@dataclass(frozen=True)
class NN1Config:
    r"""One training run of :func:`train`.

    The step size must stay below about :math:`2/\mathbb E[(1 - m^2)^2] \approx 2`
    (:math:`m = \frac1N\sum_i y_i`): that is the curvature of the loss at :math:`W_0` along
    :math:`c = W_{d+1,d+2}`, the entry that lets a token's score depend on its own label; beyond
    it gradient descent is unstable in that direction from the first steps.

    Parameters
    ----------
    d : int
        Dimension, ``>= 2`` (default 4).
    N : int
        Context length (default 16).
    sigma : float
        Mask :math:`\sigma \ge 0` of :math:`W_0` (default 4).
    lr : float
        Step size, ``> 0`` (default 1.5).
    steps : int
        SGD steps (default 20 000).
    batch_size : int
        Fresh prompts per step (default 128).
    n_logs : int
        Log-spaced logged steps, 0 and ``steps`` included, ``>= 2`` (default 60).
    n_test : int
        Held-out prompts (default 10 000).

    Raises
    ------
    ValueError
        If a field is out of its range.
    """

    d: int = 4
    N: int = 16
    sigma: float = 4.0
    lr: float = 1.5
    steps: int = 20_000
    batch_size: int = 128
    n_logs: int = 60
    n_test: int = 10_000

    def __post_init__(self):
        _check_sizes(1, self.d, self.N)
        check_real_scalar(self.sigma, "sigma", minimum=0.0)
        check_real_scalar(self.lr, "lr", minimum=0.0, strict=True)
        check_positive_int(self.steps, "steps")
        check_positive_int(self.batch_size, "batch_size")
        if check_positive_int(self.n_logs, "n_logs") < 2:
            raise ValueError(
                f"n_logs must be >= 2 (step 0 and the last step), got {self.n_logs}"
            )
        check_positive_int(self.n_test, "n_test")


@dataclass(frozen=True, eq=False)
class NN1Result:
    """A training run, at the logged ``steps``.

    Parameters
    ----------
    config : NN1Config
        The configuration.
    steps : numpy.ndarray, shape (n_logs,)
        The logged steps.
    W : numpy.ndarray, shape (n_logs, d+2, d+2)
        The iterates.
    train_loss : numpy.ndarray
        Mean batch loss over the steps since the previous log (at step 0, the first batch's).
    test_loss, attn_mass, argmax_frac, sign_acc, query_mass : numpy.ndarray
        Held-out scores (see :func:`evaluate`; ``test_loss`` is its ``loss``).
    form : dict
        :func:`form_summary` of each ``W``.
    """

    config: NN1Config
    steps: np.ndarray
    W: np.ndarray
    train_loss: np.ndarray
    test_loss: np.ndarray
    attn_mass: np.ndarray
    argmax_frac: np.ndarray
    sign_acc: np.ndarray
    query_mass: np.ndarray
    form: dict


def log_steps(steps: int, n_logs: int) -> np.ndarray:
    """Log-spaced integer steps from 0 to ``steps`` (both included), at most ``n_logs``, distinct.

    Parameters
    ----------
    steps : int
        The last step.
    n_logs : int
        The largest number of steps returned.

    Returns
    -------
    numpy.ndarray of int
        The steps, increasing.

    Raises
    ------
    ValueError
        If ``steps`` or ``n_logs`` is not a positive integer.
    """
    steps = check_positive_int(steps, "steps")
    n_logs = check_positive_int(n_logs, "n_logs")
    grid = np.unique(
        np.round(np.geomspace(1, steps, max(n_logs - 1, 1))).astype(int)
    )
    return np.concatenate([[0], grid])


@partial(jax.jit, static_argnames=("d", "N", "batch_size", "steps"))
def _sgd(W0, key, lr, *, d, N, batch_size, steps):
    """``steps`` SGD steps on fresh batches; returns every iterate W_0..W_T and every batch loss."""

    def step(W, k):
        data = _sample(k, batch_size, d, N, "rademacher")
        value, grad = jax.value_and_grad(_loss)(
            W, _embed(data.X, data.xq, data.y), data.target
        )
        return W - lr * grad, (W, value)

    W_T, (Ws, losses) = jax.lax.scan(step, W0, jax.random.split(key, steps))
    return jnp.concatenate([Ws, W_T[None]], axis=0), losses


def heldout_set(config: NN1Config, key: jax.Array) -> NN1Data:
    """The held-out prompts on which :func:`train` with the same ``key`` scores its iterates.

    ``key`` is split in two: the first half draws the training batches, the second these
    ``config.n_test`` prompts (Rademacher labels, :func:`sample`).

    Parameters
    ----------
    config : NN1Config
        The run's configuration.
    key : jax.Array
        The run's JAX random key.

    Returns
    -------
    NN1Data
        ``config.n_test`` prompts.

    Raises
    ------
    ValueError
        If ``config`` is not an :class:`NN1Config` or ``key`` is not a JAX random key.
    """
    if not isinstance(config, NN1Config):
        raise ValueError(
            f"config must be an NN1Config, got {type(config).__name__}"
        )
    check_key(key)
    return _sample(
        jax.random.split(key)[1],
        config.n_test,
        config.d,
        config.N,
        "rademacher",
    )


def train(config: NN1Config, key: jax.Array) -> NN1Result:
    r"""Stochastic gradient descent on the population loss from :math:`W_0 = \operatorname{diag}(0_{d+1}, -\sigma)`.

    Step :math:`t` draws ``batch_size`` fresh prompts (:func:`sample`) and sets
    :math:`W_{t+1} = W_t - \eta \nabla_W \hat L_t(W_t)`, :math:`\hat L_t` the batch loss; the
    held-out set (``n_test`` prompts from an independent key, :func:`heldout_set`) scores the
    logged iterates.

    Parameters
    ----------
    config : NN1Config
        The run's configuration.
    key : jax.Array
        A JAX random key.

    Returns
    -------
    NN1Result
        The logged iterates and their scores.

    Raises
    ------
    ValueError
        If ``config`` is not an :class:`NN1Config` or ``key`` is not a JAX random key.
    FloatingPointError
        If training diverges (non-finite W): lower ``lr``.
    """
    if not isinstance(config, NN1Config):
        raise ValueError(
            f"config must be an NN1Config, got {type(config).__name__}"
        )
    check_key(key)
    c = config
    k_train = jax.random.split(key)[0]
    W_all, batch_losses = _sgd(
        initial_W(c.d, c.sigma),
        k_train,
        c.lr,
        d=c.d,
        N=c.N,
        batch_size=c.batch_size,
        steps=c.steps,
    )
    steps = log_steps(c.steps, c.n_logs)
    W = W_all[steps]
    if not bool(jnp.all(jnp.isfinite(W))):
        raise FloatingPointError(
            f"training diverged (non-finite W) with lr = {c.lr}; lower lr"
        )
    test = heldout_set(c, key)
    scores = jax.jit(jax.vmap(_evaluate, in_axes=(0, None)))(W, test)
    bl = np.asarray(batch_losses)
    train_loss = np.array(
        [bl[0]] + [bl[a:b].mean() for a, b in zip(steps[:-1], steps[1:])]
    )
    W = np.asarray(W)
    return NN1Result(
        config=c,
        steps=steps,
        W=W,
        train_loss=train_loss,
        test_loss=np.asarray(scores["loss"]),
        attn_mass=np.asarray(scores["attn_mass"]),
        argmax_frac=np.asarray(scores["argmax_frac"]),
        sign_acc=np.asarray(scores["sign_acc"]),
        query_mass=np.asarray(scores["query_mass"]),
        form=form_summary(W),
    )
