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
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator, MultipleLocator

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
        style = KIND_STYLE.get(
            kind, {"marker": "o", "ms": 8, "mfc": "white", "mec": "black"}
        )
        lab = kind if (label and kind not in seen) else None
        seen.add(kind)
        ax.plot(k, n, ls="none", zorder=6, clip_on=False, label=lab, **style)


def _step_ticks(ax, n: int = 4) -> None:
    """At most ``n`` ticks on a step axis, in scientific notation beyond 10^3."""
    ax.xaxis.set_major_locator(MaxNLocator(n, steps=[1, 2, 2.5, 5, 10]))
    ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 3))


def plot_manifold_drift(drift: ManifoldDrift):
    r"""Distance to :math:`\mathcal M`, :math:`\sqrt{\theta_t^2+\eta_t^2+\rho_t^2}`, at every
    step: maximum and median over the runs (log scale, values below 1e-18 drawn at 1e-18),
    with the double-precision unit round-off :math:`2^{-52} \approx 2.2\cdot 10^{-16}` for scale;
    right, the largest :math:`|\theta_t|`, :math:`|\eta_t|`, :math:`|\rho_t|` over runs."""
    cfg = drift.config
    fig = new_figure(figsize=(6.8, 3.3))
    ax1, ax2 = fig.subplots(1, 2, sharey=True)
    s = drift.steps
    ax1.plot(
        s,
        np.maximum(drift.max_distance, _FLOOR),
        color=COLORS["linear"],
        lw=0.8,
        label="max",
    )
    ax1.plot(
        s,
        np.maximum(drift.median_distance, _FLOOR),
        color=COLORS["attention"],
        lw=0.8,
        label="median",
    )
    for ax in (ax1, ax2):
        ax.axhline(
            _ROUNDOFF,
            color="black",
            ls="--",
            lw=1,
            label=r"$2^{-52}$" if ax is ax1 else None,
        )
    ax1.set_yscale("log")
    ax1.set_ylim(1e-18, 1e-13)
    ax1.set_ylabel(r"distance to $\mathcal{M}$")
    ax1.set_title("over the runs")
    ax1.legend(
        loc="upper left",
        ncols=3,
        handlelength=1.2,
        columnspacing=0.8,
        handletextpad=0.4,
    )
    for values, name, color in (
        (drift.max_abs_theta, r"$|\theta_t|$", "tab:blue"),
        (drift.max_abs_eta, r"$|\eta_t|$", "tab:orange"),
        (drift.max_abs_rho, r"$|\rho_t|$", "tab:green"),
    ):
        ax2.plot(
            s, np.maximum(values, _FLOOR), lw=0.8, color=color, label=name
        )
    ax2.set_title("largest over the runs")
    ax2.legend(
        loc="upper left",
        ncols=3,
        handlelength=1.2,
        columnspacing=0.8,
        handletextpad=0.4,
    )
    for ax in (ax1, ax2):
        ax.set_xlabel("step $t$")
        ax.grid(alpha=0.3)
        _step_ticks(ax)
    fig.suptitle(
        f"PGD started on ℳ: {cfg.n_runs} runs, λ = {cfg.lam:g}, α = {cfg.alpha:g}"
    )
    return fig


def plot_reduced_vs_full(
    data: ReducedVsFull, runs=None, *, risk_grid: tuple | None = None
):
    r"""Left: the :math:`(\kappa_t, \nu_t)` paths of full PGD on :math:`\mathcal M` (dots at about 60
    logged steps, geometrically spaced) and of the reduced map :math:`F` (lines) from the same starts, on the level
    sets of the manifold risk when ``risk_grid = (kappa_axis, nu_axis, risk)`` is given.
    Right: the largest gap between the two over all runs, per logged step (log scale)."""
    cfg = data.config
    runs = (
        list(range(min(6, data.full_kappa.shape[0])))
        if runs is None
        else list(runs)
    )
    fig = new_figure(figsize=(6.8, 3.6))
    ax1, ax2 = fig.subplots(1, 2, width_ratios=[1.0, 1.0])
    if risk_grid is not None:
        ka, na, risk = risk_grid
        ax1.contour(
            ka, na, risk, levels=14, cmap="Greys", linewidths=0.6, alpha=0.8
        )
    colors = plt.get_cmap("tab10")
    # dots for full PGD at about 60 logged steps per run, denser early on where the paths move fast
    dots = np.unique(
        np.round(np.geomspace(1, data.steps.size, 60)).astype(int) - 1
    )
    for j, run in enumerate(runs):
        c = colors(j % 10)
        ax1.plot(
            data.reduced_kappa[run],
            data.reduced_nu[run],
            color=c,
            lw=1.4,
            label="map $F$" if j == 0 else None,
        )
        ax1.plot(
            data.full_kappa[run, dots],
            data.full_nu[run, dots],
            ls="none",
            marker=".",
            ms=3.5,
            color="black",
            label="full PGD" if j == 0 else None,
        )
        ax1.plot(
            data.full_kappa[run, 0],
            data.full_nu[run, 0],
            "o",
            mfc="white",
            mec=c,
            ms=5,
            zorder=5,
        )
    ax1.set_xlim(-1.05, 1.05)
    ax1.set_ylim(-1.05, 1.05)
    ax1.set_aspect("equal")
    ax1.xaxis.set_major_locator(MaxNLocator(5))
    ax1.yaxis.set_major_locator(MaxNLocator(5))
    ax1.set_xlabel(r"$\kappa_t$")
    ax1.set_ylabel(r"$\nu_t$")
    handles, labels = ax1.get_legend_handles_labels()
    handles.append(
        Line2D([], [], ls="none", marker="o", mfc="white", mec="black", ms=5)
    )
    labels.append("start")
    ax1.legend(
        handles,
        labels,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncols=3,
        handlelength=1.2,
        columnspacing=0.8,
        handletextpad=0.4,
        borderaxespad=0.2,
        frameon=False,
    )
    ax2.plot(
        data.steps,
        np.maximum(data.gap, _FLOOR),
        color=COLORS["linear"],
        lw=1.2,
        label="largest gap",
    )
    ax2.axhline(_ROUNDOFF, color="black", ls="--", lw=1, label=r"$2^{-52}$")
    ax2.axhline(1e-8, color="grey", ls=":", lw=1, label="$10^{-8}$")
    ax2.set_yscale("log")
    ax2.set_ylim(1e-18, 1e-6)
    ax2.set_xlabel("step $t$")
    ax2.set_ylabel(r"gap in $(\kappa_t, \nu_t)$")
    ax2.set_title("full PGD vs map $F$")
    ax2.legend(
        loc="upper left",
        ncols=3,
        handlelength=1.2,
        columnspacing=0.8,
        handletextpad=0.4,
    )
    ax2.grid(alpha=0.3)
    _step_ticks(ax2)
    return fig


def _kind_handles(kinds) -> list:
    """Legend entries for the kinds of fixed points present, markers a little smaller than drawn."""
    return [
        Line2D(
            [],
            [],
            ls="none",
            label=kind,
            **{**KIND_STYLE[kind], "ms": 0.75 * KIND_STYLE[kind]["ms"]},
        )
        for kind in ("minimum", "maximum", "saddle")
        if kind in set(kinds)
    ]


def _square_axes(ax) -> None:
    ax.set_xlim(-1.0, 1.0)
    ax.set_ylim(-1.0, 1.0)
    ax.set_aspect("equal")
    ax.xaxis.set_major_locator(MultipleLocator(0.5))
    ax.yaxis.set_major_locator(MultipleLocator(0.5))
    ax.set_xlabel(r"$\kappa = \langle k, k^\star\rangle$")
    ax.set_ylabel(r"$\nu = \langle v, v^\star\rangle$")


def _draw_landscape(ax, land: Landscape):
    K, N = np.meshgrid(land.kappa, land.nu)
    levels = np.linspace(float(land.risk.min()), float(land.risk.max()), 21)
    cf = ax.contourf(K, N, land.risk, levels=levels, cmap="viridis")
    ax.contour(
        K,
        N,
        land.risk,
        levels=levels[::2],
        colors="white",
        linewidths=0.4,
        alpha=0.6,
    )
    for i in range(land.paths_kappa.shape[0]):
        k, n = land.paths_kappa[i], land.paths_nu[i]
        ax.plot(k, n, color="white", lw=1.0, alpha=0.95)
        ax.plot(k[0], n[0], "o", ms=3.5, color="white")
        m = max(1, min(len(k) - 1, int(0.25 * len(k))))
        # an arrow a quarter of the way along each path
        j = next(
            (
                j
                for j in range(1, len(k))
                if np.hypot(k[j] - k[0], n[j] - n[0]) > 0.12
            ),
            m,
        )
        ax.annotate(
            "",
            xy=(k[j], n[j]),
            xytext=(k[j - 1], n[j - 1]),
            arrowprops={
                "arrowstyle": "-|>",
                "color": "white",
                "lw": 1.0,
                "mutation_scale": 9,
            },
        )
    _mark_points(ax, land.points, land.kinds, label=False)
    _square_axes(ax)
    return cf


def _risk_colorbar(fig, cf, cax, ax=None):
    if cax is None:
        cb = fig.colorbar(cf, ax=ax, format="%.1f", fraction=0.06, pad=0.03)
    else:
        cb = fig.colorbar(cf, cax=cax, format="%.1f")
    cb.set_label(r"risk $\mathcal{R}_\lambda(\kappa, \nu)$")
    cb.locator = MaxNLocator(5)
    cb.update_ticks()
    return cb


def plot_landscape_data(land: Landscape, *, small: bool = False):
    r"""Figure 6 (our reconstruction): level sets of the risk on :math:`\mathcal M` (Lemma 6)
    over :math:`[-1, 1]^2`, the fixed points of (14) marked by kind (green stars: minima,
    red triangles: maxima, orange cross: saddle) and reduced-PGD trajectories (white, from
    the white dots). ``small`` gives the light version used for slider frames (fixed layout,
    5 inches wide)."""
    if small:
        fig = new_figure(layout=None, figsize=(5.0, 4.9))
        ax = fig.add_axes((0.15, 0.2, 0.6, 0.6 * 5.0 / 4.9))
        cax = fig.add_axes((0.78, 0.2, 0.035, 0.6 * 5.0 / 4.9))
    else:
        fig = new_figure(figsize=(5.6, 5.4))
        ax, cax = fig.subplots(), None
    cf = _draw_landscape(ax, land)
    _risk_colorbar(fig, cf, cax, ax=ax)
    ax.set_title(
        f"λ = {land.lam:g}: α = {land.alpha:.3g}, {land.n_steps} steps", pad=9
    )
    legend = {
        "loc": "upper center",
        "ncols": 3,
        "frameon": False,
        "handletextpad": 0.3,
        "columnspacing": 1.0,
    }
    if small:
        fig.legend(
            handles=_kind_handles(land.kinds),
            bbox_to_anchor=(0.47, 0.085),
            **legend,
        )
    else:
        fig.legend(
            handles=_kind_handles(land.kinds),
            **{**legend, "loc": "outside lower center"},
        )
    return fig


#: Background colours of the four sign regions of the flow, keyed by (κ grows, ν grows).
FLOW_REGION_COLORS = {
    (True, True): "#c7e9c0",
    (False, False): "#c6dbef",
    (True, False): "#fdd0a2",
    (False, True): "#fcbba1",
}
_FLOW_ARROWS = {
    (True, True): "κ ↑ ν ↑",
    (False, True): "κ ↓ ν ↑",
    (True, False): "κ ↑ ν ↓",
    (False, False): "κ ↓ ν ↓",
}


def _flow_handles() -> list:
    """Legend entries of the flow panel: the two nullclines and the four sign regions."""
    handles = [
        Line2D([], [], color="black", lw=1.8, label=r"$\dot\kappa = 0$"),
        Line2D([], [], color="black", lw=1.8, ls="--", label=r"$\dot\nu = 0$"),
    ]
    for key in ((True, True), (False, True), (True, False), (False, False)):
        handles.append(
            Patch(color=FLOW_REGION_COLORS[key], label=_FLOW_ARROWS[key])
        )
    return handles


def _draw_flow(ax, flow: FlowField, points, kinds):
    K, N = np.meshgrid(flow.kappa, flow.nu)
    interior = (np.abs(K) < 1) & (np.abs(N) < 1)
    code = np.where(
        interior, (flow.v_kappa > 0).astype(int) + 2 * (flow.v_nu > 0), -1
    )
    keys = [(False, False), (True, False), (False, True), (True, True)]
    cmap = ListedColormap([FLOW_REGION_COLORS[k] for k in keys])
    ax.pcolormesh(
        K,
        N,
        np.ma.masked_less(code, 0),
        cmap=cmap,
        vmin=-0.5,
        vmax=3.5,
        shading="nearest",
    )
    speed = np.hypot(flow.v_kappa, flow.v_nu)
    scale = np.where(speed > 0, speed, 1.0)
    ax.streamplot(
        flow.kappa,
        flow.nu,
        flow.v_kappa / scale,
        flow.v_nu / scale,
        color="0.25",
        density=0.9,
        linewidth=0.6,
        arrowsize=0.8,
    )
    ax.plot(flow.curve_kappa, flow.curve_nu, color="black", lw=1.8)
    ax.plot([0, 0], [-1, 1], color="black", lw=1.8, ls="--")
    _mark_points(ax, points, kinds, label=False)
    _square_axes(ax)


def plot_flow(
    flow: FlowField,
    points=FIVE_POINTS,
    kinds=("saddle", "minimum", "minimum", "maximum", "maximum"),
):
    r"""Figure 6(b) alone: the direction of reduced PGD for a vanishing step
    (:func:`slrlib.book.ch07_theorem5.flow_field`, streamlines of the normalised field), the two
    nullclines (:math:`\dot\kappa = 0`: :math:`\nu = \mathrm{erf}(\lambda q\kappa/\sqrt{c_2c_4})`;
    :math:`\dot\nu = 0`: :math:`\kappa = 0`) and the four regions where :math:`\kappa` and
    :math:`\nu` grow or shrink."""
    fig = new_figure(figsize=(5.0, 5.6))
    ax = fig.subplots()
    _draw_flow(ax, flow, points, kinds)
    ax.set_title(f"λ = {flow.lam:g}: direction of PGD (α → 0)")
    fig.legend(
        handles=_kind_handles(kinds) + _flow_handles(),
        loc="outside lower center",
        ncols=3,
        frameon=False,
        handletextpad=0.3,
        columnspacing=1.0,
    )
    return fig


def plot_figure6(land: Landscape, flow: FlowField):
    r"""Figure 6 (our reconstruction), two panels at the same :math:`\lambda`: (a) the landscape of
    :func:`plot_landscape_data`; (b) :func:`plot_flow`, with the fixed points of ``land``. One
    legend below both: the kinds of fixed points, the nullclines (:math:`\dot\kappa = 0`:
    :math:`\nu = \mathrm{erf}(\lambda q\kappa/\sqrt{c_2c_4})`; :math:`\dot\nu = 0`: :math:`\kappa = 0`)
    and the four sign regions."""
    fig = new_figure(figsize=(6.8, 3.95))
    ax, bx = fig.subplots(1, 2)
    cf = _draw_landscape(ax, land)
    _risk_colorbar(fig, cf, None, ax=ax)
    ax.set_title(f"(a) risk on ℳ, λ = {land.lam:g}")
    _draw_flow(bx, flow, land.points, land.kinds)
    bx.set_title("(b) direction of PGD, α → 0")
    bx.set_ylabel(None)
    kinds, flows = _kind_handles(land.kinds), _flow_handles()
    # two rows, filled column by column: the kinds, the nullclines, the regions
    blank = Line2D([], [], ls="none", label=" ")
    handles = (
        kinds[:2]
        + kinds[2:]
        + [blank] * (4 - len(kinds))
        + flows[:2]
        + flows[2:]
    )
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=5,
        frameon=False,
        handletextpad=0.3,
        columnspacing=0.9,
    )
    return fig


def plot_landscape(
    lam: float,
    *,
    landscapes: Mapping[float, Landscape] | None = None,
    task=None,
    **kwargs,
):
    r"""Figure 6 at one :math:`\lambda`, for a slider: draws ``landscapes[lam]`` when given
    (precomputed by :func:`slrlib.book.ch07_theorem5.landscape`), otherwise computes
    ``landscape(lam, task, **kwargs)``."""
    if landscapes is not None and lam in landscapes:
        land = landscapes[lam]
    else:
        if task is None:
            raise ValueError(
                "plot_landscape needs landscapes containing lam, or a task to compute it"
            )
        land = landscape(lam, task, **kwargs)
    return plot_landscape_data(land, small=True)


_BASIN_COLORS = {
    0: "#ff7f0e",
    1: "#9ecae1",
    2: "#fdd0a2",
    3: "#d62728",
    4: "#d62728",
    -1: "#000000",
}


def plot_basins(
    grid: BasinGrid,
    curve_kappa=None,
    curve_nu=None,
    land: Landscape | None = None,
):
    r"""Where reduced PGD goes (Propositions 11 and 13): each initial :math:`(\kappa_0, \nu_0)` of
    the grid coloured by the fixed point reached; the saddle's stable set (``curve_kappa``,
    ``curve_nu``, from :func:`slrlib.book.ch07_theorem5.saddle_stable_set`) drawn on top; the fixed
    points marked when ``land`` (a :class:`~slrlib.book.ch07_theorem5.Landscape`) is given, else the
    five points of Proposition 9 are marked by their label."""
    labels = grid.labels
    codes = [-1, 0, 1, 2, 3, 4]
    cmap = ListedColormap([_BASIN_COLORS[c] for c in codes])
    fig = new_figure(figsize=(6.8, 3.9))
    ax = fig.subplots()
    step = grid.kappa0[1] - grid.kappa0[0]
    extent = [
        grid.kappa0[0] - step / 2,
        grid.kappa0[-1] + step / 2,
        grid.nu0[0] - step / 2,
        grid.nu0[-1] + step / 2,
    ]
    ax.imshow(
        labels + 1,
        origin="lower",
        extent=extent,
        cmap=cmap,
        vmin=-0.5,
        vmax=5.5,
        interpolation="nearest",
    )
    handles = []
    for code, name in ((1, "to (1, 1)"), (2, "to (−1, −1)")):
        n = int(np.sum(labels == code))
        handles.append(
            Line2D(
                [],
                [],
                ls="none",
                marker="s",
                ms=9,
                mfc=_BASIN_COLORS[code],
                mec="grey",
                label=f"{name}: {n:,}",
            )
        )
    for code, name in ((0, "to the saddle"), (3, "to a maximum")):
        n = int(
            np.sum(labels == code) + (np.sum(labels == 4) if code == 3 else 0)
        )
        handles.append(
            Line2D(
                [],
                [],
                ls="none",
                marker="s",
                ms=9,
                mfc=_BASIN_COLORS[code],
                mec="grey",
                label=f"{name}: {n:,}",
            )
        )
    n_none = int(np.sum(labels == -1))
    if n_none:
        handles.append(
            Line2D(
                [],
                [],
                ls="none",
                marker="s",
                ms=9,
                mfc="black",
                label=f"not converged: {n_none:,}",
            )
        )
    if curve_kappa is not None:
        ax.plot(curve_kappa, curve_nu, color="black", lw=1.6)
        handles.append(
            Line2D([], [], color="black", lw=1.6, label="saddle's stable set")
        )
    if land is not None:
        _mark_points(ax, land.points, land.kinds, label=False)
        handles += _kind_handles(land.kinds)
    else:
        kinds = ["saddle", "minimum", "minimum", "maximum", "maximum"]
        _mark_points(ax, FIVE_POINTS, kinds, label=False)
        handles += _kind_handles(kinds)
    ax.set_xlim(-1.02, 1.02)
    ax.set_ylim(-1.02, 1.02)
    ax.set_aspect("equal")
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.yaxis.set_major_locator(MaxNLocator(5))
    ax.set_xlabel(r"initial $\kappa_0$")
    ax.set_ylabel(r"initial $\nu_0$")
    n = grid.kappa0.size
    ax.set_title(f"{n}×{n} starts: λ = {grid.lam:g}, α = {grid.alpha:g}")
    ax.legend(
        handles=handles,
        loc="center left",
        bbox_to_anchor=(1.03, 0.5),
        frameon=False,
        title=f"limit after {grid.n_steps:,} steps",
        alignment="left",
    )
    return fig
