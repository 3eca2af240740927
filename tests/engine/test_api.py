"""The Python API: every input form gives the same numbers, Results exposes them consistently,
counts and the missing/empty policies are right on hand-checked cases.

The hand-built collection is flavor-facts.md §4.1 (IR toy): its values there were produced by
running trec_eval 9.0.8, pytrec_eval, ir_measures and scikit-learn; those numbers are the
oracles below (cited per assertion), the rest is computed by hand in the test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

import rankflavor
from rankflavor.errors import EvaluationError, InputError

# flavor-facts §4.1: q2 is judged all-zero, q3 is absent from the run, q4 is absent from the qrels;
# d6 has a negative grade, d7 and e9 are unjudged, d2 and d7 tie at 8.
QRELS = {
    "q1": {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 2, "d6": -1},
    "q2": {"e1": 0, "e2": 0},
    "q3": {"f1": 1},
}
RUN = {
    "q1": {"d3": 10.0, "d1": 9.0, "d2": 8.0, "d7": 8.0, "d6": 7.0, "d4": 6.0},
    "q2": {"e1": 5.0, "e9": 4.0},
    "q4": {"g1": 5.0},
}
# trec_eval order of q1 (ties by docno descending): d3 d1 d7 d2 d6 d4.
Q1_DCG = 3 / math.log2(3) + 2 / math.log2(5) + 1 / math.log2(7)
Q1_IDCG = 3 + 2 / math.log2(3) + 2 / math.log2(4) + 1 / math.log2(5)  # 3, 2, 2, 1 (d5 never retrieved)
Q1_NDCG = Q1_DCG / Q1_IDCG

MEASURES = ["ndcg", "ndcg@3", "AP", "P@5", "RR", "bpref", "recall@10", "judged@3", "num_ret", "num_rel", "num_rel_ret"]


def _write_trec(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    run.write_text("".join(f"{q} Q0 {d} {i} {s} tag\n" for q, docs in RUN.items() for i, (d, s) in enumerate(docs.items(), 1)))
    return qrels, run


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    qrels = pd.DataFrame([(q, d, g) for q, docs in QRELS.items() for d, g in docs.items()],
                         columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame([(q, d, s) for q, docs in RUN.items() for d, s in docs.items()],
                       columns=["query_id", "doc_id", "score"])
    return qrels, run


def test_hand_computed_q1_matches_the_facts_file() -> None:
    # flavor-facts §4.1: "Linear DCG 3.1104, IDCG (3,2,2,1 incl. d5) 5.6925", pytrec_eval 0.5463908402749824
    assert abs(Q1_DCG - 3.1104) < 1e-4 and abs(Q1_IDCG - 5.6925) < 1e-4
    assert abs(Q1_NDCG - 0.5463908402749824) < 1e-15


# ---------------------------------------------------------------------------------------------
# Input forms


def test_paths_dicts_and_dataframes_give_identical_results(tmp_path: Path) -> None:
    qrels_path, run_path = _write_trec(tmp_path)
    qrels_df, run_df = _frames()
    by_form = {
        "str paths": rankflavor.evaluate(str(qrels_path), str(run_path), MEASURES),
        "Path objects": rankflavor.evaluate(qrels_path, run_path, MEASURES),
        "dicts": rankflavor.evaluate(QRELS, RUN, MEASURES),
        "DataFrames": rankflavor.evaluate(qrels_df, run_df, MEASURES),
        "mixed": rankflavor.evaluate(QRELS, run_df, MEASURES),
    }
    reference = by_form["dicts"]
    assert reference["ndcg"].per_query()["q1"] == Q1_NDCG
    for form, res in by_form.items():
        assert res.per_query() == reference.per_query(), form
        assert res.means() == reference.means(), form
        assert [str(m.measure) for m in res] == [str(m.measure) for m in reference], form
        counts = res.counts.to_dict()
        assert counts == reference.counts.to_dict(), form


def test_pyarrow_tables_are_frames_too(tmp_path: Path) -> None:
    import pyarrow as pa

    qrels_df, run_df = _frames()
    tables = pa.Table.from_pandas(qrels_df, preserve_index=False), pa.Table.from_pandas(run_df, preserve_index=False)
    assert rankflavor.evaluate(*tables, MEASURES).per_query() == rankflavor.evaluate(QRELS, RUN, MEASURES).per_query()


@pytest.mark.parametrize("missing", [None, float("nan"), pd.NA, pd.NaT])
@pytest.mark.parametrize("column", ["query_id", "doc_id"])
def test_a_missing_id_in_a_frame_is_an_error_naming_its_row(column: str, missing: object) -> None:
    """As str() a missing id became "nan" or "None", which a run document of that name matched."""
    qrels_df, run_df = _frames()
    qrels_df[column] = qrels_df[column].astype(object)
    qrels_df.loc[2, column] = missing
    run_df.loc[len(run_df)] = [str(missing), str(missing), 1.0]  # would match the stringified id
    with pytest.raises(InputError, match=rf"qrels DataFrame: column '{column}' row 2: .* is a missing value, not an id"):
        rankflavor.evaluate(qrels_df, run_df, MEASURES)


def test_a_null_id_in_an_arrow_table_or_a_dict_is_an_error() -> None:
    import pyarrow as pa

    run = pa.table({"query_id": ["q1", None], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]})
    with pytest.raises(InputError, match="run DataFrame: column 'query_id' row 1: null is a missing value"):
        rankflavor.evaluate(QRELS, run, MEASURES)
    with pytest.raises(InputError, match="run dict: query 'q1' doc None: a missing value is not an id"):
        rankflavor.evaluate(QRELS, {"q1": {None: 1.0}}, MEASURES)


def test_dataframe_column_aliases() -> None:
    qrels_df, run_df = _frames()
    renamed_qrels = qrels_df.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    renamed_run = run_df.rename(columns={"query_id": "topic", "doc_id": "docid", "score": "sim"})
    assert (rankflavor.evaluate(renamed_qrels, renamed_run, MEASURES).per_query()
            == rankflavor.evaluate(QRELS, RUN, MEASURES).per_query())


def test_ids_stay_strings() -> None:
    """Numeric-looking ids are compared as text (``"01"`` is not ``"1"``), in byte order."""
    qrels = {"10": {"01": 1}, "9": {"1": 1}}
    run = {"10": {"1": 1.0}, "9": {"1": 1.0}}
    res = rankflavor.evaluate(qrels, run, "RR")
    assert res[0].per_query() == {"10": 0.0, "9": 1.0}
    assert list(res[0].queries) == ["10", "9"]  # byte order, as trec_eval's strcmp


# ---------------------------------------------------------------------------------------------
# Results


def test_results_accessors_agree() -> None:
    res = rankflavor.evaluate(QRELS, RUN, ["ndcg", "trec_eval:ndcg_cut.3", "num_rel"])
    ndcg, cut3, num_rel = res
    assert len(res) == 3
    # Indexing by position, canonical string, the asked-for label and metric@k.
    assert res[0] is ndcg and res[str(ndcg.measure)] is ndcg and res["ndcg"] is ndcg
    assert res["ndcg_cut_3"] is cut3 and res["ndcg@3"] is cut3
    with pytest.raises(KeyError, match="have: ndcg"):
        res["nope"]
    # means(): canonical string -> summary; counts sum, rates average.
    means = res.means()
    assert list(means) == [str(m.measure) for m in res]
    assert means[str(ndcg.measure)] == ndcg.mean == ndcg.summary
    assert means[str(num_rel.measure)] == 4.0  # 4 + 0 + 0: q3 is missing, so 0 under missing=zero
    # per_query(): pytrec_eval-style {query: {flavor: value}}
    per_query = res.per_query()
    assert set(per_query) == {"q1", "q2", "q3"}
    assert per_query["q1"][str(ndcg.measure)] == Q1_NDCG
    # q3 is missing: 0 under the default missing=zero; absent under the trec_eval preset (skip)
    assert per_query["q3"] == {str(ndcg.measure): 0.0, str(num_rel.measure): 0.0}
    assert all(isinstance(v, float) for row in per_query.values() for v in row.values())


def test_to_frame_is_the_long_table_with_summary_rows() -> None:
    res = rankflavor.evaluate(QRELS, RUN, ["ndcg", "AP"])
    frame = res.to_frame()
    assert list(frame.columns) == ["measure", "name", "query", "value", "status"]
    assert len(frame) == 2 * (3 + 1)  # three queries and one summary row per measure
    summary = frame[frame["query"] == "all"]
    assert list(summary["status"]) == ["summary", "summary"]
    assert dict(zip(summary["measure"], summary["value"], strict=True)) == res.means()
    rows = frame[frame["query"] != "all"]
    assert dict(zip(rows["query"], rows["status"], strict=True)) == {"q1": "ok", "q2": "empty", "q3": "missing"}
    for m in res:
        mine = rows[rows["measure"] == str(m.measure)]
        assert dict(zip(mine["query"], mine["value"], strict=True)) == m.per_query()


def test_to_dict_is_json_ready_and_complete() -> None:
    res = rankflavor.evaluate(QRELS, RUN, ["ndcg[empty=nan]", "AP"])
    data = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    ndcg = data["measures"][0]
    assert ndcg["flavor"] == str(res[0].measure) and ndcg["metric"] == "ndcg" and ndcg["k"] is None
    assert ndcg["knobs"]["empty"] == "nan"
    q2 = next(row for row in ndcg["per_query"] if row["query"] == "q2")
    assert q2 == {"query": "q2", "value": None, "status": "empty"}  # NaN travels as null
    assert data["counts"] == res.counts.to_dict()
    assert "rankflavor" in data["provenance"]


# ---------------------------------------------------------------------------------------------
# Counts


def test_counts_on_the_toy() -> None:
    c = rankflavor.evaluate(QRELS, RUN, "ndcg").counts
    assert (c.run_rows, c.qrels_rows) == (9, 9)
    assert (c.queries_in_run, c.queries_in_qrels, c.queries_evaluated) == (3, 3, 2)
    assert c.queries_only_in_run == 1  # q4
    assert c.queries_only_in_qrels == 1  # q3
    assert c.unjudged_retrieved == 2  # d7, e9 (g1 belongs to a query without judgments)
    assert c.run_rows_of_unjudged_queries == 1  # g1
    assert (c.negative_grades, c.negative_grades_retrieved) == (1, 1)  # d6
    assert (c.run_duplicates_resolved, c.qrels_duplicates_resolved) == (0, 0)


def test_duplicates_resolved_are_counted_on_frames() -> None:
    qrels_df, run_df = _frames()
    qrels_dup = pd.concat([qrels_df, qrels_df.iloc[[0, 1]]], ignore_index=True)
    run_dup = pd.concat([run_df, run_df.iloc[[0, 2, 4]]], ignore_index=True)
    res = rankflavor.evaluate(qrels_dup, run_dup, "ndcg", duplicates="first")
    assert (res.counts.run_duplicates_resolved, res.counts.qrels_duplicates_resolved) == (3, 2)
    assert res[0].per_query() == rankflavor.evaluate(QRELS, RUN, "ndcg")[0].per_query()


# ---------------------------------------------------------------------------------------------
# empty and missing policies (q2: nothing relevant; q3: not in the run)


@pytest.mark.parametrize(
    "empty,missing,rows,mean",
    [
        ("zero", "zero", {"q1": Q1_NDCG, "q2": 0.0, "q3": 0.0}, Q1_NDCG / 3),
        ("one", "zero", {"q1": Q1_NDCG, "q2": 1.0, "q3": 0.0}, (Q1_NDCG + 1) / 3),
        ("nan", "zero", {"q1": Q1_NDCG, "q2": math.nan, "q3": 0.0}, Q1_NDCG / 2),
        ("skip", "zero", {"q1": Q1_NDCG, "q3": 0.0}, Q1_NDCG / 2),
        ("zero", "skip", {"q1": Q1_NDCG, "q2": 0.0}, Q1_NDCG / 2),
        ("one", "skip", {"q1": Q1_NDCG, "q2": 1.0}, (Q1_NDCG + 1) / 2),
        ("skip", "skip", {"q1": Q1_NDCG}, Q1_NDCG),
    ],
)
def test_empty_and_missing_policies(empty: str, missing: str, rows: dict[str, float], mean: float) -> None:
    result = rankflavor.evaluate(QRELS, RUN, "ndcg", empty=empty, missing=missing)[0]
    got = result.per_query()
    assert got.keys() == rows.keys()
    for q, want in rows.items():
        assert (math.isnan(got[q]) and math.isnan(want)) or got[q] == want, q
    assert result.summary == pytest.approx(mean, abs=1e-15)
    assert result.n_queries == sum(not math.isnan(v) for v in rows.values())
    assert result.skipped_empty == (1 if empty == "skip" else 0)
    assert result.skipped_missing == (1 if missing == "skip" else 0)
    status = dict(zip(result.queries, result.status, strict=True))
    assert status.get("q2", "empty") == "empty" and status.get("q3", "missing") == "missing"


def test_facts_file_means_for_the_missing_policy() -> None:
    # flavor-facts §4.1 "means": trec_eval 9.0.8 ndcg 0.2732 over q1,q2; ir_measures nDCG@10 0.1821 over q1,q2,q3
    assert round(rankflavor.evaluate(QRELS, RUN, "ndcg", missing="skip")[0].mean, 4) == 0.2732
    assert round(rankflavor.evaluate(QRELS, RUN, "ndcg@10", missing="zero")[0].mean, 4) == 0.1821


@pytest.mark.parametrize("knob,value,query", [("empty", "error", "q2"), ("missing", "error", "q3")])
def test_policies_that_say_error(knob: str, value: str, query: str) -> None:
    with pytest.raises(EvaluationError, match=rf"\({query}\)"):
        rankflavor.evaluate(QRELS, RUN, "ndcg", **{knob: value})


@pytest.mark.parametrize("knob", ["run_only", "empty", "missing"])
def test_a_policy_error_names_five_queries_then_says_how_many_more(knob: str) -> None:
    """Seven queries fall under the policy: the message counts seven, names the first five in
    byte order and ends the list with '...'."""
    ids = [f"q{i}" for i in range(7)]
    judged = {q: {"a": 0 if knob == "empty" else 1} for q in ids} if knob != "run_only" else {"z": {"a": 1}}
    ranked = {q: {"a": 1.0} for q in ids} if knob != "missing" else {"z": {"a": 1.0}}
    if knob == "run_only":
        ranked["z"] = {"a": 1.0}
    if knob == "missing":
        judged["z"] = {"a": 1}
    with pytest.raises(EvaluationError, match=rf"^7 .*\(q0, q1, q2, q3, q4\.\.\.\) and ndcg says {knob}=error; choose "):
        rankflavor.evaluate(judged, ranked, "ndcg", **{knob: "error"})


def test_counts_are_summed_and_missing_counts_as_zero() -> None:
    res = rankflavor.evaluate(QRELS, RUN, ["num_ret", "num_rel", "num_rel_ret"])
    assert [m.summary for m in res] == [8.0, 4.0, 3.0]
    assert res["num_rel"].per_query() == {"q1": 4.0, "q2": 0.0, "q3": 0.0}
    # trec_eval -c instead sums every qrels line with grade > 0, q3's included (m_num_rel.c): 5
    assert rankflavor.evaluate(QRELS, RUN, "num_rel", preset="trec_eval", missing="zero")[0].summary == 5.0
    assert rankflavor.evaluate(QRELS, RUN, "num_rel", preset="trec_eval")[0].summary == 4.0


def test_a_query_judged_only_negative_has_nothing_relevant() -> None:
    """trec_eval treats negative grades as pooled but unjudged (flavor-facts §1.6), so a query
    judged only negative has nothing relevant: every rate is the empty value, counts are 0.
    (pytrec_eval cannot check this: it crashes on such queries, see test_pytrec_eval_diff.py.)"""
    qrels = {"q": {"x": -1, "y": -2}, "r": {"a": 1}}
    run = {"q": {"x": 1.0, "z": 0.5}, "r": {"a": 1.0}}
    res = rankflavor.evaluate(qrels, run, ["ndcg", "AP", "bpref", "RR", "num_rel", "num_rel_ret"], preset="trec_eval")
    assert {m.measure.metric: m.per_query()["q"] for m in res} == {
        "ndcg": 0.0, "AP": 0.0, "bpref": 0.0, "RR": 0.0, "num_rel": 0.0, "num_rel_ret": 0.0}
    assert res["ndcg"].status[list(res["ndcg"].queries).index("q")] == "empty"
    assert rankflavor.evaluate(qrels, run, "ndcg[empty=one]")[0].per_query()["q"] == 1.0


# ---------------------------------------------------------------------------------------------
# Tool fingerprints on the toy (flavor-facts §4.1, values produced by running each tool)


def test_sklearn_fingerprint_local_ideal_and_tie_rules() -> None:
    """§4.1 "sklearn, retrieved docs only (d7, d6 -> 0)": 0.6677 (averaged), 0.6823
    (ignore_ties=True: input order), @3 0.5025 (averaged)."""
    q1 = {"q1": QRELS["q1"]}
    run = {"q1": RUN["q1"]}
    local = "[ideal=local,negatives=zero,ties={}]"
    assert round(rankflavor.evaluate(q1, run, "ndcg" + local.format("averaged"))[0].mean, 4) == 0.6677
    assert round(rankflavor.evaluate(q1, run, "ndcg" + local.format("input_order"))[0].mean, 4) == 0.6823
    assert round(rankflavor.evaluate(q1, run, "ndcg@3" + local.format("averaged"))[0].mean, 4) == 0.5025


def test_ir_measures_judged_fingerprint() -> None:
    """§4.1 "ir_measures Judged@k": q1 @3 1.0, @10 0.833 (5/6); q2 0.5; q3 0 (ties docid asc)."""
    res = rankflavor.evaluate(QRELS, RUN, ["judged@3[ties=docno_asc]", "judged@10[ties=docno_asc]"])
    assert res[0].per_query() == {"q1": 1.0, "q2": 0.5, "q3": 0.0}
    assert res[1].per_query()["q1"] == 5 / 6


def test_opposite_tie_order_fingerprint() -> None:
    """§4.1: "opposite tie order (d2 before d7) ndcg 0.5707 (hand; = ranx, trectools)"."""
    assert round(rankflavor.evaluate(QRELS, RUN, "ndcg[ties=docno_asc]")[0].per_query()["q1"], 4) == 0.5707


def test_input_files_are_read_on_threads_and_their_errors_come_after_the_measures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judgments file is read on a thread while the measures are resolved: the result is the
    one read on the caller's thread, an error in the file still names it, and a bad measure is
    still the first error reported when both are wrong."""
    import importlib
    import threading

    from rankflavor.errors import InputError, RankflavorError

    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 a 2\nq1 0 b 1\nq2 0 c 1\n")
    run.write_text("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 d 1 1.0 t\n")
    module = importlib.import_module("rankflavor.engine.evaluate")  # the package's name is the function

    def threads_reading(name: str) -> list[str]:
        """Patch ``module.<name>`` (a reader) to note the thread of each call; the notes."""
        seen: list[str] = []
        real = getattr(module, name)

        def spy(obj: object) -> object:
            seen.append(threading.current_thread().name)
            return real(obj)

        monkeypatch.setattr(module, name, spy)
        return seen

    readers = threads_reading("as_qrels")
    threaded = rankflavor.evaluate(str(qrels), str(run), ["ndcg@10", "P@1"])
    assert readers and readers[0] != threading.main_thread().name
    monkeypatch.undo()
    same_thread = rankflavor.evaluate(rankflavor.read_qrels(qrels), str(run), ["ndcg@10", "P@1"])
    assert threaded.per_query() == same_thread.per_query() and threaded.counts == same_thread.counts

    missing = tmp_path / "no-such-qrels.txt"
    with pytest.raises(InputError, match=r"no-such-qrels\.txt"):
        rankflavor.evaluate(str(missing), str(run), ["ndcg@10"])
    with pytest.raises(RankflavorError) as bad_measure:
        rankflavor.evaluate(str(missing), str(run), ["ndcg@10[gain=nope]"])
    assert not isinstance(bad_measure.value, InputError) and "gain" in str(bad_measure.value)
    # The run file is read on a thread too: its errors come after the measures' and the qrels'.
    runs = threads_reading("as_run")
    assert rankflavor.evaluate(str(qrels), str(run), ["ndcg@10", "P@1"]).per_query() == same_thread.per_query()
    assert runs and runs[0] != threading.main_thread().name
    monkeypatch.undo()
    no_run = tmp_path / "no-such-run.txt"
    with pytest.raises(InputError, match=r"no-such-run\.txt"):
        rankflavor.evaluate(str(qrels), str(no_run), ["ndcg@10"])
    with pytest.raises(InputError, match=r"no-such-qrels\.txt"):
        rankflavor.evaluate(str(missing), str(no_run), ["ndcg@10"])
    with pytest.raises(RankflavorError) as bad_measure:
        rankflavor.evaluate(str(missing), str(no_run), ["ndcg@10[gain=nope]"])
    assert not isinstance(bad_measure.value, InputError)


def test_pseudo_measures_alone_give_the_counts() -> None:
    """ir_measures' NumQ (and trec_eval's runid) read no measure's values: asked alone, they
    once left the engine with nothing aligned (StopIteration); the counts are what they print."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q3": {"c": 1.0}}
    for name in ("ir_measures:NumQ", "trec_eval:runid"):
        r = rankflavor.evaluate(qrels, run, [name])
        assert len(r) == 0 and r.extras
        assert r.counts.queries_evaluated == 1 and r.counts.queries_only_in_run == 1
