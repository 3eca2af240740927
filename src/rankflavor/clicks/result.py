"""What :func:`rankflavor.clicks.coec` returns (:class:`ClickJudgments`), and its text forms: TREC
qrels with the source column (``QUERY 0 DOC RATING clicks:coec``), JSON or CSV, and the summary.

* ``trec``: qrels with the label source as a fifth column, ``QUERY 0 DOC RATING clicks:coec``
  (the issue 37 convention), sorted by query id, then document id;
* ``json``: the judgments with the numbers behind each, the position-bias table, every count,
  the settings and the inputs;
* ``csv``: one row per judgment, the numbers behind it and the source;
* :func:`summary`: the counts and the position-bias table as text (stderr of the command).
"""

from __future__ import annotations

import csv
import datetime
import io
from dataclasses import dataclass, field
from typing import Any

from rankflavor.errors import FormatLossError, UsageError

#: The label source of every judgment made here (the issue 37 convention ``KIND:DETAIL``).
SOURCE = "clicks:coec"
#: SRW's demo maxRank (``src/test/scripts/demo.sh``); SRW itself has no default.
DEFAULT_MAX_RANK = 20


@dataclass(frozen=True)
class CoecSettings:
    """The click model's knobs (module docstring); the defaults are SRW's."""

    max_rank: int = DEFAULT_MAX_RANK
    min_impressions: int = 0
    min_clicks: int = 0
    start_date: datetime.date | None = None
    end_date: datetime.date | None = None
    click_action: str = "click"
    impression_action: str = "impression"
    digits: int = 3

    def __post_init__(self) -> None:
        for name in ("max_rank", "min_impressions", "min_clicks", "digits"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (1 if name == "max_rank" else 0):
                raise UsageError(f"{name} must be an integer >= {1 if name == 'max_rank' else 0}, got {value!r}")
        if self.digits > 12:
            raise UsageError(f"digits must be at most 12, got {self.digits}")
        if self.click_action.casefold() == self.impression_action.casefold():
            raise UsageError(f"the click and impression actions are the same name '{self.click_action}'")
        if self.start_date and self.end_date and self.start_date > self.end_date:
            raise UsageError(f"start date {self.start_date} is after end date {self.end_date}")

    def to_dict(self) -> dict[str, Any]:
        return {"max_rank": self.max_rank, "min_impressions": self.min_impressions, "min_clicks": self.min_clicks,
                "start_date": None if self.start_date is None else self.start_date.isoformat(),
                "end_date": None if self.end_date is None else self.end_date.isoformat(),
                "click_action": self.click_action, "impression_action": self.impression_action,
                "digits": self.digits}


@dataclass(frozen=True)
class PositionCtr:
    """One row of the position-bias table: CTR at a position over all queries."""

    position: int
    impressions: int
    clicks: int
    ctr: float


@dataclass(frozen=True)
class ClickJudgment:
    """One (query, document) judgment and the numbers behind it."""

    query_id: str
    user_query: str
    doc_id: str
    #: the rating as written (``digits`` decimals, half-up): what the qrels hold
    rating: str
    #: clicks / expected clicks, unrounded
    coec: float
    clicks: int
    impressions: int
    #: the lowest position of a click or impression (None: the pair had neither)
    position: int | None
    ctr_at_position: float
    expected_clicks: float


@dataclass(frozen=True)
class ClickJudgments:
    """What :func:`coec` returns: the judgments (sorted by query id, then document id), the
    position-bias table, every count, the settings and the inputs."""

    judgments: tuple[ClickJudgment, ...]
    position_bias: tuple[PositionCtr, ...]
    counts: dict[str, int]
    settings: CoecSettings
    inputs: dict[str, str] = field(default_factory=dict)
    source: str = SOURCE

    def ratings(self) -> dict[str, dict[str, float]]:
        """``{query_id: {doc_id: rating}}`` (the rounded rating, as the qrels hold it)."""
        out: dict[str, dict[str, float]] = {}
        for j in self.judgments:
            out.setdefault(j.query_id, {})[j.doc_id] = float(j.rating)
        return out

    def to_qrels(self) -> Any:
        """The judgments as a :class:`rankflavor.io.tables.Qrels` (fractional grades)."""
        import numpy as np
        import pyarrow as pa

        from rankflavor.io.tables import Qrels

        return Qrels(query=pa.array([j.query_id for j in self.judgments], pa.string()),
                     doc=pa.array([j.doc_id for j in self.judgments], pa.string()),
                     grade=np.array([float(j.rating) for j in self.judgments], dtype=np.float64),
                     source=self.source)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data."""
        return to_dict(self)

    def render(self, fmt: str) -> str:
        """The judgments as ``trec`` (qrels with the source column), ``json`` or ``csv`` text."""
        return render(self, fmt)

    def summary(self) -> str:
        """The counts and the position-bias table, as text (the command prints it on stderr)."""
        return summary(self)


#: The output formats.
FORMATS = ("trec", "json", "csv")
#: The columns of the CSV format.
CSV_COLUMNS = ("query_id", "user_query", "doc_id", "rating", "coec", "clicks", "impressions", "position",
               "ctr_at_position", "expected_clicks", "source")
#: The counts, grouped as the summary prints them (a count not listed is printed last).
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("query log", ("query_log_documents", "query_log_other_log_documents", "query_log_query_ids", "query_log_without_query_id",
                   "query_log_without_user_query", "query_log_conflicting_query_ids")),
    ("event log", ("events_read", "events_other_log_documents", "events_query_id_not_in_log", "events_without_timestamp", "events_outside_dates",
                   "events_without_position", "events_above_max_rank", "events_in_range", "clicks", "impressions",
                   "events_other_action", "events_without_object",
                   "events_query_text_from_log", "events_query_text_differs_from_log",
                   "events_without_query_text")),
    ("pairs", ("pairs", "pairs_dropped_not_in_query_map", "pairs_dropped_min_impressions",
               "pairs_dropped_min_clicks", "pairs_kept", "pairs_rated_zero_no_impressions",
               "pairs_rated_zero_no_ctr", "queries")),
)


def to_dict(result: ClickJudgments) -> dict[str, Any]:
    """The result as JSON-ready data."""
    return {
        "source": result.source,
        "inputs": dict(result.inputs),
        "settings": result.settings.to_dict(),
        "counts": dict(result.counts),
        "position_bias": [{"position": p.position, "impressions": p.impressions, "clicks": p.clicks, "ctr": p.ctr}
                          for p in result.position_bias],
        "judgments": [{"query_id": j.query_id, "user_query": j.user_query, "doc_id": j.doc_id,
                       "rating": float(j.rating), "coec": j.coec, "clicks": j.clicks, "impressions": j.impressions,
                       "position": j.position, "ctr_at_position": j.ctr_at_position,
                       "expected_clicks": j.expected_clicks} for j in result.judgments],
    }


def render(result: ClickJudgments, fmt: str) -> str:
    """``trec``, ``json`` or ``csv`` text (module docstring).

    Raises
    ------
    FormatLossError
        For ``trec`` when an id holds a blank (TREC files split on blanks): the message names it
        and the formats that keep it.
    """
    if fmt == "trec":
        lines = []
        for j in result.judgments:
            for kind, ident in (("query id", j.query_id), ("document id", j.doc_id)):
                if not ident or len(ident.split()) != 1 or ident != ident.strip():
                    raise FormatLossError(f"the {kind} {ident!r} (query text {j.user_query!r}) holds a blank, which "
                                          "TREC qrels cannot: write --format json or csv, which keep it")
            lines.append(f"{j.query_id} 0 {j.doc_id} {j.rating} {result.source}\n")
        return "".join(lines)
    if fmt == "json":
        from rankflavor.base.finite import dumps

        return dumps(to_dict(result)) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        for j in result.judgments:
            w.writerow([j.query_id, j.user_query, j.doc_id, j.rating, repr(j.coec), j.clicks, j.impressions,
                        "" if j.position is None else j.position, repr(j.ctr_at_position), repr(j.expected_clicks),
                        result.source])
        return buf.getvalue()
    raise UsageError(f"unknown clicks format '{fmt}'; valid formats: {', '.join(FORMATS)}")


def summary(result: ClickJudgments) -> str:
    """Every count (grouped: query log, event log, pairs) and the position-bias table."""
    c = result.counts
    s = result.settings
    head = (f"{result.source}: {c.get('pairs_kept', 0)} judgments of {c.get('queries', 0)} "
            f"quer{'y' if c.get('queries') == 1 else 'ies'} "
            f"(max rank {s.max_rank}, min impressions {s.min_impressions}, min clicks {s.min_clicks}"
            + (f", days {s.start_date or '...'} to {s.end_date or '...'}" if s.start_date or s.end_date else "")
            + ")")
    lines = [head]
    listed: set[str] = set()
    width = max((len(k) for k in c), default=0)
    for title, keys in GROUPS:
        present = [k for k in keys if k in c]
        if not present:
            continue
        lines.append(f"{title}:")
        lines += [f"  {k:<{width}}  {c[k]}" for k in present]
        listed.update(present)
    rest = [k for k in c if k not in listed]
    lines += [f"  {k:<{width}}  {c[k]}" for k in rest]
    lines.append(f"position bias: CTR by position over all queries (ordinals as logged, below {s.max_rank}):")
    lines.append(f"  {'position':>8}  {'impressions':>11}  {'clicks':>8}  {'ctr':>8}")
    lines += [f"  {p.position:>8}  {p.impressions:>11}  {p.clicks:>8}  {p.ctr:>8.4f}" for p in result.position_bias]
    if not result.position_bias:
        lines.append("  (no click or impression below the max rank)")
    return "\n".join(lines) + "\n"


__all__ = ["CSV_COLUMNS", "DEFAULT_MAX_RANK", "FORMATS", "SOURCE", "ClickJudgment", "ClickJudgments", "CoecSettings",
           "PositionCtr", "render", "summary", "to_dict"]
