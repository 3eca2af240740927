"""``estimate`` and ``agreement`` read their two judgment files (and the runs) in every format the
other commands read: ``--qrels-format``, ``--run-format`` and ``--columns`` apply to both files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rankflavor.cli.main import cli

HUMAN = [("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d1", 1), ("q2", "d3", 3), ("q3", "d2", 1)]
JUDGE = [("q1", "d1", 3), ("q1", "d2", 0), ("q2", "d1", 1), ("q2", "d3", 2), ("q3", "d2", 0), ("q4", "d1", 2),
         ("q4", "d2", 1), ("q5", "d3", 1)]
RUN = [(q, d, s) for q in ("q1", "q2", "q3", "q4", "q5") for d, s in (("d1", 3.0), ("d2", 2.0), ("d3", 1.0))]


def _trec(tmp: Path) -> list[str]:
    paths = []
    for name, rows in (("human", HUMAN), ("judge", JUDGE)):
        p = tmp / f"{name}.txt"
        p.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
        paths.append(str(p))
    run = tmp / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} {i % 3 + 1} {s} r\n" for i, (q, d, s) in enumerate(RUN)))
    return [*paths, str(run)]


def _csv(tmp: Path) -> list[str]:
    paths = []
    for name, rows in (("human", HUMAN), ("judge", JUDGE)):
        p = tmp / f"{name}.csv"
        p.write_text("qid,docid,label\n" + "".join(f"{q},{d},{g}\n" for q, d, g in rows))
        paths.append(str(p))
    run = tmp / "run.csv"
    run.write_text("qid,docid,points\n" + "".join(f"{q},{d},{s}\n" for q, d, s in RUN))
    return [*paths, str(run)]


COLUMNS = ["--columns", "query=qid,doc=docid,grade=label,score=points"]


@pytest.mark.parametrize("command", ["estimate", "agreement"])
def test_csv_inputs_with_their_columns_give_the_trec_numbers(command: str, tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "c").mkdir()
    common = ["-m", "ndcg@3", "--format", "json"] + (["--resamples", "200"] if command == "agreement" else [])
    trec = CliRunner().invoke(cli, [command, *_trec(tmp_path / "t"), *common])
    assert trec.exit_code == 0, trec.output
    csv = CliRunner().invoke(cli, [command, *_csv(tmp_path / "c"), *common, *COLUMNS])
    assert csv.exit_code == 0, csv.output

    def numbers(text: str) -> str:  # the JSON without the inputs' paths
        doc = json.loads(text)
        doc.pop("provenance", None)
        return json.dumps(doc, sort_keys=True).replace(str(tmp_path / "t"), "").replace(str(tmp_path / "c"), "")

    assert numbers(trec.stdout).replace(".txt", "") == numbers(csv.stdout).replace(".csv", "")


@pytest.mark.parametrize("command", ["estimate", "agreement"])
def test_the_columns_name_each_judgment_file_when_wrong(command: str, tmp_path: Path) -> None:
    human, judge, run = _csv(tmp_path)
    bad = CliRunner().invoke(cli, [command, human, judge, run, "--columns", "query=qid,doc=docid,grade=grade,score=points"])
    assert bad.exit_code != 0 and "Traceback" not in bad.output
    assert "human.csv" in bad.output and "grade" in bad.output
    # without --columns the run's score column is not guessed (the judgments' qid/docid/label are
    # names the reader knows)
    plain = CliRunner().invoke(cli, [command, human, judge, run])
    assert plain.exit_code != 0 and "run.csv: needs a score column" in plain.output


def test_labels_are_not_chosen_within_a_file_here(tmp_path: Path) -> None:
    """estimate's arguments name the sources (human, LLM): no --labels or --label-source."""
    args = ["estimate", *_trec(tmp_path), "--labels", "human"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "No such option '--labels'" in result.output
