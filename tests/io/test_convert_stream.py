"""``convert`` of a TREC run into Parquet streams (issue 33): a piece of the file at a time, in
row groups, never the whole run in memory. What it writes is checked against the run's lines
parsed here by plain Python (not by the library's readers) and against what the whole read and
:func:`~rankflavor.io.formats.write.parquet_table` make of the same file; the pieces and row
groups are made small so every file below crosses many of each.
"""

from __future__ import annotations

import gzip
import os
import random
import stat
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import rankflavor.io.convert as conv
import rankflavor.io.stream as chunked
from rankflavor.cli.main import cli
from rankflavor.errors import InputError
from rankflavor.io.convert import convert
from rankflavor.io.formats.write import parquet_table
from rankflavor.io.run import read_run


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunked, "PIECE_BYTES", 512)  # (the readers' pieces: a few lines each)
    monkeypatch.setattr(conv, "ROW_GROUP_ROWS", 37)


def _lines(docs: list[str], seed: int, queries: int = 9) -> list[str]:
    rng = random.Random(seed)
    out = []
    for q in range(queries):
        for rank, d in enumerate(rng.sample(docs, rng.randint(1, 25)), 1):
            out.append(f"q{q} Q0 {d} {rank} {rng.choice([1.5, 0.25, -3.0, 7.0, rng.random()])!r} tag{q}")
    return out


def _expected(lines: list[str]) -> dict[str, list]:
    """The columns the Parquet file must hold, from the lines by plain Python."""
    fields = [line.split() for line in lines if line.strip() and not line.startswith("#")]
    docs = [f[2] for f in fields]
    canonical = all(d.isdigit() and (d == "0" or not d.startswith("0")) and len(d) <= 18 for d in docs)
    return {"query_id": [f[0] for f in fields], "doc_id": [int(d) for d in docs] if canonical else docs,
            "score": [float(f[4]) for f in fields]}


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


INTEGERS = [str(n) for n in range(0, 3000, 7)]
TEXT = [f"D{n:05d}" for n in range(400)]
CASES = {
    "integer docnos": lambda: _lines(INTEGERS, 1),
    "text docnos": lambda: _lines(TEXT, 2),
    # integers for many pieces, then one docno with a leading zero: the file starts again, as text
    "integers then one that is not": lambda: [*_lines(INTEGERS, 3), "q9 Q0 007 1 0.5 t"],
    "a comment and a blank line mid-file (the line path)": lambda: (
        [*_lines(INTEGERS, 4)[:60], "# a comment", "", *_lines(INTEGERS, 5)[60:]]),
    "tabs between fields (the line path)": lambda: [line.replace(" ", "\t") for line in _lines(TEXT, 6)],
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_streamed_file_holds_every_line_in_order(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    lines = CASES[case]()
    src = _write(tmp_path / "run.txt", lines)
    whole = parquet_table(read_run(src))  # (read now: the streamed convert must not read the run whole)
    monkeypatch.setattr(conv, "read_either", _refused)
    done = convert(src, tmp_path / "out.parquet")
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.to_pydict() == _expected(lines)
    assert table.equals(whole)  # what the whole read gives, column types included
    assert (done.kind, done.rows, done.queries, done.from_format, done.to_format) == (
        "run", len(whole), len(set(whole["query_id"].to_pylist())), "trec", "parquet")
    assert pq.ParquetFile(tmp_path / "out.parquet").metadata.num_row_groups > 1
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def _refused(*args: object) -> None:
    raise AssertionError("the run was read whole")


def test_gzip_input_streams_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _lines(TEXT, 7)
    src = tmp_path / "run.txt.gz"
    src.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    monkeypatch.setattr(conv, "read_either", _refused)
    convert(src, tmp_path / "out.parquet", kind="run")
    assert pq.read_table(tmp_path / "out.parquet").to_pydict() == _expected(lines)


@pytest.mark.parametrize("kind", ["run", "auto"])
def test_a_bad_line_late_in_the_file_is_named_and_leaves_no_file(kind: str, tmp_path: Path) -> None:
    lines = _lines(INTEGERS, 8)
    lines.insert(len(lines) - 3, "q5 Q0 12 1 notanumber t")
    src = _write(tmp_path / "run.txt", lines)
    with pytest.raises(InputError) as caught:
        convert(src, tmp_path / "out.parquet", kind=kind)
    bad = len(lines) - 3
    # (auto: read as a run and as judgments, the error names both, as the whole read always did)
    assert f"run.txt:{bad}: score 'notanumber' is not a number" in str(caught.value)
    assert caught.value.source == str(src) and (kind == "auto" or caught.value.line == bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.txt"]  # no output, no partial file


def test_an_existing_output_is_replaced_only_when_the_new_one_is_whole(tmp_path: Path) -> None:
    src = _write(tmp_path / "run.txt", [*_lines(TEXT, 9), "q1 Q0 d 1 inf t"])
    out = tmp_path / "out.parquet"
    out.write_bytes(b"the old file")
    with pytest.raises(InputError):
        convert(src, out)
    assert out.read_bytes() == b"the old file"


def test_an_empty_run_is_refused_as_the_whole_read_refuses_it(tmp_path: Path) -> None:
    src = _write(tmp_path / "run.txt", ["# only a comment"])
    with pytest.raises(InputError) as streamed:
        convert(src, tmp_path / "out.parquet", kind="run")
    with pytest.raises(InputError) as whole:
        read_run(src)
    assert str(streamed.value) == str(whole.value)
    assert not (tmp_path / "out.parquet").exists()


def test_the_file_is_made_as_open_makes_files(tmp_path: Path) -> None:
    src = _write(tmp_path / "run.txt", _lines(TEXT, 10))
    convert(src, tmp_path / "out.parquet")
    plain = tmp_path / "plain"
    plain.write_bytes(b"")
    assert stat.S_IMODE(os.stat(tmp_path / "out.parquet").st_mode) == stat.S_IMODE(os.stat(plain).st_mode)


def test_judgments_and_compressed_outputs_take_the_whole_read(tmp_path: Path) -> None:
    """Only a run into a plain Parquet file streams; judgments (four fields) and a ``.parquet.gz``
    are read whole and written as before."""
    qrels = _write(tmp_path / "qrels.txt", ["q1 0 d1 2", "q1 0 d2 0", "q2 0 d1 1"])
    assert convert(qrels, tmp_path / "q.parquet").kind == "qrels"
    assert pq.read_table(tmp_path / "q.parquet").column_names == ["query_id", "doc_id", "relevance"]
    src = _write(tmp_path / "run.txt", _lines(TEXT, 11))
    convert(src, tmp_path / "r.parquet.gz")
    assert read_run(tmp_path / "r.parquet.gz").score.tolist() == read_run(src).score.tolist()


def test_the_command_streams_and_says_what_it_wrote(tmp_path: Path) -> None:
    lines = _lines(INTEGERS, 12)
    src = _write(tmp_path / "run.txt", lines)
    result = CliRunner().invoke(cli, ["convert", str(src), str(tmp_path / "out.parquet")])
    assert result.exit_code == 0, result.output
    assert f"wrote {len(lines)} results of 9 queries" in result.output
    assert pq.read_table(tmp_path / "out.parquet").schema.field("doc_id").type == pa.int64()
