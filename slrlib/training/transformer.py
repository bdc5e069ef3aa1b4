r"""A full Transformer layer trained on (multiple-)location regression (Appendix E.3, Figures 8 and 10).

Tokens are rows. A fixed register ([CLS]) token :math:`x_{\rm reg} \sim \mathcal N(0, I_d/d)`,
drawn once per run and never trained, is prepended to the sequence
:math:`\mathbb X \in \mathbb R^{L\times d}`, giving :math:`\widetilde{\mathbb X} \in \mathbb R^{(L+1)\times d}`.
With :math:`\operatorname{LN}(x) = (x - \bar x\,\mathbf 1)/(\operatorname{std}(x) + 10^{-5})` (layer
normalisation of each token, no learned affine map), :math:`H` heads of width :math:`r`, the layer
(29) of the paper is

.. math::

    A_h &= \operatorname{softmax}_{\rm rows}\Big(\operatorname{LN}(\widetilde{\mathbb X})\, W_{Q,h}^\top W_{K,h}\,
          \operatorname{LN}(\widetilde{\mathbb X})^\top / \sqrt r\Big), \qquad
    O_h = A_h \operatorname{LN}(\widetilde{\mathbb X})\, W_{V,h}, \\
    Z &= \widetilde{\mathbb X} + [O_1 \cdots O_H]\, W_O, \qquad
    T(\mathbb X) = Z + \operatorname{relu}(Z W_1^\top + \mathbf 1 b_1^\top)\, W_2^\top + \mathbf 1 b_2^\top,

with :math:`W_{Q,h}, W_{K,h} \in \mathbb R^{r\times d}`, :math:`W_{V,h} \in \mathbb R^{d\times r}`,
:math:`W_O \in \mathbb R^{Hr\times d}` (:math:`= I_d`, fixed, for a single head with :math:`r = d`),
:math:`W_1 \in \mathbb R^{m\times d}`, :math:`W_2 \in \mathbb R^{d\times m}`. The prediction reads the
register's row: :math:`f(\mathbb X) = \theta^\top T(\mathbb X)_0`.

Two implementations:

* :func:`transformer_layer` computes every row (all queries, the MLP on every token); it is
  the definition, used by the tests;
* :func:`register_output` / :func:`predict` compute row 0 only. Row 0 of :math:`T` depends on
  row 0 of :math:`Z`, which depends on the attention weights of the register's query only,
  :math:`\operatorname{softmax}_\ell\big(\operatorname{LN}(\widetilde X_\ell)^\top u_h/\sqrt r\big)` with the
  **effective key direction** :math:`u_h = W_{K,h}^\top W_{Q,h} \operatorname{LN}(x_{\rm reg})`. Training uses
  this path: its cost is :math:`O(L d H + H d r + m d)` per sequence instead of
  :math:`O(L^2 H r + L d r H + L m d)`.

Training is single-pass SGD (a fresh batch every step) on the squared loss with
``optax.sgd``, vmapped over independent runs (each with its own oracle directions,
initialisation, held-out batch and batches), in one compiled loop, in **float32**: about
half the cost of a step is drawing the :math:`B L d` Gaussian coordinates of the batch
(:math:`128 \times 10 \times 80` for Figure 8), and float32 needs half the random bits of
float64; the quantities logged (excess risks around :math:`10^{-2}`, alignments) need no more
precision. :func:`replay_run` replays one run step by step, in float32 or float64.

Reading the weights (:func:`alignments`): :math:`\hat k_h`, the top right singular vector of
:math:`P_h = W_{Q,h}^\top W_{K,h}`; the effective key direction :math:`u_h`; the ratio
:math:`s_1/s_2` of :math:`P_h`; the linearised value direction
:math:`\hat v_h = W_{V,h} W_{O,h} (I + W_2 W_1)^\top\theta` and its gated version. Because only the
register's query reaches the output, SGD from :math:`W_K = 0` (or :math:`W_Q = 0`) keeps
:math:`P_h` exactly rank one (chapter 10): the logged :math:`s_1/s_2` measures round-off.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from dataclasses import replace as _dc_replace
from functools import partial
from typing import Any, Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike, DTypeLike

from slrlib.validation import (
    as_float_array,
    check_finite,
    check_key,
    check_positive_int,
    check_real_scalar,
)
from slrlib.core.task import MultiLocationTask, SLRTask
from slrlib.extras import require

__all__ = [
    "LN_EPS",
    "PARAM_NAMES",
    "ZERO_INITS",
    "TransformerConfig",
    "TransformerResult",
    "layer_norm",
    "init_params",
    "trainable_names",
    "transformer_layer",
    "attention_weights",
    "register_output",
    "predict",
    "batch_loss",
    "sample_batch",
    "train_transformer",
    "replay_run",
    "top_singular",
    "key_directions",
    "value_directions",
    "mlp_gates",
    "alignments",
]

#: The constant added to the standard deviation in the layer normalisation.
LN_EPS = 1e-5
#: Parameters of the layer, in a fixed order. ``x_reg`` is never trained; ``W_O`` is the fixed
#: identity for a single head.
PARAM_NAMES = (
    "x_reg",
    "W_Q",
    "W_K",
    "W_V",
    "W_O",
    "W_1",
    "b_1",
    "W_2",
    "b_2",
    "theta",
)
#: Which attention matrix starts at zero: ``"key"`` (the authors' code, the default) or
#: ``"query"`` (the paper's text).
ZERO_INITS = ("key", "query")
_DTYPE = jnp.float32


# ---------------------------------------------------------------------- configuration
@dataclass(frozen=True, kw_only=True)
class TransformerConfig:
    """One Transformer-layer experiment: the task, the layer's sizes, SGD's parameters.

    Parameters
    ----------
    name, title : str
        Identification (``title`` heads the figure).
    task : SLRTask or MultiLocationTask
        The data: single-location regression (Section 2) or multiple-location regression (30).
    n_heads : int
        Number of heads :math:`H`. One head means :math:`W_O = I_d`, fixed, so ``r`` must equal ``d``.
    r : int
        Width of a head (rows of :math:`W_{Q,h}`, :math:`W_{K,h}`).
    m : int
        Hidden width of the MLP.
    alpha : float
        SGD step size, ``> 0``.
    batch_size, test_size : int
        Fresh samples per step; held-out samples per run (drawn once) for the test risk.
    n_steps, log_every : int
        SGD steps, and the logging period (must divide ``n_steps``); step 0 is logged too.
    n_runs : int
        Independent runs (oracle directions, initialisation, batches), vmapped.
    zero_init : str
        ``"key"`` (default, the authors' code): :math:`W_K = 0` at initialisation;
        ``"query"`` (the paper's text): :math:`W_Q = 0`. Either way attention starts uniform.

    Raises
    ------
    ValueError
        When ``task`` is neither an :class:`SLRTask` nor a :class:`MultiLocationTask`, a size is
        not a positive integer, ``alpha <= 0``, ``r != d`` for one head, ``log_every`` does not
        divide ``n_steps``, or ``zero_init`` is not in :data:`ZERO_INITS`.
    """

    name: str
    title: str
    task: Any
    n_heads: int = 1
    r: int = 80
    m: int = 200
    alpha: float = 1e-2
    batch_size: int = 128
    test_size: int = 1000
    n_steps: int = 8000
    log_every: int = 100
    n_runs: int = 20
    zero_init: str = "key"

    def __post_init__(self):
        if not isinstance(self.task, (SLRTask, MultiLocationTask)):
            raise ValueError(
                f"task must be an SLRTask or a MultiLocationTask, got {type(self.task).__name__}: {self.task!r}"
            )
        for field in (
            "n_heads",
            "r",
            "m",
            "batch_size",
            "test_size",
            "n_steps",
            "log_every",
            "n_runs",
        ):
            object.__setattr__(
                self, field, check_positive_int(getattr(self, field), field)
            )
        object.__setattr__(
            self,
            "alpha",
            check_real_scalar(self.alpha, "alpha", minimum=0.0, strict=True),
        )
        if self.n_heads == 1 and self.r != self.task.d:
            raise ValueError(
                f"r must equal d = {self.task.d} for a single head (W_O is the fixed identity), got {self.r}"
            )
        if self.n_steps % self.log_every:
            raise ValueError(
                f"log_every must divide n_steps = {self.n_steps}, got {self.log_every}"
            )
        if self.zero_init not in ZERO_INITS:
            raise ValueError(
                f"zero_init must be one of {ZERO_INITS}, got {self.zero_init!r}"
            )

    @property
    def d(self) -> int:
        """Token dimension :math:`d` of the task."""
        return self.task.d

    @property
    def L(self) -> int:
        """Sequence length :math:`L` of the task."""
        return self.task.L

    @property
    def M(self) -> int:
        """Number of relevant tokens: 1 for :class:`SLRTask`."""
        return self.task.M if isinstance(self.task, MultiLocationTask) else 1

    @property
    def eps(self) -> float:
        r"""Standard deviation :math:`\varepsilon` of the task's output noise."""
        return self.task.eps

    @property
    def null_risk(self) -> float:
        r"""Risk of the zero predictor, :math:`M\gamma^2 + \varepsilon^2`."""
        return self.M * self.task.gamma**2 + self.task.eps**2

    @property
    def n_logs(self) -> int:
        """Logged steps, step 0 included."""
        return self.n_steps // self.log_every + 1

    @property
    def run_steps(self) -> int:
        """Runs × steps."""
        return self.n_runs * self.n_steps

    def replace(self, **changes: Any) -> TransformerConfig:
        """A copy with some parameters changed (validated again).

        Parameters
        ----------
        **changes
            New values of any of the fields.

        Returns
        -------
        TransformerConfig
            The new configuration.

        Raises
        ------
        ValueError
            When a new value is invalid (as in :class:`TransformerConfig`).
        """
        return _dc_replace(self, **changes)


def _check_config(config) -> TransformerConfig:
    if not isinstance(config, TransformerConfig):
        raise ValueError(
            "config must be a TransformerConfig (named ones: slrlib.experiments.TRANSFORMER_CONFIGS), "
            f"got {config!r}"
        )
    return config


# ---------------------------------------------------------------------- the layer
def layer_norm(x: ArrayLike) -> jax.Array:
    r"""Layer normalisation of each vector along the last axis, without affine map.

    .. math::

        \operatorname{LN}(x) = (x - \bar x)/(\operatorname{std}(x) + 10^{-5})

    (population standard deviation; :math:`10^{-5}` is :data:`LN_EPS`).

    Parameters
    ----------
    x : array_like
        Vectors along the last axis.

    Returns
    -------
    jax.Array
        :math:`\operatorname{LN}(x)`, of the shape of ``x``.
    """
    mu = jnp.mean(x, axis=-1, keepdims=True)
    sd = jnp.std(x, axis=-1, keepdims=True)
    return (x - mu) / (sd + LN_EPS)


def trainable_names(n_heads: int) -> tuple[str, ...]:
    """The parameters SGD updates: all but ``x_reg``, and but ``W_O`` for a single head.

    Parameters
    ----------
    n_heads : int
        Number of heads, ``>= 1``.

    Returns
    -------
    tuple of str
        The names, in the order of :data:`PARAM_NAMES`.

    Raises
    ------
    ValueError
        When ``n_heads`` is not a positive integer.
    """
    n_heads = check_positive_int(n_heads, "n_heads")
    frozen = ("x_reg", "W_O") if n_heads == 1 else ("x_reg",)
    return tuple(n for n in PARAM_NAMES if n not in frozen)


def init_params(
    key: jax.Array,
    d: int,
    *,
    n_heads: int = 1,
    r: int | None = None,
    m: int = 200,
    zero_init: Literal["key", "query"] = "key",
) -> dict:
    r"""Initial parameters of the layer (float32), as in the paper and the authors' code.

    * :math:`x_{\rm reg} \sim \mathcal N(0, I_d/d)` (fixed);
    * the attention matrix named by ``zero_init`` is 0 (default :math:`W_K`), the other has
      entries :math:`\mathcal N(0, 2/(r+d))`: the scores are 0, attention starts uniform;
    * :math:`W_V`: entries :math:`\mathcal N(0, 1/d)` for one head, :math:`\mathcal N(0, 2/(r+d))` for several;
    * :math:`W_O = I_d` for one head, entries :math:`\mathcal N(0, 1/d)` for several;
    * :math:`W_1, W_2`: :math:`\mathcal N(0, 2/(m+d))`; :math:`b_1 = b_2 = 0`;
    * :math:`\theta`: :math:`\mathcal N(0, 1/d^2)` (mean-field read-out).

    Parameters
    ----------
    key : jax.Array
        A ``jax.random`` key.
    d : int
        Token dimension.
    n_heads : int
        Number of heads :math:`H`.
    r : int, optional
        Width of a head; defaults to ``d`` for one head and ``d // n_heads`` otherwise (one head
        needs ``r = d``).
    m : int
        Hidden width of the MLP.
    zero_init : {"key", "query"}
        Which attention matrix starts at zero.

    Returns
    -------
    dict
        The parameters, keyed by :data:`PARAM_NAMES`. Shapes: ``W_Q, W_K`` (H, r, d), ``W_V``
        (H, d, r), ``W_O`` (H r, d), ``W_1`` (m, d), ``W_2`` (d, m).

    Raises
    ------
    ValueError
        When a size is not a positive integer, ``r != d`` for one head, or ``zero_init`` is unknown.
    """
    key = check_key(key)
    d = check_positive_int(d, "d")
    n_heads = check_positive_int(n_heads, "n_heads")
    if r is None:
        r = d if n_heads == 1 else max(d // n_heads, 1)
    r = check_positive_int(r, "r")
    m = check_positive_int(m, "m")
    if n_heads == 1 and r != d:
        raise ValueError(
            f"r must equal d = {d} for a single head (W_O is the fixed identity), got {r}"
        )
    if zero_init not in ZERO_INITS:
        raise ValueError(
            f"zero_init must be one of {ZERO_INITS}, got {zero_init!r}"
        )
    return _init_params(key, d, n_heads, r, m, zero_init)


@partial(jax.jit, static_argnums=(1, 2, 3, 4, 5))
def _init_params(key, d, H, r, m, zero_init):
    # One Gaussian draw, cut into the parameters: one random-number site compiles much
    # faster than eight, and the law is the same.
    blocks = [
        ("x_reg", (d,), 1.0 / d),
        ("attn", (H, r, d), 2.0 / (r + d)),
        ("W_V", (H, d, r), 1.0 / d if H == 1 else 2.0 / (r + d)),
    ]
    if H > 1:
        blocks.append(("W_O", (H * r, d), 1.0 / d))
    blocks += [
        ("W_1", (m, d), 2.0 / (m + d)),
        ("W_2", (d, m), 2.0 / (m + d)),
        ("theta", (d,), 1.0 / d**2),
    ]
    sizes = [math.prod(shape) for _, shape, _ in blocks]
    z = jax.random.normal(key, (sum(sizes),), dtype=_DTYPE)
    out, start = {}, 0
    for (name, shape, var), size in zip(blocks, sizes):
        out[name] = z[start : start + size].reshape(shape) * jnp.asarray(
            math.sqrt(var), _DTYPE
        )
        start += size
    attn = out.pop("attn")
    zero = jnp.zeros((H, r, d), _DTYPE)
    out["W_Q"], out["W_K"] = (
        (attn, zero) if zero_init == "key" else (zero, attn)
    )
    if H == 1:
        out["W_O"] = jnp.eye(d, dtype=_DTYPE)
    out["b_1"] = jnp.zeros((m,), _DTYPE)
    out["b_2"] = jnp.zeros((d,), _DTYPE)
    return {name: out[name] for name in PARAM_NAMES}


def _check_params(params) -> tuple[int, int, int, int]:
    """Validate a parameter dict (or its batched version); returns (H, r, d, m)."""
    if not isinstance(params, dict) or set(params) != set(PARAM_NAMES):
        got = (
            sorted(params)
            if isinstance(params, dict)
            else type(params).__name__
        )
        raise ValueError(
            f"params must be a dict with keys {list(PARAM_NAMES)}, got {got}"
        )
    H, r, d = jnp.shape(params["W_Q"])[-3:]
    m = jnp.shape(params["W_1"])[-2]
    expected = {
        "x_reg": (d,),
        "W_Q": (H, r, d),
        "W_K": (H, r, d),
        "W_V": (H, d, r),
        "W_O": (H * r, d),
        "W_1": (m, d),
        "b_1": (m,),
        "W_2": (d, m),
        "b_2": (d,),
        "theta": (d,),
    }
    for name, shape in expected.items():
        got = tuple(jnp.shape(params[name]))
        if got[len(got) - len(shape) :] != shape:
            raise ValueError(
                f"params[{name!r}] must have shape (..., {', '.join(map(str, shape))}), got {got}"
            )
    return H, r, d, m


def _check_tokens(X, d):
    X = as_float_array(X, "X")
    if jnp.ndim(X) < 2 or jnp.shape(X)[-1] != d:
        raise ValueError(
            f"X must have shape (..., L, {d}) (last axis = d = {d}), got shape {jnp.shape(X)}"
        )
    check_finite(X, "X")
    return X


def _with_register(params, X):
    x_reg = jnp.broadcast_to(
        params["x_reg"], X.shape[:-2] + (1, X.shape[-1])
    ).astype(X.dtype)
    return jnp.concatenate([x_reg, X], axis=-2)


def _attention(params, N):
    """Attention weights of every query, (..., H, L+1, L+1), from normalised tokens N (..., L+1, d)."""
    r = params["W_Q"].shape[-2]
    Q = jnp.einsum("...ld,hrd->...hlr", N, params["W_Q"])
    K = jnp.einsum("...ld,hrd->...hlr", N, params["W_K"])
    return jax.nn.softmax(
        jnp.einsum("...hlr,...hjr->...hlj", Q, K) / math.sqrt(r), axis=-1
    )


def _mlp(params, Z):
    return (
        Z
        + jax.nn.relu(Z @ params["W_1"].T + params["b_1"]) @ params["W_2"].T
        + params["b_2"]
    )


@jax.jit
def _layer(params, X):
    Xt = _with_register(params, X)
    N = layer_norm(Xt)
    A = _attention(params, N)
    O = jnp.einsum("...hlj,...jd,hdr->...lhr", A, N, params["W_V"])
    Z = Xt + O.reshape(O.shape[:-2] + (-1,)) @ params["W_O"]
    return _mlp(params, Z)


def transformer_layer(params: dict, X: ArrayLike) -> jax.Array:
    r"""The layer (29) on every row: ``X`` (..., L, d) → (..., L+1, d); row 0 is the register.

    With :math:`\widetilde{\mathbb X}` the tokens with the register prepended,

    .. math::

        A_h &= \operatorname{softmax}_{\rm rows}\Big(\operatorname{LN}(\widetilde{\mathbb X})\, W_{Q,h}^\top W_{K,h}\,
              \operatorname{LN}(\widetilde{\mathbb X})^\top / \sqrt r\Big), \qquad
        O_h = A_h \operatorname{LN}(\widetilde{\mathbb X})\, W_{V,h}, \\
        Z &= \widetilde{\mathbb X} + [O_1 \cdots O_H]\, W_O, \qquad
        T(\mathbb X) = Z + \operatorname{relu}(Z W_1^\top + \mathbf 1 b_1^\top)\, W_2^\top + \mathbf 1 b_2^\top.

    Parameters
    ----------
    params : dict
        The layer's parameters (:func:`init_params`).
    X : array_like, shape (..., L, d)
        Tokens.

    Returns
    -------
    jax.Array, shape (..., L+1, d)
        :math:`T(\mathbb X)`.

    Raises
    ------
    ValueError
        When ``params`` lacks a parameter or has a wrong shape, or ``X`` is not a finite array
        of shape (..., L, d).
    """
    _, _, d, _ = _check_params(params)
    return _layer(params, _check_tokens(X, d))


def attention_weights(params: dict, X: ArrayLike) -> jax.Array:
    r"""The attention matrices :math:`A_h` of the layer (rows sum to 1).

    .. math::

        A_h = \operatorname{softmax}_{\rm rows}\Big(\operatorname{LN}(\widetilde{\mathbb X})\, W_{Q,h}^\top W_{K,h}\,
        \operatorname{LN}(\widetilde{\mathbb X})^\top / \sqrt r\Big).

    Parameters
    ----------
    params : dict
        The layer's parameters (:func:`init_params`).
    X : array_like, shape (..., L, d)
        Tokens.

    Returns
    -------
    jax.Array, shape (..., H, L+1, L+1)
        :math:`A_h` for every head; row and column 0 are the register.

    Raises
    ------
    ValueError
        When ``params`` or ``X`` is invalid (as in :func:`transformer_layer`).
    """
    _, _, d, _ = _check_params(params)
    return _attention_weights(params, _check_tokens(X, d))


@jax.jit
def _attention_weights(params, X):
    return _attention(params, layer_norm(_with_register(params, X)))


def _register_z(params, X):
    """Row 0 of Z (before the MLP), (..., d): the register's query only."""
    W_Q, W_K, W_V = params["W_Q"], params["W_K"], params["W_V"]
    H, r, _ = W_Q.shape
    n_reg = layer_norm(params["x_reg"])
    U = jnp.einsum("hrd,hr->hd", W_K, W_Q @ n_reg) / math.sqrt(
        r
    )  # (H, d): u_h / sqrt(r)
    N = layer_norm(X)  # (..., L, d)
    s_tok = jnp.einsum("...ld,hd->...hl", N, U)
    s_reg = jnp.broadcast_to(U @ n_reg, s_tok.shape[:-1])[..., None]
    a = jax.nn.softmax(
        jnp.concatenate([s_reg, s_tok], axis=-1), axis=-1
    )  # (..., H, L+1)
    pooled = a[..., :1] * n_reg + jnp.einsum(
        "...hl,...ld->...hd", a[..., 1:], N
    )
    heads = jnp.einsum("...hd,hdr->...hr", pooled, W_V)
    return (
        params["x_reg"]
        + heads.reshape(heads.shape[:-2] + (H * r,)) @ params["W_O"]
    )


@jax.jit
def _register_output(params, X):
    return _mlp(params, _register_z(params, X))


@jax.jit
def _predict(params, X):
    return _register_output(params, X) @ params["theta"]


def register_output(params: dict, X: ArrayLike) -> jax.Array:
    r"""Row 0 of :func:`transformer_layer`, computed from the register's query only.

    .. math::

        z_0 = x_{\rm reg} + \sum_{h=1}^H a_h^\top \operatorname{LN}(\widetilde{\mathbb X})\, W_{V,h} W_{O,h},
        \qquad a_h = \operatorname{softmax}_\ell\big(\operatorname{LN}(\widetilde X_\ell)^\top u_h/\sqrt r\big),
        \qquad T(\mathbb X)_0 = z_0 + W_2 \operatorname{relu}(W_1 z_0 + b_1) + b_2,

    with :math:`u_h` the effective key direction (:func:`key_directions`) and :math:`W_{O,h}` the
    rows of :math:`W_O` of head h.

    Parameters
    ----------
    params : dict
        The layer's parameters (:func:`init_params`).
    X : array_like, shape (..., L, d)
        Tokens.

    Returns
    -------
    jax.Array, shape (..., d)
        :math:`T(\mathbb X)_0`.

    Raises
    ------
    ValueError
        When ``params`` or ``X`` is invalid (as in :func:`transformer_layer`).
    """
    _, _, d, _ = _check_params(params)
    return _register_output(params, _check_tokens(X, d))


def predict(params: dict, X: ArrayLike) -> jax.Array:
    r"""The prediction :math:`\theta^\top T(\mathbb X)_0`, by the fast register path.

    Parameters
    ----------
    params : dict
        The layer's parameters (:func:`init_params`).
    X : array_like, shape (..., L, d)
        Tokens.

    Returns
    -------
    jax.Array, shape (...,)
        The predictions.

    Raises
    ------
    ValueError
        When ``params`` or ``X`` is invalid (as in :func:`transformer_layer`).
    """
    _, _, d, _ = _check_params(params)
    return _predict(params, _check_tokens(X, d))


@jax.jit
def _loss(params, X, y):
    return jnp.mean((_predict(params, X) - y) ** 2)


def batch_loss(params: dict, X: ArrayLike, y: ArrayLike) -> jax.Array:
    r"""Mean squared error :math:`\frac1B\sum_b (f(\mathbb X_b) - y_b)^2` on a batch.

    Parameters
    ----------
    params : dict
        The layer's parameters (:func:`init_params`).
    X : array_like, shape (B, L, d)
        Tokens of the batch.
    y : array_like, shape (B,)
        Outputs of the batch.

    Returns
    -------
    jax.Array
        The loss (a scalar), with :math:`f` = :func:`predict`.

    Raises
    ------
    ValueError
        When ``params`` or ``X`` is invalid, or ``y`` does not have one output per sequence.
    """
    _, _, d, _ = _check_params(params)
    X = _check_tokens(X, d)
    y = as_float_array(y, "y")
    if jnp.shape(y) != jnp.shape(X)[:-2]:
        raise ValueError(
            f"y must have shape {jnp.shape(X)[:-2]} (one output per sequence), got {jnp.shape(y)}"
        )
    return _loss(params, X, y)


# ---------------------------------------------------------------------- data (float32)
def _sample32(key, n, task, K_star, V_star):
    """``n`` samples of the task in float32 (same law as ``task.sample``); K_star, V_star (M, d)."""
    L, d = task.L, task.d
    j_key, x_key = jax.random.split(key)
    if isinstance(task, MultiLocationTask):
        J = jnp.argsort(
            jax.random.uniform(j_key, (n, L), dtype=_DTYPE), axis=-1
        )[:, : task.M]  # distinct, uniform
    elif task.is_uniform:
        J = jax.random.randint(j_key, (n, 1), 0, L)
    else:
        J = jax.random.categorical(
            j_key, jnp.log(jnp.asarray(task.probs)), shape=(n,)
        )[:, None]
    z = jax.random.normal(
        x_key, (n, L * d + 1), dtype=_DTYPE
    )  # tokens and noise in one draw
    Z, noise = z[:, :-1].reshape(n, L, d), z[:, -1]
    onehot = jax.nn.one_hot(J, L, dtype=_DTYPE)  # (n, M, L)
    means = jnp.asarray(math.sqrt(d / 2.0), _DTYPE) * jnp.einsum(
        "nml,md->nld", onehot, K_star
    )
    relevant = onehot.sum(axis=1)[..., None] > 0
    X = jnp.where(relevant, means + jnp.asarray(task.gamma, _DTYPE) * Z, Z)
    X_rel = jnp.take_along_axis(X, J[..., None], axis=1)  # (n, M, d)
    y = (
        jnp.einsum("nmd,md->n", X_rel, V_star)
        + jnp.asarray(task.eps, _DTYPE) * noise
    )
    return X, y, J


def sample_batch(
    key: jax.Array,
    n: int,
    task: SLRTask | MultiLocationTask,
    K_star: ArrayLike,
    V_star: ArrayLike,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``n`` float32 samples of an :class:`SLRTask` or a :class:`MultiLocationTask`: the training loop's sampler.

    Same law as ``task.sample`` (checked by the tests), drawn in float32 for speed.

    Parameters
    ----------
    key : jax.Array
        A ``jax.random`` key.
    n : int
        Number of samples.
    task : SLRTask or MultiLocationTask
        The task (``M = 1`` for an :class:`SLRTask`).
    K_star, V_star : array_like, shape (M, d)
        The task's directions ((d,) for an :class:`SLRTask`).

    Returns
    -------
    X : jax.Array, shape (n, L, d)
        Tokens.
    y : jax.Array, shape (n,)
        Outputs.
    J : jax.Array, shape (n, M)
        Relevant positions.

    Raises
    ------
    ValueError
        When ``key``, ``n``, ``task`` or the directions are invalid.
    """
    key = check_key(key)
    n = check_positive_int(n, "n")
    if not isinstance(task, (SLRTask, MultiLocationTask)):
        raise ValueError(
            f"task must be an SLRTask or a MultiLocationTask, got {type(task).__name__}: {task!r}"
        )
    K_star, V_star = _stars(task, K_star, V_star)
    return _sample32_jit(
        key, n, task, K_star.astype(_DTYPE), V_star.astype(_DTYPE)
    )


_sample32_jit = jax.jit(_sample32, static_argnums=(1, 2))


def _stars(task, K_star, V_star):
    if isinstance(task, SLRTask):
        k, v = task.check_directions(
            jnp.reshape(as_float_array(K_star, "K_star"), (-1,)),
            jnp.reshape(as_float_array(V_star, "V_star"), (-1,)),
        )
        return k[None], v[None]
    return task.check_directions(K_star, V_star)


def _oracle(task, key):
    K, V = task.oracle_directions(key)
    K, V = jnp.atleast_2d(K), jnp.atleast_2d(V)
    return K.astype(_DTYPE), V.astype(_DTYPE)


# ---------------------------------------------------------------------- reading the weights
def top_singular(P: ArrayLike) -> tuple[jax.Array, jax.Array, jax.Array]:
    r"""Top right singular vector and the two largest singular values of ``P`` (..., d, d).

    Parameters
    ----------
    P : array_like, shape (..., d, d)
        Matrices.

    Returns
    -------
    k_hat : jax.Array, shape (..., d)
        :math:`\hat k`, the unit vector maximising :math:`\|P\hat k\|` (the sign is arbitrary).
    s1, s2 : jax.Array, shape (...)
        The two largest singular values, ``s1 >= s2``.
    """
    _, s, Vt = jnp.linalg.svd(P)
    return Vt[..., 0, :], s[..., 0], s[..., 1]


def key_directions(params: dict) -> tuple[jax.Array, jax.Array]:
    r"""Per head: the query–key product :math:`P_h` and the effective key direction :math:`u_h`.

    .. math::

        P_h = W_{Q,h}^\top W_{K,h}, \qquad
        u_h = P_h^\top \operatorname{LN}(x_{\rm reg}) = W_{K,h}^\top W_{Q,h}\operatorname{LN}(x_{\rm reg}).

    The register's score of token :math:`\ell` in head h is
    :math:`\operatorname{LN}(\widetilde X_\ell)^\top u_h / \sqrt r`.

    Parameters
    ----------
    params : dict
        The layer's parameters (:func:`init_params`); not validated.

    Returns
    -------
    P : jax.Array, shape (H, d, d)
        :math:`P_h` for every head.
    u : jax.Array, shape (H, d)
        :math:`u_h` for every head.
    """
    return _key_directions(params)


@jax.jit
def _key_directions(params):
    P = jnp.einsum("...hrd,...hre->...hde", params["W_Q"], params["W_K"])
    n_reg = layer_norm(params["x_reg"])
    u = jnp.einsum("...hde,...d->...he", P, n_reg)
    return P, u


def mlp_gates(params: dict, X: ArrayLike) -> jax.Array:
    r"""Fraction of sequences for which each hidden ReLU unit is active at the register's row.

    .. math::

        \bar g = \frac1B\sum_b \mathbf 1[W_1 z_{b,0} + b_1 > 0].

    Parameters
    ----------
    params : dict
        The layer's parameters (:func:`init_params`).
    X : array_like, shape (B, L, d)
        Tokens.

    Returns
    -------
    jax.Array, shape (m,)
        :math:`\bar g`.

    Raises
    ------
    ValueError
        When ``params`` or ``X`` is invalid (as in :func:`transformer_layer`).
    """
    d = _check_params(params)[2]
    return _gates(params, _check_tokens(X, d))


@jax.jit
def _gates(params, X):
    z = _register_z(params, X)
    return jnp.mean(
        (z @ params["W_1"].T + params["b_1"] > 0).astype(z.dtype),
        axis=tuple(range(z.ndim - 1)),
    )


def value_directions(
    params: dict, gates: ArrayLike | None = None
) -> jax.Array:
    r"""Per head, the linearised map from a token to the prediction.

    .. math::

        \hat v_h = W_{V,h}\, W_{O,h}\,\big(I_d + W_2 \operatorname{diag}(g) W_1\big)^\top \theta,

    with :math:`W_{O,h}` the rows of :math:`W_O` of head h. Not normalised.

    Parameters
    ----------
    params : dict
        The layer's parameters (:func:`init_params`); not validated.
    gates : array_like, shape (m,), optional
        ``None`` replaces the ReLU by the identity (:math:`g = \mathbf 1`, the authors' choice);
        an array uses average gates, e.g. from :func:`mlp_gates`.

    Returns
    -------
    jax.Array, shape (H, d)
        :math:`\hat v_h` for every head.
    """
    return _value_directions(
        params, None if gates is None else jnp.asarray(gates)
    )


@jax.jit
def _value_directions(params, gates):
    W_V, W_O, W_1, W_2, theta = (
        params[n] for n in ("W_V", "W_O", "W_1", "W_2", "theta")
    )
    H, d, r = W_V.shape[-3:]
    back = (
        W_2.swapaxes(-1, -2) @ theta[..., :, None]
    )  # (..., m, 1): W_2^T theta
    if gates is not None:
        back = back * gates[..., :, None]
    w = theta[..., :, None] + W_1.swapaxes(-1, -2) @ back  # (..., d, 1)
    W_Oh = W_O.reshape(W_O.shape[:-2] + (H, r, d))
    return jnp.einsum("...hdr,...hre,...e->...hd", W_V, W_Oh, w[..., 0])


def _unit(x):
    n = jnp.linalg.norm(x, axis=-1, keepdims=True)
    return jnp.where(n > 0, x / jnp.where(n > 0, n, 1.0), jnp.nan)


@jax.jit
def _alignments(params, K_star, V_star, gates):
    P, u = _key_directions(params)
    k_hat, s1, s2 = top_singular(P)
    k_hat = jnp.where(s1[..., None] > 0, k_hat, jnp.nan)
    v_lin = _value_directions(params, None)
    v_gate = _value_directions(params, gates)
    return {
        "kappa": jnp.abs(k_hat @ K_star.T),  # (H, M)
        "kappa_u": _unit(u) @ K_star.T,
        "nu": _unit(v_lin) @ V_star.T,
        "nu_gated": _unit(v_gate) @ V_star.T,
        "ratio": jnp.where(
            s2 > 0,
            s1 / jnp.where(s2 > 0, s2, 1.0),
            jnp.where(s1 > 0, jnp.inf, jnp.nan),
        ),
    }


def alignments(
    params: dict,
    K_star: ArrayLike,
    V_star: ArrayLike,
    gates: ArrayLike | None = None,
) -> dict:
    r"""What the weights encode, per head h and relevant location m.

    Parameters
    ----------
    params : dict
        The layer's parameters (:func:`init_params`).
    K_star, V_star : array_like, shape (M, d)
        The task's directions, or (d,) for one location.
    gates : array_like, shape (m,), optional
        Average gates for ``nu_gated`` (default: identity).

    Returns
    -------
    dict
        Arrays (H, M), ``ratio`` (H,):

        * ``kappa``: :math:`|\langle \hat k_h, k_m^\star\rangle|`, :math:`\hat k_h` the top right singular vector
          of :math:`P_h = W_{Q,h}^\top W_{K,h}` (NaN when :math:`P_h = 0`);
        * ``kappa_u``: :math:`\langle u_h/\|u_h\|, k_m^\star\rangle` (signed), :math:`u_h` the effective key
          direction;
        * ``nu``: :math:`\langle \hat v_h/\|\hat v_h\|, v_m^\star\rangle` (signed), :math:`\hat v_h` linearised
          (:func:`value_directions`); ``nu_gated`` with average gates ``gates`` (default: identity);
        * ``ratio``: :math:`s_1/s_2` of :math:`P_h` (rank-one check).

    Raises
    ------
    ValueError
        When ``params`` lacks a parameter or has a wrong shape.
    """
    _check_params(params)
    K_star = jnp.atleast_2d(as_float_array(K_star, "K_star"))
    V_star = jnp.atleast_2d(as_float_array(V_star, "V_star"))
    return _alignments(params, K_star, V_star, gates)


# ---------------------------------------------------------------------- training
def _split(params, names):
    return {n: params[n] for n in names}, {
        n: params[n] for n in PARAM_NAMES if n not in names
    }


def _run_one(config: TransformerConfig, key):
    """One run: draw the oracle, the initialisation, the test batch, then train and log."""
    star_key, init_key, test_key, train_key = jax.random.split(key, 4)
    task = config.task
    K_star, V_star = _oracle(task, star_key)
    params = _init_params(
        init_key,
        config.d,
        config.n_heads,
        config.r,
        config.m,
        config.zero_init,
    )
    X_test, y_test, _ = _sample32(
        test_key, config.test_size, task, K_star, V_star
    )
    optax = require(
        "optax", "train_transformer"
    )  # only training needs it: the "optim" extra

    names = trainable_names(config.n_heads)
    trained, frozen = _split(params, names)
    opt = optax.sgd(config.alpha)
    opt_state = opt.init(trained)

    def loss(tr, X, y):
        return _loss({**tr, **frozen}, X, y)

    def log(tr):
        p = {**tr, **frozen}
        z = _register_z(
            p, X_test
        )  # one forward pass gives the test risk and the MLP gates
        h = z @ p["W_1"].T + p["b_1"]
        pred = (z + jax.nn.relu(h) @ p["W_2"].T + p["b_2"]) @ p["theta"]
        out = _alignments(
            p, K_star, V_star, jnp.mean((h > 0).astype(_DTYPE), axis=0)
        )
        out["excess_risk"] = jnp.mean((pred - y_test) ** 2) - jnp.asarray(
            task.eps**2, _DTYPE
        )
        return out

    def step(t, carry):
        tr, st = carry
        X, y, _ = _sample32(
            jax.random.fold_in(train_key, t),
            config.batch_size,
            task,
            K_star,
            V_star,
        )
        grads = jax.grad(loss)(tr, X, y)
        updates, st = opt.update(grads, st, tr)
        return optax.apply_updates(tr, updates), st

    def interval(carry, i):
        carry = jax.lax.fori_loop(
            i * config.log_every, (i + 1) * config.log_every, step, carry
        )
        return carry, log(carry[0])

    first = log(trained)
    (trained, _), logs = jax.lax.scan(
        interval, (trained, opt_state), jnp.arange(config.n_logs - 1)
    )
    logs = jax.tree.map(
        lambda a, b: jnp.concatenate([a[None], b]), first, logs
    )
    return logs, params, {**trained, **frozen}, K_star, V_star


@partial(jax.jit, static_argnums=(0,))
def _run_many(config, keys):
    return jax.vmap(partial(_run_one, config))(keys)


@partial(jax.jit, static_argnums=(0, 1))
def _replay_step(config, dtype, p, t, train_key, K_star, V_star):
    X, y, _ = _sample32(
        jax.random.fold_in(train_key, t),
        config.batch_size,
        config.task,
        K_star,
        V_star,
    )
    g = jax.grad(_loss)(p, X.astype(dtype), y.astype(dtype))
    names = trainable_names(config.n_heads)
    return {n: p[n] - config.alpha * g[n] if n in names else p[n] for n in p}


def replay_run(
    config: TransformerConfig,
    key: jax.Array,
    n_steps: int | None = None,
    *,
    run: int = 0,
    dtype: DTypeLike = jnp.float32,
    zero_init: Literal["key", "query"] | None = None,
) -> tuple[dict, dict]:
    """Run ``run`` of :func:`train_transformer` ``(config, key)`` replayed step by step in Python.

    Each step is ``p - alpha * jax.grad(batch_loss)`` on the same batches, in ``dtype``
    (float32: the training loop's numbers; float64: the same run with less rounding).
    One Python call per step: for short runs.

    Parameters
    ----------
    config : TransformerConfig
        The experiment.
    key : jax.Array
        The key given to :func:`train_transformer`.
    n_steps : int, optional
        Steps to replay; default ``config.n_steps``.
    run : int
        Which run, in ``[0, config.n_runs)``.
    dtype : {float32, float64}
        Precision of the replay.
    zero_init : {"key", "query"}, optional
        Overrides the configuration's.

    Returns
    -------
    initial_params, params : dict
        The initial parameters and the parameters after ``n_steps``.

    Raises
    ------
    ValueError
        When ``config`` is not a :class:`TransformerConfig`, ``run`` is out of range, ``dtype`` is
        neither float32 nor float64, ``zero_init`` is unknown, or ``key`` or ``n_steps`` is invalid.
    """
    config = _check_config(config)
    key = check_key(key)
    n_steps = (
        config.n_steps
        if n_steps is None
        else check_positive_int(n_steps, "n_steps")
    )
    if (
        isinstance(run, (bool, np.bool_))
        or not isinstance(run, (int, np.integer))
        or not 0 <= run < config.n_runs
    ):
        raise ValueError(
            f"run must be an integer in [0, n_runs = {config.n_runs}), got {run!r}"
        )
    dtype = jnp.dtype(dtype)
    if dtype not in (jnp.dtype(jnp.float32), jnp.dtype(jnp.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    zero_init = config.zero_init if zero_init is None else zero_init
    if zero_init not in ZERO_INITS:
        raise ValueError(
            f"zero_init must be one of {ZERO_INITS}, got {zero_init!r}"
        )
    star_key, init_key, _, train_key = jax.random.split(
        jax.random.split(key, config.n_runs)[int(run)], 4
    )
    K_star, V_star = _oracle(config.task, star_key)
    p0 = _init_params(
        init_key, config.d, config.n_heads, config.r, config.m, zero_init
    )
    p0 = {n: v.astype(dtype) for n, v in p0.items()}
    p = p0
    for t in range(n_steps):
        p = _replay_step(config, dtype, p, t, train_key, K_star, V_star)
    return p0, p


class TransformerResult(NamedTuple):
    r"""A finished Transformer experiment.

    Per-run arrays have the run on axis 0 and the logged step on axis 1; alignment arrays end
    with (H, M) (head, location).

    ``excess_risk``: test risk on the run's held-out batch minus :math:`\varepsilon^2`;
    ``kappa``, ``kappa_u``, ``nu``, ``nu_gated``, ``ratio``: see :func:`alignments`;
    ``params``, ``initial_params``: final and initial parameters (leading run axis); ``K_star, V_star`` (runs, M, d);
    ``seconds``: wall time, compilation included.
    """

    config: TransformerConfig
    steps: np.ndarray
    excess_risk: np.ndarray
    kappa: np.ndarray
    kappa_u: np.ndarray
    nu: np.ndarray
    nu_gated: np.ndarray
    ratio: np.ndarray
    params: dict
    initial_params: dict
    K_star: np.ndarray
    V_star: np.ndarray
    seconds: float

    @property
    def ms_per_run_step(self) -> float:
        """Wall time per run and per SGD step, in milliseconds (compilation included)."""
        n_runs = self.excess_risk.shape[0]
        return 1e3 * self.seconds / (n_runs * self.config.n_steps)


def train_transformer(
    config: TransformerConfig, key: jax.Array
) -> TransformerResult:
    """Train ``config.n_runs`` independent layers with single-pass SGD from ``key``.

    Run i uses ``jax.random.split(key, n_runs)[i]`` for its oracle directions, initialisation,
    held-out batch and batches: the same key gives the same numbers. With JAX's default
    ``jax_threefry_partitionable`` these keys do not depend on ``n_runs``, so the runs of a
    smaller experiment are the first runs of a larger one.

    Parameters
    ----------
    config : TransformerConfig
        The experiment.
    key : jax.Array
        A ``jax.random`` key.

    Returns
    -------
    TransformerResult
        The logged excess risks and alignments, the initial and final parameters, the oracle
        directions and the wall time.

    Raises
    ------
    ValueError
        When ``config`` is not a :class:`TransformerConfig` or ``key`` is not a ``jax.random`` key.
    """
    config = _check_config(config)
    key = check_key(key)
    start = time.perf_counter()
    logs, params0, params, K_star, V_star = _run_many(
        config, jax.random.split(key, config.n_runs)
    )
    jax.block_until_ready(logs)
    seconds = time.perf_counter() - start
    logs = {k: np.asarray(v) for k, v in logs.items()}
    return TransformerResult(
        config=config,
        steps=np.arange(config.n_logs) * config.log_every,
        excess_risk=logs["excess_risk"],
        kappa=logs["kappa"],
        kappa_u=logs["kappa_u"],
        nu=logs["nu"],
        nu_gated=logs["nu_gated"],
        ratio=logs["ratio"],
        params={k: np.asarray(v) for k, v in params.items()},
        initial_params={k: np.asarray(v) for k, v in params0.items()},
        K_star=np.asarray(K_star),
        V_star=np.asarray(V_star),
        seconds=seconds,
    )
