"""Results files: ``show`` of a saved file prints byte for byte what the direct command printed, in
every format, with and without per-query values; provenance holds the inputs' SHA-256 (checked
against hashlib on the files), the version, the config, a timestamp and the command line; the
HTML report still reads the file as eval results."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from rankflavor.cli.main import cli

from ..conftest import shared_path

FORMATS = ("table", "json", "csv", "trec", "md", "latex")

# q3 has nothing relevant (empty=nan makes a NaN value), q4 is missing from the run (missing=zero),
# q9 is only in the run; a text-valued measure (relstring) and trec_eval's runid/num_q rows.
QRELS = "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq2 0 a 1\nq2 0 d 2\nq3 0 z 0\nq4 0 k 2\n"
RUN = ("q1 Q0 a 1 3.0 tagX\nq1 Q0 c 2 2.0 tagX\nq1 Q0 b 3 2.0 tagX\nq2 Q0 d 1 1.0 tagX\nq2 Q0 y 2 0.5 tagX\n"
       "q3 Q0 z 1 1.0 tagX\nq9 Q0 a 1 1.0 tagX\n")


def run_cli(*args: str) -> tuple[str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def roundtrip(tmp_path: Path, qrels: str, run: str, extra: list[str], fmt: str, per_query: bool) -> None:
    out = tmp_path / f"{fmt}{int(per_query)}.json"
    q = ["-q"] if per_query else []
    direct, direct_err = run_cli("eval", qrels, run, *extra, *q, "--format", fmt, "-o", str(out))
    shown, shown_err = run_cli("show", str(out), *q, "--format", fmt)
    assert shown == direct
    assert shown_err == direct_err.replace(f"results written to {out}\n", "")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("per_query", [False, True])
def test_show_prints_what_eval_printed_on_real_data(tmp_path: Path, fmt: str, per_query: bool) -> None:
    qrels = str(shared_path("qrels", "qrels.dl19-passage.txt"))
    run = str(shared_path("runs", "rankllm.dl19.bm25.top100.run"))
    roundtrip(tmp_path, qrels, run, ["-m", "ndcg@10", "-m", "trec_eval:map", "-m", "P@10[rel=2]", "-m", "beir:NDCG@10"], fmt, per_query)


@pytest.mark.parametrize("fmt", FORMATS)
def test_show_round_trips_nan_missing_text_and_trec_rows(tmp_path: Path, write, fmt: str) -> None:  # type: ignore[no-untyped-def]
    qrels, run = str(write("q.txt", QRELS)), str(write("r.txt", RUN))
    args = ["--preset", "trec_eval", "-m", "runid", "-m", "num_q", "-m", "ndcg_cut.3", "-m", "relstring.3",
            "-m", "gm_map", "-m", "num_ret", "--flavor", "empty=nan"]
    for per_query in (False, True):
        roundtrip(tmp_path, qrels, run, args, fmt, per_query)


def test_negative_nan_keeps_its_sign(tmp_path: Path, write) -> None:  # type: ignore[no-untyped-def]
    # trec_eval prints -nan for 0/0; trec's layout shows the sign, so the file must keep it.
    from rankflavor.project.resultsfile import read_results, write_results
    from rankflavor.render import render

    qrels, run = write("q.txt", QRELS), write("r.txt", RUN)
    import rankflavor

    res = rankflavor.evaluate(str(qrels), str(run), ["ndcg@3"], empty="nan")
    m = res.measures[0]
    values = m.values.copy()
    values[0] = -float("nan")
    from dataclasses import replace

    res = replace(res, measures=[replace(m, values=values, summary=-float("nan"))])
    write_results(tmp_path / "n.json", res)
    back = read_results(tmp_path / "n.json")
    assert render(back, "trec", True) == render(res, "trec", True)
    assert "-nan" in render(back, "trec", True)


def test_provenance_of_a_results_file(tmp_path: Path, write, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    qrels, run = write("q.txt", QRELS), write("r.txt", RUN)
    (tmp_path / "rankflavor.toml").write_text("[project]\nname = 'toy'\n[metrics]\nmeasures = ['ndcg@3']\n")
    monkeypatch.chdir(tmp_path)
    before = datetime.now().astimezone()
    run_cli("eval", str(qrels), str(run), "-o", "res.json")
    doc = json.loads((tmp_path / "res.json").read_text())
    prov = doc["provenance"]
    assert doc["format"] == "rankflavor.results" and doc["format_version"] == 1
    assert prov["qrels"]["sha256"] == hashlib.sha256(qrels.read_bytes()).hexdigest()
    assert prov["run"]["sha256"] == hashlib.sha256(run.read_bytes()).hexdigest()
    from importlib.metadata import version

    assert prov["rankflavor"] == version("rankflavor")
    config = tmp_path / "rankflavor.toml"
    assert prov["project"]["config"] == str(config)
    assert prov["project"]["config_sha256"] == hashlib.sha256(config.read_bytes()).hexdigest()
    assert prov["project"]["name"] == "toy" and prov["project"]["differs"] == []
    created = datetime.fromisoformat(prov["created"])
    assert created.utcoffset() is not None and abs((created - before).total_seconds()) < 600
    assert prov["command"].startswith("rankflavor eval")
    # Every per-query value is in the file whatever -q said, with the flavor string of its measure.
    (m,) = doc["measures"]
    assert m["flavor"].startswith("ndcg@3[") and [r["query"] for r in m["per_query"]] == ["q1", "q2", "q3", "q4"]


def test_the_report_reads_a_results_file_as_eval_results(tmp_path: Path, write) -> None:  # type: ignore[no-untyped-def]
    from rankflavor.report import load_document

    qrels, run = write("q.txt", QRELS), write("r.txt", RUN)
    run_cli("eval", str(qrels), str(run), "-m", "ndcg@3", "-o", str(tmp_path / "res.json"))
    doc = load_document(tmp_path / "res.json")
    assert doc.kind == "eval"
    run_cli("report", str(tmp_path / "res.json"), "-o", str(tmp_path / "r.html"))
    html = (tmp_path / "r.html").read_text()
    assert hashlib.sha256(run.read_bytes()).hexdigest() in html  # the recorded hash is shown


@pytest.mark.parametrize(("text", "where"), [
    ("{", "not valid JSON"),
    ('{"measures": []}', "not a results file"),
    ('{"measures": [{"flavor": "ndgc@3", "n_queries": 1, "per_query": []}], "counts": {}}', "measures[0].flavor"),
    ('{"measures": [{"flavor": "ndcg@3", "n_queries": 1}], "counts": {}}', "measures[0].per_query: missing"),
    ('{"measures": [{"flavor": "ndcg@3", "n_queries": 1, "per_query": [{"query": "q", "value": "x"}]}], '
     '"counts": {}}', "measures[0].per_query[0].value"),
])
def test_a_bad_results_file_is_an_input_error(tmp_path: Path, text: str, where: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    result = CliRunner().invoke(cli, ["show", str(bad)])
    assert result.exit_code == 3
    assert str(bad) in result.stderr and where in result.stderr
    gone = CliRunner().invoke(cli, ["show", str(tmp_path / "none.json")])
    assert gone.exit_code == 3 and "cannot read the results file" in gone.stderr


def test_eval_json_without_o_is_unchanged(write) -> None:  # type: ignore[no-untyped-def]
    """No config and no -o: the JSON output keeps its shape (no project block, no hashes, no time)."""
    qrels, run = write("q.txt", QRELS), write("r.txt", RUN)
    out, _ = run_cli("eval", str(qrels), str(run), "-m", "ndcg@3", "--format", "json")
    prov = json.loads(out)["provenance"]
    assert set(prov) == {"rankflavor", "qrels", "run"} and "sha256" not in prov["qrels"]


def test_the_command_line_is_recorded_as_typed(tmp_path: Path, write) -> None:  # type: ignore[no-untyped-def]
    import os
    import subprocess
    import sys

    qrels, run = write("q.txt", QRELS), write("r.txt", RUN)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    args = ["eval", str(qrels), str(run), "-m", "ndcg@3", "-o", str(tmp_path / "res.json")]
    subprocess.run([sys.executable, "-m", "rankflavor", *args], check=True, env=env, capture_output=True,
                   cwd=tmp_path)
    import shlex

    assert json.loads((tmp_path / "res.json").read_text())["provenance"]["command"] == shlex.join(["rankflavor", *args])


def _collections():  # type: ignore[no-untyped-def]
    from hypothesis import strategies as st

    docs = [f"d{i}" for i in range(6)]
    qrels = st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q 4"]),
                            st.dictionaries(st.sampled_from(docs), st.integers(0, 3), min_size=1, max_size=4),
                            min_size=1, max_size=4)
    # Scores from few values, so that ties occur.
    run = st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q9"]),
                          st.dictionaries(st.sampled_from(docs), st.sampled_from([0.5, 1.0, 2.0, 1e-9]), min_size=1,
                                          max_size=5), min_size=1, max_size=4)
    return st.tuples(qrels, run)


def test_every_renderer_reads_random_results_back_byte_for_byte(tmp_path_factory: pytest.TempPathFactory) -> None:
    from hypothesis import HealthCheck, assume, given, settings
    from hypothesis import strategies as st

    import rankflavor
    from rankflavor.errors import EvaluationError
    from rankflavor.project.resultsfile import read_results, write_results
    from rankflavor.render import render

    folder = tmp_path_factory.mktemp("rt")

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_collections(), st.sampled_from(["zero", "nan", "skip", "one"]), st.sampled_from(["zero", "skip"]),
           st.sampled_from(["linear", "exp2"]), st.sampled_from(["global", "local"]))
    def check(data, empty: str, missing: str, gain: str, ideal: str) -> None:  # type: ignore[no-untyped-def]
        qrels, run = data
        try:
            res = rankflavor.evaluate(qrels, run, ["ndcg@3", "P@2", "AP", "RR", "recall@3", "trec_eval:num_rel_ret"],
                                      empty=empty, missing=missing, gain=gain, ideal=ideal)
        except EvaluationError:
            assume(False)
            return
        path = write_results(folder / "r.json", res)
        back = read_results(path)
        assert back.to_dict() == res.to_dict()
        for fmt in FORMATS:
            for per_query in (False, True):
                assert render(back, fmt, per_query, width=100) == render(res, fmt, per_query, width=100)

    check()
