"""Sphinx extension: a box that states a result of the paper carries the paper's number.

The boxes of sphinx-proof are numbered per chapter (Proposition 7.1, 7.2, ...), while the
prose, like a reader with the paper open beside the book, says "Proposition 8". A box that
restates a result of the paper names it with the class ``paper-N``::

    :::{prf:proposition} Descent
    :label: prop-descent
    :class: paper-8

and is then numbered as in the paper, "Proposition 8 of the paper (Descent)", in its title
and in every ``{prf:ref}`` to it. The book's own boxes keep the chapter's numbering, counted
without the paper's boxes (Proposition 7.1, 7.2, ...): a dotted number is the book's, a
plain number the paper's (the preface says so).

How: the numbers that Sphinx assigns (``env.toc_fignumbers``, after the toctree collector)
are rewritten for the proof types, before any page is written; both sphinx-proof's box titles
and its references read them there. ``static/slr-book.css`` adds "of the paper" after the
number of a box of class ``slr-paper``.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)

PAPER_CLASS = re.compile(r"^paper-(\d+)$")
#: The box types of sphinx-proof that the paper numbers.
PROOF_TYPES = ("theorem", "lemma", "proposition", "corollary", "definition", "assumption", "remark")


def _paper_number(node: nodes.Element) -> int | None:
    numbers = [int(m.group(1)) for c in node.get("classes", []) if (m := PAPER_CLASS.match(c))]
    if len(numbers) > 1:
        logger.warning(f"a box has several paper-N classes: {node.get('classes')}", location=node)
    return numbers[0] if numbers else None


def collect(app, doctree) -> None:
    """Record ``{box id: paper number}`` for the document just read."""
    env = app.env
    if not hasattr(env, "slr_paper_numbers"):
        env.slr_paper_numbers = {}
    found = {}
    for node in doctree.findall(nodes.Element):
        if "proof" not in node.get("classes", []) or not node.get("ids"):
            continue
        number = _paper_number(node)
        if number is None:
            continue
        if number < 1:
            logger.warning(f"paper-{number}: the paper numbers its results from 1", location=node)
            continue
        if node.get("countertype") not in PROOF_TYPES:
            logger.warning(f"paper-{number} on a box that is not numbered ({node.get('realtype')}, "
                           f"nonumber?): only {', '.join(PROOF_TYPES)} boxes take it", location=node)
            continue
        node["classes"].append("slr-paper")
        found[node["ids"][0]] = number
    env.slr_paper_numbers[env.docname] = found


def purge(app, env, docname) -> None:
    getattr(env, "slr_paper_numbers", {}).pop(docname, None)


def merge(app, env, docnames, other) -> None:
    if not hasattr(env, "slr_paper_numbers"):
        env.slr_paper_numbers = {}
    env.slr_paper_numbers.update({d: n for d, n in getattr(other, "slr_paper_numbers", {}).items() if d in docnames})


def renumber(app, env) -> list[str]:
    """Paper boxes take the paper's number; the book's own are counted 1, 2, ... without them."""
    changed = []
    for docname, paper in getattr(env, "slr_paper_numbers", {}).items():
        numbers = env.toc_fignumbers.get(docname, {})
        for countertype in PROOF_TYPES:
            ids = numbers.get(countertype)
            if not ids or not any(i in paper for i in ids):
                continue
            own = sorted((number, i) for i, number in ids.items() if i not in paper)
            for k, (number, i) in enumerate(own, start=1):
                ids[i] = tuple(number[:-1]) + (k,)
            for i in ids:
                if i in paper:
                    ids[i] = (paper[i],)
            changed.append(docname)
    return sorted(set(changed))


def setup(app):
    app.connect("doctree-read", collect)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    # After sphinx.environment.collectors.toctree (priority 500) has assigned the numbers.
    app.connect("env-get-updated", renumber, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
