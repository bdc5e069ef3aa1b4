# Single-location regression: an executable textbook.
#
#   make book        set up .venv (first use), build HTML into _build/html, executing only
#                    the chapters whose code cells changed since they were cached
#                    (jupyter-cache in _build/.jupyter_cache); blind to changes in slrlib
#   make book-fresh  the same, but first empties the cache: every chapter is executed in a
#                    fresh kernel and every page rebuilt (and the cache refilled)
#   make test        set up .venv (first use), library tests (those marked roundoff also
#                    compiled for SSE4.2), slrlib alone in a fresh venv from its wheel
#                    (tests/install), make book-fresh, the PDF (as make pdf), then the
#                    browser test (tests/browser: static checks and headless Chromium, and the
#                    PDF read back) on them
#   make check       the loop while writing (about 2 min): the library's formatting (ruff),
#                    the library tests recorded as fast (tests/durations.json), then the
#                    chapters whose code changed, through the cache
#   make durations   record each library test's time into tests/durations.json
#   make bench       set up .venv (first use), run benchmarks/ (the pages row needs a built
#                    book: make book first)
#   make lab         set up .venv (first use), write every chapter as a notebook for
#                    JupyterLab (book/_ext/to_notebook.py) into _build/lab, and open JupyterLab
#                    there: MyST rendered (jupyterlab-myst), the prose's numbers filled in as
#                    the cells run
#   make pdf         the whole book as one PDF, _build/pdf/book.pdf (book/_ext/book_pdf.py): the
#                    built pages joined and printed by headless Chromium; runs make book first
#                    when there is no successful build, and otherwise executes and builds nothing
#                    (nothing at all when the PDF is newer than the last build)
#   make clean       remove _build/ (the jupyter-cache included)
#
# Only python3 (3.11), Node.js and npm are needed beforehand; everything else is installed
# into .venv from the exact pins in requirements.lock, and into node_modules from
# package-lock.json.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# The book's tools from the npm registry, pinned with their checksums in package-lock.json and
# installed by `npm ci` (Node and npm must be on PATH): MathJax (mathjax-full), which typesets every
# formula when the book is built (book/_ext/typeset_math.py), and axe-core, the accessibility
# checker of tests/browser. Nothing is fetched at build or test time.
NODE_STAMP := node_modules/.installed
# Headless Chromium for the browser test and the PDF, and poppler's pdftotext and qpdf, which read
# the PDF back (Debian's packages; installed when missing).
CHROMIUM ?= chromium

# Warnings are errors (-W), also for missing references (-n); --keep-going reports
# every warning before failing.
JB_FLAGS ?= --warningiserror --nitpick --keep-going
# The jupyter-cache (execute.cache in _config.yml names the same folder).
JB_CACHE := _build/.jupyter_cache
# Written by each successful build. `make book` is incremental (Sphinx re-reads only the
# changed sources) while it exists; without it (first build, or the last one failed)
# `make book` adds --all, so that no page keeps a warning that an incremental build
# would not report again.
BOOK_OK  := _build/.book-ok
# Chapters executed at once into the cache before Sphinx renders them
# (book/_ext/execute_chapters.py); each in its own fresh kernel, whose XLA then runs on one
# thread. Measured on 2 cores: chapters 07 and 09 in 128 s two at a time, 184 s one after the
# other; the whole book in 906 s two at a time (1 226 s one after the other in the CI run the
# day before). BOOK_JOBS=1 runs each chapter alone, as its budget in budgets.yml is measured.
BOOK_JOBS ?= 2
# The tests marked `roundoff` (two compiled programs compared to a round-off tolerance) run
# a second time compiled for this instruction set, as on another user's CPU.
OTHER_ISA ?= SSE4_2
# The test files that have such tests (only they are collected for that second run).
ROUNDOFF_FILES := $(shell grep -l 'mark\.roundoff' tests/test_*.py)
# When make started (for the install stage of `make test`), and where its stages are timed.
MAKE_START := $(shell date +%s)
STAGES     := _build/stages.tsv
# $(call stage,NAME,COMMAND): run COMMAND, append "NAME<tab>seconds<tab>exit status<tab>start" to
# $(STAGES); on failure print the stage table so far and stop with COMMAND's status.
define stage
start=$$(date +%s); rc=0; $(2) || rc=$$?; \
printf '%s\t%s\t%s\t%s\n' $(1) $$(( $$(date +%s) - start )) $$rc $$start >> $(STAGES); \
if [ $$rc -ne 0 ]; then $(PY) tools/stage_table.py $(STAGES); exit $$rc; fi
endef
# $(call beside,NAME,COMMAND): the stage NAME started in the background, its output kept in
# _build/logs/NAME.log; $(call await_stage,NAME), in the same shell, waits for it, prints that log and
# sets `failed` where the stage failed.
define beside
( $(call stage,$(1),$(2)) ) > _build/logs/$(1).log 2>&1 & $(1)_pid=$$!
endef
define await_stage
wait $$$(1)_pid || failed=$$?; echo "--- stage $(1), run beside another (_build/logs/$(1).log):"; cat _build/logs/$(1).log
endef
# Extra pytest arguments, e.g. `make test PYTEST_ARGS="-x"`.
PYTEST_ARGS ?=
# The library tests run on TEST_JOBS workers (pytest-xdist), dealt out one test at a time,
# except the modules whose tests share a costly fixture (xdist_group: kept on one worker).
TEST_JOBS ?= 2
XDIST     := -n $(TEST_JOBS) --dist loadgroup
# JAX's persistent compilation cache for the test stages of `make test`, emptied at its start:
# a program compiled by one worker (or one test subprocess) is loaded, not compiled again, by the
# other. Its key holds XLA_FLAGS, so the SSE4.2 stage gets a folder of its own anyway. Measured
# (library stage, 2 workers, one run each): 554 s and 1 010 s of CPU time with it, 618 s and
# 1 145 s without; the machine's speed varies by about as much between runs (606-655 s without).
JAX_CACHE := _build/jax_cache
JAX_CACHE_ENV = JAX_COMPILATION_CACHE_DIR=$(JAX_CACHE)/$(1) JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0
# The library tests compile their XLA programs with LLVM at optimisation level 0 (any XLA_FLAGS
# of the caller kept before it). Most of them run small programs once, so compiling is most of
# their time: measured on this machine (AMD EPYC, 2 cores, library stage, one run each), 507 s
# (933 s of CPU) at the default level and 430 s (783 s of CPU) at level 0. What is computed is
# the same program, to round-off, which is what the tests' tolerances allow. Optimised programs
# stay tested: the roundoff stage (compiled for SSE4.2), the cross-ISA test's subprocesses
# (tests/test_cross_isa.py sets its own XLA_FLAGS) and the book build run at the default level.
LIBRARY_XLA = XLA_FLAGS="$(strip $(XLA_FLAGS) --xla_backend_optimization_level=0)"

# The library's code formatted to PEP 8's 79 characters (ruff, pinned in requirements.lock; its
# settings in pyproject.toml): the chapters show it in code blocks 79 characters wide.
FORMAT_CHECK = ($(VENV)/bin/ruff format --check --quiet slrlib || { echo "run: $(VENV)/bin/ruff format slrlib" >&2; false; })

.DEFAULT_GOAL := book
.PHONY: book book-fresh test check durations durations-new bench clean install chromium lab pdf

# The chapters as notebooks for JupyterLab (book/_ext/lab.py).
LAB_DIR    := _build/lab

install: $(STAMP) $(NODE_STAMP)

$(NODE_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { echo "npm is needed (with Node.js) to install the book's tools" >&2; exit 1; }
	@npm ci --no-audit --no-fund --ignore-scripts --cache .cache/npm --loglevel=error
	@touch $@

chromium:
	@command -v $(CHROMIUM) >/dev/null && command -v pdftotext >/dev/null && command -v qpdf >/dev/null || \
		(apt-get update && apt-get install -y --no-install-recommends chromium poppler-utils qpdf)

$(STAMP): requirements.lock pyproject.toml
	@start=$$(date +%s); \
	if [ ! -x $(PY) ]; then python3 -m venv $(VENV); fi; \
	$(PY) -m pip install --disable-pip-version-check -r requirements.lock; \
	$(PY) -m pip install --disable-pip-version-check --no-deps --no-build-isolation -e .; \
	touch $@; \
	echo "install: $$(( $$(date +%s) - start )) s"

book: $(STAMP) $(NODE_STAMP)
	@start=$$(date +%s); \
	all=$$([ -f $(BOOK_OK) ] || echo --all); \
	rm -f $(BOOK_OK); \
	$(PY) book/_ext/execute_chapters.py --jobs $(BOOK_JOBS); \
	$(VENV)/bin/jupyter-book build . $(JB_FLAGS) $$all; \
	touch $(BOOK_OK); \
	echo "book build: $$(( $$(date +%s) - start )) s"; \
	echo "$(CURDIR)/_build/html/index.html"

# Every chapter executed again, each in a fresh kernel (the cache is emptied, then refilled
# by the build), and every page re-read and rewritten (--all).
book-fresh: $(STAMP) $(NODE_STAMP)
	@start=$$(date +%s); \
	rm -rf $(JB_CACHE) $(BOOK_OK); \
	$(PY) book/_ext/execute_chapters.py --jobs $(BOOK_JOBS); \
	$(VENV)/bin/jupyter-book build . $(JB_FLAGS) --all; \
	touch $(BOOK_OK); \
	echo "book build (fresh): $$(( $$(date +%s) - start )) s"; \
	echo "$(CURDIR)/_build/html/index.html"

# Library tests (tests/, not tests/browser), the fresh book build (a library change does
# not invalidate the cache), the whole-book PDF, then the built site: tests/browser (static
# checks of the HTML and headless Chromium) on _build/html and the PDF. The PDF's print keeps
# about one core of two busy (`vmstat 10` during `make pdf`: 37-48 % idle over its 68 s print,
# 2026-12-07): the tests compiled for another instruction set (roundoff) and the wheel's install
# test (package), which need no book, run beside it, their output printed when they end. Each
# stage's wall time, exit status and start go to $(STAGES); the table of them is printed at
# the end, or where a stage fails (tools/stage_table.py, against the budgets in budgets.yml;
# stages side by side count once in the total). "install" is everything before the first
# stage: the venv, node_modules and Chromium (0 s when already there).
test: $(STAMP) $(NODE_STAMP) chromium
	@mkdir -p _build; rm -rf $(JAX_CACHE); printf 'install\t%s\t0\n' $$(( $$(date +%s) - $(MAKE_START) )) > $(STAGES)
	@$(call stage,library,$(FORMAT_CHECK) && $(LIBRARY_XLA) $(call JAX_CACHE_ENV,native) $(PY) -m pytest --ignore=tests/browser --ignore=tests/install $(XDIST) $(PYTEST_ARGS))
	@$(call stage,book,$(MAKE) --no-print-directory book-fresh)
	@mkdir -p _build/logs; failed=0; \
	$(call beside,roundoff,XLA_FLAGS=--xla_cpu_max_isa=$(OTHER_ISA) $(call JAX_CACHE_ENV,$(OTHER_ISA)) $(PY) -m pytest $(ROUNDOFF_FILES) -m roundoff $(XDIST) $(PYTEST_ARGS)); \
	$(call beside,package,SLR_INSTALL_TEST=1 $(PY) -m pytest tests/install $(PYTEST_ARGS)); \
	( $(call stage,pdf,$(PY) book/_ext/book_pdf.py --out $(PDF) --chromium $(CHROMIUM)) ) || failed=$$?; \
	$(call await_stage,roundoff); $(call await_stage,package); \
	if [ $$failed -ne 0 ]; then $(PY) tools/stage_table.py $(STAGES); exit $$failed; fi
	@$(call stage,browser,SLR_REQUIRE_BROWSER=1 $(PY) -m pytest tests/browser $(PYTEST_ARGS))
	@$(PY) tools/stage_table.py $(STAGES)

# The loop while writing: the library tests recorded as fast (tests/durations.json; the
# others are marked slow), then every chapter whose code cells changed since their cached
# run (book/_ext/execute_chapters.py, with its table of times against budgets.yml). The
# tests keep their compiled programs in $(JAX_CACHE)/check from one run to the next (JAX's
# key holds the program, the flags and the versions: a changed program is compiled again);
# `make test` empties $(JAX_CACHE) when it starts.
# First, the GitHub Actions workflows (.github/workflows, issue 41), which cannot run here: actionlint
# (its run: scripts through the venv's shellcheck) and zizmor's pedantic audits, offline; any finding
# fails. Both are pinned in requirements.lock; together they take under 2 s.
# `make test` stays the full gate.
check: $(STAMP) $(NODE_STAMP)
	@start=$$(date +%s); \
	$(VENV)/bin/actionlint -shellcheck $(VENV)/bin/shellcheck -pyflakes= .github/workflows/*.yml; \
	$(VENV)/bin/zizmor --offline --no-progress --quiet --persona pedantic .github/workflows; \
	$(FORMAT_CHECK); \
	$(LIBRARY_XLA) $(call JAX_CACHE_ENV,check) $(PY) -m pytest --ignore=tests/browser --ignore=tests/install -m "not slow" -q $(XDIST) $(PYTEST_ARGS); \
	$(PY) book/_ext/execute_chapters.py --jobs $(BOOK_JOBS); \
	echo "make check: $$(( $$(date +%s) - start )) s"

# Record each library test's time (tests/durations.json), which decides what `make check` runs.
durations: $(STAMP)
	@mkdir -p _build; \
	$(LIBRARY_XLA) $(PY) -m pytest --ignore=tests/browser --ignore=tests/install -q --junitxml=_build/junit.xml $(PYTEST_ARGS); \
	$(PY) tools/test_durations.py _build/junit.xml

# Only the library tests tests/durations.json does not list yet, their times merged in.
durations-new: $(STAMP)
	@mkdir -p _build; \
	$(PY) -m pytest --ignore=tests/browser --ignore=tests/install --collect-only -q $(PYTEST_ARGS) \
		| grep '::' > _build/collected.txt; \
	$(PY) tools/test_durations.py --missing _build/collected.txt > _build/new_tests.txt; \
	if [ -s _build/new_tests.txt ]; then \
		$(LIBRARY_XLA) $(PY) -m pytest -q --junitxml=_build/junit-new.xml @_build/new_tests.txt $(PYTEST_ARGS); \
		$(PY) tools/test_durations.py --merge _build/junit-new.xml _build/collected.txt; \
	else echo "tests/durations.json lists every library test"; fi

bench: $(STAMP)
	@if [ -f benchmarks/__main__.py ]; then \
		$(PY) -m benchmarks; \
	else \
		echo "no benchmarks yet"; \
	fi

# The whole book as one PDF from the last successful build (book/_ext/book_pdf.py says how and why).
PDF := _build/pdf/book.pdf
pdf: $(STAMP) $(NODE_STAMP) chromium
	@[ -f $(BOOK_OK) ] || $(MAKE) --no-print-directory book
	@if [ $(PDF) -nt $(BOOK_OK) ]; then echo "$(PDF) is already printed from the last build"; \
	else $(PY) book/_ext/book_pdf.py --out $(PDF) --chromium $(CHROMIUM); fi

lab: $(STAMP)
	$(PY) book/_ext/lab.py --out $(LAB_DIR) $(LAB_ARGS)

clean:
	rm -rf _build
