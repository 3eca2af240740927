"""How long the small commands take as a person meets them: each one a whole process, from
interpreter start-up to its last line (issue #34: ``raters`` on a small file under 1 s).

The commands run round-robin (one round runs each once, in turn, never two at a time), after one
unmeasured warm-up round; each line gives the median and the range over ``--repeat`` rounds of
wall-clock time, and the machine's load average before and after, since a busy machine slows
every figure.

Usage (from the repository's root, rankflavor installed or on ``PYTHONPATH``)::

    python3 bench/bench_cli.py              # 9 rounds
    python3 bench/bench_cli.py --repeat 21
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: label -> arguments of ``python -m rankflavor``
COMMANDS: dict[str, list[str]] = {
    "--version": ["--version"],
    "eval --help": ["eval", "--help"],
    "raters (11 ratings)": ["raters", "examples/ratings.csv", "--scale", "trec_dl"],
    "raters --format json": ["raters", "examples/ratings.csv", "--scale", "trec_dl", "--format", "json"],
    "aggregate (11 ratings)": ["aggregate", "examples/ratings.csv", "--rule", "median", "--scale", "trec_dl"],
}


def _once(args: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rankflavor", *args], cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=9, help="measured rounds (default 9)")
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    for argv in COMMANDS.values():  # warm-up: the page cache, .pyc files
        _once(argv)
    times: dict[str, list[float]] = {label: [] for label in COMMANDS}
    for _ in range(args.repeat):
        for label, argv in COMMANDS.items():
            times[label].append(_once(argv))
    load_after = os.getloadavg()[0]
    print(f"{args.repeat} rounds, whole process, wall clock; load average {load_before:.2f} before, "
          f"{load_after:.2f} after")
    width = max(map(len, COMMANDS))
    for label, ts in times.items():
        print(f"  {label:<{width}}  median {statistics.median(ts):.2f} s  (range {min(ts):.2f}-{max(ts):.2f} s)")


if __name__ == "__main__":
    main()
