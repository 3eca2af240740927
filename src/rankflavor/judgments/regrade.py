"""The measure itself on chosen gradings: each bound is the value of the measure, computed by the
normal engine, on the judgments with the query's holes graded as the extremes found.

Every (query, grading) pair becomes a query of its own (id ``query\\x1fi``): the query's ranked
rows (the rows in scope, or all of them where the measure reads the number of rows retrieved;
file order kept, original scores and docnos, so every tie rule, precision and depth cut ranks them
as before) and the query's judgment lines, with a line per hole at its grade (a negative label,
pooled but not judged, is replaced). One evaluation of the measure scores them all. The engine's
value must agree with the one :mod:`.extremes` computed for the grading: a disagreement means the
derivation does not describe the engine for this flavor, and is raised rather than printed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columns import as_numpy, from_numpy, plain_strings, string_array, take, to_strings
from ..errors import EvaluationError
from ..kernels import ranges
from ..plan import Evaluation, evaluate_tables
from ..tables import Qrels, Run
from .scope import QueryScope, ScopeSet

#: Largest difference tolerated between the engine's value and the derivation's (float sums
#: added in another order differ in the last bits).
TOLERANCE = 1e-9


def _strings(a: pa.Array | pa.ChunkedArray) -> pa.Array:
    a = plain_strings(a)
    return a if pa.types.is_string(a.type) else a.cast(pa.string())


def _reads_every_row(sset: ScopeSet) -> bool:
    """The measure reads the number of rows retrieved beyond its scope (``ideal=max`` uncut) or
    refuses one-row queries (a scope of one row would be refused)."""
    f = sset.rules.measure.flavor
    return (sset.rules.ideal == "max" and str(f.ideal_cut) == "none") or str(f.singletons) == "error"


def engine_values(plan: Evaluation, sset: ScopeSet, picks: list[tuple[QueryScope, np.ndarray]]) -> np.ndarray:
    """The measure's value on each ``(scope, grading)`` of ``picks``, computed by the engine."""
    if not picks:
        return np.zeros(0)
    ranked = sset.ranked
    aligned = ranked.aligned
    assert ranked.row is not None
    n = ranked.n_ret.astype(np.int64)
    start = np.cumsum(n) - n
    codes = np.array([s.code for s, _ in picks], dtype=np.int64)
    lengths = n[codes] if _reads_every_row(sset) else np.array([len(s.grade) for s, _ in picks], dtype=np.int64)
    rows = ranked.row[ranges(start[codes], lengths)]
    owner = np.repeat(np.arange(len(picks)), lengths)
    order = np.lexsort((rows, owner))  # file order inside each pseudo-query (input_order ties)
    rows, owner = rows[order], owner[order]
    ids = string_array([f"{s.qid}\x1f{i}" for i, (s, _) in enumerate(picks)])
    from .bounds import docnos_of

    run = plan.run
    pseudo_run = Run(pa.DictionaryArray.from_arrays(from_numpy(owner.astype(np.int32)), ids), docnos_of(aligned, rows),
                     np.asarray(aligned.run_score[rows], dtype=np.float64), source=run.source,
                     ranked_by=run.ranked_by)
    qrels = plan.qrels
    qq = _strings(qrels.query)
    qids = sorted({s.qid for s, _ in picks})
    sel = np.flatnonzero(as_numpy(pc.is_in(qq, value_set=string_array(qids))))
    sel_q = np.asarray(to_strings(take(qq, sel)), dtype=object)
    sel_d = np.asarray(to_strings(take(_strings(qrels.doc), sel)), dtype=object)
    keys, inverse = np.unique(sel_q.astype(str), return_inverse=True) if len(sel) else (np.zeros(0, str), sel)
    grouped = np.argsort(inverse, kind="stable")
    ends = np.cumsum(np.bincount(inverse, minlength=len(keys)))
    by_q = {str(k): sel[part] for k, part in zip(keys, np.split(grouped, ends[:-1]), strict=True)}
    doc_of = dict(zip(sel.tolist(), sel_d.tolist(), strict=True))
    grade = np.asarray(qrels.grade, dtype=np.float64)
    q_owner: list[np.ndarray] = []
    q_rows: list[np.ndarray] = []
    new_docs: list[str] = []
    new_grades: list[float] = []
    new_owner: list[int] = []
    for i, (scope, grading) in enumerate(picks):
        holes = set(scope.hole_docs)
        mine = [r for r in by_q.get(scope.qid, sel[:0]).tolist() if doc_of[r] not in holes]
        q_rows.append(np.asarray(mine, dtype=np.int64))
        q_owner.append(np.full(len(mine), i, dtype=np.int64))
        new_docs.extend(scope.hole_docs)
        new_grades.extend(np.asarray(grading, dtype=np.float64).tolist())
        new_owner.extend([i] * len(scope.hole_docs))
    old = np.concatenate(q_rows) if q_rows else np.zeros(0, dtype=np.int64)
    q_index = np.concatenate([*q_owner, np.asarray(new_owner, dtype=np.int64)]).astype(np.int32)
    pseudo_qrels = replace(
        qrels,
        query=pa.DictionaryArray.from_arrays(from_numpy(q_index), ids),
        doc=pa.concat_arrays([take(_strings(qrels.doc), old), string_array(new_docs)]),
        grade=np.concatenate([grade[old], np.asarray(new_grades, dtype=np.float64)]),
        lines=None, from_file=False, doc_canonical=None,
    )
    result = evaluate_tables(pseudo_qrels, pseudo_run, [sset.rules.measure])[0]
    at = {str(q): i for i, q in enumerate(result.queries)}
    vals = np.asarray(result.values, dtype=np.float64)
    out = np.full(len(picks), np.nan)
    for i in range(len(picks)):
        j = at.get(f"{picks[i][0].qid}\x1f{i}")
        if j is not None:
            out[i] = vals[j]
    return out


def confirmed(plan: Evaluation, sset: ScopeSet, picks: list[tuple[QueryScope, np.ndarray]],
              derived: np.ndarray) -> np.ndarray:
    """The engine's values on ``picks``, checked against the ``derived`` ones (module docstring)."""
    got = engine_values(plan, sset, picks)
    same = np.isclose(got, derived, rtol=TOLERANCE, atol=TOLERANCE, equal_nan=True)
    if not same.all():
        i = int(np.flatnonzero(~same)[0])
        raise EvaluationError(
            f"internal check failed: the bound of {sset.rules.measure} on query {picks[i][0].qid} was derived as "
            f"{derived[i]!r} but the measure on that grading is {got[i]!r}; please report this with the inputs"
        )
    return got


__all__ = ["TOLERANCE", "confirmed", "engine_values"]
