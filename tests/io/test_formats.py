"""Every supported format of judgments and runs gives the same per-query values under every preset.

The files are written by the tests' own code (tests/io/formats_data.py) from real TREC DL 2019
judgments and a real BM25 run, each format in its published layout; the TREC files, read by the
TREC reader trec_eval parity is checked on (tests/presets/test_trec_parity.py), are the reference.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import rankflavor as rf
from rankflavor.io.qrels import read_qrels
from rankflavor.io.run import read_run
from rankflavor.presets import PRESETS, resolve_measures

from .formats_data import load, qrels_files, run_files, write_all

FALLBACK = ["ndcg@10", "P@10", "AP"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, dict, dict]:  # type: ignore[type-arg]
    qrels, run = load()
    tmp = tmp_path_factory.mktemp("formats")
    q, r = qrels_files(qrels), run_files(run)
    return q, r, write_all(tmp, q), write_all(tmp, r)


def _values(qrels: object, run: object, preset: str) -> list[dict[str, float | str]]:
    """Per-query values of the preset's measures, or the typed error it refuses the inputs by
    (ranx: missing=error) as one entry naming the error's class."""
    metrics = list(PRESETS[preset].default_metrics) or FALLBACK
    try:
        return [m.per_query() for m in rf.evaluate(qrels, run, metrics, preset=preset)]
    except rf.RankflavorError as exc:
        return [{"error": type(exc).__name__}]


def _same(a: list[dict[str, float | str]], b: list[dict[str, float | str]]) -> bool:
    if [list(x) for x in a] != [list(x) for x in b]:
        return False
    for x, y in zip(a, b, strict=True):
        for q in x:
            u, v = x[q], y[q]
            if not (u == v or (isinstance(u, float) and isinstance(v, float) and math.isnan(u) and math.isnan(v))):
                return False
    return True


def _with_unrated(reference: list[dict[str, float | str]], preset: str) -> list[dict[str, float | str]]:
    """``reference`` with the Quepid export's query nobody rated, which no run row holds: a query
    of the judgments absent from the run where missing queries are scored (``missing=zero``: 0)
    or refused (``missing=error``), none where they are skipped (aggregate.judged_queries)."""
    if reference and "error" in reference[0]:
        return reference
    measures, _ = resolve_measures(list(PRESETS[preset].default_metrics) or FALLBACK, preset, {})
    out: list[dict[str, float | str]] = []
    for values, m in zip(reference, measures, strict=True):
        if m.flavor.missing == "error":
            return [{"error": "EvaluationError"}]
        if m.flavor.missing == "zero":
            values = dict(sorted({**values, "unrated query": "" if m.spec.summary == "none" else 0.0}.items(),
                                 key=lambda kv: kv[0].encode()))
        out.append(values)
    return out


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_qrels_format_gives_the_trec_values(files: tuple, preset: str) -> None:  # type: ignore[type-arg]
    qspec, _, qpaths, rpaths = files
    reference = _values(qpaths["trec"], rpaths["trec"], preset)
    for name, path in qpaths.items():
        _, fmt, cols, _ = qspec[name]
        qrels = read_qrels(path, fmt, cols)
        # (Quepid's export names a query nobody rated, which a TREC file cannot)
        expected = _with_unrated(reference, preset) if name == "quepid" else reference
        assert _same(_values(qrels, rpaths["trec"], preset), expected), (preset, name)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_run_format_gives_the_trec_values(files: tuple, preset: str) -> None:  # type: ignore[type-arg]
    _, rspec, qpaths, rpaths = files
    reference = _values(qpaths["trec"], rpaths["trec"], preset)
    for name, path in rpaths.items():
        _, fmt, cols, _, by_rank = rspec[name]
        run = read_run(path, fmt, cols)
        assert run.ranked_by == ("rank" if by_rank else "score"), name
        assert _same(_values(qpaths["trec"], run, preset), reference), (preset, name)


def test_a_rank_only_run_says_so_in_its_flavor(files: tuple) -> None:  # type: ignore[type-arg]
    _, _, qpaths, rpaths = files
    ranked = rf.evaluate(qpaths["trec"], rpaths["msmarco"], ["ndcg@10", "P@5"])
    assert all(m.measure.knobs["order"] == "rank" and "order=rank" in m.flavor for m in ranked)
    scored = rf.evaluate(qpaths["trec"], rpaths["trec"], "ndcg@10")
    assert "order=" not in scored[0].flavor  # a quiet knob at its default is not printed
    with pytest.raises(rf.UsageError, match="order=rank"):
        rf.evaluate(qpaths["trec"], rpaths["trec"], "ndcg@10[order=rank]")


def test_ties_of_a_rank_only_run_follow_the_ties_knob(tmp_path: Path) -> None:
    """Equal ranks are ties: docno_desc puts d2 first, input_order d1 (hand-computed NDCG@1)."""
    q = tmp_path / "q.txt"
    q.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    r = tmp_path / "r.tsv"
    r.write_text("q1\td1\t1\nq1\td2\t1\n")
    assert rf.evaluate(q, r, "ndcg@1")[0].mean == 0.0
    assert rf.evaluate(q, r, "ndcg@1[ties=input_order]")[0].mean == 1.0


def test_polars_frames_read_like_pandas(files: tuple) -> None:  # type: ignore[type-arg]
    pl = pytest.importorskip("polars")
    pd = pytest.importorskip("pandas")
    qrels, run = load()
    cols = ["query_id", "doc_id"]
    qp = pl.DataFrame({"query_id": [q for q, _, _ in qrels], "doc_id": [d for _, d, _ in qrels],
                       "relevance": [int(g) for *_, g in qrels]})
    rp = pl.DataFrame({"query_id": [q for q, _, _ in run], "doc_id": [d for _, d, _ in run], "score": [s for *_, s in run]})
    qd = pd.DataFrame(dict(zip([*cols, "relevance"], zip(*qrels, strict=True), strict=True)))
    rd = pd.DataFrame(dict(zip([*cols, "score"], zip(*run, strict=True), strict=True)))
    for preset in ("trec_eval", "sklearn", "lightgbm"):
        assert _same(_values(qp, rp, preset), _values(qd, rd, preset))
    with pytest.raises(rf.InputError, match="row 1"):
        rf.evaluate(pl.DataFrame({"query_id": ["q1", None], "doc_id": ["a", "b"], "relevance": [1, 0]}), rp, "ndcg@10")


def test_the_library_imports_without_polars() -> None:
    import subprocess
    import sys

    code = ("import sys; sys.modules['polars'] = None; import rankflavor as rf; "
            "print(rf.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}}, 'ndcg@1')[0].mean)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1.0"


def test_explain_and_diff_name_order_rank_on_a_rank_only_run(files: tuple) -> None:  # type: ignore[type-arg]
    _, _, qpaths, rpaths = files
    query = read_run(rpaths["msmarco"]).query.to_pylist()[0]
    shown = rf.explain(qpaths["trec"], rpaths["msmarco"], query, "ndcg@10")
    assert "order=rank" in str(shown.measure)
    gap = rf.diff(qpaths["trec"], rpaths["msmarco"], "ndcg@10", "ndcg@10[gain=exp2]")
    assert "order=rank" in str(gap.a) and "order=rank" in str(gap.b)
    scored = rf.diff(qpaths["trec"], rpaths["trec"], "ndcg@10", "ndcg@10[gain=exp2]")
    assert gap.means.tolist() == scored.means.tolist()  # no ties: ranks order as the scores do
