"""Execute the book's chapters into the jupyter-cache, several at a time, before Sphinx runs.

``make book`` and ``make book-fresh`` call this first; ``jupyter-book build`` (with
``execute_notebooks: cache``) then finds every chapter in the cache and only renders it.
Sphinx itself executes one notebook after another; the chapters are independent, so on a
machine with more cores several kernels at once finish sooner. With more than one worker each
kernel's XLA runs on one thread (``SINGLE_THREAD_ENV``): two kernels that each spread over
every core contend for the same threads (measured on 2 cores: 2 252 s of kernel time for
1 352 s of wall time, against 862 s for the serial build), while two single-threaded kernels
share 2 cores well (chapters 07 and 09: 128 s of wall time at once, 184 s one after the other).

What is executed, and how, is what myst-nb's cache mode would do: each chapter that the
table of contents lists and that has no cached run of its current code cells is read with
myst-nb's reader (the same notebook, so the same cache key), executed in a fresh kernel
with the chapter's folder as working directory and ``_config.yml``'s timeout, and cached on
success. Chapters whose code has a cached run are skipped. Longest first, on ``--jobs``
workers: by the time a previous run took, else by budget (the Transformer chapters first) and
then later chapters first.

Each chapter's kernel records the checks it makes (:mod:`slrlib.verify`) in
``_build/checks/<chapter>.json`` (the environment variable ``SLR_CHECKS_FILE``); the file is
removed before the chapter runs, and a chapter without it is run again even when its code
is cached, so that the appendix "What this book verified" always lists every chapter.

A chapter that raises is not cached: the script prints its traceback and exits 1 (so
``make`` stops); every other chapter still runs. So is a chapter that wrote to stderr (a Python
warning, a library's message): a page must show its reader no warning, and a warning often marks a
computation gone wrong (chapter 14 divided by a zero standard error: issue 40). Prints a table of the chapters and their
execution times, each against its budget (``budgets.yml`` at the repository's root: 150 s for a
chapter executed alone, the Transformer chapters excepted; with several at a time, the budget
times the measured allowance ``shared_factor``); a chapter over its budget is flagged ``OVER`` (a
flag, not a failure: a slower machine flags more).

Each kernel is reached over Unix sockets in a folder of its own (:class:`IPCKernelManager`), not
over TCP ports on localhost: jupyter_client picks TCP ports by binding and releasing them, a race
between kernels started at once (jupyter_client issue 487; JAX serialises its kernel starts for it).
Sockets named by a fresh folder cannot collide.

A kernel that hangs is caught by :class:`StallWatchdog`. Seen on 2026-11-28 under ipykernel 7.4.0, in
chapters 02, 08 and 16 (in three builds out of three, 16 each time), over TCP and over Unix sockets
alike: the kernel's main thread idle in ``epoll_wait`` (waiting for a request; gdb), its CPU time
flat, while the executor waits for the cell's reply. It looks like the hangs reported against
ipykernel 7, whose shell messages pass through a thread of their own and inproc sockets
(ipython/ipykernel#1554, #1529: a request left unread on a socket whose wake-up was consumed, the
kernel idle at 0 % CPU); 7.4.0 carries #1529's fix, so which race it was is not shown.
requirements.lock pins ipykernel 6.31.0, whose shell runs on the main thread: of five builds
under it whose logs were read (all 19 chapters, two at a time, 2026-11-29: one local, four CI runs), four did not hang and
one did (04_bayes, the same stacks: idle in ``epoll_wait``, 0.0 s of CPU in 120 s), where under 7.4.0
three builds of three had. The hang is rarer, not gone, and its cause is not shown. The watchdog stays as the net: a chapter's
kernel that uses less than ``STALL_CPU_SECONDS`` of CPU over ``STALL_SECONDS`` while a cell runs is
taken as hung: its native stacks (gdb, when installed) go to ``_build/hangs/<chapter>.txt``, it is
killed, and the chapter is executed once more in a fresh kernel, said in the log and the table. A
second hang fails the chapter. Without it, a hang cost the cell timeout (1 800 s) and then failed the
build.

``--only NAME[,NAME]`` executes just those chapters (by file stem, ``03_oracle_risk``), cached
or not, and then lists the checks each recorded and any ``{glue:text}`` key its prose uses
that no cell glued: the quick loop for editing one chapter.

    python book/_ext/execute_chapters.py [--jobs N] [--only NAME[,NAME]]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import weakref
from collections import deque
from pathlib import Path

import yaml
from jupyter_client.manager import AsyncKernelManager

ROOT = Path(__file__).resolve().parents[2]
#: Where each chapter's kernel records its checks (read by book/_ext/check_ledger.py).
CHECKS_DIR = ROOT / "_build" / "checks"


#: The environment of every kernel when chapters run at once: XLA, and BLAS under NumPy and SciPy,
#: on one thread each (a variable already set is kept; XLA's flags are added to any already set).
SINGLE_THREAD_ENV = {
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def single_thread_environment(environ: dict[str, str]) -> dict[str, str]:
    """``environ`` with :data:`SINGLE_THREAD_ENV` applied (XLA's flags appended, other variables kept)."""
    out = dict(environ)
    for name, value in SINGLE_THREAD_ENV.items():
        if name == "XLA_FLAGS":
            out[name] = f"{environ[name]} {value}" if environ.get(name) else value
        else:
            out.setdefault(name, value)
    return out


#: JAX's persistent compilation cache of one run of this script, shared by its kernels (emptied when the
#: run starts; ``make test`` empties ``_build/jax_cache`` as a whole). Half of a chapter's time is
#: compiling: chapters 14 and 7 took 107 s and 63 s with it empty and 58 s and 29 s with it filled by
#: their own earlier run (2026-12-07, 2 cores). A program is looked up by its HLO, XLA's flags and the
#: versions, so a hit is the program the chapter would have compiled: the numbers do not change. Within
#: one build a chapter gains only the programs an earlier chapter compiled for the same shapes; the
#: browser tests' JupyterLab (tests/browser/labserver.py) then runs chapters 7 and 14 again with the
#: programs the build compiled for them, under the same flags.
COMPILATION_CACHE = ROOT / "_build" / "jax_cache" / "book"


def compilation_cache_environment(environ: dict[str, str]) -> dict[str, str]:
    """``environ`` with JAX's persistent compilation cache in :data:`COMPILATION_CACHE`, every program
    kept whatever its compile time (a cache the user set in ``JAX_COMPILATION_CACHE_DIR`` is kept)."""
    out = dict(environ)
    out.setdefault("JAX_COMPILATION_CACHE_DIR", str(COMPILATION_CACHE))
    out.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    return out


#: A kernel is taken as hung when, over ``STALL_SECONDS`` of a chapter's execution, its CPU time (with its
#: children's) grew by less than ``STALL_CPU_SECONDS``. Every chapter computes from its first cell to its
#: last (no cell waits on the network or a person), so a live kernel uses nearly a core, or half of one
#: beside another chapter on 2 cores; the threshold, 5 s in 60 s, is 8 % of one core. A hung kernel seen
#: on 2026-12-07 had used 3.8 s of CPU in 120 s (about 2 s a minute: its heartbeat and I/O threads).
#: (240 s until 2026-11-29, 120 s until 2026-12-08: each hang cost that much before the chapter ran again.)
STALL_SECONDS = 60.0
STALL_CPU_SECONDS = 5.0
#: Seconds between two looks at a kernel's CPU time.
STALL_POLL = 10.0
#: Executions of one chapter when its kernel hangs: the first, and one more.
ATTEMPTS = 2
#: Whether a hung kernel's native stacks are written (gdb attaches to it; without gdb, only its CPU time).
NATIVE_STACKS = True
#: Where the native stacks of a hung kernel are written.
HANGS_DIR = ROOT / "_build" / "hangs"
#: Each chapter's last execution (:func:`record_execution`), for the appendix "Execution status".
EXECUTION_DIR = ROOT / "_build" / "execution"


class StallWatchdog(threading.Thread):
    """Watch the processes below ``root`` (a chapter's kernel) and kill them when they stall.

    Every ``poll`` seconds it adds up the CPU time (user + system) of ``root``'s descendants. When that
    sum grew by less than ``min_cpu`` seconds over the last ``window`` seconds, with the same processes
    throughout, it writes their native stacks to ``dump_to`` (``gdb -batch``, unless ``native_stacks`` is false),
    kills them, sets :attr:`stalled` and stops. A new set of processes (a kernel started or restarted)
    starts the window again. :meth:`stop` ends the watch.
    """

    def __init__(self, root: int, window: float = STALL_SECONDS, min_cpu: float = STALL_CPU_SECONDS,
                 poll: float = 10.0, dump_to: Path | None = None, native_stacks: bool = True):
        super().__init__(daemon=True)
        if not (window > 0 and poll > 0 and min_cpu > 0):
            raise ValueError(f"window, poll and min_cpu must be > 0, got {window}, {poll}, {min_cpu}")
        self.root, self.window, self.min_cpu, self.poll, self.dump_to = root, window, min_cpu, poll, dump_to
        self.native_stacks = native_stacks
        self.stalled = False
        #: The least CPU time the processes used over any complete window (None before one completed):
        #: how far a live kernel stayed above ``min_cpu``.
        self.least_cpu: float | None = None
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()
        self.join()

    def _sample(self):
        import psutil

        try:
            procs = psutil.Process(self.root).children(recursive=True)
        except psutil.NoSuchProcess:
            return frozenset(), 0.0, []
        cpu, alive = 0.0, []
        for proc in procs:
            try:
                times = proc.cpu_times()
            except psutil.NoSuchProcess:
                continue
            cpu += times.user + times.system
            alive.append(proc)
        return frozenset(p.pid for p in alive), cpu, alive

    def run(self) -> None:
        history: deque[tuple[float, float]] = deque()
        pids: frozenset[int] = frozenset()
        while not self._stop_event.wait(self.poll):
            now = time.monotonic()
            current, cpu, procs = self._sample()
            if current != pids or not current:
                pids, history = current, deque()
            history.append((now, cpu))
            while len(history) > 1 and history[1][0] <= now - self.window:
                history.popleft()  # keep the newest sample at least `window` old
            start, start_cpu = history[0]
            if now - start >= self.window:
                used = cpu - start_cpu
                self.least_cpu = used if self.least_cpu is None else min(self.least_cpu, used)
            if now - start >= self.window and cpu - start_cpu < self.min_cpu:
                self.stalled = True
                self._dump(procs, now - start, cpu - start_cpu)
                for proc in procs:
                    try:
                        proc.kill()
                    except Exception:  # already gone
                        pass
                return

    def _dump(self, procs, seconds: float, cpu: float) -> None:
        if self.dump_to is None:
            return
        self.dump_to.parent.mkdir(parents=True, exist_ok=True)
        with open(self.dump_to, "w", encoding="utf-8") as out:
            out.write(f"{cpu:.1f} s of CPU in {seconds:.0f} s; processes {[p.pid for p in procs]}\n")
            for proc in procs:
                out.write(f"\n=== pid {proc.pid}: {' '.join(proc.cmdline()) if proc.is_running() else '?'}\n")
                out.flush()
                if not self.native_stacks:
                    continue
                try:
                    subprocess.run(["gdb", "-p", str(proc.pid), "-batch", "-ex", "thread apply all bt"],
                                   stdout=out, stderr=subprocess.STDOUT, timeout=120, check=False)
                except (OSError, subprocess.TimeoutExpired) as exc:
                    out.write(f"(no native stacks: {exc})\n")


class IPCKernelManager(AsyncKernelManager):
    """nbclient's kernel manager with the kernel's five sockets as Unix sockets (``transport="ipc"``) in a
    fresh temporary folder, removed with the manager: no TCP port to pick, so none to share."""

    def __init__(self, **kwargs):
        folder = tempfile.mkdtemp(prefix="slr-kernel-")
        super().__init__(transport="ipc", ip=os.path.join(folder, "kernel"), **kwargs)
        self._folder = folder
        weakref.finalize(self, shutil.rmtree, folder, True)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        """jupyter_client's cleanup (the connection file, the socket files), then the folder, once the
        kernel is shut down for good: a pool's worker that exits may never collect the manager (the
        finalizer alone left 5 empty folders in /tmp from one build)."""
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            shutil.rmtree(self._folder, ignore_errors=True)

    cleanup_resources = _async_cleanup_resources


def chapter_budgets() -> dict[str, float]:
    """Seconds each chapter may take alone (by file stem), from ``budgets.yml``; missing stems get the
    default. The key ``"shared_factor"`` holds the allowance for chapters executed several at a time."""
    spec = yaml.safe_load((ROOT / "budgets.yml").read_text(encoding="utf-8"))["chapters"]
    budgets = {stem: float(entry["budget"]) for stem, entry in (spec.get("exceptions") or {}).items()}
    budgets["default"] = float(spec["default"])
    budgets["shared_factor"] = float(spec["shared_factor"])
    return budgets


def execution_file(stem: str) -> Path:
    """Where a chapter's last execution is recorded: ``_build/execution/<stem>.json``."""
    return EXECUTION_DIR / f"{stem}.json"


def record_execution(stem: str, seconds: float, jobs: int) -> None:
    """Record a chapter's execution for the appendix "Execution status" (book/_ext/check_ledger.py): its
    seconds (the time myst-nb also reads from the cache), how many chapters ran at once, and when it ended."""
    path = execution_file(stem)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"seconds": seconds, "jobs": jobs,
                                "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}) + "\n",
                    encoding="utf-8")


def budget_table(rows: list[tuple[str, float]], budgets: dict[str, float],
                 shared: bool = False) -> tuple[str, list[str]]:
    """A plain-text table of chapter times against their budgets, and the chapters over budget.

    ``shared``: the chapters were executed several at a time, so that each waited for the cores;
    a chapter is then over budget when its time exceeds its budget times ``budgets["shared_factor"]``.
    """
    factor = budgets["shared_factor"] if shared else 1.0
    over = []
    lines = [f"  {'chapter':<22} {'seconds':>8} {'budget':>7}", f"  {'-' * 22} {'-' * 8} {'-' * 7}"]
    if shared:
        lines.insert(0, f"  executed several at a time: flagged over {factor:g} x the budget (budgets.yml)")
    for name, seconds in rows:
        budget = budgets.get(name, budgets["default"])
        flag = "  OVER" if seconds > budget * factor else ""
        if flag:
            over.append(name)
        lines.append(f"  {name:<22} {seconds:8.1f} {budget:7.0f}{flag}")
    return "\n".join(lines), over


def checks_file(chapter: Path) -> Path:
    """The ledger file of one chapter: ``_build/checks/<stem>.json``."""
    return CHECKS_DIR / f"{Path(chapter).stem}.json"


def _toc_files(toc: dict) -> list[str]:
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for chapter in part.get("chapters", []):
            files.append(chapter["file"])
            files.extend(section["file"] for section in chapter.get("sections", []))
    return files


def _chapters() -> list[Path]:
    from myst_nb.core.read import is_myst_markdown_notebook

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    paths = [ROOT / (f + ".md") for f in _toc_files(toc)]
    return [p for p in paths if p.is_file() and is_myst_markdown_notebook(p.read_text(encoding="utf-8"))]


def stderr_outputs(notebook) -> list[str]:
    """What the notebook's cells wrote to stderr (Python's warnings among it): "cell N: text", one per output."""
    found = []
    for number, cell in enumerate((c for c in notebook.cells if c.get("cell_type") == "code"), start=1):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                text = output.get("text", "")
                text = "".join(text) if isinstance(text, list) else text
                found.append(f"code cell {number}: {text.strip()[:500]}")
    return found


def _execute(job: tuple[str, str, int]) -> tuple[str, float | None, str | None, float | None]:
    """Execute one chapter and cache it: (path, seconds, None or a note on a hang, least CPU seconds over
    a watchdog window of its last execution), or (path, None, traceback, ...) when it failed."""
    path, cache_path, timeout = job
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.executors.utils import single_nb_execution
    from myst_nb.core.read import myst_nb_reader_plugin

    cache = get_cache(cache_path)
    ledger = checks_file(Path(path))
    os.environ["SLR_CHECKS_FILE"] = str(ledger)  # inherited by the kernel
    hangs = []
    for attempt in range(1, ATTEMPTS + 1):
        notebook = myst_nb_reader_plugin(path)
        ledger.unlink(missing_ok=True)
        dump = HANGS_DIR / f"{Path(path).stem}-{attempt}.txt"
        watchdog = StallWatchdog(os.getpid(), window=STALL_SECONDS, poll=STALL_POLL, dump_to=dump,
                                 native_stacks=NATIVE_STACKS)
        watchdog.start()
        try:
            result = single_nb_execution(notebook, cwd=str(Path(path).parent), timeout=timeout,
                                         allow_errors=False, meta_override=True,
                                         kernel_manager_class=IPCKernelManager)
            failure = result.exc_string if result.err is not None else None
        except Exception:  # the kernel died (killed by the watchdog, or crashed): nbclient's DeadKernelError
            failure = traceback.format_exc()
        finally:
            watchdog.stop()
        if not watchdog.stalled:
            break
        hangs.append(str(dump.relative_to(ROOT)) if dump.is_relative_to(ROOT) else str(dump))
        print(f"  {Path(path).stem}: kernel HUNG (under {STALL_CPU_SECONDS:g} s of CPU in {STALL_SECONDS:g} s); "
              f"stacks in {hangs[-1]}; killed" + ("; executing again" if attempt < ATTEMPTS else ""), flush=True)
    if failure is None:
        written = stderr_outputs(notebook)
        if written:
            failure = ("the chapter wrote to stderr (a warning reaches the page; fix its cause):\n  "
                       + "\n  ".join(written))
    if failure is not None:
        return (path, None, ("(hung: stacks in " + ", ".join(hangs) + ")\n" if hangs else "") + failure,
                watchdog.least_cpu)
    if not ledger.exists():  # a page that makes no check (the ledger page itself tells chapters apart)
        ledger.parent.mkdir(parents=True, exist_ok=True)
        ledger.write_text("[]\n", encoding="utf-8")
    cache.cache_notebook_bundle(CacheBundleIn(notebook, path, data={"execution_seconds": result.time}),
                                check_validity=False, overwrite=True)
    return (path, result.time, ("" if not hangs else f"executed again after a hang (stacks in {', '.join(hangs)})"),
            watchdog.least_cpu)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1, help="chapters executed at once (default 1)")
    parser.add_argument("--only", default="", help="comma-separated chapter stems to execute, cached or not")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be >= 1, got {args.jobs}")

    config = yaml.safe_load((ROOT / "_config.yml").read_text())["execute"]
    if config.get("execute_notebooks") != "cache":
        print("execute_chapters: execute_notebooks is not 'cache' in _config.yml; nothing to do")
        return 0
    cache_path = str(ROOT / config["cache"])
    timeout = int(config.get("timeout", 600))

    from jupyter_cache import get_cache

    cache = get_cache(cache_path)
    chapters = _chapters()
    only = [name for name in args.only.split(",") if name]
    unknown = sorted(set(only) - {p.stem for p in chapters})
    if unknown:
        parser.error(f"--only: no chapter named {', '.join(unknown)}; chapters: {', '.join(p.stem for p in chapters)}")
    todo = [p for p in chapters if p.stem in only] if only else [p for p in chapters if _needs_run(cache, p)]
    if not todo:
        print("execute_chapters: every chapter's code has a cached run")
        return 0
    # The time a previous run of each chapter took (older code), to start the longest first.
    previous: dict[str, float] = {}
    for record in cache.list_cache_records():
        seconds = float(record.data.get("execution_seconds") or 0.0)
        previous[record.uri] = max(previous.get(record.uri, 0.0), seconds)
    budgets = chapter_budgets()
    order = sorted(todo, key=lambda p: (-previous.get(str(p), 0.0), -budgets.get(p.stem, budgets["default"]),
                                        -chapters.index(p)))
    workers = min(args.jobs, len(order))
    if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
        shutil.rmtree(COMPILATION_CACHE, ignore_errors=True)
    os.environ.update(compilation_cache_environment(dict(os.environ)))  # inherited by every kernel
    if workers > 1:
        os.environ.update(single_thread_environment(dict(os.environ)))  # inherited by every kernel
    print(f"execute_chapters: {len(order)} chapter(s) on {workers} worker(s)"
          + (" (XLA on one thread each)" if workers > 1 else "") + ": "
          + ", ".join(p.stem for p in order), flush=True)
    start = time.perf_counter()
    jobs = [(str(p), cache_path, timeout) for p in order]
    ctx = multiprocessing.get_context("spawn")
    failed = []
    retried = []
    rows = []
    least: list[tuple[float, str]] = []  # each chapter's least kernel CPU over a watchdog window
    with ctx.Pool(workers) as pool:
        for path, seconds, traceback, least_cpu in pool.imap_unordered(_execute, jobs):
            name = Path(path).stem
            if least_cpu is not None:
                least.append((least_cpu, name))
            if seconds is not None:
                print(f"  {name}: executed in {seconds:.1f} s" + (f"; {traceback}" if traceback else ""), flush=True)
                rows.append((name, seconds))
                record_execution(name, seconds, workers)
                if traceback:
                    retried.append(name)
            else:
                print(f"  {name}: FAILED\n{traceback}", flush=True)
                failed.append(name)
    wall = time.perf_counter() - start
    total = sum(s for _, s in rows)
    rows.sort(key=lambda row: [p.stem for p in chapters].index(row[0]))
    table, over = budget_table(rows, budgets, shared=workers > 1)
    print(table)
    if over:
        print(f"execute_chapters: OVER BUDGET (budgets.yml): {', '.join(over)}")
    print(f"execute_chapters: {len(rows)} executed in {wall:.0f} s wall ({total:.0f} s of kernel time)"
          + (f"; failed: {', '.join(failed)}" if failed else "")
          + (f"; executed again after a hang: {', '.join(retried)}" if retried else ""))
    if least:
        cpu, name = min(least)
        print(f"execute_chapters: least kernel CPU over any {STALL_SECONDS:g} s: {cpu:.1f} s ({name}); "
              f"a kernel under {STALL_CPU_SECONDS:g} s is taken as hung")
    if only:
        for p in order:
            _report(p)
    return 1 if failed else 0


def _report(chapter: Path) -> None:
    """Print the checks one chapter recorded and the glue keys its prose uses but no cell glued."""
    ledger = checks_file(chapter)
    records = json.loads(ledger.read_text(encoding="utf-8")) if ledger.exists() else []
    print(f"{chapter.stem}: {len(records)} checks recorded"
          + ("" if all(r["passed"] for r in records) else ", SOME FAILED"))
    for r in records:
        print(f"  {'ok  ' if r['passed'] else 'FAIL'} {r['claim']}")
    from jupyter_cache import get_cache
    from myst_nb.core.read import myst_nb_reader_plugin

    config = yaml.safe_load((ROOT / "_config.yml").read_text())["execute"]
    try:
        record = get_cache(str(ROOT / config["cache"])).match_cache_notebook(myst_nb_reader_plugin(str(chapter)))
    except KeyError:
        return
    bundle = get_cache(str(ROOT / config["cache"])).get_cache_bundle(record.pk)
    glued = set()
    for cell in bundle.nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                glued.add(name)
    used = set(re.findall(r"\{glue(?::\w+)?\}`([\w.-]+)(?::[^`]*)?`", chapter.read_text(encoding="utf-8")))
    missing = sorted(used - glued)
    print(f"  glue: {len(used)} keys used in the prose, {len(glued)} glued"
          + (f"; NOT GLUED: {', '.join(missing)}" if missing else ""))


def _needs_run(cache, path: Path) -> bool:
    from myst_nb.core.read import myst_nb_reader_plugin

    if not checks_file(path).exists():
        return True
    try:
        cache.match_cache_notebook(myst_nb_reader_plugin(str(path)))
        return False
    except KeyError:
        return True


if __name__ == "__main__":
    sys.exit(main())
