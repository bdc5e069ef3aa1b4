r"""Figures of chapter 14 (softmax attention on an equal footing): ``beyond_softmax`` and ``softmax_training``.

**beyond_softmax.**

Excess risks (risk :math:`-\,\varepsilon^2`) of four predictors, each at its best, at the paper's
:math:`\gamma^2 = 1/2`:

* the Bayes predictor, by reduced Monte Carlo (:func:`slrlib.book.ch14_softmax.bayes_excess_reduced`);
* softmax attention (2) at :math:`(k^\star, v^\star)` and its best :math:`\lambda`
  (:func:`slrlib.book.ch14_softmax.best_softmax_lambda` on one key, then the risk at that
  :math:`\lambda` estimated again on an independent key, so that the value is not biased by the choice);
* erf attention (3) at :math:`(k^\star, v^\star)` and its best :math:`\lambda` (closed form,
  :func:`slrlib.core.risk.optimal_lambda`);
* the best linear predictor (closed form, Proposition 3);

with the hard oracle (1) (closed form up to a quadrature, :func:`slrlib.book.ch04_bayes.hard_oracle_risk`)
for reference: softmax attention tends to it as :math:`\lambda \to \infty`, so it bounds the best
softmax risk, and hence the Bayes risk, from above. Panel ``d``: against :math:`d` at :math:`L = 10`;
panel ``L``: against :math:`L` at :math:`d = 32`.

**Resolution.** The Bayes and softmax excesses fall exponentially in :math:`d`; once the tokens are
confused in fewer than about ten of the :math:`n` simulated sequences, the Monte Carlo mean is carried
by events the sample does not contain and comes out too small. Such points are flagged
(``resolved = 0``, open markers): for the Bayes predictor when fewer than :data:`MIN_CONFUSIONS` samples
have a posterior mode other than :math:`J_0`; for softmax attention when :math:`n\,\mathbb P(\hat\jmath \ne J_0)`
(the expected number of samples where :math:`\arg\max_\ell X_\ell^\top k^\star \ne J_0`, exact by
:func:`slrlib.book.ch04_bayes.hard_oracle_error`) is below :data:`MIN_CONFUSIONS`. This is why the
default grids stop at :math:`d = 256` and use :math:`d = 32` against :math:`L`: at :math:`d = 400` every
Monte Carlo point would be unresolved (the hard oracle's excess there is about :math:`10^{-30}`).

**softmax_training.** Stochastic PGD (:func:`slrlib.training.sgd.sgd`, exact sampler) from uniform
initialisations on the sphere, on the task of Figure 5 (``SGD_CONFIGS["fig5"]``: :math:`d = 80`,
:math:`L = 10`, :math:`\gamma^2 = 1/2`, :math:`\varepsilon = 0.1`, :math:`B = 5`, :math:`\alpha = 10^{-3}`),
three arms on the same task directions, initialisations and batch keys (:data:`TRAINING_ARMS`):
erf attention and softmax attention on Figure 5's schedule :math:`\lambda_t = 2/(1 + 10^{-4} t)`, and
softmax attention at the constant :math:`\lambda = 2`. Fewer steps than Figure 5's 200 000 (default
30 000), to fit a chapter's execution. Final risks: erf by Theorem 1 (closed form), softmax by
reduced Monte Carlo (:func:`slrlib.book.ch14_softmax.softmax_risk_of_runs`), each with the oracle's
risk at the final :math:`\lambda` for reference.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import jax
import numpy as np

from slrlib.core.risk import (
    linear_risk,
    optimal_lambda,
    oracle_risk,
    risk_from_overlaps,
)
from slrlib.core.task import SLRTask
from slrlib.experiments import SGD_CONFIGS, sgd_initialisation
from slrlib.figures import FigureSpec, register
from slrlib.training.sgd import sgd
from slrlib.book.ch04_bayes import hard_oracle_error, hard_oracle_risk
from slrlib.book.ch14_softmax import (
    bayes_excess_reduced,
    best_softmax_lambda,
    softmax_risk_from_overlaps,
    softmax_risk_of_runs,
)
from slrlib.book.plots.softmax import (
    plot_beyond_softmax,
    plot_softmax_training,
)

__all__ = [
    "DS",
    "LS",
    "L_FIXED",
    "D_FIXED",
    "MIN_CONFUSIONS",
    "SERIES",
    "SoftmaxPanel",
    "BeyondSoftmax",
    "compute_beyond_softmax",
    "beyond_softmax_table",
    "TRAINING_ARMS",
    "TrainingArm",
    "SoftmaxTraining",
    "compute_softmax_training",
    "softmax_training_table",
]

#: Dimensions of panel ``d`` (at ``L = L_FIXED``) and lengths of panel ``L`` (at ``d = D_FIXED``).
DS = (4, 8, 16, 32, 64, 128, 256)
LS = (2, 5, 10, 30, 100, 300, 1000)
L_FIXED = 10
D_FIXED = 32
#: Fewer expected (softmax) or observed (Bayes) confusions than this: the point is unresolved.
MIN_CONFUSIONS = 10
#: The series, in drawing order.
SERIES = ("bayes", "softmax", "erf", "linear", "hard_oracle")


class SoftmaxPanel(NamedTuple):
    r"""One panel: per value of ``x`` (``d`` or ``L``), the excess risks and what they rest on.

    ``excess[s]``, ``stderr[s]`` (0 for closed forms), ``resolved[s]`` (bool) for ``s`` in
    :data:`SERIES`; ``lam_softmax``, ``lam_erf`` the best inverse temperatures;
    ``fixed`` the other parameter (``L`` of panel ``d``, ``d`` of panel ``L``);
    ``bayes_confusions`` (observed) and ``softmax_confusions`` (expected, :math:`n\,\mathbb P(\hat\jmath \ne J_0)`);
    ``n_bayes``, ``n_softmax`` the sequences simulated per point.
    """

    name: str
    fixed: int
    x: np.ndarray
    excess: dict
    stderr: dict
    resolved: dict
    lam_softmax: np.ndarray
    lam_erf: np.ndarray
    bayes_confusions: np.ndarray
    softmax_confusions: np.ndarray
    n_bayes: np.ndarray
    n_softmax: np.ndarray


class BeyondSoftmax(NamedTuple):
    r"""The data of ``beyond_softmax``: the two panels and :math:`\gamma`."""

    panel_d: SoftmaxPanel
    panel_L: SoftmaxPanel
    gamma: float


def _sizes(n: int, L: int, entries: int, floor: int) -> int:
    """``n`` sequences, fewer for long ones: at most ``entries`` tokens, at least ``floor`` sequences."""
    return int(min(n, max(floor, entries // L)))


def _panel(
    name: str,
    fixed: int,
    tasks: Sequence[SLRTask],
    xs: Sequence[int],
    key: jax.Array,
    n_bayes: int,
    n_softmax: int,
    bayes_entries: int,
    softmax_entries: int,
    lam_grid,
) -> SoftmaxPanel:
    m = len(tasks)
    excess = {s: np.zeros(m) for s in SERIES}
    stderr = {s: np.zeros(m) for s in SERIES}
    resolved = {s: np.ones(m, dtype=bool) for s in SERIES}
    lam_soft, lam_erf = np.zeros(m), np.zeros(m)
    bayes_conf, soft_conf = np.zeros(m, dtype=int), np.zeros(m)
    nb = np.array(
        [
            _sizes(n_bayes, t.L, bayes_entries, min(n_bayes, 10_000))
            for t in tasks
        ]
    )
    ns = np.array(
        [
            _sizes(n_softmax, t.L, softmax_entries, min(n_softmax, 2_000))
            for t in tasks
        ]
    )
    for i, task in enumerate(tasks):
        k_bayes, k_select, k_value = jax.random.split(
            jax.random.fold_in(key, i), 3
        )
        eps2 = task.eps**2
        est, conf = bayes_excess_reduced(task, k_bayes, int(nb[i]))
        excess["bayes"][i], stderr["bayes"][i], bayes_conf[i] = (
            est.mean,
            est.stderr,
            conf,
        )
        resolved["bayes"][i] = conf >= MIN_CONFUSIONS
        lam_soft[i], _ = best_softmax_lambda(
            task, k_select, lam_grid, int(ns[i])
        )
        soft = softmax_risk_from_overlaps(
            1.0, 1.0, 0.0, 0.0, 0.0, lam_soft[i], task, k_value, int(ns[i])
        )
        excess["softmax"][i], stderr["softmax"][i] = (
            soft.mean - eps2,
            soft.stderr,
        )
        soft_conf[i] = ns[i] * hard_oracle_error(task)
        resolved["softmax"][i] = soft_conf[i] >= MIN_CONFUSIONS
        lam_erf[i], r_erf = optimal_lambda(task)
        excess["erf"][i] = r_erf - eps2
        excess["linear"][i] = linear_risk(task) - eps2
        excess["hard_oracle"][i] = hard_oracle_risk(task) - eps2
    return SoftmaxPanel(
        name,
        int(fixed),
        np.asarray(xs),
        excess,
        stderr,
        resolved,
        lam_soft,
        lam_erf,
        bayes_conf,
        soft_conf,
        nb,
        ns,
    )


def compute_beyond_softmax(
    ds: Sequence[int] = DS,
    Ls: Sequence[int] = LS,
    L_fixed: int = L_FIXED,
    d_fixed: int = D_FIXED,
    n_bayes: int = 100_000,
    n_softmax: int = 20_000,
    bayes_entries: int = 10_000_000,
    softmax_entries: int = 2_000_000,
    lam_grid: Sequence[float] | None = None,
    gamma: float = float(np.sqrt(0.5)),
    seed: int = 0,
) -> BeyondSoftmax:
    r"""The numbers of ``beyond_softmax`` (default sizes: well under a minute on two CPU cores).

    Parameters
    ----------
    ds, Ls : sequence of int
        Dimensions of panel ``d`` (at ``L = L_fixed``) and lengths of panel ``L`` (at ``d = d_fixed``).
    L_fixed, d_fixed : int
        The fixed length of panel ``d`` and the fixed dimension of panel ``L``.
    n_bayes, n_softmax : int
        Simulated sequences per point for the Bayes predictor and per evaluation of the softmax risk
        (small values for tests).
    bayes_entries, softmax_entries : int
        Caps on the tokens simulated per point (``n * L``): long sequences get fewer samples, at least
        10 000 (Bayes) and 2 000 (softmax), or ``n_bayes`` / ``n_softmax`` when smaller.
    lam_grid : sequence of float, optional
        Grid of :func:`slrlib.book.ch14_softmax.best_softmax_lambda` (default its own).
    gamma : float
        :math:`\gamma` of the task (:math:`\varepsilon = 0`: risk and excess coincide).
    seed : int
        Seed of every draw (panel ``d`` uses ``fold_in(key(seed), 0)``, panel ``L`` ``fold_in(key(seed), 1)``).

    Returns
    -------
    BeyondSoftmax
        The two panels.
    """
    key = jax.random.key(seed)
    grid = None if lam_grid is None else np.asarray(lam_grid, dtype=float)
    tasks_d = [SLRTask(d=int(d), L=int(L_fixed), gamma=gamma) for d in ds]
    tasks_L = [SLRTask(d=int(d_fixed), L=int(L), gamma=gamma) for L in Ls]
    panel_d = _panel(
        "d",
        L_fixed,
        tasks_d,
        ds,
        jax.random.fold_in(key, 0),
        n_bayes,
        n_softmax,
        bayes_entries,
        softmax_entries,
        grid,
    )
    panel_L = _panel(
        "L",
        d_fixed,
        tasks_L,
        Ls,
        jax.random.fold_in(key, 1),
        n_bayes,
        n_softmax,
        bayes_entries,
        softmax_entries,
        grid,
    )
    return BeyondSoftmax(panel_d, panel_L, float(gamma))


def beyond_softmax_table(data: BeyondSoftmax) -> dict[str, np.ndarray]:
    """Long format: one row per (panel, series, x) with ``y`` the excess risk, ``y_se`` its standard
    error (0 for closed forms), ``lam`` the inverse temperature used (NaN where none) and ``resolved``
    (1, or 0 for a Monte Carlo point the sample does not resolve)."""
    cols: dict[str, list] = {
        "panel": [],
        "series": [],
        "x": [],
        "y": [],
        "y_se": [],
        "lam": [],
        "resolved": [],
    }
    for panel in (data.panel_d, data.panel_L):
        m = panel.x.size
        for s in SERIES:
            lam = {"softmax": panel.lam_softmax, "erf": panel.lam_erf}.get(
                s, np.full(m, np.nan)
            )
            cols["panel"] += [panel.name] * m
            cols["series"] += [s] * m
            cols["x"] += list(panel.x)
            cols["y"] += list(panel.excess[s])
            cols["y_se"] += list(panel.stderr[s])
            cols["lam"] += list(lam)
            cols["resolved"] += list(panel.resolved[s].astype(int))
    return {
        "panel": np.asarray(cols["panel"]),
        "series": np.asarray(cols["series"]),
        "x": np.asarray(cols["x"], dtype=int),
        "y": np.asarray(cols["y"], dtype=float),
        "y_se": np.asarray(cols["y_se"], dtype=float),
        "lam": np.asarray(cols["lam"], dtype=float),
        "resolved": np.asarray(cols["resolved"], dtype=int),
    }


register(
    FigureSpec(
        "beyond_softmax",
        "Excess risks against d and L: Bayes, softmax and erf attention at their best λ, "
        "linear, hard oracle",
        14,
        compute_beyond_softmax,
        plot_beyond_softmax,
        beyond_softmax_table,
    )
)


# ------------------------------------------------------------------------------ softmax_training
#: The arms of ``softmax_training``: name -> (attention, lambda_0, decay of the schedule).
TRAINING_ARMS = {
    "erf": ("erf", 2.0, 1e-4),
    "softmax": ("softmax", 2.0, 1e-4),
    "softmax_const": ("softmax", 2.0, 0.0),
}


class TrainingArm(NamedTuple):
    r"""One arm of ``softmax_training``: logged trajectories and final risks.

    ``kappa, nu, theta, eta, rho, heldout`` have shape (runs, logs) (``heldout``: held-out risk at
    :math:`\lambda_t`, 1 000 sequences per run); ``final_risk`` and ``final_se`` (runs,) the risk at the
    final directions and :math:`\lambda_T` (``final_se`` = 0 for erf, a closed form); ``oracle_risk``,
    ``oracle_se`` the risk of the same predictor at :math:`(k^\star, v^\star)` and :math:`\lambda_T`.
    """

    name: str
    attention: str
    lam0: float
    decay: float
    steps: np.ndarray
    lam: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    theta: np.ndarray
    eta: np.ndarray
    rho: np.ndarray
    heldout: np.ndarray
    final_risk: np.ndarray
    final_se: np.ndarray
    oracle_risk: float
    oracle_se: float


class SoftmaxTraining(NamedTuple):
    """The data of ``softmax_training``: the arms by name, the task, the step size, the batch size and
    the sequences of each reduced Monte Carlo risk."""

    arms: dict
    task: SLRTask
    alpha: float
    batch_size: int
    n_risk: int


def compute_softmax_training(
    n_runs: int = 20,
    n_steps: int = 30_000,
    log_every: int = 500,
    n_risk: int = 20_000,
    seed: int = 0,
) -> SoftmaxTraining:
    r"""The numbers of ``softmax_training`` (default sizes: about half a minute on two CPU cores).

    Every arm of :data:`TRAINING_ARMS` starts from the same ``n_runs`` uniform pairs on the sphere,
    with the same task directions (:func:`slrlib.experiments.descent.sgd_initialisation` of Figure 5's
    configuration with ``n_runs`` runs) and the same key for the batches; Figure 5's task, batch size
    and step size.

    Parameters
    ----------
    n_runs, n_steps, log_every : int
        Runs per arm, steps per run, logging period (must divide ``n_steps``).
    n_risk : int
        Sequences of the reduced Monte Carlo for each softmax risk.
    seed : int
        Seed of every draw.

    Returns
    -------
    SoftmaxTraining
        The arms.
    """
    cfg = SGD_CONFIGS["fig5"].scaled(n_runs=int(n_runs))
    task = cfg.task
    key = jax.random.key(seed)
    init_key, run_key, risk_key = jax.random.split(key, 3)
    K_star, V_star, K0, V0 = sgd_initialisation(cfg, init_key)
    arms = {}
    for i, (name, (attention, lam0, decay)) in enumerate(
        TRAINING_ARMS.items()
    ):
        r = sgd(
            K0,
            V0,
            K_star,
            V_star,
            task,
            lam=lam0,
            alpha=cfg.alpha,
            n_steps=n_steps,
            batch_size=cfg.batch_size,
            key=run_key,
            decay=decay,
            log_every=log_every,
            test_size=cfg.test_size,
            attention=attention,
        )
        ov = {
            n: np.asarray(getattr(r, n))[:, 0, 0]
            for n in ("kappa", "nu", "theta", "eta")
        }
        ov["rho"] = np.asarray(r.rho)[:, 0]
        lam_T = float(r.lam[-1])
        end = [ov[n][:, -1] for n in ("kappa", "nu", "theta", "eta", "rho")]
        if attention == "erf":
            final = np.asarray(
                risk_from_overlaps(*end, lam_T, task), dtype=float
            )
            final_se = np.zeros_like(final)
            orc, orc_se = float(oracle_risk(lam_T, task)), 0.0
        else:
            k_arm = jax.random.fold_in(risk_key, i)
            est = softmax_risk_of_runs(
                *end, lam_T, task, jax.random.fold_in(k_arm, 0), n_risk
            )
            final, final_se = est.mean, est.stderr
            o = softmax_risk_from_overlaps(
                1.0,
                1.0,
                0.0,
                0.0,
                0.0,
                lam_T,
                task,
                jax.random.fold_in(k_arm, 1),
                n_risk,
            )
            orc, orc_se = float(o.mean), float(o.stderr)
        arms[name] = TrainingArm(
            name,
            attention,
            lam0,
            decay,
            np.asarray(r.steps),
            np.asarray(r.lam),
            ov["kappa"],
            ov["nu"],
            ov["theta"],
            ov["eta"],
            ov["rho"],
            np.asarray(r.risk),
            final,
            final_se,
            orc,
            orc_se,
        )
    return SoftmaxTraining(
        arms, task, float(cfg.alpha), int(cfg.batch_size), int(n_risk)
    )


def softmax_training_table(data: SoftmaxTraining) -> dict[str, np.ndarray]:
    r"""Long format: one row per (arm, run, logged step) with ``lam``, ``kappa``, ``nu`` and the held-out
    excess risk ``heldout_excess`` (held-out risk minus :math:`\varepsilon^2`)."""
    cols: dict[str, list] = {
        "arm": [],
        "run": [],
        "step": [],
        "lam": [],
        "kappa": [],
        "nu": [],
        "heldout_excess": [],
    }
    eps2 = data.task.eps**2
    for arm in data.arms.values():
        runs, logs = arm.kappa.shape
        cols["arm"] += [arm.name] * (runs * logs)
        cols["run"] += list(np.repeat(np.arange(runs), logs))
        cols["step"] += list(np.tile(arm.steps, runs))
        cols["lam"] += list(np.tile(arm.lam, runs))
        cols["kappa"] += list(arm.kappa.ravel())
        cols["nu"] += list(arm.nu.ravel())
        cols["heldout_excess"] += list(arm.heldout.ravel() - eps2)
    return {
        "arm": np.asarray(cols["arm"]),
        "run": np.asarray(cols["run"], dtype=int),
        "step": np.asarray(cols["step"], dtype=int),
        "lam": np.asarray(cols["lam"], dtype=float),
        "kappa": np.asarray(cols["kappa"], dtype=float),
        "nu": np.asarray(cols["nu"], dtype=float),
        "heldout_excess": np.asarray(cols["heldout_excess"], dtype=float),
    }


register(
    FigureSpec(
        "softmax_training",
        "Stochastic PGD from the sphere: erf vs softmax attention on Figure 5's task "
        "(overlaps and held-out excess risk against steps)",
        14,
        compute_softmax_training,
        plot_softmax_training,
        softmax_training_table,
    )
)
