"""What ``rankflavor identify`` costs over the full knob grid on a TREC DL run.

``identify`` tries every preset and every combination of the knobs of
:data:`rankflavor.analysis.identify.space.IDENTIFY_GRID` at the stated cutoff and the common ones (about
32,000 flavors for NDCG@10). It reads and aligns the inputs once, sorts once per ordering, runs
one kernel pass per flavor that differs in more than ``empty``/``missing`` and one aggregation per
flavor. This script times it end to end from the files, on the published mean of DL19 BM25
(trec_eval ``ndcg_cut_10`` 0.5058) and on trec_eval's own ``-q`` output, and splits the time
into building the flavor space and evaluating it.

Usage::

    python3 bench/bench_identify.py              # ../shared/data DL19 qrels + BM25 run
    python3 bench/bench_identify.py --repeat 3

Timings are wall-clock on whatever else the machine is doing: the best of ``--repeat`` runs.
Target: at most 10 s on two cores.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qrels", type=Path, default=DATA / "qrels" / "qrels.dl19-passage.txt")
    ap.add_argument("--run", type=Path, default=DATA / "runs" / "rankllm.dl19.bm25.top100.run")
    ap.add_argument("--per-query", type=Path, default=DATA / "expected" / "rankllm.dl19.bm25.top100.all_trec.q.c.txt")
    ap.add_argument("--value", default="0.5058")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()

    from rankflavor.analysis.identify import identify
    from rankflavor.analysis.identify.space import flavor_space
    from rankflavor.analysis.spread.api import one_measure

    t = time.perf_counter()
    entries, _ = flavor_space(one_measure("ndcg@10"))
    space = time.perf_counter() - t
    print(f"flavor space: {len(entries)} flavors built in {space:.2f} s")
    for label, kwargs in (("mean only", {"value": args.value}), ("trec_eval -q text", {"per_query": args.per_query})):
        best = float("inf")
        found = None
        for _ in range(args.repeat):
            t = time.perf_counter()
            found = identify(args.qrels, args.run, measure="ndcg@10", **kwargs)  # type: ignore[arg-type]
            best = min(best, time.perf_counter() - t)
        assert found is not None
        presets = sorted({p for c in found.candidates for p in c.presets})
        print(f"{label}: {found.n_flavors} flavors in {best:.2f} s end to end; {len(found.candidates)} candidates "
              f"in {len(found.groups)} group(s); trec_eval among them: {'trec_eval' in presets}")


if __name__ == "__main__":
    main()
