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

from rankflavor.analysis.judgments.scope import QueryScope, ScopeSet, docnos_of
from rankflavor.base.kernels import ranges
from rankflavor.engine.plan import Evaluation, evaluate_tables
from rankflavor.errors import EvaluationError
from rankflavor.io.columns import as_numpy, from_numpy, plain_strings, string_array, take, to_strings
from rankflavor.io.tables import Qrels, Run

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


def _alone(sset: ScopeSet) -> bool:
    """A measure that could raise on another measure's gradings (``empty=error``, one-row
    queries refused) is evaluated on its own."""
    f = sset.rules.measure.flavor
    return str(f.empty) == "error" or str(f.singletons) == "error"


def engine_values(plan: Evaluation, jobs: list[tuple[ScopeSet, list[tuple[QueryScope, np.ndarray]]]]) -> list[np.ndarray]:
    """Per job (a measure's scopes and its ``(scope, grading)`` picks), the measure's value on
    each pick, computed by the engine: one evaluation for all the measures that share a
    duplicates policy (each measure scores every pseudo-query; its own are kept)."""
    out = [np.full(len(picks), np.nan) for _, picks in jobs]
    batches: dict[object, list[int]] = {}
    for i, (sset, picks) in enumerate(jobs):
        if picks:
            key = ("alone", i) if _alone(sset) else str(sset.rules.measure.flavor.duplicates)
            batches.setdefault(key, []).append(i)
    for members in batches.values():
        _evaluate(plan, [(i, *jobs[i]) for i in members], out)
    return out


def _evaluate(plan: Evaluation, jobs: list[tuple[int, ScopeSet, list[tuple[QueryScope, np.ndarray]]]],
              out: list[np.ndarray]) -> None:
    aligned = jobs[0][1].ranked.aligned
    ids: list[str] = []
    rows_parts: list[np.ndarray] = []
    owner_parts: list[np.ndarray] = []
    scopes: list[QueryScope] = []
    gradings: list[np.ndarray] = []
    for i, sset, picks in jobs:
        ranked = sset.ranked
        assert ranked.row is not None
        n = ranked.n_ret.astype(np.int64)
        start = np.cumsum(n) - n
        codes = np.array([s.code for s, _ in picks], dtype=np.int64)
        every = _reads_every_row(sset)
        lengths = n[codes] if every else np.array([len(s.grade) for s, _ in picks], dtype=np.int64)
        rows_parts.append(ranked.row[ranges(start[codes], lengths)])
        owner_parts.append(np.repeat(np.arange(len(ids), len(ids) + len(picks)), lengths))
        ids.extend(f"{s.qid}\x1f{i}.{j}" for j, (s, _) in enumerate(picks))
        scopes.extend(s for s, _ in picks)
        gradings.extend(g for _, g in picks)
    rows, owner = np.concatenate(rows_parts), np.concatenate(owner_parts)
    order = np.lexsort((rows, owner))  # file order inside each pseudo-query (input_order ties)
    rows, owner = rows[order], owner[order]
    id_array = string_array(ids)
    run = plan.run
    pseudo_run = Run(pa.DictionaryArray.from_arrays(from_numpy(owner.astype(np.int32)), id_array),
                     docnos_of(aligned, rows), np.asarray(aligned.run_score[rows], dtype=np.float64),
                     source=run.source, ranked_by=run.ranked_by)
    lines, docs = _judgment_lines(plan.qrels, sorted({s.qid for s in scopes}))
    kept: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}
    q_rows: list[np.ndarray] = []
    new_docs: list[str] = []
    for scope in scopes:
        key = (scope.qid, scope.hole_docs)
        if key not in kept:  # the query's lines, but for a hole's (a negative label: pooled, not judged)
            mine = lines.get(scope.qid, np.zeros(0, dtype=np.int64))
            holes = set(scope.hole_docs)
            kept[key] = mine[np.fromiter((docs[r] not in holes for r in mine.tolist()), dtype=bool, count=len(mine))]
        q_rows.append(kept[key])
        new_docs.extend(scope.hole_docs)
    qrels = plan.qrels
    old = np.concatenate(q_rows)
    picks_at = np.arange(len(scopes))
    q_index = np.concatenate([np.repeat(picks_at, [len(r) for r in q_rows]),
                              np.repeat(picks_at, [s.n_holes for s in scopes])]).astype(np.int32)
    pseudo_qrels = replace(
        qrels,
        query=pa.DictionaryArray.from_arrays(from_numpy(q_index), id_array),
        doc=pa.concat_arrays([take(_strings(qrels.doc), old), string_array(new_docs)]),
        grade=np.concatenate([np.asarray(qrels.grade, dtype=np.float64)[old],
                              *(np.asarray(g, dtype=np.float64) for g in gradings)]),
        lines=None, from_file=False, doc_canonical=None,
        # a grading of the holes is no one's label: these tables give values, not label counts
        label_source=None,
    )
    measures = [sset.rules.measure for _, sset, _ in jobs]
    results = evaluate_tables(pseudo_qrels, pseudo_run, measures)
    offset = 0
    for (i, _, picks), result in zip(jobs, results, strict=True):
        at = {str(q): r for r, q in enumerate(result.queries)}
        vals = np.asarray(result.values, dtype=np.float64)
        for j in range(len(picks)):
            r = at.get(ids[offset + j])
            if r is not None:
                out[i][j] = vals[r]
        offset += len(picks)


def _judgment_lines(qrels: Qrels, qids: list[str]) -> tuple[dict[str, np.ndarray], dict[int, str]]:
    """The judgment lines of ``qids`` (rows of ``qrels``) per query, and each line's docno."""
    qq = _strings(qrels.query)
    sel = np.flatnonzero(as_numpy(pc.is_in(qq, value_set=string_array(qids))))
    sel_q = np.asarray(to_strings(take(qq, sel)), dtype=str) if len(sel) else np.zeros(0, dtype=str)
    sel_d = to_strings(take(_strings(qrels.doc), sel)) if len(sel) else []
    keys, inverse = np.unique(sel_q, return_inverse=True)
    grouped = np.argsort(inverse, kind="stable")
    ends = np.cumsum(np.bincount(inverse, minlength=len(keys)))
    lines = {str(k): sel[part] for k, part in zip(keys, np.split(grouped, ends[:-1]), strict=True)}
    return lines, dict(zip(sel.tolist(), sel_d, strict=True))


def confirmed(got: np.ndarray, derived: np.ndarray, sset: ScopeSet, picks: list[tuple[QueryScope, np.ndarray]]) -> None:
    """Check the engine's values ``got`` against the ``derived`` ones where those are given
    (not NaN by derivation: a monotone metric's gradings are chosen without computing values)."""
    check = ~np.isnan(derived)
    same = np.isclose(got, derived, rtol=TOLERANCE, atol=TOLERANCE, equal_nan=True) | ~check
    if not same.all():
        i = int(np.flatnonzero(~same)[0])
        raise EvaluationError(
            f"internal check failed: the bound of {sset.rules.measure} on query {picks[i][0].qid} was derived as "
            f"{derived[i]!r} but the measure on that grading is {got[i]!r}; please report this with the inputs"
        )


__all__ = ["TOLERANCE", "confirmed", "engine_values"]
