"""Helpers shared by the library tests (imported as ``from helpers import ...``).

They live here, not in conftest.py: the browser tests have a conftest of their own, and a
module named ``conftest`` resolves to whichever was imported first.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np


def random_unit(key, shape):
    """Uniform vectors on the sphere along the last axis."""
    x = jax.random.normal(key, shape)
    return x / jnp.linalg.norm(x, axis=-1, keepdims=True)


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
