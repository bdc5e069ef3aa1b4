"""Bad input raises a ValueError that names the parameter."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from slrlib import (
    SLRTask,
    Slider,
    bayes_predictor,
    best_linear_weights,
    erf_attention,
    linear_predictor,
    manifold_risk,
    monte_carlo_risk,
    oracle_risk,
    population_risk,
    slider_figure,
)

nan, inf = float("nan"), float("inf")


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"d": 0, "L": 3}, "d"),
        ({"d": -2, "L": 3}, "d"),
        ({"d": 2.5, "L": 3}, "d"),
        ({"d": 3.0, "L": 3}, "d"),
        ({"d": True, "L": 3}, "d"),
        ({"d": "4", "L": 3}, "d"),
        ({"d": 1, "L": 3}, "d"),
        ({"d": 4, "L": 0}, "L"),
        ({"d": 4, "L": -1}, "L"),
        ({"d": 4, "L": 2.0}, "L"),
        ({"d": 4, "L": 3, "gamma": 0.0}, "gamma"),
        ({"d": 4, "L": 3, "gamma": -1.0}, "gamma"),
        ({"d": 4, "L": 3, "gamma": nan}, "gamma"),
        ({"d": 4, "L": 3, "gamma": inf}, "gamma"),
        ({"d": 4, "L": 3, "eps": -0.1}, "eps"),
        ({"d": 4, "L": 3, "eps": nan}, "eps"),
        ({"d": 4, "L": 3, "eps": inf}, "eps"),
        ({"d": 4, "L": 3, "probs": (0.5, 0.5)}, "probs"),
        ({"d": 4, "L": 3, "probs": (0.5, 0.6, -0.1)}, "probs"),
        ({"d": 4, "L": 3, "probs": (0.2, 0.2, 0.2)}, "probs"),
        ({"d": 4, "L": 3, "probs": (nan, 0.5, 0.5)}, "probs"),
        ({"d": 4, "L": 3, "probs": "abc"}, "probs"),
        ({"d": 4, "L": 2, "probs": ((0.5, 0.5),)}, "probs"),
    ],
)
def test_task_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        SLRTask(**kwargs)


@pytest.fixture(scope="module")
def setup():
    task = SLRTask(d=4, L=3, gamma=0.7, eps=0.1)
    k_star, v_star = task.oracle_directions(jax.random.key(0))
    return task, k_star, v_star


def _unit(d, i):
    return jnp.eye(d)[i]


def test_population_risk_bad_inputs(setup):
    task, ks, vs = setup
    ok = dict(k=ks, v=vs, k_star=ks, v_star=vs, lam=0.5, task=task)

    def call(**changes):
        args = {**ok, **changes}
        return population_risk(
            args["k"], args["v"], args["k_star"], args["v_star"], args["lam"], args["task"]
        )

    call()  # the valid call works
    cases = [
        ({"lam": -0.1}, "lam"),
        ({"lam": nan}, "lam"),
        ({"lam": inf}, "lam"),
        ({"lam": jnp.array([0.1, -1.0])}, "lam"),
        ({"k": 2 * ks}, "k"),
        ({"v": 0.5 * vs}, "v"),
        ({"k": jnp.full(4, nan)}, "k"),
        ({"k": ks[:3]}, "k"),
        ({"v": jnp.ones((2, 5)) / math.sqrt(5)}, "v"),
        ({"k_star": 1.1 * ks}, "k_star"),
        ({"v_star": vs * 0.0}, "v_star"),
        ({"v_star": ks}, "k_star"),  # not orthogonal: Assumption 1
        ({"k_star": ks[:2]}, "k_star"),
        ({"task": "not a task"}, "task"),
    ]
    for changes, name in cases:
        with pytest.raises(ValueError, match=rf"\b{name}\b"):
            call(**changes)


def test_other_functions_bad_inputs(setup):
    task, ks, vs = setup
    X, _, _ = task.sample(jax.random.key(1), 10, ks, vs)
    with pytest.raises(ValueError, match=r"\blam\b"):
        oracle_risk(-1.0, task)
    with pytest.raises(ValueError, match=r"\bkappa\b"):
        manifold_risk(1.5, 0.0, 0.3, task)
    with pytest.raises(ValueError, match=r"\bnu\b"):
        manifold_risk(0.5, nan, 0.3, task)
    with pytest.raises(ValueError, match=r"\bn\b"):
        task.sample(jax.random.key(1), 0, ks, vs)
    with pytest.raises(ValueError, match=r"\bkey\b"):
        task.sample(42, 5, ks, vs)
    with pytest.raises(ValueError, match=r"\bkey\b"):
        task.oracle_directions(np.zeros(3))
    with pytest.raises(ValueError, match=r"\bk\b"):
        erf_attention(X, 2 * ks, vs, 0.3)
    with pytest.raises(ValueError, match=r"\bk\b"):
        erf_attention(X, jnp.ones(5) / math.sqrt(5), vs, 0.3)
    with pytest.raises(ValueError, match=r"\blam\b"):
        erf_attention(X, ks, vs, -0.3)
    with pytest.raises(ValueError, match=r"\bX\b"):
        erf_attention(jnp.ones(4), ks, vs, 0.3)
    with pytest.raises(ValueError, match=r"\bX\b"):
        bayes_predictor(X[:, :2], ks, vs, task)
    with pytest.raises(ValueError, match=r"\bW\b"):
        linear_predictor(X, jnp.ones((2, 4)))
    with pytest.raises(ValueError, match=r"\bv_star\b"):
        best_linear_weights(task, 3 * vs)
    with pytest.raises(ValueError, match=r"\bn_samples\b"):
        monte_carlo_risk(lambda X: X[:, 0, 0], task, ks, vs, jax.random.key(0), n_samples=1)
    with pytest.raises(ValueError, match=r"\bpredict\b"):
        monte_carlo_risk(lambda X: X[:3, 0, 0], task, ks, vs, jax.random.key(0), n_samples=10)
    with pytest.raises(ValueError, match=r"\bpredict\b"):
        monte_carlo_risk(lambda X: X[:, 0, 0] * nan, task, ks, vs, jax.random.key(0), n_samples=10)


def test_slider_bad_inputs():
    with pytest.raises(ValueError, match=r"\bvalues\b"):
        Slider("lam", ())
    with pytest.raises(ValueError, match=r"\bvalues\b"):
        Slider("lam", (0.1, 0.1))
    with pytest.raises(ValueError, match=r"\bvalues\b"):
        Slider("lam", (0.1, nan))
    with pytest.raises(ValueError, match=r"\bdefault\b"):
        Slider("lam", (0.1, 0.2), default=0.3)
    with pytest.raises(ValueError, match=r"\bname\b"):
        Slider("not an identifier", (1, 2))
    with pytest.raises(ValueError, match=r"\bframes\b"):
        slider_figure(lambda a, b: None, Slider("a", tuple(range(30))), Slider("b", tuple(range(30))))
