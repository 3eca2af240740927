"""Graded judgments from clicks: clicks over expected clicks (COEC), as the Search Relevance
Workbench (SRW) computes its implicit judgments.

The rules are those of ``CoecClickModel`` and ``ClickthroughRate`` in opensearch-project/
search-relevance (``src/main/java/org/opensearch/searchrelevance/judgments/clickmodel/coec/
CoecClickModel.java``, ``.../model/ClickthroughRate.java``, ``.../judgments/clickmodel/coec/
CoecClickModelParameters.java``, ``.../judgments/UbiJudgmentsProcessor.java``), read at their
2025 versions: those with the date range, and where ``calculateCoecJudgments`` answers once with
every query (in June 2025 its ``listener.onResponse`` sat inside the loop over queries, so the
answer held the first query's judgments alone):

1. **Which events** (both passes query ``ubi_events`` with ``range event_attributes.position.ordinal
   lte maxRank``, and with a date range ``timestamp`` ``gte startDate``/``lte endDate`` in
   ``yyyy-MM-dd`` when given: whole days in UTC, both ends included): an event without a position
   matches neither, nor one whose ordinal is above ``max_rank``. Ordinals are used as logged
   (UBI ordinals are 0-based in SRW's data, ``src/test/data-esci/ubi_queries_events.ndjson``).
2. **Position bias** (``getRankAggregatedClickThrough``): over every event kept, of every query,
   the clicks and impressions at each position ``0 .. max_rank - 1`` (``action_name`` equal to
   ``click`` / ``impression`` ignoring case); CTR(p) = clicks(p) / impressions(p), 0 where a
   position has no impression.
3. **Pairs** (``processClickthroughSearch``, ``ClickthroughRate``): events are grouped by the
   event's ``user_query`` text and ``event_attributes.object.object_id``; a pair counts its
   clicks and its impressions over all positions, and its rank is the *lowest* position at which
   it had a click or an impression. An event with another action still forms its pair (with no
   count); one without object or query text forms none.
4. **Rating** (``calculateCoecJudgments``): expected clicks = CTR(rank) x impressions, and
   COEC = clicks / expected clicks, 0 when the expected clicks are 0 (no impression, or no CTR
   at the rank: a rank of ``max_rank`` itself, which the range admits but the table lacks, or
   one without clicks). The rating is written with ``String.format(Locale.ROOT, "%.3f", coec)``:
   three decimals, half-up on the shortest decimal of the double (Java's ``Formatter``).
   There is no scaling or bucketing: a rating is a non-negative real, 1 meaning "clicked as
   often as expected at its position".

``max_rank`` has no default in SRW (the ``maxRank`` of the request is required); 20 here is the
value of its demo (``src/test/scripts/demo.sh``).

Where this deviates, and why:

* the counts are exact: SRW's position table comes from a ``terms`` aggregation on
  ``action_name`` (10 buckets by default) with a ``positions`` sub-aggregation of ``max_rank``
  buckets, which on a log of many action names or positions can leave one out (a position's
  CTR then reads 0); it also reads ``"Click"`` and ``"click"`` as two buckets, the last read
  replacing the other (``clickCounts.put``), where this sums them;
* an event without ``user_query`` takes the text of its ``query_id`` in the query log (SRW
  skips it; its unused ``getUserQuery`` looked the text up the same way). UBI's event schema
  has no ``user_query``: without this, events logged to the schema would give no judgment;
* ``min_impressions`` and ``min_clicks`` (0 by default, as SRW, which has neither) drop pairs
  with too little evidence, counted; ``min_impressions=1`` drops the pairs SRW rates 0 for
  lack of impressions;
* an empty ``user_query`` is no query text;
* a query is identified in the output by an id (TREC qrels split on blanks): the ``query_map``
  given (``text -> id``), else the text with blanks, ``%`` and unprintable characters
  percent-encoded (``iphone%20headphones``), one id per text and back.

Nothing is dropped silently: every event and pair left out is counted under the rule that
left it out (:attr:`ClickJudgments.counts`).

References
----------
.. [COEC] Zhang, W. V. and Jones, R. (2007), "Comparing click logs and editorial labels for
   training query rewriting", WWW 2007 Workshop on Query Log Analysis (clicks over expected
   clicks).
.. [SRW] OpenSearch Search Relevance Workbench, "Judgments" (implicit judgments from UBI),
   https://docs.opensearch.org/latest/search-plugins/search-relevance/judgments/
"""

from __future__ import annotations

import datetime
import os
import re
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal

from rankflavor.clicks.result import (
    DEFAULT_MAX_RANK,
    SOURCE,
    ClickJudgment,
    ClickJudgments,
    CoecSettings,
    PositionCtr,
)
from rankflavor.clicks.ubi import Event, UbiEvents, UbiQueries, read_ubi_events, read_ubi_queries
from rankflavor.errors import UsageError


def coec(queries: UbiQueries | str | os.PathLike[str] | None, events: UbiEvents | str | os.PathLike[str],
         *, max_rank: int = DEFAULT_MAX_RANK, min_impressions: int = 0, min_clicks: int = 0,
         start_date: datetime.date | str | None = None, end_date: datetime.date | str | None = None,
         click_action: str = "click", impression_action: str = "impression", digits: int = 3,
         query_map: Mapping[str, str] | None = None) -> ClickJudgments:
    """COEC judgments from a UBI query log and event log, as SRW computes them (module docstring).

    Parameters
    ----------
    queries : the query log (a path, or :func:`~rankflavor.clicks.read_ubi_queries`' result),
        or None: then every event needs its own ``user_query``.
    events : the event log (a path, or :func:`~rankflavor.clicks.read_ubi_events`' result).
    max_rank : events above this ordinal are left out; the position table has ``0 .. max_rank-1``.
    min_impressions, min_clicks : a pair with fewer is dropped (counted); 0: none is (SRW).
    start_date, end_date : keep events of these days (UTC, inclusive; ``YYYY-MM-DD``).
    click_action, impression_action : the ``action_name`` of a click and of an impression
        (compared ignoring case).
    digits : decimals of the rating written (SRW: 3).
    query_map : ``{user query text: query id}``; pairs of a text it lacks are dropped, counted.
        None: the id is the text, percent-encoded (:func:`query_id_of`).

    Returns
    -------
    ClickJudgments
    """
    settings = CoecSettings(max_rank, min_impressions, min_clicks, _date(start_date, "start_date"),
                            _date(end_date, "end_date"), click_action, impression_action, digits)
    log = queries if isinstance(queries, UbiQueries) or queries is None else read_ubi_queries(queries)
    ev = events if isinstance(events, UbiEvents) else read_ubi_events(events)
    counts: dict[str, int] = {"events_read": len(ev.events)}  # (the reader's "documents" count)
    kept = _in_range(ev.events, settings, counts)
    table = _position_table(kept, settings, counts)
    pairs = _pairs(kept, log, settings, counts)
    judgments = _judgments(pairs, table, settings, query_map, counts)
    inputs = {"events": ev.source}
    if log is not None:
        inputs["queries"] = log.source
        # of every event read: a query_id the query log lacks (an ambiguous one it has)
        counts["events_query_id_not_in_log"] = sum(
            1 for e in ev.events if e.query_id is not None and e.query_id not in log.texts
            and e.query_id not in log.conflicting)
        for key in ("documents", "query_ids", "without_query_id", "without_user_query", "conflicting_query_ids"):
            counts[f"query_log_{key}"] = log.counts.get(key, 0)
        counts["query_log_other_log_documents"] = log.counts.get("other_log_documents", 0)
    counts["events_other_log_documents"] = ev.counts.get("other_log_documents", 0)
    return ClickJudgments(judgments, table, counts, settings, inputs)


def _date(value: datetime.date | str | None, name: str) -> datetime.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    try:
        return datetime.date.fromisoformat(str(value))
    except ValueError:
        raise UsageError(f"{name} '{value}' is not a date YYYY-MM-DD") from None


def _in_range(events: tuple[Event, ...], s: CoecSettings, counts: dict[str, int]) -> list[Event]:
    """The events both of SRW's passes read: in the date range, with an ordinal <= max_rank."""
    out: list[Event] = []
    dated = s.start_date is not None or s.end_date is not None
    skipped = {"events_without_timestamp": 0, "events_outside_dates": 0, "events_without_position": 0,
               "events_above_max_rank": 0}
    for e in events:
        if dated:
            day = _day(e.timestamp)
            if day is None:
                skipped["events_without_timestamp"] += 1
                continue
            if (s.start_date and day < s.start_date) or (s.end_date and day > s.end_date):
                skipped["events_outside_dates"] += 1
                continue
        if e.ordinal is None:
            skipped["events_without_position"] += 1
        elif e.ordinal > s.max_rank:
            skipped["events_above_max_rank"] += 1
        else:
            out.append(e)
    counts.update(skipped)
    counts["events_in_range"] = len(out)
    return out


def _day(timestamp: str | None) -> datetime.date | None:
    """The UTC day of an ISO 8601 timestamp (one without an offset is UTC, as OpenSearch reads it)."""
    if timestamp is None:
        return None
    try:
        moment = datetime.datetime.fromisoformat(timestamp.strip())
        if moment.tzinfo is not None:
            moment = moment.astimezone(datetime.UTC)
    except (ValueError, OverflowError):  # (0001-01-01T00:00+01:00 is before the first UTC day Python has)
        return None
    return moment.date()


def _kind(action: str | None, s: CoecSettings) -> str | None:
    if action is None:
        return None
    folded = action.casefold()
    if folded == s.click_action.casefold():
        return "click"
    if folded == s.impression_action.casefold():
        return "impression"
    return None


def _position_table(events: list[Event], s: CoecSettings, counts: dict[str, int]) -> tuple[PositionCtr, ...]:
    """CTR by position ``0 .. max_rank - 1`` over every query; the table stops after the highest
    position logged (the positions past it have no impression: CTR 0)."""
    clicks: dict[int, int] = {}
    impressions: dict[int, int] = {}
    totals = {"click": 0, "impression": 0, None: 0}
    for e in events:
        kind = _kind(e.action, s)
        totals[kind] += 1
        if kind is not None and e.ordinal is not None and 0 <= e.ordinal < s.max_rank:
            at = clicks if kind == "click" else impressions
            at[e.ordinal] = at.get(e.ordinal, 0) + 1
    counts["clicks"] = totals["click"]
    counts["impressions"] = totals["impression"]
    counts["events_other_action"] = totals[None]
    size = max([-1, *clicks, *impressions]) + 1
    return tuple(PositionCtr(p, impressions.get(p, 0), clicks.get(p, 0),
                             clicks.get(p, 0) / impressions[p] if impressions.get(p) else 0.0) for p in range(size))


def _pairs(events: list[Event], log: UbiQueries | None, s: CoecSettings,
           counts: dict[str, int]) -> dict[tuple[str, str], list[int | None]]:
    """``(query text, doc) -> [clicks, impressions, lowest position]`` (``ClickthroughRate``)."""
    pairs: dict[tuple[str, str], list[int | None]] = {}
    c = dict.fromkeys(("events_without_object", "events_without_query_text", "events_query_text_from_log",
                       "events_query_text_differs_from_log"), 0)
    texts = {} if log is None else log.texts
    for e in events:
        if e.object_id is None:
            c["events_without_object"] += 1
            continue
        logged = texts.get(e.query_id) if e.query_id is not None else None
        text = e.user_query if e.user_query is not None and e.user_query.strip() else None
        if text is None and logged is not None:
            text = logged
            c["events_query_text_from_log"] += 1
        elif text is not None and logged is not None and logged != text:
            c["events_query_text_differs_from_log"] += 1
        if text is None:
            c["events_without_query_text"] += 1
            continue
        entry = pairs.setdefault((text, e.object_id), [0, 0, None])
        kind = _kind(e.action, s)
        if kind is None:
            continue
        entry[0 if kind == "click" else 1] += 1  # type: ignore[operator]
        rank = entry[2]
        if rank is None or (e.ordinal is not None and e.ordinal < rank):
            entry[2] = e.ordinal
    counts.update(c)
    counts["pairs"] = len(pairs)
    return pairs


def _judgments(pairs: dict[tuple[str, str], list[int | None]], table: tuple[PositionCtr, ...], s: CoecSettings,
               query_map: Mapping[str, str] | None, counts: dict[str, int]) -> tuple[ClickJudgment, ...]:
    c = dict.fromkeys(("pairs_dropped_not_in_query_map", "pairs_dropped_min_impressions", "pairs_dropped_min_clicks",
                       "pairs_rated_zero_no_impressions", "pairs_rated_zero_no_ctr"), 0)
    out: list[ClickJudgment] = []
    ids: dict[str, str | None] = {}
    for (text, doc), (clicks, impressions, rank) in pairs.items():
        assert isinstance(clicks, int) and isinstance(impressions, int)
        query_id = ids.get(text, "")
        if query_id == "":
            query_id = ids[text] = query_id_of(text) if query_map is None else query_map.get(text)
        if query_id is None:
            c["pairs_dropped_not_in_query_map"] += 1
            continue
        if impressions < s.min_impressions:
            c["pairs_dropped_min_impressions"] += 1
            continue
        if clicks < s.min_clicks:
            c["pairs_dropped_min_clicks"] += 1
            continue
        ctr = table[rank].ctr if rank is not None and 0 <= rank < len(table) else 0.0
        expected = ctr * impressions
        value = clicks / expected if expected > 0 else 0.0
        if expected <= 0:
            c["pairs_rated_zero_no_impressions" if impressions == 0 else "pairs_rated_zero_no_ctr"] += 1
        out.append(ClickJudgment(query_id, text, doc, java_fixed(value, s.digits), value, clicks, impressions, rank,
                                 ctr, expected))
    out.sort(key=lambda j: (j.query_id, j.doc_id))
    counts.update(c)
    counts["pairs_kept"] = len(out)
    counts["queries"] = len({j.query_id for j in out})
    return tuple(out)


def java_fixed(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals as Java's ``String.format("%.Nf")`` writes it: rounded
    half-up on the shortest decimal that reads back as the double (Python's ``repr``), where
    Python's ``%`` rounds the double's exact binary value (``1.0005`` -> Java ``1.001``, Python
    ``1.000``).

    Examples
    --------
    >>> java_fixed(1.0005, 3), java_fixed(2 / 3, 3), java_fixed(0.0, 3), java_fixed(2.5, 0)
    ('1.001', '0.667', '0.000', '3')
    """
    quantum = Decimal(1).scaleb(-digits)
    return f"{Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP):f}"


#: A text that is its own query id: no blank and no ``%`` (and printable, checked apart).
_PLAIN = re.compile(r"[^%\s]*")


def query_id_of(text: str) -> str:
    """The query id of a query text: blanks, ``%`` and unprintable characters percent-encoded as
    their UTF-8 bytes, so the id has no blank (TREC files split on them) and maps back to one
    text (:func:`text_of_query_id`).

    Examples
    --------
    >>> query_id_of("iphone headphones"), query_id_of("100% cotton\\t"), query_id_of("café")
    ('iphone%20headphones', '100%25%20cotton%09', 'café')
    """
    if text.isprintable() and _PLAIN.fullmatch(text):
        return text
    out: list[str] = []
    for ch in text:
        if ch == "%" or ch.isspace() or not ch.isprintable():
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append(ch)
    return "".join(out)


def text_of_query_id(query_id: str) -> str:
    """The query text :func:`query_id_of` made ``query_id`` from.

    Examples
    --------
    >>> text_of_query_id("100%25%20cotton%09")
    '100% cotton\\t'
    """
    from urllib.parse import unquote

    return unquote(query_id, encoding="utf-8", errors="surrogatepass")


__all__ = ["DEFAULT_MAX_RANK", "SOURCE", "ClickJudgment", "ClickJudgments", "CoecSettings", "PositionCtr", "coec",
           "java_fixed", "query_id_of", "text_of_query_id"]
