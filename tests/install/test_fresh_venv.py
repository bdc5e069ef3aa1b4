"""slrlib alone: a fresh virtual environment, the wheel with no extras, the core at work.

`make test` runs this as its stage "package" (``SLR_INSTALL_TEST=1``); elsewhere it is skipped,
for it installs NumPy, SciPy and JAX into a new environment (from pip's cache when it has them,
else from the package registry). The versions are those of ``requirements.lock`` (as constraints).

What it shows:

* ``pip install slrlib-*.whl`` installs the four core dependencies and nothing of the extras;
* the core computes: Theorem 1 and Proposition 15 agree at the oracle, Monte Carlo agrees with
  them within its standard error, a short PGD run lowers the risk;
* nothing of that imports matplotlib, ipywidgets, IPython, scikit-learn, optax, torch or Pillow;
* ``import slrlib.plots`` (and ``slrlib.widgets``, ``python -m slrlib figure``) fails with a
  message that names the extra to install;
* ``--help`` and ``--version`` import no JAX;
* each of the extras ``plots``, ``widgets`` and ``optim`` alone, in a copy of that venv: it brings its
  packages and no other extra's, its modules import, and ``figure --list`` runs wherever matplotlib
  is, naming the extra each figure it cannot make needs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL = ["matplotlib", "ipywidgets", "IPython", "sklearn", "optax", "torch", "PIL"]

pytestmark = pytest.mark.skipif(os.environ.get("SLR_INSTALL_TEST") != "1",
                                reason="installs a fresh environment: run by `make test` (SLR_INSTALL_TEST=1)")

SCRIPT = textwrap.dedent("""
    import json, sys
    import jax
    jax.config.update("jax_enable_x64", True)
    from slrlib import (SLRTask, erf_attention, manifold_directions, monte_carlo_risk, oracle_risk, pgd,
                        population_risk)

    task = SLRTask(d=20, L=5)
    ks, vs = task.oracle_directions(jax.random.key(0))
    lam = 0.3
    out = {"theorem1": float(oracle_risk(lam, task)),
           "prop15": float(population_risk(ks, vs, ks, vs, lam, task))}
    est = monte_carlo_risk(lambda X: erf_attention(X, ks, vs, lam), task, ks, vs, jax.random.key(1), n_samples=20_000)
    out["mc_mean"], out["mc_stderr"] = float(est.mean), float(est.stderr)
    k0, v0 = manifold_directions(jax.random.key(2), ks, vs, (3,))
    res = pgd(k0, v0, ks, vs, task, lam=lam, alpha=0.05, n_steps=200, log_every=200)
    out["pgd_risk"] = [[float(r) for r in run] for run in res.risk]
    out["loaded"] = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[1])))
    errors = {}
    for module in ("slrlib.plots", "slrlib.widgets", "slrlib.figures"):
        try:
            __import__(module)
            errors[module] = None
        except ModuleNotFoundError as err:
            errors[module] = str(err)
    out["errors"] = errors
    print("RESULT" + json.dumps(out))
""")


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """(python of a fresh venv with the wheel installed, the names pip installed there)."""
    tmp = tmp_path_factory.mktemp("fresh")
    # The wheel, built from a copy of what it packages (setuptools writes build/ beside the sources).
    source = tmp / "source"
    shutil.copytree(ROOT / "slrlib", source / "slrlib", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp / "dist"), str(source)], check=True, capture_output=True, text=True)
    (wheel,) = (tmp / "dist").glob("slrlib-*.whl")
    subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True)
    python = tmp / "venv" / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q",
                              "-c", str(ROOT / "requirements.lock"), str(wheel)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], check=True, capture_output=True,
                            text=True)
    return python, {p["name"].lower() for p in json.loads(listed.stdout)}


def _run(python: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JAX_COMPILATION_CACHE_DIR")}
    proc = subprocess.run([str(python), "-c", SCRIPT, json.dumps(OPTIONAL)], cwd=python.parents[2], env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT")][-1]
    return json.loads(line[len("RESULT"):])


def test_the_wheel_installs_the_core_dependencies_only(fresh):
    _, installed = fresh
    assert {"slrlib", "numpy", "scipy", "jax", "jaxlib"} <= installed
    extras = {"matplotlib", "pillow", "ipywidgets", "ipython", "scikit-learn", "optax", "torch", "transformers"}
    assert installed & extras == set(), installed & extras


def test_the_wheel_marks_the_package_as_typed(fresh):
    """PEP 561: a type checker reads slrlib's hints only where the installed package has ``py.typed``."""
    python, _ = fresh
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    assert (Path(site) / "slrlib" / "py.typed").is_file()


def test_the_core_computes_without_the_extras(fresh):
    python, _ = fresh
    out = _run(python)
    # Theorem 1 and Proposition 15 at the oracle: two derivations of one number (float64).
    assert abs(out["theorem1"] - out["prop15"]) <= 1e-12 * out["theorem1"]
    # Monte Carlo of the oracle predictor on 20 000 sequences: within 5 standard errors.
    assert abs(out["mc_mean"] - out["theorem1"]) <= 5 * out["mc_stderr"], out
    # 200 PGD steps from the manifold lower each run's risk.
    assert all(run[-1] < run[0] for run in out["pgd_risk"]), out["pgd_risk"]
    assert out["loaded"] == [], f"the core imported {out['loaded']}"
    # What needs an extra says which.
    assert 'pip install "slrlib[plots]"' in out["errors"]["slrlib.plots"], out["errors"]
    assert "slrlib[plots]" in out["errors"]["slrlib.widgets"] and "slrlib[plots]" in out["errors"]["slrlib.figures"]


def test_the_figure_command_names_its_extra(fresh):
    python, _ = fresh
    proc = subprocess.run([str(python), "-m", "slrlib", "figure", "--list"], cwd=python.parents[2],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and 'pip install "slrlib[plots]"' in proc.stderr, proc.stderr[-2000:]


def test_help_and_version_import_no_jax(fresh):
    """``python -m slrlib --help`` and ``--version`` answer from the installed wheel without JAX
    (``-X importtime`` lists every module the process imported)."""
    python, _ = fresh
    for flag in ("--help", "--version"):
        proc = subprocess.run([str(python), "-X", "importtime", "-m", "slrlib", flag], cwd=python.parents[2],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-2000:]
        imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines()
                    if line.startswith("import time:")}
        assert "slrlib" in imported and "jax" not in imported and "numpy" not in imported, flag
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert proc.stdout.strip() == f"slrlib {version}"  # the wheel's version, from pyproject.toml


#: Each extra alone: the distributions it must bring, and a module of slrlib it makes importable.
_EXTRAS = {
    "plots": ({"matplotlib", "pillow"}, "slrlib.plots"),
    "widgets": ({"matplotlib", "pillow", "ipywidgets"}, "slrlib.widgets"),
    "optim": ({"optax"}, "slrlib.training.transformer"),
}


@pytest.fixture(scope="module", params=sorted(_EXTRAS))
def with_extra(request, fresh, tmp_path_factory):
    """(extra, python of a copy of the fresh venv with ``slrlib[extra]`` installed, the names installed).

    A copy of the core venv (invoked as ``venv/bin/python``, a venv finds its site-packages from where
    it lies), so that only the extra's own packages are installed again."""
    extra = request.param
    python, _ = fresh
    venv = tmp_path_factory.mktemp(f"extra-{extra}") / "venv"
    shutil.copytree(python.parents[1], venv, symlinks=True)
    (wheel,) = (python.parents[2] / "dist").glob("slrlib-*.whl")
    copy = venv / "bin" / "python"
    install = subprocess.run([str(copy), "-m", "pip", "install", "--disable-pip-version-check", "-q",
                              "-c", str(ROOT / "requirements.lock"), f"{wheel}[{extra}]"],
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    listed = subprocess.run([str(copy), "-m", "pip", "list", "--format=json"], check=True, capture_output=True,
                            text=True)
    return extra, copy, {p["name"].lower() for p in json.loads(listed.stdout)}


def test_each_extra_alone_brings_its_packages_and_its_modules(with_extra):
    extra, python, installed = with_extra
    wanted, module = _EXTRAS[extra]
    others = set().union(*(w for e, (w, _) in _EXTRAS.items() if e != extra)) - wanted
    assert wanted <= installed and not (others & installed), (extra, wanted - installed, others & installed)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JAX_COMPILATION_CACHE_DIR")}
    proc = subprocess.run([str(python), "-c", f"import jax; jax.config.update('jax_enable_x64', True); "
                           f"import {module}"], cwd=python.parents[2], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_the_figure_list_runs_wherever_plots_is_installed_and_names_missing_extras(with_extra):
    """With matplotlib (``plots`` or ``widgets``), ``figure --list`` lists the figures it can make and
    names, for each other one, the extra it needs; without it, one line names ``plots``."""
    extra, python, _ = with_extra
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JAX_COMPILATION_CACHE_DIR")}
    proc = subprocess.run([str(python), "-m", "slrlib", "figure", "--list"], cwd=python.parents[2], env=env,
                          capture_output=True, text=True)
    if extra == "optim":
        assert proc.returncode == 2 and 'pip install "slrlib[plots]"' in proc.stderr, proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        return
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[1:] if line.strip()}
    assert "fig4a" in rows and "needs" not in rows["fig4a"], proc.stdout  # PGD needs only the core and plots
    assert 'needs pip install "slrlib[optim]"' in rows["fig8"], rows.get("fig8")  # the Transformer: optax
    assert 'needs pip install "slrlib[optim]"' in rows["random_walk"], rows.get("random_walk")
