"""rankflavor.mlflow and ``eval --mlflow`` against a real local MLflow tracking store (SQLite
backend; MLflow's file store is deprecated), read back with MLflow's own ``MlflowClient``: every
mean, canonical flavor string, count and input SHA-256, and the per-query artifact's rows."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("mlflow")
pytest.importorskip("sqlalchemy")

import mlflow
from mlflow import MlflowClient
from mlflow.utils.validation import validate_param_and_metric_name

import rankflavor
import rankflavor.trackers.mlflow as rf_mlflow
from rankflavor.cli.main import cli
from rankflavor.errors import UsageError
from rankflavor.trackers.keys import Logged

from ..conftest import shared_path

QRELS = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d4 1\nq3 0 d9 0\n"
RUN = ("q1 Q0 d2 1 3.0 sys\nq1 Q0 d1 2 2.0 sys\nq1 Q0 dX 3 1.0 sys\n"
       "q2 Q0 d5 1 2.0 sys\nq2 Q0 d4 2 1.0 sys\nq3 Q0 d9 1 1.0 sys\n")
MEASURES = ["ndcg@3", "AP", "P@2", "relstring@3", "ndcg@3[empty=nan]"]
KEY = re.compile(r"[A-Za-z0-9_.\-]+__[0-9a-f]{8}")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def key_of(metric: str, k: int | None, flavor: str) -> str:
    """The key the brief asks for, spelled out here: <metric>_<k>__<first 8 hex of SHA-256(flavor)>."""
    return f"{metric}{'' if k is None else f'_{k}'}__{hashlib.sha256(flavor.encode()).hexdigest()[:8]}"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """One SQLite store for the module (creating its tables takes seconds); each test makes its
    own experiment, with artifacts under the same temporary folder."""
    root = tmp_path_factory.mktemp("mlflow")
    return f"sqlite:///{root / 'mlflow.db'}", root


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.chdir(tmp_path)  # whatever MLflow writes relative to the working directory stays here
    for var in ("MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME", "MLFLOW_EXPERIMENT_ID", "MLFLOW_RUN_ID"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return tmp_path / "qrels.txt", tmp_path / "run.txt"


def experiment(store: tuple[str, Path], name: str) -> str:
    uri, root = store
    return MlflowClient(uri).create_experiment(name, artifact_location=(root / name).as_uri())


def read_back(uri: str, run_id: str, dst: Path, prefix: str = "") -> tuple[object, list[dict[str, str]], dict]:
    client = MlflowClient(uri)
    run = client.get_run(run_id)
    dst.mkdir(parents=True, exist_ok=True)
    csv_path = client.download_artifacts(run_id, f"rankflavor/{prefix}per_query.csv", str(dst))
    json_path = client.download_artifacts(run_id, f"rankflavor/{prefix}results.json", str(dst))
    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return run, rows, json.loads(Path(json_path).read_text(encoding="utf-8"))


def assert_holds(run: object, rows: list[dict[str, str]], results: rankflavor.Results, qrels: Path, run_file: Path,
                 prefix: str = "") -> None:
    """The run holds every mean (by its flavor key), flavor string, count and hash of ``results``."""
    metrics, params = run.data.metrics, run.data.params  # type: ignore[attr-defined]
    for m in results:
        flavor = str(m.measure)
        key = key_of(m.measure.metric, m.measure.k, flavor)
        assert KEY.fullmatch(key) and validate_param_and_metric_name(prefix + key)
        assert params[f"{prefix}flavor.{key}"] == flavor
        assert params[f"{prefix}scored.{key}"] == str(m.n_queries)
        assert params[f"{prefix}skipped_empty.{key}"] == str(m.skipped_empty)
        assert params[f"{prefix}skipped_missing.{key}"] == str(m.skipped_missing)
        if m.measure.spec.summary == "none":
            assert prefix + key not in metrics  # relstring: text per query, no mean
        elif math.isnan(m.summary):
            assert math.isnan(metrics[prefix + key])
        else:
            assert metrics[prefix + key] == m.summary  # the same float, not a rounding of it
        mine = [r for r in rows if r["flavor"] == flavor and r["query"] != "all"]
        assert [r["query"] for r in mine] == [str(q) for q in m.queries]
        for r, v, s in zip(mine, m.values, m.status, strict=True):
            assert r["status"] == s
            if isinstance(v, str):
                assert r["value"] == v
            elif math.isnan(v):
                assert r["value"].lower() in ("", "nan")
            else:
                assert float(r["value"]) == v
    assert len({k for k in metrics if k.startswith(prefix)}) == sum(m.measure.spec.summary != "none" for m in results)
    for name, n in results.counts.to_dict().items():
        assert params[f"{prefix}counts.{name}"] == str(n)
    assert params[f"{prefix}input.qrels.sha256"] == sha(qrels)
    assert params[f"{prefix}input.run.sha256"] == sha(run_file)
    assert params[f"{prefix}input.qrels.bytes"] == str(qrels.stat().st_size)


def test_log_new_run_holds_every_mean_flavor_count_and_hash(store, inputs, tmp_path):
    qrels, run_file = inputs
    experiment(store, "api")
    results = rankflavor.evaluate(qrels, run_file, MEASURES)
    run_id = rf_mlflow.log(results, tracking_uri=store[0], experiment="api", run_name="bm25")
    run, rows, doc = read_back(store[0], run_id, tmp_path / "out")
    assert run.info.status == "FINISHED" and run.info.run_name == "bm25"
    assert_holds(run, rows, results, qrels, run_file)
    # NDCG@3 by hand (linear gain, log2 discount): q1 ranks d2 (1), d1 (2), dX (unjudged) against the
    # ideal 2, 1, 0; q2 ranks d5 (unjudged), d4 (1); q3 has nothing relevant (0 with empty=zero; left
    # out of the mean with empty=nan).
    q1 = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    q2 = (1 / math.log2(3)) / 1
    metrics = run.data.metrics
    linear = str(results["ndcg@3"].measure)
    assert metrics[key_of("ndcg", 3, linear)] == pytest.approx((q1 + q2 + 0) / 3, abs=1e-12)
    assert metrics[key_of("ndcg", 3, str(results[4].measure))] == pytest.approx((q1 + q2) / 2, abs=1e-12)
    # the results.json artifact is a results file: rankflavor reads it back, hashes included
    assert doc["provenance"]["qrels"]["sha256"] == sha(qrels)
    assert [m["flavor"] for m in doc["measures"]] == [str(m.measure) for m in results]


def test_log_into_the_active_run_and_leave_it_running(store, inputs, tmp_path, monkeypatch):
    qrels, run_file = inputs
    experiment(store, "active")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store[0])  # the user's configuration, not the library's
    results = rankflavor.evaluate(qrels, run_file, ["ndcg@3", "AP"])
    with mlflow.start_run(experiment_id=MlflowClient(store[0]).get_experiment_by_name("active").experiment_id) as active:
        mlflow.log_param("model", "bm25")
        assert rf_mlflow.log(results) == active.info.run_id
        assert MlflowClient(store[0]).get_run(active.info.run_id).info.status == "RUNNING"
    run, rows, _ = read_back(store[0], active.info.run_id, tmp_path / "out")
    assert run.data.params["model"] == "bm25"
    assert_holds(run, rows, results, qrels, run_file)


def test_new_run_from_mlflows_own_configuration_ends_before_returning(store, inputs, tmp_path, monkeypatch):
    qrels, run_file = inputs
    exp = experiment(store, "from-env")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store[0])
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "from-env")
    results = rankflavor.evaluate(qrels, run_file, ["ndcg@3"])
    run_id = rf_mlflow.log(results)
    assert mlflow.active_run() is None  # nothing left behind in MLflow's process state
    run, rows, _ = read_back(store[0], run_id, tmp_path / "out")
    assert run.info.experiment_id == exp and run.info.status == "FINISHED"
    assert_holds(run, rows, results, qrels, run_file)


def test_prefixes_keep_two_results_apart_in_one_run(store, inputs, tmp_path, write):
    qrels, run_file = inputs
    other = write("run2.txt", RUN.replace("d5 1 2.0", "d5 1 0.5"))
    exp = experiment(store, "prefixes")
    client = MlflowClient(store[0])
    run_id = client.create_run(exp).info.run_id
    dev = rankflavor.evaluate(qrels, run_file, ["ndcg@3", "AP"])
    test = rankflavor.evaluate(qrels, other, ["ndcg@3", "AP"])
    rf_mlflow.log(dev, run_id=run_id, client=client, prefix="dev/")
    rf_mlflow.log(test, run_id=run_id, client=client, prefix="test/")
    run, rows, _ = read_back(store[0], run_id, tmp_path / "dev", "dev/")
    assert_holds(run, rows, dev, qrels, run_file, "dev/")
    run, rows, _ = read_back(store[0], run_id, tmp_path / "test", "test/")
    assert_holds(run, rows, test, qrels, other, "test/")
    assert dev["AP"].summary != test["AP"].summary


@pytest.mark.parametrize("prefix", ["/dev", "dev//", "a/../b", "dev:", "dév/", "../"])
def test_a_prefix_mlflow_would_refuse_is_refused_before_a_run_exists(store, inputs, prefix):
    qrels, run_file = inputs
    exp = experiment(store, f"bad-prefix-{hashlib.md5(prefix.encode()).hexdigest()[:6]}")
    with pytest.raises(UsageError, match="prefix"):
        rf_mlflow.log(rankflavor.evaluate(qrels, run_file, ["AP"]), tracking_uri=store[0], experiment=exp,
                      prefix=prefix)
    assert MlflowClient(store[0]).search_runs([exp]) == []


def test_values_longer_than_a_param_go_to_a_tag_or_the_artifact():
    # MLflow truncates longer values (mlflow/utils/validation.py: MAX_PARAM_VAL_LENGTH 6000,
    # MAX_TAG_VAL_LENGTH 8000, _validate_length_limit(..., truncate=True)): none may reach it.
    from mlflow.utils.validation import MAX_PARAM_VAL_LENGTH, MAX_TAG_VAL_LENGTH

    assert (rf_mlflow.PARAM_LIMIT, rf_mlflow.TAG_LIMIT) == (MAX_PARAM_VAL_LENGTH, MAX_TAG_VAL_LENGTH)
    flavors = {"a__1": "x" * MAX_PARAM_VAL_LENGTH, "b__2": "y" * (MAX_PARAM_VAL_LENGTH + 1),
               "c__3": "z" * (MAX_TAG_VAL_LENGTH + 1)}
    scored = {k: {"n_queries": 1, "skipped_empty": 0, "skipped_missing": 0} for k in flavors}
    params, tags = rf_mlflow.params_and_tags(Logged({}, flavors, dict.fromkeys(flavors, "x"), scored, {}), "p/")
    assert params["p/flavor.a__1"] == flavors["a__1"]
    assert tags["p/flavor.b__2"] == flavors["b__2"] and "p/flavor.b__2" not in params
    assert "rankflavor/p/results.json" in tags["p/flavor.c__3"] and "p/flavor.c__3" not in params
    assert all(len(v) <= MAX_PARAM_VAL_LENGTH for v in params.values())
    assert all(len(v) <= MAX_TAG_VAL_LENGTH for v in tags.values())


def _logged_run_id(stderr: str) -> str:
    found = re.search(r"logged to MLflow run ([0-9a-f]+)", stderr)
    assert found, stderr
    return found.group(1)


def cli_case(store, qrels: Path, run_file: Path, out: Path, name: str, *metrics: str) -> None:
    """``eval --mlflow`` (tracking URI from MLFLOW_TRACKING_URI) holds what ``--format json`` prints,
    and its per-query artifact is what ``-q --format csv`` prints, byte for byte."""
    experiment(store, name)
    args = ["eval", str(qrels), str(run_file), *(a for m in metrics for a in ("-m", m))]
    env = {"MLFLOW_TRACKING_URI": store[0]}
    logged = CliRunner().invoke(cli, [*args, "--mlflow", "--experiment", name, "--run-name", "cli"], env=env)
    assert logged.exit_code == 0, logged.output
    run, rows, _ = read_back(store[0], _logged_run_id(logged.stderr), out)
    printed = json.loads(CliRunner().invoke(cli, [*args, "-q", "--format", "json"]).stdout)
    metrics_logged, params = run.data.metrics, run.data.params
    assert run.info.run_name == "cli"
    for m in printed["measures"]:
        key = key_of(m["metric"], m["k"], m["flavor"])
        assert params[f"flavor.{key}"] == m["flavor"]
        assert params[f"scored.{key}"] == str(m["n_queries"])
        if m["value"] is not None:
            assert metrics_logged[key] == m["value"]
    for name_, n in printed["counts"].items():
        assert params[f"counts.{name_}"] == str(n)
    assert params["input.qrels.sha256"] == sha(qrels) and params["input.run.sha256"] == sha(run_file)
    as_csv = CliRunner().invoke(cli, [*args, "-q", "--format", "csv"]).stdout
    assert rows == list(csv.DictReader(io.StringIO(as_csv)))
    assert sum(r["query"] != "all" for r in rows) == sum(len(m["per_query"]) for m in printed["measures"])
    for m in printed["measures"]:
        for q in m["per_query"]:
            (row,) = (r for r in rows if r["flavor"] == m["flavor"] and r["query"] == q["query"])
            assert row["status"] == q["status"]
            if q["value"] is None:
                assert row["value"].lower() in ("", "nan")
            elif isinstance(q["value"], str):
                assert row["value"] == q["value"]
            else:
                assert float(row["value"]) == q["value"]


def test_eval_mlflow_small(store, inputs, tmp_path):
    cli_case(store, *inputs, tmp_path / "out", "cli-small", *MEASURES)


def test_eval_mlflow_dl19_bm25(store, inputs, tmp_path):
    qrels = shared_path("qrels", "qrels.dl19-passage.txt")
    run_file = shared_path("runs", "rankllm.dl19.bm25.top100.run")
    cli_case(store, qrels, run_file, tmp_path / "out", "cli-dl19", "ndcg@10", "AP", "recall@100")
    # BM25 on DL19 passage: nDCG@10 0.5058, the Anserini regression (DL19 passage, BM25 default) that
    # this run reproduces (../shared/data/runs/README.md), read back from the store
    runs = MlflowClient(store[0]).search_runs([MlflowClient(store[0]).get_experiment_by_name("cli-dl19").experiment_id])
    (run,) = runs
    ndcg = [v for k, v in run.data.metrics.items() if k.startswith("ndcg_10__")]
    assert len(ndcg) == 1 and round(ndcg[0], 4) == 0.5058


def test_eval_tracker_options_need_a_tracker(store, inputs):
    qrels, run_file = inputs
    result = CliRunner().invoke(cli, ["eval", str(qrels), str(run_file), "--experiment", "x"])
    assert result.exit_code == 2 and "--experiment" in result.stderr and "--mlflow" in result.stderr
    assert result.stdout == ""  # refused before evaluating
    for args in (["--mlflow-uri", store[0]], ["--wandb", "--mlflow-uri", store[0]]):
        result = CliRunner().invoke(cli, ["eval", str(qrels), str(run_file), *args])
        assert result.exit_code == 2 and "--mlflow-uri" in result.stderr and result.stdout == ""


def test_eval_mlflow_names_the_tracker_when_it_refuses(inputs):
    qrels, run_file = inputs
    result = CliRunner().invoke(cli, ["eval", str(qrels), str(run_file), "--mlflow", "--mlflow-uri", "nosuch://x"])
    assert result.exit_code == 1, result.output
    assert "MLflow refused the results" in result.stderr and "Traceback" not in result.stderr
    assert "ndcg@10" in result.stdout  # the results were printed before logging was tried


def test_the_module_named_mlflow_imports_mlflow_not_itself():
    import sys

    assert rf_mlflow.package() is sys.modules["mlflow"] is mlflow
    assert rf_mlflow.package().MlflowClient is MlflowClient and rf_mlflow.__name__ == "rankflavor.trackers.mlflow"


def test_an_experiment_asked_for_beside_an_active_run_gets_its_own_run(store, inputs, tmp_path, monkeypatch):
    qrels, run_file = inputs
    exp = experiment(store, "beside")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store[0])
    results = rankflavor.evaluate(qrels, run_file, ["AP"])
    with mlflow.start_run(experiment_id=experiment(store, "training")) as active:
        run_id = rf_mlflow.log(results, experiment="beside")
        assert mlflow.active_run().info.run_id == active.info.run_id  # the user's run is still the active one
    assert run_id != active.info.run_id
    assert MlflowClient(store[0]).get_run(active.info.run_id).data.metrics == {}
    run, rows, _ = read_back(store[0], run_id, tmp_path / "out")
    assert run.info.experiment_id == exp and run.info.status == "FINISHED"
    assert_holds(run, rows, results, qrels, run_file)


def test_the_readme_keys_are_the_flavors_it_names() -> None:
    """README's MLflow example names two keys; each is its flavor's SHA-256 prefix, computed here
    with hashlib from the canonical string, not by rankflavor.trackers.keys."""
    import hashlib
    import re
    from pathlib import Path

    from rankflavor.metrics.measure import parse_measure

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = text[text.index("## With MLflow / W&B"):text.index("## ERR, RBP, UDCG")]
    keys = re.findall(r"ndcg_10__[0-9a-f]{8}", section)
    want = {f"ndcg_10__{hashlib.sha256(str(parse_measure(m)).encode()).hexdigest()[:8]}"
            for m in ("ndcg@10", "ndcg@10[gain=exp2,ideal=local]")}
    assert set(keys) == want


# --- what the first mutation run of rankflavor.trackers.keys showed unpinned (docs/mutation.md, where) ----


def test_a_key_replaces_every_character_mlflow_refuses_and_ends_in_the_flavor_hash() -> None:
    """An id with characters outside MLflow's set (a metric is named by the user's dialect or a
    preset): each becomes "_"; the id is the flavor string's SHA-256, computed here by hashlib."""
    import types

    from rankflavor.trackers.keys import metric_key

    odd = types.SimpleNamespace(metric="my metric:v2", k=5, __str__=None)
    key = metric_key(odd)  # type: ignore[arg-type]
    assert key == "my_metric_v2_5__" + hashlib.sha256(str(odd).encode()).hexdigest()[:8]
    odd.k = None
    assert metric_key(odd).startswith("my_metric_v2__")  # type: ignore[arg-type]


def test_the_version_logged_is_the_results_own() -> None:
    import dataclasses

    from rankflavor.trackers.keys import logged

    res = rankflavor.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1"])
    assert logged(res).version == rankflavor.__version__
    older = dataclasses.replace(res, provenance={**res.provenance, "rankflavor": "0.0.9"})
    assert logged(older).version == "0.0.9"  # a results file read back keeps the version that wrote it
    bare = dataclasses.replace(res, provenance={k: v for k, v in res.provenance.items() if k != "rankflavor"})
    assert logged(bare).version == rankflavor.__version__


def test_hashed_provenance_adds_each_hash_where_its_record_is_and_nowhere_else() -> None:
    from rankflavor.trackers.keys import hashed_provenance

    prov = {"qrels": {"source": "q.txt"}, "runs": [{"source": "a.run"}, {"source": "b.run", "sha256": "kept"}],
            "notes": ["x"]}
    out = hashed_provenance(prov, {"qrels": {"sha256": "aa"}, "runs.0": {"sha256": "bb"}, "runs.1": {"sha256": "cc"},
                                   "notes.0": {"sha256": "ee"}, "gone": {"source": "z"}})
    assert out == {"qrels": {"source": "q.txt", "sha256": "aa", "hash_of": "file bytes"},
                   "runs": [{"source": "a.run", "sha256": "bb", "hash_of": "file bytes"},
                            {"source": "b.run", "sha256": "kept"}], "notes": ["x"]}
    assert prov == {"qrels": {"source": "q.txt"}, "runs": [{"source": "a.run"}, {"source": "b.run", "sha256": "kept"}],
                    "notes": ["x"]}  # a copy: the results' own provenance is left as it was


def test_per_query_rows_end_each_measure_with_its_summary_row_when_it_has_one() -> None:
    from rankflavor.trackers.keys import metric_key, per_query_rows

    res = rankflavor.evaluate({"q": {"a": 1}, "p": {"b": 1}}, {"q": {"a": 1.0}, "p": {"c": 1.0}}, ["P@1", "relstring@1"])
    rows = per_query_rows(res)
    p1, rel = (m.measure for m in res.measures)
    assert [r[:5] for r in rows] == [[metric_key(p1), "P@1", "p", 0.0, "ok"], [metric_key(p1), "P@1", "q", 1.0, "ok"],
                                     [metric_key(p1), "P@1", "all", 0.5, "summary"],
                                     # trec_eval's relstring: 1 relevant, - unjudged
                                     [metric_key(rel), "relstring@1", "p", "-", "ok"],
                                     [metric_key(rel), "relstring@1", "q", "1", "ok"]]
    assert {r[5] for r in rows} == {str(p1), str(rel)}


def test_every_input_keeps_its_own_hash_whatever_its_key(tmp_path: Path) -> None:
    # Roles are key paths of untrusted names: a dict keyed by digits, a name with a space (unsafe
    # in a tracker key), a name with a dot (a role that does not split back into its path), two
    # names that sanitise to one key. Each record gets its own file's hash, in the tracker's
    # inputs and in the provenance copy, and none overwrites another (found by mutation testing:
    # the copy was walked by splitting the sanitised role, so these records got no hash).
    import hashlib

    from rankflavor.trackers.keys import _inputs, hashed_provenance

    names = ["7", "a b", "a_b", "x.y"]
    files = {}
    for i, name in enumerate(names):
        f = tmp_path / f"f{i}.run"
        f.write_text(f"content {i}\n")
        files[name] = str(f)
    prov = {"runs": {name: {"source": files[name]} for name in names}}
    inputs = _inputs(prov, True)
    assert list(inputs) == ["runs.7", "runs.a_b", "runs.a_b-2", "runs.x.y"]
    want = {name: hashlib.sha256(open(files[name], "rb").read()).hexdigest() for name in names}
    assert [e["sha256"] for e in inputs.values()] == [want[n] for n in names]
    out = hashed_provenance(prov, inputs)
    for name in names:
        assert out["runs"][name] == {"source": files[name], "sha256": want[name], "hash_of": "file bytes"}
    # a record the tracker found no entry for is left as it is
    assert hashed_provenance(prov, {}) == prov
    # the value itself as the one record (role "input")
    alone = {"source": files["7"]}
    assert hashed_provenance(alone, _inputs(alone, True)) == {**alone, "sha256": want["7"], "hash_of": "file bytes"}


@pytest.mark.parametrize("prefix", ["", "dev/", "dev", "a/b/", "a.b-c_d/", "v1.2/run"])
def test_a_prefix_mlflow_accepts_is_kept_as_given(prefix: str) -> None:
    from rankflavor.trackers.keys import check_prefix

    assert check_prefix(prefix) == prefix
    assert validate_param_and_metric_name(prefix + "ndcg_10__0123abcd")  # MLflow's own check of the key it starts


@pytest.mark.parametrize("prefix", ["/dev", "dev//", "//", "./", "../", ".", "..", "a/./b", "a/../b", "a/..", "dev/.",
                                    "a b/", "x:", "é/"])
def test_a_prefix_that_would_make_a_bad_key_is_refused_naming_it(prefix: str) -> None:
    from rankflavor.errors import UsageError
    from rankflavor.trackers.keys import check_prefix

    with pytest.raises(UsageError) as caught:
        check_prefix(prefix)
    assert str(caught.value) == (f"tracker key prefix {prefix!r}: expected letters, digits, _ . - and / between "
                                 "non-empty segments (e.g. 'dev/')")


def test_an_input_entry_is_its_source_bytes_and_hash_and_hashes_only_when_asked(tmp_path: Path) -> None:
    import hashlib

    from rankflavor.trackers.keys import _inputs

    f = tmp_path / "q.txt"
    f.write_text("q 0 d 1\n")
    digest = hashlib.sha256(f.read_bytes()).hexdigest()
    prov = {"qrels": {"source": str(f), "bytes": 8}, "run": {"source": "not/a/file.run", "sha256": "given", "bytes": "8"},
            "other": {"source": str(f), "sha256": 5}}
    assert _inputs(prov, True) == {"qrels": {"source": str(f), "bytes": 8, "sha256": digest},
                                   "run": {"source": "not/a/file.run", "sha256": "given"},  # a hash the record has is kept
                                   "other": {"source": str(f), "sha256": digest}}  # (a bytes or hash of the wrong type is not)
    assert _inputs(prov, False) == {"qrels": {"source": str(f), "bytes": 8},  # hashes=False: no file is read
                                    "run": {"source": "not/a/file.run", "sha256": "given"},
                                    "other": {"source": str(f)}}
