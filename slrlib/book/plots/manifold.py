r"""Figures of chapters 6 and 7: the invariant manifold :math:`\mathcal M` and the proof of Theorem 5.

Plotting only: the numbers come from :mod:`slrlib.book.ch07_theorem5` (which calls
:mod:`slrlib.training.pgd` and :mod:`slrlib.core.risk`). One function per figure, each returning a
matplotlib Figure closed from pyplot:

* :func:`plot_manifold_drift` — distance to :math:`\mathcal M` at every step of PGD started on it (Lemma 4);
* :func:`plot_reduced_vs_full` — full PGD against the reduced map of Lemma 7;
* :func:`plot_landscape_data` / :func:`plot_landscape` — Figure 6, the risk on :math:`\mathcal M`
  with its five fixed points and reduced trajectories (the latter takes λ, for a slider);
* :func:`plot_figure6` — Figure 6, both panels: (a) the landscape at the paper's λ, (b) the
  direction of the dynamics, its nullclines and sign regions;
* :func:`plot_basins` — where reduced PGD goes from each initialisation (Propositions 11, 13).
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.lines import Line2D

from slrlib.plots.style import COLORS, new_figure
from slrlib.book.ch06_pgd import ManifoldDrift, ReducedVsFull
from slrlib.book.ch07_theorem5 import (
    FIVE_POINTS,
    BasinGrid,
    FlowField,
    Landscape,
    landscape,
)

__all__ = [
    "KIND_STYLE",
    "plot_basins",
    "plot_figure6",
    "plot_flow",
    "plot_landscape",
    "plot_landscape_data",
    "plot_manifold_drift",
    "plot_reduced_vs_full",
]

#: Marker style of each kind of fixed point, in every figure of chapters 6 and 7.
KIND_STYLE = {
    "minimum": {"marker": "*", "ms": 15, "mfc": "#2ca02c", "mec": "black"},
    "maximum": {"marker": "^", "ms": 10, "mfc": "#d62728", "mec": "black"},
    "saddle": {"marker": "X", "ms": 11, "mfc": "#ff7f0e", "mec": "black"},
}
_ROUNDOFF = 2.220446049250313e-16
_FLOOR = 1e-18


def _mark_points(ax, points, kinds, label=True):
    seen = set()
    for (k, n), kind in zip(np.asarray(points), kinds):
        style = KIND_STYLE.get(kind, {"marker": "o", "ms": 8, "mfc": "white", "mec": "black"})
        lab = kind if (label and kind not in seen) else None
        seen.add(kind)
        ax.plot(k, n, ls="none", zorder=6, clip_on=False, label=lab, **style)


def plot_manifold_drift(drift: ManifoldDrift):
    r"""Distance to :math:`\mathcal M`, :math:`\sqrt{\theta_t^2+\eta_t^2+\rho_t^2}`, at every
    step: maximum and median over the runs (log scale, values below 1e-18 drawn at 1e-18),
    with the double-precision unit round-off :math:`2^{-52} \approx 2.2\cdot 10^{-16}` for scale;
    right, the largest :math:`|\theta_t|`, :math:`|\eta_t|`, :math:`|\rho_t|` over runs."""
    cfg = drift.config
    fig = new_figure(figsize=(11.0, 3.6))
    ax1, ax2 = fig.subplots(1, 2)
    s = drift.steps
    ax1.plot(s, np.maximum(drift.max_distance, _FLOOR), color=COLORS["linear"], lw=0.8, label="max over runs")
    ax1.plot(s, np.maximum(drift.median_distance, _FLOOR), color=COLORS["attention"], lw=0.8, label="median over runs")
    ax1.axhline(_ROUNDOFF, color="black", ls="--", lw=1, label=r"unit round-off $2^{-52}$")
    ax1.set_yscale("log")
    ax1.set_ylim(1e-18, 1e-12)
    ax1.set_xlabel("step $t$")
    ax1.set_ylabel(r"distance to $\mathcal{M}$")
    ax1.legend(fontsize=8, loc="upper left")
    for values, name, color in ((drift.max_abs_theta, r"$\max|\theta_t|$", "tab:blue"),
                                (drift.max_abs_eta, r"$\max|\eta_t|$", "tab:orange"),
                                (drift.max_abs_rho, r"$\max|\rho_t|$", "tab:green")):
        ax2.plot(s, np.maximum(values, _FLOOR), lw=0.8, color=color, label=name)
    ax2.set_yscale("log")
    ax2.set_ylim(1e-18, 1e-12)
    ax2.set_xlabel("step $t$")
    ax2.set_ylabel("largest crossed overlap over runs")
    ax2.legend(fontsize=8, loc="upper left")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 3))
    fig.suptitle(f"PGD started on ℳ, every step logged: d = {cfg.d}, L = {cfg.L}, λ = {cfg.lam:g}, "
                 f"α = {cfg.alpha:g}, {cfg.n_runs} runs", fontsize=10)
    return fig


def plot_reduced_vs_full(data: ReducedVsFull, runs=None, *, risk_grid: tuple | None = None):
    r"""Left: the :math:`(\kappa_t, \nu_t)` paths of full PGD on :math:`\mathcal M` (dots at about 60
    logged steps, geometrically spaced) and of the reduced map :math:`F` (lines) from the same starts, on the level
    sets of the manifold risk when ``risk_grid = (kappa_axis, nu_axis, risk)`` is given.
    Right: the largest gap between the two over all runs, per logged step (log scale)."""
    cfg = data.config
    runs = list(range(min(6, data.full_kappa.shape[0]))) if runs is None else list(runs)
    fig = new_figure(figsize=(11.0, 4.6))
    ax1, ax2 = fig.subplots(1, 2, width_ratios=[1.0, 1.25])
    if risk_grid is not None:
        ka, na, risk = risk_grid
        cs = ax1.contour(ka, na, risk, levels=14, cmap="Greys", linewidths=0.6, alpha=0.8)
        ax1.clabel(cs, fontsize=6, fmt="%.2f")
    colors = plt.get_cmap("tab10")
    # dots for full PGD at about 60 logged steps per run, denser early on where the paths move fast
    dots = np.unique(np.round(np.geomspace(1, data.steps.size, 60)).astype(int) - 1)
    for j, run in enumerate(runs):
        c = colors(j % 10)
        ax1.plot(data.reduced_kappa[run], data.reduced_nu[run], color=c, lw=1.4,
                 label="reduced map $F$" if j == 0 else None)
        ax1.plot(data.full_kappa[run, dots], data.full_nu[run, dots], ls="none", marker=".", ms=3.5,
                 color="black", label="full PGD in $\\mathbb{R}^d$" if j == 0 else None)
        ax1.plot(data.full_kappa[run, 0], data.full_nu[run, 0], "o", mfc="white", mec=c, ms=6, zorder=5)
    ax1.set_xlim(-1.05, 1.05)
    ax1.set_ylim(-1.05, 1.05)
    ax1.set_aspect("equal")
    ax1.set_xlabel(r"$\kappa_t = \langle k_t, k^\star\rangle$")
    ax1.set_ylabel(r"$\nu_t = \langle v_t, v^\star\rangle$")
    ax1.legend(fontsize=8, loc="lower right")
    ax1.set_title(f"{len(runs)} of {data.full_kappa.shape[0]} runs (circles: starts)", fontsize=9)
    ax2.plot(data.steps, np.maximum(data.gap, _FLOOR), color=COLORS["linear"], lw=1.2,
             label=r"$\max_{\rm runs}\max(|\kappa^{\rm full}_t-\kappa^{\rm red}_t|, |\nu^{\rm full}_t-\nu^{\rm red}_t|)$")
    ax2.axhline(_ROUNDOFF, color="black", ls="--", lw=1, label=r"unit round-off $2^{-52}$")
    ax2.axhline(1e-8, color="grey", ls=":", lw=1, label="$10^{-8}$")
    ax2.set_yscale("log")
    ax2.set_ylim(1e-18, 1e-6)
    ax2.set_xlabel("step $t$")
    ax2.set_ylabel("gap between full and reduced")
    ax2.legend(fontsize=8, loc="upper left")
    ax2.grid(alpha=0.3)
    ax2.ticklabel_format(axis="x", style="sci", scilimits=(0, 3))
    fig.suptitle(f"Lemma 7: full PGD vs the reduced map — d = {cfg.d}, L = {cfg.L}, λ = {cfg.lam:g}, "
                 f"α = {cfg.alpha:g}, {cfg.n_steps} steps", fontsize=10)
    return fig


def _draw_landscape(ax, land: Landscape, *, legend=True):
    K, N = np.meshgrid(land.kappa, land.nu)
    levels = np.linspace(float(land.risk.min()), float(land.risk.max()), 21)
    cf = ax.contourf(K, N, land.risk, levels=levels, cmap="viridis")
    ax.contour(K, N, land.risk, levels=levels[::2], colors="white", linewidths=0.4, alpha=0.6)
    for i in range(land.paths_kappa.shape[0]):
        k, n = land.paths_kappa[i], land.paths_nu[i]
        ax.plot(k, n, color="white", lw=1.0, alpha=0.95)
        ax.plot(k[0], n[0], "o", ms=3.5, color="white")
        m = max(1, min(len(k) - 1, int(0.25 * len(k))))
        # an arrow a quarter of the way along each path
        j = next((j for j in range(1, len(k)) if np.hypot(k[j] - k[0], n[j] - n[0]) > 0.12), m)
        ax.annotate("", xy=(k[j], n[j]), xytext=(k[j - 1], n[j - 1]),
                    arrowprops={"arrowstyle": "-|>", "color": "white", "lw": 1.0, "mutation_scale": 9})
    _mark_points(ax, land.points, land.kinds, label=legend)
    ax.set_xlim(-1.0, 1.0)
    ax.set_ylim(-1.0, 1.0)
    ax.set_aspect("equal")
    ax.set_xlabel(r"$\kappa = \langle k, k^\star\rangle$")
    ax.set_ylabel(r"$\nu = \langle v, v^\star\rangle$")
    if legend:
        ax.legend(fontsize=7, loc="upper left", framealpha=0.85, markerscale=0.7)
    return cf


def plot_landscape_data(land: Landscape, *, small: bool = False):
    r"""Figure 6 (our reconstruction): level sets of the risk on :math:`\mathcal M` (Lemma 6)
    over :math:`[-1, 1]^2`, the fixed points of (14) marked by kind (green stars: minima,
    red triangles: maxima, orange cross: saddle) and reduced-PGD trajectories (white, from
    the white dots). ``small`` gives the light version used for slider frames."""
    if small:
        fig = new_figure(layout=None, figsize=(5.0, 4.3))
        ax = fig.add_axes((0.14, 0.11, 0.64, 0.76))
        cax = fig.add_axes((0.81, 0.11, 0.03, 0.76))
    else:
        fig = new_figure(figsize=(6.6, 5.3))
        ax, cax = fig.subplots(1, 2, width_ratios=[1.0, 0.05])
    cf = _draw_landscape(ax, land)
    fig.colorbar(cf, cax=cax, label=r"risk on $\mathcal{M}$, $\mathcal{R}_\lambda(\kappa, \nu)$", format="%.2f")
    how = "found by Newton's method" if land.numerical else "of Proposition 9"
    ax.set_title(f"λ = {land.lam:g}: risk on ℳ, fixed points {how},\n"
                 f"reduced PGD with α = {land.alpha:.3g}, {land.n_steps} steps", fontsize=8 if small else 9)
    return fig


#: Background colours of the four sign regions of the flow, keyed by (κ grows, ν grows).
FLOW_REGION_COLORS = {(True, True): "#c7e9c0", (False, False): "#c6dbef", (True, False): "#fdd0a2",
                      (False, True): "#fcbba1"}


def _draw_flow(ax, flow: FlowField, points, kinds, *, legend=True):
    K, N = np.meshgrid(flow.kappa, flow.nu)
    interior = (np.abs(K) < 1) & (np.abs(N) < 1)
    code = np.where(interior, (flow.v_kappa > 0).astype(int) + 2 * (flow.v_nu > 0), -1)
    keys = [(False, False), (True, False), (False, True), (True, True)]
    cmap = ListedColormap([FLOW_REGION_COLORS[k] for k in keys])
    ax.pcolormesh(K, N, np.ma.masked_less(code, 0), cmap=cmap, vmin=-0.5, vmax=3.5, shading="nearest")
    speed = np.hypot(flow.v_kappa, flow.v_nu)
    scale = np.where(speed > 0, speed, 1.0)
    ax.streamplot(flow.kappa, flow.nu, flow.v_kappa / scale, flow.v_nu / scale, color="0.25",
                  density=1.1, linewidth=0.6, arrowsize=0.8)
    ax.plot(flow.curve_kappa, flow.curve_nu, color="black", lw=1.8,
            label=r"$\dot\kappa = 0$: $\nu = \mathrm{erf}(\lambda q\kappa/\sqrt{c_2c_4})$")
    ax.plot([0, 0], [-1, 1], color="black", lw=1.8, ls="--", label=r"$\dot\nu = 0$: $\kappa = 0$")
    _mark_points(ax, points, kinds, label=False)
    handles, labels = ax.get_legend_handles_labels()
    arrows = {(True, True): "κ ↑ ν ↑", (False, False): "κ ↓ ν ↓", (True, False): "κ ↑ ν ↓", (False, True): "κ ↓ ν ↑"}
    for k in ((True, True), (False, True), (True, False), (False, False)):
        handles.append(plt.Rectangle((0, 0), 1, 1, color=FLOW_REGION_COLORS[k]))
        labels.append(arrows[k])
    if legend:
        ax.legend(handles, labels, fontsize=7, loc="upper left", framealpha=0.9, ncols=2)
    ax.set_xlim(-1.0, 1.0)
    ax.set_ylim(-1.0, 1.0)
    ax.set_aspect("equal")
    ax.set_xlabel(r"$\kappa = \langle k, k^\star\rangle$")
    ax.set_ylabel(r"$\nu = \langle v, v^\star\rangle$")


def plot_flow(flow: FlowField, points=FIVE_POINTS, kinds=("saddle", "minimum", "minimum", "maximum", "maximum")):
    r"""Figure 6(b) alone: the direction of reduced PGD for a vanishing step
    (:func:`slrlib.book.ch07_theorem5.flow_field`, streamlines of the normalised field), the two
    nullclines and the four regions where :math:`\kappa` and :math:`\nu` grow or shrink."""
    fig = new_figure(figsize=(5.6, 5.3))
    ax = fig.subplots()
    _draw_flow(ax, flow, points, kinds)
    ax.set_title(f"λ = {flow.lam:g}: direction of reduced PGD (α → 0), nullclines", fontsize=9)
    return fig


def plot_figure6(land: Landscape, flow: FlowField):
    r"""Figure 6 (our reconstruction), two panels at the same :math:`\lambda`: (a) the landscape of
    :func:`plot_landscape_data`; (b) :func:`plot_flow`, with the fixed points of ``land``."""
    fig = new_figure(figsize=(12.4, 5.4))
    ax, cax, bx = fig.subplots(1, 3, width_ratios=[1.0, 0.05, 1.0])
    cf = _draw_landscape(ax, land)
    fig.colorbar(cf, cax=cax, label=r"risk on $\mathcal{M}$, $\mathcal{R}_\lambda(\kappa, \nu)$", format="%.2f")
    how = "found by Newton's method" if land.numerical else "of Proposition 9"
    ax.set_title(f"(a) risk on ℳ at λ = {land.lam:g}, fixed points {how},\n"
                 f"reduced PGD with α = {land.alpha:.3g}, {land.n_steps} steps", fontsize=9)
    _draw_flow(bx, flow, land.points, land.kinds)
    bx.set_title(f"(b) direction of reduced PGD (α → 0) at λ = {flow.lam:g},\n"
                 "its nullclines and sign regions", fontsize=9)
    return fig


def plot_landscape(lam: float, *, landscapes: Mapping[float, Landscape] | None = None, task=None, **kwargs):
    r"""Figure 6 at one :math:`\lambda`, for a slider: draws ``landscapes[lam]`` when given
    (precomputed by :func:`slrlib.book.ch07_theorem5.landscape`), otherwise computes
    ``landscape(lam, task, **kwargs)``."""
    if landscapes is not None and lam in landscapes:
        land = landscapes[lam]
    else:
        if task is None:
            raise ValueError("plot_landscape needs landscapes containing lam, or a task to compute it")
        land = landscape(lam, task, **kwargs)
    return plot_landscape_data(land, small=True)


_BASIN_COLORS = {0: "#ff7f0e", 1: "#9ecae1", 2: "#fdd0a2", 3: "#d62728", 4: "#d62728", -1: "#000000"}


def plot_basins(grid: BasinGrid, curve_kappa=None, curve_nu=None, land: Landscape | None = None):
    r"""Where reduced PGD goes (Propositions 11 and 13): each initial :math:`(\kappa_0, \nu_0)` of
    the grid coloured by the fixed point reached; the saddle's stable set (``curve_kappa``,
    ``curve_nu``, from :func:`slrlib.book.ch07_theorem5.saddle_stable_set`) drawn on top; the fixed
    points marked when ``land`` (a :class:`~slrlib.book.ch07_theorem5.Landscape`) is given, else the
    five points of Proposition 9 are marked by their label."""
    labels = grid.labels
    codes = [-1, 0, 1, 2, 3, 4]
    cmap = ListedColormap([_BASIN_COLORS[c] for c in codes])
    fig = new_figure(figsize=(8.6, 5.2))
    ax = fig.subplots()
    step = grid.kappa0[1] - grid.kappa0[0]
    extent = [grid.kappa0[0] - step / 2, grid.kappa0[-1] + step / 2, grid.nu0[0] - step / 2, grid.nu0[-1] + step / 2]
    ax.imshow(labels + 1, origin="lower", extent=extent, cmap=cmap, vmin=-0.5, vmax=5.5, interpolation="nearest")
    handles = []
    for code, name in ((1, "to (1, 1)"), (2, "to (−1, −1)")):
        n = int(np.sum(labels == code))
        handles.append(Line2D([], [], ls="none", marker="s", ms=9, mfc=_BASIN_COLORS[code], mec="grey",
                              label=f"{name}: {n} starts"))
    for code, name in ((0, "to the saddle (0, 0)"), (3, "to a maximum")):
        n = int(np.sum(labels == code) + (np.sum(labels == 4) if code == 3 else 0))
        handles.append(Line2D([], [], ls="none", marker="s", ms=9, mfc=_BASIN_COLORS[code], mec="grey",
                              label=f"{name}: {n} start{'s' if n != 1 else ''}"))
    n_none = int(np.sum(labels == -1))
    if n_none:
        handles.append(Line2D([], [], ls="none", marker="s", ms=9, mfc="black", label=f"not converged: {n_none}"))
    if curve_kappa is not None:
        ax.plot(curve_kappa, curve_nu, color="black", lw=1.6)
        handles.append(Line2D([], [], color="black", lw=1.6, label="stable set of the saddle (bisection)"))
    if land is not None:
        _mark_points(ax, land.points, land.kinds, label=False)
    else:
        _mark_points(ax, FIVE_POINTS, ["saddle", "minimum", "minimum", "maximum", "maximum"], label=False)
    ax.set_xlim(-1.02, 1.02)
    ax.set_ylim(-1.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel(r"initial $\kappa_0$")
    ax.set_ylabel(r"initial $\nu_0$")
    n = grid.kappa0.size
    ax.set_title(f"limit of reduced PGD from a {n}×{n} grid: λ = {grid.lam:g}, α = {grid.alpha:g}, "
                 f"{grid.n_steps} steps", fontsize=9)
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.03, 1.0), framealpha=0.9)
    return fig
