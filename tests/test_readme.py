"""The README, held to what it shows: its examples run as printed and say what they compute, every
command it shows is run by a test or a CI stage (a command added without one fails here), its
picture is what its figure command writes, its chapter map is the book's, and what it says about
publication follows ``repository.url`` in ``_config.yml``."""

from __future__ import annotations

import csv
import json
import re
import shlex
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
MARKER = "<!-- first-hour:"
#: The README stays a front page for newcomers (issue 41); the maintainers' material is in CONTRIBUTING.md.
MAX_LINES = 150

#: Every command the README shows (each line of a ``bash`` block, and each ``make ...`` in its
#: text), and what runs it: ``("make:TARGET", text)``, that target's recipe in the Makefile contains
#: text; ``(path, text)``, that file contains text; ``("test", name)``, this module's test ``name``
#: runs the command itself. test_every_command_the_readme_shows_is_exercised checks both that these
#: keys are exactly the README's commands and that each runner holds.
EXERCISED: dict[str, list[tuple[str, str]]] = {
    # make test's stage "book" is book-fresh: the same build after emptying the cache
    # (test_make_book_is_the_build_make_test_runs).
    "make book": [("make:test", "book-fresh"), ("test", "test_make_book_is_the_build_make_test_runs")],
    # make test's stage "pdf" runs the script make pdf runs, and tests/browser/test_pdf.py (stage
    # browser) reads the PDF back; the publishing workflow (GitHub Actions: it cannot run here,
    # make check lints it and tests/test_workflow.py checks it) runs make pdf itself.
    "make pdf": [("make:pdf", "book/_ext/book_pdf.py --out $(PDF)"), ("make:test", "book/_ext/book_pdf.py --out $(PDF)"),
                 ("tests/browser/test_pdf.py", '"book.pdf"'), (".github/workflows/publish.yml", "make pdf")],
    # tests/browser/test_jupyterlab.py (make test, stage browser) runs chapters 7 and 14 in the JupyterLab that
    # book/_ext/lab.py sets up, the script make lab runs.
    "make lab": [("make:lab", "book/_ext/lab.py"), ("tests/browser/labserver.py", "import lab"),
                 ("make:test", "tests/browser")],
    "make test": [(".ci/run", "make test"), (".github/workflows/publish.yml", "make test")],
    # The wheel into a fresh venv (tests/install, make test's stage "package"), and here, offline.
    "pip install .": [("make:test", "tests/install"),
                      ("test", "test_pip_commands_resolve_offline_to_the_packages_their_comments_name")],
    **{f'pip install ".[{extra}]"': [("test", "test_pip_commands_resolve_offline_to_the_packages_their_comments_name")]
       for extra in ("plots", "widgets", "optim", "case-studies", "all")},
    ".venv/bin/python -m slrlib figure --list": [("test", "test_figure_commands_run_as_printed")],
    ".venv/bin/python -m slrlib figure fig4b --out figures/": [("test", "test_figure_commands_run_as_printed"),
                                                                ("test", "test_the_picture_is_what_the_figure_command_writes")],
}


def readme() -> str:
    return README.read_text(encoding="utf-8")


def first_hour_code(marker: str = MARKER) -> str:
    """The Python block that follows ``marker`` in the README (the first-hour one by default)."""
    text = readme()
    assert marker in text, f"the README has no {marker!r} block"
    block = re.search(r"```python\n(.*?)```", text[text.index(marker):], re.S)
    assert block is not None, f"no Python block after {marker!r}"
    return block.group(1)


def shell_commands(text: str) -> list[str]:
    """Each command of the ``bash`` blocks of ``text`` (comments and blank lines dropped), then each
    inline code span that is a command (``make ...``, ``pip ...``, ``python ...``), in order, once."""
    found: list[str] = []
    for block in re.findall(r"```(?:bash|sh|shell|console)\n(.*?)```", text, re.S):
        for line in block.splitlines():
            command = " ".join(line.split("  #")[0].split())
            if command and not command.startswith("#"):
                found.append(command)
    for span in re.findall(r"(?<!`)`([^`\n]+)`(?!`)", text):
        if re.match(r"(make|pip|python3?|\.venv/bin/python)\s", span):
            found.append(" ".join(span.split()))
    return list(dict.fromkeys(found))


def makefile_rules() -> dict[str, tuple[str, str]]:
    """Each rule of the Makefile: target -> (prerequisites, recipe text)."""
    rules: dict[str, tuple[str, str]] = {}
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        rule = re.match(r"^([A-Za-z][\w.-]*)\s*:(?!=)(.*)$", line)
        if rule:
            recipe = []
            for body in lines[i + 1:]:
                if not body.startswith("\t"):
                    break
                recipe.append(body)
            rules[rule.group(1)] = (rule.group(2).strip(), "\n".join(recipe))
    return rules


def phony_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return {t for line in re.findall(r"^\.PHONY:(.*)$", text, re.M) for t in line.split()}


# ------------------------------------------------------------------ the Python examples


def test_using_slrlib_example_prints_the_numbers_its_comments_say():
    """The numbers typed in the comments of "Using slrlib", recomputed: each to the digits shown, and
    the Monte Carlo mean within 3 of its standard errors of the closed form."""
    code = first_hour_code("<!-- using:")
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)
    comments = {line.split("#")[0].strip(): line.split("#", 1)[1] for line in code.splitlines() if "#" in line}

    def typed(expression: str) -> list[str]:
        return re.findall(r"\d+\.\d+", comments[expression])

    def shown(value: float, text: str) -> bool:
        return f"{value:.{len(text.split('.')[1])}f}" == text

    oracle = float(eval("oracle_risk(0.064, task)", namespace))
    linear = float(eval("linear_risk(task)", namespace))
    null = float(eval("null_risk(task)", {**namespace, "null_risk": __import__("slrlib").null_risk}))
    assert shown(oracle, typed("oracle_risk(0.064, task)")[0]), (oracle, comments)
    assert [shown(linear, typed("linear_risk(task)")[0]), shown(null, typed("linear_risk(task)")[1])] == [True, True]
    est = namespace["est"]
    mean, stderr = typed("est.mean, est.stderr")
    assert shown(float(est.mean), mean) and shown(float(est.stderr), stderr), (est, comments)
    assert abs(float(est.mean) - oracle) < 3 * float(est.stderr)


def test_first_hour_example_runs_and_its_comments_hold():
    code = first_hour_code()
    assert len(code.splitlines()) <= 15, "the first-hour example is meant to be short"
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)
    at_oracle, closed, flipped = (float(namespace[n]) for n in ("at_oracle", "closed", "flipped"))
    kappa, nu, found = (np.asarray(namespace[n]) for n in ("kappa", "nu", "found"))
    # "Theorem 1: the same number": two derivations, one float64 computation each.
    np.testing.assert_allclose(at_oracle, closed, rtol=1e-12)
    # "erf is odd: equals at_oracle" (the same operations on negated inputs).
    np.testing.assert_allclose(flipped, at_oracle, rtol=1e-13)
    # "every run found the oracle, up to sign": recovered, and kappa, nu of one sign in each run.
    assert found.shape == (5,) and found.all(), (kappa, nu)
    assert np.all(kappa * nu > 0), (kappa, nu)
    # "Some runs end at (kappa, nu) = (-1, -1)" (the prose under the block).
    assert np.any((kappa < 0) & (nu < 0)) and np.any((kappa > 0) & (nu > 0)), (kappa, nu)


# ------------------------------------------------------------------ the commands


def test_readme_is_a_front_page():
    lines = readme().splitlines()
    assert len(lines) <= MAX_LINES, f"the README has {len(lines)} lines; at most {MAX_LINES} (move detail to CONTRIBUTING.md)"
    headings = [line[3:] for line in lines if line.startswith("## ")]
    # The sections by kind of user (issue 41), in this order.
    wanted = ["Where to read it", "Two commands", "The chapters", "Read the book", "Run the chapters in JupyterLab",
              "Use `slrlib` as a library", "Regenerate a figure", "Contribute"]
    assert headings == wanted, headings
    two = re.search(r"## Two commands\n(.*?)\n## ", readme(), re.S).group(1)
    assert len(shell_commands(two)) == 2, shell_commands(two)


def test_shell_commands_finds_blocks_and_inline_commands():
    text = "Run `make book` or `make`.\n```bash\nmake lab   # opens JupyterLab\n\n# a note\npip install .\n```\n"
    assert shell_commands(text) == ["make lab", "pip install .", "make book"]


def test_every_command_the_readme_shows_is_exercised():
    commands = shell_commands(readme())
    assert set(commands) == set(EXERCISED), (
        f"shown in the README but not in EXERCISED: {sorted(set(commands) - set(EXERCISED))}; "
        f"in EXERCISED but no longer shown: {sorted(set(EXERCISED) - set(commands))}")
    rules, phony = makefile_rules(), phony_targets()
    problems = []
    for command, runners in EXERCISED.items():
        words = shlex.split(command)
        if words[0] == "make":
            target = words[1]
            if target not in phony or target not in rules:
                problems.append(f"{command}: {target!r} is not a .PHONY rule of the Makefile")
        for where, what in runners:
            if where == "test":
                if not callable(globals().get(what)):
                    problems.append(f"{command}: no test {what} in {Path(__file__).name}")
            elif where.startswith("make:"):
                recipe = rules.get(where[5:], ("", ""))[1]
                if what not in recipe:
                    problems.append(f"{command}: the recipe of make {where[5:]} does not contain {what!r}")
            else:
                path = ROOT / where
                if not path.is_file() or what not in path.read_text(encoding="utf-8"):
                    problems.append(f"{command}: {where} does not contain {what!r}")
    assert not problems, "\n".join(problems)


def _build_commands(recipe: str) -> list[str]:
    """The recipe's commands that execute the chapters and build the book, with the choice between
    an incremental build and a full one (``$$all`` / ``--all``) left out."""
    commands = []
    for part in re.split(r";\s*\\?\s*\n?", recipe):
        part = " ".join(part.replace("\\", " ").split())
        if "execute_chapters.py" in part or "jupyter-book build" in part:
            commands.append(" ".join(w for w in part.split() if w not in ("$$all", "--all")))
    return commands


def test_make_book_is_the_build_make_test_runs():
    """make test builds the book with book-fresh; make book is the same build (the same prerequisites,
    the same chapter execution and jupyter-book command) without emptying the cache first."""
    rules = makefile_rules()
    (book_pre, book), (fresh_pre, fresh) = rules["book"], rules["book-fresh"]
    assert book_pre.split() == fresh_pre.split()
    assert len(_build_commands(book)) == 2 and _build_commands(book) == _build_commands(fresh), (book, fresh)
    assert "JB_CACHE" in fresh and "JB_CACHE" not in book


# ------------------------------------------------------------------ pip


def _requirement(text: str) -> tuple[str, set[str], str | None]:
    """(normalised name, extras, the ``extra == ...`` it is under) of a Requires-Dist entry."""
    from packaging.requirements import Requirement

    req = Requirement(text)
    under = re.search(r'extra == "([^"]+)"', str(req.marker)) if req.marker else None
    return req.name.lower().replace("_", "-"), set(req.extras), under.group(1) if under else None


def _packages(requires_dist: list[str], extra: str | None) -> set[str]:
    """The packages ``pip install ".[extra]"`` adds to the core (the core's own when extra is None)."""
    out: set[str] = set()
    for name, extras, under in map(_requirement, requires_dist):
        if under == extra:
            if name == "slrlib":
                for inner in extras:
                    out |= _packages(requires_dist, inner)
            else:
                out.add(name)
    return out


def _named(comment: str) -> set[str]:
    """The package names a README comment lists: after "+" (an extra) or "core:", up to ":" or "("."""
    listed = comment.split("+", 1)[1] if "+" in comment else comment.split(":", 1)[1]
    listed = re.split(r"[:(]", listed)[0]
    return {name.strip().lower() for name in listed.split(",") if name.strip()}


def test_pip_commands_resolve_offline_to_the_packages_their_comments_name(tmp_path):
    """Each ``pip install`` line of the README, run by pip with ``--dry-run`` and no index: it resolves
    in this environment (requirements.lock's pins satisfy the extra), pip knows the extra, and the
    packages its comment names are exactly those the extra adds ("all of the above" = the lines above)."""
    section = re.search(r"## Use `slrlib` as a library\n(.*?)\n## ", readme(), re.S).group(1)
    lines = [line for block in re.findall(r"```bash\n(.*?)```", section, re.S) for line in block.splitlines()
             if line.startswith("pip install")]
    assert len(lines) == 6, lines
    # A pip command shown elsewhere in the README (the two commands) is one of these.
    assert {c for c in shell_commands(readme()) if c.startswith("pip ")} == {line.split("#")[0].strip() for line in lines}
    # All at once: each pip mostly waits (its start, the project's metadata built in a folder of its own).
    runs = []
    for i, line in enumerate(lines):
        command = line.split("#", 1)[0].strip()
        report = tmp_path / f"report{i}.json"
        runs.append((subprocess.Popen(
            [sys.executable, "-m", "pip", *shlex.split(command)[1:], "--dry-run", "--no-index", "--no-build-isolation",
             "--disable-pip-version-check", "--quiet", "--report", str(report)],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), report))
    above: set[str] = set()
    for line, (run, report) in zip(lines, runs):
        command, comment = (part.strip() for part in line.split("#", 1))
        _, stderr = run.communicate(timeout=300)
        assert run.returncode == 0 and "does not provide the extra" not in stderr, (command, stderr[-2000:])
        (installed,) = json.loads(report.read_text())["install"]
        assert installed["metadata"]["name"] == "slrlib", installed["metadata"]["name"]
        extra = re.fullmatch(r'pip install (?:\.|"\.\[([\w-]+)\]")', command)
        assert extra, command
        extra = extra.group(1)
        adds = _packages(installed["metadata"]["requires_dist"], extra)
        named = _named(comment) | (above if comment.startswith("all of the above") else set())
        assert named == adds, (command, sorted(named), sorted(adds))
        if extra is not None:
            assert installed.get("requested_extras") == [extra], installed.get("requested_extras")
            above |= adds


# ------------------------------------------------------------------ the figure and the picture


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


@pytest.fixture(scope="module")
def figure_runs(tmp_path_factory):
    """Each ``python -m slrlib figure`` command of the README, run as printed (this interpreter for
    ``.venv/bin/python``) in an empty folder: {command: (folder, completed process)}."""
    out = {}
    for i, command in enumerate(c for c in shell_commands(readme()) if " -m slrlib figure" in c):
        words = shlex.split(command)
        assert words[:3] == [".venv/bin/python", "-m", "slrlib"], command
        folder = tmp_path_factory.mktemp(f"figure{i}")
        out[command] = (folder, subprocess.run([sys.executable, *words[1:]], cwd=folder, capture_output=True,
                                               text=True, timeout=600))
    return out


def _picture() -> tuple[str, str]:
    """(the picture's path, the figure name it is the PNG of) from the README's image."""
    image = re.search(r"!\[[^\]]+\]\((docs/([\w-]+)\.png)\)", readme())
    assert image, "the README shows no picture docs/NAME.png"
    return image.group(1), image.group(2)


def test_figure_commands_run_as_printed(figure_runs):
    """--list lists the picture's figure with its chapter; ``figure NAME --out figures/`` writes the PDF,
    PNG and CSV its comment names, and the CSV holds what the caption under the picture states."""
    from slrlib import SLRTask, figures, oracle_risk

    _, name = _picture()
    (listing,) = [run for command, (_, run) in figure_runs.items() if command.endswith("--list")]
    assert listing.returncode == 0, listing.stderr[-2000:]
    rows = {line.split()[0]: line.split() for line in listing.stdout.splitlines()[2:] if line.strip()}
    assert rows[name][1] == str(figures.get(name).chapter), rows.get(name)

    (folder, run), = [(f, r) for c, (f, r) in figure_runs.items() if c.endswith(f"figure {name} --out figures/")]
    assert run.returncode == 0, run.stderr[-2000:]
    assert sorted(p.name for p in (folder / "figures").iterdir()) == [f"{name}.csv", f"{name}.pdf", f"{name}.png"]
    assert (folder / "figures" / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"

    # The caption: "Figure 4(b) of the paper, as chapter 7 recomputes it: 30 runs ..., d = 400, L = 10.
    # ... |κ| and |ν| above 0.98 after 20 000 steps, and its risk ends within 0.2 % of the oracle's".
    caption = " ".join(re.search(r"\n\*(Figure .*?)\*\n", readme(), re.S).group(1).split())
    spec = figures.get(name)
    numbers = re.search(r"^(Figure \S+) of the paper, as chapter (\d+) recomputes it: (\d+) runs .*?d = (\d+), L = (\d+)\."
                        r".*above ([\d.]+) after ([\d ]+) steps.*within ([\d.]+) % of the oracle", caption)
    assert numbers, caption
    fig, chapter, runs, d, L, floor, steps, within = numbers.groups()
    assert spec.title.startswith(fig + ":") and int(chapter) == spec.chapter, (spec.title, spec.chapter, caption)
    from slrlib.experiments import PGD_CONFIGS

    config = PGD_CONFIGS[name]
    assert (config.n_runs, config.d, config.L, config.n_steps) == (int(runs), int(d), int(L), int(steps.replace(" ", "")))
    with open(folder / "figures" / f"{name}.csv", newline="") as f:
        table = list(csv.DictReader(f))
    last = max(int(row["step"]) for row in table)
    final = [row for row in table if int(row["step"]) == last]
    assert len({row["run"] for row in table}) == int(runs) == len(final)
    assert last == int(steps.replace(" ", ""))
    kappa, nu, excess = (np.array([float(row[c]) for row in final]) for c in ("kappa", "nu", "excess_risk"))
    assert min(np.abs(kappa).min(), np.abs(nu).min()) > float(floor), (kappa, nu)
    (lam,) = {float(row["lam"]) for row in final}
    oracle = float(oracle_risk(lam, SLRTask(int(d), int(L))))  # eps = 0: the excess risk is the risk
    assert np.all(np.abs(excess / oracle - 1) < float(within) / 100), (excess, oracle)


def test_the_picture_is_what_the_figure_command_writes(figure_runs):
    """The README's picture docs/NAME.png is the PNG that its ``figure NAME`` command writes: its
    "the picture above" comment names it, and the committed file has the pixels the command gives."""
    path, name = _picture()
    command = f".venv/bin/python -m slrlib figure {name} --out figures/"
    line = next((l for l in readme().splitlines() if l.startswith(command)), None)
    assert line and "the picture above" in line, f"the README's figure command for its picture is not {command!r}"
    folder, run = figure_runs[command]
    assert run.returncode == 0, run.stderr[-2000:]
    picture = ROOT / path
    assert picture.is_file(), (f"{path} is missing: `{command[:-len('figures/')]}docs/` writes it "
                               f"(commit {path} only, not the PDF and CSV beside it)")
    assert _png_size(picture) == _png_size(folder / "figures" / f"{name}.png")


# ------------------------------------------------------------------ the chapter map


def test_chapter_map_is_the_books():
    """The table under "The chapters": each part of _toc.yml with numbered chapters, in order, and each
    chapter's number and title (the first heading of book/NN_*.md)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    expected = []
    for part in toc["parts"]:
        files = [c["file"] for c in part["chapters"] if re.match(r"book/\d\d_", c["file"])]
        if files:
            titles = []
            for file in files:
                source = (ROOT / f"{file}.md").read_text(encoding="utf-8")
                titles.append(f"{int(Path(file).name[:2])} {re.search(r'^# (.+)$', source, re.M).group(1).strip()}")
            expected.append((part["caption"], titles))
    section = re.search(r"## The chapters\n(.*?)\n## ", readme(), re.S).group(1)
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in section.splitlines() if line.startswith("|")][2:]
    shown = [(part, [c.strip() for c in chapters.split("·")]) for part, chapters in rows]
    assert shown == expected
    assert sum(len(titles) for _, titles in expected) == 16


# ------------------------------------------------------------------ links and publication


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def test_slug_is_githubs():
    assert _slug("Use `slrlib` as a library") == "use-slrlib-as-a-library"
    assert _slug("Offline: the built book needs no network") == "offline-the-built-book-needs-no-network"
    assert _slug("The figures' command") == "the-figures-command"


@pytest.mark.parametrize("document", ["README.md", "CONTRIBUTING.md", "ARCHITECTURE.md"])
def test_relative_links_and_anchors_resolve(document):
    """Each relative link of the document names a file of the repository (the README's picture aside:
    test_the_picture_is_what_the_figure_command_writes), and each #anchor a heading of its target."""
    path = ROOT / document
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    problems = []
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    for link in links:
        if re.match(r"[a-z]+:", link) or link.startswith("docs/"):
            continue
        target, _, anchor = link.partition("#")
        file = (path.parent / target) if target else path
        if not file.exists():
            problems.append(f"{link}: no file {target}")
        elif anchor and anchor not in _anchors(file):
            problems.append(f"{link}: no heading #{anchor} in {file.name}")
    assert not problems, problems
    if document != "ARCHITECTURE.md":
        assert any("#" in link for link in links)


def _pages_and_binder(url: str, branch: str) -> tuple[str, str]:
    """(the GitHub Pages address, the Binder link) of a repository ``https://github.com/ORG/REPO``."""
    found = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?", url)
    assert found, f"repository.url {url!r} is not https://github.com/ORG/REPO"
    org, repo = found.groups()
    return f"https://{org.lower()}.github.io/{repo}/", f"https://mybinder.org/v2/gh/{org}/{repo}/{branch}"


def publication_problems(text: str, config: dict) -> list[str]:
    """What the README ``text`` says wrongly about where the book is published, given ``_config.yml``."""
    repository = config.get("repository") or {}
    url, branch = (repository.get("url") or "").strip(), repository.get("branch") or "main"
    problems = []
    if url:
        pages, binder = _pages_and_binder(url, branch)
        if pages not in text:
            problems.append(f"repository.url is set: the README must give the book's address {pages}")
        if not re.search(r"\[!\[[^\]]*\]\(https://mybinder\.org/badge[^)]*\)\]\(" + re.escape(binder), text):
            problems.append(f"repository.url is set: the README must show a Binder badge linking to {binder}")
        if "not yet published" in text:
            problems.append("repository.url is set: the README still says 'not yet published'")
    else:
        if "mybinder.org" in text:
            problems.append("repository.url is empty: the README must show no Binder badge or link")
        if "not yet published" not in text:
            problems.append("repository.url is empty: the README must say the book is 'not yet published'")
    return problems


def test_readme_says_where_the_book_is_published_as_config_does():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert publication_problems(readme(), config) == []


def test_publication_check_fails_either_way():
    """publication_problems catches a README that claims too much or too little."""
    published = {"repository": {"url": "https://github.com/Org/slr-book", "branch": "main"}}
    assert len(publication_problems(readme(), published)) == 3 - ("not yet published" not in readme())
    badge = ("[![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/Org/slr-book/main?urlpath=lab)"
             "\nRead it at https://org.github.io/slr-book/.")
    assert publication_problems(badge, published) == []
    assert len(publication_problems(badge, {"repository": {"url": ""}})) == 2
