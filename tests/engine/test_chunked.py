"""Chunked evaluation: per-query values and summaries equal a one-shot evaluation."""

from __future__ import annotations

import gzip

import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.errors import EvaluationError, InputError

from ..conftest import shared_path

MEASURES = [
    "trec_eval:ndcg_cut.10",
    "trec_eval:map",
    "trec_eval:num_rel",
    "trec_eval:num_ret",
    "ndcg@10[ties=averaged,ideal=local]",
    "ndcg@20[gain=exp2,ideal=recall@50,ties=input_order,empty=one]",
    "P@5[unjudged=condensed]",
    "bpref",
]


def _same(a: rankflavor.Results, b: rankflavor.Results) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert str(x.measure) == str(y.measure)
        assert list(x.queries) == list(y.queries)
        np.testing.assert_array_equal(x.values, y.values)
        assert list(x.status) == list(y.status)
        assert x.summary == y.summary
        assert x.n_queries == y.n_queries
    assert a.counts == b.counts


@pytest.mark.parametrize("chunk", [1, 137, 1000, 10**7])
@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_chunked_equals_one_shot_on_real_run(chunk: int, missing: str) -> None:
    qrels = shared_path("qrels", "qrels.dl20-passage.txt")
    run = shared_path("runs", "rankllm.dl20.splade-p-p-ensemble-distil.top100.run")
    _same(
        rankflavor.evaluate(qrels, run, MEASURES, missing=missing),
        rankflavor.evaluate(qrels, run, MEASURES, missing=missing, chunk_rows=chunk),
    )


def _random_files(tmp_path, seed: int, sep: str = " ") -> tuple[str, str]:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for qi in range(60):
        q = f"q{qi:03d}"
        docs = [f"d{j}" for j in rng.choice(500, 40, replace=False)]
        if qi % 7:  # some queries only in the run
            for d in docs[::2]:
                qrels.append(f"{q} 0 {d} {int(rng.integers(-1, 4))}")
            qrels.append(f"{q} 0 never{qi} 2")
        if qi % 11 == 3:
            continue  # qrels-only query
        for r, d in enumerate(docs, 1):
            run.append(sep.join([q, "Q0", d, str(r), f"{rng.integers(0, 8) / 4:.2f}", "t"]))
    qp, rp = tmp_path / "q.txt", tmp_path / "r.txt"
    qp.write_text("\n".join(qrels) + "\n")
    rp.write_text("\n".join(run) + "\n")
    return str(qp), str(rp)


@pytest.mark.parametrize("sep", [" ", "\t"])
def test_chunked_equals_one_shot_on_random_data(tmp_path, sep: str) -> None:  # type: ignore[no-untyped-def]
    q, r = _random_files(tmp_path, 5, sep)
    for missing in ("zero", "skip"):
        _same(
            rankflavor.evaluate(q, r, MEASURES, missing=missing),
            rankflavor.evaluate(q, r, MEASURES, missing=missing, chunk_rows=53),
        )


def test_chunked_reads_gzip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    q, r = _random_files(tmp_path, 6)
    gz = tmp_path / "r.txt.gz"
    gz.write_bytes(gzip.compress(open(r, "rb").read()))
    _same(rankflavor.evaluate(q, r, MEASURES), rankflavor.evaluate(q, str(gz), MEASURES, chunk_rows=40))


def test_query_split_across_the_file_is_an_error(write) -> None:  # type: ignore[no-untyped-def]
    q = write("q.txt", "a 0 x 1\nb 0 y 1\n")
    r = write("r.txt", "a Q0 x 1 2 t\nb Q0 y 1 2 t\na Q0 z 2 1 t\n")
    with pytest.raises(InputError, match="appears again"):
        rankflavor.evaluate(q, r, ["ndcg@10"], chunk_rows=1)
    # One-shot evaluation does not need contiguous queries.
    assert rankflavor.evaluate(q, r, ["ndcg@10"])[0].n_queries == 2


def test_bad_line_in_chunked_mode_names_the_line(write) -> None:  # type: ignore[no-untyped-def]
    q = write("q.txt", "a 0 x 1\n")
    r = write("r.txt", "a Q0 x 1 2 t\na Q0 y 2 oops t\n")
    with pytest.raises(InputError, match=r"r.txt:2: score 'oops' is not a number"):
        rankflavor.evaluate(q, r, ["ndcg@10"], chunk_rows=1)


def test_missing_error_is_worded_as_one_shot(write) -> None:  # type: ignore[no-untyped-def]
    """missing=error names the first five missing queries in byte order, with "..." after them,
    as the one-shot engine does (chunked evaluation named them in file order, without "...")."""
    missing = ["q9", "q10", "q8", "Q7", "q6", "q5", "q4"]
    q = write("q.txt", "".join(f"{name} 0 x 1\n" for name in ["a", *missing]))
    r = write("r.txt", "a Q0 x 1 2 t\n")
    with pytest.raises(EvaluationError) as whole:
        rankflavor.evaluate(q, r, ["ndcg@10[missing=error]"])
    with pytest.raises(EvaluationError) as chunked:
        rankflavor.evaluate(q, r, ["ndcg@10[missing=error]"], chunk_rows=1)
    assert str(chunked.value) == str(whole.value)
    assert "(Q7, q10, q4, q5, q6...)" in str(whole.value)


def test_cli_chunk_rows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    q, r = _random_files(tmp_path, 7)
    args = ["eval", q, r, "--preset", "trec_eval", "-m", "all_trec", "-q", "-c", "--format", "trec"]
    whole = CliRunner().invoke(cli, args)
    chunked = CliRunner().invoke(cli, [*args, "--chunk-rows", "25"])
    assert whole.exit_code == 0 and chunked.exit_code == 0, chunked.output
    assert whole.output == chunked.output


# A line that only the line path reads right, deep in a file read in many small pieces. The
# streaming reader used to restart from the first line when it met one (every row before it
# counted twice), and split a docno at a space only (a tab stayed inside it).
DEEP = {
    "comment": lambda ln: "#c Q0 x 1 1 commented\n" + ln,
    "blank_line": lambda ln: "\n" + ln,
    "tab_in_docno": lambda ln: ln.replace(" Q0 ", " Q0 zz\t", 1),
    "extra_field": lambda ln: ln + " extra",
    "double_space": lambda ln: ln.replace(" ", "  ", 1),
}


@pytest.mark.parametrize("name", sorted(DEEP))
@pytest.mark.parametrize("gzipped", [False, True])
def test_a_line_path_line_deep_in_a_chunked_run(tmp_path, monkeypatch, name: str, gzipped: bool) -> None:  # type: ignore[no-untyped-def]
    from rankflavor.io import stream as chunked

    monkeypatch.setattr(chunked, "PIECE_BYTES", 400)  # many pieces, a few lines each
    q, r = _random_files(tmp_path, 12)
    lines = open(r).read().splitlines()
    at = int(len(lines) * 0.8)
    lines[at] = DEEP[name](lines[at])
    text = "\n".join(lines) + "\n"
    path = tmp_path / ("deep.txt.gz" if gzipped else "deep.txt")
    path.write_bytes(gzip.compress(text.encode()) if gzipped else text.encode())
    whole = rankflavor.evaluate(q, str(path), MEASURES)
    for chunk in (1, 37, 10**6):
        _same(whole, rankflavor.evaluate(q, str(path), MEASURES, chunk_rows=chunk))
    assert whole.counts.run_rows == len(lines)  # the comment or blank line went into lines[at]
    if name == "comment":
        assert whole.counts.comment_lines == 1
    if name == "blank_line":
        assert whole.counts.blank_lines == 1


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_bad_line_deep_in_a_chunked_run_names_its_line(tmp_path, monkeypatch, gzipped: bool) -> None:  # type: ignore[no-untyped-def]
    from rankflavor.io import stream as chunked

    monkeypatch.setattr(chunked, "PIECE_BYTES", 400)
    q, r = _random_files(tmp_path, 13)
    lines = open(r).read().splitlines()
    at = int(len(lines) * 0.7)
    lines[at] = " ".join(lines[at].split()[:5])
    text = "\n".join(lines) + "\n"
    path = tmp_path / ("bad.txt.gz" if gzipped else "bad.txt")
    path.write_bytes(gzip.compress(text.encode()) if gzipped else text.encode())
    with pytest.raises(InputError) as info:
        rankflavor.evaluate(q, str(path), ["ndcg@10"], chunk_rows=25)
    assert info.value.line == at + 1
    assert "expected 6 whitespace-separated fields" in str(info.value)


@settings(max_examples=300, deadline=None)
@given(batches=st.lists(st.lists(st.sampled_from(["q1", "q2", "q10", "x"]), max_size=6), min_size=1, max_size=5))
def test_last_query_start_is_where_the_final_block_begins(batches: list[list[str]]) -> None:
    """Looked for batch by batch on dictionary indices, from the back: the same row as a scan of
    all the rows (0 when every row is the last query's)."""
    from rankflavor.io.stream import _last_query_start

    rows = [q for b in batches for q in b]
    if not rows:
        return
    want = max((i + 1 for i, q in enumerate(rows) if q != rows[-1]), default=0)
    encoded = [pa.array(b, type=pa.string()).dictionary_encode() for b in batches]
    assert _last_query_start(encoded) == want


def _with_docnos(path: str, kind: str) -> None:
    """Rewrite the files' docnos "d<n>": as integers, or as integers for the queries before
    q030 and text after (pieces of both kinds)."""
    lines = open(path).read().splitlines()
    out = []
    for ln in lines:
        f = ln.split()
        at = 2 if len(f) == 4 or len(f) == 6 else None
        if at is not None and f[at].startswith("d") and (kind == "integers" or f[0] < "q030"):
            f[at] = str(int(f[at][1:]) + 1000)
        out.append(" ".join(f))
    open(path, "w").write("\n".join(out) + "\n")


@pytest.mark.parametrize("docnos", ["integers", "text", "mixed"])
@pytest.mark.parametrize("two_threads", [False, True])
def test_chunks_carry_the_parse_workers_docno_keys(tmp_path, monkeypatch, docnos: str, two_threads: bool) -> None:  # type: ignore[no-untyped-def]
    """Parse workers read each piece's docnos as integers or hashes; a chunk whose pieces all
    agree hands those keys to alignment (align reads them itself otherwise): the values are
    those of one evaluation of the whole file."""
    from rankflavor.align import sizes as align_sizes
    from rankflavor.io import stream as chunked

    monkeypatch.setattr(chunked, "PIECE_BYTES", 400)  # many pieces, a few lines each
    if two_threads:
        monkeypatch.setattr(align_sizes, "PARALLEL_ROWS", 0)
    q, r = _random_files(tmp_path, 8)
    if docnos != "text":
        _with_docnos(q, docnos)
        _with_docnos(r, docnos)
    whole = rankflavor.evaluate(q, r, MEASURES)
    for chunk in (1, 37, 10**6):
        _same(whole, rankflavor.evaluate(q, r, MEASURES, chunk_rows=chunk))
    runs = list(chunked.iter_query_chunks(r, 300))
    carried = [(c.doc_integers is not None, c.doc_hashes is not None) for c in runs]
    if docnos == "integers":
        assert all(c == (True, False) for c in carried)
    elif docnos == "text":
        assert all(c == (False, True) for c in carried)
    else:  # integer pieces, then a chunk of both kinds, after which align reads the docnos itself
        assert carried[0] == (True, False) and (False, False) in carried
