"""Judgments whose files say who gave them: each judgment read with its label source
(:mod:`rankflavor.io.labels`).

``srw`` qrels
    An OpenSearch Search Relevance Workbench judgment list (opensearch-project/search-relevance
    ``src/main/java/org/opensearch/searchrelevance/model/Judgment.java``, ``toXContent``): an object
    ``{"name", "type", "metadata", "judgmentRatings": [{"query": TEXT, "ratings": [{"docId": ID,
    "rating": R}, ...]}, ...]}``, as the plugin stores it, as its GET answers it (under
    ``_source``), or several lists in a search response (``hits.hits[*]._source``). ``rating``
    is a string in every list the plugin writes (``ImportJudgmentsProcessor``,
    ``LlmJudgmentsProcessor``, ``UbiJudgmentsProcessor`` put ``Map.of("docId", ..., "rating",
    ...)``; ``src/test/resources/judgment/ImportJudgments.json``), read as a number. The query is
    its text. The source comes from the list's ``type`` (``model/JudgmentType.java``):
    ``LLM_JUDGMENT`` -> ``llm:<metadata.modelId>``, ``UBI_JUDGMENT`` -> ``clicks:<metadata.clickModel>``
    (``coec``, the one click model ``UbiJudgmentsProcessor`` accepts), ``IMPORT_JUDGMENT`` ->
    ``human:import`` (imported lists are made outside the plugin, by people as a rule: ESCI's).
``umbrela`` qrels
    The judgments UMBRELA writes (castorini/umbrela ``src/umbrela/utils/common_utils.py``,
    ``write_modified_qrel``: ``qid Q0 docid grade`` lines) to
    ``modified_qrels/<qrels>_<model>_<categories>_<few-shot count>_<samples>.txt``
    (``src/umbrela/evaluation.py``, ``evaluate_judge_results``): the original judgments with the
    pairs of the judged categories (original grades; all four, ``0123``, by default) graded again
    by the LLM. The source ``llm:<model>`` is read from the file's name; a file that re-judged
    only some categories is refused, as which of its lines the LLM graded is not in it (the
    judge's JSONL output is not read either: its records carry the query and passage texts but
    no ids, ``src/umbrela/cli/contract_data.py``, ``judge-output``).
``quepid`` qrels, a book's judgements
    Quepid's export of a book's judgements (o19s/quepid
    ``app/controllers/api/v1/judgements_controller.rb``, ``index`` as CSV): the header
    ``query,docid,<judge>,<judge>,...``, one column per judge (``Anonymous`` for judgements
    without a user), one row per query/doc pair, an empty cell where that judge gave no rating.
    Each rating is a judgment with the source ``human:<judge>`` (the export does not say which
    judges are Quepid's AI judges: name them with ``--label-source 'NAME=llm:MODEL'``). A pair
    rated by several judges is several judgments: the ``duplicates`` knob or ``--labels`` decide
    (or ``eval --raters RULE`` aggregates them). A row no judge rated is counted and left out.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from rankflavor.errors import InputError
from rankflavor.io.columns import from_numpy, string_array
from rankflavor.io.formats.delimited import (
    decode,
    is_quepid_book,
    read_quepid_ratings,
    read_quepid_snapshot,
    rows,
    sniff,
)
from rankflavor.io.formats.jsondoc import _fail, _id, _lists, _number, _shown
from rankflavor.io.formats.table import by_lines, numbers, to_qrels
from rankflavor.io.nul import REASON, has_nul
from rankflavor.io.tables import Qrels, Run

#: ``JudgmentType`` -> the label source's kind and the metadata key naming its detail.
SRW_TYPES: dict[str, tuple[str, str | None, str]] = {
    "LLM_JUDGMENT": ("llm", "modelId", "llm"),
    "UBI_JUDGMENT": ("clicks", "clickModel", "clicks:coec"),
    "IMPORT_JUDGMENT": ("human", None, "human:import"),
}


def read_srw(source: str, value: Any) -> Qrels:
    """Judgments of Search Relevance Workbench judgment lists, each with its list's source."""
    lists = _lists(value, "$")
    if not lists:
        raise _fail(source, "$", "expected a Search Relevance Workbench judgment list (an object with judgmentRatings)")
    queries: list[str] = []
    docs: list[str] = []
    ratings: list[Any] = []
    sources: list[str] = []
    paths: list[str] = []
    for path, judgment in lists:
        label = _srw_source(source, path, judgment)
        entries = judgment["judgmentRatings"]
        if not isinstance(entries, list):
            raise _fail(source, path + ".judgmentRatings", "expected an array of {query, ratings}")
        for i, entry in enumerate(entries):
            at = f"{path}.judgmentRatings[{i}]"
            if not isinstance(entry, dict) or not isinstance(entry.get("ratings"), list):
                raise _fail(source, at, "expected {\"query\": TEXT, \"ratings\": [{\"docId\", \"rating\"}, ...]}")
            query = _id(source, at + ".query", entry.get("query"))
            for j, rating in enumerate(entry["ratings"]):
                where = f"{at}.ratings[{j}]"
                if not isinstance(rating, dict):
                    raise _fail(source, where, "expected {\"docId\": ID, \"rating\": R}")
                docs.append(_id(source, where + ".docId", rating.get("docId")))
                ratings.append(_rating(source, where + ".rating", rating.get("rating")))
                queries.append(query)
                sources.append(label)
                paths.append(where)
    if not queries:
        raise _fail(source, "$", "holds no rating (judgmentRatings are empty)")
    table = pa.table({"query": string_array(queries), "doc": string_array(docs),
                      "grade": from_numpy(np.asarray(ratings, dtype=np.float64)), "source": string_array(sources)})
    return to_qrels(table, source, {"query": "query", "doc": "doc", "grade": "grade", "source": "source"},
                    lambda row: (None, paths[row] + ": "), from_file=False)


def _srw_source(source: str, path: str, judgment: dict[str, Any]) -> str:
    kind = judgment.get("type")
    if kind not in SRW_TYPES:
        raise _fail(source, path + ".type", f"judgment list type {kind!r} is none of {', '.join(SRW_TYPES)}; "
                    "its label source cannot be told")
    prefix, key, fallback = SRW_TYPES[kind]
    found = judgment.get("metadata")
    metadata: dict[str, Any] = found if isinstance(found, dict) else {}
    detail = metadata.get(key) if key is not None else None
    if isinstance(detail, str) and detail.strip():
        name = detail.strip().lower() if prefix == "clicks" else detail.strip()
        return f"{prefix}:{name}"
    return fallback


def _rating(source: str, path: str, value: Any) -> float:
    """A rating as the plugin writes it (text) or as a number."""
    if isinstance(value, str):
        try:
            if not value.strip().isascii() or "_" in value:
                raise ValueError
            number = float(value)
        except ValueError:
            raise _fail(source, path, f"rating {_shown(value)} is not a number") from None
        return _number(source, path, number, "rating")
    return _number(source, path, value, "rating")


_UMBRELA_NAME = re.compile(r"^(?P<base>.+)_(?P<model>[^_/]+)_(?P<cats>[0-3]+)_(?P<shots>\d+)_(?P<samples>\d+)\.txt$")


def umbrela_source(path: str | os.PathLike[str]) -> str:
    """``llm:<model>`` from the name UMBRELA gives its judgments file.

    >>> umbrela_source("modified_qrels/dl19-passage_gpt-4o_0123_0_1.txt")
    'llm:gpt-4o'

    Raises
    ------
    InputError
        For a name UMBRELA does not write, or one whose judged categories are not all four.
    """
    from rankflavor.io.formats.spec import bare_name

    source = str(path)
    found = _UMBRELA_NAME.match(bare_name(path))
    if found is None:
        raise InputError(source, None, "is not named as UMBRELA names its judgments "
                         "(<qrels>_<model>_<categories>_<few-shot>_<samples>.txt), so its model is not known: read it "
                         "with --qrels-format trec --label-source llm:MODEL")
    cats = found.group("cats")
    if sorted(set(cats)) != ["0", "1", "2", "3"]:
        raise InputError(source, None, f"UMBRELA graded again only the pairs of original grade(s) {', '.join(sorted(set(cats)))}; "
                         "the other lines keep the original judgments' grades, and which lines are which is not in the "
                         "file: judge all four categories (--judge_cat 0,1,2,3), or label the file's sources yourself "
                         "(a fifth SOURCE field)")
    return f"llm:{found.group('model')}"


def read_umbrela(path: str | os.PathLike[str], data: bytes) -> Qrels:
    """UMBRELA's judgments: TREC qrels lines, every one of the source its file's name gives."""
    from rankflavor.io.labels.sources import one_source
    from rankflavor.io.lines import parse_qrels_lines

    label = umbrela_source(path)
    qrels = parse_qrels_lines(str(path), data)
    if qrels.label_source is not None:
        raise InputError(str(path), int(qrels.line_of(0) or 1), "has a fifth field: UMBRELA writes four "
                         "('qid Q0 docid grade'); read it as --qrels-format trec")
    return dataclasses.replace(qrels, label_source=one_source(len(qrels), label))


def read_srw_file(source: str, data: bytes, kind: str, columns: Mapping[str, str], value: Any = None) -> Qrels:
    """The ``srw`` format's reader: a Search Relevance Workbench judgment list (``value``: its JSON
    value when it was parsed already, to choose the format)."""
    from rankflavor.io.formats.jsondoc import load

    return read_srw(source, load(source, data) if value is None else value)


def read_umbrela_file(source: str, data: bytes, kind: str, columns: Mapping[str, str]) -> Qrels:
    """The ``umbrela`` format's reader."""
    return read_umbrela(source, data)


def read_quepid_book(source: str, data: bytes) -> Qrels:
    """Quepid's book judgements CSV: a judgment per rated cell, its source ``human:<judge>``."""
    text = decode(source, data)
    header: list[str] | None = None
    judges: list[str] = []
    queries: list[str] = []
    docs: list[str] = []
    grades: list[str] = []
    sources: list[str] = []
    lines: list[int] = []
    skipped = 0
    for line, row in rows(source, text, ","):
        if not row:
            continue
        if header is None:
            header = [c.strip() for c in row]
            if not is_quepid_book(header):
                raise InputError(source, line, "expected Quepid's book judgements header 'query,docid,<judge>,...'")
            judges = [f"human:{name or 'Anonymous'}" for name in header[2:]]
            continue
        if len(row) != len(header):
            raise InputError(source, line, f"expected {len(header)} fields ({', '.join(header)}), found {len(row)}")
        query, doc = row[0].strip(), row[1].strip()
        rated = [(judge, cell.strip()) for judge, cell in zip(judges, row[2:], strict=True) if cell.strip()]
        if not rated:
            skipped += 1  # a pair no judge rated
            continue
        for what, value in (("query", query), ("docid", doc)):
            if has_nul(value):
                raise InputError(source, line, f"{what} {REASON}")
        for judge, cell in rated:
            queries.append(query)
            docs.append(doc)
            grades.append(cell)
            sources.append(judge)
            lines.append(line)
    if header is None:
        raise InputError(source, None, "is empty; expected Quepid's book judgements header 'query,docid,<judge>,...'")
    if not lines:
        raise InputError(source, None, "holds no rating")
    at = np.asarray(lines, dtype=np.int64)
    where = by_lines(at)
    table = pa.table({"query": string_array(queries), "docid": string_array(docs),
                      "rating": from_numpy(numbers(string_array(grades), "rating", source, where)),
                      "source": string_array(sources)})
    return to_qrels(table, source, {"query": "query", "doc": "docid", "grade": "rating", "source": "source"}, where,
                    lines=at, skipped=skipped)


def read_quepid(source: str, data: bytes, kind: str, columns: Mapping[str, str]) -> Qrels | Run:
    """The ``quepid`` format's reader: a book's judgements or a ratings export, or a snapshot (a run)."""
    if kind == "run":
        return read_quepid_snapshot(source, data)
    if sniff(data[:4096]) == "quepid-book":
        return read_quepid_book(source, data)
    return read_quepid_ratings(source, data)

