"""Edges of rankflavor.order that mutation testing (docs/mutation.md) found unpinned.

Expected values come from the definitions (tests/order/test_order_reference.py's brute-force
``reference``, counts of the input lines), never from the code under test.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import rankflavor as rf
from rankflavor.errors import InputError
from rankflavor.io.columns import string_array
from rankflavor.io.tables import Run
from rankflavor.order import Needs, Ordering, Ranker, SharedWork, grades
from rankflavor.order.blocks import BlockRanker, BlockSort
from rankflavor.order.layout import by_query_and_score, find_layout
from rankflavor.order.ties import averaged_at

from .test_order_reference import aligned_of, fields, reference

# Every row judged, blocks in code order ("a" < "b" < "zz"), docnos descending along the rows (so
# file order is not docno order), ties; "zz" is judged but not retrieved: the highest query code.
QRELS = [("a", "d3", 1.0), ("a", "d2", 0.0), ("a", "d1", 2.0), ("b", "d9", 1.0), ("b", "d5", 1.0),
         ("b", "d4", 0.0), ("zz", "d1", 1.0)]
RUN = [("a", "d3", 1.0), ("a", "d2", 1.0), ("a", "d1", 1.0), ("b", "d9", 2.0), ("b", "d5", 1.0), ("b", "d4", 1.0)]


def block_ranker(**kwargs: bool) -> tuple[BlockRanker, object]:
    aligned = aligned_of(QRELS, RUN)
    starts = aligned.query_starts
    assert starts is not None
    sort = BlockSort(starts, np.diff(np.append(starts, len(aligned.run_q))))
    return BlockRanker(aligned, sort, SharedWork(), **kwargs), aligned


def test_block_ranker_orders_ties_by_docno_unless_told_docnos_ascend() -> None:
    """By default a block ranker does not assume docnos ascend along the rows: every tie rule puts
    each document where the definition does."""
    blocks, aligned = block_ranker()
    docs = [d for _, d, _ in RUN]
    for ties in ("docno_asc", "docno_desc", "input_order", "pessimistic", "optimistic"):
        o = Ordering(ties=ties)
        got = fields(aligned, blocks.ranked(aligned.run_score, o), docs)  # type: ignore[attr-defined]
        assert got["rows"] == reference(QRELS, RUN, o)["rows"], ties


def test_block_ranker_counts_rows_of_every_query() -> None:
    """Rows per query: one count per query of the alignment, 0 for the judged query no row retrieves."""
    blocks, aligned = block_ranker()
    ranked = blocks.ranked(aligned.run_score, Ordering())  # type: ignore[attr-defined]
    ids = [str(q) for q in aligned.query_ids]  # type: ignore[attr-defined]
    want = {q: sum(1 for qq, _, _ in RUN if qq == q) for q in ids}
    assert dict(zip(ids, ranked.n_ret.tolist(), strict=True)) == want == {"a": 3, "b": 3, "zz": 0}
    assert ranked.n_queries == 3


def test_usable_judgments_are_the_indices_of_judgments_the_policies_keep() -> None:
    """The indices of the judgments a ranking's ``jq``/``jgrade`` hold: grade >= 0 after truncation
    toward zero (trec_eval's atol: -0.5 is a 0), every one under negatives=zero."""

    qrels = [("a", "d1", 1.0), ("a", "d2", -1.0), ("a", "d3", -0.5), ("a", "d4", 2.5), ("b", "d1", 0.0),
             ("b", "d2", -2.0)]
    aligned = aligned_of(qrels, [("a", "d1", 1.0), ("b", "d1", 1.0)])
    g = aligned.qrels_grade.tolist()
    assert sorted(g) == sorted(x for _, _, x in qrels)
    for truncate in (False, True):
        want = [i for i, x in enumerate(g) if (math.trunc(x) if truncate else x) >= 0]
        got = grades.usable_judgments(aligned, Ordering(fractional="truncate" if truncate else "keep"), truncate)
        assert got.tolist() == want, truncate
        assert got.tolist() != list(range(len(g)))  # -1 and -2 are never usable
        every = grades.usable_judgments(aligned, Ordering(negatives="zero"), truncate)
        assert every.tolist() == list(range(len(g)))
    assert len(want) == 4  # 1, -0.5 (a 0 once truncated), 2.5, 0


def test_prefix_is_declined_where_the_judged_rows_are() -> None:
    """A run out of rank order or dropping self hits has no judged-rows path, so no prefix either;
    a top_rows kernel then reads the full ranking."""

    unsorted = aligned_of([("a", "d1", 1.0)], [("a", "d2", 0.5), ("a", "d1", 1.0)])
    assert Ranker(unsorted).prefix(Ordering(ties="averaged"), 1) is None
    full = Ranker(unsorted).ranked(Ordering(ties="averaged"), Needs(top_rows=1))
    assert full.row is not None and len(full.row) == 2 and full.grade.tolist() == [1.0, 0.0]
    sorted_run = aligned_of([("a", "d1", 1.0)], [("a", "d1", 1.0), ("a", "d2", 0.5)])
    assert Ranker(sorted_run).prefix(Ordering(self_hits="drop"), 1) is None


def test_averaged_ndcg_at_1_over_a_tie_group_reaching_the_end_of_its_query() -> None:
    """McSherry-Najork: three tied documents at ranks 1-3, one of grade 2 and two unjudged: each
    rank earns the group's mean gain g(2)/3, the ideal puts g(2) at rank 1, so NDCG@1 = 1/3
    whatever the gain function. The top-k path must read the whole group, to the block's last row."""

    run = {"a": {"d1": 1.0, "d2": 1.0, "d3": 1.0}}
    for k, gain in ((1, "linear"), (1, "exp2"), (2, "linear")):
        got = rf.evaluate({"a": {"d1": 2}}, run, [f"ndcg@{k}[ties=averaged,gain={gain}]"])[0].summary
        # ranks 1..k each earn g/3; ideal g at rank 1 (discount 1/log2(rank + 1))
        want = sum(1 / 3 / math.log2(r + 1) for r in range(1, k + 1))
        assert got == pytest.approx(want, rel=1e-12), (k, gain)


def test_kept_duplicates_are_refused_by_measures_that_read_the_run() -> None:
    """trec_eval refuses a document retrieved twice for a query (after its -M cut); a measure of the
    judgments alone (num_rel) reads no run row, so it has nothing to refuse."""

    run = Run(string_array(["a", "a", "a"]), string_array(["d1", "d2", "d1"]), np.array([3.0, 2.0, 1.0]), "run")
    for measure in ("P@5[duplicates=error]", "ndcg@5[duplicates=error]"):
        with pytest.raises(InputError, match=r"document 'd1' appears more than once for query 'a'"):
            rf.evaluate({"a": {"d1": 1}}, run, [measure])
    assert rf.evaluate({"a": {"d1": 1}}, run, ["num_rel[duplicates=error]"])[0].summary == 1.0
    # the depth cut keeps one row of the pair (ranks 1 and 3, depth 2): nothing to refuse
    assert rf.evaluate({"a": {"d1": 1}}, run, ["P@2[duplicates=error,depth=2]"])[0].summary == 0.5


def test_measures_of_different_orderings_in_one_evaluation_each_get_their_own_ranking() -> None:
    """One evaluation keeps one ranking per ordering and path: a measure never reads the ranking of
    another ordering. By the definitions: trec_eval orders ties by docno descending (d2 before d1),
    docno_asc the other way; at float32 1 + 1e-12 ties 1.0, so ties=averaged shares d1's gain."""

    qrels = {"a": {"d1": 1, "d2": 0}}
    tied = {"a": {"d1": 1.0, "d2": 1.0}}
    got = rf.evaluate(qrels, tied, ["P@1[ties=docno_asc]", "P@1[ties=docno_desc]", "judged@1[ties=docno_asc]"])
    assert [m.summary for m in got] == [1.0, 0.0, 1.0]
    # the same after measures that rank every row (unjudged rows have a gain) under both rules
    full_first = ["ndcg@1[ties=docno_asc,unjudged_grade=1]", "ndcg@1[ties=docno_desc,unjudged_grade=1]",
                  "P@1[ties=docno_asc]", "P@1[ties=docno_desc]"]
    got = rf.evaluate(qrels, {"a": {**tied["a"], "d3": 0.5}}, full_first)
    assert [m.summary for m in got][2:] == [1.0, 0.0]
    near = {"a": {"d1": 1.0 + 1e-12, "d2": 1.0}}
    got = rf.evaluate(qrels, near, ["ndcg@1[ties=averaged]", "ndcg@1[ties=averaged,precision=float32]",
                                    "ndcg@2[ties=averaged,precision=float32]"])
    # float64: d1 alone at rank 1; float32: ranks 1-2 earn (g(1) + 0) / 2 each, ideal g(1) at rank 1
    assert [m.summary for m in got] == pytest.approx([1.0, 0.5, 0.5 * (1 + 1 / math.log2(3))], rel=1e-12)


def test_a_judgments_only_measure_still_applies_its_grade_policies_with_duplicates_kept() -> None:
    """num_rel reads no run row, but its fractional policy refuses as any measure's does, even next
    to a num_rel of another policy in the same evaluation."""

    run = Run(string_array(["a", "a", "a"]), string_array(["d1", "d2", "d1"]), np.array([3.0, 2.0, 1.0]), "run")
    qrels = {"a": {"d1": 1, "d2": 2.5}}
    assert [m.summary for m in rf.evaluate(qrels, run, ["num_rel[duplicates=error]",
                                                        "num_rel[duplicates=error,rel=3,fractional=truncate]"])] \
        == [2.0, 0.0]
    with pytest.raises(InputError, match=r"1 judgment\(s\) have a grade that is not a whole number"):
        rf.evaluate(qrels, run, ["num_rel[duplicates=error]", "num_rel[duplicates=error,fractional=error]"])


def test_block_sort_of_float32_scores_one_ulp_apart() -> None:
    """float32 keys keep every bit of the score: scores one ulp apart, of either sign and on either
    side of 2 (where the exponent's top bit changes), come out as NumPy's stable argsort of -score."""
    base = np.array([0.5, 1.0, 1.5, 2.0, 3.0, 1e-10, 0.0, -0.5, -1.0, -2.0, -3.0, -1e-10], dtype=np.float32)
    scores = np.concatenate([base, np.nextafter(base, np.float32(np.inf)), np.nextafter(base, np.float32(-np.inf))])
    rng = np.random.default_rng(0)
    for _ in range(5):
        s = rng.permutation(scores)
        lengths = np.array([len(s) // 3, len(s) - len(s) // 3])
        starts = np.array([0, lengths[0]])
        want = np.concatenate([a + np.argsort(-s[a:a + n], kind="stable") for a, n in zip(starts, lengths, strict=True)])
        assert BlockSort(starts, lengths)(s).tolist() == want.tolist()
        assert BlockSort(np.array([0]), np.array([len(s)]))(s).tolist() == np.argsort(-s, kind="stable").tolist()


def test_an_empty_run_has_no_layout() -> None:
    """No rows: no query blocks for the judged-rows path to read (find_layout's None)."""

    assert find_layout(np.zeros(0, dtype=np.int32), np.zeros(0)) is None
    assert find_layout(np.zeros(0, dtype=np.int32), np.zeros(0), np.zeros(0, dtype=np.int64), True) is None


def test_rows_by_query_and_score_past_65536_query_codes() -> None:
    """The sort of a run out of rank order: rows by query code, score descending, equal scores in
    file order, as NumPy's lexsort gives it, also for query codes past 16 bits."""

    rng = np.random.default_rng(1)
    n = 70_000
    for high in (n, 300, 65_537):  # 65_537: the highest code is 1 << 16, one past 16 bits
        q = rng.integers(0, high, n).astype(np.int32)
        q[0] = high - 1  # the highest code is there
        score = rng.choice([0.0, 0.5, 1.0], n)
        want = np.lexsort((np.arange(n), -score, q))
        assert by_query_and_score(q, score, None).tolist() == want.tolist(), high


def test_errors_of_tie_groups_name_what_is_missing() -> None:
    """The full text of the errors a kernel gets when it asks for tie groups it cannot have."""


    aligned = aligned_of([("a", "d1", 1.0)], [("a", "d1", 1.0), ("a", "d2", 1.0), ("a", "d3", 0.5)])

    ranked = Ranker(aligned).rank(Ordering(ties="averaged"))
    assert ranked.tie_group.tolist() == [0, 0, 1]
    message = "tie groups need every ranked row, not only the judged or the top ones"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        _ = ranked.judged_rows.tie_group
    with pytest.raises(ValueError, match=r"^averaged_at: the rows must be in ascending order$"):
        averaged_at(lambda rows: np.ones(len(rows)), np.array([0, 0, 1]), np.array([2, 0]))
    with pytest.raises(ValueError, match=r"^averaged_at: the rows must be in ascending order$"):
        averaged_at(lambda rows: np.ones(len(rows)), np.array([0, 1, 2]), np.array([0, 2, 1]))
    # the mean of whole groups, for the rows asked: group 0 (rows 0, 1) and group 1 (row 2)
    got = averaged_at(lambda rows: np.array([3.0, 1.0, 5.0])[rows], np.array([0, 0, 1]), np.array([1, 2]))
    assert got.tolist() == [2.0, 5.0]


def test_a_ranking_of_no_query_is_zero_rows_long() -> None:
    from rankflavor.order import Ranked

    none = np.zeros(0, dtype=np.int64)
    r = Ranked(aligned=None, q=none, rank=none, grade=np.zeros(0), judged=none.astype(bool),  # type: ignore[arg-type]
               pooled=none.astype(bool), score=np.zeros(0), n_ret=none, jq=none, jgrade=np.zeros(0),
               dropped_by_depth=0, dropped_unjudged=0)
    assert (r.max_len, r.n_queries) == (0, 0)
    two = Ranked(aligned=None, q=np.array([1, 1]), rank=np.array([1, 2]), grade=np.zeros(2),  # type: ignore[arg-type]
                 judged=np.ones(2, dtype=bool), pooled=np.ones(2, dtype=bool), score=np.ones(2),
                 n_ret=np.array([0, 2]), jq=none, jgrade=np.zeros(0), dropped_by_depth=0, dropped_unjudged=0)
    assert (two.max_len, two.n_queries) == (2, 2)


def test_duplicates_of_a_run_only_query_are_refused_only_where_it_is_scored() -> None:
    """trec_eval never reads a run-only query's rows, so its duplicates are refused only under
    run_only=include, where the query is scored."""
    run = Run(string_array(["a", "x", "x"]), string_array(["d1", "d1", "d1"]), np.array([1.0, 2.0, 1.0]), "run")
    qrels = {"a": {"d1": 1}}
    assert rf.evaluate(qrels, run, ["P@1[duplicates=error,run_only=skip]"])[0].summary == 1.0
    with pytest.raises(InputError, match=r"document 'd1' appears more than once for query 'x'"):
        rf.evaluate(qrels, run, ["P@1[duplicates=error,run_only=include]"])


def test_self_hits_leave_a_ranking_of_chunked_docnos() -> None:
    """self_hits=drop (BEIR's ignore_identical_ids): a document named like its query leaves the
    ranking, whichever layout the docno column has (chunked here, as a reader may give it)."""
    import pyarrow as pa

    from rankflavor.align import align
    from rankflavor.io.tables import Qrels

    docs = ["q1", "d1", "d2", "q2", "d1", "q1"]
    queries = ["q1", "q1", "q1", "q2", "q2", "q2"]
    scores = np.array([3.0, 2.0, 1.0, 3.0, 2.0, 1.0])
    chunked = pa.chunked_array([pa.array(docs[:2]), pa.array(docs[2:])])
    qrels = Qrels(string_array(["q1", "q2"]), string_array(["d1", "d1"]), np.array([1.0, 1.0]), "qrels")
    aligned = align(qrels, Run(string_array(queries), chunked, scores, "run"))
    ranked = Ranker(aligned).rank(Ordering(self_hits="drop"))
    ids = [str(q) for q in aligned.query_ids]
    kept = [(ids[q], docs[int(aligned.run_row[r])]) for q, r in zip(ranked.q, ranked.row, strict=True)]  # type: ignore[arg-type]
    assert kept == [(q, d) for q, d in zip(queries, docs, strict=True) if q != d]
    assert ranked.rank.tolist() == [1, 2, 1, 2]


def test_gains_of_no_rows_are_no_gains() -> None:
    """Asked for the gains of no rows, every rule gives an empty array (a kernel sums it to 0)."""
    aligned = aligned_of([("a", "d1", 2.0)], [("a", "d1", 1.0), ("a", "d2", 1.0)])
    for ties in ("averaged", "docno_desc"):
        ranked = Ranker(aligned).rank(Ordering(ties=ties))
        got = ranked.gains(lambda grade, judged, pooled: grade, np.zeros(0, dtype=np.int64))
        assert got.shape == (0,), ties
        assert ranked.gains(lambda grade, judged, pooled: grade).tolist() == ([1.0, 1.0] if ties == "averaged"
                                                                             else [0.0, 2.0])


def test_long_integer_docnos_tie_in_byte_order() -> None:
    """Integer docnos of up to 18 digits (still their own codes), tied: docno_asc puts them in byte
    order (strcmp), as the brute-force reference sorts their text ("100000000000000000" < "5" < "99")."""
    docs = ["5", "100000000000000000", "99", "3", "8", "299999999999999999", "6", "20"]
    run = [("a", d, 1.0) for d in docs]
    qrels = [("a", "5", 1.0)]
    aligned = aligned_of(qrels, run)
    for ties in ("docno_asc", "docno_desc"):
        o = Ordering(ties=ties)
        got = fields(aligned, Ranker(aligned).rank(o), docs)["rows"]
        assert got == reference(qrels, run, o)["rows"], ties
        assert [r[2] for r in got] == sorted(docs, key=str.encode, reverse=ties == "docno_desc")


def test_one_key_tie_order_fits_int64_and_equals_the_lexsort() -> None:
    """tie_order combines its keys into one int64 only while (largest group id + 1) x the product
    of the key sizes stays below ONE_KEY_LIMIT: every combined key is below that product, so the
    limit must not pass 2**63 (past it a key could wrap). Below it, the one key orders as the
    lexsort does; group ids count a whole run's tie groups, so a few tied rows can carry ids near
    2**60, where only the lexsort is exact (this once wrapped: the guard counted rows, not ids)."""
    from rankflavor.order import ties

    assert ties.ONE_KEY_LIMIT <= 2.0**63
    rng = np.random.default_rng(3)
    group = np.sort(rng.integers(0, 40, 400))
    docno_rank = rng.permutation(400)
    grade = rng.choice([-1.0, 0.0, 1.0, 2.5], 400)
    for rule in ("docno_desc", "docno_asc", "pessimistic", "optimistic"):
        want = np.lexsort((*reversed([(-docno_rank if k == ties.DOCNO_DESC else docno_rank) if k[0] == "docno" else
                                      (-grade if k[1] else grade) for k in ties.TIE_TABLE[rule].keys]), group))
        assert ties.tie_order(group, docno_rank, grade, rule).tolist() == want.tolist(), rule
        far = group * (2**55 + 1)  # the same groups in the same order, ids up to ~2**60
        assert ties.tie_order(far, docno_rank, grade, rule).tolist() == want.tolist(), rule


def test_judged_rows_path_edges() -> None:
    """The judged rows of a run in rank order: a run retrieving no judged document scores 0 (P@5:
    nothing relevant in the top 5), rows per query are one int64 count per query of the alignment
    (condensing can leave the last codes with none), and input_order keeps file order in a large
    tie group mixing judgments."""
    assert rf.evaluate({"a": {"x": 1}}, {"a": {"d1": 1.0, "d2": 0.5}}, ["P@5"])[0].summary == 0.0
    qrels = [("a", "d1", 1.0), ("b", "d1", 0.0)]
    run = [("a", "d1", 2.0), ("a", "d2", 1.0), ("b", "d9", 1.0)]  # b (the last code) retrieves no judged row
    aligned = aligned_of(qrels, run)
    for o in (Ordering(), Ordering(unjudged="condensed"), Ordering(depth=1)):
        ranked = Ranker(aligned).judged(o)
        assert ranked is not None and ranked.n_ret.dtype == np.int64, o
        want = {q: n for q, n in reference(qrels, run, o)["n_ret"].items()}  # type: ignore[attr-defined]
        ids = [str(q) for q in aligned.query_ids]
        assert dict(zip(ids, ranked.n_ret.tolist(), strict=True)) == {q: want.get(q, 0) for q in ids}, o
    docs = [f"d{i:02d}" for i in range(60)]
    big = [("a", d, 1.0) for d in docs[::-1]]  # one tie group, docnos descending in file order
    judged = [("a", d, float(i % 3)) for i, d in enumerate(docs) if i % 2]
    aligned = aligned_of(judged, big)
    o = Ordering(ties="input_order")
    got = fields(aligned, Ranker(aligned).judged(o), [d for _, d, _ in big])["rows"]  # type: ignore[arg-type]
    assert got == [r for r in reference(judged, big, o)["rows"] if r[5]]  # type: ignore[attr-defined]


def test_a_run_of_two_tied_rows_is_ordered_by_the_tie_rule() -> None:
    qrels = [("a", "d1", 1.0), ("a", "d2", 0.0)]
    run = [("a", "d1", 1.0), ("a", "d2", 1.0)]
    aligned = aligned_of(qrels, run)
    for ties in ("docno_asc", "docno_desc", "pessimistic", "optimistic"):
        o = Ordering(ties=ties)
        assert fields(aligned, Ranker(aligned).rank(o), ["d1", "d2"])["rows"] == reference(qrels, run, o)["rows"]


# --- found by the mutation run of issue #32 (docs/mutation.md, order) ----------------------------


def test_a_refused_negative_grade_names_the_qrels_file() -> None:
    aligned = aligned_of([("a", "d1", -1.0), ("a", "d2", 1.0)], [("a", "d1", 1.0)])
    with pytest.raises(InputError) as err:
        Ranker(aligned).rank(Ordering(negatives="error"))
    assert str(err.value).startswith("qrels: ")


def test_a_truncated_negative_fraction_is_a_zero_not_a_minus_zero(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """fractional=truncate makes -0.5 a judged 0, as trec_eval's atol reads it: its gain is 0,
    not -0 (which explain would print as such)."""
    from click.testing import CliRunner

    from rankflavor.cli.main import cli

    (tmp_path / "q.txt").write_text("q 0 a -0.5\nq 0 b 1\n")
    (tmp_path / "r.run").write_text("q Q0 a 1 2.0 r\nq Q0 b 2 1.0 r\n")
    aligned = aligned_of([("q", "a", -0.5), ("q", "b", 1.0)], [("q", "a", 2.0), ("q", "b", 1.0)])
    ranked = Ranker(aligned).rank(Ordering(fractional="truncate"))
    assert [math.copysign(1.0, g) for g in ranked.grade] == [1.0, 1.0] and ranked.judged.tolist() == [True, True]
    res = CliRunner().invoke(cli, ["explain", str(tmp_path / "q.txt"), str(tmp_path / "r.run"),
                                   "-m", "ndcg@2[fractional=truncate]", "--query", "q", "--wide"])
    assert res.exit_code == 0, res.output
    row = next(line for line in res.output.splitlines() if line.startswith("│") and " a " in line)
    assert [c.strip() for c in row.strip("│").split("│")][:6] == ["1", "a", "2", "-0.5", "0", "1.0000"]
    assert "-0" not in row.replace("-0.5", "")


def test_every_query_keeps_its_count_of_rows_when_none_are_left() -> None:
    """Ranked.n_ret has one count per aligned query, also for the last queries when they have no
    rows: judged only (z), or none left once unjudged rows are condensed away (b)."""
    aligned = aligned_of([("a", "d1", 1.0), ("b", "d1", 1.0), ("z", "c", 2.0)], [("a", "d1", 1.0), ("b", "x", 1.0)])
    assert Ranker(aligned).rank(Ordering()).n_ret.tolist() == [1, 1, 0]
    assert Ranker(aligned).rank(Ordering(unjudged="condensed")).n_ret.tolist() == [1, 0, 0]
    assert Ranker(aligned).rank(Ordering(depth=1)).n_ret.tolist() == [1, 1, 0]


def test_the_duplicate_check_after_the_depth_cut_keeps_the_tie_member_the_rule_puts_first(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """b (2.0), a (1.0), b (1.0): a and b tie at 1.0 and are both unjudged, so ordering them by
    file order would give the same values; but which one the depth cut keeps decides whether the
    duplicate b is refused. Under docno_desc b comes first and both b rows are in the top 2
    (refused, as trec_eval, which sorts ties by docno before its -M cut); under docno_asc a does."""
    path = tmp_path / "r.run"
    path.write_text("q Q0 b 1 2.0 t\nq Q0 a 2 1.0 t\nq Q0 b 3 1.0 t\n")
    with pytest.raises(InputError, match=r"r\.run:3: document 'b' appears more than once .* within its top 2 rows"):
        rf.evaluate({"q": {"x": 1}}, str(path), ["P@2[depth=2]"])
    kept = rf.evaluate({"q": {"x": 1}}, str(path), ["P@2[depth=2,ties=docno_asc]"])
    assert list(kept.per_query()["q"].values()) == [0.0]


@pytest.mark.parametrize(("rule", "first"), [("docno_asc", "10"), ("docno_desc", "9")])
def test_integer_docnos_not_starting_at_zero_tie_in_byte_order(rule: str, first: str) -> None:
    """Docnos 9 and 10 (the smallest is not 0, so their codes are not their values) tie: in byte
    order "10" < "9", whatever their numbers say."""
    aligned = aligned_of([("q", "10", 1.0), ("q", "9", 0.0)], [("q", "9", 1.0), ("q", "10", 1.0), ("q", "12", 0.5)])
    assert aligned.doc_value_offset not in (None, 0)
    ranked = Ranker(aligned).rank(Ordering(ties=rule))
    docs = [str(aligned.run_doc_strings[int(aligned.run_row[r])]) for r in ranked.row]
    assert docs[:2] == ([first, "9" if first == "10" else "10"]) and docs[2] == "12"
