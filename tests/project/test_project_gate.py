"""rankflavor gate: exit codes and messages for pass, fail on the floor, fail on a drop, a significant
drop, a baseline of another flavor, a missing baseline and changed judgments, on the real DL19 runs.

Expected means are trec_eval 9.0.8's (-c, shared/data/expected): NDCG@10 of BM25 0.5058, BM25+RM3
0.5216, SPLADE++ 0.7308; the t-test's p-value is SciPy's on trec_eval's per-query values."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from scipy import stats

from rankflavor.cli.main import cli

from ..conftest import shared_path

RUNS = {"bm25": "rankllm.dl19.bm25.top100.run", "rm3": "rankllm.dl19.bm25-rm3.top100.run",
        "splade": "rankllm.dl19.splade-p-p-ensemble-distil.top100.run"}


def project(tmp_path: Path, gate: str, baseline: str | None = "base.json", qrels: Path | None = None) -> Path:
    q = qrels or shared_path("qrels", "qrels.dl19-passage.txt")
    lines = ["[project]", "name = 'dl19'", "[metrics]", "measures = ['ndcg@10']", "[datasets.dl19]", f"qrels = '{q}'"]
    for name, file in RUNS.items():
        lines += [f"[runs.{name}]", f"path = '{shared_path('runs', file)}'"]
    if baseline:
        lines += ["[baselines]", f"dl19 = '{baseline}'"]
    lines += ["[gate]", gate]
    (tmp_path / "rankflavor.toml").write_text("\n".join(lines) + "\n")
    return tmp_path


def invoke(*args: str) -> tuple[int, str, str]:
    # 200 columns: each sentence checked here on one line (tests/cli/test_cli_width.py checks 80 and 120)
    r = CliRunner().invoke(cli, list(args), env={"COLUMNS": "200"})
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, r.stdout, r.stderr


def make_baseline(run: str, *extra: str) -> None:
    code, _, err = invoke("eval", "dl19", run, "-o", "base.json", *extra)
    assert code == 0, err


def trec_eval_per_query(run: str) -> dict[str, float]:
    name = RUNS[run].replace(".run", ".all_trec.q.c.txt")
    out = {}
    for line in shared_path("expected", name).read_text().splitlines():
        f = line.split()
        if f[0] == "ndcg_cut_10" and f[1] != "all":
            out[f[1]] = float(f[2])
    return out


def test_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, "floor = 0.4\nmax_drop = 0.02\nalpha = 0.05"))
    make_baseline("bm25")
    code, out, _ = invoke("gate", "rm3")
    assert code == 0, out
    assert f"gate: config {tmp_path / 'rankflavor.toml'}; pinned flavor: rankflavor defaults" in out
    assert "dataset dl19, run rm3" in out and "baseline " in out
    assert re.search(r"PASS  ndcg@10  floor\s+mean 0\.5216 >= floor 0\.4000", out), out
    assert re.search(r"PASS  ndcg@10  max_drop\s+mean 0\.5216 rose 0\.015[78] from the baseline's 0\.5058", out), out
    assert re.search(r"PASS  ndcg@10  significance .*on 43 queries: higher than the baseline, not significantly at "
                     r"alpha 0\.05: no drop", out), out
    assert out.rstrip().endswith("gate passed: 3 checks")


def test_fail_on_floor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, "floor = {'ndcg@10' = 0.6}", baseline=None))
    code, out, _ = invoke("gate", "bm25", "splade")  # the floor needs no baseline
    assert code == 1
    assert re.search(r"FAIL  ndcg@10  floor\s+mean 0\.5058 < floor 0\.6000", out), out
    assert re.search(r"PASS  ndcg@10  floor\s+mean 0\.7308 >= floor 0\.6000", out), out
    assert "gate FAILED: 1 of 2 checks failed (ndcg@10 on dl19/bm25: floor)" in out


def test_fail_on_drop_and_a_significant_drop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, "max_drop = 0.05\nalpha = 0.05\ntest = 't'"))
    make_baseline("splade")
    code, out, _ = invoke("gate", "bm25", "--format", "json")
    assert code == 1
    doc = json.loads(out)
    assert doc["passed"] is False
    checks = {c["check"]: c for c in doc["runs"][0]["checks"]}
    assert checks["max_drop"]["passed"] is False
    assert "dropped 0.2250 from the baseline's 0.7308 (more than the allowed 0.0500)" in checks["max_drop"]["reason"]
    new, base = trec_eval_per_query("bm25"), trec_eval_per_query("splade")
    queries = sorted(new)
    expected = stats.ttest_rel([new[q] for q in queries], [base[q] for q in queries]).pvalue
    sig = checks["significance"]
    assert sig["passed"] is False and "significantly lower than the baseline at alpha 0.05: a drop" in sig["reason"]
    assert sig["pvalue"] == pytest.approx(expected, rel=0.02)  # trec_eval prints 4 decimals
    text = invoke("gate", "bm25")[1]
    assert "FAIL  ndcg@10  max_drop" in text and "FAIL  ndcg@10  significance paired t-test" in text


def test_a_baseline_of_another_flavor_is_refused_knob_by_knob(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, "max_drop = 0.05"))
    make_baseline("bm25", "--flavor", "gain=exp2,ideal=local")  # flagged, but written
    code, _, err = invoke("gate", "rm3")
    assert code == 2
    assert "base.json was not scored under the flavor" in err
    assert "ndcg@10: gain=exp2 in the baseline, linear pinned, ideal=local in the baseline, global pinned" in err
    # The config changed after the baseline was made: the same refusal.
    make_baseline("bm25")
    toml = tmp_path / "rankflavor.toml"
    toml.write_text(toml.read_text() + "[flavor]\nties = 'averaged'\n")
    code, _, err = invoke("gate", "rm3")
    assert code == 2 and "ties=docno_desc in the baseline, averaged pinned" in err


def test_a_missing_baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, "max_drop = 0.05", baseline="baselines/none.json"))
    code, _, err = invoke("gate", "rm3")
    assert code == 3
    assert f"{tmp_path / 'baselines' / 'none.json'}: the baseline results file of dataset 'dl19' does not exist" in err
    project(tmp_path, "max_drop = 0.05", baseline=None)
    code, _, err = invoke("gate", "rm3")
    assert code == 2 and "dataset 'dl19' has none: set [baselines] dl19" in err
    code, _, err = invoke("gate", "rm3", "--baseline-results", "other.json")
    assert code == 3 and "other.json" in err


def test_a_baseline_scored_on_other_judgments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    changed = tmp_path / "changed.qrels"
    shutil.copy(shared_path("qrels", "qrels.dl19-passage.txt"), changed)
    project(tmp_path, "max_drop = 0.05", qrels=changed)
    monkeypatch.chdir(tmp_path)
    make_baseline("bm25")
    changed.write_text(changed.read_text().replace("19335 Q0 1017759 0", "19335 Q0 1017759 1", 1))
    code, _, err = invoke("gate", "rm3")
    assert code == 3 and "the baseline was scored on other judgments" in err


def test_usage_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke("gate")
    assert code == 2 and "no rankflavor.toml" in err
    project(tmp_path, "")
    code, _, err = invoke("gate")
    assert code == 2 and "[gate] sets no threshold" in err
    project(tmp_path, "floor = 0.1")
    code, _, err = invoke("gate", "rm3", "--dataset", "dl20")
    assert code == 2 and "--dataset 'dl20'" in err
    # A run given as a path, on the only dataset.
    code, out, _ = invoke("gate", str(shared_path("runs", RUNS["rm3"])))
    assert code == 0 and f"run {RUNS['rm3']}" in out


def test_record_hands_the_results_to_the_history_hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``eval --record`` and ``gate --record`` call rankflavor.history.record_results (issue 19 item 5)
    through the one hook; without the module they say the results were not recorded."""
    import sys
    import types

    project(tmp_path, "floor = 0.1", baseline=None)
    toml = tmp_path / "rankflavor.toml"
    toml.write_text(toml.read_text() + "[history]\npath = 'h/history.sqlite'\n")
    monkeypatch.chdir(tmp_path)
    # The real history first: eval --record appends to the config's [history] path.
    from rankflavor.history import load_series

    code, _, err = invoke("eval", "dl19", "rm3", "--record")
    assert code == 0 and f"recorded as record 1 in {tmp_path / 'h' / 'history.sqlite'}" in err, err
    assert load_series(tmp_path / "h" / "history.sqlite", metric="ndcg@10", dataset="dl19")
    calls: list[tuple[Path, str, str | None, str | None]] = []
    fake = types.ModuleType("rankflavor.history")
    fake.record_results = lambda db, results, *, dataset=None, run=None, command=None: (  # type: ignore[attr-defined]
        calls.append((db, results.measures[0].measure.name, dataset, run)) or len(calls))
    monkeypatch.setitem(sys.modules, "rankflavor.history", fake)
    code, _, err = invoke("eval", "dl19", "rm3", "--record")
    assert code == 0 and f"recorded as record 1 in {tmp_path / 'h' / 'history.sqlite'}" in err
    code, _, err = invoke("gate", "bm25", "--record")
    assert code == 0
    assert calls == [(tmp_path / "h" / "history.sqlite", "ndcg@10", "dl19", "rm3"),
                     (tmp_path / "h" / "history.sqlite", "ndcg@10", "dl19", "bm25")]


def test_a_significant_rise_is_said_to_be_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: SPLADE++ against a BM25 baseline has a small p because it scores higher; the gate
    passes and says "significantly higher", not a bare "no drop" beside the small p."""
    monkeypatch.chdir(project(tmp_path, "alpha = 0.05"))
    make_baseline("bm25")
    code, out, _ = invoke("gate", "splade")
    new, base = trec_eval_per_query("splade"), trec_eval_per_query("bm25")
    queries = sorted(new)
    expected = stats.ttest_rel([new[q] for q in queries], [base[q] for q in queries]).pvalue
    assert code == 0 and expected < 0.05, out
    assert re.search(r"PASS  ndcg@10  significance paired t-test p = \S+ on 43 queries: significantly higher than the "
                     r"baseline at alpha 0\.05: a rise, no drop", out), out
