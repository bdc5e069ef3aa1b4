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


@pytest.mark.parametrize("d", [0, 1])
def test_the_message_for_d_says_two(d):
    """d = 0 and d = 1 get the same message: d >= 2, and why (not "a positive integer (>= 1)")."""
    with pytest.raises(ValueError, match=r"^d must be a positive integer \(>= 2: k\* and v\* must be orthogonal"):
        SLRTask(d=d, L=3)


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


def test_population_risk_batch_shapes_must_broadcast(setup):
    """k of shape (3, d) against v of shape (4, d): a ValueError naming both and their batch shapes
    (JAX alone raises a TypeError about `mul`); shapes that broadcast give the broadcast shape."""
    task, ks, vs = setup
    k3, v4 = jnp.tile(ks, (3, 1)), jnp.tile(vs, (4, 1))
    with pytest.raises(ValueError, match=r"k \(3,\), v \(4,\), lam \(\) do not broadcast"):
        population_risk(k3, v4, ks, vs, 0.5, task)
    with pytest.raises(ValueError, match=r"k \(3,\), v \(\), lam \(2,\) do not broadcast"):
        population_risk(k3, vs, ks, vs, jnp.array([0.1, 0.2]), task)
    assert population_risk(k3[:, None], v4[None], ks, vs, 0.5, task).shape == (3, 4)
    assert population_risk(k3, vs, ks, vs, jnp.array([[0.1], [0.2]]), task).shape == (2, 3)


@pytest.mark.parametrize("shape", [(), (10, 3, 4), (10, 2, 2)])
def test_monte_carlo_risk_rejects_predictions_not_b_or_b_m(setup, shape):
    """A predictor returning X itself, (b, L, d), or a scalar, is refused with its shape named."""
    task, ks, vs = setup
    predict = lambda X: jnp.zeros(shape)  # noqa: E731
    with pytest.raises(ValueError, match=rf"predict must return an array of shape \(b,\) or \(b, m\).*got shape"):
        monte_carlo_risk(predict, task, ks, vs, jax.random.key(0), n_samples=10)
    est = monte_carlo_risk(lambda X: jnp.zeros((X.shape[0], 2)), task, ks, vs, jax.random.key(0), n_samples=10)
    assert np.shape(est.mean) == (2,)


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
    with pytest.raises(ValueError, match=r"^X must be finite"):  # was NaN, silently
        erf_attention(X.at[0, 0, 0].set(nan), ks, vs, 0.3)
    with pytest.raises(ValueError, match=r"^X must be finite"):
        bayes_predictor(X.at[1, 2, 3].set(inf), ks, vs, task)
    with pytest.raises(ValueError, match=r"X \(10,\), k \(3,\), v \(\) do not broadcast"):  # was an einsum error
        erf_attention(X, jnp.tile(ks, (3, 1)), vs, 0.3)
    with pytest.raises(ValueError, match=r"X \(\), k \(3,\), v \(4,\) do not broadcast"):  # was a TypeError
        erf_attention(X[0], jnp.tile(ks, (3, 1)), jnp.tile(vs, (4, 1)), 0.3)
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


def test_checked_runs_the_value_checks_under_jit(setup):
    """Under jax.jit the values are unknown and the checks skipped (the unwrapped function computes
    silently); wrapped by slrlib.checked, the compiled program raises at run time, naming the parameter."""
    import slrlib

    task, ks, vs = setup
    plain = jax.jit(oracle_risk, static_argnums=1)
    assert np.isfinite(float(plain(-0.5, task)))  # the documented gap: no check under tracing
    risk = slrlib.checked(oracle_risk)
    np.testing.assert_allclose(float(risk(0.3, task)), float(oracle_risk(0.3, task)), rtol=1e-12)
    # the library's ValueError, message first, as from an eager call (issue 42, point 4)
    for bad, expected in ((-0.5, r"^lam must be >= 0"), (nan, r"^lam must be finite")):
        with pytest.raises(ValueError, match=expected):
            risk(bad, task)
    pop = slrlib.checked(population_risk)
    np.testing.assert_allclose(float(pop(ks, vs, ks, vs, 0.3, task)), float(oracle_risk(0.3, task)), rtol=1e-12)
    with pytest.raises(ValueError, match=r"^k must have unit Euclidean norm"):
        pop(2 * ks, vs, ks, vs, 0.3, task)
    with pytest.raises(ValueError, match=r"^k_star must be orthogonal to v_star"):
        pop(ks, vs, ks, ks, 0.3, task)
    attend = slrlib.checked(jax.jit(erf_attention))  # a jitted function is unwrapped
    X, _, _ = task.sample(jax.random.key(1), 4, ks, vs)
    with pytest.raises(ValueError, match=r"^lam must be finite and >= 0"):
        attend(X, ks, vs, -1.0)
    # under vmap too
    batched = slrlib.checked(jax.vmap(oracle_risk, in_axes=(0, None)))
    np.testing.assert_allclose(np.asarray(batched(jnp.array([0.1, 0.3]), task)),
                               [float(oracle_risk(0.1, task)), float(oracle_risk(0.3, task))], rtol=1e-12)
    with pytest.raises(ValueError, match=r"^lam must be >= 0"):
        batched(jnp.array([0.1, -0.3]), task)
    # inside another transformation it cannot raise from outside the program: it says where it goes
    with pytest.raises(ValueError, match=r"must be the outermost transformation"):
        jax.jit(slrlib.checked(oracle_risk), static_argnums=1)(0.3, task)
    with pytest.raises(ValueError, match=r"^fn must be callable"):
        slrlib.checked(3)


def test_checked_and_plain_calls_share_traced_programs_in_either_order():
    """JAX caches traced programs by function and shapes, not by slrlib's state: the checks are in
    every traced program (checkify.debug_check, nothing when compiled plain), so a plain call after
    a checked one still computes, and a checked call after a plain one still checks, down to the
    checks of the library's inner compiled kernels (zeta's, inside oracle_risk's). Fresh processes,
    so that no other test has traced these programs first."""
    import subprocess
    import sys

    script = r"""
import sys, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
import slrlib
from slrlib import SLRTask, oracle_risk
task = SLRTask(d=20, L=5)
plain = jax.jit(oracle_risk, static_argnums=1)
risk = slrlib.checked(oracle_risk)
calls = [lambda: float(plain(0.3, task)), lambda: float(risk(0.3, task))]
for call in calls if sys.argv[1] == "plain-first" else calls[::-1]:
    call()
assert abs(float(plain(-0.5, task))) < 10  # plain: no check, a number
try:
    risk(-0.5, task)
except ValueError as err:
    assert str(err).startswith("lam must be >= 0"), err
else:
    raise AssertionError("checked computed with lam < 0")
print("ok")
"""
    for order in ("plain-first", "checked-first"):
        proc = subprocess.run([sys.executable, "-c", script, order], capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stdout.strip() == "ok", (order, proc.stderr[-2000:])
