"""The appendix pages built from what the build measured: the ledger of checks and the benchmarks.

``{check-ledger}``
    Every check the chapters made (:mod:`slrlib.verify`), read from ``_build/checks/*.json``
    (``book/_ext/execute_chapters.py`` has each chapter's kernel write its file): a summary
    table (checks per chapter) and, per chapter, a table of the claims, each linked to its
    verdict in the chapter (the verdict's HTML ``id``). A chapter of the book (a document
    ``book/NN_*``) without a ledger file, with no check, or with a failed check is a build
    warning, hence an error under ``make``'s ``-W``.

``{bench-report}``
    The benchmark results of ``make bench`` (``_build/bench.json``), as a table; a note saying
    how to produce them when the file is absent.

``{execution-status}``
    Every executed page of the table of contents, in its order: the seconds its last execution
    took (myst-nb's record in the jupyter-cache, which ``book/_ext/execute_chapters.py`` fills),
    against its budget in ``budgets.yml`` (times ``shared_factor`` when
    ``_build/execution/<stem>.json`` says that several chapters ran at once), the checks it made
    and how many failed, and when it was executed; above the table, the commit the book was built
    from. A page executed in this build whose time is missing is a build warning.

The three pages are re-read on every build (the files they read are not Sphinx sources).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

CHAPTER = re.compile(r"^book/(\d\d)_[\w-]+$")


def _table(headers: list[str], rows: list[list[nodes.Node | str]], widths: list[int], classes=()) -> nodes.table:
    table = nodes.table(classes=["slr-ledger", *classes])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for w in widths:
        group += nodes.colspec(colwidth=w)
    head = nodes.thead()
    group += head
    row = nodes.row()
    for h in headers:
        row += nodes.entry("", nodes.paragraph(text=h))
    head += row
    body = nodes.tbody()
    group += body
    for cells in rows:
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += cell if isinstance(cell, nodes.Node) else nodes.paragraph(text=str(cell))
            row += entry
        body += row
    return table


def _link(text: str, uri: str) -> nodes.paragraph:
    para = nodes.paragraph()
    para += nodes.reference(text, text, refuri=uri, internal=True)
    return para


def _chapters(env) -> list[str]:
    return sorted(d for d in env.found_docs if CHAPTER.match(d))


def _title(env, docname: str) -> str:
    title = env.titles.get(docname)
    return title.astext() if title is not None else docname.split("/")[-1]


class CheckLedger(SphinxDirective):
    """``{check-ledger}``: every check of every chapter, linked to its verdict."""

    def run(self) -> list[nodes.Node]:
        env = self.env
        env.slr_always_read = getattr(env, "slr_always_read", set()) | {env.docname}
        folder = Path(env.srcdir) / env.config.slr_checks_dir
        builder = env.app.builder
        summary_rows, sections = [], []
        total = 0
        for docname in _chapters(env):
            stem = docname.split("/")[-1]
            path = folder / f"{stem}.json"
            if not path.is_file():
                logger.warning(f"check ledger: {docname} recorded no checks ({path} is missing)",
                               location=(env.docname, self.lineno))
                continue
            records = json.loads(path.read_text(encoding="utf-8"))
            failed = [r for r in records if not r["passed"]]
            if not records:
                logger.warning(f"check ledger: {docname} made no check", location=(env.docname, self.lineno))
            for r in failed:
                logger.warning(f"check ledger: {docname}: failed check: {r['claim']}",
                               location=(env.docname, self.lineno))
            total += len(records)
            uri = builder.get_relative_uri(env.docname, docname)
            number = CHAPTER.match(docname).group(1).lstrip("0")
            title = f"{number}. {_title(env, docname)}"
            summary_rows.append([_link(title, uri), str(len(records)), str(len(records) - len(failed))])
            rows = []
            for r in records:
                compared = " vs ".join(p for p in (r["value"], r["reference"]) if p)
                numbers = "; ".join(p for p in (compared, r["detail"], r["tolerance"]) if p)
                rows.append([str(r["number"]), _link(r["claim"], f"{uri}#{r['anchor']}"), numbers,
                             "✓" if r["passed"] else "✗ failed"])
            section = nodes.container(classes=["slr-ledger-chapter"])
            heading = nodes.rubric()
            heading += nodes.reference(title, title, refuri=uri, internal=True)
            section += heading
            if rows:
                section += _table(["#", "Claim (linked to its verdict)", "Numbers", "Verdict"], rows, [4, 46, 44, 6])
            sections.append(section)
        intro = nodes.paragraph(text=f"{total} checks in {len(summary_rows)} chapters.")
        summary = _table(["Chapter", "Checks", "Passed"], summary_rows, [70, 15, 15], classes=["slr-ledger-summary"])
        return [intro, summary, *sections]


class BenchReport(SphinxDirective):
    """``{bench-report}``: the results of ``make bench`` (``_build/bench.json``), or how to get them."""

    FIELDS = [("seconds", "warm s", ".2f"), ("cold_seconds", "cold s", ".2f"), ("run_steps", "runs × steps", ",d"),
              ("us_per_run_step", "µs per run-step", ".3f")]

    def run(self) -> list[nodes.Node]:
        env = self.env
        env.slr_always_read = getattr(env, "slr_always_read", set()) | {env.docname}
        path = Path(env.srcdir) / env.config.slr_bench_file
        if not path.is_file():
            para = nodes.paragraph(text=f"This build found no benchmark results ({env.config.slr_bench_file}): run ")
            para += nodes.literal(text="make bench")
            para += nodes.Text(" before ")
            para += nodes.literal(text="make book")
            para += nodes.Text(" to include them here.")
            return [para]
        results = json.loads(path.read_text(encoding="utf-8"))
        machine = results.pop("machine", None)
        pages = results.pop("pages", None)
        rows = []
        for name, entry in results.items():
            if not isinstance(entry, dict):
                continue
            cells = [name]
            for key, _, fmt in self.FIELDS:
                value = entry.get(key)
                cells.append("" if value is None else format(int(value) if fmt == ",d" else float(value), fmt))
            rows.append(cells)
        out: list[nodes.Node] = []
        if isinstance(machine, dict):
            out.append(nodes.paragraph(text="Measured on: " + ", ".join(f"{k} {v}" for k, v in machine.items()) + "."))
        out.append(_table(["benchmark"] + [h for _, h, _ in self.FIELDS], rows, [25, 15, 15, 25, 20]))
        if isinstance(pages, dict) and "summary" in pages:
            out.append(nodes.paragraph(text=(
                f"The chapter pages (benchmarks/pages.py): {len(pages.get('pages', {}))} pages, first visits at "
                "1300 × 900 in headless Chromium, at this machine's CPU (1×) and slowed 4×; the median of the "
                "pages and the worst, against the goal for the worst.")))
            labels = [("readable_1x_ms", "readable, 1× (ms)", "readable_1x"), ("settled_1x_ms", "settled, 1× (ms)", "settled_1x"),
                      ("readable_4x_ms", "readable, 4× (ms)", "readable_4x"), ("settled_4x_ms", "settled, 4× (ms)", "settled_4x"),
                      ("bytes", "sent (kB, gzipped)", "bytes")]
            page_rows = []
            for key, label, goal in labels:
                s = pages["summary"][key]
                scale = 1000 if key == "bytes" else 1
                page_rows.append([label, f"{s['median'] / scale:,.0f}", f"{s['worst'] / scale:,.0f} ({s['worst_page']})",
                                  f"{pages['goals'][goal] / scale:,.0f}"])
            out.append(_table(["page", "median", "worst", "goal for the worst"], page_rows, [30, 15, 35, 20]))
        return out


class execution_status(nodes.General, nodes.Element):
    """Placeholder for the status table, filled once every page is read (:func:`fill_status`)."""


class ExecutionStatus(SphinxDirective):
    """``{execution-status}``: each executed page's time against its budget, its checks, its date."""

    def run(self) -> list[nodes.Node]:
        env = self.env
        env.slr_always_read = getattr(env, "slr_always_read", set()) | {env.docname}
        return [execution_status()]


def commit_described(root: Path) -> str:
    """The commit the book is built from, ``abc1234`` (with "and uncommitted changes" when the work tree
    differs from it), or a sentence saying that the sources are not a git checkout."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    try:
        commit = git("rev-parse", "--short=10", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "sources that are not a git checkout"
    return f"commit {commit}" + (" with uncommitted changes" if dirty else "")


def execution_rows(app) -> list[dict]:
    """One entry per executed page of the table of contents, in its order: docname, seconds, budget,
    jobs, checks, failed, executed (UTC date and time)."""
    import execute_chapters
    from myst_nb.sphinx_ import NbMetadataCollector

    env = app.env
    budgets = execute_chapters.chapter_budgets()
    folder = Path(env.srcdir) / env.config.slr_checks_dir
    rows = []
    for docname in _toc_order(env):
        data = NbMetadataCollector.get_exec_data(env, docname) if docname in env.all_docs else None
        if not data or data.get("runtime") is None:
            continue
        stem = docname.split("/")[-1]
        seconds = float(data["runtime"])
        recorded = execute_chapters.execution_file(stem)
        jobs = 1
        if recorded.is_file():
            entry = json.loads(recorded.read_text(encoding="utf-8"))
            if abs(float(entry["seconds"]) - seconds) < 1e-6:  # the record of this very execution
                jobs = int(entry["jobs"])
        ledger = folder / f"{stem}.json"
        records = json.loads(ledger.read_text(encoding="utf-8")) if ledger.is_file() else []
        rows.append({"docname": docname, "seconds": seconds, "budget": budgets.get(stem, budgets["default"]),
                     "factor": budgets["shared_factor"] if jobs > 1 else 1.0, "jobs": jobs,
                     "checks": len(records), "failed": sum(not r["passed"] for r in records),
                     "executed": time.strftime("%Y-%m-%d %H:%M", time.gmtime(float(data["mtime"])))})
    return rows


def _toc_order(env) -> list[str]:
    """Every document of the table of contents, depth first from the root."""
    order, stack = [], [env.config.root_doc]
    while stack:
        doc = stack.pop(0)
        if doc in order:
            continue
        order.append(doc)
        stack[:0] = env.toctree_includes.get(doc, [])
    return order


def fill_status(app, doctree, fromdocname) -> None:
    for placeholder in list(doctree.findall(execution_status)):
        env = app.env
        rows = execution_rows(app)
        out: list[nodes.Node] = []
        total = sum(r["seconds"] for r in rows)
        def grouped(n: float) -> str:
            return f"{n:,.0f}".replace(",", "\u202f")

        intro = nodes.paragraph(text=(
            f"Built from {commit_described(Path(env.srcdir))}. {len(rows)} pages executed, "
            f"{grouped(total)} s of kernel time in all, {grouped(sum(r['checks'] for r in rows))} checks, "
            f"{sum(r['failed'] for r in rows)} failed."))
        out.append(intro)
        table_rows = []
        for r in rows:
            number = ".".join(map(str, env.toc_secnumbers.get(r["docname"], {}).get("", ())))
            title = (f"{number}. " if number else "") + _title(env, r["docname"])
            budget = f"{r['budget']:.0f}" + (f" × {r['factor']:g}" if r["factor"] != 1 else "")
            over = r["seconds"] > r["budget"] * r["factor"]
            table_rows.append([_link(title, app.builder.get_relative_uri(fromdocname, r["docname"])),
                               f"{r['seconds']:.0f}" + (" (over)" if over else ""), budget,
                               str(r["checks"]), str(r["failed"]), r["executed"]])
        out.append(_table(["Page", "Executed in (s)", "Budget (s)", "Checks", "Failed", "Executed (UTC)"],
                          table_rows, [40, 12, 12, 10, 8, 18], classes=["slr-execution-status"]))
        placeholder.replace_self(out)


def _always_read(app, env, added, changed, removed) -> list[str]:
    return sorted(getattr(env, "slr_always_read", set()) - set(removed))


def _purge(app, env, docname) -> None:
    getattr(env, "slr_always_read", set()).discard(docname)


def setup(app):
    app.add_config_value("slr_checks_dir", "_build/checks", "env")
    app.add_config_value("slr_bench_file", "_build/bench.json", "env")
    app.add_directive("check-ledger", CheckLedger)
    app.add_directive("bench-report", BenchReport)
    app.add_node(execution_status)
    app.add_directive("execution-status", ExecutionStatus)
    app.connect("doctree-resolved", fill_status)
    app.connect("env-get-outdated", _always_read)
    app.connect("env-purge-doc", _purge)
    return {"version": "1.0", "parallel_read_safe": False, "parallel_write_safe": True}
