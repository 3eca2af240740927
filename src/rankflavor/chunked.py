"""Evaluate runs larger than memory in query-aligned chunks whose per-query results merge exactly.

The run file is streamed in blocks; rows are cut into chunks only at query boundaries, so every
query is evaluated whole by the ordinary engine (same kernels, same flavor). Per-query values
are therefore identical to a one-shot evaluation; summaries are recomputed over the merged
per-query table in query order, as :func:`rankflavor.evaluate.aggregate` does. Memory is bounded
by the chunk size plus the qrels.

A query's rows must be contiguous in the file (true of every TREC run written per topic). A query
that reappears after its block ended is reported as an error, never evaluated in two halves.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import fields

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .align import Counts, align
from .columns import plain_strings
from .errors import EvaluationError, InputError
from .evaluate import _provenance, evaluate_tables, summarize
from .io.trec import RUN_FIELDS, _is_gzip
from .measure import Measure
from .results import MISSING, MeasureResult, Results
from .tables import Qrels, Run


def _arrow_batches(path: str, block_rows: int) -> Iterator[tuple[pa.Array, pa.Array, np.ndarray, str | None]]:
    from pyarrow import csv

    names = [f"f{i}" for i in range(RUN_FIELDS)]
    stream = pa.CompressedInputStream(pa.OSFile(path), "gzip") if _is_gzip(path) else pa.OSFile(path)
    # Roughly 40 bytes a line: block size in bytes from the requested rows.
    block = max(1 << 16, min(block_rows * 40, 1 << 30))
    reader = csv.open_csv(
        stream,
        read_options=csv.ReadOptions(column_names=names, block_size=block),
        parse_options=csv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False, ignore_empty_lines=False),
        convert_options=csv.ConvertOptions(
            column_types={"f0": pa.string(), "f2": pa.string(), "f4": pa.float64(), "f5": pa.string()},
            include_columns=["f0", "f2", "f4", "f5"],
            null_values=[],
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    )
    for batch in reader:
        q = batch.column(0)
        if pc.any(pc.starts_with(q, "#")).as_py():
            raise ValueError("comment line")
        score = batch.column(2).to_numpy(zero_copy_only=False)
        if not np.isfinite(score).all():
            raise ValueError("non-finite score")
        tags = batch.column(3)
        yield q, batch.column(1), score, (tags[len(tags) - 1].as_py() if len(tags) else None)


def _line_batches(path: str, block_rows: int) -> Iterator[tuple[pa.Array, pa.Array, np.ndarray, str | None]]:
    """Slow, exact reader: any whitespace, comments, blank lines; errors name the line."""
    import gzip

    opener = gzip.open if _is_gzip(path) else open
    qs: list[str] = []
    ds: list[str] = []
    ss: list[float] = []
    tag: str | None = None
    with opener(path, "rt", encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, 1):
            parts = raw.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) < RUN_FIELDS:
                raise InputError(path, lineno, f"expected 6 whitespace-separated fields 'query Q0 doc rank score tag', found {len(parts)}", raw.rstrip("\n"))
            try:
                score = float(parts[4])
            except ValueError:
                raise InputError(path, lineno, f"score {parts[4]!r} is not a number", raw.rstrip("\n")) from None
            if not np.isfinite(score):
                raise InputError(path, lineno, f"score {parts[4]!r} is not a finite number", raw.rstrip("\n"))
            qs.append(parts[0])
            ds.append(parts[2])
            ss.append(score)
            tag = parts[5]
            if len(qs) >= block_rows:
                yield pa.array(qs, pa.string()), pa.array(ds, pa.string()), np.asarray(ss), tag
                qs, ds, ss = [], [], []
    if qs:
        yield pa.array(qs, pa.string()), pa.array(ds, pa.string()), np.asarray(ss), tag


def iter_query_chunks(path: str, chunk_rows: int) -> Iterator[Run]:
    """Yield runs of about ``chunk_rows`` rows, each holding whole queries only."""
    try:
        yield from _aligned(_arrow_batches(path, chunk_rows), path, chunk_rows)
        return
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError, UnicodeDecodeError):
        pass
    yield from _aligned(_line_batches(path, chunk_rows), path, chunk_rows)


def _aligned(
    batches: Iterator[tuple[pa.Array, pa.Array, np.ndarray, str | None]], path: str, chunk_rows: int
) -> Iterator[Run]:
    pending_q: list[pa.Array] = []
    pending_d: list[pa.Array] = []
    pending_s: list[np.ndarray] = []
    pending_rows = 0
    finished: set[str] = set()
    tag: str | None = None
    emitted = False
    for q, d, s, batch_tag in batches:
        tag = batch_tag if batch_tag is not None else tag
        pending_q.append(q)
        pending_d.append(d)
        pending_s.append(s)
        pending_rows += len(s)
        if pending_rows < chunk_rows:
            continue
        allq = pa.concat_arrays(pending_q)
        last = allq[len(allq) - 1]
        # Keep the last (possibly incomplete) query for the next chunk.
        is_last = pc.equal(allq, last).to_numpy(zero_copy_only=False)
        cut = int(np.flatnonzero(~is_last)[-1]) + 1 if (~is_last).any() else 0
        if cut == 0:
            continue  # one query longer than a chunk: keep reading
        alld = pa.concat_arrays(pending_d)
        alls = np.concatenate(pending_s)
        yield _chunk(allq.slice(0, cut), alld.slice(0, cut), alls[:cut], path, tag, finished)
        emitted = True
        pending_q, pending_d, pending_s = [allq.slice(cut)], [alld.slice(cut)], [alls[cut:]]
        pending_rows = len(alls) - cut
    if pending_rows or not emitted:
        if not pending_rows:
            raise InputError(path, None, "run file has no result lines; expected 'query Q0 doc rank score tag'")
        yield _chunk(pa.concat_arrays(pending_q), pa.concat_arrays(pending_d), np.concatenate(pending_s), path, tag, finished)


def _chunk(q: pa.Array, d: pa.Array, s: np.ndarray, path: str, tag: str | None, finished: set[str]) -> Run:
    queries = set(pc.unique(q).to_pylist())
    again = queries & finished
    if again:
        name = sorted(again)[0]
        raise InputError(
            path,
            None,
            f"query {name!r} appears again after its block ended; chunked evaluation needs each query's "
            "lines to be contiguous (sort the run by query, or evaluate without --chunk-rows)",
        )
    finished |= queries
    return Run(q, d, s, path, tag=(tag or "").strip() or None)


def evaluate_chunked(qrels: Qrels, run_path: str | os.PathLike[str], measures: Sequence[Measure],
                     chunk_rows: int = 1_000_000, extras: tuple[str, ...] = ()) -> Results:
    """Evaluate a run file chunk by chunk (whole queries per chunk) and merge the per-query tables."""
    if chunk_rows < 1:
        raise EvaluationError(f"chunk_rows must be >= 1, received {chunk_rows}")
    path = str(run_path)
    if not os.path.isfile(path):
        raise InputError(path, None, "file not found")
    # Each chunk scores only its own queries; missing queries are decided once, at the end.
    local = [m.with_knobs(missing="skip") for m in measures]
    parts: list[list[MeasureResult]] = [[] for _ in measures]
    counts: list[Counts] = []
    seen: set[str] = set()
    tag: str | None = None
    qrels = Qrels(plain_strings(qrels.query), qrels.doc, qrels.grade, qrels.source, qrels.lines, qrels.comments,
                  qrels.blank_lines, qrels.from_file)
    qrels_queries = np.array(pc.unique(qrels.query).to_pylist(), dtype=object)
    for chunk in iter_query_chunks(path, chunk_rows):
        tag = chunk.tag or tag
        chunk_queries = pc.unique(chunk.query)
        mask = pc.is_in(qrels.query, value_set=chunk_queries)
        sub = Qrels(qrels.query.filter(mask), qrels.doc.filter(mask), qrels.grade[mask.to_numpy(zero_copy_only=False)], qrels.source)
        seen.update(chunk_queries.to_pylist())
        if len(sub) == 0:
            counts.append(_run_only_counts(chunk))
            continue
        res = evaluate_tables(sub, chunk, local)
        counts.append(res.counts)
        for i, mr in enumerate(res.measures):
            parts[i].append(mr)
    missing = np.array([q for q in qrels_queries if q not in seen], dtype=object)
    merged = [_merge(m, parts[i], missing, qrels) for i, m in enumerate(measures)]
    # Judgment-side checks and counts over the whole qrels (chunks only see their own queries).
    whole = align(qrels, Run(pa.array([], pa.string()), pa.array([], pa.string()), np.zeros(0), path),
                  duplicates=measures[0].flavor.duplicates if measures else "error")
    total = _merge_counts(counts, whole.counts, len(missing))
    prov = _provenance(qrels, Run(pa.array([], pa.string()), pa.array([], pa.string()), np.zeros(0), path), whole)
    prov["run"]["tag"] = tag
    prov["chunk_rows"] = chunk_rows
    return Results(merged, total, prov, extras)


def _merge(measure: Measure, parts: list[MeasureResult], missing: np.ndarray, qrels: Qrels) -> MeasureResult:
    queries = np.concatenate([p.queries for p in parts]) if parts else np.zeros(0, dtype=object)
    values = np.concatenate([p.values for p in parts]) if parts else np.zeros(0)
    status = np.concatenate([p.status for p in parts]) if parts else np.zeros(0, dtype=object)
    skipped_empty = sum(p.skipped_empty for p in parts)
    skipped_missing = 0
    if len(missing):
        if measure.flavor.missing == "error":
            raise EvaluationError(
                f"{len(missing)} qrels query(ies) are absent from the run ({', '.join(map(str, missing[:5]))}) "
                f"and {measure.name} says missing=error; choose missing=zero (trec_eval -c) or missing=skip"
            )
        if measure.flavor.missing == "zero":
            queries = np.concatenate([queries, missing])
            filler = np.full(len(missing), "" if measure.spec.summary == "none" else 0.0, dtype=values.dtype)
            values = np.concatenate([values, filler])
            status = np.concatenate([status, np.full(len(missing), MISSING, dtype=object)])
        else:
            skipped_missing = len(missing)
    order = sorted(range(len(queries)), key=lambda i: str(queries[i]).encode("utf-8"))
    queries, values, status = queries[order], values[order], status[order]
    summary, n = summarize(measure, values, status == MISSING, qrels.grade)
    return MeasureResult(measure, queries, values, status, summary, n, skipped_empty, skipped_missing)


def _run_only_counts(chunk: Run) -> Counts:
    n_q = len(pc.unique(chunk.query))
    return Counts(len(chunk), 0, n_q, 0, 0, n_q, 0, 0, 0, 0, 0, 0, len(chunk), 0, 0, 0)


def _merge_counts(parts: list[Counts], whole: Counts, missing: int) -> Counts:
    summed = {f.name: sum(getattr(c, f.name) for c in parts) for f in fields(Counts)}
    # Per-chunk qrels figures only cover the chunk's queries; take the whole-qrels view instead.
    for name in ("qrels_rows", "queries_in_qrels", "negative_grades", "qrels_duplicates_resolved"):
        summed[name] = getattr(whole, name)
    summed["queries_only_in_qrels"] = missing
    summed["comment_lines"] = whole.comment_lines
    summed["blank_lines"] = whole.blank_lines
    return Counts(**summed)
