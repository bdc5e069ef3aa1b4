r"""Figures 8 and 10: a full Transformer layer trained by SGD (Appendix E.3; chapters 10 and 11).

The paper's parameters (its authors' notebooks: 20 and 10 runs), a few minutes each on a
2-core machine. ``compute`` is deterministic (seed 0) and cached per process, so a chapter that calls it twice
trains once.
"""

from __future__ import annotations

from functools import cache

from slrlib.figures import FigureSpec, register
from slrlib.plots.transformer import plot_fig8, plot_fig10
from slrlib.training.transformer import TransformerResult
from slrlib.experiments.transformer import (
    TRANSFORMER_CONFIGS,
    matched_table,
    run_transformer_experiment,
    transformer_table,
)

__all__ = ["SEED", "fig8_data", "fig10_data"]

#: Seed of the book's runs.
SEED = 0


@cache
def fig8_data() -> TransformerResult:
    """Figure 8: single head, single-location regression, the paper's 20 runs.

    Cached: computed once per process.

    Returns
    -------
    slrlib.training.transformer.TransformerResult
        ``fig8`` of :data:`slrlib.experiments.transformer.TRANSFORMER_CONFIGS` from seed :data:`SEED`.
    """
    return run_transformer_experiment("fig8", seed=SEED)


@cache
def fig10_data() -> TransformerResult:
    """Figure 10: two heads, two-location regression, the paper's 10 runs.

    Cached: computed once per process.

    Returns
    -------
    slrlib.training.transformer.TransformerResult
        ``fig10`` of :data:`slrlib.experiments.transformer.TRANSFORMER_CONFIGS` from seed :data:`SEED`.
    """
    return run_transformer_experiment("fig10", seed=SEED)


register(
    FigureSpec(
        "fig8",
        TRANSFORMER_CONFIGS["fig8"].title,
        10,
        fig8_data,
        plot_fig8,
        transformer_table,
    )
)
register(
    FigureSpec(
        "fig10",
        TRANSFORMER_CONFIGS["fig10"].title,
        11,
        fig10_data,
        plot_fig10,
        matched_table,
    )
)
