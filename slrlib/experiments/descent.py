r"""Named configurations of the paper's experiments, run to tidy results.

The PGD experiments of Section 5 and Appendix E.2 (Figures 4(a), 4(b), 7(a), 7(b)) at the
paper's parameters (Appendix E.2; the authors' published configuration):

======  =====================  ===========================  ======  =========  ===========
name    initialisation         :math:`\lambda`              α       steps      logged every
======  =====================  ===========================  ======  =========  ===========
fig4a   uniform on the sphere  :math:`1/(1 + 10^{-4}t)`     4e-3    120 000    300
fig4b   on :math:`\mathcal M`  0.1                          4e-3    20 000     200
fig7a   uniform on the sphere  0.9                          1e-3    120 000    300
fig7b   uniform on the sphere  0.1                          4e-3    20 000     200
======  =====================  ===========================  ======  =========  ===========

All with :math:`d = 400`, :math:`L = 10`, :math:`\gamma = \sqrt{1/2}`, 30 runs, every step
computed with exact gradients (:func:`slrlib.training.pgd.pgd`). The three sphere experiments
share their 30 initialisations (same seed), so they differ only by :math:`\lambda_t` and α.

The stochastic experiments (:func:`slrlib.training.sgd.sgd`, fresh batch of 5 at every step, held-out
set of 1 000 per run, :math:`d = 80`, :math:`L = 10`, :math:`\varepsilon = 0.1`, α = 1e-3,
:math:`\lambda_0 = 2`, every run with its own task directions and uniform initialisation):

====  ==================  =====  =============================================  =======  ============  ====
name  task                heads  :math:`\lambda_t`                              steps    logged every  runs
====  ==================  =====  =============================================  =======  ============  ====
fig5  single location     1      :math:`2/(1 + 10^{-4}t)`                       200 000  500           30
fig9  two locations (30)  2      :math:`2/(1 + 2\cdot10^{-4}\min(t, 25\,000))`  100 000  1 000         20
====  ==================  =====  =============================================  =======  ============  ====

Figure 5 is the paper's configuration (Section 5 and the authors' published configuration);
the numbers of Figure 9 were lost from the paper's text and are those of the authors' public
notebook (``toy-multihead.ipynb``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from slrlib.validation import (
    check_key,
    check_positive_int,
    check_real_scalar,
    numpy_record,
)
from slrlib.core.geometry import manifold_directions, uniform_directions
from slrlib.training.pgd import PGDResult, pgd
from slrlib.core.risk import risk_from_overlaps
from slrlib.training.sgd import SGDResult, sgd
from slrlib.core.task import MultiLocationTask, SLRTask

__all__ = [
    "PGDConfig",
    "PGD_CONFIGS",
    "PGDExperiment",
    "Initialisation",
    "pgd_initialisation",
    "resolve_config",
    "run_pgd_experiment",
    "pgd_table",
    "recovered",
    "trajectory_runs",
    "SGDConfig",
    "SGD_CONFIGS",
    "SGDExperiment",
    "sgd_initialisation",
    "run_sgd_experiment",
    "sgd_task_directions",
    "sgd_table",
]


@dataclass(frozen=True, kw_only=True)
class PGDConfig:
    r"""One PGD experiment: the task, the optimiser's parameters and the number of runs.

    Built by keyword; frozen.

    Parameters
    ----------
    name, title : str
        Identification (``title`` heads the figure).
    init : {"sphere", "manifold"}
        Initialisation: uniform on the sphere, or on the manifold :math:`\mathcal M`.
    lam : float
        Inverse temperature :math:`\lambda` (:math:`\lambda_0` of the ``"paper"`` schedule).
    schedule : {"constant", "paper"}
        Inverse-temperature schedule (:data:`slrlib.training.pgd.SCHEDULES`).
    alpha : float
        Step size :math:`\alpha`.
    n_steps, log_every : int
        PGD steps, and the logging period.
    d, L : int
        Dimension and sequence length of the task (default 400 and 10).
    gamma : float
        :math:`\gamma` of the task (default :math:`\sqrt{1/2}`).
    n_runs : int
        Number of runs (default 30).
    seed : int
        Seed of the default key, ``jax.random.key(seed)`` (default 0).

    Raises
    ------
    ValueError
        If ``init`` is neither ``"sphere"`` nor ``"manifold"``.
    """

    name: str
    title: str
    init: str  # "sphere" or "manifold"
    lam: float
    schedule: str  # "constant" or "paper"
    alpha: float
    n_steps: int
    log_every: int
    d: int = 400
    L: int = 10
    gamma: float = math.sqrt(0.5)
    n_runs: int = 30
    seed: int = 0

    def __post_init__(self):
        if self.init not in ("sphere", "manifold"):
            raise ValueError(
                f"init must be 'sphere' or 'manifold', got {self.init!r}"
            )

    @property
    def task(self) -> SLRTask:
        """The task, :class:`SLRTask` with ``d``, ``L`` and ``gamma``."""
        return SLRTask(self.d, self.L, self.gamma)

    @property
    def run_steps(self) -> int:
        """Runs × steps: the number of PGD updates of one (k, v) pair."""
        return self.n_runs * self.n_steps

    def scaled(self, **changes: Any) -> "PGDConfig":
        """A copy with some parameters changed (e.g. fewer steps for a quick look).

        Parameters
        ----------
        **changes
            The fields to change and their new values.

        Returns
        -------
        PGDConfig
            The new configuration.
        """
        return replace(self, **changes)


#: The paper's PGD experiments (Figures 4 and 7) by name, at its parameters (Appendix E.2).
PGD_CONFIGS: dict[str, PGDConfig] = {
    c.name: c
    for c in (
        PGDConfig(
            name="fig4a",
            title="Figure 4(a): uniform initialisation, decreasing λ_t = 1/(1 + 1e-4 t)",
            init="sphere",
            lam=1.0,
            schedule="paper",
            alpha=4e-3,
            n_steps=120_000,
            log_every=300,
        ),
        PGDConfig(
            name="fig4b",
            title="Figure 4(b): initialisation on M, λ = 0.1 (Theorem 5)",
            init="manifold",
            lam=0.1,
            schedule="constant",
            alpha=4e-3,
            n_steps=20_000,
            log_every=200,
        ),
        PGDConfig(
            name="fig7a",
            title="Figure 7(a): uniform initialisation, constant λ = 0.9",
            init="sphere",
            lam=0.9,
            schedule="constant",
            alpha=1e-3,
            n_steps=120_000,
            log_every=300,
        ),
        PGDConfig(
            name="fig7b",
            title="Figure 7(b): uniform initialisation, constant λ = 0.1",
            init="sphere",
            lam=0.1,
            schedule="constant",
            alpha=4e-3,
            n_steps=20_000,
            log_every=200,
        ),
    )
}


class PGDExperiment(NamedTuple):
    """A finished PGD experiment: its configuration, the logged trajectories, the wall time.

    Parameters
    ----------
    config : PGDConfig
        The configuration that was run.
    result : slrlib.training.pgd.PGDResult
        The logged trajectories.
    seconds : float
        The wall time, compilation included.
    """

    config: PGDConfig
    result: PGDResult
    seconds: float

    @property
    def excess_risk(self) -> np.ndarray:
        r""":math:`\mathcal R_{\lambda_t}(k_t, v_t) - \varepsilon^2`, shape (runs, logged steps)."""
        return np.asarray(self.result.risk) - self.config.task.eps**2


class Initialisation(NamedTuple):
    """Where an experiment starts: the task directions and the initial pairs of every run.

    Parameters
    ----------
    k_star, v_star : np.ndarray
        The task directions. For PGD, shape (d,): one task for all runs. For stochastic PGD
        every run has its own task: shape (runs, d), or (runs, M, d) for several locations.
    k0, v0 : np.ndarray
        The initial pairs: shape (runs, d) for PGD, (runs, heads, d) for stochastic PGD.
    """

    k_star: np.ndarray
    v_star: np.ndarray
    k0: np.ndarray
    v0: np.ndarray


def pgd_initialisation(
    config: PGDConfig | str, key: jax.Array | None = None
) -> Initialisation:
    r"""The task directions and initial pairs that :func:`run_pgd_experiment` uses with ``key``.

    ``key`` is split in two: the first half draws :math:`(k^\star, v^\star)`
    (:meth:`SLRTask.oracle_directions`), the second the ``n_runs`` initial pairs, uniform on the
    sphere (:func:`slrlib.core.geometry.uniform_directions`) or on the manifold :math:`\mathcal M`
    (:func:`slrlib.core.geometry.manifold_directions`).

    Parameters
    ----------
    config : PGDConfig or str
        A configuration or a name of :data:`PGD_CONFIGS`.
    key : jax.Array, optional
        A JAX random key; default ``jax.random.key(config.seed)``.

    Returns
    -------
    Initialisation
        ``k_star, v_star`` of shape (d,), ``k0, v0`` of shape (runs, d).

    Raises
    ------
    ValueError
        If ``config`` is not a :class:`PGDConfig` or a name of :data:`PGD_CONFIGS`, or ``key`` is
        not a JAX random key.
    """
    config = resolve_config(config)
    key = jax.random.key(config.seed) if key is None else check_key(key)
    task = config.task
    star_key, init_key = jax.random.split(key)
    k_star, v_star = task.oracle_directions(star_key)
    if config.init == "sphere":
        k0, v0 = uniform_directions(init_key, config.d, (config.n_runs,))
    else:
        k0, v0 = manifold_directions(
            init_key, k_star, v_star, (config.n_runs,)
        )
    return numpy_record(Initialisation(k_star, v_star, k0, v0))


def resolve_config(config: PGDConfig | str) -> PGDConfig:
    """A :class:`PGDConfig`, given itself or its name in :data:`PGD_CONFIGS`.

    Parameters
    ----------
    config : PGDConfig or str
        A configuration or a name of :data:`PGD_CONFIGS`.

    Returns
    -------
    PGDConfig
        The configuration.

    Raises
    ------
    ValueError
        If ``config`` is neither a :class:`PGDConfig` nor a name of :data:`PGD_CONFIGS`.
    """
    if isinstance(config, str):
        if config not in PGD_CONFIGS:
            raise ValueError(
                f"config must be one of {sorted(PGD_CONFIGS)}, got {config!r}"
            )
        config = PGD_CONFIGS[config]
    if not isinstance(config, PGDConfig):
        raise ValueError(
            f"config must be a PGDConfig or a name of PGD_CONFIGS, got {config!r}"
        )
    return config


def run_pgd_experiment(
    config: PGDConfig | str, key: jax.Array | None = None
) -> PGDExperiment:
    r"""Run a PGD configuration (a :class:`PGDConfig` or a name of :data:`PGD_CONFIGS`).

    The key draws :math:`(k^\star, v^\star)`, then the ``n_runs`` initialisations
    (:func:`pgd_initialisation`); every step uses exact gradients (:func:`slrlib.training.pgd.pgd`).

    Parameters
    ----------
    config : PGDConfig or str
        A configuration or a name of :data:`PGD_CONFIGS`.
    key : jax.Array, optional
        A JAX random key; default ``jax.random.key(config.seed)``.

    Returns
    -------
    PGDExperiment
        The configuration, the logged trajectories and the wall time (compilation included).

    Raises
    ------
    ValueError
        If ``config`` is not a :class:`PGDConfig` or a name of :data:`PGD_CONFIGS`, ``key`` is not a
        JAX random key, or ``config.n_runs`` is not a positive integer.
    """
    config = resolve_config(config)
    key = jax.random.key(config.seed) if key is None else check_key(key)
    check_positive_int(config.n_runs, "n_runs")
    start = time.perf_counter()
    k_star, v_star, k0, v0 = pgd_initialisation(config, key)
    result = pgd(
        k0,
        v0,
        k_star,
        v_star,
        config.task,
        lam=config.lam,
        alpha=config.alpha,
        n_steps=config.n_steps,
        schedule=config.schedule,
        log_every=config.log_every,
    )
    jax.block_until_ready(result.kappa)
    return PGDExperiment(config, result, time.perf_counter() - start)


def recovered(result: PGDResult, tol: float = 0.05) -> np.ndarray:
    r"""Which runs end near :math:`\pm(k^\star, v^\star)`.

    A run has recovered the oracle when, at the last logged step,
    :math:`|\kappa| > 1 - \text{tol}` and :math:`|\nu| > 1 - \text{tol}`.

    Parameters
    ----------
    result : slrlib.training.pgd.PGDResult
        The logged trajectories (or any record with the fields ``kappa`` and ``nu`` logged
        along the last axis, such as :class:`~slrlib.training.sgd.SGDResult`).
    tol : float
        Tolerance, in :math:`(0, 1]` (default 0.05): :math:`|\kappa|` and :math:`|\nu|` lie in
        :math:`[-1, 1]`, so ``tol <= 0`` would refuse every run and ``tol > 1`` accept every one.

    Returns
    -------
    numpy.ndarray of bool, shape ``result.kappa.shape[:-1]``
        One entry per run for a :class:`~slrlib.training.pgd.PGDResult`: shape (runs,). For an
        :class:`~slrlib.training.sgd.SGDResult`, one entry per run, head and location: shape
        (runs, H, M), True where head ``h`` has recovered location ``m``
        (``recovered(res).any(axis=1)``: the locations some head found).

    Raises
    ------
    ValueError
        When ``result`` is not such a record (its ``kappa`` and ``nu`` arrays of the same shape,
        with at least one axis), or ``tol`` is not a number in :math:`(0, 1]`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> import jax.numpy as jnp
    >>> from slrlib import SLRTask, pgd, recovered
    >>> task = SLRTask(d=20, L=5)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> # three runs: from (k*, v*), from (-k*, -v*), from (v*, k*)
    >>> k0 = jnp.stack([k_star, -k_star, v_star])
    >>> v0 = jnp.stack([v_star, -v_star, k_star])
    >>> res = pgd(k0, v0, k_star, v_star, task, lam=0.1, alpha=0.1, n_steps=10)
    >>> recovered(res)  # both oracles count; the swapped start does not
    array([ True,  True, False])
    """
    if not (hasattr(result, "kappa") and hasattr(result, "nu")):
        raise ValueError(
            "result must be a PGDResult (a record with the fields kappa and nu, as pgd returns), "
            f"got {type(result).__name__}: {result!r:.80}"
        )
    kappa, nu = np.asarray(result.kappa), np.asarray(result.nu)
    if kappa.ndim < 1 or kappa.shape != nu.shape:
        raise ValueError(
            "result.kappa and result.nu must be arrays of the same shape, the logged steps on "
            f"their last axis, got shapes {kappa.shape} and {nu.shape}"
        )
    tol = check_real_scalar(tol, "tol")
    if not 0.0 < tol <= 1.0:
        raise ValueError(
            "tol must be in (0, 1] (a run has recovered when |kappa| and |nu| > 1 - tol), "
            f"got {tol!r}"
        )
    kappa = np.abs(kappa[..., -1])
    nu = np.abs(nu[..., -1])
    return (kappa > 1 - tol) & (nu > 1 - tol)


def trajectory_runs(result: PGDResult, n: int = 2) -> list[int]:
    r"""Runs whose :math:`(\kappa, \nu)` path a figure draws.

    The first recovering run and the first failing one when both exist (so both outcomes are
    seen, :func:`recovered`), completed by the next runs.

    Parameters
    ----------
    result : slrlib.training.pgd.PGDResult
        The logged trajectories.
    n : int
        Number of runs to pick (default 2).

    Returns
    -------
    list of int
        The picked runs, in increasing order.
    """
    ok = recovered(result)
    picks: list[int] = []
    for want in (True, False):
        idx = np.flatnonzero(ok == want)
        if idx.size:
            picks.append(int(idx[0]))
    for i in range(ok.size):
        if len(picks) >= n:
            break
        if i not in picks:
            picks.append(i)
    return sorted(picks[:n])


def pgd_table(exp: PGDExperiment) -> dict[str, np.ndarray]:
    """The plotted data as tidy columns: one row per (run, logged step).

    Parameters
    ----------
    exp : PGDExperiment
        A finished experiment.

    Returns
    -------
    dict of str to numpy.ndarray
        Columns ``run, step, lam, kappa, nu, theta, eta, rho, excess_risk, distance``.
    """
    r = exp.result
    n_runs, n_log = np.asarray(r.kappa).shape
    runs = np.repeat(np.arange(n_runs), n_log)
    cols = {
        "run": runs,
        "step": np.tile(r.steps, n_runs),
        "lam": np.tile(r.lam, n_runs),
    }
    for name in ("kappa", "nu", "theta", "eta", "rho"):
        cols[name] = np.asarray(getattr(r, name)).ravel()
    cols["excess_risk"] = exp.excess_risk.ravel()
    cols["distance"] = np.asarray(r.distance).ravel()
    return cols


# ------------------------------------------------------------------ stochastic PGD
@dataclass(frozen=True, kw_only=True)
class SGDConfig:
    r"""One stochastic-PGD experiment (:func:`slrlib.training.sgd.sgd`): task, predictor, optimiser, runs.

    Built by keyword; frozen.

    Parameters
    ----------
    name, title : str
        Identification (``title`` heads the figure).
    lam : float
        Initial inverse temperature :math:`\lambda_0`.
    decay : float
        Decay of the schedule, :math:`\lambda_t = \lambda_0/(1 + \text{decay}\cdot\min(t, t_{\rm freeze}))`
        (:func:`slrlib.training.sgd.lam_schedule`).
    alpha : float
        Step size :math:`\alpha`.
    n_steps, log_every : int
        Steps, and the logging period.
    batch_size : int
        Fresh samples per step (default 5).
    test_size : int
        Held-out samples per run (default 1000).
    d, L : int
        Dimension and sequence length (default 80 and 10).
    M : int
        Number of relevant tokens (default 1: single-location regression).
    heads : int
        Number of heads of the predictor (default 1).
    gamma, eps : float
        :math:`\gamma` and :math:`\varepsilon` of the task (default :math:`\sqrt{1/2}` and 0.1).
    freeze_after : int or None
        Step :math:`t_{\rm freeze}` after which :math:`\lambda_t` stops decreasing (default None: never).
    n_runs : int
        Number of runs (default 30).
    seed : int
        Seed of the default key, ``jax.random.key(seed)`` (default 0).
    sampler : {"exact", "plain"}
        How batch gradients are drawn (:func:`slrlib.training.sgd.sgd`; default ``"exact"``).
    """

    name: str
    title: str
    lam: float
    decay: float
    alpha: float
    n_steps: int
    log_every: int
    batch_size: int = 5
    test_size: int = 1000
    d: int = 80
    L: int = 10
    M: int = 1
    heads: int = 1
    gamma: float = math.sqrt(0.5)
    eps: float = 0.1
    freeze_after: int | None = None
    n_runs: int = 30
    seed: int = 0
    sampler: str = "exact"

    @property
    def final_lam(self) -> float:
        r"""The inverse temperature at the last step.

        :math:`\lambda_T = \lambda_0/(1 + \text{decay}\cdot\min(T, t_{\rm freeze}))`.
        """
        t_last = (
            self.n_steps
            if self.freeze_after is None
            else min(self.n_steps, self.freeze_after)
        )
        return self.lam / (1.0 + self.decay * t_last)

    @property
    def task(self) -> SLRTask | MultiLocationTask:
        """The task: :class:`SLRTask` when ``M = 1``, else :class:`MultiLocationTask`."""
        if self.M == 1:
            return SLRTask(self.d, self.L, self.gamma, self.eps)
        return MultiLocationTask(self.d, self.L, self.M, self.gamma, self.eps)

    @property
    def run_steps(self) -> int:
        """Runs × steps: the number of stochastic updates."""
        return self.n_runs * self.n_steps

    def scaled(self, **changes: Any) -> "SGDConfig":
        """A copy with some parameters changed.

        Parameters
        ----------
        **changes
            The fields to change and their new values.

        Returns
        -------
        SGDConfig
            The new configuration.
        """
        return replace(self, **changes)


#: The stochastic-PGD experiments (Figures 5 and 9) by name.
SGD_CONFIGS: dict[str, SGDConfig] = {
    c.name: c
    for c in (
        SGDConfig(
            name="fig5",
            title="Figure 5: stochastic PGD on the empirical risk, λ_t = 2/(1 + 1e-4 t)",
            lam=2.0,
            decay=1e-4,
            alpha=1e-3,
            n_steps=200_000,
            log_every=500,
        ),
        SGDConfig(
            name="fig9",
            title="Figure 9: two heads (31) on two relevant tokens (30)",
            lam=2.0,
            decay=2e-4,
            alpha=1e-3,
            n_steps=100_000,
            log_every=1000,
            M=2,
            heads=2,
            freeze_after=25_000,
            n_runs=20,
        ),
    )
}


class SGDExperiment(NamedTuple):
    """A finished stochastic-PGD experiment: configuration, logged trajectories, wall time.

    Parameters
    ----------
    config : SGDConfig
        The configuration that was run.
    result : slrlib.training.sgd.SGDResult
        The logged trajectories.
    seconds : float
        The wall time, compilation included.
    """

    config: SGDConfig
    result: SGDResult
    seconds: float

    @property
    def excess_risk(self) -> np.ndarray:
        """Held-out risk minus ε² (the paper's excess risk), shape (runs, logged steps)."""
        return np.asarray(self.result.risk) - self.config.eps**2

    @property
    def population_excess_risk(self) -> np.ndarray:
        r"""The exact :math:`\mathcal R_{\lambda_t}(k_t, v_t) - \varepsilon^2` (Proposition 15).

        Shape (runs, logged steps). One head and one location only (the closed form of
        Theorem 1): the quantity the held-out risk estimates. Raises ``ValueError`` otherwise.
        """
        if self.config.M != 1 or self.config.heads != 1:
            raise ValueError(
                "population_excess_risk needs M = 1 and heads = 1 (the closed form of Theorem 1)"
            )
        r = self.result
        ov = [
            np.asarray(x)[:, 0, 0] for x in (r.kappa, r.nu, r.theta, r.eta)
        ] + [np.asarray(r.rho)[:, 0]]
        risk = risk_from_overlaps(
            *ov, np.asarray(r.lam)[None, :], self.config.task
        )
        return np.asarray(risk) - self.config.eps**2


def _resolve_sgd_config(config: SGDConfig | str) -> SGDConfig:
    if isinstance(config, str):
        if config not in SGD_CONFIGS:
            raise ValueError(
                f"config must be one of {sorted(SGD_CONFIGS)}, got {config!r}"
            )
        config = SGD_CONFIGS[config]
    if not isinstance(config, SGDConfig):
        raise ValueError(
            f"config must be an SGDConfig or a name of SGD_CONFIGS, got {config!r}"
        )
    return config


def _task_directions(config: SGDConfig, star_key):
    task = config.task
    stars = [
        task.oracle_directions(k)
        for k in jax.random.split(star_key, config.n_runs)
    ]
    return jnp.stack([s[0] for s in stars]), jnp.stack([s[1] for s in stars])


def sgd_initialisation(
    config: SGDConfig | str, key: jax.Array | None = None
) -> Initialisation:
    """The task directions and initial pairs that :func:`run_sgd_experiment` uses with ``key``.

    The key is split into an initialisation key and a key for the batches; the initialisation
    key is split again, into one key per run for its task directions
    (:meth:`SLRTask.oracle_directions`) and one for the ``runs × heads`` initial pairs, uniform on
    the sphere (:func:`slrlib.core.geometry.uniform_directions`).

    Parameters
    ----------
    config : SGDConfig or str
        A configuration or a name of :data:`SGD_CONFIGS`.
    key : jax.Array, optional
        A JAX random key; default ``jax.random.key(config.seed)``.

    Returns
    -------
    Initialisation
        ``k_star, v_star`` of shape (runs, d) for one location, (runs, M, d) for several;
        ``k0, v0`` of shape (runs, heads, d).

    Raises
    ------
    ValueError
        If ``config`` is not an :class:`SGDConfig` or a name of :data:`SGD_CONFIGS`, or ``key`` is
        not a JAX random key.
    """
    config = _resolve_sgd_config(config)
    key = jax.random.key(config.seed) if key is None else check_key(key)
    star_key, init_key = jax.random.split(jax.random.split(key)[0])
    K_star, V_star = _task_directions(config, star_key)
    k0, v0 = uniform_directions(
        init_key, config.d, (config.n_runs * config.heads,)
    )
    shape = (config.n_runs, config.heads, config.d)
    return numpy_record(
        Initialisation(K_star, V_star, k0.reshape(shape), v0.reshape(shape))
    )


def sgd_task_directions(
    config: SGDConfig | str, key: jax.Array | None = None
) -> tuple[jax.Array, jax.Array]:
    """Each run's task directions, as :func:`run_sgd_experiment` draws them with the same key.

    Cheap: no SGD step is taken, no start point drawn.

    Parameters
    ----------
    config : SGDConfig or str
        A configuration or a name of :data:`SGD_CONFIGS`.
    key : jax.Array, optional
        A JAX random key; default ``jax.random.key(config.seed)``.

    Returns
    -------
    tuple of jax.Array
        ``(K_star, V_star)``, of shape (runs, d) for one location, (runs, M, d) for several.

    Raises
    ------
    ValueError
        If ``config`` is not an :class:`SGDConfig` or a name of :data:`SGD_CONFIGS`, or ``key`` is
        not a JAX random key.
    """
    config = _resolve_sgd_config(config)
    key = jax.random.key(config.seed) if key is None else check_key(key)
    star_key = jax.random.split(jax.random.split(key)[0])[
        0
    ]  # as in sgd_initialisation
    return _task_directions(config, star_key)


def run_sgd_experiment(
    config: SGDConfig | str, key: jax.Array | None = None
) -> SGDExperiment:
    """Run a stochastic-PGD configuration (an :class:`SGDConfig` or a name of :data:`SGD_CONFIGS`).

    The key draws each run's task directions, the initialisations (:func:`sgd_initialisation`),
    then the batches and held-out sets.

    Parameters
    ----------
    config : SGDConfig or str
        A configuration or a name of :data:`SGD_CONFIGS`.
    key : jax.Array, optional
        A JAX random key; default ``jax.random.key(config.seed)``.

    Returns
    -------
    SGDExperiment
        The configuration, the logged trajectories and the wall time (compilation included).

    Raises
    ------
    ValueError
        If ``config`` is not an :class:`SGDConfig` or a name of :data:`SGD_CONFIGS`, ``key`` is not a
        JAX random key, or ``config.n_runs`` or ``config.heads`` is not a positive integer.
    """
    config = _resolve_sgd_config(config)
    key = jax.random.key(config.seed) if key is None else check_key(key)
    check_positive_int(config.n_runs, "n_runs")
    check_positive_int(config.heads, "heads")
    start = time.perf_counter()
    run_key = jax.random.split(key)[1]
    K_star, V_star, K0, V0 = sgd_initialisation(config, key)
    result = sgd(
        K0,
        V0,
        K_star,
        V_star,
        config.task,
        lam=config.lam,
        alpha=config.alpha,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        key=run_key,
        decay=config.decay,
        freeze_after=config.freeze_after,
        log_every=config.log_every,
        test_size=config.test_size,
        sampler=config.sampler,
    )
    return SGDExperiment(config, result, time.perf_counter() - start)


def sgd_table(exp: SGDExperiment) -> dict[str, np.ndarray]:
    """The logged data as tidy columns: one row per (run, head, location, logged step).

    Parameters
    ----------
    exp : SGDExperiment
        A finished experiment.

    Returns
    -------
    dict of str to numpy.ndarray
        Columns ``run, head, location, step, lam, kappa, nu, theta, eta, rho, excess_risk``
        (plus ``population_excess_risk`` for one head and one location).
    """
    r = exp.result
    kappa = np.asarray(r.kappa)
    runs, H, M, n_log = kappa.shape
    grid = np.meshgrid(
        np.arange(runs),
        np.arange(H),
        np.arange(M),
        np.arange(n_log),
        indexing="ij",
    )
    run, head, loc, idx = (g.ravel() for g in grid)
    cols = {
        "run": run,
        "head": head,
        "location": loc,
        "step": np.asarray(r.steps)[idx],
        "lam": np.asarray(r.lam)[idx],
    }
    for name in ("kappa", "nu", "theta", "eta"):
        cols[name] = np.asarray(getattr(r, name)).ravel()
    cols["rho"] = np.asarray(r.rho)[run, head, idx]
    cols["excess_risk"] = exp.excess_risk[run, idx]
    if M == 1 and H == 1:
        cols["population_excess_risk"] = exp.population_excess_risk[run, idx]
    return cols
