"""One command on two source trees, side by side: is a change of the code free?

Usage::

    git worktree add /tmp/base <rev>          # the tree to compare with
    python3 bench/trees.py /tmp/base/src      # this checkout's src against it
    python3 bench/trees.py /tmp/base/src --pairs 7 --case eval-text

Each case is one whole ``python -m rankflavor`` process on the 7M-line files of
``bench/generate.py`` (made by ``python3 bench/readme.py --big`` when missing): ``eval-int`` is
mean NDCG@10 under trec_eval's preset of the integer-docno run in rank order, ``eval-text`` the
same of the text-docno run whose tied scores are in random order; ``parquet-int`` and
``parquet-text`` the same of their Parquet copies (``rankflavor convert``, as ``bench/readme.py``
makes them), ``cli-small`` the 1000 x 100 files. The two trees run in turn
(A B, then B A, ..., after one unmeasured pair, as ``bench/readme.py`` pairs its figures), each with
its own ``PYTHONPATH``; the ratio A/B is taken pair by pair, and the median and range of each figure are printed. The values the two trees
print are compared too: a faster tree that computes another number is no result.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from readme import DATA, spread_of  # noqa: E402
from run import _precompile, spawn  # noqa: E402

TIMEOUT = 600.0
CASES = {
    "eval-int": ("qrels.7000x1000.txt", "run.7000x1000.txt"),
    "eval-text": ("qrels.7000x1000.text.txt", "run.7000x1000.text.shuffled.txt"),
    "parquet-int": ("qrels.7000x1000.parquet", "run.7000x1000.parquet"),
    "parquet-text": ("qrels.7000x1000.text.parquet", "run.7000x1000.text.shuffled.parquet"),
    "cli-small": ("qrels.1000x100.txt", "run.1000x100.txt"),
}


def command(qrels: Path, run: Path) -> list[str]:
    return [sys.executable, "-m", "rankflavor", "eval", str(qrels), str(run), "-m", "ndcg_cut.10", "--preset",
            "trec_eval", "--format", "json", "--quiet"]


def once(cmd: list[str], src: str) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MiB) and standard output of one whole process on tree ``src``."""
    wall, peak_kb, out = spawn(cmd, TIMEOUT, {**os.environ, "PYTHONPATH": src})
    return wall, peak_kb / 1024, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="the src folder of the tree to compare with (B)")
    parser.add_argument("--src", default=str(HERE.parent / "src"), help="this tree's src folder (A)")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    args = parser.parse_args(argv)
    print(f"A = {args.src}\nB = {args.base}\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}\n")
    _precompile(args.src, args.base)  # both trees from their .pyc files, whatever PYTHONDONTWRITEBYTECODE says
    print("| case | A wall s | B wall s | A/B wall | A/B peak memory |")
    print("|---|---:|---:|---:|---:|")
    for case in args.case or sorted(CASES):
        qrels, run = (DATA / name for name in CASES[case])
        if not (qrels.exists() and run.exists()):
            raise SystemExit(f"{run} is missing: make it with `python3 bench/readme.py --big --only {case}`")
        cmd = command(qrels, run)
        once(cmd, args.src), once(cmd, args.base)  # warm-up pair (file cache, .pyc)
        a_wall, b_wall, ratio, memory = [], [], [], []
        for k in range(args.pairs):
            if k % 2 == 0:
                wa, ma, oa = once(cmd, args.src)
                wb, mb, ob = once(cmd, args.base)
            else:
                wb, mb, ob = once(cmd, args.base)
                wa, ma, oa = once(cmd, args.src)
            if oa != ob:
                raise SystemExit(f"{case}: the two trees print different results")
            a_wall.append(wa), b_wall.append(wb), ratio.append(wa / wb), memory.append(ma / mb)
        print(f"| {case} | {spread_of(a_wall)} | {spread_of(b_wall)} | {spread_of(ratio, 3)} | {spread_of(memory, 3)} |")
    print(f"\nload after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
