r"""Which head serves which location: matching trained heads to the relevant tokens (chapter 11).

With several heads on the multiple-location task (30), a head is "matched" to location
:math:`m` when its key direction aligns with :math:`k_m^\star`. The Figures 9 and 10 report the
alignments of each location's matched head.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    from jax.typing import ArrayLike

    from slrlib.training.sgd import SGDResult

__all__ = ["match_heads", "matched_overlaps"]


def match_heads(
    kappa_final: ArrayLike, *, rule: Literal["optimal", "greedy"] = "optimal"
) -> np.ndarray:
    r"""The head matched to each location, from the final alignments :math:`\kappa_{hm}`.

    Parameters
    ----------
    kappa_final : array_like, shape (runs, H, M)
        :math:`\kappa_{hm} = \langle k_h, k_m^\star\rangle` at the last logged step (signs are
        ignored: :math:`|\kappa_{hm}|` is used).
    rule : {"optimal", "greedy"}
        ``"optimal"``: the injective assignment that maximises :math:`\sum_m |\kappa_{h(m) m}|`
        (needs :math:`H \ge M`). ``"greedy"``: the authors' rule, head 1 takes the location of
        its largest :math:`|\kappa|`, head 2 the largest among those left, and so on (needs
        :math:`H = M`). The two differ only when a head aligns with several locations;
        chapter 11 compares them.

    Returns
    -------
    numpy.ndarray of int, shape (runs, M)
        ``perm[r, m]``: the head matched to location ``m`` in run ``r``.

    Raises
    ------
    ValueError
        If ``kappa_final`` is not a finite array of shape (runs, H, M), if ``rule`` is unknown, or
        if ``H < M`` (``"optimal"``) or ``H != M`` (``"greedy"``).
    """
    kappa = np.abs(np.asarray(kappa_final, dtype=float))
    if kappa.ndim != 3:
        raise ValueError(
            f"kappa_final must have shape (runs, H, M), got shape {kappa.shape}"
        )
    if not np.all(np.isfinite(kappa)):
        raise ValueError("kappa_final must be finite")
    runs, H, M = kappa.shape
    if rule == "optimal":
        if H < M:
            raise ValueError(
                f"kappa_final must have H >= M for rule='optimal', got H = {H} < M = {M}"
            )
        perms = list(itertools.permutations(range(H), M))
        scores = np.stack(
            [kappa[:, list(p), list(range(M))].sum(-1) for p in perms], axis=-1
        )
        return np.asarray(perms, dtype=int).reshape(-1, M)[
            np.argmax(scores, axis=-1)
        ]
    if rule == "greedy":
        if H != M:
            raise ValueError(
                f"kappa_final must have H = M for rule='greedy', got H = {H}, M = {M}"
            )
        perm = np.empty((runs, M), dtype=int)
        for i in range(runs):
            free = list(range(M))
            for h in range(H):
                best = max(free, key=lambda j: kappa[i, h, j])
                perm[i, best] = h
                free.remove(best)
        return perm
    raise ValueError(f"rule must be 'optimal' or 'greedy', got {rule!r}")


def matched_overlaps(
    result: SGDResult, perm: ArrayLike | None = None
) -> dict[str, np.ndarray]:
    r"""Overlaps of the head matched to each location, shape (runs, M, logs).

    Parameters
    ----------
    result : slrlib.training.sgd.SGDResult
        A multi-head run (``kappa`` and ``nu`` of shape (runs, H, M, logs)).
    perm : array_like of int, shape (runs, M), optional
        The matching; default :func:`match_heads` (``rule="optimal"``) on the last logged step.

    Returns
    -------
    dict
        ``kappa``, ``nu``: :math:`\langle k_{h(m)}, k_m^\star\rangle`,
        :math:`\langle v_{h(m)}, v_m^\star\rangle`; with two locations also ``kappa_other``,
        ``nu_other``: the same head against the *other* location; ``perm``: the matching.

    Raises
    ------
    ValueError
        If ``result.kappa`` does not have shape (runs, H, M, logs) or ``perm`` shape (runs, M).
    """
    kappa = np.asarray(result.kappa)
    nu = np.asarray(result.nu)
    if kappa.ndim != 4:
        raise ValueError(
            f"result.kappa must have shape (runs, H, M, logs), got shape {kappa.shape}"
        )
    runs, _, M, _ = kappa.shape
    perm = match_heads(kappa[..., -1]) if perm is None else np.asarray(perm)
    if perm.shape != (runs, M):
        raise ValueError(
            f"perm must have shape (runs, M) = ({runs}, {M}), got shape {perm.shape}"
        )
    r = np.arange(runs)[:, None]
    m = np.arange(M)[None, :]
    out = {"kappa": kappa[r, perm, m], "nu": nu[r, perm, m], "perm": perm}
    if M == 2:
        other = 1 - m
        out["kappa_other"] = kappa[r, perm, other]
        out["nu_other"] = nu[r, perm, other]
    return out
