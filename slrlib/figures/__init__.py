"""The paper's figures and the book's, regenerable by name: the registry.

A figure is a :class:`FigureSpec`: a ``compute`` step (all the numbers, from the other
modules of ``slrlib``), a ``plot`` step (a matplotlib Figure from those numbers) and a
``table`` step (the plotted numbers as named columns, written as CSV). The chapters call
the same ``compute`` and ``plot`` functions, so a figure regenerated here is the figure
of the book (same seed, same numbers).

From the command line::

    python -m slrlib figure --list            # names, chapters, costs
    python -m slrlib figure fig4a fig6 --out figures/
    python -m slrlib figure all --out figures/

Figure modules register the paper's figures on import: :mod:`slrlib.figures.pgd` (Figures 4
and 7, chapters 7–8), :mod:`slrlib.figures.sgd` (Figure 5, chapter 9),
:mod:`slrlib.figures.transformer` (Figures 8 and 10, chapters 10–11), :mod:`slrlib.figures.multi`
(Figure 9, chapter 11), :mod:`slrlib.figures.probing` (Figures 1(b) and 2, chapter 12),
:mod:`slrlib.figures.nn1`, :mod:`slrlib.figures.group_sparse` and
:mod:`slrlib.figures.random_walk` (the token-selection case studies, chapter 13). The chapters'
own figures register from :mod:`slrlib.book.figures`, which the command line imports too.
"""

from __future__ import annotations

import csv
import importlib
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from slrlib.plots.style import legible

__all__ = [
    "FigureSpec",
    "register",
    "names",
    "get",
    "write_csv",
    "write_figure",
    "FigureCost",
    "COST_CLASSES",
    "COSTS_FILE",
    "recorded_costs",
    "cost",
    "MODULES",
    "BOOK_FIGURES",
    "unavailable",
]

#: The figure modules: the extras each needs beyond ``plots`` (to import it or to compute its
#: figures) and the figures it registers. Listed rather than discovered, so that ``python -m slrlib
#: figure --list`` names what a figure needs without importing what is not installed
#: (:func:`unavailable`); ``tests/test_experiments.py`` holds the names against the registry, and
#: ``tests/install`` the extras against a venv with ``plots`` alone.
#: ``slrlib.book.figures`` registers the chapters' own figures (:data:`BOOK_FIGURES`).
MODULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "slrlib.figures.pgd": ((), ("fig4a", "fig4b", "fig7a", "fig7b")),
    "slrlib.book.figures": ((), ()),  # the chapters' own figures: BOOK_FIGURES
    "slrlib.figures.sgd": ((), ("fig5",)),
    "slrlib.figures.transformer": (("optim",), ("fig8", "fig10")),
    "slrlib.figures.multi": ((), ("fig9",)),
    "slrlib.figures.probing": (("case-studies", "nlp"), ("fig1b", "fig2")),
    "slrlib.figures.nn1": ((), ("nn1",)),
    "slrlib.figures.group_sparse": ((), ("group_sparse",)),
    "slrlib.figures.random_walk": (("optim",), ("random_walk",)),
}
#: The figures ``slrlib.book.figures`` registers.
BOOK_FIGURES = (
    "beyond_schedule",
    "beyond_landscape",
    "beyond_sweep",
    "beyond_init",
    "beyond_endpoints",
    "escape_time",
    "dynamics_timescales",
    "swap_race",
    "ch6_drift",
    "ch6_reduced",
    "fig6",
    "ch7_basins",
    "multi_ideal",
    "learning_curves",
    "learning_curves_high_d",
    "ch9_sampler",
    "ch9_pgd_vs_sgd",
    "beyond_softmax",
    "softmax_training",
    "stress_tests",
)
#: Modules of :data:`MODULES` left out, and the extras they need that are not installed.
_UNAVAILABLE: dict[str, tuple[str, ...]] = {}


_REGISTRY: dict[str, "FigureSpec"] = {}


@dataclass(frozen=True)
class FigureSpec:
    """A named figure: how to compute its numbers, draw it, and tabulate what it draws.

    Parameters
    ----------
    name : str
        Registry name, unique (``python -m slrlib figure NAME``).
    title : str
        One-line description (``python -m slrlib figure --list``).
    chapter : int
        The chapter of the book that shows the figure.
    compute : callable
        ``compute()`` returns all the numbers of the figure.
    plot : callable
        ``plot(data)`` returns a matplotlib Figure from the numbers ``data = compute()``.
    table : callable
        ``table(data)`` returns the plotted numbers as named, equal-length columns (written as CSV).
    """

    name: str
    title: str
    chapter: int
    compute: Callable[[], Any]
    plot: Callable[[Any], Any]
    table: Callable[[Any], Mapping[str, np.ndarray]]


def register(spec: FigureSpec) -> FigureSpec:
    """Add a figure to the registry (names are unique).

    Parameters
    ----------
    spec : FigureSpec
        The figure.

    Returns
    -------
    FigureSpec
        ``spec`` itself.

    Raises
    ------
    ValueError
        If another figure is already registered under ``spec.name``.
    """
    if spec.name in _REGISTRY and _REGISTRY[spec.name] is not spec:
        raise ValueError(f"name {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def _installed(extra: str) -> bool:
    """Whether every optional module that ``extra`` installs (:data:`slrlib.extras.EXTRAS`) is there."""
    import importlib.util

    from slrlib.extras import EXTRAS

    return all(
        importlib.util.find_spec(top) is not None
        for top, e in EXTRAS.items()
        if e == extra
    )


def _load() -> None:
    from slrlib.extras import EXTRAS

    for module, (extras, _) in MODULES.items():
        if module in _UNAVAILABLE:
            continue
        missing = tuple(e for e in extras if not _installed(e))
        if missing:
            _UNAVAILABLE[module] = missing
            continue
        try:
            importlib.import_module(module)
        except (
            ModuleNotFoundError
        ) as err:  # an extra not listed above (slrlib.extras.require)
            top = (err.name or "").split(".")[0]
            if top not in EXTRAS:
                raise
            _UNAVAILABLE[module] = (EXTRAS[top],)


def unavailable() -> dict[str, tuple[str, ...]]:
    """The figures that need an extra that is not installed, and those extras.

    Returns
    -------
    dict of str to tuple of str
        ``{figure name: extras}``, e.g. ``{"fig8": ("optim",)}``; empty when every extra is installed.
    """
    _load()
    return {
        name: extras
        for module, extras in _UNAVAILABLE.items()
        for name in (MODULES[module][1] or BOOK_FIGURES)
    }


def names() -> list[str]:
    """The registered figure names, by chapter then name.

    Returns
    -------
    list of str
        Every name, after importing the figure modules.
    """
    _load()
    return sorted(_REGISTRY, key=lambda n: (_REGISTRY[n].chapter, n))


def get(name: str) -> FigureSpec:
    """The :class:`FigureSpec` called ``name``.

    Parameters
    ----------
    name : str
        A registered name (:func:`names`).

    Returns
    -------
    FigureSpec
        The figure.

    Raises
    ------
    ValueError
        If no figure is registered under ``name``.
    """
    _load()
    missing = unavailable()
    if name in missing:
        extras = ",".join(missing[name])
        raise ModuleNotFoundError(
            f'figure {name!r} needs extras that are not installed: pip install "slrlib[{extras}]"'
        )
    if name not in _REGISTRY:
        raise ValueError(f"name must be one of {names()}, got {name!r}")
    return _REGISTRY[name]


#: Where each figure's cost is recorded: the seconds ``python -m slrlib figure NAME`` took in a fresh
#: process, nothing cached (imports, compilation, computation and writing), on the machine it names.
#: Written by ``python -m benchmarks --only figure_costs``.
COSTS_FILE = Path(__file__).with_name("costs.json")
#: The classes a cost falls in: ``(upper bound in seconds, label)``, in increasing order.
COST_CLASSES = ((30.0, "seconds"), (120.0, "a minute"), (math.inf, "minutes"))


class FigureCost(NamedTuple):
    """What regenerating one figure costs: the recorded ``seconds`` (``None`` when not measured) and
    its class ``label`` (:data:`COST_CLASSES`, or ``"not measured"``)."""

    seconds: float | None
    label: str


def recorded_costs() -> dict[str, Any]:
    """The contents of :data:`COSTS_FILE`: ``{"machine": {...}, "figures": {name: seconds}}``.

    Returns
    -------
    dict
        Empty ``figures`` when the file is missing.
    """
    if not COSTS_FILE.is_file():
        return {"machine": {}, "figures": {}}
    return json.loads(COSTS_FILE.read_text(encoding="utf-8"))


def cost(name: str) -> FigureCost:
    """The recorded cost of the figure ``name`` and its class.

    Parameters
    ----------
    name : str
        A registered name (:func:`names`).

    Returns
    -------
    FigureCost
        Seconds and class, or ``(None, "not measured")``.

    Raises
    ------
    ValueError
        If no figure is registered under ``name``.
    """
    get(name)
    seconds = recorded_costs()["figures"].get(name)
    if seconds is None:
        return FigureCost(None, "not measured")
    label = next(label for bound, label in COST_CLASSES if seconds < bound)
    return FigureCost(float(seconds), label)


def write_csv(table: Mapping[str, np.ndarray], path: Path) -> None:
    """Write equal-length columns as CSV with a header row (floats with 17 significant digits).

    Parameters
    ----------
    table : mapping of str to array_like
        The columns, by name (each raveled).
    path : pathlib.Path
        The file to write.

    Raises
    ------
    ValueError
        If the columns do not all have the same length.
    """
    cols = {k: np.asarray(v).ravel() for k, v in table.items()}
    lengths = {k: v.size for k, v in cols.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(
            f"table columns must have equal lengths, got {lengths}"
        )
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(list(cols))
        fmt = [
            (lambda x: repr(int(x)))
            if np.issubdtype(v.dtype, np.integer)
            else str
            if v.dtype.kind in "USOb"
            else (lambda x: f"{x:.17g}")
            for v in cols.values()
        ]
        for row in zip(*cols.values()):
            writer.writerow([f(x) for f, x in zip(fmt, row)])


def write_figure(
    name: str, out_dir: str | os.PathLike[str], *, dpi: int = 200
) -> dict[str, Any]:
    """Compute, draw and write ``NAME.pdf``, ``NAME.png`` and ``NAME.csv`` into ``out_dir``.

    Parameters
    ----------
    name : str
        A registered name (:func:`names`).
    out_dir : str or os.PathLike
        The output directory (created if missing).
    dpi : int
        Resolution of the PNG (default 200: the book's 100 CSS pixels per inch, twice over).

    Returns
    -------
    dict
        ``paths``: the paths written; ``compute_seconds``: the seconds spent computing;
        ``total_seconds``: the seconds spent computing and writing.

    Raises
    ------
    ValueError
        If no figure is registered under ``name``.
    """
    spec = get(name)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    data = spec.compute()
    computed = time.perf_counter() - start
    fig = legible(spec.plot(data))
    paths = [out / f"{name}.pdf", out / f"{name}.png", out / f"{name}.csv"]
    # A fixed creation date keeps the PDF byte-identical across runs.
    fig.savefig(paths[0], metadata={"CreationDate": None, "ModDate": None})
    fig.savefig(paths[1], dpi=dpi)
    write_csv(spec.table(data), paths[2])
    return {
        "paths": paths,
        "compute_seconds": computed,
        "total_seconds": time.perf_counter() - start,
    }
