"""Merge results evaluated on disjoint sets of whole queries into the results of the whole input.

Chunked evaluation (:mod:`rankflavor.engine.chunked`) and the Spark backend (:mod:`rankflavor.spark`)
both evaluate pieces of the input that hold every row of their queries, each piece with the
ordinary engine. Per-query values are then exact; what a piece cannot decide is decided here,
once, over the merged table: the queries of the judgments that no piece's run holds
(``missing``), and every summary, which :func:`rankflavor.engine.aggregate.summarize` recomputes in query
order, so the means are those of a one-shot evaluation bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

import numpy as np

from rankflavor.align import Counts
from rankflavor.engine.aggregate import MISSING_POLICY, policy_error, summarize
from rankflavor.engine.labels import labelled
from rankflavor.engine.results import MISSING, MeasureResult
from rankflavor.io.labels.sources import merged
from rankflavor.metrics.measure import Measure


def merge_measure(measure: Measure, parts: Sequence[MeasureResult], missing: np.ndarray,
                  qrels_grade: np.ndarray) -> MeasureResult:
    """One measure's results over the union of ``parts``, with the ``missing`` policy applied.

    Parameters
    ----------
    measure : the measure as the caller asked for it (each part was evaluated with
        ``missing=skip``, since a part cannot tell a query absent from the whole run).
    parts : its results on pieces of disjoint queries.
    missing : ids of the judged queries that no piece's run holds.
    qrels_grade : the grades of the whole judgments (duplicates resolved as ``measure`` asks),
        for a summary that reads them (:func:`~rankflavor.engine.aggregate.summarize`).

    Raises
    ------
    EvaluationError
        ``missing=error`` and some query is missing: the one-shot engine's error
        (:func:`~rankflavor.engine.aggregate.policy_error`), its policy read from the same table
        (:data:`~rankflavor.engine.aggregate.MISSING_POLICY`).

    Examples
    --------
    >>> import rankflavor
    >>> from rankflavor.metrics.measure import parse_measure
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> m = parse_measure("P@1")
    >>> part = rankflavor.evaluate(qrels, {"q2": {"b": 1.0}}, [m.with_knobs(missing="skip")])[0]
    >>> whole = merge_measure(m, [part], np.array(["q1", "q3"], dtype=object), np.ones(3))
    >>> list(whole.queries), list(whole.status), round(whole.summary, 4)
    (['q1', 'q2', 'q3'], ['missing', 'ok', 'missing'], 0.3333)
    """
    queries = np.concatenate([p.queries for p in parts]) if parts else np.zeros(0, dtype=object)
    values = np.concatenate([p.values for p in parts]) if parts else np.zeros(0)
    status = np.concatenate([p.status for p in parts]) if parts else np.zeros(0, dtype=object)
    skipped_empty = sum(p.skipped_empty for p in parts)
    skipped_missing = 0
    if len(missing):
        action, value = MISSING_POLICY[measure.flavor.missing]  # the one-shot engine's table
        if action == "refuse":
            # Named in byte order, as the one-shot engine names them (its query codes).
            names = sorted(map(str, missing), key=lambda q: q.encode("utf-8"))
            raise policy_error(names, len(missing), measure, "missing")
        if action == "value":
            queries = np.concatenate([queries, missing])
            filler = np.full(len(missing), "" if measure.spec.summary == "none" else value, dtype=values.dtype)
            values = np.concatenate([values, filler])
            status = np.concatenate([status, np.full(len(missing), MISSING, dtype=object)])
        else:  # skip
            skipped_missing = len(missing)
    order = byte_order(queries)
    if order is not None:
        queries, values, status = queries[order], values[order], status[order]
    summary, n = summarize(measure, values, status, qrels_grade)
    labels = merged(p.labels for p in parts)
    if labels is not None:  # the knob of the whole (each part's was of its own queries)
        measure = labelled(measure, labels, "the judgments")
    return MeasureResult(measure, queries, values, status, summary, n, skipped_empty, skipped_missing, labels)


def byte_order(queries: np.ndarray) -> np.ndarray | None:
    """The order that puts query ids in UTF-8 byte order (the one-shot engine's), or None when
    they already are: ids that are all ``str`` and strictly increasing compare as their UTF-8
    bytes do (UTF-8 keeps code point order), so a piece sorted beforehand (the Spark backend
    sorts each system's rows by measure and query in Arrow) costs one comparison pass, not a sort
    in Python per measure.

    >>> byte_order(np.array(["q1", "q10", "q2"], dtype=object)) is None
    True
    >>> byte_order(np.array(["q2", "é", "q10", 7], dtype=object)).tolist()  # (7: as "7")
    [3, 2, 0, 1]
    """
    if len(queries) < 2:
        return None
    if all(type(q) is str for q in queries) and bool(np.all(queries[1:] > queries[:-1])):
        return None
    return np.array(sorted(range(len(queries)), key=lambda i: str(queries[i]).encode("utf-8")), dtype=np.int64)


def byte_sorted(queries: np.ndarray) -> np.ndarray:
    """``queries`` in UTF-8 byte order (:func:`byte_order`; as they are when already so)."""
    order = byte_order(queries)
    return queries if order is None else queries[order]


def sum_counts(parts: Sequence[Counts]) -> Counts:
    """Field-by-field sum of the counts of pieces of disjoint queries."""
    return Counts(**{f.name: sum(getattr(c, f.name) for c in parts) for f in fields(Counts)})


def merge_counts(parts: Sequence[Counts], whole: Counts, missing: int) -> Counts:
    """Counts of run pieces that each saw only the judgments of their own queries, completed
    by ``whole``, the alignment of the whole judgments to no run, and the number of ``missing``
    judged queries (those no piece's run holds)."""
    summed = sum_counts(parts).to_dict()
    # Per-piece qrels figures only cover the piece's queries; take the whole-qrels view instead.
    for name in ("qrels_rows", "queries_in_qrels", "negative_grades", "qrels_duplicates_resolved"):
        summed[name] = getattr(whole, name)
    summed["queries_only_in_qrels"] = missing
    summed["comment_lines"] += whole.comment_lines  # the pieces counted the run's, whole the qrels'
    summed["blank_lines"] += whole.blank_lines
    return Counts(**summed)
