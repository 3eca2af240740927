"""Where the line-by-line reader decides: every layout the columnar path steps aside for
(tabs, other blanks, comments, blank lines, a bad line, in any piece) reads as
:func:`rankflavor.io.lines.parse_run_lines` reads it, and the run tag is the last line's
sixth field, for every layout.

(``test_line_rules.py`` holds the property tests of trec_eval's line rules on every path.)
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pyarrow as pa
import pytest

import rankflavor
from rankflavor.errors import InputError
from rankflavor.io.columns import to_strings
from rankflavor.io.lines import parse_qrels_lines, parse_run_lines
from rankflavor.io.trec import read_qrels, read_run

from ..support.io_cases import MEASURES, MEASURES_TREC, columns, layouts, pieces, qrels_text, run_lines, whole_files

__all__ = ["pieces"]  # a fixture, used by name


# ---------------------------------------------------------------------------------------------
# A piece that needs the line path
# ---------------------------------------------------------------------------------------------


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
    lines = run_lines(7)
    middle = len(lines) // 2
    lines[middle] = mutate(lines[middle])
    path = tmp_path / "run.txt"
    text = "\n".join(lines) + "\n"
    path.write_text(text)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(qrels_text(7))
    run = read_run(path)
    slow = parse_run_lines(str(path), text.encode())
    assert columns(run) == columns(slow)
    if line_path_counts is not None:
        assert (run.comments, run.blank_lines) == line_path_counts
    by_pieces = rankflavor.evaluate(str(qrels), str(path), MEASURES)
    whole_files(monkeypatch)
    assert by_pieces.per_query() == rankflavor.evaluate(str(qrels), str(path), MEASURES).per_query()


def test_crlf_lines_stay_on_the_piece_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: None) -> None:
    lines = run_lines(9)
    path = tmp_path / "run.txt"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    run = read_run(path)
    assert isinstance(run.query, pa.ChunkedArray)  # parsed in pieces, not by the line path
    whole_files(monkeypatch)
    assert columns(run) == columns(read_run(path))


@pytest.mark.parametrize("where", ["second_line", "middle", "last_line"])
def test_a_bad_line_in_any_piece_is_named(tmp_path: Path, pieces: None, where: str) -> None:
    lines = run_lines(11)
    index = {"second_line": 1, "middle": len(lines) // 2, "last_line": len(lines) - 1}[where]
    lines[index] = " ".join(lines[index].split()[:5])  # five fields
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        read_run(path)
    assert info.value.line == index + 1
    assert "expected 6 whitespace-separated fields" in str(info.value)


# ---------------------------------------------------------------------------------------------
# Layouts the columnar path steps aside for
# ---------------------------------------------------------------------------------------------


def test_every_layout_gives_the_same_values(tmp_path: Path) -> None:
    """Columnar, normalised, line-by-line and gzip readers: one set of numbers."""
    results = {
        name: rankflavor.evaluate(str(q), str(r), [*MEASURES_TREC, "num_ret", "num_rel_ret"], preset="trec_eval")
        for name, (q, r) in layouts(tmp_path).items()
    }
    values = {name: res.per_query() for name, res in results.items()}
    assert values["plain"] == values["tabs"] == values["lines"] == values["gzip"]
    # The line-by-line layout did go through the line path: it counted its comment and blank line.
    assert (results["lines"].counts.comment_lines, results["lines"].counts.blank_lines) == (1, 1)
    assert (results["plain"].counts.comment_lines, results["plain"].counts.blank_lines) == (0, 0)


def test_tab_inside_a_single_spaced_line_reads_like_the_line_path(tmp_path: Path) -> None:
    run_path = tmp_path / "run.txt"
    run_path.write_text("q1 Q0 d\tx 1 1.0 tag\nq1 Q0 e 2 0.5 tag\n")
    run = read_run(run_path)
    want = [ln.split()[2] for ln in run_path.read_text().splitlines()]  # whitespace split, as trec_eval
    assert to_strings(run.doc) == want


@pytest.mark.parametrize("blank", ["\r", "\v", "\f"])
def test_other_blanks_inside_a_line_read_like_the_line_path(tmp_path: Path, blank: str) -> None:
    """pyarrow ends a line at a lone CR and keeps vertical tabs and form feeds inside fields;
    the line path (and trec_eval) treat them as blanks. The fast path must step aside."""
    text = f"q1 Q0 d{blank}x 1 1.0 tag\nq1 Q0 e 2 0.5 tag\n"
    run_path = tmp_path / "run.txt"
    run_path.write_bytes(text.encode())
    fast = read_run(run_path)
    slow = parse_run_lines(str(run_path), text.encode())
    assert to_strings(fast.doc) == to_strings(slow.doc) == ["d", "e"]
    assert fast.score.tolist() == slow.score.tolist() == [1.0, 0.5]
    assert fast.extra_fields == slow.extra_fields == 1


# ---------------------------------------------------------------------------------------------
# Run tag from the last line
# ---------------------------------------------------------------------------------------------


def _tag_of_last_line(data: bytes) -> str:
    lines = [ln for ln in data.decode().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return lines[-1].split()[5]


def _tag_lines(n: int, last_doc: str = "dLast", sep: str = " ") -> list[str]:
    lines = [sep.join(["q1", "Q0", f"d{i}", str(i + 1), str(100 - i), f"early{i % 3}"]) for i in range(n)]
    lines.append(sep.join(["q2", "Q0", last_doc, "1", "0.5", "theLastTag"]))
    return lines


@pytest.mark.parametrize(
    "layout",
    ["plain", "crlf", "no_newline", "crlf_no_newline", "gzip", "gzip_crlf", "tabs", "trailing_blanks",
     "comment_and_blank", "trailing_newlines", "only_line"],
)  # fmt: skip
def test_run_tag_is_the_last_lines(tmp_path: Path, layout: str) -> None:
    lines = _tag_lines(0 if layout == "only_line" else 50, sep="\t" if layout == "tabs" else " ")
    if layout == "trailing_blanks":
        lines = [ln + "  " for ln in lines]
    if layout == "comment_and_blank":
        lines = ["# header q Q0 d 1 1 nottag", *lines[:10], "", *lines[10:]]
    eol = "\r\n" if "crlf" in layout else "\n"
    text = eol.join(lines) + ("" if "no_newline" in layout else eol)
    if layout == "trailing_newlines":
        text += "\n\n"
    data = text.encode()
    path = tmp_path / "run.txt"
    path.write_bytes(gzip.compress(data) if layout.startswith("gzip") else data)
    want = _tag_of_last_line(data)
    assert want == "theLastTag"
    assert read_run(path).tag == want


@pytest.mark.parametrize("doc_length", [4000, 4089, 4090, 4096, 4097, 5000, 16500, 70000])
@pytest.mark.parametrize("eol", ["\n", "\r\n", ""])
def test_run_tag_after_a_long_last_line(tmp_path: Path, doc_length: int, eol: str) -> None:
    """Last lines around and past the 4096-byte first read of the file's tail."""
    lines = _tag_lines(200, last_doc="x" * doc_length)
    data = ("\n".join(lines) + eol).encode() if eol != "\r\n" else ("\r\n".join(lines) + eol).encode()
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    want = _tag_of_last_line(data)
    run = read_run(path)
    assert run.tag == want
    assert to_strings(run.doc)[len(run) - 1] == "x" * doc_length


def test_run_tag_long_line_is_the_only_line(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    data = ("q1 Q0 " + "y" * 9000 + " 1 2.5 onlyTag\n").encode()
    path.write_bytes(data)
    assert read_run(path).tag == _tag_of_last_line(data) == "onlyTag"


def test_run_tag_in_results_provenance(tmp_path: Path) -> None:
    qrels, run = layouts(tmp_path)["plain"]
    res = rankflavor.evaluate(str(qrels), str(run), "P@5")
    assert res.provenance["run"]["tag"] == _tag_of_last_line(run.read_bytes()) == "lastTag"


# ---------------------------------------------------------------------------------------------
# Bytes that are not UTF-8: the two paths agree on every field
# ---------------------------------------------------------------------------------------------

_BAD = b"\xff\xfe"


@pytest.mark.parametrize(("kind", "field"), [("run", 0), ("run", 1), ("run", 2), ("run", 3), ("run", 5), ("run", 6),
                                             ("qrels", 0), ("qrels", 1), ("qrels", 2)])
def test_bytes_not_utf8_read_alike_on_both_paths(tmp_path: Path, kind: str, field: int) -> None:
    """Regression: the columnar path, which never decodes a field it skips (a run's Q0, rank and
    tag; a qrels' iteration), read a file the line path refused as "not valid UTF-8" at once."""
    rows = [["q1", "Q0", f"d{i}", str(i + 1), str(10 - i), "tag", "extra"] for i in range(4)]
    if kind == "qrels":
        rows = [["q1", "0", f"d{i}", str(i % 3)] for i in range(4)]
    lines = [" ".join(r).encode() for r in rows]
    parts = lines[1].split(b" ")
    parts[field] += _BAD
    lines[1] = b" ".join(parts)
    data = b"\n".join(lines) + b"\n"
    path = tmp_path / f"{kind}.txt"
    path.write_bytes(data)
    fast_read, slow_read = (read_run, parse_run_lines) if kind == "run" else (read_qrels, parse_qrels_lines)
    used = (0, 2, 4) if kind == "run" else (0, 2, 3)
    if field in used:
        for read in (lambda: fast_read(path), lambda: slow_read(str(path), data)):
            with pytest.raises(InputError, match="not valid UTF-8") as exc:
                read()
            assert exc.value.line == 2
        return
    fast, slow = fast_read(path), slow_read(str(path), data)
    assert to_strings(fast.doc) == to_strings(slow.doc) == [f"d{i}" for i in range(4)]
    assert to_strings(fast.query) == to_strings(slow.query) == ["q1"] * 4
