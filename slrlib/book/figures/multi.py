"""Chapter 11's own figure: the exact risk of the ideal heads (31) on the two-location task (30) against λ."""

from __future__ import annotations

from functools import partial

import numpy as np

from slrlib.book.ch11_multi import (
    IdealCurves,
    ideal_risk_curves,
    sgd_task_directions,
)
from slrlib.book.plots.multi import plot_ideal_risk
from slrlib.experiments import SGD_CONFIGS
from slrlib.figures import FigureSpec, register

__all__ = ["IDEAL_LAMS", "ideal_curves", "ideal_table"]

#: The inverse temperatures of the ideal-heads figure (log-spaced, 0.02 to 2).
IDEAL_LAMS = np.geomspace(0.02, 2.0, 41)


def ideal_curves() -> IdealCurves:
    """Exact risks of the ideal heads and of one oracle head on Figure 9's 20 task draws."""
    config = SGD_CONFIGS["fig9"]
    K_star, V_star = sgd_task_directions(config)
    return ideal_risk_curves(K_star, V_star, config.task, IDEAL_LAMS)


def ideal_table(curves: IdealCurves) -> dict[str, np.ndarray]:
    """One row per λ: median, min and max over task draws of both excess risks, and the null's."""
    cols = {"lam": np.asarray(curves.lam)}
    for name in ("ideal", "one_head"):
        ex = np.asarray(getattr(curves, name)) - curves.eps2
        cols[f"{name}_excess_median"] = np.median(ex, axis=0)
        cols[f"{name}_excess_min"] = ex.min(axis=0)
        cols[f"{name}_excess_max"] = ex.max(axis=0)
    cols["null_excess"] = np.full(curves.lam.shape, curves.null - curves.eps2)
    return cols


register(
    FigureSpec(
        name="multi_ideal",
        title="Exact risk of the ideal heads (31) on the two-location task (30) against λ",
        chapter=11,
        compute=ideal_curves,
        plot=partial(
            plot_ideal_risk,
            lines={"final λ of Figure 9": SGD_CONFIGS["fig9"].final_lam},
        ),
        table=ideal_table,
    )
)
