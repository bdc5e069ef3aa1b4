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
computed with exact gradients (:func:`slrlib.dynamics.pgd`). The three sphere experiments
share their 30 initialisations (same seed), so they differ only by :math:`\lambda_t` and α.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import NamedTuple

import jax
import numpy as np

from slrlib._validation import check_key, check_positive_int
from slrlib.dynamics import PGDResult, init_on_manifold, init_uniform, pgd
from slrlib.task import SLRTask

__all__ = [
    "PGDConfig",
    "PGD_CONFIGS",
    "PGDExperiment",
    "resolve_config",
    "run_pgd_experiment",
    "pgd_table",
    "recovered",
    "trajectory_runs",
]


@dataclass(frozen=True)
class PGDConfig:
    """One PGD experiment: the task, the optimiser's parameters and the number of runs."""

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
            raise ValueError(f"init must be 'sphere' or 'manifold', got {self.init!r}")

    @property
    def task(self) -> SLRTask:
        return SLRTask(self.d, self.L, self.gamma)

    @property
    def run_steps(self) -> int:
        """Runs × steps: the number of PGD updates of one (k, v) pair."""
        return self.n_runs * self.n_steps

    def scaled(self, **changes) -> "PGDConfig":
        """A copy with some parameters changed (e.g. fewer steps for a quick look)."""
        return replace(self, **changes)


PGD_CONFIGS: dict[str, PGDConfig] = {
    c.name: c
    for c in (
        PGDConfig("fig4a", "Figure 4(a): uniform initialisation, decreasing λ_t = 1/(1 + 1e-4 t)",
                  "sphere", 1.0, "paper", 4e-3, 120_000, 300),
        PGDConfig("fig4b", "Figure 4(b): initialisation on M, λ = 0.1 (Theorem 5)",
                  "manifold", 0.1, "constant", 4e-3, 20_000, 200),
        PGDConfig("fig7a", "Figure 7(a): uniform initialisation, constant λ = 0.9",
                  "sphere", 0.9, "constant", 1e-3, 120_000, 300),
        PGDConfig("fig7b", "Figure 7(b): uniform initialisation, constant λ = 0.1",
                  "sphere", 0.1, "constant", 4e-3, 20_000, 200),
    )
}


class PGDExperiment(NamedTuple):
    """A finished PGD experiment: its configuration, the logged trajectories, the wall time."""

    config: PGDConfig
    result: PGDResult
    seconds: float

    @property
    def excess_risk(self) -> np.ndarray:
        r""":math:`\mathcal R_{\lambda_t}(k_t, v_t) - \varepsilon^2`, shape (runs, logged steps)."""
        return np.asarray(self.result.risk) - self.config.task.eps**2


def _initialisation(config: PGDConfig, key):
    task = config.task
    star_key, init_key = jax.random.split(key)
    k_star, v_star = task.oracle_directions(star_key)
    if config.init == "sphere":
        k0, v0 = init_uniform(init_key, config.n_runs, config.d)
    else:
        k0, v0 = init_on_manifold(init_key, config.n_runs, k_star, v_star)
    return k_star, v_star, k0, v0


def resolve_config(config: PGDConfig | str) -> PGDConfig:
    """A :class:`PGDConfig`, given itself or its name in :data:`PGD_CONFIGS`."""
    if isinstance(config, str):
        if config not in PGD_CONFIGS:
            raise ValueError(f"config must be one of {sorted(PGD_CONFIGS)}, got {config!r}")
        config = PGD_CONFIGS[config]
    if not isinstance(config, PGDConfig):
        raise ValueError(f"config must be a PGDConfig or a name of PGD_CONFIGS, got {config!r}")
    return config


def run_pgd_experiment(config: PGDConfig | str, key=None) -> PGDExperiment:
    """Run a PGD configuration (a :class:`PGDConfig` or a name of :data:`PGD_CONFIGS`).

    ``key`` defaults to ``jax.random.key(config.seed)``: it draws :math:`(k^\\star, v^\\star)`,
    then the ``n_runs`` initialisations. The wall time includes compilation.
    """
    config = resolve_config(config)
    key = jax.random.key(config.seed) if key is None else check_key(key)
    check_positive_int(config.n_runs, "n_runs")
    start = time.perf_counter()
    k_star, v_star, k0, v0 = _initialisation(config, key)
    result = pgd(k0, v0, k_star, v_star, config.task, lam=config.lam, alpha=config.alpha,
                 n_steps=config.n_steps, schedule=config.schedule, log_every=config.log_every)
    jax.block_until_ready(result.kappa)
    return PGDExperiment(config, result, time.perf_counter() - start)


def recovered(result: PGDResult, tol: float = 0.05) -> np.ndarray:
    r"""Which runs end near :math:`\pm(k^\star, v^\star)`: :math:`|\kappa| > 1 - \text{tol}` and :math:`|\nu| > 1 - \text{tol}`."""
    kappa = np.abs(np.asarray(result.kappa)[..., -1])
    nu = np.abs(np.asarray(result.nu)[..., -1])
    return (kappa > 1 - tol) & (nu > 1 - tol)


def trajectory_runs(result: PGDResult, n: int = 2) -> list[int]:
    """Runs whose :math:`(\\kappa, \\nu)` path a figure draws: the first recovering run and the
    first failing one when both exist (so both outcomes are seen), completed by the next runs."""
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

    Columns: ``run, step, lam, kappa, nu, theta, eta, rho, excess_risk, distance``.
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
