"""Figures of the chapter "Why linear predictors fail" (Proposition 3, Figure 3 of the paper).

Plotting only: the numbers come from :mod:`slrlib.core.risk` and :mod:`slrlib.book.ch05_linear`.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from slrlib.book.ch05_linear import RiskTable
from slrlib.plots.style import COLORS, COLUMN_WIDTH_IN

__all__ = [
    "plot_fitted_weights",
    "plot_linear_vs_max_prob",
    "plot_figure3",
    "plot_risk_slider",
]


def _finished(fig):
    """Detach the figure from ``pyplot`` before returning it: in a notebook it is then shown
    once, through its own display as the cell's value, not a second time by the inline backend."""
    plt.close(fig)
    return fig


def plot_fitted_weights(
    fits: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
):
    """Fitted least-squares coefficients against Proposition 3, one panel per case.

    ``fits`` maps a panel title to ``(W_theory, W_fit, stderr)``, arrays of shape (L, d).
    Each coefficient is a point at (theory, fit) with a ±2 standard-error bar; on the
    diagonal when the fit agrees with the closed form.
    """
    n = len(fits)
    fig, axes = plt.subplots(
        1,
        n,
        figsize=(COLUMN_WIDTH_IN, 3.6 if n > 1 else 4.0),
        squeeze=False,
        layout="constrained",
    )
    for ax, (title, (W_th, W_fit, se)) in zip(axes[0], fits.items()):
        W_th, W_fit, se = (
            np.asarray(a, dtype=float).ravel() for a in (W_th, W_fit, se)
        )
        lo, hi = min(W_th.min(), W_fit.min()), max(W_th.max(), W_fit.max())
        pad = 0.05 * (hi - lo + 1e-12)
        ax.plot(
            [lo - pad, hi + pad],
            [lo - pad, hi + pad],
            color=COLORS["bound"],
            lw=0.8,
            label="fit = theory",
        )
        ax.errorbar(
            W_th,
            W_fit,
            yerr=2 * se,
            fmt="o",
            ms=3.5,
            color=COLORS["linear"],
            ecolor=COLORS["monte_carlo"],
            elinewidth=1,
            capsize=2,
            label=r"least squares, $\pm 2$ s.e.",
        )
        ax.xaxis.set_major_locator(plt.MaxNLocator(4))
        ax.yaxis.set_major_locator(plt.MaxNLocator(4))
        ax.set_xlabel("Proposition 3")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("fitted coefficient")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="outside lower center", ncol=2, frameon=False
    )
    return _finished(fig)


def plot_linear_vs_max_prob(
    p_max,
    risks,
    p_curve,
    bound_curve,
    null: float,
    bound: float,
    uniform_p=None,
    uniform_risks=None,
):
    r"""Best linear risk of many laws :math:`\pi` against :math:`\max_\ell\pi_\ell`, with the lower bound.

    ``p_max``, ``risks``: one point per law; ``p_curve``, ``bound_curve``: the bound as a
    function of :math:`p`; ``uniform_p``, ``uniform_risks``: laws uniform on :math:`1/p` positions.
    """
    fig, ax = plt.subplots(
        figsize=(COLUMN_WIDTH_IN, 4.2), layout="constrained"
    )
    ax.scatter(
        p_max,
        risks,
        s=10,
        alpha=0.6,
        color=COLORS["linear"],
        label=r"random laws $\pi$ (Prop. 3)",
    )
    ax.plot(
        p_curve,
        bound_curve,
        color=COLORS["bound"],
        lw=1.2,
        label=r"lower bound through $p$",
    )
    if uniform_p is not None:
        ax.plot(
            uniform_p,
            uniform_risks,
            "D",
            ms=5,
            mfc="none",
            color=COLORS["bound"],
            label=r"uniform on $1/p$ positions",
        )
    ax.axhline(
        null,
        color=COLORS["null"],
        ls="--",
        label=r"null risk $\gamma^2+\varepsilon^2$",
    )
    ax.axhline(bound, color=COLORS["bayes"], ls=":", label=r"$\varepsilon^2$")
    ax.set_xscale("log")
    ax.set_xlabel(r"largest probability $p = \max_\ell \pi_\ell$")
    ax.set_ylabel("best linear risk")
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 0.06))
    ax.grid(alpha=0.3, which="both")
    return _finished(fig)


def plot_figure3(
    tables: Sequence[RiskTable],
    main_d: int,
    fixed_lam: float | None = None,
    mc: Mapping[str, np.ndarray] | None = None,
):
    """Figure 3: risks of the oracle erf attention (Theorem 1) and of the best linear predictor
    (Proposition 3) against the sequence length ``L`` (log scale).

    ``tables``: one :class:`~slrlib.book.ch05_linear.RiskTable` per dimension ``d`` (same ``L`` grid);
    the one with ``d == main_d`` is drawn boldly, and if it was tabulated at ``fixed_lam``
    the risk at that fixed λ is drawn too. ``mc``: Monte Carlo points at ``d == main_d``,
    keys ``L``, ``linear``, ``linear_se``, ``attention``, ``attention_se``. Right panel: the
    minimising λ against ``L``.
    """
    main = next(t for t in tables if t.d == main_d)
    fig, (ax, ax2) = plt.subplots(
        1,
        2,
        figsize=(COLUMN_WIDTH_IN, 6.0),
        layout="constrained",
        gridspec_kw={"width_ratios": [1.6, 1]},
    )
    ax.plot(
        main.L,
        np.full(main.L.shape, main.null),
        color=COLORS["null"],
        ls="--",
        label=r"null predictor, $\gamma^2+\varepsilon^2$",
    )
    ax.plot(
        main.L,
        main.linear,
        color=COLORS["linear"],
        lw=2,
        label="best linear (Prop. 3, any $d$)",
    )
    others = sorted((t for t in tables if t.d != main_d), key=lambda t: t.d)
    shades = np.linspace(0.35, 0.8, max(len(others), 1))
    for t, shade in zip(others, shades):
        ax.plot(
            t.L,
            t.best,
            color=COLORS["attention"],
            lw=1,
            alpha=float(shade),
            ls=(0, (4, 2)) if t.d < main_d else "-.",
            label=f"attention, best $\\lambda$, $d={t.d}$",
        )
    ax.plot(
        main.L,
        main.best,
        color=COLORS["attention"],
        lw=2.2,
        label=f"attention, best $\\lambda$, $d={main_d}$ (Thm. 1)",
    )
    if fixed_lam is not None and main.lam.size:
        i = int(np.argmin(np.abs(main.lam - fixed_lam)))
        ax.plot(
            main.L,
            main.oracle[i],
            color=COLORS["softmax"],
            lw=1.5,
            ls=":",
            label=f"attention, $\\lambda={main.lam[i]:g}$, $d={main_d}$",
        )
    ax.plot(
        main.L,
        np.full(main.L.shape, main.bound),
        color=COLORS["bayes"],
        ls=":",
        label=r"lower bound on the Bayes risk, $\varepsilon^2$",
    )
    if mc is not None:
        ax.errorbar(
            mc["L"],
            mc["linear"],
            yerr=2 * np.asarray(mc["linear_se"]),
            fmt="s",
            ms=5,
            mfc="white",
            color=COLORS["linear"],
            ecolor=COLORS["monte_carlo"],
            capsize=3,
            label=f"Monte Carlo $\\pm 2$ s.e., linear, $d={main_d}$",
        )
        ax.errorbar(
            mc["L"],
            mc["attention"],
            yerr=2 * np.asarray(mc["attention_se"]),
            fmt="o",
            ms=5,
            mfc="white",
            color=COLORS["attention"],
            ecolor=COLORS["monte_carlo"],
            capsize=3,
            label=f"Monte Carlo $\\pm 2$ s.e., attention, $d={main_d}$",
        )
    ax.set_xscale("log")
    top = max(main.null * 1.15, main.null + 0.05)
    ax.set_ylim(min(0.0, main.bound) - 0.02 * top, top)
    ax.set_xlabel("sequence length $L$")
    ax.set_ylabel(r"risk $\mathbb{E}[(Y - f(\mathbb{X}))^2]$")
    ax.set_title("(a) risks")
    ax.grid(alpha=0.3, which="both")

    # at L = 1 the risk decreases in λ up to the search boundary: no minimiser to show
    for t, shade in zip(others, shades):
        keep = t.L >= 2
        ax2.plot(
            t.L[keep],
            t.best_lam[keep],
            color=COLORS["attention"],
            lw=1,
            alpha=float(shade),
            ls=(0, (4, 2)) if t.d < main_d else "-.",
        )
    keep = main.L >= 2
    ax2.plot(
        main.L[keep], main.best_lam[keep], color=COLORS["attention"], lw=2.2
    )
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("sequence length $L$")
    ax2.set_ylabel(r"best inverse temperature $\lambda$")
    ax2.set_title(r"(b) best $\lambda$, same $d$")
    ax2.grid(alpha=0.3, which="both")
    fig.legend(
        *ax.get_legend_handles_labels(),
        loc="outside lower center",
        ncol=2,
        frameon=False,
        handlelength=2.0,
        columnspacing=1.0,
    )
    # the paper's parameters for its Figure 3 were lost in extraction: say on the figure which we chose
    g2 = {
        round(float(t.null - t.bound), 12) for t in tables
    }  # null = γ² + ε², bound = ε²
    eps = {round(float(np.sqrt(t.bound)), 12) for t in tables}
    fig.suptitle(
        "Figure 3, reconstructed with our parameters: uniform π, "
        f"γ² = {', '.join(f'{g:g}' for g in sorted(g2))}, "
        f"ε = {', '.join(f'{e:g}' for e in sorted(eps))}"
    )
    return _finished(fig)


def _plain_log_x(ax, ticks):
    """Log x-axis with plain-text tick labels (no mathtext: slider frames render fast)."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.set_xticklabels([f"{t:g}" for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def plot_risk_slider(table: RiskTable, lam: float, L: int):
    """One slider frame: risks against ``L`` at inverse temperature ``lam`` (left) and the four
    risks at the chosen ``L`` as bars (right). ``lam`` must be in ``table.lam``, ``L`` in ``table.L``.

    Kept light (plain-text labels, fixed layout) because the static book renders every frame.
    """
    hits_lam = np.flatnonzero(np.isclose(table.lam, lam))
    hits_L = np.flatnonzero(table.L == L)
    if hits_lam.size == 0:
        raise ValueError(
            f"lam must be one of the tabulated values {table.lam.tolist()}, got {lam!r}"
        )
    if hits_L.size == 0:
        raise ValueError(
            f"L must be one of the tabulated lengths {table.L.tolist()}, got {L!r}"
        )
    i, j = int(hits_lam[0]), int(hits_L[0])
    fig, (ax, ax2) = plt.subplots(
        1,
        2,
        figsize=(COLUMN_WIDTH_IN, 4.2),
        gridspec_kw={"width_ratios": [1.5, 1]},
    )
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.3, top=0.92, wspace=0.3)
    top = 1.3 * table.null
    ax.plot(
        table.L,
        np.full(table.L.shape, table.null),
        color=COLORS["null"],
        ls="--",
        label="null",
    )
    ax.plot(
        table.L,
        table.linear,
        color=COLORS["linear"],
        lw=2,
        label="best linear",
    )
    ax.plot(
        table.L,
        table.oracle[i],
        color=COLORS["attention"],
        lw=2,
        label=f"attention, λ = {lam:g}",
    )
    ax.plot(
        table.L,
        table.best,
        color=COLORS["attention"],
        lw=1,
        ls=":",
        label="attention, best λ",
    )
    ax.plot(
        table.L,
        np.full(table.L.shape, table.bound),
        color=COLORS["bayes"],
        ls=":",
        label="ε²",
    )
    ax.axvline(L, color="0.5", lw=0.8)
    _plain_log_x(
        ax,
        [
            t
            for t in (1, 10, 100, 1000, 10000)
            if table.L.min() <= t <= table.L.max()
        ],
    )
    ax.set_ylim(min(0.0, table.bound) - 0.02, top)
    ax.set_xlabel("sequence length L")
    ax.set_ylabel("risk")
    ax.set_title(f"d = {table.d}")
    fig.legend(
        *ax.get_legend_handles_labels(),
        loc="lower center",
        ncol=3,
        frameon=False,
        handlelength=1.8,
        columnspacing=1.2,
    )
    ax.grid(alpha=0.3)

    names = ["ε²", "attn.", "linear", "null"]
    values = [table.bound, table.oracle[i, j], table.linear[j], table.null]
    colors = [
        COLORS["bayes"],
        COLORS["attention"],
        COLORS["linear"],
        COLORS["null"],
    ]
    bars = ax2.bar(range(4), np.minimum(values, top), color=colors)
    for bar, value in zip(bars, values):
        ax2.text(
            bar.get_x() + bar.get_width() / 2,
            min(value, top) + 0.01 * top,
            f"{value:.3f}",
            ha="center",
            va="bottom",
        )
    ax2.set_xticks(range(4), names)
    ax2.set_ylim(0, top * 1.12)
    ax2.set_title(f"L = {L}")
    ax2.set_ylabel("risk")
    return _finished(fig)
