"""The piece reader: a big uncompressed file parsed in line-aligned pieces on several threads.

Files here are small, so the tests shrink the thresholds (``_PIECES_BYTES``, ``_PIECE_BYTES``)
to put them through the piece path, and compare it with the whole-file reader and the
line-by-line reader: same columns, same tag, same values, same errors naming the same lines.
Every way a piece can need the line path (other blanks, comments, blank lines, a bad line) is
placed in a middle piece, where only the piece that holds it can see it.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor import align as align_module
from rankflavor import docnos as docnos_module
from rankflavor.align import docs as align_docs
from rankflavor.align import sizes as align_sizes
from rankflavor.align import stage as align_stage
from rankflavor.align.duplicates import pairs_repeat, resolve_duplicates
from rankflavor.align.keys import sort_keys
from rankflavor.align.lookups import bitset, judged_doc_rows, lookup
from rankflavor.align.queries import coded_queries, query_names, row_codes
from rankflavor.columns import to_strings
from rankflavor.docnos import canonical_integers, canonical_mask, hash64
from rankflavor.errors import InputError
from rankflavor.io import trec
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.trec import _piece_bounds, _slow_run, read_qrels, read_run
from rankflavor.kernels import block_starts
from rankflavor.threads import SharedWork

MEASURES = ["ndcg@10", "ndcg", "AP", "P@5", "R@20", "RR", "bpref", "num_ret", "ndcg@10[ties=averaged]",
            "AP[ties=optimistic]", "judged@10"]  # fmt: skip


@pytest.fixture
def pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file goes through the piece reader, in pieces of about 300 bytes (a few lines)."""
    monkeypatch.setattr(trec, "_PIECES_BYTES", 0)
    monkeypatch.setattr(trec, "_PIECE_BYTES", 300)


def _whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trec, "_PIECES_BYTES", 1 << 40)


def _run_lines(seed: int, n_queries: int = 12, depth: int = 30, docnos: str = "integers") -> list[str]:
    rng = np.random.default_rng(seed)
    lines = []
    for q in rng.permutation(n_queries):
        scores = np.sort(rng.integers(0, 9, depth))[::-1]  # many ties
        docs = rng.choice(400, depth, replace=False)
        for rank, (d, s) in enumerate(zip(docs, scores, strict=True), 1):
            doc = str(d + 1000) if docnos == "integers" else f"D{d}" if docnos == "text" else f"{d:03d}"
            lines.append(f"q{q} Q0 {doc} {rank} {s} tag{q}")
    return lines


def _qrels_text(seed: int, n_queries: int = 12, docnos: str = "integers") -> str:
    rng = np.random.default_rng(seed + 1000)
    rows = []
    for q in range(n_queries + 2):  # two judged queries the run never answers
        for d in rng.choice(400, 40, replace=False):
            doc = str(d + 1000) if docnos == "integers" else f"D{d}" if docnos == "text" else f"{d:03d}"
            rows.append(f"q{q} 0 {doc} {int(rng.integers(0, 4))}")
    return "\n".join(rows) + "\n"


def _columns(run: rankflavor.tables.Run) -> tuple[list[str], list[str], list[float], str | None]:
    return to_strings(run.query), to_strings(run.doc), run.score.tolist(), run.tag


@pytest.mark.parametrize("docnos", ["integers", "text", "zero_padded"])
@pytest.mark.parametrize("seed", range(4))
def test_pieces_read_what_the_other_readers_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None, seed: int, docnos: str
) -> None:
    lines = _run_lines(seed, docnos=docnos)
    path = tmp_path / "run.txt"
    text = "\n".join(lines) + ("\n" if seed % 2 else "")  # with and without a final newline
    path.write_text(text)
    by_pieces = read_run(path)
    assert isinstance(by_pieces.query, pa.ChunkedArray) and by_pieces.query.num_chunks > 5  # many pieces
    _whole(monkeypatch)
    whole = read_run(path)
    slow = _slow_run(str(path), text.encode())
    assert _columns(by_pieces) == _columns(whole) == _columns(slow)
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
    qrels.write_text(_qrels_text(3, docnos=docnos))
    run.write_text("\n".join(_run_lines(3, docnos=docnos)) + "\n")
    by_pieces = rankflavor.evaluate(str(qrels), str(run), MEASURES)
    assert isinstance(read_qrels(qrels).query, pa.ChunkedArray)  # the qrels went through pieces too
    _whole(monkeypatch)
    whole = rankflavor.evaluate(str(qrels), str(run), MEASURES)
    assert by_pieces.per_query() == whole.per_query()
    assert by_pieces.counts == whole.counts
    assert by_pieces.provenance["run"]["tag"] == whole.provenance["run"]["tag"] == "tag" + _run_lines(3)[-1][-1]


def test_scoring_integer_docnos_never_builds_their_strings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None
) -> None:
    """The reader lets integer docnos' strings go (80 MB on a 7M-line run); alignment, ordering
    and the measures must work on the values alone, or the strings are built again."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(_qrels_text(3))
    run.write_text("\n".join(_run_lines(3)) + "\n")
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
            _whole(whole_file)
            assert not read_run(path).scores_descend  # (the whole-file reader does not look)
            assert rankflavor.evaluate(str(qrels), str(path), [*MEASURES, "P@1"]).per_query() == by_pieces
    assert on_a_boundary >= 3  # the rise sat on a piece boundary (about 1 in 7 places)


def test_a_run_needs_docno_strings_or_values() -> None:
    with pytest.raises(ValueError, match="doc_strings"):
        rankflavor.tables.Run(pa.array(["q"]), None, np.array([1.0]))


def test_one_piece_with_a_leading_zero_docno_turns_off_integer_docnos(tmp_path: Path, pieces: None) -> None:
    """"007" in a late piece only: the other pieces' integers must not be used, or "007" and "7"
    would become one document."""
    lines = _run_lines(5)
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


@pytest.mark.parametrize(
    ("name", "mutate", "line_path_counts"),
    [
        # Inside the docno, the field count stays 6 for pyarrow; trec_eval splits there.
        ("tab", lambda ln: ln.replace(" Q0 ", " Q0 x\t", 1), None),
        ("vertical_tab", lambda ln: ln.replace(" Q0 ", " Q0 x\v", 1), None),
        ("form_feed", lambda ln: ln.replace(" Q0 ", " Q0 x\f", 1), None),
        ("lone_cr", lambda ln: ln.replace(" Q0 ", " Q0 x\r", 1), None),
        ("double_space", lambda ln: ln.replace(" ", "  ", 1), None),
        ("comment", lambda ln: "#q Q0 x 1 1 commented\n" + ln, (1, 0)),  # six fields, a '#' query
        ("blank_line", lambda ln: "\n" + ln, (0, 1)),
    ],
)
def test_a_middle_piece_that_needs_the_line_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None, name: str, mutate, line_path_counts
) -> None:
    lines = _run_lines(7)
    middle = len(lines) // 2
    lines[middle] = mutate(lines[middle])
    path = tmp_path / "run.txt"
    text = "\n".join(lines) + "\n"
    path.write_text(text)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(_qrels_text(7))
    run = read_run(path)
    slow = _slow_run(str(path), text.encode())
    assert _columns(run) == _columns(slow)
    if line_path_counts is not None:
        assert (run.comments, run.blank_lines) == line_path_counts
    by_pieces = rankflavor.evaluate(str(qrels), str(path), MEASURES)
    _whole(monkeypatch)
    assert by_pieces.per_query() == rankflavor.evaluate(str(qrels), str(path), MEASURES).per_query()


def test_crlf_lines_stay_on_the_piece_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None) -> None:
    lines = _run_lines(9)
    path = tmp_path / "run.txt"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    run = read_run(path)
    assert isinstance(run.query, pa.ChunkedArray)  # parsed in pieces, not by the line path
    _whole(monkeypatch)
    assert _columns(run) == _columns(read_run(path))


@pytest.mark.parametrize("where", ["second_line", "middle", "last_line"])
def test_a_bad_line_in_any_piece_is_named(tmp_path: Path, pieces: None, where: str) -> None:
    lines = _run_lines(11)
    index = {"second_line": 1, "middle": len(lines) // 2, "last_line": len(lines) - 1}[where]
    lines[index] = " ".join(lines[index].split()[:5])  # five fields
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        read_run(path)
    assert info.value.line == index + 1
    assert "expected 6 whitespace-separated fields" in str(info.value)


def test_a_duplicate_across_pieces_is_found(tmp_path: Path, pieces: None) -> None:
    lines = _run_lines(13)
    first = lines[2].split()
    lines.append(f"{first[0]} Q0 {first[2]} 99 -1 tagx")  # the same (query, doc), pieces later
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(_qrels_text(13))
    with pytest.raises(InputError) as info:
        rankflavor.evaluate(str(qrels), str(path), "ndcg@10")
    assert info.value.line == len(lines)
    assert "line 3" in str(info.value)


def test_aligning_twice_leaves_the_readers_integers_alone(tmp_path: Path, pieces: None) -> None:
    qrels, path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(_qrels_text(17))
    path.write_text("\n".join(_run_lines(17)) + "\n")
    run = read_run(path)
    assert run.doc_integers is not None
    before = [p.copy() for p in run.doc_integers]
    q = read_qrels(qrels)
    first = align_module.align(q, run)
    second = align_module.align(q, run, duplicates="first")
    assert all(np.array_equal(a, b) for a, b in zip(before, run.doc_integers, strict=True))
    np.testing.assert_array_equal(first.run_doc, second.run_doc)
    np.testing.assert_array_equal(first.judged_row, second.judged_row)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(min_size=0, max_size=3000), piece=st.integers(1, 400))
def test_piece_bounds_cover_the_file_at_line_ends(tmp_path: Path, data: bytes, piece: int) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(data.replace(b"\x00", b"\n"))  # plenty of newlines
    with open(path, "rb") as fh:
        bounds = _piece_bounds(fh.fileno(), len(data), piece)
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
        bounds = _piece_bounds(fh.fileno(), len(raw), 10)
    assert bounds == [(0, 200_003), (200_003, 200_007)]  # the rest is no longer than a piece


# ---------------------------------------------------------------------------------------------
# Alignment helpers the piece path leans on
# ---------------------------------------------------------------------------------------------


def test_query_codes_from_chunks_with_their_own_dictionaries() -> None:
    """Chunks with different dictionaries, an unused dictionary entry, ids only in the qrels:
    codes follow byte order of the ids and unused entries are no queries."""
    a = pa.DictionaryArray.from_arrays(pa.array([1, 0, 1], type=pa.int32()), pa.array(["q2", "q10", "unused"]))
    a = a.slice(0, 3)
    b = pa.array(["q10", "é", "q10"]).dictionary_encode()
    run_query = pa.chunked_array([a, b])
    qrels_query = pa.array(["q3", "q2"])
    rq, jq, ids, run_rows, qrels_rows, starts = coded_queries(*query_names(run_query, qrels_query))
    assert starts is None  # q10 comes back after q2
    assert ids == sorted(["q10", "q2", "q3", "é"])
    assert run_rows.tolist() == [np.sum(rq == c) for c in range(len(ids))]
    assert [ids[c] for c in rq] == ["q10", "q2", "q10", "q10", "é", "q10"]
    assert [ids[c] for c in jq] == ["q3", "q2"]
    assert qrels_rows.tolist() == [np.sum(jq == c) for c in range(len(ids))]


@pytest.mark.parametrize("n_parts", [0, 1, 2, 3, 6])
def test_codes_of_dictionary_parts(n_parts: int) -> None:
    """Query codes of dictionary parts (none, one, several; unused dictionary entries) and the
    rows per code."""
    rng = np.random.default_rng(n_parts)
    names = ["a", "b", "c", "d", "e"]
    parts = [(rng.integers(0, 3, int(rng.integers(0, 50))).astype(np.int32), list(rng.permutation(names)[:4]))
             for _ in range(n_parts)]  # fmt: skip
    code = {n: i for i, n in enumerate(names)}
    want = [code[p_names[i]] for idx, p_names in parts for i in idx.tolist()]
    got, counts, starts = row_codes(parts, code)
    assert got.tolist() == want
    assert counts.tolist() == np.bincount(np.array(want, dtype=np.int64), minlength=len(names)).tolist()
    expected = block_starts(np.array(want, dtype=np.int64))
    assert (starts is None) == (expected is None)
    if starts is not None and expected is not None:
        assert starts.tolist() == expected.tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcde"), min_size=0, max_size=12), min_size=0, max_size=5),
       st.booleans())
def test_query_blocks_across_parts(parts_ids: list[list[str]], grouped: bool) -> None:
    """The first row of each query's block, found run by run, equals a scan of every row's code:
    a block may go on from one part into the next (a query cut by a piece boundary), and a query
    that comes back after another one means no blocks. ``grouped`` sorts the ids so that blocks
    are common."""
    if grouped:
        flat = sorted(i for ids in parts_ids for i in ids)
        cuts = np.cumsum([0] + [len(ids) for ids in parts_ids])
        parts_ids = [flat[a:b] for a, b in itertools.pairwise(cuts.tolist())]
    code = {n: i for i, n in enumerate("abcde")}
    parts = []
    for ids in parts_ids:
        names = sorted(set(ids), reverse=True)  # a dictionary per part, in an order of its own
        parts.append((np.array([names.index(i) for i in ids], dtype=np.int32), names))
    want = np.array([code[i] for ids in parts_ids for i in ids], dtype=np.int64)
    got, counts, starts = row_codes(parts, code)
    assert got.tolist() == want.tolist()
    assert counts.tolist() == np.bincount(want, minlength=5).tolist()
    expected = block_starts(want)
    assert (starts is None) == (expected is None)
    if starts is not None and expected is not None:
        assert starts.tolist() == expected.tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["q1", "q2", "q10", "é", "q1 "[:2]]), min_size=0, max_size=40))
def test_runs_encoded_decodes_to_the_column(values: list[str]) -> None:
    """Encoding a piece's query ids from their runs: ids that come back after another one share
    one dictionary entry, and the array decodes to the column as read."""
    encoded = trec._runs_encoded(pa.array(values))
    names = encoded.dictionary.to_pylist()
    assert len(names) == len(set(names))
    assert encoded.dictionary_decode().to_pylist() == values
    assert encoded.indices.type == pa.int32()


@settings(max_examples=200, deadline=None)
@given(
    members=st.lists(st.integers(0, 3000), max_size=50),
    codes=st.lists(st.integers(0, 6000), max_size=300),
    block=st.sampled_from([1, 3, 8, 1 << 18]),
)
def test_bitset_lookups_match_isin(members: list[int], codes: list[int], block: int) -> None:
    """The judged-doc bitset looked up per code, and the judged rows found block by block; codes
    past the span of the members (most of a run's docnos) included, as alignment makes it."""
    span = max(members, default=-1) + 1
    old = align_sizes.BLOCK_ROWS
    align_sizes.BLOCK_ROWS = block
    try:
        got = lookup(bitset(np.array(members, dtype=np.int64), span), np.array(codes, dtype=np.int64))
        rows = judged_doc_rows(np.array(codes, dtype=np.int64), np.array(members, dtype=np.int64))
    finally:
        align_sizes.BLOCK_ROWS = old
    assert got.dtype == np.bool_
    assert got.tolist() == np.isin(codes, members).tolist()
    assert rows is not None and rows.tolist() == np.flatnonzero(np.isin(codes, members)).tolist()


@settings(max_examples=300, deadline=None)
@given(values=st.one_of(st.lists(st.text(alphabet="0123456789+-. e٣", max_size=20), max_size=10),
                        st.lists(st.text(alphabet="0123456789", max_size=20), max_size=10)))  # (the cast's digits-only path)
def test_canonical_mask_by_bytes_and_by_cast_agree(values: list[str]) -> None:
    canonical = [v.isascii() and v.isdigit() and 1 <= len(v) <= 18 and (v[0] != "0" or len(v) == 1) for v in values]
    full = pa.array(["x", *values], type=pa.string())
    for arr in (pa.array(values, type=pa.string()), full.slice(1)):  # offsets from 0, and not
        by_bytes = canonical_mask(arr, cast=False)
        by_cast = canonical_mask(arr, cast=True)
        assert by_bytes[0].tolist() == by_cast[0].tolist() == canonical
        assert by_bytes[1].tolist() == by_cast[1].tolist()
        whole = canonical_integers(arr, cast=False)
        assert (whole is not None) == all(canonical)
        expected = [int(v) if ok else 0 for v, ok in zip(values, canonical, strict=True)]
        assert by_bytes[1].tolist() == expected
        if whole is not None:
            assert whole.tolist() == expected


# ---------------------------------------------------------------------------------------------
# Text docnos of a big run: codes from hashes, exact where it matters
# ---------------------------------------------------------------------------------------------


def _weak(kind: str):  # type: ignore[no-untyped-def]
    """Hash functions that collide on purpose, to reach every verification."""
    real = docnos_module.hash64

    def weak(values):  # type: ignore[no-untyped-def]
        h = real(values)
        if kind == "constant":
            return np.zeros_like(h)
        return h % np.uint64(3)  # three values: collisions everywhere, within queries too

    return weak


@pytest.fixture(params=["one thread", "two threads"])
def threads(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Small runs are aligned on one thread; past align.sizes.PARALLEL_ROWS rows (here: any run),
    the hashed docno codes are matched half on each of two threads."""
    if request.param == "two threads":
        monkeypatch.setattr(align_sizes, "PARALLEL_ROWS", 0)
    return str(request.param)


@pytest.mark.parametrize("hash_kind", ["real", "mod3", "constant"])
@pytest.mark.parametrize("seed", range(3))
def test_text_docnos_by_hash_equal_the_exact_codes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None, seed: int, hash_kind: str, threads: str
) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(_qrels_text(seed, docnos="text"))
    run.write_text("\n".join(_run_lines(seed, docnos="text")) + "\n")
    if hash_kind != "real":
        weak = _weak(hash_kind)
        monkeypatch.setattr(docnos_module, "hash64", weak)
        monkeypatch.setattr(align_docs, "hash64", weak)
        monkeypatch.setattr(trec, "hash64", weak)
    assert read_run(run).doc_hashes is not None
    hashed = rankflavor.evaluate(str(qrels), str(run), MEASURES)
    monkeypatch.undo()
    _whole(monkeypatch)  # small whole-file runs are dictionary-encoded: the exact reference
    assert read_run(run).doc_hashes is None
    exact = rankflavor.evaluate(str(qrels), str(run), MEASURES)
    assert hashed.per_query() == exact.per_query()
    assert hashed.counts == exact.counts


def _b_hashes_like_a(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    real = docnos_module.hash64

    def b_like_a(values):  # type: ignore[no-untyped-def]
        h = real(values)
        h[np.array([v == "b" for v in to_strings(values)], dtype=bool)] = real(pa.array(["a"]))[0]
        return h

    monkeypatch.setattr(align_docs, "hash64", b_like_a)
    return b_like_a


def test_a_hash_collision_with_a_judged_docno_does_not_join(monkeypatch: pytest.MonkeyPatch, threads: str) -> None:
    """"b" hashes like the judged "a" (and nothing else collides, so no restart hides it): only
    the string comparison keeps "b" from taking "a"'s grade."""
    b_like_a = _b_hashes_like_a(monkeypatch)
    q = as_qrels({"q1": {"a": 3}})
    r = as_run({"q1": {"b": 2.0, "c": 1.0}, "q2": {"a": 1.0}})
    r = dataclasses.replace(r, doc_hashes=(b_like_a(r.doc),))
    aligned = align_module.align(q, r)
    assert len(aligned.judged_row) == 0
    assert len(set(aligned.run_doc[:2].tolist())) == 2
    assert rankflavor.evaluate(q, r, "num_rel_ret", preset="trec_eval")["num_rel_ret"].mean == 0.0


def test_judged_docnos_sharing_a_hash_fall_back_to_exact_codes(monkeypatch: pytest.MonkeyPatch, threads: str) -> None:
    b_like_a = _b_hashes_like_a(monkeypatch)
    q = as_qrels({"q1": {"a": 3}, "q2": {"b": 1}})
    r = as_run({"q1": {"b": 2.0, "c": 1.0}, "q2": {"a": 1.0, "b": 0.5}})
    r = dataclasses.replace(r, doc_hashes=(b_like_a(r.doc),))
    aligned = align_module.align(q, r)
    assert [int(x) for x in aligned.judged_row] == [3]  # q2's "b" only
    res = rankflavor.evaluate(q, r, ["num_rel_ret"], preset="trec_eval")
    assert res["num_rel_ret"].per_query() == {"q1": 0.0, "q2": 1.0}


@pytest.mark.parametrize("duplicates", ["error", "first", "best"])
def test_a_text_duplicate_across_pieces(tmp_path: Path, pieces: None, monkeypatch: pytest.MonkeyPatch,
                                        duplicates: str) -> None:
    lines = _run_lines(19, docnos="text")
    first = lines[2].split()
    lines.append(f"{first[0]} Q0 {first[2]} 99 50 tagx")  # the same (query, doc), pieces later, higher score
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(_qrels_text(19, docnos="text") + f"{first[0]} 0 {first[2]} 2\n")
    if duplicates == "error":
        with pytest.raises(InputError) as info:
            rankflavor.evaluate(str(qrels), str(path), "ndcg@10")
        assert info.value.line == len(lines)
        assert "line 3" in str(info.value)
        return
    by_pieces = rankflavor.evaluate(str(qrels), str(path), MEASURES, duplicates=duplicates)
    assert by_pieces.counts.run_duplicates_resolved == 1
    _whole(monkeypatch)
    assert by_pieces.per_query() == rankflavor.evaluate(str(qrels), str(path), MEASURES, duplicates=duplicates).per_query()


def test_pieces_mixing_integer_and_text_docnos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None) -> None:
    lines = _run_lines(23)  # integer docnos ...
    lines[-5:] = [ln.replace(" Q0 ", " Q0 t", 1) for ln in lines[-5:]]  # ... but text in the last piece
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    run = read_run(path)
    assert run.doc_integers is None and run.doc_hashes is not None
    assert run.doc.num_chunks > 2  # integer pieces, then a text one: the integers became hashes
    np.testing.assert_array_equal(np.concatenate(run.doc_hashes), hash64(run.doc))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(_qrels_text(23))
    by_pieces = rankflavor.evaluate(str(qrels), str(path), MEASURES)
    _whole(monkeypatch)
    assert by_pieces.per_query() == rankflavor.evaluate(str(qrels), str(path), MEASURES).per_query()


def test_text_docnos_are_never_cast(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failing cast parses the whole array before it fails (0.1 s per 240,000 docnos): text
    docnos must be told apart before casting."""
    import pyarrow.compute as pc

    def no_cast(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("pc.cast called on text docnos")

    monkeypatch.setattr(pc, "cast", no_cast)
    assert canonical_integers(pa.array([f"doc{i}" for i in range(1000)]), cast=True) is None


def test_hash64_is_a_function_of_the_string_alone() -> None:
    values = ["", "a", "ab", "abcdefgh", "abcdefghi", "abcdefgh\x00", "x" * 39, "x" * 40, "é", "a"]
    arr = pa.array(values)
    h = hash64(arr)
    assert h.dtype == np.uint64
    alone = [int(hash64(pa.array([v]))[0]) for v in values]
    assert h.tolist() == alone  # whatever the longest string beside it
    assert hash64(arr.slice(3, 4)).tolist() == alone[3:7]
    assert hash64(pa.chunked_array([arr.slice(0, 2), arr.slice(2)])).tolist() == alone
    assert hash64(pa.array(values, type=pa.large_string())).tolist() == alone
    assert len(set(alone)) == len(set(values))


def test_a_read_error_in_a_piece_leaves_the_file_to_the_line_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None
) -> None:
    """An OSError while reading pieces is no traceback: the line path reads the file itself
    (and names the file if it cannot)."""
    lines = _run_lines(29)
    path = tmp_path / "run.txt"
    text = "\n".join(lines) + "\n"
    path.write_text(text)
    real_pread = trec.os.pread
    calls = {"n": 0}

    def failing_pread(fd: int, n: int, offset: int) -> bytes:
        calls["n"] += 1
        if offset > 1000:
            raise OSError(5, "Input/output error")
        return real_pread(fd, n, offset)

    monkeypatch.setattr(trec.os, "pread", failing_pread)
    run = read_run(path)
    monkeypatch.undo()
    assert calls["n"] > 0
    assert _columns(run) == _columns(_slow_run(str(path), text.encode()))


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
    from .test_pytrec_eval_diff import compare, random_collection, run_both

    monkeypatch.setattr(trec, "_PIECES_BYTES", 0)
    monkeypatch.setattr(trec, "_PIECE_BYTES", 4096)
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
    from .conftest import shared_path
    from .test_pytrec_eval_diff import _read_trec, compare, run_both

    qrels_path, run_path = shared_path("qrels", qrels_name), shared_path("runs", run_name)
    monkeypatch.setattr(trec, "_PIECES_BYTES", 0)
    monkeypatch.setattr(trec, "_PIECE_BYTES", 16 << 10)
    run = read_run(run_path)
    assert isinstance(run.query, pa.ChunkedArray) and run.query.num_chunks > 5
    integers = "covid" not in run_name  # covid: text docnos; dl19: integers, kept as values only
    assert (run.doc_hashes is None) == integers and (run.doc_strings is None) == integers
    assert run.doc.to_pylist() == [line.split()[2] for line in run_path.read_text().splitlines()]
    results, expected = run_both(str(qrels_path), str(run_path), _read_trec(qrels_path, 3, int),
                                 _read_trec(run_path, 4, float), 1, False)
    compared, _ = compare(results, expected)
    assert compared == len(expected) * len(results) and len(expected) > 40


@settings(max_examples=200, deadline=None)
@given(
    blocks=st.lists(st.tuples(st.integers(0, 30), st.sampled_from([1, 2, 9, 10, 12])), min_size=0, max_size=25),
    docs=st.integers(1, 40),
    slab=st.sampled_from([1, 2, 5, 16, 1 << 18]),
    seed=st.integers(0, 2**31),
    wide=st.booleans(),
)
def test_pairs_repeat_matches_a_brute_force_check(
    blocks: list[tuple[int, int]], docs: int, slab: int, seed: int, wide: bool
) -> None:
    """Contiguous query blocks are checked in slabs of whole blocks, a query that comes back
    after another one by one sort of every pair: both must say what a set of pairs says. Codes
    of a span past int32 (hashed docnos) are sorted as int64, near or past 2**31 too."""
    rng = np.random.default_rng(seed)
    q = np.repeat(np.array([b[0] for b in blocks], dtype=np.int64), [b[1] for b in blocks])
    doc = rng.integers(0, docs, len(q)).astype(np.int64)
    if wide:  # values that int32 would wrap onto each other: 2**32 + d and d
        doc = doc + np.where(rng.random(len(doc)) < 0.5, 1 << 32, 0)
        docs = (1 << 33) + docs
    old = align_sizes.BLOCK_ROWS, align_sizes.MATRIX_BLOCKS
    want = len(set(zip(q.tolist(), doc.tolist(), strict=True))) < len(q)
    try:
        align_sizes.BLOCK_ROWS = slab
        for matrix_blocks in (1, 2, 1 << 30):  # blocks of one length as matrices, or on (query, doc) keys
            align_sizes.MATRIX_BLOCKS = matrix_blocks
            assert pairs_repeat(q, doc, docs) == want, matrix_blocks
    finally:
        align_sizes.BLOCK_ROWS, align_sizes.MATRIX_BLOCKS = old


def test_piece_rows_places_pieces_finishing_out_of_order() -> None:
    """Workers finish in reverse order; each piece's rows still land after the earlier pieces'."""
    import threading

    sizes = [3, 0, 5, 2, 4]
    rows = trec._PieceRows(len(sizes), capacity=100)
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
    slow = _slow_run(str(run_path), run_path.read_bytes())
    want = rankflavor.evaluate(as_qrels(str(qrels_path)), slow, MEASURES).per_query()
    assert got == want


@pytest.mark.parametrize("docnos", ["integers", "text"])
@pytest.mark.parametrize("fail_on", [1, 2])
def test_pieces_without_a_reservation_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None, docnos: str, fail_on: int
) -> None:
    """Under strict overcommit reserving room for every row the file could hold may fail: each
    piece then keeps its own arrays, and the values are those of the reserved path. The
    reservation fails on the first or on the second array."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(_qrels_text(4, docnos=docnos))
    run.write_text("\n".join(_run_lines(4, docnos=docnos)) + "\n")
    reserved = read_run(run)
    want = rankflavor.evaluate(str(qrels), str(run), MEASURES)
    calls = []

    def refuse(rows: int, dtype: np.dtype) -> np.ndarray:
        calls.append(rows)
        if len(calls) >= fail_on:
            raise MemoryError(f"cannot reserve {rows} rows")
        return np.empty(rows, dtype=dtype)

    monkeypatch.setattr(trec, "_reserve", refuse)
    kept = read_run(run)
    assert calls and isinstance(kept.query, pa.ChunkedArray) and kept.query.num_chunks > 5  # read in pieces
    assert _columns(kept) == _columns(reserved)
    assert (kept.doc_integers is None) == (reserved.doc_integers is None)
    got = rankflavor.evaluate(str(qrels), str(run), MEASURES)
    assert got.per_query() == want.per_query() and got.counts == want.counts


@settings(max_examples=150, deadline=None)
@given(
    chunks=st.lists(st.lists(st.sampled_from(["a", "bb", "", "d7", "é"]), max_size=6), min_size=0, max_size=5),
    picks=st.lists(st.integers(0, 10**6), max_size=12),
    encoded=st.booleans(),
    chunked=st.booleans(),
)
def test_take_of_chunks_equals_pyarrows_take(chunks: list[list[str]], picks: list[int], encoded: bool, chunked: bool) -> None:
    """columns.take gathers chunk by chunk, in any row order, from string or dictionary chunks."""
    from rankflavor.columns import take

    arrays = [pa.array(c, type=pa.string()) for c in chunks]
    if encoded:
        arrays = [a.dictionary_encode() for a in arrays]
    kind = pa.dictionary(pa.int32(), pa.string()) if encoded else pa.string()
    values = pa.chunked_array(arrays, type=kind) if chunked or not arrays else pa.concat_arrays(arrays)
    n = len(values)
    rows = np.array([p % n for p in picks] if n else [], dtype=np.int64)
    got = take(values, rows)
    want = [values[int(r)].as_py() for r in rows]
    assert got.type == pa.string() and got.to_pylist() == want


@pytest.mark.parametrize("true_at", [None, 0, 7, 19])
def test_shared_checks_run_each_check_once_on_two_threads(true_at: int | None) -> None:
    """Two threads share the duplicate checks: each check runs at most once, every check runs
    when none finds a repeat, and both threads stop soon after one does. (A first version read
    the worker's return value, which said "no repeat" when the worker ran out of checks while
    this thread's last check was still finding one.)"""
    import threading
    import time

    ran: list[int] = []
    started_by_then: list[int] = []

    def check(k: int) -> bool:
        ran.append(k)
        time.sleep(0.001)  # let the other thread take the next one
        if k == true_at:
            started_by_then.append(len(ran))
        return k == true_at

    shared = SharedWork([lambda k=k: check(k) for k in range(20)], until=bool)
    other = threading.Thread(target=shared.run)
    other.start()
    shared.run()  # may return while the other thread's check still runs
    other.join(timeout=10)
    assert shared.stopped == (true_at is not None)
    assert len(ran) == len(set(ran))
    if true_at is None:
        assert sorted(ran) == list(range(20))
    else:
        # Once a check finds a repeat, the other thread may start at most one more.
        assert true_at in ran and len(ran) <= started_by_then[0] + 1


def test_a_run_the_reader_hashed_is_not_read_as_integers_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None
) -> None:
    """The reader hashes docnos only when some piece is not all canonical integers, so the
    two-thread hashed path starts no integer reading of the run on the worker (it used to,
    and never looked at the result)."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(_qrels_text(6, docnos="text"))
    run.write_text("\n".join(_run_lines(6, docnos="text")) + "\n")
    q, r = read_qrels(qrels), read_run(run)
    assert r.doc_hashes is not None
    read_as_integers: list[int] = []
    real = align_stage.canonical_integers

    def counted(values, cast=None):  # type: ignore[no-untyped-def]
        read_as_integers.append(len(values))
        return real(values, cast)

    monkeypatch.setattr(align_stage, "canonical_integers", counted)
    monkeypatch.setattr(align_docs, "canonical_integers", counted)
    monkeypatch.setattr(align_sizes, "PARALLEL_ROWS", 0)  # the two-thread path
    aligned = align_module.align(q, r)
    assert read_as_integers == [] and len(aligned.judged_row) > 0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=0, max_size=60), st.sampled_from([1, 1 << 20, 1 << 57]))
def test_sorted_judgment_keys(small: list[int], scale: int) -> None:
    """Keys sorted with their row number packed in (when both fit in 63 bits) or by argsort:
    the sorted keys and a stable permutation either way."""
    keys = np.array(small, dtype=np.int64) * scale  # the largest scale leaves no room for rows
    order, ordered = sort_keys(keys)
    want = np.argsort(keys, kind="stable")
    assert order.tolist() == want.tolist()
    assert ordered.tolist() == keys[want].tolist()


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

    monkeypatch.setattr(trec, "canonical_mask", broken)
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 7 1 2.0 t\n")
    with pytest.raises(RuntimeError, match="mask failed"):
        rankflavor.evaluate(str(path), str(run), "ndcg@10")


def test_shared_work_keeps_task_order_and_raises_where_it_ran() -> None:
    """Two threads take the tasks one at a time; each result lands at its task's place, and a
    task's error surfaces in the thread that ran it."""
    import threading
    import time

    def task(k: int) -> int:
        time.sleep(0.001 * (k % 3))  # uneven, so the threads interleave
        return k * k

    shared = SharedWork([lambda k=k: task(k) for k in range(30)])
    other = threading.Thread(target=shared.run)
    other.start()
    shared.run()
    other.join(timeout=10)
    assert shared.results == [k * k for k in range(30)]

    def failing() -> int:
        raise ValueError("task 1")

    alone = SharedWork([lambda: 0, failing, lambda: 2])
    with pytest.raises(ValueError, match="task 1"):
        alone.run()


@pytest.mark.parametrize("docnos", ["integers", "zero_padded", "text"])
@pytest.mark.parametrize("seed", range(3))
def test_lookups_and_joins_shared_in_small_parts_equal_one_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, docnos: str
) -> None:
    """Past align.sizes.PARALLEL_ROWS the judged-row lookups and the join are split into parts two
    threads share; in parts of a few rows each, alignment must equal the one-thread path."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(_qrels_text(seed, docnos=docnos))
    run.write_text("\n".join(_run_lines(seed, docnos=docnos)) + "\n")
    q, r = read_qrels(qrels), read_run(run)
    one = align_module.align(q, r)
    monkeypatch.setattr(align_sizes, "PARALLEL_ROWS", 0)
    monkeypatch.setattr(align_sizes, "BLOCK_ROWS", 7)
    monkeypatch.setattr(align_sizes, "JOIN_ROWS", 3)
    parts: list[int] = []
    real = align_stage.join

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        parts.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(align_stage, "join", counted)
    two = align_module.align(q, r)
    assert len(parts) > 10  # the join did run in many parts
    assert len(one.judged_row) > 20
    assert two.judged_row.tolist() == one.judged_row.tolist()
    assert two.judged_grade.tolist() == one.judged_grade.tolist()
    assert two.run_q.tolist() == one.run_q.tolist()
    assert two.counts == one.counts


@settings(max_examples=300, deadline=None)
@given(
    keys=st.lists(st.integers(0, 12), min_size=2, max_size=60),
    values=st.lists(st.integers(-3, 3), min_size=60, max_size=60),
    policy=st.sampled_from(["first", "best"]),
    scale=st.sampled_from([1, 1 << 57]),
)
def test_resolving_duplicates_from_the_callers_sort_equals_sorting_again(
    keys: list[int], values: list[int], policy: str, scale: int
) -> None:
    """Alignment hands the judgments' sort (:func:`sort_keys`, packed or argsort) to the
    duplicate resolver; what it keeps must equal what the resolver finds sorting on its own."""
    k = np.array(keys, dtype=np.int64) * scale
    v = np.array(values[: len(keys)], dtype=np.float64)
    own = resolve_duplicates(k, v, policy, None)  # type: ignore[arg-type]  # the table names errors only
    given_sort = resolve_duplicates(k, v, policy, None, sort_keys(k))  # type: ignore[arg-type]
    assert own[1] == given_sort[1] == len(keys) - len(set(keys))
    if own[1]:
        assert own[0].tolist() == given_sort[0].tolist()
