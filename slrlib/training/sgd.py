r"""Stochastic projected gradient descent on the empirical risk (Section 5, Figure 5; Appendix E.3, Figure 9).

At every step a fresh batch :math:`(\mathbb X_b, Y_b)_{b \le B}` is drawn and each direction
takes one projected (Riemannian) gradient step on the sphere, as in Definition 1 (eq. 10) but
with the batch loss

.. math::

    \widehat{\mathcal R}_\lambda(K, V) = \frac1B \sum_{b=1}^B
    \Big(\sum_{h=1}^H \sum_{\ell=1}^L \operatorname{erf}(\lambda X_{b\ell}^\top k_h)\, X_{b\ell}^\top v_h - Y_b\Big)^2

in place of the population risk: the erf predictor (3) for one head (:math:`H = 1`), the
multi-head predictor (31) for several. With ``attention="softmax"`` the predictor is softmax
attention (2) instead (our addition; a sum of heads when :math:`H > 1`, each normalised over the tokens):

.. math::

    T^{\rm soft}_\lambda(\mathbb X) = \sum_{h=1}^H \sum_{\ell=1}^L
    \operatorname{softmax}(\lambda\, \mathbb X k_h)_\ell\, X_\ell^\top v_h .

The task is single-location regression
(:class:`~slrlib.core.task.SLRTask`) or its multiple-location version (30)
(:class:`~slrlib.core.task.MultiLocationTask`).

**The exact low-dimensional sampler.** A token enters the loss only through its projections
on the :math:`2H` parameter directions, and the gradient is a combination of tokens:
:math:`\nabla_{p}\widehat{\mathcal R} = \sum_{b,\ell} c^{p}_{b\ell} X_{b\ell}` for each parameter
vector :math:`p \in \{k_h, v_h\}`, with :math:`c^{p}_{b\ell} = \partial\widehat{\mathcal R}/\partial(X_{b\ell}^\top p)`.
Let :math:`Q` (:math:`d \times D`, :math:`D = 2H + 2M`) be an orthonormal basis of a space containing the
parameters and the task's directions, and split every token as :math:`X = Q a + w` with
:math:`w \perp Q`. Given the past, :math:`a` and :math:`w` are independent Gaussians:
:math:`a` is what the loss sees (so the coefficients :math:`c` are functions of :math:`a` only), and
:math:`w \sim \mathcal N(0, \sigma^2 P_\perp)` with :math:`\sigma = \gamma` for a relevant token, 1
otherwise. Hence

.. math::

    \nabla_p \widehat{\mathcal R} = Q \sum_{b,\ell} c^p_{b\ell} a_{b\ell} + P_\perp G_p, \qquad
    (G_p)_p \;\big|\; a \sim \mathcal N\big(0,\ \widetilde C^\top \widetilde C \otimes I_d\big),
    \quad \widetilde C_{(b\ell), p} = \sigma_{b\ell} c^p_{b\ell},

and :math:`G = R^\top Z` with :math:`\widetilde C = Q_C R` (QR) and :math:`Z` a :math:`2H \times d` standard
Gaussian matrix has exactly that law. A step then draws :math:`BLD + 2Hd` normals (360 for
Figure 5) instead of the :math:`BLd` (4 000) of the plain sampler, and its gradient has exactly
the law of the plain one. The relevant tokens can be put at positions :math:`1, \dots, M`: the
loss is a sum over tokens, invariant under permuting them. Nothing here uses the form of the
predictor beyond these two facts, so the sampler serves softmax attention as it serves erf
attention: the softmax predictor also reads token :math:`\ell` only through
:math:`X_\ell^\top k_h, X_\ell^\top v_h` and is a symmetric function of the tokens; only the
coefficients change. With :math:`S^k_{b\ell h} = X_{b\ell}^\top k_h`, :math:`S^v_{b\ell h} = X_{b\ell}^\top v_h` and
:math:`r_b = \frac2B (T_\lambda(\mathbb X_b) - Y_b)`: for erf attention

.. math::

    c^{v_h}_{b\ell} = r_b \operatorname{erf}(\lambda S^k_{b\ell h}), \qquad
    c^{k_h}_{b\ell} = r_b \tfrac{2\lambda}{\sqrt\pi} e^{-\lambda^2 (S^k_{b\ell h})^2} S^v_{b\ell h},

and for softmax attention, with :math:`p_{b\ell h} = \operatorname{softmax}_\ell(\lambda S^k_{b\cdot h})` and
:math:`T_{bh} = \sum_\ell p_{b\ell h} S^v_{b\ell h}` the prediction of head :math:`h`,

.. math::

    c^{v_h}_{b\ell} = r_b\, p_{b\ell h}, \qquad
    c^{k_h}_{b\ell} = r_b\, \lambda\, p_{b\ell h} (S^v_{b\ell h} - T_{bh})

(the softmax's Jacobian). ``sampler="plain"`` draws whole
batches from the task and differentiates the batch loss with ``jax.grad``: the reference.

(The decomposition is our observation; the paper runs the plain sampler.)
"""

from __future__ import annotations

import math
from functools import partial
from typing import Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import erf
from jax.typing import ArrayLike

from slrlib.validation import (
    as_float_array,
    check_finite,
    check_key,
    check_positive_int,
    check_real_scalar,
    check_unit_norm,
)
from slrlib.core.task import (
    MultiLocationTask,
    SLRTask,
    multi_sample_kernel,
    sample_kernel,
)

__all__ = [
    "SGDResult",
    "sgd",
    "batch_loss",
    "batch_gradient",
    "sample_gradient",
    "lam_schedule",
    "SAMPLERS",
    "ATTENTIONS",
    "exact_sampler_draws",
]

#: Gradient samplers of :func:`sgd`: ``"exact"`` (low-dimensional, the default) and ``"plain"``
#: (whole batches differentiated with ``jax.grad``, the reference).
SAMPLERS = ("exact", "plain")
#: Predictors of :func:`sgd`: ``"erf"`` (erf attention (3), multi-head (31); the paper's, the
#: default) and ``"softmax"`` (softmax attention (2), one or several heads; our addition).
ATTENTIONS = ("erf", "softmax")


class SGDResult(NamedTuple):
    r"""Logged trajectories of stochastic PGD; the last axis indexes logged steps (0 included).

    Overlaps have shape (runs, H, M, logs): ``kappa[r, h, m] = <k_h, k_m*>``,
    ``nu = <v_h, v_m*>``, ``theta = <v_h, k_m*>``, ``eta = <k_h, v_m*>``; ``rho`` (runs, H, logs)
    is :math:`\langle k_h, v_h\rangle`. ``risk`` (runs, logs) is the batch loss on a held-out
    set, at the :math:`\lambda_t` of the step; ``k, v`` (runs, H, d) are the final directions.

    The same fields as :class:`slrlib.training.pgd.PGDResult`, for the same idea: ``risk``
    (there the exact population risk, here its estimate on ``test_size`` held-out sequences),
    the final ``k, v`` (here with a head axis), and the overlaps with the logged steps on the
    last axis; PGD's overlaps are those of SGD with one head and one location, without the two
    axes (``kappa[:, 0, 0]`` here is ``kappa`` there).

    Notes
    -----
    As for :class:`slrlib.training.pgd.PGDResult`: each head's :math:`(k_h, v_h)` and
    :math:`(-k_h, -v_h)` are the same predictor, so recovery reads :math:`|\kappa|` and
    :math:`|\nu|` at the last logged step (``kappa[..., -1]``) with :math:`\kappa\nu > 0`;
    with several heads or locations, head :math:`h` has found location :math:`m` when
    ``abs(kappa[r, h, m, -1])`` and ``abs(nu[r, h, m, -1])`` are near 1. A run started off the
    manifold can end near the swapped point (:math:`|\eta| \approx 1`, :math:`\kappa \approx
    \nu \approx 0`), a critical point whose risk is close to the oracle's at small
    :math:`\lambda` (chapter 8 of the book).
    """

    steps: np.ndarray
    lam: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    theta: np.ndarray
    eta: np.ndarray
    rho: np.ndarray
    risk: np.ndarray
    k: np.ndarray
    v: np.ndarray


# ---------------------------------------------------------------------------------- loss
def _weights(pk, lam, attention):
    """Attention weights from the scores' projections ``pk`` (..., L, H): erf(lam pk) or the
    softmax of lam pk over the tokens (axis -2)."""
    if attention == "softmax":
        return jax.nn.softmax(lam * pk, axis=-2)
    return erf(lam * pk)


def _predict(X, K, V, lam, attention="erf"):
    """Multi-head erf predictor (31), or softmax attention (2) summed over heads, without input
    checks: X (..., L, d), K, V (H, d)."""
    pk = jnp.einsum("...ld,hd->...lh", X, K)
    pv = jnp.einsum("...ld,hd->...lh", X, V)
    return jnp.sum(_weights(pk, lam, attention) * pv, axis=(-2, -1))


def _batch_loss(K, V, X, y, lam, attention="erf"):
    return jnp.mean(jnp.square(_predict(X, K, V, lam, attention) - y))


def _check_attention(attention):
    if attention not in ATTENTIONS:
        raise ValueError(
            f"attention must be one of {ATTENTIONS}, got {attention!r}"
        )
    return attention


def _heads(x, name, d):
    x = as_float_array(x, name)
    if jnp.ndim(x) == 1:
        x = x[None, :]
    if jnp.ndim(x) != 2 or x.shape[-1] != d:
        raise ValueError(
            f"{name} must have shape (H, d) or (d,) with d = {d}, got shape {jnp.shape(x)}"
        )
    check_finite(x, name)
    check_unit_norm(x, name)
    return x


def batch_loss(
    K: ArrayLike,
    V: ArrayLike,
    X: ArrayLike,
    y: ArrayLike,
    lam: float,
    attention: Literal["erf", "softmax"] = "erf",
) -> jax.Array:
    r"""The empirical risk of a batch, :math:`\frac1B\sum_b (T_\lambda(\mathbb X_b) - Y_b)^2`.

    The predictor :math:`T_\lambda` is (31) (with one head, (3)):

    .. math::

        T_\lambda(\mathbb X) = \sum_{h=1}^H \sum_{\ell=1}^L
        \operatorname{erf}(\lambda X_\ell^\top k_h)\, X_\ell^\top v_h,

    or with ``attention="softmax"`` softmax attention (2), summed over heads:
    :math:`T_\lambda(\mathbb X) = \sum_h \sum_\ell \operatorname{softmax}(\lambda \mathbb X k_h)_\ell\, X_\ell^\top v_h`.

    Parameters
    ----------
    K, V : array_like, shape (H, d) or (d,)
        Unit directions, one row per head ((d,) for one head).
    X : array_like, shape (B, L, d)
        Tokens of the batch.
    y : array_like, shape (B,)
        Outputs of the batch.
    lam : float
        Inverse temperature :math:`\lambda \ge 0`.
    attention : {"erf", "softmax"}
        The predictor: erf attention (3)/(31) (default) or softmax attention (2).

    Returns
    -------
    jax.Array
        The batch loss (a scalar).

    Raises
    ------
    ValueError
        When a shape is wrong, a direction is not a finite unit vector, ``lam`` is not a real
        number ``>= 0``, or ``attention`` is not one of :data:`ATTENTIONS`.
    """
    X = as_float_array(X, "X")
    if jnp.ndim(X) != 3:
        raise ValueError(
            f"X must have shape (B, L, d), got shape {jnp.shape(X)}"
        )
    d = X.shape[-1]
    K = _heads(K, "K", d)
    V = _heads(V, "V", d)
    y = as_float_array(y, "y")
    if jnp.shape(y) != X.shape[:1]:
        raise ValueError(
            f"y must have shape (B,) = ({X.shape[0]},), got shape {jnp.shape(y)}"
        )
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    return _batch_loss(K, V, X, y, lam, _check_attention(attention))


def batch_gradient(
    K: ArrayLike,
    V: ArrayLike,
    X: ArrayLike,
    y: ArrayLike,
    lam: float,
    attention: Literal["erf", "softmax"] = "erf",
) -> tuple[jax.Array, jax.Array]:
    """Euclidean gradient of :func:`batch_loss` in ``(K, V)`` (by ``jax.grad``).

    Parameters
    ----------
    K, V, X, y, lam, attention
        As in :func:`batch_loss`.

    Returns
    -------
    grad_K, grad_V : jax.Array, shape (H, d)
        The gradients in ``K`` and in ``V``.

    Raises
    ------
    ValueError
        As :func:`batch_loss`.
    """
    batch_loss(K, V, X, y, lam, attention)  # validation
    K = _heads(K, "K", X.shape[-1])
    V = _heads(V, "V", X.shape[-1])
    return jax.grad(_batch_loss, argnums=(0, 1))(
        K, V, jnp.asarray(X, float), jnp.asarray(y, float), lam, attention
    )


# ------------------------------------------------------------------------------ samplers
def _sigmas(L, M, gamma):
    """Standard deviation of each token around its mean: gamma for the M relevant ones (first)."""
    return jnp.where(jnp.arange(L) < M, gamma, 1.0)


def _orthonormal_span(vectors, tol=1e-10, basis=()):
    r"""Columns spanning a space that contains ``vectors`` (rows, (D, d)): Gram–Schmidt, twice.

    A vector already in the span of the previous ones gives a zero column, so the result is
    ``Q`` (d, D) with orthonormal or zero columns and :math:`QQ^\top` the orthogonal projector
    onto the span. (Unrolled: D is at most a few units; faster than LAPACK's QR on CPU here.)
    """
    cols = list(basis)
    for x in vectors:
        for _ in range(2):
            for q in cols:
                x = x - jnp.dot(q, x) * q
        n = jnp.linalg.norm(x)
        cols.append(jnp.where(n > tol, x / jnp.where(n > tol, n, 1.0), 0.0))
    return jnp.stack(cols, axis=1)


def _gram_factor(S):
    """A lower-triangular ``F`` with ``F F^T = S`` for a small positive semi-definite ``S``.

    Cholesky, unrolled, with a zero pivot (a column dependent on the previous ones) giving a
    zero column instead of NaN.
    """
    k = S.shape[0]
    F = [[0.0] * k for _ in range(k)]
    for j in range(k):
        djj = S[j, j] - sum(F[j][m] ** 2 for m in range(j))
        fjj = jnp.sqrt(jnp.maximum(djj, 0.0))
        safe = jnp.where(fjj > 0, fjj, 1.0)
        F[j][j] = fjj
        for i in range(j + 1, k):
            F[i][j] = jnp.where(
                fjj > 0,
                (S[i, j] - sum(F[i][m] * F[j][m] for m in range(j))) / safe,
                0.0,
            )
    return jnp.stack(
        [
            jnp.stack([jnp.asarray(F[i][j], S.dtype) for j in range(k)])
            for i in range(k)
        ]
    )


def _normal(key, shape, dtype):
    """Standard normals drawn in float32 (half the random bits of float64), returned in ``dtype``."""
    return jax.random.normal(key, shape, jnp.float32).astype(dtype)


def _star_basis(Ks, Vs):
    """Orthonormal columns spanning the task's directions (fixed along a run): (d, 2M)."""
    Q = _orthonormal_span(jnp.concatenate([Ks, Vs], axis=0))
    return [Q[:, i] for i in range(Q.shape[1])]


def exact_sampler_draws(B: int, L: int, H: int, M: int, d: int) -> int:
    r"""How many standard normals the exact sampler draws for one batch (``sampler="exact"``).

    A batch enters the loss only through the tokens' coordinates on the
    :math:`D = 2H + 2M` directions :math:`k_h, v_h, k_m^\star, v_m^\star`, plus one output
    noise per sample and a :math:`2H \times d` Gaussian matrix for the part of the gradient
    orthogonal to them: :math:`B L D + B + 2 H d` normals, rounded up to a multiple of 8
    (JAX's Threefry draws some sizes several times slower). The plain sampler draws
    :math:`B L d + B + B L`.

    Parameters
    ----------
    B, L, H, M, d : int
        Batch size, sequence length, heads, relevant locations, dimension.

    Returns
    -------
    int
        The number of standard normals.
    """
    n = B * L * (2 * H + 2 * M) + B + 2 * H * d
    return -(-n // 8) * 8


def _exact_batch(K, V, Ks, Vs, z, B, L, gamma, eps, star_basis=None):
    """What the exact sampler draws for one batch, from ``z``: ``exact_sampler_draws(...)`` standard normals.

    Returns the basis ``Q`` (d, D), the token coordinates ``a`` (B, L, D) in it (relevant
    tokens first), the outputs ``y`` (B,), the standard normal matrix ``Z`` (2H, d) for the
    orthogonal part, and each token's standard deviation ``sigma`` (L,)."""
    H, d = K.shape
    M = Ks.shape[0]
    if star_basis is None:
        star_basis = _star_basis(Ks, Vs)
    Q = _orthonormal_span(jnp.concatenate([K, V], axis=0), basis=star_basis)
    D = Q.shape[1]
    # z holds the token coordinates in span Q, the output noise, and the 2H x d Gaussian
    # matrix of the orthogonal part.
    n_a = B * L * D
    sigma = _sigmas(L, M, gamma)
    a = sigma[:, None] * z[:n_a].reshape(B, L, D)
    a = a.at[:, :M, :].add(math.sqrt(d / 2.0) * (Ks @ Q))
    y = jnp.einsum("bmD,mD->b", a[:, :M, :], Vs @ Q) + eps * z[n_a : n_a + B]
    return Q, a, y, z[n_a + B : n_a + B + 2 * H * d].reshape(2 * H, d), sigma


def _coefficients(a, y, Kc, Vc, lam, attention="erf"):
    """``c = d(loss)/d(projections)`` for the batch loss mean_b (sum_{l,h} w_{blh} a.v_h - y_b)^2:
    ``(ck, cv)``, each (B, L, H), from the coordinates ``a`` and the directions' coordinates
    (formulas in the module docstring)."""
    B = a.shape[0]
    Sk = jnp.einsum("blD,hD->blh", a, Kc)
    Sv = jnp.einsum("blD,hD->blh", a, Vc)
    if attention == "softmax":
        p = jax.nn.softmax(lam * Sk, axis=1)
        T = jnp.sum(
            p * Sv, axis=1, keepdims=True
        )  # (B, 1, H): each head's prediction
        r = (2.0 / B) * (jnp.sum(T, axis=(1, 2)) - y)[:, None, None]
        return r * lam * p * (Sv - T), r * p
    e = erf(lam * Sk)
    r = (2.0 / B) * (jnp.sum(e * Sv, axis=(1, 2)) - y)[:, None, None]
    ck = (
        r
        * (2.0 * lam / math.sqrt(math.pi))
        * jnp.exp(-jnp.square(lam * Sk))
        * Sv
    )
    return ck, r * e


def _exact_gradient(
    K, V, Ks, Vs, lam, z, B, L, gamma, eps, star_basis=None, attention="erf"
):
    """One batch gradient drawn with the exact low-dimensional sampler.

    The sampler is the module docstring's; ``z`` holds its
    ``exact_sampler_draws(B, L, H, M, d)`` standard normals.
    """
    H = K.shape[0]
    Q, a, y, Z, sigma = _exact_batch(
        K, V, Ks, Vs, z, B, L, gamma, eps, star_basis
    )
    ck, cv = _coefficients(a, y, K @ Q, V @ Q, lam, attention)
    C = jnp.concatenate([ck, cv], axis=-1)  # (B, L, 2H)
    span = (
        jnp.einsum("blp,blD->pD", C, a) @ Q.T
    )  # (2H, d): the part of the gradient in span Q
    Cs = (sigma[None, :, None] * C).reshape(B * L, 2 * H)
    G = _gram_factor(Cs.T @ Cs) @ Z  # law N(0, Cs^T Cs (x) I_d)
    grad = span + G - (G @ Q) @ Q.T
    return grad[:H], grad[H:]


def _plain_gradient(
    K, V, Ks, Vs, lam, key, B, L, gamma, eps, log_pi, attention="erf"
):
    """One batch gradient from a whole batch drawn from the task (the reference sampler)."""
    d = K.shape[1]
    if Ks.shape[0] == 1 and log_pi is not None:
        X, y, _ = sample_kernel(key, B, L, d, Ks[0], Vs[0], gamma, eps, log_pi)
    else:
        X, y, _ = multi_sample_kernel(key, B, L, d, Ks, Vs, gamma, eps)
    return jax.grad(_batch_loss, argnums=(0, 1))(K, V, X, y, lam, attention)


def _task_arrays(task, K_star, V_star):
    if isinstance(task, SLRTask):
        k_star, v_star = task.check_directions(K_star, V_star)
        return k_star[None, :], v_star[None, :], jnp.log(task.pi)
    if isinstance(task, MultiLocationTask):
        K_star, V_star = task.check_directions(K_star, V_star)
        return K_star, V_star, None
    raise ValueError(
        f"task must be an SLRTask or a MultiLocationTask, got {type(task).__name__}: {task!r}"
    )


def _check_sampler(sampler):
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    return sampler


def sample_gradient(
    K: ArrayLike,
    V: ArrayLike,
    K_star: ArrayLike,
    V_star: ArrayLike,
    task: SLRTask | MultiLocationTask,
    *,
    lam: float,
    key: jax.Array,
    batch_size: int,
    sampler: Literal["exact", "plain"] = "exact",
    attention: Literal["erf", "softmax"] = "erf",
) -> tuple[jax.Array, jax.Array]:
    r"""One draw of the batch gradient :math:`(\nabla_K \widehat{\mathcal R}, \nabla_V \widehat{\mathcal R})`.

    The two samplers give gradients with the same law.

    Parameters
    ----------
    K, V : array_like, shape (H, d) or (d,)
        Unit directions, one row per head.
    K_star, V_star : array_like
        (d,) for an :class:`SLRTask`, (M, d) for a :class:`MultiLocationTask`.
    task : SLRTask or MultiLocationTask
        The task.
    lam : float
        Inverse temperature :math:`\lambda \ge 0`.
    key : jax.Array
        A ``jax.random`` key.
    batch_size : int
        Samples per batch, ``B >= 1``.
    sampler : {"exact", "plain"}
        ``"exact"`` (low-dimensional, see the module docstring) or ``"plain"`` (a whole batch,
        then ``jax.grad``): the two laws are equal.
    attention : {"erf", "softmax"}
        The predictor: erf attention (3)/(31) (default) or softmax attention (2).

    Returns
    -------
    grad_K, grad_V : jax.Array, shape (H, d)
        The gradients of the batch loss in ``K`` and in ``V``.

    Raises
    ------
    ValueError
        When ``task`` is neither an :class:`SLRTask` nor a :class:`MultiLocationTask`, ``sampler``
        or ``attention`` is unknown, or another argument is invalid.
    """
    key = check_key(key)
    attention = _check_attention(attention)
    Ks, Vs, log_pi = _task_arrays(task, K_star, V_star)
    K = _heads(K, "K", task.d)
    V = _heads(V, "V", task.d)
    B = check_positive_int(batch_size, "batch_size")
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    if _check_sampler(sampler) == "exact":
        z = _normal(
            key,
            (exact_sampler_draws(B, task.L, K.shape[0], Ks.shape[0], task.d),),
            K.dtype,
        )
        return _exact_gradient(
            K,
            V,
            Ks,
            Vs,
            lam,
            z,
            B,
            task.L,
            task.gamma,
            task.eps,
            attention=attention,
        )
    return _plain_gradient(
        K,
        V,
        Ks,
        Vs,
        lam,
        key,
        B,
        task.L,
        task.gamma,
        task.eps,
        log_pi,
        attention,
    )


# ------------------------------------------------------------------------------ schedule
def lam_schedule(
    lam: float,
    t: ArrayLike,
    decay: float = 0.0,
    freeze_after: float | None = None,
) -> jax.Array:
    r"""The inverse-temperature schedule of stochastic PGD, with optional freezing.

    .. math::

        \lambda_t = \lambda_0 / (1 + \text{decay}\cdot\min(t, t_{\rm freeze})).

    ``decay = 1e-4`` without freezing is the paper's schedule (Figure 5); Figure 9 uses
    ``decay = 2e-4`` frozen after 25 000 steps (authors' code).

    Parameters
    ----------
    lam : float
        :math:`\lambda_0`.
    t : array_like
        Step indices; may be an array.
    decay : float
        The decay rate.
    freeze_after : float, optional
        :math:`t_{\rm freeze}`; ``None`` (default) never freezes.

    Returns
    -------
    jax.Array
        :math:`\lambda_t`, of the shape of ``t``.
    """
    t = jnp.asarray(t, float)
    if freeze_after is not None:
        t = jnp.minimum(t, freeze_after)
    return lam / (1.0 + decay * t)


# ------------------------------------------------------------------------------ the loop
def _sphere_step(x, g, alpha):
    g = g - jnp.sum(g * x, axis=-1, keepdims=True) * x
    x = x - alpha * g
    return x / jnp.linalg.norm(x, axis=-1, keepdims=True)


@partial(
    jax.jit,
    static_argnames=("B", "L", "sampler", "log_every", "n_log", "attention"),
)
def _sgd_loop(
    K0,
    V0,
    Ks,
    Vs,
    key,
    X_test,
    y_test,
    lam0,
    decay,
    freeze,
    alpha,
    gamma,
    eps,
    log_pi,
    *,
    B,
    L,
    sampler,
    log_every,
    n_log,
    attention="erf",
):
    def lam_at(t):
        return lam0 / (1.0 + decay * jnp.minimum(t, freeze))

    star_basis = jax.vmap(_star_basis)(
        Ks, Vs
    )  # once per run, outside the loop

    R, H, d = K0.shape
    n_draws = exact_sampler_draws(B, L, H, Ks.shape[1], d)

    def grads(K, V, t, lam):
        # One draw for all runs per step: small draws cost mostly overhead (run r's numbers
        # are row r of the draw).
        step_key = jax.random.fold_in(key, t)
        if sampler == "exact":
            z = _normal(step_key, (R, n_draws), K.dtype)
            return jax.vmap(
                lambda K, V, ks, vs, basis, z: _exact_gradient(
                    K, V, ks, vs, lam, z, B, L, gamma, eps, basis, attention
                )
            )(K, V, Ks, Vs, star_basis, z)
        keys = jax.random.split(step_key, R)
        return jax.vmap(
            lambda K, V, ks, vs, k: _plain_gradient(
                K, V, ks, vs, lam, k, B, L, gamma, eps, log_pi, attention
            )
        )(K, V, Ks, Vs, keys)

    def log(K, V, t):
        lam = lam_at(t)
        # The held-out tokens are stored in float32 (30 runs x 1000 x 10 x 80 would be 192 MB in
        # float64): project them in float32, finish in float64.
        c = X_test.dtype
        pred = jax.vmap(_predict, in_axes=(0, 0, 0, None, None))(
            X_test, K.astype(c), V.astype(c), lam.astype(c), attention
        )
        risk = jnp.mean(
            jnp.square(pred.astype(y_test.dtype) - y_test), axis=-1
        )
        dot = lambda A, Bm: jnp.einsum("rhd,rmd->rhm", A, Bm)  # noqa: E731
        return (
            lam,
            dot(K, Ks),
            dot(V, Vs),
            dot(V, Ks),
            dot(K, Vs),
            jnp.sum(K * V, -1),
            risk,
        )

    def interval(state, i):
        def body(j, kv):
            K, V = kv
            t = i * log_every + j
            gK, gV = grads(K, V, t, lam_at(t))
            return _sphere_step(K, gK, alpha), _sphere_step(V, gV, alpha)

        K, V = jax.lax.fori_loop(0, log_every, body, state)
        return (K, V), log(K, V, (i + 1) * log_every)

    first = log(K0, V0, 0)
    (K, V), logs = jax.lax.scan(interval, (K0, V0), jnp.arange(n_log))
    logs = tuple(
        jnp.concatenate([f[None], g], axis=0) for f, g in zip(first, logs)
    )
    return logs, K, V


def sgd(
    k0: ArrayLike,
    v0: ArrayLike,
    k_star: ArrayLike,
    v_star: ArrayLike,
    task: SLRTask | MultiLocationTask,
    *,
    lam: float,
    alpha: float,
    n_steps: int,
    batch_size: int,
    key: jax.Array,
    decay: float = 0.0,
    freeze_after: int | None = None,
    log_every: int = 1,
    test_size: int = 1000,
    sampler: Literal["exact", "plain"] = "exact",
    attention: Literal["erf", "softmax"] = "erf",
) -> SGDResult:
    r"""Stochastic PGD on the empirical risk, many independent runs at once.

    Each step draws a fresh batch of ``batch_size`` samples per run, takes the gradient of the
    batch loss (:func:`batch_loss`) and moves every direction on its sphere:
    :math:`p \leftarrow (p - \alpha (I - pp^\top) g_p)/\|\cdot\|` (Definition 1, eq. 10, with the
    batch gradient), with :math:`\lambda_t` from :func:`lam_schedule`.

    Parameters
    ----------
    k0, v0 : array_like, shape (runs, H, d)
        Unit initial directions (one head: (runs, d) is accepted).
    k_star, v_star : array_like
        Per-run task directions: (runs, d) for an :class:`SLRTask`, (runs, M, d) for a
        :class:`MultiLocationTask` (shapes without the run axis broadcast).
    task : SLRTask or MultiLocationTask
        The task.
    lam, alpha : float
        :math:`\lambda_0 > 0` and the step size :math:`\alpha > 0`.
    n_steps, batch_size : int
        Number of steps and samples per batch.
    key : jax.Array
        A ``jax.random`` key. Splits into one key per run for the batches and one per run for
        the held-out set.
    decay : float
        The schedule's decay rate (:func:`lam_schedule`), ``>= 0``.
    freeze_after : int, optional
        The step after which :math:`\lambda_t` stays constant (:func:`lam_schedule`).
    log_every : int
        Must divide ``n_steps``; step 0 is logged too.
    test_size : int
        Held-out samples per run, drawn once from the task (stored in float32).
    sampler : {"exact", "plain"}
        How batch gradients are drawn (module docstring); same law, "exact" is ~10× cheaper.
    attention : {"erf", "softmax"}
        The predictor: erf attention (3)/(31) (default, the paper's) or softmax attention (2),
        summed over heads when there are several. The held-out risk uses the same predictor.

    Returns
    -------
    SGDResult
        The logged overlaps, :math:`\lambda_t` and held-out risk, and the final directions.

    Raises
    ------
    ValueError
        When ``task`` is neither an :class:`SLRTask` nor a :class:`MultiLocationTask`, a shape is
        wrong, ``log_every`` does not divide ``n_steps``, ``attention`` is not one of
        :data:`ATTENTIONS`, or another argument is invalid.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, manifold_directions, recovered, sgd
    >>> task = SLRTask(d=20, L=5)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> K0, V0 = manifold_directions(jax.random.key(1), k_star, v_star, (4,))
    >>> res = sgd(K0, V0, k_star, v_star, task, lam=0.1, alpha=0.05,
    ...           n_steps=500, batch_size=32, key=jax.random.key(2),
    ...           log_every=100, test_size=200)
    >>> res.kappa.shape  # (runs, heads, locations, logged steps)
    (4, 1, 1, 6)
    >>> bool(recovered(res).all())
    True
    """
    key = check_key(key)
    attention = _check_attention(attention)
    if not isinstance(task, (SLRTask, MultiLocationTask)):
        raise ValueError(
            f"task must be an SLRTask or a MultiLocationTask, got {type(task).__name__}: {task!r}"
        )
    sampler = _check_sampler(sampler)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    decay = check_real_scalar(decay, "decay", minimum=0.0)
    n_steps = check_positive_int(n_steps, "n_steps")
    B = check_positive_int(batch_size, "batch_size")
    log_every = check_positive_int(log_every, "log_every")
    test_size = check_positive_int(test_size, "test_size")
    if n_steps % log_every:
        raise ValueError(
            f"log_every must divide n_steps = {n_steps}, got {log_every}"
        )
    freeze = (
        float("inf")
        if freeze_after is None
        else float(check_positive_int(freeze_after, "freeze_after"))
    )
    d, L = task.d, task.L
    M = 1 if isinstance(task, SLRTask) else task.M

    k0 = as_float_array(k0, "k0")
    v0 = as_float_array(v0, "v0")
    if jnp.ndim(k0) == 2:
        k0 = k0[:, None, :]
    if jnp.ndim(v0) == 2:
        v0 = v0[:, None, :]
    for name, x in (("k0", k0), ("v0", v0)):
        if jnp.ndim(x) != 3 or x.shape[-1] != d:
            raise ValueError(
                f"{name} must have shape (runs, H, d) with d = {d}, got shape {jnp.shape(x)}"
            )
        check_finite(x, name)
        check_unit_norm(x, name)
    if k0.shape != v0.shape:
        raise ValueError(
            f"k0 and v0 must have the same shape, got {k0.shape} and {v0.shape}"
        )
    R = k0.shape[0]
    stars = []
    for name, x in (("k_star", k_star), ("v_star", v_star)):
        x = as_float_array(x, name)
        per_run = (d,) if M == 1 else (M, d)
        if tuple(jnp.shape(x)) not in (per_run, (R,) + per_run):
            raise ValueError(
                f"{name} must have shape {per_run} or (runs,) + {per_run} with runs = {R}, "
                f"got shape {jnp.shape(x)}"
            )
        stars.append(
            jnp.broadcast_to(
                jnp.reshape(x, x.shape[:-1] + (1, d)) if M == 1 else x,
                (R, M, d),
            )
        )
    Ks, Vs = stars
    for r in range(
        R
    ):  # validation of every run's directions (cheap: R is small)
        _task_arrays(
            task, Ks[r] if M > 1 else Ks[r, 0], Vs[r] if M > 1 else Vs[r, 0]
        )
    log_pi = jnp.log(task.pi) if isinstance(task, SLRTask) else None

    run_key, test_key = jax.random.split(key)
    test = jax.vmap(
        (
            lambda k, ks, vs: sample_kernel(
                k, test_size, L, d, ks[0], vs[0], task.gamma, task.eps, log_pi
            )[:2]
        )
        if M == 1 and log_pi is not None
        else (
            lambda k, ks, vs: multi_sample_kernel(
                k, test_size, L, d, ks, vs, task.gamma, task.eps
            )[:2]
        )
    )(jax.random.split(test_key, R), Ks, Vs)
    X_test, y_test = test[0].astype(jnp.float32), test[1]

    n_log = n_steps // log_every
    # Random bits are the main cost of a step on CPU; JAX's non-partitionable threefry layout
    # draws them ~2x faster here (same generator and keys, another arrangement of the bits).
    with jax.threefry_partitionable(False):
        logs, K, V = _sgd_loop(
            k0,
            v0,
            Ks,
            Vs,
            run_key,
            X_test,
            y_test,
            lam,
            decay,
            freeze,
            alpha,
            task.gamma,
            task.eps,
            log_pi,
            B=B,
            L=L,
            sampler=sampler,
            log_every=log_every,
            n_log=n_log,
            attention=attention,
        )
    lam_log, kappa, nu, theta, eta, rho, risk = (np.asarray(x) for x in logs)
    move = lambda x: np.moveaxis(x, 0, -1)  # noqa: E731  (logs, runs, ...) -> (runs, ..., logs)
    return SGDResult(
        steps=np.arange(n_log + 1) * log_every,
        lam=lam_log,
        kappa=move(kappa),
        nu=move(nu),
        theta=move(theta),
        eta=move(eta),
        rho=move(rho),
        risk=move(risk),
        k=np.asarray(K),
        v=np.asarray(V),
    )
