"""Sphinx extension: each chapter opens with what it shows, what it needs and how long it reads.

``{chapter-guide}``, at the top of a chapter::

    :::{chapter-guide}
    :needs: ch-task, ch-attention
    :path: core
    The risk of the erf predictor depends on (k, v) through five overlaps only, in closed
    form (Theorem 1 of the paper).
    :::

renders a box "In this chapter": *Shows* (the content: the key result), *Needs* (the
chapters named, as links "Chapter 1", "Chapter 2"; ``none`` for none), and *Reading*: the
words of the chapter's prose (text outside code, outputs and formulas) at
:data:`WORDS_PER_MINUTE`, rounded up to 5 minutes. ``:path:`` is ``core`` (the path through
the paper) or ``extension`` (beyond it).

``{chapter-map}``, in the preface, tabulates every chapter's guide: number, title, what it
shows, what it needs, its path and its reading time. A chapter listed in the table of
contents without a guide, a guide with an unknown ``:path:``, or a ``:needs:`` label that is
not a chapter is a build warning (an error under ``make``).
"""

from __future__ import annotations

import math
import re

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

#: Reading speed for the estimate: technical prose with formulas between the words.
WORDS_PER_MINUTE = 150
PATHS = ("core", "extension")
CHAPTER = re.compile(r"^book/(\d\d)_[\w-]+$")
WORD = re.compile(r"[^\W\d_][\w'’-]*|\d+(?:[.,]\d+)*")
#: Nodes whose text is not read as prose.
SKIP = (nodes.literal_block, nodes.raw, nodes.math, nodes.math_block, nodes.comment, nodes.target)


class chapter_guide(nodes.admonition):
    """The box; its reading time is filled in once the whole chapter is read."""


class chapter_map(nodes.General, nodes.Element):
    """Placeholder for the preface's table, built once every chapter is read."""


def numref(label: str, text: str = "Chapter %s") -> addnodes.pending_xref:
    ref = addnodes.pending_xref("", refdomain="std", reftype="numref", reftarget=label,
                                refexplicit=True, refwarn=True)
    ref += nodes.inline(text, text, classes=["xref", "std", "std-numref"])
    return ref


def _needs(argument: str) -> list[str]:
    labels = [x.strip() for x in (argument or "").split(",") if x.strip()]
    return [] if labels == ["none"] else labels


class ChapterGuide(SphinxDirective):
    has_content = True
    option_spec = {"needs": directives.unchanged_required, "path": directives.unchanged_required}

    def run(self):
        path = self.options.get("path", "")
        if path not in PATHS:
            logger.warning(f"chapter-guide: :path: must be one of {PATHS}, got {path!r}",
                           location=self.get_location())
        needs = _needs(self.options.get("needs", ""))
        box = chapter_guide(classes=["admonition", "slr-chapter-guide"])
        box += nodes.title("In this chapter", "In this chapter")
        fields = nodes.field_list()

        shows = nodes.Element()
        self.state.nested_parse(self.content, self.content_offset, shows)
        fields += self._field("Shows", shows.children)

        para = nodes.paragraph()
        if needs:
            for i, label in enumerate(needs):
                if i:
                    para += nodes.Text(", ")
                para += numref(label)
        else:
            para += nodes.Text("the preface only")
        fields += self._field("Needs", [para])
        fields += self._field("Reading", [nodes.paragraph(classes=["slr-reading-time"])])
        fields += self._field("Executed", [nodes.paragraph(classes=["slr-executed"])])
        box += fields

        env = self.env
        if not hasattr(env, "slr_chapter_guides"):
            env.slr_chapter_guides = {}
        env.slr_chapter_guides[env.docname] = {"needs": needs, "path": path, "shows": self.content.data[:],
                                               "words": 0}
        return [box]

    @staticmethod
    def _field(name: str, body) -> nodes.field:
        field = nodes.field()
        field += nodes.field_name(name, name)
        content = nodes.field_body()
        content.extend(body)
        field += content
        return field


def count_words(doctree: nodes.Node) -> int:
    """Words of prose: text outside code cells, outputs, formulas and raw HTML."""
    total = 0
    for text in doctree.findall(nodes.Text):
        node, skip = text.parent, False
        while node is not None:
            if isinstance(node, SKIP) or isinstance(node, chapter_guide) or (
                    isinstance(node, nodes.container) and "cell" in node.get("classes", [])):
                skip = True
                break
            node = node.parent
        if not skip:
            total += len(WORD.findall(text.astext()))
    return total


def reading_minutes(words: int) -> int:
    """Minutes at :data:`WORDS_PER_MINUTE`, rounded up to a multiple of 5 (at least 5)."""
    return max(5, 5 * math.ceil(words / WORDS_PER_MINUTE / 5))


def reading_text(words: int) -> str:
    return f"about {reading_minutes(words)} min ({words:,} words of prose)".replace(",", " ")


def fill_reading_time(app, doctree) -> None:
    guides = list(doctree.findall(chapter_guide))
    if not guides:
        return
    words = count_words(doctree)
    app.env.slr_chapter_guides[app.env.docname]["words"] = words
    executed = executed_text(app, app.env.docname)
    for guide in guides:
        for para in guide.findall(nodes.paragraph):
            if "slr-reading-time" in para.get("classes", []):
                para += nodes.Text(reading_text(words))
            if "slr-executed" in para.get("classes", []):
                ref = addnodes.pending_xref("", refdomain="std", reftype="ref", reftarget="execution-status",
                                            refexplicit=True, refwarn=True)
                ref += nodes.inline(executed, executed, classes=["xref", "std", "std-ref"])
                para += ref


def executed_text(app, docname: str) -> str:
    """"in 41 s, 62 checks": the chapter's last execution (myst-nb's record of it, read from the
    jupyter-cache) and the checks it made (``_build/checks/<stem>.json``, :mod:`check_ledger`); the
    appendix "Execution status" has every chapter's."""
    import json
    from pathlib import Path

    from myst_nb.sphinx_ import NbMetadataCollector

    data = NbMetadataCollector.get_exec_data(app.env, docname) or {}
    ledger = Path(app.srcdir) / app.config.slr_checks_dir / f"{docname.split('/')[-1]}.json"
    checks = len(json.loads(ledger.read_text(encoding="utf-8"))) if ledger.is_file() else 0
    if data.get("runtime") is None:
        logger.warning(f"chapter-guide of {docname}: the build recorded no execution time for it", location=docname)
        return f"{checks} checks"
    return f"in {float(data['runtime']):.0f} s, {checks} checks"


class ChapterMap(SphinxDirective):
    has_content = False

    def run(self):
        return [chapter_map()]


def _toc_chapters(app) -> list[str]:
    return [d for d in app.env.found_docs if CHAPTER.match(d)]


def build_map(app, doctree, fromdocname) -> None:
    guides = getattr(app.env, "slr_chapter_guides", {})
    for placeholder in list(doctree.findall(chapter_map)):
        chapters = sorted(_toc_chapters(app))
        table = nodes.table(classes=["slr-chapter-map"])
        group = nodes.tgroup(cols=5)
        table += group
        for width in (8, 40, 16, 10, 10):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        group += head
        row = nodes.row()
        for h in ("", "chapter", "needs", "path", "reading"):
            row += nodes.entry("", nodes.paragraph(text=h))
        head += row
        body = nodes.tbody()
        group += body
        for docname in chapters:
            guide = guides.get(docname)
            if guide is None:
                logger.warning(f"{docname} has no chapter-guide: the preface's map cannot list it",
                               location=placeholder)
                continue
            number = ".".join(map(str, app.env.toc_secnumbers.get(docname, {}).get("", ())))
            title = app.env.titles[docname].astext()
            row = nodes.row()
            row += nodes.entry("", nodes.paragraph(text=number))
            cell = nodes.paragraph()
            cell += nodes.reference(title, title, internal=True,
                                    refuri=app.builder.get_relative_uri(fromdocname, docname))
            row += nodes.entry("", cell)
            needs = [app.env.toc_secnumbers.get(_label_doc(app, lab), {}).get("", ()) for lab in guide["needs"]]
            needs_text = ", ".join(".".join(map(str, n)) for n in needs if n) or "—"
            row += nodes.entry("", nodes.paragraph(text=needs_text))
            row += nodes.entry("", nodes.paragraph(text=guide["path"]))
            row += nodes.entry("", nodes.paragraph(text=f"{reading_minutes(guide['words'])} min"))
            body += row
        placeholder.replace_self(table)


def _label_doc(app, label: str) -> str | None:
    found = app.env.domaindata["std"]["labels"].get(label)
    return found[0] if found else None


def check_needs(app, env) -> None:
    for docname, guide in getattr(env, "slr_chapter_guides", {}).items():
        for label in guide["needs"]:
            target = env.domaindata["std"]["labels"].get(label)
            if target is None or not CHAPTER.match(target[0]):
                logger.warning(f"chapter-guide of {docname}: :needs: {label!r} is not a chapter's label",
                               location=docname)


def purge(app, env, docname) -> None:
    getattr(env, "slr_chapter_guides", {}).pop(docname, None)


def merge(app, env, docnames, other) -> None:
    if not hasattr(env, "slr_chapter_guides"):
        env.slr_chapter_guides = {}
    env.slr_chapter_guides.update({d: g for d, g in getattr(other, "slr_chapter_guides", {}).items()
                                   if d in docnames})


def setup(app):
    app.add_node(chapter_guide, html=(lambda self, node: self.visit_admonition(node),
                                      lambda self, node: self.depart_admonition(node)))
    app.add_node(chapter_map)
    app.add_directive("chapter-guide", ChapterGuide)
    app.add_directive("chapter-map", ChapterMap)
    app.connect("doctree-read", fill_reading_time)
    app.connect("doctree-resolved", build_map)
    app.connect("env-check-consistency", check_needs)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
