"""`rankflavor clicks` through click's CliRunner: one result in every format (the numbers of the
TREC qrels, the JSON and the CSV agree, and the summary on stderr holds the JSON's counts and
position-bias table), the knobs, and bad input as typed errors with their exit codes."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from rankflavor.cli.main import cli

from .clicks_cases import EVENTS, event, jsonl, write_logs


@pytest.fixture
def logs(tmp_path: Path) -> tuple[str, str]:
    q, e = write_logs(tmp_path)
    return str(q), str(e)


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["clicks", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _qrels(text: str) -> dict[tuple[str, str], float]:
    out = {}
    for line in text.splitlines():
        query, zero, doc, rating, source = line.split()  # QUERY 0 DOC RATING SOURCE
        assert zero == "0" and source == "clicks:coec"
        out[(query, doc)] = float(rating)
    return out


def test_every_format_gives_the_same_numbers(logs: tuple[str, str]) -> None:
    code, trec, err = _run(*logs, "--max-rank", "3")
    assert code == 0, err
    code, text, err_json = _run(*logs, "--max-rank", "3", "--format", "json")
    assert code == 0
    data = json.loads(text)
    code, text_csv, _ = _run(*logs, "--max-rank", "3", "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(text_csv)))
    from_trec = _qrels(trec)
    from_json = {(j["query_id"], j["doc_id"]): j["rating"] for j in data["judgments"]}
    from_csv = {(r["query_id"], r["doc_id"]): float(r["rating"]) for r in rows}
    assert from_trec == from_json == from_csv
    # the worked example of tests/clicks/test_clicks.py
    assert from_trec[("red%20shoes", "A")] == 2.5 and from_trec[("boots", "E")] == 1.0 and len(from_trec) == 9
    for j, r in zip(data["judgments"], rows, strict=True):
        assert (r["user_query"], int(r["clicks"]), int(r["impressions"]), float(r["coec"]),
                float(r["expected_clicks"])) == (j["user_query"], j["clicks"], j["impressions"], j["coec"],
                                                 j["expected_clicks"])
        assert r["source"] == data["source"] == "clicks:coec"
    # the summary on stderr: every count of the JSON, and its position-bias table
    assert err == err_json
    printed = dict(line.split() for line in err.splitlines() if line.startswith("  ") and len(line.split()) == 2)
    assert {k: int(v) for k, v in printed.items()} == data["counts"]
    table = [line.split() for line in err.split("position bias:", 1)[1].splitlines()[2:]]
    assert [(int(p), int(i), int(c)) for p, i, c, _ in table] == [
        (b["position"], b["impressions"], b["clicks"]) for b in data["position_bias"]]
    assert [float(ctr) for *_, ctr in table] == [round(b["ctr"], 4) for b in data["position_bias"]]
    assert data["settings"] == {"max_rank": 3, "min_impressions": 0, "min_clicks": 0, "start_date": None,
                                "end_date": None, "click_action": "click", "impression_action": "impression",
                                "digits": 3}


def test_knobs_reach_the_model(tmp_path: Path, logs: tuple[str, str]) -> None:
    code, out, err = _run(*logs, "--max-rank", "3", "--min-impressions", "2", "--min-clicks", "1", "--digits", "1")
    assert code == 0, err
    # pairs with 2 impressions and a click: A 2.5, B 1.25, C 1.5 (red shoes) and E 1.0 (boots);
    # B to one decimal is 1.3: 1 / (0.4 * 2) is the double 1.25, and SRW's Java rounds half up
    assert _qrels(out) == {("boots", "E"): 1.0, ("red%20shoes", "A"): 2.5, ("red%20shoes", "B"): 1.3,
                           ("red%20shoes", "C"): 1.5}
    assert "1.3 clicks:coec" in out and "2.5 clicks:coec" in out


def test_output_file_dates_actions_and_query_map(tmp_path: Path, logs: tuple[str, str]) -> None:
    out = tmp_path / "clicks.qrels"
    code, stdout, err = _run(*logs, "--max-rank", "3", "-o", str(out), "--end-date", "2025-01-01")
    assert code == 0 and stdout == "" and any(line.split() == ["events_outside_dates", "2"] for line in err.splitlines())
    assert len(out.read_text().splitlines()) == 9
    # other action names: a log whose clicks are "click_through"
    renamed = tmp_path / "e2.jsonl"
    renamed.write_text(jsonl([{**d, "action_name": "click_through"} if d["action_name"] == "click" else d for d in EVENTS]))
    code, default, _ = _run(logs[0], str(renamed), "--max-rank", "3")
    assert set(_qrels(default).values()) == {0.0}
    code, named, _ = _run(logs[0], str(renamed), "--max-rank", "3", "--click-action", "CLICK_THROUGH")
    code, reference, _ = _run(*logs, "--max-rank", "3")
    assert named == reference
    qmap = tmp_path / "queries.tsv"
    qmap.write_text("101\tred shoes\n102\tboots\n103\that\n")
    code, mapped, _ = _run(*logs, "--max-rank", "3", "--query-map", str(qmap))
    assert sorted({q for q, _ in _qrels(mapped)}) == ["101", "102", "103"]


def test_bad_input_is_a_typed_error(tmp_path: Path, logs: tuple[str, str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(jsonl(EVENTS[:2]) + '{"action_name": "click", "event_attributes": {"position": {"ordinal": "x"}}}\n')
    code, _, err = _run(logs[0], str(bad))
    assert code == 3 and "bad.jsonl:3: $.event_attributes.position.ordinal: expected an integer position" in err
    code, _, err = _run(logs[0], str(tmp_path / "missing.jsonl"))
    assert code == 3 and "missing.jsonl: file not found" in err
    code, _, err = _run(*logs, "--start-date", "yesterday")
    assert code == 2 and "start_date 'yesterday' is not a date YYYY-MM-DD" in err
    code, _, err = _run(*logs, "--max-rank", "0")
    assert code == 2
    # a document id with a blank cannot be written as TREC qrels; JSON keeps it
    blank = tmp_path / "blank.jsonl"
    blank.write_text(jsonl([event("impression", "s1", "doc one", 0), event("click", "s1", "doc one", 0)]))
    code, _, err = _run(logs[0], str(blank))
    assert code == 2 and "'doc one'" in err and "--format json or csv" in err
    code, out, _ = _run(logs[0], str(blank), "--format", "json")
    assert code == 0 and json.loads(out)["judgments"][0]["doc_id"] == "doc one"


def test_help_names_the_knobs() -> None:
    result = CliRunner().invoke(cli, ["clicks", "--help"])
    assert result.exit_code == 0
    for option in ("--max-rank", "--min-impressions", "--min-clicks", "--start-date", "--end-date", "--click-action",
                   "--impression-action", "--digits", "--query-map", "--format", "--output"):
        assert option in result.output


def test_the_readme_example_is_what_the_command_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """README's clicks example, run from the repository's root on the files it names."""
    root = Path(__file__).resolve().parents[2]
    text = (root / "README.md").read_text()
    start = text.index("$ rankflavor clicks examples/ubi_queries.jsonl")
    block = text[start:text.index("```", start)].splitlines()
    tail = next(i for i, line in enumerate(block) if line.startswith("$ tail -3"))
    monkeypatch.chdir(root)
    got = CliRunner().invoke(cli, ["clicks", "examples/ubi_queries.jsonl", "examples/ubi_events.jsonl", "--max-rank", "10"])
    assert got.exit_code == 0
    assert got.stdout.splitlines() == block[1:tail]
    assert got.stderr.splitlines()[-3:] == block[tail + 1:]


def test_the_judgments_read_back_with_their_source_and_evaluate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The trec output is qrels the project reads: every label's source is clicks:coec, the grades
    are the ratings (fractional), and eval scores a run with them."""
    import rankflavor as rf
    from rankflavor.io.columns import to_strings

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    got = CliRunner().invoke(cli, ["clicks", "examples/ubi_queries.jsonl", "examples/ubi_events.jsonl", "--max-rank", "10",
                                   "-o", str(tmp_path / "clicks.qrels")])
    assert got.exit_code == 0, got.output
    back = rf.read_qrels(tmp_path / "clicks.qrels")
    assert back.label_source is not None and set(to_strings(back.label_source)) == {"clicks:coec"}
    assert dict(zip(to_strings(back.doc), back.grade.tolist(), strict=True)) == {"A": 0.0, "B": 2.0}
    # B (rating 2) ranked first: NDCG@2 = 1; A first: (2 / log2(3)) / 2
    assert rf.evaluate(back, {"red%20shoes": {"B": 2.0, "A": 1.0}}, "ndcg@2")[0].mean == pytest.approx(1.0)
    assert rf.evaluate(back, {"red%20shoes": {"A": 2.0, "B": 1.0}}, "ndcg@2")[0].mean == pytest.approx(1 / math.log2(3))
