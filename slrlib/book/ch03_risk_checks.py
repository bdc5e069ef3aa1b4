r"""Independent checks of the closed-form risk (chapter 3 of the book).

The closed forms of :mod:`slrlib.core.gaussian` and :mod:`slrlib.core.risk` (Theorem 1,
Proposition 15 and Lemma 18 of Marion et al., 2025) are checked in the book against
computations that share no formula with them:

* :func:`gaussian_expectation` and :func:`zeta_quadrature`: one-dimensional Gaussian
  expectations by adaptive quadrature (``scipy.integrate.quad``);
* :func:`lemma18`: items (i)-(vi) of Lemma 18 in closed form; :func:`lemma18_checks`: each
  of them (and the identities around them) beside its quadrature value;
* :func:`zeta_derivative_checks`: ``jax.grad`` of :func:`slrlib.core.gaussian.zeta` against
  finite differences of its *values* (which also tests the heat equation
  :math:`\partial_s\zeta = s\,\partial_t^2\zeta` that the library's derivative relies on);
* :func:`points_from_specs`: parameter points :math:`(k, v)` with prescribed overlaps, uniform
  on the sphere, or on the manifold :math:`\mathcal M` (from :mod:`slrlib.core.geometry`);
* :func:`closed_form_vs_monte_carlo`: the closed form beside a Monte Carlo estimate of the
  risk of the erf-attention predictor (3) at many :math:`(k, v, \lambda)` on common samples;
* :func:`risk_by_quadrature`: the risk at any five overlaps by one-dimensional Gaussian
  integrals (conditioning on the attention score), without the erf identities of Lemma 18
  that the closed form of Proposition 15 is built from;
* :func:`prop15_terms`: the fourteen terms of Proposition 15, one by one (to show how much
  each weighs, hence how small an error in one of them a check can see).
* :func:`prop15_expectations`: the nine Gaussian expectations of the proof of Proposition 15,
  by Stein's lemma and Lemma 18 and by Monte Carlo; :func:`prop15_assembled`: the four parts of
  the risk assembled from them, to compare with the groups of terms of :func:`prop15_terms`.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from scipy import integrate

from slrlib.core.geometry import (
    uniform_directions,
    manifold_directions,
    directions_with_overlaps,
)
from slrlib.validation import check_key, check_real_scalar
from slrlib.core.gaussian import (
    expected_erf,
    expected_erf_prime,
    expected_erf_sq_centered,
    zeta,
    zeta_dt,
)
from slrlib.core.predictors import erf_attention
from slrlib.core.risk import (
    MonteCarloEstimate,
    Overlaps,
    monte_carlo_risk,
    overlaps,
    risk_from_overlaps,
)
from slrlib.core.task import SLRTask, check_directions

__all__ = [
    "gaussian_expectation",
    "zeta_quadrature",
    "IdentityCheck",
    "lemma18",
    "lemma18_checks",
    "ZetaDerivativeChecks",
    "zeta_derivative_checks",
    "RiskComparison",
    "OVERLAP_HEADERS",
    "OVERLAP_FORMATS",
    "VALUE_HEADERS",
    "VALUE_FORMATS",
    "points_from_specs",
    "closed_form_vs_monte_carlo",
    "QuadratureRisk",
    "risk_by_quadrature",
    "prop15_terms",
    "Prop15Expectation",
    "prop15_expectations",
    "prop15_assembled",
]

_SQRT_2PI = math.sqrt(2.0 * math.pi)


# ---------------------------------------------------------------------------- quadrature
def gaussian_expectation(
    f: Callable[[float], float], epsabs: float = 1e-14, epsrel: float = 1e-12
) -> float:
    r""":math:`\mathbb E f(G)`, :math:`G \sim \mathcal N(0, 1)`, by adaptive quadrature.

    ``f`` maps a float to a float (plain NumPy/``math``; no ``jax``). The integral
    :math:`\int f(g)\,e^{-g^2/2}\,dg/\sqrt{2\pi}` is split at 0 and computed with
    ``scipy.integrate.quad`` on each half-line.
    """
    if not callable(f):
        raise ValueError(f"f must be a callable float -> float, got {f!r}")
    w = lambda g: f(g) * math.exp(-0.5 * g * g) / _SQRT_2PI  # noqa: E731
    lo = integrate.quad(
        w, -np.inf, 0.0, epsabs=epsabs, epsrel=epsrel, limit=200
    )[0]
    hi = integrate.quad(
        w, 0.0, np.inf, epsabs=epsabs, epsrel=epsrel, limit=200
    )[0]
    return lo + hi


def _zeta_quad_scalar(t: float, s: float) -> float:
    if s == 0.0:
        return math.erf(t) ** 2
    # erf(t + s g)^2 varies on the scale 1/s around g = -t/s: split there as well.
    g0 = -t / s
    w = lambda g: math.erf(t + s * g) ** 2 * math.exp(-0.5 * g * g) / _SQRT_2PI  # noqa: E731
    pts = sorted({0.0, g0})
    edges = [-np.inf, *pts, np.inf]
    return sum(
        integrate.quad(w, a, b, epsabs=1e-15, epsrel=1e-13, limit=200)[0]
        for a, b in zip(edges[:-1], edges[1:])
    )


def zeta_quadrature(t, s) -> np.ndarray:
    r""":math:`\zeta(t, s) = \mathbb E[\operatorname{erf}(t + sG)^2]` by numerical quadrature.

    An independent reference for the closed form :func:`slrlib.core.gaussian.zeta` (the paper
    and its code evaluate :math:`\zeta` numerically too). ``t`` and ``s`` broadcast;
    ``s >= 0``. Returns a NumPy float64 array.
    """
    t, s = np.broadcast_arrays(
        np.asarray(t, dtype=float), np.asarray(s, dtype=float)
    )
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(s))):
        raise ValueError("t and s must be finite")
    if np.any(s < 0):
        raise ValueError(f"s must be >= 0, got {s}")
    out = np.empty(t.shape)
    for idx in np.ndindex(t.shape):
        out[idx] = _zeta_quad_scalar(float(t[idx]), float(s[idx]))
    return out


class IdentityCheck(NamedTuple):
    """One Gaussian identity: its statement, the closed form's value and an independent numerical value."""

    identity: str
    closed_form: float
    numerical: float

    @property
    def difference(self) -> float:
        return self.closed_form - self.numerical


_ERF_PRIME = lambda x: 2.0 / math.sqrt(math.pi) * math.exp(-x * x)  # noqa: E731
_ERF_SECOND = lambda x: -2.0 * x * _ERF_PRIME(x)  # noqa: E731


def lemma18(a: float, b: float = 0.0) -> dict[str, float]:
    r"""The six identities of Lemma 18, items (i)-(vi), in closed form at one point (plain ``math``).

    With :math:`G \sim \mathcal N(0,1)`, :math:`c = 1 + 2a^2` and :math:`c' = 1 + 4a^2`:

    * (i) :math:`\mathbb E\operatorname{erf}(aG+b) = \operatorname{erf}(b/\sqrt c)`;
    * (ii) :math:`\mathbb E\operatorname{erf}'(aG+b) = c^{-1/2}\operatorname{erf}'(b/\sqrt c)`;
    * (iii) :math:`\mathbb E\operatorname{erf}''(aG+b) = c^{-1}\operatorname{erf}''(b/\sqrt c)`;
    * (iv) :math:`\mathbb E\operatorname{erf}'(aG+b)^2 = \tfrac{2}{\sqrt{\pi c'}}\operatorname{erf}'(\sqrt2 b/\sqrt{c'})`;
    * (v) :math:`\mathbb E[G\operatorname{erf}(aG)\operatorname{erf}'(aG)] = \tfrac{4a}{\pi c\sqrt{c'}}` (at ``b = 0``);
    * (vi) :math:`\mathbb E[\operatorname{erf}(aG+b)\operatorname{erf}'(aG+b)] = c^{-1/2}\operatorname{erf}\big(b/\sqrt{cc'}\big)\operatorname{erf}'(b/\sqrt c)`.

    Returns a dict with keys ``"i"`` to ``"vi"``. Used by :func:`prop15_expectations` to
    assemble Proposition 15 from Lemma 18, and checked against quadrature by
    :func:`lemma18_checks`.
    """
    a = check_real_scalar(a, "a")
    b = check_real_scalar(b, "b")
    c, c4 = 1.0 + 2.0 * a * a, 1.0 + 4.0 * a * a
    return {
        "i": math.erf(b / math.sqrt(c)),
        "ii": _ERF_PRIME(b / math.sqrt(c)) / math.sqrt(c),
        "iii": _ERF_SECOND(b / math.sqrt(c)) / c,
        "iv": 2.0
        / math.sqrt(math.pi * c4)
        * _ERF_PRIME(math.sqrt(2.0) * b / math.sqrt(c4)),
        "v": 4.0 * a / (math.pi * c * math.sqrt(c4)),
        "vi": math.erf(b / math.sqrt(c * c4))
        * _ERF_PRIME(b / math.sqrt(c))
        / math.sqrt(c),
    }


def lemma18_checks(
    a: float, b: float, t: float | None = None, s: float | None = None
) -> list[IdentityCheck]:
    r"""Lemma 18, items (i)-(vi), and the identities around it, each beside adaptive quadrature.

    With :math:`G \sim \mathcal N(0,1)` and real ``a``, ``b`` (and ``t``, ``s >= 0`` for
    :math:`\zeta`, by default ``t = b``, ``s = |a|``), the rows are, in order: the six items of
    :func:`lemma18` (items (i), (ii) and (vi) through the library's
    :func:`~slrlib.core.gaussian.expected_erf`, :func:`~slrlib.core.gaussian.expected_erf_prime`
    and :func:`~slrlib.core.gaussian.zeta_dt`, item (v) at ``b = 0``), Stein's lemma
    :math:`\mathbb E[G\operatorname{erf}(aG+b)] = a\,\mathbb E\operatorname{erf}'(aG+b)`,
    :math:`\mathbb E\operatorname{erf}(aG)^2 = \tfrac{2}{\pi}\arcsin\tfrac{2a^2}{1+2a^2}` and
    :math:`\zeta(t,s)` (Owen's T closed form). The numerical values come from
    :func:`gaussian_expectation` (adaptive quadrature).
    """
    a = check_real_scalar(a, "a")
    b = check_real_scalar(b, "b")
    t = b if t is None else check_real_scalar(t, "t")
    s = abs(a) if s is None else check_real_scalar(s, "s", minimum=0.0)
    erf, erfp, erfs = math.erf, _ERF_PRIME, _ERF_SECOND
    E = gaussian_expectation
    f = float
    closed = lemma18(a, b)
    x = lambda g: a * g + b  # noqa: E731
    return [
        IdentityCheck(
            "(i) E erf(aG+b)", f(expected_erf(a, b)), E(lambda g: erf(x(g)))
        ),
        IdentityCheck(
            "(ii) E erf'(aG+b)",
            f(expected_erf_prime(a, b)),
            E(lambda g: erfp(x(g))),
        ),
        IdentityCheck(
            "(iii) E erf''(aG+b)", closed["iii"], E(lambda g: erfs(x(g)))
        ),
        IdentityCheck(
            "(iv) E erf'(aG+b)^2", closed["iv"], E(lambda g: erfp(x(g)) ** 2)
        ),
        IdentityCheck(
            "(v) E[G erf(aG) erf'(aG)]",
            closed["v"],
            E(lambda g: g * erf(a * g) * erfp(a * g)),
        ),
        IdentityCheck(
            "(vi) E[erf erf'](aG+b)",
            0.5 * f(zeta_dt(b, abs(a))),
            E(lambda g: erf(x(g)) * erfp(x(g))),
        ),
        IdentityCheck(
            "Stein: E[G erf(aG+b)] = a E erf'(aG+b)",
            a * f(expected_erf_prime(a, b)),
            E(lambda g: g * erf(x(g))),
        ),
        IdentityCheck(
            "E erf(aG)^2 = (2/π) arcsin",
            f(expected_erf_sq_centered(a)),
            E(lambda g: erf(a * g) ** 2),
        ),
        IdentityCheck(
            "zeta(t,s) = E erf(t+sG)^2",
            f(zeta(t, s)),
            float(zeta_quadrature(t, s)),
        ),
    ]


class ZetaDerivativeChecks(NamedTuple):
    r"""Derivatives of :math:`\zeta` on a set of points: ``jax.grad`` against central differences of values.

    ``grad_t``, ``grad_s``, ``grad_tt``: from ``jax.grad`` of :func:`slrlib.core.gaussian.zeta`;
    ``formula_t``: :func:`slrlib.core.gaussian.zeta_dt`; ``fd_t``, ``fd_s``, ``fd_tt``: central
    finite differences of the closed-form *values* (step ``h``). The heat equation reads
    ``grad_s == s * grad_tt``; its independent version is ``fd_s == s * fd_tt``.
    """

    t: np.ndarray
    s: np.ndarray
    grad_t: np.ndarray
    formula_t: np.ndarray
    fd_t: np.ndarray
    grad_s: np.ndarray
    fd_s: np.ndarray
    grad_tt: np.ndarray
    fd_tt: np.ndarray


def zeta_derivative_checks(t, s, h: float = 1e-4) -> ZetaDerivativeChecks:
    r"""``jax.grad`` of :math:`\zeta` against central finite differences of its values.

    ``t`` and ``s`` broadcast (``s`` must exceed ``h`` so that ``s - h >= 0``). With a
    step ``h = 1e-4`` the first differences are accurate to about ``1e-9`` and the second
    to about ``1e-7`` (round-off ``1e-16 / h^2``).
    """
    h = check_real_scalar(h, "h", minimum=0.0, strict=True)
    t, s = np.broadcast_arrays(
        np.asarray(t, dtype=float), np.asarray(s, dtype=float)
    )
    if np.any(s < h):
        raise ValueError(
            f"s must be >= h = {h} for central differences in s, got {s}"
        )
    z = lambda tt, ss: np.asarray(zeta(tt, ss))  # noqa: E731
    g_t = jax.vmap(jax.grad(zeta, 0))
    g_s = jax.vmap(jax.grad(zeta, 1))
    g_tt = jax.vmap(jax.grad(jax.grad(zeta, 0), 0))
    tf, sf = jnp.asarray(t.ravel()), jnp.asarray(s.ravel())
    shape = t.shape
    r = lambda x: np.asarray(x).reshape(shape)  # noqa: E731
    return ZetaDerivativeChecks(
        t=t,
        s=s,
        grad_t=r(g_t(tf, sf)),
        formula_t=r(zeta_dt(tf, sf)),
        fd_t=(z(t + h, s) - z(t - h, s)) / (2 * h),
        grad_s=r(g_s(tf, sf)),
        fd_s=(z(t, s + h) - z(t, s - h)) / (2 * h),
        grad_tt=r(g_tt(tf, sf)),
        fd_tt=(z(t + h, s) - 2 * z(t, s) + z(t - h, s)) / h**2,
    )


# ---------------------------------------------------------------------------- directions
# ---------------------------------------------------------------------------- risk vs MC
@jax.jit
def _erf_attention_many(X, K, V, lams):
    # m predictors on the same samples: (b, L, d) x (m, d) x (m, d) x (m,) -> (b, m)
    return jax.vmap(erf_attention, in_axes=(None, 0, 0, 0), out_axes=-1)(
        X, K, V, lams
    )


_risk_from_overlaps_jit = jax.jit(risk_from_overlaps, static_argnums=(6,))


class RiskComparison(NamedTuple):
    """Closed form and Monte Carlo at ``m`` points ``(k, v, lam)``: overlaps, values, z-scores."""

    labels: tuple
    overlaps: Overlaps
    lam: np.ndarray
    closed_form: np.ndarray
    monte_carlo: MonteCarloEstimate

    @property
    def z(self) -> np.ndarray:
        """``(Monte Carlo mean - closed form) / standard error``."""
        return self.monte_carlo.z_score(self.closed_form)

    def rows(self, prefix: Sequence = ()) -> list[list]:
        """One row per point: ``*prefix, label, lam, kappa, nu, theta, eta, rho, closed, MC mean ± SE, z``."""
        ov, mc = self.overlaps, self.monte_carlo
        return [
            [
                *prefix,
                self.labels[i],
                float(self.lam[i]),
                *(float(np.asarray(x)[i]) for x in ov),
                float(self.closed_form[i]),
                f"{float(mc.mean[i]):.5f} ± {float(mc.stderr[i]):.5f}",
                float(self.z[i]),
            ]
            for i in range(len(self.labels))
        ]

    def overlap_rows(self, names: Sequence[str]) -> list[list]:
        """The points, one row each (:data:`OVERLAP_HEADERS`): ``name, label, kappa, nu, theta, eta, rho``.

        ``names`` gives each point a short name (``"A1"``) that :meth:`value_rows` repeats.
        """
        return [
            [
                names[i],
                self.labels[i],
                *(float(np.asarray(x)[i]) for x in self.overlaps),
            ]
            for i in range(len(names))
        ]

    def value_rows(self, names: Sequence[str]) -> list[list]:
        """The values, one row per point (:data:`VALUE_HEADERS`): ``name, lam, closed form, MC mean ± SE, z``."""
        mc = self.monte_carlo
        return [
            [
                names[i],
                float(self.lam[i]),
                float(self.closed_form[i]),
                f"{float(mc.mean[i]):.5f} ± {float(mc.stderr[i]):.5f}",
                float(self.z[i]),
            ]
            for i in range(len(names))
        ]


#: Columns of :meth:`RiskComparison.overlap_rows` and their formats for :func:`slrlib.book.display.table`.
OVERLAP_HEADERS = ("", "point", "κ", "ν", "θ", "η", "ρ")
OVERLAP_FORMATS = ("", "", "+.2f", "+.2f", "+.2f", "+.2f", "+.2f")
#: Columns of :meth:`RiskComparison.value_rows` and their formats.
VALUE_HEADERS = ("", "λ", "closed form", "Monte Carlo ± SE", "z")
VALUE_FORMATS = ("", ".3g", ".5f", "", "+.2f")


def points_from_specs(specs, k_star, v_star, key):
    r"""Parameter points ``(k, v, lam)`` from short descriptions, for :func:`closed_form_vs_monte_carlo`.

    ``specs`` is a sequence of ``(kind, lam)`` where ``kind`` is ``"oracle"``
    (:math:`(k^\star, v^\star)`), ``"sphere"`` (uniform on the sphere),
    ``"manifold"`` (a random point of :math:`\mathcal M`, :func:`~slrlib.core.geometry.manifold_directions`)
    or a tuple of five overlaps ``(kappa, nu, theta, eta, rho)``
    (:func:`~slrlib.core.geometry.directions_with_overlaps`). Each random point uses its own sub-key.

    Returns ``(labels, K, V, lams)`` with ``K``, ``V`` of shape (m, d) and ``lams`` (m,).
    """
    k_star = jnp.asarray(k_star, dtype=float)
    v_star = jnp.asarray(v_star, dtype=float)
    key = check_key(key)
    labels, ks, vs, lams = [], [], [], []
    for i, spec in enumerate(specs):
        try:
            kind, lam = spec
        except (TypeError, ValueError) as err:
            raise ValueError(
                f"each spec must be a pair (kind, lam), got {spec!r}"
            ) from err
        sub = jax.random.fold_in(key, i)
        if isinstance(kind, str) and kind == "oracle":
            k, v, label = k_star, v_star, "oracle"
        elif isinstance(kind, str) and kind == "sphere":
            k, v = uniform_directions(sub, k_star.shape[0])
            label = "uniform on sphere"
        elif isinstance(kind, str) and kind == "manifold":
            k, v = manifold_directions(sub, k_star, v_star)
            label = "random on M"
        elif not isinstance(kind, str) and len(kind) == 5:
            k, v = directions_with_overlaps(*kind, k_star, v_star, sub)
            label = "prescribed overlaps"
        else:
            raise ValueError(
                f"kind must be 'oracle', 'sphere', 'manifold' or five overlaps, got {kind!r}"
            )
        labels.append(label)
        ks.append(k)
        vs.append(v)
        lams.append(check_real_scalar(lam, "lam", minimum=0.0))
    return tuple(labels), jnp.stack(ks), jnp.stack(vs), jnp.asarray(lams)


def closed_form_vs_monte_carlo(
    task: SLRTask,
    k_star,
    v_star,
    K,
    V,
    lams,
    key,
    n_samples: int,
    batch_size: int | None = None,
    labels: Sequence[str] | None = None,
) -> RiskComparison:
    r"""The risk :math:`\mathcal R_\lambda(k, v)` of the erf-attention predictor (3) at ``m`` points,
    in closed form (the formula of :func:`slrlib.population_risk`, jit-compiled) and by Monte Carlo (:func:`slrlib.monte_carlo_risk`).

    ``K``, ``V``: unit vectors of shape (m, d); ``lams``: shape (m,) (or a scalar). All ``m``
    predictors are scored on the *same* ``n_samples`` draws of the task (so their errors are
    correlated, but each z-score is valid on its own).
    """
    if not isinstance(task, SLRTask):
        raise ValueError(f"task must be an SLRTask, got {type(task).__name__}")
    k_star, v_star = check_directions(k_star, v_star, task.d)
    K = task.check_parameter_vector(K, "K")
    V = task.check_parameter_vector(V, "V")
    if K.ndim != 2 or K.shape != V.shape:
        raise ValueError(
            f"K and V must both have shape (m, d), got {K.shape} and {V.shape}"
        )
    m = K.shape[0]
    lams = jnp.broadcast_to(jnp.asarray(lams, dtype=float), (m,))
    if not bool(jnp.all(jnp.isfinite(lams) & (lams >= 0))):
        raise ValueError(
            f"lams must be finite and >= 0, got {np.asarray(lams)}"
        )
    labels = (
        tuple(f"point {i}" for i in range(m))
        if labels is None
        else tuple(labels)
    )
    if len(labels) != m:
        raise ValueError(
            f"labels must have one entry per point ({m}), got {len(labels)}"
        )
    ov = overlaps(K, V, k_star, v_star)
    # Same formula as slrlib.population_risk (inputs validated above), compiled once per call
    # rather than op by op.
    closed = np.asarray(_risk_from_overlaps_jit(*ov, lams, task))
    est = monte_carlo_risk(
        lambda X: _erf_attention_many(X, K, V, lams),
        task,
        k_star,
        v_star,
        key,
        n_samples=n_samples,
        batch_size=batch_size,
    )
    ov = Overlaps(*(np.asarray(x) for x in ov))
    return RiskComparison(
        labels=labels,
        overlaps=ov,
        lam=np.asarray(lams),
        closed_form=closed,
        monte_carlo=est,
    )


# ---------------------------------------------------------------------------- risk by quadrature
class QuadratureRisk(NamedTuple):
    """The risk by quadrature (:func:`risk_by_quadrature`) and a bound on its numerical error.

    ``abserr`` propagates the error estimates that ``scipy.integrate.quad`` returns for each
    one-dimensional integral through the (polynomial) combination that gives the risk.
    """

    value: float
    abserr: float


_QUAD_EPSABS = 1e-15
_QUAD_EPSREL = 1e-13


def _gauss_integral(
    f: Callable[[float], float], breaks: Sequence[float]
) -> tuple[float, float]:
    # \int f(x) phi(x) dx over the real line, split at 0 and at the given break points.
    w = lambda x: f(x) * math.exp(-0.5 * x * x) / _SQRT_2PI  # noqa: E731
    pts = sorted(
        {
            0.0,
            *(float(b) for b in breaks if math.isfinite(b) and abs(b) < 40.0),
        }
    )
    edges = [-np.inf, *pts, np.inf]
    value = err = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        v, e = integrate.quad(
            w, a, b, epsabs=_QUAD_EPSABS, epsrel=_QUAD_EPSREL, limit=400
        )
        value += v
        err += e
    return value, err


def risk_by_quadrature(
    kappa: float,
    nu: float,
    theta: float,
    eta: float,
    rho: float,
    lam: float,
    task: SLRTask,
) -> QuadratureRisk:
    r"""The risk :math:`\mathcal R_\lambda` at five overlaps, by one-dimensional Gaussian quadrature.

    An independent evaluation of Theorem 1: it uses Gaussian conditioning and adaptive
    quadrature only, none of the erf identities (Lemma 18) from which the closed form of
    Proposition 15 (:func:`slrlib.risk_from_overlaps`) is assembled.

    **Derivation.** Condition on :math:`J_0 = j` and write, as in the proof of Theorem 1,
    :math:`U = Z_j^\top v^\star`, :math:`V = Z_j^\top k`, :math:`W = Z_j^\top v` for the relevant
    token (unit variances, :math:`\operatorname{Cov}(U, V) = \eta`, :math:`\operatorname{Cov}(U, W) = \nu`,
    :math:`\operatorname{Cov}(V, W) = \rho`) and :math:`(A, B) = (Z_\ell^\top k, Z_\ell^\top v)` for a noise
    token (correlation :math:`\rho`). The error is :math:`R + \xi - \sum_{\ell \ne j} S_\ell` with
    :math:`R = \gamma U - e(V)\,(q\theta + \gamma W)`, :math:`e(x) = \operatorname{erf}(\lambda(q\kappa + \gamma x))`
    (the weight of the relevant token, a function of its attention score) and
    :math:`S_\ell = \operatorname{erf}(\lambda A_\ell)B_\ell`; the three parts are independent. So

    .. math::

        \mathcal R_\lambda = \varepsilon^2 + \mathbb E R^2 - 2(L-1)\,\mathbb E R\;\mathbb E S
        + (L-1)\,\mathbb E S^2 + (L-1)(L-2)\,(\mathbb E S)^2 .

    Given :math:`V = x`, :math:`(U, W)` is Gaussian with means :math:`(\eta x, \rho x)`, variances
    :math:`1 - \eta^2`, :math:`1 - \rho^2` and covariance :math:`\nu - \eta\rho`; so
    :math:`\mathbb E[R \mid V = x] = m(x) = \gamma\eta x - e(x)(q\theta + \gamma\rho x)` and
    :math:`\operatorname{Var}[R \mid V = x] = \gamma^2(1 - \eta^2) - 2\gamma^2 e(x)(\nu - \eta\rho)
    + \gamma^2 e(x)^2(1 - \rho^2)`, and :math:`\mathbb E R = \mathbb E\, m(G)`,
    :math:`\mathbb E R^2 = \mathbb E[m(G)^2 + \operatorname{Var}[R \mid V = G]]`. Likewise, given
    :math:`A = a`, :math:`B \sim \mathcal N(\rho a, 1 - \rho^2)`, so
    :math:`\mathbb E S = \rho\,\mathbb E[G\operatorname{erf}(\lambda G)]` and
    :math:`\mathbb E S^2 = \mathbb E[\operatorname{erf}(\lambda G)^2(\rho^2G^2 + 1 - \rho^2)]`. Each of the four
    expectations over :math:`G \sim \mathcal N(0, 1)` is computed by ``scipy.integrate.quad``
    (relative tolerance ``1e-13``), split at 0 and at the centre :math:`-q\kappa/\gamma` of the
    relevant token's erf step.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : float
        The five overlaps, in :math:`[-1, 1]`.
    lam : float
        Inverse temperature :math:`\lambda \ge 0`.
    task : SLRTask
        The task (:math:`d, L, \gamma, \varepsilon`; the law of :math:`J_0` plays no role).

    Returns
    -------
    QuadratureRisk
        ``value`` and ``abserr``, an upper estimate of the quadrature error (from QUADPACK's
        error estimates, propagated to the risk).

    Raises
    ------
    ValueError
        When an overlap is not a finite number in :math:`[-1, 1]`, ``lam`` is negative or not
        finite, or ``task`` is not an :class:`SLRTask`.

    Examples
    --------
    >>> from slrlib import SLRTask, oracle_risk
    >>> task = SLRTask(d=400, L=10)
    >>> r = risk_by_quadrature(1.0, 1.0, 0.0, 0.0, 0.0, 0.1, task)
    >>> abs(r.value - float(oracle_risk(0.1, task))) < 1e-12
    True
    """
    if not isinstance(task, SLRTask):
        raise ValueError(f"task must be an SLRTask, got {type(task).__name__}")
    ov = []
    for x, name in (
        (kappa, "kappa"),
        (nu, "nu"),
        (theta, "theta"),
        (eta, "eta"),
        (rho, "rho"),
    ):
        x = check_real_scalar(x, name)
        if abs(x) > 1.0:
            raise ValueError(f"{name} must lie in [-1, 1], got {x!r}")
        ov.append(x)
    kappa, nu, theta, eta, rho = ov
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    q, g, L, eps = task.q, task.gamma, task.L, task.eps

    def e(x):
        return math.erf(lam * (q * kappa + g * x))

    def m(x):
        return g * eta * x - e(x) * (q * theta + g * rho * x)

    def second_moment(x):
        ex = e(x)
        var = (
            g
            * g
            * (
                (1.0 - eta * eta)
                - 2.0 * ex * (nu - eta * rho)
                + ex * ex * (1.0 - rho * rho)
            )
        )
        return m(x) ** 2 + var

    step = [-q * kappa / g] if lam > 0 else []
    r1, e_r1 = _gauss_integral(m, step)
    r2, e_r2 = _gauss_integral(second_moment, step)
    n1, e_n1 = _gauss_integral(lambda a: a * math.erf(lam * a), [])
    n1, e_n1 = rho * n1, abs(rho) * e_n1
    n2, e_n2 = _gauss_integral(
        lambda a: (
            math.erf(lam * a) ** 2 * (rho * rho * a * a + 1.0 - rho * rho)
        ),
        [],
    )
    value = (
        eps**2
        + r2
        - 2.0 * (L - 1) * r1 * n1
        + (L - 1) * n2
        + (L - 1) * (L - 2) * n1 * n1
    )
    abserr = (
        e_r2
        + 2.0 * (L - 1) * (abs(n1) * e_r1 + abs(r1) * e_n1)
        + (L - 1) * e_n2
        + 2.0 * (L - 1) * (L - 2) * abs(n1) * e_n1
    )
    return QuadratureRisk(float(value), float(abserr))


def prop15_terms(
    kappa: float,
    nu: float,
    theta: float,
    eta: float,
    rho: float,
    lam: float,
    task: SLRTask,
) -> dict[str, float]:
    r"""The terms of Proposition 15 (eq. (8) of the paper, the closed-form risk), one by one.

    The expression of :func:`slrlib.risk_from_overlaps` split into its fourteen additive
    terms (with :math:`q = \sqrt{d/2}`, :math:`s = \lambda\gamma`, :math:`c_2 = 1 + 2s^2`,
    :math:`c_4 = 1 + 4s^2`, :math:`a = \lambda q\kappa/\sqrt{c_2}`,
    :math:`C = 2\lambda/\sqrt{\pi(1 + 2\lambda^2)}`), evaluated in plain ``math``/SciPy.
    Their sum is the closed-form risk; each one's size says how large an error a 1 % slip in
    that term would make. The keys name the terms as they are printed in the chapter.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : float
        The five overlaps.
    lam : float
        Inverse temperature :math:`\lambda \ge 0`.
    task : SLRTask
        The task.

    Returns
    -------
    dict of str to float
        Term name to value, in the order of the formula.

    Raises
    ------
    ValueError
        When an argument is not a finite number, ``lam < 0``, or ``task`` is not an
        :class:`SLRTask`.
    """
    if not isinstance(task, SLRTask):
        raise ValueError(f"task must be an SLRTask, got {type(task).__name__}")
    kappa, nu, theta, eta, rho = (
        check_real_scalar(x, n)
        for x, n in (
            (kappa, "kappa"),
            (nu, "nu"),
            (theta, "theta"),
            (eta, "eta"),
            (rho, "rho"),
        )
    )
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    q, g2, L, eps = task.q, task.gamma**2, task.L, task.eps
    s = lam * task.gamma
    c2, c4 = 1.0 + 2.0 * s * s, 1.0 + 4.0 * s * s
    a = lam * q * kappa / math.sqrt(c2)
    C = 2.0 * lam / math.sqrt(math.pi * (1.0 + 2.0 * lam * lam))
    erfp = lambda x: 2.0 / math.sqrt(math.pi) * math.exp(-x * x)  # noqa: E731
    erfs = lambda x: -2.0 * x * erfp(x)  # noqa: E731
    zeta_ts = float(zeta(lam * q * kappa, s))
    zeta_0 = (
        2.0 / math.pi * math.asin(2.0 * lam * lam / (1.0 + 2.0 * lam * lam))
    )
    mixed = (
        4.0
        * lam
        * g2
        * q
        / math.sqrt(c2)
        * math.erf(a / math.sqrt(c4))
        * erfp(a)
    )
    return {
        "ε²": eps**2,
        "γ²": g2,
        "-2γ²ν erf(a)": -2.0 * g2 * nu * math.erf(a),
        "-2λγ²qηθ/√c₂ erf'(a)": -2.0
        * lam
        * g2
        * q
        * eta
        * theta
        / math.sqrt(c2)
        * erfp(a),
        "-2λ²γ⁴ηρ/c₂ erf''(a)": -2.0
        * lam**2
        * g2**2
        * eta
        * rho
        / c2
        * erfs(a),
        "(q²θ² + γ²) ζ(λqκ, s)": (q * q * theta * theta + g2) * zeta_ts,
        "4λγ²q/√c₂ θρ erf(a/√c₄) erf'(a)": mixed * theta * rho,
        "-4λ³γ⁴qρ²κ/c₂^{3/2} erf(a/√c₄) erf'(a)": -mixed
        * lam**2
        * g2
        * rho**2
        * kappa
        / c2,
        "4λ²γ⁴ρ²/(√π c₂√c₄) erf'(√2λqκ/√c₄)": 4.0
        * lam**2
        * g2**2
        * rho**2
        / (math.sqrt(math.pi) * c2 * math.sqrt(c4))
        * erfp(math.sqrt(2.0) * lam * q * kappa / math.sqrt(c4)),
        "(L-1) ζ(0, λ)": (L - 1) * zeta_0,
        "(L-1) 8λ²ρ²/(π(1+2λ²)√(1+4λ²))": (L - 1)
        * 8.0
        * lam**2
        * rho**2
        / (math.pi * (1.0 + 2.0 * lam**2) * math.sqrt(1.0 + 4.0 * lam**2)),
        "(L-1)(L-2) C²ρ²": (L - 1) * (L - 2) * C * C * rho * rho,
        "2(L-1) Cρ qθ erf(a)": 2.0
        * (L - 1)
        * C
        * rho
        * q
        * theta
        * math.erf(a),
        "2(L-1) Cρ λγ²ρ/√c₂ erf'(a)": 2.0
        * (L - 1)
        * C
        * rho
        * lam
        * g2
        * rho
        / math.sqrt(c2)
        * erfp(a),
    }


# ------------------------------------------------------- Proposition 15, expectation by expectation
class Prop15Expectation(NamedTuple):
    """One Gaussian expectation in the proof of Proposition 15: Lemma 18's value and a Monte Carlo estimate."""

    name: str
    closed_form: float
    mc_mean: float
    mc_stderr: float

    @property
    def z(self) -> float:
        return (self.mc_mean - self.closed_form) / self.mc_stderr


def _check_overlaps(kappa, nu, theta, eta, rho):
    out = []
    for x, name in (
        (kappa, "kappa"),
        (nu, "nu"),
        (theta, "theta"),
        (eta, "eta"),
        (rho, "rho"),
    ):
        x = check_real_scalar(x, name)
        if abs(x) > 1.0:
            raise ValueError(f"{name} must lie in [-1, 1], got {x!r}")
        out.append(x)
    return out


def _prop15_closed(kappa, nu, theta, eta, rho, lam, task) -> dict[str, float]:
    # The eight expectations of the proof, from Stein's lemma and Lemma 18 only.
    q, g = task.q, task.gamma
    s, b = lam * g, lam * q * kappa  # e(V) = erf(b + sV)
    c2 = 1.0 + 2.0 * s * s
    rel, noise = lemma18(s, b), lemma18(lam, 0.0)
    z_rel = float(zeta(b, s))
    z_0 = float(expected_erf_sq_centered(lam))
    return {
        "E[e(V)]": rel["i"],
        "E[W e(V)]": rho * s * rel["ii"],
        "E[U e(V)]": eta * s * rel["ii"],
        "E[U W e(V)]": nu * rel["i"] + eta * rho * s * s * rel["iii"],
        "E[e(V)²]": z_rel,
        "E[W e(V)²]": 2.0 * rho * s * rel["vi"],
        "E[W² e(V)²]": z_rel
        + 2.0 * rho * rho * s * s / c2 * (rel["iv"] - 2.0 * b * rel["vi"]),
        "E[erf(λA) B]": rho * lam * noise["ii"],
        "E[erf(λA)² B²]": z_0 + 2.0 * lam * rho * rho * noise["v"],
    }


def prop15_expectations(
    kappa: float,
    nu: float,
    theta: float,
    eta: float,
    rho: float,
    lam: float,
    task: SLRTask,
    seed: int = 0,
    n: int = 1_000_000,
) -> list[Prop15Expectation]:
    r"""The Gaussian expectations that make up Proposition 15, by Lemma 18 and by Monte Carlo.

    In the notation of the chapter's proof, :math:`(U, V, W)` is a centred Gaussian vector
    with unit variances and covariances :math:`\operatorname{Cov}(U,V) = \eta`,
    :math:`\operatorname{Cov}(U,W) = \nu`, :math:`\operatorname{Cov}(V,W) = \rho`;
    :math:`e(V) = \operatorname{erf}(\lambda q\kappa + \lambda\gamma V)`; :math:`(A, B)` is a
    centred Gaussian pair with unit variances and correlation :math:`\rho`. Each expectation
    is computed twice: in closed form, by Stein's lemma and Lemma 18 (:func:`lemma18`), and by
    plain Monte Carlo over ``n`` draws of these vectors (NumPy generator ``seed``), which uses
    neither. The overlaps must be those of an actual pair :math:`(k, v)` (the covariance must
    be positive semi-definite).

    Returns
    -------
    list of Prop15Expectation
        In the order ``E[e(V)]``, ``E[W e(V)]``, ``E[U e(V)]``, ``E[U W e(V)]``, ``E[e(V)²]``,
        ``E[W e(V)²]``, ``E[W² e(V)²]``, ``E[erf(λA) B]``, ``E[erf(λA)² B²]``.

    Raises
    ------
    ValueError
        When an overlap is not in :math:`[-1, 1]`, the covariance is not positive
        semi-definite, ``lam < 0``, ``n < 2`` or ``task`` is not an :class:`SLRTask`.
    """
    if not isinstance(task, SLRTask):
        raise ValueError(f"task must be an SLRTask, got {type(task).__name__}")
    kappa, nu, theta, eta, rho = _check_overlaps(kappa, nu, theta, eta, rho)
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    if not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    cov = np.array([[1.0, eta, nu], [eta, 1.0, rho], [nu, rho, 1.0]])
    w, vecs = np.linalg.eigh(cov)
    if w.min() < -1e-12:
        raise ValueError(
            f"the overlaps give a covariance of (U, V, W) that is not positive semi-definite: {cov}"
        )
    root = vecs * np.sqrt(np.clip(w, 0.0, None))  # cov = root @ root.T
    rng = np.random.default_rng(seed)
    U, V, W = root @ rng.standard_normal((3, n))
    A = rng.standard_normal(n)
    B = rho * A + math.sqrt(1.0 - rho * rho) * rng.standard_normal(n)
    from scipy.special import erf as _erf

    e = _erf(lam * (task.q * kappa + task.gamma * V))
    ea = _erf(lam * A)
    samples = {
        "E[e(V)]": e,
        "E[W e(V)]": W * e,
        "E[U e(V)]": U * e,
        "E[U W e(V)]": U * W * e,
        "E[e(V)²]": e * e,
        "E[W e(V)²]": W * e * e,
        "E[W² e(V)²]": W * W * e * e,
        "E[erf(λA) B]": ea * B,
        "E[erf(λA)² B²]": ea * ea * B * B,
    }
    closed = _prop15_closed(kappa, nu, theta, eta, rho, lam, task)
    return [
        Prop15Expectation(
            name,
            closed[name],
            float(x.mean()),
            float(x.std(ddof=1) / math.sqrt(n)),
        )
        for name, x in samples.items()
    ]


def prop15_assembled(
    kappa: float,
    nu: float,
    theta: float,
    eta: float,
    rho: float,
    lam: float,
    task: SLRTask,
) -> dict[str, float]:
    r"""The four parts of the risk, assembled from the expectations of :func:`prop15_expectations`.

    With :math:`R = \gamma U - e(V)(q\theta + \gamma W)` (the relevant token's error) and
    :math:`S = \operatorname{erf}(\lambda A)B` (one noise token's output),
    :math:`\mathcal R_\lambda = \varepsilon^2 + \mathbb E R^2 + (L-1)\mathbb E S^2
    + (L-1)(L-2)(\mathbb E S)^2 - 2(L-1)\mathbb E R\,\mathbb E S`. Returns these four parts
    (keys ``"relevant"``, ``"noise"``, ``"noise pairs"``, ``"cross"``) computed from the
    closed forms of the expectations (Stein's lemma and Lemma 18), to be compared with the
    groups of terms of :func:`prop15_terms`.
    """
    if not isinstance(task, SLRTask):
        raise ValueError(f"task must be an SLRTask, got {type(task).__name__}")
    kappa, nu, theta, eta, rho = _check_overlaps(kappa, nu, theta, eta, rho)
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    E = _prop15_closed(kappa, nu, theta, eta, rho, lam, task)
    q, g, L = task.q, task.gamma, task.L
    ER2 = (
        g * g
        - 2.0 * g * q * theta * E["E[U e(V)]"]
        - 2.0 * g * g * E["E[U W e(V)]"]
        + q * q * theta * theta * E["E[e(V)²]"]
        + 2.0 * q * theta * g * E["E[W e(V)²]"]
        + g * g * E["E[W² e(V)²]"]
    )
    ER = -q * theta * E["E[e(V)]"] - g * E["E[W e(V)]"]
    ES, ES2 = E["E[erf(λA) B]"], E["E[erf(λA)² B²]"]
    return {
        "relevant": ER2,
        "noise": (L - 1) * ES2,
        "noise pairs": (L - 1) * (L - 2) * ES * ES,
        "cross": -2.0 * (L - 1) * ER * ES,
    }
