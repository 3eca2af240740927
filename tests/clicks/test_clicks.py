"""COEC judgments from UBI logs (rankflavor.clicks): a worked example from the formula, the
threshold knobs by example, line-order invariance, every input form giving the same judgments,
and what is counted."""

from __future__ import annotations

import json
import random
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankflavor.clicks import coec, query_id_of, read_query_map, read_ubi_events, read_ubi_queries, text_of_query_id
from rankflavor.clicks.coec import java_fixed
from rankflavor.errors import InputError, UsageError

from .clicks_cases import EVENTS, QUERIES, bulk, event, hits, jsonl, parquet, write_logs


@pytest.fixture
def logs(tmp_path: Path) -> tuple[Path, Path]:
    return write_logs(tmp_path)


def _table(result) -> dict[tuple[str, str], tuple[str, int, int, int | None]]:  # type: ignore[no-untyped-def]
    return {(j.query_id, j.doc_id): (j.rating, j.clicks, j.impressions, j.position) for j in result.judgments}


def test_coec_equals_the_worked_example(logs: tuple[Path, Path]) -> None:
    # max_rank 3: events at ordinal <= 3 are read (SRW's `range ... lte maxRank`); the table of
    # CTR by position covers 0..2. H (ordinal 4) and the search event (no position) are left out.
    #
    # Position bias, over every query (clicks / impressions):
    #   pos 0: impressions A(s1) B(s2) D(s3) F(s4) D(s5) = 5, clicks A(s1) B(s2) = 2 -> 2/5 = 0.4
    #   pos 1: impressions B(s1) A(s2) E(s3) E(s5) = 4,       clicks A(s2) E(s3) = 2 -> 2/4 = 0.5
    #   pos 2: impressions C(s1) C(s2) C(s3) = 3,             clicks C(s1) = 1       -> 1/3
    #   (G at ordinal 3 is read - 3 <= max_rank - but the table has no position 3.)
    #
    # Pairs by (user query text, doc): clicks, impressions over every position; rank = lowest
    # position of a click or impression; expected = CTR(rank) * impressions; COEC = clicks / expected.
    #   red shoes, A: 2 clicks, 2 impressions, rank 0: expected 0.4 * 2 = 0.8,   COEC 2 / 0.8   = 2.5
    #   red shoes, B: 1 click,  2 impressions, rank 0: expected 0.4 * 2 = 0.8,   COEC 1 / 0.8   = 1.25
    #   red shoes, C: 1 click,  2 impressions, rank 2: expected 1/3 * 2 = 2/3,   COEC 1 / (2/3) = 1.5
    #   boots, C:     0 clicks, 1 impression,  rank 2: expected 1/3,             COEC 0
    #   boots, D:     0 clicks, 2 impressions (s3, and s5 whose events take the text from the log): COEC 0
    #   boots, E:     1 click,  2 impressions, rank 1: expected 0.5 * 2 = 1.0,   COEC 1
    #   boots, X:     an add_to_cart alone: no impression, expected 0 -> 0 (SRW forms the pair)
    #   hat, F:       0 clicks, 1 impression,  rank 0: expected 0.4,             COEC 0
    #   hat, G:       1 click,  1 impression,  rank 3: no CTR at 3, expected 0 -> 0
    q, e = logs
    result = coec(q, e, max_rank=3)
    assert [(p.position, p.impressions, p.clicks) for p in result.position_bias] == [(0, 5, 2), (1, 4, 2), (2, 3, 1)]
    assert [p.ctr for p in result.position_bias] == pytest.approx([0.4, 0.5, 1 / 3], abs=1e-15)
    expected = {
        ("red%20shoes", "A"): ("2.500", 2, 2, 0), ("red%20shoes", "B"): ("1.250", 1, 2, 0),
        ("red%20shoes", "C"): ("1.500", 1, 2, 2), ("boots", "C"): ("0.000", 0, 1, 2),
        ("boots", "D"): ("0.000", 0, 2, 0), ("boots", "E"): ("1.000", 1, 2, 1), ("boots", "X"): ("0.000", 0, 0, None),
        ("hat", "F"): ("0.000", 0, 1, 0), ("hat", "G"): ("0.000", 1, 1, 3),
    }
    assert _table(result) == expected
    coecs = {(j.query_id, j.doc_id): j.coec for j in result.judgments}
    assert coecs[("red%20shoes", "A")] == pytest.approx(2.5, abs=1e-12)
    assert coecs[("red%20shoes", "C")] == pytest.approx(1.5, abs=1e-12)
    exp = {(j.query_id, j.doc_id): j.expected_clicks for j in result.judgments}
    assert exp[("red%20shoes", "C")] == pytest.approx(2 / 3, abs=1e-15) and exp[("hat", "G")] == 0.0
    # sorted by query id, then document
    assert [(j.query_id, j.doc_id) for j in result.judgments] == sorted(expected)
    c = result.counts
    assert (c["events_read"], c["events_without_position"], c["events_above_max_rank"], c["events_in_range"]) == (22, 1, 1, 20)
    assert (c["clicks"], c["impressions"], c["events_other_action"]) == (6, 13, 1)
    assert (c["events_query_text_from_log"], c["events_query_id_not_in_log"], c["events_without_query_text"]) == (2, 0, 0)
    assert (c["pairs"], c["pairs_kept"], c["queries"]) == (9, 9, 3)
    assert (c["pairs_rated_zero_no_impressions"], c["pairs_rated_zero_no_ctr"]) == (1, 1)
    assert result.ratings()["red%20shoes"] == {"A": 2.5, "B": 1.25, "C": 1.5}
    assert [line.split() for line in result.render("trec").splitlines()][:2] == [
        ["boots", "0", "C", "0.000", "clicks:coec"], ["boots", "0", "D", "0.000", "clicks:coec"]]


def test_max_rank_by_example(logs: tuple[Path, Path]) -> None:
    q, e = logs
    # max_rank 2: C's positions (2) are read but the table stops at 1, so C has no CTR; G (3) is out.
    two = coec(q, e, max_rank=2)
    assert [(p.position, p.impressions, p.clicks) for p in two.position_bias] == [(0, 5, 2), (1, 4, 2)]
    t = _table(two)
    assert ("hat", "G") not in t and t[("red%20shoes", "C")] == ("0.000", 1, 2, 2)
    assert two.counts["events_above_max_rank"] == 3  # G's impression and click, H
    assert two.counts["pairs_rated_zero_no_ctr"] == 2  # red shoes C, boots C
    # max_rank 4: position 3 enters the table (G: 1 click / 1 impression = CTR 1, so COEC 1 / (1 * 1) = 1),
    # and H at 4 = max_rank is read with no CTR: rated 0.
    four = coec(q, e, max_rank=4)
    assert [(p.position, p.impressions, p.clicks) for p in four.position_bias][-1] == (3, 1, 1)
    t = _table(four)
    assert t[("hat", "G")] == ("1.000", 1, 1, 3) and t[("hat", "H")] == ("0.000", 0, 1, 4)


def test_min_impressions_and_min_clicks_by_example(logs: tuple[Path, Path]) -> None:
    q, e = logs
    # impressions per pair: A 2, B 2, C(red) 2, C(boots) 1, D 2, E 2, X 0, F 1, G 1
    r = coec(q, e, max_rank=3, min_impressions=2)
    assert sorted(d for _, d in _table(r)) == ["A", "B", "C", "D", "E"]
    assert (r.counts["pairs_dropped_min_impressions"], r.counts["pairs_kept"]) == (4, 5)
    assert r.counts["pairs_rated_zero_no_impressions"] == 0
    # min_impressions 1 drops exactly the pair SRW rates 0 for want of impressions (X)
    assert coec(q, e, max_rank=3, min_impressions=1).counts["pairs_dropped_min_impressions"] == 1
    # clicks per pair: A 2, B 1, C(red) 1, C(boots) 0, D 0, E 1, X 0, F 0, G 1
    r = coec(q, e, max_rank=3, min_clicks=1)
    assert sorted(_table(r)) == [("boots", "E"), ("hat", "G"), ("red%20shoes", "A"), ("red%20shoes", "B"),
                                 ("red%20shoes", "C")]
    assert r.counts["pairs_dropped_min_clicks"] == 4
    # each pair is counted under the first threshold it fails (impressions, then clicks)
    r = coec(q, e, max_rank=3, min_impressions=2, min_clicks=2)
    assert (r.counts["pairs_dropped_min_impressions"], r.counts["pairs_dropped_min_clicks"], r.counts["pairs_kept"]) == (4, 4, 1)
    # thresholds drop pairs; they do not change the position table or other pairs' ratings
    full = _table(coec(q, e, max_rank=3))
    assert all(full[k] == v for k, v in _table(r).items())


def test_date_range_equals_the_log_without_the_days_left_out(tmp_path: Path, logs: tuple[Path, Path]) -> None:
    q, e = logs
    ranged = coec(q, e, max_rank=3, end_date="2025-01-01")
    assert ranged.counts["events_outside_dates"] == 2  # s5's two events, on 2025-01-02
    cut = tmp_path / "cut.jsonl"
    cut.write_text(jsonl([d for d in EVENTS if not d["timestamp"].startswith("2025-01-02")]))
    assert _table(ranged) == _table(coec(q, cut, max_rank=3))
    assert coec(q, e, max_rank=3, start_date="2025-01-02").counts["events_outside_dates"] == 20
    # both ends are whole days in UTC: 2025-01-02T01:00+02:00 is 2025-01-01T23:00Z
    shifted = tmp_path / "tz.jsonl"
    shifted.write_text(jsonl([{**EVENTS[0], "timestamp": "2025-01-02T01:00:00+02:00"}, {**EVENTS[1], "timestamp": "junk"},
                              {**EVENTS[2], "timestamp": "0001-01-01T00:00:00+01:00"}, {**EVENTS[3], "timestamp": 17}]))
    r = coec(None, shifted, max_rank=3, start_date="2025-01-01", end_date="2025-01-01")
    assert (r.counts["events_in_range"], r.counts["events_without_timestamp"]) == (1, 3)
    with pytest.raises(UsageError, match="not a date"):
        coec(q, e, start_date="01/02/2025")
    with pytest.raises(UsageError, match="after end date"):
        coec(q, e, start_date="2025-02-01", end_date="2025-01-01")


def test_output_does_not_depend_on_line_order(tmp_path: Path, logs: tuple[Path, Path]) -> None:
    q, e = logs
    reference = coec(q, e, max_rank=3)
    for seed in range(5):
        rng = random.Random(seed)
        qs, es = QUERIES[:], EVENTS[:]
        rng.shuffle(qs)
        rng.shuffle(es)
        (tmp_path / "q.jsonl").write_text(jsonl(qs))
        (tmp_path / "e.jsonl").write_text(jsonl(es))
        again = coec(tmp_path / "q.jsonl", tmp_path / "e.jsonl", max_rank=3)
        for fmt in ("trec", "csv"):
            assert again.render(fmt) == reference.render(fmt)
        assert again.counts == reference.counts


def test_jsonl_bulk_hits_and_parquet_give_identical_judgments(tmp_path: Path, logs: tuple[Path, Path]) -> None:
    q, e = logs
    reference = coec(q, e, max_rank=3)
    both = tmp_path / "both.ndjson"
    both.write_text(bulk(QUERIES, EVENTS))  # one _bulk file holding both logs, given twice
    (tmp_path / "q_hits.jsonl").write_text(hits("ubi_queries", QUERIES))
    (tmp_path / "e_hits.jsonl").write_text(hits("ubi_events", EVENTS))
    pairs = [
        (both, both),
        (tmp_path / "q_hits.jsonl", tmp_path / "e_hits.jsonl"),
        (parquet(tmp_path / "q.parquet", QUERIES), parquet(tmp_path / "e.parquet", EVENTS)),
        (q, parquet(tmp_path / "flat.parquet", EVENTS, flat=True)),
    ]
    for queries, events in pairs:
        result = coec(queries, events, max_rank=3)
        assert result.render("trec") == reference.render("trec"), (queries, events)
        assert result.position_bias == reference.position_bias
    bulk_counts = coec(both, both, max_rank=3).counts
    assert (bulk_counts["events_other_log_documents"], bulk_counts["query_log_other_log_documents"]) == (5, 22)


def test_query_text_comes_from_the_event_then_the_query_log(tmp_path: Path) -> None:
    qlog = tmp_path / "q.jsonl"
    qlog.write_text(jsonl([{"query_id": "a", "user_query": "shoes"}, {"query_id": "a", "user_query": "shoes"},
                           {"query_id": "b", "user_query": "boots"}, {"query_id": "b", "user_query": "BOOTS"},
                           {"query_id": "c"}, {"user_query": "orphan"}]))
    events = [
        {**event("impression", "a", "d1", 0, text=False)},  # text from the log: shoes
        {**event("click", "a", "d1", 0, text=False)},
        {**event("impression", "zz", "d2", 0), "user_query": "socks"},  # query_id not in the log; own text kept
        {**event("impression", "a", "d3", 0), "user_query": "sandals"},  # own text kept, differs from the log
        {**event("impression", "b", "d4", 0, text=False)},  # b is ambiguous in the log: no text
        {**event("impression", "q", "d5", 0, text=False)},  # no text anywhere
    ]
    elog = tmp_path / "e.jsonl"
    elog.write_text(jsonl(events))
    log = read_ubi_queries(qlog)
    assert log.texts == {"a": "shoes"} and log.conflicting == {"b"}
    assert (log.counts["without_query_id"], log.counts["without_user_query"], log.counts["conflicting_query_ids"]) == (1, 1, 1)
    r = coec(log, elog, max_rank=3)
    assert sorted(_table(r)) == [("sandals", "d3"), ("shoes", "d1"), ("socks", "d2")]
    c = r.counts
    assert (c["events_query_text_from_log"], c["events_query_id_not_in_log"], c["events_query_text_differs_from_log"],
            c["events_without_query_text"]) == (2, 2, 1, 2)
    # without a query log, only the events' own texts count
    assert sorted(_table(coec(None, elog, max_rank=3))) == [("sandals", "d3"), ("socks", "d2")]


def test_query_map_gives_the_run_ids_and_counts_the_texts_it_lacks(tmp_path: Path, logs: tuple[Path, Path]) -> None:
    q, e = logs
    qmap = tmp_path / "queries.tsv"
    qmap.write_text("101\tred shoes\n\n102\tboots\n")
    r = coec(q, e, max_rank=3, query_map=read_query_map(qmap))
    assert sorted({j.query_id for j in r.judgments}) == ["101", "102"]
    assert r.counts["pairs_dropped_not_in_query_map"] == 2  # hat's F and G
    assert _table(r)[("101", "A")] == ("2.500", 2, 2, 0)
    for text, message in (("101 red shoes\n", ":1: expected 'QUERY_ID<TAB>QUERY TEXT'"),
                          ("101\tred shoes\n102\tred shoes\n", ":2: query text 'red shoes' has the id '101'"),
                          ("101\tred shoes\n101\tboots\n", ":2: query id '101' is given to two texts")):
        qmap.write_text(text)
        with pytest.raises(InputError, match=message):
            read_query_map(qmap)


def test_query_ids_encode_blanks_and_map_back() -> None:
    for text in ("ps4", "iphone headphones", "100% cotton", "tab\there", "café  ", "a%20b", "\x00x", "line\nbreak", "é\u2028"):
        qid = query_id_of(text)
        assert len(qid.split()) == 1 and qid.isprintable()
        assert text_of_query_id(qid) == text
    assert query_id_of("a b") != query_id_of("a%20b")


def test_ratings_round_half_up_like_java() -> None:
    # Java's Formatter rounds the shortest decimal of the double half-up: 1.0005 -> "1.001";
    # Python's % rounds its exact binary value (1.000499999...) down.
    assert f"{1.0005:.3f}" == "1.000"
    assert [java_fixed(x, 3) for x in (1.0005, 0.0005, 2.5, 1 / 3, 2 / 3, 10.0)] == [
        "1.001", "0.001", "2.500", "0.333", "0.667", "10.000"]
    assert java_fixed(1.25, 1) == "1.3" and java_fixed(2 / 3, 0) == "1"


#: A Java program (written for this test) that prints String.format(Locale.ROOT, "%.3f", x), as
#: SRW's CoecClickModel.calculateCoecJudgments writes a rating, for each double given as its bits.
_JAVA = """
import java.io.*;
import java.util.Locale;
public class Fixed {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            double x = Double.longBitsToDouble(Long.parseLong(line.trim()));
            out.append(String.format(Locale.ROOT, "%.3f", x)).append('\\n');
        }
        System.out.print(out);
    }
}
"""


@pytest.mark.skipif(shutil.which("java") is None, reason="no java on the PATH")
def test_ratings_are_written_as_java_writes_them(tmp_path: Path) -> None:
    # COEC values as the model makes them (clicks / (CTR * impressions)), and every multiple of
    # 1/2000 up to 5 (a thousandth's halfway points among them)
    rng = random.Random(7)
    values = []
    for _ in range(3000):
        impressions, clicks_at, shown_at = rng.randint(1, 200), rng.randint(0, 50), rng.randint(1, 300)
        ctr = min(clicks_at, shown_at) / shown_at
        values.append(rng.randint(0, 50) / (ctr * impressions) if ctr > 0 else 0.0)
    values += [k / 2000 for k in range(10001)]
    source = tmp_path / "Fixed.java"
    source.write_text(_JAVA)
    bits = "".join(f"{struct.unpack('<q', struct.pack('<d', v))[0]}\n" for v in values)
    done = subprocess.run(["java", str(source)], input=bits, capture_output=True, text=True, timeout=300, check=True)
    java = done.stdout.split()
    assert len(java) == len(values)
    assert [java_fixed(v, 3) for v in values] == java


def test_malformed_documents_name_file_line_and_json_path(tmp_path: Path) -> None:
    good = json.dumps(EVENTS[0])
    cases = [
        ("e.jsonl", good + "\n" + good[:-3] + "\n", r"e\.jsonl:2: is not valid JSON"),
        ("e.jsonl", "[1, 2]\n", r"e\.jsonl:1: expected a JSON object per line"),
        ("e.jsonl", good + "\n\n" + json.dumps({**EVENTS[0], "event_attributes": {"position": {"ordinal": "first"}}}),
         r"e\.jsonl:3: \$\.event_attributes\.position\.ordinal: expected an integer position, got \"first\""),
        ("e.jsonl", json.dumps({**EVENTS[0], "event_attributes": {"object": {"object_id": {"x": 1}}}}),
         r"e\.jsonl:1: \$\.event_attributes\.object\.object_id: expected a string or an integer id"),
        ("e.jsonl", json.dumps({**EVENTS[0], "event_attributes": [1]}), r"\$\.event_attributes: expected an object or null"),
        ("e.jsonl", json.dumps({**EVENTS[0], "action_name": 7}), r"e\.jsonl:1: \$\.action_name: expected a string"),
        ("e.jsonl", json.dumps({**EVENTS[0], "event_attributes": {"object": {"object_id": "a\u0000b"}}}),
         r"object_id holds a NUL byte"),
        ("e.jsonl", json.dumps({"index": {"_index": "ubi_events"}}) + "\n", r"e\.jsonl:1: a bulk action line with no document"),
        ("e.jsonl", json.dumps({"update": {"_id": "1"}}) + "\n" + good + "\n", r"e\.jsonl:1: a bulk 'update' action"),
        ("e.jsonl", " \n\n", r"e\.jsonl: UBI log is empty"),
        ("e.jsonl", "[" * 100000 + "\n", r"e\.jsonl:1: is not valid JSON: nested too deeply"),
    ]
    for name, text, message in cases:
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(InputError, match=message):
            read_ubi_events(path)
    (tmp_path / "q.jsonl").write_text(json.dumps({"query_id": ["x"], "user_query": "a"}) + "\n")
    with pytest.raises(InputError, match=r"q\.jsonl:1: \$\.query_id: expected a string or an integer id"):
        read_ubi_queries(tmp_path / "q.jsonl")
    bad = [dict(EVENTS[0]), {**EVENTS[1], "event_attributes": {"position": {"ordinal": 1.5}, "object": {"object_id": "B"}}}]
    with pytest.raises(InputError, match=r"e\.parquet: row 1: \$\.event_attributes\.position\.ordinal: expected an "
                       r"integer position, got 1\.5"):
        read_ubi_events(parquet(tmp_path / "e.parquet", bad))
    (tmp_path / "x.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="is not a readable Parquet file"):
        read_ubi_events(tmp_path / "x.parquet")


def test_integer_object_ids_and_float_ordinals_read_as_ubi_allows(tmp_path: Path) -> None:
    # UBI's event schema: object_id is a string or an integer (o19s/ubi schema/1.3.0/event.schema.json);
    # a pandas export holds a column of ordinals with a missing one as floats (NaN for the missing).
    docs = [{**EVENTS[0], "event_attributes": {"object": {"object_id": 123}, "position": {"ordinal": 0.0}}},
            {**EVENTS[3], "event_attributes": {"object": {"object_id": 123}, "position": {"ordinal": 0}}},
            {**EVENTS[1], "event_attributes": {"object": {"object_id": "B"}, "position": {"ordinal": float("nan")}}}]
    path = tmp_path / "e.jsonl"
    path.write_text(jsonl(docs))
    read = read_ubi_events(path).events
    assert [(x.object_id, x.ordinal) for x in read] == [("123", 0), ("123", 0), ("B", None)]


def test_settings_are_checked() -> None:
    for kwargs, message in (({"max_rank": 0}, "max_rank must be an integer >= 1"),
                            ({"min_clicks": -1}, "min_clicks must be"),
                            ({"click_action": "Impression"}, "the click and impression actions are the same")):
        with pytest.raises(UsageError, match=message):
            coec(None, Path("unused.jsonl"), **kwargs)  # type: ignore[arg-type]


def test_to_qrels_holds_the_ratings_written(logs: tuple[Path, Path]) -> None:
    q, e = logs
    result = coec(q, e, max_rank=3)
    qrels = result.to_qrels()
    rows = sorted(zip(qrels.query.to_pylist(), qrels.doc.to_pylist(), qrels.grade.tolist(), strict=True))
    assert rows == sorted((j.query_id, j.doc_id, float(j.rating)) for j in result.judgments)
    assert len(rows) == 9


_random_events = st.lists(st.tuples(st.sampled_from(["click", "impression", "IMPRESSION", "add_to_cart", None]),
                                    st.sampled_from(["shoes", "boots", "a hat"]), st.sampled_from(["d1", "d2", "d3"]),
                                    st.none() | st.integers(-1, 5)), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(rows=_random_events, max_rank=st.integers(1, 4))
def test_coec_equals_the_definition_on_random_logs(rows: list[tuple[str | None, str, str, int | None]],
                                                   max_rank: int) -> None:
    # The rules of the module docstring, written out one at a time over the whole list for each
    # position and pair (no running counts), on random small logs.
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "e.jsonl"
        path.write_text(jsonl([{**event(a, "s1", d, o), "user_query": t} for a, t, d, o in rows]))
        result = coec(None, path, max_rank=max_rank)
    seen = [(a.lower() if a else a, t, d, o) for a, t, d, o in rows if o is not None and o <= max_rank]

    def ctr(p: int) -> float:
        shown = sum(1 for a, _, _, o in seen if a == "impression" and o == p)
        return sum(1 for a, _, _, o in seen if a == "click" and o == p) / shown if shown else 0.0

    expected = {}
    for t, d in {(t, d) for _, t, d, _ in seen}:
        mine = [(a, o) for a, tt, dd, o in seen if (tt, dd) == (t, d)]
        clicks = sum(1 for a, _ in mine if a == "click")
        shown = sum(1 for a, _ in mine if a == "impression")
        ranks = [o for a, o in mine if a in ("click", "impression")]
        rank = min(ranks) if ranks else None
        at = ctr(rank) if rank is not None and 0 <= rank < max_rank else 0.0
        value = clicks / (at * shown) if at * shown > 0 else 0.0
        expected[(query_id_of(t), d)] = (clicks, shown, rank, value)
    got = {(j.query_id, j.doc_id): (j.clicks, j.impressions, j.position, j.coec) for j in result.judgments}
    assert got == expected
    table = {p.position: p.ctr for p in result.position_bias}
    assert all(table.get(p, 0.0) == ctr(p) for p in range(max_rank))


def test_a_file_of_both_logs_without_index_names_reads_as_both(tmp_path: Path, logs: tuple[Path, Path]) -> None:
    # events carry an action_name, query documents none: the query log skips the events (counted)
    q, e = logs
    both = tmp_path / "both.jsonl"
    both.write_text(jsonl(QUERIES + EVENTS))
    log = read_ubi_queries(both)
    assert log.counts["other_log_documents"] == len(EVENTS) and log.counts["documents"] == len(QUERIES)
    assert _table(coec(both, e, max_rank=3)) == _table(coec(q, e, max_rank=3))
    # in Parquet the query rows hold action_name null (the column is the events'): they are queries
    mixed = parquet(tmp_path / "both.parquet", QUERIES + EVENTS)
    assert read_ubi_queries(mixed).texts == read_ubi_queries(q).texts
    assert _table(coec(mixed, mixed, max_rank=3)) == _table(coec(q, e, max_rank=3))
    assert coec(mixed, mixed, max_rank=3).counts == {**coec(q, e, max_rank=3).counts, "query_log_other_log_documents":
                                                     len(EVENTS), "events_other_log_documents": len(QUERIES)}
