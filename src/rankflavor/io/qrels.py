"""Read judgments: :func:`read_qrels`, in any format of :mod:`rankflavor.io.formats`; TREC qrels
(``query iteration doc grade``) read here, columnar, plain or compressed."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from rankflavor.base.threads import in_background
from rankflavor.errors import UsageError
from rankflavor.io.columnar import columnar, read_columns
from rankflavor.io.columns import as_numpy
from rankflavor.io.compression import other_codec
from rankflavor.io.docnos import canonical_mask
from rankflavor.io.formats.read import read_formatted
from rankflavor.io.formats.spec import Input, split_input
from rankflavor.io.irdsname import irds_id
from rankflavor.io.lines import QRELS_FIELDS, QRELS_LAYOUT, parse_qrels_lines
from rankflavor.io.parse import QUERY
from rankflavor.io.source import is_gzip, read_bytes
from rankflavor.io.tables import Qrels


def read_qrels(path: str | os.PathLike[str], format: str | None = None,
               columns: str | Mapping[str, str] | None = None, *, label_source: str | None = None,
               labels: str | None = None) -> Qrels:
    """Read judgments in any supported format, plain or compressed (gzip, bz2, xz, zstd).

    Parameters
    ----------
    path : path, or an :class:`~rankflavor.io.formats.spec.Input` (a path with its format and columns);
        ``irds:<dataset id>``: the judgments of an ir_datasets dataset, from its cache
        (:mod:`rankflavor.io.irds`).
    format : ``trec``, ``msmarco``, ``beir``, ``json``, ``csv``, ``tsv``, ``jsonl``, ``parquet``,
        ``quepid``, ``es`` (see :mod:`rankflavor.io.formats.spec`); None or ``auto``: by the
        file's name (``.parquet``, ``.jsonl``, ``.json``, ``.csv``, ``.tsv``; anything else is
        TREC), refined by its first line (a BEIR or Quepid header).
    columns : ``"query=qid,doc=docid,grade=label"`` or a mapping: the column names of a csv,
        tsv, jsonl or parquet input (``source=NAME``: the judgments' label source column).
    label_source : a rule giving the judgments their label source: ``"human:nist"`` for a file
        that names none, or ``"NAME=SOURCE,..."`` renaming those it names
        (:func:`rankflavor.io.labels.apply_rule`); an :class:`Input`'s own when None.
    labels : keep only some judgments by their source's kind: ``any`` (all), ``human``, ``llm``,
        ``clicks`` (or another kind present), or ``prefer=KIND`` (that kind's judgment where a
        pair has one); what is left out is counted (:func:`rankflavor.io.labels.select_labels`).

    Raises
    ------
    InputError
        Naming file and line (or row, or JSON path) and what was expected.
    UsageError
        For an unknown format, or columns for a format that has none.
    """
    if isinstance(path, Input):
        label_source = label_source if label_source is not None else path.label_source
        labels = labels if labels is not None else path.labels
    qrels = _read(path, format, columns)
    if label_source is None and (labels is None or (qrels.label_source is None and labels.strip() == "any")):
        return qrels  # (no rule, no choice: nothing more to do, nothing more to pay)
    from rankflavor.io.labels import apply_rule, select_labels

    return select_labels(apply_rule(qrels, label_source), labels)


def _read(path: str | os.PathLike[str], format: str | None, columns: str | Mapping[str, str] | None) -> Qrels:
    path, fmt, cols = split_input(path, format, columns, "qrels")
    dataset = irds_id(path)
    if dataset is not None:  # a benchmark by name, read through ir_datasets (imported only then)
        if fmt is not None or cols:
            raise UsageError(f"{path}: --qrels-format and --columns are for files; ir_datasets reads its own")
        from rankflavor.io.irds import read_irds_qrels

        return read_irds_qrels(dataset)
    found = read_formatted(path, "qrels", fmt, cols) if fmt != "trec" else None
    if found is not None:
        assert isinstance(found, Qrels)
        return found
    return read_trec_qrels(path)


def read_trec_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file (``query iteration doc grade``).

    The columnar reader takes clean single-space files; the line-by-line reader
    (:func:`rankflavor.io.lines.parse_qrels_lines`) everything else, with the same result.

    Raises
    ------
    InputError
        Naming file, line and the expected layout when a line is malformed, a grade is not a
        finite number, or the file is empty.
    """
    source = str(path)
    if _five_fields(path):  # a fifth field on the first line: the label source of each judgment
        five, data, _ = columnar(path, QRELS_FIELDS + 1, SOURCED, "qrels", QRELS_LAYOUT)
        found = None if five is None else _sourced(source, five[0])
        return found if found is not None else parse_qrels_lines(source, data if data is not None else read_bytes(path))
    kinds = {0: QUERY, 2: pa.string(), 3: pa.float64()}
    parsed, data, text = columnar(path, QRELS_FIELDS, kinds, "qrels", QRELS_LAYOUT)
    if parsed is not None:
        cols = parsed[0]
        grade = as_numpy(cols[2])
        if _finite(grade):
            return Qrels(cols[0], cols[1], grade.astype(np.float64, copy=False), source, from_file=True,
                         doc_canonical=in_background(canonical_mask, cols[1]))
    elif data is not None:  # not four fields a line: perhaps five (a compressed file), the fifth a label source
        five = read_columns(text if isinstance(text, bytes) and text else data, QRELS_FIELDS + 1, SOURCED)
        found = None if five is None else _sourced(source, five[0])
        if found is not None:
            return found
    return parse_qrels_lines(source, data if data is not None else read_bytes(path))


#: The fields kept of a qrels line with a label source, and their types.
SOURCED = {0: QUERY, 2: pa.string(), 3: pa.float64(), 4: QUERY}


def _five_fields(path: str | os.PathLike[str]) -> bool:
    """Does an uncompressed file's first line hold five fields (a judgment and its label source)?
    One read of its first bytes; a compressed file is left to the four-field path's second try."""
    try:
        if not os.path.isfile(path) or is_gzip(path) or other_codec(path):
            return False
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return len(head.split(b"\n", 1)[0].split()) == QRELS_FIELDS + 1


def _sourced(source: str, cols: list[pa.Array | pa.ChunkedArray]) -> Qrels | None:
    """Judgments from the columns of five-field lines (``query iteration doc grade source``); None
    when a grade is not finite (the line-by-line reader names it)."""
    from rankflavor.io.formats.table import by_lines
    from rankflavor.io.labels.sources import checked_sources

    grade = as_numpy(cols[2])
    if not _finite(grade):
        return None
    return Qrels(cols[0], cols[1], grade.astype(np.float64, copy=False), source, from_file=True,
                 doc_canonical=in_background(canonical_mask, cols[1]),
                 label_source=checked_sources(cols[3], source, by_lines(None, 1)))


def _finite(values: np.ndarray) -> bool:
    return bool(np.isfinite(values).all()) if len(values) else True


def mark_distractors(qrels: Qrels, distractor: np.ndarray, grade: float | None = None) -> Qrels:
    """``qrels`` with the rows flagged in ``distractor`` (a reader's distractor column, one bool
    per row) given the grade ``grade``, declared as the judgments' distractor grade.

    ``grade`` defaults to one below every grade present (and below 0), so no other judgment
    shares it. A flagged row's relevance grade is replaced: a distractor is not relevant.

    >>> import pyarrow as pa
    >>> q = Qrels(pa.array(["q", "q"]), pa.array(["a", "b"]), np.array([2.0, 0.0]))
    >>> m = mark_distractors(q, np.array([False, True]))
    >>> m.grade.tolist(), m.distractor_grade
    ([2.0, -1.0], -1.0)
    """
    flags = np.asarray(distractor, dtype=bool)
    if len(flags) != len(qrels):
        raise ValueError(f"mark_distractors: {len(flags)} flags for {len(qrels)} judgments")
    if grade is None:
        grade = min(float(qrels.grade.min()) if len(qrels) else 0.0, 0.0) - 1.0
    elif bool((qrels.grade[~flags] == grade).any()):
        raise ValueError(f"mark_distractors: grade {grade:g} is already the grade of judgments not flagged")
    return dataclasses.replace(qrels, grade=np.where(flags, grade, qrels.grade), distractor_grade=grade)
