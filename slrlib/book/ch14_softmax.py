r"""Softmax attention on an equal footing (companion of chapter 14, our additions).

The paper analyses erf attention (3) because its risk has a closed form; the attention of a
Transformer is softmax attention (2),

.. math::

    T^{\rm soft}_\lambda(\mathbb X) = \sum_{\ell=1}^L \operatorname{softmax}(\lambda\,\mathbb X k)_\ell\, X_\ell^\top v .

Its risk has no closed form, but it is as cheap to simulate as a closed form is to evaluate:

* :func:`softmax_risk` / :func:`softmax_risk_from_overlaps` — the risk
  :math:`\mathbb E[(Y - T^{\rm soft}_\lambda(\mathbb X))^2]` at any unit :math:`(k, v)` by *reduced*
  Monte Carlo: each token is drawn through its two or three coordinates that the predictor and
  the target read, so the cost does not depend on :math:`d`;
* :func:`slrlib.core.predictors.bayes_scores` — the Bayes posterior over positions written as an attention score: for
  :math:`\gamma = 1` and uniform :math:`\pi` the Bayes predictor *is* softmax attention at
  :math:`(k^\star, v^\star)` with :math:`\lambda = \sqrt{d/2}`;
* :func:`best_softmax_lambda` — the inverse temperature minimising the simulated risk at the
  oracle, on common random numbers;
* :func:`softmax_risk_of_runs` and :func:`recovery_steps` — the risk at the end of each run of
  stochastic PGD on softmax attention (:func:`slrlib.training.sgd.sgd` with
  ``attention="softmax"``) and the step at which each run recovers the task's directions.

The figure ``beyond_softmax`` (:mod:`slrlib.book.figures.softmax`) puts the Bayes predictor,
softmax and erf attention at their best :math:`\lambda`, and the best linear predictor on one
scale. Notation: :math:`q = \sqrt{d/2}`, and the five overlaps of :class:`slrlib.core.risk.Overlaps`,
:math:`\kappa = \langle k, k^\star\rangle`, :math:`\nu = \langle v, v^\star\rangle`,
:math:`\theta = \langle v, k^\star\rangle`, :math:`\eta = \langle k, v^\star\rangle`,
:math:`\rho = \langle k, v\rangle`.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from slrlib.validation import (
    as_float_array,
    check_finite,
    check_key,
    check_nonnegative,
    check_positive_int,
    check_real_scalar,
    check_shape,
    check_unit_norm,
)
from slrlib.core.montecarlo import MonteCarloEstimate, RunningMoments
from slrlib.core.task import SLRTask, check_directions, check_task
from slrlib.book.ch04_bayes import reduced_bayes_posterior, reduced_token_draws

__all__ = [
    "GRAM_TOL",
    "DEFAULT_LAM_GRID",
    "overlap_gram",
    "softmax_risk_from_overlaps",
    "softmax_risk",
    "softmax_risk_at_lam0",
    "best_softmax_lambda",
    "bayes_excess_reduced",
    "softmax_risk_of_runs",
    "recovery_steps",
    "ExcessAgainstD",
    "excess_against_d",
    "DecayFit",
    "fit_decay_rate",
]

#: Tolerance on the smallest eigenvalue of the Gram matrix of :math:`(k^\star, v^\star, k, v)`:
#: overlaps whose Gram matrix has an eigenvalue below ``-GRAM_TOL`` belong to no unit vectors.
GRAM_TOL = 1e-10
#: Default grid of :func:`best_softmax_lambda`: 31 values, log-spaced from 1e-3 to 1e3.
DEFAULT_LAM_GRID = tuple(float(x) for x in np.geomspace(1e-3, 1e3, 31))
#: Token-coordinates per batch (batch size times L) of the reduced sampler by default.
_ENTRIES_PER_BATCH = 2_000_000


# --------------------------------------------------------------------------- validation
def _check_n_samples(n_samples: object) -> int:
    n_samples = check_positive_int(n_samples, "n_samples")
    if n_samples < 2:
        raise ValueError(
            f"n_samples must be >= 2 to estimate a standard error, got {n_samples}"
        )
    return n_samples


def _check_lams(lam: ArrayLike) -> np.ndarray:
    lam_arr = as_float_array(lam, "lam")
    if jnp.ndim(lam_arr) > 1:
        raise ValueError(
            f"lam must be a number or a 1-d array, got shape {jnp.shape(lam_arr)}"
        )
    check_finite(lam_arr, "lam")
    check_nonnegative(lam_arr, "lam")
    return np.asarray(lam_arr, dtype=np.float64)


def _check_unit(x: ArrayLike, name: str, d: int) -> jax.Array:
    x = as_float_array(x, name)
    check_shape(x, name, (d,))
    check_finite(x, name)
    check_unit_norm(x, name)
    return x


def overlap_gram(
    kappa: float, nu: float, theta: float, eta: float, rho: float
) -> np.ndarray:
    r"""The Gram matrix of :math:`(k^\star, v^\star, k, v)` from the five overlaps, validated.

    .. math::

        G = \begin{pmatrix} 1 & 0 & \kappa & \theta \\ 0 & 1 & \eta & \nu \\
                            \kappa & \eta & 1 & \rho \\ \theta & \nu & \rho & 1 \end{pmatrix},

    using :math:`\|k^\star\| = \|v^\star\| = \|k\| = \|v\| = 1` and :math:`k^\star \perp v^\star`.
    Unit vectors with these overlaps exist (in any :math:`d \ge 4`) if and only if :math:`G` is
    positive semidefinite.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : float
        The overlaps, each in [-1, 1].

    Returns
    -------
    numpy.ndarray, shape (4, 4)
        :math:`G`.

    Raises
    ------
    ValueError
        When an overlap is not a real number in [-1, 1], or :math:`G` has an eigenvalue below
        ``-GRAM_TOL`` (no unit vectors have these overlaps).
    """
    vals = {}
    for name, x in (
        ("kappa", kappa),
        ("nu", nu),
        ("theta", theta),
        ("eta", eta),
        ("rho", rho),
    ):
        x = check_real_scalar(x, name)
        if abs(x) > 1.0 + GRAM_TOL:
            raise ValueError(
                f"{name} must be in [-1, 1] (an inner product of unit vectors), got {x!r}"
            )
        vals[name] = x
    ka, nu_, th, et, rh = (
        vals[n] for n in ("kappa", "nu", "theta", "eta", "rho")
    )
    G = np.array(
        [
            [1.0, 0.0, ka, th],
            [0.0, 1.0, et, nu_],
            [ka, et, 1.0, rh],
            [th, nu_, rh, 1.0],
        ]
    )
    low = float(np.linalg.eigvalsh(G)[0])
    if low < -GRAM_TOL:
        raise ValueError(
            "the overlaps (kappa, nu, theta, eta, rho) = "
            f"({ka!r}, {nu_!r}, {th!r}, {et!r}, {rh!r}) must give a positive semidefinite Gram matrix "
            f"of (k*, v*, k, v) (tolerance {GRAM_TOL}); its smallest eigenvalue is {low:.3g}"
        )
    return G


def _psd_sqrt(C: np.ndarray) -> np.ndarray:
    """Symmetric square root of a PSD matrix (eigh; round-off negative eigenvalues set to 0)."""
    w, V = np.linalg.eigh(C)
    return (V * np.sqrt(np.clip(w, 0.0, None))) @ V.T


# --------------------------------------------------------------------------- reduced sampler
@partial(jax.jit, static_argnums=(1, 2))
def _reduced_losses(key, n, L, mean_rel, sqrt_rel, sqrt_noise, lams):
    """Squared errors (u - T)^2 for n reduced draws and every lam: (m, n).

    The relevant token comes first in each draw.
    """
    rel_key, noise_key = jax.random.split(key)
    w = (
        jax.random.normal(rel_key, (n, 3)) @ sqrt_rel.T + mean_rel
    )  # (u, a, b) of the relevant token
    z = (
        jax.random.normal(noise_key, (n, L - 1, 2)) @ sqrt_noise.T
    )  # (a, b) of the noise tokens
    a = jnp.concatenate([w[:, 1:2], z[..., 0]], axis=1)  # X_l^T k, (n, L)
    b = jnp.concatenate([w[:, 2:3], z[..., 1]], axis=1)  # X_l^T v, (n, L)
    u = w[:, 0]  # X_{J0}^T v*

    gap = (
        u[:, None] - b
    )  # u - T = sum_l p_l (u - b_l): no cancellation when p is nearly one-hot

    def one(lam):
        p = jax.nn.softmax(lam * a, axis=-1)
        return jnp.square(jnp.sum(p * gap, axis=-1))

    return jax.lax.map(one, lams)


def _reduced_moments(
    G: np.ndarray,
    lams: np.ndarray,
    task: SLRTask,
    key: jax.Array,
    n_samples: int,
    batch_size: int,
) -> MonteCarloEstimate:
    """Mean and standard error of (u - T)^2 over n_samples reduced draws, for every lam (shape (m,))."""
    q, g2 = task.q, task.gamma**2
    # coordinates (X^T v*, X^T k, X^T v): rows/columns 1, 2, 3 of G (v*, k, v)
    C_rel = g2 * G[np.ix_([1, 2, 3], [1, 2, 3])]
    mean_rel = q * np.array(
        [G[0, 1], G[0, 2], G[0, 3]]
    )  # q (<k*,v*>, <k*,k>, <k*,v>)
    C_noise = G[np.ix_([2, 3], [2, 3])]
    sqrt_rel, sqrt_noise = _psd_sqrt(C_rel), _psd_sqrt(C_noise)
    n_batches = -(-n_samples // batch_size)
    acc = RunningMoments()
    lams_j = jnp.asarray(lams)
    for i, batch_key in enumerate(jax.random.split(key, n_batches)):
        n = min(batch_size, n_samples - i * batch_size)
        # every batch is drawn at full size (one compilation); the last one is truncated
        losses = _reduced_losses(
            batch_key,
            batch_size,
            task.L,
            jnp.asarray(mean_rel),
            jnp.asarray(sqrt_rel),
            jnp.asarray(sqrt_noise),
            lams_j,
        )
        acc.add(np.asarray(losses, dtype=np.float64).T[:n])
    return acc.estimate()


def softmax_risk_from_overlaps(
    kappa: float,
    nu: float,
    theta: float,
    eta: float,
    rho: float,
    lam: ArrayLike,
    task: SLRTask,
    key: jax.Array,
    n_samples: int = 100_000,
    batch_size: int | None = None,
) -> MonteCarloEstimate:
    r"""Risk of softmax attention (2) from the five overlaps, by reduced Monte Carlo.

    **Reduction.** :math:`T^{\rm soft}_\lambda` reads a token only through :math:`a_\ell = X_\ell^\top k`
    and :math:`b_\ell = X_\ell^\top v`, and :math:`Y = u + \varepsilon\xi` with :math:`u = X_{J_0}^\top v^\star`.
    Given :math:`J_0`, tokens are independent Gaussians, so these coordinates are jointly Gaussian:

    * noise token: :math:`(a, b) \sim \mathcal N\big(0, \begin{pmatrix}1 & \rho\\ \rho & 1\end{pmatrix}\big)`
      (the Gram matrix of :math:`(k, v)`);
    * relevant token: :math:`(u, a, b) \sim \mathcal N\big(q(\langle k^\star, v^\star\rangle, \kappa, \theta),\;
      \gamma^2\,\mathrm{Gram}(v^\star, k, v)\big)`, with :math:`\langle k^\star, v^\star\rangle = 0` and
      :math:`\mathrm{Gram}(v^\star, k, v) = \begin{pmatrix}1 & \eta & \nu\\ \eta & 1 & \rho\\ \nu & \rho & 1\end{pmatrix}`.

    They are drawn as :math:`\mu + C^{1/2} G` with the symmetric square root :math:`C^{1/2}` (``eigh``,
    round-off negative eigenvalues set to 0, so degenerate cases such as :math:`v = v^\star` or
    :math:`k = v` work): :math:`O(L)` per sample, whatever :math:`d`.

    **Position.** :math:`T^{\rm soft}_\lambda` is a symmetric function of the tokens, and given
    :math:`J_0` the *multiset* of tokens has the same law whatever :math:`J_0` is: the risk does not
    depend on the law :math:`\pi` of :math:`J_0` (any ``task.probs`` is accepted), and the relevant token
    is drawn at the first position.

    **Output noise.** :math:`\xi` is independent of the rest and centred, so
    :math:`\mathbb E[(Y - T)^2] = \varepsilon^2 + \mathbb E[(u - T)^2]`: the simulation averages
    :math:`(u - T)^2` and adds :math:`\varepsilon^2` exactly (the standard error is that of the
    simulated part only).

    **Common random numbers.** The standard normals depend only on ``key``, ``n_samples``,
    ``batch_size`` and ``L``: the same key gives the same draws for every :math:`\lambda` and every
    overlap, so risks at several :math:`\lambda` (pass an array) or several :math:`(k, v)` are
    compared on the same samples, and the estimate is a smooth function of them.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : float
        The overlaps :math:`\langle k, k^\star\rangle, \langle v, v^\star\rangle, \langle v, k^\star\rangle,
        \langle k, v^\star\rangle, \langle k, v\rangle` (:func:`slrlib.core.risk.overlaps`).
    lam : float or array_like, shape (m,)
        Inverse temperature(s) :math:`\lambda \ge 0`.
    task : SLRTask
        The task.
    key : jax.Array
        A ``jax.random`` key.
    n_samples : int
        Number of simulated sequences, ``>= 2``.
    batch_size : int, optional
        Sequences per batch (default: about two million token coordinates per batch).

    Returns
    -------
    MonteCarloEstimate
        ``mean`` (the risk, :math:`\varepsilon^2` included) and ``stderr``, of the shape of ``lam``.

    Raises
    ------
    ValueError
        When an overlap is not in [-1, 1] or the Gram matrix of :math:`(k^\star, v^\star, k, v)` is
        not positive semidefinite (:func:`overlap_gram`), ``lam`` is negative, not finite or not a
        number or 1-d array, ``n_samples < 2``, or another argument is invalid.
    """
    task = check_task(task)
    G = overlap_gram(kappa, nu, theta, eta, rho)
    lams = _check_lams(lam)
    key = check_key(key)
    n_samples = _check_n_samples(n_samples)
    if batch_size is None:
        batch_size = max(1, _ENTRIES_PER_BATCH // task.L)
    batch_size = min(check_positive_int(batch_size, "batch_size"), n_samples)
    est = _reduced_moments(
        G, np.atleast_1d(lams), task, key, n_samples, batch_size
    )
    shape = lams.shape
    return MonteCarloEstimate(
        mean=(est.mean + task.eps**2).reshape(shape),
        stderr=est.stderr.reshape(shape),
        n=est.n,
    )


def softmax_risk(
    k: ArrayLike,
    v: ArrayLike,
    k_star: ArrayLike,
    v_star: ArrayLike,
    lam: ArrayLike,
    task: SLRTask,
    key: jax.Array,
    n_samples: int = 100_000,
    batch_size: int | None = None,
) -> MonteCarloEstimate:
    r"""Risk :math:`\mathbb E[(Y - T^{\rm soft}_\lambda(\mathbb X))^2]` of softmax attention (2) at any unit :math:`(k, v)`.

    Reduced Monte Carlo through the overlaps (:func:`softmax_risk_from_overlaps`, which explains the
    reduction): the cost is :math:`O(n L)`, independent of :math:`d`; :math:`\varepsilon^2` is added
    exactly; any law :math:`\pi` of :math:`J_0` gives the same risk.

    Parameters
    ----------
    k, v : array_like, shape (d,)
        Key and value directions, unit norm.
    k_star, v_star : array_like, shape (d,)
        The task's directions (Assumption 1).
    lam : float or array_like, shape (m,)
        Inverse temperature(s) :math:`\lambda \ge 0`.
    task : SLRTask
        The task.
    key : jax.Array
        A ``jax.random`` key.
    n_samples : int
        Number of simulated sequences, ``>= 2``.
    batch_size : int, optional
        Sequences per batch.

    Returns
    -------
    MonteCarloEstimate
        The risk (``mean``, ``stderr``, ``n``), of the shape of ``lam``.

    Raises
    ------
    ValueError
        When ``k`` or ``v`` is not a finite unit vector of shape (d,), the task's directions are
        invalid, or as :func:`softmax_risk_from_overlaps`.
    """
    task = check_task(task)
    k = _check_unit(k, "k", task.d)
    v = _check_unit(v, "v", task.d)
    k_star, v_star = check_directions(k_star, v_star, task.d)
    dot = lambda a, b: float(jnp.dot(a, b))  # noqa: E731
    return softmax_risk_from_overlaps(
        dot(k, k_star),
        dot(v, v_star),
        dot(v, k_star),
        dot(k, v_star),
        dot(k, v),
        lam,
        task,
        key,
        n_samples,
        batch_size,
    )


def softmax_risk_at_lam0(
    kappa: float,
    nu: float,
    theta: float,
    eta: float,
    rho: float,
    task: SLRTask,
) -> float:
    r"""Closed-form risk of softmax attention at :math:`\lambda = 0`, the plain average :math:`\frac1L\sum_\ell X_\ell^\top v`.

    With :math:`b_\ell = X_\ell^\top v` and :math:`u = X_{J_0}^\top v^\star`:
    :math:`Y - T = \varepsilon\xi + (u - b_{J_0}/L) - \frac1L\sum_{\ell\ne J_0} b_\ell`, three independent
    parts. The noise tokens' :math:`b_\ell` are standard normal; :math:`(u, b_{J_0})` has mean
    :math:`(0, q\theta)`, variances :math:`\gamma^2` and covariance :math:`\gamma^2\nu`. Hence

    .. math::

        \mathcal R^{\rm soft}_0 = \varepsilon^2 + \gamma^2\Big(1 - \frac{2\nu}{L} + \frac1{L^2}\Big)
        + \frac{q^2\theta^2}{L^2} + \frac{L-1}{L^2},

    and at the oracle (:math:`\nu = 1`, :math:`\theta = 0`)
    :math:`\varepsilon^2 + \gamma^2(1 - 1/L)^2 + (L-1)/L^2`. It does not depend on :math:`\kappa, \eta, \rho`.

    Parameters
    ----------
    kappa, nu, theta, eta, rho : float
        The overlaps (validated as in :func:`overlap_gram`).
    task : SLRTask
        The task.

    Returns
    -------
    float
        The risk.

    Raises
    ------
    ValueError
        As :func:`overlap_gram`, or when ``task`` is not an :class:`SLRTask`.
    """
    task = check_task(task)
    G = overlap_gram(kappa, nu, theta, eta, rho)
    nu_, th = G[1, 3], G[0, 3]
    L, g2, q = task.L, task.gamma**2, task.q
    return float(
        task.eps**2
        + g2 * (1.0 - 2.0 * nu_ / L + 1.0 / L**2)
        + (q * th / L) ** 2
        + (L - 1.0) / L**2
    )


# --------------------------------------------------------------------------- Bayes as attention
# --------------------------------------------------------------------------- best lambda
def best_softmax_lambda(
    task: SLRTask,
    key: jax.Array,
    lam_grid: ArrayLike | None = None,
    n_samples: int = 20_000,
    batch_size: int | None = None,
    refine: bool = True,
    n_refine: int = 33,
) -> tuple[float, MonteCarloEstimate]:
    r"""The :math:`\lambda` minimising the simulated risk of softmax attention at the oracle :math:`(k^\star, v^\star)`.

    The risk at every :math:`\lambda` of ``lam_grid`` is estimated on the *same* draws (common random
    numbers, :func:`softmax_risk_from_overlaps` with one key), so the estimate is a smooth function of
    :math:`\lambda` and its minimiser is well defined. With ``refine``, a second pass on the same draws
    evaluates ``n_refine`` log-spaced values between the neighbours of the best grid value and returns
    the best of them (one pass evaluates a whole grid, so this costs two samplings in all, where a
    scalar minimiser would need one per evaluation). When the best grid value is an end of the grid it
    is returned as is (at large :math:`d`, when the sample holds no confusion between tokens, the
    simulated risk falls all the way to :math:`\lambda \to \infty`, the hard oracle (1)).

    The estimate at the minimiser is optimistic by selection (it is the minimum of noisy values);
    for an unbiased value, estimate the risk again at the returned :math:`\lambda` with an independent key.

    Parameters
    ----------
    task : SLRTask
        The task.
    key : jax.Array
        A ``jax.random`` key (common to every :math:`\lambda`).
    lam_grid : array_like, shape (m,), optional
        Increasing positive values, ``m >= 3``; default :data:`DEFAULT_LAM_GRID`.
    n_samples : int
        Simulated sequences per evaluation, ``>= 2``.
    batch_size : int, optional
        Sequences per batch.
    refine : bool
        Whether to refine the grid minimum on a finer grid.
    n_refine : int
        Size of the finer grid, ``>= 3``.

    Returns
    -------
    lam : float
        The minimiser.
    risk : MonteCarloEstimate
        The estimate at ``lam`` on the common draws (scalar).

    Raises
    ------
    ValueError
        When ``lam_grid`` is not an increasing 1-d array of at least 3 positive finite values, or
        another argument is invalid.
    """
    task = check_task(task)
    key = check_key(key)
    grid = np.asarray(
        DEFAULT_LAM_GRID if lam_grid is None else _check_lams(lam_grid),
        dtype=np.float64,
    )
    if (
        grid.ndim != 1
        or grid.size < 3
        or not np.all(grid > 0)
        or not np.all(np.diff(grid) > 0)
    ):
        raise ValueError(
            f"lam_grid must be an increasing 1-d array of >= 3 positive values, got {lam_grid!r}"
        )

    def risk(lams):
        return softmax_risk_from_overlaps(
            1.0, 1.0, 0.0, 0.0, 0.0, lams, task, key, n_samples, batch_size
        )

    est = risk(grid)
    i = int(np.argmin(est.mean))
    lam, best = (
        float(grid[i]),
        MonteCarloEstimate(est.mean[i][()], est.stderr[i][()], est.n),
    )
    if refine and 0 < i < grid.size - 1:
        n_refine = check_positive_int(n_refine, "n_refine")
        if n_refine < 3:
            raise ValueError(f"n_refine must be >= 3, got {n_refine}")
        fine = np.geomspace(grid[i - 1], grid[i + 1], n_refine)
        est = risk(fine)
        j = int(np.argmin(est.mean))
        lam, best = (
            float(fine[j]),
            MonteCarloEstimate(est.mean[j][()], est.stderr[j][()], est.n),
        )
    return lam, best


# --------------------------------------------------------------------------- Bayes, with its confusions
def bayes_excess_reduced(
    task: SLRTask,
    key: jax.Array,
    n_samples: int = 100_000,
    batch_size: int = 20_000,
) -> tuple[MonteCarloEstimate, int]:
    r"""The Bayes risk's excess over :math:`\varepsilon^2` by reduced sampling, and how many samples it confused.

    As :func:`slrlib.book.ch04_bayes.bayes_excess_risk` (same reduced draws of
    :math:`(t, u, r)` per token, :func:`slrlib.book.ch04_bayes.reduced_token_draws`, and the same
    Rao–Blackwellised average of :math:`\operatorname{Var}(X_{J_0}^\top v^\star \mid \mathbb X)
    = \sum_\ell p_\ell (u_\ell - \sum_m p_m u_m)^2`), also counting the samples in which the posterior's
    mode is not :math:`J_0`. That count says whether the sample resolves the excess: when confusions
    are rarer than about :math:`1/n`, the mean is carried by events the sample does not contain and
    the estimate (and its standard error) comes out too small.

    Parameters
    ----------
    task : SLRTask
        The task.
    key : jax.Array
        A ``jax.random`` key (seeds NumPy's generator: same key, same result).
    n_samples : int
        Number of sequences, ``>= 2``.
    batch_size : int
        Sequences per batch.

    Returns
    -------
    excess : MonteCarloEstimate
        The excess risk (scalar).
    confusions : int
        Samples with :math:`\arg\max_\ell p_\ell(\mathbb X) \ne J_0`.

    Raises
    ------
    ValueError
        When an argument is invalid (``n_samples < 2`` included).
    """
    task = check_task(task)
    key = check_key(key)
    n_samples = _check_n_samples(n_samples)
    batch_size = min(check_positive_int(batch_size, "batch_size"), n_samples)
    rng = np.random.default_rng(
        np.asarray(jax.random.key_data(key)).ravel().tolist()
    )
    probs = np.asarray(task.pi, dtype=np.float64)
    with np.errstate(divide="ignore"):
        log_pi = np.log(probs)
    acc, confusions, done = RunningMoments(), 0, 0
    while done < n_samples:
        n = min(batch_size, n_samples - done)
        J0, t, u, r = reduced_token_draws(rng, n, task, probs)
        p = reduced_bayes_posterior(t, u, r, task, log_pi)
        m = np.sum(p * u, axis=1, keepdims=True)
        acc.add(np.sum(p * np.square(u - m), axis=1))
        confusions += int(np.sum(np.argmax(p, axis=1) != J0))
        done += n
    return acc.estimate(), confusions


# --------------------------------------------------------------------------- trained runs
def softmax_risk_of_runs(
    kappa: ArrayLike,
    nu: ArrayLike,
    theta: ArrayLike,
    eta: ArrayLike,
    rho: ArrayLike,
    lam: float,
    task: SLRTask,
    key: jax.Array,
    n_samples: int = 20_000,
) -> MonteCarloEstimate:
    r"""The risk of softmax attention (2) at each of several points given by their overlaps (e.g. the ends of runs).

    Run :math:`i` is evaluated by :func:`softmax_risk_from_overlaps` with the key
    ``jax.random.fold_in(key, i)``: independent estimates, one per run, each
    :math:`\varepsilon^2 + \mathbb E[(u - T^{\rm soft}_\lambda)^2]` over the reduced coordinates
    (the reduction of chapter 14).

    Parameters
    ----------
    kappa, nu, theta, eta, rho : array_like, shape (runs,)
        The overlaps of each run (:class:`slrlib.core.risk.Overlaps`).
    lam : float
        The inverse temperature :math:`\lambda \ge 0`.
    task : SLRTask
        The task.
    key : jax.Array
        A ``jax.random`` key.
    n_samples : int
        Simulated sequences per run, ``>= 2``.

    Returns
    -------
    MonteCarloEstimate
        ``mean`` and ``stderr`` of shape (runs,).

    Raises
    ------
    ValueError
        When the overlaps are not 1-d arrays of one length, a run's overlaps belong to no unit
        vectors (:func:`overlap_gram`), or another argument is invalid.
    """
    task = check_task(task)
    key = check_key(key)
    ov = [
        np.asarray(as_float_array(x, name), dtype=np.float64)
        for x, name in (
            (kappa, "kappa"),
            (nu, "nu"),
            (theta, "theta"),
            (eta, "eta"),
            (rho, "rho"),
        )
    ]
    if ov[0].ndim != 1 or any(x.shape != ov[0].shape for x in ov):
        raise ValueError(
            f"kappa, nu, theta, eta, rho must be 1-d arrays of one length, got shapes "
            f"{[x.shape for x in ov]}"
        )
    lam = check_real_scalar(lam, "lam", minimum=0.0)
    ests = [
        softmax_risk_from_overlaps(
            *(float(np.clip(x[i], -1.0, 1.0)) for x in ov),
            lam,
            task,
            jax.random.fold_in(key, i),
            n_samples,
        )
        for i in range(ov[0].size)
    ]
    return MonteCarloEstimate(
        mean=np.array([float(e.mean) for e in ests]),
        stderr=np.array([float(e.stderr) for e in ests]),
        n=ests[0].n if ests else 0,
    )


def recovery_steps(
    kappa: ArrayLike,
    nu: ArrayLike,
    steps: ArrayLike,
    level: float = 0.9,
    signed: bool = True,
) -> np.ndarray:
    r"""Per run, the first logged step at which the run has recovered :math:`(k^\star, v^\star)`; NaN if never.

    ``signed=True`` (softmax attention): :math:`\kappa > \text{level}` and :math:`\nu > \text{level}`.
    ``signed=False`` (erf attention, whose predictor is unchanged by :math:`(k, v) \mapsto (-k, -v)`):
    :math:`|\kappa| > \text{level}`, :math:`|\nu| > \text{level}` and :math:`\kappa\nu > 0`, i.e. near
    :math:`\pm(k^\star, v^\star)`.

    Parameters
    ----------
    kappa, nu : array_like, shape (runs, logs)
        :math:`\langle k_t, k^\star\rangle` and :math:`\langle v_t, v^\star\rangle` at the logged steps.
    steps : array_like, shape (logs,)
        The logged steps.
    level : float
        The threshold, in (0, 1).
    signed : bool
        Whether the sign counts (see above).

    Returns
    -------
    numpy.ndarray, shape (runs,)
        The first logged step of recovery, NaN for a run that never recovers.

    Raises
    ------
    ValueError
        When the shapes disagree or ``level`` is not in (0, 1).
    """
    kappa = np.asarray(as_float_array(kappa, "kappa"), dtype=np.float64)
    nu = np.asarray(as_float_array(nu, "nu"), dtype=np.float64)
    steps = np.asarray(steps)
    if (
        kappa.ndim != 2
        or nu.shape != kappa.shape
        or steps.shape != (kappa.shape[1],)
    ):
        raise ValueError(
            f"kappa and nu must have one shape (runs, logs) and steps shape (logs,), got "
            f"{kappa.shape}, {nu.shape} and {steps.shape}"
        )
    level = check_real_scalar(level, "level")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if signed:
        ok = (kappa > level) & (nu > level)
    else:
        ok = (np.abs(kappa) > level) & (np.abs(nu) > level) & (kappa * nu > 0)
    return np.where(ok.any(axis=1), steps[np.argmax(ok, axis=1)], np.nan)


# --------------------------------------------------------------------------- rates in d
class ExcessAgainstD(NamedTuple):
    r"""Excess risks at the oracle against :math:`d` (fixed :math:`L`, :math:`\gamma`, :math:`\varepsilon = 0`).

    ``bayes``, ``bayes_se``: the Bayes excess (:func:`bayes_excess_reduced`), with
    ``bayes_confusions`` the samples whose posterior mode is not :math:`J_0`; ``softmax``,
    ``softmax_se``: softmax attention at ``lam_softmax``, its best :math:`\lambda` (chosen on one key by
    :func:`best_softmax_lambda`, estimated on an independent one); ``hard_oracle``: the hard oracle's
    excess, a closed form (:func:`slrlib.book.ch04_bayes.hard_oracle_risk`).
    """

    d: np.ndarray
    bayes: np.ndarray
    bayes_se: np.ndarray
    bayes_confusions: np.ndarray
    softmax: np.ndarray
    softmax_se: np.ndarray
    lam_softmax: np.ndarray
    hard_oracle: np.ndarray


def excess_against_d(
    ds: Sequence[int],
    L: int,
    gamma: float,
    key: jax.Array,
    n_bayes: int = 400_000,
    n_softmax: int = 200_000,
) -> ExcessAgainstD:
    r"""The Bayes, best-softmax and hard-oracle excess risks at each :math:`d` of ``ds`` (our addition).

    The task at each :math:`d` is ``SLRTask(d, L, gamma=gamma)`` with :math:`\varepsilon = 0`, so risk and
    excess coincide. Point ``i`` uses ``fold_in(key, i)``, split three ways: the Bayes sample, the
    choice of :math:`\lambda` and the softmax estimate at that :math:`\lambda`.

    Parameters
    ----------
    ds : sequence of int
        Dimensions, each ``>= 2``.
    L : int
        Sequence length, ``>= 2``.
    gamma : float
        Standard deviation of the relevant token around its mean, ``> 0``.
    key : jax.Array
        A ``jax.random`` key.
    n_bayes, n_softmax : int
        Sequences of the Bayes sample and of each softmax estimate, ``>= 2``.

    Returns
    -------
    ExcessAgainstD

    Raises
    ------
    ValueError
        When an argument is invalid.
    """
    from slrlib.book.ch04_bayes import hard_oracle_risk

    key = check_key(key)
    ds = [check_positive_int(d, "ds") for d in np.atleast_1d(np.asarray(ds))]
    if not ds:
        raise ValueError(
            "ds must hold at least one dimension, got an empty sequence"
        )
    L = check_positive_int(L, "L")
    if L < 2:
        raise ValueError(
            f"L must be >= 2 (one token leaves nothing to confuse), got {L}"
        )
    gamma = check_real_scalar(gamma, "gamma", minimum=0.0, strict=True)
    cols: dict[str, list] = {n: [] for n in ExcessAgainstD._fields}
    for i, d in enumerate(ds):
        task = SLRTask(d=int(d), L=L, gamma=gamma)
        k_bayes, k_select, k_value = jax.random.split(
            jax.random.fold_in(key, i), 3
        )
        est, conf = bayes_excess_reduced(task, k_bayes, n_bayes)
        lam, _ = best_softmax_lambda(task, k_select, n_samples=n_softmax)
        soft = softmax_risk_from_overlaps(
            1.0, 1.0, 0.0, 0.0, 0.0, lam, task, k_value, n_softmax
        )
        for name, value in (
            ("d", d),
            ("bayes", est.mean),
            ("bayes_se", est.stderr),
            ("bayes_confusions", conf),
            ("softmax", soft.mean),
            ("softmax_se", soft.stderr),
            ("lam_softmax", lam),
            ("hard_oracle", hard_oracle_risk(task)),
        ):
            cols[name].append(float(value))
    return ExcessAgainstD(**{n: np.asarray(v) for n, v in cols.items()})


class DecayFit(NamedTuple):
    r"""A fitted exponential decay :math:`\log y \approx c - r\,d`: ``rate`` :math:`r`, its standard error
    ``rate_se``, ``intercept`` :math:`c`, and ``chi2`` the reduced :math:`\chi^2` of the weighted fit
    (``nan`` for an unweighted one)."""

    rate: float
    rate_se: float
    intercept: float
    chi2: float


def fit_decay_rate(
    d: ArrayLike, y: ArrayLike, stderr: ArrayLike | None = None
) -> DecayFit:
    r"""Least-squares fit of :math:`\log y = c - r\,d` (our addition).

    With ``stderr`` (Monte Carlo standard errors of ``y``), a weighted fit with the delta-method
    errors :math:`\sigma_i / y_i` of :math:`\log y_i`; the rate's standard error is the weighted fit's,
    scaled by :math:`\sqrt{\chi^2_\nu}` when the reduced :math:`\chi^2` exceeds one (the points scatter
    more than their errors say, e.g. because :math:`\log y` is not exactly linear in :math:`d`).
    Without ``stderr`` (a closed form), an ordinary fit with the standard error of its residuals.

    Parameters
    ----------
    d : array_like, shape (m,)
        At least three distinct abscissae.
    y : array_like, shape (m,)
        Positive values.
    stderr : array_like, shape (m,), optional
        Positive standard errors of ``y``.

    Returns
    -------
    DecayFit

    Raises
    ------
    ValueError
        When the shapes disagree, ``y`` or ``stderr`` is not positive, or fewer than three distinct ``d``.
    """
    d = np.asarray(as_float_array(d, "d"), dtype=np.float64)
    y = np.asarray(as_float_array(y, "y"), dtype=np.float64)
    if d.ndim != 1 or y.shape != d.shape:
        raise ValueError(
            f"d and y must be 1-d of one shape, got {d.shape} and {y.shape}"
        )
    if np.unique(d).size < 3:
        raise ValueError(
            f"d must hold at least 3 distinct values, got {d.tolist()}"
        )
    if not np.all(np.isfinite(y)) or not np.all(y > 0):
        raise ValueError(f"y must be positive and finite, got {y.tolist()}")
    A = np.stack([np.ones_like(d), -d], axis=1)
    if stderr is None:
        w = np.ones_like(d)
    else:
        stderr = np.asarray(as_float_array(stderr, "stderr"), dtype=np.float64)
        if (
            stderr.shape != d.shape
            or not np.all(np.isfinite(stderr))
            or not np.all(stderr > 0)
        ):
            raise ValueError(
                f"stderr must be positive and finite, of shape {d.shape}, got {stderr.tolist()}"
            )
        w = y / stderr
    coef, *_ = np.linalg.lstsq(A * w[:, None], np.log(y) * w, rcond=None)
    resid = (np.log(y) - A @ coef) * w
    dof = d.size - 2
    cov = np.linalg.inv((A * w[:, None]).T @ (A * w[:, None]))
    if stderr is None:
        s2 = float(resid @ resid) / dof if dof > 0 else 0.0
        return DecayFit(
            float(coef[1]),
            float(np.sqrt(s2 * cov[1, 1])),
            float(coef[0]),
            float("nan"),
        )
    chi2 = float(resid @ resid) / dof if dof > 0 else float("nan")
    scale = max(1.0, chi2) if dof > 0 else 1.0
    return DecayFit(
        float(coef[1]), float(np.sqrt(scale * cov[1, 1])), float(coef[0]), chi2
    )
