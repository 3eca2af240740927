"""What a flavor spread costs, as a multiple of one evaluation, on a large run.

``rankflavor spread`` evaluates one measure under a grid of flavors (default: gain x discount x
ideal x unjudged x ties = 48 cells) plus every preset's flavor. It reads and aligns the inputs
once and sorts once per distinct combination of ordering knobs; each flavor then costs one kernel
pass. This script measures, on the same files:

* one evaluation: ``rankflavor.evaluate(qrels, run, "ndcg@10")``;
* the spread: ``rankflavor.spread(qrels, run, "ndcg@10")`` (default grid plus presets);

both end to end from the files and with the tables already read, prints the ratios, and splits
the spread's time into reading, alignment, sorting (one line per distinct ordering) and kernels.

Usage::

    python3 bench/bench_spread.py                       # bench/data/*.7000x1000.txt (generated if absent)
    python3 bench/bench_spread.py --size 1000x100       # a quick run
    python3 bench/bench_spread.py --no-presets --repeat 3

Timings are wall-clock on whatever else the machine is doing: the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _data(size: str, out: Path) -> tuple[Path, Path]:
    sys.path.insert(0, str(HERE))
    from generate import ensure  # bench/generate.py

    return ensure(size, out)


def _best(repeat: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t)
    return best, value


class _Timers:
    """Wrap the stage functions spread.py calls, summing wall time per stage and per ordering."""

    def __init__(self) -> None:
        self.total: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.sorts: list[tuple[str, float]] = []

    def install(self) -> Callable[[], None]:
        import importlib

        from rankflavor.order import Ranker

        # The plan aligns, ranks (through its Ranker) and aggregates for spread.
        pl: Any = importlib.import_module("rankflavor.engine.plan")

        saved = (pl.align, Ranker.rank, pl.aggregate, pl.Evaluation.evaluate)

        def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                t = time.perf_counter()
                try:
                    return fn(*args, **kwargs)
                finally:
                    dt = time.perf_counter() - t
                    self.total[name] += dt
                    self.calls[name] += 1
                    if name == "rank":
                        o = args[1]  # (self, ordering)
                        label = " ".join(f"{k}={v}" for k, v in vars(o).items())
                        self.sorts.append((label, dt))

            return wrapper

        pl.align = timed("align", saved[0])
        Ranker.rank = timed("rank", saved[1])  # type: ignore[method-assign]
        pl.aggregate = timed("aggregate", saved[2])
        pl.Evaluation.evaluate = timed("evaluate", saved[3])

        def restore() -> None:
            pl.align, Ranker.rank, pl.aggregate, pl.Evaluation.evaluate = saved

        return restore


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="7000x1000", help="QUERIESxDOCS of bench/generate.py data (default 7000x1000)")
    parser.add_argument("--data", type=Path, default=HERE / "data", help="folder of qrels.SIZE.txt / run.SIZE.txt")
    parser.add_argument("--measure", default="ndcg@10")
    parser.add_argument("--no-presets", action="store_true", help="grid only (48 flavors)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per timing; the best is kept")
    args = parser.parse_args(argv)

    import rankflavor
    from rankflavor.engine.plan import Evaluation

    qrels_path, run_path = _data(args.size, args.data)
    presets = not args.no_presets

    t_read, (qrels, run) = _best(1, lambda: (rankflavor.read_qrels(qrels_path), rankflavor.read_run(run_path)))
    print(f"data: {run_path.name}: {len(run):,} run rows, {len(qrels):,} judgments (read in {t_read:.2f} s)")

    t_eval_files, _ = _best(args.repeat, lambda: rankflavor.evaluate(str(qrels_path), str(run_path), args.measure))
    t_spread_files, s = _best(args.repeat, lambda: rankflavor.spread(str(qrels_path), str(run_path), args.measure,
                                                                      presets=presets))
    t_eval_mem, _ = _best(args.repeat, lambda: rankflavor.evaluate(qrels, run, args.measure))
    timers = _Timers()
    restore = timers.install()
    try:
        t_spread_mem, s_mem = _best(1, lambda: rankflavor.spread(qrels, run, args.measure, presets=presets))
    finally:
        restore()

    n_flavors = len(s.flavors)
    n_orderings = len({Evaluation.key(f.measure) for f in s.flavors})
    n_grid = sum(1 for f in s.flavors if f.cell is not None)
    print(f"spread: {n_flavors} flavors ({n_grid} grid cells + presets), {n_orderings} distinct orderings, "
          f"{len(s.errors)} refused by their policy")
    print()
    print(f"{'':38} {'evaluate':>10} {'spread':>10} {'ratio':>7}")
    print(f"{'end to end from the files':38} {t_eval_files:>9.2f}s {t_spread_files:>9.2f}s "
          f"{t_spread_files / t_eval_files:>7.2f}")
    print(f"{'tables already read':38} {t_eval_mem:>9.2f}s {t_spread_mem:>9.2f}s {t_spread_mem / t_eval_mem:>7.2f}")
    print(f"{'per flavor (files)':38} {'':>10} {t_spread_files / n_flavors:>9.3f}s "
          f"{t_spread_files / n_flavors / t_eval_files:>7.3f}")
    print()
    kernels = timers.total["evaluate"] - timers.total["rank"] - timers.total["aggregate"] - timers.total["align"]
    print("where the spread's time goes (tables already read):")
    print(f"  align            {timers.calls['align']:>3} x {timers.total['align']:>8.2f} s")
    print(f"  rank (sorting)   {timers.calls['rank']:>3} x {timers.total['rank']:>8.2f} s")
    for label, dt in sorted(timers.sorts, key=lambda t: -t[1]):
        print(f"      {dt:>8.2f} s  {label}")
    print(f"  kernels          {timers.calls['evaluate']:>3} x {kernels:>8.2f} s")
    print(f"  aggregate        {timers.calls['aggregate']:>3} x {timers.total['aggregate']:>8.2f} s")
    other = t_spread_mem - timers.total["evaluate"]
    print(f"  other (setup)          {other:>8.2f} s")
    print(f"  reading the files (the files ratio only)  {t_read:>6.2f} s")
    print()
    print(f"ratio {t_spread_files / t_eval_files:.2f}")
    assert s_mem.means.shape == s.means.shape
    return 0


if __name__ == "__main__":
    sys.exit(main())
