"""The publishing workflow (.github/workflows/publish.yml, issue 41), held to what it promises, here
where GitHub Actions cannot run it: every action pinned by commit with its version beside it, write
permissions only in the job that deploys to Pages and only on main, the gate (`make test`, then
`make pdf`) in the job that builds the site, and actionlint and zizmor passing, run as `make check`
runs them (both offline).

Each check is a function that returns its findings; the tests run it on the workflow (no finding) and
on a copy broken on purpose (the finding it exists for), so that none of them can pass vacuously.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
WORKFLOW = WORKFLOWS / "publish.yml"
BIN = ROOT / ".venv" / "bin"
MAIN = "refs/heads/main"
#: The permissions of the deploy job, exactly: what actions/deploy-pages needs.
DEPLOY_PERMISSIONS = {"pages": "write", "id-token": "write"}
#: A `uses:` line: owner/repo[/path]@<40 hex> # v<version>.
PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s+(?P<action>[\w.-]+/[\w./-]+)@(?P<sha>[0-9a-f]{40})\s+#\s+(?P<version>v\d+(?:\.\d+)*)\s*$")
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:")


def load(text: str) -> dict:
    workflow = yaml.safe_load(text)
    # YAML 1.1 reads the key `on` as True.
    if True in workflow:
        workflow["on"] = workflow.pop(True)
    return workflow


def uses_values(workflow: dict) -> list[str]:
    """Every `uses:` of the workflow: each step's and each job's (a reusable workflow)."""
    out = []
    for job in workflow["jobs"].values():
        if "uses" in job:
            out.append(job["uses"])
        out += [step["uses"] for step in job.get("steps", []) if "uses" in step]
    return out


def unpinned(text: str) -> list[str]:
    """The `uses:` that are not pinned by a full commit followed by `# vX.Y.Z`, and the commits that
    carry two different versions in their comments."""
    problems, versions = [], {}
    lines = [line for line in text.splitlines() if USES_LINE.match(line)]
    for line in lines:
        match = PINNED.match(line)
        if not match:
            problems.append(f"not pinned by commit with its version: {line.strip()}")
            continue
        key = (match["action"], match["sha"])
        if versions.setdefault(key, match["version"]) != match["version"]:
            problems.append(f"{key} named both {versions[key]} and {match['version']}")
    parsed = uses_values(load(text))
    if len(parsed) != len(lines):  # a `uses:` written so that the line pattern misses it
        problems.append(f"{len(parsed)} uses in the workflow, {len(lines)} `uses:` lines")
    return problems


def is_main_only(condition: str | None) -> bool:
    """Whether a job's `if:` lets it run only for main, and never for a pull request."""
    text = re.sub(r"\s+", " ", str(condition or ""))
    return (f"github.ref == '{MAIN}'" in text and "github.event_name != 'pull_request'" in text
            and "||" not in text)


def writes(permissions) -> set[str]:
    """The scopes a `permissions:` value grants write to (write-all: all of them)."""
    if permissions in ("write-all",):
        return {"*"}
    if isinstance(permissions, dict):
        return {scope for scope, level in permissions.items() if level == "write"}
    return set()


def permission_problems(text: str) -> list[str]:
    """Top-level permissions empty (or read-only); one job deploys to Pages, on main only, with exactly
    pages and id-token write, in the github-pages environment; no other job writes anything; the
    deploying job restores no cache (a poisoned cache would reach the published site) and checks
    nothing out."""
    workflow = load(text)
    problems = []
    top = workflow.get("permissions", "absent")
    if not (top == {} or (isinstance(top, dict) and set(top.values()) <= {"read", "none"})):
        problems.append(f"top-level permissions must be {{}} or read-only, not {top}")
    jobs = workflow["jobs"]
    deployers = [name for name, job in jobs.items()
                 if any(str(step.get("uses", "")).startswith("actions/deploy-pages@") for step in job.get("steps", []))]
    if len(deployers) != 1:
        return problems + [f"one job must deploy to Pages, found {deployers}"]
    deploy = jobs[deployers[0]]
    if deploy.get("permissions") != DEPLOY_PERMISSIONS:
        problems.append(f"the deploy job's permissions must be {DEPLOY_PERMISSIONS}, not {deploy.get('permissions')}")
    if not is_main_only(deploy.get("if")):
        problems.append(f"the deploy job must run on main only, not if: {deploy.get('if')!r}")
    environment = deploy.get("environment")
    if (environment.get("name") if isinstance(environment, dict) else environment) != "github-pages":
        problems.append(f"the deploy job must use the github-pages environment, not {environment}")
    for step in deploy.get("steps", []):
        action = str(step.get("uses", "")).split("@")[0]
        if action.startswith("actions/cache") or action == "actions/checkout":
            problems.append(f"the deploy job must not use {action}")
    for name, job in jobs.items():
        if name != deployers[0] and writes(job.get("permissions")):
            problems.append(f"job {name} writes {sorted(writes(job.get('permissions')))}")
    if workflow["on"].get("push", {}).get("branches") != ["main"]:
        problems.append(f"push must trigger on main alone, not {workflow['on'].get('push')}")
    return problems


def gate_problems(text: str) -> list[str]:
    """The job that uploads the site runs `make test` then `make pdf` before it, puts the PDF into
    the site, uploads _build/html only on main, checks out without keeping the token, and has a
    timeout."""
    workflow = load(text)
    builders = [(name, job) for name, job in workflow["jobs"].items()
                if any(str(step.get("uses", "")).startswith("actions/upload-pages-artifact@") for step in job.get("steps", []))]
    if len(builders) != 1:
        return [f"one job must upload the site, found {[name for name, _ in builders]}"]
    name, job = builders[0]
    steps = job["steps"]
    runs = [step.get("run", "").strip() for step in steps]
    problems = []
    order = [runs.index(command) if command in runs else None for command in ("make test", "make pdf")]
    upload = next(i for i, step in enumerate(steps) if str(step.get("uses", "")).startswith("actions/upload-pages-artifact@"))
    if None in order or not order[0] < order[1] < upload:
        problems.append(f"job {name} must run `make test`, then `make pdf`, before the upload: {runs}")
    if not any("_build/pdf/book.pdf" in run and "_build/html" in run for run in runs):
        problems.append(f"job {name} must copy _build/pdf/book.pdf into _build/html")
    if steps[upload].get("with", {}).get("path") != "_build/html" or not is_main_only(steps[upload].get("if")):
        problems.append(f"job {name} must upload _build/html, on main only: {steps[upload]}")
    for step in steps:
        if str(step.get("uses", "")).startswith("actions/checkout@") and step.get("with", {}).get("persist-credentials") is not False:
            problems.append("actions/checkout must run with persist-credentials: false")
    if not isinstance(job.get("timeout-minutes"), int):
        problems.append(f"job {name} needs a timeout-minutes")
    return problems


def cache_problems(text: str) -> list[str]:
    """In a job that builds or deploys the site, a cache is only restored by a pull request's run
    (actions/cache/restore, if: the event is a pull request), and only saved (actions/cache/save) by
    a run on main: the published site is built from the lock files alone. The caches hold .venv and
    .cache/npm, nothing that `make test` empties (the jupyter-cache, JAX's cache)."""
    problems = []
    for name, job in load(text)["jobs"].items():
        steps = job.get("steps", [])
        publishes = any(str(step.get("uses", "")).startswith(("actions/upload-pages-artifact@", "actions/deploy-pages@"))
                        for step in steps)
        for step in steps:
            action = str(step.get("uses", "")).split("@")[0]
            if not action.startswith("actions/cache"):
                continue
            condition = re.sub(r"\s+", " ", str(step.get("if", "")))
            if publishes and action == "actions/cache/restore" and condition != "github.event_name == 'pull_request'":
                problems.append(f"job {name} restores {step['with']['path']} beyond pull requests: if: {condition!r}")
            elif publishes and action == "actions/cache/save" and not is_main_only(condition):
                problems.append(f"job {name} saves {step['with']['path']} beyond main: if: {condition!r}")
            elif publishes and action not in ("actions/cache/restore", "actions/cache/save"):
                problems.append(f"job {name} uses {action}, which restores on every run")
            if step.get("with", {}).get("path") not in (".venv", ".cache/npm"):
                problems.append(f"job {name} caches {step.get('with', {}).get('path')}")
    return problems


@pytest.fixture(scope="module")
def text() -> str:
    return WORKFLOW.read_text(encoding="utf-8")


def test_every_action_is_pinned_by_commit_with_its_version(text):
    assert uses_values(load(text)), "the workflow uses no action"
    assert unpinned(text) == []


def test_an_unpinned_or_unlabelled_action_is_found(text):
    pinned = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1"
    assert pinned in text
    assert unpinned(text.replace(pinned, "actions/checkout@v4"))
    assert unpinned(text.replace(pinned, pinned.split(" #")[0]))
    assert unpinned(text.replace(pinned, pinned.replace("3d3c42e5", "3d3c42e")))


def test_only_the_deploy_job_writes_and_only_on_main(text):
    assert permission_problems(text) == []


#: actions/cache at the commit the workflow pins, for the copies broken on purpose below.
CACHE_AT = "27d5ce7f107fe9357f9df03efb73ab90386fccae # v5.0.5"
A_CACHE_STEP = f"      - uses: actions/cache@{CACHE_AT}\n        with:\n          path: .venv\n          key: venv\n"


@pytest.mark.parametrize("old, new", [
    ("permissions: {}", "permissions: write-all"),
    ("      contents: read # to check the repository out", "      contents: write"),
    ("      id-token: write # to prove to Pages where the deployment comes from (OIDC)\n", ""),
    ("    if: github.event_name != 'pull_request' && github.ref == 'refs/heads/main'\n    runs-on", "    runs-on"),
    ("    branches: [main]\n  pull_request", "    branches: [main, dev]\n  pull_request"),
    ("      name: github-pages", "      name: preview"),
    ("      - id: deployment\n", A_CACHE_STEP + "      - id: deployment\n"),
])
def test_a_broader_permission_is_found(text, old, new):
    assert text.count(old) == 1, old
    assert permission_problems(text.replace(old, new))


def test_the_site_is_built_by_the_gate_then_the_pdf(text):
    assert gate_problems(text) == []


@pytest.mark.parametrize("old, new", [
    ("run: make test", "run: make book"),
    ("run: make pdf", "run: echo no pdf"),
    ("run: cp _build/pdf/book.pdf _build/html/book.pdf", "run: ls _build/pdf"),
    ("          persist-credentials: false", "          persist-credentials: true"),
    ("    timeout-minutes: 90\n", ""),
    ("          path: _build/html", "          path: _build"),
])
def test_a_gap_in_the_gate_is_found(text, old, new):
    assert text.count(old) == 1, old
    assert gate_problems(text.replace(old, new))


def test_caches_reach_pull_requests_only(text):
    assert "actions/cache/restore@" in text and "actions/cache/save@" in text
    assert cache_problems(text) == []


@pytest.mark.parametrize("old, new", [
    # the venv restored on main too
    ((f"    if: github.event_name == 'pull_request'\n        uses: actions/cache/restore@{CACHE_AT}\n"
      "        with:\n          path: .venv"),
     f"    uses: actions/cache/restore@{CACHE_AT}\n        with:\n          path: .venv"),
    # npm's cache restored (and saved) by every run
    (f"uses: actions/cache/restore@{CACHE_AT}\n        with:\n          path: .cache/npm",
     f"uses: actions/cache@{CACHE_AT}\n        with:\n          path: .cache/npm"),
    # the venv saved by pull requests too
    ((f"if: github.event_name != 'pull_request' && github.ref == 'refs/heads/main'\n        uses: actions/cache/save@"
      f"{CACHE_AT}\n        with:\n          path: .venv"),
     f"uses: actions/cache/save@{CACHE_AT}\n        with:\n          path: .venv"),
    # the jupyter-cache, which make test empties
    ("          path: .cache/npm\n          key: ${{ steps.keys.outputs.npm }}\n\n      # .venv",
     "          path: _build/.jupyter_cache\n          key: ${{ steps.keys.outputs.npm }}\n\n      # .venv"),
])
def test_a_cache_that_reaches_the_site_is_found(text, old, new):
    assert text.count(old) == 1, old
    assert cache_problems(text.replace(old, new))


def linters() -> tuple[Path, Path]:
    actionlint, zizmor = BIN / "actionlint", BIN / "zizmor"
    missing = [path.name for path in (actionlint, zizmor) if not path.exists()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not in .venv (pinned in requirements.lock: run `make install`)")
    return actionlint, zizmor


def lint(folder: Path) -> dict[str, subprocess.CompletedProcess]:
    """actionlint and zizmor on the workflows in ``folder``, with `make check`'s flags (offline)."""
    actionlint, zizmor = linters()
    files = sorted(str(path) for path in folder.glob("*.yml"))
    return {
        "actionlint": subprocess.run([str(actionlint), "-shellcheck", str(BIN / "shellcheck"), "-pyflakes=", "-oneline",
                                      *files], capture_output=True, text=True, timeout=120, check=False),
        "zizmor": subprocess.run([str(zizmor), "--offline", "--no-progress", "--quiet", "--persona", "pedantic",
                                  "--format", "plain", "--color", "never", str(folder)],
                                 capture_output=True, text=True, timeout=120, check=False),
    }


def test_actionlint_and_zizmor_pass():
    for name, result in lint(WORKFLOWS).items():
        assert result.returncode == 0, f"{name}:\n{result.stdout}{result.stderr}"


def test_actionlint_and_zizmor_find_a_broken_workflow(text, tmp_path):
    """An action pinned by tag (zizmor's unpinned-uses), a pull request's title in a script
    (template injection: both), an unquoted variable (actionlint's shellcheck), and a checkout that
    keeps its token (zizmor's artipacked)."""
    linters()
    broken = (text.replace("actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1", "actions/checkout@v4")
              .replace("run: make pdf", 'run: echo "${{ github.event.pull_request.title }}"; make pdf')
              .replace("run: cp _build/pdf/book.pdf _build/html/book.pdf", "run: cp $PDF _build/html/book.pdf")
              .replace("        with:\n          persist-credentials: false\n", ""))
    assert broken.count("actions/checkout@v4") == 1 and "$PDF" in broken and "persist-credentials" not in broken
    folder = tmp_path / ".github" / "workflows"  # where zizmor looks for workflows in a folder
    folder.mkdir(parents=True)
    (folder / "publish.yml").write_text(broken, encoding="utf-8")
    result = lint(folder)
    assert result["actionlint"].returncode != 0
    assert "github.event.pull_request.title" in result["actionlint"].stdout
    assert "SC2086" in result["actionlint"].stdout
    assert result["zizmor"].returncode != 0
    for audit in ("unpinned-uses", "template-injection", "artipacked"):
        assert audit in result["zizmor"].stdout, result["zizmor"].stdout


def test_make_check_runs_the_linters_first():
    """`make check` lints the workflows (offline, failing on a finding) before its tests."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    check = re.search(r"^check:.*?(?=^\S)", makefile, re.MULTILINE | re.DOTALL)
    assert check, "no check target"
    recipe = check[0]
    lint_at = [recipe.find("$(VENV)/bin/actionlint "), recipe.find("$(VENV)/bin/zizmor ")]
    assert -1 not in lint_at and max(lint_at) < recipe.find("-m pytest"), recipe
    lines = [line for line in recipe.splitlines() if "/bin/actionlint " in line or "/bin/zizmor " in line]
    assert all(".github/workflows" in line for line in lines) and "--offline" in lines[1], lines
    # A finding fails the target: neither exit status is swallowed.
    assert not [line for line in lines if "||" in line or "--no-exit-codes" in line], lines
