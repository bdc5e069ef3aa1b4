r"""Figures of chapter 16's stress tests: plotting only.

The numbers come from :mod:`slrlib.book.figures.stress` (which calls :mod:`slrlib.book.ch16_stress`).
:func:`plot_stress_tests` draws the four panels; :func:`plot_c_frame` one frame of the slider on
:math:`c = \langle k^\star, v^\star\rangle` (the overlaps along PGD at one :math:`c`). Both return a matplotlib
Figure detached from pyplot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from slrlib.plots.style import COLORS, new_figure

__all__ = ["OVERLAP_STYLE", "plot_stress_tests", "plot_c_frame"]

#: Label and colour of each overlap.
OVERLAP_STYLE = {
    "kappa": (r"$|\kappa|$", "#1f77b4"),
    "nu": (r"$|\nu|$", "#2ca02c"),
    "theta": (r"$|\theta|$", "#ff7f0e"),
    "eta": (r"$|\eta|$", "#d62728"),
    "rho": (r"$|\rho|$", "#9467bd"),
}


def plot_stress_tests(data: Any) -> Any:
    """The four panels of ``stress_tests`` (see :mod:`slrlib.book.figures.stress`).

    Parameters
    ----------
    data : slrlib.book.figures.stress.StressTests
        The output of ``compute_stress_tests``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = new_figure(figsize=(6.8, 6.8))
    ax_c, ax_g, ax_r, ax_p = fig.subplots(2, 2).ravel()
    # ---- c: lines the plane minimiser, dots the PGD medians, bars the fraction of swapped runs
    c = data.c
    m, R = c.cs.size, c.runs
    for j, (name, (label, color)) in enumerate(OVERLAP_STYLE.items()):
        final = np.abs(getattr(c.pgd, name)[:, -1]).reshape(m, R)
        med = np.array(
            [
                np.median(final[i][~c.swapped[i]])
                if np.any(~c.swapped[i])
                else np.nan
                for i in range(m)
            ]
        )
        ax_c.plot(
            c.cs, np.abs(c.plane[:, j]), color=color, lw=1.4, label=label
        )
        ax_c.plot(c.cs, med, color=color, marker="o", ls="none", ms=4)
    ax_c.bar(
        c.cs,
        c.swapped.mean(axis=1),
        width=0.05,
        color=COLORS["null"],
        alpha=0.4,
        label=r"$k \approx \pm v^\star$",
    )
    ax_c.set_xlabel(r"$c = \langle k^\star, v^\star\rangle$")
    ax_c.set_ylabel("final overlap")
    ax_c.set_title(r"(a) $\langle k^\star, v^\star\rangle = c$")
    ax_c.set_ylim(0.0, 1.45)
    ax_c.set_yticks([0.0, 0.5, 1.0])
    ax_c.legend(
        ncol=3,
        loc="upper center",
        handlelength=1.2,
        columnspacing=0.8,
        borderaxespad=0.3,
    )
    ax_c.grid(alpha=0.3)
    # ---- gamma
    g = data.gamma
    ax_g.plot(
        g.gamma2,
        g.ratio_lam,
        color=COLORS["attention"],
        marker="o",
        ms=4,
        label=rf"$\lambda = {data.lam:g}$",
    )
    ax_g.plot(
        g.gamma2,
        g.ratio_best,
        color=COLORS["oracle"],
        marker="s",
        ms=4,
        label=r"best $\lambda$",
    )
    ax_g.axhline(1.0, color=COLORS["null"], ls="--", lw=1)
    ax_g.annotate(
        "null predictor",
        (1.0, 1.0),
        xycoords=("axes fraction", "data"),
        xytext=(-4, 3),
        textcoords="offset points",
        ha="right",
        va="bottom",
        color=COLORS["null"],
    )
    ax_g.axvline(g.break_even, color=COLORS["bound"], ls=":", lw=1)
    ax_g.axvline(0.5, color=COLORS["null"], ls=":", lw=0.8)
    ax_g.set_xscale("log")
    ax_g.set_yscale("log")
    ax_g.set_ylim(top=2.0)
    ax_g.set_xlabel(r"$\gamma^2$")
    ax_g.set_ylabel(r"oracle risk / $\gamma^2$")
    ax_g.set_title(r"(b) $\gamma^2 \neq 1/2$")
    ax_g.legend(loc="lower left", title="oracle at")
    ax_g.grid(alpha=0.3, which="both")
    # ---- r
    r = data.r
    ax_r.plot(
        r.rs,
        r.closed,
        color=COLORS["attention"],
        lw=1.6,
        label=rf"$\lambda = {data.lam:g}$ (closed form)",
    )
    ax_r.errorbar(
        r.rs,
        r.mc,
        yerr=r.mc_se,
        color=COLORS["monte_carlo"],
        marker="o",
        ls="none",
        ms=4,
        capsize=2,
        label="Monte Carlo",
    )
    ax_r.plot(
        r.rs,
        r.risk_best,
        color=COLORS["oracle"],
        lw=1.4,
        ls="--",
        label=r"best $\lambda$",
    )
    ax_r.set_xlabel(r"correlation $r$ of noise tokens")
    ax_r.set_ylabel("oracle risk")
    ax_r.set_title("(c) correlated noise tokens")
    ax_r.legend(loc="upper left")
    ax_r.grid(alpha=0.3)
    # ---- pi
    p = data.pi
    ax_p.axhline(
        p.closed, color=COLORS["attention"], lw=1.6, label="erf oracle (Thm 1)"
    )
    ax_p.errorbar(
        p.p1,
        p.mc,
        yerr=p.mc_se,
        color=COLORS["monte_carlo"],
        marker="o",
        ls="none",
        ms=4,
        capsize=2,
        label="Monte Carlo",
    )
    ax_p.plot(
        p.p1,
        p.linear,
        color=COLORS["linear"],
        marker="s",
        ms=4,
        ls="--",
        label="best linear (Prop. 3)",
    )
    ax_p.set_xlabel(r"$\pi_1$ (others share $1 - \pi_1$)")
    ax_p.set_ylabel("risk")
    ax_p.set_title(r"(d) non-uniform position $\pi$")
    ax_p.legend(loc="lower left", bbox_to_anchor=(0.0, 0.1))
    ax_p.grid(alpha=0.3)
    return fig


def plot_c_frame(c: float, *, data: Any) -> Any:
    """One frame of the slider on :math:`c`: the overlaps along PGD at that :math:`c`.

    Thin lines: every run; thick: the median of the runs that do not end at :math:`k \\approx \\pm v^\\star`;
    dashed: the plane minimiser.

    Parameters
    ----------
    c : float
        One value of ``data.c.cs``.
    data : slrlib.book.figures.stress.StressTests
        The output of ``compute_stress_tests``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.ticker import MaxNLocator, StrMethodFormatter

    panel = data.c
    i = int(np.argmin(np.abs(panel.cs - c)))
    R = panel.runs
    sl = slice(i * R, (i + 1) * R)
    steps = panel.pgd.steps
    fig = new_figure(layout=None, figsize=(6.8, 3.8))
    ax = fig.add_axes((0.11, 0.15, 0.71, 0.74))
    ok = ~panel.swapped[i]
    for j, (name, (label, color)) in enumerate(OVERLAP_STYLE.items()):
        x = np.abs(getattr(panel.pgd, name)[sl])
        ax.plot(steps, x.T, color=color, lw=0.4, alpha=0.35)
        if np.any(ok):
            ax.plot(
                steps,
                np.median(x[ok], axis=0),
                color=color,
                lw=2.0,
                label=label,
            )
        ax.axhline(abs(panel.plane[i, j]), color=color, ls="--", lw=1.0)
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlabel("step $t$")
    ax.set_ylabel("overlap")
    ax.grid(alpha=0.3)
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    ax.set_title(
        rf"$c = {panel.cs[i]:.1f}$: {int(panel.swapped[i].sum())} of {R} runs end at $k \approx \pm v^\star$"
    )
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5))
    return fig
