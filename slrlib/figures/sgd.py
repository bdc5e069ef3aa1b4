"""Figure 5 (stochastic PGD on the empirical risk) and the other figures of chapter 9."""

from __future__ import annotations

from functools import partial

from slrlib.experiments import SGD_CONFIGS, run_sgd_experiment, sgd_table
from slrlib.figures import FigureSpec, register
from slrlib.plots.sgd import plot_pgd_vs_sgd, plot_sampler_check, plot_sgd_panels
from slrlib.sgd_checks import pgd_vs_sgd, pgd_vs_sgd_table, sampler_check, sampler_table

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

register(
    FigureSpec(
        name="ch9_sampler",
        title="The exact low-dimensional sampler against the plain one: Q-Q plots of gradient projections",
        chapter=9,
        compute=sampler_check,
        plot=plot_sampler_check,
        table=sampler_table,
    )
)

register(
    FigureSpec(
        name="ch9_pgd_vs_sgd",
        title="Figure 5's stochastic PGD against exact PGD from the same initialisations",
        chapter=9,
        compute=pgd_vs_sgd,
        plot=plot_pgd_vs_sgd,
        table=pgd_vs_sgd_table,
    )
)
