"""Chapter 9's own figures: the exact sampler's check and stochastic against exact PGD."""

from __future__ import annotations

from slrlib.book.ch09_sgd_checks import (
    pgd_vs_sgd,
    pgd_vs_sgd_table,
    sampler_check,
    sampler_table,
)
from slrlib.book.plots.sgd_checks import plot_pgd_vs_sgd, plot_sampler_check
from slrlib.figures import FigureSpec, register

__all__: list[str] = []

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
