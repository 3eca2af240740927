"""Every field of a ranking against a brute-force ranking written from the definitions.

The other ordering tests check the ranker's paths against its own full ranking, and the full
ranking's document order against a brute-force sort; mutation testing (docs/mutation.md) showed
that a change shared by every path (a rank off by one, a grade policy, a dropped-row count, the
usable judgments, the score precision) passed them all. Here each field of
:class:`rankflavor.order.Ranked` (query, rank, grade, judged, pooled, score, rows per query,
usable judgments, rows dropped by the depth cut and by condensing, the row of each document) is
compared with plain Python over the input lines, for a grid of orderings, on every path that
gives it: :meth:`Ranker.rank`, :meth:`Ranker.judged` (a run in rank order), ``Ranker.ranked``
with each :class:`Needs`, and :class:`BlockRanker`.

Definitions (trec_eval's, as README and rankflavor.order document them): rows sort by score
descending at the ordering's precision, then the tie rule (docno bytes descending or ascending,
file order, lowest or highest grade first then docno descending); ``self_hits=drop`` removes a
document named like its query, ``depth`` keeps the top N, then ``unjudged=condensed`` removes rows
without a usable judgment and ranks close up. A grade is truncated toward zero under
``fractional=truncate``; a negative grade is unjudged (still pooled) unless ``negatives=zero``
makes it 0.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rankflavor.align import Aligned, align
from rankflavor.errors import InputError
from rankflavor.io.columns import string_array
from rankflavor.io.tables import Qrels, Run
from rankflavor.order import Needs, Ordering, Ranked, Ranker, SharedWork
from rankflavor.order.blocks import BlockRanker, BlockSort

Line = tuple[str, str, float]


def collection(seed: int, text_docs: bool, in_rank_order: bool) -> tuple[list[Line], list[Line]]:
    """Judgment and run lines: ties, fractional and negative grades, self hits, run-only and
    qrels-only queries, ids whose byte order is not their numeric order."""
    rng = np.random.default_rng(seed)
    queries = ["10", "2", "q1", "9"]
    run: list[Line] = []
    qrels: list[Line] = []
    for q in queries:
        n = int(rng.integers(1, 12))
        pool = [f"d{i}" if text_docs else str(i) for i in (1, 2, 10, 11, 100, 20, 3, 9, 99, 5, 7, 70)]
        names = pool + ([q] if q not in pool and q != "9" else [])  # a self hit: a document named like its query
        docs = [str(d) for d in rng.choice(names, size=min(n, len(names)), replace=False)]
        scores = rng.choice([0.5, 1.0, 1.0 + 1e-12, 2.0, 3.0], size=len(docs))  # 1 + 1e-12 ties 1.0 in float32
        lines = [(q, d, float(s)) for d, s in zip(docs, scores, strict=True)]
        run += sorted(lines, key=lambda r: -r[2]) if in_rank_order else lines
        if q != "q1":  # q1 is run-only
            for d in [*docs, "unretrieved"]:
                if rng.random() < 0.7:
                    qrels.append((q, d, float(rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0]))))
    qrels.append(("qrels_only", "x", 1.0))
    if not any(q == "10" and d == run[0][1] for q, d, _ in qrels) and run[0][0] == "10":
        qrels.append(("10", run[0][1], 1.0))
    return qrels, run


def aligned_of(qrels: list[Line], run: list[Line]) -> Aligned:
    return align(
        Qrels(string_array([q for q, _, _ in qrels]), string_array([d for _, d, _ in qrels]),
              np.array([g for _, _, g in qrels]), "qrels"),
        Run(string_array([q for q, _, _ in run]), string_array([d for _, d, _ in run]),
            np.array([s for _, _, s in run]), "run"),
    )


def policy_grade(g: float | None, o: Ordering, truncate: bool) -> tuple[float, bool, bool]:
    """(grade, judged, pooled) of a row whose judgment is ``g`` (None: not in the qrels)."""
    if g is None:
        return 0.0, False, False
    if truncate:
        g = float(math.trunc(g))
    if o.negatives == "zero":
        return max(g, 0.0), True, True
    return (g, True, True) if g >= 0 else (0.0, False, True)


def reference(qrels: list[Line], run: list[Line], o: Ordering) -> dict[str, object]:
    """The ranking by the definitions: per ranked row (query, rank, docno, grade, judged, pooled,
    score), rows per query, dropped counts, and the usable judgments per query."""
    truncate = o.fractional == "truncate" and any(g != math.trunc(g) for _, _, g in qrels)
    grade_of = {(q, d): g for q, d, g in qrels}
    rows = []
    n_ret: dict[str, int] = {}
    dropped_depth = dropped_unjudged = 0
    for q in sorted({q for q, _, _ in run}):  # code order is byte order of the ids
        lines = [(pos, d, s) for pos, (qq, d, s) in enumerate(run) if qq == q]
        at = [(pos, d, float(np.float32(s)) if o.precision == "float32" else s) for pos, d, s in lines]
        grade = {d: policy_grade(grade_of.get((q, d)), o, truncate) for _, d, _ in at}
        rule = "docno_desc" if o.ties == "averaged" else o.ties
        if rule == "docno_asc":
            at.sort(key=lambda r: r[1].encode())
        elif rule != "input_order":
            at.sort(key=lambda r: r[1].encode(), reverse=True)
        if rule == "pessimistic":
            at.sort(key=lambda r: grade[r[1]][0])
        elif rule == "optimistic":
            at.sort(key=lambda r: -grade[r[1]][0])
        at.sort(key=lambda r: -r[2])
        if o.self_hits == "drop":
            at = [r for r in at if r[1] != q]
        if o.depth is not None:
            dropped_depth += max(0, len(at) - o.depth)
            at = at[:o.depth]
        if o.unjudged == "condensed":
            kept = [r for r in at if grade[r[1]][1]]
            dropped_unjudged += len(at) - len(kept)
            at = kept
        n_ret[q] = len(at)
        rows += [(q, rank, d, *grade[d], s) for rank, (_, d, s) in enumerate(at, 1)]
    judgments: dict[str, list[float]] = {}
    for q, _, g in qrels:
        grade, judged, _ = policy_grade(g, o, truncate)
        if judged:
            judgments.setdefault(q, []).append(grade)
    return {"rows": rows, "n_ret": n_ret, "depth": dropped_depth, "unjudged": dropped_unjudged,
            "judgments": {q: sorted(v) for q, v in judgments.items()}}


def fields(aligned: Aligned, r: Ranked, docs: list[str]) -> dict[str, object]:
    ids = [str(q) for q in aligned.query_ids]
    assert r.row is not None
    rows = [(ids[q], int(rank), docs[int(aligned.run_row[row])], float(g), bool(j), bool(p), float(s))
            for q, rank, row, g, j, p, s in zip(r.q, r.rank, r.row, r.grade, r.judged, r.pooled, r.score, strict=True)]
    judgments: dict[str, list[float]] = {}
    for q, g in zip(r.jq, r.jgrade, strict=True):
        judgments.setdefault(ids[q], []).append(float(g))
    return {"rows": rows, "n_ret": {ids[q]: int(n) for q, n in enumerate(r.n_ret) if n or ids[q] in
                                    {row[0] for row in rows}},
            "depth": r.dropped_by_depth, "unjudged": r.dropped_unjudged,
            "judgments": {q: sorted(v) for q, v in judgments.items()}}


def without_doc(row: tuple) -> tuple:  # type: ignore[type-arg]
    return row[:2] + row[3:]


def expected_n_ret(want: dict[str, object]) -> dict[str, int]:
    return {q: n for q, n in want["n_ret"].items() if n}  # type: ignore[attr-defined]


ORDERINGS = [
    Ordering(ties=t, depth=depth, unjudged=u, negatives=neg, precision=p, self_hits=sh, fractional=f)
    for t, depth, u, neg, p, sh, f in itertools.product(
        ["docno_desc", "docno_asc", "input_order", "averaged", "pessimistic", "optimistic"], [None, 1, 3],
        ["zero", "condensed"], ["unjudged", "zero"], ["float64", "float32"], ["keep", "drop"], ["keep", "truncate"])
][::7]  # every 7th of the 576 combinations: each value of each knob, 83 orderings


def _check_full(qrels: list[Line], run: list[Line], o: Ordering, ranker: Ranker, aligned: Aligned) -> None:
    docs = [d for _, d, _ in run]
    want = reference(qrels, run, o)
    got = fields(aligned, ranker.rank(o), docs)
    assert got["rows"] == want["rows"], o
    assert {q: n for q, n in got["n_ret"].items() if n} == expected_n_ret(want), o  # type: ignore[attr-defined]
    assert (got["depth"], got["unjudged"]) == (want["depth"], want["unjudged"]), o
    assert got["judgments"] == want["judgments"], o


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("text_docs", [False, True])
@pytest.mark.parametrize("in_rank_order", [False, True])
def test_full_ranking_is_the_definition(seed: int, text_docs: bool, in_rank_order: bool) -> None:
    qrels, run = collection(seed, text_docs, in_rank_order)
    aligned = aligned_of(qrels, run)
    ranker = Ranker(aligned)
    for o in ORDERINGS:
        _check_full(qrels, run, o, ranker, aligned)
    fresh = Ranker(aligned)  # shared work in the other sequence
    for o in ORDERINGS[::-1][:12]:
        _check_full(qrels, run, o, fresh, aligned)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("text_docs", [False, True])
def test_judged_rows_of_a_run_in_rank_order_are_the_definition(seed: int, text_docs: bool) -> None:
    """The judged path reads only the judged rows of a run in rank order: each keeps its rank in the
    full list (after depth and condensing), and rows per query count the full list."""
    qrels, run = collection(seed, text_docs, in_rank_order=True)
    aligned = aligned_of(qrels, run)
    docs = [d for _, d, _ in run]
    for o in ORDERINGS:
        if o.self_hits == "drop":
            continue
        want = reference(qrels, run, o)
        want_rows = [r for r in want["rows"] if r[5]]  # type: ignore[attr-defined]
        for ranked in (Ranker(aligned).judged(o), Ranker(aligned).ranked(o, Needs(judged_only=True))):
            assert ranked is not None and ranked.judged_only
            got = fields(aligned, ranked, docs)
            # which of equally judged tied documents sits where is left to file order (Ranker.judged)
            assert [without_doc(r) for r in got["rows"]] == [without_doc(r) for r in want_rows], o  # type: ignore[attr-defined]
            assert {q: n for q, n in got["n_ret"].items() if n} == expected_n_ret(want), o  # type: ignore[attr-defined]
            assert (got["depth"], got["unjudged"]) == (want["depth"], want["unjudged"]), o
            assert got["judgments"] == want["judgments"], o


def test_top_rows_hold_every_row_to_rank_k_and_the_judged_below() -> None:
    qrels, run = collection(3, True, in_rank_order=True)
    aligned = aligned_of(qrels, run)
    docs = [d for _, d, _ in run]
    for o in ORDERINGS:
        if o.depth is not None or o.condensed or o.self_hits == "drop":
            continue
        want = reference(qrels, run, o)
        for k in (1, 2, 4):
            got = fields(aligned, Ranker(aligned).ranked(o, Needs(top_rows=k)), docs)
            rows = got["rows"]  # type: ignore[var-annotated]
            for q in {r[0] for r in want["rows"]}:  # type: ignore[attr-defined]
                mine = [r for r in want["rows"] if r[0] == q]  # type: ignore[attr-defined]
                # down to the end of the tie group holding rank k every row is there, in file order
                end = max((r[1] for r in mine if r[1] <= k or r[6] == mine[min(k, len(mine)) - 1][6]), default=0)
                top = sorted((r[1], r[3:]) for r in rows if r[0] == q and r[1] <= end)
                assert [t[0] for t in top] == list(range(1, end + 1)), (o, k, q)
                assert sorted(t[1] for t in top) == sorted(r[3:] for r in mine if r[1] <= end), (o, k, q)
                below = [without_doc(r) for r in rows if r[0] == q and r[1] > end]
                assert below == [without_doc(r) for r in mine if r[1] > end and r[5]], (o, k, q)
            assert {q: n for q, n in got["n_ret"].items() if n} == expected_n_ret(want)  # type: ignore[attr-defined]


BLOCK_ORDERINGS = [Ordering(ties=t, precision=p, negatives=n, fractional=f) for t, p, n, f in itertools.product(
    ["docno_desc", "docno_asc", "input_order", "averaged", "pessimistic", "optimistic"], ["float64", "float32"],
    ["unjudged", "zero"], ["keep", "truncate"])]


@pytest.mark.parametrize("docnos_in_file_order", [False, True])
def test_block_ranker_gives_every_field_of_the_ranker(docnos_in_file_order: bool) -> None:
    """A block ranker (every row judged, blocks in code order) against the ranker's ranking and the
    definition: every field, the usable judgments and the shared work; ties of equal judgments
    are common (few scores, few grades), so which document sits where is compared too."""
    rng = np.random.default_rng(2)
    qrels: list[Line] = []
    run: list[Line] = []
    for i in range(12):
        q = f"q{i:02d}"
        n = int(rng.integers(1, 9))
        for j in (range(n) if docnos_in_file_order else rng.permutation(n)):
            d = f"d{j}"  # one digit: byte order is numeric order
            run.append((q, d, float(rng.choice([1.0, 1.0 + 1e-12, 2.0]))))
            qrels.append((q, d, float(rng.choice([-1.0, 0.0, 0.5, 1.0, 1.0]))))
    aligned = aligned_of(qrels, run)
    starts = aligned.query_starts
    assert starts is not None
    lengths = np.diff(np.append(starts, len(aligned.run_q)))
    shared = SharedWork()
    blocks = BlockRanker(aligned, BlockSort(starts, lengths), shared, docnos_in_file_order=docnos_in_file_order)
    docs = [d for _, d, _ in run]
    for o in BLOCK_ORDERINGS:
        assert BlockRanker.takes(o)
        want = reference(qrels, run, o)
        full = blocks.ranked(aligned.run_score, o)
        assert full.aligned is aligned and full.shared is shared and full.ordering == o and full.to_rank is None
        got = fields(aligned, full, docs)
        ranker = fields(aligned, Ranker(aligned).rank(o, exact=False), docs)
        if docnos_in_file_order and o.tie_rule in ("docno_desc", "docno_asc", "input_order"):
            # the sort itself orders the ties: every document in the rule's place, as the definition has it
            assert got == {**ranker, "rows": want["rows"]}, o
        elif docnos_in_file_order:
            assert {**got, "rows": None} == {**ranker, "rows": None}, o
        else:
            assert got == ranker, o  # the same steps as the ranker's: the same documents too
        assert [without_doc(r) for r in got["rows"]] == [without_doc(r) for r in want["rows"]], o  # type: ignore[attr-defined]
        assert got["judgments"] == want["judgments"] and (got["depth"], got["unjudged"]) == (0, 0)
        for to_rank in (1, 2, int(lengths.max())):
            top = blocks.ranked(aligned.run_score, o, to_rank)
            assert top.to_rank == (None if to_rank >= lengths.max() else to_rank)
            assert fields(aligned, top, docs)["rows"] == [r for r in got["rows"] if r[1] <= to_rank], o  # type: ignore[attr-defined]


def test_block_ranker_refuses_what_the_grade_policies_refuse() -> None:
    aligned = aligned_of([("a", "d0", 0.5), ("a", "d1", -1.0)], [("a", "d0", 1.0), ("a", "d1", 0.5)])
    blocks = BlockRanker(aligned, BlockSort(np.array([0]), np.array([2])), SharedWork())
    with pytest.raises(InputError, match=r"^qrels: 1 judgment\(s\) have a grade that is not a whole number"):
        blocks.ranked(aligned.run_score, Ordering(fractional="error"))
    with pytest.raises(InputError, match=r"1 judgment\(s\) have a negative grade"):
        blocks.ranked(aligned.run_score, Ordering(negatives="error"))
    assert blocks.ranked(aligned.run_score, Ordering(fractional="truncate")).grade.tolist() == [0.0, 0.0]


def test_block_sort_defaults_and_no_blocks() -> None:
    """Called with the scores alone: every row, equal scores in file order; no blocks: no rows."""
    sort = BlockSort(np.array([0, 3]), np.array([3, 2]))
    assert sort(np.array([0.1, 0.5, 0.1, 2.0, 3.0])).tolist() == [1, 0, 2, 4, 3]
    assert sort(np.array([0.1, 0.5, 0.1, 2.0, 3.0], dtype=np.float32)).tolist() == [1, 0, 2, 4, 3]
    empty = BlockSort(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    got = empty(np.zeros(0))
    assert got.dtype == np.int64 and got.shape == (0,)


def test_float32_keys_keep_tiny_differences() -> None:
    """float32 scores 1e-10 apart order by score, not by file (a key that added 1 would round them equal)."""
    sort = BlockSort(np.array([0]), np.array([3]))
    assert sort(np.array([1e-10, 3e-10, 2e-10], dtype=np.float32)).tolist() == [1, 2, 0]
    assert sort(np.array([-1e-10, -3e-10, -2e-10], dtype=np.float32)).tolist() == [0, 2, 1]


def test_order_key_names_every_ordering_knob() -> None:
    from rankflavor.flavor.flavor import Flavor
    from rankflavor.order import ORDER_KNOBS, order_key

    base = order_key(Flavor())
    assert base == tuple(str(getattr(Flavor(), k)) for k in ORDER_KNOBS) and "docno_desc" in base
    for knob, value in [("ties", "averaged"), ("depth", "10"), ("unjudged", "condensed"), ("precision", "float32"),
                        ("negatives", "zero"), ("self_hits", "drop"), ("fractional", "truncate"), ("run_only", "include")]:
        assert order_key(Flavor(**{knob: value})) != base, knob
    assert order_key(Flavor(gain="exp2")) == base


def test_takes_only_orderings_that_remove_no_row() -> None:
    assert BlockRanker.takes(Ordering())
    assert BlockRanker.takes(Ordering(ties="optimistic", precision="float32", negatives="zero"))
    assert not BlockRanker.takes(Ordering(depth=5))
    assert not BlockRanker.takes(Ordering(unjudged="condensed"))
    assert not BlockRanker.takes(Ordering(self_hits="drop"))


def test_refusing_grade_policies_count_what_they_refuse() -> None:
    qrels = [("a", "d1", 0.5), ("a", "d2", -1.0), ("a", "d3", -0.5), ("a", "d4", 2.5)]
    aligned = aligned_of(qrels, [("a", "d1", 1.0), ("a", "d2", 0.5)])
    with pytest.raises(InputError, match=r"3 judgment\(s\) have a grade that is not a whole number and the flavor says "
                                         r"fractional=error \(pytrec_eval and ir_measures reject them\); use "
                                         r"fractional=truncate \(trec_eval\) or fractional=keep$"):
        Ranker(aligned).rank(Ordering(fractional="error"))
    with pytest.raises(InputError, match=r"2 judgment\(s\) have a negative grade and the flavor says negatives=error; "
                                         r"use negatives=unjudged \(trec_eval\) or negatives=zero$"):
        Ranker(aligned).rank(Ordering(negatives="error"))
    # truncated toward zero, -0.5 is a judged 0, not a negative grade
    with pytest.raises(InputError, match=r"^.*1 judgment\(s\) have a negative grade"):
        Ranker(aligned).rank(Ordering(negatives="error", fractional="truncate"))
    whole = aligned_of([("a", "d1", 1.0), ("a", "d2", 0.0)], [("a", "d1", 1.0)])
    assert Ranker(whole).rank(Ordering(negatives="error", fractional="error")).grade.tolist() == [1.0]


def test_relaxed_is_the_order_before_rows_are_removed() -> None:
    o = Ordering(ties="optimistic", depth=3, unjudged="condensed", negatives="zero", precision="float32")
    assert o.relaxed() == Ordering(ties="optimistic", depth=None, unjudged="zero", negatives="zero", precision="float32")
