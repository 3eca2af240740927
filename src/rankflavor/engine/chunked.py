"""Evaluate runs larger than memory in query-aligned chunks whose per-query results merge exactly.

The run file is streamed in blocks (:mod:`rankflavor.io.stream`); rows are cut into chunks only at query boundaries, so every
query is evaluated whole by the ordinary engine (same kernels, same flavor). Per-query values
are therefore identical to a one-shot evaluation; summaries are recomputed over the merged
per-query table in query order, as :func:`rankflavor.engine.aggregate.aggregate` does. Memory is bounded
by the chunk size plus the qrels.

A query's rows must be contiguous in the file (true of every TREC run written per topic). A query
that reappears after its block ended is reported as an error, never evaluated in two halves.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pyarrow.compute as pc

from rankflavor.align import Counts, align
from rankflavor.base.progress import Progress, task
from rankflavor.engine.aggregate import provenance, require_common_queries
from rankflavor.engine.merge import merge_counts, merge_measure
from rankflavor.engine.plan import Evaluation
from rankflavor.engine.results import MeasureResult, Results
from rankflavor.errors import EvaluationError, InputError
from rankflavor.io.columns import as_numpy, plain_strings, string_array
from rankflavor.io.labels.sources import encoded
from rankflavor.io.stream import query_chunks, run_batches
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import Measure


def evaluate_chunked(qrels: Qrels, run_path: str | os.PathLike[str], measures: Sequence[Measure],
                     chunk_rows: int = 1_000_000, extras: tuple[str, ...] = (),
                     progress: Progress | None = None) -> Results:
    """Evaluate a run file chunk by chunk (whole queries per chunk) and merge the per-query tables.

    ``progress`` is told of the run file's bytes as each piece is read (a piece is megabytes:
    nothing per row or per query)."""
    if chunk_rows < 1:
        raise EvaluationError(f"chunk_rows must be >= 1, received {chunk_rows}")
    path = str(run_path)
    if not os.path.isfile(path):
        raise InputError(path, None, "file not found")
    # Each chunk scores only its own queries, with the judgments of those alone: no judged query of
    # a chunk is missing from its run, so its ``missing`` policy only says (as in a one-shot
    # evaluation) whether the queries the judgments list with no judgment are theirs
    # (aggregate.judged_queries). The queries no chunk holds are decided once, at the end.
    local = list(measures)
    # A chunk without judgments still has queries to score under run_only=include (or listed ones).
    scores_unjudged = any(m.flavor.run_only == "include" for m in measures)
    parts: list[list[MeasureResult]] = [[] for _ in measures]
    counts: list[Counts] = []
    seen: set[str] = set()
    tag: str | None = None
    sources = None if qrels.label_source is None else encoded(qrels.label_source)
    qrels = Qrels(plain_strings(qrels.query), qrels.doc, qrels.grade, qrels.source, qrels.lines, qrels.comments,
                  qrels.blank_lines, qrels.from_file, raters=qrels.raters, listed_empty=qrels.listed_empty,
                  label_source=sources, label_rule=qrels.label_rule, labels_dropped=qrels.labels_dropped)
    qrels_queries = np.array(pc.unique(qrels.query).to_pylist(), dtype=object)
    listed = set(qrels.listed_empty)
    bar = task(progress, f"evaluating {os.path.basename(path)} in chunks", os.path.getsize(path))
    for chunk, chunk_queries in query_chunks(run_batches(path, bar if progress is not None else None), path, chunk_rows):
        tag = chunk.tag or tag
        mask = pc.is_in(qrels.query, value_set=string_array(chunk_queries))
        rows = np.flatnonzero(as_numpy(mask))
        # (with their lines, for an error naming one)
        sub = Qrels(qrels.query.filter(mask), qrels.doc.filter(mask), qrels.grade[rows], qrels.source,
                    qrels.lines_of(rows), raters=qrels.raters,
                    listed_empty=tuple(q for q in chunk_queries if q in listed) if listed else (),
                    label_source=None if sources is None else sources.filter(mask))
        seen.update(chunk_queries)
        plan = Evaluation(sub, chunk, whole=False)  # the chunk's queries, evaluated whole
        if len(sub) == 0 and not sub.listed_empty and not scores_unjudged:
            # nothing to score: counted as the plan counts (its first measure's duplicates policy)
            counts.append(plan.aligned(local[0].flavor.duplicates if local else "error").counts)
            continue
        res = plan.results(local)
        counts.append(res.counts)
        for i, mr in enumerate(res.measures):
            parts[i].append(mr)
    bar.close()
    missing = np.array([q for q in qrels_queries if q not in seen], dtype=object)
    # Listed with no judgment and in no chunk: missing where the flavor takes them for queries of
    # the judgments (missing=zero|error), nothing otherwise (aggregate.judged_queries).
    judged = set(qrels_queries.tolist())
    listed_missing = np.array([q for q in qrels.listed_empty if q not in seen and q not in judged], dtype=object)
    # Judgment-side checks and counts over the whole qrels (chunks only see their own queries),
    # before any measure's policy: the whole file is checked in this order too.
    nothing = string_array([])  # (pa.array would import pandas)
    no_run = Run(nothing, nothing, np.zeros(0), path)
    whole = align(qrels, no_run, duplicates=measures[0].flavor.duplicates if measures else "error")
    total = replace(merge_counts(counts, whole.counts, len(missing)),
                    queries_listed_unjudged=whole.counts.queries_listed_unjudged)
    require_common_queries(total, sorted(seen), qrels_queries, [m.flavor for m in measures] or None)
    merged = [merge_measure(m, parts[i], missing if m.flavor.missing == "skip" or not len(listed_missing)
                            else np.concatenate([missing, listed_missing]), qrels.grade)
              for i, m in enumerate(measures)]
    prov = provenance(qrels, no_run)
    prov["run"]["tag"] = tag
    prov["chunk_rows"] = chunk_rows
    return Results(merged, total, prov, extras)
