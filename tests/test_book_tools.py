"""The book's tools, on small inputs: folded verdicts, reading times, chapters as notebooks."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import pytest  # noqa: E402
from docutils import nodes  # noqa: E402

import chapter_guide  # noqa: E402
import execute_chapters  # noqa: E402
import fold_checks  # noqa: E402
import to_notebook  # noqa: E402
from slrlib.verify import Check  # noqa: E402


def _verdict(number: int, passed: bool = True) -> nodes.raw:
    check = Check(number, f"check-{number}", f"claim {number}", "that", "", "", "", passed, "")
    return nodes.raw("", check._repr_html_(), format="html")


def test_consecutive_passed_verdicts_fold_into_one_line_and_a_failed_one_stays_open():
    cell = nodes.container(classes=["cell_output"])
    cell += [_verdict(1), _verdict(2), nodes.raw("", "<table></table>", format="html"), _verdict(3),
             _verdict(4, passed=False)]
    assert fold_checks.fold(cell) == 2
    html = [child.astext() for child in cell.children]
    assert html[0].startswith('<details class="slr-checks"><summary>') and "✓</span> 2 checks" in html[0]
    assert 'id="check-1"' in html[0] and 'id="check-2"' in html[0]
    assert html[1] == "<table></table>"
    assert "✓</span> 1 check<" in html[2]
    assert html[3].startswith('<div class="slr-check slr-check-fail"'), "a failed verdict is never folded"


def test_reading_time_rounds_up_to_five_minutes():
    assert chapter_guide.reading_minutes(0) == 5
    assert chapter_guide.reading_minutes(150 * 25) == 25
    assert chapter_guide.reading_minutes(150 * 25 + 1) == 30
    doc = nodes.document(None, None)
    para = nodes.paragraph(text="Three plain words")
    para += nodes.math(text=r"\lambda q \kappa")
    doc += [para, nodes.literal_block(text="x = 1 + 2 words in code")]
    assert chapter_guide.count_words(doc) == 3


def test_a_chapters_markup_becomes_what_jupyterlab_renders():
    book = to_notebook.Book()
    here = "book/03_oracle_risk".split("/")[-1]
    text = ("At {glue:text}`ch3_best_lam:.4f`, see {numref}`Chapter %s <ch-bayes>` and {cite}`marion2025attention`; "
            "{eq}`eq-oracle-risk` stays, {prf:ref}`thm-t5-main` links, {func}`slrlib.zeta` is code.")
    out = to_notebook.rewrite_roles(text, book, here)
    assert '{eval}`glued("ch3_best_lam", ".4f")`' in out
    assert "[Chapter 4](04_bayes.ipynb)" in out
    assert "(Marion et al., 2025)" in out
    # Defined in this chapter: a link to it with the book's number (no reference left for jupyterlab-myst
    # to resolve, which logs an error for a target further down).
    assert '<a href="#eq-oracle-risk">(3.1)</a>' in out
    assert "[Theorem 5](07_theorem5.ipynb#thm-t5-main)" in out
    assert "`slrlib.zeta`" in out and "{func}" not in out


def test_every_reference_left_in_a_chapters_notebook_has_its_target_in_that_notebook():
    # jupyterlab-myst resolves a reference only to a label of the same notebook; one it cannot
    # resolve shows as raw markup and logs an error (a figure named in a code cell's metadata
    # was one such target).
    book = to_notebook.Book()
    role = to_notebook.re.compile(r"\{(?:numref|ref|eq|prf:ref)\}`(?:[^`<]*<)?(?P<target>[^`<>]+)>?`")
    unresolved = {}
    for path in book.chapters:
        nb = to_notebook.convert(path, book)
        markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        defined = {m.group("label") for pattern in (to_notebook.LABEL, to_notebook.OPTION_LABEL, to_notebook.EQ_LABEL)
                   for m in pattern.finditer(markdown)}
        missing = sorted({m.group("target") for m in role.finditer(markdown)} - defined)
        if missing:
            unresolved[path.name] = missing
    assert unresolved == {}


def test_chapter_budgets_name_real_chapters_and_flag_the_slow_ones():
    budgets = execute_chapters.chapter_budgets()
    stems = {p.stem for p in (ROOT / "book").glob("[0-9][0-9]_*.md")}
    assert set(budgets) - {"default", "shared_factor"} <= stems, "budgets.yml names a chapter that does not exist"
    assert budgets["default"] == 150 and budgets["10_transformer"] > 150
    rows = [("03_oracle_risk", 149.9), ("15_samples", 150.1), ("10_transformer", 200.0)]
    table, over = execute_chapters.budget_table(rows, budgets)
    assert over == ["15_samples"]
    assert [line.endswith("OVER") for line in table.splitlines()[2:]] == [False, True, False]
    # Executed several at a time: flagged over the budget times the shared factor only.
    factor = budgets["shared_factor"]
    assert 1 < factor < 2
    rows = [("03_oracle_risk", 150 * factor - 0.1), ("15_samples", 150 * factor + 0.1)]
    table, over = execute_chapters.budget_table(rows, budgets, shared=True)
    assert over == ["15_samples"] and f"{factor:g} x the budget" in table.splitlines()[0]


def test_single_thread_environment_appends_xla_flags_and_keeps_set_variables():
    env = execute_chapters.single_thread_environment({"XLA_FLAGS": "--xla_cpu_max_isa=AVX2",
                                                      "OMP_NUM_THREADS": "3"})
    assert env["XLA_FLAGS"].split() == ["--xla_cpu_max_isa=AVX2", "--xla_cpu_multi_thread_eigen=false"]
    assert env["OMP_NUM_THREADS"] == "3" and env["OPENBLAS_NUM_THREADS"] == "1"
    assert execute_chapters.single_thread_environment({})["XLA_FLAGS"] == execute_chapters.SINGLE_THREAD_ENV["XLA_FLAGS"]


def test_stage_table_totals_and_flags(tmp_path):
    sys.path.insert(0, str(ROOT / "tools"))
    import stage_table

    record = tmp_path / "stages.tsv"
    record.write_text("install\t100\t0\nlibrary\t500\t0\nbook\t30\t2\n", encoding="utf-8")
    rows = stage_table.read_stages(record)
    assert rows == [("install", 100.0, 0), ("library", 500.0, 0), ("book", 30.0, 2)]
    lines = stage_table.stage_table(rows, {"library": 480, "book": 1260, "total": 2100}).splitlines()
    assert lines[2].split() == ["install", "100"]
    assert lines[3].endswith("OVER") and "FAILED (exit 2)" in lines[4]
    assert lines[5].split()[:3] == ["total", "630", "2100"] and "OVER" not in lines[5]


def test_stage_table_counts_stages_side_by_side_once(tmp_path):
    """Stages timed with their start: the total is the wall time they cover, not the sum of their times."""
    sys.path.insert(0, str(ROOT / "tools"))
    import stage_table

    record = tmp_path / "stages.tsv"
    # install (no start), library 1000-1500, then pdf 1500-1580 beside roundoff 1500-1620 and package
    # 1501-1540, then browser 1620-1700: 100 + 500 + 120 + 80 = 800 s, where the sum is 959.
    record.write_text("install\t100\t0\nlibrary\t500\t0\t1000\npackage\t39\t0\t1501\npdf\t80\t0\t1500\n"
                      "roundoff\t120\t0\t1500\nbrowser\t80\t0\t1620\n", encoding="utf-8")
    rows = stage_table.read_stages(record)
    assert rows[1] == ("library", 500.0, 0, 1000.0)
    assert stage_table.total_seconds(rows) == 800
    lines = stage_table.stage_table(rows, {"roundoff": 100, "total": 900}).splitlines()
    assert lines[-1].split()[:3] == ["total", "800", "900"] and "OVER" not in lines[-1]
    assert lines[4].endswith("beside pdf, roundoff") and lines[5].endswith("beside package, roundoff")
    assert "OVER" in lines[6] and lines[6].endswith("beside package, pdf")
    assert "beside" not in lines[3] and "beside" not in lines[7]


def _parent_of(child_code: str) -> subprocess.Popen:
    """A process whose one child runs ``child_code`` (the watchdog watches a process's descendants)."""
    parent = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child_code!r}])"
    return subprocess.Popen([sys.executable, "-c", parent])


def test_stall_watchdog_kills_a_kernel_that_uses_no_cpu_and_writes_its_stacks(tmp_path):
    parent = _parent_of("import time; time.sleep(60)")
    dump = tmp_path / "hang.txt"
    watchdog = execute_chapters.StallWatchdog(parent.pid, window=1.0, min_cpu=0.2, poll=0.1, dump_to=dump)
    watchdog.start()
    try:
        assert parent.wait(timeout=45) == 0  # its sleeping child was killed long before 60 s
    finally:
        parent.kill()
    watchdog.stop()
    assert watchdog.stalled
    header = dump.read_text().splitlines()[0]
    assert " s of CPU in " in header and float(header.split()[0]) < 0.2


def test_stall_watchdog_leaves_a_computing_kernel_alone():
    # A window of 2 s and 0.02 s of CPU: a busy child starved to 1 % of a core still shows as alive.
    parent = _parent_of("import time\nend = time.monotonic() + 4\nwhile time.monotonic() < end: pass")
    watchdog = execute_chapters.StallWatchdog(parent.pid, window=2.0, min_cpu=0.02, poll=0.1)
    watchdog.start()
    assert parent.wait(timeout=30) == 0
    watchdog.stop()
    assert not watchdog.stalled
    # the least CPU over a full 2 s window: above the threshold, and at most the window of one core
    assert watchdog.least_cpu is not None and 0.02 <= watchdog.least_cpu <= 2.0 + 0.5, watchdog.least_cpu


def test_stall_watchdog_rejects_a_window_that_cannot_measure():
    with pytest.raises(ValueError, match="window"):
        execute_chapters.StallWatchdog(1, window=0.0)


def test_a_chapter_whose_kernel_hangs_is_killed_and_executed_again(tmp_path, monkeypatch):
    """_execute end to end on a two-cell chapter whose first run sleeps (no CPU) and whose second runs
    through: the watchdog kills the first kernel, the chapter is executed again, cached, and said so."""
    flag = tmp_path / "first-run-done"
    chapter = tmp_path / "hangs_once.md"
    chapter.write_text(
        "---\njupytext:\n  text_representation:\n    format_name: myst\nkernelspec:\n  name: python3\n"
        "  display_name: Python 3\n---\n\n# A chapter\n\n```{code-cell} ipython3\nimport pathlib, time\n"
        f"flag = pathlib.Path({str(flag)!r})\n"
        "if not flag.exists():\n    flag.touch()\n    time.sleep(600)\n```\n\n"
        "```{code-cell} ipython3\nprint('done')\n```\n", encoding="utf-8")
    monkeypatch.setattr(execute_chapters, "STALL_SECONDS", 3.0)
    monkeypatch.setattr(execute_chapters, "STALL_POLL", 0.25)
    monkeypatch.setattr(execute_chapters, "NATIVE_STACKS", False)  # gdb is tested above
    monkeypatch.setattr(execute_chapters, "HANGS_DIR", tmp_path / "hangs")
    monkeypatch.setattr(execute_chapters, "CHECKS_DIR", tmp_path / "checks")
    kernels = tmp_path / "tmp"
    kernels.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(kernels))  # where IPCKernelManager makes its folders
    path, seconds, note, _ = execute_chapters._execute((str(chapter), str(tmp_path / "cache"), 120))
    assert seconds is not None and "executed again after a hang" in note, note
    assert not list(kernels.glob("slr-kernel-*"))  # both kernels' folders removed at their shutdown
    assert flag.exists() and (tmp_path / "hangs" / "hangs_once-1.txt").is_file()
    # A kernel that hangs every time: killed twice, and the chapter fails, saying why.
    flag.unlink()
    chapter.write_text(chapter.read_text().replace("if not flag.exists():", "if True:"), encoding="utf-8")
    path, seconds, failure, _ = execute_chapters._execute((str(chapter), str(tmp_path / "cache"), 120))
    assert seconds is None and failure.startswith("(hung: stacks in"), failure
    assert not list(kernels.glob("slr-kernel-*"))


def test_a_chapter_that_writes_to_stderr_fails_and_is_not_cached(tmp_path, monkeypatch):
    """A warning (here numpy's, from a division by zero) is written to stderr: the chapter fails, naming
    the cell and the warning, and is not cached; the same chapter without it runs and is cached."""
    chapter = tmp_path / "warns.md"
    header = ("---\njupytext:\n  text_representation:\n    format_name: myst\nkernelspec:\n  name: python3\n"
              "  display_name: Python 3\n---\n\n# A chapter\n\n")
    chapter.write_text(header + "```{code-cell} ipython3\nimport numpy as np\nprint('fine')\n```\n\n"
                       "```{code-cell} ipython3\nz = np.array([1.0]) / np.array([0.0])\n```\n", encoding="utf-8")
    monkeypatch.setattr(execute_chapters, "CHECKS_DIR", tmp_path / "checks")
    monkeypatch.setattr(execute_chapters, "HANGS_DIR", tmp_path / "hangs")
    path, seconds, failure, _ = execute_chapters._execute((str(chapter), str(tmp_path / "cache"), 120))
    assert seconds is None, "a chapter that warns was accepted"
    assert "wrote to stderr" in failure and "code cell 2" in failure and "divide by zero" in failure, failure
    from jupyter_cache import get_cache

    assert get_cache(str(tmp_path / "cache")).list_cache_records() == []
    chapter.write_text(header + "```{code-cell} ipython3\nprint('fine')\n```\n", encoding="utf-8")
    path, seconds, note, _ = execute_chapters._execute((str(chapter), str(tmp_path / "cache"), 120))
    assert seconds is not None and note == "", note
    assert len(get_cache(str(tmp_path / "cache")).list_cache_records()) == 1


def test_chapter_kernels_use_unix_sockets_in_folders_of_their_own():
    """No TCP port to pick (jupyter_client's port race between kernels started at once): each manager's
    sockets are files in a fresh folder, removed with it."""
    a, b = execute_chapters.IPCKernelManager(), execute_chapters.IPCKernelManager()
    assert a.transport == b.transport == "ipc"
    folders = [Path(m.ip).parent for m in (a, b)]
    assert folders[0] != folders[1] and all(f.is_dir() for f in folders)
    del a, b
    import gc

    gc.collect()
    assert not any(f.exists() for f in folders)


def test_durations_missing_and_merge(tmp_path, monkeypatch, capsys):
    """tools/test_durations.py: --missing lists the collected ids the file lacks; --merge keeps the recorded
    times of tests still collected, adds the report's, and drops the tests no longer collected."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    import test_durations as tool

    out = tmp_path / "durations.json"
    monkeypatch.setattr(tool, "OUT", out)
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    out.write_text('{"tests/test_a.py::old": 2.5, "tests/test_a.py::gone": 9.0}')
    collected = tmp_path / "collected.txt"
    collected.write_text("tests/test_a.py::old\ntests/test_a.py::new[1]\n")
    assert tool.main(["--missing", str(collected)]) == 0
    assert capsys.readouterr().out.split() == ["tests/test_a.py::new[1]"]
    junit = tmp_path / "junit.xml"
    junit.write_text('<testsuites><testsuite><testcase classname="tests.test_a" name="new[1]" time="0.75"/>'
                     "</testsuite></testsuites>")
    assert tool.main(["--merge", str(junit), str(collected)]) == 0
    assert json.loads(out.read_text()) == {"tests/test_a.py::new[1]": 0.75, "tests/test_a.py::old": 2.5}
    assert tool.main(["--merge", str(junit)]) == 2  # the collected ids are required
