r"""Computations behind chapter 6: the invariant manifold :math:`\mathcal M` and step 1 of the proof of Theorem 5.

Pure functions on top of :mod:`slrlib.training.pgd` and :mod:`slrlib.core.risk` (Marion et al.,
2025, Section 5 and Appendix A): :func:`overlap_partials` (the five partial derivatives of
the closed-form risk, Lemma 14), :func:`gradients_from_partials` and
:func:`euclidean_gradients` (the Euclidean gradients rebuilt from them, hence the
4-dimensional span, and by ``jax.grad`` in :math:`\mathbb R^d`), :func:`manifold_drift`
(distance to :math:`\mathcal M` at every step of PGD started on it, Lemma 4) and
:func:`reduced_vs_full` (Lemma 7's map against full PGD, from pairs on :math:`\mathcal M`
with prescribed :math:`(\kappa, \nu)`, :func:`~slrlib.core.geometry.directions_with_overlaps`),
and :func:`manifold_risk_quadrature` (Lemma 6 written out a second time, with
:math:`\zeta` by Gauss–Hermite quadrature: the independent reference that the closed form
of Theorem 1 is checked against on :math:`\mathcal M`).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from slrlib.core.geometry import directions_with_overlaps
from slrlib.core.risk import overlaps, population_risk, risk_from_overlaps
from slrlib.core.task import SLRTask, check_directions, check_task
from slrlib.experiments import PGDConfig, resolve_config, run_pgd_experiment
from slrlib.training.pgd import pgd, reduced_pgd
from slrlib.validation import (
    as_float_array,
    check_finite,
    check_positive_int,
    check_real_scalar,
)

__all__ = [
    "manifold_risk_quadrature",
    "overlap_partials",
    "gradients_from_partials",
    "euclidean_gradients",
    "ManifoldDrift",
    "manifold_drift",
    "ReducedVsFull",
    "reduced_vs_full",
]


def overlap_partials(kappa, nu, theta, eta, rho, lam, task: SLRTask):
    r"""The partial derivatives :math:`(\partial_\kappa, \partial_\nu, \partial_\theta,
    \partial_\eta, \partial_\rho)\widetilde{\mathcal R}_\lambda` of the closed form of
    Theorem 1 / Proposition 15, at overlaps that broadcast together.

    Computed by ``jax.grad`` of :func:`slrlib.risk_from_overlaps`. At
    :math:`\theta = \eta = \rho = 0` the last three vanish (Lemma 14: the formula is even in
    :math:`(\theta, \eta, \rho)` jointly) and the first two are those of the manifold risk.
    Returns a tuple of five arrays of the broadcast shape.
    """
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    args = [
        as_float_array(x, name)
        for x, name in zip(
            (kappa, nu, theta, eta, rho),
            ("kappa", "nu", "theta", "eta", "rho"),
        )
    ]
    for x, name in zip(args, ("kappa", "nu", "theta", "eta", "rho")):
        check_finite(x, name)
    args = jnp.broadcast_arrays(*args)

    def total(o):
        return jnp.sum(risk_from_overlaps(*o, lam, task))

    return tuple(jax.grad(total)(tuple(args)))


def gradients_from_partials(k, v, k_star, v_star, lam, task: SLRTask):
    r"""Euclidean gradients of the risk rebuilt from the five partial derivatives:

    .. math::

        \nabla_k\mathcal R = \partial_\kappa\mathcal R\,k^\star + \partial_\eta\mathcal R\,v^\star
        + \partial_\rho\mathcal R\,v, \qquad
        \nabla_v\mathcal R = \partial_\nu\mathcal R\,v^\star + \partial_\theta\mathcal R\,k^\star
        + \partial_\rho\mathcal R\,k

    (chain rule through :math:`\kappa = \langle k, k^\star\rangle` etc.). Both lie in
    :math:`\operatorname{span}\{k^\star, v^\star, k, v\}`. ``k, v`` of shape (..., d).
    Returns ``(grad_k, grad_v)``.
    """
    task = check_task(task)
    k = task.check_parameter_vector(k, "k")
    v = task.check_parameter_vector(v, "v")
    k_star, v_star = check_directions(k_star, v_star, task.d)
    dk, dn, dth, de, dr = overlap_partials(
        *overlaps(k, v, k_star, v_star), lam, task
    )
    gk = dk[..., None] * k_star + de[..., None] * v_star + dr[..., None] * v
    gv = dn[..., None] * v_star + dth[..., None] * k_star + dr[..., None] * k
    return gk, gv


def euclidean_gradients(k, v, k_star, v_star, lam, task: SLRTask):
    r"""Euclidean gradients :math:`(\nabla_k\mathcal R, \nabla_v\mathcal R)` by ``jax.grad``
    of :func:`slrlib.population_risk` with respect to the :math:`d`-dimensional vectors
    (the independent computation that :func:`gradients_from_partials` is checked against)."""
    task = check_task(task)
    k = task.check_parameter_vector(k, "k")
    v = task.check_parameter_vector(v, "v")
    k_star, v_star = check_directions(k_star, v_star, task.d)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)

    def total(k, v):
        return jnp.sum(population_risk(k, v, k_star, v_star, lam, task))

    return jax.grad(total, argnums=(0, 1))(k, v)


class ManifoldDrift(NamedTuple):
    r"""How far PGD started on :math:`\mathcal M` drifts from it, at every step.

    ``steps`` (n+1,); ``max_distance``, ``median_distance`` (n+1,): over runs, of
    :math:`\sqrt{\theta^2+\eta^2+\rho^2}`; ``max_abs_theta``, ``max_abs_eta``,
    ``max_abs_rho`` (n+1,): over runs; ``final_kappa``, ``final_nu`` (runs,);
    ``config`` the experiment run; ``seconds`` its wall time (compilation included).
    """

    steps: np.ndarray
    max_distance: np.ndarray
    median_distance: np.ndarray
    max_abs_theta: np.ndarray
    max_abs_eta: np.ndarray
    max_abs_rho: np.ndarray
    final_kappa: np.ndarray
    final_nu: np.ndarray
    config: PGDConfig
    seconds: float


def manifold_drift(config: PGDConfig | str = "fig4b") -> ManifoldDrift:
    r"""Run a PGD configuration started on :math:`\mathcal M` logging *every* step, and
    summarise the distance to :math:`\mathcal M` over runs (Lemma 4 says it stays 0; in
    floating point it stays at round-off).

    The default is Figure 4(b)'s: :math:`d = 400`, :math:`L = 10`, :math:`\lambda = 0.1`,
    :math:`\alpha = 4\cdot 10^{-3}`, 20 000 steps, 30 runs, same seed (hence the same runs).
    """
    config = resolve_config(config)
    if config.init != "manifold":
        raise ValueError(
            f"config must start on the manifold (init='manifold'), got init={config.init!r}"
        )
    exp = run_pgd_experiment(config.scaled(log_every=1))
    r = exp.result
    dist = np.asarray(r.distance)
    return ManifoldDrift(
        steps=np.asarray(r.steps),
        max_distance=dist.max(axis=0),
        median_distance=np.median(dist, axis=0),
        max_abs_theta=np.abs(np.asarray(r.theta)).max(axis=0),
        max_abs_eta=np.abs(np.asarray(r.eta)).max(axis=0),
        max_abs_rho=np.abs(np.asarray(r.rho)).max(axis=0),
        final_kappa=np.asarray(r.kappa)[:, -1],
        final_nu=np.asarray(r.nu)[:, -1],
        config=exp.config,
        seconds=exp.seconds,
    )


class ReducedVsFull(NamedTuple):
    r"""Full PGD on :math:`\mathcal M` against Lemma 7's reduced map from the same :math:`(\kappa_0, \nu_0)`.

    ``steps`` (n_log,); ``full_kappa``, ``full_nu``, ``reduced_kappa``, ``reduced_nu``
    (runs, n_log); ``gap`` (n_log,): :math:`\max_{\text{runs}}\max(|\kappa^{\rm full}_t - \kappa^{\rm red}_t|,
    |\nu^{\rm full}_t - \nu^{\rm red}_t|)`; ``full_risk`` and ``reduced_risk`` (runs, n_log);
    ``distance`` (n_log,): the largest distance of full PGD to :math:`\mathcal M` over runs;
    wall times (compilation included).
    """

    steps: np.ndarray
    full_kappa: np.ndarray
    full_nu: np.ndarray
    reduced_kappa: np.ndarray
    reduced_nu: np.ndarray
    gap: np.ndarray
    full_risk: np.ndarray
    reduced_risk: np.ndarray
    distance: np.ndarray
    config: PGDConfig
    seconds_full: float
    seconds_reduced: float


def reduced_vs_full(
    config: PGDConfig | str = "fig4b", starts=None, key=None
) -> ReducedVsFull:
    r"""Run full PGD (:func:`slrlib.training.pgd.pgd`, in :math:`\mathbb R^d`) from initialisations on
    :math:`\mathcal M` and the reduced map :math:`F` (:func:`slrlib.training.pgd.reduced_pgd`) from
    their :math:`(\kappa_0, \nu_0)`, with the same :math:`\lambda`, :math:`\alpha` and steps; log
    both every ``config.log_every`` steps. Lemma 7 says the paths coincide.

    ``starts`` (m, 2): prescribed :math:`(\kappa_0, \nu_0)`, turned into vectors by
    :func:`~slrlib.core.geometry.directions_with_overlaps` with :math:`\theta = \eta = \rho = 0` (``key``, default ``jax.random.key(config.seed)``, draws the
    task's directions and the orthogonal parts); default: the configuration's own
    initialisation (:func:`slrlib.experiments.run_pgd_experiment`).
    """
    config = resolve_config(config)
    if config.init != "manifold" or config.schedule != "constant":
        raise ValueError(
            "config must start on the manifold with a constant schedule "
            f"(Lemma 7), got init={config.init!r}, schedule={config.schedule!r}"
        )
    if starts is None:
        exp = run_pgd_experiment(config)
        r, seconds_full = exp.result, exp.seconds
    else:
        starts = np.asarray(starts, dtype=float)
        if starts.ndim != 2 or starts.shape[1] != 2:
            raise ValueError(
                f"starts must have shape (m, 2), got shape {starts.shape}"
            )
        key = jax.random.key(config.seed) if key is None else key
        star_key, init_key = jax.random.split(key)
        task = config.task
        t0 = time.perf_counter()
        k_star, v_star = task.oracle_directions(star_key)
        k0, v0 = directions_with_overlaps(
            starts[:, 0], starts[:, 1], 0.0, 0.0, 0.0, k_star, v_star, init_key
        )
        r = pgd(
            k0,
            v0,
            k_star,
            v_star,
            task,
            lam=config.lam,
            alpha=config.alpha,
            n_steps=config.n_steps,
            log_every=config.log_every,
        )
        jax.block_until_ready(r.kappa)
        seconds_full = time.perf_counter() - t0
        config = config.scaled(n_runs=starts.shape[0])
    start = time.perf_counter()
    red = reduced_pgd(
        np.clip(r.kappa[:, 0], -1, 1),
        np.clip(r.nu[:, 0], -1, 1),
        config.task,
        lam=config.lam,
        alpha=config.alpha,
        n_steps=config.n_steps,
        log_every=config.log_every,
    )
    jax.block_until_ready(red.kappa)
    seconds = time.perf_counter() - start
    fk, fn = np.asarray(r.kappa), np.asarray(r.nu)
    rk, rn = np.asarray(red.kappa), np.asarray(red.nu)
    gap = np.maximum(np.abs(fk - rk), np.abs(fn - rn)).max(axis=0)
    return ReducedVsFull(
        np.asarray(r.steps),
        fk,
        fn,
        rk,
        rn,
        gap,
        np.asarray(r.risk),
        np.asarray(red.risk),
        np.asarray(r.distance).max(axis=0),
        config,
        seconds_full,
        seconds,
    )


def manifold_risk_quadrature(
    kappa, nu, lam, task: SLRTask, n_nodes: int = 100
) -> jax.Array:
    r"""Lemma 6 of the paper written out from its statement, with :math:`\zeta` by Gauss–Hermite quadrature.

    .. math::

        \mathcal R_\lambda(\kappa, \nu) = \varepsilon^2 + (L-1)\,\zeta(0, \lambda)
        + \gamma^2\Big[1 - 2\nu\operatorname{erf}\Big(\frac{\lambda q\kappa}{\sqrt{1 + 2\lambda^2\gamma^2}}\Big)
        + \zeta(\lambda q\kappa, \lambda\gamma)\Big],
        \qquad q = \sqrt{d/2},

    where :math:`\zeta(t, s) = \mathbb E[\operatorname{erf}(t + sG)^2]
    \approx \pi^{-1/2}\sum_i w_i\operatorname{erf}(t + \sqrt2\,s\,x_i)^2` with the
    ``n_nodes`` Gauss–Hermite nodes :math:`x_i` and weights :math:`w_i`. This shares no code
    with :func:`slrlib.manifold_risk` (which sets :math:`\theta = \eta = \rho = 0` in the
    closed form of Proposition 15, whose :math:`\zeta` is Owen's T function and whose
    derivatives use the exact :math:`\partial_t\zeta`): it is the second derivation that
    chapter 6 checks Theorem 1 against on :math:`\mathcal M`, and, differentiated by ``jax``,
    an independent :math:`\partial_\kappa\mathcal R`. The integrand is entire; with the default
    100 nodes the quadrature is exact to round-off for :math:`s \le 1` (tested against the
    special values :math:`\zeta(0, s) = \frac2\pi\arcsin\frac{2s^2}{1+2s^2}` and
    :math:`\zeta(t, 0) = \operatorname{erf}(t)^2`).

    Parameters
    ----------
    kappa, nu : array_like
        Overlaps :math:`\kappa = \langle k, k^\star\rangle`, :math:`\nu = \langle v, v^\star\rangle`
        in :math:`[-1, 1]`; they broadcast together. May be traced (``jax.grad``).
    lam : float
        Inverse temperature :math:`\lambda > 0`.
    task : SLRTask
        The task (:math:`d`, :math:`L`, :math:`\gamma`, :math:`\varepsilon`).
    n_nodes : int
        Number of Gauss–Hermite nodes, ``>= 1``.

    Returns
    -------
    jax.Array
        The risk, of the broadcast shape of ``kappa`` and ``nu``.

    Raises
    ------
    ValueError
        When ``lam`` is not a real number ``> 0`` or ``n_nodes`` is not a positive integer.
    """
    from jax.scipy.special import erf

    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    n_nodes = check_positive_int(n_nodes, "n_nodes")
    nodes, weights = np.polynomial.hermite.hermgauss(n_nodes)
    nodes, weights = jnp.asarray(nodes), jnp.asarray(weights)

    def zeta_gh(t, s):
        t = jnp.asarray(t, dtype=float)
        return jnp.sum(
            weights * erf(t[..., None] + np.sqrt(2.0) * s * nodes) ** 2,
            axis=-1,
        ) / np.sqrt(np.pi)

    kappa, nu = jnp.broadcast_arrays(
        jnp.asarray(kappa, dtype=float), jnp.asarray(nu, dtype=float)
    )
    q = np.sqrt(task.d / 2.0)
    g2 = task.gamma**2
    t = lam * q * kappa
    relevant = g2 * (
        1.0
        - 2.0 * nu * erf(t / np.sqrt(1.0 + 2.0 * lam**2 * g2))
        + zeta_gh(t, lam * task.gamma)
    )
    return task.eps**2 + (task.L - 1) * zeta_gh(0.0, lam) + relevant
