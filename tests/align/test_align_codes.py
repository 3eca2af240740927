"""Alignment's private helpers the piece path leans on: query codes from chunks with their own
dictionaries, judged-docno bitsets, duplicate checks, hashed docno codes, parts shared by two
threads.

Moved from ``test_pieces.py``; they test alignment's modules through their public names
and are rewired to alignment's public seams where alignment becomes a package.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor import align as align_module
from rankflavor.align import docs as align_docs
from rankflavor.align import sizes as align_sizes
from rankflavor.align import stage as align_stage
from rankflavor.align.duplicates import pairs_repeat, resolve_duplicates
from rankflavor.align.keys import sort_keys
from rankflavor.align.lookups import bitset, judged_doc_rows, lookup
from rankflavor.align.queries import coded_queries, query_names, row_codes
from rankflavor.base.kernels import block_starts
from rankflavor.io import docnos as docnos_module
from rankflavor.io import run as run_module
from rankflavor.io.columns import to_strings
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.trec import read_qrels, read_run

from ..support.io_cases import MEASURES, pieces, qrels_text, run_lines, whole_files

__all__ = ["pieces"]  # a fixture, used by name


# ---------------------------------------------------------------------------------------------
# Query codes and judged-docno lookups
# ---------------------------------------------------------------------------------------------


def test_query_codes_from_chunks_with_their_own_dictionaries() -> None:
    """Chunks with different dictionaries, an unused dictionary entry, ids only in the qrels:
    codes follow byte order of the ids and unused entries are no queries."""
    a = pa.DictionaryArray.from_arrays(pa.array([1, 0, 1], type=pa.int32()), pa.array(["q2", "q10", "unused"]))
    a = a.slice(0, 3)
    b = pa.array(["q10", "é", "q10"]).dictionary_encode()
    run_query = pa.chunked_array([a, b])
    qrels_query = pa.array(["q3", "q2"])
    rq, jq, ids, run_rows, qrels_rows, starts = coded_queries(*query_names(run_query, qrels_query))
    assert starts is None  # q10 comes back after q2
    assert ids == sorted(["q10", "q2", "q3", "é"])
    assert run_rows.tolist() == [np.sum(rq == c) for c in range(len(ids))]
    assert [ids[c] for c in rq] == ["q10", "q2", "q10", "q10", "é", "q10"]
    assert [ids[c] for c in jq] == ["q3", "q2"]
    assert qrels_rows.tolist() == [np.sum(jq == c) for c in range(len(ids))]


@pytest.mark.parametrize("n_parts", [0, 1, 2, 3, 6])
def test_codes_of_dictionary_parts(n_parts: int) -> None:
    """Query codes of dictionary parts (none, one, several; unused dictionary entries) and the
    rows per code."""
    rng = np.random.default_rng(n_parts)
    names = ["a", "b", "c", "d", "e"]
    parts = [(rng.integers(0, 3, int(rng.integers(0, 50))).astype(np.int32), list(rng.permutation(names)[:4]))
             for _ in range(n_parts)]  # fmt: skip
    code = {n: i for i, n in enumerate(names)}
    want = [code[p_names[i]] for idx, p_names in parts for i in idx.tolist()]
    got, counts, starts = row_codes(parts, code)
    assert got.tolist() == want
    assert counts.tolist() == np.bincount(np.array(want, dtype=np.int64), minlength=len(names)).tolist()
    expected = block_starts(np.array(want, dtype=np.int64))
    assert (starts is None) == (expected is None)
    if starts is not None and expected is not None:
        assert starts.tolist() == expected.tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcde"), min_size=0, max_size=12), min_size=0, max_size=5),
       st.booleans())
def test_query_blocks_across_parts(parts_ids: list[list[str]], grouped: bool) -> None:
    """The first row of each query's block, found run by run, equals a scan of every row's code:
    a block may go on from one part into the next (a query cut by a piece boundary), and a query
    that comes back after another one means no blocks. ``grouped`` sorts the ids so that blocks
    are common."""
    if grouped:
        flat = sorted(i for ids in parts_ids for i in ids)
        cuts = np.cumsum([0] + [len(ids) for ids in parts_ids])
        parts_ids = [flat[a:b] for a, b in itertools.pairwise(cuts.tolist())]
    code = {n: i for i, n in enumerate("abcde")}
    parts = []
    for ids in parts_ids:
        names = sorted(set(ids), reverse=True)  # a dictionary per part, in an order of its own
        parts.append((np.array([names.index(i) for i in ids], dtype=np.int32), names))
    want = np.array([code[i] for ids in parts_ids for i in ids], dtype=np.int64)
    got, counts, starts = row_codes(parts, code)
    assert got.tolist() == want.tolist()
    assert counts.tolist() == np.bincount(want, minlength=5).tolist()
    expected = block_starts(want)
    assert (starts is None) == (expected is None)
    if starts is not None and expected is not None:
        assert starts.tolist() == expected.tolist()


@settings(max_examples=200, deadline=None)
@given(
    members=st.lists(st.integers(0, 3000), max_size=50),
    codes=st.lists(st.integers(0, 6000), max_size=300),
    block=st.sampled_from([1, 3, 8, 1 << 18]),
)
def test_bitset_lookups_match_isin(members: list[int], codes: list[int], block: int) -> None:
    """The judged-doc bitset looked up per code, and the judged rows found block by block; codes
    past the span of the members (most of a run's docnos) included, as alignment makes it."""
    span = max(members, default=-1) + 1
    old = align_sizes.BLOCK_ROWS
    align_sizes.BLOCK_ROWS = block
    try:
        got = lookup(bitset(np.array(members, dtype=np.int64), span), np.array(codes, dtype=np.int64))
        rows = judged_doc_rows(np.array(codes, dtype=np.int64), np.array(members, dtype=np.int64))
    finally:
        align_sizes.BLOCK_ROWS = old
    assert got.dtype == np.bool_
    assert got.tolist() == np.isin(codes, members).tolist()
    assert rows is not None and rows.tolist() == np.flatnonzero(np.isin(codes, members)).tolist()


@settings(max_examples=200, deadline=None)
@given(
    blocks=st.lists(st.tuples(st.integers(0, 30), st.sampled_from([1, 2, 9, 10, 12])), min_size=0, max_size=25),
    docs=st.integers(1, 40),
    slab=st.sampled_from([1, 2, 5, 16, 1 << 18]),
    seed=st.integers(0, 2**31),
    wide=st.booleans(),
)
def test_pairs_repeat_matches_a_brute_force_check(
    blocks: list[tuple[int, int]], docs: int, slab: int, seed: int, wide: bool
) -> None:
    """Contiguous query blocks are checked in slabs of whole blocks, a query that comes back
    after another one by one sort of every pair: both must say what a set of pairs says. Codes
    of a span past int32 (hashed docnos) are sorted as int64, near or past 2**31 too."""
    rng = np.random.default_rng(seed)
    q = np.repeat(np.array([b[0] for b in blocks], dtype=np.int64), [b[1] for b in blocks])
    doc = rng.integers(0, docs, len(q)).astype(np.int64)
    if wide:  # values that int32 would wrap onto each other: 2**32 + d and d
        doc = doc + np.where(rng.random(len(doc)) < 0.5, 1 << 32, 0)
        docs = (1 << 33) + docs
    old = align_sizes.BLOCK_ROWS, align_sizes.MATRIX_BLOCKS
    want = len(set(zip(q.tolist(), doc.tolist(), strict=True))) < len(q)
    try:
        align_sizes.BLOCK_ROWS = slab
        for matrix_blocks in (1, 2, 1 << 30):  # blocks of one length as matrices, or on (query, doc) keys
            align_sizes.MATRIX_BLOCKS = matrix_blocks
            assert pairs_repeat(q, doc, docs) == want, matrix_blocks
    finally:
        align_sizes.BLOCK_ROWS, align_sizes.MATRIX_BLOCKS = old


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=0, max_size=60), st.sampled_from([1, 1 << 20, 1 << 57]))
def test_sorted_judgment_keys(small: list[int], scale: int) -> None:
    """Keys sorted with their row number packed in (when both fit in 63 bits) or by argsort:
    the sorted keys and a stable permutation either way."""
    keys = np.array(small, dtype=np.int64) * scale  # the largest scale leaves no room for rows
    order, ordered = sort_keys(keys)
    want = np.argsort(keys, kind="stable")
    assert order.tolist() == want.tolist()
    assert ordered.tolist() == keys[want].tolist()


@settings(max_examples=300, deadline=None)
@given(
    keys=st.lists(st.integers(0, 12), min_size=2, max_size=60),
    values=st.lists(st.integers(-3, 3), min_size=60, max_size=60),
    policy=st.sampled_from(["first", "best"]),
    scale=st.sampled_from([1, 1 << 57]),
)
def test_resolving_duplicates_from_the_callers_sort_equals_sorting_again(
    keys: list[int], values: list[int], policy: str, scale: int
) -> None:
    """Alignment hands the judgments' sort (:func:`sort_keys`, packed or argsort) to the
    duplicate resolver; what it keeps must equal what the resolver finds sorting on its own."""
    k = np.array(keys, dtype=np.int64) * scale
    v = np.array(values[: len(keys)], dtype=np.float64)
    own = resolve_duplicates(k, v, policy, None)  # type: ignore[arg-type]  # the table names errors only
    given_sort = resolve_duplicates(k, v, policy, None, sort_keys(k))  # type: ignore[arg-type]
    assert own[1] == given_sort[1] == len(keys) - len(set(keys))
    if own[1]:
        assert own[0].tolist() == given_sort[0].tolist()


# ---------------------------------------------------------------------------------------------
# Text docnos of a big run: codes from hashes, exact where it matters
# ---------------------------------------------------------------------------------------------


def _weak(kind: str):  # type: ignore[no-untyped-def]
    """Hash functions that collide on purpose, to reach every verification."""
    real = docnos_module.hash64

    def weak(values):  # type: ignore[no-untyped-def]
        h = real(values)
        if kind == "constant":
            return np.zeros_like(h)
        return h % np.uint64(3)  # three values: collisions everywhere, within queries too

    return weak


@pytest.fixture(params=["one thread", "two threads"])
def threads(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Small runs are aligned on one thread; past align.sizes.PARALLEL_ROWS rows (here: any run),
    the hashed docno codes are matched half on each of two threads."""
    if request.param == "two threads":
        monkeypatch.setattr(align_sizes, "PARALLEL_ROWS", 0)
    return str(request.param)


@pytest.mark.parametrize("hash_kind", ["real", "mod3", "constant"])
@pytest.mark.parametrize("seed", range(3))
def test_text_docnos_by_hash_equal_the_exact_codes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None, seed: int, hash_kind: str, threads: str
) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(qrels_text(seed, docnos="text"))
    run.write_text("\n".join(run_lines(seed, docnos="text")) + "\n")
    if hash_kind != "real":
        weak = _weak(hash_kind)
        monkeypatch.setattr(docnos_module, "hash64", weak)
        monkeypatch.setattr(align_docs, "hash64", weak)
        monkeypatch.setattr(run_module, "hash64", weak)
    assert read_run(run).doc_hashes is not None
    hashed = rankflavor.evaluate(str(qrels), str(run), MEASURES)
    monkeypatch.undo()
    whole_files(monkeypatch)  # small whole-file runs are dictionary-encoded: the exact reference
    assert read_run(run).doc_hashes is None
    exact = rankflavor.evaluate(str(qrels), str(run), MEASURES)
    assert hashed.per_query() == exact.per_query()
    assert hashed.counts == exact.counts


def _b_hashes_like_a(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    real = docnos_module.hash64

    def b_like_a(values):  # type: ignore[no-untyped-def]
        h = real(values)
        h[np.array([v == "b" for v in to_strings(values)], dtype=bool)] = real(pa.array(["a"]))[0]
        return h

    monkeypatch.setattr(align_docs, "hash64", b_like_a)
    return b_like_a


def test_a_hash_collision_with_a_judged_docno_does_not_join(monkeypatch: pytest.MonkeyPatch, threads: str) -> None:
    """"b" hashes like the judged "a" (and nothing else collides, so no restart hides it): only
    the string comparison keeps "b" from taking "a"'s grade."""
    b_like_a = _b_hashes_like_a(monkeypatch)
    q = as_qrels({"q1": {"a": 3}})
    r = as_run({"q1": {"b": 2.0, "c": 1.0}, "q2": {"a": 1.0}})
    r = dataclasses.replace(r, doc_hashes=(b_like_a(r.doc),))
    aligned = align_module.align(q, r)
    assert len(aligned.judged_row) == 0
    assert len(set(aligned.run_doc[:2].tolist())) == 2
    assert rankflavor.evaluate(q, r, "num_rel_ret", preset="trec_eval")["num_rel_ret"].mean == 0.0


def test_judged_docnos_sharing_a_hash_fall_back_to_exact_codes(monkeypatch: pytest.MonkeyPatch, threads: str) -> None:
    b_like_a = _b_hashes_like_a(monkeypatch)
    q = as_qrels({"q1": {"a": 3}, "q2": {"b": 1}})
    r = as_run({"q1": {"b": 2.0, "c": 1.0}, "q2": {"a": 1.0, "b": 0.5}})
    r = dataclasses.replace(r, doc_hashes=(b_like_a(r.doc),))
    aligned = align_module.align(q, r)
    assert [int(x) for x in aligned.judged_row] == [3]  # q2's "b" only
    res = rankflavor.evaluate(q, r, ["num_rel_ret"], preset="trec_eval")
    assert res["num_rel_ret"].per_query() == {"q1": 0.0, "q2": 1.0}


def test_a_run_the_reader_hashed_is_not_read_as_integers_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None
) -> None:
    """The reader hashes docnos only when some piece is not all canonical integers, so the
    two-thread hashed path starts no integer reading of the run on the worker (it used to,
    and never looked at the result)."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(qrels_text(6, docnos="text"))
    run.write_text("\n".join(run_lines(6, docnos="text")) + "\n")
    q, r = read_qrels(qrels), read_run(run)
    assert r.doc_hashes is not None
    read_as_integers: list[int] = []
    real = align_stage.canonical_integers

    def counted(values, cast=None):  # type: ignore[no-untyped-def]
        read_as_integers.append(len(values))
        return real(values, cast)

    monkeypatch.setattr(align_stage, "canonical_integers", counted)
    monkeypatch.setattr(align_docs, "canonical_integers", counted)
    monkeypatch.setattr(align_sizes, "PARALLEL_ROWS", 0)  # the two-thread path
    aligned = align_module.align(q, r)
    assert read_as_integers == [] and len(aligned.judged_row) > 0


@pytest.mark.parametrize("docnos", ["integers", "zero_padded", "text"])
@pytest.mark.parametrize("seed", range(3))
def test_lookups_and_joins_shared_in_small_parts_equal_one_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, docnos: str
) -> None:
    """Past align.sizes.PARALLEL_ROWS the judged-row lookups and the join are split into parts two
    threads share; in parts of a few rows each, alignment must equal the one-thread path."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(qrels_text(seed, docnos=docnos))
    run.write_text("\n".join(run_lines(seed, docnos=docnos)) + "\n")
    q, r = read_qrels(qrels), read_run(run)
    one = align_module.align(q, r)
    monkeypatch.setattr(align_sizes, "PARALLEL_ROWS", 0)
    monkeypatch.setattr(align_sizes, "BLOCK_ROWS", 7)
    monkeypatch.setattr(align_sizes, "JOIN_ROWS", 3)
    parts: list[int] = []
    real = align_stage.join

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        parts.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(align_stage, "join", counted)
    two = align_module.align(q, r)
    assert len(parts) > 10  # the join did run in many parts
    assert len(one.judged_row) > 20
    assert two.judged_row.tolist() == one.judged_row.tolist()
    assert two.judged_grade.tolist() == one.judged_grade.tolist()
    assert two.run_q.tolist() == one.run_q.tolist()
    assert two.counts == one.counts
