"""Figures 1(b) and 2: linear probes of a pretrained encoder (Section 2.2, Appendix E.1; chapter 12).

The encoder is :data:`slrlib.case_studies.probing.DEFAULT_ENCODER` (MiniLM-L6, shipped inside a PyPI
package, loaded offline); the paper's ``bert-base-uncased`` cannot be downloaded here.
``compute`` is deterministic and cached per process; the [CLS] states are also cached on
disk (:func:`slrlib.case_studies.probing.encode`), so a second run only fits the probes.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from slrlib.case_studies import probing
from slrlib.figures import FigureSpec, register
from slrlib.plots.probing import plot_fig1b, plot_fig2

__all__ = ["encoder", "fig1b_data", "fig2_data", "directions_table"]


@cache
def encoder() -> probing.Encoder:
    """The book's encoder, loaded once per process.

    Returns
    -------
    slrlib.case_studies.probing.Encoder
        :func:`slrlib.case_studies.probing.load_encoder` with its defaults.
    """
    return probing.load_encoder()


@cache
def fig1b_data() -> probing.ProbingResult:
    """Figure 1(b): a probe per layer fitted on the training set, scored on all five sets.

    Cached: computed once per process.

    Returns
    -------
    slrlib.case_studies.probing.ProbingResult
        The experiment (:func:`slrlib.case_studies.probing.run_probing`).
    """
    return probing.run_probing(encoder())


@cache
def fig2_data() -> probing.EmbeddingDirections:
    """Figure 2: the directions k_hat and v_hat in the input embedding space.

    Cached: computed once per process.

    Returns
    -------
    slrlib.case_studies.probing.EmbeddingDirections
        The directions (:func:`slrlib.case_studies.probing.embedding_directions`).
    """
    return probing.embedding_directions(encoder())


def directions_table(
    directions: probing.EmbeddingDirections,
) -> dict[str, np.ndarray]:
    """Figure 2's points, one row per word.

    Parameters
    ----------
    directions : slrlib.case_studies.probing.EmbeddingDirections
        The fitted directions.

    Returns
    -------
    dict of str to numpy.ndarray
        Columns ``word``, ``kind``, ``fitted``, ``k_coordinate``, ``v_coordinate``.
    """
    coords = np.asarray(directions.coords)
    return {
        "word": np.array(directions.words),
        "kind": np.array(directions.kind),
        "fitted": np.asarray(directions.seen, dtype=bool),
        "k_coordinate": coords[:, 0],
        "v_coordinate": coords[:, 1],
    }


register(
    FigureSpec(
        "fig1b",
        "Figure 1(b): linear probes of [CLS], layer by layer",
        12,
        fig1b_data,
        plot_fig1b,
        probing.accuracy_table,
    )
)
register(
    FigureSpec(
        "fig2",
        "Figure 2: sentiment directions in the input embeddings",
        12,
        fig2_data,
        plot_fig2,
        directions_table,
    )
)
