"""Real judgments and a real run (TREC DL 2019 passage, BM25 top 100; ../shared/data), trimmed
to a few queries, and the same rows written in every supported format by code of the tests' own
(csv, json, pyarrow), not by rankflavor's writers.

The queries kept have no tied scores, not even at float32, so that a run written as ranks
alone (MS MARCO, a Quepid snapshot, hits without _score) orders exactly as its scores do under
every preset's tie rule and precision.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ..conftest import SHARED

QRELS = SHARED / "qrels" / "qrels.dl19-passage.txt"
RUN = SHARED / "runs" / "rankllm.dl19.bm25.top100.run"
N_QUERIES = 6

Rows = list[tuple[str, str, float]]


def need_data() -> None:
    if not (QRELS.is_file() and RUN.is_file()):
        pytest.skip(f"real data absent: {QRELS} / {RUN}")


def load() -> tuple[Rows, Rows]:
    """(qrels rows, run rows sorted by score within each query) of the first queries without ties."""
    need_data()
    judged: dict[str, Rows] = {}
    for line in QRELS.read_text().splitlines():
        q, _, d, g = line.split()
        judged.setdefault(q, []).append((q, d, float(g)))
    ranked: dict[str, Rows] = {}
    for line in RUN.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        ranked.setdefault(q, []).append((q, d, float(s)))
    kept = []
    for q, rows in ranked.items():
        scores32 = np.asarray([s for _, _, s in rows], dtype=np.float32)
        if q in judged and len(np.unique(scores32)) == len(rows):
            kept.append(q)
        if len(kept) == N_QUERIES:
            break
    assert len(kept) == N_QUERIES
    run = [r for q in kept for r in sorted(ranked[q], key=lambda r: -r[2])]
    # the kept queries, and one judged query the trimmed run does not answer (missing)
    absent = next(q for q in judged if q not in kept)
    qrels = [r for q in [*kept, absent] for r in judged[q]]
    return qrels, run


def num(x: float) -> str:
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


def ranks(run: Rows) -> list[int]:
    out, last, pos = [], None, 0
    for q, _, _ in run:
        pos = pos + 1 if q == last else 1
        last = q
        out.append(pos)
    return out


def _csv(header: list[str], rows: list[list[str]], delimiter: str = ",") -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter, lineterminator="\r\n" if delimiter == "," else "\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode()


def _parquet(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def _nested(rows: Rows) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for q, d, v in rows:
        out.setdefault(q, {})[d] = v
    return out


def _zstd(data: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as s:
        s.write(data)
    return sink.getvalue().to_pybytes()


#: name -> (file name, format to give or None for auto, columns, bytes of the judgments)
def qrels_files(qrels: Rows) -> dict[str, tuple[str, str | None, str | None, bytes]]:
    trec = "".join(f"{q} 0 {d} {num(g)}\n" for q, d, g in qrels).encode()
    return {
        "trec": ("q.txt", None, None, trec),
        "msmarco": ("q.msmarco", "msmarco", None, "".join(f"{q}\t0\t{d}\t{num(g)}\n" for q, d, g in qrels).encode()),
        "beir": ("test.tsv", None, None, _csv(["query-id", "corpus-id", "score"], [[q, d, num(g)] for q, d, g in qrels], "\t")),
        "json": ("q.json", None, None, json.dumps(_nested(qrels)).encode()),
        "csv": ("q.csv", None, "query=qid,doc=docid,grade=label",
                _csv(["docid", "qid", "note", "label"], [[d, q, "x, y", num(g)] for q, d, g in qrels])),
        "tsv": ("q.tsv", None, None, _csv(["query_id", "doc_id", "relevance"], [[q, d, num(g)] for q, d, g in qrels], "\t")),
        "jsonl": ("q.jsonl", None, None, "".join(json.dumps({"query_id": q, "doc_id": d, "relevance": g}) + "\n"
                                               for q, d, g in qrels).encode()),
        "parquet": ("q.parquet", None, None, _parquet(pa.table({
            "query_id": pa.array([int(q) for q, _, _ in qrels], pa.int64()),
            "doc_id": pa.array([d for _, d, _ in qrels]), "relevance": pa.array([int(g) for *_, g in qrels], pa.int8())}))),
        "quepid": ("ratings.csv", None, None, _csv(["query", "docid", "rating"], [[q, d, num(g)] for q, d, g in qrels])
                   + b"unrated query\r\n"),
        "es": ("rank_eval.json", None, None, json.dumps({"requests": [
            {"id": q, "request": {"query": {"match": {"text": "..."}}},
             "ratings": [{"_index": "msmarco", "_id": d, "rating": int(g)} for qq, d, g in qrels if qq == q]}
            for q in dict.fromkeys(q for q, _, _ in qrels)], "metric": {"dcg": {"k": 10}}}).encode()),
        "trec.gz": ("q.txt.gz", None, None, gzip.compress(trec)),
        "trec.bz2": ("q.txt.bz2", None, None, bz2.compress(trec)),
        "trec.xz": ("q.txt.xz", None, None, lzma.compress(trec)),
        "trec.zst": ("q.txt.zst", None, None, _zstd(trec)),
    }


def run_files(run: Rows) -> dict[str, tuple[str, str | None, str | None, bytes, bool]]:
    """name -> (file name, format or None, columns, bytes, ranked by rank alone)."""
    rk = ranks(run)
    trec = "".join(f"{q} Q0 {d} {r} {num(s)} bm25\n" for (q, d, s), r in zip(run, rk, strict=True)).encode()
    queries = list(dict.fromkeys(q for q, _, _ in run))
    hits = {q: {"took": 3, "hits": {"total": {"value": 100}, "hits": [
        {"_index": "msmarco", "_id": d, "_score": s} for qq, d, s in run if qq == q]}} for q in queries}
    unscored = {q: {"hits": {"hits": [{"_index": "msmarco", "_id": d, "_score": None, "sort": [1]}
                                      for qq, d, _ in run if qq == q]}} for q in queries}
    details = {"metric_score": 0.5, "details": {q: {"metric_score": 0.5, "unrated_docs": [], "hits": [
        {"hit": {"_index": "msmarco", "_id": d, "_score": s}, "rating": None} for qq, d, s in run if qq == q]}
        for q in queries}, "failures": {}}
    files: dict[str, tuple[str, str | None, str | None, bytes, bool]] = {
        "trec": ("r.txt", None, None, trec, False),
        "msmarco": ("run.dev.tsv", None, None, "".join(f"{q}\t{d}\t{r}\n" for (q, d, _), r in zip(run, rk, strict=True)).encode(), True),
        "beir": ("results.json", "beir", None, json.dumps(_nested(run)).encode(), False),
        "csv": ("r.csv", None, "query=topic,doc=pid,score=bm25",
                _csv(["topic", "pid", "bm25", "rank"], [[q, d, num(s), str(r)] for (q, d, s), r in zip(run, rk, strict=True)]), False),
        "csv-rank": ("r_rank.csv", "csv", None, _csv(["qid", "docid", "rank"], [[q, d, str(r)] for (q, d, _), r in zip(run, rk, strict=True)]), True),
        "tsv": ("r.tsv", None, None, _csv(["query_id", "doc_id", "score"], [[q, d, num(s)] for q, d, s in run], "\t"), False),
        "jsonl": ("r.jsonl", None, None, "".join(json.dumps({"query_id": q, "doc_id": d, "score": s}) + "\n" for q, d, s in run).encode(), False),
        "parquet": ("r.parquet", None, None, _parquet(pa.table({
            "query_id": pa.array([q for q, _, _ in run]).dictionary_encode(), "doc_id": pa.array([int(d) for _, d, _ in run]),
            "score": pa.array([s for *_, s in run])})), False),
        "quepid": ("snapshot.csv", None, None, _csv(
            ["Snapshot Name", "Snapshot Time", "Case ID", "Query Text", "Doc ID", "Doc Position", "title"],
            [["(12/2/26) bm25", "2026-12-02T03:00:00Z", "8", q, d, str(r), "a, title"] for (q, d, _), r in zip(run, rk, strict=True)]), True),
        "es": ("hits.json", None, None, json.dumps(hits).encode(), False),
        "es-unscored": ("hits_sorted.json", "es", None, json.dumps(unscored).encode(), True),
        "es-rank_eval": ("rank_eval_response.json", None, None, json.dumps(details).encode(), False),
        "jsonl.gz": ("r.jsonl.gz", None, None, gzip.compress("".join(
            json.dumps({"qid": q, "docid": d, "score": s}) + "\n" for q, d, s in run).encode()), False),
        "csv.xz": ("r.csv.xz", None, None, lzma.compress(_csv(["query_id", "doc_id", "score"], [[q, d, num(s)] for q, d, s in run])), False),
        "trec.zst": ("r.txt.zst", None, None, _zstd(trec), False),
        "trec.bz2": ("r.txt.bz2", None, None, bz2.compress(trec), False),
    }
    return files


def write_all(tmp: Path, files: dict[str, tuple]) -> dict[str, Path]:  # type: ignore[type-arg]
    out = {}
    for name, entry in files.items():
        path = tmp / entry[0]
        path.write_bytes(entry[3])
        out[name] = path
    return out


Reader = Callable[..., object]
