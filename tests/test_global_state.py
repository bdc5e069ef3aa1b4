"""``import slrlib`` changes no global state, and nothing computes silently in float32 (issue 42, 1 and 3).

Each test runs a fresh Python process: the suite's own process has float64 on (``conftest.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(script: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1]


def test_import_slrlib_loads_no_jax_and_leaves_its_configuration():
    out = json.loads(_run("""
import json, sys
import slrlib
loaded = "jax" in sys.modules
import jax, jax.numpy as jnp
before = str(jnp.ones(1).dtype)
jax.config.update("jax_enable_x64", True)
risk = float(slrlib.oracle_risk(0.1, slrlib.SLRTask(d=20, L=5)))
from slrlib.threefry import unrolled_threefry_active
print(json.dumps({"jax_loaded_by_import": loaded, "dtype_after_import": before,
                  "unrolled": unrolled_threefry_active(), "risk": risk}))
"""))
    assert out["jax_loaded_by_import"] is False
    assert out["dtype_after_import"] == "float32"  # JAX's own default: slrlib switched nothing
    assert out["unrolled"] is False  # the Threefry lowering is an opt-in
    assert 0.0 < out["risk"] < 0.5  # and the library computes once float64 is on


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_the_command_line_answers_help_and_version_without_jax(flag):
    out = json.loads(_run(f"""
import contextlib, io, json, runpy, sys
sys.argv = ["python -m slrlib", {flag!r}]
text = io.StringIO()
with contextlib.redirect_stdout(text):
    try:
        runpy.run_module("slrlib", run_name="__main__")
    except SystemExit as stop:
        code = stop.code
print(json.dumps({{"code": code, "text": text.getvalue(), "jax": "jax" in sys.modules}}))
"""))
    assert out["code"] in (0, None) and out["jax"] is False, out
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert (f"slrlib {version}\n" == out["text"]) if flag == "--version" else ("figure" in out["text"])


# One valid call of every public function and class of ``slrlib.__all__`` that computes. Each runs
# first with float64 on (so a wrong call here fails the test), then with it off.
_CALLS = r"""
import jax, jax.numpy as jnp
import slrlib as S
key = jax.random.key(0)
def setup():
    task = S.SLRTask(d=8, L=3)
    ks, vs = task.oracle_directions(key)
    X = task.sample(key, 4, ks, vs).X
    res = S.pgd(ks, vs, ks, vs, task, lam=0.1, alpha=0.01, n_steps=2)
    return task, ks, vs, X, res
CALLS = {
    "SLRTask.oracle_directions": lambda t, ks, vs, X, r: t.oracle_directions(key),
    "SLRTask.sample": lambda t, ks, vs, X, r: t.sample(key, 4, ks, vs),
    "MultiLocationTask.oracle_directions": lambda t, ks, vs, X, r: S.MultiLocationTask(d=8, L=3).oracle_directions(key),
    "erf_attention": lambda t, ks, vs, X, r: S.erf_attention(X, ks, vs, 0.1),
    "multi_head_erf_attention": lambda t, ks, vs, X, r: S.multi_head_erf_attention(X, ks[None], vs[None], 0.1),
    "softmax_attention": lambda t, ks, vs, X, r: S.softmax_attention(X, ks, vs, 0.1),
    "hard_oracle": lambda t, ks, vs, X, r: S.hard_oracle(X, ks, vs),
    "bayes_posterior": lambda t, ks, vs, X, r: S.bayes_posterior(X, ks, t),
    "bayes_predictor": lambda t, ks, vs, X, r: S.bayes_predictor(X, ks, vs, t),
    "linear_predictor": lambda t, ks, vs, X, r: S.linear_predictor(X, jnp.ones((3, 8))),
    "best_linear_weights": lambda t, ks, vs, X, r: S.best_linear_weights(t, vs),
    "zeta": lambda t, ks, vs, X, r: S.zeta(0.1, 0.2),
    "overlaps": lambda t, ks, vs, X, r: S.overlaps(ks, vs, ks, vs),
    "risk_from_overlaps": lambda t, ks, vs, X, r: S.risk_from_overlaps(1.0, 1.0, 0.0, 0.0, 0.0, 0.1, t),
    "population_risk": lambda t, ks, vs, X, r: S.population_risk(ks, vs, ks, vs, 0.1, t),
    "manifold_risk": lambda t, ks, vs, X, r: S.manifold_risk(0.5, 0.5, 0.1, t),
    "oracle_risk": lambda t, ks, vs, X, r: S.oracle_risk(0.1, t),
    "optimal_lambda": lambda t, ks, vs, X, r: S.optimal_lambda(t),
    "null_risk": lambda t, ks, vs, X, r: S.null_risk(t),
    "linear_risk": lambda t, ks, vs, X, r: S.linear_risk(t),
    "monte_carlo_risk": lambda t, ks, vs, X, r: S.monte_carlo_risk(
        lambda X: S.erf_attention(X, ks, vs, 0.1), t, ks, vs, key, n_samples=64),
    "uniform_directions": lambda t, ks, vs, X, r: S.uniform_directions(key, 8),
    "manifold_directions": lambda t, ks, vs, X, r: S.manifold_directions(key, ks, vs),
    "pgd": lambda t, ks, vs, X, r: S.pgd(ks, vs, ks, vs, t, lam=0.1, alpha=0.01, n_steps=2),
    "sgd": lambda t, ks, vs, X, r: S.sgd(ks[None, None], vs[None, None], ks[None], vs[None], t, lam=0.1,
                                         alpha=0.01, n_steps=2, batch_size=4, key=key, test_size=8),
}
"""

#: Public names that compute nothing in JAX, with the reason.
_EXEMPT = {
    "SLRTask": "parameters (its methods are called above)",
    "MultiLocationTask": "parameters (its method is called above)",
    "Sample": "a record", "MultiSample": "a record", "Overlaps": "a record", "OptimalLambda": "a record",
    "MonteCarloEstimate": "a record", "PGDResult": "a record", "SGDResult": "a record",
    "recovered": "NumPy on a finished run's record", "checked": "a wrapper: the wrapped function checks",
    "x64_enabled": "reads the configuration", "Float64Required": "the error itself",
}


def test_every_entry_point_refuses_float32_naming_the_line_that_fixes_it():
    out = json.loads(_run(_CALLS + r"""
import inspect, json
jax.config.update("jax_enable_x64", True)
public = [n for n in S.__all__ if callable(getattr(S, n)) and not inspect.ismodule(getattr(S, n))]
args = setup()
for name, call in CALLS.items():
    call(*args)  # valid with float64 on
jax.config.update("jax_enable_x64", False)
refused, computed = {}, []
for name, call in CALLS.items():
    try:
        call(*args)
        computed.append(name)
    except S.Float64Required as err:
        refused[name] = str(err)
print(json.dumps({"public": public, "refused": refused, "computed": computed}))
"""))
    called = {name.split(".")[0] for name in json.loads(_run(_CALLS + "import json\nprint(json.dumps(list(CALLS)))"))}
    assert set(out["public"]) == called | set(_EXEMPT), "a public name has neither a call in _CALLS nor a reason"
    assert out["computed"] == [], f"computed with float64 off: {out['computed']}"
    for name, message in out["refused"].items():
        assert message.startswith("slrlib computes in float64"), (name, message)
        assert 'jax.config.update("jax_enable_x64", True)' in message, (name, message)


def test_float64_required_is_a_runtime_error_not_a_value_error():
    """No argument is wrong: a sweep that catches ValueError for bad parameters does not swallow it."""
    from slrlib import Float64Required

    assert issubclass(Float64Required, RuntimeError) and not issubclass(Float64Required, ValueError)


def test_every_module_of_the_library_imports_with_float64_off():
    """Importing computes nothing: every module of slrlib (the book's companions included) imports
    in a process where float64 is off, as Sphinx's autodoc and a researcher's script import them,
    and its module-level objects (the experiments' tasks and configurations) are built."""
    out = json.loads(_run("""
import importlib, json, pkgutil, jax
import slrlib
failed = {}
for info in pkgutil.walk_packages(slrlib.__path__, "slrlib."):
    if info.name == "slrlib.__main__":
        continue
    try:
        importlib.import_module(info.name)
    except Exception as err:
        failed[info.name] = f"{type(err).__name__}: {err}"[:200]
print(json.dumps({"failed": failed, "x64": bool(jax.config.jax_enable_x64)}))
"""))
    assert out["x64"] is False and out["failed"] == {}, out


def test_the_lazy_names_the_type_checking_imports_and_all_agree():
    """``slrlib/__init__.py`` lists its public names three times: ``__all__``, the ``TYPE_CHECKING``
    imports (for IDEs and type checkers) and ``_WHERE`` (what loads on first use). They must agree,
    name for name and module for module, or a name is missing for one reader of the package."""
    import ast

    import slrlib

    tree = ast.parse((ROOT / "slrlib" / "__init__.py").read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and getattr(node.test, "id", "") == "TYPE_CHECKING")
    imported = {alias.name: node.module for node in block.body if isinstance(node, ast.ImportFrom)
                and node.module != "slrlib" for alias in node.names}
    assert imported == slrlib._WHERE
    modules = {alias.name for node in block.body if isinstance(node, ast.ImportFrom) and node.module == "slrlib"
               for alias in node.names}
    assert modules <= set(slrlib._SUBMODULES)
    assert set(slrlib.__all__) - set(slrlib._WHERE) <= set(slrlib._SUBMODULES) | {"x64_enabled"}
    assert all(getattr(slrlib, name) is not None for name in slrlib.__all__)
