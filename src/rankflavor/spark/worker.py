"""What runs in a Spark task: one bucket of whole queries evaluated by the local engine.

The task receives the run rows and the judgments of the same queries as Arrow tables, rebuilds
:class:`~rankflavor.io.tables.Qrels` and :class:`~rankflavor.io.tables.Run` in input order (with each
row's file line, so that an error names it) and calls the local engine
(:func:`evaluate_bucket`). It answers with one long table of :data:`SCHEMA` rows: per-query
values, the bucket's counts, its queries' presence, the positive judgments a summary may read,
or the first error it met, as data, so that the driver raises it as the same typed error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankflavor import errors
from rankflavor.align import align
from rankflavor.engine.plan import evaluate_tables
from rankflavor.engine.results import Results
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import Measure

#: The rows a task answers with: ``kind`` says which fields are set (:func:`evaluate_partition`).
SCHEMA = "kind string, measure int, query string, value double, text string, status string"
#: Row kinds.
VALUE, SKIPPED, COUNTS, PRESENT, GRADES, ERROR, BUCKET = (
    "value", "skipped", "counts", "present", "grades", "error", "bucket")
_FIELDS = ("kind", "measure", "query", "value", "text", "status")
_TYPES = (pa.string(), pa.int32(), pa.string(), pa.float64(), pa.string(), pa.string())
#: :data:`SCHEMA` as Arrow's.
ARROW_SCHEMA = pa.schema(list(zip(_FIELDS, _TYPES, strict=True)))
#: The rows of a task over several systems (runs): each system's :data:`SCHEMA` rows with its
#: index among them (:func:`evaluate_systems`).
SYSTEMS_SCHEMA = "system int, " + SCHEMA
SYSTEMS_ARROW_SCHEMA = pa.schema([pa.field("system", pa.int32()), *ARROW_SCHEMA])


@dataclass(frozen=True)
class Task:
    """What every task evaluates, and what it knows of the inputs.

    ``measures`` are the caller's, with ``missing=skip``: a bucket cannot tell a judged query
    absent from the whole run (the driver decides those, :func:`rankflavor.engine.merge.merge_measure`).
    ``grade_policies``: the duplicates policies under which the positive judgments are wanted
    for a summary (:func:`rankflavor.engine.aggregate.summarize`).
    """

    measures: tuple[Measure, ...]
    qrels_source: str
    run_source: str
    qrels_from_file: bool
    run_from_file: bool
    grade_policies: tuple[str, ...] = ()
    qrels_raters: str | None = None  # Qrels.raters of the judgments (aggregated ratings)


def _in_input_order(table: pa.Table) -> pa.Table:
    return table.take(pc.sort_indices(table, [("row", "ascending")]))


def _strings(column: pa.ChunkedArray) -> pa.Array:
    return pc.cast(column.combine_chunks(), pa.string())


def _lines(table: pa.Table, from_file: bool) -> np.ndarray | None:
    return np.asarray(table.column("line").to_numpy(zero_copy_only=False), dtype=np.int64) if from_file else None


def qrels_table(task: Task, qrels: pa.Table) -> Qrels:
    """A bucket's judgment rows as the local engine's :class:`~rankflavor.io.tables.Qrels` ."""
    qrels = _in_input_order(qrels)
    return Qrels(_strings(qrels.column("q")), _strings(qrels.column("d")),
                 np.asarray(qrels.column("v").to_numpy(), dtype=np.float64), task.qrels_source,
                 _lines(qrels, task.qrels_from_file), from_file=task.qrels_from_file, raters=task.qrels_raters)


def run_table(task: Task, run: pa.Table) -> Run:
    """A bucket's rows of one run as the local engine's :class:`~rankflavor.io.tables.Run` ."""
    run = _in_input_order(run)
    return Run(_strings(run.column("q")), _strings(run.column("d")),
               np.asarray(run.column("v").to_numpy(), dtype=np.float64), task.run_source,
               _lines(run, task.run_from_file), from_file=task.run_from_file)


def evaluate_bucket(qrels: Qrels, run: Run, measures: Sequence[Measure], whole: bool,
                    grade_policies: Sequence[str] = ()) -> tuple[Results, dict[str, np.ndarray]]:
    """The local engine on one bucket: its results, and per policy of ``grade_policies`` the
    positive grades of its judgments with duplicates resolved so (what a summary may read).

    The one place the Spark backend calls the engine. ``whole``: the bucket shares a query
    between run and judgments (a bucket that does not holds only missing or run-only queries,
    which the engine's check of the whole input would refuse).
    """
    results = evaluate_tables(qrels, run, measures, whole=whole)
    grades = {}
    if grade_policies:
        nothing = pa.nulls(0, pa.string())
        no_run = Run(nothing, nothing, np.zeros(0), run.source)
        for policy in grade_policies:
            g = align(qrels, no_run, duplicates=policy).qrels_grade
            grades[policy] = g[g > 0]  # (a summary counts grades > 0, truncated or not)
    return results, grades


def rows_of(table: pa.Table, kind: str) -> pa.Table:
    """The rows of ``table`` (a task's answer) whose ``kind`` is ``kind``."""
    return table.filter(pc.equal(table.column("kind"), kind))


def column(table: pa.Table, name: str) -> np.ndarray:
    """Column ``name`` of ``table`` as NumPy (object dtype for strings)."""
    return table.column(name).to_numpy(zero_copy_only=False)


def kind_rows(schema: pa.Schema, kind: str, count: int, columns: dict[str, Any]) -> pa.Table:
    """``count`` rows of ``schema`` whose ``kind`` is ``kind``: the ``columns`` given, nulls elsewhere."""
    data = []
    for field in schema:
        if field.name == "kind":
            data.append(pa.array([kind] * count, type=field.type))
        elif columns.get(field.name) is not None:
            data.append(pa.array(columns[field.name], type=field.type))
        else:
            data.append(pa.nulls(count, type=field.type))
    return pa.Table.from_arrays(data, schema=schema)


def _rows(kind: str, n: int, **columns: Any) -> pa.Table:
    return kind_rows(ARROW_SCHEMA, kind, n, columns)


def error_text(error: errors.RankflavorError, bucket: int, whole: bool) -> str:
    """A typed error as the text of an :data:`ERROR` row (:func:`raise_error` raises it again)."""
    payload = {"class": type(error).__name__, "message": str(error), "bucket": bucket, "whole": whole}
    if isinstance(error, errors.InputError):
        payload.update(source=error.source, line=error.line, message=error.message, text=error.text)
    return json.dumps(payload)


def error_row(error: errors.RankflavorError, measure: int, bucket: int, whole: bool) -> pa.Table:
    return _rows(ERROR, 1, measure=[measure], text=[error_text(error, bucket, whole)])


def raise_error(text: str) -> None:
    """Raise the error a task ferried as ``text`` (:data:`ERROR` row), as the same type."""
    payload = json.loads(text)
    cls = getattr(errors, payload["class"])
    if issubclass(cls, errors.InputError):
        raise cls(payload["source"], payload["line"], payload["message"], payload["text"])
    raise cls(payload["message"])


def _first_failing(qrels: Qrels, run: Run, measures: Sequence[Measure], whole: bool) -> int:
    """The measure at which a failed evaluation stopped: the first that fails alone (every
    check of a measure depends only on it and its alignment, so it fails alone as it did among
    the others, and none before it does)."""
    for i, m in enumerate(measures):
        try:
            evaluate_bucket(qrels, run, [m], whole)
        except errors.RankflavorError:
            return i
    return 0  # (an error of the whole call only: the check of the inputs, before any measure)


def evaluate_partition(task: Task, bucket: int, run_rows: pa.Table, qrels_rows: pa.Table,
                       judged: Qrels | None = None) -> pa.Table:
    """One bucket (``run_rows`` and ``qrels_rows``: every row of its queries) as :data:`SCHEMA` rows.

    ``present``: each query, ``value`` 1 when the run holds it, 2 when the judgments do, 3 both.
    ``bucket``: ``measure`` the bucket, ``value`` 1 when it shares a query between the two sides.
    ``value``: per query and measure, value (or ``text`` for a text-valued one) and status.
    ``skipped``: per measure, queries its ``empty`` policy skipped. ``counts``: the bucket's
    :class:`~rankflavor.align.Counts` as JSON. ``grades``: positive grades (``text``: the policy).
    ``error``: the first typed error, with the index of the measure it stopped at. ``judged``:
    ``qrels_rows`` already built as the engine's table (:func:`qrels_table`), when several runs
    share them.
    """
    run_q = set(pc.unique(run_rows.column("q")).to_pylist())
    qrels_q = set(pc.unique(qrels_rows.column("q")).to_pylist())
    everything = sorted(run_q | qrels_q)
    out = [_rows(PRESENT, len(everything), query=everything,
                 value=[float((q in run_q) + 2 * (q in qrels_q)) for q in everything])]
    qrels = judged if judged is not None else qrels_table(task, qrels_rows)
    run = run_table(task, run_rows)
    whole = not run_q.isdisjoint(qrels_q)
    out.append(_rows(BUCKET, 1, measure=[bucket], value=[float(whole)]))
    try:
        results, grades = evaluate_bucket(qrels, run, task.measures, whole, task.grade_policies)
    except errors.RankflavorError as error:
        out.append(error_row(error, _first_failing(qrels, run, task.measures, whole), bucket, whole))
        return pa.concat_tables(out)
    for i, m in enumerate(results):
        n = len(m.queries)
        text = m.values.dtype == object
        out.append(_rows(VALUE, n, measure=[i] * n, query=[str(q) for q in m.queries],
                         value=None if text else m.values, text=[str(v) for v in m.values] if text else None,
                         status=[str(s) for s in m.status]))
        out.append(_rows(SKIPPED, 1, measure=[i], value=[float(m.skipped_empty)]))
    out.append(_rows(COUNTS, 1, text=[json.dumps(results.counts.to_dict())]))
    for policy, g in grades.items():
        out.append(_rows(GRADES, len(g), value=g, text=[policy] * len(g)))
    return pa.concat_tables(out)


def evaluate_systems(tasks: Sequence[Task], bucket: int, run_rows: pa.Table, qrels_rows: pa.Table,
                     judged: Qrels | None = None) -> pa.Table:
    """One bucket of several systems' runs (``run_rows`` with a ``system`` column: the index of
    the task that reads them) against the same judgments, as :data:`SYSTEMS_SCHEMA` rows: each
    system evaluated on its own, as :func:`evaluate_partition` evaluates one run (a system with
    no row in the bucket included: its judged queries are missing from it). The judgments are
    built into the engine's table once for every system (``judged``: already built)."""
    out = []
    if judged is None and tasks:
        judged = qrels_table(tasks[0], qrels_rows)  # (every task reads the same judgments)
    for s, (task, rows) in enumerate(zip(tasks, by_system(run_rows, len(tasks)), strict=True)):
        part = evaluate_partition(task, bucket, rows, qrels_rows, judged)
        out.append(part.add_column(0, "system", pa.array(np.full(part.num_rows, s, dtype=np.int32))))
    return pa.concat_tables(out)


def by_system(run_rows: pa.Table, n: int) -> list[pa.Table]:
    """The rows of each of ``n`` systems (``run_rows``' ``system`` column, dropped), in row order;
    a system with no row in the bucket gets an empty table."""
    system = np.asarray(run_rows.column("system").to_numpy(zero_copy_only=False))
    rows = run_rows.drop_columns(["system"])
    return [rows.filter(pa.array(system == s)) for s in range(n)]
