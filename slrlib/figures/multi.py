"""Figure 9 of the paper: two heads (31) trained by stochastic PGD on two relevant tokens (30), chapter 11."""

from __future__ import annotations

from functools import partial

from slrlib.experiments import SGD_CONFIGS, run_sgd_experiment, sgd_table
from slrlib.figures import FigureSpec, register
from slrlib.plots.multi import plot_fig9

__all__: list[str] = []

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
