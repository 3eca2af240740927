"""Benchmarks by name: ``irds:<dataset id>`` wherever judgments are read, through ir_datasets.

``read_qrels("irds:msmarco-passage/trec-dl-2019/judged")`` (and so every command's QRELS and
every library call taking qrels) reads the judgments of an `ir_datasets
<https://ir-datasets.com>`_ dataset from ir_datasets' own cache (``IR_DATASETS_HOME``, default
``~/.ir_datasets``), through its public API (``ir_datasets.load``, ``qrels_iter``,
``qrels_defs``). ir_datasets is imported only when such a name is read (``pip install
'rankflavor[irds]'``).

Nothing is downloaded here. Before iterating, the files the dataset's qrels come from are looked
for in the cache; one missing is an :class:`~rankflavor.errors.InputError` naming the dataset,
the file expected and the command that fetches it (``ir_datasets export <id> qrels``). Offline,
ir_datasets would otherwise try its mirrors (up to 15 s per try, 3 tries each) and raise a
traceback. Finding those files reads ir_datasets' handler objects (the attributes of its
``Cache`` and ``Download`` objects, checked against ir_datasets 0.6.3): ir_datasets has no public
"is it cached" call. Where the walk finds no file to check, reading goes ahead and any error
ir_datasets raises becomes an InputError naming the dataset.

The dataset's documented grade definitions (``qrels_defs()``: grade -> meaning) give its grades
and relevance threshold (:func:`grade_rule`), made a label scale by
:mod:`rankflavor.presets.irds`, which ``scale=`` / ``--scale`` take when not given, and travel with the judgments into the results' provenance
(:attr:`~rankflavor.io.tables.Qrels.origin`). Queries and document texts, for a judging command,
come the same way: :func:`dataset_queries`, :func:`dataset_docs`.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankflavor.errors import InputError, UsageError, did_you_mean
from rankflavor.io.columns import dictionary_array, string_array
from rankflavor.io.irdsname import PREFIX, irds_id
from rankflavor.io.nul import REASON, first_nul
from rankflavor.io.tables import Qrels

_INSTALL = "pip install 'rankflavor[irds]' (or: pip install ir_datasets)"
#: Depth of ir_datasets' handler objects walked to find their cache files.
_DEPTH = 8


def _library() -> Any:
    try:
        import ir_datasets
    except ImportError:
        raise UsageError(f"{PREFIX}... names an ir_datasets dataset, but ir_datasets is not installed: {_INSTALL}"
                         ) from None
    return ir_datasets


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ir_datasets")
    except PackageNotFoundError:  # an unpackaged checkout
        return str(getattr(_library(), "__version__", "unknown"))


def load_dataset(dataset_id: str) -> Any:
    """``ir_datasets.load(dataset_id)``, an unknown id an :class:`InputError` naming it.

    Raises
    ------
    UsageError
        When ir_datasets is not installed.
    InputError
        For an id ir_datasets does not know (with the nearest ids it does).
    """
    irds = _library()
    source = PREFIX + dataset_id
    try:
        return irds.load(dataset_id)
    except KeyError:
        known = [str(k) for k in irds.registry]
        raise InputError(source, None, f"ir_datasets {_version()} knows no dataset {dataset_id!r}."
                         f"{did_you_mean(dataset_id, known)} List them with: ir_datasets list") from None


def missing_files(handler: Any) -> list[str]:
    """Cache files that reading ``handler`` (an ir_datasets handler) would have to download
    (none: it reads from the cache alone, as far as its objects show).

    A ``Cache`` whose file is present needs nothing more; otherwise what it is built from is
    looked at (and named with it). A ``Download`` needs its cache file (``path(force=False)`` names it without
    fetching), or the network when it has none.
    """
    from ir_datasets.util import Cache, Download

    missing: list[str] = []

    def visit(obj: Any, inside: Callable[[], None]) -> bool:
        if isinstance(obj, Cache):
            built = str(obj.path(force=False))
            if os.path.exists(built):
                return True
            before = len(missing)
            inside()
            if len(missing) > before:  # built from files that are missing too
                missing[before:] = [f"{built} (or, to build it from, {', '.join(missing[before:])})"]
            return True
        if isinstance(obj, Download):
            # path(force=False) downloads to a temporary file when there is no cache path
            cache = getattr(obj, "_cache_path", None)
            if cache is None or not os.path.exists(cache):
                missing.append(str(cache) if cache is not None else "(a download ir_datasets keeps no copy of)")
            return True
        return False

    _walk(handler, visit)
    return missing


def _walk(root: Any, visit: Callable[[Any, Callable[[], None]], bool]) -> None:
    """Depth-first over the objects below ``root`` (lists, tuples, and the attributes of
    ir_datasets' own objects), each once and at most :data:`_DEPTH` deep. ``visit(obj, inside)``
    handles ``obj`` and says whether it did (``inside()`` walks ``obj``'s attributes); an
    ir_datasets object it leaves is walked into."""
    seen: set[int] = set()

    def walk(obj: Any, depth: int) -> None:
        if depth > _DEPTH or id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, (list, tuple)):
            for item in obj:
                walk(item, depth + 1)
            return

        def inside() -> None:
            for value in getattr(obj, "__dict__", {}).values():
                walk(value, depth + 1)

        if not visit(obj, inside) and type(obj).__module__.startswith("ir_datasets"):
            inside()

    walk(root, 0)


def _require_cached(dataset_id: str, handler: Any, what: str) -> None:
    missing = missing_files(handler)
    if missing:
        where = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise InputError(
            PREFIX + dataset_id, None,
            f"the {what} of ir_datasets dataset {dataset_id!r} are not in its cache ({where} is missing; "
            f"IR_DATASETS_HOME={_home()}). rankflavor does not download: fetch them first with "
            f"`ir_datasets export {dataset_id} {what} > /dev/null`, or copy the file there")


def _home() -> str:
    from ir_datasets.util import home_path

    return str(home_path())


def _open(dataset_id: str, what: str) -> Any:
    dataset = load_dataset(dataset_id)
    if not dataset.has(what):
        provides = [k for k in ("docs", "queries", "qrels", "scoreddocs", "docpairs") if dataset.has(k)]
        raise InputError(PREFIX + dataset_id, None, f"ir_datasets dataset {dataset_id!r} has no {what} "
                         f"(it provides {', '.join(provides) or 'nothing'}); name a subset that has, e.g. "
                         f"ir_datasets list | grep {dataset_id.split('/')[0]}")
    _require_cached(dataset_id, getattr(dataset, f"{what}_handler")(), what)
    return dataset


def qrels_definitions(dataset: Any) -> dict[int, str]:
    """The dataset's documented grade definitions, ``{grade: meaning}`` (empty when it has none)."""
    try:
        defs = dataset.qrels_defs()
    except (AttributeError, NotImplementedError):
        return {}
    return {int(g): str(text) for g, text in (defs or {}).items()}


def read_irds_qrels(dataset_id: str) -> Qrels:
    """The judgments of ir_datasets dataset ``dataset_id``, read from ir_datasets' cache.

    The rows come in ``qrels_iter()`` order; their source is ``irds:<id>``, and
    :attr:`~rankflavor.io.tables.Qrels.origin` holds the id, ir_datasets' version, the grade
    definitions, the cache files read and their SHA-256.

    Raises
    ------
    UsageError
        When ir_datasets is not installed.
    InputError
        For an unknown id, a dataset without qrels, qrels not in the cache (naming the file and the
        command that fetches it), or any error ir_datasets raises while reading them.
    """
    source = PREFIX + dataset_id
    dataset = _open(dataset_id, "qrels")
    queries: list[str] = []
    docs: list[str] = []
    grades: list[float] = []
    try:
        for row in dataset.qrels_iter():
            queries.append(row.query_id)
            docs.append(row.doc_id)
            grades.append(row.relevance)
    except Exception as exc:  # ir_datasets' own errors: a failed download, a malformed line, a hash mismatch
        raise InputError(source, None, f"ir_datasets could not read the qrels of {dataset_id!r}: "
                         f"{type(exc).__name__}: {exc}") from None
    if not grades:
        raise InputError(source, None, f"ir_datasets dataset {dataset_id!r} has no judgments")
    grade = np.asarray(grades, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(grade))
    if len(bad):
        raise InputError(source, int(bad[0]) + 1, f"judgment {int(bad[0]) + 1} of qrels_iter(): grade {float(grade[bad[0]])!r} "
                         "is not a finite number")
    q, d = dictionary_array(queries), string_array(docs)  # (query ids dictionary-encoded, as the readers do)
    for ids, what in ((q, "query id"), (d, "doc id")):
        row = first_nul(ids)
        if row is not None:
            raise InputError(source, row + 1, f"judgment {row + 1} of qrels_iter(): its {what} {REASON}")
    return Qrels(q, d, grade, source, origin=describe(dataset_id, dataset))


def describe(dataset_id: str, dataset: Any | None = None) -> dict[str, Any]:
    """What a results' provenance says of the judgments of ``irds:<dataset_id>``."""
    from rankflavor.base.sources import file_sha256

    dataset = dataset if dataset is not None else load_dataset(dataset_id)
    files = _cache_files(dataset.qrels_handler())
    info: dict[str, Any] = {
        "ir_datasets": {"id": dataset_id, "version": _version(),
                        "qrels_defs": {str(g): t for g, t in sorted(qrels_definitions(dataset).items())},
                        "cache_files": files}}
    rule = grade_rule(dataset_id)
    if rule is not None:
        info["ir_datasets"]["documented_grades"] = rule.describe()
    if len(files) == 1:
        info["sha256"], info["hash_of"] = file_sha256(files[0]), "bytes of the ir_datasets cache file"
    return info


def _cache_files(handler: Any) -> list[str]:
    """The cache files ``handler`` reads (those :func:`missing_files` checks), present ones."""
    from ir_datasets.util import Cache, Download

    found: list[str] = []

    def visit(obj: Any, inside: Callable[[], None]) -> bool:
        path = None
        if isinstance(obj, Cache):
            path = str(obj.path(force=False))
        elif isinstance(obj, Download):
            path = getattr(obj, "_cache_path", None)
        if path is not None and os.path.isfile(path):
            found.append(str(path))
            return True
        return False

    _walk(handler, visit)
    return sorted(set(found))


# -- the grades it documents --------------------------------------------------------------------------

_REL = re.compile(r"\brel=(\d+)")


@dataclass(frozen=True)
class GradeRule:
    """What a dataset's documentation says of its grades (:func:`grade_rule`).

    Attributes
    ----------
    grades : the defined non-negative grades and 0, ascending.
    rel : the relevance threshold.
    negatives : ``zero`` when it defines a negative grade (a judgment), else ``unjudged``.
    how : where ``rel`` comes from, in words.
    definitions : ``{grade: meaning}`` as ``qrels_defs()`` gives them.
    """

    grades: tuple[int, ...]
    rel: int
    negatives: str
    how: str
    definitions: dict[int, str]

    def describe(self) -> str:
        return f"grades {{{','.join(map(str, self.grades))}}}, {self.how}"


@functools.lru_cache(maxsize=64)
def grade_rule(dataset_id: str) -> GradeRule | None:
    """The grades and relevance threshold of ``irds:<dataset_id>``, from its documented grade
    definitions; None when it documents none.

    Grades: the defined non-negative grades, and 0 (a judged non-relevant document, which
    datasets defining only their relevant grades still hold). Relevance threshold, in this order:
    the ``rel=N`` its documentation's official measures state (DL19: ``AP(rel=2)``), else its
    smallest positive grade (trec_eval's default: a positive grade is relevant). Negative grades
    it defines (the TREC Web track's -2, junk) are judgments: ``negatives=zero``. The label
    scale made of it: :func:`rankflavor.presets.irds.dataset_scale`.
    """
    dataset = load_dataset(dataset_id)
    defs = qrels_definitions(dataset)
    if not defs:
        return None
    grades = tuple(sorted({0, *(g for g in defs if g >= 0)}))
    positive = [g for g in grades if g > 0]
    stated = _stated_threshold(dataset)
    rel = stated if stated is not None else (positive[0] if positive else 1)
    how = (f"relevant >= {rel} (as its official measures state)" if stated is not None
           else f"relevant >= {rel} (its smallest positive grade)")
    return GradeRule(grades, rel, "zero" if any(g < 0 for g in defs) else "unjudged", how, defs)


def _stated_threshold(dataset: Any) -> int | None:
    try:
        measures = (dataset.documentation() or {}).get("official_measures") or []
    except Exception:  # documentation is read from ir_datasets' own YAML; a dataset may have none
        return None
    stated = {int(m) for text in measures for m in _REL.findall(str(text))}
    return stated.pop() if len(stated) == 1 else None


# -- queries and documents, for a judging command ------------------------------------------------------

def dataset_queries(dataset_id: str) -> dict[str, str]:
    """``{query id: text}`` of ir_datasets dataset ``dataset_id``, read from its cache.

    The text is the query's ``text`` field (MS MARCO, TREC DL), else its first text field
    (``title`` of TREC topics). Like the qrels, nothing is downloaded: queries not in the
    cache are an InputError naming the file and the command that fetches them.
    """
    dataset = _open(dataset_id, "queries")
    out: dict[str, str] = {}
    try:
        for q in dataset.queries_iter():
            out[q.query_id] = _text(q)
    except Exception as exc:  # as read_irds_qrels
        raise InputError(PREFIX + dataset_id, None, f"ir_datasets could not read the queries of {dataset_id!r}: "
                         f"{type(exc).__name__}: {exc}") from None
    return out


class DocTexts(Mapping[str, str]):
    """Document texts by id, read on demand from ir_datasets' ``docs_store()``.

    ``texts[doc_id]`` looks one document up (``docs_store().get``); ``texts.get_many(ids)``
    many at once. The first lookup may build ir_datasets' lookup index over the collection
    (minutes for MS MARCO's 8.8M passages; once per cache).
    """

    def __init__(self, dataset_id: str, dataset: Any):
        self.dataset_id = dataset_id
        self._dataset = dataset
        self._store: Any = None

    def _docs(self) -> Any:
        if self._store is None:
            self._store = self._dataset.docs_store()
        return self._store

    def __getitem__(self, doc_id: str) -> str:
        try:
            return _text(self._docs().get(doc_id))
        except KeyError:
            raise KeyError(doc_id) from None

    def get_many(self, doc_ids: list[str]) -> dict[str, str]:
        """``{doc id: text}`` of the ids the collection holds (an absent id is left out)."""
        return {k: _text(d) for k, d in self._docs().get_many(doc_ids).items()}

    def __iter__(self) -> Iterator[str]:
        return (d.doc_id for d in self._dataset.docs_iter())

    def __len__(self) -> int:
        return int(self._dataset.docs_count())


def dataset_docs(dataset_id: str) -> DocTexts:
    """The documents of ir_datasets dataset ``dataset_id`` as a read-only ``{doc id: text}``
    mapping (:class:`DocTexts`); an InputError, as :func:`dataset_queries`, when the collection
    is not in the cache."""
    return DocTexts(dataset_id, _open(dataset_id, "docs"))


def _text(record: Any) -> str:
    text = getattr(record, "text", None)
    if isinstance(text, str):
        return text
    for value in tuple(record)[1:]:  # (the first field is the id)
        if isinstance(value, str):
            return value
    return ""


__all__ = ["PREFIX", "DocTexts", "GradeRule", "dataset_docs", "dataset_queries", "grade_rule", "irds_id",
           "load_dataset", "missing_files", "qrels_definitions", "read_irds_qrels"]
