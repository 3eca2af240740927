"""``irds:<dataset id>`` wherever qrels are read (issue 36, part 4), against ir_datasets itself.

The DL19 passage qrels from ../shared/data are placed where ir_datasets 0.6.3 keeps them:
``$IR_DATASETS_HOME/msmarco-passage/trec-dl-2019/qrels`` (the ``cache_path`` of
``msmarco-passage``'s ``trec-dl-2019/qrels`` download in ir_datasets' etc/downloads.json, whose
``expected_md5`` 2f4be390198da108f6845c822e5ada14 is that file's MD5; the dataset is built in
ir_datasets/datasets/msmarco_passage.py, ``base_path = home_path()/NAME``). Nothing is downloaded.
ir_datasets fixes its cache paths when it is imported, so every case with a cache of its own runs
in a process of its own, with HTTP(S) proxies on a closed local port: any download attempt would
fail at once and show in stderr (ir_datasets logs it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import shared_path

pytest.importorskip("ir_datasets")

DL19 = "msmarco-passage/trec-dl-2019/judged"
RUN = ("runs", "rankllm.dl19.bm25.top100.run")
_TIMEOUT = 180  # a guard against a hang only; no time is asserted


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(IR_DATASETS_HOME=str(home), IR_DATASETS_TMP=str(home / "tmp"), HTTP_PROXY="http://127.0.0.1:9",
               HTTPS_PROXY="http://127.0.0.1:9", http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9",
               COLUMNS="120")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).parents[2] / "src"), env.get("PYTHONPATH")) if p)
    return env


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rankflavor", *args], capture_output=True, text=True,
                          env=_env(home), timeout=_TIMEOUT)


def _python(home: Path, script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=_env(home),
                          timeout=_TIMEOUT)


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process tests that import ir_datasets first do it with a cache under tmp_path (its
    import makes folders in IR_DATASETS_HOME), not the user's ~/.ir_datasets."""
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "in-process"))


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """An IR_DATASETS_HOME holding the DL19 passage qrels where ir_datasets looks for them."""
    home = tmp_path / "irds"
    target = home / "msmarco-passage" / "trec-dl-2019" / "qrels"
    target.parent.mkdir(parents=True)
    shutil.copyfile(shared_path("qrels", "qrels.dl19-passage.txt"), target)
    return home


def _means(out: str) -> dict[str, float]:
    return {m["name"]: m["value"] for m in json.loads(out)["measures"]}


def _no_download(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr
    # ir_datasets logs every attempt: "[INFO] download error: ...", "[WARNING] Download failed: ..."
    assert "download error" not in proc.stderr and "Download failed" not in proc.stderr


def test_eval_by_name_gives_what_the_file_gives(cache: Path) -> None:
    run = str(shared_path(*RUN))
    by_name = _cli(cache, "eval", f"irds:{DL19}", run, "-m", "ndcg@10", "--format", "json")
    assert by_name.returncode == 0, by_name.stderr
    _no_download(by_name)
    by_file = _cli(cache, "eval", str(shared_path("qrels", "qrels.dl19-passage.txt")), run, "-m", "ndcg@10",
                   "--format", "json")
    assert _means(by_name.stdout) == _means(by_file.stdout)
    # trec_eval 9.0.8's ndcg_cut_10 for this run (expected/rankllm.dl19.bm25.top100.all_trec.q.c.txt)
    assert round(_means(by_name.stdout)["ndcg@10"], 4) == 0.5058
    table = _cli(cache, "eval", f"irds:{DL19}", run, "-m", "ndcg@10")
    assert "0.5058" in table.stdout and "ndcg@10" in table.stdout


def _trec_eval(name: str) -> dict[str, float]:
    out = {}
    for line in shared_path("expected", name).read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "all" and parts[0] != "runid":
            out[parts[0]] = float(parts[2])
    return out


def test_dl19_grades_give_the_trec_dl_scale_and_trec_eval_l2_numbers(cache: Path) -> None:
    """DL19's definitions (0-3) and its documented official measures (AP(rel=2), RR(rel=2)) give
    relevant >= 2: every binary measure equals trec_eval -l 2's, as TREC DL reports them."""
    proc = _cli(cache, "eval", f"irds:{DL19}", str(shared_path(*RUN)), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    means = _means(proc.stdout)
    l2 = _trec_eval("rankllm.dl19.bm25.top100.all_trec.q.c.l2.txt")
    for ours, theirs in (("AP", "map"), ("P@10", "P_10"), ("recall@100", "recall_100"), ("RR", "recip_rank"),
                         ("ndcg@10", "ndcg_cut_10")):
        assert round(means[ours], 4) == l2[theirs], ours
    assert all("rel=2" in m["flavor"] for m in doc["measures"] if m["name"] != "ndcg@10")
    # and they differ from trec_eval's default -l 1, so the scale is what made them
    assert round(means["AP"], 4) != _trec_eval("rankllm.dl19.bm25.top100.all_trec.q.c.txt")["map"]


def test_provenance_names_dataset_version_definitions_and_hash(cache: Path) -> None:
    import ir_datasets

    proc = _cli(cache, "eval", f"irds:{DL19}", str(shared_path(*RUN)), "-m", "ndcg@10", "--format", "json")
    record = json.loads(proc.stdout)["provenance"]["qrels"]
    assert record["source"] == f"irds:{DL19}"
    info = record["ir_datasets"]
    assert info["id"] == DL19 and info["version"] == ir_datasets.__version__
    assert info["qrels_defs"] == {str(g): t for g, t in ir_datasets.load(DL19).qrels_defs().items()}
    assert info["documented_grades"] == "grades {0,1,2,3}, relevant >= 2 (as its official measures state)"
    digest = hashlib.sha256(shared_path("qrels", "qrels.dl19-passage.txt").read_bytes()).hexdigest()
    assert record["sha256"] == digest  # the same content hash as the file: compare sees the same qrels


def test_an_explicit_scale_wins(cache: Path) -> None:
    run = str(shared_path(*RUN))
    named = _cli(cache, "eval", f"irds:{DL19}", run, "-m", "AP", "--scale", "ecommerce", "--format", "json")
    on_file = _cli(cache, "eval", str(shared_path("qrels", "qrels.dl19-passage.txt")), run, "-m", "AP",
                   "--scale", "ecommerce", "--format", "json")
    assert named.returncode == 0, named.stderr
    assert _means(named.stdout) == _means(on_file.stdout)
    assert "rel=3" in json.loads(named.stdout)["measures"][0]["flavor"]
    off = _cli(cache, "eval", f"irds:{DL19}", run, "-m", "AP", "--scale", "msmarco")
    assert off.returncode == 3 and f"irds:{DL19}: grade 2 is not on the msmarco scale" in off.stderr


def test_not_cached_is_a_clear_error_without_a_download(tmp_path: Path) -> None:
    home = tmp_path / "empty"
    proc = _cli(home, "eval", f"irds:{DL19}", str(shared_path(*RUN)), "-m", "ndcg@10")
    assert proc.returncode == 3, proc.stderr
    _no_download(proc)
    expected = home / "msmarco-passage" / "trec-dl-2019" / "qrels"
    assert f"irds:{DL19}" in proc.stderr and "not in its cache" in proc.stderr
    assert str(expected) in proc.stderr and f"ir_datasets export {DL19} qrels" in proc.stderr
    assert not expected.exists()


def test_unknown_dataset_names_it_and_the_nearest(tmp_path: Path) -> None:
    proc = _cli(tmp_path, "eval", "irds:msmarco-passage/trec-dl-2019/judgd", str(shared_path(*RUN)))
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert "knows no dataset 'msmarco-passage/trec-dl-2019/judgd'" in proc.stderr
    assert "msmarco-passage/trec-dl-2019/judged" in proc.stderr.split("knows no dataset")[1]


def test_ir_datasets_missing_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from rankflavor.errors import UsageError
    from rankflavor.io.qrels import read_qrels

    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # import ir_datasets raises ImportError
    with pytest.raises(UsageError, match=r"ir_datasets is not installed: pip install 'rankflavor\[irds\]'"):
        read_qrels(f"irds:{DL19}")


def test_formats_and_spark_refuse_a_dataset_name(cache: Path) -> None:
    proc = _cli(cache, "eval", f"irds:{DL19}", str(shared_path(*RUN)), "--qrels-format", "trec")
    assert proc.returncode == 2 and "--qrels-format and --columns are for files" in proc.stderr
    from rankflavor.errors import UsageError
    from rankflavor.spark import evaluate_spark

    with pytest.raises(UsageError, match="Spark reads files"):
        evaluate_spark(f"irds:{DL19}", "run.txt", ["ndcg@10"])


def test_other_commands_read_it_too(cache: Path) -> None:
    """The one reader serves every command: compare and coverage on the dataset name."""
    run = str(shared_path(*RUN))
    other = str(shared_path("runs", "rankllm.dl19.bm25-rm3.top100.run"))
    proc = _cli(cache, "compare", f"irds:{DL19}", run, other, "-m", "ndcg@10", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert f"irds:{DL19}" in proc.stdout


# -- the scale of a dataset, from its documented definitions ---------------------------------------

@pytest.mark.parametrize(("dataset", "name", "grades", "rel", "negatives"), [
    # ir_datasets/datasets/msmarco_passage.py: TREC_DL_QRELS_DEFS 0-3; docs/msmarco-passage.yaml:
    # official measures nDCG@10, RR(rel=2), AP(rel=2)
    (DL19, "trec_dl", (0, 1, 2, 3), 2, "unjudged"),
    # QRELS_DEFS = {1: 'Labeled by crowd worker as relevant'}: a judged 0 is still a grade
    ("msmarco-passage/dev/small", "msmarco", (0, 1), 1, "unjudged"),
    # antique: 1-4 defined, no rel= stated: relevant from the smallest positive grade
    ("antique/test", "irds:antique/test", (0, 1, 2, 3, 4), 1, "unjudged"),
    # the TREC Web track 2013 defines -2 (Junk): a judgment, so negatives=zero
    ("clueweb12/trec-web-2013", "irds:clueweb12/trec-web-2013", (0, 1, 2, 3, 4), 1, "zero"),
    # same grades and threshold as the BEIR scale, but not a BEIR dataset: a scale of its own
    ("nfcorpus/test", "irds:nfcorpus/test", (0, 1, 2), 1, "unjudged"),
])
def test_dataset_scale(dataset: str, name: str, grades: tuple[int, ...], rel: int, negatives: str) -> None:
    from rankflavor.presets.irds import dataset_scale

    s = dataset_scale(dataset)
    assert (s.name, s.grades, s.rel, s.top, s.negatives) == (name, tuple(map(float, grades)), rel, grades[-1], negatives)


def test_no_definitions_no_scale_and_scale_for() -> None:
    import ir_datasets

    from rankflavor.presets.irds import dataset_scale, scale_for

    assert ir_datasets.load("beir/scifact/test").qrels_defs() == {}
    assert dataset_scale("beir/scifact/test") is None
    assert scale_for(None, "qrels.txt") is None
    assert scale_for("beir", f"irds:{DL19}").name == "beir"
    assert scale_for(None, f"irds:{DL19}").name == "trec_dl"


# -- queries and documents for a judging command ------------------------------------------------

_QUERIES = """
from rankflavor.io.irds import dataset_queries, dataset_docs
from rankflavor.errors import InputError
print(sorted(dataset_queries({ds!r}).items()))
try:
    dataset_docs({ds!r})
except InputError as exc:
    print("docs:", exc)
"""


def test_queries_come_from_the_cache_and_docs_say_what_is_missing(cache: Path) -> None:
    # ir_datasets caches DL19's queries, un-gzipped, at trec-dl-2019/queries.tsv (a Cache object);
    # the judged subset keeps the queries its qrels judge (19335 and 1037798 are judged, 1 is not)
    (cache / "msmarco-passage" / "trec-dl-2019" / "queries.tsv").write_text(
        "19335\tanthropological definition of environment\n1\tnot judged\n1037798\twho is robert gray\n")
    proc = _python(cache, _QUERIES.format(ds=DL19))
    assert proc.returncode == 0, proc.stderr
    _no_download(proc)
    first, second = proc.stdout.splitlines()
    assert first == str([("1037798", "who is robert gray"), ("19335", "anthropological definition of environment")])
    assert second.startswith(f"docs: irds:{DL19}: the docs of ir_datasets dataset") and "collection.tsv (or, to build it from, " in second
    assert "collectionandqueries.tar.gz" in second


def test_a_project_names_a_dataset_by_id(cache: Path, tmp_path: Path) -> None:
    """rankflavor.toml's [datasets] take irds:<id> (not a path of the project); eval and gate read it."""
    run = shared_path(*RUN)
    (tmp_path / "rankflavor.toml").write_text(
        "[project]\nscale = 'trec_dl'\n[metrics]\nmeasures = ['ndcg@10', 'AP']\n"
        f"[datasets.dl19]\nqrels = 'irds:{DL19}'\n[runs.bm25]\npath = '{run}'\ndataset = 'dl19'\n[gate]\nfloor = 0.5\n")

    def in_project(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "rankflavor", *args], capture_output=True, text=True,
                              env=_env(cache), timeout=_TIMEOUT, cwd=tmp_path)

    proc = in_project("eval", "dl19", "bm25", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert _means(proc.stdout) == pytest.approx({"ndcg@10": 0.5058, "AP": 0.2476}, abs=5e-5)  # trec_eval -l 2
    assert "FLAVOR DIFFERS" not in proc.stderr + proc.stdout
    gate = in_project("gate", "--format", "json")
    assert gate.returncode == 1, gate.stderr
    checks = {c["measure"]: c["passed"] for c in json.loads(gate.stdout)["runs"][0]["checks"]}
    assert checks == {"ndcg@10": True, "AP": False}


class _Qrel:
    def __init__(self, query_id: str, doc_id: str, relevance: float) -> None:
        self.query_id, self.doc_id, self.relevance = query_id, doc_id, relevance


class _Fake:
    """A dataset whose qrels_iter() yields ``rows``, then raises ``then`` (if given)."""

    def __init__(self, rows: list[_Qrel], then: Exception | None = None) -> None:
        self.rows, self.then = rows, then

    def qrels_iter(self):  # type: ignore[no-untyped-def]
        yield from self.rows
        if self.then is not None:
            raise self.then


@pytest.mark.parametrize(("fake", "expected"), [
    (_Fake([_Qrel("q", "d", 1)], RuntimeError("expected 4 columns, got 3")),
     "irds:x: ir_datasets could not read the qrels of 'x': RuntimeError: expected 4 columns, got 3"),
    (_Fake([_Qrel("q", "d", 1), _Qrel("q", "e", float("nan"))]),
     "irds:x:2: judgment 2 of qrels_iter(): grade nan is not a finite number"),
    (_Fake([_Qrel("q", "d", 1), _Qrel("q", "e\x00f", 0)]),
     "irds:x:2: judgment 2 of qrels_iter(): its doc id holds a NUL byte"),
    (_Fake([]), "irds:x: ir_datasets dataset 'x' has no judgments"),
])
def test_what_ir_datasets_yields_is_checked(fake: _Fake, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankflavor.errors import InputError
    from rankflavor.io import irds

    monkeypatch.setattr(irds, "_open", lambda dataset_id, what: fake)
    monkeypatch.setattr(irds, "describe", lambda dataset_id, dataset: {})
    with pytest.raises(InputError) as caught:
        irds.read_irds_qrels("x")
    assert str(caught.value).startswith(expected)
    ok = _Fake([_Qrel("q1", "d1", 2), _Qrel("q1", "d2", 0), _Qrel("q2", "d1", 1)])
    monkeypatch.setattr(irds, "_open", lambda dataset_id, what: ok)
    got = irds.read_irds_qrels("x")
    assert (got.query.to_pylist(), got.doc.to_pylist(), got.grade.tolist()) == (
        ["q1", "q1", "q2"], ["d1", "d2", "d1"], [2.0, 0.0, 1.0])
    assert got.source == "irds:x" and got.origin == {}


def test_judgments_take_the_dataset_scale_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """rankflavor.judgments on an irds: reference without a scale bounds under the scale the dataset
    documents (here faked: trec_dl, grades 0-3), as an explicit --scale trec_dl does; without it the
    holes could take grades 0-1 only and the upper bound would be lower."""
    import rankflavor as rf
    from rankflavor.io import irds
    from rankflavor.presets import irds as irdsscale
    from rankflavor.presets.scales import scale_named

    rows = _Fake([_Qrel("q1", "d1", 2), _Qrel("q1", "d3", 0)])
    monkeypatch.setattr(irds, "_open", lambda dataset_id, what: rows)
    monkeypatch.setattr(irds, "describe", lambda dataset_id, dataset: {})
    monkeypatch.setattr(irdsscale, "dataset_scale", lambda dataset_id: scale_named("trec_dl"))
    run = {"q1": {"d2": 3.0, "d1": 2.0, "d3": 1.0}}  # d2, ranked first, is a hole
    by_dataset = rf.judgments("irds:x", run, ["ndcg@3"]).to_dict()["runs"][0]["bounds"][0]
    named = rf.judgments({"q1": {"d1": 2, "d3": 0}}, run, ["ndcg@3"], scale="trec_dl").to_dict()["runs"][0]["bounds"][0]
    assert (by_dataset["lower"], by_dataset["upper"]) == (named["lower"], named["upper"])
    assert by_dataset["upper"] == pytest.approx(1.0)  # d2 graded 3 makes the ranking ideal


def test_bounds_take_the_dataset_scale_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """rankflavor.analysis.judgments.bounds (the bounds alone) on an irds: reference without a scale: the
    dataset's documented scale, as for rankflavor.judgments above."""
    from rankflavor.analysis.judgments import bounds
    from rankflavor.io import irds
    from rankflavor.presets import irds as irdsscale
    from rankflavor.presets.scales import scale_named

    rows = _Fake([_Qrel("q1", "d1", 2), _Qrel("q1", "d3", 0)])
    monkeypatch.setattr(irds, "_open", lambda dataset_id, what: rows)
    monkeypatch.setattr(irds, "describe", lambda dataset_id, dataset: {})
    monkeypatch.setattr(irdsscale, "dataset_scale", lambda dataset_id: scale_named("trec_dl"))
    run = {"q1": {"d2": 3.0, "d1": 2.0, "d3": 1.0}}  # d2, ranked first, is a hole
    by_dataset = bounds("irds:x", run, ["ndcg@3"]).measures[0]
    named = bounds({"q1": {"d1": 2, "d3": 0}}, run, ["ndcg@3"], scale="trec_dl").measures[0]
    assert (by_dataset.lower_mean, by_dataset.upper_mean) == (named.lower_mean, named.upper_mean)
    assert by_dataset.upper_mean == pytest.approx(1.0)  # d2 graded 3 makes the ranking ideal
