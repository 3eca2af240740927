"""Columnar runs take the TREC reader's fast path (issue 33): same notes, same numbers.

A run read whole from Parquet (or any format of :mod:`rankflavor.io.formats`) is noted in pieces
(:func:`rankflavor.io.run.noted`): docnos as integers or hashes, where each query's rows start,
whether scores descend inside them. ``convert`` writes canonical integer docnos as int64, which
read back as their values with no string made. The oracles: plain Python over the same rows
(the runs of one query id, the descent, ``int(docno)``), and the TREC text of the same run
evaluated on the reader's own path, per query, under tie rules that read the file order.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.align import sizes as align_sizes
from rankflavor.io import run as run_io
from rankflavor.io.convert import convert
from rankflavor.io.formats import table as table_io
from rankflavor.io.formats.table import integer_ids
from rankflavor.io.qrels import read_qrels
from rankflavor.io.run import read_run

MEASURES = ["ndcg@10", "ndcg@5[ties=input_order]", "ndcg@10[ties=averaged]", "AP", "P@3", "RR", "recall@5"]


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of 4 rows, and alignment's two-thread paths from 8 rows, so a few dozen rows take
    every path a 7M-line run takes."""
    monkeypatch.setattr(run_io, "NOTE_ROWS", 4)
    monkeypatch.setattr(align_sizes, "PARALLEL_ROWS", 8)


def rows_strategy() -> st.SearchStrategy[list[tuple[str, str, float]]]:
    docs = st.one_of(st.integers(0, 40).map(str), st.sampled_from(["d1", "d2", "007", "x-9", "12a"]))
    row = st.tuples(st.sampled_from(["q1", "q2", "q3", "10"]), docs, st.sampled_from([0.5, 1.0, 1.0, 2.0, 3.5]))
    return st.lists(row, min_size=8, max_size=40)


def unique_pairs(rows: list[tuple[str, str, float]]) -> list[tuple[str, str, float]]:
    seen: set[tuple[str, str]] = set()
    out = []
    for q, d, s in rows:
        if (q, d) not in seen:
            seen.add((q, d))
            out.append((q, d, s))
    return out


def write_both(folder: Path, rows: list[tuple[str, str, float]]) -> tuple[Path, Path]:
    text = folder / "run.txt"
    text.write_text("".join(f"{q} Q0 {d} {i + 1} {s} t\n" for i, (q, d, s) in enumerate(rows)))
    table = folder / "run.parquet"
    pq.write_table(pa.table({"query_id": [q for q, _, _ in rows], "doc_id": [d for _, d, _ in rows],
                             "score": [s for _, _, s in rows]}), table)
    return text, table


QRELS = "".join(f"{q} 0 {d} {g}\n" for q in ("q1", "q2", "3", "10") for d, g in (("1", 2), ("d1", 1), ("007", 3), ("5", 0),
                                                                                  ("x-9", 1), ("12", 2)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=rows_strategy())
def test_noted_parquet_run_has_the_notes_plain_python_finds(small_pieces: None, tmp_path_factory: pytest.TempPathFactory,
                                                            rows: list[tuple[str, str, float]]) -> None:
    rows = unique_pairs(rows)
    if len(rows) < 8:
        return
    _, table = write_both(tmp_path_factory.mktemp("noted"), rows)
    run = read_run(table)
    queries = [q for q, _, _ in rows]
    starts = [i for i in range(len(rows)) if i == 0 or queries[i] != queries[i - 1]]
    # the notes are per piece of 4 rows: a query's run that goes on into the next piece starts again there
    want_runs = sorted(set(starts) | set(range(0, len(rows), 4)))
    assert run.query_runs is not None
    got_runs = sorted(int(r) + 4 * k for k, piece in enumerate(run.query_runs) for r in piece)
    assert got_runs == want_runs
    descends = all(rows[i][2] <= rows[i - 1][2] for i in range(1, len(rows)) if queries[i] == queries[i - 1])
    assert run.scores_descend == descends
    assert run.doc.to_pylist() == [d for _, d, _ in rows]
    if all(d.isdigit() and (d == "0" or not d.startswith("0")) for _, d, _ in rows):
        assert run.doc_integers is not None and np.concatenate(run.doc_integers).tolist() == [int(d) for _, d, _ in rows]
    else:
        assert run.doc_hashes is not None and run.doc_integers is None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=rows_strategy())
def test_a_parquet_run_scores_as_its_trec_text(small_pieces: None, tmp_path_factory: pytest.TempPathFactory,
                                                rows: list[tuple[str, str, float]]) -> None:
    rows = unique_pairs(rows)
    folder = tmp_path_factory.mktemp("same")
    (folder / "qrels.txt").write_text(QRELS)
    text, table = write_both(folder, rows)
    qrels = read_qrels(folder / "qrels.txt")
    want = rankflavor.evaluate(qrels, str(text), MEASURES)
    got = rankflavor.evaluate(qrels, str(table), MEASURES)
    for a, b in zip(want, got, strict=True):
        assert a.measure == b.measure
        assert a.queries.tolist() == b.queries.tolist() and a.status.tolist() == b.status.tolist(), a.measure
        assert a.values.tolist() == b.values.tolist(), a.measure


def test_convert_writes_canonical_integer_docnos_as_int64_and_reads_them_back(tmp_path: Path) -> None:
    (tmp_path / "run.txt").write_text("q1 Q0 7 1 2.0 t\nq1 Q0 0 2 1.0 t\nq2 Q0 123456789012345678 1 1.0 t\n")
    (tmp_path / "odd.txt").write_text("q1 Q0 7 1 2.0 t\nq1 Q0 007 2 1.0 t\n")
    for name, kind in (("run", pa.int64()), ("odd", pa.string())):
        assert convert(tmp_path / f"{name}.txt", tmp_path / f"{name}.parquet") is not None
        assert pq.read_schema(tmp_path / f"{name}.parquet").field("doc_id").type == kind, name
        assert read_run(tmp_path / f"{name}.parquet").doc.to_pylist() == read_run(tmp_path / f"{name}.txt").doc.to_pylist()


@pytest.mark.parametrize(("values", "kind", "kept"), [
    ([3, 0, 17], pa.int64(), True), ([3, 0, 17], pa.int8(), True), ([3, 0, 17], pa.uint64(), True),
    ([10**18 - 1], pa.int64(), True), ([10**18], pa.int64(), False), ([2**63], pa.uint64(), False),
    ([-1, 4], pa.int64(), False), ([1, None], pa.int64(), False), ([], pa.int64(), False),
])  # fmt: skip
def test_integer_ids_are_taken_only_when_their_text_is_canonical(values: list[int | None], kind: pa.DataType,
                                                                  kept: bool) -> None:
    found = integer_ids(pa.chunked_array([pa.array(values, kind)]))
    assert (found is not None) == kept
    if found is not None:
        assert found[0].tolist() == values and (found[1], found[2]) == (min(values), max(values))  # type: ignore[type-var]


@pytest.mark.parametrize("docs", [[-1, 2, 3], [1, None, 3], [2**63, 1, 2]])
def test_integer_docnos_off_the_canonical_range_take_the_string_path(tmp_path: Path, docs: list[int | None]) -> None:
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"query_id": ["q"] * 3, "doc_id": pa.array(docs, pa.uint64() if docs[0] == 2**63 else pa.int64()),
                             "score": [3.0, 2.0, 1.0]}), path)
    if None in docs:
        with pytest.raises(rankflavor.InputError, match="row 1: doc_id is missing"):
            read_run(path)
        return
    assert read_run(path).doc.to_pylist() == [str(d) for d in docs]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=rows_strategy(), integer_docs=st.booleans(), kind=st.sampled_from(["arrow", "pandas", "polars"]))
def test_a_big_dataframe_run_scores_as_its_trec_text(small_pieces: None, tmp_path_factory: pytest.TempPathFactory,
                                                      rows: list[tuple[str, str, float]], integer_docs: bool,
                                                      kind: str) -> None:
    rows = unique_pairs(rows)
    if integer_docs:  # docnos as numbers in the frame: their decimal text is the docno
        rows = [(q, str(sum(map(ord, d)) % 50), s) for q, d, s in rows]
        rows = unique_pairs(rows)
    folder = tmp_path_factory.mktemp("frame")
    (folder / "qrels.txt").write_text(QRELS)
    text, _ = write_both(folder, rows)
    docs = pa.array([int(d) for _, d, _ in rows], pa.int64()) if integer_docs else pa.array([d for _, d, _ in rows])
    table = pa.table({"query_id": [q for q, _, _ in rows], "doc_id": docs, "score": [s for _, _, s in rows]})
    frame = table if kind == "arrow" else table.to_pandas() if kind == "pandas" else pytest.importorskip("polars").from_arrow(table)
    qrels = read_qrels(folder / "qrels.txt")
    want = rankflavor.evaluate(qrels, str(text), MEASURES)
    got = rankflavor.evaluate(qrels, frame, MEASURES)
    for a, b in zip(want, got, strict=True):
        assert a.queries.tolist() == b.queries.tolist() and a.status.tolist() == b.status.tolist(), a.measure
        assert a.values.tolist() == b.values.tolist(), a.measure


def test_a_big_frame_with_a_missing_query_id_names_its_row(small_pieces: None) -> None:
    table = pa.table({"query_id": ["q1"] * 5 + [None] + ["q2"] * 4, "doc_id": pa.array(range(10), pa.int64()),
                      "score": [float(10 - i) for i in range(10)]})
    with pytest.raises(rankflavor.InputError, match="run DataFrame: column 'query_id' row 5: null is a missing value"):
        rankflavor.evaluate({"q1": {"1": 1}}, table, ["P@3"])


@pytest.fixture
def row_group_pieces(small_pieces: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Row groups of any size are kept as the run's pieces (their query ids in dictionary chunks)."""
    monkeypatch.setattr(table_io, "CHUNK_ROWS", 1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=rows_strategy(), group=st.integers(2, 9), integer_docs=st.booleans())
def test_a_parquet_run_in_row_groups_is_noted_group_by_group_and_scores_as_its_text(
        row_group_pieces: None, tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[str, str, float]],
        group: int, integer_docs: bool) -> None:
    rows = unique_pairs(rows)
    if integer_docs:
        rows = unique_pairs([(q, str(sum(map(ord, d)) % 50), s) for q, d, s in rows])
    if len(rows) < 8:
        return
    folder = tmp_path_factory.mktemp("groups")
    (folder / "qrels.txt").write_text(QRELS)
    text = folder / "run.txt"
    text.write_text("".join(f"{q} Q0 {d} {i + 1} {s} t\n" for i, (q, d, s) in enumerate(rows)))
    table = folder / "run.parquet"
    docs = pa.array([int(d) for _, d, _ in rows], pa.int64()) if integer_docs else pa.array([d for _, d, _ in rows])
    pq.write_table(pa.table({"query_id": [q for q, _, _ in rows], "doc_id": docs, "score": [s for _, _, s in rows]}),
                   table, row_group_size=group)
    run = read_run(table)
    # the query ids stay in the file's row groups, each over its own dictionary: no joined copy
    # (a file of one row group is noted in pieces of NOTE_ROWS, 4 here)
    bounds = list(range(0, len(rows), group if group < len(rows) else 4))
    assert isinstance(run.query, pa.ChunkedArray) and [len(c) for c in run.query.chunks] == \
        [min(bounds[1] - bounds[0], len(rows) - a) for a in bounds]
    assert [q.as_py() for q in run.query] == [q for q, _, _ in rows]
    queries = [q for q, _, _ in rows]
    starts = {i for i in range(len(rows)) if i == 0 or queries[i] != queries[i - 1]}
    assert run.query_runs is not None  # noted by row group: a query's run starts again in the next group
    assert sorted(int(r) + a for a, piece in zip(bounds, run.query_runs, strict=True) for r in piece) == \
        sorted(starts | set(bounds))
    assert run.scores_descend == all(rows[i][2] <= rows[i - 1][2] for i in range(1, len(rows)) if queries[i] == queries[i - 1])
    qrels = read_qrels(folder / "qrels.txt")
    want = rankflavor.evaluate(qrels, str(text), MEASURES)
    got = rankflavor.evaluate(qrels, str(table), MEASURES)
    for a, b in zip(want, got, strict=True):
        assert a.queries.tolist() == b.queries.tolist() and a.status.tolist() == b.status.tolist(), a.measure
        assert a.values.tolist() == b.values.tolist(), a.measure


@pytest.mark.parametrize(("bad", "said"), [("", "query_id is missing or empty"), ("q\x00", "query_id holds a NUL")])
def test_a_bad_query_id_in_a_later_row_group_is_named_by_its_row(row_group_pieces: None, tmp_path: Path, bad: str,
                                                                 said: str) -> None:
    queries = ["q1"] * 4 + ["q2"] * 3 + [bad] + ["q3"] * 4  # row 7, in the second row group of 4
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"query_id": queries, "doc_id": pa.array(range(12), pa.int64()),
                             "score": [float(12 - i) for i in range(12)]}), path, row_group_size=4)
    with pytest.raises(rankflavor.InputError, match=f"^{path}: row 7: {said}"):
        read_run(path)


def test_an_unused_bad_entry_of_a_row_group_dictionary_reads_the_ids_anew(row_group_pieces: None) -> None:
    # a dictionary may hold an entry no row uses: that is no error, and the rows keep their ids
    from rankflavor.io.formats.table import ids

    def where(row: int) -> tuple[int | None, str]:
        return None, f"row {row}: "

    good = pa.DictionaryArray.from_arrays(pa.array([0, 0, 1], pa.int32()), pa.array(["a", "b"]))
    odd = pa.DictionaryArray.from_arrays(pa.array([1, 1, 2], pa.int32()), pa.array(["", "b", "c"]))
    column = pa.chunked_array([good, odd])
    kept = ids(column, "query_id", "r", where, encode=True, chunks=True)
    assert kept.to_pylist() == ["a", "a", "b", "b", "b", "c"]
    assert ids(pa.chunked_array([good, good]), "query_id", "r", where, encode=True, chunks=True).num_chunks == 2
    joined = ids(pa.chunked_array([good, good]), "query_id", "r", where, encode=True)  # (not asked: one dictionary)
    assert isinstance(joined, pa.DictionaryArray) and joined.to_pylist() == ["a", "a", "b"] * 2


def test_parquet_judgments_of_integer_docnos_carry_their_values(tmp_path: Path) -> None:
    # the docnos' text is their values' (as the TREC text reads it), and alignment gets the
    # values at once: every docno canonical
    lines = "q1 0 7 1\nq1 0 0 2\nq2 0 123456789012345678 1\nq2 0 40 0\n"
    (tmp_path / "qrels.txt").write_text(lines)
    pq.write_table(pa.table({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": pa.array([7, 0, 123456789012345678, 40]),
                             "relevance": [1.0, 2.0, 1.0, 0.0]}), tmp_path / "qrels.parquet")
    text, table = read_qrels(tmp_path / "qrels.txt"), read_qrels(tmp_path / "qrels.parquet")
    assert table.doc.to_pylist() == text.doc.to_pylist() == ["7", "0", "123456789012345678", "40"]
    assert table.doc_canonical is not None and text.doc_canonical is not None
    (mask, values), (want_mask, want_values) = table.doc_canonical.result(), text.doc_canonical.result()
    assert mask.tolist() == want_mask.tolist() == [True] * 4 and values.tolist() == want_values.tolist()
    run = "q1 Q0 0 1 3.0 r\nq1 Q0 7 2 2.0 r\nq2 Q0 40 1 2.0 r\nq2 Q0 123456789012345678 2 1.0 r\n"
    (tmp_path / "run.txt").write_text(run)
    for a, b in zip(rankflavor.evaluate(text, str(tmp_path / "run.txt"), MEASURES),
                    rankflavor.evaluate(table, str(tmp_path / "run.txt"), MEASURES), strict=True):
        assert a.values.tolist() == b.values.tolist(), a.measure


def test_a_parquet_pair_of_integer_docnos_calls_no_compute_kernel(tmp_path: Path) -> None:
    # (importing pyarrow.compute costs more than such a pair's conversions: issue 33's parquet-int)
    rows = [(f"q{q}", 1000 + 7 * d + q, float(30 - d)) for q in range(6) for d in range(30)]
    pq.write_table(pa.table({"query_id": [q for q, _, _ in rows], "doc_id": pa.array([d for _, d, _ in rows]),
                             "score": [s for _, _, s in rows]}), tmp_path / "run.parquet", row_group_size=40)
    pq.write_table(pa.table({"query_id": [q for q, _, _ in rows[::3]], "doc_id": pa.array([d for _, d, _ in rows[::3]]),
                             "relevance": [float(d % 3) for _, d, _ in rows[::3]]}), tmp_path / "qrels.parquet")
    # row groups kept as pieces and noted, and two alignment threads, as for a 7M-row run
    probe = ("import sys, rankflavor; from rankflavor.io import run; from rankflavor.io.formats import table;"
             " from rankflavor.align import sizes; run.NOTE_ROWS = 40; table.CHUNK_ROWS = 1; sizes.PARALLEL_ROWS = 8;"
             " r = rankflavor.evaluate(sys.argv[1], sys.argv[2], ['ndcg@10', 'P@5']);"
             " print(round(r[0].mean, 6), 'pyarrow.compute' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    mean, imported = done.stdout.split()
    assert imported == "False" and float(mean) > 0


def test_a_null_dictionary_entry_a_row_uses_is_named_as_a_missing_id(tmp_path: Path) -> None:
    # (an in-memory dictionary may hold a null entry; the indices themselves hold no null)
    from rankflavor.io.formats.table import by_rows, ids

    column = pa.chunked_array([pa.DictionaryArray.from_arrays(pa.array([0, 0, 1], pa.int32()), pa.array(["a", None]))])
    with pytest.raises(rankflavor.InputError, match=r"^r\.parquet: row 2: query_id is missing or empty: an id is needed"):
        ids(column, "query_id", "r.parquet", by_rows, encode=True)


def test_ids_kept_from_row_group_dictionaries_hold_no_empty_id(row_group_pieces: None) -> None:
    from rankflavor.io.formats.table import by_rows, ids

    good = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), pa.array(["a", "b"]))
    unused_empty = pa.DictionaryArray.from_arrays(pa.array([1, 1], pa.int32()), pa.array(["", "b"]))
    kept = ids(pa.chunked_array([good, unused_empty]), "query_id", "r", by_rows, encode=True, chunks=True)
    chunks = kept.chunks if isinstance(kept, pa.ChunkedArray) else [kept]
    assert all("" not in chunk.dictionary.to_pylist() for chunk in chunks)


def test_a_jsonl_run_names_the_lines_of_a_duplicate(tmp_path: Path) -> None:
    # the columnar JSONL reader gives no line array: row i is line i + 1 of the file
    (tmp_path / "run.jsonl").write_text("".join(f'{{"query_id": "q1", "doc_id": "{d}", "score": {s}}}\n'
                                                for d, s in (("d1", 3), ("d2", 2), ("d1", 1))))
    with pytest.raises(rankflavor.InputError, match=r"run\.jsonl:3: document 'd1' appears more than once .* \(also at line 1\)"):
        rankflavor.evaluate({"q1": {"d1": 1}}, str(tmp_path / "run.jsonl"), ["ndcg@10"])


def test_a_parquet_run_of_ranks_alone_is_ordered_by_them(tmp_path: Path) -> None:
    qrels = {"q": {"a": 1, "b": 0, "c": 0}}
    by_name = tmp_path / "ranks.parquet"
    pq.write_table(pa.table({"query_id": ["q"] * 3, "doc_id": ["c", "a", "b"], "rank": [3, 1, 2]}), by_name)
    named = tmp_path / "pos.parquet"
    pq.write_table(pa.table({"query_id": ["q"] * 3, "doc_id": ["c", "a", "b"], "pos": [3, 1, 2]}), named)
    for run in (read_run(by_name), rankflavor.read_run(named, columns={"rank": "pos"})):
        assert run.ranked_by == "rank" and run.score.tolist() == [-3.0, -1.0, -2.0]
    assert rankflavor.evaluate(qrels, str(by_name), ["RR"])[0].mean == 1.0  # a at rank 1


@pytest.mark.parametrize(("table", "said"), [
    (pa.table({"query_id": ["q"], "doc_id": ["a"]}), r"needs a score column"),
    (pa.table({"query_id": pa.array([], pa.string()), "doc_id": pa.array([], pa.string()),
               "score": pa.array([], pa.float64())}), r"has no results"),
])  # fmt: skip
def test_a_parquet_run_without_scores_or_rows_is_refused_by_its_name(tmp_path: Path, table: pa.Table, said: str) -> None:
    path = tmp_path / "run.parquet"
    pq.write_table(table, path)
    with pytest.raises(rankflavor.InputError, match=f"^{path}: {said}"):
        read_run(path)


@pytest.mark.parametrize("kind", [pa.large_string(), pa.string_view(), pa.int32()])
def test_ids_of_large_view_or_integer_columns_read_as_text(tmp_path: Path, kind: pa.DataType) -> None:
    from rankflavor.io.formats.table import by_rows, ids

    values = ["7", "12", "7"]
    column = pa.chunked_array([pa.array([int(v) for v in values] if pa.types.is_integer(kind) else values, kind)])
    got = ids(column, "doc_id", "r", by_rows)
    assert got.type == pa.string() and got.to_pylist() == values
    # and a Parquet run whose docno column has that type (the file keeps its Arrow schema)
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"query_id": ["q", "q", "r"], "doc_id": column, "score": [2.0, 1.0, 1.0]}), path)
    assert read_run(path).doc.to_pylist() == values


def _where(row: int) -> tuple[int | None, str]:
    return None, f"row {row}: "


def _dictionary(indices: list[int], entries: list[str]) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), pa.array(entries))


def test_ids_encoded_are_one_dictionary_array_unless_big_chunks_may_stay(monkeypatch: pytest.MonkeyPatch) -> None:
    from rankflavor.io.formats.table import ids

    plain = ids(pa.chunked_array([pa.array(["a", "b", "a"])]), "q", "r", _where, encode=True)
    assert isinstance(plain, pa.DictionaryArray) and plain.to_pylist() == ["a", "b", "a"]
    one = ids(_dictionary([0, 1, 0], ["a", "b"]), "q", "r", _where, encode=True, chunks=True)  # an array, not chunked
    assert isinstance(one, pa.DictionaryArray) and one.to_pylist() == ["a", "b", "a"]
    single = ids(pa.chunked_array([_dictionary([0, 1, 0], ["a", "b"])]), "q", "r", _where, encode=True, chunks=True)
    assert isinstance(single, pa.DictionaryArray)  # one chunk is one array
    two = pa.chunked_array([_dictionary([0, 1, 0], ["a", "b"]), _dictionary([0, 0, 1], ["c", "a"])])
    monkeypatch.setattr(table_io, "CHUNK_ROWS", 3)  # chunks of 3 rows on average: kept (at least CHUNK_ROWS)
    kept = ids(two, "q", "r", _where, encode=True, chunks=True)
    assert isinstance(kept, pa.ChunkedArray) and kept.num_chunks == 2 and kept.to_pylist() == ["a", "b", "a", "c", "c", "a"]
    joined = ids(two, "q", "r", _where, encode=True)  # the caller did not allow chunks
    assert isinstance(joined, pa.DictionaryArray) and joined.to_pylist() == kept.to_pylist()
    monkeypatch.setattr(table_io, "CHUNK_ROWS", 4)  # smaller chunks than that: joined
    assert isinstance(ids(two, "q", "r", _where, encode=True, chunks=True), pa.DictionaryArray)


@pytest.mark.parametrize("groups", [1, 3])
def test_a_bad_id_is_named_by_its_row_in_any_row_group(monkeypatch: pytest.MonkeyPatch, groups: int) -> None:
    from rankflavor.io.formats.table import ids

    monkeypatch.setattr(table_io, "CHUNK_ROWS", 1)
    chunks = [_dictionary([0, 0], ["a"]), _dictionary([0, 1], ["b", "c"]), _dictionary([1, 0], ["d", ""])][-groups:]
    row = 2 * groups - 2  # the first row of the last group: its id is empty
    with pytest.raises(rankflavor.InputError, match=rf"^r\.parquet: row {row}: q is missing or empty"):
        ids(pa.chunked_array(chunks), "q", "r.parquet", _where, encode=True, chunks=True)
    # an empty entry no row uses is no error, and no empty id is kept
    unused = pa.chunked_array([_dictionary([1, 1], ["", "b"])])
    kept = ids(unused, "q", "r.parquet", _where, encode=True, chunks=True)
    assert kept.to_pylist() == ["b", "b"] and "" not in kept.dictionary.to_pylist()


def test_numbers_of_one_array_or_chunks_are_float64_with_zero_for_minus_zero() -> None:
    from rankflavor.io.formats.table import numbers

    for column in (pa.array([1.5, -0.0, 2.0]), pa.chunked_array([pa.array([1.5]), pa.array([-0.0, 2.0])]),
                   pa.chunked_array([pa.array([1.5, -0.0], pa.float32()), pa.array([2.0], pa.float32())])):
        got = numbers(column, "score", "r", _where)
        assert got.dtype == np.float64 and got.tolist() == [1.5, 0.0, 2.0] and not np.signbit(got).any()


@pytest.mark.parametrize(("text", "columns", "said"), [
    ("query_id,doc_id\nq,a\n", None, "needs a score column"),
    ("query_id,doc_id,pos\nq,a,2\n", None, "needs a score column"),
    ("query_id,doc_id,score\n", None, "has no results"),
    ("query_id,doc_id,pos\nq,a,2\n", {"rank": "nope"}, "has no column 'nope' \\(--columns rank=...\\)"),
])  # fmt: skip
def test_a_csv_run_without_scores_or_rows_is_refused_by_its_name(tmp_path: Path, text: str,
                                                                  columns: dict[str, str] | None, said: str) -> None:
    path = tmp_path / "run.csv"
    path.write_text(text)
    with pytest.raises(rankflavor.InputError, match=f"^{path}: {said}"):
        rankflavor.read_run(path, columns=columns)


@pytest.mark.parametrize(("header", "columns"), [("rank", None), ("pos", {"rank": "pos"})])
def test_a_csv_run_of_ranks_alone_is_ordered_by_them(tmp_path: Path, header: str, columns: dict[str, str] | None) -> None:
    path = tmp_path / "run.csv"
    path.write_text(f"query_id,doc_id,{header}\nq,a,2\nq,b,1\nq,c,0\n")
    run = rankflavor.read_run(path, columns=columns)
    assert run.ranked_by == "rank" and run.score.tolist() == [-2.0, -1.0, 0.0] and not np.signbit(run.score[2])  # +0, not -0


def test_a_jsonl_run_of_integer_docnos_names_the_lines_of_a_duplicate(tmp_path: Path) -> None:
    # read as integers (no strings), still named by line: row i is line i + 1
    path = tmp_path / "run.jsonl"
    path.write_text("".join(f'{{"query_id": "q1", "doc_id": {d}, "score": {s}}}\n' for d, s in ((7, 3), (8, 2), (7, 1))))
    assert read_run(path).doc_integers is not None
    with pytest.raises(rankflavor.InputError, match=r"run\.jsonl:3: document '7' appears more than once .* \(also at line 1\)"):
        rankflavor.evaluate({"q1": {"7": 1}}, str(path), ["ndcg@10"])


def test_a_parquet_run_of_integer_docnos_and_ranks_is_ordered_by_them(tmp_path: Path) -> None:
    path = tmp_path / "ranks.parquet"
    pq.write_table(pa.table({"query_id": ["q"] * 3, "doc_id": pa.array([30, 10, 20]), "rank": [3, 1, 2]}), path)
    run = read_run(path)
    assert run.doc_integers is not None and run.ranked_by == "rank" and run.score.tolist() == [-3.0, -1.0, -2.0]
    measure = rankflavor.evaluate({"q": {"10": 1}}, str(path), ["RR"])[0]
    assert measure.mean == 1.0 and "order=rank" in str(measure.measure)


def test_a_csv_run_names_the_lines_of_a_duplicate_after_its_header(tmp_path: Path) -> None:
    path = tmp_path / "run.csv"
    path.write_text("query_id,doc_id,score\nq1,d7,3\nq1,d8,2\nq1,d7,1\n")
    with pytest.raises(rankflavor.InputError, match=r"run\.csv:4: document 'd7' appears more than once .* \(also at line 2\)"):
        rankflavor.evaluate({"q1": {"d7": 1}}, str(path), ["ndcg@10"])


def test_a_rank_column_named_by_columns_must_exist_even_beside_scores(tmp_path: Path) -> None:
    # (the Parquet reader asked it already; a CSV run ignored the missing column it was told to read)
    path = tmp_path / "run.csv"
    path.write_text("query_id,doc_id,score\nq,a,2\n")
    with pytest.raises(rankflavor.InputError, match=rf"^{path}: has no column 'nope' \(--columns rank=\.\.\.\)"):
        rankflavor.read_run(path, columns={"rank": "nope"})
    parquet = tmp_path / "run.parquet"
    pq.write_table(pa.table({"query_id": ["q"], "doc_id": ["a"], "score": [2.0]}), parquet)
    with pytest.raises(rankflavor.InputError, match=rf"^{parquet}: has no column 'nope'"):
        rankflavor.read_run(parquet, columns={"rank": "nope"})
    assert rankflavor.read_run(path).ranked_by == "score"  # (no rank named: none needed)


def test_a_quepid_snapshot_run_is_tagged_with_the_snapshot_name(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.csv"
    path.write_text("Snapshot Name,Snapshot Time,Case ID,Query Text,Doc ID,Doc Position\n"
                    "(12/2/26) bm25,2026-12-02T03:00:00Z,8,shoes,17,1\n(12/2/26) bm25,2026-12-02T03:00:00Z,8,shoes,4,2\n")
    run = rankflavor.read_run(path, format="quepid")
    assert run.tag == "(12/2/26) bm25" and run.ranked_by == "rank" and run.doc.to_pylist() == ["17", "4"]
