"""The chapters' own figures, registered by name in :mod:`slrlib.figures` on import.

``python -m slrlib figure`` imports this package, so its figures regenerate like the paper's.
"""

from slrlib.book.figures import (
    beyond,
    dynamics,
    manifold,
    multi,
    samples,
    sgd_checks,
    softmax,
    stress,
)  # noqa: F401  (registration)

__all__ = [
    "beyond",
    "dynamics",
    "manifold",
    "multi",
    "samples",
    "sgd_checks",
    "softmax",
    "stress",
]
