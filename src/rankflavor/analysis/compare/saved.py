"""Compare systems from saved comparisons (:meth:`Comparison.to_dict` JSON): the per-query values
they hold are tested again together, without re-reading any run.

Systems scored against different judgments are not comparable: their qrels hashes must agree
(:func:`~rankflavor.engine.provenance.check_same_qrels`) unless ``force``. Measures are matched
by their canonical flavor string, so two files of different flavors never meet silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from rankflavor._version import __version__
from rankflavor.analysis.compare.analysis import analyse
from rankflavor.analysis.compare.api import DEFAULT_TESTS
from rankflavor.analysis.compare.queries import align_queries
from rankflavor.analysis.compare.result import Comparison, MeasureComparison
from rankflavor.analysis.compare.scores import RunScores
from rankflavor.analysis.compare.settings import make_settings
from rankflavor.base.progress import Progress
from rankflavor.engine.provenance import check_same_qrels
from rankflavor.errors import InputError, UsageError
from rankflavor.io.documents import Wording, read_json_document

_NOT_SAVED = "not a saved comparison (rankflavor compare --format json)"
_WORDING = Wording(unreadable="not a readable comparison JSON file: {error}",
                   invalid="not a readable comparison JSON file: {error}", not_object=_NOT_SAVED, line=False)


def _load(item: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    if isinstance(item, Mapping):
        return "saved comparison", item
    read = read_json_document(item, _WORDING, text=True)
    if "measures" not in read.data or "provenance" not in read.data:
        raise InputError(read.source, None, _NOT_SAVED)
    return read.source, read.data


def compare_saved(
    saved: Sequence[str | os.PathLike[str] | Mapping[str, Any]],
    metrics: Iterable[str] | None = None,
    *,
    baseline: str | None = None,
    queries: str = "error",
    tests: str | Sequence[str] = DEFAULT_TESTS,
    correction: str | None = None,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    ci_level: float | None = 0.95,
    force: bool = False,
    progress: Progress | None = None,
) -> Comparison:
    """Test together the systems of several saved comparisons (paths or :meth:`Comparison.to_dict` values).

    ``metrics`` picks measures by name or flavor string (default: every measure all files share).
    Raises :class:`~rankflavor.analysis.compare.QrelsMismatchError` when the files were scored against
    different qrels and ``force`` is False. ``progress`` is told of each resampling test's blocks.
    """
    docs = [_load(x) for x in saved]
    names: list[str] = []
    qrels_of: dict[str, str] = {}
    runs_info: list[Any] = []
    per_measure: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    display: dict[str, str] = {}
    for source, doc in docs:
        q_hash = str(doc["provenance"].get("qrels", {}).get("sha256", ""))
        mapping: dict[str, str] = {}
        for s in doc.get("systems", []):
            name = s if s not in names else f"{s}#{len(names) + 1}"
            mapping[s] = name
            names.append(name)
            qrels_of[name] = q_hash
        runs_info += doc["provenance"].get("runs", [])
        for m in doc["measures"]:
            pq = m.get("per_query")
            if not pq:
                raise InputError(source, None, f"measure {m.get('name')} has no per-query values to test")
            qs = np.asarray(pq["queries"], dtype=str)
            order = np.argsort(qs, kind="stable")
            block = per_measure.setdefault(m["flavor"], {})
            display.setdefault(m["flavor"], m["name"])
            for s, vals in pq["values"].items():
                block[mapping[s]] = (qs[order], np.asarray(vals, dtype=np.float64)[order])
    if len(names) < 2:
        raise UsageError(f"saved: need at least two systems in all, found {len(names)}")
    check_same_qrels(qrels_of, force)
    wanted = None if metrics is None else set(metrics)
    shared = [f for f, b in per_measure.items() if len(b) == len(names)
              and (wanted is None or f in wanted or display[f] in wanted)]
    if not shared:
        raise UsageError("saved: no measure (same flavor string) is present for every system"
                         + (f" among {', '.join(sorted(wanted))}" if wanted else ""))
    if baseline is not None and baseline not in names:
        raise UsageError(f"baseline: no system named {baseline!r}; systems: {', '.join(names)}")
    settings = make_settings(tests, correction, alpha, n_resamples, seed, queries, baseline, ci_level)
    blocks = []
    for flavor in shared:
        aligned = align_queries([RunScores(*per_measure[flavor][n]) for n in names], names, settings.queries)
        systems, pairs = analyse(aligned.matrix, aligned.queries, names, settings, progress)
        blocks.append(MeasureComparison(flavor, display[flavor], aligned.queries, aligned.matrix, systems, pairs,
                                        aligned.dropped, aligned.zero_filled))
    distinct = sorted(set(qrels_of.values()))
    provenance = {"rankflavor": __version__, "saved": [src for src, _ in docs],
                  "qrels": {"sha256": distinct[0]} if len(distinct) == 1 else {"sha256": distinct, "forced": True},
                  "runs": runs_info, "flavors": shared}
    return Comparison(tuple(names), settings, blocks, provenance)


__all__ = ["compare_saved"]
