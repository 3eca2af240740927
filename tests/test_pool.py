"""Pooling: depth-k pools counted against a brute force on the real DL 2019 runs; the budgeted
pool closes the runs' NDCG@10 bound gaps more than uniform random choice of the same budget
(judgments hidden and restored from the real qrels, seeds fixed); output layouts; bad input."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest
from click.testing import CliRunner

from rankflavor.cli import cli
from rankflavor.columns import to_strings
from rankflavor.errors import InputError, UsageError
from rankflavor.io.trec import read_qrels, read_run
from rankflavor.judgments import bounds
from rankflavor.pool import pool

from .conftest import shared_path

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
    assert (np.diff(p.priority) <= 0).all()  # best first
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


def test_priority_is_the_stated_rule_on_a_hand_worked_case() -> None:
    # One query; run 1 ranks a, b; run 2 ranks b, c; nothing judged, depth 2: per run, a
    # document at rank i weighs disc(i) / (disc(1) + disc(2)) (G cancels with no judgments).
    d1, d2 = 1.0, 1 / math.log2(3)
    p = pool([{"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 2.0, "c": 1.0}}], depth=2)
    got = dict(zip(p.doc.tolist(), p.priority.tolist(), strict=True))
    assert got == pytest.approx({"b": (d2 + d1) / (d1 + d2), "a": d1 / (d1 + d2), "c": d2 / (d1 + d2)})
    assert p.doc.tolist() == ["b", "a", "c"] and p.runs.tolist() == [2, 1, 1] and p.best_rank.tolist() == [1, 1, 2]
    # Judged grades enter the upper bound's ideal: a judged 3 at rank 1 of run 1 makes b weigh
    # G*disc(2) / (IDCG of [3, 3]) there.
    j = pool([{"q": {"a": 2.0, "b": 1.0}}], depth=2, qrels={"q": {"a": 3}}, scale="trec_dl")
    assert j.doc.tolist() == ["b"] and j.priority[0] == pytest.approx(3 * d2 / (3 * d1 + 3 * d2))


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
    result = CliRunner().invoke(cli, ["pool", str(run), str(other), "--depth", "10", "--qrels", str(qrels),
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
