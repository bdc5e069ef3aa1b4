"""The paper's figures: one function per figure, each returning a matplotlib Figure.

Plotting only: every number plotted is computed by the other layers of ``slrlib``
(:mod:`slrlib.experiments`, :mod:`slrlib.case_studies`). :mod:`slrlib.plots.style` holds the
shared colours and axis helpers; the chapters' own figures are drawn by :mod:`slrlib.book.plots`.
"""

from __future__ import annotations

from slrlib.extras import require

require(
    "matplotlib", "slrlib.plots"
)  # the "plots" extra: say so before any plot module fails on it

__all__: list[str] = []
