"""The usage examples in the docstrings of the public entry points, run as doctests (issue 42, 7).

Each module below holds the numpydoc "Examples" sections of the names of ``slrlib.__all__``
defined in it; the standard library's ``doctest`` runs them, one test per module. Every example
turns float64 on itself, as a reader who copies it must (slrlib leaves JAX's configuration to its
caller), and prints rounded numbers, shapes or booleans, never a full float, so that its output
is the same on any x86-64 CPU. The last tests count the public names that have an example, so
that the count cannot drop silently, and check that each of them is run here.
"""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

import slrlib

#: The modules whose docstrings hold examples.
MODULES = (
    "slrlib.core.task",
    "slrlib.core.predictors",
    "slrlib.core.gaussian",
    "slrlib.core.risk",
    "slrlib.core.geometry",
    "slrlib.training.pgd",
    "slrlib.training.sgd",
    "slrlib.experiments.descent",
    "slrlib.validation",
)
#: The least number of public names (``slrlib.__all__``) whose docstring has an example.
MIN_DOCUMENTED = 15


def _has_example(obj: object) -> bool:
    """Whether ``obj``'s docstring has a numpydoc Examples section with a ``>>>`` line in it."""
    _, heading, section = (inspect.getdoc(obj) or "").partition("\nExamples\n--------\n")
    return bool(heading) and any(line.startswith(">>> ") for line in section.splitlines())


def _documented() -> dict[str, object]:
    """The public names whose docstring has an example, with their objects (modules left out)."""
    objects = {name: getattr(slrlib, name) for name in slrlib.__all__}
    return {
        name: obj
        for name, obj in objects.items()
        if not inspect.ismodule(obj) and _has_example(obj)
    }


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module):
    """Every example of the module gives the output its docstring shows."""
    result = doctest.testmod(
        importlib.import_module(module),
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert result.attempted > 0, f"{module} has no doctest examples"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {module} failed (output above)"


def test_public_names_have_examples():
    """At least MIN_DOCUMENTED public names have an example, and each is in a module run above."""
    documented = _documented()
    assert len(documented) >= MIN_DOCUMENTED, (
        f"{len(documented)} public names have an Examples section, at least {MIN_DOCUMENTED} "
        f"expected: {sorted(documented)}"
    )
    unrun = {name: obj.__module__ for name, obj in documented.items() if obj.__module__ not in MODULES}
    assert not unrun, f"examples that this file does not run (add their modules to MODULES): {unrun}"


def test_has_example_reads_the_section():
    """The count reads an Examples section with a ``>>>`` line, not the word elsewhere."""

    def with_example():
        """Summary.

        Examples
        --------
        >>> 1 + 1
        2
        """

    def without():
        """Summary; Examples are elsewhere.

        Notes
        -----
        >>> is quoted here, outside an Examples section.
        """

    assert _has_example(with_example)
    assert not _has_example(without)
