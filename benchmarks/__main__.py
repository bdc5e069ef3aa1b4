"""``make bench``: time the paper's PGD and SGD configurations at full scale.

For each of Figures 4(a), 4(b), 7(a), 7(b) (``slrlib.experiments.PGD_CONFIGS``: d = 400,
L = 10, 30 runs, 20 000 or 120 000 steps, every step computed with exact gradients) it runs
:func:`slrlib.experiments.run_pgd_experiment` once cold (compilation included) and then
``--repeats`` times warm, and reports the median warm time, the run-steps (runs × steps)
and the microseconds per run-step. As a baseline on the same machine it also times
:func:`slrlib.dynamics.pgd_dense` — Definition 1 written literally in R^d with ``vmap``-style
batching and ``lax.scan``, the "plain JAX" approach — on a shorter run of the same
configuration, and prints the ratio.

Then Figure 5 (``slrlib.experiments.SGD_CONFIGS["fig5"]``: stochastic PGD, 30 runs × 200 000
steps, batch 5, d = 80, L = 10, held-out risk of 1 000 samples logged every 500 steps): once
cold and ``--sgd-repeats`` times warm with the exact low-dimensional sampler, and, as the
baseline, the plain sampler (whole batches, ``jax.grad``) on a shorter run of the same
configuration.

Writes ``_build/bench.json``::

    {"fig4a": {"seconds": ..., "run_steps": ..., "us_per_run_step": ..., ...}, ...}

``seconds`` is the median warm wall time; ``cold_seconds`` the first call's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

GOAL_TOTAL_SECONDS = 20.0
GOAL_US_PER_RUN_STEP = 2.4
AUTHORS_US_PER_STEP = 340.0  # the authors' public code, one run per step, measured on this machine type
GOAL_FIG5_SECONDS = 60.0
AUTHORS_SGD_US_PER_STEP = 540.0  # the authors' public SGD code, one run per step, same machine type


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="warm repetitions per configuration (median reported)")
    parser.add_argument("--dense-steps", type=int, default=2_000, help="steps of the d-dimensional baseline")
    parser.add_argument("--sgd-repeats", type=int, default=1, help="warm repetitions of Figure 5")
    parser.add_argument("--plain-steps", type=int, default=10_000, help="steps of the plain-sampler baseline")
    parser.add_argument("--out", default="_build/bench.json")
    args = parser.parse_args(argv)

    import jax

    import slrlib  # noqa: F401  (float64)
    from slrlib.dynamics import pgd_dense
    from slrlib.experiments import PGD_CONFIGS, _initialisation, run_pgd_experiment

    results: dict[str, dict] = {}
    print(f"PGD at the paper's parameters: {len(PGD_CONFIGS)} configurations, "
          f"median of {args.repeats} warm runs (cold = first call, compilation included)")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"jax {jax.__version__} on {jax.default_backend()}")
    header = (f"{'figure':<7} {'runs×steps':>11} {'cold s':>7} {'warm s':>7} {'µs/run-step':>12} "
              f"{'dense µs/run-step':>18} {'dense/span':>10}")
    print(header)
    print("-" * len(header))
    for name, cfg in PGD_CONFIGS.items():
        cold = _time(lambda: run_pgd_experiment(name))
        warm = [_time(lambda: run_pgd_experiment(name)) for _ in range(args.repeats)]
        seconds = statistics.median(warm)
        run_steps = cfg.run_steps
        # Baseline: the literal d-dimensional iteration, same configuration, fewer steps.
        n_dense = min(args.dense_steps, cfg.n_steps)
        log_every = n_dense // 10
        k_star, v_star, k0, v0 = _initialisation(cfg, jax.random.key(cfg.seed))
        run_dense = lambda: jax.block_until_ready(pgd_dense(  # noqa: E731
            k0, v0, k_star, v_star, cfg.task, lam=cfg.lam, alpha=cfg.alpha, n_steps=n_dense,
            schedule=cfg.schedule, log_every=log_every).kappa)
        run_dense()  # compile
        dense_s = statistics.median(_time(run_dense) for _ in range(args.repeats))
        dense_us = dense_s / (cfg.n_runs * n_dense) * 1e6
        us = seconds / run_steps * 1e6
        results[name] = {
            "seconds": seconds,
            "run_steps": run_steps,
            "us_per_run_step": us,
            "cold_seconds": cold,
            "warm_seconds": warm,
            "dense_us_per_run_step": dense_us,
            "dense_over_span": dense_us / us,
        }
        print(f"{name:<7} {run_steps:>11,} {cold:>7.2f} {seconds:>7.2f} {us:>12.3f} {dense_us:>18.2f} "
              f"{dense_us / us:>10.1f}")
    total_warm = sum(r["seconds"] for r in results.values())
    total_cold = sum(r["cold_seconds"] for r in results.values())
    total_steps = sum(r["run_steps"] for r in results.values())
    print("-" * len(header))
    print(f"{'total':<7} {total_steps:>11,} {total_cold:>7.2f} {total_warm:>7.2f} "
          f"{total_warm / total_steps * 1e6:>12.3f}")
    worst = max(r["us_per_run_step"] for r in results.values())
    print(f"goal: four together <= {GOAL_TOTAL_SECONDS:g} s (cold {total_cold:.1f} s, warm {total_warm:.1f} s), "
          f"<= {GOAL_US_PER_RUN_STEP} µs per run-step (worst {worst:.3f}): "
          f"{'met' if max(total_cold, total_warm) <= GOAL_TOTAL_SECONDS and worst <= GOAL_US_PER_RUN_STEP else 'NOT met'}")
    print(f"the authors' code steps one run at about {AUTHORS_US_PER_STEP:g} µs per step on this machine type "
          f"(measured): {total_steps * AUTHORS_US_PER_STEP * 1e-6 / 60:.0f} min for these run-steps, "
          f"{AUTHORS_US_PER_STEP / (total_warm / total_steps * 1e6):,.0f} times the warm time here")
    results["fig5"] = _bench_fig5(args)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


def _bench_fig5(args) -> dict:
    from slrlib.experiments import SGD_CONFIGS, run_sgd_experiment

    cfg = SGD_CONFIGS["fig5"]
    print()
    print(f"Figure 5 (stochastic PGD): {cfg.n_runs} runs × {cfg.n_steps:,} steps, batch {cfg.batch_size}, "
          f"d = {cfg.d}, L = {cfg.L}, held-out {cfg.test_size} every {cfg.log_every} steps")
    cold = _time(lambda: run_sgd_experiment(cfg))
    warm = [_time(lambda: run_sgd_experiment(cfg)) for _ in range(args.sgd_repeats)]
    seconds = statistics.median(warm)
    us = seconds / cfg.run_steps * 1e6
    plain_cfg = cfg.scaled(n_steps=args.plain_steps, log_every=args.plain_steps // 10, sampler="plain")
    exact_cfg = plain_cfg.scaled(sampler="exact")
    short = {}
    for c in (plain_cfg, exact_cfg):
        run_sgd_experiment(c)  # compile
        short[c.sampler] = statistics.median(_time(lambda: run_sgd_experiment(c)) for _ in range(3))
    plain_us = short["plain"] / plain_cfg.run_steps * 1e6
    exact_short_us = short["exact"] / exact_cfg.run_steps * 1e6
    header = f"{'sampler':<28} {'runs×steps':>11} {'seconds':>8} {'µs/run-step':>12}"
    print(header)
    print("-" * len(header))
    print(f"{'exact, full run (cold)':<28} {cfg.run_steps:>11,} {cold:>8.2f} {cold / cfg.run_steps * 1e6:>12.3f}")
    print(f"{'exact, full run (warm)':<28} {cfg.run_steps:>11,} {seconds:>8.2f} {us:>12.3f}")
    print(f"{'exact, short run (warm)':<28} {exact_cfg.run_steps:>11,} {short['exact']:>8.2f} {exact_short_us:>12.3f}")
    print(f"{'plain, short run (warm)':<28} {plain_cfg.run_steps:>11,} {short['plain']:>8.2f} {plain_us:>12.3f}")
    print(f"plain / exact sampler, same short run: {plain_us / exact_short_us:.1f}×")
    print(f"goal: Figure 5 <= {GOAL_FIG5_SECONDS:g} s (cold {cold:.1f} s, warm {seconds:.1f} s): "
          f"{'met' if max(cold, seconds) <= GOAL_FIG5_SECONDS else 'NOT met'}")
    print(f"the authors' code steps one run at about {AUTHORS_SGD_US_PER_STEP:g} µs per step on this machine type: "
          f"{cfg.run_steps * AUTHORS_SGD_US_PER_STEP * 1e-6 / 60:.0f} min for Figure 5, "
          f"{AUTHORS_SGD_US_PER_STEP / us:,.0f} times the warm time here")
    return {
        "seconds": seconds,
        "run_steps": cfg.run_steps,
        "us_per_run_step": us,
        "cold_seconds": cold,
        "warm_seconds": warm,
        "plain_us_per_run_step": plain_us,
        "exact_short_us_per_run_step": exact_short_us,
        "plain_over_exact": plain_us / exact_short_us,
    }


if __name__ == "__main__":
    sys.exit(main())
