"""Results files: one JSON format, the source of truth every renderer can read back.

A results file is :meth:`Results.to_dict() <rankflavor.engine.results.Results.to_dict>` with every
per-query value (whatever ``-q`` says), plus what a later reader needs to print exactly what the
command printed (``extras``: trec_eval's ``runid``/``num_q`` rows; each measure's ``label``, the
name it was asked by, which trec's layout orders by; the sign of a NaN, as trec's ``-nan``), and provenance: the SHA-256 of every input, rankflavor's version, the config and its
pinned flavor, a UTC timestamp and the command line. It stays the document the HTML report
reads as ``eval`` (``measures`` and ``counts``; provenance ``sha256`` values are the hashes
the report shows).

:func:`read_results` rebuilds the :class:`~rankflavor.engine.results.Results` from the file: each
measure from its canonical flavor string (they parse back), values and statuses as written.
Rendering it gives the same bytes as rendering the results the command held
(``tests/project/test_project_results.py`` checks every format).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankflavor.base.finite import dumps
from rankflavor.errors import InputError
from rankflavor.io.documents import Wording, read_json_document

if TYPE_CHECKING:
    from rankflavor.engine.results import Results

#: ``format`` of a results file, and its version.
FORMAT, VERSION = "rankflavor.results", 1


def with_provenance(results: Results, *, inputs: Mapping[str, str | os.PathLike[str] | None] | None = None,
                    command: str | None = None, project: Mapping[str, Any] | None = None,
                    stamp: bool = True) -> Results:
    """``results`` with its provenance completed: each input file's SHA-256 (``inputs`` maps a
    provenance role, ``qrels`` or ``run``, to the file read), the command line, the project block
    (:func:`rankflavor.project.flagging.project_block`) and, with ``stamp``, a UTC timestamp."""
    from rankflavor._version import __version__
    from rankflavor.base.sources import file_sha256

    prov: dict[str, Any] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in results.provenance.items()}
    prov.setdefault("rankflavor", __version__)
    for role, path in (inputs or {}).items():
        if path is None or not os.path.isfile(path):
            continue
        record = prov.setdefault(role, {})
        record.setdefault("source", os.fspath(path))
        record["sha256"] = file_sha256(path)
        record["hash_of"] = "file bytes"
    if project is not None:
        prov["project"] = dict(project)
    if command is not None:
        prov["command"] = command
    if stamp:
        prov["created"] = datetime.now(UTC).isoformat(timespec="seconds")
    return replace(results, provenance=prov)


def _negative_nan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x) and math.copysign(1.0, x) < 0


def results_document(results: Results) -> dict[str, Any]:
    """The JSON value of a results file (see the module doc)."""
    doc: dict[str, Any] = {"format": FORMAT, "format_version": VERSION}
    data = results.to_dict()
    for m, out in zip(results.measures, data["measures"], strict=True):
        out["label"] = m.measure.label  # (trec's layout orders by it; ``name`` is the label or metric@k)
        if _negative_nan(float(m.summary)):
            out["negative_nan"] = True
        for v, row in zip(m.values, out["per_query"], strict=True):
            if not isinstance(v, str) and _negative_nan(float(v)):
                row["negative_nan"] = True
    doc.update(data)
    doc["extras"] = list(results.extras)
    return doc


def write_results(path: str | os.PathLike[str], results: Results) -> Path:
    """Write ``results`` as a results file (UTF-8 JSON, NaN as null); return the path."""
    p = Path(path)
    text = dumps(results_document(results), ensure_ascii=False) + "\n"
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(str(p), None, f"cannot write the results file: {exc.strerror or exc}") from None
    return p


_NOT_RESULTS = ("not a results file: expected the JSON `rankflavor eval -o FILE` writes "
                "(keys measures, counts, provenance)")
_WORDING = Wording(unreadable="cannot read the results file: {reason}", not_object=_NOT_RESULTS)


def load_json(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A results file's JSON value; InputError when it cannot be read or is not a results file."""
    read = read_json_document(Path(path), _WORDING)
    doc = read.data
    if not isinstance(doc.get("measures"), list) or not isinstance(doc.get("counts"), dict):
        raise InputError(read.source, None, _NOT_RESULTS)
    return doc


def _nan(negative: bool) -> float:
    return -math.nan if negative else math.nan


def _field(obj: Mapping[str, Any], key: str, where: str, source: str, kinds: type | tuple[type, ...]) -> Any:
    if key not in obj or not isinstance(obj[key], kinds):
        raise InputError(source, None, f"{where}.{key}: missing or not a {getattr(kinds, '__name__', kinds)}")
    return obj[key]


def results_from_document(doc: Mapping[str, Any], source: str) -> Results:
    """Rebuild :class:`~rankflavor.engine.results.Results` from a results file's JSON value."""
    import numpy as np

    from rankflavor.align import Counts
    from rankflavor.engine.results import MeasureResult, Results
    from rankflavor.errors import FlavorError
    from rankflavor.metrics.measure import parse_measure

    measures = []
    for i, m in enumerate(doc["measures"]):
        where = f"measures[{i}]"
        if not isinstance(m, Mapping):
            raise InputError(source, None, f"{where}: expected an object")
        flavor = _field(m, "flavor", where, source, str)
        try:
            measure = parse_measure(flavor)
        except FlavorError as exc:
            raise InputError(source, None, f"{where}.flavor: {exc}") from None
        name = m.get("name", measure.name)
        label = m["label"] if "label" in m else (name if name != measure.name else None)
        measure = replace(measure, label=None if label is None else str(label), preset=m.get("preset"))
        rows = m.get("per_query")
        if not isinstance(rows, list):
            raise InputError(source, None, f"{where}.per_query: missing; only a file written by `rankflavor eval -o` "
                             "(every per-query value) can be read back")
        text_valued = measure.spec.summary == "none"
        values: list[Any] = []
        for j, r in enumerate(rows):
            if not isinstance(r, Mapping) or not isinstance(r.get("query"), str):
                raise InputError(source, None, f"{where}.per_query[{j}]: expected {{query, value, status}}")
            v = r.get("value")
            if v is None:
                values.append(_nan(bool(r.get("negative_nan"))))
            elif isinstance(v, str) and text_valued:
                values.append(v)
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                values.append(float(v))
            else:
                raise InputError(source, None, f"{where}.per_query[{j}].value: expected a number or null, got {v!r}")
        summary = m.get("value")
        measures.append(MeasureResult(
            measure=measure,
            queries=np.array([r["query"] for r in rows], dtype=object),
            values=np.array(values, dtype=object) if text_valued else np.array(values, dtype=np.float64),
            status=np.array([str(r.get("status", "ok")) for r in rows], dtype=object),
            summary=_nan(bool(m.get("negative_nan"))) if summary is None else float(summary),
            n_queries=int(_field(m, "n_queries", where, source, int)),
            skipped_empty=int(m.get("skipped_empty", 0)),
            skipped_missing=int(m.get("skipped_missing", 0)),
        ))
    try:
        counts = Counts(**doc["counts"])
    except TypeError as exc:
        raise InputError(source, None, f"counts: {exc}") from None
    provenance = doc.get("provenance", {})
    extras = doc.get("extras", [])
    if not isinstance(provenance, dict) or not isinstance(extras, list):
        raise InputError(source, None, "provenance must be an object and extras a list")
    return Results(measures, counts, provenance, tuple(str(x) for x in extras))


def read_results(path: str | os.PathLike[str]) -> Results:
    """Read a results file back into :class:`~rankflavor.engine.results.Results`."""
    return results_from_document(load_json(path), os.fspath(path))


__all__ = ["FORMAT", "VERSION", "load_json", "read_results", "results_document", "results_from_document",
           "with_provenance", "write_results"]
