r"""Monte Carlo means of any statistic of the task, with standard errors.

:func:`slrlib.monte_carlo_risk` estimates one kind of expectation, a risk
:math:`\mathbb E[(Y - f(\mathbb X))^2]`. The book also checks the sampler itself
(:math:`\mathbb E[X_{J_0}^\top k^\star] = \sqrt{d/2}`, :math:`\mathbb E[Y^2] = \gamma^2 + \varepsilon^2`,
the law of :math:`J_0`, ...) and the accuracy of selection rules. :func:`monte_carlo_mean`
estimates :math:`\mathbb E[S(\mathbb X, Y, J_0)]` for any statistic ``S`` (or a dictionary of
statistics, all on the same draws), drawing the samples in batches exactly as
:func:`slrlib.monte_carlo_risk` does, so that memory stays bounded and the same key gives
the same samples.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from typing import NamedTuple

from slrlib.validation import check_key, check_positive_int
from slrlib.core.task import Sample, SLRTask, check_directions, check_task

__all__ = [
    "MonteCarloEstimate",
    "RunningMoments",
    "mean_with_stderr",
    "monte_carlo_mean",
    "default_batch_size",
    "comparison_table",
]


class MonteCarloEstimate(NamedTuple):
    r"""A Monte Carlo mean with its standard error and sample size.

    Fields: ``mean``, its standard error ``stderr`` :math:`= \sqrt{\mathrm{var}/n}`, and the
    number of draws ``n``.
    """

    mean: np.ndarray
    stderr: np.ndarray
    n: int

    def z_score(self, reference: ArrayLike) -> np.ndarray:
        """The gap to a reference value in standard errors, ``(mean - reference) / stderr``.

        Parameters
        ----------
        reference : array_like
            The reference value(s), e.g. a closed form; broadcast against ``mean``.

        Returns
        -------
        numpy.ndarray
            The z-score; a few units at most when the reference is the true mean.
        """
        return (self.mean - np.asarray(reference)) / self.stderr


def default_batch_size(task: SLRTask, n_samples: int) -> int:
    """The batch size :func:`slrlib.monte_carlo_risk` uses: about 4 million token entries per batch.

    Parameters
    ----------
    task : SLRTask
        The task (a sample holds ``L * d`` token entries).
    n_samples : int
        Total number of draws.

    Returns
    -------
    int
        ``max(1, min(n_samples, 4_000_000 // (L * d)))``.
    """
    return max(1, min(n_samples, 4_000_000 // (task.L * task.d)))


def mean_with_stderr(values: ArrayLike, axis: int = 0) -> MonteCarloEstimate:
    r"""Sample mean along ``axis`` with its standard error :math:`s/\sqrt n`.

    ``s`` is the sample standard deviation (``ddof = 1``). For 0/1 values (a success
    indicator) this is the binomial standard error :math:`\sqrt{\hat p(1 - \hat p)/n}` up to
    the factor :math:`\sqrt{n/(n-1)}`.

    Parameters
    ----------
    values : array_like
        The draws, at least one axis.
    axis : int
        The sample axis.

    Returns
    -------
    MonteCarloEstimate
        ``mean`` and ``stderr`` of the shape of ``values`` without ``axis``, and ``n``.

    Raises
    ------
    ValueError
        When ``values`` has no axis, fewer than 2 values along ``axis``, or non-finite values.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim == 0:
        raise ValueError(
            "values must have at least one axis (the sample axis)"
        )
    n = x.shape[axis]
    if n < 2:
        raise ValueError(
            f"need at least 2 values along axis {axis} to estimate a standard error, got {n}"
        )
    if not np.all(np.isfinite(x)):
        raise ValueError("values must be finite (no NaN or inf)")
    return MonteCarloEstimate(
        mean=x.mean(axis=axis),
        stderr=x.std(axis=axis, ddof=1) / np.sqrt(n),
        n=int(n),
    )


class RunningMoments:
    """Running mean and centred sum of squares along axis 0, merged batch by batch.

    The pairwise update of Chan, Golub & LeVeque keeps float64 accuracy over many
    batches; :meth:`estimate` gives the mean and its standard error.
    """

    def __init__(self):
        self.mean = None
        self.m2 = None
        self.count = 0

    def add(self, x: np.ndarray) -> None:
        """Merge a batch of draws.

        Parameters
        ----------
        x : numpy.ndarray
            The draws; axis 0 indexes them.
        """
        x = np.asarray(x, dtype=np.float64)
        n = x.shape[0]
        b_mean = x.mean(axis=0)
        b_m2 = np.square(x - b_mean).sum(axis=0)
        if self.mean is None:
            self.mean, self.m2, self.count = b_mean, b_m2, n
            return
        delta = b_mean - self.mean
        total = self.count + n
        self.mean = self.mean + delta * n / total
        self.m2 = self.m2 + b_m2 + delta**2 * self.count * n / total
        self.count = total

    def estimate(self) -> MonteCarloEstimate:
        r"""Mean and standard error of everything merged so far (at least two draws).

        Returns
        -------
        MonteCarloEstimate
            ``mean``, ``stderr`` (sample standard deviation over :math:`\sqrt n`) and ``n``.
        """
        var = self.m2 / (self.count - 1)
        return MonteCarloEstimate(
            mean=self.mean, stderr=np.sqrt(var / self.count), n=self.count
        )


def monte_carlo_mean(
    statistic: Callable[[Sample], Any],
    task: SLRTask,
    k_star: ArrayLike,
    v_star: ArrayLike,
    key: jax.Array,
    n_samples: int = 100_000,
    batch_size: int | None = None,
) -> Any:
    r"""Monte Carlo estimate of :math:`\mathbb E[S(\mathbb X, Y, J_0)]` with its standard error.

    Parameters
    ----------
    statistic : callable
        Maps a :class:`slrlib.core.task.Sample` of ``b`` draws (``X`` (b, L, d), ``y`` (b,),
        ``J0`` (b,)) to an array of shape (b, ...) or to a dictionary (any ``jax`` pytree)
        of such arrays. Booleans are averaged as 0/1 (a probability).
    task : SLRTask
        The task.
    k_star, v_star : array_like, shape (d,)
        Its directions (validated as in :meth:`SLRTask.sample`).
    key : jax.Array
        A ``jax.random`` key. Batches are drawn with ``jax.random.split(key, n_batches)``,
        as in :func:`slrlib.monte_carlo_risk`: with the same key, ``n_samples`` and
        ``batch_size`` both functions see the same samples.
    n_samples : int
        Total number of draws, ``>= 2``.
    batch_size : int, optional
        Draws per batch; default :func:`default_batch_size` (about 4 million token entries).
        Each new batch size compiles the sampler once, so reusing one saves time.

    Returns
    -------
    MonteCarloEstimate or pytree of MonteCarloEstimate
        A :class:`slrlib.MonteCarloEstimate` (``mean``, ``stderr``, ``n``; ``z_score(reference)``)
        of shape ``(...)``, or the same pytree of them.

    Raises
    ------
    ValueError
        When ``statistic`` is not callable, returns no arrays, changes structure between batches,
        returns arrays of the wrong shape or non-finite values, or another argument is invalid
        (``n_samples < 2`` included).
    """
    task = check_task(task)
    if not callable(statistic):
        raise ValueError(
            f"statistic must be a callable Sample -> array(s), got {statistic!r}"
        )
    k_star, v_star = check_directions(k_star, v_star, task.d)
    key = check_key(key)
    n_samples = check_positive_int(n_samples, "n_samples")
    if n_samples < 2:
        raise ValueError(
            f"n_samples must be >= 2 to estimate a standard error, got {n_samples}"
        )
    if batch_size is None:
        batch_size = default_batch_size(task, n_samples)
    batch_size = min(check_positive_int(batch_size, "batch_size"), n_samples)
    n_batches = -(-n_samples // batch_size)

    treedef = None
    accumulators: list[RunningMoments] = []
    for i, batch_key in enumerate(jax.random.split(key, n_batches)):
        n = min(batch_size, n_samples - i * batch_size)
        sample = task.sample(batch_key, n, k_star, v_star)
        leaves, tdef = jax.tree_util.tree_flatten(statistic(sample))
        if treedef is None:
            if not leaves:
                raise ValueError("statistic returned no arrays")
            treedef = tdef
            accumulators = [RunningMoments() for _ in leaves]
        elif tdef != treedef:
            raise ValueError(
                "statistic must return the same structure for every batch"
            )
        for leaf, acc in zip(leaves, accumulators):
            x = np.asarray(jnp.asarray(leaf), dtype=np.float64)
            if x.ndim == 0 or x.shape[0] != n:
                raise ValueError(
                    f"statistic must return arrays of shape (b, ...) with b = {n} draws, "
                    f"got shape {x.shape}"
                )
            if not np.all(np.isfinite(x)):
                raise ValueError(
                    "statistic returned non-finite values (NaN or inf)"
                )
            acc.add(x)
    return jax.tree_util.tree_unflatten(
        treedef, [acc.estimate() for acc in accumulators]
    )


def comparison_table(
    rows: Mapping[str, tuple[MonteCarloEstimate, Any]], digits: int = 5
) -> str:
    r"""A plain-text table: exact value, Monte Carlo mean, standard error and gap in standard errors.

    The last column is :meth:`MonteCarloEstimate.z_score`,
    :math:`(\text{mean} - \text{exact})/\text{stderr}`: a few units at most when the
    exact value is right; ``-`` when the standard error is 0 (all draws equal).

    Parameters
    ----------
    rows : mapping of str to (MonteCarloEstimate, float or array_like)
        Maps a label to ``(estimate, exact)`` with a scalar :class:`MonteCarloEstimate`
        (or one of shape (m,), giving m lines labelled ``label[i]``) and the exact value(s).
    digits : int
        Significant digits of the exact value and the mean.

    Returns
    -------
    str
        The table, one line per quantity under a header.
    """
    lines = []
    for label, (est, exact) in rows.items():
        mean = np.atleast_1d(np.asarray(est.mean, dtype=float))
        se = np.atleast_1d(np.asarray(est.stderr, dtype=float))
        ex = np.broadcast_to(np.asarray(exact, dtype=float), mean.shape)
        for i in range(mean.size):
            name = label if mean.size == 1 else f"{label}[{i}]"
            z = (mean[i] - ex[i]) / se[i] if se[i] > 0 else float("nan")
            lines.append((name, ex[i], mean[i], se[i], z))
    width = max(len("quantity"), *(len(r[0]) for r in lines))
    fmt = f"{{:.{digits}g}}"
    head = f"{'quantity':<{width}}  {'exact':>12}  {'Monte Carlo':>12}  {'std. error':>10}  {'gap (SE)':>8}"
    out = [head, "-" * len(head)]
    for name, ex, m, se, z in lines:
        gap = (
            f"{z:>+8.2f}" if se > 0 else f"{'-':>8}"
        )  # no spread in the draws: no z-score
        out.append(
            f"{name:<{width}}  {fmt.format(ex):>12}  {fmt.format(m):>12}  {se:>10.2g}  {gap}"
        )
    return "\n".join(out)
