"""Write deterministic, realistic TREC qrels and runs for the benchmarks.

The data imitates an MS MARCO-style evaluation: query and document ids are numeric strings of
varying length (never parsed as numbers by a correct tool), grades are 0-3 with most judgments
non-relevant, every query retrieves a fixed number of documents of which only some are judged,
scores are rounded so tied scores occur, and a few qrels queries are absent from the run. Files are
single-space separated like real runs (``query Q0 doc rank score tag``; ``query 0 doc grade``).

The same ``--seed`` and size always give byte-identical files.

Usage::

    python3 bench/generate.py                  # the three standard sizes into bench/data/
    python3 bench/generate.py --sizes 7000x1000 --out bench/data

Each size ``QxD`` writes ``qrels.QxD.txt`` and ``run.QxD.txt``. ``--text-docnos`` names the
documents like ``MSP-00123456`` (files ``*.QxD.text.txt``); ``--shuffle-ties`` also writes the run
with the rows of equal score of each query in random order (``run.QxD[.text].shuffled.txt``),
as real runs often have them::

    python3 bench/generate.py --sizes 7000x1000 --text-docnos --shuffle-ties
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

STANDARD_SIZES = ("1000x100", "7000x1000", "50000x1000")
#: Fraction of judged documents at grades 0..3 (a TREC DL-like skew toward non-relevant).
GRADE_SHARE = (0.55, 0.22, 0.14, 0.09)
#: Queries per block written at once, so the 50M-line run never sits in memory whole.
BLOCK = 2000


def parse_size(text: str) -> tuple[int, int]:
    """``"7000x1000"`` -> (7000 queries, 1000 documents per query)."""
    try:
        q, d = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"--sizes: expected QUERIESxDOCS such as 7000x1000, received {text!r}") from None
    if q < 1 or d < 1:
        raise SystemExit(f"--sizes: both numbers must be >= 1, received {text!r}")
    return q, d


def _ids(rng: np.random.Generator, n: int, low: int, high: int) -> np.ndarray:
    """``n`` distinct integers in [low, high), as an int64 array in random order."""
    picked = rng.choice(high - low, size=n, replace=False) + low
    return picked.astype(np.int64)


def _write(path: Path, columns: dict[str, pa.Array], append: bool) -> None:
    table = pa.table(columns)
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    with open(path, "ab" if append else "wb") as fh:
        pacsv.write_csv(table, fh, write_options=options)


def generate(
    n_queries: int, depth: int, out: Path, seed: int = 20261130, text_docnos: bool = False, shuffle_ties: bool = False
) -> tuple[Path, Path]:
    """Write ``qrels.QxD.txt`` and ``run.QxD.txt`` under ``out`` and return their paths.

    With ``text_docnos`` the same judgments and run are written with docnos such as
    ``MSP-00123456`` (BEIR/TREC style text ids) to ``qrels.QxD.text.txt`` and ``run.QxD.text.txt``.
    With ``shuffle_ties`` the run is written to ``run.QxD[.text].shuffled.txt`` instead: the same
    rows, but within each query the rows of equal score come in random order (drawn from a
    generator of their own, so the judgments and the rows stay those of the plain files).
    """
    out.mkdir(parents=True, exist_ok=True)
    name = f"{n_queries}x{depth}" + (".text" if text_docnos else "")
    docno = (lambda d: np.char.add("MSP-", np.char.zfill(d.astype(str), 8))) if text_docnos else (lambda d: d.astype(str))
    qrels_path = out / f"qrels.{name}.txt"
    run_path = out / f"run.{name}{'.shuffled' if shuffle_ties else ''}.txt"
    rng = np.random.default_rng([seed, n_queries, depth])
    ties_rng = np.random.default_rng([seed, n_queries, depth, 1]) if shuffle_ties else None
    query_ids = _ids(rng, n_queries, 2, 1_200_000)
    # 1% of the judged queries have no run lines (the missing-query policy matters).
    in_run = rng.random(n_queries) >= 0.01
    corpus = 8_841_823  # the MS MARCO passage collection size
    run_started = False
    for start in range(0, n_queries, BLOCK):
        qids = query_ids[start : start + BLOCK]
        nb = len(qids)
        # Judgments: 5..80 per query; about a third of them are retrieved.
        n_judged = rng.integers(5, 81, size=nb)
        jq = np.repeat(qids, n_judged)
        jdoc = rng.integers(0, corpus, size=int(n_judged.sum()), dtype=np.int64)
        grade = rng.choice(4, size=len(jdoc), p=GRADE_SHARE)
        # Run: ``depth`` documents per query: some judged ones and random (mostly unjudged) filler.
        keep_q = in_run[start : start + nb]
        rq_parts: list[np.ndarray] = []
        rdoc_parts: list[np.ndarray] = []
        offsets = np.concatenate([[0], np.cumsum(n_judged)])
        for i in np.flatnonzero(keep_q):
            judged_docs = jdoc[offsets[i] : offsets[i + 1]]
            picked = rng.random(len(judged_docs)) < 0.35
            take = judged_docs[picked][:depth]
            take_grade = grade[offsets[i] : offsets[i + 1]][picked][:depth]
            filler = rng.integers(0, corpus, size=depth - len(take), dtype=np.int64)
            docs = np.concatenate([take, filler])
            # A noisy expected rank: better-graded documents land nearer the top, the
            # filler anywhere, so NDCG@10 comes out near real first-stage runs (~0.3-0.6).
            position = np.concatenate([rng.exponential(3.0 * (4 - take_grade)), rng.uniform(0, depth, len(filler))])
            docs = docs[np.argsort(position, kind="stable")]
            rq_parts.append(np.full(depth, qids[i], dtype=np.int64))
            rdoc_parts.append(docs)
        # Duplicate (query, doc) pairs would be a fatal error for trec_eval: drop them.
        jkey = np.stack([jq, jdoc], axis=1)
        _, first = np.unique(jkey, axis=0, return_index=True)
        first.sort()
        _write(
            qrels_path,
            {
                "q": pa.array(jq[first].astype(str)),
                "it": pa.array(np.zeros(len(first), dtype=np.int64)),
                "d": pa.array(docno(jdoc[first])),
                "g": pa.array(grade[first].astype(np.int64)),
            },
            append=start > 0,
        )
        if not rq_parts:
            continue
        rq = np.concatenate(rq_parts)
        rdoc = np.concatenate(rdoc_parts)
        rkey = np.stack([rq, rdoc], axis=1)
        _, ufirst = np.unique(rkey, axis=0, return_index=True)
        ufirst.sort()
        rq, rdoc = rq[ufirst], rdoc[ufirst]
        # Scores fall with rank; rounding to 2 decimals makes ties (as BM25 runs have).
        pos = _positions(rq)
        score = np.round(30.0 - 20.0 * np.log1p(pos) / np.log1p(depth) + rng.normal(0, 0.02, len(rq)), 2)
        # Keep the file in descending score order within a query, as real runs are; tied rows
        # stay in the order they were drawn, or come in random order (``shuffle_ties``).
        keys = (-score, _query_block(rq)) if ties_rng is None else (ties_rng.random(len(rq)), -score, _query_block(rq))
        order = np.lexsort(keys)
        rq, rdoc, score = rq[order], rdoc[order], score[order]
        rank = _positions(rq) + 1
        _write(
            run_path,
            {
                "q": pa.array(rq.astype(str)),
                "q0": pa.array(np.full(len(rq), "Q0")),
                "d": pa.array(docno(rdoc)),
                "r": pa.array(rank),
                "s": pa.array(np.char.mod("%.2f", score)),
                "t": pa.array(np.full(len(rq), "bench")),
            },
            append=run_started,
        )
        run_started = True
    return qrels_path, run_path


def _query_block(q: np.ndarray) -> np.ndarray:
    """Index of each row's contiguous query block (rows of a query are adjacent)."""
    change = np.ones(len(q), dtype=bool)
    change[1:] = q[1:] != q[:-1]
    return np.cumsum(change)


def _positions(q: np.ndarray) -> np.ndarray:
    """0-based position of each row within its contiguous query block."""
    change = np.ones(len(q), dtype=bool)
    change[1:] = q[1:] != q[:-1]
    start = np.maximum.accumulate(np.where(change, np.arange(len(q)), 0))
    return np.arange(len(q)) - start


def ensure(size: str, out: Path) -> tuple[Path, Path]:
    """The qrels and run files of ``size`` in ``out``, generated first if either is missing."""
    qrels, run = out / f"qrels.{size}.txt", out / f"run.{size}.txt"
    if not (qrels.exists() and run.exists()):
        n_queries, depth = parse_size(size)
        print(f"generating {size} into {out} ...", flush=True)
        qrels, run = generate(n_queries, depth, out)
    return qrels, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=list(STANDARD_SIZES), help="QUERIESxDOCS, e.g. 7000x1000")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "data")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--text-docnos", action="store_true", help="docnos like MSP-00123456 (files *.SIZE.text.txt)")
    parser.add_argument("--shuffle-ties", action="store_true",
                        help="tied scores in random order within each query (run.SIZE[.text].shuffled.txt)")
    args = parser.parse_args(argv)
    for size in args.sizes:
        q, d = parse_size(size)
        qrels_path, run_path = generate(q, d, args.out, args.seed, args.text_docnos, args.shuffle_ties)
        print(f"{size}: {qrels_path} ({qrels_path.stat().st_size:,} bytes), {run_path} ({run_path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
