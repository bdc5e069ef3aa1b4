"""Chapter 9's own figures: stochastic PGD against exact PGD, and the exact sampler's Q-Q check."""

from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import LogLocator, MaxNLocator

from slrlib.plots.sgd import PGD_COLOR, SGD_COLOR
from slrlib.plots.style import COLORS, median_band, new_figure, step_axes

__all__ = ["plot_pgd_vs_sgd", "plot_sampler_check"]


def _band_or_line(ax, x, y, color, label, band=True, ls="-"):
    if band:
        median_band(ax, x, y, color, label)
    else:
        ax.plot(
            x, np.median(y, axis=0), color=color, ls=ls, lw=1.5, label=label
        )


def plot_pgd_vs_sgd(data):
    r"""Stochastic PGD (Figure 5) against exact PGD from the same initial overlaps and schedule.

    Four panels, two by two, log scales: the excess risk (held-out and exact for the stochastic
    runs, exact for PGD, and the oracle's at :math:`\lambda_t`); the alignment gaps
    :math:`1 - |\kappa_t|` and :math:`1 - |\nu_t|`; the distance to :math:`\mathcal M`, in full and
    zoomed on the stochastic runs. Medians over runs with 2.5–97.5 % bands; the black and red
    lines over the last quarter of the steps are the values predicted by the linearised dynamics
    at the oracle (:func:`slrlib.book.ch09_sgd_checks.fluctuations_along_schedule`): mean
    alignment gaps, root mean square distance.
    """
    from slrlib.core.risk import oracle_risk

    exp, p, fl = data.sgd, data.pgd, data.floor
    r, cfg = exp.result, exp.config
    steps = np.asarray(r.steps)
    sq = lambda x: np.asarray(x)[:, 0, 0, :]  # noqa: E731

    fig = new_figure(figsize=(6.8, 6.4))
    axes = fig.subplots(2, 2).ravel()

    ax = axes[0]
    _band_or_line(
        ax, steps, exp.excess_risk, SGD_COLOR, "stochastic, held-out"
    )
    _band_or_line(
        ax,
        steps,
        exp.population_excess_risk,
        "tab:cyan",
        "stochastic, exact",
        band=False,
        ls="--",
    )
    _band_or_line(
        ax,
        steps,
        np.asarray(p.risk) - cfg.eps**2,
        PGD_COLOR,
        "exact PGD",
        band=False,
        ls=":",
    )
    oracle = [
        float(oracle_risk(float(lam), cfg.task)) - cfg.eps**2
        for lam in np.asarray(r.lam)
    ]
    ax.plot(
        steps,
        oracle,
        color="tab:red",
        lw=1,
        ls="-.",
        zorder=5,
        label=r"oracle at $\lambda_t$",
    )
    ax.set_yscale("log")
    ax.set_ylabel(r"excess risk $\mathcal{R}_{\lambda_t} - \varepsilon^2$")
    ax.legend(
        loc="upper right", handlelength=1.6, labelspacing=0.3, borderpad=0.3
    )

    ax = axes[1]
    tiny = 1e-16
    for sym, x, y, color in (
        (r"\kappa", sq(r.kappa), np.asarray(p.kappa), "tab:blue"),
        (r"\nu", sq(r.nu), np.asarray(p.nu), "tab:orange"),
    ):
        median_band(
            ax,
            steps,
            np.maximum(1 - np.abs(x), tiny),
            color,
            "$1-|" + sym + "_t|$",
        )
        ax.plot(
            steps,
            np.maximum(np.median(1 - np.abs(y), axis=0), tiny),
            color=color,
            ls=":",
            lw=1.5,
        )
        ax.plot(
            fl.steps,
            fl.predicted["one_minus_" + sym[1:]],
            color="black",
            lw=1.8,
        )
    ax.set_yscale("log")
    ax.set_ylim(1e-6, 1.5)
    ax.yaxis.set_major_locator(LogLocator(numticks=4))
    ax.set_ylabel("alignment gap")
    handles, labels = ax.get_legend_handles_labels()
    handles += [
        Line2D([], [], color="0.3", lw=1.5, ls=":"),
        Line2D([], [], color="black", lw=1.8),
    ]
    labels += ["exact PGD", "predicted"]
    ax.legend(
        handles,
        labels,
        loc="lower left",
        bbox_to_anchor=(-0.03, 1.0),
        ncols=2,
        handlelength=1.4,
        columnspacing=0.8,
        labelspacing=0.3,
        frameon=False,
        borderaxespad=0.1,
    )

    dist = np.sqrt(
        sq(r.theta) ** 2 + sq(r.eta) ** 2 + np.asarray(r.rho)[:, 0, :] ** 2
    )
    for ax, low in ((axes[2], 1e-40), (axes[3], 1e-3)):
        median_band(ax, steps, dist, SGD_COLOR, "stochastic")
        ax.plot(
            steps,
            np.sqrt(np.mean(dist**2, axis=0)),
            color=SGD_COLOR,
            ls="--",
            lw=1,
            label="stochastic, rms",
        )
        median_band(
            ax,
            steps,
            np.maximum(np.asarray(p.distance), low / 10),
            PGD_COLOR,
            "exact PGD",
        )
        ax.plot(
            fl.steps,
            np.sqrt(fl.predicted["distance2"]),
            color="tab:red",
            lw=1.8,
            label="predicted (rms)",
        )
        ax.set_yscale("log")
        ax.set_ylim(low, 3.0)
        ax.set_ylabel(
            r"distance to $\mathcal{M}$" + (" (zoom)" if low > 1e-10 else "")
        )
    axes[2].yaxis.set_major_locator(LogLocator(numticks=5))
    axes[2].legend(
        loc="lower left", handlelength=1.6, labelspacing=0.3, borderpad=0.3
    )

    step_axes(axes)
    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(4, steps=[1, 2, 2.5, 5, 10]))
    fig.suptitle(
        f"Stochastic (batch {cfg.batch_size}) against exact PGD, {cfg.n_runs} runs,\n"
        rf"$\lambda_t$ = {cfg.lam:g}/(1 + {cfg.decay:g} t), α = {cfg.alpha:g}"
    )
    return fig


def _math_label(name: str) -> str:
    """'<g_k, v*>' as mathtext."""
    return (
        "$"
        + name.replace("<", r"\langle ")
        .replace(">", r"\rangle")
        .replace("*", r"^\star")
        + "$"
    )


def plot_sampler_check(check):
    r"""Q–Q plots, exact sampler against plain sampler, of the ten projections of the batch
    gradient (:func:`slrlib.book.ch09_sgd_checks.sampler_check`), five per row: quantiles 0.1 %,
    0.2 %, ..., 99.9 %; on the diagonal when the two laws agree."""
    levels = np.linspace(0.001, 0.999, 999)
    fig = new_figure(figsize=(6.8, 3.7))
    axes = fig.subplots(2, 5)
    for i, (ax, name) in enumerate(zip(axes.ravel(), check.names)):
        qa = np.quantile(check.exact[:, i], levels)
        qb = np.quantile(check.plain[:, i], levels)
        lo, hi = min(qa[0], qb[0]), max(qa[-1], qb[-1])
        ax.plot([lo, hi], [lo, hi], color="0.6", lw=1)
        ax.plot(qb, qa, ".", ms=2, color=COLORS["attention"])
        ax.set_title(_math_label(name))
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal")
        ax.xaxis.set_major_locator(MaxNLocator(2, symmetric=lo < 0 < hi))
        ax.yaxis.set_major_locator(MaxNLocator(2, symmetric=lo < 0 < hi))
        ax.grid(alpha=0.3)
    fig.supxlabel("quantiles of the plain sampler")
    fig.supylabel("quantiles of the exact sampler")
    fig.suptitle(
        f"{check.n_draws:,} draws per sampler, λ = {check.lam:g}, batch {check.batch_size}"
    )
    return fig
