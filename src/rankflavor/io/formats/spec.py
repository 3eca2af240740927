"""Format names, :class:`Input` (a path with its format and columns), and a format by file name.

Format names (``--qrels-format``, ``--run-format``, ``read_qrels(path, format=...)``):

========== =============================================== ==============================================
name       judgments (qrels)                               run
========== =============================================== ==============================================
trec       ``query iteration doc grade``                   ``query Q0 doc rank score tag``
msmarco    ``qid<TAB>0<TAB>pid<TAB>grade`` (TREC with tabs) ``qid<TAB>pid<TAB>rank``: no score
beir       ``qrels/test.tsv``: header ``query-id corpus-id score``  results JSON ``{qid: {docid: score}}``
json       ``{qid: {docid: grade}}``                       ``{qid: {docid: score}}``
csv, tsv   a header naming the columns (``--columns``)      the same, score and/or rank columns
jsonl      one JSON object per line, the same names        the same
parquet    columns of the same names (read by pyarrow)     the same
quepid     ratings export CSV ``query,docid,rating``;      snapshot CSV ``Snapshot Name,...,Doc Position``
           book judgements ``query,docid,<judge>,...``
es         ``_rank_eval`` request JSON (``ratings``)       search responses / ``_rank_eval`` response hits
srw        Search Relevance Workbench judgment lists       -
umbrela    UMBRELA's ``modified_qrels/*.txt``              -
========== =============================================== ==============================================

``srw``, ``umbrela`` and Quepid's book judgements name each judgment's label source
(:mod:`rankflavor.io.formats.labelled`).

Column names default to those the DataFrame inputs take (:mod:`rankflavor.io.inputs`):
``query_id`` (or query, qid, topic), ``doc_id`` (or doc, docno, docid), ``relevance`` (or grade,
rel, label) for judgments, ``score`` (or sim) and ``rank`` for runs; judgments may carry a
``source`` (or label_source) column naming each judgment's label source (:mod:`rankflavor.io.labels`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from rankflavor.errors import UsageError, did_you_mean
from rankflavor.io.compression import SUFFIXES


@dataclass(frozen=True)
class Format:
    """One format of judgments and runs: a row of :data:`TABLE`, the one place a format is declared.

    ``reader`` and ``writer`` name a function of a module of this package as ``"module:function"``
    (imported when a file of the format is read or written). A reader is called
    ``reader(source, data, kind, columns)`` with the file's name, its bytes, ``"qrels"`` or
    ``"run"`` and the ``--columns`` roles, and returns a :class:`~rankflavor.io.tables.Qrels` or
    :class:`~rankflavor.io.tables.Run`; with ``from_path`` it is called ``reader(path, kind,
    columns)`` and reads the file itself (a columnar file). The readers of ``json``, ``es`` and
    ``srw`` also take ``value=``, the file's JSON value, when ``read.py`` parsed it to tell which of
    the three a ``.json`` file is. A writer is called ``writer(rows, fmt,
    lossy)`` with the table's :class:`~rankflavor.io.formats.write.Rows` and returns the text.
    ``trec`` has no reader here: the TREC readers (:mod:`rankflavor.io.qrels`, :mod:`rankflavor.io.run`)
    read it themselves, at their own speed.
    """

    name: str
    reader: str | None
    writer: str | None = None
    #: What a file of the format can hold: judgments (``qrels``), a ``run``, or both.
    holds: tuple[str, ...] = ("qrels", "run")
    #: File-name suffixes (after a compression suffix is removed) that choose the format.
    suffixes: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    from_path: bool = False
    #: ``--columns`` may name its columns.
    named_columns: bool = False
    #: Its judgments can carry each label's source (a fifth TREC field, a ``source`` column).
    carries_sources: bool = False
    #: The kinds for which it can name a query with nothing in it (``{"q": {}}``).
    lists_empty: tuple[str, ...] = ()


#: Every format, in the order the help lists them.
TABLE: dict[str, Format] = {f.name: f for f in (
    Format("trec", None, "write:trec_text", aliases=("trec_eval",), carries_sources=True),
    Format("msmarco", "delimited:read_msmarco", "write:msmarco_text"),
    Format("beir", "jsondoc:read_beir", "write:beir_text", lists_empty=("run",)),
    Format("json", "jsondoc:read_json", "write:json_text", suffixes=(".json",), lists_empty=("qrels", "run")),
    Format("csv", "delimited:read_csv", "write:named_text", suffixes=(".csv",), named_columns=True,
           carries_sources=True),
    Format("tsv", "delimited:read_tsv", "write:named_text", suffixes=(".tsv",), named_columns=True,
           carries_sources=True),
    Format("jsonl", "jsonl:read_jsonl", "write:jsonl_text", suffixes=(".jsonl", ".ndjson"), aliases=("ndjson",),
           named_columns=True, carries_sources=True),
    Format("parquet", "parquet:read_parquet", suffixes=(".parquet", ".pq"), aliases=("pq",), from_path=True,
           named_columns=True, carries_sources=True),
    Format("quepid", "labelled:read_quepid", "write:quepid_text", lists_empty=("qrels",)),
    Format("es", "jsondoc:read_es", "write:es_text", aliases=("elasticsearch", "opensearch", "rank_eval"),
           lists_empty=("qrels", "run")),
    Format("srw", "labelled:read_srw_file", holds=("qrels",), aliases=("search_relevance",)),
    Format("umbrela", "labelled:read_umbrela_file", holds=("qrels",)),
)}

FORMATS: tuple[str, ...] = tuple(TABLE)
ALIASES: dict[str, str] = {"auto": "auto", **{a: f.name for f in TABLE.values() for a in f.aliases}}
#: The roles ``--columns`` names, per kind of input.
ROLES: dict[str, tuple[str, ...]] = {"qrels": ("query", "doc", "grade", "source"), "run": ("query", "doc", "score", "rank")}
QUERY_COLUMNS = ("query_id", "query", "qid", "topic")
DOC_COLUMNS = ("doc_id", "doc", "docno", "docid")
GRADE_COLUMNS = ("relevance", "grade", "rel", "label")
SCORE_COLUMNS = ("score", "sim")
RANK_COLUMNS = ("rank",)
#: A judgment's label source (``human:nist``, ``llm:MODEL``: :mod:`rankflavor.io.labels`), optional.
SOURCE_COLUMNS = ("source", "label_source")
#: Column names looked for, per role, when ``--columns`` does not name one.
DEFAULTS: dict[str, tuple[str, ...]] = {
    "query": QUERY_COLUMNS, "doc": DOC_COLUMNS, "grade": GRADE_COLUMNS, "score": SCORE_COLUMNS, "rank": RANK_COLUMNS,
    "source": SOURCE_COLUMNS,
}
#: Formats whose columns ``--columns`` may name.
NAMED_COLUMNS = tuple(f.name for f in TABLE.values() if f.named_columns)
#: The format each file-name suffix chooses.
SUFFIX_FORMATS: dict[str, str] = {s: f.name for f in TABLE.values() for s in f.suffixes}


def function_of(name: str) -> Any:
    """The function a :class:`Format` names as ``"module:function"`` (its module imported now)."""
    import importlib

    module, _, function = name.partition(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), function)


@dataclass(frozen=True)
class Input(os.PathLike):  # type: ignore[type-arg]
    """A path with the format to read it in and the names of its columns.

    It is a path-like object (``os.fspath`` gives the path), so everything that takes a path takes
    it; :func:`rankflavor.io.qrels.read_qrels` and :func:`rankflavor.io.run.read_run` read its
    ``format`` and ``columns``.

    Examples
    --------
    >>> src = Input("judged.csv", "csv", {"query": "qid", "grade": "label"})
    >>> os.fspath(src), str(src), src.format
    ('judged.csv', 'judged.csv', 'csv')
    """

    path: str
    format: str | None = None
    columns: Mapping[str, str] = field(default_factory=dict)
    #: Judgments: the ``--label-source`` rule for the file (:func:`rankflavor.io.labels.apply_rule`).
    label_source: str | None = None
    #: Judgments: the ``--labels`` choice (:func:`rankflavor.io.labels.select_labels`).
    labels: str | None = None

    def __fspath__(self) -> str:
        return self.path

    def __str__(self) -> str:
        return self.path


def format_named(name: str | None) -> str | None:
    """The canonical format of ``name`` (None or ``auto``: choose by the file's name).

    Raises
    ------
    UsageError
        For an unknown name, listing the formats.

    Examples
    --------
    >>> format_named("OpenSearch"), format_named("auto")
    ('es', None)
    """
    if name is None:
        return None
    text = name.strip().lower()
    text = ALIASES.get(text, text)
    if text == "auto":
        return None
    if text not in FORMATS:
        raise UsageError(f"unknown input format {name!r}; formats: auto, {', '.join(FORMATS)}." + did_you_mean(text, FORMATS))
    return text


def parse_columns(text: str | Mapping[str, str] | None, kind: str | None = None) -> dict[str, str]:
    """``query=qid,doc=docid,grade=label`` as ``{role: column name}``.

    Raises
    ------
    UsageError
        For an entry that is not ``role=name``, an unknown role, or a role given twice.

    Examples
    --------
    >>> parse_columns("query=qid, doc=docid,grade=label")
    {'query': 'qid', 'doc': 'docid', 'grade': 'label'}
    """
    if text is None:
        return {}
    items = list(text.items()) if isinstance(text, Mapping) else [
        tuple(part.split("=", 1)) if "=" in part else (part, "") for part in text.split(",") if part.strip()]
    roles = ROLES[kind] if kind else tuple(dict.fromkeys(ROLES["qrels"] + ROLES["run"]))
    out: dict[str, str] = {}
    for role, name in items:
        role, name = role.strip().lower(), name.strip()
        if not name:
            raise UsageError(f"--columns: expected ROLE=NAME (e.g. query=qid,doc=docid,grade=label), received {role!r}")
        if role not in roles:
            raise UsageError(f"--columns: unknown role {role!r}; roles: {', '.join(roles)}." + did_you_mean(role, roles))
        if role in out:
            raise UsageError(f"--columns: role {role!r} given twice")
        out[role] = name
    return out


def roles_of(roles: Mapping[str, str], kind: str) -> dict[str, str]:
    """The ``--columns`` roles (:func:`parse_columns`) that a ``kind`` input (``qrels``, ``run``)
    takes: one option names both files' columns (``grade`` the judgments', ``score`` the run's).

    >>> roles_of({"query": "qid", "grade": "label", "score": "sim"}, "run")
    {'query': 'qid', 'score': 'sim'}
    """
    return {role: name for role, name in roles.items() if role in ROLES[kind]}


def bare_name(path: str | os.PathLike[str]) -> str:
    """The file name without a compression suffix, lower-cased.

    Examples
    --------
    >>> bare_name("runs/BM25.JSONL.gz")
    'bm25.jsonl'
    """
    name = PurePath(os.fspath(path)).name.lower()
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def format_by_name(path: str | os.PathLike[str]) -> str:
    """The format a file's name suggests (its contents may refine it: a ``.csv`` whose header is
    Quepid's is ``quepid``, a ``.json`` holding ``requests`` is ``es``); ``trec`` for any other name.

    Examples
    --------
    >>> [format_by_name(p) for p in ("a.parquet", "b.jsonl.zst", "c.tsv", "qrels.dl19.txt")]
    ['parquet', 'jsonl', 'tsv', 'trec']
    """
    return SUFFIX_FORMATS.get(PurePath(bare_name(path)).suffix, "trec")


def split_input(path: str | os.PathLike[str], fmt: str | None, columns: str | Mapping[str, str] | None, kind: str
                ) -> tuple[str | os.PathLike[str], str | None, dict[str, str]]:
    """The path, the explicit format (None: by name) and the columns of an input, an
    :class:`Input`'s own filling what the call leaves out."""
    if isinstance(path, Input):
        fmt = fmt if fmt is not None else path.format
        columns = columns if columns else path.columns
        path = path.path
    chosen = format_named(fmt)
    cols = parse_columns(columns, kind)
    if cols and (chosen or format_by_name(path)) not in NAMED_COLUMNS:
        raise UsageError(f"--columns names the columns of {', '.join(NAMED_COLUMNS)} inputs; {path} is read as "
                         f"{chosen or format_by_name(path)} (give --qrels-format/--run-format)")
    return path, chosen, cols
