"""In-context one-nearest-neighbour prediction (chapter 13; talk: Li et al., NeurIPS 2024).

* Sampler: unit norms, the nearest neighbour against a brute-force NumPy argmin, the response,
  label moments (E y_i y_j = δ_ij, independence from x), the ``sign`` label rule, uniformity of
  the nearest neighbour's index; the margin sampler (margin exactly δ, nearest neighbour, query
  and outside points unchanged, labels in [-R, R]); the orbit of :func:`symmetrise`.
* Model: ``embed`` against the talk's layout, f_W against a NumPy transcription of
  ``[H softmax(HᵀWH)]_{d+1,N+1}``, the loss against finite differences, the label average
  ½E_y(f - y*)² = ½(Σp² - 2p* + 1) by enumerating every label vector.
* Symmetry: per-batch equivariance under x -> Qx and y -> -y, the gradient of a symmetrised set
  in the talk's form to rounding (and that of a plain batch not), gradient descent on it keeps
  the form, the label column never moves.
* A short training run reaching a stated held-out loss; the figure spec on that run; bad input.
"""

import csv

import jax
import numpy as np
import pytest

from slrlib import figures
from slrlib.case_studies.token_selection import nn1 as NN

EPS = np.finfo(np.float64).eps  # 2.2e-16
D, N = 4, 16
N_DATA = 4000  # one sample size for the whole file: every shape compiles once
SHORT = NN.NN1Config(d=D, N=N, sigma=4.0, lr=1.5, steps=2000, batch_size=128, n_logs=12, n_test=N_DATA)


@pytest.fixture(scope="module")
def data():
    return NN.sample(jax.random.key(0), N_DATA, D, N)


def head(data, k):
    """The first k prompts (NumPy arrays: slicing compiles nothing)."""
    return NN.NN1Data(*(np.asarray(a)[:k] for a in data))


@pytest.fixture(scope="module")
def short_run():
    return NN.train(SHORT, jax.random.key(3))


@pytest.fixture(scope="module")
def sym_set(data):
    return NN.symmetrise(head(data, 4))


def np_softmax(s, axis=-1):
    s = s - s.max(axis=axis, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=axis, keepdims=True)


def form_W(xi1, beta, xi2, d=D):
    return np.diag(np.r_[np.full(d, xi1), beta, -xi2])


def random_W(seed, d=D, scale=1.0):
    return scale * np.random.default_rng(seed).standard_normal((d + 2, d + 2))


# --------------------------------------------------------------------------------- sampler
def test_sample_shapes_norms_and_nearest_neighbour(data):
    X, xq, y, target, i_star = (np.asarray(a) for a in data)
    assert X.shape == (N_DATA, N, D) and xq.shape == (N_DATA, D) and y.shape == (N_DATA, N)
    np.testing.assert_allclose(np.linalg.norm(X, axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(xq, axis=-1), 1.0, atol=1e-12)
    brute = np.array([np.argmin([np.linalg.norm(xq[b] - X[b, j]) for j in range(N)]) for b in range(200)])
    np.testing.assert_array_equal(i_star[:200], brute)
    np.testing.assert_array_equal(i_star, np.argmax(np.einsum("bjd,bd->bj", X, xq), axis=1))
    np.testing.assert_array_equal(target, y[np.arange(len(y)), i_star])


def test_rademacher_label_moments(data):
    y = np.asarray(data.y)
    assert set(np.unique(y)) == {-1.0, 1.0}
    n = y.shape[0]
    gram = y.T @ y / n  # E[y_i y_j] = δ_ij
    np.testing.assert_array_equal(np.diag(gram), 1.0)
    off = gram[~np.eye(N, dtype=bool)]
    assert np.abs(off).max() < 5 / np.sqrt(n)
    # independent of the points: E[y_i x_i] = 0 and E[y_i y_j <x_i, x_j>] = 0
    X = np.asarray(data.X)
    assert np.abs(np.einsum("bj,bjd->jd", y, X) / n).max() < 5 / np.sqrt(n)
    assert abs(np.mean(y[:, 0] * y[:, 1] * np.sum(X[:, 0] * X[:, 1], -1))) < 5 / np.sqrt(n)


def test_points_uniform_on_sphere(data):
    X = np.asarray(data.X).reshape(-1, D)
    n = X.shape[0]
    assert np.abs(X.mean(0)).max() < 5 / np.sqrt(n)
    np.testing.assert_allclose(X.T @ X / n, np.eye(D) / D, atol=5 / np.sqrt(n))
    # E[x_1^4] = 3 / (d (d + 2)) on the sphere
    assert abs(np.mean(X[:, 0] ** 4) - 3 / (D * (D + 2))) < 5 * np.std(X[:, 0] ** 4) / np.sqrt(n)


def test_nearest_index_is_uniform(data):
    counts = np.bincount(np.asarray(data.i_star), minlength=N)
    n = counts.sum()
    chi2 = np.sum((counts - n / N) ** 2 / (n / N))
    assert chi2 < 50  # 15 degrees of freedom: P(chi2 > 50) < 1e-5


@pytest.mark.roundoff
def test_sign_labels(data):
    s = NN.sample(jax.random.key(0), N_DATA, D, N, labels="sign")
    # Same key, same points, but another compiled program (labels is static): x / |x| with a
    # reduction of length D = 4, a few ulps of |x_i| <= 1 each: 4 D eps.
    np.testing.assert_allclose(np.asarray(s.X), np.asarray(data.X), rtol=0, atol=4 * D * EPS)
    np.testing.assert_array_equal(np.asarray(s.y), np.where(np.asarray(s.X)[..., 0] >= 0, 1.0, -1.0))
    np.testing.assert_array_equal(np.asarray(s.target), np.asarray(s.y)[np.arange(N_DATA), np.asarray(s.i_star)])


def test_sample_is_deterministic(data):
    b = NN.sample(jax.random.key(0), N_DATA, D, N)
    for u, v in zip(data, b):
        np.testing.assert_array_equal(np.asarray(u), np.asarray(v))
    c = NN.sample(jax.random.key(1), N_DATA, D, N)
    assert not np.array_equal(np.asarray(c.X), np.asarray(data.X))


@pytest.mark.parametrize("delta", [0.0, 0.2, 0.5])
@pytest.mark.roundoff
def test_sample_margin(delta):
    R = 2.0
    key = jax.random.key(7)
    base = NN.sample(jax.random.split(key)[0], N_DATA, D, N)
    s = NN.sample_margin(key, N_DATA, D, N, delta, R)
    X, xq, y, i_star = (np.asarray(a) for a in (s.X, s.xq, s.y, s.i_star))
    np.testing.assert_allclose(np.linalg.norm(X, axis=-1), 1.0, atol=1e-12)
    # The query and the nearest neighbour are kept. The sampler runs inlined in another compiled
    # program (_sample_margin): x / |x| with a reduction of length D = 4, 4 D eps.
    np.testing.assert_allclose(xq, np.asarray(base.xq), rtol=0, atol=4 * D * EPS)
    np.testing.assert_array_equal(i_star, np.asarray(base.i_star))
    rows = np.arange(N_DATA)
    np.testing.assert_allclose(X[rows, i_star], np.asarray(base.X)[rows, i_star], rtol=0, atol=4 * D * EPS)
    Dist = np.sum((X - xq[:, None]) ** 2, -1)
    np.testing.assert_array_equal(np.argmin(Dist, 1), i_star)  # still the nearest neighbour
    gap = Dist - Dist[rows, i_star][:, None]
    gap[rows, i_star] = np.inf
    assert gap.min() >= delta - 1e-9
    np.testing.assert_allclose(np.asarray(NN.margins(X, xq, y, i_star)), gap.min(1), atol=1e-12)
    # points already outside the shell do not move
    D0 = np.sum((np.asarray(base.X) - xq[:, None]) ** 2, -1)
    outside = D0 >= D0[rows, i_star][:, None] + delta + 1e-9
    np.testing.assert_allclose(X[outside], np.asarray(base.X)[outside], atol=1e-12)
    if delta > 0:
        assert abs(gap.min() - delta) < 1e-9  # some point sits exactly on the shell
        assert (~outside).sum() > N_DATA  # and many were moved
    assert np.all(np.abs(y) <= R) and np.std(y) > 1.0  # uniform on [-2, 2]: std 1.15
    np.testing.assert_array_equal(np.asarray(s.target), y[rows, i_star])


def test_symmetrise_orbit(data):
    base = head(data, 3)
    sym = NN.symmetrise(base)
    k = D * 2 ** (D + 1)
    assert sym.X.shape == (3 * k, N, D)
    Xs, qs = np.asarray(sym.X), np.asarray(sym.xq)
    np.testing.assert_array_equal(np.asarray(sym.i_star),
                                  np.argmin(np.sum((Xs - qs[:, None]) ** 2, -1), 1))
    np.testing.assert_array_equal(np.asarray(sym.target), np.asarray(sym.y)[np.arange(3 * k), np.asarray(sym.i_star)])
    # the orbit of the first prompt: 2 label signs x d cyclic shifts x 2^d coordinate signs, all distinct
    orbit = {(np.round(qs[j], 12).tobytes(), float(np.asarray(sym.y)[j, 0])) for j in range(k)}
    assert len(orbit) == k
    assert {float(v) for v in np.asarray(sym.y)[:k, 0]} == {-1.0, 1.0}


# ----------------------------------------------------------------------------------- model
def test_embed_layout(data):
    H = np.asarray(NN.embed(data.X[:5], data.xq[:5], data.y[:5]))
    X, xq, y = np.asarray(data.X[:5]), np.asarray(data.xq[:5]), np.asarray(data.y[:5])
    for b in range(5):
        expected = np.zeros((D + 2, N + 1))
        expected[:D, :N] = X[b].T
        expected[:D, N] = xq[b]
        expected[D, :N] = y[b]
        expected[D + 1, N] = 1.0
        np.testing.assert_array_equal(H[b], expected)


def test_predict_matches_the_talks_self_attention(data):
    W = np.asarray(random_W(11, scale=2.0))
    H = np.asarray(NN.embed(data.X[:50], data.xq[:50], data.y[:50]))
    # self-attention(H) = H softmax(Hᵀ W H), softmax over each column; f_W = entry (d+1, N+1)
    direct = np.array([(Hb @ np_softmax(Hb.T @ W @ Hb, axis=0))[D, N] for Hb in H])
    np.testing.assert_allclose(np.asarray(NN.predict(W, H)), direct, rtol=1e-12, atol=1e-14)
    a = np.asarray(NN.attention(W, H))
    np.testing.assert_allclose(a, np.array([np_softmax(Hb.T @ W @ Hb[:, -1]) for Hb in H]), rtol=1e-12)
    np.testing.assert_allclose(a.sum(-1), 1.0, atol=1e-14)
    target = np.asarray(data.target[:50])
    np.testing.assert_allclose(float(NN.loss(W, H, target)), 0.5 * np.mean((direct - target) ** 2), rtol=1e-12)


def test_gradient_against_finite_differences(data):
    W = random_W(12, scale=0.7)
    sub = head(data, 64)
    H = NN.embed(sub.X, sub.xq, sub.y)
    g = np.asarray(NN.gradient(W, sub))
    h = 1e-6
    fd = np.zeros_like(g)
    for i in range(D + 2):
        for j in range(D + 2):
            E = np.zeros_like(W)
            E[i, j] = h
            fd[i, j] = (float(NN.loss(W + E, H, sub.target)) - float(NN.loss(W - E, H, sub.target))) / (2 * h)
    np.testing.assert_allclose(g, fd, atol=1e-8)
    np.testing.assert_array_equal(g[:, D], 0.0)  # the query's label entry is 0: column d+1 is idle


def test_label_average_closed_form(data):
    """For W of the talk's form the scores ignore labels: E_y (f - y*)² = Σ p_i² - 2 p_{i*} + 1."""
    n, Nsmall = 6, 5
    Xs, xqs = np.asarray(data.X[:n, :Nsmall]), np.asarray(data.xq[:n])
    i_star = np.argmin(np.sum((Xs - xqs[:, None]) ** 2, -1), 1)
    W = form_W(3.0, 0.0, 5.0)
    labels = np.array(np.meshgrid(*[[-1.0, 1.0]] * Nsmall, indexing="ij")).reshape(Nsmall, -1).T  # all 2^N
    for b in range(n):
        X = np.broadcast_to(Xs[b], (len(labels), Nsmall, D))
        xq = np.broadcast_to(xqs[b], (len(labels), D))
        H = NN.embed(X, xq, labels)
        f = np.asarray(NN.predict(W, H))
        err = np.mean((f - labels[:, i_star[b]]) ** 2)
        p = np.asarray(NN.attention(W, H[0]))[:Nsmall]
        np.testing.assert_allclose(err, np.sum(p**2) - 2 * p[i_star[b]] + 1, rtol=1e-12)


# -------------------------------------------------------------------------------- symmetry
def test_batch_equivariance(data):
    """f_W(DH) = f_{DᵀWD}(H) for D = diag(Q, 1, 1), and f_W(SH) = -f_{SWS}(H) for the label flip S."""
    sub = head(data, 64)
    H = np.asarray(NN.embed(sub.X, sub.xq, sub.y))
    W = random_W(14)
    Q, _ = np.linalg.qr(np.random.default_rng(15).standard_normal((D, D)))
    Dq = np.zeros((D + 2, D + 2))
    Dq[:D, :D], Dq[D:, D:] = Q, np.eye(2)
    np.testing.assert_allclose(np.asarray(NN.predict(W, Dq @ H)), np.asarray(NN.predict(Dq.T @ W @ Dq, H)), atol=1e-12)
    S = np.diag(np.r_[np.ones(D), -1.0, 1.0])
    np.testing.assert_allclose(np.asarray(NN.predict(W, S @ H)), -np.asarray(NN.predict(S @ W @ S, H)), atol=1e-12)
    # hence for the batch losses: L(W; DH) = L(DᵀWD; H), and gradients transform alike
    rot = NN.NN1Data(sub.X @ Q.T, sub.xq @ Q.T, sub.y, sub.target, sub.i_star)
    np.testing.assert_allclose(np.asarray(NN.gradient(W, rot)),
                               np.asarray(Dq @ NN.gradient(Dq.T @ W @ Dq, sub) @ Dq.T), atol=1e-12)


@pytest.mark.parametrize("W", [NN.initial_W(D, 4.0), form_W(3.0, 0.0, 5.0), form_W(-1.0, 0.7, -2.0)])
def test_symmetrised_gradient_keeps_the_form(W, data, sym_set):
    base = head(data, 4)
    g_plain = np.asarray(NN.gradient(W, base))
    off_plain = np.linalg.norm(g_plain - np.asarray(NN.project_form(g_plain)))
    assert off_plain > 1e-3 * np.linalg.norm(g_plain)  # a plain batch breaks the form
    g = np.asarray(NN.gradient(W, sym_set))
    P = np.asarray(NN.project_form(g))
    assert np.linalg.norm(g - P) < 1e-12 * max(np.linalg.norm(g), 1e-300) + 1e-16
    assert abs(g[0, 0]) > 1e-6  # and the form's entries do move


def test_gradient_descent_on_symmetrised_set_stays_in_form(sym_set):
    W = NN.initial_W(D, 4.0)
    for _ in range(25):
        W = W - 1.5 * NN.gradient(W, sym_set)
    f = NN.form_summary(W)
    assert f["off_form"] < 1e-12 and f["xi1_range"] < 1e-12
    assert f["xi1"] > 0.1 and f["xi2"] > 0  # ξ₁ grows from 0


def test_step_size_limit_along_c(sym_set):
    """At W_0 the loss has curvature E[(1 - m²)²] ≈ 1 - 2/N along c = W[d+1, d+2] (m the label mean):
    gradient descent damps a perturbation of c for a step size below 2 / that, amplifies it above."""
    y = np.asarray(sym_set.y)
    m = y.mean(1)
    curvature = np.mean((1 - m**2) ** 2)  # query weight e^-σ / N neglected
    W0 = np.asarray(NN.initial_W(D, 8.0)).copy()
    W0[D, D + 1] = 1e-6
    for lr, grows in ((0.8 * 2 / curvature, False), (1.25 * 2 / curvature, True)):
        W = W0
        for _ in range(30):
            W = W - lr * NN.gradient(W, sym_set)
        assert (abs(float(W[D, D + 1])) > 1e-4) == grows


# -------------------------------------------------------------------------------- summaries
def test_form_summary_and_projection():
    W = np.asarray(form_W(3.0, 0.0, 5.0))
    f = NN.form_summary(W)
    assert f["xi1"] == 3.0 and f["xi2"] == 5.0 and f["off_form"] == 0 and f["xi1_range"] == 0
    np.testing.assert_array_equal(np.asarray(NN.project_form(W)), W)
    V = W.copy()
    V[0, 1], V[D, D + 1], V[1, 1] = 0.3, -0.4, 3.5
    f = NN.form_summary(V)
    assert f["c"] == -0.4 and f["xi1_range"] == 0.5 and f["xi1"] == pytest.approx(3.125)
    assert f["offdiag_x"] == pytest.approx(0.3) and f["label_norm"] == pytest.approx(0.4)
    P = np.asarray(NN.project_form(V))
    assert f["off_form"] == pytest.approx(np.linalg.norm(V - P) / np.linalg.norm(V))
    # P is the Frobenius-nearest matrix of the form
    for eps in (1e-3, -1e-3):
        Q = P + eps * np.diag(np.r_[np.ones(D), 0, 0])
        assert np.linalg.norm(V - Q) > np.linalg.norm(V - P)
    stacked = NN.form_summary(np.stack([W, V]))
    np.testing.assert_array_equal(stacked["xi1"], [3.0, 3.125])


def test_mask_query_changes_only_the_query_score(data):
    sub = head(data, 64)
    H = NN.embed(sub.X, sub.xq, sub.y)
    W = random_W(18)
    a, b = np.asarray(NN.attention(W, H)), np.asarray(NN.attention(NN.mask_query(W), H))
    assert b[:, -1].max() < 1e-100
    np.testing.assert_allclose(b[:, :-1], a[:, :-1] / a[:, :-1].sum(-1, keepdims=True), rtol=1e-12)


def test_log_steps():
    s = NN.log_steps(2000, 12)
    assert s[0] == 0 and s[-1] == 2000 and np.all(np.diff(s) > 0) and len(s) <= 12


# -------------------------------------------------------------------------------- training
def test_initial_W():
    W = np.asarray(NN.initial_W(3, 2.5))
    np.testing.assert_array_equal(W, np.diag([0, 0, 0, 0, -2.5]))


def test_short_run_learns_nearest_neighbour(short_run):
    """2 000 steps (d = 4, N = 16): held-out loss from about 0.47 to below 0.12."""
    r = short_run
    assert r.test_loss[0] > 0.45 and r.test_loss[-1] < 0.12
    assert r.train_loss[-1] < 0.15
    assert r.sign_acc[-1] > 0.95 and r.argmax_frac[-1] > 0.95 and r.attn_mass[-1] > 0.6
    f = r.form
    assert f["xi1"][0] == 0 and f["xi2"][0] == SHORT.sigma and f["off_form"][0] == 0
    assert f["xi1"][-1] > 5 and f["xi2"][-1] > 0
    assert f["xi1_range"][-1] < 0.05 * f["xi1"][-1] and f["off_form"][-1] < 0.05
    np.testing.assert_array_equal(r.W[:, :, D], 0.0)  # the label column never receives gradient
    assert np.all(np.diff(r.test_loss[3:]) < 0.02)  # held-out loss decreasing (up to noise)
    assert r.steps[-1] == SHORT.steps and len(r.steps) == len(r.test_loss) == len(r.W)


def test_training_is_deterministic(short_run):
    again = NN.train(SHORT, jax.random.key(3))
    np.testing.assert_array_equal(again.W, short_run.W)
    np.testing.assert_array_equal(again.test_loss, short_run.test_loss)


@pytest.fixture(scope="module")
def short_margin(short_run):
    from slrlib.experiments.nn1 import MARGIN_DELTAS

    return NN.margin_curve(short_run.W[-1], jax.random.key(4), MARGIN_DELTAS, n=N_DATA, N=N, R=2.0)


def test_margin_curve(short_margin, short_run):
    from slrlib.plots.nn1 import margin_bound

    m = short_margin
    np.testing.assert_allclose(m["min_margin"][1:], m["delta"][1:], atol=1e-9)
    assert np.all(np.diff(m["loss_query_masked"]) < 0)
    assert np.all(np.diff(m["attn_mass"]) > 0)
    assert m["loss_query_masked"][-1] < 0.1 * m["loss_query_masked"][0]
    # the margin term of the bound (exact for W of the talk's form; the trained W is close to it)
    assert np.all(m["loss_query_masked"] <= margin_bound(m["delta"], short_run.form["xi1"][-1], N, 2.0))


# --------------------------------------------------------------------------------- figure
def test_figure_spec_on_the_short_run(tmp_path, short_run, short_margin):
    import matplotlib

    matplotlib.use("Agg")
    from slrlib.figures import nn1 as fnn1
    from slrlib.plots.nn1 import plot_nn1

    spec = figures.get("nn1")
    assert spec.chapter == 13 and spec.compute is fnn1.nn1_data and spec.plot is plot_nn1
    tiny = fnn1.NN1FigureData(short_run, short_margin, 2.0, 0.0)
    fig = plot_nn1(tiny)
    assert len(fig.axes) == 6
    table = fnn1.nn1_table(tiny)
    assert len({len(v) for v in table.values()}) == 1
    csv_path = tmp_path / "nn1.csv"
    figures.write_csv(table, csv_path)
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(table["x"])
    test_loss = [float(r["y"]) for r in rows if r["series"] == "test_loss"]
    np.testing.assert_array_equal(test_loss, short_run.test_loss)
    w_rows = [float(r["y"]) for r in rows if r["panel"] == "e"]
    np.testing.assert_array_equal(w_rows, short_run.W[-1].ravel())


# ------------------------------------------------------------------------------- bad input
def test_bad_input_raises(data):
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        NN.sample(key, 0, D, N)
    with pytest.raises(ValueError, match="d must be >= 2"):
        NN.sample(key, 5, 1, N)
    with pytest.raises(ValueError, match="N must be a positive integer"):
        NN.sample(key, 5, D, 2.5)
    with pytest.raises(ValueError, match="labels must be one of"):
        NN.sample(key, 5, D, N, labels="gaussian")
    with pytest.raises(ValueError, match="key"):
        NN.sample(7, 5, D, N)
    with pytest.raises(ValueError, match="delta must be >= 0"):
        NN.sample_margin(key, 5, D, N, -0.1)
    with pytest.raises(ValueError, match="delta must be <= 2"):
        NN.sample_margin(key, 5, D, N, 3.0)
    with pytest.raises(ValueError, match="R must be > 0"):
        NN.sample_margin(key, 5, D, N, 0.1, R=0.0)
    s = head(data, 5)
    with pytest.raises(ValueError, match="xq must have shape"):
        NN.embed(s.X, s.xq[:, :2], s.y)
    with pytest.raises(ValueError, match="y must have shape"):
        NN.embed(s.X, s.xq, s.y[:, :3])
    with pytest.raises(ValueError, match="X must be finite"):
        NN.embed(np.where(np.arange(D) == 0, np.nan, s.X), s.xq, s.y)
    H = NN.embed(s.X, s.xq, s.y)
    with pytest.raises(ValueError, match="W must have shape"):
        NN.predict(np.eye(D + 1), H)
    with pytest.raises(ValueError, match="W must be finite"):
        NN.attention(np.full((D + 2, D + 2), np.inf), H)
    with pytest.raises(ValueError, match="target must have shape"):
        NN.loss(np.eye(D + 2), H, np.zeros(3))
    with pytest.raises(ValueError, match="data must be an NN1Data"):
        NN.evaluate(np.eye(D + 2), tuple(s))
    with pytest.raises(ValueError, match="data is too large"):
        NN.symmetrise(NN.NN1Data(np.zeros((2, 2, 16)), np.zeros((2, 16)), np.zeros((2, 2)),
                                 np.zeros(2), np.zeros(2, dtype=int)))
    with pytest.raises(ValueError, match="sigma must be >= 0"):
        NN.initial_W(D, -1.0)
    with pytest.raises(ValueError, match="lr must be > 0"):
        NN.NN1Config(lr=0.0)
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        NN.NN1Config(steps=10.5)
    with pytest.raises(ValueError, match="n_logs must be >= 2"):
        NN.NN1Config(n_logs=1)
    with pytest.raises(ValueError, match="d must be >= 2"):
        NN.NN1Config(d=1)
    with pytest.raises(ValueError, match="config must be an NN1Config"):
        NN.train({"d": 4}, key)
    with pytest.raises(ValueError, match="deltas must lie in"):
        NN.margin_curve(np.eye(D + 2), key, [0.1, 2.5], n=10, N=N)
    with pytest.raises(ValueError, match="W must have shape"):
        NN.form_summary(np.zeros((3, 4)))
