"""rankflavor.wandb and ``eval --wandb`` in W&B's offline mode (set by the test, never by the library),
read back from the run directory on disk: the summary and config records of the run's ``.wandb``
log, and the per-query table's JSON file under ``files/media/table/``.

W&B 0.31 has no public reader of an offline run (wandb/wandb#1768, #4635; an offline run writes
neither ``wandb-summary.json`` nor ``config.yaml``, wandb/wandb#11279), so :func:`wandb_records`
reads the ``.wandb`` log itself: LevelDB's log format (32 KiB blocks of records with a 7-byte
header: CRC-32, length, type FULL/FIRST/MIDDLE/LAST; leveldb ``doc/log_format.md``) after W&B's
7-byte file header (``:W&B``, magic 0xBEE1, version), each record one protobuf ``Record`` of
W&B's published schema (``wandb.proto.wandb_internal_pb2``).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

wandb = pytest.importorskip("wandb")

from wandb.proto import wandb_internal_pb2  # noqa: E402

import rankflavor  # noqa: E402
import rankflavor.trackers.wandb as rf_wandb  # noqa: E402
from rankflavor.cli.main import cli  # noqa: E402
from rankflavor.errors import UsageError  # noqa: E402

from ..conftest import shared_path  # noqa: E402

QRELS = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d4 1\nq3 0 d9 0\n"
RUN = ("q1 Q0 d2 1 3.0 sys\nq1 Q0 d1 2 2.0 sys\nq1 Q0 dX 3 1.0 sys\n"
       "q2 Q0 d5 1 2.0 sys\nq2 Q0 d4 2 1.0 sys\nq3 Q0 d9 1 1.0 sys\n")
MEASURES = ["ndcg@3", "AP", "P@2", "relstring@3", "ndcg@3[empty=nan]"]
BLOCK, HEADER = 32768, 7


def wandb_records(path: Path) -> list[Any]:
    """Every protobuf Record of a ``.wandb`` log, in order."""
    data = path.read_bytes()
    ident, magic, _version = struct.unpack("<4sHB", data[:HEADER])
    assert (ident, magic) == (b":W&B", 0xBEE1)
    out, pos, pending = [], HEADER, b""
    while pos + HEADER <= len(data):
        left = BLOCK - pos % BLOCK
        if left < HEADER:  # a block's tail too short for a header is padding
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + HEADER])
        if kind == 0:  # zeros: the rest of the block is padding
            pos += left
            continue
        chunk, pos = data[pos + HEADER:pos + HEADER + length], pos + HEADER + length
        if kind in (1, 2):
            pending = chunk
        else:
            pending += chunk
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            out.append(record)
    return out


def _set(target: dict[str, Any], item: Any) -> None:
    path = list(item.nested_key) or [item.key]
    for part in path[:-1]:
        target = target.setdefault(part, {})
    target[path[-1]] = json.loads(item.value_json)


def read_offline_run(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """``(summary, config, run record fields)`` of an offline run directory."""
    (log,) = run_dir.glob("run-*.wandb")
    summary: dict[str, Any] = {}
    config: dict[str, Any] = {}
    info: dict[str, Any] = {}
    for record in wandb_records(log):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            info = {"id": record.run.run_id, "project": record.run.project, "name": record.run.display_name}
            for item in record.run.config.update:
                _set(config, item)
        elif kind == "config":
            for item in record.config.update:
                _set(config, item)
        elif kind == "summary":
            for item in record.summary.update:
                _set(summary, item)
    return summary, config, info


def table_rows(run_dir: Path, summary: dict[str, Any], key: str = "rankflavor/per_query") -> list[dict[str, Any]]:
    table = json.loads((run_dir / "files" / summary[key]["path"]).read_text(encoding="utf-8"))
    return [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]


def key_of(metric: str, k: int | None, flavor: str) -> str:
    """<metric>_<k>__<first 8 hex of SHA-256(flavor)>, spelled out here."""
    return f"{metric}{'' if k is None else f'_{k}'}__{hashlib.sha256(flavor.encode()).hexdigest()[:8]}"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """W&B offline, everything it writes under tmp_path; yields the folder holding the run dirs.
    W&B reads its settings once per process (``wandb.setup``): ``wandb.teardown`` before and
    after makes each test's settings its own, and stops the wandb-core process its runs started."""
    wandb.teardown()
    for var in ("WANDB_PROJECT", "WANDB_ENTITY", "WANDB_NAME", "WANDB_RUN_ID", "WANDB_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    settings = {"WANDB_MODE": "offline", "WANDB_DIR": tmp_path, "WANDB_CACHE_DIR": tmp_path / "cache",
                "WANDB_DATA_DIR": tmp_path / "data", "WANDB_CONFIG_DIR": tmp_path / "config",
                "WANDB_SILENT": "true", "WANDB_CONSOLE": "off",
                "XDG_CACHE_HOME": tmp_path / "xdg-cache"}  # wandb-core's own logs (Go's os.UserCacheDir)
    for name, value in settings.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    yield tmp_path / "wandb"
    wandb.teardown()


def only_run_dir(runs: Path) -> Path:
    """The one run directory, once written: ``run.finish()`` can return before wandb-core has
    written the run's log (seen with 0.31: an empty ``.wandb`` file, the records appearing later);
    ``wandb.teardown()`` waits for it (a process that ends runs it at exit)."""
    wandb.teardown()
    (run_dir,) = runs.glob("offline-run-*")
    return run_dir


def assert_holds(summary: dict[str, Any], config: dict[str, Any], rows: list[dict[str, Any]],
                 results: rankflavor.Results, qrels: Path, run_file: Path, prefix: str = "") -> None:
    block = config[f"{prefix}rankflavor"]
    for m in results:
        flavor = str(m.measure)
        key = key_of(m.measure.metric, m.measure.k, flavor)
        assert block["flavors"][key] == flavor and block["names"][key] == m.measure.display
        assert block["scored"][key] == {"n_queries": m.n_queries, "skipped_empty": m.skipped_empty,
                                        "skipped_missing": m.skipped_missing}
        if m.measure.spec.summary == "none":
            assert prefix + key not in summary
        elif math.isnan(m.summary):
            assert summary[prefix + key] is None  # W&B writes a NaN summary as JSON null
        else:
            assert summary[prefix + key] == m.summary
        mine = [r for r in rows if r["flavor"] == flavor and r["query"] != "all"]
        assert [r["query"] for r in mine] == [str(q) for q in m.queries]
        assert all(r["key"] == key for r in mine)
        for r, v, s in zip(mine, m.values, m.status, strict=True):
            assert r["status"] == s
            if isinstance(v, str) or not math.isnan(v):
                assert r["value"] == v
            else:  # the table's JSON holds NaN as NaN (Python's json reads it back)
                assert math.isnan(r["value"])
    assert block["counts"] == results.counts.to_dict()
    assert block["inputs"]["qrels"]["sha256"] == sha(qrels)
    assert block["inputs"]["run"]["sha256"] == sha(run_file)
    assert block["inputs"]["run"]["bytes"] == run_file.stat().st_size


def test_log_new_offline_run(offline):
    qrels, run_file = offline.parent / "qrels.txt", offline.parent / "run.txt"
    results = rankflavor.evaluate(qrels, run_file, MEASURES)
    run = rf_wandb.log(results, project="rf", name="bm25")
    assert wandb.run is None  # finished before returning
    run_dir = only_run_dir(offline)
    summary, config, info = read_offline_run(run_dir)
    assert info == {"id": run.id, "project": "rf", "name": "bm25"}
    assert_holds(summary, config, table_rows(run_dir, summary), results, qrels, run_file)
    # NDCG@3 by hand: q1 ranks grades 1, 2, unjudged against the ideal 2, 1; q2 unjudged, 1; q3 has
    # nothing relevant (0 with empty=zero, out of the mean with empty=nan)
    q1 = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    q2 = 1 / math.log2(3)
    assert summary[key_of("ndcg", 3, str(results[0].measure))] == pytest.approx((q1 + q2) / 3, abs=1e-12)
    assert summary[key_of("ndcg", 3, str(results[4].measure))] == pytest.approx((q1 + q2) / 2, abs=1e-12)


def test_log_into_the_active_run_with_prefixes(offline, write):
    qrels, run_file = offline.parent / "qrels.txt", offline.parent / "run.txt"
    other = write("run2.txt", RUN.replace("d5 1 2.0", "d5 1 0.5"))
    dev = rankflavor.evaluate(qrels, run_file, ["ndcg@3", "AP"])
    test = rankflavor.evaluate(qrels, other, ["ndcg@3", "AP"])
    active = wandb.init(project="rf", config={"model": "bm25"})
    try:
        assert rf_wandb.log(dev, prefix="dev/") is active
        assert rf_wandb.log(test, prefix="test/") is active
        with pytest.raises(UsageError, match="active"):
            rf_wandb.log(dev, project="elsewhere")
    finally:
        active.finish()
    run_dir = only_run_dir(offline)
    summary, config, _ = read_offline_run(run_dir)
    assert config["model"] == "bm25"
    assert_holds(summary, config, table_rows(run_dir, summary, "dev/rankflavor/per_query"), dev, qrels, run_file, "dev/")
    assert_holds(summary, config, table_rows(run_dir, summary, "test/rankflavor/per_query"), test, qrels, other,
                 "test/")


def test_log_dl19_bm25(offline):
    qrels = shared_path("qrels", "qrels.dl19-passage.txt")
    run_file = shared_path("runs", "rankllm.dl19.bm25.top100.run")
    results = rankflavor.evaluate(qrels, run_file, ["ndcg@10", "AP", "recall@100"])
    rf_wandb.log(results)
    run_dir = only_run_dir(offline)
    summary, config, _ = read_offline_run(run_dir)
    rows = table_rows(run_dir, summary)
    assert_holds(summary, config, rows, results, qrels, run_file)
    # nDCG@10 0.5058: the Anserini regression this run reproduces (../shared/data/runs/README.md)
    (ndcg,) = (v for k, v in summary.items() if k.startswith("ndcg_10__"))
    assert round(ndcg, 4) == 0.5058
    assert sum(r["query"] != "all" for r in rows) == 3 * 43


def test_eval_wandb_holds_what_format_json_prints(offline):
    qrels, run_file = offline.parent / "qrels.txt", offline.parent / "run.txt"
    args = ["eval", str(qrels), str(run_file), *(a for m in MEASURES for a in ("-m", m))]
    logged = CliRunner().invoke(cli, [*args, "--wandb", "--experiment", "rf", "--run-name", "cli"])
    assert logged.exit_code == 0, logged.output
    run_dir = only_run_dir(offline)
    assert re.search(r"logged to W&B run (\w+)", logged.stderr).group(1) in run_dir.name
    summary, config, info = read_offline_run(run_dir)
    assert (info["project"], info["name"]) == ("rf", "cli")
    printed = json.loads(CliRunner().invoke(cli, [*args, "-q", "--format", "json"]).stdout)
    block = config["rankflavor"]
    rows = table_rows(run_dir, summary)
    for m in printed["measures"]:
        key = key_of(m["metric"], m["k"], m["flavor"])
        assert block["flavors"][key] == m["flavor"]
        assert block["scored"][key]["n_queries"] == m["n_queries"]
        if m["summary"] != "none":
            assert summary[key] == m["value"]
        mine = [(r["query"], r["value"], r["status"]) for r in rows if r["key"] == key and r["query"] != "all"]
        nan_as_null = [(q, None if isinstance(v, float) and math.isnan(v) else v, s) for q, v, s in mine]
        assert nan_as_null == [(q["query"], q["value"], q["status"]) for q in m["per_query"]]
    assert block["counts"] == printed["counts"]
    assert block["inputs"]["qrels"]["sha256"] == sha(qrels) and block["inputs"]["run"]["sha256"] == sha(run_file)


def test_the_module_named_wandb_imports_wandb_not_itself():
    import sys

    assert rf_wandb.package() is sys.modules["wandb"] is wandb
    assert rf_wandb.package().Table is wandb.Table and rf_wandb.__name__ == "rankflavor.trackers.wandb"
