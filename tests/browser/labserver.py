"""JupyterLab serving chapters 7 and 14, started in a thread at the start of the browser tests.

Writing the notebooks, trusting them and starting the server take about 6 s, Chromium's loading
JupyterLab and the kernels' start about 15 s more. None of it needs the test process: the
thread here does the first part while the built book's first pages are checked, and
``test_jupyterlab.py`` then opens the pages without waiting for them (an init script starts "Run
all" once a page's kernel is idle). The chapters run while the other tests run, each in a page
and a kernel of its own; the last tests read them.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from sitepaths import ROOT

#: The chapters run in JupyterLab: chapter 7 (the paper's boxes, equations, a slider, 71 checks) and
#: chapter 14 (references to boxes further down, the book's own boxes among the paper's).
CHAPTERS = [ROOT / "book" / "07_theorem5.md", ROOT / "book" / "14_softmax.md"]
JUPYTER = Path(sys.executable).parent / "jupyter"
#: How long the server may take to answer.
START_TIMEOUT_S = 60


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LabServer:
    """The server's URL and the notebooks (chapter stem: path) once :meth:`wait` returns; ``problem`` if it
    failed."""

    url: str = ""
    notebooks: dict[str, Path] = field(default_factory=dict)
    problem: str | None = None
    _thread: threading.Thread | None = None
    _process: subprocess.Popen | None = None
    _tmp: tempfile.TemporaryDirectory | None = None
    _log: object = None
    _stopped: threading.Event = field(default_factory=threading.Event)

    def start(self) -> "LabServer":
        self._thread = threading.Thread(target=self._run, name="jupyterlab", daemon=True)
        self._thread.start()
        return self

    def wait(self) -> "LabServer":
        """Block until the server answers (or failed: then ``problem`` says why)."""
        if self._thread is not None:
            self._thread.join()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self.wait()
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._process.kill()
        if self._log is not None:
            self._log.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def log_tail(self) -> str:
        return (Path(self._tmp.name) / "lab.log").read_text()[-2000:] if self._tmp else ""

    def _run(self) -> None:
        try:
            self._serve()
        except subprocess.CalledProcessError as err:
            self.problem = f"{' '.join(map(str, err.cmd))} failed: {err.stderr[-2000:]}"
        except Exception as err:  # reported by the test that needs the server
            self.problem = f"{type(err).__name__}: {err}"

    def _serve(self) -> None:
        if not JUPYTER.exists():
            self.problem = f"{JUPYTER} is missing (jupyterlab is pinned in requirements.lock)"
            return
        sys.path.insert(0, str(ROOT / "book" / "_ext"))
        import lab as book_lab
        from execute_chapters import COMPILATION_CACHE, compilation_cache_environment, single_thread_environment

        self._tmp = tempfile.TemporaryDirectory(prefix="slr-lab-")
        tmp = Path(self._tmp.name)
        env = book_lab.lab_env(JUPYTER_DATA_DIR=str(tmp / "data"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
                               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
                               JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"), IPYTHONDIR=str(tmp / "ipython"))
        env.pop("SLR_CHECKS_FILE", None)
        # The kernel's XLA on one thread, as in the book's build: the chapter runs beside Chromium,
        # which checks the built book meanwhile, and leaves it a core.
        env = single_thread_environment(env)
        # The programs the book's build compiled for these chapters, under the same flags, are loaded,
        # not compiled again (execute_chapters.py, COMPILATION_CACHE): what the page shows is the same.
        if COMPILATION_CACHE.is_dir():
            env = compilation_cache_environment(env)
        # Every cell in the page at once (no windowing), so that all the prose is rendered.
        settings = tmp / "settings" / "@jupyterlab" / "notebook-extension"
        settings.mkdir(parents=True)
        (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
        # The notebooks written and trusted, and the extensions linked, as `make lab` does (lab.py),
        # in a process of its own (this thread would hold the test process's interpreter meanwhile).
        notebooks = tmp / "notebooks"
        subprocess.run([sys.executable, str(ROOT / "book" / "_ext" / "lab.py"), "--no-start", "--out", str(notebooks),
                        "--chapters", ",".join(c.stem for c in CHAPTERS)], env=env, check=True, capture_output=True,
                       text=True)
        written = {c.stem: notebooks / f"{c.stem}.ipynb" for c in CHAPTERS}
        extensions = notebooks / ".labextensions"
        port = _free_port()
        self._log = open(tmp / "lab.log", "w")
        command = book_lab.lab_command(tmp / "notebooks", extensions, port, [
            "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1", "--ServerApp.token=",
            "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True", "--LabApp.expose_app_in_browser=True"])
        self._process = subprocess.Popen(command, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and not self._stopped.is_set():
            try:
                urllib.request.urlopen(url + "/api/status", timeout=2)
                break
            except OSError:
                if self._process.poll() is not None:
                    self.problem = "JupyterLab exited: " + self.log_tail()
                    return
                time.sleep(0.2)
        else:
            self.problem = f"JupyterLab did not answer within {START_TIMEOUT_S} s: " + self.log_tail()
            return
        self.url, self.notebooks = url, written
