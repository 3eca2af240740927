"""The alignment package through its public functions, module by module, against plain Python
references on small inputs: what :func:`rankflavor.align.align` keeps, joins and counts under
each duplicates policy (on one thread and two, exact and hashed docno codes), and the steps it
is made of (query codes, document codes, judged-docno lookups, keys, the join, duplicates).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankflavor.align import Aligned, Counts, align, refuse_kept_duplicates
from rankflavor.align import sizes as align_sizes
from rankflavor.align.docs import doc_codes, exact_doc_codes, hashed_doc_codes
from rankflavor.align.duplicates import pairs_repeat, resolve_duplicates
from rankflavor.align.join import join, joined
from rankflavor.align.keys import pair_keys, sort_keys
from rankflavor.align.lookups import bitset, judged_doc_rows, lookup
from rankflavor.align.queries import coded_queries, query_names
from rankflavor.errors import InputError
from rankflavor.io.docnos import hash64
from rankflavor.io.tables import Qrels, Run

# ---------------------------------------------------------------------------------------------
# Inputs and a plain Python alignment to compare with
# ---------------------------------------------------------------------------------------------

QUERIES = ["q1", "q10", "q2", "é", "Q"]  # byte order differs from numeric and from case-folded order


def _docno(d: int, style: str) -> str:
    if style == "integers":
        return str(100 + d)
    if style == "text":
        return f"D{d}"
    return str(d) if d % 3 else f"0{d}"  # mixed: canonical integers and zero-padded ones ("07" is not "7")


Row = tuple[int, int, int]  # (query, doc, score or grade) as small integers

rows_st = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 7), st.integers(-1, 4)), max_size=40)


def _run(rows: list[Row], style: str, from_file: bool = False) -> Run:
    return Run(pa.array([QUERIES[q] for q, _, _ in rows], type=pa.string()),
               pa.array([_docno(d, style) for _, d, _ in rows], type=pa.string()),
               np.array([float(s) for _, _, s in rows]), from_file=from_file)


def _qrels(rows: list[Row], style: str, from_file: bool = False) -> Qrels:
    return Qrels(pa.array([QUERIES[q] for q, _, _ in rows], type=pa.string()),
                 pa.array([_docno(d, style) for _, d, _ in rows], type=pa.string()),
                 np.array([float(g) for _, _, g in rows]), from_file=from_file)


def _kept(pairs: list[tuple[str, str]], values: list[float], policy: str, refusable: list[bool]) -> list[int] | None:
    """Rows a policy keeps, ascending; None: ``error`` refuses a repeat."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, pair in enumerate(pairs):
        groups.setdefault(pair, []).append(i)
    if policy == "error":
        if any(len(g) > 1 and refusable[g[0]] for g in groups.values()):
            return None
        return list(range(len(pairs)))
    if policy == "first":
        return sorted(g[0] for g in groups.values())
    return sorted(min(g, key=lambda i: (-values[i], i)) for g in groups.values())


def _reference(qrels: list[Row], run: list[Row], style: str, policy: str) -> dict[str, Any] | None:
    """What alignment must give, by dictionaries; None: it must raise."""
    r_pairs = [(QUERIES[q], _docno(d, style)) for q, d, _ in run]
    j_pairs = [(QUERIES[q], _docno(d, style)) for q, d, _ in qrels]
    run_queries = {q for q, _ in r_pairs}
    keep_j = _kept(j_pairs, [float(g) for *_, g in qrels], policy, [q in run_queries for q, _ in j_pairs])
    if keep_j is None:
        return None
    # error: run duplicates are kept, for each ranking to refuse
    keep_r = _kept(r_pairs, [float(s) for *_, s in run], policy, [False] * len(run))
    assert keep_r is not None
    grade = {j_pairs[i]: float(qrels[i][2]) for i in keep_j}  # (error: no judged repeat the run can meet)
    ids = sorted({q for q, _ in r_pairs} | {q for q, _ in j_pairs}, key=lambda s: s.encode())
    judged_queries = {j_pairs[i][0] for i in keep_j}
    judged = [(k, grade[r_pairs[i]]) for k, i in enumerate(keep_r) if r_pairs[i] in grade]
    seen: set[tuple[str, str]] = set()
    repeats = 0
    for pair in r_pairs:
        repeats += pair in seen
        seen.add(pair)
    in_run = [q in run_queries for q in ids]
    in_qrels = [q in judged_queries for q in ids]
    of_unjudged = sum(r_pairs[i][0] not in judged_queries for i in keep_r)
    return {
        "ids": ids, "keep_r": keep_r, "keep_j": keep_j, "judged": judged, "in_run": in_run, "in_qrels": in_qrels,
        "counts": Counts(
            run_rows=len(run), qrels_rows=len(qrels),
            queries_in_run=sum(in_run), queries_in_qrels=sum(in_qrels),
            queries_evaluated=sum(a and b for a, b in zip(in_run, in_qrels, strict=True)),
            queries_only_in_run=sum(a and not b for a, b in zip(in_run, in_qrels, strict=True)),
            queries_only_in_qrels=sum(b and not a for a, b in zip(in_run, in_qrels, strict=True)),
            run_duplicates_resolved=len(run) - len(keep_r), qrels_duplicates_resolved=len(qrels) - len(keep_j),
            unjudged_retrieved=len(keep_r) - of_unjudged - len(judged),
            negative_grades=sum(qrels[i][2] < 0 for i in keep_j),
            negative_grades_retrieved=sum(g < 0 for _, g in judged),
            run_rows_of_unjudged_queries=of_unjudged,
            comment_lines=0, blank_lines=0, run_lines_with_extra_fields=0,
            run_duplicates_kept=repeats if policy == "error" else 0,
        ),
    }


@contextmanager
def _path(path: str) -> Iterator[None]:
    """Alignment on one thread (small runs) or on two (any run past ``sizes.PARALLEL_ROWS``)."""
    with pytest.MonkeyPatch.context() as mp:
        if path == "two threads":
            mp.setattr(align_sizes, "PARALLEL_ROWS", 0)
            mp.setattr(align_sizes, "BLOCK_ROWS", 3)  # many blocks, slabs and parts
            mp.setattr(align_sizes, "JOIN_ROWS", 2)
        yield


# ---------------------------------------------------------------------------------------------
# stage: align() against the reference
# ---------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(qrels=rows_st, run=rows_st, style=st.sampled_from(["integers", "text", "mixed"]),
       policy=st.sampled_from(["error", "first", "best"]), path=st.sampled_from(["one thread", "two threads"]),
       reader_hashes=st.booleans())
def test_align_keeps_joins_and_counts_what_the_reference_does(
    qrels: list[Row], run: list[Row], style: str, policy: str, path: str, reader_hashes: bool
) -> None:
    q, r = _qrels(qrels, style), _run(run, style)
    if reader_hashes and style == "text":  # as the piece reader hands them over: the hashed codes
        r = dataclasses.replace(r, doc_hashes=(hash64(r.doc),))
    want = _reference(qrels, run, style, policy)
    with _path(path):
        if want is None:
            with pytest.raises(InputError, match="appears more than once"):
                align(q, r, duplicates=policy)
            return
        a = align(q, r, duplicates=policy)
    assert a.counts == want["counts"]
    assert a.query_ids.tolist() == want["ids"]
    assert a.in_run.tolist() == want["in_run"] and a.in_qrels.tolist() == want["in_qrels"]
    assert a.run_row.tolist() == want["keep_r"]
    assert [a.query_ids[c] for c in a.run_q] == [QUERIES[run[i][0]] for i in want["keep_r"]]
    assert a.run_score.tolist() == [float(run[i][2]) for i in want["keep_r"]]
    assert [a.query_ids[c] for c in a.qrels_q] == [QUERIES[qrels[i][0]] for i in want["keep_j"]]
    assert a.qrels_grade.tolist() == [float(qrels[i][2]) for i in want["keep_j"]]
    assert list(zip(a.judged_row.tolist(), a.judged_grade.tolist(), strict=True)) == want["judged"]
    graded = dict(want["judged"])
    assert [None if math.isnan(g) else g for g in a.run_grade.tolist()] == [graded.get(k) for k in range(len(a.run_q))]
    # Document codes: equal within a query exactly when the docnos are equal.
    docs = a.run_doc_strings.take(pa.array(a.run_row)).to_pylist()
    for i in range(len(docs)):
        for k in range(len(docs)):
            if a.run_q[i] == a.run_q[k]:
                assert (a.run_doc[i] == a.run_doc[k]) == (docs[i] == docs[k])
    if a.doc_value_offset is not None:  # canonical integer docnos are their values
        assert (a.run_doc + a.doc_value_offset).tolist() == [int(d) for d in docs]


@settings(max_examples=100, deadline=None)
@given(run=rows_st, data=st.data())
def test_refuse_kept_duplicates_refuses_a_pair_kept_twice(run: list[Row], data: st.DataObject) -> None:
    """``duplicates=error`` leaves run duplicates in place; a ranking that keeps both rows of a
    pair is refused (the first repeat in file order named), one that keeps one of them is not."""
    a = align(_qrels([], "text"), _run(run, "text", from_file=True))
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, max(len(run) - 1, 0)))) if run else []), dtype=np.int64)
    pairs = [(run[i][0], run[i][1]) for i in rows.tolist()]
    repeat = next((i for k, i in enumerate(rows.tolist()) if pairs[k] in pairs[:k]), None)
    shuffled = data.draw(st.permutations(rows.tolist())) if len(rows) else []
    if repeat is None:
        refuse_kept_duplicates(a, np.array(shuffled, dtype=np.int64), 10)
        return
    with pytest.raises(InputError, match=r"both within its top 10 rows \(depth=10\)") as info:
        refuse_kept_duplicates(a, np.array(shuffled, dtype=np.int64), 10)
    assert info.value.line == repeat + 1


def test_a_judged_duplicate_names_both_lines_and_the_count() -> None:
    qrels = _qrels([(0, 1, 1), (0, 2, 1), (1, 1, 0), (0, 1, 2), (1, 1, 3)], "text", from_file=True)
    with pytest.raises(InputError) as info:
        align(qrels, _run([(0, 5, 1), (1, 5, 1)], "text"))
    assert info.value.line == 4
    assert "(also at line 1)" in str(info.value) and "2 duplicate row(s) in all" in str(info.value)


def test_judged_duplicates_of_a_query_the_run_never_meets_stay() -> None:
    """trec_eval forms judged lists only for the run's queries: their duplicates are no error,
    and every judgment stays (num_rel of trec_eval -c counts them)."""
    a = align(_qrels([(1, 1, 1), (1, 1, 2), (0, 1, 1)], "integers"), _run([(0, 1, 3)], "integers"))
    assert a.counts.qrels_duplicates_resolved == 0
    assert a.qrels_grade.tolist() == [1.0, 2.0, 1.0]


@pytest.mark.parametrize("policy", ["first", "best"])
def test_a_resolved_duplicate_keeps_the_input_row_of_what_stays(policy: str) -> None:
    a = align(_qrels([(0, 1, 2)], "text"), _run([(0, 1, 1), (0, 2, 0), (0, 1, 3)], "text"), duplicates=policy)
    assert a.run_row.tolist() == ([0, 1] if policy == "first" else [1, 2])
    assert a.input_rows(np.array([0])).tolist() == a.run_row[:1].tolist()
    assert a.counts.run_duplicates_resolved == 1


# ---------------------------------------------------------------------------------------------
# values: Aligned is immutable and compared by identity; Counts add up
# ---------------------------------------------------------------------------------------------


def _small() -> tuple[Qrels, Run, Aligned]:
    q, r = _qrels([(0, 1, 2), (1, 2, 1)], "integers"), _run([(0, 1, 3), (0, 2, 1), (2, 1, 0)], "integers")
    return q, r, align(q, r, duplicates="first")


def test_aligned_arrays_are_read_only_and_the_inputs_stay_writeable() -> None:
    q, r, a = _small()
    arrays = {f.name: getattr(a, f.name) for f in dataclasses.fields(a) if isinstance(getattr(a, f.name), np.ndarray)}
    arrays["run_row"], arrays["run_grade"] = a.run_row, a.run_grade
    assert {"run_q", "run_doc", "run_score", "judged_row", "qrels_grade", "query_ids"} <= set(arrays)
    for name, array in arrays.items():
        assert not array.flags.writeable, name
        with pytest.raises(ValueError, match="read-only"):
            array[:1] = array[:1]
    assert r.score.flags.writeable and q.grade.flags.writeable  # the caller's arrays are the caller's
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.run_q = a.run_q  # type: ignore[misc]
    assert not hasattr(a, "memo")
    subset = dataclasses.replace(a, run_q=np.array(a.run_q[:1]))
    assert not subset.run_q.flags.writeable


def test_aligned_is_hashed_and_compared_by_identity() -> None:
    q, r, a = _small()
    b = align(q, r, duplicates="first")
    assert a == a and a != b and len({a, b, a}) == 2


# ---------------------------------------------------------------------------------------------
# queries: codes in byte order, from dictionary parts or plain strings
# ---------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(run=st.lists(st.sampled_from(QUERIES), max_size=30), qrels=st.lists(st.sampled_from(QUERIES), max_size=10),
       cuts=st.lists(st.integers(0, 30), max_size=3), encoded=st.booleans())
def test_query_codes_follow_byte_order(run: list[str], qrels: list[str], cuts: list[int], encoded: bool) -> None:
    bounds = sorted({0, len(run), *(min(c, len(run)) for c in cuts)})
    chunks = [pa.array(run[a:b], type=pa.string()) for a, b in itertools.pairwise(bounds)]
    if encoded:
        chunks = [c.dictionary_encode() for c in chunks]
    column = pa.chunked_array(chunks, type=chunks[0].type if chunks else pa.string())
    rq, jq, ids, run_rows, qrels_rows, starts = coded_queries(*query_names(column, pa.array(qrels, type=pa.string())))
    assert ids == sorted(set(run) | set(qrels), key=lambda s: s.encode())
    assert [ids[c] for c in rq] == run and [ids[c] for c in jq] == qrels
    assert run_rows.tolist() == [run.count(i) for i in ids] and qrels_rows.tolist() == [qrels.count(i) for i in ids]
    blocks = [k for k in range(len(run)) if k == 0 or run[k] != run[k - 1]]
    one_block_each = len({run[k] for k in blocks}) == len(blocks)
    assert (starts.tolist() if starts is not None else None) == (blocks if one_block_each else None)


# ---------------------------------------------------------------------------------------------
# docs: identity codes of docnos
# ---------------------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(run=st.lists(st.integers(0, 9), max_size=20), qrels=st.lists(st.integers(0, 9), max_size=10),
       style=st.sampled_from(["integers", "text", "mixed"]))
def test_doc_codes_are_equal_exactly_when_the_docnos_are(run: list[int], qrels: list[int], style: str) -> None:
    run_docs, qrels_docs = [_docno(d, style) for d in run], [_docno(d, style) for d in qrels]
    r = Run(pa.array(["q"] * len(run), type=pa.string()), pa.array(run_docs, type=pa.string()), np.zeros(len(run)))
    q_doc = pa.array(qrels_docs, type=pa.string())
    ways = [doc_codes(r, q_doc, 1)[:3], exact_doc_codes(r.doc, q_doc)]
    hashed = hashed_doc_codes(r.doc, hash64(r.doc), q_doc, 1)
    assert hashed is not None  # (real hashes of a few docnos: no collision)
    ways.append(hashed)
    names = run_docs + qrels_docs
    for rd, jd, span in ways:
        codes = rd.tolist() + jd.tolist()
        assert all(0 <= c < span for c in codes)
        assert all((codes[i] == codes[k]) == (names[i] == names[k]) for i in range(len(names)) for k in range(len(names)))
    # Hashed: the judged docnos take the lowest codes, one per distinct docno.
    assert sorted(set(hashed[1].tolist())) == list(range(len(set(qrels_docs))))


# ---------------------------------------------------------------------------------------------
# lookups: the judged-docno bitset
# ---------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(members=st.sets(st.integers(0, 200), max_size=30), codes=st.lists(st.integers(0, 1000), max_size=50),
       shift=st.sampled_from([0, 3, 40]))
def test_bitset_lookup_is_set_membership(members: set[int], codes: list[int], shift: int) -> None:
    span = max(members, default=-1) + 1
    bits = bitset(np.array(sorted(members), dtype=np.int64), span)
    if shift:  # uint64 codes read by their top bits, as hashes are
        wide = np.array(codes, dtype=np.uint64) << np.uint64(shift)
        wide |= np.uint64((1 << shift) - 1)  # the low bits are shifted away
        got = lookup(bits, wide, shift=shift)
    else:
        got = lookup(bits, np.array(codes, dtype=np.int64))
    assert got.tolist() == [c in members for c in codes]
    rows = judged_doc_rows(np.array(codes, dtype=np.int64), np.array(sorted(members), dtype=np.int64))
    assert rows is not None and rows.tolist() == [i for i, c in enumerate(codes) if c in members]


def test_judged_codes_past_the_flat_span_search_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(align_sizes, "FLAT_SPAN", 4)
    assert judged_doc_rows(np.array([1, 9, 3]), np.array([9])) is None
    keys = pair_keys(np.array([0]), np.array([9]), 10)
    rows, grades = join(np.array([0, 0, 0]), np.array([1, 9, 3]), (keys, np.array([2.0])), np.array([9]), 10)
    assert rows.tolist() == [1] and grades.tolist() == [2.0]


# ---------------------------------------------------------------------------------------------
# keys and join
# ---------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(run=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5)), max_size=30),
       judged=st.dictionaries(st.tuples(st.integers(0, 3), st.integers(0, 5)), st.integers(-1, 3), max_size=10),
       parts=st.integers(1, 5))
def test_join_finds_the_judged_pairs(run: list[tuple[int, int]], judged: dict[tuple[int, int], int], parts: int) -> None:
    rq = np.array([q for q, _ in run], dtype=np.int32)
    rd = np.array([d for _, d in run], dtype=np.int64)
    jq = np.array([q for q, _ in judged], dtype=np.int32)
    jd = np.array([d for _, d in judged], dtype=np.int64)
    order, keys = sort_keys(pair_keys(jq, jd, 6))
    assert order.tolist() == sorted(range(len(judged)), key=lambda i: list(judged)[i])
    grades = np.array(list(judged.values()), dtype=np.float64)[order]
    want = [(i, float(judged[p])) for i, p in enumerate(run) if p in judged]
    rows, got = join(rq, rd, (keys, grades), jd, 6)
    assert list(zip(rows.tolist(), got.tolist(), strict=True)) == want
    candidates = judged_doc_rows(rd, jd)
    assert candidates is not None
    in_parts = joined([join(rq, rd, (keys, grades), jd, 6, part) for part in np.array_split(candidates, parts)])
    assert in_parts[0].tolist() == rows.tolist() and in_parts[1].tolist() == got.tolist()


# ---------------------------------------------------------------------------------------------
# duplicates: the checks and the policies
# ---------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(blocks=st.lists(st.tuples(st.integers(0, 6), st.integers(1, 6)), max_size=12), seed=st.integers(0, 2**31),
       block_rows=st.sampled_from([1, 4, 1 << 18]), matrix_blocks=st.sampled_from([1, 2, 8]))
def test_pairs_repeat_is_a_set_check(blocks: list[tuple[int, int]], seed: int, block_rows: int, matrix_blocks: int) -> None:
    rng = np.random.default_rng(seed)
    q = np.repeat(np.array([b for b, _ in blocks], dtype=np.int32), [n for _, n in blocks])
    doc = rng.integers(0, 12, len(q)).astype(np.int64)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(align_sizes, "BLOCK_ROWS", block_rows)
        mp.setattr(align_sizes, "MATRIX_BLOCKS", matrix_blocks)
        got = pairs_repeat(q, doc, 12)
    assert got == (len(set(zip(q.tolist(), doc.tolist(), strict=True))) < len(q))


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.integers(0, 6), max_size=25), data=st.data(), policy=st.sampled_from(["first", "best"]))
def test_resolve_duplicates_keeps_what_the_policy_says(keys: list[int], data: st.DataObject, policy: str) -> None:
    values = data.draw(st.lists(st.integers(-2, 2), min_size=len(keys), max_size=len(keys)))
    keep, resolved = resolve_duplicates(np.array(keys, dtype=np.int64), np.array(values, dtype=np.float64), policy,
                                        None)  # type: ignore[arg-type]  # the table names errors only
    want = _kept([(str(k), "") for k in keys], [float(v) for v in values], policy, [True] * len(keys))
    assert resolved == len(keys) - len(set(keys))
    if resolved:  # with none resolved, every row stays and the rows may not be listed
        assert keep.tolist() == want
