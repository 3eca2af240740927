"""Small TREC files and reader settings shared by the reader tests (``test_io_*``) and the
alignment tests that read files (``test_align_codes``).

Files here are small, so :func:`pieces` shrinks the reader's public knobs
(``rankflavor.io.columnar.PIECES_BYTES`` and ``PIECE_BYTES``) to put every file through the
piece reader, and :func:`whole_files` raises the first so that every file is read whole.
"""

from __future__ import annotations

import gzip
import textwrap
from pathlib import Path

import numpy as np
import pytest

import rankflavor
from rankflavor.io import columnar
from rankflavor.io.columns import to_strings

MEASURES = ["ndcg@10", "ndcg", "AP", "P@5", "R@20", "RR", "bpref", "num_ret", "ndcg@10[ties=averaged]",
            "AP[ties=optimistic]", "judged@10"]  # fmt: skip


@pytest.fixture
def pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file goes through the piece reader, in pieces of about 300 bytes (a few lines)."""
    monkeypatch.setattr(columnar, "PIECES_BYTES", 0)
    monkeypatch.setattr(columnar, "PIECE_BYTES", 300)


def whole_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file is read whole from here on."""
    monkeypatch.setattr(columnar, "PIECES_BYTES", 1 << 40)


def run_lines(seed: int, n_queries: int = 12, depth: int = 30, docnos: str = "integers") -> list[str]:
    """Run lines, query by query in random query order, scores descending with many ties;
    docnos ``integers`` (canonical), ``text`` ("D7") or ``zero_padded`` ("007")."""
    rng = np.random.default_rng(seed)
    lines = []
    for q in rng.permutation(n_queries):
        scores = np.sort(rng.integers(0, 9, depth))[::-1]  # many ties
        docs = rng.choice(400, depth, replace=False)
        for rank, (d, s) in enumerate(zip(docs, scores, strict=True), 1):
            doc = str(d + 1000) if docnos == "integers" else f"D{d}" if docnos == "text" else f"{d:03d}"
            lines.append(f"q{q} Q0 {doc} {rank} {s} tag{q}")
    return lines


def qrels_text(seed: int, n_queries: int = 12, docnos: str = "integers") -> str:
    """Judgments for :func:`run_lines` (same docno style), with two queries the run never answers."""
    rng = np.random.default_rng(seed + 1000)
    rows = []
    for q in range(n_queries + 2):  # two judged queries the run never answers
        for d in rng.choice(400, 40, replace=False):
            doc = str(d + 1000) if docnos == "integers" else f"D{d}" if docnos == "text" else f"{d:03d}"
            rows.append(f"q{q} 0 {doc} {int(rng.integers(0, 4))}")
    return "\n".join(rows) + "\n"


def columns(run: rankflavor.io.tables.Run) -> tuple[list[str], list[str], list[float], str | None]:
    """A run's query ids, docnos, scores and tag, as Python values."""
    return to_strings(run.query), to_strings(run.doc), run.score.tolist(), run.tag


QRELS_TEXT = textwrap.dedent(
    """\
    q1 0 d1 2
    q1 0 d2 0
    q1 0 d3 1
    q1 0 d9 1
    q2 0 e1 1
    q2 0 e5 3
    q3 0 f1 1
    """
)
RUN_ROWS = [
    ("q1", "d3", 9.0), ("q1", "d4", 8.0), ("q1", "d1", 8.0), ("q1", "d2", 7.5), ("q1", "d7", 1.0),
    ("q2", "e5", 3.0), ("q2", "e2", 3.0), ("q2", "e1", 2.0),
    ("q4", "g1", 1.0),
]  # fmt: skip


def run_line(q: str, d: str, rank_: int, s: float, tag: str = "tagA", sep: str = " ") -> str:
    return sep.join([q, "Q0", d, str(rank_), repr(s), tag])


def run_text(rows: list[tuple[str, str, float]], last_tag: str = "lastTag", sep: str = " ") -> str:
    """Run lines of ``rows`` (tag ``tagA``, the last line's ``last_tag``), fields joined by ``sep``."""
    lines = [run_line(q, d, i + 1, s, "tagA", sep) for i, (q, d, s) in enumerate(rows)]
    q, d, s = rows[-1]
    lines[-1] = run_line(q, d, len(rows), s, last_tag, sep)
    return "\n".join(lines) + "\n"


def layouts(tmp_path: Path) -> dict[str, tuple[Path, Path]]:
    """The same judgments and run in every layout the readers treat differently."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS_TEXT)
    plain = tmp_path / "run.txt"
    plain.write_text(run_text(RUN_ROWS))
    tabs = tmp_path / "run_tabs.txt"  # whitespace-normalised columnar path
    tabs.write_text(run_text(RUN_ROWS, sep="\t"))
    qrels_tabs = tmp_path / "qrels_tabs.txt"
    qrels_tabs.write_text(QRELS_TEXT.replace(" ", "\t"))
    lines = tmp_path / "run_lines.txt"  # comments and blank lines: the line-by-line path
    body = run_text(RUN_ROWS).splitlines()
    lines.write_text("# a comment\n" + "\n".join(body[:3]) + "\n\n" + "\n".join(body[3:]) + "\n")
    gz = tmp_path / "run.txt.gz"
    gz.write_bytes(gzip.compress(run_text(RUN_ROWS).encode()))
    return {"plain": (qrels, plain), "tabs": (qrels_tabs, tabs), "lines": (qrels, lines), "gzip": (qrels, gz)}


MEASURES_TREC = ["ndcg_cut.10", "map", "P.10", "bpref"]
