r"""Predictors for single-location regression (Section 3 of Marion et al., 2025).

Every predictor maps tokens ``X`` of shape ``(..., L, d)`` to predictions of shape ``(...)``;
direction arguments of shape ``(..., d)`` broadcast against the leading axes of ``X``, so
one call can evaluate many parameter values on the same samples. Pure functions of
arrays: ``jax.jit``, ``jax.grad`` and ``jax.vmap`` apply (value checks are skipped under
tracing).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import erf, logsumexp
from jax.typing import ArrayLike

from slrlib.validation import (
    as_float_array,
    check_broadcast,
    check_finite,
    check_real_scalar,
    check_shape,
    check_unit_norm,
    check_at_run_time,
    is_concrete,
)
from slrlib.core.task import SLRTask

__all__ = [
    "hard_oracle",
    "softmax_attention",
    "erf_attention",
    "multi_head_erf_attention",
    "linear_predictor",
    "best_linear_weights",
    "bayes_scores",
    "bayes_posterior",
    "bayes_predictor",
    "attention_layer",
    "attention_cls",
]


def _tokens(X):
    """``X`` as a float array of shape (..., L, d).

    Its values (NaN or inf would give NaN silently) are checked by :func:`_refuses_non_finite`
    on the predictor's output when ``X`` is concrete; under tracing, at run time inside
    :func:`slrlib.validation.checked` (elsewhere the check compiles to nothing).
    """
    X = as_float_array(X, "X")
    if jnp.ndim(X) < 2:
        raise ValueError(
            f"X must have shape (..., L, d), got shape {jnp.shape(X)}"
        )
    if not is_concrete(X):
        _check_finite_tokens(X)
    return X


def _refuses_non_finite(
    allow_negative_inf: bool = False, always_check_tokens: bool = False
):
    r"""A predictor that raises, rather than return NaN, when ``X`` has a NaN or an inf.

    A NaN or an inf in a token reaches the prediction of its sequence (through the projections,
    where ``nan * 0`` and ``inf * 0`` are NaN), so the output is checked first: one pass over
    the ``b`` predictions, not over the ``b * L * d`` tokens. Only when a prediction is not
    finite is ``X`` examined, to name its first bad entry (:func:`_check_finite_tokens`); a
    finite ``X`` with a non-finite output has overflowed float64, and says so.
    ``allow_negative_inf``: ``-inf`` is a value (the scores where :math:`\pi_\ell = 0`).
    ``always_check_tokens``: check ``X`` itself on every concrete call, for an output that can
    stay finite (the posterior gives weight 0 to a token whose score is ``-inf``).
    """

    def wrap(fn):
        @functools.wraps(fn)
        def predictor(X, *args, **kwargs):
            out = fn(X, *args, **kwargs)
            if not is_concrete(out):
                return out
            if always_check_tokens:
                _check_finite_tokens(as_float_array(X, "X"))
            bad = jnp.isnan(out) | (
                (out == jnp.inf) if allow_negative_inf else jnp.isinf(out)
            )
            if bool(jnp.any(bad)):
                _check_finite_tokens(as_float_array(X, "X"))
                raise ValueError(
                    f"{fn.__name__} gave non-finite values for a finite X: an overflow "
                    f"(the largest |X| entry is {float(jnp.max(jnp.abs(jnp.asarray(X)))):.3g})"
                )
            return out

        return predictor

    return wrap


def _check_finite_tokens(X):
    """No NaN or inf in ``X``; the message counts the bad entries and shows the first one (the
    whole of ``X``, as :func:`~slrlib.validation.check_finite` prints it, would say little).

    Concrete ``X``: one matrix-vector product with a vector of ones first (a NaN or an infinity
    in a row makes its sum non-finite; BLAS does it in about half the time of
    ``np.isfinite(X).all()``, which the predictors would otherwise pay on every call), and the
    entry-by-entry test only when a sum is not finite (a bad entry, or an overflow). Traced ``X``:
    a run-time check inside :func:`slrlib.validation.checked`, nothing elsewhere (the unused
    test is dropped when compiled).
    """
    if not is_concrete(X):
        bad = ~jnp.isfinite(X)
        check_at_run_time(
            jnp.any(bad),
            jnp.sum(bad),
            "X must be finite (no NaN or inf), got {value} non-finite entries in X of shape "
            f"{jnp.shape(X)}",
        )
        return
    arr = np.asarray(X)
    if arr.size == 0:
        return
    # float32 and float64 have BLAS kernels (float16, bfloat16 go entry by entry).
    if arr.dtype in (np.float32, np.float64):
        ones = np.ones(arr.shape[-1], arr.dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            sums = arr.reshape(-1, arr.shape[-1]) @ ones
        if np.isfinite(sums).all():
            return
    bad = ~np.isfinite(arr)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        n_bad = int(bad.sum())
        raise ValueError(
            f"X must be finite (no NaN or inf), got {n_bad} non-finite "
            f"entr{'y' if n_bad == 1 else 'ies'} in X of shape {arr.shape}, the first "
            f"X[{', '.join(map(str, first))}] = {float(arr[first])}"
        )


def _batches(X, **batch_shapes):
    """The batch shapes (leading axes) of ``X`` (all but its last two) and of the directions
    (``name=shape``) broadcast together; otherwise a ``ValueError`` naming every one with its
    batch shape (JAX alone raises a ``TypeError`` about ``mul`` or an ``einsum`` label error).
    """
    check_broadcast(X=jnp.shape(X)[:-2], **batch_shapes)


def _direction(x, name, d):
    x = as_float_array(x, name)
    if jnp.ndim(x) < 1 or jnp.shape(x)[-1] != d:
        raise ValueError(
            f"{name} must have shape (..., d) with d = {d} (the last axis of X), "
            f"got shape {jnp.shape(x)}"
        )
    check_finite(x, name)
    check_unit_norm(x, name)
    return x


def _lam(lam):
    if is_concrete(lam):
        return check_real_scalar(lam, "lam", minimum=0.0)
    check_at_run_time(
        ~(jnp.isfinite(lam) & (lam >= 0)),
        lam,
        "lam must be finite and >= 0, got {value}",
    )
    return lam


def _project(X, u):
    """``X_l^T u`` for every token: shape (..., L)."""
    return jnp.einsum("...ld,...d->...l", X, u)


@_refuses_non_finite()
def hard_oracle(
    X: ArrayLike, k_star: ArrayLike, v_star: ArrayLike
) -> jax.Array:
    r"""The oracle predictor (1), which reads the token of largest projection on :math:`k^\star`.

    .. math::

        T^\star(\mathbb X) = X_{\hat\jmath}^\top v^\star, \qquad
        \hat\jmath = \arg\max_\ell X_\ell^\top k^\star.

    It detects the relevant token by its projection on :math:`k^\star` and regresses on
    it in the direction :math:`v^\star`. Not differentiable in :math:`k^\star`.

    Parameters
    ----------
    X : array_like, shape (..., L, d)
        Tokens.
    k_star, v_star : array_like, shape (..., d)
        Unit directions; leading axes broadcast against those of ``X``.

    Returns
    -------
    jax.Array, shape (...)
        The predictions.

    Raises
    ------
    ValueError
        When ``X`` has fewer than two axes or is not finite (NaN or inf), a direction has the
        wrong last axis, is not finite or is not of unit norm, or the batch shapes (leading axes)
        of ``X`` (all but its last two), ``k_star`` and ``v_star`` do not broadcast together.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, hard_oracle
    >>> task = SLRTask(d=400, L=10)  # eps = 0: no output noise
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> X, y, _ = task.sample(jax.random.key(1), 100, k_star, v_star)
    >>> pred = hard_oracle(X, k_star, v_star)
    >>> pred.shape
    (100,)
    >>> bool(abs(y - pred).max() < 1e-12)  # it reads the relevant token
    True
    """
    X = _tokens(X)
    d = X.shape[-1]
    k_star = _direction(k_star, "k_star", d)
    v_star = _direction(v_star, "v_star", d)
    _batches(X, k_star=k_star.shape[:-1], v_star=v_star.shape[:-1])
    scores = _project(X, k_star)
    weights = jax.nn.one_hot(
        jnp.argmax(scores, axis=-1), X.shape[-2], dtype=X.dtype
    )
    return jnp.sum(weights * _project(X, v_star), axis=-1)


@_refuses_non_finite()
def softmax_attention(
    X: ArrayLike, k: ArrayLike, v: ArrayLike, lam: ArrayLike
) -> jax.Array:
    r"""Softmax attention (2), with inverse temperature :math:`\lambda`.

    .. math::

        T^{\rm soft}_\lambda(\mathbb X) = \sum_\ell \operatorname{softmax}(\lambda \mathbb X k)_\ell\, X_\ell^\top v.

    The [CLS] row of a one-head attention layer with rank-one query-key and value
    matrices (eqs. 4–5). As :math:`\lambda \to \infty` it tends to :func:`hard_oracle`
    at :math:`(k, v) = (k^\star, v^\star)`.

    Parameters
    ----------
    X : array_like, shape (..., L, d)
        Tokens.
    k, v : array_like, shape (..., d)
        Unit key and value directions; leading axes broadcast against those of ``X``.
    lam : float
        Inverse temperature :math:`\lambda \ge 0`.

    Returns
    -------
    jax.Array, shape (...)
        The predictions.

    Raises
    ------
    ValueError
        When ``X`` has fewer than two axes or is not finite (NaN or inf), a direction has the
        wrong last axis, is not finite or is not of unit norm, the batch shapes (leading axes)
        of ``X`` (all but its last two), ``k`` and ``v`` do not broadcast together, or ``lam`` is
        not a real number ``>= 0`` (checked on concrete values).
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> import jax.numpy as jnp
    >>> from slrlib import SLRTask, hard_oracle, softmax_attention
    >>> task = SLRTask(d=20, L=5)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> X, y, _ = task.sample(jax.random.key(1), 100, k_star, v_star)
    >>> softmax_attention(X, k_star, v_star, 0.5).shape
    (100,)
    >>> # lam = 0 averages the tokens; a large lam gives the hard oracle
    >>> mean = X.mean(axis=-2) @ v_star
    >>> bool(jnp.allclose(softmax_attention(X, k_star, v_star, 0.0), mean))
    True
    >>> hard = hard_oracle(X, k_star, v_star)
    >>> bool(jnp.allclose(softmax_attention(X, k_star, v_star, 1e4), hard))
    True
    """
    X = _tokens(X)
    d = X.shape[-1]
    k = _direction(k, "k", d)
    v = _direction(v, "v", d)
    _batches(X, k=k.shape[:-1], v=v.shape[:-1])
    lam = _lam(lam)
    weights = jax.nn.softmax(lam * _project(X, k), axis=-1)
    return jnp.sum(weights * _project(X, v), axis=-1)


@_refuses_non_finite()
def erf_attention(
    X: ArrayLike, k: ArrayLike, v: ArrayLike, lam: ArrayLike
) -> jax.Array:
    r"""The paper's predictor (3), attention with the component-wise non-linearity erf.

    .. math::

        T^{(k,v)}_\lambda(\mathbb X) = \sum_{\ell=1}^L \operatorname{erf}(\lambda X_\ell^\top k)\, X_\ell^\top v.

    Softmax replaced by the component-wise non-linearity erf: tokens are weighted
    independently, which makes the risk computable in closed form (Theorem 1).

    Parameters
    ----------
    X : array_like, shape (..., L, d)
        Tokens.
    k, v : array_like, shape (..., d)
        Unit key and value directions; leading axes broadcast against those of ``X``.
    lam : float
        Inverse temperature :math:`\lambda \ge 0`.

    Returns
    -------
    jax.Array, shape (...)
        The predictions.

    Raises
    ------
    ValueError
        When ``X`` has fewer than two axes or is not finite (NaN or inf), a direction has the
        wrong last axis, is not finite or is not of unit norm, the batch shapes (leading axes)
        of ``X`` (all but its last two), ``k`` and ``v`` do not broadcast together, or ``lam`` is
        not a real number ``>= 0`` (checked on concrete values).
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, erf_attention, oracle_risk
    >>> task = SLRTask(d=20, L=5)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> X, y, _ = task.sample(jax.random.key(1), 20_000, k_star, v_star)
    >>> pred = erf_attention(X, k_star, v_star, 0.15)  # at (k*, v*)
    >>> pred.shape
    (20000,)
    >>> # the empirical risk (standard error 0.003) and Theorem 1
    >>> mse = float(((y - pred) ** 2).mean())
    >>> round(mse, 2), round(float(oracle_risk(0.15, task)), 2)
    (0.24, 0.24)
    """
    X = _tokens(X)
    d = X.shape[-1]
    k = _direction(k, "k", d)
    v = _direction(v, "v", d)
    _batches(X, k=k.shape[:-1], v=v.shape[:-1])
    lam = _lam(lam)
    return jnp.sum(erf(lam * _project(X, k)) * _project(X, v), axis=-1)


@_refuses_non_finite()
def multi_head_erf_attention(
    X: ArrayLike, K: ArrayLike, V: ArrayLike, lam: ArrayLike
) -> jax.Array:
    r"""The multi-head predictor (31), a sum of ``H`` erf predictors (3).

    .. math::

        \sum_{h=1}^{H} \sum_{\ell=1}^L \operatorname{erf}(\lambda X_\ell^\top k_h)\, X_\ell^\top v_h.

    With ``H = 1`` it is :func:`erf_attention`.

    Parameters
    ----------
    X : array_like, shape (..., L, d)
        Tokens.
    K, V : array_like, shape (..., H, d)
        One unit direction per head (row).
    lam : float
        Inverse temperature :math:`\lambda \ge 0`.

    Returns
    -------
    jax.Array, shape (...)
        The predictions.

    Raises
    ------
    ValueError
        When the shapes do not match (``K`` and ``V`` need the same number of heads ``H``, and
        their batch shapes, all but the last two axes, must broadcast with that of ``X``), ``X``
        or a direction is not finite, a direction is not of unit norm, or ``lam`` is not a real
        number ``>= 0``.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> import jax.numpy as jnp
    >>> from slrlib import SLRTask, erf_attention, multi_head_erf_attention
    >>> task = SLRTask(d=20, L=5)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> X, _, _ = task.sample(jax.random.key(1), 100, k_star, v_star)
    >>> K, V = jnp.stack([k_star, v_star]), jnp.stack([v_star, k_star])
    >>> two = multi_head_erf_attention(X, K, V, 0.15)  # H = 2 heads
    >>> one = [erf_attention(X, k, v, 0.15) for k, v in zip(K, V)]
    >>> bool(jnp.allclose(two, one[0] + one[1]))  # the sum of the heads
    True
    """
    X = _tokens(X)
    d = X.shape[-1]
    K = _direction(K, "K", d)
    V = _direction(V, "V", d)
    if jnp.ndim(K) < 2 or jnp.ndim(V) < 2 or K.shape[-2] != V.shape[-2]:
        raise ValueError(
            f"K and V must have shape (..., H, d) with the same number of heads H, "
            f"got shapes {jnp.shape(K)} and {jnp.shape(V)}"
        )
    _batches(X, K=K.shape[:-2], V=V.shape[:-2])
    lam = _lam(lam)
    pk = jnp.einsum("...ld,...hd->...hl", X, K)
    pv = jnp.einsum("...ld,...hd->...hl", X, V)
    return jnp.sum(erf(lam * pk) * pv, axis=(-2, -1))


@_refuses_non_finite()
def linear_predictor(X: ArrayLike, W: ArrayLike) -> jax.Array:
    r"""A linear predictor :math:`f_W(\mathbb X) = \sum_\ell w_\ell^\top X_\ell`.

    Parameters
    ----------
    X : array_like, shape (..., L, d)
        Tokens.
    W : array_like, shape (L, d)
        The weights, row :math:`\ell` being :math:`w_\ell`.

    Returns
    -------
    jax.Array, shape (...)
        The predictions.

    Raises
    ------
    ValueError
        When ``X`` has fewer than two axes or is not finite, or ``W`` does not have shape (L, d)
        or is not finite.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, best_linear_weights, linear_predictor
    >>> from slrlib import linear_risk
    >>> task = SLRTask(d=20, L=5)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> X, y, _ = task.sample(jax.random.key(1), 20_000, k_star, v_star)
    >>> W = best_linear_weights(task, v_star)  # shape (L, d)
    >>> mse = float(((y - linear_predictor(X, W)) ** 2).mean())
    >>> round(mse, 2), round(float(linear_risk(task)), 2)  # Proposition 3
    (0.44, 0.44)
    """
    X = _tokens(X)
    W = as_float_array(W, "W")
    check_shape(W, "W", X.shape[-2:])
    check_finite(W, "W")
    return jnp.einsum("...ld,ld->...", X, W)


def best_linear_weights(task: SLRTask, v_star: ArrayLike) -> jax.Array:
    r"""The weights of the best linear predictor of Proposition 3.

    .. math::

        w_\ell = \dfrac{\pi_\ell \gamma^2}{1 - \pi_\ell + \pi_\ell \gamma^2}\, v^\star.

    Every weight points along :math:`v^\star`; with a uniform :math:`\pi` they are all equal,
    :math:`w_\ell = \gamma^2 v^\star / (\gamma^2 + L - 1)`.

    Parameters
    ----------
    task : SLRTask
        The task (its law :math:`\pi` of :math:`J_0` and :math:`\gamma`).
    v_star : array_like, shape (d,)
        The task's value direction, unit norm.

    Returns
    -------
    jax.Array, shape (L, d)
        ``W``, row :math:`\ell` being :math:`w_\ell` (for :func:`linear_predictor`).

    Raises
    ------
    ValueError
        When ``task`` is not an :class:`SLRTask` or ``v_star`` is not a finite unit vector of shape (d,).
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> from slrlib import SLRTask, best_linear_weights
    >>> task = SLRTask(d=20, L=5)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> W = best_linear_weights(task, v_star)
    >>> W.shape
    (5, 20)
    >>> # uniform pi: every row is gamma^2 / (gamma^2 + L - 1) v* = v*/9
    >>> [round(float(w @ v_star), 4) for w in W]
    [0.1111, 0.1111, 0.1111, 0.1111, 0.1111]
    """
    if not isinstance(task, SLRTask):
        raise ValueError(f"task must be an SLRTask, got {type(task).__name__}")
    v_star = as_float_array(v_star, "v_star")
    check_shape(v_star, "v_star", (task.d,))
    check_finite(v_star, "v_star")
    check_unit_norm(v_star, "v_star")
    pi = task.pi
    g2 = task.gamma**2
    coef = pi * g2 / (1.0 - pi + pi * g2)
    return coef[:, None] * v_star[None, :]


@_refuses_non_finite(allow_negative_inf=True)
def bayes_scores(X: ArrayLike, k_star: ArrayLike, task: SLRTask) -> jax.Array:
    r"""The Bayes posterior's log-weights as an attention score: :math:`p_\ell(\mathbb X) = \operatorname{softmax}(s)_\ell`.

    **Derivation.** Given :math:`J_0 = \ell`, token :math:`\ell` has density
    :math:`\propto \gamma^{-d}\exp(-\|X_\ell - q k^\star\|^2/(2\gamma^2))` and every other token
    :math:`\propto \exp(-\|X_m\|^2/2)`. By Bayes' rule, dividing by the :math:`\ell`-free product
    :math:`\gamma^{-d}\prod_m e^{-\|X_m\|^2/2}`,

    .. math::

        \log p_\ell(\mathbb X) = \text{const} + \log\pi_\ell - \frac{\|X_\ell - qk^\star\|^2}{2\gamma^2} + \frac{\|X_\ell\|^2}{2}
        = \text{const}' + \underbrace{\log\pi_\ell + \frac{q}{\gamma^2}X_\ell^\top k^\star
          - \Big(\frac1{2\gamma^2} - \frac12\Big)\|X_\ell\|^2}_{s_\ell},

    (the constants do not depend on :math:`\ell`, :math:`q^2\|k^\star\|^2/(2\gamma^2)` included), so
    :math:`\mathbb E[Y\mid\mathbb X] = \sum_\ell \operatorname{softmax}(s)_\ell\, X_\ell^\top v^\star`.

    * :math:`\gamma = 1`, uniform :math:`\pi`: :math:`s_\ell = \text{const} + q\,X_\ell^\top k^\star`, and the Bayes
      predictor **is** softmax attention (2) at :math:`(k^\star, v^\star)` with :math:`\lambda = q = \sqrt{d/2}`.
    * :math:`\gamma^2 \ne 1`: the norm term does not vanish: the Bayes predictor also weighs a token by its
      norm, which no softmax attention with a rank-one score :math:`\lambda X^\top k` can do. At the default
      :math:`\gamma^2 = 1/2`, :math:`s_\ell = \log\pi_\ell + 2q\,X_\ell^\top k^\star - \|X_\ell\|^2/2`.

    Parameters
    ----------
    X : array_like, shape (..., L, d)
        Tokens.
    k_star : array_like, shape (..., d)
        The task's key direction, unit norm.
    task : SLRTask
        The task (:math:`q, \gamma, \pi`).

    Returns
    -------
    jax.Array, shape (..., L)
        The scores :math:`s_\ell` (defined up to an additive constant per sequence; :math:`-\infty` where
        :math:`\pi_\ell = 0`).

    Raises
    ------
    ValueError
        When ``task`` is not an :class:`SLRTask`, ``X`` does not have shape (..., L, d) or is not
        finite, ``k_star`` is not a finite unit vector, or the batch shapes (leading axes) of ``X``
        (all but its last two) and ``k_star`` do not broadcast together.
    """
    X, k_star = _bayes_inputs(X, k_star, task)
    return _bayes_scores(X, k_star, task)


def _bayes_inputs(X, k_star, task, v_star=None):
    """The validated inputs of the Bayes functions: ``(X, k_star)``, or ``(X, k_star, v_star)``."""
    if not isinstance(task, SLRTask):
        raise ValueError(f"task must be an SLRTask, got {type(task).__name__}")
    X = _tokens(X)
    if tuple(X.shape[-2:]) != (task.L, task.d):
        raise ValueError(
            f"X must have shape (..., L, d) = (..., {task.L}, {task.d}), got shape {X.shape}"
        )
    k_star = _direction(k_star, "k_star", task.d)
    if v_star is None:
        _batches(X, k_star=k_star.shape[:-1])
        return X, k_star
    v_star = _direction(v_star, "v_star", task.d)
    _batches(X, k_star=k_star.shape[:-1], v_star=v_star.shape[:-1])
    return X, k_star, v_star


def _bayes_scores(X, k_star, task):
    """:func:`bayes_scores` on validated inputs."""
    g2 = task.gamma**2
    return (
        jnp.log(task.pi)
        + (task.q / g2) * _project(X, k_star)
        - (0.5 / g2 - 0.5) * jnp.sum(jnp.square(X), axis=-1)
    )


@_refuses_non_finite(always_check_tokens=True)
def bayes_posterior(
    X: ArrayLike, k_star: ArrayLike, task: SLRTask
) -> jax.Array:
    r"""Posterior law of the relevant position, :math:`p_\ell(\mathbb X) = \mathbb P(J_0 = \ell \mid \mathbb X)`.

    By Bayes' rule with the Gaussian densities of Section 2, :math:`p = \operatorname{softmax}(s)` with
    the scores :math:`s_\ell` of :func:`bayes_scores`.

    (Our addition: the paper bounds the Bayes risk below by ε², eq. 8, without writing
    the Bayes predictor.)

    Parameters
    ----------
    X : array_like, shape (..., L, d)
        Tokens.
    k_star : array_like, shape (..., d)
        The task's key direction, unit norm.
    task : SLRTask
        The task.

    Returns
    -------
    jax.Array, shape (..., L)
        The posterior probabilities :math:`p_\ell(\mathbb X)`; they sum to 1 along the last axis.

    Raises
    ------
    ValueError
        When ``task`` is not an :class:`SLRTask`, ``X`` does not have shape (..., L, d) or is not
        finite, ``k_star`` is not a finite unit vector, or the batch shapes (leading axes) of ``X``
        (all but its last two) and ``k_star`` do not broadcast together.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> import jax.numpy as jnp
    >>> from slrlib import SLRTask, bayes_posterior
    >>> task = SLRTask(d=20, L=5)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> X, _, J0 = task.sample(jax.random.key(1), 1000, k_star, v_star)
    >>> p = bayes_posterior(X, k_star, task)
    >>> p.shape, bool(jnp.allclose(p.sum(axis=-1), 1.0))
    ((1000, 5), True)
    >>> int((p.argmax(axis=-1) == J0).sum())  # of 1000, the most likely is J0
    994
    """
    logits = bayes_scores(X, k_star, task)
    return jnp.exp(logits - logsumexp(logits, axis=-1, keepdims=True))


@_refuses_non_finite()
def bayes_predictor(
    X: ArrayLike, k_star: ArrayLike, v_star: ArrayLike, task: SLRTask
) -> jax.Array:
    r"""The Bayes predictor :math:`\mathbb E[Y \mid \mathbb X] = \sum_\ell p_\ell(\mathbb X)\, X_\ell^\top v^\star`.

    With :math:`p_\ell` of :func:`bayes_posterior`. It minimises the risk over all measurable
    predictors; its risk, the Bayes risk, is
    :math:`\varepsilon^2 + \mathbb E[(X_{J_0}^\top v^\star - \mathbb E[Y\mid\mathbb X])^2] \ge \varepsilon^2`
    (eq. 8). For :math:`\gamma = 1` and uniform :math:`\pi` it *is* softmax attention (2)
    at :math:`(k^\star, v^\star)` with :math:`\lambda = \sqrt{d/2}`.

    Parameters
    ----------
    X : array_like, shape (..., L, d)
        Tokens.
    k_star, v_star : array_like, shape (..., d)
        The task's directions, unit norm.
    task : SLRTask
        The task.

    Returns
    -------
    jax.Array, shape (...)
        The predictions.

    Raises
    ------
    ValueError
        As :func:`bayes_posterior`, or when ``v_star`` is not a finite unit vector or its batch
        shape does not broadcast with those of ``X`` and ``k_star``.
        Values are checked when concrete; under ``jax.jit`` (or ``vmap``, ``grad``) only shapes are,
        unless the call is wrapped in :func:`slrlib.validation.checked`.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> import jax.numpy as jnp
    >>> from slrlib import SLRTask, bayes_predictor, softmax_attention
    >>> task = SLRTask(d=20, L=5, gamma=1.0)
    >>> k_star, v_star = task.oracle_directions(jax.random.key(0))
    >>> X, _, _ = task.sample(jax.random.key(1), 100, k_star, v_star)
    >>> bayes = bayes_predictor(X, k_star, v_star, task)
    >>> # gamma = 1, uniform pi: softmax attention at lam = sqrt(d/2)
    >>> soft = softmax_attention(X, k_star, v_star, task.q)
    >>> bool(jnp.allclose(bayes, soft))
    True
    """
    X, k_star, v_star = _bayes_inputs(X, k_star, task, v_star)
    logits = _bayes_scores(X, k_star, task)
    p = jnp.exp(logits - logsumexp(logits, axis=-1, keepdims=True))
    return jnp.sum(p * _project(X, v_star), axis=-1)


@_refuses_non_finite()
def attention_layer(
    X: ArrayLike,
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    O: ArrayLike,
    lam: ArrayLike,
) -> jax.Array:
    r"""A single-head attention layer (4), one output per token.

    .. math::

        \operatorname{softmax}(\lambda\, \mathbb X Q K^\top \mathbb X^\top)\, \mathbb X V O^\top.

    Softmax acts row by row.

    Parameters
    ----------
    X : array_like, shape (..., L, d)
        Tokens.
    Q, K, V : array_like, shape (d, p)
        Query, key and value matrices.
    O : array_like, shape (o, p)
        Output matrix.
    lam : float
        Inverse temperature :math:`\lambda \ge 0`.

    Returns
    -------
    jax.Array, shape (..., L, o)
        One output per token.

    Raises
    ------
    ValueError
        When ``X`` or a matrix is not finite or the shapes do not match, or ``lam`` is not a real
        number ``>= 0``.
    """
    X = _tokens(X)
    mats = {}
    for name, M in (("Q", Q), ("K", K), ("V", V), ("O", O)):
        M = as_float_array(M, name)
        if jnp.ndim(M) != 2:
            raise ValueError(
                f"{name} must be a matrix, got shape {jnp.shape(M)}"
            )
        check_finite(M, name)
        mats[name] = M
    Q, K, V, O = mats["Q"], mats["K"], mats["V"], mats["O"]
    d = X.shape[-1]
    p = Q.shape[1]
    for name, M in (("Q", Q), ("K", K), ("V", V)):
        if M.shape != (d, p):
            raise ValueError(
                f"{name} must have shape (d, p) = ({d}, {p}), got {M.shape}"
            )
    if O.shape[1] != p:
        raise ValueError(
            f"O must have shape (o, p) with p = {p}, got {O.shape}"
        )
    lam = _lam(lam)
    scores = lam * jnp.einsum("...id,dp,ep,...je->...ij", X, Q, K, X)
    return jnp.einsum(
        "...ij,...jd,dp,op->...io", jax.nn.softmax(scores, axis=-1), X, V, O
    )


@_refuses_non_finite()
def attention_cls(
    X: ArrayLike,
    x_cls: ArrayLike,
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    O: ArrayLike,
    lam: ArrayLike,
) -> jax.Array:
    r"""The [CLS] row of an attention layer (5), whose query is the [CLS] embedding.

    .. math::

        \operatorname{softmax}(\lambda\, x_{\rm cls}^\top Q K^\top \mathbb X^\top)\, \mathbb X V O^\top.

    The query is the [CLS] embedding ``x_cls`` (d,), the keys and values are the tokens
    ``X`` (..., L, d). With ``p = o = 1``, ``K = k``, ``V = v``, ``O = 1`` this is softmax
    attention (2) at inverse temperature :math:`\lambda\, x_{\rm cls}^\top Q`.

    Parameters
    ----------
    X : array_like, shape (..., L, d)
        Tokens (keys and values).
    x_cls : array_like, shape (d,)
        The [CLS] embedding (the query).
    Q, K, V : array_like, shape (d, p)
        Query, key and value matrices.
    O : array_like, shape (o, p)
        Output matrix.
    lam : float
        Inverse temperature :math:`\lambda \ge 0`.

    Returns
    -------
    jax.Array, shape (..., o)
        The [CLS] output.

    Raises
    ------
    ValueError
        When ``X`` is not finite, ``x_cls`` does not have shape (d,), a matrix is not a finite 2-d
        array, or ``lam`` is not a real number ``>= 0``.
    """
    X = _tokens(X)
    x_cls = as_float_array(x_cls, "x_cls")
    check_shape(x_cls, "x_cls", (X.shape[-1],))
    check_finite(x_cls, "x_cls")
    # Prepend [CLS] as a query only: the row of (4) for a query x_cls over keys X.
    Q = as_float_array(Q, "Q")
    K = as_float_array(K, "K")
    V = as_float_array(V, "V")
    O = as_float_array(O, "O")
    for name, M in (("Q", Q), ("K", K), ("V", V), ("O", O)):
        if jnp.ndim(M) != 2:
            raise ValueError(
                f"{name} must be a matrix, got shape {jnp.shape(M)}"
            )
        check_finite(M, name)
    lam = _lam(lam)
    scores = lam * jnp.einsum("d,dp,ep,...je->...j", x_cls, Q, K, X)
    return jnp.einsum(
        "...j,...jd,dp,op->...o", jax.nn.softmax(scores, axis=-1), X, V, O
    )
