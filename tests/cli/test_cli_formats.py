"""``--qrels-format``, ``--run-format`` and ``--columns`` on the commands that read inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rankflavor.cli.main import cli


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    files = {
        "q.txt": "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq2 0 a 1\n",
        "r.txt": "q1 Q0 a 1 0.2 t\nq1 Q0 b 2 0.9 t\nq1 Q0 c 3 0.5 t\nq2 Q0 a 1 1.0 t\n",
        "q.csv": "topic,pid,label\nq1,a,2\nq1,b,0\nq1,c,1\nq2,a,1\n",
        "r.ranks": "q1\tb\t1\nq1\tc\t2\nq1\ta\t3\nq2\ta\t1\n",
        "r2.ranks": "q1\ta\t1\nq1\tb\t2\nq1\tc\t3\nq2\ta\t1\n",
    }
    out = {}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        out[name] = tmp_path / name
    return out


def _means(result: str) -> list[float]:
    return [m["value"] for m in json.loads(result)["measures"]]


def test_formats_and_columns_reach_every_reading_command(inputs: dict[str, Path]) -> None:
    runner = CliRunner()
    base = runner.invoke(cli, ["eval", str(inputs["q.txt"]), str(inputs["r.txt"]), "-m", "ndcg@3", "--format", "json"])
    assert base.exit_code == 0, base.output
    same = runner.invoke(cli, ["eval", str(inputs["q.csv"]), str(inputs["r.ranks"]), "--qrels-format", "csv",
                               "--run-format", "msmarco", "--columns", "query=topic,doc=pid,grade=label",
                               "-m", "ndcg@3", "--format", "json"])
    assert same.exit_code == 0, same.output
    assert _means(same.output) == _means(base.output)  # the ranks order as the scores do
    assert "order=rank" in json.loads(same.output)["measures"][0]["flavor"]
    for command in (["spread", "--no-presets", "--vary", "gain=linear,exp2"], ["judgments", "--scale", "trec_dl"],
                    ["explain", "-Q", "q1"], ["diff"], ["compare", "--resamples", "50", "--no-ci"]):
        args = [command[0], str(inputs["q.csv"]), str(inputs["r.ranks"])]
        if command[0] == "diff":
            args += ["ndcg@3", "ndcg@3[gain=exp2]"]
        if command[0] == "compare":
            args += [str(inputs["r2.ranks"])]
        args += [*command[1:], "--run-format", "msmarco", "--columns", "query=topic,doc=pid,grade=label"]
        done = runner.invoke(cli, args)
        assert "rankflavor: error" not in done.output and "Traceback" not in done.output, (command, done.output)
        assert done.exit_code == 0, (command, done.output)


def test_option_errors_are_usage_errors(inputs: dict[str, Path]) -> None:
    runner = CliRunner()
    trec_only = runner.invoke(cli, ["eval", str(inputs["q.txt"]), str(inputs["r.txt"]), "--columns", "query=qid"])
    assert trec_only.exit_code == 2 and "--columns" in trec_only.output
    unknown = runner.invoke(cli, ["eval", str(inputs["q.txt"]), str(inputs["r.txt"]), "--run-format", "xml"])
    assert unknown.exit_code == 2
    spark = runner.invoke(cli, ["eval", str(inputs["q.csv"]), str(inputs["r.txt"]), "--engine", "spark",
                                "--qrels-format", "csv"])
    assert spark.exit_code == 2 and "local engine" in spark.output
    wrong = runner.invoke(cli, ["eval", str(inputs["q.txt"]), str(inputs["r.txt"]), "--run-format", "msmarco"])
    assert wrong.exit_code == 3 and f"{inputs['r.txt']}:1:" in wrong.output
