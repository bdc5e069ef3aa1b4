r"""Figures of chapter 15 (learning from :math:`n` samples): ``learning_curves`` and ``learning_curves_high_d``.

Empirical risk minimisation by full-batch PGD (Definition 1, eq. 10, on the empirical risk,
:func:`slrlib.book.ch15_samples.erm_pgd`) for erf attention (3), initialised on the invariant manifold
:math:`\mathcal M` as in Figure 4(b) (where PGD on the population risk provably recovers :math:`(k^\star, v^\star)`,
Theorem 5), for several :math:`d` and :math:`L` and a grid of :math:`n/d`; for every point
:data:`N_SAMPLES` independent samples. Per point: the exact excess test risk
:math:`\mathcal R_\lambda(\hat k, \hat v) - \mathcal R_\lambda(k^\star, v^\star)` (Theorem 1), the sign-fixed overlaps
:math:`\kappa, \nu` (:func:`slrlib.book.ch15_samples.sign_fixed_overlaps`), the train risk, and the smallest
test risk met along the trajectory (early stopping with an oracle's choice of the step). Beside it, the
linear predictor fitted by least squares and by ridge on samples of the same task, scored by its exact
risk (:func:`slrlib.book.ch15_samples.linear_learning_curve`), against Proposition 3's value.

**Sizes.** The paper's :math:`d = 400` is out of reach of a 60-second figure on two CPU cores: one
full-batch step costs :math:`O(nLd)`, the step size must shrink like :math:`1/d` (the curvature of the risk
in :math:`\theta = \langle v, k^\star\rangle` is :math:`\approx q^2 = d/2`), and the samples needed grow
like :math:`d`, so a learning curve costs about :math:`d^3` times as much. The defaults (:data:`DS`,
:data:`LS`, :data:`RATIOS`) keep the figure under a minute.

**The paper's dimension.** ``learning_curves_high_d`` minimises the same empirical risk by Riemannian
L-BFGS (:func:`slrlib.book.ch15_samples.erm_lbfgs`), within a cap of :data:`N_ITER` iterations, from the same
kind of starts: the pairs :data:`HIGH_CONFIGS` (:data:`HIGH_DS` up to :math:`d = 400` at
:math:`L` = :data:`HIGH_L`, and :data:`HIGH_LONG_DS` at :math:`L` = :data:`HIGH_LONG_L`), on the grid
:data:`HIGH_RATIOS`, in about a minute. The cost per evaluation is one pass over the sample,
:math:`O(n_{\max}Ld)`, so the grid stops at :math:`n/d = 8` and :math:`L = 10` stops at :math:`d = 200`
(:func:`tokens_per_pass` gives the cost of each pair).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import jax
import numpy as np

from slrlib.core.geometry import manifold_directions
from slrlib.core.risk import linear_risk, oracle_risk
from slrlib.core.task import SLRTask
from slrlib.figures import FigureSpec, register
from slrlib.book.ch05_linear import linear_risk_of_weights
from slrlib.book.ch15_samples import (
    erm_lbfgs,
    erm_pgd,
    linear_learning_curve,
    ridge_population_weights,
    samples_needed,
    sign_fixed_overlaps,
)
from slrlib.book.plots.samples import (
    plot_learning_curves,
    plot_learning_curves_high_d,
)

__all__ = [
    "DS",
    "LS",
    "RATIOS",
    "LINEAR_RATIOS",
    "LINEAR_D",
    "N_SAMPLES",
    "LAM",
    "STEP_SCALE",
    "N_STEPS",
    "LOG_EVERY",
    "LEVEL",
    "MU",
    "ERMCurve",
    "LinearPanel",
    "LearningCurves",
    "compute_learning_curves",
    "learning_curves_table",
    "curve_setup",
    "HIGH_CONFIGS",
    "HIGH_DS",
    "HIGH_L",
    "HIGH_LONG_DS",
    "HIGH_LONG_L",
    "HIGH_RATIOS",
    "HIGH_TRIMMED_DS",
    "N_ITER",
    "LBFGSCurve",
    "HighDimCurves",
    "lbfgs_curve",
    "tokens_per_pass",
    "compute_learning_curves_high_d",
    "learning_curves_high_d_table",
]

#: Dimensions of the ERM curves.
DS = (8, 16, 32)
#: Sequence lengths of the ERM curves.
LS = (5, 10)
#: Grid of n/d for each L.
RATIOS = {
    5: (0.5, 1.0, 2.0, 4.0, 8.0, 16.0),
    10: (1.0, 2.0, 4.0, 8.0, 16.0, 32.0),
}
#: Grid of n/d of the linear predictor (at d = LINEAR_D); it passes through n = Ld for L in LS.
LINEAR_RATIOS = (2.0, 4.0, 5.0, 8.0, 10.0, 16.0, 32.0, 64.0, 128.0, 256.0)
#: Dimension of the linear panels.
LINEAR_D = 16
#: Samples per point.
N_SAMPLES = 20
#: Inverse temperature (Figure 4(b)'s).
LAM = 0.1
#: The step size is alpha = STEP_SCALE / d.
STEP_SCALE = 3.0
#: Full-batch PGD steps.
N_STEPS = 500
#: Logging period (the test risk along the trajectory, for early stopping).
LOG_EVERY = 25
#: Level of the median overlaps that defines the samples needed.
LEVEL = 0.9
#: Ridge penalty of the linear panel.
MU = 0.1


class ERMCurve(NamedTuple):
    r"""One learning curve of ERM by PGD: ``ratios`` (m,) of :math:`n/d`; per point and sample (m, S):
    the final sign-fixed overlaps ``kappa``, ``nu``, the final excess test risk ``excess``
    (:math:`\mathcal R_\lambda(\hat k,\hat v) - \mathcal R_\lambda(k^\star, v^\star)`), the smallest excess along the
    logged trajectory ``excess_min``, the final ``train_risk``; ``oracle`` :math:`\mathcal R_\lambda(k^\star, v^\star)`,
    ``alpha``, ``n_star`` (:math:`n^\star/d`, :func:`slrlib.book.ch15_samples.samples_needed`)."""

    d: int
    L: int
    ratios: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    excess: np.ndarray
    excess_min: np.ndarray
    train_risk: np.ndarray
    oracle: float
    alpha: float
    n_star: float


class LinearPanel(NamedTuple):
    r"""Least squares and ridge at ``d``, ``L``: ``ratios`` (m,) of :math:`n/d`; the excess test risks over
    Proposition 3's value ``ls_excess``, ``ridge_excess`` (m, S), their train risks ``ls_train``, ``ridge_train``;
    ``linear`` (Proposition 3's risk), ``mu`` and the excess of the ridge limit ``ridge_limit_excess``."""

    d: int
    L: int
    ratios: np.ndarray
    ls_excess: np.ndarray
    ridge_excess: np.ndarray
    ls_train: np.ndarray
    ridge_train: np.ndarray
    linear: float
    mu: float
    ridge_limit_excess: float


class LearningCurves(NamedTuple):
    """The data of ``learning_curves``: the ERM curves, the linear panels and the run parameters."""

    erm: tuple
    linear: tuple
    lam: float
    gamma: float
    n_samples: int
    n_steps: int
    level: float


def curve_setup(d: int, L: int, n_samples: int, seed: int = 0):
    r"""The task, directions, sample keys and starts of the learning curve at ``(d, L)``: the same for
    :func:`compute_learning_curves` (PGD) and :func:`compute_learning_curves_high_d` (L-BFGS).

    From ``fold_in(fold_in(key(seed), d), L)``: the directions (:meth:`SLRTask.oracle_directions`), the starts on
    :math:`\mathcal M` (:func:`slrlib.core.geometry.manifold_directions`, one run per sample) and one key per sample.

    Returns
    -------
    tuple
        ``(task, k_star, v_star, keys, k0, v0)`` with ``keys`` (n_samples,) and ``k0``, ``v0`` (n_samples, 1, d).
    """
    task = SLRTask(d=int(d), L=int(L))
    k_dir, k_init, k_data = jax.random.split(
        jax.random.fold_in(
            jax.random.fold_in(jax.random.key(seed), int(d)), int(L)
        ),
        3,
    )
    ks, vs = task.oracle_directions(k_dir)
    k0, v0 = manifold_directions(k_init, ks, vs, (n_samples, 1))
    return task, ks, vs, jax.random.split(k_data, n_samples), k0, v0


def compute_learning_curves(
    ds: Sequence[int] = DS,
    Ls: Sequence[int] = LS,
    ratios: dict | None = None,
    linear_ratios: Sequence[float] = LINEAR_RATIOS,
    linear_d: int = LINEAR_D,
    n_samples: int = N_SAMPLES,
    lam: float = LAM,
    step_scale: float = STEP_SCALE,
    n_steps: int = N_STEPS,
    log_every: int = LOG_EVERY,
    level: float = LEVEL,
    mu: float = MU,
    seed: int = 0,
) -> LearningCurves:
    r"""The numbers of ``learning_curves`` (default sizes: under a minute on two CPU cores).

    Parameters
    ----------
    ds, Ls : sequence of int
        Dimensions and sequence lengths of the ERM curves.
    ratios : dict, optional
        Grid of :math:`n/d` for each ``L`` (default :data:`RATIOS`; an ``L`` missing from it uses the grid of
        ``L = 10``).
    linear_ratios : sequence of float
        Grid of :math:`n/d` of the linear panels (one per ``L``, at ``d = linear_d``).
    linear_d : int
        Dimension of the linear panels.
    n_samples : int
        Samples per point.
    lam : float
        Inverse temperature :math:`\lambda`.
    step_scale : float
        The step size is ``step_scale / d``.
    n_steps, log_every : int
        Full-batch steps and the logging period.
    level : float
        Level of the median overlaps for :math:`n^\star`.
    mu : float
        Ridge penalty of the linear panels.
    seed : int
        Seed: curve ``(d, L)`` uses ``fold_in(fold_in(key(seed), d), L)``.

    Returns
    -------
    LearningCurves
        The curves.
    """
    ratios = RATIOS if ratios is None else ratios
    key = jax.random.key(seed)
    erm = []
    for d in ds:
        for L in Ls:
            grid = np.asarray(
                ratios.get(int(L), ratios.get(10, RATIOS[10])), dtype=float
            )
            ns = [max(1, int(round(r * d))) for r in grid]
            task, ks, vs, keys, k0, v0 = curve_setup(
                int(d), int(L), n_samples, seed
            )
            alpha = step_scale / d
            res = erm_pgd(
                task,
                ks,
                vs,
                keys,
                k0,
                v0,
                ns=ns,
                lam=lam,
                alpha=alpha,
                n_steps=n_steps,
                log_every=log_every,
            )
            kappa, nu = sign_fixed_overlaps(
                res.kappa[:, :, 0, -1].T, res.nu[:, :, 0, -1].T
            )  # (m, S)
            orc = float(oracle_risk(lam, task))
            excess = res.test_risk[:, :, 0, -1].T - orc
            excess_min = res.test_risk[:, :, 0, :].min(axis=-1).T - orc
            erm.append(
                ERMCurve(
                    int(d),
                    int(L),
                    grid,
                    kappa,
                    nu,
                    excess,
                    excess_min,
                    res.train_risk[:, :, 0, -1].T,
                    orc,
                    alpha,
                    samples_needed(grid, kappa, nu, level),
                )
            )
    linear = []
    lgrid = np.asarray(linear_ratios, dtype=float)
    for L in Ls:
        task = SLRTask(d=int(linear_d), L=int(L))
        k_dir, k_data = jax.random.split(
            jax.random.fold_in(
                jax.random.fold_in(key, 10_000 + int(linear_d)), int(L)
            )
        )
        ks, vs = task.oracle_directions(k_dir)
        ns = [max(2, int(round(r * linear_d))) for r in lgrid]
        lin = linear_risk(task)
        ls = linear_learning_curve(task, ks, vs, k_data, ns, n_samples, mu=0.0)
        rd = linear_learning_curve(task, ks, vs, k_data, ns, n_samples, mu=mu)
        limit = (
            float(
                linear_risk_of_weights(
                    ridge_population_weights(task, vs, mu), task, ks, vs
                )
            )
            - lin
        )
        linear.append(
            LinearPanel(
                int(linear_d),
                int(L),
                lgrid,
                ls.test_risk - lin,
                rd.test_risk - lin,
                ls.train_risk,
                rd.train_risk,
                lin,
                float(mu),
                limit,
            )
        )
    return LearningCurves(
        tuple(erm),
        tuple(linear),
        float(lam),
        float(SLRTask(d=2, L=1).gamma),
        int(n_samples),
        int(n_steps),
        float(level),
    )


def _long_table(series, keys: Sequence[str]) -> dict[str, np.ndarray]:
    """Long format shared by the tables of both figures: for each ``(labels, ratios, x)`` of ``series`` (``labels``
    the values of ``keys``, ``x`` (m, S) over the grid ``ratios`` and the samples), one row per ratio with the median
    and the quartiles over samples."""
    cols: dict[str, list] = {
        k: [] for k in (*keys, "ratio", "median", "q25", "q75")
    }
    for labels, ratios, x in series:
        q25, med, q75 = np.quantile(
            np.asarray(x, dtype=float), [0.25, 0.5, 0.75], axis=1
        )
        for i, r in enumerate(ratios):
            for k, val in zip(cols, (*labels, r, med[i], q25[i], q75[i])):
                cols[k].append(val)
    out = {k: np.asarray(v) for k, v in cols.items()}
    for k in ("d", "L"):
        out[k] = out[k].astype(int)
    for k in ("ratio", "median", "q25", "q75"):
        out[k] = out[k].astype(float)
    return out


def learning_curves_table(data: LearningCurves) -> dict[str, np.ndarray]:
    """Long format: one row per (predictor, quantity, d, L, n/d) with the median and the quartiles over samples.

    ``predictor`` is ``erm`` or ``least_squares`` / ``ridge``; ``quantity`` is ``excess``, ``excess_min``,
    ``train``, ``kappa``, ``nu`` (ERM) or ``excess``, ``train`` (linear)."""
    series = [
        (("erm", qty, c.d, c.L), c.ratios, x)
        for c in data.erm
        for qty, x in (
            ("excess", c.excess),
            ("excess_min", c.excess_min),
            ("train", c.train_risk),
            ("kappa", c.kappa),
            ("nu", c.nu),
        )
    ]
    series += [
        ((pred, qty, p.d, p.L), p.ratios, x)
        for p in data.linear
        for pred, qty, x in (
            ("least_squares", "excess", p.ls_excess),
            ("least_squares", "train", p.ls_train),
            ("ridge", "excess", p.ridge_excess),
            ("ridge", "train", p.ridge_train),
        )
    ]
    return _long_table(series, ("predictor", "quantity", "d", "L"))


register(
    FigureSpec(
        "learning_curves",
        "ERM by full-batch PGD: excess test risk and overlaps against n/d; least "
        "squares and ridge against Proposition 3",
        15,
        compute_learning_curves,
        plot_learning_curves,
        learning_curves_table,
    )
)


# ------------------------------------------------------------------------------ the paper's dimension, by L-BFGS
#: Dimensions of ``learning_curves_high_d`` (up to the paper's d = 400).
HIGH_DS = (32, 100, 200, 400)
#: Sequence length of ``learning_curves_high_d``.
HIGH_L = 5
#: Dimensions of ``learning_curves_high_d`` at the longer sequences (d = 200 at L = 10 would cost as much as the
#: curves at d = 100 and 200 at L = 5 together; chapter 15 keeps within its time budget without it).
HIGH_LONG_DS = (100,)
#: The longer sequence length of ``learning_curves_high_d`` (the paper's L = 10).
HIGH_LONG_L = 10
#: The (d, L) pairs of ``learning_curves_high_d``.
HIGH_CONFIGS = tuple((d, HIGH_L) for d in HIGH_DS) + tuple(
    (d, HIGH_LONG_L) for d in HIGH_LONG_DS
)
#: Grid of n/d of ``learning_curves_high_d``.
HIGH_RATIOS = (1.0, 2.0, 4.0, 8.0)
#: Dimensions whose grid leaves out its smallest n/d (all sizes of a sample run together, each reading the whole
#: sample, so at d = 400 the point n/d = 1 costs as much as each other point; chapter 15 keeps within its time).
HIGH_TRIMMED_DS = (400,)
#: L-BFGS iterations per run.
N_ITER = 100


class LBFGSCurve(NamedTuple):
    r"""One learning curve of ERM by L-BFGS (:func:`slrlib.book.ch15_samples.erm_lbfgs`): ``ratios`` (m,) of
    :math:`n/d`; per point and sample (m, S): the final sign-fixed overlaps ``kappa``, ``nu``, the excess test risk
    ``excess``, the ``train_risk``, :math:`|\theta|` and :math:`|\eta|` (``theta_abs``, ``eta_abs``: both near 1 at the
    swapped stationary point :math:`k \approx \pm v^\star, v \approx \pm k^\star`), the final gradient norm relative to the
    start's ``grad_ratio``, the gradient evaluations ``evaluations`` and those spent when the gradient norm first fell to
    :data:`slrlib.book.ch15_samples.GRAD_REDUCTION` times its start, ``evals_to_reduction`` (NaN if never); ``oracle`` :math:`\mathcal R_\lambda(k^\star, v^\star)`, the first step ``alpha0``,
    ``n_star`` (:math:`n^\star/d`, ``nan`` when the level is not reached); ``k``, ``v`` (m, S, d) the final iterates."""

    d: int
    L: int
    ratios: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    excess: np.ndarray
    train_risk: np.ndarray
    theta_abs: np.ndarray
    eta_abs: np.ndarray
    grad_ratio: np.ndarray
    evaluations: np.ndarray
    evals_to_reduction: np.ndarray
    oracle: float
    alpha0: float
    n_star: float
    k: np.ndarray
    v: np.ndarray


class HighDimCurves(NamedTuple):
    """The data of ``learning_curves_high_d``: the L-BFGS curves and the run parameters."""

    erm: tuple
    lam: float
    n_samples: int
    n_iter: int
    level: float


def lbfgs_curve(
    d: int,
    L: int,
    ratios: Sequence[float],
    n_samples: int = N_SAMPLES,
    lam: float = LAM,
    step_scale: float = STEP_SCALE,
    n_iter: int = N_ITER,
    level: float = LEVEL,
    seed: int = 0,
) -> LBFGSCurve:
    r"""The learning curve at ``(d, L)`` by Riemannian L-BFGS, on the samples and from the starts of
    :func:`curve_setup` (those of the PGD curve at the same ``(d, L, n_samples, seed)``).

    Parameters
    ----------
    d, L : int
        Dimension and sequence length.
    ratios : sequence of float
        Increasing grid of :math:`n/d`.
    n_samples : int
        Samples per point.
    lam : float
        Inverse temperature.
    step_scale : float
        The first step is ``step_scale / d`` (PGD's step size).
    n_iter : int
        L-BFGS iterations.
    level : float
        Level of the median overlaps for :math:`n^\star`.
    seed : int
        Seed of :func:`curve_setup`.

    Returns
    -------
    LBFGSCurve
    """
    grid = np.asarray(ratios, dtype=float)
    ns = [max(1, int(round(r * d))) for r in grid]
    task, ks, vs, keys, k0, v0 = curve_setup(int(d), int(L), n_samples, seed)
    res = erm_lbfgs(
        task,
        ks,
        vs,
        keys,
        k0,
        v0,
        ns=ns,
        lam=lam,
        alpha0=step_scale / d,
        n_iter=n_iter,
    )
    kappa, nu = sign_fixed_overlaps(
        res.kappa[:, :, 0].T, res.nu[:, :, 0].T
    )  # (m, S)
    orc = float(oracle_risk(lam, task))
    return LBFGSCurve(
        int(d),
        int(L),
        grid,
        kappa,
        nu,
        res.test_risk[:, :, 0].T - orc,
        res.train_risk[:, :, 0].T,
        np.abs(res.theta[:, :, 0].T),
        np.abs(res.eta[:, :, 0].T),
        (res.grad_norm / res.start_grad_norm)[:, :, 0].T,
        res.evaluations[:, :, 0].T,
        res.evaluations_to_reduction[:, :, 0].T,
        orc,
        float(step_scale / d),
        samples_needed(grid, kappa, nu, level),
        np.swapaxes(res.k[:, :, 0], 0, 1),
        np.swapaxes(res.v[:, :, 0], 0, 1),
    )


def tokens_per_pass(
    d: int, L: int, ratios: Sequence[float] = HIGH_RATIOS
) -> int:
    r"""Coordinates read by one gradient evaluation of the learning curve at ``(d, L)``: :math:`n_{\max} L d` with
    :math:`n_{\max} = d \max(\text{ratios})` (the sizes are nested in one sample), the cost of one pass over
    the sample and, since every run spends about the same number of evaluations within the iteration cap, the
    relative cost of the curve."""
    return int(round(max(ratios) * d)) * int(L) * int(d)


def compute_learning_curves_high_d(
    configs: Sequence[tuple[int, int]] = HIGH_CONFIGS,
    ratios: Sequence[float] = HIGH_RATIOS,
    n_samples: int = N_SAMPLES,
    lam: float = LAM,
    step_scale: float = STEP_SCALE,
    n_iter: int = N_ITER,
    level: float = LEVEL,
    seed: int = 0,
    trimmed: Sequence[int] = HIGH_TRIMMED_DS,
) -> HighDimCurves:
    r"""The numbers of ``learning_curves_high_d``: :func:`lbfgs_curve` at each pair ``(d, L)`` of ``configs``
    (default :data:`HIGH_CONFIGS`, up to the paper's :math:`d = 400`) on one grid of :math:`n/d`, less its smallest
    value at the dimensions ``trimmed`` (default :data:`HIGH_TRIMMED_DS`).

    Parameters
    ----------
    configs : sequence of (int, int)
        Pairs (dimension, sequence length).
    ratios : sequence of float
        Grid of :math:`n/d`.
    n_samples, lam, step_scale, n_iter, level, seed
        As :func:`lbfgs_curve`.
    trimmed : sequence of int
        Dimensions whose grid starts at its second value.

    Returns
    -------
    HighDimCurves
    """
    curves = tuple(
        lbfgs_curve(
            int(d),
            int(L),
            tuple(ratios)[1:] if int(d) in trimmed else ratios,
            n_samples,
            lam,
            step_scale,
            n_iter,
            level,
            seed,
        )
        for d, L in configs
    )
    return HighDimCurves(
        curves, float(lam), int(n_samples), int(n_iter), float(level)
    )


def learning_curves_high_d_table(data: HighDimCurves) -> dict[str, np.ndarray]:
    """Long format: one row per (quantity, d, L, n/d) with the median and the quartiles over samples;
    ``quantity`` is ``excess``, ``kappa``, ``nu``, ``train`` or ``grad_ratio``."""
    return _long_table(
        [
            ((qty, c.d, c.L), c.ratios, x)
            for c in data.erm
            for qty, x in (
                ("excess", c.excess),
                ("kappa", c.kappa),
                ("nu", c.nu),
                ("train", c.train_risk),
                ("grad_ratio", c.grad_ratio),
            )
        ],
        ("quantity", "d", "L"),
    )


register(
    FigureSpec(
        "learning_curves_high_d",
        "ERM by Riemannian L-BFGS up to the paper's d = 400: excess test risk "
        "and overlaps against n/d",
        15,
        compute_learning_curves_high_d,
        plot_learning_curves_high_d,
        learning_curves_high_d_table,
    )
)
