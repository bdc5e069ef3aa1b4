"""Command line: ``python -m slrlib figure NAME [NAME ...] --out DIR`` and ``python -m slrlib figure --list``.

``--help`` and ``--version`` answer without importing JAX (``import slrlib`` loads nothing). The
figure command is an application: it switches its own process's JAX to float64 and to slrlib's
faster Threefry lowering (the same random bits), as the book does.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m slrlib", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--version", action="version", version=f"slrlib {_version()}"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    fig = sub.add_parser(
        "figure",
        help="regenerate figures of the book (PDF, PNG and the plotted data as CSV)",
    )
    fig.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="figure names (see --list), or 'all'",
    )
    fig.add_argument(
        "--out",
        default="figures",
        help="output directory (default: ./figures)",
    )
    fig.add_argument(
        "--list", action="store_true", help="list the figure names and exit"
    )
    fig.add_argument(
        "--bench",
        default="_build/bench.json",
        help="with --list: also show the warm seconds that this `make bench` file records "
        "(default: _build/bench.json, when it exists)",
    )
    fig.add_argument(
        "--dpi",
        type=int,
        default=200,
        help="PNG resolution (default: 200, as the book shows it)",
    )
    args = parser.parse_args(argv)

    from slrlib.extras import require

    try:
        require("matplotlib", "python -m slrlib figure").use("Agg")
    except ModuleNotFoundError as err:
        parser.exit(2, f"{parser.prog}: {err}\n")
    import jax

    jax.config.update("jax_enable_x64", True)  # slrlib computes in float64
    from slrlib import figures
    from slrlib.threefry import use_unrolled_threefry

    use_unrolled_threefry()  # the same random bits, faster on CPU

    if args.list:
        _print_list(figures, args.bench)
        return 0
    if not args.names:
        parser.error("figure: give at least one NAME, 'all', or --list")
    known = figures.names() + sorted(figures.unavailable())
    wanted = known if args.names == ["all"] else args.names
    unknown = [n for n in wanted if n not in known]
    if unknown:
        parser.error(f"unknown figure name(s) {unknown}; known: {known}")
    missing = {
        n: figures.unavailable()[n]
        for n in wanted
        if n in figures.unavailable()
    }
    if missing:
        extras = ",".join(sorted(set().union(*missing.values())))
        parser.exit(
            2,
            f'{parser.prog}: {", ".join(missing)}: pip install "slrlib[{extras}]"\n',
        )
    for name in wanted:
        info = figures.write_figure(name, args.out, dpi=args.dpi)
        paths = ", ".join(str(p) for p in info["paths"])
        print(
            f"{name}: computed in {info['compute_seconds']:.1f} s, wrote {paths}"
        )
    return 0


def _print_list(figures, bench_path: str) -> None:
    """Each figure's name, chapter, cost and title; the warm seconds of the last bench where it has them."""
    import json
    from pathlib import Path

    recorded = figures.recorded_costs()
    machine = recorded.get("machine", {})
    bench = Path(bench_path)
    warm = {}
    if bench.is_file():
        warm = {
            k: v["seconds"]
            for k, v in json.loads(bench.read_text()).items()
            if isinstance(v, dict) and "seconds" in v
        }
    print(
        f"cost: seconds that `python -m slrlib figure NAME` took in a fresh process, nothing cached, on "
        f"{machine.get('cpu', '?')} ({machine.get('cores', '?')} cores, {machine.get('date', '?')}); "
        "yours may be slower"
    )
    if warm:
        print(f"warm: the median warm compute time in {bench}")
    print(
        f"{'name':<24} {'ch':>2}  {'cost':<18}"
        + (f" {'warm':>7}" if warm else "")
        + "  title"
    )
    for name in figures.names():
        spec = figures.get(name)
        seconds, label = figures.cost(name)
        text = label if seconds is None else f"{seconds:5.0f} s ({label})"
        extra = (
            (f" {warm[name]:6.1f}s" if name in warm else f" {'':>7}")
            if warm
            else ""
        )
        print(f"{name:<24} {spec.chapter:>2}  {text:<18}{extra}  {spec.title}")
    for name, extras in sorted(
        figures.unavailable().items(), key=lambda item: (item[1], item[0])
    ):
        print(
            f'{name:<24} {"":>2}  needs pip install "slrlib[{",".join(extras)}]"'
        )


def _version() -> str:
    """slrlib's version (``import slrlib`` loads no JAX, so this is fast)."""
    import slrlib

    return slrlib.__version__


if __name__ == "__main__":
    sys.exit(main())
