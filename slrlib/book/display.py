"""The chapters' display helpers: tables that render as tables, and first-passage times.

A chapter shows a table with ``display(table(headers, rows, formats))``: in the HTML book and
in Jupyter it renders as an HTML table; printed (``print(table(...))``) or in a terminal it is
a fixed-width text table.

Figures are shown at the size they are drawn: ``show_figures()``, called once at the top of a
chapter, makes every matplotlib Figure display as a PNG with twice the pixels of its CSS size
(crisp on high-density screens), its small texts raised to the book's smallest size
(:func:`slrlib.plots.style.legible`), and that size recorded with the image.

Numbers quoted in the prose are computed, never typed: a cell calls
``glue_numbers(kappa_final=kappa, runs_recovered=count)`` and the prose shows the first with
myst-nb's ``glue:text`` role and the content ``kappa_final:.3f`` (the format spec is applied to
the number).
"""

from __future__ import annotations

import html
from typing import Sequence

import numpy as np

__all__ = [
    "Table",
    "table",
    "text_table",
    "first_passage",
    "glue_numbers",
    "glued",
    "ProseNumber",
    "PENDING",
    "figure_png",
    "show_figures",
    "fold_verdicts",
]

#: The numbers glued so far in this session (for :func:`glued`), and the live labels waiting
#: for a number not glued yet.
_GLUED: dict[str, object] = {}
_WAITING: dict[str, list] = {}
#: What the prose shows, in JupyterLab, for a number glued further down, until its cell runs.
PENDING = "(computed below)"


class Table:
    """Formatted rows under headers, shown as an HTML table in a notebook and as text elsewhere."""

    def __init__(self, headers: Sequence[str], cells: Sequence[Sequence[str]]):
        self.headers = [str(h) for h in headers]
        self.cells = [[str(c) for c in row] for row in cells]

    def __str__(self) -> str:
        widths = [
            max([len(h)] + [len(r[i]) for r in self.cells])
            for i, h in enumerate(self.headers)
        ]

        def line(r):
            return "  ".join(c.rjust(w) for c, w in zip(r, widths))

        sep = "  ".join("-" * w for w in widths)
        return "\n".join(
            [line(self.headers), sep] + [line(r) for r in self.cells]
        )

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.headers)
        body = "".join(
            "<tr>"
            + "".join(
                f'<td style="text-align: right">{html.escape(c)}</td>'
                for c in row
            )
            + "</tr>"
            for row in self.cells
        )
        return f'<table class="table slr-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence],
    formats: Sequence[str] | None = None,
) -> Table:
    """A :class:`Table` of ``rows`` under ``headers``.

    Parameters
    ----------
    headers : sequence of str
        One per column.
    rows : sequence of sequences
        One entry per column each; strings are shown as they are, anything else through
        ``format(x, spec)``.
    formats : sequence of str, optional
        One format spec per column (``".4f"``, ``"+.2f"``, ``""``); default ``""`` everywhere.
    """
    headers = [str(h) for h in headers]
    if formats is None:
        formats = [""] * len(headers)
    if len(formats) != len(headers):
        raise ValueError(
            f"formats must have one entry per column ({len(headers)}), got {len(formats)}"
        )
    cells = []
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(
                f"rows must have {len(headers)} entries each (one per header), got {len(row)}: {row!r}"
            )
        cells.append(
            [
                x if isinstance(x, str) else format(x, f)
                for x, f in zip(row, formats)
            ]
        )
    return Table(headers, cells)


def text_table(
    headers: Sequence[str],
    rows: Sequence[Sequence],
    formats: Sequence[str] | None = None,
) -> str:
    """:func:`table` as fixed-width text (right-aligned columns)."""
    return str(table(headers, rows, formats))


def first_passage(
    x, level: float, steps, *, absolute: bool = False
) -> np.ndarray:
    """Per run, the first logged step at which ``x`` (or ``|x|``) exceeds ``level``; NaN if never.

    Parameters
    ----------
    x : array_like, shape (runs, logs)
        A logged quantity, one row per run.
    level : float
    steps : array_like, shape (logs,)
        The logged steps.
    absolute : bool
        Compare ``|x|`` instead of ``x``.
    """
    x = np.asarray(x, dtype=float)
    steps = np.asarray(steps)
    if x.ndim != 2 or steps.shape != (x.shape[1],):
        raise ValueError(
            f"x must have shape (runs, logs) and steps shape (logs,), got {x.shape} and {steps.shape}"
        )
    above = (np.abs(x) if absolute else x) > level
    return np.where(above.any(axis=1), steps[np.argmax(above, axis=1)], np.nan)


def glue_numbers(**values) -> None:
    """Glue numbers for the chapter's prose (myst-nb ``glue``), without displaying them.

    Each keyword becomes a glue key; the prose shows it with the ``glue:text`` role, whose content
    is the key and a format spec (``key:.3f``). The value
    is converted to a plain Python ``int`` (integer arrays and numbers) or ``float`` (the
    format spec of ``{glue:text}`` applies to its text), or kept when it is a ``str``.

    Parameters
    ----------
    **values : int, float, str, or 0-d array
        Key and number.

    Raises
    ------
    ValueError
        When a value is not a scalar, or a float is not finite.
    """
    from myst_nb import glue

    for name, value in values.items():
        if not isinstance(value, str):
            a = np.asarray(value)
            if a.size != 1 or a.dtype.kind not in "biuf":
                raise ValueError(
                    f"{name} must be a single number or a str, got {value!r}"
                )
            value = a.reshape(()).item()
            if isinstance(value, bool):
                value = int(value)
            if isinstance(value, float) and not np.isfinite(value):
                raise ValueError(f"{name} must be finite, got {value!r}")
        glue(name, value, display=False)
        _GLUED[name] = value
        for label, spec in _WAITING.pop(name, []):
            label.value = format(value, spec)


class ProseNumber:
    """A glued number as the prose shows it: its ``repr`` is the formatted text, without quotes."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def glued(name: str, spec: str = ""):
    """A glued number, formatted, for the prose of a chapter opened in JupyterLab.

    The book's prose shows a number with myst-nb's ``{glue:text}`` role; a chapter converted for
    JupyterLab (``book/_ext/to_notebook.py``) shows it with the ``{eval}`` role of
    jupyterlab-myst, ``{eval}`glued("name", ".3f")```, evaluated in the kernel when the
    markdown cell is rendered. A number glued further down the chapter than the prose that
    quotes it is not known yet then: the prose shows a live label (``PENDING``), filled in
    when :func:`glue_numbers` glues it.

    Parameters
    ----------
    name : str
        The glue key.
    spec : str
        The format spec of the ``{glue:text}`` role (``".3f"``; default none).

    Returns
    -------
    ProseNumber or ipywidgets.Label
        The formatted number, or a label that shows it once it is glued.
    """
    if name in _GLUED:
        return ProseNumber(format(_GLUED[name], spec))
    import ipywidgets

    label = ipywidgets.Label(
        value=PENDING,
        layout=ipywidgets.Layout(display="inline-flex", width="auto"),
    )
    _WAITING.setdefault(name, []).append((label, spec))
    return label


def figure_png(fig) -> tuple[bytes, dict]:
    """A figure as the book shows it: PNG bytes and their display metadata.

    The figure is made legible (:func:`slrlib.plots.style.legible`: no text below
    ``MIN_FONT_PT``, no width above the column), rendered at ``CSS_DPI * PIXEL_RATIO`` dots per
    inch with a tight bounding box, and described by its CSS size: ``{"width": w, "height": h}``
    (the image has ``PIXEL_RATIO`` times the pixels), plus ``{"slr": {"min_font_pt": ...,
    "figure_width_in": ...}}``, which the tests of the built book read back.

    Parameters
    ----------
    fig : matplotlib.figure.Figure

    Returns
    -------
    tuple of (bytes, dict)
        What IPython's PNG formatter returns: the image and its metadata.
    """
    import io

    from PIL import Image

    from slrlib.plots.style import CSS_DPI, PIXEL_RATIO, legible, text_sizes

    legible(fig)
    buf = io.BytesIO()
    fig.savefig(
        buf, format="png", dpi=CSS_DPI * PIXEL_RATIO, bbox_inches="tight"
    )
    width, height = Image.open(io.BytesIO(buf.getvalue())).size
    sizes = text_sizes(fig)
    meta = {
        "width": round(width / PIXEL_RATIO),
        "height": round(height / PIXEL_RATIO),
        "slr": {
            "min_font_pt": min(sizes) if sizes else None,
            "figure_width_in": float(fig.get_size_inches()[0]),
        },
    }
    return buf.getvalue(), meta


def _ipython_shell():
    """The running IPython shell, or None outside IPython (or without it installed)."""
    try:
        from IPython import get_ipython
    except (
        ImportError
    ):  # pragma: no cover - IPython is a dependency of the book
        return None
    return get_ipython()


def show_figures() -> None:
    """Display every matplotlib Figure of this IPython session through :func:`figure_png`.

    Imports pyplot first, so that the inline backend, which registers its own PNG formatter
    when it starts, does not replace this one afterwards. Outside IPython it does nothing.
    """
    shell = _ipython_shell()
    if shell is None:
        return
    import matplotlib
    import matplotlib.pyplot
    from matplotlib.figure import Figure

    # Start the inline backend before the formatter is set: pyplot resolves its backend lazily
    # (at the first figure), and the inline backend registers its own PNG formatter when it starts.
    matplotlib.pyplot.switch_backend(matplotlib.rcParams["backend"])

    shell.display_formatter.formatters["image/png"].for_type(
        Figure, figure_png
    )


# --------------------------------------------------------------------------- verdicts, folded
#: The folded verdicts of this session, once :func:`fold_verdicts` has been called.
_FOLDER = None
#: The display ids of folded verdicts start so (what tells them from the cell's other outputs).
_RUN_ID = "slr-checks-"


def _folded_html(verdicts: Sequence[str]) -> str:
    """A run of passed verdicts (their HTML) as the book folds them (``book/_ext/fold_checks.py``)."""
    noun = "check" if len(verdicts) == 1 else "checks"
    summary = f'<summary><span class="slr-checks-mark">✓</span> {len(verdicts)} {noun}</summary>'
    return (
        '<details class="slr-checks">'
        + summary
        + "".join(verdicts)
        + "</details>"
    )


def _as_html(data: dict, metadata: dict) -> str | None:
    """A display's bundle as HTML, to show inside a fold; None for one that HTML cannot hold (a widget)."""
    if any(kind.startswith("application/vnd.jupyter.widget") for kind in data):
        return None
    if "text/html" in data:
        return str(data["text/html"])
    for kind in ("image/png", "image/jpeg"):
        if kind in data:
            size = (
                metadata.get(kind, metadata)
                if isinstance(metadata, dict)
                else {}
            )
            width = (
                f' width="{size["width"]}"'
                if isinstance(size, dict) and "width" in size
                else ""
            )
            return f'<img src="data:{kind};base64,{data[kind]}"{width} alt="">'
    if "image/svg+xml" in data:
        return str(data["image/svg+xml"])
    if "text/plain" in data:
        return f"<pre>{html.escape(str(data['text/plain']))}</pre>"
    return None


class _Folder:
    """The outputs of the cell that runs, folded as the book folds them.

    * Check verdicts: each run of consecutive passed verdicts is one output, "✓ 3 checks", that
      opens to them. A verdict joins the run shown last when it comes from the same execution
      and nothing else was output since (a table, a figure, printed text): the run's display is
      then updated in place (``update_display``); otherwise it starts a new run, a new output
      under the cell. A failed verdict is shown open, as it is, and ends the run.
    * The code of a solution (a cell that the converter marks with the title of its solution,
      which JupyterLab sends with the cell): all its displays, verdicts, tables and figures, in
      one closed output "Solution to Exercise 7.1: the code's output", as the book's solution is
      one closed dropdown (JupyterLab shows a cell's outputs again when it runs it, folded or not).

    ``publish(bundle, display_id, update)`` shows a fold (IPython's ``display``);
    :meth:`observe`, a display publisher's hook, counts the other outputs and takes a
    solution's into its fold; ``execution()`` names the running execution, ``solution()`` the
    title of the solution it is the code of (None: none).
    """

    def __init__(self, publish, execution=lambda: None, solution=lambda: None):
        self.publish = publish
        self.execution = execution
        self.solution = solution
        self.names: dict[str, str] = {}
        self.outputs = 0
        self.run: list[tuple[str, str]] = []
        self.run_id = ""
        self.run_at = (None, -1)
        self.items: list[
            tuple[str, str]
        ] = []  # a solution's outputs: ("html" | "verdict", html)
        self.items_id = ""
        self.items_at = None

    def named(self, text: str) -> str:
        """``text`` with the labels a claim names ("(eq-t5-remainder)") as the book numbers them ("(7.7)")."""
        for label, name in self.names.items():
            text = text.replace(label, name)
        return text

    def observe(self, msg: dict) -> dict | None:
        """A display publisher's hook: every output but a fold's own counts as one; a display of a
        solution's code goes into the solution's fold instead (None: not sent as it is)."""
        kind = msg.get("header", {}).get("msg_type")
        content = msg.get("content", {})
        if kind == "display_data":
            if str(
                content.get("transient", {}).get("display_id", "")
            ).startswith(_RUN_ID):
                return msg
            title = self.solution()
            shown = (
                _as_html(content.get("data", {}), content.get("metadata", {}))
                if title
                else None
            )
            if shown is not None:
                self._into_solution(title, "html", shown)
                return None
            self.outputs += 1
        elif kind in ("stream", "execute_result", "error"):
            self.outputs += 1
        return msg

    def _into_solution(self, title: str, kind: str, shown: str) -> None:
        import uuid

        here = self.execution()
        update = bool(self.items) and self.items_at == here
        if not update:
            self.items, self.items_id, self.items_at = (
                [],
                _RUN_ID + uuid.uuid4().hex,
                here,
            )
        self.items.append((kind, shown))
        parts, run = [], []
        for item_kind, item in self.items + [("end", "")]:
            if item_kind == "verdict":
                run.append(item)
                continue
            if run:
                parts.append(_folded_html(run))
                run = []
            parts.append(item)
        summary = f"{title}: the code's output"
        bundle = {
            "text/html": f'<details class="slr-solution"><summary>{html.escape(summary)}</summary>'
            + "".join(parts)
            + "</details>",
            "text/plain": f"{summary} ({len(self.items)} outputs, folded)",
        }
        self.publish(bundle, self.items_id, update)

    def show(self, result) -> None:
        html_, text = self.named(result._repr_html_()), self.named(str(result))
        title = self.solution()
        if title:
            self._into_solution(
                title, "verdict" if result.passed else "html", html_
            )
            return
        if not result.passed:
            self.run = []
            self.publish({"text/html": html_, "text/plain": text}, None, False)
            self.outputs += 1
            return
        here = (self.execution(), self.outputs)
        update = bool(self.run) and here == self.run_at
        if update:
            self.run.append((html_, text))
        else:
            import uuid

            self.run, self.run_id = [(html_, text)], _RUN_ID + uuid.uuid4().hex
        n = len(self.run)
        bundle = {
            "text/html": _folded_html([h for h, _ in self.run]),
            "text/plain": "\n".join(
                [f"✓ {n} check{'' if n == 1 else 's'}"]
                + [f"  {t}" for _, t in self.run]
            ),
        }
        self.publish(bundle, self.run_id, update)
        self.run_at = here


def fold_verdicts(names: dict[str, str] | None = None) -> None:
    """Fold the check verdicts of this IPython session as the book folds them.

    The HTML book folds each run of a cell's consecutive passed verdicts into one line, "✓ 11
    checks", that opens to the list (``book/_ext/fold_checks.py``, a Sphinx transform). A
    chapter opened as a notebook in JupyterLab (``book/_ext/to_notebook.py``, whose hidden
    first cell calls this) gets the same from its kernel: from here on, :mod:`slrlib.verify`
    shows each run as one output, an HTML ``<details>`` updated in place as the run grows, and
    the outputs of a solution's code are one closed output too (``_Folder``). The book's
    build never calls this: its outputs stay one verdict each.

    Parameters
    ----------
    names : dict of str to str, optional
        What to show for a label that a claim names: ``{"(eq-t5-remainder)": "(7.7)"}``, the
        book's number of the equation (the converter finds them in the chapter's code).
    """
    global _FOLDER
    shell = _ipython_shell()
    if shell is None:
        return
    import sys

    from IPython.display import display

    from slrlib import verify

    if _FOLDER is None:

        def publish(bundle, display_id, update):
            display(
                bundle, raw=True, display_id=display_id, update=update
            ) if display_id else display(bundle, raw=True)

        def execution():
            parent = getattr(shell, "parent_header", None) or {}
            return (
                parent.get("header", {}).get("msg_id") or shell.execution_count
            )

        def solution():
            # JupyterLab sends a cell's metadata with its code (the converter marks a solution's).
            parent = getattr(shell, "parent_header", None) or {}
            slr = (parent.get("metadata") or {}).get("slr")
            return slr.get("solution") if isinstance(slr, dict) else None

        _FOLDER = _Folder(publish, execution, solution)
        folder = _FOLDER
        if hasattr(shell.display_pub, "register_hook"):
            shell.display_pub.register_hook(folder.observe)

        def count_writes(*_):
            # Printed text between two verdicts parts them too. IPython (9) puts its own ``write``
            # on the streams for each cell and restores the one it found after: wrapped anew as
            # each cell starts.
            for stream in (sys.stdout, sys.stderr):
                write = getattr(stream, "write", None)
                if write is None or getattr(write, "_slr_counted", False):
                    continue

                def counted(text, *args, _write=write, **kwargs):
                    if text:
                        folder.outputs += 1
                    return _write(text, *args, **kwargs)

                counted._slr_counted = True
                try:
                    stream.write = counted
                except (
                    AttributeError
                ):  # pragma: no cover - a stream without an instance dict
                    pass

        count_writes()
        shell.events.register("pre_run_cell", count_writes)
        verify.show_verdicts_with(folder.show)
    _FOLDER.names = dict(names or {})
