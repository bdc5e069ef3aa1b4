"""slrlib.experiments.heads: matching heads to locations, by the optimal and the greedy rule."""

import itertools

import numpy as np
import pytest

from slrlib.experiments import match_heads


def _brute_force(kappa):
    """The assignment of largest total |kappa| by enumeration (perm[m] = head of location m)."""
    runs, H, M = kappa.shape
    out = []
    for r in range(runs):
        best = max(itertools.permutations(range(H), M), key=lambda p: sum(abs(kappa[r, p[m], m]) for m in range(M)))
        out.append(best)
    return np.array(out)


def test_optimal_rule_is_the_best_assignment():
    rng = np.random.default_rng(0)
    for H, M in ((2, 2), (3, 2), (3, 3)):
        kappa = rng.uniform(-1, 1, (40, H, M))
        np.testing.assert_array_equal(match_heads(kappa), _brute_force(kappa))


def test_greedy_rule_is_the_authors():
    # head 1 takes its larger |kappa|, head 2 the location left; perm[r, m] = head of location m
    kappa = np.array([[[0.9, 0.2], [0.3, 0.8]], [[0.1, 0.7], [0.95, 0.2]], [[0.6, 0.5], [0.9, 0.1]]])
    np.testing.assert_array_equal(match_heads(kappa, rule="greedy"), [[0, 1], [1, 0], [0, 1]])
    # the third run: greedy gives location 1 to head 1 (0.6 > 0.5), the optimal rule swaps (0.5 + 0.9 > 0.6 + 0.1)
    np.testing.assert_array_equal(match_heads(kappa, rule="optimal"), [[0, 1], [1, 0], [1, 0]])
    # signs are ignored
    np.testing.assert_array_equal(match_heads(-kappa, rule="greedy"), match_heads(kappa, rule="greedy"))


@pytest.mark.parametrize(
    "kappa, kwargs, name",
    [
        (np.zeros((2, 2, 3)), {"rule": "optimal"}, "H >= M"),
        (np.zeros((2, 3, 2)), {"rule": "greedy"}, "H = M"),
        (np.zeros((2, 2)), {}, "shape"),
        (np.full((1, 2, 2), np.nan), {}, "finite"),
        (np.zeros((1, 2, 2)), {"rule": "fast"}, "rule"),
    ],
)
def test_bad_input(kappa, kwargs, name):
    with pytest.raises(ValueError, match=name):
        match_heads(kappa, **kwargs)
