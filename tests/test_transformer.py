"""The Transformer layer (29) of Appendix E.3 and its SGD training (slrlib.training.transformer).

* the fast register path against row 0 of the full layer, in float64 (several head layouts);
* exact permutation equivariance of the layer;
* gradients through the fast path against gradients through the full layer, and the
  training loop's parameters against a step-by-step replay with ``jax.grad`` of the batch loss;
* the initialisation's laws (zero matrix → uniform attention; variances within 5 standard errors);
* the structure of the W_Q updates (always along LN(x_reg)): with the query side at zero,
  W_Q stays exactly rank one;
* short training runs beat the zero predictor by a wide margin (one and two locations);
* the read-out of the weights (k-hat, u, v-hat, gates) against independent computations;
* the float32 sampler against the task's law; bad input; determinism.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from slrlib import MultiLocationTask, SLRTask
from slrlib.training import transformer as T
from slrlib.experiments import transformer as TX

# Their tests share costly fixtures: `make test` keeps them on one pytest-xdist worker, and the
# fixtures are session-scoped, so that tests of other modules run between them do not tear them down.
pytestmark = pytest.mark.xdist_group("test_transformer")

SINGLE = T.TransformerConfig(
    name="test-single", title="test", task=SLRTask(16, 4, eps=0.1), n_heads=1, r=16, m=32, alpha=2e-2,
    batch_size=64, test_size=500, n_steps=300, log_every=50, n_runs=4)
MULTI = T.TransformerConfig(
    name="test-multi", title="test", task=MultiLocationTask(16, 4, M=2, eps=0.1), n_heads=2, r=8, m=32, alpha=4e-2,
    batch_size=64, test_size=500, n_steps=300, log_every=50, n_runs=4)


@pytest.fixture(scope="session")
def single_result():
    return T.train_transformer(SINGLE, jax.random.key(0))


@pytest.fixture(scope="session")
def multi_result():
    return T.train_transformer(MULTI, jax.random.key(0))


def random_params(seed, d, H, r, m, dtype=np.float64):
    """Generic parameters (no zero matrix, non-zero biases), float64 by default (NumPy RNG)."""
    shapes = {"x_reg": (d,), "W_Q": (H, r, d), "W_K": (H, r, d), "W_V": (H, d, r), "W_O": (H * r, d),
              "W_1": (m, d), "b_1": (m,), "W_2": (d, m), "b_2": (d,), "theta": (d,)}
    rng = np.random.default_rng(seed)
    return {n: jnp.asarray(rng.normal(size=s) / math.sqrt(s[-1]), dtype) for n, s in shapes.items()}


def tokens(seed, shape, dtype=np.float64):
    return jnp.asarray(np.random.default_rng(seed).normal(size=shape), dtype)


# ---------------------------------------------------------------------- the layer
def test_output_shapes():
    d, H, r, m, L = 6, 2, 3, 5, 4
    p = random_params(1, d, H, r, m)
    X = tokens(2, (2, 3, L, d))
    assert T.transformer_layer(p, X).shape == (2, 3, L + 1, d)
    assert T.register_output(p, X).shape == (2, 3, d)
    assert T.predict(p, X).shape == (2, 3)
    A = T.attention_weights(p, X)
    assert A.shape == (2, 3, H, L + 1, L + 1)
    np.testing.assert_allclose(A.sum(-1), 1.0, rtol=1e-12)


@pytest.mark.roundoff
@pytest.mark.parametrize("d,H,r,m", [(6, 1, 6, 5), (6, 3, 2, 7), (5, 2, 4, 3)])
def test_fast_register_path_is_row_zero_of_the_layer(d, H, r, m):
    p = random_params(3, d, H, r, m)
    p = {**p, "W_Q": 3 * p["W_Q"], "W_K": 3 * p["W_K"]}  # sharp attention, far from uniform
    X = tokens(4, (7, 5, d))
    full = T.transformer_layer(p, X)
    np.testing.assert_allclose(T.register_output(p, X), full[:, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(T.predict(p, X), full[:, 0] @ p["theta"], rtol=1e-12, atol=1e-12)
    # The register's attention row is far from uniform, so the check is not trivial.
    assert float(jnp.max(T.attention_weights(p, X)[..., 0, :])) > 0.5


def test_permutation_equivariance():
    d, H, r, m, L = 6, 2, 3, 5, 6
    p = random_params(5, d, H, r, m)
    X = tokens(6, (3, L, d))
    perm = np.array([3, 0, 5, 1, 4, 2])
    full, full_p = T.transformer_layer(p, X), T.transformer_layer(p, X[:, perm])
    np.testing.assert_allclose(full_p[:, 1:], full[:, 1:][:, perm], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(full_p[:, 0], full[:, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(T.predict(p, X[:, perm]), T.predict(p, X), rtol=1e-12, atol=1e-12)
    # ... while the rows themselves do change under the permutation
    assert float(jnp.max(jnp.abs(full_p[:, 1:] - full[:, 1:]))) > 0.1


@pytest.mark.roundoff
def test_layer_matches_a_direct_transcription():
    """Eq. (29) written out with explicit loops over heads and tokens (one sequence)."""
    d, H, r, m, L = 5, 2, 3, 4, 3
    p = {k: np.asarray(v) for k, v in random_params(7, d, H, r, m).items()}
    X = np.asarray(tokens(8, (L, d)))
    Xt = np.vstack([p["x_reg"], X])
    N = np.array([(x - x.mean()) / (x.std() + 1e-5) for x in Xt])
    outs = []
    for h in range(H):
        S = N @ p["W_Q"][h].T @ p["W_K"][h] @ N.T / np.sqrt(r)
        A = np.exp(S - S.max(1, keepdims=True))
        A /= A.sum(1, keepdims=True)
        outs.append(A @ N @ p["W_V"][h])
    Z = Xt + np.hstack(outs) @ p["W_O"]
    out = np.array([z + p["W_2"] @ np.maximum(p["W_1"] @ z + p["b_1"], 0) + p["b_2"] for z in Z])
    np.testing.assert_allclose(T.transformer_layer(p, X), out, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------- gradients and the loop
@pytest.mark.roundoff
def test_gradient_of_fast_path_equals_gradient_of_full_layer():
    d, H, r, m, L, B = 6, 2, 3, 5, 4, 9
    p = random_params(9, d, H, r, m)
    X, y = tokens(10, (B, L, d)), tokens(11, (B,))

    def full_loss(p):
        return jnp.mean((T.transformer_layer(p, X)[:, 0] @ p["theta"] - y) ** 2)

    g_fast = jax.jit(jax.grad(lambda p: T.batch_loss(p, X, y)))(p)
    g_full = jax.jit(jax.grad(full_loss))(p)
    for name in T.PARAM_NAMES:
        np.testing.assert_allclose(g_fast[name], g_full[name], rtol=1e-9, atol=1e-12, err_msg=name)
    # Sanity: the gradients are not all zero (the comparison is informative).
    assert float(jnp.linalg.norm(g_full["W_K"])) > 1e-3


def test_optax_sgd_update_is_minus_alpha_gradient():
    p = random_params(12, 6, 1, 6, 5, dtype=np.float32)
    X, y = tokens(13, (8, 4, 6), np.float32), tokens(14, (8,), np.float32)
    names = T.trainable_names(1)
    g = jax.jit(jax.grad(lambda p: T.batch_loss(p, X, y)))(p)
    g_tr = {n: g[n] for n in names}
    opt = optax.sgd(0.03)
    updates, _ = opt.update(g_tr, opt.init(g_tr))
    for n in names:
        np.testing.assert_allclose(updates[n], -0.03 * g[n], rtol=1e-6)
    assert set(names) == set(T.PARAM_NAMES) - {"x_reg", "W_O"}
    assert set(T.trainable_names(2)) == set(T.PARAM_NAMES) - {"x_reg"}


def test_training_loop_replays_with_jax_grad(single_result):
    _, p = T.replay_run(SINGLE, jax.random.key(0))
    for name in T.PARAM_NAMES:
        np.testing.assert_allclose(single_result.params[name][0], p[name], rtol=2e-3, atol=2e-5, err_msg=name)
    moved = np.linalg.norm(single_result.params["W_K"][0])
    assert moved > 0.1  # W_K started at 0: the loop did train


# ---------------------------------------------------------------------- initialisation
def _check_normal(x, var, name):
    x = np.asarray(x, dtype=float).ravel()
    n = x.size
    assert abs(x.mean()) < 5 * math.sqrt(var / n), name
    assert abs(x.var() - var) < 5 * var * math.sqrt(2 / n), (name, x.var(), var)


def test_initialisation_laws():
    d, m, L = 80, 200, 10
    keys = jax.random.split(jax.random.key(15), 20)

    def draw(H, r, zero):
        ps = [T.init_params(k, d, n_heads=H, r=r, m=m, zero_init=zero) for k in keys]
        return {n: np.stack([p[n] for p in ps]) for n in T.PARAM_NAMES}

    single = draw(1, d, "key")
    _check_normal(single["x_reg"], 1 / d, "x_reg")
    _check_normal(single["W_Q"], 2 / (2 * d), "W_Q")
    _check_normal(single["W_V"], 1 / d, "W_V single head")
    _check_normal(single["W_1"], 2 / (m + d), "W_1")
    _check_normal(single["W_2"], 2 / (m + d), "W_2")
    _check_normal(single["theta"], 1 / d**2, "theta")
    assert np.all(single["W_K"] == 0) and np.all(single["b_1"] == 0) and np.all(single["b_2"] == 0)
    np.testing.assert_array_equal(single["W_O"][0], np.eye(d))
    assert single["W_Q"].dtype == np.float32
    # independent blocks: no correlation between the parameters cut from one draw
    assert abs(np.corrcoef(single["W_1"].ravel(), single["W_2"].ravel())[0, 1]) < 5 / math.sqrt(single["W_1"].size)

    H, r = 2, 40
    multi = draw(H, r, "key")
    _check_normal(multi["W_Q"], 2 / (r + d), "W_Q multi")
    _check_normal(multi["W_V"], 2 / (r + d), "W_V multi")
    _check_normal(multi["W_O"], 1 / d, "W_O multi")
    query = draw(H, r, "query")
    assert np.all(query["W_Q"] == 0)
    _check_normal(query["W_K"], 2 / (r + d), "W_K (zero_init='query')")

    # A zero attention matrix gives zero scores: every row of every head is uniform.
    for zero in ("key", "query"):
        p = T.init_params(jax.random.key(16), d, n_heads=H, r=r, m=m, zero_init=zero)
        X = tokens(17, (5, L, d), np.float32) * 3
        np.testing.assert_allclose(T.attention_weights(p, X), 1 / (L + 1), rtol=1e-6)


# ---------------------------------------------------------------------- structure of W_Q
def test_query_gradient_lies_along_the_register():
    """Only the register's query reaches the output: grad_{W_Q,h} = a_h LN(x_reg)^T (full layer)."""
    d, H, r, m, L = 6, 2, 3, 5, 4
    p = random_params(18, d, H, r, m)
    X, y = tokens(19, (9, L, d)), tokens(20, (9,))
    g = jax.jit(jax.grad(lambda p: jnp.mean((T.transformer_layer(p, X)[:, 0] @ p["theta"] - y) ** 2)))(p)["W_Q"]
    n = T.layer_norm(p["x_reg"])
    off = g - (g @ n)[..., None] * n / (n @ n)
    assert float(jnp.linalg.norm(g)) > 1e-3
    assert float(jnp.linalg.norm(off)) < 1e-12 * float(jnp.linalg.norm(g)) + 1e-15


def test_query_updates_stay_rank_one(single_result):
    # zero_init="key" (the default): W_Q,T - W_Q,0 = a LN(x_reg)^T (every update is along it)
    p0, p = ({k: v[0] for k, v in single_result.initial_params.items()},
             {k: v[0] for k, v in single_result.params.items()})
    n = np.asarray(T.layer_norm(p["x_reg"]), dtype=float)
    delta = np.asarray(p["W_Q"] - p0["W_Q"], dtype=float)[0]
    off = delta - np.outer(delta @ n, n) / (n @ n)
    assert np.linalg.norm(delta) > 1e-3
    assert np.linalg.norm(off) < 1e-4 * np.linalg.norm(delta)
    # In float64 the structure is exact (the finite s1/s2 of the float32 loop is rounding):
    # with W_K,0 = 0, W_K,t = q_0 g_t^T (q_0 = W_Q,0 LN(x_reg)) and W_Q,t - W_Q,0 = b_t q_0 LN(x_reg)^T.
    p0, p = T.replay_run(SINGLE, jax.random.key(0), 150, dtype=jnp.float64)
    n = np.asarray(T.layer_norm(p["x_reg"]))
    q0 = np.asarray(p0["W_Q"][0]) @ n
    W_K = np.asarray(p["W_K"][0])
    assert np.linalg.norm(W_K) > 0.1
    assert np.linalg.norm(W_K - np.outer(q0, q0 @ W_K) / (q0 @ q0)) < 1e-12 * np.linalg.norm(W_K)
    dQ = np.asarray(p["W_Q"][0] - p0["W_Q"][0])
    b = q0 @ dQ @ n / ((q0 @ q0) * (n @ n))
    assert np.linalg.norm(dQ - b * np.outer(q0, n)) < 1e-10 * np.linalg.norm(dQ)
    s = np.linalg.svd(np.asarray(T.key_directions(p)[0][0]), compute_uv=False)
    assert s[1] < 1e-12 * s[0]
    # zero_init="query" (the paper's wording): W_Q = a LN(x_reg)^T exactly, so P = W_Q^T W_K too.
    _, p = T.replay_run(SINGLE, jax.random.key(0), 150, dtype=jnp.float64, zero_init="query")
    W_Q = np.asarray(p["W_Q"][0])
    _, s, Vt = np.linalg.svd(W_Q)
    assert s[0] > 1e-2 and s[1] < 1e-12 * s[0]
    np.testing.assert_allclose(abs(Vt[0] @ n) / np.linalg.norm(n), 1.0, rtol=1e-12)


# ---------------------------------------------------------------------- training
def test_single_head_training_beats_the_zero_predictor(single_result):
    null = SINGLE.null_risk  # gamma^2 + eps^2
    final = single_result.excess_risk[:, -1] + SINGLE.eps**2
    initial = single_result.excess_risk[:, 0] + SINGLE.eps**2
    # At initialisation the prediction does not depend on the relevant token: no better than zero.
    assert np.all(initial > 0.9 * null), initial / null
    assert np.all(final < 0.5 * null), final / null  # measured: 0.11 to 0.19 of the null risk
    # The weights encode k*: the top singular direction of W_Q^T W_K, and u, align with it.
    assert np.all(single_result.kappa[:, -1, 0, 0] > 0.8)
    assert np.all(single_result.kappa_u[:, -1, 0, 0] > 0.8)  # signed: attention goes to the relevant token
    assert np.all(np.isnan(single_result.kappa[:, 0])) and np.all(np.isnan(single_result.ratio[:, 0]))


def test_multi_head_training_beats_the_zero_predictor(multi_result):
    null = MULTI.null_risk  # M gamma^2 + eps^2
    final = multi_result.excess_risk[:, -1] + MULTI.eps**2
    assert np.all(final < 0.5 * null), final / null  # measured: 0.20 to 0.27 of the null risk
    assert multi_result.kappa.shape == (4, MULTI.n_logs, 2, 2)


def test_determinism(single_result):
    again = T.train_transformer(SINGLE, jax.random.key(0))
    for name in ("excess_risk", "kappa", "nu", "nu_gated", "ratio"):
        np.testing.assert_array_equal(getattr(again, name), getattr(single_result, name))
    np.testing.assert_array_equal(again.params["W_K"], single_result.params["W_K"])
    other = T.train_transformer(SINGLE, jax.random.key(1))
    assert not np.allclose(other.excess_risk, single_result.excess_risk)


# ---------------------------------------------------------------------- reading the weights
def test_top_singular_vector_of_a_rank_one_matrix():
    a = np.array([1.0, -2.0, 0.5, 3.0])
    b = np.array([0.3, 0.0, -1.2, 0.7])
    k_hat, s1, s2 = T.top_singular(jnp.outer(a, b))
    np.testing.assert_allclose(abs(float(k_hat @ b)) / np.linalg.norm(b), 1.0, rtol=1e-12)
    np.testing.assert_allclose(s1, np.linalg.norm(a) * np.linalg.norm(b), rtol=1e-12)
    assert float(s2) < 1e-12
    # rank two with known singular values
    U = np.linalg.qr(np.random.default_rng(0).normal(size=(4, 4)))[0]
    Vm = np.linalg.qr(np.random.default_rng(1).normal(size=(4, 4)))[0]
    k_hat, s1, s2 = T.top_singular(U[:, :2] @ np.diag([5.0, 2.0]) @ Vm[:, :2].T)
    np.testing.assert_allclose([s1, s2], [5.0, 2.0], rtol=1e-12)
    np.testing.assert_allclose(abs(float(k_hat @ Vm[:, 0])), 1.0, rtol=1e-12)


@pytest.mark.roundoff
def test_effective_key_direction_gives_the_register_scores():
    d, H, r, m, L = 6, 2, 3, 5, 4
    p = random_params(21, d, H, r, m)
    X = tokens(22, (L, d))
    P, u = T.key_directions(p)
    np.testing.assert_allclose(P, np.einsum("hrd,hre->hde", p["W_Q"], p["W_K"]), rtol=1e-12)
    N = T.layer_norm(jnp.vstack([p["x_reg"], X]))
    expected = jax.nn.softmax(N @ u.T / math.sqrt(r), axis=0).T  # (H, L+1)
    np.testing.assert_allclose(T.attention_weights(p, X)[:, 0, :], expected, rtol=1e-12)


@pytest.mark.roundoff
def test_gated_value_direction_is_the_average_jacobian():
    d, H, r, m = 6, 2, 3, 5
    p = random_params(23, d, H, r, m)
    X = tokens(24, (40, 4, d))
    gates = T.mlp_gates(p, X)
    assert 0 < float(gates.min()) or float(gates.max()) < 1  # some units switch across the batch
    z = T._register_z(p, X)
    jac = jax.jit(jax.vmap(jax.grad(lambda z: T._mlp(p, z) @ p["theta"])))(z).mean(0)  # average d f / d z
    W_O = p["W_O"].reshape(H, r, d)
    expected = np.einsum("hdr,hre,e->hd", p["W_V"], W_O, jac)
    np.testing.assert_allclose(T.value_directions(p, gates), expected, rtol=1e-10)
    linear = np.einsum("hdr,hre,e->hd", p["W_V"], W_O, p["theta"] + p["W_1"].T @ (p["W_2"].T @ p["theta"]))
    np.testing.assert_allclose(T.value_directions(p), linear, rtol=1e-10)
    np.testing.assert_allclose(T.value_directions(p, jnp.ones(m)), linear, rtol=1e-10)


def test_alignments_of_planted_directions():
    """A hand-built single-head layer whose P and v-hat are planted along k*, v*."""
    d, m = 8, 3
    task = SLRTask(d, 3)
    k, v = task.oracle_directions(jax.random.key(25))
    p = random_params(26, d, 1, d, m)
    n = T.layer_norm(p["x_reg"])
    W_Q = jnp.outer(jnp.arange(1.0, d + 1), n)[None]  # q = W_Q n
    q = W_Q[0] @ n
    p = {**p, "W_Q": W_Q, "W_K": (jnp.outer(q, k) / (q @ q))[None], "W_O": jnp.eye(d), "W_1": jnp.zeros((m, d)),
         "theta": v, "W_V": jnp.eye(d)[None]}
    a = T.alignments(p, k, v)
    np.testing.assert_allclose(a["kappa"], [[1.0]], rtol=1e-12)
    np.testing.assert_allclose(a["kappa_u"], [[1.0]], rtol=1e-12)
    np.testing.assert_allclose(a["nu"], [[1.0]], rtol=1e-12)
    assert float(a["ratio"][0]) > 1e12


def test_matched_alignments(multi_result):
    matched = TX.matched_alignments(multi_result)
    head = matched["head"]
    assert head.shape == (4, 2) and np.all(np.sort(head, axis=1) == [0, 1])
    for i in range(4):
        for loc in range(2):
            np.testing.assert_array_equal(matched["kappa"][i, :, loc], multi_result.kappa[i, :, head[i, loc]])
    # Matching by head 1's larger |kappa| (the authors' rule)
    last = multi_result.kappa[:, -1]
    first_loc = np.argmax(last[:, 0], axis=1)
    np.testing.assert_array_equal(head[np.arange(4), first_loc], 0)


# ---------------------------------------------------------------------- sampler
def test_sampler_has_the_task_law():
    task = SLRTask(6, 4, gamma=0.8, eps=0.3)
    k, v = task.oracle_directions(jax.random.key(27))
    n = 20_000
    X, y, J = (np.asarray(a, dtype=float) for a in T.sample_batch(jax.random.key(28), n, task, k, v))
    J = J[:, 0].astype(int)
    X_rel = X[np.arange(n), J]
    res = y - X_rel @ np.asarray(v)
    _check_normal(res, 0.3**2, "noise")
    along = X_rel @ np.asarray(k) - math.sqrt(3.0)
    _check_normal(along, 0.8**2, "relevant token along k*")
    mask = np.ones((n, 4), bool)
    mask[np.arange(n), J] = False
    _check_normal(X[mask][:, 0], 1.0, "other tokens")
    counts = np.bincount(J, minlength=4)
    assert np.all(np.abs(counts - n / 4) < 5 * math.sqrt(n * 0.25 * 0.75))
    assert X.dtype == float and T.sample_batch(jax.random.key(0), 2, task, k, v)[0].dtype == jnp.float32

    mtask = MultiLocationTask(6, 4, M=2, eps=0.2)
    K, V = mtask.oracle_directions(jax.random.key(29))
    X, y, J = (np.asarray(a, dtype=float) for a in T.sample_batch(jax.random.key(30), n, mtask, K, V))
    J = J.astype(int)
    assert np.all(J[:, 0] != J[:, 1])
    pred = sum(X[np.arange(n), J[:, j]] @ np.asarray(V[j]) for j in range(2))
    _check_normal(y - pred, 0.2**2, "noise (two locations)")


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "changes,match",
    [
        ({"alpha": -0.1}, "alpha"),
        ({"alpha": 0.0}, "alpha"),
        ({"batch_size": 0}, "batch_size"),
        ({"test_size": 0}, "test_size"),
        ({"n_runs": 0}, "n_runs"),
        ({"n_steps": 2.5}, "n_steps"),
        ({"r": 8}, "r must equal d"),
        ({"n_heads": 0}, "n_heads"),
        ({"log_every": 7}, "log_every"),
        ({"zero_init": "value"}, "zero_init"),
        ({"task": "SLR"}, "task"),
        ({"task": None}, "task"),
    ],
)
def test_bad_config(changes, match):
    with pytest.raises(ValueError, match=match):
        SINGLE.replace(**changes)


def test_bad_input():
    p = T.init_params(jax.random.key(0), 6, m=4)
    X = jnp.zeros((3, 4, 6))
    with pytest.raises(ValueError, match="X"):
        T.predict(p, jnp.zeros((3, 4, 5)))
    with pytest.raises(ValueError, match="X"):
        T.transformer_layer(p, jnp.zeros((6,)))
    with pytest.raises(ValueError, match="X"):
        T.predict(p, X.at[0, 0, 0].set(jnp.nan))
    with pytest.raises(ValueError, match="params"):
        T.predict({k: v for k, v in p.items() if k != "W_K"}, X)
    with pytest.raises(ValueError, match="params\\['W_V'\\]"):
        T.predict({**p, "W_V": jnp.zeros((1, 5, 6))}, X)
    with pytest.raises(ValueError, match="y"):
        T.batch_loss(p, X, jnp.zeros(4))
    with pytest.raises(ValueError, match="r must equal d"):
        T.init_params(jax.random.key(0), 6, r=3)
    with pytest.raises(ValueError, match="zero_init"):
        T.init_params(jax.random.key(0), 6, zero_init="both")
    with pytest.raises(ValueError, match="key"):
        T.init_params(0, 6)
    with pytest.raises(ValueError, match="name must be one of"):
        TX.run_transformer_experiment("fig9")
    with pytest.raises(ValueError, match="name_or_config"):
        TX.run_transformer_experiment(3)
    with pytest.raises(ValueError, match="n_runs"):
        TX.run_transformer_experiment("fig8", n_runs=0)
    with pytest.raises(ValueError, match="seed"):
        TX.run_transformer_experiment("fig8", n_runs=1, seed=-1)
    with pytest.raises(ValueError, match="task"):
        T.sample_batch(jax.random.key(0), 3, "task", jnp.zeros(6), jnp.zeros(6))
    task = SLRTask(6, 4)
    with pytest.raises(ValueError, match="k_star"):
        T.sample_batch(jax.random.key(0), 3, task, jnp.ones(6), jnp.ones(6))


def test_configurations_are_the_authors():
    c8, c10 = TX.TRANSFORMER_CONFIGS["fig8"], TX.TRANSFORMER_CONFIGS["fig10"]
    assert (c8.d, c8.L, c8.eps, c8.n_heads, c8.r, c8.m, c8.alpha, c8.batch_size, c8.test_size,
            c8.n_steps, c8.log_every, c8.n_runs) == (80, 10, 0.1, 1, 80, 200, 1e-2, 128, 1000, 8000, 100, 20)
    assert (c10.d, c10.L, c10.M, c10.eps, c10.n_heads, c10.r, c10.m, c10.alpha, c10.n_steps,
            c10.n_runs) == (80, 10, 2, 0.1, 2, 40, 200, 2e-2, 10_000, 10)
    assert isinstance(c10.task, MultiLocationTask) and isinstance(c8.task, SLRTask)
    assert c8.replace(n_runs=3).n_runs == 3 and c8.n_runs == 20


# ---------------------------------------------------------------------- figures
def test_figures_are_registered_and_draw(single_result, multi_result):
    import slrlib.figures.transformer  # noqa: F401  (registers fig8, fig10)
    from slrlib import figures
    from slrlib.plots.transformer import plot_fig8, plot_fig10

    assert figures.get("fig8").chapter == 10 and figures.get("fig10").chapter == 11
    fig = plot_fig8(single_result)
    assert len(fig.axes) == 4  # three panels and the legends' place of the 2 x 2 grid
    fig = plot_fig10(multi_result)
    assert len(fig.axes) == 4
    table = TX.transformer_table(single_result)
    assert len({v.size for v in table.values()}) == 1
    assert table["run"].size == 4 * SINGLE.n_logs
    table = TX.matched_table(multi_result)
    assert len({v.size for v in table.values()}) == 1 and "kappa_2" in table


def test_result_holds_numpy_arrays(single_result):
    """ARCHITECTURE.md, "Return types": a driver's record holds NumPy arrays, its dicts included."""
    arrays = [v for k, v in single_result._asdict().items() if k not in ("config", "seconds")]
    arrays = [a for v in arrays for a in (v.values() if isinstance(v, dict) else [v])]
    assert arrays and all(isinstance(a, np.ndarray) for a in arrays)
