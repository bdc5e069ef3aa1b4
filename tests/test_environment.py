"""The pinned environment: requirements.lock, environment.yml and the running interpreter agree."""

from __future__ import annotations

import os
import re
from importlib import metadata
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
ENV = ROOT / "environment.yml"
POSTBUILD = ROOT / "postBuild"

PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!_-]+)$")
GPU = re.compile(r"nvidia|cuda|cudnn|cublas|nccl|triton", re.IGNORECASE)
KEY_PACKAGES = [
    "numpy",
    "scipy",
    "jax",
    "jaxlib",
    "matplotlib",
    "jupyter-book",
    "myst-nb",
    "sphinx-proof",
]


def normalise(name: str) -> str:
    """PEP 503 name normalisation."""
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_lines() -> list[str]:
    lines = [line.strip() for line in LOCK.read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def parse_pins(lines: list[str]) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in lines:
        match = PIN.match(line)
        assert match, f"not an exact `name==version` pin: {line!r}"
        name = normalise(match["name"])
        assert name not in pins, f"{name} pinned twice"
        pins[name] = match["version"]
    return pins


@pytest.fixture(scope="module")
def lock() -> dict[str, str]:
    return parse_pins(lock_lines())


@pytest.fixture(scope="module")
def env() -> dict:
    return yaml.safe_load(ENV.read_text())


def conda_deps(env: dict) -> tuple[list[str], list[str]]:
    """(conda dependency strings, pip list) of environment.yml."""
    conda, pip = [], None
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            assert list(dep) == ["pip"], f"unexpected entry {dep}"
            assert pip is None, "two pip sections"
            pip = dep["pip"]
        else:
            conda.append(str(dep))
    assert pip is not None, "environment.yml has no pip section"
    return conda, pip


def test_every_lock_line_is_an_exact_pin():
    lines = lock_lines()
    assert len(lines) > 50
    parse_pins(lines)


def test_lock_has_no_gpu_packages(lock):
    assert not [name for name in lock if GPU.search(name)]
    assert lock["torch"].endswith("+cpu"), f"torch must be the CPU build, got {lock['torch']}"


def test_environment_pins_python_311(env):
    conda, _ = conda_deps(env)
    pythons = [dep for dep in conda if re.match(r"^python\b", dep)]
    assert pythons == ["python=3.11"]


def test_environment_pip_pins_equal_lock(env, lock):
    _, pip = conda_deps(env)
    options = [item for item in pip if item.startswith("-")]
    assert options == ["--extra-index-url https://download.pytorch.org/whl/cpu"], options
    pins = parse_pins([item for item in pip if not item.startswith("-")])
    missing = {n: v for n, v in lock.items() if pins.get(n) != v}
    extra = {n: v for n, v in pins.items() if lock.get(n) != v}
    assert not missing and not extra, f"in lock only: {missing}; in environment.yml only: {extra}"


def test_binder_installs_the_project_in_postbuild(env):
    """Binder builds environment.yml before the repository is copied in, so the project
    (`-e .`) is installed by the executable postBuild script, with no dependencies of its own."""
    _, pip = conda_deps(env)
    assert not [item for item in pip if item in (".", "-e .") or item.startswith("-e ")]
    assert not (ROOT / "binder").exists(), "a binder/ folder would make Binder ignore the root files"
    assert POSTBUILD.is_file(), "postBuild is missing"
    assert os.access(POSTBUILD, os.X_OK), "postBuild must be executable"
    text = POSTBUILD.read_text()
    assert text.startswith("#!"), "postBuild needs a shebang line"
    assert re.search(r"pip install --no-deps[^\n]* -e \.\s*$", text, re.MULTILINE), text


def test_environment_has_no_gpu_packages(env):
    conda, pip = conda_deps(env)
    names = conda + [item for item in pip if not item.startswith("-")]
    assert not [name for name in names if GPU.search(name)]


@pytest.mark.parametrize("package", KEY_PACKAGES)
def test_installed_version_matches_lock(lock, package):
    installed = metadata.version(package)
    assert installed == lock[normalise(package)], (
        f"{package} {installed} is installed but requirements.lock pins {lock[normalise(package)]}; "
        "run `make` to reinstall .venv"
    )


def test_book_fresh_empties_the_jupyter_cache():
    """`make book` runs chapters through jupyter-cache (blind to slrlib changes); `make
    book-fresh`, which `make test` runs, must empty the very folder _config.yml names, or
    it would serve cached outputs instead of executing every chapter."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    execute = config["execute"]
    assert execute["execute_notebooks"] == "cache"
    assert execute["allow_errors"] is False and execute["raise_on_error"] is True
    cache = execute["cache"]
    assert Path(cache).parts[0] == "_build", f"{cache} is not under the git-ignored _build/"
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(rf"^JB_CACHE\s*:?=\s*{re.escape(cache)}\s*$", makefile, re.MULTILINE), cache
    fresh = re.search(r"^book-fresh:.*?(?=^\S)", makefile, re.MULTILINE | re.DOTALL)
    assert fresh and "rm -rf $(JB_CACHE)" in fresh[0] and "--all" in fresh[0]
    test = re.search(r"^test:.*?(?=^\S)", makefile, re.MULTILINE | re.DOTALL)
    assert test and re.search(r"\$\(call stage,book,\$\(MAKE\) --no-print-directory book-fresh\)", test[0])
