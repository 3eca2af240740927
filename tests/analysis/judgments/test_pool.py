"""Pooling: depth-k pools counted against a brute force on the real DL 2019 runs; each priority
against a brute force of the runs' exact NDCG@k intervals on small cases; the budgeted pool closes
the runs' NDCG@10 intervals more than uniform random choice of the same budget (judgments hidden
and restored from the real qrels, seeds fixed); output layouts; bad input."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankflavor.analysis.judgments import bounds
from rankflavor.analysis.judgments.pool import pool
from rankflavor.cli.main import cli
from rankflavor.errors import InputError, UsageError
from rankflavor.io.columns import to_strings
from rankflavor.io.trec import read_qrels, read_run

from ...conftest import shared_path
from .brute_bounds import TREC_DL, brute

RUNS = ("bm25", "bm25-rm3", "bm25-rankgpt-gpt-3.5-turbo", "d-bert-kd-tasb", "splade-p-p-ensemble-distil")


@pytest.fixture(scope="module")
def dl19() -> tuple[list, dict[str, dict[str, float]]]:
    runs = [read_run(shared_path("runs", f"rankllm.dl19.{name}.top100.run")) for name in RUNS]
    q = read_qrels(shared_path("qrels", "qrels.dl19-passage.txt"))
    truth: dict[str, dict[str, float]] = {}
    for query, doc, grade in zip(to_strings(q.query), to_strings(q.doc), q.grade.tolist(), strict=True):
        truth.setdefault(query, {})[doc] = grade
    return runs, truth


def _top_k(run, k: int) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """trec_eval's order, by brute force: score descending, then docno descending."""
    rows: dict[str, list[tuple[float, str]]] = {}
    for q, d, s in zip(to_strings(run.query), to_strings(run.doc), run.score.tolist(), strict=True):
        rows.setdefault(q, []).append((s, d))
    return {q: [d for _, d in sorted(r, key=lambda x: (-x[0], [-ord(c) for c in x[1]]))[:k]] for q, r in rows.items()}


def _hidden(truth: dict[str, dict[str, float]], share: float, seed: int) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    kept: dict[str, dict[str, float]] = {}
    for q, docs in truth.items():
        for d, g in docs.items():
            if rng.random() >= share:
                kept.setdefault(q, {})[d] = g
    return kept


def test_depth_k_pool_is_the_union_of_top_k_minus_the_judged(dl19) -> None:  # type: ignore[no-untyped-def]
    runs, truth = dl19
    kept = _hidden(truth, 0.5, seed=7)
    p = pool(runs, depth=10, qrels=kept, scale="trec_dl")
    union: set[tuple[str, str]] = set()
    for i, run in enumerate(runs):
        pairs = {(q, d) for q, docs in _top_k(run, 10).items() for d in docs}
        union |= pairs
        unjudged = sum(1 for q, d in pairs if d not in kept.get(q, {}))
        assert list(p.counts["per_run"].values())[i] == {"top_k": len(pairs), "unjudged": unjudged}
    want = {(q, d) for q, d in union if d not in kept.get(q, {})}
    assert set(zip(p.query.tolist(), p.doc.tolist(), strict=True)) == want
    assert p.counts["pooled"] == len(union) and p.counts["candidates"] == len(want) == len(p)
    assert p.counts["judged"] == len(union) - len(want)
    assert (np.diff(np.round(p.priority, 12)) <= 0).all()  # best first
    counted = {(q, d): sum(d in _top_k(r, 10).get(q, []) for r in runs) for q, d in list(want)[:20]}
    got = dict(zip(zip(p.query.tolist(), p.doc.tolist(), strict=True), p.runs.tolist(), strict=True))
    assert all(got[key] == n for key, n in counted.items())


def _mean_gap(runs, qrels: dict[str, dict[str, float]]) -> float:  # type: ignore[no-untyped-def]
    """The mean over runs of (upper - lower) of the run's mean NDCG@10 (rankflavor.bounds)."""
    each = [bounds(qrels, run, "ndcg@10", scale="trec_dl")[0] for run in runs]
    return float(np.mean([b.upper_mean - b.lower_mean for b in each]))


def _judge(kept, truth, p) -> dict[str, dict[str, float]]:  # type: ignore[no-untyped-def]
    """The chosen documents "judged": their real grades restored (a document the real qrels never
    judged stays unjudged, whichever strategy chose it)."""
    out = {q: dict(docs) for q, docs in kept.items()}
    for q, d in zip(p.query.tolist(), p.doc.tolist(), strict=True):
        if d in truth.get(q, {}):
            out.setdefault(q, {})[d] = truth[q][d]
    return out


def test_budgeted_pool_closes_the_bound_gap_more_than_random_choice(dl19) -> None:  # type: ignore[no-untyped-def]
    runs, truth = dl19
    kept = _hidden(truth, 0.6, seed=21)
    before = _mean_gap(runs, kept)
    budget = 100
    chosen = pool(runs, depth=10, qrels=kept, budget=budget, scale="trec_dl")
    assert len(chosen) == budget
    after = _mean_gap(runs, _judge(kept, truth, chosen))
    for seed in (21, 22, 23):
        random = pool(runs, depth=10, qrels=kept, budget=budget, scale="trec_dl", strategy="random", seed=seed)
        assert len(random) == budget
        assert after < _mean_gap(runs, _judge(kept, truth, random)) < before, seed
    assert after < before - 0.15  # and by a wide margin: 0.56 -> 0.31 here, random about 0.48


def test_priority_on_a_hand_worked_case() -> None:
    """From scratch (grades 0 and 1), one query; run 1 ranks a, b and run 2 ranks b, c; depth 2.
    Each run's NDCG@2 interval is [0, 1] (every document 0 leaves nothing to find). Judging a: at 0
    run 1's interval becomes [0, 1/log2(3)] (b alone at rank 2), at 1 it closes; run 2 does not
    hold a, and a relevant a only joins its ideal: [0, 1] still. So a is sure to remove
    1 - 1/log2(3) (the grade 0 case). b likewise (each run loses 1 - 1/log2(3) or more); c, at 0,
    leaves run 2 at [0, 1] (b alone at rank 1) and run 1 as it was: nothing is sure."""
    p = pool([{"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 2.0, "c": 1.0}}], depth=2)
    got = dict(zip(p.doc.tolist(), p.priority.tolist(), strict=True))
    sure = 1 - 1 / math.log2(3)
    assert got == pytest.approx({"a": sure, "b": sure, "c": 0.0})
    assert p.doc.tolist() == ["b", "a", "c"]  # a tie on priority and best rank: more runs first
    assert p.runs.tolist() == [2, 1, 1] and p.best_rank.tolist() == [1, 1, 2]
    # a judgment held: a judged 3 at rank 2 on trec_dl; b (rank 1) graded g gives NDCG@2 =
    # (g + 3/log2(3)) / (3 + g/log2(3)); judging b closes that interval whatever g is
    j = pool([{"q": {"b": 2.0, "a": 1.0}}], depth=2, qrels={"q": {"a": 3}}, scale="trec_dl")
    values = [(g + 3 / math.log2(3)) / (3 + g / math.log2(3)) for g in range(4)]
    assert j.doc.tolist() == ["b"] and j.priority[0] == pytest.approx(max(values) - min(values))
    assert max(values) - min(values) > 0.3


@st.composite
def _pools(draw):  # type: ignore[no-untyped-def]
    """Two or three small runs over one or two queries, some documents judged on trec_dl."""
    queries = ["q1", "q2"][: draw(st.integers(1, 2))]
    docs = [f"d{i}" for i in range(6)]
    runs = []
    for _ in range(draw(st.integers(2, 3))):
        run = {}
        for q in queries:
            chosen = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=4, unique=True))
            run[q] = {d: float(draw(st.integers(0, 3))) for d in chosen}
        runs.append(run)
    qrels = {q: {d: float(draw(st.sampled_from(TREC_DL))) for d in docs if draw(st.integers(0, 2)) == 0}
             for q in queries}
    for q in queries:
        qrels[q]["x"] = float(draw(st.sampled_from(TREC_DL)))  # every query judged
    return runs, qrels


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=_pools(), depth=st.integers(1, 3))
def test_priority_is_the_brute_force_sure_shrink(case, depth) -> None:  # type: ignore[no-untyped-def]
    """priority(q, d) = min over grades g of sum over runs of (W_r - W_r[d judged g]) / queries, each
    width by brute force over every grading of the run's unjudged top-k documents."""
    runs, qrels = case
    measure = f"ndcg@{depth}"
    p = pool(runs, depth=depth, qrels=qrels, scale="trec_dl")

    def widths(judged: dict[str, dict[str, float]]) -> list[dict[str, float]]:
        out = []
        for run in runs:
            listed = {q: list(docs.items()) for q, docs in run.items()}
            ends = brute(judged, listed, measure)
            out.append({q: ends.get(q, (0.0, 0.0))[1] - ends.get(q, (0.0, 0.0))[0] for q in qrels})
        return out

    now = widths(qrels)
    for q, d, priority in zip(p.query.tolist(), p.doc.tolist(), p.priority.tolist(), strict=True):
        sure = []
        for g in TREC_DL:
            after = widths({**qrels, q: {**qrels[q], d: float(g)}})
            sure.append(sum((w[q] - a[q]) / len(qrels) for w, a in zip(now, after, strict=True)))
        assert priority == pytest.approx(min(sure), abs=1e-9), (q, d)
    assert (np.diff(np.round(p.priority, 12)) <= 0).all()


def test_the_trec_stub_is_refused_until_graded(tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = pool([{"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}], depth=10)
    stub = tmp_path / "stub.txt"
    stub.write_text(p.render("trec"))
    # q2's only document weighs most: it alone decides q2's NDCG interval.
    assert stub.read_text().splitlines() == ["q2 0 c", "q1 0 a", "q1 0 b"]
    with pytest.raises(InputError, match="found 3") as err:
        read_qrels(stub)
    assert err.value.line == 1
    stub.write_text("".join(f"{line} 1\n" for line in stub.read_text().splitlines()))
    assert read_qrels(stub).grade.tolist() == [1.0, 1.0, 1.0]


def test_csv_and_quepid_layouts() -> None:
    p = pool([{"q1": {"a": 2.0, "b": 1.0}}], depth=10)
    rows = list(csv.reader(io.StringIO(p.render("csv"))))
    assert rows[0] == ["query", "doc", "priority", "runs", "best_rank"]
    assert [r[:2] + r[3:] for r in rows[1:]] == [["q1", "a", "1", "1"], ["q1", "b", "1", "2"]]
    assert float(rows[1][2]) == pytest.approx(p.priority[0])
    assert p.render("quepid") == "query,docid,rating\nq1,a,\nq1,b,\n"
    with pytest.raises(UsageError, match="unknown pool format"):
        p.render("xml")


def test_pool_command(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run = shared_path("runs", "rankllm.dl19.bm25.top100.run")
    other = shared_path("runs", "rankllm.dl19.d-bert-kd-tasb.top100.run")
    qrels = shared_path("qrels", "qrels.dl19-passage.txt")
    out = tmp_path / "pool.csv"
    result = CliRunner().invoke(cli, ["pool", str(run), str(other), "--cutoff", "10", "--qrels", str(qrels),
                                      "--scale", "trec_dl", "--budget", "5", "--format", "csv", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "pool depth 10: 2 runs, 43 queries" in result.output and "5 selected (budget 5)" in result.output
    assert len(out.read_text().splitlines()) == 6
    no_scale = CliRunner().invoke(cli, ["pool", str(run), "--qrels", str(qrels)])
    assert no_scale.exit_code == 2 and "declare the label scale" in no_scale.output


def test_judgments_off_the_scale_are_refused_with_their_line(write) -> None:  # type: ignore[no-untyped-def]
    qrels = write("q.txt", "q1 0 a 1\nq1 0 b 4\n")
    with pytest.raises(InputError, match="not on the trec_dl scale") as err:
        pool([{"q1": {"a": 1.0}}], qrels=str(qrels), scale="trec_dl")
    assert err.value.line == 2
    with pytest.raises(UsageError, match="depth"):
        pool([{"q1": {"a": 1.0}}], depth=0)


def test_a_run_of_other_topics_is_refused_not_pooled_whole(dl19) -> None:  # type: ignore[no-untyped-def]
    _, truth = dl19
    run = shared_path("runs", "rankllm.dl20.bm25.top100.run")  # DL 2020 topics, DL 2019 judgments
    with pytest.raises(InputError, match="shares no query with the judgments"):
        pool([str(run)], qrels=truth, scale="trec_dl")
    result = CliRunner().invoke(cli, ["pool", str(run), "--qrels", str(shared_path("qrels", "qrels.dl19-passage.txt")),
                                      "--scale", "trec_dl"])
    assert result.exit_code == 3 and str(run) in result.output
    assert len(pool([str(run)], depth=1)) == 54  # from scratch: one document per DL 2020 topic


def test_labels_choose_what_counts_as_judged(tmp_path: Path) -> None:
    """--labels human pools again what only an LLM labelled (for people to judge), and says how many
    labels it left out; prefer=human or any keeps the LLM's labels as judgments."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 2 human:nist\nq1 0 d2 1 llm:m\nq1 0 d3 0 human:nist\nq1 0 d5 3 llm:m\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d2 1 3.0 r\nq1 Q0 d1 2 2.0 r\nq1 Q0 d3 3 1.0 r\nq1 Q0 d4 4 0.5 r\n")
    human = pool([str(run)], 3, str(qrels), scale="trec_dl", labels="human")
    assert human.doc.tolist() == ["d2"]  # d1, d3 judged by people; d2 only by the LLM
    assert human.counts["judged"] == 2 and human.counts["labels"] == {"choice": "human", "dropped": {"llm": 2}}
    assert "judged means judged by --labels human: 2 llm labels left out" in human.summary()
    for choice in ("prefer=human", None):
        kept = pool([str(run)], 3, str(qrels), scale="trec_dl", labels=choice)
        assert len(kept) == 0 and kept.counts["judged"] == 3
    assert "labels" not in pool([str(run)], 3, str(qrels), scale="trec_dl").counts
    # the command line: the same candidates and the same sentence
    cli_run = CliRunner().invoke(cli, ["pool", str(run), "--qrels", str(qrels), "--scale", "trec_dl", "-k", "3",
                                       "--labels", "human"])
    assert cli_run.exit_code == 0, cli_run.output
    assert cli_run.stdout == "q1 0 d2\n" and "2 llm labels left out" in cli_run.stderr
    with pytest.raises(UsageError, match="give the judgments"):
        pool([str(run)], 3, labels="human")
    plain = tmp_path / "plain.txt"
    plain.write_text("q1 0 d1 2\n")
    with pytest.raises(UsageError):
        pool([str(run)], 3, str(plain), scale="trec_dl", labels="llm")
