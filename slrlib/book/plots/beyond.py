r"""Figures of chapter 8 (beyond the manifold): plotting only.

The numbers come from :mod:`slrlib.book.figures.beyond` (which calls :mod:`slrlib.book.ch08_beyond`,
:mod:`slrlib.training.pgd` and :mod:`slrlib.experiments`). Every function returns a matplotlib
Figure detached from pyplot.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

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


# --------------------------------------------------------------------------- beyond_schedule
def plot_schedule_anatomy(data):
    r"""Four panels on Figure 4(a)'s runs (median and 2.5–97.5 % band over runs), log step axis:

    1. :math:`|\nu_t|` and :math:`|\kappa_t|`, with :math:`\lambda_t` on a second axis;
    2. the relevant token's margin :math:`a_t = \lambda_t q|\kappa_t|/\sqrt{1 + 2\lambda_t^2\gamma^2}`;
    3. the distance to :math:`\mathcal M` (log scale);
    4. the transverse multipliers of the PGD map at the median point
       (:func:`slrlib.book.ch08_beyond.transverse_multipliers`): a value above 1 pushes the iterates away
       from :math:`\mathcal M`, one below -1 makes them flip sides every step.

    A vertical line marks the step where :math:`\lambda_t` crosses :math:`\lambda_c` (oracle
    transversally stable below).
    """
    exp, lam_c = data.exp, data.lam_c
    r, cfg = exp.result, exp.config
    steps = np.asarray(r.steps)[1:]
    lam_t = np.asarray(r.lam)[1:]
    t_c = (cfg.lam / lam_c - 1.0) / 1e-4
    fig = new_figure(figsize=(16.0, 3.6), dpi=80)
    axes = fig.subplots(1, 4)

    ax = axes[0]
    _band(ax, steps, np.abs(np.asarray(r.nu))[:, 1:], "tab:orange", r"$|\nu_t|$ (value)")
    _band(ax, steps, np.abs(np.asarray(r.kappa))[:, 1:], "tab:blue", r"$|\kappa_t|$ (key)")
    ax.set_ylim(-0.02, 1.05)
    ax.set_ylabel("alignment with the oracle")
    twin = ax.twinx()
    twin.plot(steps, lam_t, color="black", ls=":", lw=1.2, label=r"$\lambda_t$ (right axis)")
    twin.set_ylabel(r"$\lambda_t$")
    twin.set_ylim(0, 1.05)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = twin.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="center left", fontsize=8)

    ax = axes[1]
    margin = beyond.relevant_margin(np.abs(np.asarray(r.kappa))[:, 1:], lam_t, cfg.task)
    _band(ax, steps, margin, COLORS["attention"], r"$a_t = \lambda_t q|\kappa_t|/\sqrt{1+2\lambda_t^2\gamma^2}$")
    q = np.sqrt(cfg.d / 2)
    ax.plot(steps, lam_t * q / np.sqrt(1 + 2 * lam_t**2 * cfg.gamma**2), color="black", ls=":", lw=1.2,
            label=r"margin of the oracle ($|\kappa| = 1$)")
    ax.set_yscale("log")
    ax.set_ylabel("relevant token's margin inside erf")
    ax.legend(loc="lower right", fontsize=8)

    ax = axes[2]
    _band(ax, steps, np.maximum(np.asarray(r.distance)[:, 1:], 1e-18), COLORS["linear"], "distance to $\\mathcal{M}$")
    ax.set_yscale("log")
    ax.set_ylim(1e-18, 3)
    ax.set_ylabel(r"distance to $\mathcal{M}$")
    ax.legend(loc="lower left", fontsize=8)

    ax = axes[3]
    ms = np.asarray(data.multiplier_steps)
    mult = np.asarray(data.multipliers)
    ax.plot(ms, -np.nanmin(mult, axis=1), color="black", lw=1.5, label="$-$(most negative multiplier)")
    ax.plot(ms, np.nanmax(mult, axis=1), color="black", lw=1.2, ls="--", label="largest multiplier")
    ax.axhline(1, color=COLORS["linear"], lw=1)
    ax.set_ylim(0.99, 1.012)
    ax.set_ylabel("transverse multipliers (median path)")
    ax.legend(loc="upper right", fontsize=8)

    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("step $t$")
        ax.grid(alpha=0.3)
        ax.axvline(t_c, color="black", lw=0.8, ls="--")
    axes[2].text(t_c * 1.1, 1e-6, rf"$\lambda_t = \lambda_c = {lam_c:.3f}$" + "\n" + rf"at $t = {t_c:.0f}$",
                 fontsize=8)
    fig.suptitle(f"Figure 4(a) dissected: {cfg.n_runs} runs, d = {cfg.d}, L = {cfg.L}, "
                 r"$\lambda_t = 1/(1 + 10^{-4}t)$, $\alpha$ = " + f"{cfg.alpha:g}", fontsize=10)
    return fig


# --------------------------------------------------------------------------- beyond_landscape
def plot_landscape(data):
    r"""Closed forms against :math:`\lambda` (log axis): excess risks of the critical points and
    the noise floor (log scale); their differences with the oracle; the eigenvalues
    :math:`\mu_{\min} \le \mu_{\max}` of :func:`slrlib.book.ch08_beyond.oracle_plane_hessian`: :math:`\mu_{\min}`
    (negative above :math:`\lambda_c`) and the step-size limit :math:`2/\mu_{\max}` (one PGD step
    multiplies a small distance to :math:`\mathcal M` by :math:`1 - \alpha\mu` at the oracle)."""
    lam = np.asarray(data["lam"])
    lam_c = float(np.asarray(data["lam_c"])[0])
    fig = new_figure(figsize=(16.0, 3.8), dpi=80)
    axes = fig.subplots(1, 4)

    ax = axes[0]
    ax.plot(lam, data["oracle"], color=_CURVES["oracle"], lw=2, label=r"oracle $\pm(k^\star, v^\star)$")
    ax.plot(lam, data["swapped"], color=_CURVES["swapped"], lw=1.5, ls="--", label="swapped point")
    ax.plot(lam, data["tilted"], color=_CURVES["tilted"], lw=2, label=r"tilted minimum ($\lambda > \lambda_c$)")
    ax.plot(lam, data["floor"], color=_CURVES["floor"], lw=1.2, ls=":", label=r"noise floor $(L-1)\zeta(0,\lambda)$")
    ax.axhline(float(data["linear"][0]), color=_CURVES["linear"], lw=1, ls="-.", label="best linear (Prop. 3)")
    ax.axhline(float(data["null"][0]), color=COLORS["null"], lw=1, ls="--", label=r"null, $\gamma^2$")
    ax.set_yscale("log")
    ax.set_ylabel(r"excess risk $\mathcal{R}_\lambda - \varepsilon^2$")
    ax.legend(fontsize=7.5, loc="upper left")

    ax = axes[1]
    ax.axhline(0, color=_CURVES["oracle"], lw=2, label="oracle (reference)")
    ax.plot(lam, data["swapped"] - data["oracle"], color=_CURVES["swapped"], lw=1.5, ls="--",
            label="swapped $-$ oracle")
    ax.plot(lam, data["tilted"] - data["oracle"], color=_CURVES["tilted"], lw=2, label="tilted $-$ oracle")
    ax.set_ylabel("difference of excess risks")
    ax.set_ylim(-0.85, 0.3)
    ax.legend(fontsize=8, loc="lower left")

    ax = axes[2]
    mu_min = np.asarray(data["transverse_eigenvalue"])
    mu_max = np.asarray(data["transverse_eigenvalue_max"])
    ax.plot(lam, mu_min, color=_CURVES["oracle"], lw=2, label=r"$\mu_{\min}$: smallest curvature at the" + "\n" + "oracle across $\\mathcal{M}$")
    ax.axhline(0, color="black", lw=0.8)
    ax.fill_between(lam, mu_min, 0, where=mu_min < 0, color=_CURVES["tilted"], alpha=0.3, lw=0,
                    label="oracle is a saddle")
    ax.set_ylabel(r"$\mu_{\min}$")
    ax.legend(fontsize=7.5, loc="lower left")

    ax = axes[3]
    ax.plot(lam, 2.0 / mu_max, color=_CURVES["oracle"], lw=2, label=r"$2/\mu_{\max}$: largest step size at which" + "\n" + "PGD can settle at the oracle")
    for alpha, ls in ((1e-3, ":"), (2e-3, "-."), (4e-3, "--")):
        ax.axhline(alpha, color="black", lw=1, ls=ls, label=rf"$\alpha$ = {alpha:g}")
    ax.set_yscale("log")
    ax.set_ylabel(r"step size $\alpha$")
    ax.legend(fontsize=7.5, loc="upper right")

    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel(r"inverse temperature $\lambda$")
        ax.grid(alpha=0.3)
        ax.axvline(lam_c, color="black", lw=0.8, ls="--")
    axes[2].text(lam_c * 0.97, 0.6, rf"$\lambda_c = {lam_c:.4f}$", ha="right", fontsize=8)
    fig.suptitle("Critical points of the risk on the sphere product, closed forms (d = 400, L = 10, "
                 r"$\gamma^2 = 1/2$)", fontsize=10)
    return fig


# --------------------------------------------------------------------------- beyond_sweep
def plot_sweep(data):
    r"""Where PGD ends, for each constant :math:`\lambda` of the sweep and for the schedule:
    outcome fractions (stacked bars), median final :math:`|\kappa|` of the runs on
    :math:`\mathcal M`, and median final excess risk against the oracle's."""
    sw = data.sweep
    fr = sw.fractions()
    sched = data.schedule
    sched_labels = beyond.classify_outcomes(sched.result)
    sched_fr = np.array([(sched_labels == i).mean() for i in range(len(beyond.OUTCOMES))])
    labels = [f"{lam:g}" for lam in sw.lams] + ["schedule"]
    x = np.arange(len(labels))
    fig = new_figure(figsize=(15.0, 3.8), dpi=80)
    axes = fig.subplots(1, 3)

    ax = axes[0]
    bottom = np.zeros(len(labels))
    for i, name in enumerate(beyond.OUTCOMES):
        h = np.r_[fr[:, i], sched_fr[i]]
        ax.bar(x, h, bottom=bottom, color=OUTCOME_COLORS[name], label=name, width=0.8)
        bottom += h
    ax.set_xticks(x, labels, rotation=45, fontsize=8)
    ax.set_xlabel(r"constant $\lambda$ (and $\lambda_t = 1/(1 + 10^{-4}t)$)")
    ax.set_ylabel("fraction of runs")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7.5, loc="lower left", framealpha=0.9)
    ax.set_title(f"{sw.labels.shape[1]} runs per λ ({sw.n_steps} steps, α = {sw.alpha:g}); "
                 f"schedule: {sched_labels.size} runs", fontsize=8.5)

    on_m = sw.labels <= 1
    kappa = np.abs(sw.final["kappa"])
    med_kappa = np.array([np.median(kappa[i][on_m[i]]) if on_m[i].any() else np.nan for i in range(len(sw.lams))])
    ax = axes[1]
    ax.plot(sw.lams, med_kappa, "o-", color="tab:blue", label=r"constant $\lambda$: median $|\kappa|$ on $\mathcal{M}$")
    sk = np.abs(np.asarray(sched.result.kappa)[:, -1])[sched_labels <= 1]
    if sk.size:
        ax.plot(sched.result.lam[-1], np.median(sk), "*", ms=14, color="black",
                label=rf"schedule (ends at $\lambda$ = {sched.result.lam[-1]:.3f})")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(r"final $|\kappa|$")
    ax.legend(fontsize=8, loc="lower left")

    ax = axes[2]
    ax.plot(sw.lams, np.median(sw.excess_risk, axis=1), "o", color="tab:purple", label="constant λ: median over runs")
    ax.plot(sw.lams, data.sweep_oracle_risk, "-", color=COLORS["attention"], label="oracle (Theorem 1)")
    ax.plot(sched.result.lam[-1], np.median(sched.excess_risk[:, -1]), "*", ms=14, color="black", label="schedule")
    ax.set_yscale("log")
    ax.set_ylabel(r"final excess risk $\mathcal{R}_\lambda - \varepsilon^2$")
    ax.legend(fontsize=8, loc="upper left")
    for ax in axes[1:]:
        ax.set_xscale("log")
        ax.set_xlabel(r"$\lambda$ (final $\lambda_t$ for the schedule)")
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.suptitle("PGD from a uniform initialisation (d = 400, L = 10): the outcome against λ", fontsize=10)
    return fig


# --------------------------------------------------------------------------- beyond_init
def plot_initial_overlaps(data):
    r"""Initial :math:`(|\nu_0|, |\eta_0|)` of every run of the two large batches, coloured by outcome."""
    fig = new_figure(figsize=(11.0, 4.6), dpi=80)
    axes = fig.subplots(1, 2)
    for ax, (exp, name) in zip(axes, ((data.small, "Figure 7(b): constant λ = 0.1"),
                                      (data.schedule, "Figure 4(a): decreasing λ_t"))):
        r = exp.result
        nu0 = np.abs(np.asarray(r.nu)[:, 0])
        eta0 = np.abs(np.asarray(r.eta)[:, 0])
        labels = beyond.classify_outcomes(r)
        for i, outcome in enumerate(beyond.OUTCOMES):
            sel = labels == i
            if sel.any():
                ax.scatter(nu0[sel], eta0[sel], s=7 if outcome != "swapped" else 11, alpha=0.7,
                           color=OUTCOME_COLORS[outcome], label=f"{outcome} ({sel.sum()})", lw=0)
        top = max(nu0.max(), eta0.max()) * 1.05
        ax.plot([0, top], [0, top], color="black", lw=0.8, ls="--", label=r"$|\eta_0| = |\nu_0|$")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_aspect("equal")
        sw = labels == 2
        above = eta0 > nu0
        ax.set_title(f"{name}, {labels.size} runs\nswapped: {sw[above].mean():.0%} of runs with "
                     rf"$|\eta_0| > |\nu_0|$, {sw[~above].mean():.0%} of the others", fontsize=9)
        ax.set_xlabel(r"$|\nu_0| = |\langle v_0, v^\star\rangle|$ (value towards $v^\star$)")
        ax.set_ylabel(r"$|\eta_0| = |\langle k_0, v^\star\rangle|$ (key towards $v^\star$)")
        ax.legend(fontsize=8, loc="upper right")
        ax.grid(alpha=0.3)
    return fig


# --------------------------------------------------------------------------- beyond_endpoints
def _endpoint_panel(ax, data, i):
    sw = data.sweep
    lam = sw.lams[i]
    nu = np.abs(sw.final["nu"][i])
    eta = np.abs(sw.final["eta"][i])
    kappa = np.abs(sw.final["kappa"][i])
    labels = sw.labels[i]
    t = data.sweep_tilted
    ax.plot(1, 1, "P", mfc="none", mec="black", ms=16, mew=1.5, label="oracle", zorder=1)
    ax.plot(0, 0, "X", mfc="none", mec=OUTCOME_COLORS["swapped"], ms=16, mew=1.5, label="swapped point", zorder=1)
    if np.isfinite(t.risk[i]):
        ax.plot(abs(t.overlaps[i, 0]), abs(t.overlaps[i, 1]), "D", mfc="none", mec=OUTCOME_COLORS["off M"],
                ms=14, mew=1.5, label="tilted minimum", zorder=1)
    rng = np.random.default_rng(0)  # a little jitter so that coincident end points stay visible
    jit = 0.01 * rng.standard_normal((2, nu.size))
    for j, outcome in enumerate(beyond.OUTCOMES):
        sel = labels == j
        if sel.any():
            ax.scatter(kappa[sel] + jit[0, sel], nu[sel] + jit[1, sel], s=8 + 50 * eta[sel], alpha=0.6,
                       color=OUTCOME_COLORS[outcome], lw=0, label=f"{outcome} ({sel.sum()})", zorder=2)
    ax.set_xlim(-0.06, 1.08)
    ax.set_ylim(-0.06, 1.08)
    ax.set_aspect("equal")
    ax.set_xlabel(r"final $|\kappa|$ (key on $k^\star$)")
    ax.set_ylabel(r"final $|\nu|$ (value on $v^\star$)")
    ax.grid(alpha=0.3)
    ax.set_title(rf"constant $\lambda$ = {lam:g}: median excess risk {np.median(sw.excess_risk[i]):.3f} "
                 f"(oracle {data.sweep_oracle_risk[i]:.3f})", fontsize=8.5)
    ax.legend(fontsize=7, loc="lower right", framealpha=0.85, markerscale=0.6, title=r"marker size: $|\eta|$",
              title_fontsize=7)


def plot_endpoints(data, lam: float):
    r"""End points of the sweep's runs at one constant :math:`\lambda` in the plane
    :math:`(|\kappa|, |\nu|)`, coloured by outcome (marker size grows with :math:`|\eta|`), with the
    oracle, the swapped point and, above :math:`\lambda_c`, the tilted minimum: the slider frame."""
    lams = list(np.asarray(data.sweep.lams))
    if lam not in lams:
        raise ValueError(f"lam must be one of the sweep's values {lams}, got {lam!r}")
    fig = new_figure(layout=None, figsize=(5.2, 5.0))
    ax = fig.add_axes((0.12, 0.1, 0.85, 0.8))
    _endpoint_panel(ax, data, lams.index(lam))
    return fig


def plot_endpoints_grid(data, lams: Sequence[float] = (0.1, 0.5, 0.85, 1.0)):
    """:func:`plot_endpoints` for a few values of λ side by side."""
    all_lams = list(np.asarray(data.sweep.lams))
    missing = [lam for lam in lams if lam not in all_lams]
    if missing:
        raise ValueError(f"lams must be values of the sweep {all_lams}, got {missing}")
    fig = new_figure(figsize=(4.2 * len(lams), 4.4))
    axes = np.atleast_1d(fig.subplots(1, len(lams)))
    for ax, lam in zip(axes, lams):
        _endpoint_panel(ax, data, all_lams.index(lam))
    return fig
