"""Plots of the chapters' own figures (one function per figure, returning a matplotlib Figure).

Plotting only: the numbers come from the library and from the chapter companions.
"""

__all__: list[str] = []
