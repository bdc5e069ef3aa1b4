"""Named PGD experiments, the figure registry and ``python -m slrlib figure``.

The configurations are checked against the paper's parameters as the paper's Appendix E and
the authors' published code give them (a second source, typed here independently); runs use scaled-down copies so the
file stays fast.
"""

import csv
import json
import math

import jax
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from slrlib import experiments, figures  # noqa: E402
from slrlib.training import pgd as dynamics
from slrlib.__main__ import main  # noqa: E402
from slrlib.experiments import PGD_CONFIGS, PGDConfig, pgd_table, recovered, run_pgd_experiment, trajectory_runs  # noqa: E402

# The paper's Appendix E and the authors' published configuration: init, lambda, schedule, alpha, steps, log_every.
PAPER = {
    "fig4b": ("manifold", 0.1, "constant", 4e-3, 20_000, 200),
    "fig7a": ("sphere", 0.9, "constant", 1e-3, 120_000, 300),
    "fig7b": ("sphere", 0.1, "constant", 4e-3, 20_000, 200),
    "fig4a": ("sphere", 1.0, "paper", 4e-3, 120_000, 300),
}


@pytest.mark.parametrize("name", sorted(PAPER))
def test_configs_are_the_papers(name):
    cfg = PGD_CONFIGS[name]
    init, lam, schedule, alpha, n_steps, log_every = PAPER[name]
    assert (cfg.init, cfg.lam, cfg.schedule, cfg.alpha, cfg.n_steps, cfg.log_every) == (
        init, lam, schedule, alpha, n_steps, log_every)
    assert (cfg.d, cfg.L, cfg.n_runs) == (400, 10, 30)
    assert cfg.gamma == pytest.approx(math.sqrt(0.5), abs=1e-15)
    assert cfg.run_steps == 30 * n_steps


def test_total_run_steps_match_the_paper():
    # 8.4 million PGD run-steps for the four figures (design.md's anchor).
    assert sum(c.run_steps for c in PGD_CONFIGS.values()) == 8_400_000


def small(name, **kw):
    base = dict(d=12, L=3, n_runs=5, n_steps=400, log_every=40)
    base.update(kw)
    return PGD_CONFIGS[name].scaled(**base)


def test_run_is_deterministic_and_seeded():
    a = run_pgd_experiment(small("fig7b"))
    b = run_pgd_experiment(small("fig7b"))
    np.testing.assert_array_equal(np.asarray(a.result.kappa), np.asarray(b.result.kappa))
    c = run_pgd_experiment(small("fig7b", seed=1))
    assert not np.allclose(np.asarray(a.result.kappa), np.asarray(c.result.kappa))


@pytest.mark.roundoff
def test_sphere_configs_share_initialisations():
    # Same seed: fig4a, fig7a, fig7b start from the same 30 pairs, so they differ only by
    # lambda_t and alpha; the first logged overlaps (step 0) are therefore identical. Exact:
    # lambda, alpha and the schedule are traced, so the three runs are one compiled program
    # (same shapes) on the same k0, v0.
    runs = [run_pgd_experiment(small(n)) for n in ("fig4a", "fig7a", "fig7b")]
    for r in runs[1:]:
        for f in ("kappa", "nu", "theta", "eta", "rho"):
            np.testing.assert_array_equal(np.asarray(getattr(r.result, f))[:, 0],
                                          np.asarray(getattr(runs[0].result, f))[:, 0])


def test_manifold_config_starts_and_stays_on_M():
    exp = run_pgd_experiment(small("fig4b"))
    assert float(np.max(exp.result.distance)) < 1e-13


def test_schedule_is_applied():
    exp = run_pgd_experiment(small("fig4a"))
    np.testing.assert_allclose(exp.result.lam, 1.0 / (1.0 + 1e-4 * exp.result.steps), rtol=0, atol=1e-15)


@pytest.mark.roundoff
def test_run_matches_direct_pgd_call():
    cfg = small("fig7a")
    exp = run_pgd_experiment(cfg)
    k_star, v_star, k0, v0 = experiments.pgd_initialisation(cfg)
    direct = dynamics.pgd_dense(k0, v0, k_star, v_star, cfg.task, lam=cfg.lam, alpha=cfg.alpha,
                                n_steps=cfg.n_steps, schedule=cfg.schedule, log_every=cfg.log_every)
    np.testing.assert_allclose(np.asarray(exp.result.nu), np.asarray(direct.nu), rtol=0, atol=1e-12)
    np.testing.assert_allclose(exp.excess_risk, np.asarray(direct.risk) - cfg.task.eps**2, rtol=0, atol=1e-12)


@pytest.mark.roundoff
def test_table_is_tidy():
    exp = run_pgd_experiment(small("fig7b"))
    table = pgd_table(exp)
    n_runs, n_log = np.asarray(exp.result.kappa).shape
    assert {len(v) for v in table.values()} == {n_runs * n_log}
    # Row (run i, logged step j) is at i * n_log + j.
    i, j = 3, 4
    row = i * n_log + j
    assert table["run"][row] == i and table["step"][row] == exp.result.steps[j]
    assert table["nu"][row] == np.asarray(exp.result.nu)[i, j]
    assert table["distance"][row] == pytest.approx(math.sqrt(
        table["theta"][row] ** 2 + table["eta"][row] ** 2 + table["rho"][row] ** 2), abs=1e-15)


def _fake_result(kappa_end, nu_end):
    n = len(kappa_end)
    col = lambda end: np.column_stack([np.zeros(n), np.asarray(end, float)])  # noqa: E731
    z = np.zeros((n, 2))
    return dynamics.PGDResult(np.array([0, 1]), np.array([1.0, 1.0]), col(kappa_end), col(nu_end),
                              z, z, z, z, z, np.zeros((n, 3)), np.zeros((n, 3)))


def test_recovered_and_trajectory_runs():
    r = _fake_result([0.99, -0.999, 0.0, 0.99, 0.3], [1.0, -0.98, 0.0, 0.5, 0.99])
    np.testing.assert_array_equal(recovered(r), [True, True, False, False, False])
    assert trajectory_runs(r) == [0, 2]  # first success and first failure
    assert trajectory_runs(_fake_result([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])) == [0, 1]


@pytest.mark.parametrize("result", [(1, 2), None, "result", np.zeros((3, 2))])
def test_recovered_refuses_what_is_not_a_result(result):
    """recovered((1, 2)) raised an AttributeError about `kappa`: a ValueError naming result."""
    with pytest.raises(ValueError, match=r"^result must be a PGDResult \(a record with the fields kappa and nu"):
        recovered(result)


def test_recovered_refuses_logs_without_a_step_axis():
    r = _fake_result([0.99], [0.99])._replace(kappa=np.float64(0.99))
    with pytest.raises(ValueError, match=r"^result\.kappa and result\.nu must be arrays of the same shape"):
        recovered(r)


@pytest.mark.parametrize("tol", [-1, 0.0, 1.5, float("nan"), "0.05"])
def test_recovered_refuses_a_tolerance_outside_0_1(tol):
    """tol = -1 was accepted (and refused every run; tol > 1 accepts every one): tol is in (0, 1]."""
    with pytest.raises(ValueError, match=r"^tol must be"):
        recovered(_fake_result([0.99], [0.99]), tol=tol)


def test_recovered_tolerance_bounds():
    r = _fake_result([0.99, 0.5, 0.0], [0.99, 0.99, 0.99])
    np.testing.assert_array_equal(recovered(r, tol=1.0), [True, True, False])  # |kappa| > 0
    np.testing.assert_array_equal(recovered(r, tol=1e-3), [False, False, False])


def test_bad_config_name():
    with pytest.raises(ValueError, match="config"):
        run_pgd_experiment("fig99")
    with pytest.raises(ValueError, match="init"):
        PGDConfig(name="x", title="x", init="ball", lam=0.1, schedule="constant", alpha=1e-3, n_steps=10, log_every=1)


# ----------------------------------------------------------------------------- figures / CLI
@pytest.fixture
def tiny_figure(monkeypatch):
    """A registered figure spec on a scaled-down configuration (full scale takes seconds)."""
    from slrlib.plots.dynamics import plot_pgd_panels

    cfg = small("fig7b")
    spec = figures.FigureSpec("tiny7b", "tiny", 8, lambda: run_pgd_experiment(cfg), plot_pgd_panels, pgd_table)
    figures._load()
    monkeypatch.setitem(figures._REGISTRY, "tiny7b", spec)
    return spec


def test_registry_has_every_pgd_figure():
    assert {"fig4a", "fig4b", "fig7a", "fig7b"} <= set(figures.names())
    assert figures.get("fig4b").chapter == 7
    with pytest.raises(ValueError, match="name"):
        figures.get("nope")


def test_write_figure_round_trip(tmp_path, tiny_figure):
    info = figures.write_figure("tiny7b", tmp_path)
    pdf, png, csv_path = info["paths"]
    assert pdf.read_bytes().startswith(b"%PDF") and png.read_bytes().startswith(b"\x89PNG")
    table = pgd_table(tiny_figure.compute())
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(table["run"])
    for name, col in table.items():
        back = np.array([float(r[name]) for r in rows])
        np.testing.assert_array_equal(back, np.asarray(col, dtype=float))  # 17 digits: exact


def test_pdf_is_reproducible(tmp_path, tiny_figure):
    a = figures.write_figure("tiny7b", tmp_path / "a")["paths"]
    b = figures.write_figure("tiny7b", tmp_path / "b")["paths"]
    assert a[0].read_bytes() == b[0].read_bytes()
    assert a[2].read_bytes() == b[2].read_bytes()


def test_write_csv_rejects_ragged(tmp_path):
    with pytest.raises(ValueError, match="table"):
        figures.write_csv({"a": np.arange(3), "b": np.arange(4)}, tmp_path / "x.csv")


def _library_figures() -> list[str]:
    return [n for n in figures.names() if getattr(figures.get(n).compute, "func", figures.get(n).compute).__module__.startswith("slrlib.")]


def test_cli_list_shows_each_figure_with_its_recorded_cost(capsys):
    assert main(["figure", "--list", "--bench", "no-such-file.json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line for line in lines[2:]}
    machine = figures.recorded_costs()["machine"]
    assert machine["cpu"] in lines[0] and machine["date"] in lines[0]
    for name in _library_figures():
        seconds, label = figures.cost(name)
        assert seconds is not None and seconds > 0, f"{name}: no cost in {figures.COSTS_FILE.name}"
        assert f"{seconds:5.0f} s ({label})" in rows[name]


def test_cost_classes_and_the_bench_column(tmp_path, monkeypatch, capsys):
    costs = tmp_path / "costs.json"
    costs.write_text('{"machine": {"cpu": "X", "cores": 2, "date": "D"}, '
                     '"figures": {"fig6": 29.9, "fig4b": 30.0, "fig5": 119.9, "fig8": 500}}')
    monkeypatch.setattr(figures, "COSTS_FILE", costs)
    assert [figures.cost(n).label for n in ("fig6", "fig4b", "fig5", "fig8")] == \
        ["seconds", "a minute", "a minute", "minutes"]
    assert figures.cost("fig10") == (None, "not measured")
    with pytest.raises(ValueError, match="name"):
        figures.cost("fig99")
    bench = tmp_path / "bench.json"
    bench.write_text('{"fig5": {"seconds": 12.34}, "machine": {"cpu": "X"}}')
    assert main(["figure", "--list", "--bench", str(bench)]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[3:]}
    assert "  120 s (a minute)   12.3s" in rows["fig5"] and "not measured" in rows["fig10"]


def test_cli_writes(tmp_path, tiny_figure, capsys):
    assert main(["figure", "tiny7b", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny7b.csv", "tiny7b.pdf", "tiny7b.png"]


def test_cli_rejects_unknown_and_empty(tmp_path):
    with pytest.raises(SystemExit) as err:
        main(["figure", "fig99", "--out", str(tmp_path)])
    assert err.value.code == 2
    with pytest.raises(SystemExit):
        main(["figure"])


def test_the_figure_catalogue_lists_what_each_module_registers():
    """``figures.MODULES`` (and ``BOOK_FIGURES``) name, without importing, the figures each module
    registers: ``--list`` relies on it to name a figure whose extra is missing. A fresh process
    imports the modules one by one and records what each adds to the registry."""
    import subprocess
    import sys

    script = (
        "import importlib, json, jax\n"
        "jax.config.update('jax_enable_x64', True)\n"
        "from slrlib import figures\n"
        "seen, out = set(), {}\n"
        "for module in figures.MODULES:\n"
        "    importlib.import_module(module)\n"
        "    out[module] = sorted(set(figures._REGISTRY) - seen); seen |= set(figures._REGISTRY)\n"
        "print(json.dumps(out))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    registered = json.loads(proc.stdout.strip().splitlines()[-1])
    for module, (_, listed) in figures.MODULES.items():
        assert registered[module] == sorted(listed or figures.BOOK_FIGURES), module
    assert figures.unavailable() == {}  # this environment has every extra
