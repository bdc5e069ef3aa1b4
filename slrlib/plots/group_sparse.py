r"""Figure of chapter 13's group-sparse case: pre-training curves and downstream sample efficiency.

Plotting only: the numbers come from :mod:`slrlib.figures.group_sparse`
(:mod:`slrlib.case_studies.token_selection.group_sparse`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from matplotlib.ticker import MaxNLocator

from slrlib.plots.style import COLORS, new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["METHOD_COLORS", "RUN_COLORS", "plot_group_sparse"]

#: One colour per pre-training run.
RUN_COLORS = {"raw": "#ff7f0e", "sym": COLORS["attention"], "D16": "#9467bd"}
#: One colour per downstream method.
METHOD_COLORS = {
    "vec": COLORS["linear"],
    "attention": COLORS["attention"],
    "oracle": COLORS["bayes"],
}
METHOD_LABELS = {
    "vec": r"logistic regression on vec$(X)$",
    "attention": r"frozen pre-trained $W$, fit $v$",
    "oracle": r"oracle: logistic regression on $x_{j^\star}$",
}


def _run_label(name, run):
    c = run.config
    sym = "symmetrised" if c.symmetrize else "raw sample"
    return f"{name}: D = {c.D}, {sym}, α = {c.eta:g}"


def plot_group_sparse(data: Any) -> Figure:
    r"""Figure ``group_sparse``: pre-training curves and downstream sample efficiency, eight panels.

    Top: training loss, test accuracy (Bayes accuracy 1 dotted), :math:`\cos(v_1, v^\star)`, norm
    ratio :math:`\|v_2\|/\|v\|`, one line per pre-training run. Bottom: attention on
    :math:`j^\star` (:math:`S_{j^\star j}` averaged over queries and test samples; dotted,
    :math:`1 - e^{-D}` for scale only, the theorem's constant being unknown), the mean attention
    matrix of run ``sym``, and the downstream test accuracy against :math:`n` for :math:`D = 6`
    and :math:`D = 16` (mean over seeds, ±1 standard error).

    Parameters
    ----------
    data : slrlib.figures.group_sparse.GroupSparseFigure
        The numbers (:func:`slrlib.figures.group_sparse.compute`).

    Returns
    -------
    matplotlib.figure.Figure
        The eight panels: (a) to (f) in three rows of two above the runs' legend, (g) and (h) below.
    """
    fig = new_figure(figsize=(6.8, 11.4))
    top, bottom = fig.subfigures(2, 1, height_ratios=(3.0, 1.25))
    grid = top.subplots(3, 2)
    panels = [
        ("train_loss", "(a) training loss", "loss"),
        ("test_acc", "(b) test accuracy", "accuracy"),
        ("cosine", r"(c) $\cos(v_1, v^\star)$", "cosine"),
        ("norm_ratio", r"(d) norm ratio $\|v_2\| / \|v\|$", "ratio"),
        (
            "attention_jstar",
            r"(e) attention on $j^\star$",
            r"mean $S_{j^\star j}$",
        ),
    ]
    flat = list(grid.ravel()[:5])
    for ax, (field, title, ylabel) in zip(flat, panels):
        for name, run in data.runs.items():
            ax.plot(
                run.steps,
                getattr(run, field),
                color=RUN_COLORS.get(name, "black"),
                lw=1.6,
                ls="--" if name == "D16" else "-",
                label=_run_label(name, run),
            )
        ax.set_title(title)
        ax.set_xlabel("step $t$")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(4))
    flat[0].set_yscale("log")
    flat[1].axhline(
        1.0, color=COLORS["bayes"], ls=":", lw=1.2, label="Bayes accuracy"
    )
    flat[1].set_ylim(0.45, 1.02)
    flat[2].set_ylim(-0.03, 1.03)
    flat[3].set_ylim(-0.03, 1.03)
    ax = flat[4]
    D_min = min(run.config.D for run in data.runs.values())
    ax.axhline(1 - math.exp(-D_min), color="black", ls=":", lw=1.0)
    ax.annotate(
        f"$1 - e^{{-{D_min}}}$ (scale only)",
        (0.97, 1 - math.exp(-D_min) + 0.015),
        xycoords=("axes fraction", "data"),
        ha="right",
        va="bottom",
    )
    ax.set_ylim(0.0, 1.17)
    ax.set_yticks(np.linspace(0, 1, 5))
    top.legend(
        *flat[1].get_legend_handles_labels(),
        ncol=2,
        loc="outside lower center",
        frameon=False,
        handlelength=1.8,
        columnspacing=1.0,
    )

    ax = grid[2, 1]
    run = data.runs["sym"]
    S = run.attention_matrix
    im = ax.imshow(S, vmin=0.0, vmax=1.0, cmap="Blues")
    D = S.shape[0]
    ax.set_xticks(range(D), [str(j + 1) for j in range(D)])
    ax.set_yticks(range(D), [str(i + 1) for i in range(D)])
    ax.tick_params(length=0)
    ax.set_xlabel("query $j$")
    ax.set_ylabel("key $i$")
    for i in range(D):
        for j in range(D):
            ax.text(
                j,
                i,
                f"{S[i, j]:.2f}".replace("0.", ".", 1) if S[i, j] < 1 else "1",
                ha="center",
                va="center",
                color="white" if S[i, j] > 0.5 else "black",
            )
    ax.set_title(
        rf"(f) mean $S_{{ij}}$, sym ($j^\star = {run.config.j_star + 1}$)"
    )
    top.colorbar(im, ax=ax, shrink=0.9, ticks=[0, 0.5, 1])

    axes_ds = bottom.subplots(1, 2, sharey=True)
    for ax, (D, res), letter in zip(
        axes_ds, sorted(data.downstream.items()), "gh"
    ):
        for method in ("vec", "attention", "oracle"):
            acc = getattr(res, f"acc_{method}")
            mean = res.mean_accuracy(method)
            se = (
                acc.std(axis=1, ddof=1) / np.sqrt(acc.shape[1])
                if acc.shape[1] > 1
                else np.zeros_like(mean)
            )
            ax.errorbar(
                res.ns,
                mean,
                yerr=se,
                color=METHOD_COLORS[method],
                marker="o",
                ms=3.5,
                lw=1.5,
                capsize=2,
                label=METHOD_LABELS[method],
            )
        ax.set_xscale("log")
        ax.set_xticks(res.ns, [str(n) for n in res.ns])
        ax.minorticks_off()
        ax.set_ylim(0.45, 1.02)
        ax.set_xlabel("samples $n$")
        ax.set_title(
            f"({letter}) downstream, D = {D}\n(dD = {res.d * D}, d + D = {res.d + D})"
        )
        ax.grid(alpha=0.3, which="both")
    axes_ds[0].set_ylabel("test accuracy")
    bottom.legend(
        *axes_ds[0].get_legend_handles_labels(),
        ncol=1,
        loc="outside lower center",
        frameon=False,
    )
    return fig
