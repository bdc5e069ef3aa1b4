"""Chapter 11 (several relevant tokens): Figure 9 of the paper and the ideal heads' risk against λ."""

from __future__ import annotations

from functools import partial

import numpy as np

from slrlib.experiments import SGD_CONFIGS, run_sgd_experiment, sgd_table
from slrlib.figures import FigureSpec, register
from slrlib.multi import IdealCurves, ideal_risk_curves, sgd_task_directions
from slrlib.plots.multi import plot_fig9, plot_ideal_risk

__all__ = ["FIG9_FINAL_LAM", "IDEAL_LAMS", "ideal_curves", "ideal_table"]

#: The inverse temperatures of the ideal-heads figure (log-spaced, 0.02 to 2).
IDEAL_LAMS = np.geomspace(0.02, 2.0, 41)
_FIG9 = SGD_CONFIGS["fig9"]
#: Where Figure 9's schedule stops: :math:`\lambda_0 / (1 + \text{decay}\cdot t_{\rm freeze})`.
FIG9_FINAL_LAM = _FIG9.lam / (1.0 + _FIG9.decay * _FIG9.freeze_after)


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
        name="fig9",
        title=SGD_CONFIGS["fig9"].title,
        chapter=11,
        compute=partial(run_sgd_experiment, "fig9"),
        plot=plot_fig9,
        table=sgd_table,
    )
)
register(
    FigureSpec(
        name="multi_ideal",
        title="Exact risk of the ideal heads (31) on the two-location task (30) against λ",
        chapter=11,
        compute=ideal_curves,
        plot=partial(plot_ideal_risk, lines={"final λ of Figure 9": FIG9_FINAL_LAM}),
        table=ideal_table,
    )
)
