"""Figures of the book: one function per figure, each returning a matplotlib Figure.

Plotting only: every number plotted is computed by the other modules of ``slrlib``.
Submodules follow the chapters (``task``, ``oracle``, ``bayes``, ``linear``).
"""
