r"""Gaussian expectations of the error function.

The predictor of the paper uses :math:`\sigma = \operatorname{erf}` precisely because
expectations of ``erf`` and of its derivatives against Gaussians have closed forms
(Lemma 18 of Marion et al., 2025). This module collects the ones the book needs.

Notation: :math:`G \sim \mathcal N(0, 1)`,
:math:`\operatorname{erf}'(x) = \tfrac{2}{\sqrt\pi} e^{-x^2}`,
:math:`\operatorname{erf}''(x) = -2x \operatorname{erf}'(x)`, and :math:`T(h, a)` is
Owen's T function (Owen, 1956).

The central object is

.. math:: \zeta(t, s) = \mathbb E\big[\operatorname{erf}(t + sG)^2\big],

which the paper (Lemma 18 (vi)) and its code evaluate by numerical quadrature. Here it
is evaluated in closed form,

.. math::

    \zeta(t, s) = 1 - 8\,T\Big(\frac{\sqrt 2\, t}{\sqrt{1 + 2s^2}},\
                                \frac{1}{\sqrt{1 + 4s^2}}\Big),

a derivation of ours (chapter 3 of the book): write ``erf(x) = 2Φ(√2 x) − 1``, recognise
``E Φ(h + cG)²`` as a bivariate normal orthant probability and use
``Φ₂(x, x; r) = Φ(x) − 2 T(x, √((1 − r)/(1 + r)))``. Its derivatives are exact too:
:func:`zeta` carries a custom JVP so that ``jax.grad`` (to any order) goes through it.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy.special import erf, owens_t
from jax.typing import ArrayLike

from slrlib.validation import as_float_array, check_finite, check_nonnegative

__all__ = [
    "erf_prime",
    "erf_second",
    "expected_erf",
    "expected_erf_prime",
    "expected_erf_sq_centered",
    "expected_erf_prime_sq_centered",
    "zeta",
    "zeta_dt",
]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def erf_prime(x: ArrayLike) -> jax.Array:
    r"""Derivative of erf: :math:`\operatorname{erf}'(x) = \frac{2}{\sqrt\pi} e^{-x^2}`.

    Parameters
    ----------
    x : array_like
        Real argument.

    Returns
    -------
    jax.Array
        :math:`\operatorname{erf}'(x)`, elementwise.
    """
    return _TWO_OVER_SQRT_PI * jnp.exp(-jnp.square(x))


def erf_second(x: ArrayLike) -> jax.Array:
    r"""Second derivative of erf: :math:`\operatorname{erf}''(x) = -2x\,\operatorname{erf}'(x)`.

    Parameters
    ----------
    x : array_like
        Real argument.

    Returns
    -------
    jax.Array
        :math:`\operatorname{erf}''(x)`, elementwise.
    """
    return -2.0 * x * erf_prime(x)


def expected_erf(a: ArrayLike, b: ArrayLike) -> jax.Array:
    r"""Gaussian expectation of erf, :math:`\mathbb E \operatorname{erf}(aG + b)` (Lemma 18 (i)).

    .. math::

        \mathbb E \operatorname{erf}(aG + b) = \operatorname{erf}\big(b / \sqrt{1 + 2a^2}\big),
        \qquad G \sim \mathcal N(0, 1).

    Parameters
    ----------
    a, b : array_like
        Scale and shift; they broadcast together.

    Returns
    -------
    jax.Array
        The expectation, elementwise.
    """
    return erf(b / jnp.sqrt(1.0 + 2.0 * jnp.square(a)))


def expected_erf_prime(a: ArrayLike, b: ArrayLike) -> jax.Array:
    r"""Gaussian expectation of erf', :math:`\mathbb E \operatorname{erf}'(aG + b)` (Lemma 18 (ii)).

    .. math::

        \mathbb E \operatorname{erf}'(aG + b) = \frac{2}{\sqrt\pi}
        \frac{e^{-b^2/(1+2a^2)}}{\sqrt{1+2a^2}}, \qquad G \sim \mathcal N(0, 1).

    Parameters
    ----------
    a, b : array_like
        Scale and shift; they broadcast together.

    Returns
    -------
    jax.Array
        The expectation, elementwise.
    """
    c = 1.0 + 2.0 * jnp.square(a)
    return _TWO_OVER_SQRT_PI * jnp.exp(-jnp.square(b) / c) / jnp.sqrt(c)


def expected_erf_sq_centered(a: ArrayLike) -> jax.Array:
    r"""Second moment of erf of a centred Gaussian, :math:`\mathbb E \operatorname{erf}(aG)^2 = \zeta(0, a)`.

    .. math::

        \mathbb E \operatorname{erf}(aG)^2 = \frac{2}{\pi} \arcsin\frac{2a^2}{1 + 2a^2},
        \qquad G \sim \mathcal N(0, 1),

    i.e. :math:`\zeta(0, a)`.

    Parameters
    ----------
    a : array_like
        Scale of the Gaussian.

    Returns
    -------
    jax.Array
        The expectation, elementwise.
    """
    a2 = jnp.square(a)
    return (2.0 / math.pi) * jnp.arcsin(2.0 * a2 / (1.0 + 2.0 * a2))


def expected_erf_prime_sq_centered(a: ArrayLike) -> jax.Array:
    r"""Second moment of erf' of a centred Gaussian, :math:`\mathbb E \operatorname{erf}'(aG)^2`.

    .. math::

        \mathbb E \operatorname{erf}'(aG)^2 = \frac{4}{\pi\sqrt{1 + 4a^2}}, \qquad G \sim \mathcal N(0, 1).

    Parameters
    ----------
    a : array_like
        Scale of the Gaussian.

    Returns
    -------
    jax.Array
        The expectation, elementwise.
    """
    return 4.0 / (math.pi * jnp.sqrt(1.0 + 4.0 * jnp.square(a)))


def zeta_dt(t: ArrayLike, s: ArrayLike) -> jax.Array:
    r"""Exact :math:`\partial_t \zeta(t, s)`.

    .. math::

        \partial_t\zeta(t, s) = \frac{2}{\sqrt{1+2s^2}}
            \operatorname{erf}\Big(\frac{t}{\sqrt{(1+2s^2)(1+4s^2)}}\Big)
            \operatorname{erf}'\Big(\frac{t}{\sqrt{1+2s^2}}\Big)

    (Stein's lemma and Lemma 18; this is the formula the paper integrates numerically).
    Built from elementary functions, so ``jax`` differentiates it further.

    Parameters
    ----------
    t, s : array_like
        Arguments of :math:`\zeta`; they broadcast together. No validation.

    Returns
    -------
    jax.Array
        :math:`\partial_t \zeta(t, s)`, elementwise.
    """
    c2 = 1.0 + 2.0 * jnp.square(s)
    c4 = 1.0 + 4.0 * jnp.square(s)
    return (
        2.0
        / jnp.sqrt(c2)
        * erf(t / jnp.sqrt(c2 * c4))
        * erf_prime(t / jnp.sqrt(c2))
    )


def _zeta_dtt(t, s):
    r""":math:`\partial_t^2 \zeta(t, s)`, by differentiating :func:`zeta_dt` by hand."""
    c2 = 1.0 + 2.0 * jnp.square(s)
    c4 = 1.0 + 4.0 * jnp.square(s)
    r = jnp.sqrt(c2 * c4)
    u = t / jnp.sqrt(c2)
    return (2.0 / jnp.sqrt(c2)) * (
        erf_prime(t / r) / r * erf_prime(u)
        + erf(t / r) * erf_second(u) / jnp.sqrt(c2)
    )


@jax.custom_jvp
def _zeta(t, s):
    c2 = 1.0 + 2.0 * jnp.square(s)
    c4 = 1.0 + 4.0 * jnp.square(s)
    h = math.sqrt(2.0) * t / jnp.sqrt(c2)
    a = 1.0 / jnp.sqrt(c4)
    return 1.0 - 8.0 * owens_t(h, a)


@_zeta.defjvp
def _zeta_jvp(primals, tangents):
    # d/ds E f(t + sG) = E[G f'(t + sG)] = s E f''(t + sG) (Stein): the heat equation
    # ∂_s ζ = s ∂_t² ζ, so both partial derivatives come from the exact ∂_t ζ.
    t, s = primals
    t_dot, s_dot = tangents
    value = _zeta(t, s)
    tangent = zeta_dt(t, s) * t_dot + s * _zeta_dtt(t, s) * s_dot
    return value, tangent


_zeta_jit = jax.jit(_zeta)


def zeta(t: ArrayLike, s: ArrayLike) -> jax.Array:
    r"""Closed form of :math:`\zeta(t, s) = \mathbb E[\operatorname{erf}(t + sG)^2]`.

    .. math::

        \zeta(t, s) = 1 - 8\,T\Big(\frac{\sqrt 2\, t}{\sqrt{1 + 2s^2}},\
                                    \frac{1}{\sqrt{1 + 4s^2}}\Big)

    with Owen's T function (eq. (7) of the paper defines ζ; the closed form is ours).
    Special values: ``ζ(0, s) = (2/π) arcsin(2s²/(1 + 2s²))``, ``ζ(t, 0) = erf(t)²``,
    ``ζ(±∞, s) = 1``. Differentiable to any order with ``jax``: the JVP uses the exact
    :func:`zeta_dt` and the heat equation ``∂_s ζ = s ∂_t² ζ``.

    Parameters
    ----------
    t, s : array_like
        Broadcastable real arrays; ``s`` is a standard deviation and must be ``≥ 0``.
        Validation happens when the inputs are concrete (not under ``jax`` tracing).

    Returns
    -------
    jax.Array
        :math:`\zeta(t, s)`, of the broadcast shape of ``t`` and ``s``.

    Raises
    ------
    ValueError
        When ``t`` or ``s`` is not a finite real array, or ``s`` has a negative entry.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> import math
    >>> from slrlib import zeta
    >>> float(zeta(0.0, 0.0))
    0.0
    >>> round(float(zeta(1.0, 0.0)), 6), round(math.erf(1.0) ** 2, 6)
    (0.710145, 0.710145)
    >>> # zeta(0, s) = (2/pi) arcsin(2 s^2 / (1 + 2 s^2)), here s = 1
    >>> closed = 2 / math.pi * math.asin(2 / 3)
    >>> round(float(zeta(0.0, 1.0)), 6), round(closed, 6)
    (0.464559, 0.464559)
    """
    t = as_float_array(t, "t")
    s = as_float_array(s, "s")
    check_finite(t, "t")
    check_finite(s, "s")
    check_nonnegative(s, "s")
    t, s = jnp.broadcast_arrays(t, s)
    return _zeta_jit(t, s)
