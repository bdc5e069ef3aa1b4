"""Chapter 13's exact values at the 1-NN initialisation (slrlib.book.ch13_token_selection).

Each is compared with something computed another way: the model's own loss
(:func:`slrlib.case_studies.token_selection.nn1.loss`) averaged exactly over every label vector
(at W_0 the scores do not depend on the points, so averaging over the 2^N label vectors of one
geometry is the population average), its second difference along c, and the closed form
1 - 2/N + 3/N^2 - 2/N^3 of the limit sigma -> infinity.
"""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from slrlib.book import ch13_token_selection as ch13
from slrlib.case_studies.token_selection import nn1 as NN

D = 3


def _all_labels(N: int, key=0) -> NN.NN1Data:
    """One geometry, every label vector: 2^N prompts."""
    base = NN.sample(jax.random.key(key), 1, D, N)
    labels = np.array(list(itertools.product([-1.0, 1.0], repeat=N)))
    n = labels.shape[0]
    i_star = np.repeat(np.asarray(base.i_star), n)
    return NN.NN1Data(X=jnp.repeat(base.X, n, axis=0), xq=jnp.repeat(base.xq, n, axis=0), y=jnp.asarray(labels),
                      target=jnp.asarray(labels[np.arange(n), i_star]), i_star=jnp.asarray(i_star))


@pytest.mark.parametrize("N, sigma", [(1, 0.0), (4, 4.0), (6, 1.5), (6, 30.0)])
def test_initial_loss_against_label_enumeration(N, sigma):
    data = _all_labels(N)
    H = NN.embed(data.X, data.xq, data.y)
    exact = float(NN.loss(NN.initial_W(D, sigma), H, data.target))
    assert ch13.nn1_initial_loss(N, sigma) == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("N, sigma", [(2, 0.0), (4, 4.0), (6, 1.5)])
def test_curvature_against_second_difference(N, sigma):
    data = _all_labels(N, key=1)
    H = NN.embed(data.X, data.xq, data.y)
    W0, h = NN.initial_W(D, sigma), 1e-4
    E = jnp.zeros_like(W0).at[D, D + 1].set(h)

    def L(W):
        return float(NN.loss(W, H, data.target))

    second = (L(W0 + E) - 2 * L(W0) + L(W0 - E)) / h**2
    # O(h^2) truncation (1e-8) plus round-off eps * L / h^2 (1e-8)
    assert ch13.nn1_curvature_c(N, sigma) == pytest.approx(second, abs=1e-6)


@pytest.mark.parametrize("N", [1, 2, 5, 16])
def test_curvature_limit_is_the_closed_form(N):
    assert ch13.nn1_curvature_c(N, math.inf) == pytest.approx(1 - 2 / N + 3 / N**2 - 2 / N**3, rel=1e-12, abs=1e-15)
    # the query's weight e^-sigma only perturbs it
    assert abs(ch13.nn1_curvature_c(N, 4.0) - ch13.nn1_curvature_c(N, math.inf)) < 4 * math.exp(-4.0)


def test_per_prompt_loss_against_numpy():
    data = NN.sample(jax.random.key(3), 50, D, 5)
    W = jnp.diag(jnp.r_[jnp.full(D, 2.0), 0.0, -3.0]).at[0, 1].set(0.4)
    losses = ch13.nn1_per_prompt_loss(W, data)
    H = np.asarray(NN.embed(data.X, data.xq, data.y))
    Wn = np.asarray(W)
    scores = np.einsum("nji,jk,nk->ni", H, Wn, H[:, :, -1])
    a = np.exp(scores - scores.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    f = np.sum(a * H[:, -2, :], axis=1)
    np.testing.assert_allclose(losses, 0.5 * (f - np.asarray(data.target)) ** 2, rtol=1e-12, atol=1e-15)
    assert losses.mean() == pytest.approx(NN.evaluate(W, data)["loss"], rel=1e-12)


def test_bad_input():
    with pytest.raises(ValueError):
        ch13.nn1_initial_loss(0, 1.0)
    with pytest.raises(ValueError):
        ch13.nn1_initial_loss(3, -1.0)
    with pytest.raises(ValueError):
        ch13.nn1_curvature_c(3, -1.0)
    with pytest.raises(ValueError):
        ch13.nn1_per_prompt_loss(np.eye(5), (1, 2))
