r"""The population risk of the multi-head predictor (31) on multiple-location regression (30) (chapter 11).

**Reduction to one token.** Write the predictor as a sum over tokens,
:math:`T(\mathbb X) = \sum_\ell f(X_\ell)` with
:math:`f(x) = \sum_{h=1}^H \operatorname{erf}(\lambda x^\top k_h)\, x^\top v_h`. Given the positions
:math:`J = (J_1, \dots, J_M)` the tokens are independent, so the error
:math:`T(\mathbb X) - Y = \sum_\ell g_\ell(X_\ell) - \xi`, with
:math:`g_\ell(x) = f(x) - x^\top v_m^\star` when :math:`\ell = J_m` and :math:`g_\ell = f` otherwise, is
a sum of independent terms. Its second moment given :math:`J` is the sum of the variances plus
the square of the sum of the means, and neither depends on :math:`J`:

.. math::

    \mathcal R_\lambda(K, V) = \varepsilon^2 + (L - M)\operatorname{Var} f(Z)
    + \sum_{m=1}^M \operatorname{Var} g_m(X^{(m)})
    + \Big((L-M)\,\mathbb E f(Z) + \sum_{m=1}^M \mathbb E g_m(X^{(m)})\Big)^2,

with :math:`Z \sim \mathcal N(0, I_d)` (a noise token), :math:`X^{(m)} \sim \mathcal N(q k_m^\star, \gamma^2 I_d)`
(the :math:`m`-th relevant token), :math:`q = \sqrt{d/2}`, and
:math:`g_m(x) = f(x) - x^\top v_m^\star`.

**Two-dimensional integrals.** Every moment above is a sum of terms
:math:`\mathbb E[\operatorname{erf}(\lambda X^\top k_h)\operatorname{erf}(\lambda X^\top k_{h'})\,(X^\top w)(X^\top w')]`
(and simpler ones) for a Gaussian token :math:`X \sim \mathcal N(\mu, \sigma^2 I_d)`. With
:math:`(e_1, e_2)` an orthonormal basis of :math:`\operatorname{span}(k_h, k_{h'})` and
:math:`z_i = e_i^\top (X - \mu)/\sigma`, the erf factors depend on :math:`(z_1, z_2)` only, and
:math:`X^\top w = \beta_w(z) + \sigma\, r_w^\top Z'` with :math:`\beta_w(z) = \mu^\top w + \sigma(z_1 e_1^\top w + z_2 e_2^\top w)`,
:math:`r_w` the part of :math:`w` orthogonal to the span and :math:`Z'` a standard Gaussian
independent of :math:`z`. Hence

.. math::

    \mathbb E\big[(X^\top w)(X^\top w') \,\big|\, z\big] = \beta_w(z)\beta_{w'}(z) + \sigma^2 r_w^\top r_{w'},

and the term is an integral over :math:`z \sim \mathcal N(0, I_2)`, computed with a product
trapezoid rule on :math:`[-12, 12]^2` (``n_nodes`` points per axis). The result is exact up to
the quadrature error (about 1e-11 for :math:`\lambda \le 2` with the default 121 nodes; the
tests compare with the closed form of Theorem 1 for one head and one location, and with
Monte Carlo for several).

(Our derivation: the paper gives no formula for this risk.)
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache, partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import erf

from slrlib.validation import (
    as_float_array,
    check_finite,
    check_positive_int,
    check_real_scalar,
    check_unit_norm,
    is_concrete,
)
from slrlib.core.montecarlo import MonteCarloEstimate, RunningMoments
from slrlib.core.predictors import multi_head_erf_attention
from slrlib.core.task import MultiLocationTask

__all__ = [
    "DEFAULT_NODES",
    "IdealCurves",
    "PopulationPGD",
    "RiskParts",
    "heads_separated",
    "ideal_risk_curves",
    "multi_head_risk",
    "multi_head_risk_mc",
    "multi_head_risk_parts",
    "sgd_task_directions",
    "sphere_pgd",
]

#: Nodes per axis of the quadrature rule (trapezoid on [-Z_MAX, Z_MAX], spacing 0.2).
DEFAULT_NODES = 121
Z_MAX = 12.0


class RiskParts(NamedTuple):
    r"""The four terms of the risk (module docstring); ``total`` is their sum.

    ``noise`` :math:`(L-M)\operatorname{Var} f(Z)`, ``relevant``
    :math:`\sum_m \operatorname{Var} g_m(X^{(m)})`, ``bias`` the squared sum of the means,
    ``eps2`` :math:`\varepsilon^2`.
    """

    noise: jax.Array
    relevant: jax.Array
    bias: jax.Array
    eps2: jax.Array
    total: jax.Array


@lru_cache(maxsize=8)
def _rule(n: int):
    r"""Trapezoid rule for the standard normal law on [-Z_MAX, Z_MAX] with ``n`` nodes.

    For a Gaussian weight times an entire function the trapezoid rule converges
    geometrically in the spacing, and much faster than Gauss–Hermite with as many nodes
    when erf is steep (:math:`\lambda\sigma` of order 1 or more).
    """
    x = np.linspace(-Z_MAX, Z_MAX, n)
    w = np.exp(-0.5 * x**2) * (x[1] - x[0]) / math.sqrt(2.0 * math.pi)
    return x, w


def _unit_rows(x):
    """Rows of x divided by their norms, zero rows where the norm is negligible (gradient-safe)."""
    n2 = jnp.sum(x * x, axis=-1, keepdims=True)
    ok = n2 > 1e-20
    return jnp.where(ok, x / jnp.sqrt(jnp.where(ok, n2, 1.0)), 0.0)


def _grid(n_nodes: int):
    """The one- and two-dimensional rules as arrays ``(x, w, z1, z2, w2)``.

    They are passed to the compiled functions as arguments rather than embedded as
    constants (XLA would fold them at compile time).
    """
    x, w = _rule(n_nodes)
    Z1, Z2 = np.meshgrid(x, x, indexing="ij")
    return tuple(
        jnp.asarray(a)
        for a in (x, w, Z1.ravel(), Z2.ravel(), np.outer(w, w).ravel())
    )


def _token_moments(mu, sigma, w, K, V, lam, grid):
    r"""Moments of :math:`f(X) = \sum_h \operatorname{erf}(\lambda X^\top k_h) X^\top v_h` for ``T`` token
    laws :math:`X \sim \mathcal N(\mu_t, \sigma_t^2 I)` at once: ``mu`` (T, d), ``sigma`` (T,), ``w`` (T, d).

    Returns :math:`\mathbb E f`, :math:`\mathbb E f^2` and :math:`\mathbb E[f\, X^\top w_t]`, each (T,).
    Vectorised over heads and pairs of heads (a few large operations compile much faster
    than many small ones).
    """
    x, wx, Z1, Z2, W2 = grid
    H = K.shape[0]
    sig = sigma[:, None, None]
    # ---- one head at a time: the line spanned by k_h (T, H, n)
    e = _unit_rows(K)  # (H, d)
    kmu, vmu, wmu = (
        mu @ K.T,
        mu @ V.T,
        jnp.sum(mu * w, -1),
    )  # (T, H), (T, H), (T,)
    ke, ve, we = (
        jnp.sum(K * e, -1),
        jnp.sum(V * e, -1),
        w @ e.T,
    )  # (H,), (H,), (T, H)
    a = kmu[..., None] + sig * ke[None, :, None] * x
    bv = vmu[..., None] + sig * ve[None, :, None] * x
    bw = wmu[:, None, None] + sig * we[..., None] * x
    rv = V - ve[:, None] * e  # (H, d)
    rw = w[:, None, :] - we[..., None] * e[None]  # (T, H, d)
    g = erf(lam * a)
    s2 = sigma[:, None] ** 2
    mean = jnp.sum(g * bv * wx, axis=(-2, -1))
    diag = jnp.sum(
        jnp.sum(g**2 * bv**2 * wx, -1)
        + s2 * jnp.sum(rv * rv, -1) * jnp.sum(g**2 * wx, -1),
        -1,
    )
    cross = jnp.sum(
        jnp.sum(g * bv * bw * wx, -1)
        + s2 * jnp.sum(rv[None] * rw, -1) * jnp.sum(g * wx, -1),
        -1,
    )
    if H == 1:
        return mean, diag, cross
    # ---- pairs h < g: the plane spanned by k_h, k_g (T, P, n^2)
    hi, gi = np.triu_indices(H, k=1)
    e1 = e[hi]
    e2 = _unit_rows(
        K[gi] - jnp.sum(K[gi] * e1, -1, keepdims=True) * e1
    )  # (P, d)

    def line(
        u, u_mu
    ):  # u (P, d), u_mu (T, P): the projection on u as a function of (z1, z2)
        c1, c2 = jnp.sum(u * e1, -1), jnp.sum(u * e2, -1)
        return (
            u_mu[..., None]
            + sig * (c1[None, :, None] * Z1 + c2[None, :, None] * Z2),
            c1,
            c2,
        )

    a1, _, _ = line(K[hi], kmu[:, hi])
    a2, _, _ = line(K[gi], kmu[:, gi])
    b1, c11, c12 = line(V[hi], vmu[:, hi])
    b2, c21, c22 = line(V[gi], vmu[:, gi])
    r1 = V[hi] - c11[:, None] * e1 - c12[:, None] * e2
    r2 = V[gi] - c21[:, None] * e1 - c22[:, None] * e2
    gg = erf(lam * a1) * erf(lam * a2) * W2
    pairs = jnp.sum(gg * b1 * b2, -1) + s2 * jnp.sum(r1 * r2, -1) * jnp.sum(
        gg, -1
    )  # (T, P)
    return mean, diag + 2.0 * jnp.sum(pairs, -1), cross


def _risk_parts(K, V, Ks, Vs, lam, d, gamma, eps, grid, L, M):
    """The terms of the risk for one parameter point; traced.

    K, V are (H, d); Ks, Vs are (M, d).

    Token type 0 is a noise token, type m the m-th relevant token.
    """
    q = jnp.sqrt(d / 2.0)
    dim = K.shape[-1]
    mu = jnp.concatenate([jnp.zeros((1, dim), K.dtype), q * Ks])
    sigma = jnp.concatenate(
        [jnp.ones((1,), K.dtype), jnp.full((M,), gamma, K.dtype)]
    )
    w = jnp.concatenate([jnp.zeros((1, dim), K.dtype), Vs])
    mean, second, cross = _token_moments(mu, sigma, w, K, V, lam, grid)
    mc = jnp.sum(
        mu[1:] * Vs, -1
    )  # E[X^T v_m*] for the m-th relevant token (0 under Assumption 1)
    mg = mean[1:] - mc
    sg = second[1:] - 2.0 * cross[1:] + mc**2 + gamma**2
    noise = (L - M) * (second[0] - mean[0] ** 2)
    relevant = jnp.sum(sg - mg**2)
    bias = ((L - M) * mean[0] + jnp.sum(mg)) ** 2
    eps2 = jnp.asarray(eps**2, K.dtype)
    return RiskParts(
        noise, relevant, bias, eps2, noise + relevant + bias + eps2
    )


def _check_heads(x, name, d):
    x = as_float_array(x, name)
    if jnp.ndim(x) < 2 or x.shape[-1] != d:
        raise ValueError(
            f"{name} must have shape (..., H, d) with d = {d}, got shape {jnp.shape(x)}"
        )
    check_finite(x, name)
    check_unit_norm(x, name)
    return x


def _check_task(task):
    if not isinstance(task, MultiLocationTask):
        raise ValueError(
            f"task must be a MultiLocationTask, got {type(task).__name__}: {task!r}"
        )
    return task


def _check_inputs(K, V, K_star, V_star, lam, task, n_nodes):
    task = _check_task(task)
    K = _check_heads(K, "K", task.d)
    V = _check_heads(V, "V", task.d)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(
            f"K and V must have the same number of heads, got shapes {K.shape} and {V.shape}"
        )
    Ks = as_float_array(K_star, "K_star")
    Vs = as_float_array(V_star, "V_star")
    if Ks.shape[-2:] != (task.M, task.d) or Vs.shape[-2:] != (task.M, task.d):
        raise ValueError(
            f"K_star and V_star must have shape (..., M, d) = (..., {task.M}, {task.d}), "
            f"got shapes {Ks.shape} and {Vs.shape}"
        )
    for row_k, row_v in zip(
        Ks.reshape(-1, task.M, task.d), Vs.reshape(-1, task.M, task.d)
    ):
        task.check_directions(row_k, row_v)
    lam = as_float_array(lam, "lam")
    check_finite(lam, "lam")
    if is_concrete(lam) and not bool(jnp.all(lam >= 0)):
        raise ValueError(f"lam must be >= 0, got {np.asarray(lam)}")
    n_nodes = check_positive_int(n_nodes, "n_nodes")
    return K, V, Ks, Vs, lam, task, n_nodes


def multi_head_risk_parts(
    K,
    V,
    K_star,
    V_star,
    lam,
    task: MultiLocationTask,
    *,
    n_nodes: int = DEFAULT_NODES,
) -> RiskParts:
    r"""The population risk of the multi-head predictor (31) on the task (30), term by term.

    Parameters
    ----------
    K, V : array_like, shape (..., H, d)
        Unit key and value directions, one row per head; leading axes broadcast with
        ``K_star, V_star`` and ``lam``.
    K_star, V_star : array_like, shape (..., M, d)
        The task's directions (each pair unit and orthogonal).
    lam : float or array_like
        Inverse temperature :math:`\lambda \ge 0`.
    task : MultiLocationTask
    n_nodes : int
        Quadrature nodes per axis.

    Returns a :class:`RiskParts` (module docstring for the formula); differentiable in
    ``K, V`` with ``jax.grad``.
    """
    K, V, Ks, Vs, lam, task, n_nodes = _check_inputs(
        K, V, K_star, V_star, lam, task, n_nodes
    )
    return _parts_broadcast(K, V, Ks, Vs, lam, task, n_nodes)


def _parts_broadcast(K, V, Ks, Vs, lam, task, n_nodes):
    batch = jnp.broadcast_shapes(
        K.shape[:-2], V.shape[:-2], Ks.shape[:-2], Vs.shape[:-2], lam.shape
    )
    H, M, d = K.shape[-2], task.M, task.d
    K = jnp.broadcast_to(K, batch + (H, d)).reshape(-1, H, d)
    V = jnp.broadcast_to(V, batch + (H, d)).reshape(-1, H, d)
    Ks = jnp.broadcast_to(Ks, batch + (M, d)).reshape(-1, M, d)
    Vs = jnp.broadcast_to(Vs, batch + (M, d)).reshape(-1, M, d)
    lam = jnp.broadcast_to(lam, batch).reshape(-1)
    parts = _batched_parts(
        K,
        V,
        Ks,
        Vs,
        lam,
        float(d),
        task.gamma,
        task.eps,
        _grid(n_nodes),
        L=task.L,
        M=M,
    )
    return RiskParts(*(p.reshape(batch) for p in parts))


@partial(jax.jit, static_argnames=("L", "M"))
def _batched_parts(K, V, Ks, Vs, lam, d, gamma, eps, grid, L, M):
    return jax.vmap(
        lambda k, v, ks, vs, la: _risk_parts(
            k, v, ks, vs, la, d, gamma, eps, grid, L, M
        )
    )(K, V, Ks, Vs, lam)


def multi_head_risk(
    K,
    V,
    K_star,
    V_star,
    lam,
    task: MultiLocationTask,
    *,
    n_nodes: int = DEFAULT_NODES,
):
    r""":math:`\mathcal R_\lambda(K, V) = \mathbb E[(Y - \sum_h\sum_\ell \operatorname{erf}(\lambda X_\ell^\top k_h) X_\ell^\top v_h)^2]`
    on the task (30), exact up to quadrature error (:func:`multi_head_risk_parts`, ``.total``)."""
    return multi_head_risk_parts(
        K, V, K_star, V_star, lam, task, n_nodes=n_nodes
    ).total


def multi_head_risk_mc(
    K,
    V,
    K_star,
    V_star,
    lam,
    task: MultiLocationTask,
    key: jax.Array,
    n_samples: int,
    *,
    batch_size: int = 5000,
) -> MonteCarloEstimate:
    r"""Monte Carlo estimate of the risk of the multi-head predictor (31), one per run, with its
    standard error: the independent check of :func:`multi_head_risk`.

    Run ``r`` draws ``n_samples`` fresh sequences of the task (30) with its own directions
    ``K_star[r], V_star[r]`` (:meth:`MultiLocationTask.sample`, batches of ``batch_size``) and
    averages :math:`(Y - T^{(K_r, V_r)}_\lambda(\mathbb X))^2`.

    Parameters
    ----------
    K, V : array_like, shape (runs, H, d)
        Unit key and value directions of each run's heads.
    K_star, V_star : array_like, shape (runs, M, d)
        Each run's task directions.
    lam : float
        Inverse temperature :math:`\lambda \ge 0`.
    task : MultiLocationTask
    key : jax.Array
        A ``jax.random`` key; run ``r`` uses ``jax.random.split(key, runs)[r]``.
    n_samples : int
        Sequences per run, ``>= 2``.
    batch_size : int
        Sequences per batch (memory: ``batch_size * L * d`` floats).

    Returns
    -------
    MonteCarloEstimate
        ``mean`` and ``stderr`` of shape (runs,), and ``n = n_samples``.

    Raises
    ------
    ValueError
        When the shapes do not match, a direction is not unit, ``lam < 0`` or ``n_samples < 2``.
    """
    task = _check_task(task)
    K = _check_heads(K, "K", task.d)
    V = _check_heads(V, "V", task.d)
    if K.ndim != 3 or K.shape != V.shape:
        raise ValueError(
            f"K and V must have the same shape (runs, H, d), got {K.shape} and {V.shape}"
        )
    Ks = as_float_array(K_star, "K_star")
    Vs = as_float_array(V_star, "V_star")
    if Ks.shape != (K.shape[0], task.M, task.d) or Vs.shape != Ks.shape:
        raise ValueError(
            f"K_star and V_star must have shape (runs, M, d) = ({K.shape[0]}, {task.M}, {task.d}), "
            f"got {Ks.shape} and {Vs.shape}"
        )
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    n_samples = check_positive_int(n_samples, "n_samples")
    if n_samples < 2:
        raise ValueError(
            f"n_samples must be >= 2 to estimate a standard error, got {n_samples}"
        )
    batch_size = min(check_positive_int(batch_size, "batch_size"), n_samples)
    means, stderrs = [], []
    for r, run_key in enumerate(jax.random.split(key, K.shape[0])):
        acc = RunningMoments()
        for i, batch_key in enumerate(
            jax.random.split(run_key, -(-n_samples // batch_size))
        ):
            n = min(batch_size, n_samples - i * batch_size)
            s = task.sample(batch_key, n, Ks[r], Vs[r])
            acc.add(
                np.asarray(
                    jnp.square(
                        multi_head_erf_attention(s.X, K[r], V[r], lam) - s.y
                    )
                )
            )
        est = acc.estimate()
        means.append(est.mean)
        stderrs.append(est.stderr)
    return MonteCarloEstimate(
        np.asarray(means), np.asarray(stderrs), n_samples
    )


# ------------------------------------------------------------------- PGD on the population risk
class PopulationPGD(NamedTuple):
    """Projected gradient descent on the exact risk: final directions and the logged risk."""

    K: np.ndarray
    V: np.ndarray
    steps: np.ndarray
    risk: np.ndarray


def sphere_pgd(
    K0,
    V0,
    K_star,
    V_star,
    lam,
    task: MultiLocationTask,
    *,
    alpha: float,
    n_steps: int,
    log_every: int = 100,
    n_nodes: int = 61,
) -> PopulationPGD:
    r"""PGD (Definition 1, eq. 10) on the exact population risk :func:`multi_head_risk`, every head
    on its sphere: :math:`p \leftarrow (p - \alpha(I - pp^\top)\nabla_p\mathcal R)/\|\cdot\|`.

    ``K0, V0`` of shape (runs, H, d) (independent starts, one task); constant ``lam``. Used
    to find good points of the risk landscape (e.g. the best single head), not to imitate the
    stochastic experiments. ``n_nodes`` defaults to 61 (spacing 0.4: quadrature error about
    1e-13 at :math:`\lambda \le 1/3`, 1e-6 at :math:`\lambda = 1`); the logged risk is computed with
    the same rule.
    """
    task = _check_task(task)
    K0 = _check_heads(K0, "K0", task.d)
    V0 = _check_heads(V0, "V0", task.d)
    if K0.ndim != 3 or K0.shape != V0.shape:
        raise ValueError(
            f"K0 and V0 must have the same shape (runs, H, d), got {K0.shape} and {V0.shape}"
        )
    Ks, Vs = task.check_directions(K_star, V_star)
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    n_steps = check_positive_int(n_steps, "n_steps")
    log_every = check_positive_int(log_every, "log_every")
    n_nodes = check_positive_int(n_nodes, "n_nodes")
    if n_steps % log_every:
        raise ValueError(
            f"log_every must divide n_steps = {n_steps}, got {log_every}"
        )
    K, V, risk = _pgd_loop(
        K0,
        V0,
        Ks,
        Vs,
        lam,
        alpha,
        float(task.d),
        task.gamma,
        task.eps,
        _grid(n_nodes),
        n_log=n_steps // log_every,
        log_every=log_every,
        L=task.L,
        M=task.M,
    )
    return PopulationPGD(
        np.asarray(K),
        np.asarray(V),
        np.arange(n_steps // log_every + 1) * log_every,
        np.asarray(risk),
    )


@partial(jax.jit, static_argnames=("n_log", "log_every", "L", "M"))
def _pgd_loop(
    K0, V0, Ks, Vs, lam, alpha, d, gamma, eps, grid, *, n_log, log_every, L, M
):
    def risk(K, V):
        return _risk_parts(K, V, Ks, Vs, lam, d, gamma, eps, grid, L, M).total

    grad = jax.vmap(jax.value_and_grad(risk, argnums=(0, 1)))

    def step(p, g):
        g = g - jnp.sum(g * p, axis=-1, keepdims=True) * p
        p = p - alpha * g
        return p / jnp.linalg.norm(p, axis=-1, keepdims=True)

    def interval(state, _):
        def body(_, kv):
            K, V = kv
            _, (gK, gV) = grad(K, V)
            return step(K, gK), step(V, gV)

        K, V = jax.lax.fori_loop(0, log_every, body, state)
        return (K, V), jax.vmap(risk)(K, V)

    first = jax.vmap(risk)(K0, V0)
    (K, V), logs = jax.lax.scan(interval, (K0, V0), None, length=n_log)
    return K, V, jnp.concatenate([first[None], logs], axis=0).T


# ------------------------------------------------------------------ the chapter's computations
def sgd_task_directions(config) -> tuple[jax.Array, jax.Array]:
    """The task directions ``(K_star, V_star)``, shape (runs, M, d), of
    :func:`slrlib.experiments.run_sgd_experiment` with its default key (``jax.random.key(config.seed)``):
    :func:`slrlib.experiments.sgd_task_directions` with a location axis even when M = 1, so the
    exact risk of a run's iterates can be computed afterwards.
    """
    from slrlib.experiments import sgd_task_directions as directions

    K_star, V_star = directions(config)
    d = config.task.d
    return jnp.reshape(K_star, (config.n_runs, -1, d)), jnp.reshape(
        V_star, (config.n_runs, -1, d)
    )


class IdealCurves(NamedTuple):
    r"""Exact risks against :math:`\lambda` over several task draws (:func:`ideal_risk_curves`).

    ``ideal`` (draws, lams): the two heads :math:`(k_h, v_h) = (k_h^\star, v_h^\star)`; ``one_head``:
    the single head :math:`(k_1^\star, v_1^\star)`; ``null`` the null predictor's risk
    :math:`M\gamma^2 + \varepsilon^2`; ``eps2`` :math:`\varepsilon^2`.
    """

    lam: np.ndarray
    ideal: np.ndarray
    one_head: np.ndarray
    null: float
    eps2: float


def ideal_risk_curves(
    K_star,
    V_star,
    task: MultiLocationTask,
    lams,
    *,
    n_nodes: int = DEFAULT_NODES,
) -> IdealCurves:
    """Exact risks (:func:`multi_head_risk`) of the ideal heads and of one oracle head, for every
    task draw in ``K_star, V_star`` (draws, M, d) and every ``lam``."""
    task = _check_task(task)
    lams = np.asarray(lams, float)
    if lams.ndim != 1 or lams.size == 0:
        raise ValueError(
            f"lams must be a non-empty 1-d array, got shape {lams.shape}"
        )
    Ks = as_float_array(K_star, "K_star")
    Vs = as_float_array(V_star, "V_star")
    if Ks.ndim != 3:
        raise ValueError(
            f"K_star must have shape (draws, M, d), got shape {Ks.shape}"
        )
    grid = jnp.asarray(lams)[None, :]
    ideal = multi_head_risk(
        Ks[:, None],
        Vs[:, None],
        Ks[:, None],
        Vs[:, None],
        grid,
        task,
        n_nodes=n_nodes,
    )
    one = multi_head_risk(
        Ks[:, None, :1],
        Vs[:, None, :1],
        Ks[:, None],
        Vs[:, None],
        grid,
        task,
        n_nodes=n_nodes,
    )
    return IdealCurves(
        lams,
        np.asarray(ideal),
        np.asarray(one),
        float(task.null_risk),
        float(task.eps**2),
    )


def heads_separated(
    kappa, *, own_min: float = 0.8, other_max: float = 0.3
) -> np.ndarray:
    r"""Whether the heads take one location each: for some assignment of the heads to the
    locations, every head has :math:`|\kappa| >` ``own_min`` with its location and
    :math:`|\kappa| <` ``other_max`` with every other one.

    Parameters
    ----------
    kappa : array_like, shape (..., H, M) with H = M
        Overlaps :math:`\kappa_{hm} = \langle k_h, k_m^\star\rangle` (signs are ignored).
    own_min, other_max : float
        The thresholds (defaults: the criterion of chapter 11, 0.8 and 0.3).

    Returns
    -------
    numpy.ndarray of bool, shape (...)

    Raises
    ------
    ValueError
        When ``kappa`` is not of shape (..., H, H) or not finite.
    """
    k = np.abs(np.asarray(kappa, dtype=float))
    if k.ndim < 2 or k.shape[-1] != k.shape[-2] or k.shape[-1] == 0:
        raise ValueError(
            f"kappa must have shape (..., H, M) with H = M >= 1, got shape {k.shape}"
        )
    if not np.all(np.isfinite(k)):
        raise ValueError("kappa must be finite")
    H = k.shape[-1]
    eye = np.eye(H, dtype=bool)
    out = np.zeros(k.shape[:-2], dtype=bool)
    for perm in itertools.permutations(range(H)):
        m = k[
            ..., list(perm)
        ]  # head h matched to location perm[h], on the diagonal
        own = np.where(eye, m, np.inf).min(axis=(-2, -1))
        other = (
            np.where(eye, -np.inf, m).max(axis=(-2, -1))
            if H > 1
            else np.full(k.shape[:-2], -np.inf)
        )
        out |= (own > own_min) & (other < other_max)
    return out
