"""The PGD kernel slrlib.training.pgd.pgd_in_span against Definition 1 written literally in R^d.

Independent reference: the iteration of eq. (10) in numpy, k and v as vectors of R^d, with the
Euclidean gradients taken by jax.grad of the risk as a function of (k, v) in R^d (the overlaps
written out as dot products here), the tangent projection I - k k^T as a d x d matrix and the
normalisation by numpy's norm. No basis of the span, no chain rule through the five overlaps.

Two risks: the closed form of Theorem 1 with a step-dependent lambda_t = lam0 / (1 + decay t),
and chapter 16's extended closed form (non-orthogonal k*, v*, correlated noise tokens), whose
overlap gradients are module-level functions here (the kernel takes them as static arguments).
Runs include linearly dependent starts (k0 = k*, v0 = v*), where the span has dimension < 4.

Tolerance: both sides do the same O(d) operations per step in a different order, so they differ
by round-off: a few ulps per step, carried through a step map whose Lipschitz constant is about
1 + alpha * |Hessian| (< 2 here), over n = 6 steps; 1000 * n * eps (about 1.3e-12) covers it
with a wide margin and is far below the change one step makes (alpha * |gradient| > 1e-3).

Runtime: a few seconds.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from slrlib import SLRTask
from slrlib.book.ch16_stress import stress_risk_kernel
from slrlib.core.risk import risk_kernel
from slrlib.training.pgd import pgd_in_span

D, RUNS, ALPHA, LOG_EVERY, N_LOG = 12, 4, 0.05, 2, 3
N_STEPS = LOG_EVERY * N_LOG
TOL = 1000 * N_STEPS * np.finfo(float).eps
TASK = SLRTask(d=D, L=5, gamma=0.7, eps=0.2)


def _theorem1_grad(kappa, nu, theta, eta, rho, t, params):
    lam0, decay = params

    def total(o):
        return jnp.sum(risk_kernel(*o, lam0 / (1.0 + decay * t), float(D), float(TASK.L), TASK.gamma, TASK.eps))

    return jax.grad(total)((kappa, nu, theta, eta, rho))


def _stress_grad(kappa, nu, theta, eta, rho, t, params):
    c, r, lam = params

    def total(o):
        return jnp.sum(stress_risk_kernel(*o, c, r, lam, float(D), float(TASK.L), TASK.gamma, TASK.eps))

    return jax.grad(total)((kappa, nu, theta, eta, rho))


def _dense_reference(risk_of_overlaps, k0, v0, k_star, v_star, extra):
    """Eq. (10) in R^d, numpy, one run at a time; risk_of_overlaps(kappa, nu, theta, eta, rho, t, extra_b)."""

    def risk(k, v, ks, vs, t, e):
        return risk_of_overlaps(k @ ks, v @ vs, v @ ks, k @ vs, k @ v, t, e)

    grad = jax.jit(jax.grad(risk, argnums=(0, 1)))
    logs = np.zeros((N_LOG + 1, 5, RUNS))
    k_end, v_end = np.zeros((RUNS, D)), np.zeros((RUNS, D))
    for b in range(RUNS):
        ks, vs = k_star[b], v_star[b]
        k, v = k0[b] / np.linalg.norm(k0[b]), v0[b] / np.linalg.norm(v0[b])
        ovl = lambda k, v: [k @ ks, v @ vs, v @ ks, k @ vs, k @ v]  # noqa: E731
        logs[0, :, b] = ovl(k, v)
        for t in range(N_STEPS):
            gk, gv = (np.asarray(g) for g in grad(k, v, ks, vs, float(t), extra[b]))
            k_new = k - ALPHA * (np.eye(D) - np.outer(k, k)) @ gk
            v_new = v - ALPHA * (np.eye(D) - np.outer(v, v)) @ gv
            k, v = k_new / np.linalg.norm(k_new), v_new / np.linalg.norm(v_new)
            if (t + 1) % LOG_EVERY == 0:
                logs[(t + 1) // LOG_EVERY, :, b] = ovl(k, v)
        k_end[b], v_end[b] = k, v
    return logs, k_end, v_end


def _unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def starts():
    rng = np.random.default_rng(7)
    k_star = _unit(rng.standard_normal((RUNS, D)))
    w = rng.standard_normal((RUNS, D))
    w = _unit(w - np.sum(w * k_star, axis=1, keepdims=True) * k_star)
    c = np.array([0.0, 0.3, -0.5, 0.2])  # <k*, v*> per run
    v_star = c[:, None] * k_star + np.sqrt(1 - c[:, None] ** 2) * w
    k0 = _unit(rng.standard_normal((RUNS, D)) + 0.8 * k_star)
    v0 = _unit(rng.standard_normal((RUNS, D)) - 0.5 * v_star)
    k0[1], v0[2] = k_star[1], v_star[2]  # dependent columns: span of dimension 3
    return k0, v0, k_star, v_star, c


@pytest.mark.roundoff
def test_kernel_with_a_step_dependent_lambda_equals_literal_pgd_in_rd(starts):
    k0, v0, k_star, v_star, _ = starts
    # Orthogonal directions for Theorem 1 (Assumption 1): rebuild v* orthogonal to k*.
    w = _unit(v_star - np.sum(v_star * k_star, axis=1, keepdims=True) * k_star)
    v0 = v0.copy()
    v0[2] = w[2]
    lam0, decay = 0.9, 0.3  # lambda_t falls by a factor 2.5 over the 6 steps
    buf = 8
    logs, k, v = pgd_in_span(_theorem1_grad, (lam0, decay), k0, v0, k_star, w, ALPHA, LOG_EVERY, N_LOG, buf=buf)
    ref_logs, ref_k, ref_v = _dense_reference(
        lambda ka, nu, th, et, rh, t, _: risk_kernel(ka, nu, th, et, rh, lam0 / (1.0 + decay * t), float(D),
                                                     float(TASK.L), TASK.gamma, TASK.eps),
        k0, v0, k_star, w, np.zeros(RUNS))
    assert logs.shape == (buf, 5, RUNS)
    np.testing.assert_allclose(logs[: N_LOG + 1], ref_logs, rtol=0, atol=TOL)
    np.testing.assert_array_equal(logs[N_LOG + 1:], 0.0)
    np.testing.assert_allclose(k, ref_k, rtol=0, atol=TOL)
    np.testing.assert_allclose(v, ref_v, rtol=0, atol=TOL)
    # The iteration moved: each logged step differs from the last by far more than TOL.
    assert np.min(np.max(np.abs(np.diff(ref_logs, axis=0)), axis=1)) > 1e6 * TOL


@pytest.mark.roundoff
def test_kernel_with_the_extended_risk_equals_literal_pgd_in_rd(starts):
    k0, v0, k_star, v_star, c = starts
    r, lam = 0.4, 1.1
    logs, k, v = pgd_in_span(_stress_grad, (jnp.asarray(c), r, lam), k0, v0, k_star, v_star, ALPHA, LOG_EVERY,
                             N_LOG, buf=N_LOG + 1)
    # c enters the reference as <k*, v*> of each run's pair, computed here in R^d.
    ref_logs, ref_k, ref_v = _dense_reference(
        lambda ka, nu, th, et, rh, t, cb: stress_risk_kernel(ka, nu, th, et, rh, cb, r, lam, float(D),
                                                             float(TASK.L), TASK.gamma, TASK.eps),
        k0, v0, k_star, v_star, np.sum(k_star * v_star, axis=1))
    assert math.isclose(float(k_star[1] @ v_star[1]), c[1], abs_tol=1e-15)
    np.testing.assert_allclose(logs, ref_logs, rtol=0, atol=TOL)
    np.testing.assert_allclose(k, ref_k, rtol=0, atol=TOL)
    np.testing.assert_allclose(v, ref_v, rtol=0, atol=TOL)
    assert np.min(np.max(np.abs(np.diff(ref_logs, axis=0)), axis=1)) > 1e6 * TOL
