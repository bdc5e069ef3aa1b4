"""Shared fixtures. Importing slrlib first switches JAX to float64."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import slrlib  # noqa: F401  (float64)
from slrlib import SLRTask


def random_unit(key, shape):
    """Uniform vectors on the sphere along the last axis."""
    x = jax.random.normal(key, shape)
    return x / jnp.linalg.norm(x, axis=-1, keepdims=True)


@pytest.fixture(scope="session")
def small_task():
    return SLRTask(d=6, L=4, gamma=0.8, eps=0.3)


@pytest.fixture(scope="session")
def small_directions(small_task):
    return small_task.oracle_directions(jax.random.key(123))


def unit(x):
    """``x`` normalised along the last axis."""
    return x / jnp.linalg.norm(x, axis=-1, keepdims=True)


def moment_z_scores(x, y):
    """z-scores of the differences of means and of second moments of two samples (columns)."""
    m = x.shape[1]
    pairs = [(i, j) for i in range(m) for j in range(i, m)]
    fx = [x[:, i] for i in range(m)] + [x[:, i] * x[:, j] for i, j in pairs]
    fy = [y[:, i] for i in range(m)] + [y[:, i] * y[:, j] for i, j in pairs]
    return np.asarray([(a.mean() - b.mean()) / math.sqrt(a.var() / a.size + b.var() / b.size)
                       for a, b in zip(fx, fy)])


@pytest.fixture(scope="session")
def sgd_small():
    """One head (K, V) off the oracle on a d = 12, L = 4 task, with its directions: (task, ks, vs, K, V).

    Shared by the erf and softmax tests of the stochastic gradient (test_sgd.py, test_sgd_softmax.py)."""
    task = SLRTask(12, 4, eps=0.1)
    ks, vs = task.oracle_directions(jax.random.key(0))
    K = unit(0.6 * unit(jax.random.normal(jax.random.key(1), (1, 12))) + 0.5 * ks)
    V = unit(jax.random.normal(jax.random.key(2), (1, 12)) + 0.8 * vs)
    return task, ks, vs, K, V


def orthogonal_fixing(key, k_star, v_star):
    """A random orthogonal matrix that fixes k_star and v_star (rotates their complement)."""
    d = k_star.shape[0]
    A = np.asarray(jax.random.normal(key, (d, d)))
    basis = np.linalg.qr(np.column_stack([k_star, v_star, A[:, : d - 2]]))[0]
    R_small = np.linalg.qr(np.asarray(jax.random.normal(jax.random.fold_in(key, 1), (d - 2, d - 2))))[0]
    block = np.eye(d)
    block[2:, 2:] = R_small
    # basis columns 0, 1 are ±k*, ±v*: the rotation acts on columns 2.. only.
    return basis @ block @ basis.T


# ------------------------------------------------------------------ z-score report
_Z_RECORDS: list[tuple[float, str]] = []


@pytest.fixture
def record_z():
    """Record closed-form-vs-Monte-Carlo gaps (in standard errors) for the final summary."""

    def record(z, label):
        for value in np.atleast_1d(np.asarray(z, dtype=float)):
            _Z_RECORDS.append((float(value), label))

    return record


def pytest_terminal_summary(terminalreporter):
    if not _Z_RECORDS:
        return
    worst = max(_Z_RECORDS, key=lambda r: abs(r[0]))
    terminalreporter.write_line(
        f"closed form vs Monte Carlo: {len(_Z_RECORDS)} comparisons, "
        f"largest |gap| = {abs(worst[0]):.2f} standard errors ({worst[1]})"
    )
