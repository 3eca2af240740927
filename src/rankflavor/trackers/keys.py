"""What :mod:`rankflavor.mlflow` and :mod:`rankflavor.wandb` log: one key per measure that names its
flavor, the canonical flavor strings, the counts and the inputs' SHA-256.

A tracker shows a metric by its key alone, so the key must tell flavors apart: ``ndcg_10__3f2a9c1b``
is the metric and cutoff a person reads, then the first 8 hex digits of the SHA-256 of the canonical
flavor string (stable across runs, machines and versions: the string is canonical). The full
string sits beside it (MLflow param ``flavor.<key>``, W&B config ``rankflavor.flavors.<key>``).

Keys use ``A-Z a-z 0-9 _ . -`` only: the characters MLflow accepts on every platform
(``mlflow/utils/validation.py``, ``validate_param_and_metric_name``: ``[/\\w.\\- :]``, without the
colon on Windows and ``\\w``'s non-ASCII letters), and W&B takes any text. A caller's ``prefix``
may add ``/`` (``dev/``), which both trackers show as a section.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rankflavor.errors import RankflavorError, UsageError

if TYPE_CHECKING:
    from rankflavor.engine.results import Results
    from rankflavor.metrics.measure import Measure

#: Hex digits of the flavor id in a key (32 bits: a clash inside one result is refused, not hidden).
ID_DIGITS = 8

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")
_PREFIX = re.compile(r"[A-Za-z0-9_.\-/]*")


def flavor_id(flavor: str) -> str:
    """The short stable id of a canonical flavor string: its SHA-256's first :data:`ID_DIGITS` hex digits.

    >>> flavor_id("AP[rel=1]")
    '2453a675'
    """
    return hashlib.sha256(flavor.encode("utf-8")).hexdigest()[:ID_DIGITS]


def metric_key(measure: Measure) -> str:
    """``<metric>_<k>__<flavor id>`` (``<metric>__<flavor id>`` without a cutoff), characters
    outside ``A-Z a-z 0-9 _ . -`` replaced by ``_``."""
    base = measure.metric if measure.k is None else f"{measure.metric}_{measure.k}"
    return f"{_UNSAFE.sub('_', base)}__{flavor_id(str(measure))}"


def check_prefix(prefix: str) -> str:
    """``prefix`` when every key it starts stays one MLflow accepts (no ``//``, no leading ``/``,
    no ``.``/``..`` segment), else UsageError."""
    segments = prefix.split("/")[:-1] if prefix.endswith("/") else prefix.split("/")
    if prefix and (not _PREFIX.fullmatch(prefix) or any(s in ("", ".", "..") for s in segments)):
        raise UsageError(f"tracker key prefix {prefix!r}: expected letters, digits, _ . - and / between "
                         "non-empty segments (e.g. 'dev/')")
    return prefix


@dataclass(frozen=True)
class Logged:
    """One result as a tracker receives it (keys without the caller's prefix).

    Attributes
    ----------
    metrics : key -> mean, for every measure that has a summary (NaN when it is undefined).
    flavors : key -> canonical flavor string, for every measure (text-valued ones too).
    names : key -> the name the measure was asked by (``ndcg@10``).
    scored : key -> ``{"n_queries", "skipped_empty", "skipped_missing"}``.
    counts : the input counts (:meth:`rankflavor.align.Counts.to_dict`).
    inputs : provenance role (``qrels``, ``run``) -> ``{"source", "bytes", "sha256"}`` as known.
    """

    metrics: dict[str, float]
    flavors: dict[str, str]
    names: dict[str, str]
    scored: dict[str, dict[str, int]]
    counts: dict[str, int]
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    version: str = ""


def logged(results: Results, hashes: bool = True) -> Logged:
    """What a tracker logs for ``results``; with ``hashes``, an input file named in the provenance
    without its SHA-256 is hashed now (the CLI's ``-o`` and ``--record`` hash it when it is read)."""
    from rankflavor._version import __version__

    metrics: dict[str, float] = {}
    flavors: dict[str, str] = {}
    names: dict[str, str] = {}
    scored: dict[str, dict[str, int]] = {}
    for m in results.measures:
        flavor = str(m.measure)
        key = metric_key(m.measure)
        if flavors.get(key, flavor) != flavor:  # pragma: no cover - 32-bit clash, never seen
            raise RankflavorError(f"two flavors share the tracker key {key!r}: {flavors[key]} and {flavor}")
        flavors[key], names[key] = flavor, m.measure.display
        scored[key] = {"n_queries": int(m.n_queries), "skipped_empty": int(m.skipped_empty),
                       "skipped_missing": int(m.skipped_missing)}
        if m.measure.spec.summary != "none":
            metrics[key] = float(m.summary)
    counts = {k: int(v) for k, v in results.counts.to_dict().items()}
    return Logged(metrics, flavors, names, scored, counts, _inputs(results.provenance, hashes),
                  str(results.provenance.get("rankflavor", __version__)))


def input_keys(roles: list[str]) -> list[str]:
    """The tracker key of each input role: its unsafe characters replaced by ``_``, and a key that
    two roles would share (``a b`` and ``a_b``) numbered ``-2``, ``-3`` ... so no input's record
    overwrites another's."""
    keys: list[str] = []
    for role in roles:
        key = base = _UNSAFE.sub("_", role)
        n = 1
        while key in keys:
            n += 1
            key = f"{base}-{n}"
        keys.append(key)
    return keys


def _inputs(provenance: dict[str, Any], hashes: bool) -> dict[str, dict[str, Any]]:
    from rankflavor.base.sources import file_sha256, source_records

    records = source_records(provenance)
    out: dict[str, dict[str, Any]] = {}
    for key, (_, record) in zip(input_keys([role for role, _ in records]), records, strict=True):
        entry: dict[str, Any] = {"source": record["source"]}
        if isinstance(record.get("bytes"), int):
            entry["bytes"] = record["bytes"]
        if isinstance(record.get("sha256"), str):
            entry["sha256"] = record["sha256"]
        elif hashes and os.path.isfile(record["source"]):
            entry["sha256"] = file_sha256(record["source"])
        out[key] = entry
    return out


def hashed_provenance(provenance: dict[str, Any], inputs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A copy of ``provenance`` whose input records carry the SHA-256 that :func:`logged` found
    (``inputs`` keyed as :func:`input_keys` keys them)."""
    import copy

    from rankflavor.base.sources import source_records

    out = copy.deepcopy(provenance)
    records = source_records(out)
    for key, (_, node) in zip(input_keys([role for role, _ in records]), records, strict=True):
        entry = inputs.get(key, {})
        if "sha256" in entry and "sha256" not in node:
            node["sha256"], node["hash_of"] = entry["sha256"], "file bytes"
    return out


def per_query_rows(results: Results) -> list[list[Any]]:
    """``[key, name, query, value, status, flavor]`` per query and measure, then the measure's
    summary row (query ``all``, status ``summary``), as ``eval -q --format csv`` orders them."""
    from rankflavor.engine.results import plain_value

    rows: list[list[Any]] = []
    for m in results.measures:
        key, flavor = metric_key(m.measure), str(m.measure)
        for q, v, s in zip(m.queries, m.values, m.status, strict=True):
            rows.append([key, m.measure.display, str(q), plain_value(v), str(s), flavor])
        if m.measure.spec.summary != "none":
            rows.append([key, m.measure.display, "all", float(m.summary), "summary", flavor])
    return rows


#: Column names of :func:`per_query_rows`.
PER_QUERY_COLUMNS = ["key", "name", "query", "value", "status", "flavor"]

__all__ = ["ID_DIGITS", "PER_QUERY_COLUMNS", "Logged", "check_prefix", "flavor_id", "hashed_provenance", "input_keys", "logged", "metric_key",
           "per_query_rows"]
