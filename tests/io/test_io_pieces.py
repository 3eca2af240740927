"""The piece reader (:mod:`rankflavor.io.columnar`): a big uncompressed file parsed in
line-aligned pieces on several threads.

Files here are small, so the tests shrink the thresholds (``columnar.PIECES_BYTES``,
``columnar.PIECE_BYTES``; see :mod:`tests.support.io_cases`) to put them through the piece path, and
compare it with the whole-file reader and the line-by-line reader
(:func:`rankflavor.io.lines.parse_run_lines`): same columns, same tag, same values. What the
read workers find for alignment (docno integers or hashes, query runs, falling scores) is
checked against a brute-force reading, and the piece path is compared with pytrec_eval.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor import align as align_module
from rankflavor.errors import InputError
from rankflavor.io import columnar
from rankflavor.io import docnos as docnos_module
from rankflavor.io import qrels as qrels_module
from rankflavor.io.columns import to_strings
from rankflavor.io.docnos import canonical_mask, hash64
from rankflavor.io.inputs import as_qrels
from rankflavor.io.lines import parse_run_lines
from rankflavor.io.parse import runs_encoded
from rankflavor.io.source import piece_bounds
from rankflavor.io.trec import read_qrels, read_run

from ..support.io_cases import MEASURES, columns, layouts, pieces, qrels_text, run_lines, whole_files

__all__ = ["pieces"]  # a fixture, used by name


# ---------------------------------------------------------------------------------------------
# Pieces read what the whole-file and line-by-line readers read
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("docnos", ["integers", "text", "zero_padded"])
@pytest.mark.parametrize("seed", range(4))
def test_pieces_read_what_the_other_readers_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None, seed: int, docnos: str
) -> None:
    lines = run_lines(seed, docnos=docnos)
    path = tmp_path / "run.txt"
    text = "\n".join(lines) + ("\n" if seed % 2 else "")  # with and without a final newline
    path.write_text(text)
    by_pieces = read_run(path)
    assert isinstance(by_pieces.query, pa.ChunkedArray) and by_pieces.query.num_chunks > 5  # many pieces
    whole_files(monkeypatch)
    whole = read_run(path)
    slow = parse_run_lines(str(path), text.encode())
    assert columns(by_pieces) == columns(whole) == columns(slow)
    assert by_pieces.from_file and by_pieces.lines is None  # row i is line i + 1
    if docnos == "integers":
        assert by_pieces.doc_integers is not None
        assert by_pieces.doc_strings is None  # values only: run.doc above was built from them
        values = [int(d) for d in to_strings(slow.doc)]
        assert np.concatenate(by_pieces.doc_integers).tolist() == values
        assert by_pieces.doc_integer_range == (min(values), max(values))  # gathered piece by piece
    else:
        assert by_pieces.doc_integers is None  # "D7" is no integer; "007" is not canonical
        assert by_pieces.doc_integer_range is None


@pytest.mark.parametrize("docnos", ["integers", "text", "zero_padded"])
def test_pieces_give_the_values_of_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None, docnos: str
) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(qrels_text(3, docnos=docnos))
    run.write_text("\n".join(run_lines(3, docnos=docnos)) + "\n")
    by_pieces = rankflavor.evaluate(str(qrels), str(run), MEASURES)
    assert isinstance(read_qrels(qrels).query, pa.ChunkedArray)  # the qrels went through pieces too
    whole_files(monkeypatch)
    whole = rankflavor.evaluate(str(qrels), str(run), MEASURES)
    assert by_pieces.per_query() == whole.per_query()
    assert by_pieces.counts == whole.counts
    assert by_pieces.provenance["run"]["tag"] == whole.provenance["run"]["tag"] == "tag" + run_lines(3)[-1][-1]


def test_scoring_integer_docnos_never_builds_their_strings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None
) -> None:
    """The reader lets integer docnos' strings go (80 MB on a 7M-line run); alignment, ordering
    and the measures must work on the values alone, or the strings are built again."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(qrels_text(3))
    run.write_text("\n".join(run_lines(3)) + "\n")
    expected = rankflavor.evaluate(str(qrels), str(run), MEASURES).per_query()

    def refuse(parts: tuple[np.ndarray, ...]) -> pa.Array:
        raise AssertionError("the docno strings were built")

    monkeypatch.setattr(docnos_module, "integer_docnos", refuse)
    assert read_run(run).doc_strings is None
    assert rankflavor.evaluate(str(qrels), str(run), MEASURES).per_query() == expected


def test_pieces_find_query_runs_and_whether_scores_rise_inside_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None
) -> None:
    """The reader's query runs and ``scores_descend`` (which spare alignment and ordering a pass
    over the run each) against a brute-force reading, with one score rise moved line by line
    through the file: inside a query, at a piece boundary (the pieces' own checks cannot see
    it), and from one query to the next, where a rise is allowed. Values equal the whole-file
    reader's, which finds neither."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 {d} {d % 3}\n" for q in (1, 2, 3) for d in range(100, 140, 3)))
    on_a_boundary = 0
    for at in range(1, 60):
        rows = [(f"q{1 + i // 20}", 100 + i, 50.0 - (i % 20)) for i in range(60)]
        if at % 20:  # inside a query: make row ``at`` score above the row before it
            rows[at], rows[at - 1] = (rows[at][0], rows[at][1], rows[at - 1][2]), (rows[at - 1][0], rows[at - 1][1], rows[at][2])
        path = tmp_path / f"run{at}.txt"
        path.write_text("".join(f"{q} Q0 {d} {r} {s} t\n" for r, (q, d, s) in enumerate(rows, 1)))
        run = read_run(path)
        chunks = run.query.chunks
        offsets = np.cumsum([0] + [len(c) for c in chunks])
        on_a_boundary += int(at in offsets and at % 20 > 0)
        assert run.query_runs is not None
        found = np.concatenate([r + o for r, o in zip(run.query_runs, offsets, strict=False)])
        q = to_strings(run.query)
        assert found.tolist() == sorted({0, *(i for i in range(1, 60) if q[i] != q[i - 1]), *offsets[:-1].tolist()})
        descend = not any(q[i] == q[i - 1] and run.score[i] > run.score[i - 1] for i in range(1, 60))
        assert run.scores_descend is descend is (at % 20 == 0), at
        by_pieces = rankflavor.evaluate(str(qrels), str(path), [*MEASURES, "P@1"]).per_query()
        with monkeypatch.context() as whole_file:
            whole_files(whole_file)
            assert not read_run(path).scores_descend  # (the whole-file reader does not look)
            assert rankflavor.evaluate(str(qrels), str(path), [*MEASURES, "P@1"]).per_query() == by_pieces
    assert on_a_boundary >= 3  # the rise sat on a piece boundary (about 1 in 7 places)


def test_a_run_needs_docno_strings_or_values() -> None:
    with pytest.raises(ValueError, match="doc_strings"):
        rankflavor.io.tables.Run(pa.array(["q"]), None, np.array([1.0]))


def test_one_piece_with_a_leading_zero_docno_turns_off_integer_docnos(tmp_path: Path, pieces: None) -> None:
    """"007" in a late piece only: the other pieces' integers must not be used, or "007" and "7"
    would become one document."""
    lines = run_lines(5)
    lines[-3] = lines[-3].replace(" Q0 ", " Q0 00", 1)  # e.g. "q3 Q0 00123 ..."
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    run = read_run(path)
    assert run.doc_integers is None
    assert to_strings(run.doc)[-3].startswith("00")
    qrels = tmp_path / "qrels.txt"
    doc = lines[-3].split()[2]
    qrels.write_text(f"{lines[-3].split()[0]} 0 {doc.lstrip('0')} 1\n")  # judges "123", not "00123"
    res = rankflavor.evaluate(str(qrels), str(path), ["num_rel_ret"], preset="trec_eval")
    retrieved_plain = any(ln.split()[0] == lines[-3].split()[0] and ln.split()[2] == doc.lstrip("0") for ln in lines)
    assert res["num_rel_ret"].mean == float(retrieved_plain)


def test_a_duplicate_across_pieces_is_found(tmp_path: Path, pieces: None) -> None:
    lines = run_lines(13)
    first = lines[2].split()
    lines.append(f"{first[0]} Q0 {first[2]} 99 -1 tagx")  # the same (query, doc), pieces later
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(qrels_text(13))
    with pytest.raises(InputError) as info:
        rankflavor.evaluate(str(qrels), str(path), "ndcg@10")
    assert info.value.line == len(lines)
    assert "line 3" in str(info.value)


def test_aligning_twice_leaves_the_readers_integers_alone(tmp_path: Path, pieces: None) -> None:
    qrels, path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(qrels_text(17))
    path.write_text("\n".join(run_lines(17)) + "\n")
    run = read_run(path)
    assert run.doc_integers is not None
    before = [p.copy() for p in run.doc_integers]
    q = read_qrels(qrels)
    first = align_module.align(q, run)
    second = align_module.align(q, run, duplicates="first")
    assert all(np.array_equal(a, b) for a, b in zip(before, run.doc_integers, strict=True))
    np.testing.assert_array_equal(first.run_doc, second.run_doc)
    np.testing.assert_array_equal(first.judged_row, second.judged_row)


@pytest.mark.parametrize("duplicates", ["error", "first", "best"])
def test_a_text_duplicate_across_pieces(tmp_path: Path, pieces: None, monkeypatch: pytest.MonkeyPatch,
                                        duplicates: str) -> None:
    lines = run_lines(19, docnos="text")
    first = lines[2].split()
    lines.append(f"{first[0]} Q0 {first[2]} 99 50 tagx")  # the same (query, doc), pieces later, higher score
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(qrels_text(19, docnos="text") + f"{first[0]} 0 {first[2]} 2\n")
    if duplicates == "error":
        with pytest.raises(InputError) as info:
            rankflavor.evaluate(str(qrels), str(path), "ndcg@10")
        assert info.value.line == len(lines)
        assert "line 3" in str(info.value)
        return
    by_pieces = rankflavor.evaluate(str(qrels), str(path), MEASURES, duplicates=duplicates)
    assert by_pieces.counts.run_duplicates_resolved == 1
    whole_files(monkeypatch)
    assert by_pieces.per_query() == rankflavor.evaluate(str(qrels), str(path), MEASURES, duplicates=duplicates).per_query()


def test_pieces_mixing_integer_and_text_docnos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None) -> None:
    lines = run_lines(23)  # integer docnos ...
    lines[-5:] = [ln.replace(" Q0 ", " Q0 t", 1) for ln in lines[-5:]]  # ... but text in the last piece
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    run = read_run(path)
    assert run.doc_integers is None and run.doc_hashes is not None
    assert run.doc.num_chunks > 2  # integer pieces, then a text one: the integers became hashes
    np.testing.assert_array_equal(np.concatenate(run.doc_hashes), hash64(run.doc))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(qrels_text(23))
    by_pieces = rankflavor.evaluate(str(qrels), str(path), MEASURES)
    whole_files(monkeypatch)
    assert by_pieces.per_query() == rankflavor.evaluate(str(qrels), str(path), MEASURES).per_query()


@pytest.mark.parametrize("shift", [0, 10**15])
def test_integer_docnos_far_from_zero_code_like_small_ones(tmp_path: Path, pieces: None, shift: int) -> None:
    """Docnos near zero are their own codes; docnos far above their span are shifted down:
    both give the values of the line reader."""
    rng = np.random.default_rng(5)
    lines, qrels = [], []
    for q in range(6):
        docs = rng.choice(300, 40, replace=False) + 1 + shift
        lines += [f"q{q} Q0 {d} {r} {s} t" for r, (d, s) in enumerate(zip(docs, rng.integers(0, 5, 40), strict=True), 1)]
        qrels += [f"q{q} 0 {d} {rng.integers(0, 3)}" for d in rng.choice(300, 30, replace=False) + 1 + shift]
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text("\n".join(lines) + "\n")
    qrels_path.write_text("\n".join(qrels) + "\n")
    assert read_run(run_path).doc_integers is not None
    got = rankflavor.evaluate(str(qrels_path), str(run_path), MEASURES).per_query()
    slow = parse_run_lines(str(run_path), run_path.read_bytes())
    want = rankflavor.evaluate(as_qrels(str(qrels_path)), slow, MEASURES).per_query()
    assert got == want


# ---------------------------------------------------------------------------------------------
# Piece boundaries, the rows of pieces finishing out of order, the reservation
# ---------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(min_size=0, max_size=3000), piece=st.integers(1, 400))
def test_piece_bounds_cover_the_file_at_line_ends(tmp_path: Path, data: bytes, piece: int) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(data.replace(b"\x00", b"\n"))  # plenty of newlines
    with open(path, "rb") as fh:
        bounds = piece_bounds(fh.fileno(), len(data), piece)
    raw = path.read_bytes()
    assert bounds[0][0] == 0 and bounds[-1][1] == len(raw)
    for (_, end), (start, _) in itertools.pairwise(bounds):
        assert end == start and raw[end - 1 : end] == b"\n"
    assert all(end > start for start, end in bounds) or len(raw) == 0


def test_piece_bounds_with_a_line_longer_than_the_probe(tmp_path: Path) -> None:
    raw = b"a\n" + b"x" * 200_000 + b"\nb\nc\n"
    path = tmp_path / "f.bin"
    path.write_bytes(raw)
    with open(path, "rb") as fh:
        bounds = piece_bounds(fh.fileno(), len(raw), 10)
    assert bounds == [(0, 200_003), (200_003, 200_007)]  # the rest is no longer than a piece


def test_piece_rows_places_pieces_finishing_out_of_order() -> None:
    """Workers finish in reverse order; each piece's rows still land after the earlier pieces'."""
    import threading

    sizes = [3, 0, 5, 2, 4]
    rows = columnar.PieceRows(len(sizes), capacity=100)
    values = [np.arange(n, dtype=np.int64) + 10 * k for k, n in enumerate(sizes)]

    def work(k: int) -> None:
        rows.count(k, sizes[k])
        rows.place(k, {"v": values[k], "f": values[k].astype(np.float64)})

    threads = [threading.Thread(target=work, args=(k,)) for k in reversed(range(len(sizes)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    placed = rows.arrays()
    np.testing.assert_array_equal(placed["v"], np.concatenate(values))
    assert placed["f"].dtype == np.float64 and len(placed["f"]) == sum(sizes)


@pytest.mark.parametrize("docnos", ["integers", "text"])
@pytest.mark.parametrize("fail_on", [1, 2])
def test_pieces_without_a_reservation_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None, docnos: str, fail_on: int
) -> None:
    """Under strict overcommit reserving room for every row the file could hold may fail: each
    piece then keeps its own arrays, and the values are those of the reserved path. The
    reservation fails on the first or on the second array."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(qrels_text(4, docnos=docnos))
    run.write_text("\n".join(run_lines(4, docnos=docnos)) + "\n")
    reserved = read_run(run)
    want = rankflavor.evaluate(str(qrels), str(run), MEASURES)
    calls = []

    def refuse(rows: int, dtype: np.dtype) -> np.ndarray:
        calls.append(rows)
        if len(calls) >= fail_on:
            raise MemoryError(f"cannot reserve {rows} rows")
        return np.empty(rows, dtype=dtype)

    monkeypatch.setattr(columnar, "reserve", refuse)
    kept = read_run(run)
    assert calls and isinstance(kept.query, pa.ChunkedArray) and kept.query.num_chunks > 5  # read in pieces
    assert columns(kept) == columns(reserved)
    assert (kept.doc_integers is None) == (reserved.doc_integers is None)
    got = rankflavor.evaluate(str(qrels), str(run), MEASURES)
    assert got.per_query() == want.per_query() and got.counts == want.counts


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["q1", "q2", "q10", "é", "q1 "[:2]]), min_size=0, max_size=40))
def test_runs_encoded_decodes_to_the_column(values: list[str]) -> None:
    """Encoding a piece's query ids from their runs: ids that come back after another one share
    one dictionary entry, and the array decodes to the column as read."""
    encoded = runs_encoded(pa.array(values))
    names = encoded.dictionary.to_pylist()
    assert len(names) == len(set(names))
    assert encoded.dictionary_decode().to_pylist() == values
    assert encoded.indices.type == pa.int32()


def test_a_read_error_in_a_piece_leaves_the_file_to_the_line_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None
) -> None:
    """An OSError while reading pieces is no traceback: the line path reads the file itself
    (and names the file if it cannot)."""
    lines = run_lines(29)
    path = tmp_path / "run.txt"
    text = "\n".join(lines) + "\n"
    path.write_text(text)
    real_pread = os.pread
    calls = {"n": 0}

    def failing_pread(fd: int, n: int, offset: int) -> bytes:
        calls["n"] += 1
        if offset > 1000:
            raise OSError(5, "Input/output error")
        return real_pread(fd, n, offset)

    monkeypatch.setattr(os, "pread", failing_pread)
    run = read_run(path)
    monkeypatch.undo()
    assert calls["n"] > 0
    assert columns(run) == columns(parse_run_lines(str(path), text.encode()))


# ---------------------------------------------------------------------------------------------
# Reader threads
# ---------------------------------------------------------------------------------------------


def test_qrels_reader_finds_canonical_docnos_on_its_own_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the qrels reader's thread finds equals canonical_mask of the docnos, and an error
    there surfaces where alignment reads it, not lost on the thread."""
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 7 1\nq1 0 007 2\nq1 0 D3 0\nq2 0 12 1\n")
    qrels = read_qrels(path)
    assert qrels.doc_canonical is not None
    ok, values = qrels.doc_canonical.result()
    want_ok, want_values = canonical_mask(qrels.doc)
    assert ok.tolist() == want_ok.tolist() == [True, False, False, True]
    assert values[ok].tolist() == want_values[want_ok].tolist() == [7, 12]

    def broken(values: object) -> object:
        raise RuntimeError("mask failed")

    monkeypatch.setattr(qrels_module, "canonical_mask", broken)
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 7 1 2.0 t\n")
    with pytest.raises(RuntimeError, match="mask failed"):
        rankflavor.evaluate(str(path), str(run), "ndcg@10")


def _evaluate_in_child(paths: tuple[str, str]) -> float:
    return float(rankflavor.evaluate(paths[0], paths[1], ["ndcg_cut.10"], preset="trec_eval")[0].mean)


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(), reason="needs fork")
def test_evaluation_works_in_a_process_forked_after_one(tmp_path: Path) -> None:
    """Worker threads are per call: a module-level pool would be inherited by a forked child
    without its thread, and the child's evaluation would wait on it forever (it did)."""
    import multiprocessing

    qrels, run = layouts(tmp_path)["plain"]
    paths = (str(qrels), str(run))
    here = _evaluate_in_child(paths)  # the parent evaluates first, starting its workers
    with multiprocessing.get_context("fork").Pool(1) as pool:
        there = pool.map_async(_evaluate_in_child, [paths]).get(timeout=120)
    assert there == [here]


# ---------------------------------------------------------------------------------------------
# The piece path (integer and hashed docnos) against pytrec_eval
# ---------------------------------------------------------------------------------------------


def _write_trec(path: Path, table: dict, run: bool) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for q, docs in table.items():
            for i, (d, v) in enumerate(docs.items(), 1):
                fh.write(f"{q} Q0 {d} {i} {v!r} tag\n" if run else f"{q} 0 {d} {v}\n")


@pytest.mark.parametrize("seed", range(3))
def test_random_text_docnos_in_pieces_match_pytrec_eval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Random ids (multibyte characters, '#' inside docnos, ties, negative grades) written as
    TREC files and read in 4 kB pieces: hashed docno codes give pytrec_eval's every value."""
    from ..presets.test_pytrec_eval_diff import compare, random_collection, run_both

    monkeypatch.setattr(columnar, "PIECES_BYTES", 0)
    monkeypatch.setattr(columnar, "PIECE_BYTES", 4096)
    qrels, run = random_collection(np.random.default_rng(777 + seed), 300)
    # A line starting with '#' is a comment for rankflavor (trec_eval 10), a query for pytrec_eval.
    qrels = {q: d for q, d in qrels.items() if not q.startswith("#")}
    run = {q: d for q, d in run.items() if not q.startswith("#")}
    q_path, r_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    _write_trec(q_path, qrels, run=False)
    _write_trec(r_path, run, run=True)
    assert read_run(r_path).doc_hashes is not None  # the hashed path, in pieces
    for rel, judged_only in ((1, False), (2, True)):
        results, expected = run_both(str(q_path), str(r_path), qrels, run, rel, judged_only)
        compared, _ = compare(results, expected)
        assert compared == len(expected) * len(results)


@pytest.mark.parametrize(
    ("qrels_name", "run_name"),
    [("qrels.beir-v1.0.0-trec-covid.test.txt", "rankllm.covid.bm25.top100.run"),
     ("qrels.dl19-passage.txt", "rankllm.dl19.bm25.top100.run")],
)
def test_real_runs_in_pieces_match_pytrec_eval(monkeypatch: pytest.MonkeyPatch, qrels_name: str, run_name: str) -> None:
    from ..conftest import shared_path
    from ..presets.test_pytrec_eval_diff import _read_trec, compare, run_both

    qrels_path, run_path = shared_path("qrels", qrels_name), shared_path("runs", run_name)
    monkeypatch.setattr(columnar, "PIECES_BYTES", 0)
    monkeypatch.setattr(columnar, "PIECE_BYTES", 16 << 10)
    run = read_run(run_path)
    assert isinstance(run.query, pa.ChunkedArray) and run.query.num_chunks > 5
    integers = "covid" not in run_name  # covid: text docnos; dl19: integers, kept as values only
    assert (run.doc_hashes is None) == integers and (run.doc_strings is None) == integers
    assert run.doc.to_pylist() == [line.split()[2] for line in run_path.read_text().splitlines()]
    results, expected = run_both(str(qrels_path), str(run_path), _read_trec(qrels_path, 3, int),
                                 _read_trec(run_path, 4, float), 1, False)
    compared, _ = compare(results, expected)
    assert compared == len(expected) * len(results) and len(expected) > 40
