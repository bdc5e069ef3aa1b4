"""Random-walk prediction on a circle (chapter 13; talk, Shi & Cao): `slrlib.case_studies.token_selection.random_walk`.

* Sampler: every step is +-1 mod K, the frequency of +1 is p and s_1 is uniform (within
  Z_TOL Monte Carlo standard errors), p in {0, 1} gives the enumerated population, and at
  N = rK + 1 every node is visited exactly r times among s_1..s_{N-1}.
* Model: the literal H-based transcription and the fast state-based path against a NumPy
  transcription; the loss gradient against central finite differences of the NumPy loss;
  60 steps of `train` from a random initialisation against gradient descent computed from
  the literal model.
* The zero-initialisation ridge (p = 1 or 0, N = rK + 1): V(t) = c 11^T to round-off, equal
  attention on positions 1..N-1, accuracy exactly 1/K, at every step, for the log loss at two
  step sizes, the square loss and p = 0; the first step against its closed form; the
  cross-entropy leaves zero fixed. From a random initialisation the same training leaves it.
* A short run at p = 1/2 reaches accuracy >= 0.45 (Bayes 0.5) with attention on the parent.
* Prediction ties, the cosine, exact accuracy of the ideal parameters; bad input.
"""

from dataclasses import replace
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from slrlib.case_studies.token_selection import random_walk as RW

Z_TOL = 4.5


# ----------------------------------------------------------------------------- references


def np_transition(K, p):
    P = np.zeros((K, K))
    for s in range(K):
        P[s, (s + 1) % K] += p
        P[s, (s - 1) % K] += 1 - p
    return P


def np_embed(states, K):
    """H, X for one walk, column by column as in the talk."""
    N = len(states)
    H = np.zeros((K + N, N))
    for i in range(N - 1):
        H[states[i], i] = 1.0
    for i in range(N):
        H[K + i, i] = 1.0
    return H, H[:K]


def np_model(states, V, W, K):
    """f = V X softmax(H^T W h_N) and the attention, one walk at a time."""
    fs, atts = [], []
    for walk in np.asarray(states):
        H, X = np_embed(walk, K)
        z = H.T @ W @ H[:, -1]
        a = np.exp(z - z.max())
        a /= a.sum()
        fs.append(V @ X @ a)
        atts.append(a)
    return np.array(fs), np.array(atts)


def np_loss(states, V, W, K, loss, eps):
    f, _ = np_model(states, V, W, K)
    y = np.asarray(states)[:, -1]
    fy = f[np.arange(len(y)), y]
    if loss == "log":
        return np.mean(-np.log(fy + eps))
    if loss == "cross_entropy":
        m = f.max(axis=1)
        return np.mean(m + np.log(np.exp(f - m[:, None]).sum(axis=1)) - fy)
    return np.mean(0.5 * np.sum((f - np.eye(K)[y]) ** 2, axis=1))


def random_params(seed, K, N, scale=0.5):
    rng = np.random.default_rng(seed)
    return scale * rng.standard_normal((K, K)) + 0.5, scale * rng.standard_normal((K + N, K + N))


# ----------------------------------------------------------------------------- sampler


@pytest.mark.parametrize("K,p", [(5, 0.3), (3, 0.8)])
def test_sampler_steps_frequency_and_start(K, p):
    n, N = 4000, 40
    s = np.asarray(RW.sample(jax.random.key(K), n, K, N, p))
    assert s.shape == (n, N) and np.issubdtype(s.dtype, np.integer)
    assert s.min() >= 0 and s.max() < K
    d = np.mod(np.diff(s, axis=1), K)
    assert np.all((d == 1) | (d == K - 1))  # every step is +-1 mod K
    m = d.size
    freq = np.mean(d == 1)
    assert abs(freq - p) <= Z_TOL * np.sqrt(p * (1 - p) / m)
    counts = np.bincount(s[:, 0], minlength=K)  # s_1 uniform
    assert np.all(np.abs(counts / n - 1 / K) <= Z_TOL * np.sqrt((1 / K) * (1 - 1 / K) / n))
    # The chain: from any state the next state is the clockwise neighbour with probability p.
    nxt = np.zeros((K, K))
    np.add.at(nxt, (s[:, :-1].ravel(), s[:, 1:].ravel()), 1)
    emp = nxt / nxt.sum(axis=1, keepdims=True)
    assert np.max(np.abs(emp - np_transition(K, p))) <= Z_TOL * np.sqrt(0.25 / nxt.sum(axis=1).min())


def test_sampler_is_deterministic_in_the_key_and_extreme_p():
    a = RW.sample(jax.random.key(3), 30, 6, 10, 0.4)
    assert np.array_equal(a, RW.sample(jax.random.key(3), 30, 6, 10, 0.4))
    assert not np.array_equal(a, RW.sample(jax.random.key(4), 30, 6, 10, 0.4))
    for p, step in ((1.0, 1), (0.0, -1)):
        s = np.asarray(RW.sample(jax.random.key(0), 30, 6, 10, p))
        assert np.array_equal(np.mod(np.diff(s, axis=1), 6), np.full((30, 9), step % 6))
        pop = np.asarray(RW.deterministic_walks(6, 10, p))
        assert set(map(tuple, s)) <= set(map(tuple, pop))
        assert np.array_equal(pop[:, 0], np.arange(6))
        assert np.array_equal(np.mod(np.diff(pop, axis=1), 6), np.full((6, 9), step % 6))


@pytest.mark.parametrize("K,r", [(5, 4), (4, 1), (3, 3)])
def test_every_node_visited_r_times_and_label_is_start(K, r):
    N = r * K + 1
    for p in (0.0, 1.0):
        pop = np.asarray(RW.deterministic_walks(K, N, p))
        for walk in pop:
            assert np.array_equal(np.bincount(walk[:-1], minlength=K), np.full(K, r))
            assert walk[-1] == walk[0]  # y = s_N = s_1 + rK


def test_transition_matrix_and_bayes():
    for K, p in ((3, 0.2), (6, 0.5), (9, 1.0)):
        assert np.allclose(RW.transition_matrix(K, p), np_transition(K, p), atol=0)
        assert np.allclose(np.asarray(RW.transition_matrix(K, p)).sum(axis=1), 1.0)
    assert RW.bayes_accuracy(0.3) == 0.7 and RW.bayes_accuracy(0.5) == 0.5 and RW.bayes_accuracy(1.0) == 1.0


# ----------------------------------------------------------------------------- model


def test_embed_structure():
    s = RW.sample(jax.random.key(1), 7, 5, 9, 0.6)
    H, X, y = RW.embed(s, 5)
    assert H.shape == (7, 14, 9) and X.shape == (7, 5, 9)
    for m in range(7):
        Href, Xref = np_embed(np.asarray(s[m]), 5)
        assert np.array_equal(H[m], Href) and np.array_equal(X[m], Xref)
    assert np.array_equal(y, s[:, -1])
    assert np.all(np.asarray(H)[:, :5, -1] == 0)  # the query column carries no state


def test_model_against_numpy():
    K, N, p = 4, 6, 0.7
    s = RW.sample(jax.random.key(2), 12, K, N, p)
    V, W = random_params(0, K, N)
    f_ref, a_ref = np_model(s, V, W, K)
    H, _, _ = RW.embed(s, K)
    assert np.allclose(RW.model(H, V, W), f_ref, rtol=1e-12, atol=1e-12)
    assert np.allclose(RW.attention(H, W), a_ref, rtol=1e-12, atol=1e-14)
    assert np.allclose(RW.model_from_states(s, V, W, K), f_ref, rtol=1e-12, atol=1e-12)
    assert np.allclose(RW.attention_from_states(s, W, K), a_ref, rtol=1e-12, atol=1e-14)
    # Only the last column of W acts (h_N = e_{K+N}).
    W2 = np.array(W)
    W2[:, :-1] = np.random.default_rng(1).standard_normal((K + N, K + N - 1))
    assert np.allclose(RW.model(H, V, W2), f_ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("loss,eps", [("log", 0.3), ("cross_entropy", 1.0), ("square", 1.0)])
def test_loss_gradient_against_finite_differences(loss, eps):
    K, N = 4, 6
    s = RW.sample(jax.random.key(5), 12, K, N, 0.7)
    V, W = random_params(3, K, N, scale=0.2)
    assert np.isclose(RW.empirical_loss(s, V, W, K, loss, eps), np_loss(s, V, W, K, loss, eps), rtol=1e-12)
    grad = jax.jit(jax.grad(RW.empirical_loss, argnums=(1, 2)), static_argnums=(3, 4, 5))
    gV, gW = grad(s, jnp.asarray(V), jnp.asarray(W), K, loss, eps)
    rng = np.random.default_rng(7)
    h = 1e-5
    for _ in range(3):
        dV, dW = rng.standard_normal(V.shape), rng.standard_normal(W.shape)
        up = np_loss(s, V + h * dV, W + h * dW, K, loss, eps)
        fd = (up - np_loss(s, V - h * dV, W - h * dW, K, loss, eps)) / (2 * h)
        assert np.isclose(float(np.sum(gV * dV) + np.sum(gW * dW)), fd, rtol=1e-7, atol=1e-9)


def test_train_is_gradient_descent_on_the_literal_model():
    """60 steps of `train` (exact population, p = 1, K = 5, N = 21, random initialisation, so
    off the ridge) against gradient descent written here with jax.grad of the H-based model."""
    K, N, lr, eps, T = 5, 21, 3.0, 0.5, 60
    cfg = RW.RandomWalkConfig(K=K, N=N, p=1.0, steps=T, lr=lr, eps=eps, init_scale=0.1)
    r = RW.train(cfg, jax.random.key(4))
    H, _, y = RW.embed(RW.deterministic_walks(K, N, 1.0), K)

    def L(V, W):
        f = RW.model(H, V, W)
        return -jnp.mean(jnp.log(f[jnp.arange(K), y] + eps))

    @jax.jit
    def gd_step(V, W):
        value, (gV, gW) = jax.value_and_grad(L, argnums=(0, 1))(V, W)
        return V - lr * gV, W - lr * gW, value

    V, W = RW.init_params(cfg, jax.random.key(4))
    assert np.std(np.asarray(V)) > 0.05
    W_start = np.asarray(W)
    losses = []
    for _ in range(T):
        V, W, value = gd_step(V, W)
        losses.append(float(value))
    assert np.allclose(r.V, V, rtol=1e-9, atol=1e-11) and np.allclose(r.W, W, rtol=1e-9, atol=1e-11)
    assert np.allclose(r.loss[:T], losses, rtol=1e-10, atol=1e-12)
    assert np.array_equal(np.asarray(W)[:, :-1], W_start[:, :-1])  # only the last column of W moves
    assert np.max(r.v_spread) > 0.1  # off the ridge


# ----------------------------------------------------------------------------- the ridge


@pytest.fixture(scope="module")
def ridge_runs():
    """One compilation: K = 5, N = 21 (r = 4), exact population, 60 steps."""
    base = RW.RandomWalkConfig(K=5, N=21, p=1.0, steps=60, lr=1.0, eps=1.0)
    configs = {
        "log lr 1": base,
        "log lr 100": replace(base, lr=100.0),
        "square lr 0.5": replace(base, loss="square", lr=0.5),
        "log p = 0": replace(base, p=0.0, lr=30.0),
        "cross-entropy": replace(base, loss="cross_entropy", lr=10.0),
        **{f"random ce {s}": replace(base, loss="cross_entropy", lr=10.0, init_scale=0.1) for s in range(3)},
    }
    seeds = [0, 0, 0, 0, 0, 0, 1, 2]
    return dict(zip(configs, RW.train_many(list(configs.values()), seeds)))


@pytest.mark.parametrize("name", ["log lr 1", "log lr 100", "square lr 0.5", "log p = 0"])
def test_zero_initialisation_ridge_is_exact(ridge_runs, name):
    r = ridge_runs[name]
    K, N = r.config.K, r.config.N
    V, W = np.asarray(r.V), np.asarray(r.W)
    assert np.max(np.abs(V)) > 0.1  # V moved ...
    assert np.max(r.v_spread) <= 1e-12 * max(1.0, np.max(np.abs(V)))  # ... along 11^T, at every step
    assert np.max(r.attention_spread) <= 1e-15  # equal attention on 1..N-1, every walk, every step
    assert np.all(r.hits == 1)  # accuracy exactly 1/K at every step
    assert RW.exact_accuracy(V, W, K, N, r.config.p) == Fraction(1, K)
    f = np.asarray(RW.model_from_states(RW.deterministic_walks(K, N, r.config.p), V, W, K))
    assert np.max(np.abs(f - f[:, :1])) <= 1e-12 * np.max(np.abs(f))
    assert np.all(np.asarray(RW.predict(f)) == 0)  # Pred = node 0 for every walk
    # Only the last column of W moved; its state part is constant, its positional part equal on 1..N-1.
    assert np.max(np.abs(W[:, :-1])) == 0
    w = W[:, -1]
    scale = max(1.0, np.max(np.abs(w)))
    assert np.ptp(w[:K]) <= 1e-12 * scale and np.ptp(w[K : K + N - 1]) <= 1e-12 * scale
    a = np.asarray(RW.attention_from_states(RW.deterministic_walks(K, N, r.config.p), W, K))
    assert np.allclose(a[:, :-1], (1 - a[:, -1:]) / (N - 1), rtol=1e-12, atol=0)
    assert np.allclose(r.query[0], 1 / N, rtol=1e-14)  # uniform over all N columns at t = 0 ...
    assert r.query[-1] < 1 / N  # ... then the zero token's weight changes: uniform means over 1..N-1


def test_first_step_closed_form(ridge_runs):
    """From zero the log-loss gradient is -(1/eps) E[e_y (X a)^T] with a = 1/N and X a = (r/N) 1,
    so V_1 = (lr r / (eps K N)) 11^T and W_1 = 0 (V_0 = 0 kills the W gradient); then
    f = V_1 X a = (lr r^2 / (eps N^2)) 1 and the loss at t = 1 is -log(lr r^2 / (eps N^2) + eps)."""
    for name in ("log lr 1", "log lr 100"):
        r = ridge_runs[name]
        K, N, lr, eps = r.config.K, r.config.N, r.config.lr, r.config.eps
        rr = (N - 1) // K
        assert r.loss[0] == -np.log(eps)
        assert np.isclose(r.loss[1], -np.log(lr * rr**2 / (eps * N**2) + eps), rtol=1e-13)
        assert r.query[1] == r.query[0] and np.isclose(r.query[0], 1 / N, rtol=1e-14)


def test_cross_entropy_leaves_zero_fixed(ridge_runs):
    r = ridge_runs["cross-entropy"]
    assert np.max(np.abs(r.V)) == 0 and np.max(np.abs(r.W)) == 0
    assert np.all(r.hits == 1) and np.allclose(r.loss, np.log(5), rtol=1e-14)


def test_random_initialisation_leaves_the_ridge(ridge_runs):
    runs = [ridge_runs[f"random ce {s}"] for s in range(3)]
    for r in runs:
        assert np.max(r.v_spread) > 0.01 and np.max(r.attention_spread) > 1e-3
    assert max(r.accuracy[-1] for r in runs) == 1.0  # at least one seed reaches the Bayes accuracy 1


# ----------------------------------------------------------------------------- p = 1/2


def test_short_run_at_p_half_selects_the_parent():
    cfg = RW.RandomWalkConfig(K=10, N=31, p=0.5, steps=30, lr=100.0, eps=1.0, batch=200, n_test=4000)
    r = RW.train(cfg, jax.random.key(1))
    assert r.accuracy[0] < 0.2
    assert r.accuracy[-1] >= 0.45  # Bayes accuracy 0.5
    assert r.parent_min[-1] >= 0.99 and r.parent[-1] >= 0.99
    assert r.cosine[-1] >= 0.9
    assert abs(r.bayes - 0.5) <= Z_TOL * np.sqrt(0.25 / 4000)
    assert r.attention.shape == (31, 31) and np.allclose(r.attention.sum(axis=1), 1.0)
    assert np.allclose(r.attention[:, -2], r.parent)
    # Rotation-symmetrised batches keep the population's symmetry: V circulant, w_x constant.
    V, w = np.asarray(r.V), np.asarray(r.W[:, -1])
    assert np.max(np.abs(V - np.roll(V, (1, 1), axis=(0, 1)))) <= 1e-10 * np.max(np.abs(V))
    assert np.ptp(w[:10]) <= 1e-10 * np.max(np.abs(w))


# ----------------------------------------------------------------------------- small pieces


def test_predict_ties_and_tolerance():
    f = jnp.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [1.0, 1.0 + 4e-16, 0.0], [0.0, -1.0, 5.0]])
    assert np.array_equal(RW.predict(f), [1, 0, 0, 2])
    assert np.array_equal(RW.predict(f, rtol=0), [1, 0, 1, 2])


def test_cosine_and_ideal_parameters():
    K, N, p = 6, 13, 1.0
    Pt = RW.transition_matrix(K, p).T
    assert np.isclose(RW.value_cosine(Pt, K, p), 1.0) and RW.value_cosine(jnp.zeros((K, K)), K, p) == 0
    assert np.isclose(RW.value_cosine(np.ones((K, K)), K, 0.5), np.sqrt(2 / K))  # <1, Π> = K, |Π|_F^2 = K/2
    W = np.zeros((K + N, K + N))
    W[K + N - 2, -1] = 50.0  # score 50 on the parent's positional encoding
    assert RW.exact_accuracy(Pt, W, K, N, p) == 1
    assert RW.exact_accuracy(np.ones((K, K)), W, K, N, p) == Fraction(1, K)


@pytest.mark.roundoff
def test_train_matches_train_many(ridge_runs):
    r = ridge_runs["log lr 100"]
    one = RW.train(r.config, jax.random.key(0))
    assert np.allclose(one.V, r.V, rtol=1e-12, atol=1e-14) and np.allclose(one.W, r.W, rtol=1e-12, atol=1e-14)
    assert np.array_equal(one.hits, r.hits) and np.allclose(one.loss, r.loss, rtol=1e-12, atol=1e-14)


def test_figure_table_and_plot(ridge_runs):
    """The figure's table and plot on stand-in runs (the real `compute` takes ~40 s)."""
    import slrlib.figures.random_walk as RWF
    from slrlib.experiments import random_walk as rw_params
    from slrlib import figures

    assert figures.get("random_walk").chapter == 13
    r = ridge_runs["log lr 1"]
    data = RWF.RandomWalkExperiments(
        half=r, drift=r, drift_large_eps=r, ridge=r, ridge_small_step=r, ridge_ce=ridge_runs["cross-entropy"],
        off_ridge=r, random_log=[r] * len(rw_params.SEEDS), random_ce=[ridge_runs["random ce 1"]] * len(rw_params.SEEDS),
    )
    table = RWF.random_walk_table(data)
    assert {len(v) for v in table.values()} == {r.config.steps + 1}
    assert np.array_equal(table["ridge_accuracy"], r.accuracy)
    assert np.allclose(table["random_ce_accuracy_mean"], ridge_runs["random ce 1"].accuracy, rtol=1e-14)
    fig = RWF.plot_random_walk(data)
    assert len(fig.axes) == 3


# ----------------------------------------------------------------------------- bad input


WALKS = np.zeros((2, 5), int)
TINY = RW.RandomWalkConfig(K=4, N=5, p=1.0, steps=1)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: RW.sample(jax.random.key(0), 5, 4, 6, 1.5), "p must be a probability"),
        (lambda: RW.sample(jax.random.key(0), 5, 4, 6, -0.1), "p must be a probability"),
        (lambda: RW.sample(jax.random.key(0), 5, 2, 6, 0.5), "K must be an integer >= 3"),
        (lambda: RW.sample(jax.random.key(0), 5, 4.0, 6, 0.5), "K must be a positive integer"),
        (lambda: RW.sample(jax.random.key(0), 5, 4, 1, 0.5), "N must be an integer >= 2"),
        (lambda: RW.sample(jax.random.key(0), 0, 4, 6, 0.5), "n must be a positive integer"),
        (lambda: RW.sample(jax.random.key(0), 5, 4, 6, float("nan")), "p must be finite"),
        (lambda: RW.sample(123, 5, 4, 6, 0.5), "key must be a jax.random key"),
        (lambda: RW.deterministic_walks(4, 6, 0.5), "p must be 0 or 1"),
        (lambda: RW.embed(np.array([[0, 1, 4]]), 4), r"states must lie in \[0, K\)"),
        (lambda: RW.embed(np.array([0, 1, 2]), 4), "states must have shape"),
        (lambda: RW.embed(np.array([[0.0, 1.0]]), 4), "states must be an integer array"),
        (lambda: RW.model_from_states(WALKS, np.zeros((3, 3)), np.zeros((9, 9)), 4), "V must have shape"),
        (lambda: RW.model_from_states(WALKS, np.zeros((4, 4)), np.zeros((8, 8)), 4), "W must have shape"),
        (lambda: RW.model_from_states(WALKS, np.full((4, 4), np.nan), np.zeros((9, 9)), 4), "V must be finite"),
        (lambda: RW.loss_values(np.zeros((2, 4)), np.array([0, 1]), loss="hinge"), "loss must be one of"),
        (lambda: RW.loss_values(np.zeros((2, 4)), np.array([0, 1]), eps=0.0), "eps must be > 0"),
        (lambda: RW.predict(np.zeros((2, 3)), rtol=-1.0), "rtol must be >= 0"),
        (lambda: RW.RandomWalkConfig(p=2.0), "p must be a probability"),
        (lambda: RW.RandomWalkConfig(lr=0.0), "lr must be > 0"),
        (lambda: RW.RandomWalkConfig(steps=0), "steps must be a positive integer"),
        (lambda: RW.RandomWalkConfig(loss="mse"), "loss must be one of"),
        (lambda: RW.RandomWalkConfig(init_scale=-1.0), "init_scale must be >= 0"),
        (lambda: RW.RandomWalkConfig(K=20, batch=1001), "batch must be a multiple of K"),
        (lambda: RW.RandomWalkConfig(rotations="yes"), "rotations must be True or False"),
        (lambda: RW.train("config", jax.random.key(0)), "config must be a RandomWalkConfig"),
        (lambda: RW.train_seeds(TINY, [-1]), "seeds must be integers >= 0"),
        (lambda: RW.train_many([TINY, replace(TINY, N=6)], [0, 0]), "configs must share their sizes"),
        (lambda: RW.train_many([TINY], [0, 1]), "equal length"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_divergence_is_reported():
    """The log loss is undefined once f_y <= -eps: a large random initialisation gets there."""
    cfg = RW.RandomWalkConfig(K=5, N=21, p=1.0, steps=60, lr=100.0, init_scale=5.0)  # compiled above
    with pytest.raises(ValueError, match="training diverged"):
        RW.train(cfg, jax.random.key(0))
