"""Gaussian identities and ζ(t, s): closed forms against numerical quadrature."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special

from slrlib.core import gaussian
from slrlib.core.gaussian import zeta, zeta_dt


def gauss_expect(f, mean=0.0, sd=1.0):
    """E f(mean + sd G) by adaptive quadrature (independent of every closed form)."""
    lo, hi = -40.0, 40.0
    val, _ = integrate.quad(
        lambda g: f(mean + sd * g) * math.exp(-g * g / 2) / math.sqrt(2 * math.pi),
        lo,
        hi,
        epsabs=1e-14,
        epsrel=1e-13,
        limit=500,
        points=[0.0],
    )
    return val


def zeta_quad(t, s):
    return gauss_expect(lambda x: special.erf(x) ** 2, mean=t, sd=s) if s > 0 else special.erf(t) ** 2


@given(t=st.floats(-12, 12), s=st.floats(0, 8))
@settings(max_examples=60, deadline=None)
def test_zeta_matches_quadrature(t, s):
    assert abs(float(zeta(t, s)) - zeta_quad(t, s)) < 1e-12


@pytest.mark.roundoff
def test_zeta_special_values():
    s = jnp.linspace(0.0, 5.0, 11)
    np.testing.assert_allclose(
        zeta(0.0, s), (2 / np.pi) * np.arcsin(2 * s**2 / (1 + 2 * s**2)), atol=1e-15
    )
    t = jnp.linspace(-3, 3, 13)
    np.testing.assert_allclose(zeta(t, 0.0), special.erf(np.asarray(t)) ** 2, atol=1e-15)
    assert abs(float(zeta(60.0, 0.7)) - 1.0) < 1e-15


@pytest.mark.parametrize("t,s", [(0.3, 0.5), (1.7, 2.0), (-2.0, 0.1), (5.0, 0.7), (0.0, 1.3)])
def test_zeta_derivatives_against_finite_differences(t, s):
    h = 1e-5
    fd_t = (zeta_quad(t + h, s) - zeta_quad(t - h, s)) / (2 * h)
    fd_s = (zeta_quad(t, s + h) - zeta_quad(t, s - h)) / (2 * h)
    gt, gs = jax.grad(zeta, argnums=(0, 1))(t, s)
    assert abs(float(gt) - fd_t) < 1e-8
    assert abs(float(gs) - fd_s) < 1e-8
    assert abs(float(zeta_dt(t, s)) - fd_t) < 1e-8


def test_zeta_second_derivative_and_heat_equation():
    # ∂_s ζ = s ∂_t² ζ (Stein), checked with second finite differences of the closed form.
    t, s, h = 0.8, 0.6, 1e-4
    d2 = (float(zeta(t + h, s)) - 2 * float(zeta(t, s)) + float(zeta(t - h, s))) / h**2
    hess = jax.hessian(zeta, argnums=0)(t, s)
    assert abs(float(hess) - d2) < 1e-6
    ds = (float(zeta(t, s + h)) - float(zeta(t, s - h))) / (2 * h)
    assert abs(ds - s * d2) < 1e-6


@pytest.mark.parametrize("a,b", [(0.0, 0.4), (0.7, -1.1), (2.5, 3.0), (0.1, 0.0)])
def test_lemma18_identities(a, b):
    erf, erfp = special.erf, lambda x: 2 / math.sqrt(math.pi) * math.exp(-x * x)
    assert abs(float(gaussian.expected_erf(a, b)) - gauss_expect(erf, b, a)) < 1e-12
    assert abs(float(gaussian.expected_erf_prime(a, b)) - gauss_expect(erfp, b, a)) < 1e-12
    assert abs(
        float(gaussian.expected_erf_sq_centered(a)) - gauss_expect(lambda x: erf(x) ** 2, 0, a)
    ) < 1e-12
    assert abs(
        float(gaussian.expected_erf_prime_sq_centered(a)) - gauss_expect(lambda x: erfp(x) ** 2, 0, a)
    ) < 1e-12


@pytest.mark.roundoff
def test_erf_derivatives_are_derivatives():
    x = jnp.linspace(-3, 3, 25)
    np.testing.assert_allclose(jax.vmap(jax.grad(jax.scipy.special.erf))(x), gaussian.erf_prime(x), atol=1e-14)
    np.testing.assert_allclose(jax.vmap(jax.grad(gaussian.erf_prime))(x), gaussian.erf_second(x), atol=1e-14)


@pytest.mark.parametrize(
    "t,s,name",
    [(0.0, -0.1, "s"), (np.nan, 1.0, "t"), (0.0, np.inf, "s"), (np.inf, 0.5, "t"), ("a", 1.0, "t")],
)
def test_zeta_bad_input(t, s, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        zeta(t, s)
