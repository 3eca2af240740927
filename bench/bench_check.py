"""What ``rankflavor check`` costs, as a multiple of evaluating NDCG@10 on the same files.

``check`` reads each file as ``eval`` does (columnar), reads the run's rank column once more,
codes the ids the way alignment does, and runs its table checks (duplicates, equal scores, ties,
ranks against scores, the overlap with the judgments) in columnar passes. This script times, in
alternating rounds on the same files:

* eval: ``rankflavor.evaluate(qrels, run, "ndcg@10")``;
* check: ``rankflavor.check(qrels, run)``;
* one bad line: a copy of the run whose last line lacks its score, which the columnar read
  refuses: ``eval`` reads it line by line up to that line and stops with the error; ``check``
  reads it once in the collecting line pass, and checks the good lines.

end to end from the files, and prints the best of ``--repeat`` rounds of each and the ratios.

Usage::

    python3 bench/bench_check.py                                  # bench/data/*.7000x1000.txt
    python3 bench/bench_check.py --size 2000x1000 --data DIR      # DIR/qrels.2000x1000.txt ...
    python3 bench/bench_check.py --qrels Q --run R --repeat 3

Timings are wall-clock on whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="7000x1000")
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--qrels", type=Path, default=None)
    ap.add_argument("--run", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-bad-line", action="store_true", help="skip the run with one bad line")
    args = ap.parse_args(argv)
    qrels = args.qrels or args.data / f"qrels.{args.size}.txt"
    run = args.run or args.data / f"run.{args.size}.txt"
    if not (qrels.exists() and run.exists()):
        print(f"missing {qrels} or {run}: make them with bench/generate.py --sizes {args.size}", file=sys.stderr)
        return 2

    import rankflavor

    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "bad.run"
        if not args.no_bad_line:
            shutil.copyfile(run, bad)
            with open(bad, "ab") as fh:
                fh.write(b"q-bad Q0 d 1\n")
        best = {"eval": float("inf"), "check": float("inf"), "bad": float("inf"), "eval_bad": float("inf")}
        report = bad_report = None
        for _ in range(args.repeat):  # alternate, so drift in the machine's load hits all alike
            t = time.perf_counter()
            rankflavor.evaluate(qrels, run, "ndcg@10")
            best["eval"] = min(best["eval"], time.perf_counter() - t)
            t = time.perf_counter()
            report = rankflavor.check(qrels, run)
            best["check"] = min(best["check"], time.perf_counter() - t)
            if not args.no_bad_line:
                t = time.perf_counter()
                try:
                    rankflavor.evaluate(qrels, bad, "ndcg@10")
                except rankflavor.InputError:
                    pass
                best["eval_bad"] = min(best["eval_bad"], time.perf_counter() - t)
                t = time.perf_counter()
                bad_report = rankflavor.check(qrels, bad)
                best["bad"] = min(best["bad"], time.perf_counter() - t)
    assert report is not None
    o = report.overlaps[0]
    print(f"data      {run.name} ({qrels.name}), {o.run_rows:,} run rows, {o.common_queries} common queries")
    print(f"eval      {best['eval']:.3f} s   ndcg@10")
    print(f"check     {best['check']:.3f} s   {best['check'] / best['eval']:.2f}x eval   status {report.status}")
    if bad_report is not None:
        print(f"bad line  eval refuses it in {best['eval_bad']:.3f} s; check {best['bad']:.3f} s "
              f"({best['bad'] / best['eval_bad']:.2f}x), {bad_report.total('malformed_line')} malformed line(s) found")
    print(f"(best of {args.repeat})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
