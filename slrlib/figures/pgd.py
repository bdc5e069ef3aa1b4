"""Figures 4(a), 4(b), 7(a), 7(b): PGD at the paper's parameters (chapters 7 and 8)."""

from __future__ import annotations

from functools import partial

from slrlib.experiments import PGD_CONFIGS, pgd_table, run_pgd_experiment
from slrlib.figures import FigureSpec, register
from slrlib.plots.dynamics import plot_pgd_panels

__all__: list[str] = []

_CHAPTER = {"fig4b": 7, "fig4a": 8, "fig7a": 8, "fig7b": 8}

for _name, _config in PGD_CONFIGS.items():
    register(
        FigureSpec(
            name=_name,
            title=_config.title,
            chapter=_CHAPTER[_name],
            compute=partial(run_pgd_experiment, _name),
            plot=plot_pgd_panels,
            table=pgd_table,
        )
    )
