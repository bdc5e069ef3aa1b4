"""Figure 5 of the paper: stochastic PGD on the empirical risk (chapter 9)."""

from __future__ import annotations

from functools import partial

from slrlib.experiments import SGD_CONFIGS, run_sgd_experiment, sgd_table
from slrlib.figures import FigureSpec, register
from slrlib.plots.sgd import plot_sgd_panels

__all__: list[str] = []

register(
    FigureSpec(
        name="fig5",
        title=SGD_CONFIGS["fig5"].title,
        chapter=9,
        compute=partial(run_sgd_experiment, "fig5"),
        plot=plot_sgd_panels,
        table=sgd_table,
    )
)
