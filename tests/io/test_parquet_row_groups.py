"""A Parquet run of several row groups is read a row group at a time and its text docnos kept
in their row groups' chunks (issue 33: joining them copied every docno at the read's peak). The
rows, the checks and the rows errors name are those of the same table in one row group.
"""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rankflavor as rf
from rankflavor.errors import InputError
from rankflavor.io.run import read_run


def _table(rows: int, seed: int) -> pa.Table:
    rng = random.Random(seed)
    return pa.table({"query_id": [f"q{rng.randint(0, 40)}" for _ in range(rows)],
                     "doc_id": [f"D{rng.randint(0, 10**6)}" for _ in range(rows)],
                     "score": [rng.choice([0.5, 1.0, rng.random()]) for _ in range(rows)]})


def _sorted(table: pa.Table) -> pa.Table:
    return table.sort_by([("query_id", "ascending"), ("score", "descending"), ("doc_id", "ascending")])


@pytest.mark.parametrize("group_rows", [7, 100, 1 << 20])
def test_row_groups_read_as_one_table(group_rows: int, tmp_path: Path) -> None:
    table = _sorted(_table(600, 1))
    pq.write_table(table, tmp_path / "run.parquet", row_group_size=group_rows)
    assert pq.ParquetFile(tmp_path / "run.parquet").metadata.num_row_groups == -(-600 // group_rows)
    run = read_run(tmp_path / "run.parquet")
    if group_rows < 600:  # the docnos left in their row groups' chunks, not joined into a copy
        assert isinstance(run.doc_strings, pa.ChunkedArray) and run.doc_strings.num_chunks == -(-600 // group_rows)
    assert run.query.to_pylist() == table["query_id"].to_pylist()
    assert run.doc.to_pylist() == table["doc_id"].to_pylist()
    assert run.score.tolist() == table["score"].to_pylist()
    qrels = {q: {d: 1 for d in table["doc_id"].to_pylist()[::3]} for q in set(table["query_id"].to_pylist())}
    one = tmp_path / "one.parquet"
    pq.write_table(table, one)
    chunked = rf.evaluate(qrels, str(tmp_path / "run.parquet"), ["ndcg@10", "ap"])
    whole = rf.evaluate(qrels, str(one), ["ndcg@10", "ap"])
    assert chunked.per_query() == whole.per_query() and chunked.means() == whole.means()


@pytest.mark.parametrize(("column", "bad", "why"), [(1, "", "doc_id is empty"), (1, None, "doc_id is missing (null)"),
                                                    (1, "D\x001", "NUL"), (0, None, "query_id is missing (null)"),
                                                    (0, "", "query_id is missing or empty: an id is needed"),
                                                    (0, "q\x001", "query_id holds a NUL")])
@pytest.mark.parametrize("row", [3, 57, 599])
def test_a_bad_id_in_a_later_row_group_is_named_by_its_row(column: int, bad: str | None, why: str, row: int,
                                                          tmp_path: Path) -> None:
    """(Query ids are read as a dictionary, each row group's its own.)"""
    table = _table(600, 2)
    ids = table.column(column).to_pylist()
    ids[row] = bad
    table = table.set_column(column, table.column_names[column], pa.array(ids, pa.string()))
    pq.write_table(table, tmp_path / "run.parquet", row_group_size=10)
    with pytest.raises(InputError) as caught:
        read_run(tmp_path / "run.parquet")
    assert f"row {row}: " in str(caught.value) and why in str(caught.value)


@pytest.mark.parametrize("kind", [pa.float64(), pa.float32(), pa.int32()])
@pytest.mark.parametrize("row", [3, 57, 599])
def test_scores_across_row_groups(kind: pa.DataType, row: int, tmp_path: Path) -> None:
    """Scores copied chunk by chunk into one array: values kept, -0.0 read as 0, and the first
    value that is not finite named by its row (a float column) or a null named (any column)."""
    rng = random.Random(row)
    scores: list[float | None] = [float(rng.randint(-5, 5)) for _ in range(600)]
    scores[1] = -0.0
    table = _table(600, 4).set_column(2, "score", pa.array(scores, pa.float64()).cast(kind))
    pq.write_table(table, tmp_path / "run.parquet", row_group_size=10)
    run = read_run(tmp_path / "run.parquet")
    assert run.score.dtype == "float64" and run.score.tolist() == scores
    assert str(run.score[1]) == "0.0"  # not -0.0
    bad = list(scores)
    bad[row] = None
    if kind != pa.int32():
        bad[(row + 1) % 600] = float("inf")  # (nulls are named first, wherever they are)
    pq.write_table(table.set_column(2, "score", pa.array(bad, pa.float64()).cast(kind)), tmp_path / "bad.parquet",
                   row_group_size=10)
    with pytest.raises(InputError, match=f"row {row}: score is missing \\(null\\)"):
        read_run(tmp_path / "bad.parquet")
    if kind != pa.int32():
        bad = list(scores)
        bad[row] = float("nan")
        if row < 599:
            bad[row + 1] = float("inf")  # the first not finite is named
        pq.write_table(table.set_column(2, "score", pa.array(bad, pa.float64()).cast(kind)),
                       tmp_path / "nan.parquet", row_group_size=10)
        with pytest.raises(InputError, match=f"row {row}: score nan is not a finite number"):
            read_run(tmp_path / "nan.parquet")


def _run_with_scores(tmp_path: Path, scores: pa.Array) -> Path:
    table = _table(len(scores), 5).set_column(2, "score", scores)
    pq.write_table(table, tmp_path / "run.parquet", row_group_size=4)
    return tmp_path / "run.parquet"


@pytest.mark.parametrize("kind", [pa.decimal128(6, 3), pa.string(), pa.large_string(), pa.string_view()])
def test_scores_stored_as_decimals_or_text(kind: pa.DataType, tmp_path: Path) -> None:
    """Decimal and text score columns read as their numbers (-0 as 0); text that is no finite
    number is named with the file and its row."""
    texts = ["0.5", "-0.000", "2.25", "1", "0.125", "3"]
    values = pa.array(texts).cast(pa.decimal128(6, 3)) if pa.types.is_decimal(kind) else pa.array(texts).cast(kind)
    run = read_run(_run_with_scores(tmp_path, values))
    assert run.score.tolist() == [0.5, 0.0, 2.25, 1.0, 0.125, 3.0] and str(run.score[1]) == "0.0"
    if not pa.types.is_decimal(kind):
        path = _run_with_scores(tmp_path, pa.array(["0.5", "1", "2", "3", "inf", "4"]).cast(kind))
        with pytest.raises(InputError) as caught:
            read_run(path)
        assert str(caught.value) == f"{path}: row 4: score inf is not a finite number"
        path = _run_with_scores(tmp_path, pa.array(["0.5", "1", "2", "3", "4", "x"]).cast(kind))
        with pytest.raises(InputError) as caught:
            read_run(path)
        assert str(caught.value) == f"{path}: row 5: score 'x' is not a number"


def test_a_score_column_of_another_type_is_named(tmp_path: Path) -> None:
    path = _run_with_scores(tmp_path, pa.array([True, False, True]))
    with pytest.raises(InputError) as caught:
        read_run(path)
    assert str(caught.value) == f"{path}: row 0: column 'score' holds bool values; expected numbers"


@pytest.mark.parametrize("kind", [pa.float64(), pa.int64()])
def test_score_errors_name_the_file(kind: pa.DataType, tmp_path: Path) -> None:
    """The messages of a null and of a value that is not finite, whole: file, row, what."""
    path = _run_with_scores(tmp_path, pa.array([1.0, 2.0, None, 3.0, 4.0]).cast(kind))
    with pytest.raises(InputError) as caught:
        read_run(path)
    assert str(caught.value) == f"{path}: row 2: score is missing (null): a number is needed"
    if kind == pa.float64():
        path = _run_with_scores(tmp_path, pa.array([1.0, 2.0, 3.0, 4.0, 5.0, float("-inf")]))
        with pytest.raises(InputError) as caught:
            read_run(path)
        assert str(caught.value) == f"{path}: row 5: score -inf is not a finite number"


def test_an_id_column_of_another_type_is_named(tmp_path: Path) -> None:
    table = _table(3, 6).set_column(1, "doc_id", pa.array([0.5, 1.5, 2.5]))
    pq.write_table(table, tmp_path / "run.parquet")
    with pytest.raises(InputError) as caught:
        read_run(tmp_path / "run.parquet")
    assert str(caught.value) == f"{tmp_path / 'run.parquet'}: row 0: column 'doc_id' holds double values; ids are text or integers"
