r"""Figure ``nn1`` of chapter 13: in-context one-nearest-neighbour prediction by one attention layer.

Plotting only: the numbers come from :mod:`slrlib.case_studies.token_selection.nn1` through
:func:`slrlib.figures.nn1.nn1_data`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from slrlib.plots.style import COLORS, new_figure

if TYPE_CHECKING:
    from jax.typing import ArrayLike
    from matplotlib.figure import Figure

__all__ = ["plot_nn1", "margin_bound"]


def margin_bound(delta: ArrayLike, xi1: float, N: int, R: float) -> np.ndarray:
    r"""The margin term of the shift bound for :math:`W = \operatorname{diag}(\xi_1 I_d, 0, -\infty)`.

    .. math::

        \tfrac12 (f - y_{i^\star})^2 \le 2R^2(N-1)^2 e^{-\xi_1\delta}

    (our constants; chapter 13).

    Parameters
    ----------
    delta : array_like
        Margins :math:`\delta`.
    xi1 : float
        :math:`\xi_1`.
    N : int
        Number of labelled points of a prompt.
    R : float
        Label bound, :math:`|y_i| \le R`.

    Returns
    -------
    numpy.ndarray
        :math:`2R^2(N-1)^2 e^{-\xi_1\delta}`, of the shape of ``delta``.
    """
    return (
        2.0
        * R**2
        * (N - 1) ** 2
        * np.exp(-xi1 * np.asarray(delta, dtype=float))
    )


def plot_nn1(data: Any) -> Figure:
    r"""Figure ``nn1``: in-context one-nearest-neighbour prediction, six panels.

    Panels: (a) train and held-out loss against the step (log–log) with a :math:`t^{-1/3}`
    guide; (b) :math:`\xi_1` and :math:`\xi_2`; (c) the distance to the talk's form,
    :math:`\|W - P(W)\|_F / \|W\|_F`, and :math:`|c|`; (d) attention on the nearest neighbour
    (mean mass, argmax fraction) and sign accuracy; (e) the final :math:`W`; (f) the held-out loss
    on shifted prompts against the margin :math:`\delta`, with and without the query's
    self-attention, and the margin term of the bound (:func:`margin_bound`).

    Parameters
    ----------
    data : slrlib.figures.nn1.NN1FigureData
        The numbers (:func:`slrlib.figures.nn1.nn1_data`).

    Returns
    -------
    matplotlib.figure.Figure
        The six panels, in three rows of two.
    """
    from matplotlib.ticker import LogLocator, NullFormatter

    r, m, R = data.result, data.margin, data.R
    cfg = r.config
    t = np.asarray(r.steps) + 1.0
    fig = new_figure(figsize=(6.8, 8.6))
    axes = fig.subplots(3, 2)

    ax = axes[0, 0]
    ax.plot(
        t,
        r.train_loss,
        color=COLORS["monte_carlo"],
        lw=1.0,
        label="train (batches)",
    )
    ax.plot(
        t, r.test_loss, color=COLORS["attention"], lw=1.8, label="held out"
    )
    guide = t >= t[-1] / 100
    ax.plot(
        t[guide],
        r.test_loss[-1] * (t[guide] / t[-1]) ** (-1 / 3),
        color=COLORS["bound"],
        ls=":",
        lw=1.4,
        label=r"$\propto t^{-1/3}$",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("loss")
    ax.set_title("(a) loss")
    ax.legend(loc="lower left", handlelength=1.5, borderaxespad=0.3)

    ax = axes[0, 1]
    ax.plot(
        t, r.form["xi1"], color=COLORS["attention"], lw=1.8, label=r"$\xi_1$"
    )
    ax.fill_between(
        t,
        r.form["xi1"] - r.form["xi1_range"] / 2,
        r.form["xi1"] + r.form["xi1_range"] / 2,
        color=COLORS["attention"],
        alpha=0.25,
        lw=0,
    )
    ax.plot(t, r.form["xi2"], color=COLORS["linear"], lw=1.8, label=r"$\xi_2$")
    ax.set_xscale("log")
    ax.set_ylabel("entry of $W$")
    ax.set_title(r"(b) $W_t \approx \mathrm{diag}(\xi_1 I_d, 0, -\xi_2)$")
    ax.legend(loc="upper left", handlelength=1.5)

    ax = axes[1, 0]
    ax.plot(
        t[1:],
        r.form["off_form"][1:],
        color=COLORS["attention"],
        lw=1.8,
        label=r"$\|W - P(W)\|_F / \|W\|_F$",
    )
    ax.plot(
        t[1:],
        np.abs(r.form["c"][1:]),
        color=COLORS["null"],
        lw=1.0,
        label=r"$|c|$",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    lo = min(
        np.min(r.form["off_form"][1:]),
        np.min(np.abs(r.form["c"][1:])[np.abs(r.form["c"][1:]) > 0]),
    )
    ax.set_ylim(bottom=lo / 30)  # room for the legend below the curves
    ax.yaxis.set_major_locator(LogLocator(numticks=5))
    ax.set_title("(c) distance to the form")
    ax.legend(loc="lower left", handlelength=1.5, borderaxespad=0.3)

    ax = axes[1, 1]
    ax.plot(
        t,
        r.attn_mass,
        color=COLORS["attention"],
        lw=1.8,
        label=r"mean attn. on $i^\star$",
    )
    ax.plot(
        t,
        r.argmax_frac,
        color=COLORS["softmax"],
        lw=1.2,
        label=r"argmax $= i^\star$",
    )
    ax.plot(t, r.sign_acc, color=COLORS["bayes"], lw=1.2, label=r"sign right")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.4)  # the legend above the curves
    ax.set_yticks(np.linspace(0, 1, 5))
    ax.set_ylabel("fraction (held out)")
    ax.set_title(r"(d) attention selects $i^\star$")
    ax.legend(
        loc="upper left",
        ncol=2,
        handlelength=1.2,
        columnspacing=0.8,
        handletextpad=0.4,
        borderaxespad=0.3,
    )

    ax = axes[2, 0]
    W = np.asarray(r.W[-1])
    d = W.shape[0] - 2
    vmax = np.abs(W).max()
    ax.imshow(W, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
    for i in range(W.shape[0]):
        for j in range(W.shape[1]):
            v = W[i, j]
            text = (f"{v:.0f}" if abs(v) >= 9.5 else f"{v:.1f}").replace(
                "-0.0", "0.0"
            )
            ax.text(
                j,
                i,
                text,
                ha="center",
                va="center",
                color="white" if abs(v) > 0.6 * vmax else "black",
            )
    names = [f"$x_{{{k + 1}}}$" for k in range(d)] + ["$y$", "$1$"]
    ax.set_xticks(range(d + 2), names)
    ax.set_yticks(range(d + 2), names)
    ax.tick_params(length=0)
    ax.set_title(f"(e) $W$ after {int(r.steps[-1]):,} steps")

    ax = axes[2, 1]
    delta = np.asarray(m["delta"])
    ax.plot(
        delta,
        m["loss"],
        "o-",
        color=COLORS["attention"],
        lw=1.8,
        ms=3.5,
        label="trained $W$",
    )
    ax.plot(
        delta,
        m["loss_query_masked"],
        "s--",
        color=COLORS["softmax"],
        lw=1.2,
        ms=3,
        label="query masked",
    )
    bound = margin_bound(delta, float(r.form["xi1"][-1]), cfg.N, R)
    keep = bound < 1
    ax.plot(
        delta[keep],
        bound[keep],
        color=COLORS["bound"],
        ls=":",
        lw=1.4,
        label="bound",
    )
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(numticks=5))
    ax.set_xlabel(r"margin $\delta$")
    ax.set_ylabel("loss (shifted)")
    ax.set_title(rf"(f) shift: labels in $[-{R:g}, {R:g}]$")
    ax.legend(loc="lower left", handlelength=1.5, borderaxespad=0.3)

    for ax in (axes[0, 0], axes[0, 1], axes[1, 0], axes[1, 1]):
        ax.set_xlabel("step $t$ + 1")
        ax.grid(alpha=0.3, which="major")
        ax.xaxis.set_major_locator(LogLocator(numticks=4))
    axes[2, 1].grid(alpha=0.3, which="major")
    fig.suptitle(
        f"In-context 1-NN: d = {cfg.d}, N = {cfg.N}, σ = {cfg.sigma:g}, step size {cfg.lr:g}, "
        f"{cfg.batch_size} prompts per step"
    )
    return fig
