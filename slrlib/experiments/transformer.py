r"""The Transformer experiments of Appendix E.3 by name: Figures 8 and 10 of the paper.

The layer and its training are :mod:`slrlib.training.transformer`; this module holds the
paper's run parameters (:data:`TRANSFORMER_CONFIGS`), runs them from a seed, and turns the
results into tidy tables.
"""

from __future__ import annotations

import jax
import numpy as np

from slrlib.core.task import MultiLocationTask, SLRTask
from slrlib.experiments.heads import match_heads
from slrlib.training.transformer import (
    TransformerConfig,
    TransformerResult,
    train_transformer,
)
from slrlib.validation import check_positive_int

__all__ = [
    "TRANSFORMER_CONFIGS",
    "resolve_transformer_config",
    "run_transformer_experiment",
    "matched_alignments",
    "transformer_table",
    "matched_table",
]

#: The paper's two Transformer experiments (Appendix E.3 and the authors' published configuration).
TRANSFORMER_CONFIGS: dict[str, TransformerConfig] = {
    "fig8": TransformerConfig(
        name="fig8",
        title="Figure 8: single-head Transformer layer, single-location regression",
        task=SLRTask(d=80, L=10, eps=0.1),
        n_heads=1,
        r=80,
        m=200,
        alpha=1e-2,
        batch_size=128,
        test_size=1000,
        n_steps=8000,
        log_every=100,
        n_runs=20,
    ),
    "fig10": TransformerConfig(
        name="fig10",
        title="Figure 10: two-head Transformer layer, two-location regression",
        task=MultiLocationTask(d=80, L=10, M=2, eps=0.1),
        n_heads=2,
        r=40,
        m=200,
        alpha=2e-2,
        batch_size=128,
        test_size=1000,
        n_steps=10_000,
        log_every=100,
        n_runs=10,
    ),
}


def resolve_transformer_config(
    config: TransformerConfig | str,
) -> TransformerConfig:
    """A :class:`TransformerConfig`, given itself or its name in :data:`TRANSFORMER_CONFIGS`.

    Parameters
    ----------
    config : TransformerConfig or str
        A configuration or a name of :data:`TRANSFORMER_CONFIGS`.

    Returns
    -------
    TransformerConfig
        The configuration.

    Raises
    ------
    ValueError
        If ``config`` is neither a :class:`TransformerConfig` nor a name of :data:`TRANSFORMER_CONFIGS`.
    """
    if isinstance(config, str):
        if config not in TRANSFORMER_CONFIGS:
            raise ValueError(
                f"name must be one of {sorted(TRANSFORMER_CONFIGS)}, got {config!r}"
            )
        return TRANSFORMER_CONFIGS[config]
    if not isinstance(config, TransformerConfig):
        raise ValueError(
            f"name_or_config must be a TransformerConfig or a name of TRANSFORMER_CONFIGS, got {config!r}"
        )
    return config


def run_transformer_experiment(
    name_or_config: TransformerConfig | str,
    *,
    n_runs: int | None = None,
    seed: int = 0,
) -> TransformerResult:
    """Run a Transformer configuration from ``jax.random.key(seed)``.

    Parameters
    ----------
    name_or_config : TransformerConfig or str
        A configuration or a name of :data:`TRANSFORMER_CONFIGS`.
    n_runs : int, optional
        Number of runs; default: the configuration's.
    seed : int
        Non-negative seed of the key (default 0).

    Returns
    -------
    slrlib.training.transformer.TransformerResult
        The logged run (:func:`slrlib.training.transformer.train_transformer`).

    Raises
    ------
    ValueError
        If ``name_or_config`` is neither a :class:`TransformerConfig` nor a name of
        :data:`TRANSFORMER_CONFIGS`, ``n_runs`` is not a positive integer, or ``seed`` is not a
        non-negative integer.
    """
    config = resolve_transformer_config(name_or_config)
    if n_runs is not None:
        config = config.replace(n_runs=check_positive_int(n_runs, "n_runs"))
    if (
        isinstance(seed, (bool, np.bool_))
        or not isinstance(seed, (int, np.integer))
        or seed < 0
    ):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return train_transformer(config, jax.random.key(int(seed)))


def matched_alignments(result: TransformerResult) -> dict[str, np.ndarray]:
    """Alignments reordered so that head :math:`h'` is the head matched to location :math:`h'`.

    The matching is :func:`slrlib.experiments.match_heads` with ``rule="greedy"`` (the authors'
    rule) on the last logged step.

    Parameters
    ----------
    result : slrlib.training.transformer.TransformerResult
        A finished Transformer experiment.

    Returns
    -------
    dict of str to numpy.ndarray
        ``kappa``, ``kappa_u``, ``nu``, ``nu_gated``: arrays (runs, logs, M, M) whose
        ``[..., i, j]`` entry is the alignment of location i's head with location j (the diagonal
        is the matched alignment); ``head`` (runs, M): which head serves each location.
    """
    head = match_heads(
        result.kappa[:, -1], rule="greedy"
    )  # head[i, j]: the head serving location j
    out = {"head": head}
    for name in ("kappa", "kappa_u", "nu", "nu_gated"):
        a = np.asarray(getattr(result, name))
        out[name] = np.stack([a[i][:, head[i], :] for i in range(a.shape[0])])
    return out


def transformer_table(result: TransformerResult) -> dict[str, np.ndarray]:
    """The logged numbers as tidy columns, one row per (run, logged step, head).

    Parameters
    ----------
    result : slrlib.training.transformer.TransformerResult
        A finished Transformer experiment.

    Returns
    -------
    dict of str to numpy.ndarray
        Columns ``run, step, head, excess_risk, ratio``, then per location m (1-based)
        ``kappa_m, kappa_u_m, nu_m, nu_gated_m`` (unmatched: head as trained).
    """
    n_runs, n_logs, H, M = result.kappa.shape
    shape = (n_runs, n_logs, H)
    cols = {
        "run": np.broadcast_to(
            np.arange(n_runs)[:, None, None], shape
        ).ravel(),
        "step": np.broadcast_to(result.steps[None, :, None], shape).ravel(),
        "head": np.broadcast_to(np.arange(H)[None, None, :], shape).ravel(),
        "excess_risk": np.broadcast_to(result.excess_risk[:, :, None], shape)
        .ravel()
        .astype(float),
        "ratio": result.ratio.ravel().astype(float),
    }
    for m in range(M):
        for name in ("kappa", "kappa_u", "nu", "nu_gated"):
            cols[f"{name}_{m + 1}"] = (
                np.asarray(getattr(result, name))[..., m].ravel().astype(float)
            )
    return cols


def matched_table(result: TransformerResult) -> dict[str, np.ndarray]:
    """Tidy columns of the matched alignments (:func:`matched_alignments`).

    One row per (run, logged step, location i).

    Parameters
    ----------
    result : slrlib.training.transformer.TransformerResult
        A finished Transformer experiment.

    Returns
    -------
    dict of str to numpy.ndarray
        Columns ``run, step, location, head, excess_risk``, then for each location j (1-based)
        ``kappa_j, kappa_u_j, nu_j, nu_gated_j`` (location i's head with j).
    """
    matched = matched_alignments(result)
    n_runs, n_logs, M, _ = matched["kappa"].shape
    shape = (n_runs, n_logs, M)
    cols = {
        "run": np.broadcast_to(
            np.arange(n_runs)[:, None, None], shape
        ).ravel(),
        "step": np.broadcast_to(result.steps[None, :, None], shape).ravel(),
        "location": np.broadcast_to(
            np.arange(1, M + 1)[None, None, :], shape
        ).ravel(),
        "head": np.broadcast_to(matched["head"][:, None, :], shape).ravel(),
        "excess_risk": np.broadcast_to(result.excess_risk[:, :, None], shape)
        .ravel()
        .astype(float),
    }
    for j in range(M):
        for name in ("kappa", "kappa_u", "nu", "nu_gated"):
            cols[f"{name}_{j + 1}"] = (
                matched[name][..., j].ravel().astype(float)
            )
    return cols
