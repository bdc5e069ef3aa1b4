"""Group-sparse classification (chapter 13): pre-training curves and downstream sample efficiency.

Three pre-training runs (:func:`slrlib.case_studies.token_selection.group_sparse.train`, full-batch gradient
descent from zero):

* ``raw``: the talk's experiment, :math:`(n, d, D) = (500, 4, 6)`, :math:`j^\\star = 2` of the talk
  (``j_star=1``, 0-based), :math:`\\eta = 1`, 1000 steps, on the raw training set;
* ``sym``: the same sample, sign-symmetrised loss (keeps :math:`v_2 = 0` exactly, as the
  population dynamics do);
* ``D16``: :math:`D = 16`, symmetrised, :math:`\\eta = 0.5` (the stable step shrinks like
  :math:`8/D`), 1000 steps.

Then :func:`~slrlib.case_studies.token_selection.group_sparse.sample_efficiency` with the frozen :math:`W` of
``sym`` (:math:`D = 6`) and of ``D16``, against logistic regression on :math:`\\operatorname{vec}(X)`.
``compute`` is deterministic (fixed keys) and cached per process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache

import jax
import numpy as np

from slrlib.figures import FigureSpec, register
from slrlib.plots.group_sparse import plot_group_sparse
from slrlib.case_studies.token_selection.group_sparse import (
    GroupSparseRun,
    SampleEfficiency,
    sample_efficiency,
    train,
)
from slrlib.experiments.group_sparse import (
    DOWNSTREAM_C,
    DOWNSTREAM_FROM,
    DOWNSTREAM_NS,
    DOWNSTREAM_SEED,
    DOWNSTREAM_SEEDS,
    DOWNSTREAM_TEST,
    PRETRAIN_CONFIGS,
    PRETRAIN_SEED,
)

__all__ = [
    "GroupSparseFigure",
    "compute",
    "first_n_reaching",
    "table",
]


@dataclass(frozen=True, eq=False)
class GroupSparseFigure:
    """The numbers of figure ``group_sparse``.

    Parameters
    ----------
    runs : dict of str to GroupSparseRun
        The pre-training runs, by name.
    downstream : dict of int to SampleEfficiency
        The downstream comparisons, by number of groups D.
    seconds : dict of str to float
        The compute seconds of each part.
    """

    runs: dict[str, GroupSparseRun]
    downstream: dict[int, SampleEfficiency]
    seconds: dict[str, float]


@cache
def compute() -> GroupSparseFigure:
    """Run the three pre-trainings, then the two downstream comparisons (deterministic).

    Cached: computed once per process.

    Returns
    -------
    GroupSparseFigure
        The runs, the downstream results and the seconds spent.
    """
    runs, seconds = {}, {}
    for name, config in PRETRAIN_CONFIGS.items():
        runs[name] = train(config, jax.random.key(PRETRAIN_SEED))
        seconds[f"pretrain {name}"] = runs[name].seconds
    downstream = {}
    for D, name in DOWNSTREAM_FROM.items():
        c = runs[name].config
        start = time.perf_counter()
        downstream[D] = sample_efficiency(
            runs[name].W,
            c.d,
            c.D,
            c.j_star,
            DOWNSTREAM_NS,
            jax.random.key(DOWNSTREAM_SEED),
            n_seeds=DOWNSTREAM_SEEDS,
            n_test=DOWNSTREAM_TEST,
            C=DOWNSTREAM_C,
        )
        seconds[f"downstream D={D}"] = time.perf_counter() - start
    return GroupSparseFigure(runs=runs, downstream=downstream, seconds=seconds)


def first_n_reaching(
    se: SampleEfficiency, level: float
) -> dict[str, int | None]:
    """Per method, the smallest ``n`` of ``se.ns`` whose mean test accuracy is at least ``level``.

    Parameters
    ----------
    se : SampleEfficiency
        A downstream comparison.
    level : float
        The accuracy to reach.

    Returns
    -------
    dict of str to int or None
        For each method (``vec``, ``attention``, ``oracle``), that ``n``, or ``None`` if none.
    """
    out = {}
    for method in ("vec", "attention", "oracle"):
        mean = se.mean_accuracy(method)
        hit = np.flatnonzero(mean >= level)
        out[method] = int(se.ns[hit[0]]) if hit.size else None
    return out


CURVES = ("train_loss", "test_acc", "cosine", "norm_ratio", "attention_jstar")


def table(data: GroupSparseFigure) -> dict[str, np.ndarray]:
    """The plotted numbers in long format: ``panel``, ``series``, ``x``, ``y``, ``y_se``.

    Parameters
    ----------
    data : GroupSparseFigure
        The numbers (:func:`compute`).

    Returns
    -------
    dict of str to numpy.ndarray
        Panels: the five training curves (x = step; series = run name), ``attention_matrix``
        (series ``key i``, x = query j, y = mean :math:`S_{ij}` of run ``sym``), and
        ``downstream_D6`` / ``downstream_D16`` (x = n; series = method; y = mean test accuracy over
        seeds, ``y_se`` its standard error; 0 for the other panels).
    """
    panel, series, x, y, se = [], [], [], [], []

    def add(p, s, xs, ys, ses=None):
        xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        panel.extend([p] * xs.size)
        series.extend([s] * xs.size)
        x.extend(xs)
        y.extend(ys)
        se.extend(
            np.zeros(xs.size) if ses is None else np.asarray(ses, dtype=float)
        )

    for curve in CURVES:
        for name, run in data.runs.items():
            add(curve, name, run.steps, getattr(run, curve))
    S = data.runs["sym"].attention_matrix
    for i in range(S.shape[0]):
        add("attention_matrix", f"key {i}", np.arange(S.shape[1]), S[i])
    for D, res in data.downstream.items():
        for method in ("vec", "attention", "oracle"):
            acc = getattr(res, f"acc_{method}")
            add(
                f"downstream_D{D}",
                method,
                res.ns,
                res.mean_accuracy(method),
                acc.std(axis=1, ddof=1) / np.sqrt(acc.shape[1]),
            )
    return {
        "panel": np.array(panel),
        "series": np.array(series),
        "x": np.array(x),
        "y": np.array(y),
        "y_se": np.array(se),
    }


register(
    FigureSpec(
        name="group_sparse",
        title="Group-sparse classification: attention selects the relevant group; downstream sample efficiency",
        chapter=13,
        compute=compute,
        plot=plot_group_sparse,
        table=table,
    )
)
