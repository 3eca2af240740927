"""``rankflavor convert`` round-trips exactly between any two formats that can hold the data, and
refuses (or, with --lossy, does the documented thing) where a format cannot.

The inputs are real TREC DL 2019 judgments and a BM25 run (tests/io/formats_data.py); "exactly"
means the tables read back hold the same rows per query, in the same order, with the same ids and
the same float values (compared with ==), and the same ``ranked_by``.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

import rankflavor as rf
from rankflavor.errors import FormatLossError
from rankflavor.io.convert import convert
from rankflavor.io.qrels import read_qrels
from rankflavor.io.run import read_run
from rankflavor.io.tables import Qrels, Run

from .formats_data import load, num, ranks

QRELS_FORMATS = ("trec", "msmarco", "beir", "json", "csv", "tsv", "jsonl", "parquet", "quepid", "es")
SCORED_FORMATS = ("trec", "beir", "json", "csv", "tsv", "jsonl", "parquet", "es")
RANKED_FORMATS = ("msmarco", "quepid", "csv", "tsv", "jsonl", "parquet", "es")
EXT = {"trec": ".txt", "msmarco": ".msm", "beir": ".beir", "json": ".json", "csv": ".csv", "tsv": ".tsv",
       "jsonl": ".jsonl", "parquet": ".parquet", "quepid": ".quepid", "es": ".es"}


def rows_of(table: Qrels | Run) -> tuple[str, dict[str, list[tuple[str, float]]]]:
    values = table.grade if isinstance(table, Qrels) else table.score
    out: dict[str, list[tuple[str, float]]] = {}
    for q, d, v in zip(table.query.to_pylist(), table.doc.to_pylist(), values.tolist(), strict=True):
        out.setdefault(q, []).append((d, v))
    return (table.ranked_by if isinstance(table, Run) else "qrels"), out


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    qrels, run = load()
    tmp = tmp_path_factory.mktemp("convert")
    paths = {"qrels": tmp / "q.txt", "run": tmp / "r.txt", "ranked": tmp / "r.msmarco"}
    paths["qrels"].write_text("".join(f"{q} 0 {d} {num(g)}\n" for q, d, g in qrels))
    paths["run"].write_text("".join(f"{q} Q0 {d} {r} {num(s)} bm25\n" for (q, d, s), r in zip(run, ranks(run), strict=True)))
    paths["ranked"].write_text("".join(f"{q}\t{d}\t{r}\n" for (q, d, _), r in zip(run, ranks(run), strict=True)))
    return paths


def _read(path: Path, kind: str, fmt: str) -> Qrels | Run:
    return read_qrels(path, fmt) if kind == "qrels" else read_run(path, fmt)


def _round_trips(tmp: Path, src: Path, src_fmt: str, kind: str, formats: tuple[str, ...]) -> None:
    expected = rows_of(_read(src, kind, src_fmt))
    first: dict[str, Path] = {}
    for fmt in formats:
        first[fmt] = tmp / f"{kind}-1{EXT[fmt]}"
        convert(src, first[fmt], kind=kind, from_format=src_fmt, to_format=fmt)
        assert rows_of(_read(first[fmt], kind, fmt)) == expected, fmt
    for a, b in itertools.permutations(formats, 2):
        out = tmp / f"{kind}-{a}-{b}{EXT[b]}"
        done = convert(first[a], out, kind=kind, from_format=a, to_format=b)
        assert done.rows == sum(map(len, expected[1].values()))
        assert rows_of(_read(out, kind, b)) == expected, (a, b)


def test_judgments_round_trip_between_every_pair_of_formats(base: dict[str, Path], tmp_path: Path) -> None:
    _round_trips(tmp_path, base["qrels"], "trec", "qrels", QRELS_FORMATS)


def test_scored_runs_round_trip_between_every_format_that_holds_scores(base: dict[str, Path], tmp_path: Path) -> None:
    _round_trips(tmp_path, base["run"], "trec", "run", SCORED_FORMATS)


def test_rank_only_runs_round_trip_between_every_format_that_holds_ranks(base: dict[str, Path], tmp_path: Path) -> None:
    _round_trips(tmp_path, base["ranked"], "msmarco", "run", RANKED_FORMATS)


def test_compressed_outputs_read_back_the_same(base: dict[str, Path], tmp_path: Path) -> None:
    expected = rows_of(read_run(base["run"]))
    for suffix in (".gz", ".bz2", ".xz", ".zst"):
        out = tmp_path / f"r.jsonl{suffix}"
        convert(base["run"], out)
        head = out.read_bytes()[:4]
        assert head[:2] in (b"\x1f\x8b", b"BZ", b"\xfd7", b"\x28\xb5"), suffix
        assert rows_of(read_run(out)) == expected, suffix


@pytest.mark.parametrize("fmt", ["msmarco", "quepid"])
def test_scores_into_a_format_of_ranks_are_refused_or_become_positions(base: dict[str, Path], tmp_path: Path,
                                                                        fmt: str) -> None:
    out = tmp_path / f"r{EXT[fmt]}"
    with pytest.raises(FormatLossError, match="--lossy"):
        convert(base["run"], out, kind="run", to_format=fmt)
    convert(base["run"], out, kind="run", to_format=fmt, lossy=True)
    back = read_run(out, fmt)
    assert back.ranked_by == "rank"
    _, per_query = rows_of(back)
    assert all([-v for _, v in docs] == list(map(float, range(1, len(docs) + 1))) for docs in per_query.values())
    # no ties in this run: positions order exactly as scores, so every value is the same
    for preset, second in (("trec_eval", "AP"), ("sklearn", "dcg@10"), ("ir_measures", "AP")):  # sklearn has no AP
        a = [m.per_query() for m in rf.evaluate(base["qrels"], base["run"], ["ndcg@10", second], preset=preset)]
        b = [m.per_query() for m in rf.evaluate(base["qrels"], back, ["ndcg@10", second], preset=preset)]
        assert a == b


def test_positions_are_not_taken_for_ranks_when_scores_rise(tmp_path: Path) -> None:
    src = tmp_path / "r.txt"
    src.write_text("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 3.0 t\n")
    with pytest.raises(FormatLossError, match="rises"):
        convert(src, tmp_path / "r.tsv", kind="run", to_format="msmarco", lossy=True)


@pytest.mark.parametrize("fmt", ["trec", "json", "beir"])
def test_ranks_into_a_format_of_scores_are_refused_or_become_minus_the_rank(base: dict[str, Path], tmp_path: Path,
                                                                             fmt: str) -> None:
    out = tmp_path / f"r{EXT[fmt]}"
    with pytest.raises(FormatLossError, match="--lossy"):
        convert(base["ranked"], out, kind="run", from_format="msmarco", to_format=fmt)
    convert(base["ranked"], out, kind="run", from_format="msmarco", to_format=fmt, lossy=True)
    back = read_run(out, fmt)
    assert back.ranked_by == "score"
    assert rows_of(back)[1] == rows_of(read_run(base["ranked"], "msmarco"))[1]  # score = -rank, the same order


def test_what_a_format_cannot_hold_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "q.jsonl"
    src.write_text('{"query_id": "q 1", "doc_id": "d", "relevance": 1}\n')
    for fmt in ("trec", "msmarco"):
        with pytest.raises(FormatLossError, match="blank"):
            convert(src, tmp_path / "out", to_format=fmt)
    frac = tmp_path / "f.jsonl"
    frac.write_text('{"query_id": "q1", "doc_id": "d", "relevance": 1.5}\n')
    for fmt in ("beir", "es"):
        with pytest.raises(FormatLossError, match="integer"):
            convert(frac, tmp_path / "out", to_format=fmt)
    dup = tmp_path / "d.jsonl"
    dup.write_text('{"query_id": "q1", "doc_id": "d", "relevance": 1}\n{"query_id": "q1", "doc_id": "d", "relevance": 0}\n')
    with pytest.raises(FormatLossError, match="twice"):
        convert(dup, tmp_path / "out.json")
    convert(dup, tmp_path / "out.csv")  # a table holds both rows; the engine counts the duplicate
    assert len(read_qrels(tmp_path / "out.csv")) == 2
    blanks = tmp_path / "b.jsonl"
    blanks.write_text('{"query_id": " q1", "doc_id": "d", "relevance": 1}\n')
    with pytest.raises(FormatLossError, match="leading or trailing"):
        convert(blanks, tmp_path / "out", to_format="quepid")


def test_quepid_csv_injection_guard_round_trips(tmp_path: Path) -> None:
    src = tmp_path / "q.jsonl"
    src.write_text('{"query_id": "=cmd", "doc_id": "-d", "relevance": 2}\n')
    convert(src, tmp_path / "ratings.csv", to_format="quepid")
    assert (tmp_path / "ratings.csv").read_text().splitlines()[1] == " =cmd, -d,2"
    back = read_qrels(tmp_path / "ratings.csv")
    assert back.query.to_pylist() == ["=cmd"] and back.doc.to_pylist() == ["-d"]


def test_convert_command_exit_codes(base: dict[str, Path], tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "rankflavor", "convert", *args], capture_output=True, text=True)

    ok = run(str(base["qrels"]), str(tmp_path / "q.parquet"))
    assert ok.returncode == 0 and "judgments" in ok.stderr and "trec -> parquet" in ok.stderr
    assert run(str(base["run"]), str(tmp_path / "r.tsv"), "--out-format", "msmarco").returncode == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "q1", "doc_id": "d", "relevance": 1}\n{"query_id": "q1"\n')
    failed = run(str(bad), str(tmp_path / "x.txt"), "--kind", "qrels")
    assert failed.returncode == 3 and f"{bad}:2:" in failed.stderr


def test_a_run_is_not_first_read_as_judgments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """kind=auto on a TREC file whose first line has six fields reads it as a run without asking the
    judgments reader (which folds the whole file's blanks before refusing line 1: seconds for a
    big run); when the run reader refuses it too, the error names both readings, as before."""
    import rankflavor.io.convert as conv

    run = tmp_path / "r.txt"
    run.write_text("# made by hand\n\nq1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n")
    asked: list[str] = []
    real = conv.read_qrels

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(str(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(conv, "read_qrels", spy)
    done = convert(run, tmp_path / "r.parquet")
    assert (done.kind, done.rows, done.queries, asked) == ("run", 2, 1, [])
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 abc t\n")
    with pytest.raises(rf.InputError, match=r"bad\.txt:1: .*\(read as judgments; as a run: .*bad\.txt:2"):
        convert(bad, tmp_path / "bad.parquet")
    assert asked == [str(bad)]
    # four fields: judgments, as before; a compressed or non-TREC file is not sniffed
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 1\n")
    assert convert(qrels, tmp_path / "q.parquet").kind == "qrels"


def test_parquet_holds_the_columns_by_their_names(tmp_path: Path) -> None:
    """The Parquet file is written from the table's own columns: query_id, doc_id, then relevance,
    score or rank (a run ordered by ranks), and source for judgments naming their label sources;
    a query listed with nothing in it needs --lossy, as in every row format."""
    import pyarrow.parquet as pq

    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 2 human:nist\nq2 0 d3 0 llm:m\n")
    convert(qrels, tmp_path / "q.parquet")
    table = pq.read_table(tmp_path / "q.parquet")
    assert table.column_names == ["query_id", "doc_id", "relevance", "source"]
    assert table.to_pylist() == [{"query_id": "q1", "doc_id": "d1", "relevance": 2.0, "source": "human:nist"},
                                 {"query_id": "q2", "doc_id": "d3", "relevance": 0.0, "source": "llm:m"}]
    ranked = tmp_path / "r.msmarco"
    ranked.write_text("q1\td9\t1\nq1\td4\t2\n")
    convert(ranked, tmp_path / "r.parquet", kind="run", from_format="msmarco")
    assert pq.read_table(tmp_path / "r.parquet").to_pylist() == [
        {"query_id": "q1", "doc_id": "d9", "rank": 1.0}, {"query_id": "q1", "doc_id": "d4", "rank": 2.0}]
    listed = tmp_path / "l.json"
    listed.write_text('{"q1": {"d1": 1.5}, "q2": {}}')
    with pytest.raises(FormatLossError, match=r"1 query\(ies\) are listed with no document \(e.g. 'q2'\)"):
        convert(listed, tmp_path / "l.parquet", kind="run")
    kept = convert(listed, tmp_path / "l.parquet", kind="run", lossy=True)
    assert (kept.rows, kept.queries) == (1, 1)
    assert pq.read_table(tmp_path / "l.parquet").to_pylist() == [{"query_id": "q1", "doc_id": "d1", "score": 1.5}]
