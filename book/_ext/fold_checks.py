"""Sphinx extension: a cell's check verdicts fold into one line that opens to the list.

Every check a chapter makes (:mod:`slrlib.verify`) displays a one-line verdict under its
cell. Shown one under another they crowded the reading (a cell of chapter 15 showed eleven),
so here the consecutive passed verdicts of a cell's output are wrapped in
``<details class="slr-checks">``, whose summary reads "✓ 11 checks". Opening it shows the
verdicts as before, each with its ``id``: the ledger's links reach them (the browser opens
the fold, and ``static/slr-book.js`` does too). The appendix "What this book verified"
stays the full list.

A failed verdict is never folded, and neither is anything else: it stays where it is, open.
(A failed check also raises, so the chapter, and the build, stop there.)

Runs after myst-nb's ``SelectMimeType`` (priority 4), when each output of a cell is one
node (the HTML verdict is a ``raw`` node) under the cell's output container.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

PASSED = re.compile(r'^\s*<div class="slr-check slr-check-pass"')


def is_passed_verdict(node: nodes.Node) -> bool:
    return isinstance(node, nodes.raw) and node.get("format") == "html" and bool(PASSED.match(node.astext()))


def summary_html(count: int) -> str:
    noun = "check" if count == 1 else "checks"
    return f'<summary><span class="slr-checks-mark">✓</span> {count} {noun}</summary>'


def fold(container: nodes.Element) -> int:
    """Wrap each run of consecutive passed verdicts among ``container``'s children; returns the runs."""
    children = list(container.children)
    runs, run = [], []
    for child in children + [None]:
        if child is not None and is_passed_verdict(child):
            run.append(child)
            continue
        if run:
            runs.append(run)
            run = []
    for run in runs:
        html = ('<details class="slr-checks">' + summary_html(len(run))
                + "".join(node.astext() for node in run) + "</details>")
        folded = nodes.raw("", html, format="html", classes=["output", "text_html"])
        container.replace(run[0], folded)
        for node in run[1:]:
            container.remove(node)
    return len(runs)


class FoldChecks(SphinxPostTransform):
    default_priority = 50
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for container in list(self.document.findall(nodes.container)):
            if "cell_output" in container.get("classes", []):
                fold(container)


def setup(app):
    app.add_post_transform(FoldChecks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
