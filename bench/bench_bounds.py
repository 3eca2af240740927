"""What coverage and bounds cost, as a multiple of plain NDCG@10, on a large run.

``rankflavor.judgments(qrels, run, ["ndcg@10"], scale="trec_dl")`` reads the inputs once, aligns
them once and ranks the run once: the coverage of the top 10 comes from that ranking, the lower
bound and the zero-imputed value are the plain evaluation, the condensed value a second ordering
of the same alignment, and the upper bound one more evaluation of the measure on the top 10 rows
of each query with the unjudged ones judged G. This script times, in alternating rounds on the
same files:

* plain: ``rankflavor.evaluate(qrels, run, "ndcg@10")``;
* bounds: ``rankflavor.judgments(qrels, run, ["ndcg@10"], scale="trec_dl")`` (coverage + bounds);

end to end from the files, and prints the best of ``--repeat`` rounds of each and their ratio.

Usage::

    python3 bench/bench_bounds.py                                  # bench/data/*.7000x1000.txt
    python3 bench/bench_bounds.py --qrels Q --run R --repeat 3
    python3 bench/bench_bounds.py --size 1000x100                  # a quick run

Timings are wall-clock on whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="7000x1000")
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--qrels", type=Path, default=None)
    ap.add_argument("--run", type=Path, default=None)
    ap.add_argument("--measure", default="ndcg@10")
    ap.add_argument("--scale", default="trec_dl")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    qrels = args.qrels or args.data / f"qrels.{args.size}.txt"
    run = args.run or args.data / f"run.{args.size}.txt"
    if not (qrels.exists() and run.exists()):
        print(f"missing {qrels} or {run}: make them with bench/generate.py --sizes {args.size}", file=sys.stderr)
        return 2

    import rankflavor

    best = {"plain": float("inf"), "bounds": float("inf")}
    cov = None
    for _ in range(args.repeat):  # alternate, so drift in the machine's load hits both alike
        t = time.perf_counter()
        plain = rankflavor.evaluate(qrels, run, args.measure)
        best["plain"] = min(best["plain"], time.perf_counter() - t)
        t = time.perf_counter()
        cov = rankflavor.judgments(qrels, run, [args.measure], scale=args.scale)
        best["bounds"] = min(best["bounds"], time.perf_counter() - t)
    assert cov is not None
    b = cov.runs[0].bounds[0]
    assert abs(b.lower_mean - plain[0].mean) < 1e-12, (b.lower_mean, plain[0].mean)
    print(f"data      {run.name} ({qrels.name}), {len(cov.runs[0].queries)} queries")
    print(f"measure   {args.measure}  scale {args.scale}")
    print(f"plain     {best['plain']:.3f} s   mean {plain[0].mean:.4f}")
    print(f"bounds    {best['bounds']:.3f} s   {b.value_mean:.4f} [{b.lower_mean:.4f}, {b.upper_mean:.4f}]  "
          f"condensed {b.condensed_mean:.4f}  judged@k {cov.runs[0].mean_judged:.4f}")
    print(f"ratio     {best['bounds'] / best['plain']:.2f}x  (best of {args.repeat})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
