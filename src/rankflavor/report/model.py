"""What the report shows, computed from its documents: plain values the template and the page's
script read. Formatting of numbers is left to them; nothing here writes HTML.

Systems are the runs of ``eval`` documents (named by their run file) and the systems a
``compare`` document lists. A column of the summary table is one canonical flavor string: two
measures with the same name and different flavors are two columns, and per-query deltas are
taken only between systems measured under the same flavor string.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rankflavor.report import sections as _sections
from rankflavor.report.inputs import Document, input_hash, sources

#: Keys under which results may carry a confidence interval or a bound interval (as
#: ``[low, high]`` or ``{"low"/"lower": .., "high"/"upper": ..}``), or as flat ``*_low``/``*_high``.
CI_KEYS = ("ci", "ci95", "confidence_interval")
BOUND_KEYS = ("bounds", "bound", "interval")
#: Keys of an eval document the summary and per-query sections already show.
EVAL_KEYS = ("measures", "counts", "provenance")


@dataclass
class Column:
    """One summary-table column: a canonical flavor string."""

    flavor: str
    name: str
    differs: str = ""


@dataclass
class Cell:
    value: float | None
    ci: tuple[float, float] | None = None
    bounds: tuple[float, float] | None = None
    n: int | None = None


@dataclass
class System:
    name: str
    source: str
    cells: dict[str, Cell] = field(default_factory=dict)
    per_query: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    keys: set[tuple[str, str]] = field(default_factory=set)


@dataclass
class Table:
    """A table of plain values, for sections whose schema the report does not know in advance."""

    title: str
    columns: list[str]
    rows: list[list[Any]]


@dataclass
class Model:
    columns: list[Column]
    systems: list[System]
    per_query: list[dict[str, Any]]
    notes: list[str]
    spreads: list[dict[str, Any]]
    sections: list[tuple[str, str, list[Table]]]
    provenance: list[dict[str, Any]]
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    coverages: list[dict[str, Any]] = field(default_factory=list)


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return None if math.isnan(float(x)) or math.isinf(float(x)) else float(x)


def interval(d: dict[str, Any], keys: Sequence[str], flat: Sequence[tuple[str, str]]) -> tuple[float, float] | None:
    """An interval stored under one of ``keys`` or as a pair of flat keys; None when absent."""
    for k in keys:
        v = d.get(k)
        if isinstance(v, list | tuple) and len(v) == 2:
            lo, hi = _num(v[0]), _num(v[1])
        elif isinstance(v, dict):
            lo = _num(v.get("low", v.get("lower", v.get("lo"))))
            hi = _num(v.get("high", v.get("upper", v.get("hi"))))
        else:
            continue
        if lo is not None and hi is not None:
            return lo, hi
    for a, b in flat:
        lo, hi = _num(d.get(a)), _num(d.get(b))
        if lo is not None and hi is not None:
            return lo, hi
    return None


def _ci(d: dict[str, Any]) -> tuple[float, float] | None:
    return interval(d, CI_KEYS, (("ci_low", "ci_high"), ("ci_lower", "ci_upper")))


def _bounds(d: dict[str, Any]) -> tuple[float, float] | None:
    return interval(d, BOUND_KEYS, (("lower", "upper"), ("lower_bound", "upper_bound")))


def _run_name(data: dict[str, Any], doc: Document) -> str:
    run = data.get("provenance", {}).get("run", {}) if isinstance(data.get("provenance"), dict) else {}
    src = run.get("source") if isinstance(run, dict) else None
    if isinstance(src, str) and src:
        return os.path.basename(src)
    tag = run.get("tag") if isinstance(run, dict) else None
    return str(tag) if tag else os.path.basename(doc.source)


def _run_key(data: dict[str, Any]) -> tuple[str, str]:
    """What identifies the run and judgments an eval document scored: each file's name and size
    (its SHA-256 where no size is recorded). Not the path as typed: one run evaluated from two working
    directories (``run.txt``, ``../x/run.txt``) is one system, listed once."""
    prov = data.get("provenance") if isinstance(data.get("provenance"), dict) else {}
    assert isinstance(prov, dict)

    def src(role: str) -> str:
        rec = prov.get(role)
        if not isinstance(rec, dict):
            return ""
        source = str(rec.get("source", ""))
        if not source or source.endswith(" dict"):
            return source
        if isinstance(rec.get("bytes"), int):
            return f"{os.path.basename(source)}:{rec['bytes']}"
        digest = rec.get("sha256")
        return "sha256:" + digest if isinstance(digest, str) and digest else os.path.basename(source)

    return src("run"), src("qrels")


def _same_run(systems: Any, data: dict[str, Any]) -> System | None:
    """The system already read from the same run and qrels files, when ``data`` adds only flavors it
    lacks or repeats them with the same values (several eval files of one run make one row)."""
    key = _run_key(data)
    if not key[0] or key[0].endswith(" dict"):  # in-memory inputs have no identity to match on
        return None
    for s in systems:
        if key in s.keys and all(
                str(m.get("flavor")) not in s.cells or s.cells[str(m.get("flavor"))].value == _num(m.get("value"))
                for m in data["measures"]):
            return s
    return None


def _same_value(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def _unique(name: str, taken: set[str]) -> str:
    out, i = name, 2
    while out in taken:
        out, i = f"{name} ({i})", i + 1
    taken.add(out)
    return out


def _knobs_of(flavor: str) -> dict[str, Any]:
    """The knobs a flavor string names (rankflavor's defaults filling the rest), {} when it is no
    measure string."""
    from rankflavor.errors import RankflavorError
    from rankflavor.metrics.measure import parse_measure

    try:
        return {k: str(v) for k, v in parse_measure(flavor).knobs.items()}
    except RankflavorError:
        return {}


def _differs(columns: list[Column], knobs: dict[str, dict[str, Any]]) -> None:
    """Per column, the knobs whose value is not shared by every column of the same metric name."""
    for col in columns:
        mine = knobs.get(col.flavor, {})
        peers = [knobs[c.flavor] for c in columns if c.name == col.name and c.flavor != col.flavor and knobs.get(c.flavor)]
        if not peers or not mine:
            continue
        diff = [f"{k}={v}" for k, v in mine.items() if any(p.get(k) != v for p in peers)]
        col.differs = ", ".join(diff)


def _compare_systems(doc: Document) -> list[tuple[str, str, Cell, list[dict[str, Any]] | None]]:
    """``(system, flavor, cell, per-query rows or None)`` for every system mean a compare document
    lists (per-query rows in eval's shape, ``[{"query", "value"}]``, when it holds them)."""
    data = doc.data
    default_flavor = str(data.get("flavor", data.get("measure", "compare")))
    out = []
    for entry in data.get("systems", []) if isinstance(data.get("systems"), list) else []:
        if not isinstance(entry, dict):
            continue
        name = entry.get("name", entry.get("system", entry.get("run")))
        value = _num(entry.get("mean", entry.get("value")))
        if name is None or value is None:
            continue
        flavor = str(entry.get("flavor", entry.get("measure", default_flavor)))
        out.append((str(name), flavor, Cell(value, _ci(entry), _bounds(entry), entry.get("n")),
                    entry.get("per_query") if isinstance(entry.get("per_query"), list) else None))
    return out


def _join(systems: dict[str, System], taken: set[str], doc: Document, name: str, flavor: str, cell: Cell,
          rows: list[dict[str, Any]] | None) -> None:
    """One system mean of a comparison into the summary: the same mean as an eval row gains the
    comparison's interval; another number for the same system and flavor gets a row of its own."""
    old = systems[name].cells.get(flavor) if name in systems else None
    if old is not None and not _same_value(old.value, cell.value):
        # Another number for the same system and flavor: its own row, never a silent swap.
        name = f"{name} ({os.path.basename(doc.source)})"
        old = systems[name].cells.get(flavor) if name in systems else None
    if name not in systems:
        systems[name] = System(_unique(name, taken), doc.source)
    system = systems[name]
    if old is None:
        system.cells[flavor] = cell
    else:  # the same mean: the comparison adds its intervals
        system.cells[flavor] = Cell(old.value, old.ci or cell.ci, old.bounds or cell.bounds, old.n)
    if rows is not None and flavor not in system.per_query:
        system.per_query[flavor] = rows


def build(docs: Sequence[Document]) -> Model:
    """The report's content from its documents, in the order given."""
    columns: dict[str, Column] = {}
    knobs: dict[str, dict[str, Any]] = {}
    systems: dict[str, System] = {}
    taken: set[str] = set()
    notes: list[str] = []
    spreads: list[dict[str, Any]] = []
    sections: list[tuple[str, str, list[Table]]] = []
    comparisons: list[dict[str, Any]] = []
    coverages: list[dict[str, Any]] = []
    for doc in docs:
        data = doc.data
        if doc.kind == "eval":
            system = _same_run(systems.values(), data) or System(_unique(_run_name(data, doc), taken), doc.source)
            system.keys.add(_run_key(data))
            systems[system.name] = system
            for m in data["measures"]:
                flavor = str(m.get("flavor"))
                columns.setdefault(flavor, Column(flavor, str(m.get("name", flavor))))
                knobs.setdefault(flavor, m.get("knobs") or {})
                system.cells[flavor] = Cell(_num(m.get("value")), _ci(m), _bounds(m), m.get("n_queries"))
                if isinstance(m.get("per_query"), list):
                    system.per_query[flavor] = m["per_query"]
            notes += label_notes(system.name, data)
            if not any(isinstance(m.get("per_query"), list) for m in data["measures"]):
                notes.append(f"{system.name}: {doc.source} holds no per-query values "
                             "(write it with `rankflavor eval -q --format json`).")
            rest = {k: v for k, v in data.items() if k not in EVAL_KEYS}
            if rest:
                sections.append(("results", f"{system.name}: further results", tables(rest, "results")))
        elif doc.kind == "compare" and _sections.is_comparison(data):
            for name, flavor, mname, mean, ci, rows in _sections.comparison_systems(data):
                columns.setdefault(flavor, Column(flavor, mname))
                _join(systems, taken, doc, name, flavor, Cell(mean, ci), rows)
            comparisons.append({"source": os.path.basename(doc.source), **_sections.comparison_view(data)})
        elif doc.kind == "judgments" and _sections.is_coverage(data):
            coverages.append({"source": os.path.basename(doc.source), **_sections.coverage_view(data)})
        elif doc.kind == "compare":
            for name, flavor, cell, rows in _compare_systems(doc):
                columns.setdefault(flavor, Column(flavor, flavor.split("[")[0]))
                _join(systems, taken, doc, name, flavor, cell, rows)
            sections.append(("significance", f"Comparison and significance ({os.path.basename(doc.source)})",
                             tables({k: v for k, v in data.items() if k != "provenance"}, "comparison")))
        elif doc.kind == "judgments":
            sections.append(("coverage", f"Judgment coverage and bounds ({os.path.basename(doc.source)})",
                             tables({k: v for k, v in data.items() if k != "provenance"}, "coverage")))
        else:
            spreads.append(data)
    cols = list(columns.values())
    for col in cols:
        if not knobs.get(col.flavor):
            knobs[col.flavor] = _knobs_of(col.flavor)
    _differs(cols, knobs)
    return Model(cols, list(systems.values()), per_query_payload(cols, list(systems.values())), notes, spreads,
                 sections, provenance_rows(docs), comparisons, coverages)


def label_notes(system: str, data: dict[str, Any]) -> list[str]:
    """Per measure whose judgments name their label sources: the labels it evaluated by kind
    (``bm25: ndcg@10 over 43 queries: 2,043 human labels, 380 llm labels``), and what a
    ``--labels`` choice left out (:mod:`rankflavor.io.labels`)."""
    from rankflavor.engine.labels import knob_value, sentence

    out = []
    for m in data.get("measures", []):
        labels = m.get("labels") if isinstance(m, dict) else None
        if not isinstance(labels, dict):
            continue
        counts = tuple((str(k), int(v)) for k, v in labels.items() if isinstance(v, int))
        mixed = knob_value(counts)
        out.append(f"{system}: {m.get('name', m.get('flavor'))} over {m.get('n_queries')} queries: {sentence(counts)}"
                   + (f" (mixed kinds: sources={mixed})" if mixed != "one" else ""))
    prov = data.get("provenance")
    qrels = prov.get("qrels") if isinstance(prov, dict) else None
    info = qrels.get("labels") if isinstance(qrels, dict) else None
    if isinstance(info, dict) and (info.get("choice", "any") != "any" or info.get("dropped")):
        dropped = tuple((str(k), int(v)) for k, v in (info.get("dropped") or {}).items())
        out.append(f"{system}: --labels {info.get('choice')} left out {sentence(dropped) if dropped else 'no label'}")
    return out


def per_query_payload(columns: list[Column], systems: list[System]) -> list[dict[str, Any]]:
    """Per flavor column: the query ids (union, first seen first) and each system's value per
    query (None where the system has no value). Only systems with per-query values appear."""
    out = []
    for col in columns:
        have = [s for s in systems if col.flavor in s.per_query]
        if not have:
            continue
        index: dict[str, int] = {}
        for s in have:
            for row in s.per_query[col.flavor]:
                index.setdefault(str(row.get("query")), len(index))
        values = []
        for s in have:
            vals: list[float | None] = [None] * len(index)
            for row in s.per_query[col.flavor]:
                vals[index[str(row.get("query"))]] = _num(row.get("value"))
            values.append(vals)
        out.append({"flavor": col.flavor, "name": col.name, "queries": list(index),
                    "systems": [s.name for s in have], "values": values})
    return out


def _scalar(v: Any) -> Any:
    if v is None or isinstance(v, str | int | float | bool):
        return v
    if isinstance(v, list) and all(x is None or isinstance(x, str | int | float | bool) for x in v):
        return ", ".join("" if x is None else str(x) for x in v)
    if isinstance(v, dict) and all(x is None or isinstance(x, str | int | float | bool) for x in v.values()):
        return ", ".join(f"{k}={x}" for k, x in v.items())
    return None


def tables(value: dict[str, Any], title: str) -> list[Table]:
    """Tables of plain values from a JSON object of unknown schema: its scalar entries as one
    key/value table, every list of objects as a table (one column per key, first seen first), and
    nested objects recursively (one level of flattening for objects inside rows)."""
    out: list[Table] = []
    plain = [[k, _scalar(v)] for k, v in value.items() if _scalar(v) is not None or v is None]
    if plain:
        out.append(Table(title, ["key", "value"], plain))
    for k, v in value.items():
        if _scalar(v) is not None or v is None:
            continue
        if isinstance(v, list) and v and all(isinstance(r, dict) for r in v):
            cols: list[str] = []
            flat_rows = []
            for r in v:
                flat: dict[str, Any] = {}
                for rk, rv in r.items():
                    if isinstance(rv, dict) and _scalar(rv) is not None and rv:
                        flat.update({f"{rk}.{sk}": sv for sk, sv in rv.items()})
                    else:
                        flat[rk] = _scalar(rv) if _scalar(rv) is not None or rv is None else "…"
                flat_rows.append(flat)
                cols.extend(c for c in flat if c not in cols)
            out.append(Table(k, cols, [[fr.get(c) for c in cols] for fr in flat_rows]))
        elif isinstance(v, dict):
            out.extend(tables(v, k))
    return out


def provenance_rows(docs: Sequence[Document]) -> list[dict[str, Any]]:
    """Per document: the file and its hash, what it records (version, command, config), and every
    input it names with a SHA-256 (recorded, or computed now when the file is unchanged in size)."""
    rows = []
    for doc in docs:
        found = doc.data.get("provenance")
        prov: dict[str, Any] = found if isinstance(found, dict) else {}
        inputs = []
        for rec in sources(prov):
            digest, how = input_hash(rec)
            inputs.append({"role": rec["role"], "source": rec["source"], "bytes": rec.get("bytes"),
                           "tag": rec.get("tag"), "sha256": digest, "how": how})
        rows.append({
            "kind": doc.kind, "source": doc.source, "sha256": doc.sha256,
            "version": prov.get("rankflavor", prov.get("version")),
            "command": _scalar(prov.get("command")), "config": _scalar(prov.get("config")),
            "seed": _scalar(prov.get("seed")), "inputs": inputs,
        })
    return rows


__all__ = ["Cell", "Column", "Model", "System", "Table", "build", "interval", "per_query_payload", "tables"]
