r"""Figure of chapter 16 (the dynamics quantified): plotting only.

The numbers come from :mod:`slrlib.book.figures.dynamics` (which calls
:mod:`slrlib.book.ch16_dynamics`). Returns a matplotlib Figure detached from pyplot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from slrlib.plots.style import COLORS, new_figure

__all__ = [
    "draw_escape_time",
    "plot_dynamics_timescales",
    "plot_escape_frame",
    "plot_escape_time",
    "plot_swap_race",
]


def draw_escape_time(
    ax,
    data: Any,
    *,
    label_suffix: str = "",
    color: str | None = None,
    bounds: bool = True,
) -> None:
    r"""Draw one ``escape_time`` data set on ``ax``: reduced map (markers), linearised map (line),
    its bounds (band) and the continuous-time estimate (dotted)."""
    x = np.log10(1.0 / np.asarray(data.r0, dtype=float))
    c = color or COLORS["attention"]
    if bounds:
        ax.fill_between(
            x,
            data.lower,
            data.upper,
            color=COLORS["bound"],
            alpha=0.15,
            lw=0,
            label=r"bounds $t_\pm$ (linearised)",
        )
    ax.plot(
        x,
        data.linear,
        color=c,
        lw=1.4,
        label="linearised map, exact" + label_suffix,
    )
    ok = np.asarray(data.reduced) >= 0
    ax.plot(
        x[ok],
        np.asarray(data.reduced)[ok],
        "o",
        color=c,
        ms=4,
        label="reduced map (Lemma 7)" + label_suffix,
    )
    ax.plot(
        x,
        data.continuous,
        ":",
        color=COLORS["bound"],
        lw=1.2,
        label=r"continuous time $\log(R/r_0)/(\alpha|\mu_-|)$" + label_suffix,
    )


def plot_escape_time(data: Any):
    r"""Escape steps from the saddle against :math:`\log_{10}(1/r_0)`, two panels sharing the abscissa. Top:
    the linearised map (exact first passage and its bounds), the nonlinear reduced map, and the continuous-time
    estimate; the slope :math:`\log 10/\log(1 - \alpha\mu_-)` steps per decade is written in the title. Bottom:
    the same minus the exact linear first passage (the linearised map is the zero line), where the constant lag
    of the reduced map and the growing deficit of the continuous-time estimate show."""
    fig = new_figure(figsize=(6.8, 5.6))
    ax, ax2 = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    draw_escape_time(ax, data)
    x = np.log10(1.0 / np.asarray(data.r0, dtype=float))
    lin = np.asarray(data.linear, dtype=float)
    ax2.fill_between(
        x,
        np.asarray(data.lower) - lin,
        np.asarray(data.upper) - lin,
        color=COLORS["bound"],
        alpha=0.15,
        lw=0,
    )
    ax2.axhline(0.0, color=COLORS["attention"], lw=1.4)
    ok = np.asarray(data.reduced) >= 0
    lag = (np.asarray(data.reduced, dtype=float) - lin)[ok]
    ax2.plot(x[ok], lag, "o-", color=COLORS["attention"], ms=4, lw=0.8)
    deficit = np.asarray(data.continuous) - lin
    ax2.plot(x, deficit, ":", color=COLORS["bound"], lw=1.2)
    # direct labels, above the lag and below the deficit: the styles are the top panel's
    ax2.annotate(
        "reduced map",
        (x[ok][len(lag) // 2], lag[len(lag) // 2]),
        xytext=(0, 6),
        textcoords="offset points",
        ha="center",
        va="bottom",
        color=COLORS["attention"],
    )
    ax2.annotate(
        "continuous time",
        (x[len(x) // 2], deficit[len(x) // 2]),
        xytext=(0, -6),
        textcoords="offset points",
        ha="center",
        va="top",
    )
    top = max(float(np.max(lag)) if lag.size else 0.0, 0.0)
    bottom = min(float(np.min(deficit)), 0.0)
    span = top - bottom or 1.0
    ax2.set_ylim(bottom - 0.35 * span, top + 0.35 * span)
    ax2.set_xlabel(r"$\log_{10}(1/r_0)$")
    for a in (ax, ax2):
        a.grid(alpha=0.3)
    ax.set_ylabel(f"steps to $R = {data.radius:g}$")
    ax2.set_ylabel("steps − linearised")
    ax.legend(loc="upper left")
    ax.set_title(
        rf"$\lambda = {data.lam:g}$, $\alpha = {data.alpha:g}$, $d = {data.d}$, $L = {data.L}$: "
        f"{data.per_decade:.1f} steps per decade"
    )
    return fig


def plot_escape_frame(data: Any, *, reference: Any):
    r"""One frame of chapter 16's sliders on :math:`(\lambda, \alpha)`: the escape steps of ``data`` (an
    ``escape_time`` data set, without the bounds) against :math:`\log_{10}(1/r_0)` on a log scale, with the
    reduced map of ``reference`` (the paper's :math:`\lambda, \alpha`) as a wide grey line; :math:`\mu_-` and the steps
    per decade in the title. Drawn without a layout engine (a slider draws many frames)."""
    fig = new_figure(layout=None, figsize=(6.8, 4.2))
    ax = fig.add_axes((0.12, 0.29, 0.85, 0.63))
    x_ref = np.log10(1.0 / np.asarray(reference.r0, dtype=float))
    ax.plot(
        x_ref,
        reference.reduced,
        color="0.75",
        lw=4,
        zorder=0,
        label=rf"reduced map, $\lambda = {reference.lam:g}$, $\alpha = {reference.alpha:g}$",
    )
    draw_escape_time(ax, data, bounds=False)
    ax.set_yscale("log")
    ax.set_ylim(100, 1e5)
    ax.set_xlabel(r"$\log_{10}(1/r_0)$")
    ax.set_ylabel(f"steps to $R = {data.radius:g}$")
    ax.grid(alpha=0.3, which="both")
    fig.legend(
        *ax.get_legend_handles_labels(),
        loc="lower center",
        ncol=2,
        bbox_to_anchor=(0.52, 0.0),
        columnspacing=1.2,
    )
    ax.set_title(
        rf"$\lambda = {data.lam:g}$, $\alpha = {data.alpha:g}$: $\mu_- = {data.mu_minus:.3f}$, "
        f"{data.per_decade:,.0f} steps per decade"
    )
    return fig


def _anchor(t: np.ndarray, y: np.ndarray, level: float) -> int | None:
    """First index where ``y`` drops below ``level`` (None if never)."""
    below = np.flatnonzero(y < level)
    return int(below[0]) if below.size else None


def plot_dynamics_timescales(data: Any):
    r"""One reduced run from near the saddle to the oracle, log scale, two panels. Top (the first steps): the
    distance :math:`|x_t|` to the saddle against :math:`r_0\Lambda_u^t`, and :math:`\psi_t` against :math:`m_\nu^t`;
    bottom (the whole run): :math:`\varphi_t` against :math:`m_\kappa^t`. The reference lines (dashed, labelled
    where they are drawn) are anchored where the angle first drops below :math:`10^{-2}`."""
    from matplotlib.ticker import LogLocator, MaxNLocator, StrMethodFormatter

    t = np.asarray(data.steps, dtype=float)
    fig = new_figure(figsize=(6.8, 6.6))
    ax1, ax2 = fig.subplots(2, 1)
    i_n = _anchor(t, data.psi, 1e-2)
    t_max = (
        t[
            min(
                t.size - 1,
                (i_n or 0) + int(np.searchsorted(t, 6 / -np.log(data.m_nu))),
            )
        ]
        if i_n is not None
        else t[-1]
    )
    early = t <= t_max
    ax1.semilogy(
        t[early],
        data.distance[early],
        color=COLORS["bound"],
        lw=1.4,
        label=r"distance $|x_t|$ to the saddle",
    )
    esc = early & (data.r0 * data.expanding**t < 1.0)
    ax1.semilogy(
        t[esc],
        data.r0 * data.expanding ** t[esc],
        "--",
        color=COLORS["bound"],
        lw=1.0,
    )
    if np.any(esc):
        j = np.flatnonzero(esc)[int(0.35 * np.sum(esc))]
        ax1.annotate(
            r"$r_0\Lambda_u^t$",
            (t[j], data.r0 * data.expanding ** t[j]),
            xytext=(-6, 4),
            textcoords="offset points",
            ha="right",
            va="bottom",
        )
    ax1.semilogy(
        t[early],
        data.psi[early],
        color=COLORS["attention"],
        lw=1.4,
        label=r"$\psi_t = \arccos\nu_t$",
    )
    ax1.semilogy(
        t[early],
        data.phi[early],
        color=COLORS["monte_carlo"],
        lw=1.4,
        label=r"$\varphi_t = \arccos\kappa_t$",
    )
    if i_n is not None:
        ref = data.psi[i_n] * data.m_nu ** (t - t[i_n])
        keep = early & (t >= t[i_n] - 0.3 * (t_max - t[i_n])) & (ref > 1e-9)
        ax1.semilogy(t[keep], ref[keep], "--", color=COLORS["bound"], lw=1.0)
        j = np.flatnonzero(keep)[int(0.75 * np.sum(keep))]
        ax1.annotate(
            r"$\propto m_\nu^t$",
            (t[j], ref[j]),
            xytext=(6, 4),
            textcoords="offset points",
            ha="left",
            va="bottom",
        )
    ax1.set_ylim(0.3 * data.r0, 3.0)
    ax1.set_title(f"the first {int(t_max):,} steps")
    ax1.legend(loc="lower center")
    ax2.semilogy(
        t,
        data.phi,
        color=COLORS["monte_carlo"],
        lw=1.4,
        label=r"$\varphi_t = \arccos\kappa_t$",
    )
    i_k = _anchor(t, data.phi, 1e-2)
    if i_k is not None:
        ref = data.phi[i_k] * data.m_kappa ** (t - t[i_k])
        keep = t >= 0.5 * t[i_k]
        ax2.semilogy(t[keep], ref[keep], "--", color=COLORS["bound"], lw=1.0)
        j = np.flatnonzero(keep)[int(0.6 * np.sum(keep))]
        ax2.annotate(
            r"$\propto m_\kappa^t$",
            (t[j], ref[j]),
            xytext=(6, 6),
            textcoords="offset points",
            ha="left",
            va="bottom",
        )
    ax2.set_title("the whole run")
    ax2.legend(loc="lower left")
    for ax in (ax1, ax2):
        ax.set_xlabel("step $t$")
        ax.set_ylabel("distance, angle (rad)")
        ax.grid(alpha=0.3, which="both")
        ax.yaxis.set_major_locator(LogLocator(numticks=5))
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    taus = (
        _tex_int(-1 / np.log(data.m_nu)),
        _tex_int(-1 / np.log(data.m_kappa)),
    )
    fig.suptitle(
        rf"$r_0 = {_tex_number(data.r0)}$ on the diagonal, $\lambda = {data.lam:g}$, $\alpha = {data.alpha:g}$: "
        rf"$\tau_\nu = {taus[0]}$, $\tau_\kappa = {taus[1]}$ steps"
    )
    return fig


def _tex_int(x: float) -> str:
    """A rounded number with thousands separators that mathtext does not space out."""
    return f"{x:,.0f}".replace(",", "{,}")


def _tex_number(x: float) -> str:
    """``1e-06`` as ``10^{-6}`` (a power of ten), other numbers as ``:g``."""
    e = np.log10(x)
    return (
        f"10^{{{int(round(e))}}}"
        if x > 0 and abs(e - round(e)) < 1e-9
        else f"{x:g}"
    )


def plot_swap_race(data: Any):
    r"""Fraction of uniform starts that end swapped against :math:`\lambda`, one colour per :math:`d`: simulated
    (markers, with two binomial standard errors) and predicted by the race at the saddle (solid line at the radius
    ``data.radius``, dotted at half of it)."""
    fig = new_figure(figsize=(6.8, 4.2))
    ax = fig.subplots()
    palette = [
        COLORS["attention"],
        COLORS["bayes"],
        COLORS["linear"],
        COLORS["bound"],
    ]
    for i, d in enumerate(data.ds):
        c = palette[i % len(palette)]
        se = np.sqrt(data.swapped[i] * (1 - data.swapped[i]) / data.n_runs)
        ax.errorbar(
            data.lams,
            data.swapped[i],
            yerr=2 * se,
            fmt="o",
            color=c,
            ms=4,
            capsize=2,
            label=f"PGD, $d = {d}$",
        )
        ax.plot(
            data.lams,
            data.predicted[i],
            "-",
            color=c,
            lw=1.4,
            label=f"race, $d = {d}$",
        )
        ax.plot(data.lams, data.predicted_half[i], ":", color=c, lw=1.0)
    ax.axhline(0.5, color="0.6", lw=0.8, ls="--")
    ax.set_xlabel(r"constant $\lambda$")
    ax.set_ylabel("fraction of runs that end swapped")
    ax.set_ylim(0.0, 0.6)
    ax.grid(alpha=0.3)
    ax.legend(ncol=2, loc="lower left")
    ax.set_title(
        rf"$L = {data.L}$, $\alpha = {data.alpha:g}$, {data.n_steps:,} steps, {data.n_runs} runs per point"
    )
    return fig
