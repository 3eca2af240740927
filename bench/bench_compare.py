"""``rankflavor.compare`` against ranx's ``compare`` on the same 10 runs x 7,000 queries, side by side.

The 10 runs are made from the bench data (``run.SIZE.txt``, ``qrels.SIZE.txt`` of
``bench/generate.py``): run ``i`` is the base run with seeded Gaussian noise of standard deviation
``0.1 * i`` times the spread of the scores added to every score, cut to its top ``--depth``
documents per query (default 100: 700,000 rows per run, 7 M in all). They are built once, in
memory, before anything is timed, as each tool's own input: ranx ``Qrels``/``Run`` objects and
pandas DataFrames (``query_id, doc_id, score|relevance``) for rankflavor (ranx's objects are
built from the same rows as ``{query: {doc: value}}``).

What is timed, in alternating rounds (the best round of ``--repeat`` kept for each):

* ranx: ``ranx.compare(qrels, runs, ["ndcg@10"], stat_test="fisher", n_permutations=N,
  random_seed=0)``: NDCG@10 of every run, then Fisher's randomization test on each of the 45
  pairs (ranx's numba kernels, compiled in a warm-up call on a small slice first, not timed; rankflavor
  gets the same warm-up, which imports SciPy).
* rankflavor, the same work: ``rankflavor.compare(qrels_df, runs_df, "ranx:ndcg@10",
  tests=("permutation",), correction="holm", n_resamples=N, ci_level=None)``: the tables
  converted, aligned and evaluated in ranx's flavor, the 45 pairs tested with one batched sign
  matrix (Smyth-Phipson p-values), Holm's correction, wins/losses/ties, Cohen's d, content
  hashes of the inputs.
* rankflavor's default report (``--full``): as above plus the paired t-test, the bootstrap test
  and BCa bootstrap CIs of the 10 means and the 45 differences (N resamples each).

The mean NDCG@10 of each run is printed for both tools (they agree to 1e-9: the same flavor).

Usage::

    python3 bench/bench_compare.py --data /work/base/bench/data            # 7000x1000, N = 1,000
    python3 bench/bench_compare.py --size 1000x100 --permutations 1000     # a quick run
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
N_RUNS = 10


def _data(size: str, out: Path) -> tuple[Path, Path]:
    sys.path.insert(0, str(HERE))
    from generate import ensure  # bench/generate.py

    return ensure(size, out)


def make_runs(run_path: Path, depth: int) -> list[Any]:
    """The 10 perturbed runs as pandas DataFrames (``query_id, doc_id, score``), top ``depth`` per query."""
    import pandas as pd

    import rankflavor

    run = rankflavor.read_run(run_path)
    query = np.asarray(run.query.to_pandas(), dtype=object)
    doc = np.asarray(run.doc.to_pandas(), dtype=object)
    codes = np.unique(query, return_inverse=True)[1]
    score = run.score.astype(np.float64)
    spread = float(score.std()) or 1.0
    runs = []
    for i in range(N_RUNS):
        noisy = score + np.random.default_rng(i).normal(0.0, 0.1 * i * spread, len(score))
        order = np.lexsort((-noisy, codes))
        starts = np.r_[0, np.flatnonzero(np.diff(codes[order])) + 1]
        rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
        keep = order[rank < depth]
        runs.append(pd.DataFrame({"query_id": query[keep], "doc_id": doc[keep], "score": noisy[keep]}))
    return runs


def nested(df: Any, value: str) -> dict[str, dict[str, float]]:
    """``{query: {doc: value}}``, the input ranx builds its Qrels and Run from."""
    out: dict[str, dict[str, float]] = {}
    for q, d, v in zip(df["query_id"].tolist(), df["doc_id"].tolist(), df[value].tolist(), strict=True):
        out.setdefault(q, {})[d] = v
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="7000x1000", help="QUERIESxDOCS of bench/generate.py data")
    parser.add_argument("--data", type=Path, default=HERE / "data", help="folder of qrels.SIZE.txt / run.SIZE.txt")
    parser.add_argument("--depth", type=int, default=100, help="documents kept per query in each run")
    parser.add_argument("--permutations", type=int, default=1000,
                        help="permutations, both tools (default ranx's own default, 1000)")
    parser.add_argument("--repeat", type=int, default=2, help="alternating rounds; the best is kept")
    parser.add_argument("--full", action="store_true", help="also time rankflavor's default report")
    args = parser.parse_args(argv)

    import pandas as pd
    import ranx  # type: ignore[import-untyped]

    import rankflavor

    qrels_path, run_path = _data(args.size, args.data)
    t = time.perf_counter()
    frames = make_runs(run_path, args.depth)
    q = rankflavor.read_qrels(qrels_path)
    qrels_df = pd.DataFrame({"query_id": np.asarray(q.query.to_pandas(), dtype=object),
                             "doc_id": np.asarray(q.doc.to_pandas(), dtype=object), "relevance": q.grade.astype(np.int64)})
    # judged queries the base run does not answer are left out, so both tools score the same queries
    qrels_df = qrels_df[qrels_df["query_id"].isin(set(frames[0]["query_id"].unique()))]
    names = [f"run{i}" for i in range(N_RUNS)]
    r_qrels = ranx.Qrels(nested(qrels_df, "relevance"))
    r_runs = [ranx.Run(nested(f, "score"), name=n) for f, n in zip(frames, names, strict=True)]
    runs = dict(zip(names, frames, strict=True))
    n_q = frames[0]["query_id"].nunique()
    print(f"{N_RUNS} runs x {n_q:,} queries, top {args.depth} each ({sum(len(f) for f in frames):,} rows); "
          f"{len(qrels_df):,} judgments; {args.permutations:,} permutations (built in {time.perf_counter() - t:.1f} s)")

    # ranx compiles its kernels on first use: once on a small slice, untimed.
    few = set(frames[0]["query_id"].unique()[:50])
    small = [ranx.Run(nested(f[f["query_id"].isin(few)], "score"), name=n)
             for f, n in zip(frames[:2], names[:2], strict=True)]
    ranx.compare(ranx.Qrels(nested(qrels_df[qrels_df["query_id"].isin(few)], "relevance")), small, ["ndcg@10"],
                 stat_test="fisher", n_permutations=100, random_seed=0)
    # rankflavor's first call imports SciPy (its statistics): once on the same slice, untimed.
    rankflavor.compare(qrels_df[qrels_df["query_id"].isin(few)], {n: f[f["query_id"].isin(few)] for n, f in
                       zip(names[:2], frames[:2], strict=True)}, "ranx:ndcg@10", n_resamples=100)

    def run_ranx() -> Any:
        return ranx.compare(r_qrels, r_runs, ["ndcg@10"], stat_test="fisher", n_permutations=args.permutations,
                            random_seed=0)

    def run_rf() -> Any:
        return rankflavor.compare(qrels_df, runs, "ranx:ndcg@10", tests=("permutation",), correction="holm",
                                  n_resamples=args.permutations, ci_level=None)

    def run_full() -> Any:
        return rankflavor.compare(qrels_df, runs, "ranx:ndcg@10", correction="holm", n_resamples=args.permutations)

    timed = [("ranx.compare (fisher)", run_ranx), ("rankflavor.compare (permutation)", run_rf)]
    if args.full:
        timed.append(("rankflavor.compare (t, permutation, bootstrap, CIs)", run_full))
    best = {name: float("inf") for name, _ in timed}
    out: dict[str, Any] = {}
    for rnd in range(args.repeat):
        for name, fn in (timed if rnd % 2 == 0 else timed[::-1]):
            t = time.perf_counter()
            out[name] = fn()
            best[name] = min(best[name], time.perf_counter() - t)
    report, comp = out["ranx.compare (fisher)"], out["rankflavor.compare (permutation)"]
    rf_means = {s.name: s.mean for s in comp[0].systems}
    gap = max(abs(rf_means[n] - float(report.results[n]["ndcg@10"])) for n in names)
    print(f"mean NDCG@10 run0..run9: {' '.join(f'{rf_means[n]:.4f}' for n in names)} (largest gap to ranx {gap:.1e})")
    agree = sum((report.comparisons[(p.a, p.b)]["ndcg@10"]["p_value"] < 0.01) == (p.pvalues["permutation"] < 0.01)
                for p in comp[0].pairs)
    print(f"pairs with p < 0.01 by both tools' raw p-values agreeing: {agree} of {len(comp[0].pairs)}")
    for name, _ in timed:
        print(f"{name:<52} {best[name]:8.2f} s")
    ratio = best["ranx.compare (fisher)"] / best["rankflavor.compare (permutation)"]
    print(f"ranx / rankflavor, the same work: {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
