"""``rankflavor.estimate`` and ``rankflavor estimate``: the per-query values the engine gives, the
estimates ppi_py gives on them, every format saying the same, line order, bad input, edge cases."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.errors import InputError, UsageError

from ...conftest import shared_path

ppi_py = pytest.importorskip("ppi_py")
pytrec_eval = pytest.importorskip("pytrec_eval")


def _qrels(rows: dict[str, dict[str, int]]) -> str:
    return "".join(f"{q} 0 {d} {g}\n" for q, docs in rows.items() for d, g in docs.items())


def _run(rows: dict[str, dict[str, float]]) -> str:
    return "".join(f"{q} Q0 {d} {i + 1} {s} r\n" for q, docs in rows.items()
                   for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1])))


def _data(seed: int = 0, queries: int = 12, labelled: int = 6) -> tuple[dict, dict, dict, dict]:
    """Human judgments on the first ``labelled`` queries, a noisy judge on all, two runs."""
    rng = random.Random(seed)
    truth = {f"q{i:02d}": {f"d{k}": rng.choice((0, 0, 1, 2, 3)) for k in range(8)} for i in range(queries)}
    human = {q: docs for i, (q, docs) in enumerate(truth.items()) if i < labelled}
    llm = {q: {d: max(0, min(3, g + rng.choice((-1, 0, 0, 1)))) for d, g in docs.items()} for q, docs in truth.items()}
    runs = [{q: {f"d{k}": rng.random() for k in range(8)} for q in truth} for _ in range(2)]
    return human, llm, runs[0], runs[1]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    human, llm, a, b = _data()
    out = {}
    for name, text in (("human.qrels", _qrels(human)), ("llm.qrels", _qrels(llm)), ("a.run", _run(a)),
                       ("b.run", _run(b))):
        out[name] = tmp_path / name
        out[name].write_text(text)
    return out


def test_labelled_values_are_pytrec_evals_and_ppi_is_ppi_pys() -> None:
    human, llm, a, _ = _data(3, queries=20, labelled=9)
    e = rankflavor.estimate(human, llm, {"a": a}, "ndcg@10", alpha=0.1)
    r = e["a"]
    ev = pytrec_eval.RelevanceEvaluator(human, {"ndcg_cut.10"})
    theirs = ev.evaluate(a)
    assert list(r.labelled) == sorted(human)
    assert r.y == pytest.approx([theirs[q]["ndcg_cut_10"] for q in r.labelled], abs=1e-12)
    ev_llm = pytrec_eval.RelevanceEvaluator(llm, {"ndcg_cut.10"}).evaluate(a)
    assert r.yhat == pytest.approx([ev_llm[q]["ndcg_cut_10"] for q in r.labelled], abs=1e-12)
    assert r.yhat_u == pytest.approx([ev_llm[q]["ndcg_cut_10"] for q in r.unlabelled], abs=1e-12)
    y, yhat, yu = np.array(r.y), np.array(r.yhat), np.array(r.yhat_u)
    low, high = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=0.1, lam=None)
    assert r.ppi.point == pytest.approx(float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, yhat, yu))), abs=1e-9)
    assert (r.ppi.low, r.ppi.high) == pytest.approx((float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-9)
    assert (r.human.low, r.human.high) == pytest.approx(ppi_py.classical_mean_ci(y, alpha=0.1), abs=1e-12)
    assert r.llm.n == 20 and r.llm.point == pytest.approx(float(np.concatenate([yhat, yu]).mean()), abs=1e-12)
    assert e.tuning == "ppi++" and e.measure.startswith("ndcg@10[")


def test_dl19_fully_judged_human_only_is_trec_evals_mean() -> None:
    qrels = shared_path("qrels", "qrels.dl19-passage.txt")
    run = shared_path("runs", "rankllm.dl19.bm25.top100.run")
    r = rankflavor.estimate(qrels, qrels, [run], "ndcg@10").runs[0]
    # trec_eval 9.0.8 -c -m all_trec: ndcg_cut_10 all 0.5058 (shared/data/expected/rankllm.dl19.bm25...)
    assert round(r.human.point, 4) == 0.5058 == round(r.llm.point, 4)
    assert r.human.n == 43 and r.ppi.n_unlabelled == 0 and r.ppi.point == r.human.point


def _cli(*args: object) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output + str(result.exception)
    return result.output


def test_every_format_carries_the_same_numbers(files: dict[str, Path]) -> None:
    args = ["estimate", files["human.qrels"], files["llm.qrels"], files["a.run"], files["b.run"], "-m", "ndcg@5",
            "--alpha", "0.2"]
    data = json.loads(_cli(*args, "--format", "json"))
    rows = list(csv.DictReader(io.StringIO(_cli(*args, "--format", "csv"))))
    table = _cli(*args, "--format", "table", "--wide")
    md = _cli(*args, "--format", "md")
    assert data["level"] == pytest.approx(0.8) and len(rows) == 6
    for run in data["runs"]:
        for key, est in run["estimates"].items():
            row = next(r for r in rows if r["run"] == run["name"] and r["estimator"] == key)
            for fld in ("point", "low", "high", "se"):
                assert float(row[fld]) == est[fld]
            assert int(row["n"]) == est["n"] and int(row["n_unlabelled"]) == est["n_unlabelled"]
            assert row["measure"] == data["measure"]
            for shown in (table, md):
                for fld in ("point", "low", "high"):
                    assert f"{est[fld]:.4f}" in shown
        ratio = float(rows[0 if run is data["runs"][0] else 3]["width_ratio"])
        assert ratio == pytest.approx(run["width_ratio"], abs=0)
        assert f"{run['width_ratio']:.4f}" in table and f"{run['width_ratio']:.4f}" in md
    assert data["measure"].split("[")[0] == "ndcg@5" and "empty=zero" in md


def test_output_does_not_depend_on_line_order(files: dict[str, Path], tmp_path: Path) -> None:
    shuffled = {}
    for name, path in files.items():
        lines = path.read_text().splitlines(keepends=True)
        random.Random(7).shuffle(lines)
        shuffled[name] = tmp_path / f"shuffled-{name}"
        shuffled[name].write_text("".join(lines))

    def out(fs: dict[str, Path]) -> dict:
        d = json.loads(_cli("estimate", fs["human.qrels"], fs["llm.qrels"], fs["a.run"], "--format", "json"))
        d.pop("provenance")
        for r in d["runs"]:
            r.pop("name")
        return d

    assert out(files) == out(shuffled)


@pytest.mark.parametrize("which", ["human.qrels", "llm.qrels", "a.run"])
def test_a_bad_line_names_its_file_and_line(files: dict[str, Path], which: str) -> None:
    lines = files[which].read_text().splitlines()
    lines[2] = "q00 0 dX"
    files[which].write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(cli, ["estimate", str(files["human.qrels"]), str(files["llm.qrels"]),
                                      str(files["a.run"])])
    assert result.exit_code == InputError.exit_code
    assert f"{files[which]}:3" in result.output


def test_usage_errors(files: dict[str, Path]) -> None:
    base = ["estimate", str(files["human.qrels"]), str(files["llm.qrels"]), str(files["a.run"])]
    assert CliRunner().invoke(cli, [*base, "--lambda", "2"]).exit_code == 2
    assert CliRunner().invoke(cli, [*base, "--alpha", "1.5"]).exit_code == UsageError.exit_code
    with pytest.raises(UsageError):
        rankflavor.estimate({"q": {"a": 1}}, {"q": {"a": 1}}, [], "ndcg@10")


def test_plain_ppi_and_a_fixed_lambda(files: dict[str, Path]) -> None:
    base = ["estimate", files["human.qrels"], files["llm.qrels"], files["a.run"], "--format", "json"]
    plain = json.loads(_cli(*base, "--lambda", "1"))
    assert plain["tuning"] == "ppi" and plain["runs"][0]["estimates"]["ppi"]["lambda"] == 1.0
    half = json.loads(_cli(*base, "--lambda", "0.5"))
    assert half["tuning"] == "lambda=0.5" and half["runs"][0]["estimates"]["ppi"]["lambda"] == 0.5


def _every_format(tmp_path: Path, human: dict, llm: dict, run: dict) -> tuple[dict, str, str, str]:
    paths = []
    for name, text in (("h", _qrels(human)), ("l", _qrels(llm)), ("r", _run(run))):
        paths.append(tmp_path / name)
        paths[-1].write_text(text)
    out = {f: _cli("estimate", *paths, "-m", "P@2", "--format", f) for f in ("json", "csv", "table", "md")}
    return json.loads(out["json"]), out["csv"], out["table"], out["md"]


def test_a_query_only_the_human_judgments_judge_is_counted_and_named_everywhere(tmp_path: Path) -> None:
    human = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "lonely": {"z": 1}}
    llm = {"q1": {"a": 1}, "q2": {"b": 0}, "q3": {"c": 1}, "q4": {"d": 1}}
    run = {q: {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5, "z": 0.1} for q in ("q1", "q2", "q3", "q4", "lonely")}
    data, csv_text, table, md = _every_format(tmp_path, human, llm, run)
    r = data["runs"][0]
    assert r["human_only_queries"] == ["lonely"] and r["estimates"]["human"]["n"] == 3
    for shown in (csv_text, table, md):
        assert "(lonely)" in shown and "no estimate reads them" in " ".join(shown.split())


def test_one_labelled_query_has_no_interval_and_says_why_everywhere(tmp_path: Path) -> None:
    human = {"q1": {"a": 1}}
    llm = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"a": 1}}
    run = {q: {"a": 2.0, "b": 1.0} for q in ("q1", "q2", "q3")}
    data, csv_text, table, md = _every_format(tmp_path, human, llm, run)
    est = data["runs"][0]["estimates"]
    for key in ("human", "ppi"):
        assert est[key]["low"] is None and "one labelled query" in est[key]["undefined"]["low"]
    assert est["human"]["point"] == 0.5
    assert data["runs"][0]["width_ratio"] is None and "width_ratio" in data["runs"][0]["undefined"]
    for shown in (csv_text, table, md):
        assert "one labelled query shows no spread" in " ".join(shown.split())
    assert "nan" in csv_text and "nan" in table and "nan" in md


def test_no_labelled_query(tmp_path: Path) -> None:
    human = {"q9": {"a": 1}}
    llm = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {q: {"a": 2.0, "b": 1.0} for q in ("q1", "q2", "q9")}
    data, csv_text, table, md = _every_format(tmp_path, human, llm, run)
    est = data["runs"][0]["estimates"]
    assert est["human"]["point"] is None and est["ppi"]["point"] is None and est["llm"]["point"] == 0.5
    for shown in (csv_text, table, md):
        assert "no labelled query" in " ".join(shown.split())


def test_zero_variance_and_no_unlabelled_query_are_notes(tmp_path: Path) -> None:
    human = {"q1": {"a": 1}, "q2": {"a": 1}}
    llm = human
    run = {q: {"a": 2.0, "b": 1.0} for q in ("q1", "q2")}
    data, csv_text, table, md = _every_format(tmp_path, human, llm, run)
    ppi = data["runs"][0]["estimates"]["ppi"]
    assert ppi["low"] == ppi["high"] == 0.5 and ppi["lambda"] == 0.0
    for shown in (csv_text, table, md):
        flat = " ".join(shown.split())
        assert "zero width" in flat and "PPI is the human-only estimate" in flat


def test_values_under_empty_nan_are_counted(tmp_path: Path) -> None:
    human = {"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"b": 0}}
    llm = {"q1": {"a": 1}, "q2": {"a": 0}, "q3": {"b": 1}, "q4": {"a": 1}}
    run = {q: {"a": 2.0, "b": 1.0} for q in ("q1", "q2", "q3", "q4")}
    r = rankflavor.estimate(human, llm, {"r": run}, "ndcg@2[empty=nan]").runs[0]
    assert r.not_a_number == {"human": ("q3",), "llm": ("q2",)}
    assert "q3" not in r.labelled and r.human.n == 1
    assert any("NaN under the human judgments" in n for n in r.notes())
    with pytest.raises(KeyError):
        rankflavor.estimate(human, llm, {"r": run}, "ndcg@2")["nope"]


def test_the_library_never_imports_ppi_py() -> None:
    import os
    import subprocess
    import sys

    code = ("import sys, rankflavor; e = rankflavor.estimate({'q1': {'a': 1}, 'q2': {'b': 1}}, "
            "{'q1': {'a': 1}, 'q2': {'b': 0}, 'q3': {'a': 1}}, {'r': {'q1': {'a': 1.0}, 'q2': {'b': 1.0}, "
            "'q3': {'a': 1.0}}}, 'P@1'); print(e.runs[0].ppi.n_unlabelled, 'ppi_py' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(rankflavor.__file__).parents[1])})
    assert out.stdout.split() == ["1", "False"]
