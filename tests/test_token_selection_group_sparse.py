"""Group-sparse classification (chapter 13): :mod:`slrlib.case_studies.token_selection.group_sparse`.

* Sampler: labels = sign of the projection of group j* (re-derived in NumPy), E[y x_j] =
  sqrt(2/pi) sigma v* for j = j* and 0 otherwise, Gaussian moments (mean, covariance over all
  d D coordinates), balance, scaling in sigma_x, determinism; the embedding H = [X; I_D].
* Model: against a NumPy transcription of f = sum_j v^T H softmax(H^T W h_j); the block fast
  path used by training against the definition; attention columns sum to 1.
* Gradients against central finite differences; at v = 0 the output is 0, the W-gradient is
  exactly 0 and the v-gradient has the closed form -1/2 mean(y [sum_j x_j; 1_D]); the first
  step of train moves v only, by that amount.
* Sign symmetry: f(-X; v, W) = -f(X; R(v, W)); the symmetrised loss is R-invariant; training on
  it keeps v_2 = 0 and W_12 = W_21 = 0 bit for bit (also at D = 16, where round-off would grow);
  the raw sample breaks it.
* A short training run reaching stated accuracy, attention and alignment; divergence raises.
* Downstream: perfect selection matches the oracle, uniform attention does not; shapes; the
  figure's table and plot on short runs.
* Bad input raises ValueError naming the parameter.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from slrlib.case_studies.token_selection import group_sparse as G

Z_TOL = 4.5  # |gap| in standard errors
EPS = np.finfo(np.float64).eps  # 2.2e-16


def _unit(seed, d):
    return G.random_unit(jax.random.key(seed), d)


def _softmax(s):
    e = np.exp(s - s.max())
    return e / e.sum()


def _numpy_model(H, v, W):
    """The talk's formula, one query at a time."""
    f = 0.0
    for j in range(H.shape[1]):
        a = _softmax(H.T @ W @ H[:, j])
        f += v @ H @ a
    return f


def _random_params(seed, p, scale=0.5):
    kv, kw = jax.random.split(jax.random.key(seed))
    return np.asarray(jax.random.normal(kv, (p,))), scale * np.asarray(jax.random.normal(kw, (p, p)))


def _R(v, W, d):
    """The sign-symmetry involution: v_2 and the cross blocks of W change sign."""
    v, W = np.array(v), np.array(W)
    v[d:] *= -1
    W[:d, d:] *= -1
    W[d:, :d] *= -1
    return v, W


# =============================================================================== sampler
@pytest.fixture(scope="module")
def big_sample():
    d, D, js, sigma = 3, 5, 2, 1.5
    v_star = _unit(1, d)
    X, y = G.sample(jax.random.key(2), 20_000, d, D, js, v_star, sigma_x=sigma)
    return np.asarray(X), np.asarray(y), np.asarray(v_star), d, D, js, sigma


def test_labels_are_the_sign_of_the_relevant_projection(big_sample):
    X, y, v_star, d, D, js, _ = big_sample
    assert X.shape == (20_000, d, D) and y.shape == (20_000,)
    expected = np.where(np.einsum("nd,d->n", X[:, :, js], v_star) >= 0, 1.0, -1.0)
    np.testing.assert_array_equal(y, expected)
    # no other group decides the label: the same rule with another group agrees with y like a
    # fair coin (another group is independent of y), within Z_TOL standard errors of 1/2
    se = 0.5 / math.sqrt(y.size)
    for j in range(D):
        if j != js:
            other = np.where(X[:, :, j] @ v_star >= 0, 1.0, -1.0)
            assert abs(np.mean(other == y) - 0.5) < Z_TOL * se


def test_label_correlates_with_the_relevant_group_only(big_sample):
    X, y, v_star, d, D, js, sigma = big_sample
    n = y.size
    prod = y[:, None, None] * X  # (n, d, D)
    mean, se = prod.mean(0), prod.std(0, ddof=1) / math.sqrt(n)
    target = np.zeros((d, D))
    target[:, js] = math.sqrt(2 / math.pi) * sigma * v_star  # E[sign(<x, v>) x] for x ~ N(0, s^2 I)
    assert np.max(np.abs((mean - target) / se)) < Z_TOL


def test_gaussian_moments_and_balance(big_sample):
    X, y, _, d, D, _, sigma = big_sample
    n = y.size
    flat = X.reshape(n, d * D)
    z_mean = flat.mean(0) / (sigma / math.sqrt(n))
    assert np.max(np.abs(z_mean)) < Z_TOL
    cov = flat.T @ flat / n
    # Var of x_a x_b is s^4 (a != b) and 2 s^4 (a = b)
    se = sigma**2 * np.where(np.eye(d * D, dtype=bool), math.sqrt(2), 1.0) / math.sqrt(n)
    assert np.max(np.abs((cov - sigma**2 * np.eye(d * D)) / se)) < Z_TOL + 1.0  # 300 entries
    p_plus = np.mean(y == 1)
    assert abs(p_plus - 0.5) / math.sqrt(0.25 / n) < Z_TOL


@pytest.mark.roundoff
def test_sample_determinism_and_scaling():
    v = _unit(3, 4)
    X1, y1 = G.sample(jax.random.key(5), 50, 4, 6, 1, v)
    X2, y2 = G.sample(jax.random.key(5), 50, 4, 6, 1, v, sigma_x=2.5)
    np.testing.assert_array_equal(X1, G.sample(jax.random.key(5), 50, 4, 6, 1, v)[0])
    np.testing.assert_allclose(X2, 2.5 * np.asarray(X1), rtol=1e-15)
    np.testing.assert_array_equal(y1, y2)  # the sign does not see the scale
    X3, _ = G.sample(jax.random.key(6), 50, 4, 6, 1, v)
    assert not np.allclose(X1, X3)


def test_embed_stacks_the_identity():
    X = np.asarray(jax.random.normal(jax.random.key(0), (7, 3, 5)))
    H = np.asarray(G.embed(X))
    assert H.shape == (7, 8, 5)
    np.testing.assert_array_equal(H[:, :3], X)
    np.testing.assert_array_equal(H[:, 3:], np.broadcast_to(np.eye(5), (7, 5, 5)))


# =============================================================================== model
@pytest.fixture(scope="module")
def small():
    d, D = 3, 4
    X, y = G.sample(jax.random.key(10), 12, d, D, 0, _unit(11, d))
    v, W = _random_params(12, d + D)
    return np.asarray(X), np.asarray(y), v, W, d, D


def test_model_against_numpy(small):
    X, _, v, W, _, _ = small
    H = np.asarray(G.embed(X))
    f = np.asarray(G.model(H, v, W))
    f_np = np.array([_numpy_model(h, v, W) for h in H])
    np.testing.assert_allclose(f, f_np, rtol=1e-12, atol=1e-12)
    S = np.asarray(G.attention(H, W))
    np.testing.assert_allclose(S.sum(axis=-2), 1.0, atol=1e-14)  # each query's weights over keys
    np.testing.assert_allclose(S[3][:, 2], _softmax(H[3].T @ W @ H[3][:, 2]), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(G.features(H, W)) @ v, f, rtol=1e-12, atol=1e-12)


def test_fast_path_matches_definition(small):
    X, y, v, W, d, _ = small
    H = G.embed(X)
    np.testing.assert_allclose(G._f_x(jnp.asarray(X), v, W, d), G.model(H, v, W), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(G._loss_x((v, W), jnp.asarray(X), y, d, False), G.logistic_loss(v, W, H, y),
                               rtol=1e-13)
    np.testing.assert_allclose(G._attention_x(jnp.asarray(X), W, d), G.attention(H, W), rtol=1e-12, atol=1e-14)


def test_gradient_against_finite_differences(small):
    X, y, v, W, _, _ = small
    H = G.embed(X)
    loss = jax.jit(G.logistic_loss)
    gv, gW = jax.jit(jax.grad(G.logistic_loss, argnums=(0, 1)))(v, W, H, y)
    h = 1e-6
    rng = np.random.default_rng(0)
    for _ in range(3):
        dv, dW = rng.normal(size=v.shape), rng.normal(size=W.shape)
        fd = (loss(v + h * dv, W + h * dW, H, y) - loss(v - h * dv, W - h * dW, H, y)) / (2 * h)
        np.testing.assert_allclose(fd, np.sum(gv * dv) + np.sum(gW * dW), rtol=1e-7)


def test_zero_init_output_and_gradients(small):
    X, y, _, _, d, D = small
    H = G.embed(X)
    v0, W0 = np.zeros(d + D), np.zeros((d + D, d + D))
    np.testing.assert_array_equal(G.model(H, v0, W0), 0.0)
    gv, gW = jax.grad(G.logistic_loss, argnums=(0, 1))(v0, W0, H, y)
    assert np.all(np.asarray(gW) == 0.0)  # f is linear in v: no signal reaches W at v = 0
    # uniform attention: H S 1 = H 1 = [sum_j x_j; 1_D], and l'(0) = -1/2
    feats = np.concatenate([X.sum(-1), np.ones((X.shape[0], D))], axis=1)
    np.testing.assert_allclose(gv, -0.5 * np.mean(y[:, None] * feats, axis=0), rtol=1e-13, atol=1e-15)


TINY = dict(n=50, d=2, D=4, j_star=3, n_steps=2, log_every=1, n_test=8)  # one compiled loop for two tests


def test_first_step_moves_v_only():
    cfg = G.GroupSparseConfig(eta=0.7, **TINY)
    X, y = G.sample(jax.random.key(4), 50, 2, 4, 3, _unit(5, 2))
    vs, Ws = G._train_loop(X, y, 0.7, d=2, symmetrize=False, n_logs=cfg.n_logs, log_every=1)
    X, y = np.asarray(X), np.asarray(y)
    feats = np.concatenate([X.sum(-1), np.ones((50, 4))], axis=1)
    assert np.all(np.asarray(vs[0]) == 0.0) and np.all(np.asarray(Ws[:2]) == 0.0)
    np.testing.assert_allclose(vs[1], 0.7 * 0.5 * np.mean(y[:, None] * feats, axis=0), rtol=1e-12, atol=1e-15)
    assert np.any(np.asarray(Ws[2]) != 0.0)  # the second step moves W


def test_divergence_raises():
    with pytest.raises(FloatingPointError, match="eta"):
        G.train(G.GroupSparseConfig(eta=1e300, **TINY), jax.random.key(0))


# =============================================================================== sign symmetry
def test_sign_flip_identity_and_symmetrised_loss_invariance(small):
    X, y, v, W, d, _ = small
    H, Hm = G.embed(X), G.embed(-X)
    vR, WR = _R(v, W, d)
    np.testing.assert_allclose(G.model(Hm, v, W), -np.asarray(G.model(H, vR, WR)), rtol=1e-12, atol=1e-12)
    L = G._loss_x((v, W), jnp.asarray(X), y, d, True)
    np.testing.assert_allclose(G._loss_x((vR, WR), jnp.asarray(X), y, d, True), L, rtol=1e-13)
    # the raw empirical loss is not invariant (a finite sample is not sign-symmetric)
    raw, rawR = G._loss_x((v, W), jnp.asarray(X), y, d, False), G._loss_x((vR, WR), jnp.asarray(X), y, d, False)
    assert abs(float(raw) - float(rawR)) > 1e-3


@pytest.fixture(scope="module")
def short_runs():
    """The talk's (n, d, D) = (200, 2, 4), j* = 2 (1-based), raw and symmetrised, 200 steps."""
    base = dict(n=200, d=2, D=4, j_star=1, eta=1.0, n_steps=200, log_every=20, n_test=2000)
    return {name: G.train(G.GroupSparseConfig(symmetrize=sym, **base), jax.random.key(0))
            for name, sym in (("raw", False), ("sym", True))}


@pytest.mark.roundoff
def test_symmetrised_training_keeps_the_symmetric_subspace_exactly(short_runs):
    run = short_runs["sym"]
    d = run.config.d
    assert np.all(run.v[d:] == 0.0)
    assert np.all(run.W[:d, d:] == 0.0) and np.all(run.W[d:, :d] == 0.0)
    assert np.all(run.norm_ratio == 0.0) and np.all(run.cross_norm == 0.0)
    raw = short_runs["raw"]  # the raw sample leaves the subspace
    assert raw.norm_ratio[-1] > 1e-3 and raw.cross_norm[-1] > 1e-2


@pytest.mark.roundoff
def test_symmetric_subspace_exact_where_roundoff_would_grow():
    # D = 16 with eta = 1 > 8/D: the v_2 ∝ 1 direction is unstable for GD, so any round-off in v_2
    # would grow by a factor ~3 per step; bit-exact cancellation keeps it at 0.
    cfg = G.GroupSparseConfig(n=50, d=2, D=16, eta=1.0, n_steps=40, log_every=40, n_test=8, symmetrize=True)
    run = G.train(cfg, jax.random.key(1))
    assert np.all(run.v[2:] == 0.0) and np.all(run.W[:2, 2:] == 0.0) and np.all(run.W[2:, :2] == 0.0)
    assert np.linalg.norm(run.v[:2]) > 0


# =============================================================================== training
@pytest.mark.roundoff
def test_short_training_run_selects_the_group(short_runs):
    for name, run in short_runs.items():
        js = run.config.j_star
        # step 0 (v = W = 0): loss log 2, every test point a tie, uniform attention
        # the mean of n = 200 equal terms log(1 + e^0): XLA's log within an ulp, and the sum's
        # partial sums round (at most n/4 eps in the worst case, a few ulps in practice): 64 eps
        np.testing.assert_allclose(run.train_loss[0], math.log(2), rtol=64 * EPS)
        assert run.test_acc[0] == 0.5 and run.cosine[0] == 0.0 and run.norm_ratio[0] == 0.0
        np.testing.assert_allclose(run.attention_jstar[0], 1 / run.config.D, rtol=1e-14)
        assert run.train_loss[-1] < 0.05 * run.train_loss[0]
        assert run.test_acc[-1] >= 0.95, name
        assert run.cosine[-1] >= 0.999, name
        assert run.attention_jstar[-1] >= 0.8, name  # from 1/D = 0.25
        assert np.argmax(run.attention_matrix.mean(axis=1)) == js
        np.testing.assert_allclose(run.attention_matrix.sum(axis=0), 1.0, atol=1e-12)
        assert run.attention_min == pytest.approx(run.attention_matrix[js].min())
        assert 0 <= run.attention_min_sample <= run.attention_min
    assert short_runs["sym"].attention_jstar[-1] > short_runs["raw"].attention_jstar[-1]


def test_train_is_deterministic(short_runs):
    run = G.train(short_runs["sym"].config, jax.random.key(0))
    np.testing.assert_array_equal(run.W, short_runs["sym"].W)
    np.testing.assert_array_equal(run.test_acc, short_runs["sym"].test_acc)


# =============================================================================== downstream
def test_sample_efficiency_perfect_and_uniform_selection():
    d, D, js = 3, 6, 2
    W_sel = np.zeros((d + D, d + D))
    W_sel[d + js, d:] = 40.0  # every query puts weight ~1 on key j*: features ≈ [D x_{j*}; D e_{j*}]
    ns = (30, 300)
    sel = G.sample_efficiency(W_sel, d, D, js, ns, jax.random.key(3), n_seeds=3, n_test=1000)
    uni = G.sample_efficiency(np.zeros((d + D, d + D)), d, D, js, ns, jax.random.key(3), n_seeds=3, n_test=1000)
    assert sel.acc_vec.shape == sel.acc_attention.shape == sel.acc_oracle.shape == (2, 3)
    np.testing.assert_array_equal(sel.acc_vec, uni.acc_vec)  # same data, same key
    np.testing.assert_array_equal(sel.acc_oracle, uni.acc_oracle)
    # with n = 300 the perfect selector does as well as the oracle (at n = 30 its constant
    # positional feature D e_{j*}, a free intercept, costs some accuracy on some draws)
    np.testing.assert_allclose(sel.acc_attention[1], sel.acc_oracle[1], atol=0.02)
    assert sel.acc_oracle[1].mean() > 0.95
    # uniform attention sees sum_j x_j: the Bayes accuracy on it is 1/2 + arcsin(1/sqrt(D))/pi
    ceiling = 0.5 + math.asin(1 / math.sqrt(D)) / math.pi
    assert uni.acc_attention[1].mean() < ceiling + 0.03
    assert sel.acc_vec[0].mean() < sel.acc_attention[0].mean() - 0.1  # 30 samples, 18 coordinates


def test_mean_accuracy_from_counts():
    acc = np.array([[0.5, 0.25, 1.0], [0.75, 0.75, 0.0]])
    se = G.SampleEfficiency(ns=np.array([1, 2]), d=1, D=2, j_star=0, C=1.0, n_test=4, acc_vec=acc,
                            acc_attention=acc[::-1], acc_oracle=acc, seconds=0.0)
    np.testing.assert_array_equal(se.mean_accuracy("vec"), [7 / 12, 6 / 12])
    np.testing.assert_array_equal(se.mean_accuracy("attention"), [6 / 12, 7 / 12])
    with pytest.raises(ValueError, match="method"):
        se.mean_accuracy("bayes")


def test_fit_accuracy_with_one_class():
    F = np.ones((4, 2))
    assert G._fit_accuracy(F, np.ones(4), F, np.array([1.0, -1.0, 1.0, 1.0]), 1.0) == 0.75


def test_figure_table_and_plot_on_short_runs(short_runs):
    import matplotlib

    from slrlib.figures import group_sparse as GF

    se = G.sample_efficiency(short_runs["sym"].W, 2, 4, 1, (10, 40), jax.random.key(0), n_seeds=2, n_test=200)
    data = GF.GroupSparseFigure(runs=dict(short_runs), downstream={4: se}, seconds={})
    tab = GF.table(data)
    lengths = {k: len(v) for k, v in tab.items()}
    assert len(set(lengths.values())) == 1
    sel = (tab["panel"] == "attention_jstar") & (tab["series"] == "sym")
    np.testing.assert_array_equal(tab["y"][sel], short_runs["sym"].attention_jstar)
    sel = (tab["panel"] == "downstream_D4") & (tab["series"] == "oracle")
    np.testing.assert_allclose(tab["y"][sel], se.acc_oracle.mean(axis=1))
    assert isinstance(GF.plot_group_sparse(data), matplotlib.figure.Figure)
    reach = GF.first_n_reaching(se, 0.0)
    assert reach == {"vec": 10, "attention": 10, "oracle": 10}
    assert GF.first_n_reaching(se, 1.01) == {"vec": None, "attention": None, "oracle": None}


# =============================================================================== bad input
V3 = np.array([1.0, 0.0, 0.0])


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(j_star=6), "j_star"),
        (dict(j_star=-1), "j_star"),
        (dict(j_star=1.0), "j_star"),
        (dict(j_star=True), "j_star"),
        (dict(v_star=np.array([1.0, 1.0, 0.0])), "v_star"),
        (dict(v_star=np.array([1.0, 0.0])), "v_star"),
        (dict(n=0), "n"),
        (dict(D=1, j_star=0), "D"),
        (dict(sigma_x=0.0), "sigma_x"),
        (dict(key=np.array([1.0, 2.0])), "key"),
    ],
)
def test_sample_bad_input(kwargs, name):
    args = dict(key=jax.random.key(0), n=5, d=3, D=6, j_star=1, v_star=V3, sigma_x=1.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        G.sample(**args)


def test_model_bad_input(small):
    X, y, v, W, d, D = small
    H = G.embed(X)
    with pytest.raises(ValueError, match="W"):
        G.model(H, v, W[:-1])
    with pytest.raises(ValueError, match="v"):
        G.model(H, v[:-1], W)
    with pytest.raises(ValueError, match="H"):
        G.model(np.ones(5), v, W)
    with pytest.raises(ValueError, match="H"):
        G.model(np.full((d + D, D), np.nan), v, W)
    with pytest.raises(ValueError, match="X"):
        G.embed(np.ones(3))
    with pytest.raises(ValueError, match="y"):
        G.logistic_loss(v, W, H, np.zeros(len(y)))
    with pytest.raises(ValueError, match="y"):
        G.logistic_loss(v, W, H, y[:-1])


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(eta=0.0), "eta"),
        (dict(eta=float("nan")), "eta"),
        (dict(n_steps=25, log_every=10), "n_steps"),
        (dict(j_star=6), "j_star"),
        (dict(D=1, j_star=0), "D"),
        (dict(n=2.0), "n"),
        (dict(symmetrize=1), "symmetrize"),
        (dict(sigma_x=-1.0), "sigma_x"),
    ],
)
def test_config_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        G.GroupSparseConfig(**kwargs)


def test_train_and_downstream_bad_input():
    with pytest.raises(ValueError, match="config"):
        G.train({"n": 5}, jax.random.key(0))
    with pytest.raises(ValueError, match="key"):
        G.train(G.GroupSparseConfig(), 3)
    W = np.zeros((9, 9))
    for ns in ((), (0, 10), (2.5,), [[10]]):
        with pytest.raises(ValueError, match="ns"):
            G.sample_efficiency(W, 3, 6, 1, ns, jax.random.key(0))
    with pytest.raises(ValueError, match="W"):
        G.sample_efficiency(np.zeros((8, 8)), 3, 6, 1, (10,), jax.random.key(0))
    with pytest.raises(ValueError, match="C"):
        G.sample_efficiency(W, 3, 6, 1, (10,), jax.random.key(0), C=0.0)
    with pytest.raises(ValueError, match="j_star"):
        G.sample_efficiency(W, 3, 6, 7, (10,), jax.random.key(0))
