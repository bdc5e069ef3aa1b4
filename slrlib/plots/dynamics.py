r"""Figures of the PGD experiments (Figures 4(a), 4(b), 7(a), 7(b) of the paper).

Plotting only: the numbers come from :mod:`slrlib.experiments` (which calls
:func:`slrlib.training.pgd.pgd`). Each figure has the paper's four panels: excess risk, the
alignments :math:`|\kappa|` and :math:`|\nu|`, the :math:`(\kappa, \nu)` paths of a few runs,
and the distance to the manifold :math:`\mathcal M` on a log scale.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import LogLocator, MaxNLocator, MultipleLocator

from slrlib.experiments import PGDExperiment, recovered, trajectory_runs
from slrlib.plots.style import COLORS, median_band, step_axes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_pgd_panels", "DISTANCE_FLOOR"]

#: Distances below this are drawn at it (log scale): float64 round-off is about 1e-16.
DISTANCE_FLOOR = 1e-18
_PATH_COLORS = ("#b2182b", "#2166ac", "#e6ab02")


def _band(ax, x, runs, color, label, individual: bool):
    """Median over runs with the 2.5–97.5 % band, or every run when the outcome is bimodal."""
    runs = np.asarray(runs)
    if individual:
        for i, y in enumerate(runs):
            ax.plot(
                x,
                y,
                color=color,
                lw=0.8,
                alpha=0.6,
                label=label if i == 0 else None,
            )
        return
    median_band(ax, x, runs, color, label)


def plot_pgd_panels(
    exp: PGDExperiment,
    runs: Sequence[int] | None = None,
    *,
    individual: bool | None = None,
) -> Figure:
    r"""The four panels of a PGD figure of the paper.

    1. excess risk :math:`\mathcal R_{\lambda_t}(k_t, v_t) - \varepsilon^2`: median over runs and
       95 % band (2.5 and 97.5 percentiles);
    2. :math:`|\kappa_t|` and :math:`|\nu_t|`, same statistics;
    3. the :math:`(\kappa_t, \nu_t)` paths of the runs ``runs``, darker with time;
    4. the distance to :math:`\mathcal M`, log scale (values below 1e-18 drawn at 1e-18,
       :data:`DISTANCE_FLOOR`).

    Parameters
    ----------
    exp : slrlib.experiments.descent.PGDExperiment
        A finished PGD experiment.
    runs : sequence of int, optional
        The runs whose paths panel 3 draws (default: one recovering and one failing run when
        there are both, :func:`slrlib.experiments.descent.trajectory_runs`).
    individual : bool, optional
        Draw every run instead of median and band (default: when some runs recover and others
        do not, as in Figure 7(b), where a median would hide both groups).

    Returns
    -------
    matplotlib.figure.Figure
        The four panels, two by two.
    """
    r, cfg = exp.result, exp.config
    steps = np.asarray(r.steps)
    ok = recovered(r)
    if individual is None:
        individual = bool(ok.any() and (~ok).any())
    runs = trajectory_runs(r) if runs is None else list(runs)

    fig, axes = plt.subplots(2, 2, figsize=(6.8, 5.6), layout="constrained")
    axes = axes.ravel()
    ax = axes[0]
    _band(
        ax,
        steps,
        exp.excess_risk,
        COLORS["attention"],
        "excess risk",
        individual,
    )
    ax.set_ylabel(r"excess risk $\mathcal{R}_{\lambda_t} - \varepsilon^2$")
    ax.set_ylim(bottom=-0.1)

    ax = axes[1]
    _band(
        ax,
        steps,
        np.abs(np.asarray(r.kappa)),
        "tab:blue",
        r"$|\kappa_t|$",
        individual,
    )
    _band(
        ax,
        steps,
        np.abs(np.asarray(r.nu)),
        "tab:orange",
        r"$|\nu_t|$",
        individual,
    )
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("alignment")
    ax.legend(loc="center right", handlelength=1.2)

    ax = axes[2]
    for j, run in enumerate(runs):
        kappa, nu = np.asarray(r.kappa)[run], np.asarray(r.nu)[run]
        color = _PATH_COLORS[j % len(_PATH_COLORS)]
        ax.plot(kappa, nu, color=color, lw=1.2, label=f"run {run}")
        ax.scatter(
            kappa,
            nu,
            c=steps,
            cmap="Greys",
            s=6,
            zorder=3,
            vmin=-0.3 * steps[-1],
        )
        ax.plot(kappa[0], nu[0], "o", mfc="white", mec=color, ms=6, zorder=4)
        ax.plot(kappa[-1], nu[-1], "*", color=color, ms=10, zorder=4)
    for x, y in ((1, 1), (-1, -1)):
        ax.plot(x, y, "P", color="black", ms=8, zorder=5)
    ax.set_xlim(-1.1, 1.1)
    ax.set_ylim(-1.1, 1.1)
    ax.set_aspect("equal")
    ax.xaxis.set_major_locator(MultipleLocator(1.0))
    ax.yaxis.set_major_locator(MultipleLocator(1.0))
    ax.set_xlabel(r"$\kappa_t$")
    ax.set_ylabel(r"$\nu_t$")
    ax.legend(
        loc="lower right",
        handlelength=1.0,
        handletextpad=0.4,
        borderpad=0.3,
        framealpha=0.9,
    )

    ax = axes[3]
    dist = np.maximum(np.asarray(r.distance), DISTANCE_FLOOR)
    _band(ax, steps, dist, COLORS["linear"], "distance", individual)
    ax.set_yscale("log")
    ax.set_ylim(DISTANCE_FLOOR / 3, 3.0)
    ax.yaxis.set_major_locator(LogLocator(numticks=5))
    ax.set_ylabel(r"distance to $\mathcal{M}$")

    step_axes(axes[[0, 1, 3]])
    for ax in axes[[0, 1, 3]]:
        ax.xaxis.set_major_locator(MaxNLocator(4, steps=[1, 2, 2.5, 5, 10]))
    axes[2].grid(alpha=0.3)
    fig.suptitle(
        f"{cfg.title}\nd = {cfg.d}, L = {cfg.L}, {cfg.n_runs} runs, α = {cfg.alpha:g}"
    )
    plt.close(fig)
    return fig
