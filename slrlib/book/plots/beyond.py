r"""Figures of chapter 8 (beyond the manifold): plotting only.

The numbers come from :mod:`slrlib.book.figures.beyond` (which calls :mod:`slrlib.book.ch08_beyond`,
:mod:`slrlib.training.pgd` and :mod:`slrlib.experiments`). Every function returns a matplotlib
Figure detached from pyplot.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from matplotlib.ticker import (
    FixedLocator,
    FuncFormatter,
    LogLocator,
    MaxNLocator,
    MultipleLocator,
    NullLocator,
)

from slrlib.book import ch08_beyond as beyond
from slrlib.plots.style import COLORS, median_band, new_figure

__all__ = [
    "OUTCOME_COLORS",
    "plot_endpoints",
    "plot_endpoints_grid",
    "plot_initial_overlaps",
    "plot_landscape",
    "plot_schedule_anatomy",
    "plot_sweep",
]

#: One colour per outcome of :func:`slrlib.book.ch08_beyond.classify_outcomes`.
OUTCOME_COLORS = {
    "recovered": "#2ca02c",
    "stalled on M": "#17becf",
    "swapped": "#d62728",
    "off M": "#9467bd",
}
_CURVES = {
    "oracle": COLORS["attention"],
    "swapped": OUTCOME_COLORS["swapped"],
    "tilted": OUTCOME_COLORS["off M"],
    "floor": COLORS["null"],
    "linear": COLORS["bound"],
}


def _band(ax, x, runs, color, label):
    median_band(ax, x, runs, color, label, alpha=0.22)


def _log_lambda_axis(ax, ticks=(0.02, 0.05, 0.1, 0.2, 0.5, 1.0)) -> None:
    """A log axis of λ with plain tick labels."""
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_locator(NullLocator())


# --------------------------------------------------------------------------- beyond_schedule
def plot_schedule_anatomy(data):
    r"""Four panels on Figure 4(a)'s runs (median and 2.5–97.5 % band over runs), log step axis:

    1. :math:`|\nu_t|` and :math:`|\kappa_t|`, with :math:`\lambda_t` on a second axis;
    2. the relevant token's margin :math:`a_t = \lambda_t q|\kappa_t|/\sqrt{1 + 2\lambda_t^2\gamma^2}`,
       against the oracle's (:math:`|\kappa| = 1`);
    3. the distance to :math:`\mathcal M` (log scale);
    4. the transverse multipliers of the PGD map at the median point
       (:func:`slrlib.book.ch08_beyond.transverse_multipliers`): a value above 1 pushes the iterates away
       from :math:`\mathcal M`, one below -1 makes them flip sides every step (drawn as minus the
       most negative one).

    A vertical dashed line marks the step where :math:`\lambda_t` crosses :math:`\lambda_c` (oracle
    transversally stable below).
    """
    exp, lam_c = data.exp, data.lam_c
    r, cfg = exp.result, exp.config
    steps = np.asarray(r.steps)[1:]
    lam_t = np.asarray(r.lam)[1:]
    t_c = (cfg.lam / lam_c - 1.0) / 1e-4
    fig = new_figure(figsize=(6.8, 5.6))
    axes = fig.subplots(2, 2).ravel()

    ax = axes[0]
    _band(
        ax, steps, np.abs(np.asarray(r.nu))[:, 1:], "tab:orange", r"$|\nu_t|$"
    )
    _band(
        ax,
        steps,
        np.abs(np.asarray(r.kappa))[:, 1:],
        "tab:blue",
        r"$|\kappa_t|$",
    )
    ax.set_ylim(-0.02, 1.05)
    ax.set_ylabel("alignment")
    twin = ax.twinx()
    twin.plot(
        steps,
        lam_t,
        color="black",
        ls=":",
        lw=1.2,
        label=r"$\lambda_t$ (right)",
    )
    twin.set_ylabel(r"$\lambda_t$")
    twin.set_ylim(0, 1.05)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = twin.get_legend_handles_labels()
    ax.legend(
        h1 + h2,
        l1 + l2,
        loc="lower left",
        bbox_to_anchor=(-0.02, 1.0),
        ncols=3,
        frameon=False,
        handlelength=1.2,
        handletextpad=0.4,
        columnspacing=0.8,
        borderaxespad=0.1,
    )

    ax = axes[1]
    margin = beyond.relevant_margin(
        np.abs(np.asarray(r.kappa))[:, 1:], lam_t, cfg.task
    )
    _band(ax, steps, margin, COLORS["attention"], r"$a_t$")
    q = np.sqrt(cfg.d / 2)
    ax.plot(
        steps,
        lam_t * q / np.sqrt(1 + 2 * lam_t**2 * cfg.gamma**2),
        color="black",
        ls=":",
        lw=1.2,
        label=r"oracle's",
    )
    ax.set_yscale("log")
    ax.set_ylabel(r"margin $a_t$")
    ax.legend(loc="lower right", handlelength=1.2)

    ax = axes[2]
    _band(
        ax,
        steps,
        np.maximum(np.asarray(r.distance)[:, 1:], 1e-18),
        COLORS["linear"],
        "distance to $\\mathcal{M}$",
    )
    ax.set_yscale("log")
    ax.set_ylim(1e-18, 3)
    ax.yaxis.set_major_locator(LogLocator(numticks=5))
    ax.set_ylabel(r"distance to $\mathcal{M}$")
    ax.text(
        t_c * 1.25,
        1e-9,
        rf"$\lambda_t = \lambda_c$" + "\n" + rf"at $t = {t_c:.0f}$",
    )

    ax = axes[3]
    ms = np.asarray(data.multiplier_steps)
    mult = np.asarray(data.multipliers)
    ax.plot(
        ms,
        -np.nanmin(mult, axis=1),
        color="black",
        lw=1.5,
        label="$-$(smallest)",
    )
    ax.plot(
        ms,
        np.nanmax(mult, axis=1),
        color="black",
        lw=1.2,
        ls="--",
        label="largest",
    )
    ax.axhline(1, color=COLORS["linear"], lw=1)
    ax.set_ylim(0.99, 1.012)
    ax.yaxis.set_major_locator(MaxNLocator(4))
    ax.set_ylabel("transverse multipliers")
    ax.legend(loc="upper right", handlelength=1.6)

    for ax in axes:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(numticks=4))
        ax.set_xlabel("step $t$")
        ax.grid(alpha=0.3)
        ax.axvline(t_c, color="black", lw=0.8, ls="--")
    fig.suptitle(f"Figure 4(a), {cfg.n_runs} runs: medians and 95 % bands")
    return fig


# --------------------------------------------------------------------------- beyond_landscape
def plot_landscape(data):
    r"""Closed forms against :math:`\lambda` (log axis), two by two: excess risks of the critical
    points, the noise floor and the best linear and null predictors (log scale); the differences
    of the swapped and tilted points with the oracle; the smallest eigenvalue :math:`\mu_{\min}`
    of :func:`slrlib.book.ch08_beyond.oracle_plane_hessian` (negative above :math:`\lambda_c`,
    shaded: the oracle is a saddle); and the step-size limit :math:`2/\mu_{\max}` against the
    paper's step sizes (one PGD step multiplies a small distance to :math:`\mathcal M` by
    :math:`1 - \alpha\mu` at the oracle). One legend, above, for the first two panels."""
    lam = np.asarray(data["lam"])
    lam_c = float(np.asarray(data["lam_c"])[0])
    fig = new_figure(figsize=(6.8, 6.0))
    axes = fig.subplots(2, 2, sharex=True).ravel()

    ax = axes[0]
    ax.plot(
        lam,
        data["oracle"],
        color=_CURVES["oracle"],
        lw=2,
        label=r"oracle $\pm(k^\star, v^\star)$",
    )
    ax.plot(
        lam,
        data["swapped"],
        color=_CURVES["swapped"],
        lw=1.5,
        ls="--",
        label="swapped point",
    )
    ax.plot(
        lam,
        data["tilted"],
        color=_CURVES["tilted"],
        lw=2,
        label=r"tilted minimum",
    )
    ax.plot(
        lam,
        data["floor"],
        color=_CURVES["floor"],
        lw=1.2,
        ls=":",
        label=r"noise floor",
    )
    ax.axhline(
        float(data["linear"][0]),
        color=_CURVES["linear"],
        lw=1,
        ls="-.",
        label="best linear",
    )
    ax.axhline(
        float(data["null"][0]),
        color=COLORS["null"],
        lw=1,
        ls="--",
        label=r"null, $\gamma^2$",
    )
    ax.set_yscale("log")
    ax.set_ylabel(r"excess risk $\mathcal{R}_\lambda - \varepsilon^2$")
    fig.legend(
        *ax.get_legend_handles_labels(),
        loc="outside upper center",
        ncols=3,
        frameon=False,
        handlelength=1.8,
        columnspacing=1.2,
    )

    ax = axes[1]
    ax.axhline(0, color=_CURVES["oracle"], lw=2)
    ax.plot(
        lam,
        data["swapped"] - data["oracle"],
        color=_CURVES["swapped"],
        lw=1.5,
        ls="--",
    )
    ax.plot(
        lam, data["tilted"] - data["oracle"], color=_CURVES["tilted"], lw=2
    )
    ax.set_ylabel("difference with the oracle")
    ax.set_ylim(-0.85, 0.3)

    ax = axes[2]
    mu_min = np.asarray(data["transverse_eigenvalue"])
    mu_max = np.asarray(data["transverse_eigenvalue_max"])
    ax.plot(lam, mu_min, color=_CURVES["oracle"], lw=2)
    ax.axhline(0, color="black", lw=0.8)
    ax.fill_between(
        lam,
        mu_min,
        0,
        where=mu_min < 0,
        color=_CURVES["tilted"],
        alpha=0.3,
        lw=0,
    )
    ax.set_ylabel(r"$\mu_{\min}$ at the oracle")
    low = float(np.nanmin(mu_min))
    ax.text(lam_c * 0.93, 0.35 * low, "saddle →", ha="right", va="center")
    ax.text(
        lam_c * 0.93,
        0.75 * low,
        rf"$\lambda_c = {lam_c:.3f}$",
        ha="right",
        va="center",
    )

    ax = axes[3]
    ax.plot(
        lam,
        2.0 / mu_max,
        color=_CURVES["oracle"],
        lw=2,
        label=r"$2/\mu_{\max}$",
    )
    for alpha, ls in ((1e-3, ":"), (2e-3, "-."), (4e-3, "--")):
        ax.axhline(alpha, color="black", lw=1, ls=ls)
        ax.text(lam[0], alpha * 1.08, rf"$\alpha$ = {alpha:g}", va="bottom")
    ax.set_yscale("log")
    ax.set_ylabel(r"step size $2/\mu_{\max}$")

    for ax in axes:
        _log_lambda_axis(ax, (0.02, 0.1, 0.5, 1.0))
        ax.grid(alpha=0.3)
        ax.axvline(lam_c, color="black", lw=0.8, ls="--")
    for ax in axes[2:]:
        ax.set_xlabel(r"inverse temperature $\lambda$")
    return fig


# --------------------------------------------------------------------------- beyond_sweep
def plot_sweep(data):
    r"""Where PGD ends, for each constant :math:`\lambda` of the sweep and for the schedule:
    outcome fractions (stacked bars, above), median final :math:`|\kappa|` of the runs on
    :math:`\mathcal M`, and median final excess risk against the oracle's (below)."""
    sw = data.sweep
    fr = sw.fractions()
    sched = data.schedule
    sched_labels = beyond.classify_outcomes(sched.result)
    sched_fr = np.array(
        [(sched_labels == i).mean() for i in range(len(beyond.OUTCOMES))]
    )
    labels = [f"{lam:g}" for lam in sw.lams] + ["sched."]
    x = np.arange(len(labels))
    fig = new_figure(figsize=(6.8, 5.8))
    axes = fig.subplot_mosaic(
        [["bars", "bars"], ["kappa", "risk"]], height_ratios=[1.0, 1.0]
    )

    ax = axes["bars"]
    bottom = np.zeros(len(labels))
    for i, name in enumerate(beyond.OUTCOMES):
        h = np.r_[fr[:, i], sched_fr[i]]
        ax.bar(
            x,
            h,
            bottom=bottom,
            color=OUTCOME_COLORS[name],
            label=name.replace(" M", " ℳ"),
            width=0.8,
        )
        bottom += h
    ax.set_xticks(x, labels)
    ax.set_xlabel(
        r"constant $\lambda$, or the schedule $\lambda_t = 1/(1 + 10^{-4}t)$"
    )
    ax.set_ylabel("fraction of runs")
    ax.set_ylim(0, 1)
    ax.legend(
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncols=4,
        frameon=False,
        handlelength=1.2,
        columnspacing=1.2,
    )
    fig.suptitle(
        f"{sw.labels.shape[1]} runs per constant λ, {sched_labels.size} for the schedule"
    )

    on_m = sw.labels <= 1
    kappa = np.abs(sw.final["kappa"])
    med_kappa = np.array(
        [
            np.median(kappa[i][on_m[i]]) if on_m[i].any() else np.nan
            for i in range(len(sw.lams))
        ]
    )
    ax = axes["kappa"]
    ax.plot(
        sw.lams, med_kappa, "o-", color="tab:blue", label=r"constant $\lambda$"
    )
    sk = np.abs(np.asarray(sched.result.kappa)[:, -1])[sched_labels <= 1]
    if sk.size:
        ax.plot(
            sched.result.lam[-1],
            np.median(sk),
            "*",
            ms=14,
            color="black",
            label="schedule",
        )
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(r"final $|\kappa|$ on $\mathcal{M}$")
    ax.legend(loc="lower left", handlelength=1.2)

    ax = axes["risk"]
    ax.plot(
        sw.lams,
        np.median(sw.excess_risk, axis=1),
        "o",
        color="tab:purple",
        label=r"constant $\lambda$",
    )
    ax.plot(
        sw.lams,
        data.sweep_oracle_risk,
        "-",
        color=COLORS["attention"],
        label="oracle",
    )
    ax.plot(
        sched.result.lam[-1],
        np.median(sched.excess_risk[:, -1]),
        "*",
        ms=14,
        color="black",
        label="schedule",
    )
    ax.set_yscale("log")
    ax.set_ylabel("final excess risk")
    ax.legend(loc="upper left", handlelength=1.2)
    for ax in (axes["kappa"], axes["risk"]):
        _log_lambda_axis(ax, (0.05, 0.1, 0.2, 0.5, 1.0))
        ax.set_xlabel(r"$\lambda$ (final $\lambda_t$)")
    for ax in axes.values():
        ax.grid(alpha=0.3)
    return fig


# --------------------------------------------------------------------------- beyond_init
def plot_initial_overlaps(data):
    r"""Initial :math:`(|\nu_0|, |\eta_0|)` of every run of the two large batches, coloured by outcome;
    each panel's title gives the share of runs that swap above and below the diagonal."""
    fig = new_figure(figsize=(6.8, 4.2))
    axes = fig.subplots(1, 2, sharey=True)
    top = 1.05 * max(
        max(
            np.abs(np.asarray(exp.result.nu)[:, 0]).max(),
            np.abs(np.asarray(exp.result.eta)[:, 0]).max(),
        )
        for exp in (data.small, data.schedule)
    )
    handles = {}
    for ax, (exp, name) in zip(
        axes,
        (
            (data.small, "constant λ = 0.1"),
            (data.schedule, r"schedule $\lambda_t$"),
        ),
    ):
        r = exp.result
        nu0 = np.abs(np.asarray(r.nu)[:, 0])
        eta0 = np.abs(np.asarray(r.eta)[:, 0])
        labels = beyond.classify_outcomes(r)
        for i, outcome in enumerate(beyond.OUTCOMES):
            sel = labels == i
            if sel.any():
                h = ax.scatter(
                    nu0[sel],
                    eta0[sel],
                    s=7 if outcome != "swapped" else 12,
                    alpha=0.7,
                    color=OUTCOME_COLORS[outcome],
                    label=outcome.replace(" M", " ℳ"),
                    lw=0,
                )
                handles.setdefault(outcome, h)
        ax.plot([0, top], [0, top], color="black", lw=0.8, ls="--")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_aspect("equal")
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.yaxis.set_major_locator(MaxNLocator(4))
        sw = labels == 2
        above = eta0 > nu0
        ax.set_title(
            f"{name}, {labels.size} runs\nswap: {sw[above].mean():.0%} above, {sw[~above].mean():.0%} below"
        )
        ax.set_xlabel(r"$|\nu_0|$ (value on $v^\star$)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(r"$|\eta_0|$ (key on $v^\star$)")
    order = [o for o in beyond.OUTCOMES if o in handles]
    leg = fig.legend(
        [handles[o] for o in order],
        [o.replace(" M", " ℳ") for o in order],
        loc="outside lower center",
        ncols=len(order),
        frameon=False,
        handletextpad=0.2,
        columnspacing=1.2,
    )
    for h in leg.legend_handles:
        h.set_sizes([30])
        h.set_alpha(1.0)
    return fig


# --------------------------------------------------------------------------- beyond_endpoints
def _endpoint_panel(ax, data, i, *, title: bool = True):
    sw = data.sweep
    lam = sw.lams[i]
    nu = np.abs(sw.final["nu"][i])
    eta = np.abs(sw.final["eta"][i])
    kappa = np.abs(sw.final["kappa"][i])
    labels = sw.labels[i]
    t = data.sweep_tilted
    ax.plot(
        1,
        1,
        "P",
        mfc="none",
        mec="black",
        ms=16,
        mew=1.5,
        label="oracle",
        zorder=1,
    )
    ax.plot(
        0,
        0,
        "X",
        mfc="none",
        mec=OUTCOME_COLORS["swapped"],
        ms=16,
        mew=1.5,
        label="swapped point",
        zorder=1,
    )
    if np.isfinite(t.risk[i]):
        ax.plot(
            abs(t.overlaps[i, 0]),
            abs(t.overlaps[i, 1]),
            "D",
            mfc="none",
            mec=OUTCOME_COLORS["off M"],
            ms=14,
            mew=1.5,
            label="tilted minimum",
            zorder=1,
        )
    rng = np.random.default_rng(
        0
    )  # a little jitter so that coincident end points stay visible
    jit = 0.01 * rng.standard_normal((2, nu.size))
    for j, outcome in enumerate(beyond.OUTCOMES):
        sel = labels == j
        if sel.any():
            ax.scatter(
                kappa[sel] + jit[0, sel],
                nu[sel] + jit[1, sel],
                s=8 + 50 * eta[sel],
                alpha=0.6,
                color=OUTCOME_COLORS[outcome],
                lw=0,
                label=f"{outcome.replace(' M', ' ℳ')} ({sel.sum()})",
                zorder=2,
            )
    ax.set_xlim(-0.06, 1.08)
    ax.set_ylim(-0.06, 1.08)
    ax.set_aspect("equal")
    ax.xaxis.set_major_locator(MultipleLocator(0.5))
    ax.yaxis.set_major_locator(MultipleLocator(0.5))
    ax.set_xlabel(r"final $|\kappa|$")
    ax.set_ylabel(r"final $|\nu|$")
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(
            rf"$\lambda$ = {lam:g}: median excess risk {np.median(sw.excess_risk[i]):.3f}"
            f"\n(oracle's: {data.sweep_oracle_risk[i]:.3f})"
        )
    leg = ax.legend(
        loc="lower right",
        framealpha=0.85,
        title=r"marker size: $|\eta|$",
        borderpad=0.3,
        handletextpad=0.3,
        labelspacing=0.3,
    )
    for h in leg.legend_handles:
        if hasattr(h, "set_sizes"):
            h.set_sizes([25])
        elif hasattr(h, "set_markersize"):
            h.set_markersize(9)


def plot_endpoints(data, lam: float):
    r"""End points of the sweep's runs at one constant :math:`\lambda` in the plane
    :math:`(|\kappa|, |\nu|)`, coloured by outcome (marker size grows with :math:`|\eta|`), with the
    oracle, the swapped point and, above :math:`\lambda_c`, the tilted minimum; the title gives
    the median excess risk of the runs and the oracle's: the slider frame (fixed layout, 4.6 in)."""
    lams = list(np.asarray(data.sweep.lams))
    if lam not in lams:
        raise ValueError(
            f"lam must be one of the sweep's values {lams}, got {lam!r}"
        )
    fig = new_figure(layout=None, figsize=(4.6, 4.9))
    ax = fig.add_axes((0.16, 0.12, 0.8, 0.8 * 4.6 / 4.9))
    _endpoint_panel(ax, data, lams.index(lam))
    return fig


def plot_endpoints_grid(data, lams: Sequence[float] = (0.1, 0.5, 0.85, 1.0)):
    """:func:`plot_endpoints` for a few values of λ, two per row."""
    all_lams = list(np.asarray(data.sweep.lams))
    missing = [lam for lam in lams if lam not in all_lams]
    if missing:
        raise ValueError(
            f"lams must be values of the sweep {all_lams}, got {missing}"
        )
    rows = -(-len(lams) // 2)
    fig = new_figure(figsize=(6.8, 3.7 * rows))
    axes = np.atleast_1d(fig.subplots(rows, 2)).ravel()
    for ax, lam in zip(axes, lams):
        _endpoint_panel(ax, data, all_lams.index(lam))
    for ax in axes[len(lams) :]:
        ax.remove()
    return fig
