"""The appendix "Reproducibility": the versions and the machine of the build."""

from __future__ import annotations

import os
import platform
from importlib import metadata
from pathlib import Path

__all__ = ["PACKAGES", "cpu_model", "build_environment"]

#: The packages whose versions the appendix shows (distribution names).
PACKAGES = (
    "jax",
    "jaxlib",
    "numpy",
    "scipy",
    "matplotlib",
    "ipywidgets",
    "transformers",
    "torch",
    "jupyter-book",
    "myst-nb",
    "jupytext",
)


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what Python's ``platform`` module reports."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def build_environment() -> list[tuple[str, str]]:
    """Rows (component, version or value): Python, the machine, float64, and :data:`PACKAGES`.

    Returns
    -------
    list of (str, str)
        ``("python", "3.11.9")``, ``("cpu", ...)``, ``("cores", "2")``, ``("XLA_FLAGS", ...)``,
        ``("float64", "enabled")``, then one row per installed package of :data:`PACKAGES`.
    """
    import slrlib

    rows = [
        ("python", platform.python_version()),
        ("cpu", cpu_model()),
        ("cores", str(os.cpu_count())),
        ("XLA_FLAGS", os.environ.get("XLA_FLAGS", "(not set)")),
        ("float64", "enabled" if slrlib.x64_enabled() else "disabled"),
    ]
    for name in PACKAGES:
        try:
            rows.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            continue
    return rows
