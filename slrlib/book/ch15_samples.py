r"""Learning from :math:`n` samples (chapter 15): empirical risk minimisation by full-batch PGD.

The paper studies projected gradient descent (Definition 1, eq. 10) on the *population* risk
:math:`\mathcal R_\lambda` of erf attention (3). Here the risk is replaced by the empirical risk of
one fixed sample :math:`(\mathbb X_i, Y_i)_{i \le n}` of the task,

.. math::

    \widehat{\mathcal R}_n(k, v) = \frac1n\sum_{i=1}^n \big(T^{(k,v)}_\lambda(\mathbb X_i) - Y_i\big)^2,
    \qquad T^{(k,v)}_\lambda(\mathbb X) = \sum_{\ell=1}^L \operatorname{erf}(\lambda X_\ell^\top k)\,X_\ell^\top v,

and the iteration of (10) is run on it with every sample used at every step (full batch). The
*test* risk of the learned :math:`(k, v)` is exact: it is the population risk
:math:`\mathcal R_\lambda(k, v)` of Theorem 1, a function of the five overlaps
(:func:`slrlib.core.risk.risk_kernel`).

* :func:`empirical_gradient` — the Riemannian (projected) gradient of :math:`\widehat{\mathcal R}_n`,
  written out by hand (one pass over the tokens for the forward and one for the backward);
* :func:`erm_pgd` — many samples and many runs per sample in one compiled program: each sample is
  drawn *inside* the program from its own key (:func:`slrlib.core.task.sample_kernel`), samples are
  processed one after another (``jax.lax.map``, memory of one sample at a time) and the runs of a
  sample advance together (``jax.vmap`` in effect: a matrix product over the runs) in a
  ``jax.lax.fori_loop``; logs the overlaps, the train risk and the exact test risk;
* :func:`erm_lbfgs` — the same minimisation by Riemannian L-BFGS, which handles the stiff direction that makes
  PGD's number of steps grow like :math:`d` (its own cost to a fixed gradient reduction still grows with
  :math:`d`, more slowly: chapter 15 measures it);
* :func:`erm_pgd_reference` — one run written literally (a Python loop, the gradient by ``jax.grad``
  of :func:`slrlib.training.sgd.batch_loss`), the reference that :func:`erm_pgd` is tested against;
* :func:`ridge_fit`, :func:`linear_learning_curve`, :func:`ridge_population_weights` — least squares
  and ridge for the linear predictor on the same kind of samples, scored by the exact risk of any
  weight matrix (:func:`slrlib.book.ch05_linear.linear_risk_of_weights`);
* :func:`samples_needed` — the smallest :math:`n/d` at which the median overlaps reach a level,
  interpolated on a grid.
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple, Sequence

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
from slrlib.core.gaussian import erf_prime
from slrlib.core.risk import risk_kernel
from slrlib.core.task import (
    SLRTask,
    check_directions,
    check_task,
    sample_kernel,
)
from slrlib.training.sgd import batch_gradient, batch_loss
from slrlib.book.ch05_linear import linear_risk_of_weights

__all__ = [
    "ERMResult",
    "empirical_gradient",
    "erm_pgd",
    "erm_pgd_reference",
    "LBFGSResult",
    "erm_lbfgs",
    "tangent_hessian",
    "GRAD_REDUCTION",
    "sign_fixed_overlaps",
    "ridge_fit",
    "ridge_population_weights",
    "LinearCurve",
    "linear_learning_curve",
    "samples_needed",
]


# ------------------------------------------------------------------------------ the gradient
def _loss_and_grads(K, V, X, y, lam, w=None):
    r"""Empirical risk of each run and its Euclidean gradients, by hand.

    ``K, V`` (R, d) one row per run; ``X`` (n, L, d); ``y`` (n,); ``w`` (n, R) the weight of each sequence in
    each run's risk (default :math:`1/n`: the first :math:`n_r` sequences with weight :math:`1/n_r` give run
    :math:`r` the empirical risk of the nested sub-sample of size :math:`n_r`). With
    :math:`s_{i\ell} = X_{i\ell}^\top k`, :math:`u_{i\ell} = X_{i\ell}^\top v`, residual
    :math:`r_i = \sum_\ell \operatorname{erf}(\lambda s_{i\ell})u_{i\ell} - Y_i`:
    :math:`\nabla_k = 2\sum_{i\ell} w_i r_i\lambda\operatorname{erf}'(\lambda s_{i\ell})u_{i\ell}X_{i\ell}`,
    :math:`\nabla_v = 2\sum_{i\ell} w_i r_i\operatorname{erf}(\lambda s_{i\ell})X_{i\ell}`.
    """
    n, L, d = X.shape
    R = K.shape[0]
    if w is None:
        w = jnp.full((n, R), 1.0 / n)
    Xf = X.reshape(n * L, d)
    P = (
        Xf @ jnp.concatenate([K, V], axis=0).T
    )  # (nL, 2R): one pass over the tokens
    S, U = P[:, :R].reshape(n, L, R), P[:, R:].reshape(n, L, R)
    E = erf(lam * S)
    r = jnp.sum(E * U, axis=1) - y[:, None]  # (n, R)
    loss = jnp.sum(w * r * r, axis=0)
    c = (2.0 * w * r)[:, None, :]
    C = jnp.concatenate(
        [c * lam * erf_prime(lam * S) * U, c * E], axis=-1
    ).reshape(n * L, 2 * R)
    G = C.T @ Xf  # (2R, d): the second pass
    return loss, G[:R], G[R:]


def _tangent(K, Z):
    r"""Projection of the rows of ``Z`` onto the tangent spaces of the sphere at the rows of ``K``:
    :math:`z - \langle k, z\rangle k`."""
    return Z - jnp.sum(K * Z, axis=-1, keepdims=True) * K


def _project_step(K, V, gK, gV, alpha):
    """One step of eq. (10) for the rows of ``K``, ``V``.

    Tangent projection, step, normalisation.
    """
    gK, gV = _tangent(K, gK), _tangent(V, gV)
    K = K - alpha * gK
    V = V - alpha * gV
    return K / jnp.linalg.norm(K, axis=-1, keepdims=True), V / jnp.linalg.norm(
        V, axis=-1, keepdims=True
    )


def _check_tokens(X, y):
    X = as_float_array(X, "X")
    if jnp.ndim(X) != 3:
        raise ValueError(
            f"X must have shape (n, L, d), got shape {jnp.shape(X)}"
        )
    check_finite(X, "X")
    y = as_float_array(y, "y")
    if jnp.shape(y) != X.shape[:1]:
        raise ValueError(
            f"y must have shape (n,) = ({X.shape[0]},), got shape {jnp.shape(y)}"
        )
    check_finite(y, "y")
    return X, y


def _check_unit(x, name, d):
    x = as_float_array(x, name)
    if jnp.shape(x) != (d,):
        raise ValueError(
            f"{name} must have shape (d,) = ({d},), got shape {jnp.shape(x)}"
        )
    check_finite(x, name)
    check_unit_norm(x, name)
    return x


def empirical_gradient(
    k: ArrayLike, v: ArrayLike, X: ArrayLike, y: ArrayLike, lam: float
) -> tuple[jax.Array, jax.Array, jax.Array]:
    r"""The empirical risk and its Riemannian gradients on :math:`\mathbb S^{d-1}\times\mathbb S^{d-1}`.

    .. math::

        \widehat{\mathcal R}_n(k, v) = \frac1n\sum_i r_i^2,\quad
        r_i = \sum_\ell \operatorname{erf}(\lambda X_{i\ell}^\top k)X_{i\ell}^\top v - Y_i,\qquad
        \operatorname{grad}_k = (I - kk^\top)\nabla_k\widehat{\mathcal R}_n,\quad
        \operatorname{grad}_v = (I - vv^\top)\nabla_v\widehat{\mathcal R}_n,

    with :math:`\nabla_k = \frac2n\sum_{i,\ell} r_i\,\lambda\operatorname{erf}'(\lambda X_{i\ell}^\top k)
    (X_{i\ell}^\top v)\,X_{i\ell}` and :math:`\nabla_v = \frac2n\sum_{i,\ell} r_i\operatorname{erf}(\lambda X_{i\ell}^\top k)X_{i\ell}`:
    the direction of one step of Definition 1 (eq. 10) with the empirical risk in place of the population risk.

    Parameters
    ----------
    k, v : array_like, shape (d,)
        Unit vectors.
    X : array_like, shape (n, L, d)
        Tokens of the sample.
    y : array_like, shape (n,)
        Outputs of the sample.
    lam : float
        Inverse temperature :math:`\lambda \ge 0`.

    Returns
    -------
    loss : jax.Array
        :math:`\widehat{\mathcal R}_n(k, v)` (a scalar).
    grad_k, grad_v : jax.Array, shape (d,)
        The Riemannian gradients (tangent to each sphere).

    Raises
    ------
    ValueError
        When a shape is wrong, ``k`` or ``v`` is not a finite unit vector, ``X`` or ``y`` is not finite, or
        ``lam`` is not a real number ``>= 0``.
    """
    X, y = _check_tokens(X, y)
    d = X.shape[-1]
    k = _check_unit(k, "k", d)
    v = _check_unit(v, "v", d)
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    loss, gk, gv = _loss_and_grads(k[None], v[None], X, y, lam)
    gk, gv = gk[0], gv[0]
    return loss[0], gk - jnp.dot(k, gk) * k, gv - jnp.dot(v, gv) * v


# ------------------------------------------------------------------------------ ERM by PGD
class ERMResult(NamedTuple):
    r"""Logged trajectories of :func:`erm_pgd`; the last axis indexes the logged steps (0 included).

    ``steps`` (n_log + 1,); ``ns`` the sample sizes; the overlaps ``kappa, nu, theta, eta, rho``, the
    empirical risk ``train_risk`` :math:`\widehat{\mathcal R}_n(k_t, v_t)` and the exact ``test_risk``
    :math:`\mathcal R_\lambda(k_t, v_t)` (Theorem 1) have shape (samples, len(ns), runs, n_log + 1);
    ``k``, ``v`` (samples, len(ns), runs, d) are the final iterates.
    """

    steps: np.ndarray
    ns: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    theta: np.ndarray
    eta: np.ndarray
    rho: np.ndarray
    train_risk: np.ndarray
    test_risk: np.ndarray
    k: np.ndarray
    v: np.ndarray


def _check_erm_inputs(task, k_star, v_star, keys, k0, v0, ns):
    """Validate the arguments that :func:`erm_pgd` and :func:`erm_lbfgs` share; directions broadcast to (samples, d)."""
    d = task.d
    try:
        is_keys = (
            jnp.issubdtype(keys.dtype, jax.dtypes.prng_key)
            and jnp.ndim(keys) == 1
        )
    except AttributeError:
        is_keys = False
    if not is_keys:
        raise ValueError(
            f"keys must be a one-dimensional array of jax.random keys (jax.random.split(key, S)), "
            f"got {type(keys).__name__} of shape {jnp.shape(keys)}"
        )
    S = keys.shape[0]
    k0 = task.check_parameter_vector(k0, "k0")
    v0 = task.check_parameter_vector(v0, "v0")
    for x, name in ((k0, "k0"), (v0, "v0")):
        if jnp.ndim(x) != 3 or x.shape[0] != S:
            raise ValueError(
                f"{name} must have shape (samples, runs, d) = ({S}, runs, {d}), got shape {jnp.shape(x)}"
            )
    if k0.shape != v0.shape:
        raise ValueError(
            f"k0 and v0 must have the same shape, got {k0.shape} and {v0.shape}"
        )
    k_star, v_star = check_directions(k_star, v_star, d, batched=True)
    if k_star.ndim == 1:
        k_star, v_star = (
            jnp.broadcast_to(k_star, (S, d)),
            jnp.broadcast_to(v_star, (S, d)),
        )
    elif k_star.shape != (S, d):
        raise ValueError(
            f"k_star and v_star must have shape (d,) or (samples, d) = ({S}, {d}), got {k_star.shape}"
        )
    try:
        ns = [check_positive_int(n, "ns entry") for n in ns]
    except TypeError:
        raise ValueError(
            f"ns must be a sequence of sample sizes >= 1, got {ns!r}"
        ) from None
    if not ns:
        raise ValueError(
            "ns must hold at least one sample size, got an empty sequence"
        )
    return keys, k_star, v_star, k0, v0, ns


@partial(
    jax.jit,
    static_argnames=("ns", "L", "d", "n_log", "log_every", "batch_size"),
)
def _erm_kernel(
    keys,
    k_star,
    v_star,
    K0,
    V0,
    lam,
    alpha,
    gamma,
    eps,
    log_pi,
    *,
    ns,
    L,
    d,
    n_log,
    log_every,
    batch_size,
):
    m = len(ns)
    R = K0.shape[1]

    def one_sample(args):
        key, ks, vs, K, V = args
        X, y, _ = sample_kernel(key, max(ns), L, d, ks, vs, gamma, eps, log_pi)
        # size j trains on the first ns[j] sequences (nested samples): static slices, so each size
        # pays for its own sequences only
        data = [(X[:n], y[:n]) for n in ns]
        K, V = jnp.tile(K, (m, 1, 1)), jnp.tile(V, (m, 1, 1))  # (m, R, d)

        def ovl(K, V):
            return jnp.stack(
                [K @ ks, V @ vs, V @ ks, K @ vs, jnp.sum(K * V, axis=-1)]
            )  # (5, m, R)

        def grads(K, V):
            out = [
                _loss_and_grads(K[j], V[j], Xj, yj, lam)
                for j, (Xj, yj) in enumerate(data)
            ]
            return tuple(
                jnp.stack(z) for z in zip(*out)
            )  # loss (m, R), gK, gV (m, R, d)

        def chunk(carry, i):
            # log the start of the chunk (overlaps, and the train risk that the first step computes), then
            # take log_every steps; the last chunk (i = n_log) takes one step only, to compute the final
            # train risk, and its start is returned as the final iterate. One call site of the gradient
            # keeps the compiled program small.
            K, V = carry

            def body(t, c):
                Kt, Vt, loss0 = c
                loss, gK, gV = grads(Kt, Vt)
                Kt, Vt = _project_step(Kt, Vt, gK, gV, alpha)
                return Kt, Vt, jnp.where(t == 0, loss, loss0)

            trips = jnp.where(i == n_log, 1, log_every)
            K1, V1, loss0 = jax.lax.fori_loop(
                0, trips, body, (K, V, jnp.zeros(K.shape[:2], K.dtype))
            )
            last = i == n_log
            return (jnp.where(last, K, K1), jnp.where(last, V, V1)), (
                ovl(K, V),
                loss0,
            )

        (K, V), (ovls, losses) = jax.lax.scan(
            chunk, (K, V), jnp.arange(n_log + 1)
        )
        return ovls, losses, K, V  # (n_log + 1, 5, m, R), (n_log + 1, m, R)

    ovls, losses, K, V = jax.lax.map(
        one_sample, (keys, k_star, v_star, K0, V0), batch_size=batch_size
    )
    ovls = jnp.moveaxis(ovls, 1, -1)  # (S, 5, m, R, n_log + 1)
    losses = jnp.moveaxis(losses, 1, -1)  # (S, m, R, n_log + 1)
    test = risk_kernel(*(ovls[:, i] for i in range(5)), lam, d, L, gamma, eps)
    return ovls, losses, test, K, V


def erm_pgd(
    task: SLRTask,
    k_star: ArrayLike,
    v_star: ArrayLike,
    keys: ArrayLike,
    k0: ArrayLike,
    v0: ArrayLike,
    *,
    ns: Sequence[int],
    lam: float,
    alpha: float,
    n_steps: int,
    log_every: int | None = None,
    batch_size: int | None = None,
) -> ERMResult:
    r"""Full-batch PGD (Definition 1, eq. 10) on the empirical risk of erf attention (3), many samples, sizes and runs at once.

    For every sample :math:`s` a sample :math:`(\mathbb X_i, Y_i)_{i\le n_{\max}}` is drawn from ``keys[s]``
    inside the compiled program; for every size :math:`n` in ``ns`` its first :math:`n` sequences form the
    training sample (samples of different sizes are nested), and each run iterates

    .. math::

        k_{t+1} = \frac{k_t - \alpha(I - k_tk_t^\top)\nabla_k\widehat{\mathcal R}_n(k_t, v_t)}{\|\cdot\|},\qquad
        v_{t+1} = \frac{v_t - \alpha(I - v_tv_t^\top)\nabla_v\widehat{\mathcal R}_n(k_t, v_t)}{\|\cdot\|}

    with :math:`\widehat{\mathcal R}_n` of :func:`empirical_gradient`. The test risk logged is the exact
    population risk :math:`\mathcal R_\lambda(k_t, v_t)` (Theorem 1) at the logged iterates. All sizes and
    runs of a sample share one pass over its tokens per step (a matrix product), so the sizes cost about
    as much as the largest alone.

    Parameters
    ----------
    task : SLRTask
        The task (:math:`d, L, \gamma, \varepsilon, \pi`).
    k_star, v_star : array_like, shape (d,) or (samples, d)
        The task's directions, one pair for all samples or one per sample (Assumption 1).
    keys : array_like of jax.random keys, shape (samples,)
        One key per sample (e.g. ``jax.random.split(key, samples)``).
    k0, v0 : array_like, shape (samples, runs, d)
        Unit initial vectors of every run of every sample (the same for every size).
    ns : sequence of int
        Sample sizes, each ``>= 1``.
    lam : float
        Inverse temperature :math:`\lambda > 0`.
    alpha : float
        Step size :math:`\alpha > 0`.
    n_steps : int
        Number of full-batch steps, ``>= 1``.
    log_every : int, optional
        Logging period; must divide ``n_steps`` (default ``n_steps``: start and end only).
    batch_size : int, optional
        Samples processed together (``jax.lax.map``'s ``batch_size``); default one at a time, so that
        memory holds one sample of :math:`n_{\max}Ld` numbers.

    Returns
    -------
    ERMResult
        The logged overlaps, train and exact test risks, shape (samples, len(ns), runs, logged steps), and the
        final iterates (samples, len(ns), runs, d).

    Raises
    ------
    ValueError
        When an argument is invalid: ``task`` not an :class:`SLRTask`, directions not unit and orthogonal,
        ``keys`` not a one-dimensional array of keys, ``k0``/``v0`` not of shape (samples, runs, d) or not unit
        vectors, ``ns`` not a non-empty sequence of positive integers, ``n_steps``, ``log_every`` or
        ``batch_size`` not positive integers, ``log_every`` not dividing ``n_steps``, ``lam`` or ``alpha`` not ``> 0``.
    FloatingPointError
        When the iteration produces non-finite values (``alpha`` too large).
    """
    task = check_task(task)
    d = task.d
    keys, k_star, v_star, k0, v0, ns = _check_erm_inputs(
        task, k_star, v_star, keys, k0, v0, ns
    )
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    n_steps = check_positive_int(n_steps, "n_steps")
    log_every = (
        n_steps
        if log_every is None
        else check_positive_int(log_every, "log_every")
    )
    if n_steps % log_every:
        raise ValueError(
            f"log_every must divide n_steps = {n_steps}, got log_every = {log_every}"
        )
    if batch_size is not None:
        batch_size = check_positive_int(batch_size, "batch_size")
    n_log = n_steps // log_every
    ovls, losses, test, K, V = _erm_kernel(
        keys,
        k_star,
        v_star,
        k0,
        v0,
        lam,
        alpha,
        task.gamma,
        task.eps,
        jnp.log(task.pi),
        ns=tuple(ns),
        L=task.L,
        d=d,
        n_log=n_log,
        log_every=log_every,
        batch_size=batch_size,
    )
    ovls = np.asarray(ovls)
    test = np.asarray(test)
    if not np.all(np.isfinite(test)):
        raise FloatingPointError(
            "ERM by PGD produced non-finite values: is alpha too large?"
        )
    return ERMResult(
        np.arange(0, n_steps + 1, log_every),
        np.asarray(ns),
        *(ovls[:, i] for i in range(5)),
        np.asarray(losses),
        test,
        np.asarray(K),
        np.asarray(V),
    )


def erm_pgd_reference(
    k0: ArrayLike,
    v0: ArrayLike,
    X: ArrayLike,
    y: ArrayLike,
    *,
    lam: float,
    alpha: float,
    n_steps: int,
) -> tuple[np.ndarray, np.ndarray]:
    r"""One run of full-batch PGD on a given sample, written literally (the reference of :func:`erm_pgd`).

    A Python loop of ``n_steps`` steps of (10); the Euclidean gradient is ``jax.grad`` of the batch loss
    (:func:`slrlib.training.sgd.batch_gradient`), the projection :math:`(I - kk^\top)` and the normalisation are
    written in NumPy.

    Parameters
    ----------
    k0, v0 : array_like, shape (d,)
        Unit initial vectors.
    X : array_like, shape (n, L, d)
        Tokens of the sample.
    y : array_like, shape (n,)
        Outputs of the sample.
    lam, alpha : float
        Inverse temperature and step size, ``> 0``.
    n_steps : int
        Number of steps, ``>= 1``.

    Returns
    -------
    k, v : numpy.ndarray, shape (d,)
        The final iterates.

    Raises
    ------
    ValueError
        When an argument is invalid (as :func:`empirical_gradient`, and ``alpha``, ``n_steps``).
    """
    X, y = _check_tokens(X, y)
    d = X.shape[-1]
    k = np.asarray(_check_unit(k0, "k0", d))
    v = np.asarray(_check_unit(v0, "v0", d))
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    n_steps = check_positive_int(n_steps, "n_steps")
    for _ in range(n_steps):
        gk, gv = (np.asarray(g)[0] for g in batch_gradient(k, v, X, y, lam))
        k_new = k - alpha * (gk - np.dot(k, gk) * k)
        v_new = v - alpha * (gv - np.dot(v, gv) * v)
        k, v = k_new / np.linalg.norm(k_new), v_new / np.linalg.norm(v_new)
    return k, v


# ------------------------------------------------------------------------------ ERM by L-BFGS
#: The fixed reduction of the gradient norm at which :func:`erm_lbfgs` records each run's cost in evaluations.
GRAD_REDUCTION = 1e-3


class LBFGSResult(NamedTuple):
    r"""Final iterates of :func:`erm_lbfgs`: ``ns`` the sample sizes; the overlaps ``kappa, nu, theta, eta, rho``,
    the empirical risk ``train_risk``, the exact ``test_risk`` (Theorem 1), the norm of the Riemannian gradient
    at the end ``grad_norm`` and at the start ``start_grad_norm``, the number of gradient evaluations
    ``evaluations``, and ``evaluations_to_reduction``, those spent when the gradient norm first fell to
    :data:`GRAD_REDUCTION` times its start (NaN for a run that never got there), shape (samples, len(ns), runs); the final
    ``k``, ``v`` (samples, len(ns), runs, d)."""

    ns: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    theta: np.ndarray
    eta: np.ndarray
    rho: np.ndarray
    train_risk: np.ndarray
    test_risk: np.ndarray
    grad_norm: np.ndarray
    start_grad_norm: np.ndarray
    evaluations: np.ndarray
    evaluations_to_reduction: np.ndarray
    k: np.ndarray
    v: np.ndarray


def _lbfgs_run(
    k,
    v,
    X,
    y,
    w,
    lam,
    alpha0,
    *,
    n_iter,
    memory,
    max_step=0.1,
    gtol=1e-10,
    max_halvings=20,
    reduction=GRAD_REDUCTION,
):
    r"""One run of Riemannian L-BFGS on :math:`\mathbb S^{d-1}\times\mathbb S^{d-1}` (no validation).

    The risk is :math:`\sum_i w_i r_i^2` (``w`` (n,): the weights of the sequences). The point is
    :math:`x = (k, v)`; the direction is the two-loop recursion on the last ``memory`` pairs
    :math:`(s_j, y_j)` (steps and gradient changes, carried to the current tangent space by the projection), with
    initial scaling ``alpha0`` (a PGD step) and then :math:`s^\top y / y^\top y`, cut to length at most
    ``max_step``; the retraction normalises each block; the step is halved until Armijo's condition holds. A run
    stops (and costs nothing more) once its gradient norm is at most ``gtol`` or its line search fails (round-off
    near a minimum). It also records the gradient evaluations spent when the gradient norm first falls to
    ``reduction`` times its start (-1 if it never does).
    """
    d = k.shape[-1]

    def value_grad(x):
        kk, vv = x[:d], x[d:]
        loss, gk, gv = _loss_and_grads(
            kk[None], vv[None], X, y, lam, w[:, None]
        )
        return loss[0], jnp.concatenate(
            [_tangent(kk, gk[0]), _tangent(vv, gv[0])]
        )

    def tangent(x, z):
        return jnp.concatenate(
            [_tangent(x[:d], z[:d]), _tangent(x[d:], z[d:])]
        )

    def retract(x, z):
        a, b = x[:d] + z[:d], x[d:] + z[d:]
        return jnp.concatenate(
            [a / jnp.linalg.norm(a), b / jnp.linalg.norm(b)]
        )

    x = jnp.concatenate([k, v])
    f, g = value_grad(x)
    g0 = jnp.linalg.norm(g)
    S = jnp.zeros((memory, 2 * d), x.dtype)
    Yg = jnp.zeros((memory, 2 * d), x.dtype)
    inv_sy = jnp.zeros(memory, x.dtype)

    def iteration(_, state):
        x, f, g, S, Yg, inv_sy, scale, count, evals, stalled, reached = state

        # two-loop recursion; slot (count - 1 - j) % memory is the j-th newest pair, empty slots have inv_sy = 0
        def newest_first(j, c):
            q, a = c
            i = (count - 1 - j) % memory
            ai = inv_sy[i] * jnp.dot(S[i], q)
            return q - ai * Yg[i], a.at[i].set(ai)

        q, a = jax.lax.fori_loop(
            0, memory, newest_first, (g, jnp.zeros(memory, x.dtype))
        )

        def oldest_first(j, r):
            i = (count - memory + j) % memory
            return r + S[i] * (a[i] - inv_sy[i] * jnp.dot(Yg[i], r))

        p = -tangent(x, jax.lax.fori_loop(0, memory, oldest_first, scale * q))
        slope = jnp.dot(p, g)
        p = jnp.where(
            slope < 0, p, -scale * g
        )  # not a descent direction: fall back on the scaled gradient
        p = p * jnp.minimum(
            1.0, max_step / jnp.linalg.norm(p)
        )  # a trust radius: the path stays near the flow
        slope = jnp.dot(p, g)

        def too_long(c):
            t, fn, _, _, h = c
            return (fn > f + 1e-4 * t * slope) & (h < max_halvings) & ~stalled

        def halve(c):
            t, _, _, _, h = c
            t = 0.5 * t
            xn = retract(x, t * p)
            fn, gn = value_grad(xn)
            return t, fn, xn, gn, h + 1

        xn = retract(x, p)
        fn, gn = value_grad(xn)
        t, fn, xn, gn, h = jax.lax.while_loop(
            too_long, halve, (1.0, fn, xn, gn, 0)
        )
        ok = (fn <= f + 1e-4 * t * slope) & ~stalled & (slope < 0)
        s = tangent(xn, xn - x)
        yv = gn - tangent(xn, g)
        sy = jnp.dot(s, yv)
        keep = ok & (sy > 1e-12 * jnp.dot(s, s))
        slot = count % memory
        S = jnp.where(keep, S.at[slot].set(s), S)
        Yg = jnp.where(keep, Yg.at[slot].set(yv), Yg)
        inv_sy = jnp.where(
            keep, inv_sy.at[slot].set(1.0 / jnp.where(keep, sy, 1.0)), inv_sy
        )
        scale = jnp.where(keep, sy / jnp.dot(yv, yv), scale)
        count = count + keep.astype(count.dtype)
        x, f, g = (
            jnp.where(ok, xn, x),
            jnp.where(ok, fn, f),
            jnp.where(ok, gn, g),
        )
        S = jax.vmap(lambda z: tangent(x, z))(
            S
        )  # carry the pairs to the tangent space at x
        Yg = jax.vmap(lambda z: tangent(x, z))(Yg)
        evals = evals + jnp.where(stalled, 0, h + 1)
        reached = jnp.where(
            (reached < 0) & (jnp.linalg.norm(g) <= reduction * g0),
            evals,
            reached,
        )
        return (
            x,
            f,
            g,
            S,
            Yg,
            inv_sy,
            scale,
            count,
            evals,
            stalled | ~ok | (jnp.linalg.norm(g) <= gtol),
            reached,
        )

    state = (
        x,
        f,
        g,
        S,
        Yg,
        inv_sy,
        jnp.asarray(alpha0, x.dtype),
        jnp.asarray(0),
        jnp.asarray(1),
        jnp.asarray(False),
        jnp.asarray(-1),
    )
    x, f, g, *_, evals, _, reached = jax.lax.fori_loop(
        0, n_iter, iteration, state
    )
    return x[:d], x[d:], f, jnp.linalg.norm(g), g0, evals, reached


@partial(jax.jit, static_argnames=("ns", "L", "d", "n_iter", "memory"))
def _lbfgs_kernel(
    keys,
    k_star,
    v_star,
    K0,
    V0,
    lam,
    alpha0,
    gamma,
    eps,
    log_pi,
    *,
    ns,
    L,
    d,
    n_iter,
    memory,
):
    def one_sample(args):
        key, ks, vs, K, V = args
        X, y, _ = sample_kernel(key, max(ns), L, d, ks, vs, gamma, eps, log_pi)
        # nested samples: size n gives weight 1/n to the first n sequences. All sizes and runs share the sample,
        # so each pass over the tokens is one matrix product with a column per size and run.
        W = jnp.stack(
            [jnp.where(jnp.arange(max(ns)) < n, 1.0 / n, 0.0) for n in ns]
        )  # (m, n_max)
        run = partial(
            _lbfgs_run,
            X=X,
            y=y,
            lam=lam,
            alpha0=alpha0,
            n_iter=n_iter,
            memory=memory,
        )
        runs = jax.vmap(
            lambda k, v, w: run(k, v, w=w), in_axes=(0, 0, None)
        )  # over runs
        k, v, f, gnorm, g0, evals, reached = jax.vmap(
            runs, in_axes=(None, None, 0)
        )(K, V, W)  # over sizes: (m, R)
        ovl = jnp.stack(
            [k @ ks, v @ vs, v @ ks, k @ vs, jnp.sum(k * v, axis=-1)]
        )  # (5, m, R)
        return ovl, f, gnorm, g0, evals, reached, k, v

    ovl, f, gnorm, g0, evals, reached, K, V = jax.lax.map(
        one_sample, (keys, k_star, v_star, K0, V0)
    )
    test = risk_kernel(*(ovl[:, i] for i in range(5)), lam, d, L, gamma, eps)
    return ovl, f, test, gnorm, g0, evals, reached, K, V


def erm_lbfgs(
    task: SLRTask,
    k_star: ArrayLike,
    v_star: ArrayLike,
    keys: ArrayLike,
    k0: ArrayLike,
    v0: ArrayLike,
    *,
    ns: Sequence[int],
    lam: float,
    alpha0: float,
    n_iter: int = 100,
    memory: int = 10,
) -> LBFGSResult:
    r"""Riemannian L-BFGS on the empirical risk of erf attention (3), many samples, sizes and runs at once.

    The same problem as :func:`erm_pgd` — minimise :math:`\widehat{\mathcal R}_n(k, v)` over
    :math:`\mathbb S^{d-1}\times\mathbb S^{d-1}` from the given starts, on samples drawn from ``keys`` inside the
    compiled program, nested over ``ns`` — by a quasi-Newton method instead of the fixed-step iteration (10).
    PGD's step must stay below :math:`2/h_{\max}`, with :math:`h_{\max}` the largest curvature of
    :math:`\widehat{\mathcal R}_n`, which grows like :math:`d` (the direction :math:`v \parallel k^\star`, where the
    relevant token carries :math:`\sqrt{d/2}\,k^\star`), while the smallest curvatures stay of order
    :math:`10^{-2}` to :math:`10^{-1}`; so PGD needs a number of steps that grows like :math:`d`. L-BFGS rescales
    the stiff direction from the gradients it has seen. Its number of gradient evaluations to a fixed reduction of
    the gradient norm (``evaluations_to_reduction``) still grows with :math:`d` (chapter 15 measures it).

    Each iteration: the two-loop recursion on the last ``memory`` pairs of steps and gradient changes (carried to
    the current tangent space by the orthogonal projection), with initial scaling ``alpha0`` — the first
    step is a PGD step of size ``alpha0`` — then :math:`s^\top y/y^\top y`; a step at most 0.1 long (a trust
    radius, so that the path stays near the gradient flow that PGD follows); the retraction
    :math:`(k, v) \mapsto (k/\|k\|, v/\|v\|)`; backtracking (halving) until Armijo's condition
    :math:`\widehat{\mathcal R}_n(x_{t+1}) \le \widehat{\mathcal R}_n(x_t) + 10^{-4}\,\langle\operatorname{grad},
    x_{t+1} - x_t\rangle` holds. A run whose line search fails (round-off at a minimum) stays where it is. The
    empirical risk never increases.

    The method and PGD are two ways to a stationary point of the same function; started at the same point they
    can still end at different ones, since the empirical risk has several.

    Parameters
    ----------
    task : SLRTask
        The task.
    k_star, v_star : array_like, shape (d,) or (samples, d)
        The task's directions.
    keys : array_like of jax.random keys, shape (samples,)
        One key per sample; the same keys give :func:`erm_pgd` the same samples.
    k0, v0 : array_like, shape (samples, runs, d)
        Unit initial vectors.
    ns : sequence of int
        Sample sizes, each ``>= 1``.
    lam : float
        Inverse temperature :math:`\lambda > 0`.
    alpha0 : float
        Length of the first step (as PGD's :math:`\alpha`), ``> 0``.
    n_iter : int
        Iterations, ``>= 1``.
    memory : int
        Pairs kept, ``>= 1``.

    Returns
    -------
    LBFGSResult
        Final overlaps, train and exact test risks, gradient norms and evaluation counts, shape
        (samples, len(ns), runs), and the final iterates.

    Raises
    ------
    ValueError
        When an argument is invalid (as :func:`erm_pgd`; ``alpha0`` not ``> 0``, ``n_iter`` or ``memory`` not
        positive integers).
    FloatingPointError
        When the result is not finite.
    """
    task = check_task(task)
    d = task.d
    keys, k_star, v_star, k0, v0, ns = _check_erm_inputs(
        task, k_star, v_star, keys, k0, v0, ns
    )
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha0 = check_real_scalar(alpha0, "alpha0", minimum=0.0, strict=True)
    n_iter = check_positive_int(n_iter, "n_iter")
    memory = check_positive_int(memory, "memory")
    ovl, f, test, gnorm, g0, evals, reached, K, V = _lbfgs_kernel(
        keys,
        k_star,
        v_star,
        k0,
        v0,
        lam,
        alpha0,
        task.gamma,
        task.eps,
        jnp.log(task.pi),
        ns=tuple(ns),
        L=task.L,
        d=d,
        n_iter=n_iter,
        memory=memory,
    )
    ovl, test = np.asarray(ovl), np.asarray(test)
    if not np.all(np.isfinite(test)):
        raise FloatingPointError("ERM by L-BFGS produced non-finite values")
    reached = np.asarray(reached, dtype=np.float64)
    return LBFGSResult(
        np.asarray(ns),
        *(ovl[:, i] for i in range(5)),
        np.asarray(f),
        test,
        np.asarray(gnorm),
        np.asarray(g0),
        np.asarray(evals),
        np.where(reached < 0, np.nan, reached),
        np.asarray(K),
        np.asarray(V),
    )


@jax.jit
def _scale_invariant_hessian(x, X, y, lam):
    r"""``jax.hessian`` of :math:`f(a, b) = \widehat{\mathcal R}_n(a/\|a\|, b/\|b\|)` at ``x = (a, b)``, compiled once."""
    d = X.shape[-1]

    def f(z):
        k, v = z[:d] / jnp.linalg.norm(z[:d]), z[d:] / jnp.linalg.norm(z[d:])
        r = (
            jnp.sum(erf(lam * (X @ k)) * (X @ v), axis=1) - y
        )  # residuals of erf attention (3)
        return jnp.mean(r * r)

    return jax.hessian(f)(x)


def tangent_hessian(
    k: ArrayLike, v: ArrayLike, X: ArrayLike, y: ArrayLike, lam: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""The Hessian of the empirical risk on the tangent space of :math:`\mathbb S^{d-1}\times\mathbb S^{d-1}` at a stationary point.

    :math:`f(a, b) = \widehat{\mathcal R}_n(a/\|a\|, b/\|b\|)` is invariant under scaling, so at a stationary point
    :math:`(k, v)` its Euclidean Hessian restricted to tangent vectors is the Riemannian Hessian:
    :math:`H = B^\top\nabla^2 f(k, v)\,B`, with :math:`B` (2d, 2d − 2) an orthonormal basis of
    :math:`k^\perp \times v^\perp` (``jax.hessian`` of :func:`slrlib.training.sgd.batch_loss`). Its eigenvalues are
    the curvatures that limit PGD's step (:math:`\alpha < 2/h_{\max}`) and set its slowest rate.

    Parameters
    ----------
    k, v : array_like, shape (d,)
        Unit vectors (a stationary point, for :math:`H` to be the Riemannian Hessian).
    X : array_like, shape (n, L, d)
        Tokens of the sample.
    y : array_like, shape (n,)
        Outputs of the sample.
    lam : float
        Inverse temperature :math:`\lambda \ge 0`.

    Returns
    -------
    H : numpy.ndarray, shape (2d − 2, 2d − 2)
        The tangent Hessian, symmetric.
    B : numpy.ndarray, shape (2d, 2d − 2)
        The basis: column :math:`j` is a tangent vector :math:`(a_j, b_j)`; the first :math:`d - 1` move :math:`k`,
        the others :math:`v`.

    Raises
    ------
    ValueError
        As :func:`empirical_gradient`.
    """
    X, y = _check_tokens(X, y)
    d = X.shape[-1]
    k = _check_unit(k, "k", d)
    v = _check_unit(v, "v", d)
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    hess = np.asarray(
        _scale_invariant_hessian(jnp.concatenate([k, v]), X, y, lam)
    )
    basis_k = np.linalg.qr(np.c_[np.asarray(k), np.eye(d)])[0][:, 1:d]
    basis_v = np.linalg.qr(np.c_[np.asarray(v), np.eye(d)])[0][:, 1:d]
    B = np.zeros((2 * d, 2 * d - 2))
    B[:d, : d - 1], B[d:, d - 1 :] = basis_k, basis_v
    H = B.T @ hess @ B
    return 0.5 * (H + H.T), B


def sign_fixed_overlaps(
    kappa: ArrayLike, nu: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    r"""The overlaps of the representative with :math:`\kappa \ge 0` of :math:`\{(k, v), (-k, -v)\}`.

    erf is odd, so :math:`T^{(-k,-v)}_\lambda = T^{(k,v)}_\lambda`: the two pairs are the same predictor, and
    :math:`(\kappa, \nu) = (-1, -1)` is as good a recovery as :math:`(1, 1)`. Returns
    :math:`(|\kappa|, \operatorname{sign}(\kappa)\,\nu)` (with :math:`\operatorname{sign}(0) = 1`).

    Parameters
    ----------
    kappa, nu : array_like
        The overlaps; they broadcast together.

    Returns
    -------
    kappa, nu : numpy.ndarray
        The sign-fixed overlaps.
    """
    kappa = np.asarray(kappa, dtype=float)
    nu = np.asarray(nu, dtype=float)
    s = np.where(kappa < 0, -1.0, 1.0)
    return s * kappa, s * nu


# ------------------------------------------------------------------------------ the linear predictor
@jax.jit
def _ridge(X, y, mu):
    n, L, d = X.shape
    p = L * d
    Z = X.reshape(n, p)
    if n >= p:
        A = Z.T @ Z + n * mu * jnp.eye(p)
        w = jnp.linalg.solve(A, Z.T @ y)
    else:  # dual form: w = Z^T (Z Z^T + n mu I)^{-1} y (the minimum-norm interpolator at mu = 0)
        w = Z.T @ jnp.linalg.solve(Z @ Z.T + n * mu * jnp.eye(n), y)
    return w.reshape(L, d), jnp.mean(jnp.square(Z @ w - y))


def ridge_fit(
    X: ArrayLike, y: ArrayLike, mu: float = 0.0
) -> tuple[jax.Array, jax.Array]:
    r"""Ridge regression of ``y`` on the flattened tokens: :math:`\min_W \frac1n\sum_i (f_W(\mathbb X_i) - Y_i)^2 + \mu\|W\|_F^2`.

    .. math::

        \mathrm{vec}(W) = (Z^\top Z + n\mu I_{Ld})^{-1}Z^\top y = Z^\top(ZZ^\top + n\mu I_n)^{-1}y,

    with :math:`Z` the :math:`n \times Ld` matrix of flattened sequences (the second form is used when
    :math:`n < Ld`). At :math:`\mu = 0` it is least squares, and for :math:`n < Ld` the minimum-norm
    interpolator.

    Parameters
    ----------
    X : array_like, shape (n, L, d)
        Tokens.
    y : array_like, shape (n,)
        Outputs.
    mu : float
        Ridge penalty :math:`\mu \ge 0`.

    Returns
    -------
    W : jax.Array, shape (L, d)
        The weights.
    train_risk : jax.Array
        :math:`\frac1n\sum_i (f_W(\mathbb X_i) - Y_i)^2`.

    Raises
    ------
    ValueError
        When a shape is wrong, ``X`` or ``y`` is not finite, or ``mu`` is not a real number ``>= 0``.
    """
    X, y = _check_tokens(X, y)
    mu = check_real_scalar(mu, "mu", minimum=0.0)
    return _ridge(X, y, mu)


def ridge_population_weights(
    task: SLRTask, v_star: ArrayLike, mu: float
) -> np.ndarray:
    r"""The limit of ridge as :math:`n \to \infty`: :math:`\mathrm{vec}(W) = (\Sigma + \mu I)^{-1}b`.

    With the block-diagonal second moments of the task (:func:`slrlib.book.ch05_linear.linear_moments`),
    :math:`\Sigma_\ell = a_\ell I_d + \pi_\ell q^2 k^\star k^{\star\top}`, :math:`a_\ell = 1 - \pi_\ell + \pi_\ell\gamma^2`,
    :math:`b_\ell = \pi_\ell\gamma^2 v^\star` and :math:`v^\star \perp k^\star`:

    .. math::

        w_\ell = \frac{\pi_\ell\gamma^2}{a_\ell + \mu}\,v^\star .

    At :math:`\mu = 0` these are the best linear weights of Proposition 3.

    Parameters
    ----------
    task : SLRTask
        The task.
    v_star : array_like, shape (d,)
        The task's value direction, unit norm.
    mu : float
        Ridge penalty :math:`\mu \ge 0`.

    Returns
    -------
    numpy.ndarray, shape (L, d)
        The weights.

    Raises
    ------
    ValueError
        When ``task`` is not an :class:`SLRTask`, ``v_star`` not a finite unit vector of shape (d,), or ``mu``
        not a real number ``>= 0``.
    """
    task = check_task(task)
    v_star = np.asarray(_check_unit(v_star, "v_star", task.d))
    mu = check_real_scalar(mu, "mu", minimum=0.0)
    pi = np.asarray(task.pi, dtype=float)
    g2 = task.gamma**2
    return (pi * g2 / (1.0 - pi + pi * g2 + mu))[:, None] * v_star[None, :]


class LinearCurve(NamedTuple):
    r"""Least squares or ridge against the sample size: ``ns`` (m,), ``test_risk`` and ``train_risk``
    (m, samples) (the test risk exact, :func:`slrlib.book.ch05_linear.linear_risk_of_weights`), ``mu``."""

    ns: np.ndarray
    mu: float
    test_risk: np.ndarray
    train_risk: np.ndarray


def linear_learning_curve(
    task: SLRTask,
    k_star: ArrayLike,
    v_star: ArrayLike,
    key: jax.Array,
    ns: Sequence[int],
    n_samples: int,
    mu: float = 0.0,
) -> LinearCurve:
    r"""Exact test risk of least squares (``mu = 0``) or ridge fitted on ``n_samples`` samples of each size in ``ns``.

    Sample :math:`s` holds :math:`\max(ns)` sequences drawn from ``fold_in(key, s)``
    (:func:`slrlib.core.task.sample_kernel`); the fit of size :math:`n` uses its first :math:`n` (nested samples,
    as in :func:`erm_pgd`). The test risk of the fitted :math:`W` is
    :math:`\mathbb E[(\sum_\ell w_\ell^\top X_\ell - Y)^2]` in closed form
    (:func:`slrlib.book.ch05_linear.linear_risk_of_weights`). As :math:`n \to \infty` it tends to the risk of
    :func:`ridge_population_weights`, Proposition 3's :func:`slrlib.core.risk.linear_risk` at :math:`\mu = 0`.

    Parameters
    ----------
    task : SLRTask
        The task.
    k_star, v_star : array_like, shape (d,)
        The task's directions.
    key : jax.Array
        A ``jax.random`` key.
    ns : sequence of int
        Sample sizes, each ``>= 2``.
    n_samples : int
        Samples per size, ``>= 1``.
    mu : float
        Ridge penalty :math:`\mu \ge 0`.

    Returns
    -------
    LinearCurve
        Test and train risks, shape (len(ns), n_samples).

    Raises
    ------
    ValueError
        When an argument is invalid.
    """
    task = check_task(task)
    k_star, v_star = check_directions(k_star, v_star, task.d)
    key = check_key(key)
    n_samples = check_positive_int(n_samples, "n_samples")
    mu = check_real_scalar(mu, "mu", minimum=0.0)
    try:
        ns = [check_positive_int(n, "ns entry") for n in ns]
    except TypeError:
        raise ValueError(
            f"ns must be a sequence of sample sizes >= 2, got {ns!r}"
        ) from None
    if not ns or min(ns) < 2:
        raise ValueError(
            f"ns must be a non-empty sequence of sample sizes >= 2, got {ns!r}"
        )
    order = np.argsort(ns)
    log_pi = jnp.log(task.pi)
    test = np.zeros((len(ns), n_samples))
    train = np.zeros((len(ns), n_samples))
    p = task.L * task.d
    for s in range(n_samples):
        X, y, _ = sample_kernel(
            jax.random.fold_in(key, s),
            max(ns),
            task.L,
            task.d,
            k_star,
            v_star,
            task.gamma,
            task.eps,
            log_pi,
        )
        Z, y = np.asarray(X).reshape(-1, p), np.asarray(y)
        # nested samples: the Gram matrix and Z^T y of the first n sequences are updated block by block
        G, b, done = np.zeros((p, p)), np.zeros(p), 0
        for i in order:
            n = ns[i]
            G += Z[done:n].T @ Z[done:n]
            b += Z[done:n].T @ y[done:n]
            done = n
            Zn, yn = Z[:n], y[:n]
            if n >= p:
                w = np.linalg.solve(G + n * mu * np.eye(p), b)
            else:  # dual form (the minimum-norm interpolator at mu = 0)
                w = Zn.T @ np.linalg.solve(Zn @ Zn.T + n * mu * np.eye(n), yn)
            train[i, s] = np.mean((Zn @ w - yn) ** 2)
            test[i, s] = float(
                linear_risk_of_weights(
                    w.reshape(task.L, task.d), task, k_star, v_star
                )
            )
    return LinearCurve(np.asarray(ns), float(mu), test, train)


# ------------------------------------------------------------------------------ samples needed
def samples_needed(
    ratios: ArrayLike, kappa: ArrayLike, nu: ArrayLike, level: float = 0.9
) -> float:
    r"""The smallest :math:`n/d` at which the median overlaps :math:`\kappa` and :math:`\nu` both reach ``level``.

    ``kappa``, ``nu`` have shape (len(ratios), samples) (sign-fixed, :func:`sign_fixed_overlaps`); the median
    over samples of :math:`\min(\kappa, \nu)` is interpolated linearly in :math:`\log(n/d)` between the last grid
    point below ``level`` and the first one from which it stays above. ``nan`` when the grid never reaches
    the level; the first grid point when it starts above it.

    Parameters
    ----------
    ratios : array_like, shape (m,)
        Increasing grid of :math:`n/d`.
    kappa, nu : array_like, shape (m, samples)
        Overlaps at the end of training.
    level : float
        The level, in :math:`(0, 1]`.

    Returns
    -------
    float
        :math:`n^\star/d`.

    Raises
    ------
    ValueError
        When the shapes do not match, ``ratios`` is not positive and increasing, or ``level`` is outside (0, 1].
    """
    ratios = np.asarray(ratios, dtype=float)
    kappa = np.asarray(kappa, dtype=float)
    nu = np.asarray(nu, dtype=float)
    if (
        ratios.ndim != 1
        or ratios.size < 1
        or np.any(ratios <= 0)
        or np.any(np.diff(ratios) <= 0)
    ):
        raise ValueError(
            f"ratios must be a positive increasing 1-d grid, got {ratios}"
        )
    if (
        kappa.shape != nu.shape
        or kappa.ndim != 2
        or kappa.shape[0] != ratios.size
    ):
        raise ValueError(
            f"kappa and nu must have shape (len(ratios), samples) = ({ratios.size}, samples), "
            f"got {kappa.shape} and {nu.shape}"
        )
    level = check_real_scalar(level, "level", minimum=0.0, strict=True)
    if level > 1.0:
        raise ValueError(f"level must lie in (0, 1], got {level}")
    m = np.median(np.minimum(kappa, nu), axis=1)
    above = m >= level
    if not above[-1]:
        return float("nan")
    # first index from which the median stays above the level
    j = int(np.max(np.nonzero(~above)[0]) + 1) if np.any(~above) else 0
    if j == 0:
        return float(ratios[0])
    x0, x1 = math.log(ratios[j - 1]), math.log(ratios[j])
    t = (level - m[j - 1]) / (m[j] - m[j - 1])
    return float(math.exp(x0 + t * (x1 - x0)))
