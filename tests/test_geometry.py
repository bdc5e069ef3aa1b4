"""slrlib.core.geometry: unit vectors with prescribed overlaps, and random start points."""

import jax
import numpy as np
import pytest

from slrlib.core.geometry import (
    canonical_directions,
    directions_with_overlaps,
    manifold_directions,
    overlap_coordinates,
    uniform_directions,
    vectors_with_overlaps,
)
from slrlib.core.risk import overlaps
from slrlib.core.task import SLRTask

TASK = SLRTask(d=12, L=4)
K_STAR, V_STAR = TASK.oracle_directions(jax.random.key(0))


def _random_valid_overlaps(rng, n):
    """Overlaps of random unit vectors (so the Gram matrix is positive semi-definite)."""
    x = rng.standard_normal((n, 2, 5))
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    e1, e2 = np.eye(5)[0], np.eye(5)[1]
    k, v = x[:, 0], x[:, 1]
    return np.stack([k @ e1, v @ e2, v @ e1, k @ e2, np.sum(k * v, -1)])  # kappa, nu, theta, eta, rho


def test_the_three_constructors_give_the_overlaps_asked_for():
    ov = _random_valid_overlaps(np.random.default_rng(1), 50)
    k4, v4 = overlap_coordinates(*ov)
    got = np.stack([k4[:, 0], v4[:, 1], v4[:, 0], k4[:, 1], np.sum(k4 * v4, -1)])
    np.testing.assert_allclose(got, ov, atol=1e-12)
    k, v, ks, vs = vectors_with_overlaps(*ov, d=7)
    np.testing.assert_allclose(np.stack(overlaps(k, v, ks, vs)), ov, atol=1e-12)
    k, v = directions_with_overlaps(*ov, K_STAR, V_STAR, jax.random.key(3))
    assert k.shape == (50, TASK.d)
    np.testing.assert_allclose(np.stack(overlaps(k, v, K_STAR, V_STAR)), ov, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(k, axis=-1), 1.0, atol=1e-14)
    # scalar overlaps give one pair; different keys, different vectors, same overlaps
    k1, _ = directions_with_overlaps(*ov[:, 0], K_STAR, V_STAR, jax.random.key(4))
    k2, _ = directions_with_overlaps(*ov[:, 0], K_STAR, V_STAR, jax.random.key(5))
    assert k1.shape == (TASK.d,) and not np.allclose(k1, k2)


# The example: kappa^2 + eta^2 = 1 puts k in span{k*, v*}, so <k, v> = kappa theta + eta nu
# = 0.3 whatever v; rho = 0.9 is unreachable. Then a Gram matrix that is not PSD, and an overflow.
IMPOSSIBLE = [
    ((0.6, 0.5, 0.5, 0.8, 0.9), "rho must equal kappa theta"),
    ((0.9, 0.0, 0.0, 0.9, 0.0), "kappa\\^2 \\+ eta\\^2 must be <= 1"),
    ((-0.3, 0.7, -0.5, 0.6, -0.4), "not positive semi-definite"),
]


@pytest.mark.parametrize("ov, message", IMPOSSIBLE)
def test_every_constructor_raises_on_impossible_overlaps(ov, message):
    with pytest.raises(ValueError, match=message):
        overlap_coordinates(*ov)
    with pytest.raises(ValueError, match=message):
        vectors_with_overlaps(*ov, d=6)
    with pytest.raises(ValueError, match=message):
        directions_with_overlaps(*ov, K_STAR, V_STAR, jax.random.key(0))


def test_reachable_boundary_and_projection():
    # k in span{k*, v*} with the one reachable rho
    k, v, ks, vs = vectors_with_overlaps(0.6, 0.5, 0.5, 0.8, 0.7, d=6)
    np.testing.assert_allclose(np.stack(overlaps(k, v, ks, vs))[:, 0], [0.6, 0.5, 0.5, 0.8, 0.7], atol=1e-12)
    # project=True maps slightly impossible (rounded) overlaps to the nearest reachable ones
    k4, v4 = overlap_coordinates(0.0, 0.9, 0.9, 0.0, 0.0, project=True)
    np.testing.assert_allclose([np.linalg.norm(k4), np.linalg.norm(v4)], 1.0, atol=1e-14)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: overlap_coordinates(0.1, 0.1, 0.1, 0.1, np.nan), "rho"),
        (lambda: overlap_coordinates([0.1, 0.2], [0.1, 0.2, 0.3], 0.0, 0.0, 0.0), "broadcast"),
        (lambda: vectors_with_overlaps(0.1, 0.1, 0.1, 0.1, 0.1, d=3), "d"),
        (lambda: directions_with_overlaps(0.1, 0.1, 0.1, 0.1, 0.1, np.eye(3)[0], np.eye(3)[1], jax.random.key(0)), "k_star"),
        (lambda: canonical_directions(1), "d"),
        (lambda: uniform_directions(jax.random.key(0), 5, (0,)), "shape"),
        (lambda: uniform_directions(jax.random.key(0), 5, 3), "shape"),
        (lambda: uniform_directions(7, 5, (2,)), "key"),
        (lambda: manifold_directions(jax.random.key(0), K_STAR, 2 * V_STAR, (2,)), "v_star"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("d", [0, 1])
def test_uniform_directions_needs_d_at_least_two(d):
    """d = 1 returned +-1 (no task has d < 2): the message of SLRTask's, d >= 2 and why."""
    with pytest.raises(ValueError, match=r"^d must be a positive integer \(>= 2: k\* and v\* must be orthogonal"):
        uniform_directions(jax.random.key(0), d, (3,))
    with pytest.raises(ValueError, match=r"^d must be a positive integer \(>= 2"):
        SLRTask(d=d, L=3)  # the same rule, the same words
    k, v = uniform_directions(jax.random.key(0), 2, (3,))
    assert k.shape == v.shape == (3, 2)


def test_manifold_directions_lie_on_the_manifold_and_shapes():
    k, v = manifold_directions(jax.random.key(1), K_STAR, V_STAR, (3, 5))
    assert k.shape == v.shape == (3, 5, TASK.d)
    kappa, nu, theta, eta, rho = overlaps(k, v, K_STAR, V_STAR)
    np.testing.assert_allclose(np.stack([theta, eta, rho]), 0.0, atol=1e-14)
    # one run's draw does not depend on the leading shape it is asked with
    k1, v1 = manifold_directions(jax.random.key(1), K_STAR, V_STAR, (15,))
    np.testing.assert_allclose(k.reshape(15, -1), k1, atol=1e-15)


def test_uniform_directions_moments():
    """Uniform on the sphere: E<k, e1> = 0 and E<k, e1>^2 = 1/d, to 5 standard errors."""
    n, d = 20_000, TASK.d
    k, v = uniform_directions(jax.random.key(2), d, (n,))
    for x in (np.asarray(k)[:, 0], np.asarray(v)[:, 3]):
        assert abs(x.mean()) < 5 * x.std() / np.sqrt(n)
        sq = x**2
        assert abs(sq.mean() - 1 / d) < 5 * sq.std() / np.sqrt(n)
