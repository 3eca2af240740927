"""The values :func:`rankflavor.compare` returns: per system, per pair, per flavor; JSON-ready."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from rankflavor.analysis.compare.settings import Settings
from rankflavor.analysis.spread.result import TIE_TOLERANCE, defect_note, in_summary
from rankflavor.base.display import Shown
from rankflavor.base.finite import json_number as _num
from rankflavor.base.finite import undefined, word
from rankflavor.base.frames import ALL, Frames, number_or_null, typed_table

if TYPE_CHECKING:
    import plotly.graph_objects as go
    import pyarrow as pa


def _unexplained(fields: dict[str, float | None], known: dict[str, str]) -> dict[str, str]:
    """``known`` plus a generic reason for every other non-finite field (see :mod:`rankflavor.base.finite`)."""
    out = dict(known)
    for name, x in fields.items():
        if x is not None and not math.isfinite(x) and name not in out:
            out[name] = f"{word(x)}: not a finite number"
    return out


@dataclass(frozen=True)
class SystemStat:
    """One system's mean over the compared queries and its bootstrap confidence interval."""

    name: str
    mean: float
    ci: tuple[float, float]

    @property
    def undefined(self) -> dict[str, str]:
        """Field -> why it holds no finite number (empty when every number is finite)."""
        return _unexplained({"mean": self.mean, "ci_low": self.ci[0], "ci_high": self.ci[1]}, {})

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "mean": _num(self.mean), "ci": [_num(self.ci[0]), _num(self.ci[1])],
                **undefined(self.undefined)}


@dataclass(frozen=True)
class PairStat:
    """System ``b`` against system ``a``: every number is of ``b - a`` per query.

    Attributes
    ----------
    delta, ci : mean difference and its bootstrap confidence interval.
    effect : Cohen's d for paired samples (mean difference over the differences' standard deviation).
    wins, losses, ties : queries where ``b`` is above, below, equal to ``a``.
    up, down : the (query, difference) pairs that moved most each way (five each), largest first.
    pvalues : per test, the p-value of the pair.
    adjusted : per test (or ``tukey_hsd``), the p-value corrected for the pairs compared.
    significant : the verdict: ``adjusted[settings.verdict_key] < alpha``.

    A statistic that is not a finite number has its reason in :attr:`undefined` (JSON: ``null``
    and the reason under ``"undefined"``; the other formats print its word, :mod:`rankflavor.base.finite`).
    """

    a: str
    b: str
    delta: float
    ci: tuple[float, float]
    effect: float
    wins: int
    losses: int
    ties: int
    up: tuple[tuple[str, float], ...]
    down: tuple[tuple[str, float], ...]
    pvalues: dict[str, float]
    adjusted: dict[str, float]
    significant: bool

    @property
    def undefined(self) -> dict[str, str]:
        """Field (``cohens_d``, ``delta``, ``ci_low``, ``p_t``, ``adjusted_holm``, ...) -> why it holds
        no finite number; empty when every number is finite.

        Cohen's d is ``±inf`` when every query's difference is the same non-zero number: the
        standard deviation is 0 (:func:`rankflavor.stats.cohens_d_paired`)."""
        known = {}
        if not math.isfinite(self.effect):
            known["cohens_d"] = (f"{word(self.effect, signed=True)}: every query's difference is the same "
                                 f"({self.delta:+.6g}), so their standard deviation is 0 and d = mean / sd is unbounded"
                                 if math.isinf(self.effect) else f"{word(self.effect)}: not a finite number")
        fields: dict[str, float | None] = {"delta": self.delta, "ci_low": self.ci[0], "ci_high": self.ci[1],
                                           "cohens_d": self.effect}
        fields.update({f"p_{t}": v for t, v in self.pvalues.items()})
        fields.update({f"adjusted_{t}": v for t, v in self.adjusted.items()})
        return _unexplained(fields, known)

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "delta": _num(self.delta), "ci": [_num(self.ci[0]), _num(self.ci[1])],
                "cohens_d": _num(self.effect), "wins": self.wins, "losses": self.losses, "ties": self.ties,
                "moved_up": [{"query": q, "delta": _num(d)} for q, d in self.up],
                "moved_down": [{"query": q, "delta": _num(d)} for q, d in self.down],
                "pvalues": {k: _num(v) for k, v in self.pvalues.items()},
                "adjusted": {k: _num(v) for k, v in self.adjusted.items()},
                "significant": self.significant, **undefined(self.undefined)}


@dataclass(frozen=True)
class FlavorVerdict:
    """One flavor of the robustness check: its label, n, and per pair the difference and verdict.

    ``defect`` is set when only presets that reproduce a tool's known defect produced the flavor
    (their ``Preset.defect`` texts, :func:`rankflavor.analysis.spread.api.defect_reason`); such a flavor is
    re-tested and listed but left out of the flips unless :attr:`Robustness.include_defects`.
    """

    flavor: str
    label: str
    n: int
    deltas: tuple[float, ...]
    significant: tuple[bool, ...]
    defect: str | None = None
    presets: tuple[str, ...] = ()

    def to_dict(self, in_summary: bool = True) -> dict[str, Any]:
        return {"flavor": self.flavor, "label": self.label, "n": self.n, "deltas": [_num(d) for d in self.deltas],
                "significant": list(self.significant), "in_summary": in_summary, "defect": self.defect}


def _sign(x: float) -> int:
    return 0 if abs(x) <= TIE_TOLERANCE else (1 if x > 0 else -1)


@dataclass(frozen=True)
class Robustness:
    """Whether each pair's sign and verdict hold in every flavor counted, and which flavors flip them.

    Attributes
    ----------
    flavors : every flavor re-tested (those a policy refused are in ``errors`` instead).
    base_deltas, base_significant : per pair, the base measure's difference and verdict.
    errors : flavor label -> why a policy refused it (left out).
    notes : what was skipped while building the flavor list.
    include_defects : count the flavors marked :attr:`FlavorVerdict.defect` in the flips.

    Which flavors count is decided here, once, for every renderer, by the rule of
    :class:`rankflavor.analysis.spread.result.Spread` (:func:`~rankflavor.analysis.spread.result.in_summary`): all but
    the flavors only presets reproducing a tool's known defect produced, unless ``include_defects``.
    ``sign_flips[i]`` / ``verdict_flips[i]`` list the labels of the counted flavors where pair
    ``i``'s sign (a difference within the tie tolerance counts as a change of sign) or verdict
    differs from the base measure's; :attr:`excluded` lists the others, each with its reason.
    """

    flavors: tuple[FlavorVerdict, ...]
    base_deltas: tuple[float, ...]
    base_significant: tuple[bool, ...]
    errors: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    include_defects: bool = False

    def with_defects(self, include: bool = True) -> Robustness:
        """The same check, counting the defect flavors in the flips (or not)."""
        return replace(self, include_defects=include)

    @property
    def counted(self) -> tuple[FlavorVerdict, ...]:
        """The flavors the flips are over."""
        return tuple(f for f in self.flavors if in_summary(f.defect, self.include_defects))

    @property
    def excluded(self) -> tuple[FlavorVerdict, ...]:
        """The flavors re-tested and listed but left out of the flips (each names its reason)."""
        return tuple(f for f in self.flavors if not in_summary(f.defect, self.include_defects))

    @property
    def sign_flips(self) -> tuple[tuple[str, ...], ...]:
        """Per pair, the labels of the counted flavors where its sign differs from the base's."""
        return tuple(tuple(f.label for f in self.counted if _sign(f.deltas[k]) != _sign(d))
                     for k, d in enumerate(self.base_deltas))

    @property
    def verdict_flips(self) -> tuple[tuple[str, ...], ...]:
        """Per pair, the labels of the counted flavors where its verdict differs from the base's."""
        return tuple(tuple(f.label for f in self.counted if f.significant[k] != s)
                     for k, s in enumerate(self.base_significant))

    @property
    def summary_note(self) -> str | None:
        """What the flips leave out (or include) of the defect flavors, and why; None when there are none."""
        return defect_note([(f.presets, f.defect) for f in self.flavors], self.include_defects,
                           "the sign and verdict flips")

    @property
    def all_notes(self) -> tuple[str, ...]:
        """Every note a renderer prints: what the flips leave out, then :attr:`notes`."""
        first = self.summary_note
        return ((first,) if first else ()) + self.notes

    def holds(self, i: int) -> tuple[bool, bool]:
        """(sign holds, verdict holds) of pair ``i`` in every flavor counted."""
        return not self.sign_flips[i], not self.verdict_flips[i]

    def to_dict(self, pairs: list[PairStat]) -> dict[str, Any]:
        return {
            "n_flavors": len(self.flavors),
            "n_in_summary": len(self.counted),
            "include_defects": self.include_defects,
            "pairs": [{"a": p.a, "b": p.b, "sign_holds": not s, "verdict_holds": not v, "sign_flipped_by": list(s),
                       "verdict_flipped_by": list(v)}
                      for p, s, v in zip(pairs, self.sign_flips, self.verdict_flips, strict=True)],
            "flavors": [f.to_dict(in_summary(f.defect, self.include_defects)) for f in self.flavors],
            "excluded": [{"flavor": f.flavor, "label": f.label, "presets": list(f.presets), "reason": f.defect}
                         for f in self.excluded],
            "errors": dict(self.errors),
            "notes": list(self.all_notes),
        }


@dataclass(frozen=True)
class MeasureComparison:
    """Every system and pair under one measure.

    ``queries`` and ``values`` (systems x queries) are what the statistics read; ``dropped`` counts
    queries left out under ``queries="intersection"``, ``zero_filled`` the cells scored 0 under ``union-zero``.
    """

    measure: str
    name: str
    queries: np.ndarray
    values: np.ndarray
    systems: list[SystemStat]
    pairs: list[PairStat]
    dropped: int = 0
    zero_filled: int = 0
    robustness: Robustness | None = None

    @property
    def n(self) -> int:
        return len(self.queries)

    def pair(self, a: str, b: str) -> PairStat:
        """The pair comparing ``a`` and ``b`` (either order)."""
        for p in self.pairs:
            if {p.a, p.b} == {a, b}:
                return p
        raise KeyError(f"no pair {a!r}, {b!r}")

    def to_dict(self, per_query: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "flavor": self.measure, "name": self.name, "n": self.n, "queries_dropped": self.dropped,
            "zero_filled": self.zero_filled,
            "systems": [s.to_dict() for s in self.systems], "pairs": [p.to_dict() for p in self.pairs],
            "robustness": self.robustness.to_dict(self.pairs) if self.robustness else None,
        }
        if per_query:
            out["per_query"] = {"queries": [str(q) for q in self.queries],
                                "values": {s.name: [float(v) for v in row] for s, row in zip(self.systems, self.values, strict=True)}}
        return out


@dataclass(frozen=True)
class Comparison(Frames, Shown):
    """What :func:`rankflavor.compare` returns: the settings, the provenance, one block per measure."""

    systems: tuple[str, ...]
    settings: Settings
    measures: list[MeasureComparison]
    provenance: dict[str, Any]
    notes: tuple[str, ...] = ()

    def __getitem__(self, key: int | str) -> MeasureComparison:
        if isinstance(key, int):
            return self.measures[key]
        for m in self.measures:
            if key in (m.measure, m.name):
                return m
        raise KeyError(f"no measure {key!r}; have: {', '.join(m.name for m in self.measures)}")

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.measures)

    def __len__(self) -> int:
        return len(self.measures)

    def with_defects(self, include: bool = True) -> Comparison:
        """The same comparison, counting the defect flavors in every measure's flips (or not)."""
        return replace(self, measures=[m if m.robustness is None else replace(m, robustness=m.robustness.with_defects(include))
                                       for m in self.measures])

    def to_arrow(self, per_query: bool = False) -> pa.Table:
        """Each system's mean and interval per measure (``per_query``: its values too) as an Arrow table (:func:`comparison_table`); ``to_pandas``/``to_polars`` convert it."""
        return comparison_table(self, per_query)

    def plot(self) -> go.Figure:
        """Each system's mean with its confidence interval per measure, drawn by the HTML report's
        plotting code (:mod:`rankflavor.report.charts`), as a plotly Figure."""
        from rankflavor.base.display import plot_of

        return plot_of(self)

    def to_dict(self, per_query: bool = True) -> dict[str, Any]:
        """JSON-ready: settings, provenance (content hashes, version, flavors), every measure."""
        return {"systems": list(self.systems), "settings": self.settings.to_dict(), "provenance": self.provenance,
                "measures": [m.to_dict(per_query) for m in self.measures], "notes": list(self.notes)}


def comparison_table(c: Comparison, per_query: bool = False) -> pa.Table:
    """One row per measure x system: its mean and bootstrap interval over the compared queries;
    with ``per_query``, first one row per measure x system x query with the value the statistics
    read (queries in byte order), ``ci_low``/``ci_high`` null there.

    Columns ``run, metric, flavor, query, value, ci_low, ci_high, n_queries``. The pairs'
    statistics are in :meth:`Comparison.to_dict` (and ``compare --format csv``).
    """
    names = ("run", "metric", "flavor", "query", "value", "ci_low", "ci_high", "n_queries")
    rows: list[tuple[Any, ...]] = []
    for m in c.measures:
        order = sorted(range(len(m.queries)), key=lambda i: str(m.queries[i]).encode("utf-8"))
        for s, vals in zip(m.systems, m.values, strict=True):
            if per_query:
                rows += [(s.name, m.name, m.measure, str(m.queries[i]), float(vals[i]), None, None, None)
                         for i in order]
            rows.append((s.name, m.name, m.measure, ALL, number_or_null(s.mean), number_or_null(s.ci[0]),
                         number_or_null(s.ci[1]), m.n))
    kinds = ("str", "str", "str", "str", "f64", "f64", "f64", "i64")
    return typed_table({n: (k, [r[i] for r in rows]) for i, (n, k) in enumerate(zip(names, kinds, strict=True))})


__all__ = ["Comparison", "FlavorVerdict", "MeasureComparison", "PairStat", "Robustness", "SystemStat"]
