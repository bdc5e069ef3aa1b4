"""Figures of Chapter 1, *The single-location regression task*.

Each figure is created through ``pyplot`` (which sets up the notebook's inline backend) and
closed at once: the notebook then shows it once, as the value of the cell, rather than a
second time when ``pyplot`` flushes its open figures.

Plotting only: the samples come from :meth:`slrlib.SLRTask.sample`, the exact laws of the
squared norms and the exact selection accuracies from :mod:`slrlib.book.ch02_selectors`.
"""

from __future__ import annotations

import jax
import numpy as np
from matplotlib.figure import Figure

from matplotlib.ticker import MaxNLocator

from slrlib.plots.style import COLORS, COLUMN_WIDTH_IN, FIGSIZE, new_figure
from slrlib.book.ch02_selectors import (
    norm_selector_accuracy,
    relevant_token,
    sq_norm_laws,
)
from slrlib.core.task import SLRTask

__all__ = ["sentiment_sketch", "token_clouds", "norm_histograms", "norm_laws"]

_RELEVANT = COLORS["monte_carlo"]
_OTHER = COLORS["null"]


def _split_tokens(X, J0):
    """Relevant tokens (n, d) and the other tokens ((L-1) n, d) of a sample."""
    X = np.asarray(X)
    J0 = np.asarray(J0)
    mask = np.zeros(X.shape[:2], dtype=bool)
    mask[np.arange(X.shape[0]), J0] = True
    return X[mask], X[~mask]


def token_clouds(X, J0, y, k_star, v_star, key, n_seq: int = 300) -> Figure:
    r"""Token clouds: three views of the tokens of ``n_seq`` sequences.

    (a) projections on two random unit directions orthogonal to :math:`k^\star` and
    :math:`v^\star` (drawn with ``key``): relevant and other tokens look alike;
    (b) the coordinates :math:`(X_\ell^\top k^\star, X_\ell^\top v^\star)`: the relevant tokens
    sit at :math:`\sqrt{d/2}` along :math:`k^\star`;
    (c) :math:`Y` against :math:`X_{J_0}^\top v^\star`: the relevant token's :math:`v^\star`
    coordinate is :math:`Y` up to the noise :math:`\xi`.
    """
    X = np.asarray(X)[:n_seq]
    J0 = np.asarray(J0)[:n_seq]
    y = np.asarray(y)[:n_seq]
    k_star = np.asarray(k_star)
    v_star = np.asarray(v_star)
    d = X.shape[-1]
    # Two random orthonormal directions in the complement of span{k*, v*}.
    A = np.asarray(jax.random.normal(key, (d, 2)))
    B = np.column_stack([k_star, v_star])
    A = A - B @ (B.T @ A)
    U, _ = np.linalg.qr(A)
    rel, other = _split_tokens(X, J0)

    fig = new_figure(figsize=(COLUMN_WIDTH_IN, 3.0))
    axes = fig.subplots(1, 3)
    kw_other = dict(s=4, alpha=0.35, color=_OTHER, lw=0, label=r"other tokens")
    kw_rel = dict(
        s=6,
        alpha=0.8,
        color=_RELEVANT,
        lw=0,
        label=r"relevant token $X_{J_0}$",
    )

    ax = axes[0]
    ax.scatter(other @ U[:, 0], other @ U[:, 1], **kw_other)
    ax.scatter(rel @ U[:, 0], rel @ U[:, 1], **kw_rel)
    ax.set_xlabel(r"$X_\ell^\top u_1$")
    ax.set_ylabel(r"$X_\ell^\top u_2$")
    ax.set_title("(a) random view")

    ax = axes[1]
    q = np.sqrt(d / 2.0)
    ax.scatter(other @ k_star, other @ v_star, **kw_other)
    ax.scatter(rel @ k_star, rel @ v_star, **kw_rel)
    ax.axvline(
        q, color=COLORS["bound"], lw=0.8, ls="--", label=r"$\sqrt{d/2}$"
    )
    ax.set_xlabel(r"$X_\ell^\top k^\star$")
    ax.set_ylabel(r"$X_\ell^\top v^\star$")
    ax.set_title(r"(b) along $k^\star, v^\star$")

    ax = axes[2]
    x_rel_v = np.asarray(relevant_token(X, J0)) @ v_star
    ax.scatter(x_rel_v, y, s=6, alpha=0.8, color=_RELEVANT, lw=0)
    lim = np.array([min(x_rel_v.min(), y.min()), max(x_rel_v.max(), y.max())])
    ax.plot(
        lim,
        lim,
        color=COLORS["bound"],
        lw=0.8,
        label=r"$Y = X_{J_0}^\top v^\star$",
    )
    ax.set_xlabel(r"$X_{J_0}^\top v^\star$")
    ax.set_ylabel(r"$Y$", labelpad=0)
    ax.set_title("(c) the output")
    for ax in axes:
        ax.set_aspect("equal", adjustable="datalim")
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.yaxis.set_major_locator(MaxNLocator(4))
    handles, labels = axes[1].get_legend_handles_labels()
    h3, l3 = axes[2].get_legend_handles_labels()
    fig.legend(
        handles + h3,
        labels + l3,
        loc="outside lower center",
        ncol=4,
        markerscale=2.5,
        handlelength=1.2,
        columnspacing=1.0,
    )
    return fig


def _density_of_scaled(dist, d, t):
    """Density of ``S / d`` at ``t`` when ``S`` has the law ``dist``."""
    return d * dist.pdf(d * t)


def norm_histograms(X, J0, task: SLRTask, bins: int = 40) -> Figure:
    r"""Histograms of :math:`\|X_{J_0}\|^2/d` and :math:`\|X_\ell\|^2/d` (:math:`\ell \ne J_0`) over a
    sample, with the exact densities of :func:`slrlib.book.ch02_selectors.sq_norm_laws` and the
    exact means :math:`1/2 + \gamma^2` and :math:`1`.
    """
    rel, other = _split_tokens(X, J0)
    d = task.d
    rel_sq = np.sum(np.square(rel), axis=-1) / d
    other_sq = np.sum(np.square(other), axis=-1) / d
    law_rel, law_other = sq_norm_laws(task)
    lo = min(rel_sq.min(), other_sq.min())
    hi = max(rel_sq.max(), other_sq.max())
    edges = np.linspace(lo, hi, bins + 1)
    t = np.linspace(lo, hi, 400)

    fig = new_figure(figsize=(COLUMN_WIDTH_IN, 3.6))
    ax = fig.subplots()
    ax.hist(
        other_sq,
        bins=edges,
        density=True,
        color=_OTHER,
        alpha=0.45,
        label=f"other tokens ({other_sq.size:,})".replace(",", " "),
    )
    ax.hist(
        rel_sq,
        bins=edges,
        density=True,
        color=_RELEVANT,
        alpha=0.45,
        label=f"relevant tokens ({rel_sq.size:,})".replace(",", " "),
    )
    ax.plot(
        t,
        _density_of_scaled(law_other, d, t),
        color=_OTHER,
        lw=1.5,
        label=r"exact, $\chi^2_d / d$",
    )
    ax.plot(
        t,
        _density_of_scaled(law_rel, d, t),
        color=_RELEVANT,
        lw=1.5,
        label="exact, relevant",
    )
    ax.axvline(1.0, color=_OTHER, ls="--", lw=1)
    ax.axvline(0.5 + task.gamma**2, color=_RELEVANT, ls=":", lw=1.5)
    ax.set_xlabel(r"$\|X\|^2/d$")
    ax.set_ylabel("density")
    ax.set_title(
        rf"$d = {d}$, $\gamma^2 = {task.gamma**2:.3g}$; vertical lines: exact means"
    )
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return fig


def norm_laws(task: SLRTask) -> Figure:
    r"""Exact densities of :math:`\|X_{J_0}\|^2/d` and :math:`\|X_\ell\|^2/d`, and in the title the
    exact accuracy of the largest-norm rule against chance :math:`1/L`. Closed forms only
    (fast enough for a slider frame).
    """
    d = task.d
    law_rel, law_other = sq_norm_laws(task)
    mean_rel, sd_rel = law_rel.mean() / d, law_rel.std() / d
    sd_other = law_other.std() / d
    lo = max(0.0, min(mean_rel - 4.5 * sd_rel, 1.0 - 4.5 * sd_other))
    hi = max(mean_rel + 4.5 * sd_rel, 1.0 + 4.5 * sd_other)
    t = np.linspace(lo, hi, 400)
    acc = norm_selector_accuracy(task)

    fig = new_figure(layout=None, figsize=(COLUMN_WIDTH_IN, 3.6))
    fig.subplots_adjust(left=0.1, right=0.66, bottom=0.15, top=0.86)
    ax = fig.subplots()
    ax.fill_between(
        t,
        _density_of_scaled(law_other, d, t),
        color=_OTHER,
        alpha=0.35,
        label="other tokens",
    )
    ax.fill_between(
        t,
        _density_of_scaled(law_rel, d, t),
        color=_RELEVANT,
        alpha=0.35,
        label="relevant token",
    )
    ax.axvline(1.0, color=_OTHER, ls="--", lw=1, label="their means")
    ax.axvline(0.5 + task.gamma**2, color=_RELEVANT, ls=":", lw=1.5)
    ax.set_xlabel(r"$\|X\|^2/d$")
    ax.set_ylabel("density")
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.set_title(rf"$d={d}$, $L={task.L}$, $\gamma^2={task.gamma**2:.3g}$")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    ax.text(
        1.04,
        0.35,
        f"largest norm\nfinds $J_0$ with\nprobability {acc:.3f}\n(chance {1 / task.L:.3f})",
        transform=ax.transAxes,
        ha="left",
        va="top",
    )
    return fig


#: The sentence pairs of Figure 1(a), from the authors' slides: each pair differs in one token,
#: which flips the sentiment, and that token sits at a different position in the two pairs.
SENTIMENT_PAIRS = (
    (
        ("Everyone", "I", "know", "goes", "well", "in", "the", "end."),
        4,
        ("positive", "negative"),
        "ill",
    ),
    (
        ("And,", "I'm", "feeling", "good."),
        3,
        ("positive", "negative"),
        "awful.",
    ),
)


def sentiment_sketch(pairs=SENTIMENT_PAIRS) -> Figure:
    r"""Figure 1(a) of the paper, drawn: one token decides the output, wherever it stands.

    Each pair of sentences differs in a single token (highlighted), and changing it flips the
    sentiment. The deciding token is at a different position in each pair: this is the
    token-wise sparsity with a random location that single-location regression models.

    Parameters
    ----------
    pairs : sequence of (tokens, position, (label, flipped label), replacement)
        The sentence as a tuple of tokens, the 0-based position of the deciding token, the two
        labels, and the token that replaces it in the second sentence.
    """
    for tokens, pos, labels, replacement in pairs:
        if not 0 <= pos < len(tokens):
            raise ValueError(
                f"position must index a token of {tokens!r}, got {pos!r}"
            )
        if replacement == tokens[pos]:
            raise ValueError(
                f"replacement must differ from the token it replaces, got {replacement!r} twice"
            )
    fig = new_figure(figsize=(COLUMN_WIDTH_IN, 0.62 * len(pairs) * 2 + 0.5))
    ax = fig.add_subplot()
    ax.set_axis_off()
    row = 0.0
    width = max(len(tokens) for tokens, *_ in pairs)
    for tokens, pos, labels, replacement in pairs:
        for variant, label in enumerate(labels):
            words = list(tokens)
            if variant:
                words[pos] = replacement
            for i, word in enumerate(words):
                deciding = i == pos
                ax.text(
                    i,
                    -row,
                    word,
                    ha="center",
                    va="center",
                    bbox=dict(
                        boxstyle="round,pad=0.3",
                        facecolor=_RELEVANT if deciding else "white",
                        edgecolor=_RELEVANT if deciding else _OTHER,
                        alpha=0.9,
                    ),
                )
            ax.annotate(
                "",
                xy=(width + 0.3, -row),
                xytext=(len(words) - 0.4, -row),
                arrowprops=dict(arrowstyle="->", color=_OTHER),
            )
            ax.text(
                width + 0.45,
                -row,
                label,
                ha="left",
                va="center",
                color=COLORS["bayes"]
                if label == "positive"
                else COLORS["linear"],
            )
            row += 1.0
        row += 0.6
    ax.set_xlim(-0.8, width + 2.2)
    ax.set_ylim(-row + 0.9, 0.7)
    ax.set_title("One token decides the sentiment, at a position that varies")
    return fig
