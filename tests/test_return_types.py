"""The return-type convention (ARCHITECTURE.md, "Return types"): drivers return records of NumPy
arrays and Python or NumPy scalars; formulas return JAX arrays, so that they compose with jit."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import slrlib
from slrlib.experiments import PGDConfig, SGDConfig, pgd_initialisation, sgd_initialisation
from slrlib.training.pgd import reduced_pgd

TASK = slrlib.SLRTask(8, 3, eps=0.1)


def _numpy_fields(record) -> dict[str, str]:
    """The fields of ``record`` that are neither NumPy arrays nor scalars, with their types."""
    fields = record._asdict() if hasattr(record, "_asdict") else {
        f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    numeric = (np.ndarray, np.floating, np.integer, float, int)
    bad = {}
    for name, value in fields.items():
        if isinstance(value, jax.Array) or (not isinstance(value, numeric) and hasattr(value, "shape")):
            bad[name] = type(value).__name__
    return bad


@pytest.fixture(scope="module")
def starts():
    ks, vs = TASK.oracle_directions(jax.random.key(0))
    k0, v0 = slrlib.uniform_directions(jax.random.key(1), TASK.d, (3,))
    return ks, vs, k0, v0


def test_pgd_and_pgd_dense_return_numpy(starts):
    ks, vs, k0, v0 = starts
    for run in (slrlib.pgd, slrlib.training.pgd.pgd_dense):
        res = run(k0, v0, ks, vs, TASK, lam=0.5, alpha=0.05, n_steps=4, log_every=2)
        assert _numpy_fields(res) == {}, run.__name__
        assert res.kappa.shape == (3, 3) and res.k.shape == (3, TASK.d)


def test_reduced_pgd_and_initialisations_return_numpy():
    res = reduced_pgd(np.array([0.1, -0.2]), np.array([0.3, 0.0]), TASK, lam=0.5, alpha=0.05, n_steps=4, log_every=2)
    assert _numpy_fields(res) == {} and res.kappa.shape == (2, 3)
    pgd_cfg = PGDConfig(name="t", title="t", init="sphere", lam=0.1, schedule="constant", alpha=1e-3, n_steps=10,
                        log_every=5, d=8, L=3, n_runs=2)
    sgd_cfg = SGDConfig(name="t", title="t", lam=1.0, decay=0.0, alpha=1e-3, n_steps=10, log_every=5, d=8, L=3,
                        n_runs=2)
    for init in (pgd_initialisation(pgd_cfg), sgd_initialisation(sgd_cfg)):
        assert _numpy_fields(init) == {}
        np.testing.assert_allclose(np.linalg.norm(init.k0, axis=-1), 1.0, rtol=1e-12)


def test_sgd_returns_numpy(starts):
    ks, vs, k0, v0 = starts
    res = slrlib.sgd(k0, v0, ks, vs, TASK, lam=0.5, alpha=0.05, n_steps=4, batch_size=4, key=jax.random.key(2),
                     log_every=2, test_size=8)
    assert _numpy_fields(res) == {}


def test_monte_carlo_risk_and_optimal_lambda_return_records(starts):
    ks, vs, _, _ = starts
    est = slrlib.monte_carlo_risk(lambda X: slrlib.erf_attention(X, ks, vs, 0.5), TASK, ks, vs,
                                  n_samples=256, key=jax.random.key(3))
    assert _numpy_fields(est) == {} and isinstance(est.mean, (float, np.floating))
    best = slrlib.optimal_lambda(TASK)
    assert isinstance(best, tuple) and not type(best) is tuple  # a named record, not a bare tuple
    assert isinstance(best.lam, float) and isinstance(best.risk, float)
    lam, risk = best  # unpacks as before
    assert risk == pytest.approx(float(slrlib.oracle_risk(lam, TASK)), rel=1e-12)


def test_formulas_return_jax_arrays_that_jit_composes(starts):
    ks, vs, _, _ = starts
    risk = slrlib.population_risk(ks, vs, ks, vs, 0.5, TASK)
    assert isinstance(risk, jax.Array)
    jitted = jax.jit(lambda lam: slrlib.population_risk(ks, vs, ks, vs, lam, TASK))(0.5)
    assert float(jitted) == pytest.approx(float(risk), rel=1e-12)
    assert isinstance(slrlib.oracle_risk(jnp.asarray(0.5), TASK), jax.Array)
    # every risk is a formula: the null and linear risks too (Python floats until issue 42)
    for risk in (slrlib.null_risk(TASK), slrlib.linear_risk(TASK)):
        assert isinstance(risk, jax.Array) and risk.shape == () and risk.dtype == jnp.float64
