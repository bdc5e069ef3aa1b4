r"""Figure ``nn1`` (chapter 13): in-context one-nearest-neighbour prediction (talk: Li et al., NeurIPS 2024).

One run of :func:`slrlib.case_studies.token_selection.nn1.train` at :data:`slrlib.experiments.nn1.CONFIG`
(seed :data:`slrlib.experiments.nn1.SEED`), and the final :math:`W` scored on shifted prompts
(:func:`~slrlib.case_studies.token_selection.nn1.margin_curve`) at the margins
:data:`slrlib.experiments.nn1.MARGIN_DELTAS`. :func:`nn1_data` is deterministic and cached per process.
"""

from __future__ import annotations

import time
from functools import cache
from typing import NamedTuple

import jax
import numpy as np

from slrlib.figures import FigureSpec, register
from slrlib.plots.nn1 import margin_bound, plot_nn1
from slrlib.case_studies.token_selection import nn1
from slrlib.experiments.nn1 import (
    CONFIG,
    MARGIN_DELTAS,
    MARGIN_N,
    MARGIN_R,
    MARGIN_SEED,
    SEED,
)

__all__ = ["NN1FigureData", "nn1_data", "nn1_table"]


class NN1FigureData(NamedTuple):
    """The numbers of figure ``nn1``: the training run, the margin curve of its final W, R, the seconds.

    Parameters
    ----------
    result : slrlib.case_studies.token_selection.nn1.NN1Result
        The training run.
    margin : dict
        The margin curve of the final W (:func:`slrlib.case_studies.token_selection.nn1.margin_curve`).
    R : float
        Label bound of the shifted prompts.
    seconds : float
        The seconds spent.
    """

    result: nn1.NN1Result
    margin: dict
    R: float
    seconds: float


@cache
def nn1_data() -> NN1FigureData:
    """Train at :data:`slrlib.experiments.nn1.CONFIG` and score the final W on the shifted prompts.

    Cached: computed once per process.

    Returns
    -------
    NN1FigureData
        The run, its margin curve, R and the seconds spent.
    """
    start = time.perf_counter()
    result = nn1.train(CONFIG, jax.random.key(SEED))
    margin = nn1.margin_curve(
        result.W[-1],
        jax.random.key(MARGIN_SEED),
        MARGIN_DELTAS,
        n=MARGIN_N,
        N=CONFIG.N,
        R=MARGIN_R,
    )
    return NN1FigureData(result, margin, MARGIN_R, time.perf_counter() - start)


def nn1_table(data: NN1FigureData) -> dict[str, np.ndarray]:
    """The plotted numbers in long form: columns ``panel``, ``series``, ``x``, ``y``.

    Parameters
    ----------
    data : NN1FigureData
        The numbers (:func:`nn1_data`).

    Returns
    -------
    dict of str to numpy.ndarray
        Panels (a)–(d): ``x`` is the step; (e): series ``W_row_i``, ``x`` the column index, ``y``
        the entry of the final W; (f): ``x`` is the margin δ.
    """
    r, m = data.result, data.margin
    steps = np.asarray(r.steps, dtype=float)
    rows: list[tuple[str, str, np.ndarray, np.ndarray]] = [
        ("a", "train_loss", steps, r.train_loss),
        ("a", "test_loss", steps, r.test_loss),
        ("b", "xi1", steps, r.form["xi1"]),
        ("b", "xi1_range", steps, r.form["xi1_range"]),
        ("b", "xi2", steps, r.form["xi2"]),
        ("c", "off_form", steps, r.form["off_form"]),
        ("c", "abs_c", steps, np.abs(r.form["c"])),
        ("d", "attn_mass", steps, r.attn_mass),
        ("d", "argmax_frac", steps, r.argmax_frac),
        ("d", "sign_acc", steps, r.sign_acc),
    ]
    W = np.asarray(r.W[-1])
    for i in range(W.shape[0]):
        rows.append(
            ("e", f"W_row_{i}", np.arange(W.shape[1], dtype=float), W[i])
        )
    delta = np.asarray(m["delta"], dtype=float)
    rows += [
        ("f", "loss", delta, m["loss"]),
        ("f", "loss_query_masked", delta, m["loss_query_masked"]),
        (
            "f",
            "margin_bound",
            delta,
            margin_bound(delta, float(r.form["xi1"][-1]), r.config.N, data.R),
        ),
    ]
    return {
        "panel": np.concatenate([np.full(len(x), p) for p, _, x, _ in rows]),
        "series": np.concatenate([np.full(len(x), s) for _, s, x, _ in rows]),
        "x": np.concatenate(
            [np.asarray(x, dtype=float) for _, _, x, _ in rows]
        ),
        "y": np.concatenate(
            [np.asarray(y, dtype=float) for _, _, _, y in rows]
        ),
    }


register(
    FigureSpec(
        name="nn1",
        title="In-context one-nearest neighbour: loss, the ξ form of W, attention, distribution shift",
        chapter=13,
        compute=nn1_data,
        plot=plot_nn1,
        table=nn1_table,
    )
)
