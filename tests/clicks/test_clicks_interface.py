"""COEC judgments (rankflavor.clicks.coec): what the mutation pass of the `judges` group showed
unpinned. Every count by its name and the result's field names (they are the JSON output), the
position-bias table where a position has clicks and no impression (or the reverse), each
reason an event or pair is counted under, the settings' error messages, logs built in memory,
days in UTC whatever the machine's zone, and query ids of text holding lone surrogates."""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from rankflavor.clicks import Event, UbiEvents, UbiQueries, coec, query_id_of, text_of_query_id
from rankflavor.errors import UsageError

from .clicks_cases import event, jsonl, write_logs


@pytest.fixture
def logs(tmp_path: Path) -> tuple[Path, Path]:
    return write_logs(tmp_path)


def _events(path: Path, docs: list[dict[str, object]]) -> Path:
    path.write_text(jsonl(docs))  # type: ignore[arg-type]
    return path


def test_every_count_and_field_of_the_worked_example_by_name(logs: tuple[Path, Path]) -> None:
    # The worked example of tests/clicks/test_clicks.py (max_rank 3), every count spelt out:
    #   query log: 5 documents, ids s1..s5, each with its text, none ambiguous;
    #   event log: 22 events, 1 without position (the search), 1 above max rank (H at 4), 20 kept:
    #   6 clicks, 13 impressions, 1 add_to_cart; s5's 2 events take their text from the log;
    #   9 pairs, all kept; X rated 0 for want of impressions, G (rank 3) for want of a CTR; 3 queries.
    q, e = logs
    result = coec(q, e, max_rank=3)
    assert result.counts == {
        "events_read": 22, "events_without_timestamp": 0, "events_outside_dates": 0, "events_without_position": 1,
        "events_above_max_rank": 1, "events_in_range": 20, "clicks": 6, "impressions": 13, "events_other_action": 1,
        "events_without_object": 0, "events_without_query_text": 0, "events_query_text_from_log": 2,
        "events_query_text_differs_from_log": 0, "pairs": 9, "pairs_dropped_not_in_query_map": 0,
        "pairs_dropped_min_impressions": 0, "pairs_dropped_min_clicks": 0, "pairs_rated_zero_no_impressions": 1,
        "pairs_rated_zero_no_ctr": 1, "pairs_kept": 9, "queries": 3, "events_query_id_not_in_log": 0,
        "query_log_documents": 5, "query_log_query_ids": 5, "query_log_without_query_id": 0,
        "query_log_without_user_query": 0, "query_log_conflicting_query_ids": 0, "query_log_other_log_documents": 0,
        "events_other_log_documents": 0}
    assert result.inputs == {"events": str(e), "queries": str(q)}
    assert coec(None, e, max_rank=3).inputs == {"events": str(e)}
    # the CTR each judgment was rated with: CTR(0) = 2/5, CTR(1) = 2/4, CTR(2) = 1/3, none at 3 or for X (no rank)
    ctr = {(j.query_id, j.doc_id): j.ctr_at_position for j in result.judgments}
    assert ctr[("red%20shoes", "A")] == pytest.approx(0.4) and ctr[("boots", "E")] == pytest.approx(0.5)
    assert ctr[("red%20shoes", "C")] == pytest.approx(1 / 3) and ctr[("hat", "G")] == 0.0 and ctr[("boots", "X")] == 0.0
    # the JSON output's field names (to_dict is what --format json writes)
    data = result.to_dict()
    assert set(data) == {"source", "inputs", "settings", "counts", "position_bias", "judgments"}
    assert data["source"] == "clicks:coec" and data["counts"] == result.counts and data["inputs"] == result.inputs
    assert set(data["position_bias"][0]) == {"position", "impressions", "clicks", "ctr"}
    assert set(data["judgments"][0]) == {"query_id", "user_query", "doc_id", "rating", "coec", "clicks", "impressions",
                                         "position", "ctr_at_position", "expected_clicks"}
    # the defaults, as SRW names its actions
    assert data["settings"] == {"max_rank": 3, "min_impressions": 0, "min_clicks": 0, "start_date": None,
                                "end_date": None, "click_action": "click", "impression_action": "impression",
                                "digits": 3}
    dated = coec(q, e, max_rank=3, start_date="2025-01-01", end_date=datetime.datetime(2025, 1, 2, 23, 59))
    assert (dated.settings.to_dict()["start_date"], dated.settings.to_dict()["end_date"]) == ("2025-01-01", "2025-01-02")
    # an empty date is no date
    assert coec(q, e, max_rank=3, start_date="", end_date="").counts == result.counts
    qrels = result.to_qrels()
    assert qrels.source == "clicks:coec"
    assert qrels.query.type == pa.string() and qrels.doc.type == pa.string()


def test_no_judgment_gives_empty_qrels_of_string_ids(logs: tuple[Path, Path]) -> None:
    q, e = logs
    empty = coec(q, e, max_rank=3, min_clicks=100)
    assert empty.judgments == () and empty.counts["pairs_dropped_min_clicks"] == 9
    qrels = empty.to_qrels()
    # (pyarrow infers the null type for an empty list: the id columns must still be strings)
    assert (len(qrels.query), qrels.query.type, qrels.doc.type, len(qrels.grade)) == (0, pa.string(), pa.string(), 0)
    assert qrels.source == "clicks:coec"


def test_position_table_and_zero_ratings_where_a_position_lacks_clicks_or_impressions(tmp_path: Path) -> None:
    # One query "shoes": d1 shown at 0; d2 clicked at 1 but never shown; d3 shown at 2, never clicked.
    #   table (positions 0 .. the highest logged, 2): pos 0: 1 impression, 0 clicks, CTR 0;
    #   pos 1: 0 impressions, 1 click, CTR 0 (no impression); pos 2: 1 impression, 0 clicks, CTR 0.
    #   d2 has no impression: rated 0 for that reason; d1 and d3 have one, at a position of CTR 0.
    path = _events(tmp_path / "e.jsonl", [event("impression", "s1", "d1", 0), event("click", "s1", "d2", 1),
                                          event("impression", "s1", "d3", 2)])
    r = coec(None, path, max_rank=5)
    assert [(p.position, p.impressions, p.clicks, p.ctr) for p in r.position_bias] == [
        (0, 1, 0, 0.0), (1, 0, 1, 0.0), (2, 1, 0, 0.0)]
    assert (r.counts["pairs_rated_zero_no_impressions"], r.counts["pairs_rated_zero_no_ctr"]) == (1, 2)
    # only position 0 logged: a table of one row; nothing logged below max rank: no row
    only0 = coec(None, _events(tmp_path / "e0.jsonl", [event("impression", "s1", "d1", 0),
                                                       event("click", "s1", "d1", 0)]), max_rank=5)
    assert [(p.position, p.impressions, p.clicks, p.ctr) for p in only0.position_bias] == [(0, 1, 1, 1.0)]
    assert only0.judgments[0].rating == "1.000"  # 1 click / (CTR 1 x 1 impression)
    none = coec(None, _events(tmp_path / "e1.jsonl", [event("impression", "s1", "d1", 2)]), max_rank=2)
    assert none.position_bias == () and none.counts["pairs_rated_zero_no_ctr"] == 1


def test_each_event_left_out_is_counted_once_and_the_rest_still_read(tmp_path: Path) -> None:
    qlog = tmp_path / "q.jsonl"
    qlog.write_text(jsonl([{"query_id": "a", "user_query": "shoes"}]))
    docs = [
        event("impression", "s1", None, 0), event("click", "s1", None, 1),  # a position, no object: 2
        {**event("impression", "s1", "p", None)}, {**event("click", "s1", "p", None)},  # no position: 2
        {**event("impression", "a", "d1", 0), "user_query": ""},  # an empty text: the log's (shoes)
        {**event("click", "a", "d1", 0), "user_query": " \t"},  # a blank text: the log's too
        {**event("impression", "a", "d2", 0), "user_query": "sandals"},  # its own text, not the log's: 2
        {**event("click", "a", "d2", 0), "user_query": "sandals"},
        {**event("impression", "zz", "d3", 0), "user_query": "socks"},  # an id the log lacks: its own text
    ]
    r = coec(qlog, _events(tmp_path / "e.jsonl", docs), max_rank=3)
    c = r.counts
    assert (c["events_without_object"], c["events_without_position"], c["events_in_range"]) == (2, 2, 7)
    assert (c["events_query_text_from_log"], c["events_query_text_differs_from_log"], c["events_query_id_not_in_log"]) \
        == (2, 2, 5)  # (the last: of every event read, s1's four and zz's)
    # the events after those without object still form their pairs; d1 has its text from the log
    assert sorted((j.user_query, j.doc_id, j.clicks, j.impressions) for j in r.judgments) == [
        ("sandals", "d2", 1, 1), ("shoes", "d1", 1, 1), ("socks", "d3", 0, 1)]


def test_settings_errors_say_what_was_expected(tmp_path: Path) -> None:
    unused = tmp_path / "unused.jsonl"
    for kwargs, message in (({"max_rank": 0}, "max_rank must be an integer >= 1, got 0"),
                            ({"max_rank": 2.5}, "max_rank must be an integer >= 1, got 2.5"),
                            ({"max_rank": True}, "max_rank must be an integer >= 1, got True"),
                            ({"min_clicks": -1}, "min_clicks must be an integer >= 0, got -1"),
                            ({"min_impressions": "2"}, "min_impressions must be an integer >= 0, got '2'"),
                            ({"digits": 13}, "digits must be at most 12, got 13"),
                            ({"end_date": "soon"}, "end_date 'soon' is not a date YYYY-MM-DD"),
                            ({"start_date": "2025-1-32"}, "start_date '2025-1-32' is not a date YYYY-MM-DD")):
        with pytest.raises(UsageError) as caught:
            coec(None, unused, **kwargs)  # type: ignore[arg-type]
        assert str(caught.value) == message, kwargs


def test_twelve_digits_are_allowed(tmp_path: Path) -> None:
    # position 0: 2 impressions, 1 click, CTR 1/2; d1: 1 click / (1/2 x 1 impression) = 2 exactly,
    # d2: no click, 0. Written with twelve decimals (the most allowed).
    path = _events(tmp_path / "e.jsonl", [event("impression", "s1", "d1", 0), event("click", "s1", "d1", 0),
                                          event("impression", "s2", "d2", 0)])
    r = coec(None, path, max_rank=1, digits=12)
    assert {j.doc_id: j.rating for j in r.judgments} == {"d1": "2.000000000000", "d2": "0.000000000000"}


def test_logs_built_in_memory_without_counts(tmp_path: Path) -> None:
    # UbiEvents / UbiQueries made by a caller (counts default to {}): what the readers would count is 0
    events = UbiEvents("mem", (Event("impression", "a", None, "d1", 0, None, 1), Event("click", "a", None, "d1", 0, None, 2)))
    queries = UbiQueries("memq", {"a": "shoes"})
    r = coec(queries, events, max_rank=2)
    assert r.counts["events_read"] == 2 and r.counts["events_other_log_documents"] == 0
    assert {k: v for k, v in r.counts.items() if k.startswith("query_log_")} == {
        "query_log_documents": 0, "query_log_query_ids": 0, "query_log_without_query_id": 0,
        "query_log_without_user_query": 0, "query_log_conflicting_query_ids": 0, "query_log_other_log_documents": 0}
    assert r.inputs == {"events": "mem", "queries": "memq"}
    assert [(j.query_id, j.doc_id, j.rating) for j in r.judgments] == [("shoes", "d1", "1.000")]
    assert json.loads(r.render("json"))["counts"]["events_read"] == 2


@pytest.fixture
def far_east_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local zone set to UTC+14 (POSIX TZ "XYZ-14") for the test, then put back."""
    if not hasattr(time, "tzset"):
        pytest.skip("time.tzset is Unix only")
    monkeypatch.setenv("TZ", "XYZ-14")
    time.tzset()
    try:
        yield
    finally:
        monkeypatch.undo()
        time.tzset()


def test_days_are_utc_whatever_the_machine_zone(tmp_path: Path, far_east_zone: None) -> None:
    # Both events are on 2025-01-01 in UTC: 12:00Z, and 02:00+07:00 on the 2nd (19:00Z on the 1st).
    # In the local zone here (UTC+14) both are on 2025-01-02; SRW's range on `timestamp` is in UTC.
    assert datetime.datetime(2025, 1, 1, 12, tzinfo=datetime.UTC).astimezone().day == 2  # the zone took
    docs = [{**event("impression", "s1", "d1", 0), "timestamp": "2025-01-01T12:00:00Z"},
            {**event("click", "s1", "d1", 0), "timestamp": "2025-01-02T02:00:00+07:00"}]
    r = coec(None, _events(tmp_path / "e.jsonl", docs), max_rank=1, start_date="2025-01-01", end_date="2025-01-01")
    assert (r.counts["events_in_range"], r.counts["events_outside_dates"]) == (2, 0)


def test_query_ids_of_lone_surrogates_round_trip() -> None:
    # A JSON log may hold "\ud800" (a lone surrogate, valid JSON): the id percent-encodes it as
    # the bytes "surrogatepass" gives (ED A0 80), and maps back to the same text.
    text = json.loads('"a\\ud800 b"')
    assert query_id_of(text) == "a%ED%A0%80%20b"
    assert text_of_query_id("a%ED%A0%80%20b") == text
    assert text_of_query_id("caf%C3%A9%20%E2%80%A8") == "café \u2028"
