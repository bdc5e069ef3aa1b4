r"""Computations behind chapter 16 ("The dynamics quantified"): how long the reduced PGD of
Marion et al. (2025, Section 5) spends near the saddle, and how fast it then converges to the oracle.

The reduced map :math:`F` of Lemma 7 (:func:`slrlib.training.pgd.reduced_map`) is linearised at
its two interesting fixed points:

* the saddle :math:`(0, 0)` (Proposition 12): :math:`DF(0, 0) = I - \alpha\nabla^2\mathcal R_\lambda(0, 0)`,
  with multipliers :math:`1 - \alpha\mu_- > 1 > 1 - \alpha\mu_+` (:func:`saddle_rates`); from a
  start at distance :math:`r_0` the escape takes about
  :math:`\log(R/r_0)/\log(1 - \alpha\mu_-)` steps (:func:`escape_time_linear`, exact first
  passage of the linear map, against :func:`escape_time_pgd`, the nonlinear map);
* the oracle :math:`(1, 1)` in angle coordinates :math:`\kappa = \cos\varphi`, :math:`\nu = \cos\psi`:
  :math:`\varphi_{t+1} \approx (1 - \alpha H_{\varphi\varphi})\varphi_t`,
  :math:`\psi_{t+1} \approx (1 - \alpha H_{\psi\psi})\psi_t` with :math:`H` the angle Hessian
  (:func:`slrlib.training.pgd.riemannian_hessian`, diagonal at the corners): ν aligns fast, κ
  slowly (:func:`timescales_at_oracle`, against the rates fitted on trajectories,
  :func:`fit_decay_rates`);
* the oracle across :math:`\mathcal M`: one step of full PGD is :math:`I - \alpha H_\lambda` in the rotation
  angles of the plane :math:`\operatorname{span}\{k^\star, v^\star\}` (:func:`oracle_transverse`, with chapter 8's
  plane Hessian), stable iff :math:`0 < \alpha\mu_{\min}` and :math:`\alpha\mu_{\max} < 2`; the starts
  :func:`plane_pair` off :math:`\mathcal M` and the measured basin of attraction off :math:`\mathcal M`
  (:func:`off_manifold_basin`, full PGD).

Everything is in float64 (``import slrlib`` enables x64).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from slrlib.book.ch08_beyond import oracle_plane_hessian
from slrlib.core.gaussian import erf_prime, zeta
from slrlib.core.task import SLRTask, check_task
from slrlib.training.pgd import (
    manifold_hessian,
    pgd,
    pgd_dense,
    reduced_map_kernel,
    reduced_pgd,
    riemannian_hessian,
)
from slrlib.validation import check_key, check_positive_int, check_real_scalar

__all__ = [
    "DEFAULT_DIRECTION",
    "DecayFit",
    "LinearEscape",
    "MeasuredMultiplier",
    "OffManifoldBasin",
    "OracleTimescales",
    "OracleTransverse",
    "PGDEscape",
    "SaddleRates",
    "SwapRace",
    "escape_time_linear",
    "escape_time_pgd",
    "fit_decay_rates",
    "measured_oracle_multiplier",
    "off_manifold_basin",
    "oracle_transverse",
    "plane_pair",
    "saddle_rates",
    "saddle_transverse_hessian",
    "swap_race",
    "timescales_at_oracle",
    "uniform_start_overlaps",
]

#: The default start direction: the diagonal :math:`\kappa = \nu`, which has components along both
#: eigenvectors of the saddle (so the stable part of the bound is exercised).
DEFAULT_DIRECTION = (1.0 / math.sqrt(2.0), 1.0 / math.sqrt(2.0))


# --------------------------------------------------------------------------- validation
def _check_common(lam, alpha, task):
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    alpha = check_real_scalar(alpha, "alpha", minimum=0.0, strict=True)
    return lam, alpha, task


def _check_direction(direction) -> np.ndarray:
    try:
        u = np.asarray(direction, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"direction must be a real vector of shape (2,), got {direction!r}"
        ) from err
    if u.shape != (2,):
        raise ValueError(
            f"direction must have shape (2,), got shape {u.shape}"
        )
    if not np.all(np.isfinite(u)):
        raise ValueError(f"direction must be finite, got {u.tolist()}")
    norm = float(np.hypot(*u))
    if not norm > 0.0:
        raise ValueError(f"direction must be non-zero, got {u.tolist()}")
    return u / norm


# --------------------------------------------------------------------------- the saddle
class SaddleRates(NamedTuple):
    r"""Linearisation of :math:`F` at the saddle (see :func:`saddle_rates`).

    Fields: ``mu_minus < 0 < mu_plus`` (Hessian eigenvalues); ``expanding`` :math:`= 1 - \alpha\mu_-`
    and ``contracting`` :math:`= 1 - \alpha\mu_+` (eigenvalues of :math:`DF(0, 0)`); ``unstable`` and
    ``stable``, their unit eigenvectors (shape (2,), orthogonal; ``unstable`` has :math:`\nu > 0`,
    ``stable`` has :math:`\kappa > 0`); ``hessian`` (2 × 2) and ``jacobian`` :math:`= I - \alpha H`.
    """

    mu_minus: float
    mu_plus: float
    expanding: float
    contracting: float
    unstable: np.ndarray
    stable: np.ndarray
    hessian: np.ndarray
    jacobian: np.ndarray


def saddle_rates(lam: float, alpha: float, task: SLRTask) -> SaddleRates:
    r"""Eigenvalues and eigenvectors of :math:`DF(0, 0) = I - \alpha\nabla^2\mathcal R_\lambda(0, 0)`
    (Proposition 12).

    The Hessian at the saddle is :math:`\begin{pmatrix} h & b\\ b & 0\end{pmatrix}` with
    :math:`h = \partial^2_\kappa\mathcal R(0, 0)` and :math:`b = -2\gamma^2\operatorname{erf}'(0)\lambda q/\sqrt{c_2}`
    (:math:`q = \sqrt{d/2}`, :math:`c_2 = 1 + 2\lambda^2\gamma^2`; chapter 7), so

    .. math::

        \mu_\pm = \frac{h \pm \sqrt{h^2 + 4b^2}}{2}, \qquad \mu_- < 0 < \mu_+,

    and :math:`DF(0, 0)` has the same (orthonormal) eigenvectors with eigenvalues
    :math:`1 - \alpha\mu_- > 1` (expanding) and :math:`1 - \alpha\mu_+` (contracting, in
    :math:`(0, 1)` iff :math:`\alpha < 1/\mu_+`). The Hessian is ``jax.hessian`` of the closed-form
    risk (:func:`slrlib.training.pgd.manifold_hessian`); the eigenvalues use the formula above
    in its cancellation-free form :math:`\mu_- = -2b^2/(h + \sqrt{h^2 + 4b^2})` when :math:`h > 0`.

    Parameters
    ----------
    lam : float
        Inverse temperature :math:`\lambda > 0`.
    alpha : float
        Step size :math:`\alpha > 0`.
    task : SLRTask
        The task.

    Returns
    -------
    SaddleRates

    Raises
    ------
    ValueError
        When ``lam`` or ``alpha`` is not a real number ``> 0``, or the Hessian at :math:`(0, 0)` is
        not of saddle type (:math:`b = 0`, impossible for :math:`\lambda > 0`).
    """
    lam, alpha, task = _check_common(lam, alpha, task)
    H = manifold_hessian(0.0, 0.0, lam, task)
    h, b = float(H[0, 0]), float(0.5 * (H[0, 1] + H[1, 0]))
    if b == 0.0:
        raise ValueError(
            f"the Hessian at (0, 0) has no off-diagonal entry (lam={lam!r}): not a saddle"
        )
    root = math.sqrt(h * h + 4.0 * b * b)
    if h >= 0.0:
        mu_plus = 0.5 * (h + root)
        mu_minus = (
            -2.0 * b * b / (h + root)
        )  # = (h - root)/2 without cancellation
    else:
        mu_minus = 0.5 * (h - root)
        mu_plus = 2.0 * b * b / (root - h)
    # eigenvector of mu for [[h, b], [b, 0]]: (mu, b) up to scale (second row: b x = mu y)
    unstable = np.array([mu_minus, b]) / math.hypot(mu_minus, b)
    stable = np.array([mu_plus, b]) / math.hypot(mu_plus, b)
    unstable = unstable if unstable[1] > 0 else -unstable
    stable = stable if stable[0] > 0 else -stable
    jacobian = np.eye(2) - alpha * H
    return SaddleRates(
        mu_minus,
        mu_plus,
        1.0 - alpha * mu_minus,
        1.0 - alpha * mu_plus,
        unstable,
        stable,
        H,
        jacobian,
    )


class LinearEscape(NamedTuple):
    r"""First passage of the linearised map at the saddle (see :func:`escape_time_linear`).

    Fields (arrays over ``r0``): ``steps`` — the exact first step :math:`t^*` with :math:`|x_t| \ge R`;
    ``lower`` and ``upper`` — the bounds :math:`t_- \le t^* \le t_+`; ``log_ratio`` — the real number
    :math:`\log(R/|c_u|)/\log(1 - \alpha\mu_-)`; ``continuous`` — :math:`\log(R/r_0)/(\alpha|\mu_-|)`;
    ``c_unstable``, ``c_stable`` — the components of :math:`x_0` on the two eigenvectors.
    """

    steps: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    log_ratio: np.ndarray
    continuous: np.ndarray
    c_unstable: np.ndarray
    c_stable: np.ndarray


def _check_r0_radius(r0, radius, *, max_radius=None):
    radius = check_real_scalar(radius, "radius", minimum=0.0, strict=True)
    if max_radius is not None and radius > max_radius:
        raise ValueError(
            f"radius must lie in (0, {max_radius}], got {radius!r}"
        )
    try:
        r = np.atleast_1d(np.asarray(r0, dtype=float))
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"r0 must be real numbers in (0, radius={radius}), got {r0!r}"
        ) from err
    if r.ndim != 1 or r.size == 0:
        raise ValueError(
            f"r0 must be a scalar or a non-empty 1-d array, got shape {r.shape}"
        )
    if not np.all(np.isfinite(r)) or not np.all((r > 0.0) & (r < radius)):
        raise ValueError(
            f"r0 must lie in (0, radius={radius}), got {r.tolist()}"
        )
    return r, radius


def escape_time_linear(
    r0: ArrayLike,
    lam: float,
    alpha: float,
    task: SLRTask,
    radius: float,
    direction: ArrayLike = DEFAULT_DIRECTION,
) -> LinearEscape:
    r"""Exact escape time of the *linearised* map :math:`x_{t+1} = DF(0, 0)\,x_t` from :math:`x_0 = r_0 u`.

    Write :math:`x_0 = c_u e_u + c_s e_s` on the orthonormal eigenvectors of :func:`saddle_rates`,
    :math:`\Lambda_u = 1 - \alpha\mu_- > 1`, :math:`\Lambda_s = 1 - \alpha\mu_+` with
    :math:`|\Lambda_s| < 1` (i.e. :math:`\alpha\mu_+ < 2`). Then
    :math:`|x_t|^2 = c_u^2\Lambda_u^{2t} + c_s^2\Lambda_s^{2t}`, and

    * **upper bound** (:math:`|x_t| \ge |c_u|\Lambda_u^t`):
      :math:`t^* \le t_+ = \lceil \log(R/|c_u|)/\log\Lambda_u \rceil`;
    * **lower bound** (:math:`|x_t|^2 \le c_u^2\Lambda_u^{2t} + c_s^2`, as :math:`\Lambda_s^{2t} \le 1`):
      :math:`t^* \ge t_- = \lceil \log(\sqrt{R^2 - c_s^2}/|c_u|)/\log\Lambda_u \rceil` (:math:`|c_s| \le r_0 < R`).

    So when the stable component is negligible (:math:`c_s = 0`, or
    :math:`c_s^2/(2R^2) \ll \log\Lambda_u`) the first passage is exactly the ceiling of the log
    ratio, :math:`t^* = \lceil\log(R/|c_u|)/\log\Lambda_u\rceil`. In general
    :math:`t \mapsto |x_t|^2` is convex (a sum of exponentials) and below :math:`R^2` at
    :math:`t = 0`, so once above :math:`R^2` it stays there: :math:`t^*` is the first integer of
    :math:`[t_-, t_+]` where :math:`|x_t| \ge R`, found by checking them. The continuous-time
    approximation (gradient flow :math:`\dot x = -\nabla^2\mathcal R\,x` in time :math:`\alpha t`,
    :math:`|c_u| \approx r_0`) is :math:`\log(R/r_0)/(\alpha|\mu_-|)`; it is
    :math:`\log(R/r_0)/\log\Lambda_u` times :math:`\log(1 + \alpha|\mu_-|)/(\alpha|\mu_-|) = 1 - \alpha|\mu_-|/2 + \dots`
    (shorter, by about :math:`\tfrac12\log(R/r_0)` steps).

    Parameters
    ----------
    r0 : array_like
        Start distances, scalar or 1-d, each in :math:`(0, R)`.
    lam, alpha : float
        Inverse temperature and step size, ``> 0``, with :math:`\alpha\mu_+ < 2`.
    task : SLRTask
        The task.
    radius : float
        The escape radius :math:`R > 0`.
    direction : array_like, shape (2,)
        Start direction :math:`u` (normalised here); default the diagonal :math:`(1, 1)/\sqrt2`.

    Returns
    -------
    LinearEscape

    Raises
    ------
    ValueError
        When ``lam``, ``alpha`` or ``radius`` is not ``> 0``, ``r0`` is not in :math:`(0, R)`,
        ``direction`` is not a finite non-zero vector of shape (2,) or is (numerically) orthogonal to
        the unstable eigenvector, or :math:`\alpha\mu_+ \ge 2`.
    """
    rates = saddle_rates(lam, alpha, task)
    r, radius = _check_r0_radius(r0, radius)
    u = _check_direction(direction)
    if not abs(rates.contracting) < 1.0:
        raise ValueError(
            f"alpha must be < 2/mu_+ = {2.0 / rates.mu_plus:.6g} for a contracting stable "
            f"direction, got {alpha!r}"
        )
    cu, cs = float(u @ rates.unstable), float(u @ rates.stable)
    if abs(cu) < 1e-12:
        raise ValueError(
            f"direction must have a component along the unstable eigenvector "
            f"{rates.unstable.tolist()}, got {u.tolist()} (component {cu:.3g})"
        )
    c_u, c_s = r * cu, r * cs
    log_u = math.log(rates.expanding)
    log_ratio = np.log(radius / np.abs(c_u)) / log_u
    upper = np.ceil(log_ratio).astype(np.int64)
    lower = np.ceil(
        np.log(np.sqrt(radius**2 - c_s**2) / np.abs(c_u)) / log_u
    ).astype(np.int64)
    lower = np.maximum(lower, 0)
    steps = upper.copy()
    for i in range(r.size):
        for t in range(int(lower[i]), int(upper[i]) + 1):
            if (
                c_u[i] ** 2 * rates.expanding ** (2 * t)
                + c_s[i] ** 2 * rates.contracting ** (2 * t)
                >= radius**2
            ):
                steps[i] = t
                break
    continuous = np.log(radius / r) / (alpha * abs(rates.mu_minus))
    return LinearEscape(steps, lower, upper, log_ratio, continuous, c_u, c_s)


class PGDEscape(NamedTuple):
    """First passage of the nonlinear reduced map (see :func:`escape_time_pgd`).

    Fields: ``r0`` (n,); ``steps`` (n,), the first step with distance ``>= radius`` (``-1`` if not
    reached within ``max_steps``); ``kappa``, ``nu`` (n,), the point at that step.
    """

    r0: np.ndarray
    steps: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray


@jax.jit
def _escape_run(k0, n0, lam, alpha, d, gamma, radius2, max_steps):
    def cond(state):
        _, _, t, hit, _, _ = state
        return (t < max_steps) & jnp.any(hit < 0)

    def body(state):
        k, n, t, hit, kh, nh = state
        k, n = reduced_map_kernel(k, n, lam, alpha, d, gamma)
        t = t + 1
        new = (hit < 0) & (k * k + n * n >= radius2)
        return (
            k,
            n,
            t,
            jnp.where(new, t, hit),
            jnp.where(new, k, kh),
            jnp.where(new, n, nh),
        )

    hit0 = jnp.full(k0.shape, -1, dtype=jnp.int64)
    state = (
        k0,
        n0,
        jnp.asarray(0, dtype=jnp.int64),
        hit0,
        jnp.zeros_like(k0),
        jnp.zeros_like(n0),
    )
    _, _, _, hit, kh, nh = jax.lax.while_loop(cond, body, state)
    return hit, kh, nh


def escape_time_pgd(
    r0_values: ArrayLike,
    lam: float,
    alpha: float,
    task: SLRTask,
    radius: float,
    direction: ArrayLike = DEFAULT_DIRECTION,
    *,
    max_steps: int = 1_000_000,
) -> PGDEscape:
    r"""First step at which the *nonlinear* reduced map :math:`F` (Lemma 7), started at
    :math:`(\kappa_0, \nu_0) = r_0 u`, reaches distance :math:`\sqrt{\kappa_t^2 + \nu_t^2} \ge R` from the saddle.

    All starts run together in one compiled ``jax.lax.while_loop`` of
    :func:`~slrlib.training.pgd.reduced_map_kernel`, which stops when every start has escaped.
    Since :math:`F` is odd (:math:`F(-x) = -F(x)`), :math:`F(x) = DF(0,0)\,x + O(|x|^3)`: the
    escape time differs from the linear one (:func:`escape_time_linear`) by an amount that
    converges as :math:`r_0 \to 0` (the nonlinear last phase near :math:`R`), while both grow
    like :math:`\log(1/r_0)/\log(1 - \alpha\mu_-)`.

    Parameters
    ----------
    r0_values : array_like
        Start distances, scalar or 1-d, each in :math:`(0, R)`.
    lam, alpha : float
        Inverse temperature and step size, ``> 0``.
    task : SLRTask
        The task.
    radius : float
        Escape radius :math:`R \in (0, 1]` (the iterates stay in :math:`[-1, 1]^2` and converge to
        a corner, at distance :math:`\sqrt2`).
    direction : array_like, shape (2,)
        Start direction (normalised here); default :math:`(1, 1)/\sqrt2`.
    max_steps : int
        Give up after this many steps (``steps`` is then ``-1``).

    Returns
    -------
    PGDEscape

    Raises
    ------
    ValueError
        When ``lam``, ``alpha`` is not ``> 0``, ``radius`` is not in :math:`(0, 1]`, an ``r0`` is
        not in :math:`(0, R)`, ``direction`` is not a finite non-zero vector of shape (2,), or
        ``max_steps`` is not a positive integer.
    """
    lam, alpha, task = _check_common(lam, alpha, task)
    r, radius = _check_r0_radius(r0_values, radius, max_radius=1.0)
    u = _check_direction(direction)
    max_steps = check_positive_int(max_steps, "max_steps")
    k0, n0 = jnp.asarray(r * u[0]), jnp.asarray(r * u[1])
    hit, kh, nh = _escape_run(
        k0, n0, lam, alpha, float(task.d), task.gamma, radius**2, max_steps
    )
    return PGDEscape(r, np.asarray(hit), np.asarray(kh), np.asarray(nh))


# --------------------------------------------------------------------------- the oracle
class OracleTimescales(NamedTuple):
    r"""Linearisation of :math:`F` at the oracle :math:`(1, 1)` in angles (see :func:`timescales_at_oracle`).

    Fields: ``hessian`` (2 × 2, angle coordinates, diagonal); ``multiplier_kappa``
    :math:`= 1 - \alpha H_{\varphi\varphi}` and ``multiplier_nu`` :math:`= 1 - \alpha H_{\psi\psi}`
    (for the angles; :math:`1-\kappa` and :math:`1-\nu` contract by their squares);
    ``time_kappa``, ``time_nu`` :math:`= -1/\log(\text{multiplier})` in steps (``nan`` unless the
    multiplier lies in :math:`(0, 1)`).
    """

    hessian: np.ndarray
    multiplier_kappa: float
    multiplier_nu: float
    time_kappa: float
    time_nu: float


def _time(m: float) -> float:
    return -1.0 / math.log(m) if 0.0 < m < 1.0 else float("nan")


def timescales_at_oracle(
    lam: float, alpha: float, task: SLRTask
) -> OracleTimescales:
    r"""Contraction multipliers and characteristic times of :math:`F` at the oracle :math:`(1, 1)`.

    In angles :math:`\kappa = \cos\varphi`, :math:`\nu = \cos\psi` the map is exactly
    :math:`\varphi_{t+1} = \varphi_t - \arctan\big(-\alpha\,\partial_\kappa\mathcal R\,\sin\varphi_t\big)`
    (a rotation towards :math:`k^\star` of angle :math:`\arctan` of the step length; same for
    :math:`\psi`), so at :math:`(0, 0)` in angles its Jacobian is :math:`I - \alpha H` with :math:`H`
    the angle Hessian (:func:`~slrlib.training.pgd.riemannian_hessian`), diagonal there with
    :math:`H_{\varphi\varphi} = -\partial_\kappa\mathcal R(1, 1)` and
    :math:`H_{\psi\psi} = -\partial_\nu\mathcal R(1, 1) = 2\gamma^2\operatorname{erf}(a)`. Hence

    .. math::

        \varphi_{t+1} \approx m_\kappa\varphi_t,\quad \psi_{t+1} \approx m_\nu\psi_t,\qquad
        m = 1 - \alpha H_{\cdot\cdot},\qquad \tau = -1/\log m \approx 1/(\alpha H_{\cdot\cdot}).

    For the paper's task, :math:`H_{\psi\psi} \gg H_{\varphi\varphi}`: ν aligns fast, κ slowly.

    Parameters
    ----------
    lam, alpha : float
        Inverse temperature and step size, ``> 0``.
    task : SLRTask
        The task.

    Returns
    -------
    OracleTimescales

    Raises
    ------
    ValueError
        When ``lam`` or ``alpha`` is not a real number ``> 0``.
    """
    lam, alpha, task = _check_common(lam, alpha, task)
    H = riemannian_hessian(1.0, 1.0, lam, task)
    mk, mn = 1.0 - alpha * float(H[0, 0]), 1.0 - alpha * float(H[1, 1])
    return OracleTimescales(H, mk, mn, _time(mk), _time(mn))


def saddle_transverse_hessian(lam: float, task: SLRTask) -> np.ndarray:
    r"""Hessian of :math:`\mathcal R_\lambda` across :math:`\mathcal M` at the saddle, in the crossed overlaps.

    At :math:`\kappa = \nu = \rho = 0`, in the angles :math:`s` of :math:`k` turned towards
    :math:`v^\star` (:math:`\eta = \sin s`) and :math:`t` of :math:`v` turned towards :math:`k^\star`
    (:math:`\theta = \sin t`), proposition ``prop-dyn-saddle-transverse`` of chapter 16:

    .. math::

        \begin{pmatrix} 0 & B \\ B & D \end{pmatrix},\qquad
        B = -\frac{2\lambda\gamma^2 q\operatorname{erf}'(0)}{\sqrt{c_2}},\qquad
        D = 2q^2\zeta(0, \lambda\gamma),

    with :math:`q = \sqrt{d/2}` and :math:`c_2 = 1 + 2\lambda^2\gamma^2`. Its determinant is
    :math:`-B^2 < 0`: one eigenvalue :math:`h_-` is negative for every :math:`\lambda > 0`, and one
    PGD step multiplies the distance to :math:`\mathcal M` along its eigenvector by
    :math:`1 - \alpha h_- > 1`.

    Parameters
    ----------
    lam : float
        Inverse temperature, ``> 0``.
    task : SLRTask
        The task.

    Returns
    -------
    numpy.ndarray, shape (2, 2)

    Raises
    ------
    ValueError
        When ``lam`` is not a real number ``> 0``.
    """
    task = check_task(task)
    lam = check_real_scalar(lam, "lam", minimum=0.0, strict=True)
    c2 = 1.0 + 2.0 * (lam * task.gamma) ** 2
    b = (
        -2.0
        * lam
        * task.gamma**2
        * task.q
        * float(erf_prime(0.0))
        / math.sqrt(c2)
    )
    d = 2.0 * task.q**2 * float(zeta(0.0, lam * task.gamma))
    return np.array([[0.0, b], [b, d]])


class MeasuredMultiplier(NamedTuple):
    r"""One step of Definition 1 from a turned oracle (see :func:`measured_oracle_multiplier`).

    Fields: ``value``, the extrapolated multiplier :math:`(4r(\varphi/2) - r(\varphi))/3`;
    ``ratios``, :math:`r(\varphi)` and :math:`r(\varphi/2)`; ``angle``, :math:`\varphi`.
    """

    value: float
    ratios: tuple[float, float]
    angle: float


def measured_oracle_multiplier(
    which: str, lam: float, alpha: float, task: SLRTask, angle: float = 1e-3
) -> MeasuredMultiplier:
    r"""The multiplier of :math:`F` at the oracle, measured by one step of PGD in :math:`\mathbb R^d`.

    Start at the oracle with the key (``which="key"``) or the value (``"value"``) turned by a
    small angle :math:`\varphi` away from :math:`k^\star` (or :math:`v^\star`), take one step of
    Definition 1 written literally in :math:`\mathbb R^d` (:func:`~slrlib.training.pgd.pgd_dense`:
    ``jax.grad`` of Theorem 1's closed form, tangent projection, normalisation) and read the
    angle :math:`\varphi_1` of the result. By the angle map of chapter 16 the ratio is
    :math:`r(\varphi) = \varphi_1/\varphi = m + c\varphi^2 + O(\varphi^4)`, so Richardson's
    extrapolation :math:`(4r(\varphi/2) - r(\varphi))/3 = m + O(\varphi^4)` removes the
    :math:`c\varphi^2` term. No Hessian and no derivative of :math:`\zeta` is formed: this is an
    independent measurement of :func:`timescales_at_oracle`'s multipliers.

    Parameters
    ----------
    which : {"key", "value"}
        The vector turned.
    lam, alpha : float
        Inverse temperature and step size, ``> 0``.
    task : SLRTask
        The task (``d >= 4``: the turn uses a third axis).
    angle : float
        The larger angle :math:`\varphi`, in :math:`(0, 0.1]`.

    Returns
    -------
    MeasuredMultiplier

    Raises
    ------
    ValueError
        When ``which`` is not "key" or "value", ``angle`` lies outside :math:`(0, 0.1]`, or
        ``lam``, ``alpha`` are not real numbers ``> 0``.
    """
    lam, alpha, task = _check_common(lam, alpha, task)
    if which not in ("key", "value"):
        raise ValueError(f"which must be 'key' or 'value', got {which!r}")
    angle = check_real_scalar(angle, "angle", minimum=0.0, strict=True)
    if angle > 0.1:
        raise ValueError(f"angle must lie in (0, 0.1], got {angle}")
    if task.d < 4:
        raise ValueError(
            f"task.d must be >= 4 to turn a vector off the plane of k*, v*, got {task.d}"
        )
    eye = np.eye(task.d)
    k_star, v_star, away = eye[0], eye[1], eye[2]
    star = k_star if which == "key" else v_star

    def ratio(phi: float) -> float:
        turned = math.cos(phi) * star + math.sin(phi) * away
        k0, v0 = (turned, v_star) if which == "key" else (k_star, turned)
        run = pgd_dense(
            k0, v0, k_star, v_star, task, lam=lam, alpha=alpha, n_steps=1
        )
        x = np.asarray(run.k if which == "key" else run.v).reshape(-1)
        along = float(x @ star)
        return math.atan2(float(np.linalg.norm(x - along * star)), along) / phi

    r1, r2 = ratio(angle), ratio(angle / 2)
    return MeasuredMultiplier((4 * r2 - r1) / 3, (r1, r2), angle)


class DecayFit(NamedTuple):
    """Decay rates fitted on a reduced trajectory (see :func:`fit_decay_rates`).

    Fields: ``multiplier_kappa``, ``multiplier_nu`` — :math:`\\exp` of the least-squares slopes of
    :math:`\\log\\varphi_t` and :math:`\\log\\psi_t` against :math:`t`; ``steps``, ``phi``, ``psi`` — the
    fitted trajectory (angles).
    """

    multiplier_kappa: float
    multiplier_nu: float
    steps: np.ndarray
    phi: np.ndarray
    psi: np.ndarray


def _angle(c):
    # arccos near 1 without cancellation: φ = 2 arcsin(√((1 - κ)/2)); 1 - κ is exact for κ ≥ 1/2
    return 2.0 * np.arcsin(np.sqrt(np.clip((1.0 - c) / 2.0, 0.0, 1.0)))


def fit_decay_rates(
    phi0: float,
    psi0: float,
    lam: float,
    alpha: float,
    task: SLRTask,
    *,
    n_steps: int = 1000,
) -> DecayFit:
    r"""Run :func:`~slrlib.training.pgd.reduced_pgd` from :math:`(\cos\varphi_0, \cos\psi_0)` near the
    oracle and fit the empirical per-step multipliers of the angles :math:`\varphi_t`, :math:`\psi_t`
    (least-squares slope of :math:`\log\varphi_t` on :math:`t = 0, \dots, n`), to compare with
    :func:`timescales_at_oracle`.

    Parameters
    ----------
    phi0, psi0 : float
        Start angles, in :math:`(0, \pi/2)` (small for the linear regime).
    lam, alpha : float
        Inverse temperature and step size, ``> 0``.
    task : SLRTask
        The task.
    n_steps : int
        Number of steps, ``>= 1``.

    Returns
    -------
    DecayFit

    Raises
    ------
    ValueError
        When ``phi0`` or ``psi0`` is not in :math:`(0, \pi/2)`, ``lam`` or ``alpha`` is not ``> 0``,
        ``n_steps`` is not a positive integer, or an angle reaches 0 (the fit needs logarithms).
    """
    lam, alpha, task = _check_common(lam, alpha, task)
    for name, x in (("phi0", phi0), ("psi0", psi0)):
        x = check_real_scalar(x, name)
        if not 0.0 < x < math.pi / 2:
            raise ValueError(f"{name} must lie in (0, pi/2), got {x!r}")
    n_steps = check_positive_int(n_steps, "n_steps")
    res = reduced_pgd(
        math.cos(phi0),
        math.cos(psi0),
        task,
        lam=lam,
        alpha=alpha,
        n_steps=n_steps,
    )
    phi, psi = _angle(np.asarray(res.kappa)), _angle(np.asarray(res.nu))
    if not (np.all(phi > 0.0) and np.all(psi > 0.0)):
        raise ValueError(
            f"an angle reached 0 within n_steps={n_steps}; use fewer steps"
        )
    t = res.steps.astype(float)
    slope_k = np.polyfit(t, np.log(phi), 1)[0]
    slope_n = np.polyfit(t, np.log(psi), 1)[0]
    return DecayFit(
        float(np.exp(slope_k)), float(np.exp(slope_n)), res.steps, phi, psi
    )


# --------------------------------------------------------------------------- off the manifold, at the oracle
class OracleTransverse(NamedTuple):
    r"""One PGD step linearised at the oracle across :math:`\mathcal M` (see :func:`oracle_transverse`).

    Fields: ``hessian`` (2 × 2), the Riemannian Hessian of :math:`\mathcal R_\lambda` in the plane
    :math:`\operatorname{span}\{k^\star, v^\star\}` in the rotation angles :math:`(a, b)`
    (:func:`slrlib.book.ch08_beyond.oracle_plane_hessian`); ``curvatures`` — its eigenvalues
    :math:`\mu_{\min} \le \mu_{\max}`; ``jacobian`` :math:`= I - \alpha H` (2 × 2, acting on
    :math:`(a, b) \approx (\eta, \theta)`); ``multipliers`` :math:`1 - \alpha\mu_{\min} \ge 1 - \alpha\mu_{\max}`;
    ``eigenvectors`` (columns, for ``multipliers``); ``stable`` — both multipliers in :math:`(-1, 1)`.
    """

    hessian: np.ndarray
    curvatures: np.ndarray
    jacobian: np.ndarray
    multipliers: np.ndarray
    eigenvectors: np.ndarray
    stable: bool


def oracle_transverse(
    lam: float, alpha: float, task: SLRTask
) -> OracleTransverse:
    r"""The Jacobian of one PGD step (Definition 1, eq. (10)) at the oracle :math:`(k^\star, v^\star)`, across
    :math:`\mathcal M`.

    Rotate :math:`k` by an angle :math:`a` towards :math:`v^\star` and :math:`v` by :math:`b` towards
    :math:`k^\star` (:func:`plane_pair`): :math:`\eta = \sin a`, :math:`\theta = \sin b`,
    :math:`\rho = \sin(a + b)`, so to first order :math:`(\eta, \theta, \rho) = (a, b, a + b)`. These two
    directions span the normal space of :math:`\mathcal M` at the oracle, and the plane
    :math:`\operatorname{span}\{k^\star, v^\star\}` is invariant under PGD (the gradients lie in it). At a
    critical point the step :math:`x \mapsto R_x(-\alpha\operatorname{grad}\mathcal R)` of Riemannian gradient
    descent with the normalisation retraction has Jacobian :math:`I - \alpha\operatorname{Hess}\mathcal R`, so in
    :math:`(a, b)`

    .. math::

        \begin{pmatrix} a_{t+1}\\ b_{t+1}\end{pmatrix} \approx (I - \alpha H_\lambda)\begin{pmatrix} a_t\\ b_t\end{pmatrix},
        \qquad \rho_{t+1} \approx a_{t+1} + b_{t+1},

    with :math:`H_\lambda` the plane Hessian of chapter 8. The oracle attracts nearby points off
    :math:`\mathcal M` iff :math:`0 < \alpha\mu_{\min}` and :math:`\alpha\mu_{\max} < 2`: the first fails above
    :math:`\lambda_c` (:func:`slrlib.book.ch08_beyond.critical_lambda`), the second when the step is too
    long (the iterates then overshoot :math:`\mathcal M` by more than they started off it).

    Parameters
    ----------
    lam, alpha : float
        Inverse temperature and step size, ``> 0``.
    task : SLRTask
        The task.

    Returns
    -------
    OracleTransverse

    Raises
    ------
    ValueError
        When ``lam`` or ``alpha`` is not a real number ``> 0``.
    """
    lam, alpha, task = _check_common(lam, alpha, task)
    H = np.asarray(oracle_plane_hessian(lam, task), dtype=float)
    H = 0.5 * (H + H.T)
    curv, vecs = np.linalg.eigh(H)
    J = np.eye(2) - alpha * H
    mult = 1.0 - alpha * curv
    return OracleTransverse(
        H, curv, J, mult, vecs, bool(np.all(np.abs(mult) < 1.0))
    )


def plane_pair(
    a: ArrayLike, b: ArrayLike, k_star: ArrayLike, v_star: ArrayLike
) -> tuple[jax.Array, jax.Array]:
    r"""Unit vectors :math:`k = \cos a\,k^\star + \sin a\,v^\star`, :math:`v = \sin b\,k^\star + \cos b\,v^\star`.

    Their overlaps are :math:`\kappa = \cos a`, :math:`\eta = \sin a`, :math:`\theta = \sin b`,
    :math:`\nu = \cos b`, :math:`\rho = \sin(a + b)`: the oracle :math:`(a, b) = (0, 0)` moved off
    :math:`\mathcal M` by crossed overlaps :math:`(\eta, \theta) \approx (a, b)`.

    Parameters
    ----------
    a, b : array_like
        Angles (broadcast together); the result has their shape plus a last axis of length ``d``.
    k_star, v_star : array_like, shape (d,)
        Orthonormal directions.

    Returns
    -------
    (k, v) : tuple of jax.Array

    Raises
    ------
    ValueError
        When ``k_star`` and ``v_star`` are not orthonormal vectors of one length, or ``a``, ``b`` are
        not finite.
    """
    ks, vs = np.asarray(k_star, dtype=float), np.asarray(v_star, dtype=float)
    if ks.ndim != 1 or ks.shape != vs.shape or ks.size < 2:
        raise ValueError(
            f"k_star and v_star must be vectors of one length d >= 2, got shapes {ks.shape}, {vs.shape}"
        )
    gram = np.array([[ks @ ks, ks @ vs], [vs @ ks, vs @ vs]])
    if not np.allclose(gram, np.eye(2), atol=1e-12):
        raise ValueError(
            f"k_star and v_star must be orthonormal, got Gram matrix {gram.tolist()}"
        )
    a, b = np.broadcast_arrays(
        np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    )
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("a and b must be finite")
    k = np.cos(a)[..., None] * ks + np.sin(a)[..., None] * vs
    v = np.sin(b)[..., None] * ks + np.cos(b)[..., None] * vs
    return jnp.asarray(k), jnp.asarray(v)


class OffManifoldBasin(NamedTuple):
    r"""PGD from the oracle moved off :math:`\mathcal M` (see :func:`off_manifold_basin`).

    Fields: ``deltas`` (n,), ``angles`` (m,) the directions :math:`\omega`; ``kappa``, ``nu``, ``distance``
    (n, m) the final :math:`\kappa`, :math:`\nu` and distance to :math:`\mathcal M`; ``returned`` (n, m), the run
    ended within ``tol`` of :math:`(k^\star, v^\star)`; ``radius``, the largest :math:`\delta` of the grid such
    that every run from every :math:`\delta' \le \delta` returned (0 if the smallest does not).
    """

    deltas: np.ndarray
    angles: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    distance: np.ndarray
    returned: np.ndarray
    radius: float


def off_manifold_basin(
    deltas: ArrayLike,
    lam: float,
    alpha: float,
    task: SLRTask,
    *,
    n_directions: int = 8,
    n_steps: int = 20_000,
    tol: float = 1e-6,
) -> OffManifoldBasin:
    r"""Run PGD (:func:`slrlib.training.pgd.pgd`, exact gradients, dimension ``task.d``) from
    :func:`plane_pair` at :math:`(a, b) = \delta(\cos\omega, \sin\omega)` for every :math:`\delta` of
    ``deltas`` and :math:`\omega = 2\pi j/m + \pi/m`, :math:`j < m` (directions off the axes), at constant
    :math:`\lambda`, and record whether it returns to the oracle: :math:`1 - \kappa`, :math:`1 - \nu` and the
    distance to :math:`\mathcal M` all below ``tol`` after ``n_steps`` steps.

    Parameters
    ----------
    deltas : array_like
        Distances off :math:`\mathcal M` (angles), increasing, in :math:`(0, \pi)`.
    lam, alpha : float
        Inverse temperature and step size, ``> 0``.
    task : SLRTask
        The task (its ``d`` is the dimension of the runs; :math:`k^\star, v^\star` are the first two axes).
    n_directions : int
        Number :math:`m` of directions :math:`\omega`.
    n_steps : int
        Steps of each run.
    tol : float
        Tolerance of "returned", ``> 0``.

    Returns
    -------
    OffManifoldBasin

    Raises
    ------
    ValueError
        When ``deltas`` is not an increasing 1-d array in :math:`(0, \pi)`, ``lam``, ``alpha`` or ``tol`` is
        not ``> 0``, or ``n_directions``, ``n_steps`` is not a positive integer.
    """
    lam, alpha, task = _check_common(lam, alpha, task)
    tol = check_real_scalar(tol, "tol", minimum=0.0, strict=True)
    n_directions = check_positive_int(n_directions, "n_directions")
    n_steps = check_positive_int(n_steps, "n_steps")
    try:
        dl = np.atleast_1d(np.asarray(deltas, dtype=float))
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"deltas must be real numbers in (0, pi), got {deltas!r}"
        ) from err
    if (
        dl.ndim != 1
        or dl.size == 0
        or not np.all(np.isfinite(dl))
        or not np.all((dl > 0) & (dl < math.pi))
        or np.any(np.diff(dl) <= 0)
    ):
        raise ValueError(
            f"deltas must be an increasing 1-d array in (0, pi), got {np.asarray(deltas).tolist()}"
        )
    om = (
        2 * math.pi * np.arange(n_directions) / n_directions
        + math.pi / n_directions
    )
    eye = np.eye(task.d)
    a = dl[:, None] * np.cos(om)[None, :]
    b = dl[:, None] * np.sin(om)[None, :]
    k0, v0 = plane_pair(a, b, eye[0], eye[1])
    res = pgd(
        k0,
        v0,
        eye[0],
        eye[1],
        task,
        lam=lam,
        alpha=alpha,
        n_steps=n_steps,
        log_every=n_steps,
    )
    kappa, nu = np.asarray(res.kappa)[..., -1], np.asarray(res.nu)[..., -1]
    dist = np.asarray(res.distance)[..., -1]
    ok = (1.0 - kappa < tol) & (1.0 - nu < tol) & (dist < tol)
    all_ok = np.all(ok, axis=1)
    n_good = int(np.argmin(all_ok)) if not np.all(all_ok) else dl.size
    radius = float(dl[n_good - 1]) if n_good > 0 else 0.0
    return OffManifoldBasin(dl, om, kappa, nu, dist, ok, radius)


# --------------------------------------------------------------------------- the race at the saddle
class SwapRace(NamedTuple):
    r"""The linearised race at the saddle (see :func:`swap_race`).

    ``swap_fraction``: the predicted fraction of uniform starts that leave the saddle across
    :math:`\mathcal M` first; ``swap_se``: its Monte Carlo standard error over the ``n`` drawn starts;
    ``g_in``, ``g_across``: the growth rates per step, :math:`\log(1 - \alpha\mu_-)` inside
    :math:`\mathcal M` and :math:`\log(1 - \alpha h_-)` across it; ``radius``: the radius :math:`R`.
    """

    swap_fraction: float
    swap_se: float
    g_in: float
    g_across: float
    radius: float


def uniform_start_overlaps(
    rng: np.random.Generator, n: int, d: int
) -> tuple[np.ndarray, ...]:
    r"""The overlaps :math:`(\kappa, \nu, \theta, \eta)` of ``n`` independent uniform starts on
    :math:`\mathbb S^{d-1}\times\mathbb S^{d-1}`, drawn exactly.

    :math:`(\kappa, \eta)` are two coordinates of a uniform unit vector :math:`k` (in an orthonormal basis
    that starts with :math:`k^\star, v^\star`), :math:`(\nu, \theta)` two of an independent :math:`v`: each pair is
    :math:`(g_1, g_2)/\sqrt{g_1^2 + g_2^2 + C}` with :math:`g_i` standard normal and :math:`C \sim \chi^2_{d-2}`
    independent, so the cost does not depend on :math:`d`.
    """
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    if d < 3:
        raise ValueError(
            f"d must be >= 3 for two coordinates and a remainder, got {d}"
        )

    def two():
        g = rng.standard_normal((n, 2))
        return (
            g
            / np.sqrt(np.sum(g**2, axis=1) + rng.chisquare(d - 2, n))[:, None]
        )

    k, v = two(), two()
    return k[:, 0], v[:, 0], v[:, 1], k[:, 1]


def swap_race(
    lam: float,
    alpha: float,
    task: SLRTask,
    key: jax.Array,
    radius: float = 1.0,
    n: int = 400_000,
) -> SwapRace:
    r"""Predicted fraction of uniform starts that end swapped: the race of the two unstable directions at the
    saddle (our derivation).

    At the saddle :math:`\kappa = \nu = \theta = \eta = \rho = 0` one PGD step is, to first order, the map
    :math:`I - \alpha\,\mathrm{Hess}`, block-diagonal in :math:`(\kappa, \nu)` (inside :math:`\mathcal M`,
    :func:`saddle_rates`), :math:`(\eta, \theta)` (across it, :func:`saddle_transverse_hessian`) and :math:`\rho`.
    Each of the first two blocks has one expanding direction, :math:`u_{\rm in}` with multiplier
    :math:`1 - \alpha\mu_-` and :math:`u_{\rm across}` with multiplier :math:`1 - \alpha h_-`. A start's
    components :math:`c_{\rm in} = u_{\rm in}\cdot(\kappa_0, \nu_0)` and
    :math:`c_{\rm across} = u_{\rm across}\cdot(\eta_0, \theta_0)` grow geometrically; the run is predicted to
    end swapped when the component across :math:`\mathcal M` reaches ``radius`` first:

    .. math::

        \frac{\log(R/|c_{\rm across}|)}{\log(1 - \alpha h_-)} < \frac{\log(R/|c_{\rm in}|)}{\log(1 - \alpha\mu_-)} .

    The fraction is a Monte Carlo average over ``n`` uniform starts drawn exactly
    (:func:`uniform_start_overlaps`, NumPy's generator seeded from ``key``). When :math:`h_- \approx \mu_-` and the
    four overlaps are nearly independent :math:`\mathcal N(0, 1/d)`, it is close to :math:`1/2` whatever ``radius``.

    Parameters
    ----------
    lam, alpha : float
        Inverse temperature and step size, ``> 0``.
    task : SLRTask
        The task.
    key : jax.Array
        A ``jax.random`` key.
    radius : float
        The radius :math:`R` at which the race is decided, ``> 0``; the overlaps are at most 1, so the default
        1 is where the linearisation must have stopped.
    n : int
        Starts drawn.

    Returns
    -------
    SwapRace

    Raises
    ------
    ValueError
        When an argument is invalid.
    """
    lam, alpha, task = _check_common(lam, alpha, task)
    radius = check_real_scalar(radius, "radius", minimum=0.0, strict=True)
    n = check_positive_int(n, "n")
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    key = check_key(key)
    inside = saddle_rates(lam, alpha, task)
    w, vecs = np.linalg.eigh(saddle_transverse_hessian(lam, task))
    across = vecs[
        :, 0
    ]  # (eta, theta) components of the expanding direction across M
    g_in, g_across = math.log(inside.expanding), math.log(1.0 - alpha * w[0])
    rng = np.random.default_rng(
        np.asarray(jax.random.key_data(key)).ravel().tolist()
    )
    kappa, nu, theta, eta = uniform_start_overlaps(rng, n, task.d)
    c_in = np.abs(inside.unstable[0] * kappa + inside.unstable[1] * nu)
    c_across = np.abs(across[0] * eta + across[1] * theta)
    swapped = (
        np.log(radius / c_across) / g_across < np.log(radius / c_in) / g_in
    )
    p = float(np.mean(swapped))
    return SwapRace(
        p, math.sqrt(p * (1.0 - p) / n), g_in, g_across, float(radius)
    )
