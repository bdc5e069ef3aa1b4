r"""Figure of chapter 16 (the dynamics quantified): plotting only.

The numbers come from :mod:`slrlib.book.figures.dynamics` (which calls
:mod:`slrlib.book.ch16_dynamics`). Returns a matplotlib Figure detached from pyplot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from slrlib.plots.style import COLORS, new_figure

__all__ = ["draw_escape_time", "plot_dynamics_timescales", "plot_escape_time"]


def draw_escape_time(ax, data: Any, *, label_suffix: str = "", color: str | None = None,
                     bounds: bool = True) -> None:
    r"""Draw one ``escape_time`` data set on ``ax``: reduced map (markers), linearised map (line),
    its bounds (band) and the continuous-time estimate (dotted)."""
    x = np.log10(1.0 / np.asarray(data.r0, dtype=float))
    c = color or COLORS["attention"]
    if bounds:
        ax.fill_between(x, data.lower, data.upper, color=COLORS["bound"], alpha=0.15, lw=0,
                        label=r"bounds $t_- \leq t^* \leq t_+$ (linear)")
    ax.plot(x, data.linear, color=c, lw=1.4, label="linearised map, exact" + label_suffix)
    ok = np.asarray(data.reduced) >= 0
    ax.plot(x[ok], np.asarray(data.reduced)[ok], "o", color=c, ms=4, label="reduced map (Lemma 7)" + label_suffix)
    ax.plot(x, data.continuous, ":", color=COLORS["bound"], lw=1.0,
            label=r"$\log(R/r_0)/(\alpha|\mu_-|)$" + label_suffix)


def plot_escape_time(data: Any):
    r"""Escape steps from the saddle against :math:`\log_{10}(1/r_0)`. Left: the linearised map (exact first
    passage and its bounds), the nonlinear reduced map, and the continuous-time estimate; the slope
    :math:`\log 10/\log(1 - \alpha\mu_-)` steps per decade is written in the title. Right: the same minus the
    exact linear first passage, where the constant lag of the reduced map and the growing deficit of the
    continuous-time estimate show."""
    fig = new_figure(figsize=(11.0, 4.2))
    ax, ax2 = fig.subplots(1, 2)
    draw_escape_time(ax, data)
    x = np.log10(1.0 / np.asarray(data.r0, dtype=float))
    lin = np.asarray(data.linear, dtype=float)
    ax2.fill_between(x, np.asarray(data.lower) - lin, np.asarray(data.upper) - lin, color=COLORS["bound"], alpha=0.15,
                     lw=0, label=r"bounds $t_\pm - t^*$")
    ok = np.asarray(data.reduced) >= 0
    ax2.plot(x[ok], (np.asarray(data.reduced, dtype=float) - lin)[ok], "o-", color=COLORS["attention"], ms=4,
             label="reduced map $-$ linearised map")
    ax2.plot(x, np.asarray(data.continuous) - lin, ":", color=COLORS["bound"],
             label=r"$\log(R/r_0)/(\alpha|\mu_-|)$ $-$ linearised map")
    ax2.axhline(0.0, color="0.5", lw=0.8)
    for a in (ax, ax2):
        a.set_xlabel(r"$\log_{10}(1/r_0)$")
        a.grid(alpha=0.3)
    ax.set_ylabel(f"steps to distance R = {data.radius:g}")
    ax2.set_ylabel("difference (steps)")
    ax.legend(fontsize=8, loc="upper left")
    ax2.legend(fontsize=8, loc="center left")
    ax.set_title(rf"$\lambda = {data.lam:g}$, $\alpha = {data.alpha:g}$, $d = {data.d}$, $L = {data.L}$: "
                 f"slope {data.per_decade:.1f} steps per decade", fontsize=10)
    ax2.set_title("against the exact first passage of the linearised map", fontsize=10)
    return fig


def _anchor(t: np.ndarray, y: np.ndarray, level: float) -> int | None:
    """First index where ``y`` drops below ``level`` (None if never)."""
    below = np.flatnonzero(y < level)
    return int(below[0]) if below.size else None


def plot_dynamics_timescales(data: Any):
    r"""One reduced run from near the saddle to the oracle, log scale. Left (the first steps): the distance
    :math:`|x_t|` to the saddle against :math:`r_0\Lambda_u^t`, and :math:`\psi_t` against :math:`m_\nu^t`; right (the
    whole run): :math:`\varphi_t` against :math:`m_\kappa^t`. The reference lines are anchored where the angle
    first drops below :math:`10^{-2}`."""
    t = np.asarray(data.steps, dtype=float)
    fig = new_figure(figsize=(11.0, 4.2))
    ax1, ax2 = fig.subplots(1, 2)
    i_n = _anchor(t, data.psi, 1e-2)
    t_max = t[min(t.size - 1, (i_n or 0) + int(np.searchsorted(t, 6 / -np.log(data.m_nu))))] if i_n is not None else t[-1]
    early = t <= t_max
    ax1.semilogy(t[early], data.distance[early], color=COLORS["bound"], lw=1.4, label=r"distance to the saddle $|x_t|$")
    esc = early & (data.r0 * data.expanding ** t < 1.0)
    ax1.semilogy(t[esc], data.r0 * data.expanding ** t[esc], "--", color=COLORS["bound"], lw=1.0,
                 label=r"$r_0\Lambda_u^t$")
    ax1.semilogy(t[early], data.psi[early], color=COLORS["attention"], lw=1.4, label=r"$\psi_t = \arccos\nu_t$")
    ax1.semilogy(t[early], data.phi[early], color=COLORS["monte_carlo"], lw=1.4, label=r"$\varphi_t = \arccos\kappa_t$")
    if i_n is not None:
        ref = data.psi[i_n] * data.m_nu ** (t - t[i_n])
        keep = early & (t >= t[i_n] - 0.3 * (t_max - t[i_n])) & (ref > 1e-9)
        ax1.semilogy(t[keep], ref[keep], "--", color=COLORS["bound"], lw=1.0, label=r"$\propto m_\nu^t$")
    ax1.set_ylim(0.3 * data.r0, 3.0)
    ax1.set_title(f"the first {int(t_max):,} steps", fontsize=10)
    ax2.semilogy(t, data.phi, color=COLORS["monte_carlo"], lw=1.4, label=r"$\varphi_t = \arccos\kappa_t$")
    i_k = _anchor(t, data.phi, 1e-2)
    if i_k is not None:
        ref = data.phi[i_k] * data.m_kappa ** (t - t[i_k])
        keep = t >= 0.5 * t[i_k]
        ax2.semilogy(t[keep], ref[keep], "--", color=COLORS["bound"], lw=1.0, label=r"$\propto m_\kappa^t$")
    ax2.set_title("the whole run", fontsize=10)
    for ax in (ax1, ax2):
        ax.set_xlabel("step $t$")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8, loc="lower left")
    ax1.set_ylabel("distance / angle (radians)")
    fig.suptitle(rf"Reduced map from $r_0 = {data.r0:g}$ on the diagonal, $\lambda = {data.lam:g}$, $\alpha = {data.alpha:g}$: "
                 rf"$\tau_\nu = {-1 / np.log(data.m_nu):,.0f}$, $\tau_\kappa = {-1 / np.log(data.m_kappa):,.0f}$ steps", fontsize=10)
    return fig
