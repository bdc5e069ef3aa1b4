"""The book's own code: what exists for one chapter, not for reuse.

Each ``chNN_*`` module is the companion of chapter NN (the checks, tables and computations
that chapter shows); :mod:`slrlib.book.display` holds the chapters' table and text helpers;
:mod:`slrlib.book.plots` and :mod:`slrlib.book.figures` draw and register the chapters' own
figures. This package depends on the library (:mod:`slrlib.core`, :mod:`slrlib.training`,
:mod:`slrlib.experiments`, :mod:`slrlib.plots`, ...); the library never imports it
(``tests/test_architecture.py`` checks both).

Modules load on first use: ``from slrlib.book import ch08_beyond``.
"""

__all__: list[str] = []
