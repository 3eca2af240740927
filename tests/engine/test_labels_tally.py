"""The labels counted by kind and the ``--labels`` choice at their edges: the words of every
message (part of the interface), the counts of pieces added up, a measure's labels that are none,
a verdict resting on the first kind alone, and what a choice records (its rule, what it left out,
and where the kept lines are) when nothing is dropped, when the judgments are no file, and when
judgments already chosen are chosen again. Every expected value is worked out by hand below."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import rankflavor as rf
from rankflavor.align import align
from rankflavor.engine.labels import counted, sentence
from rankflavor.errors import InputError, UsageError
from rankflavor.io.columns import to_strings
from rankflavor.io.labels import canonical_choice, parse_choice, select_labels
from rankflavor.io.labels.sources import merged, per_query
from rankflavor.io.qrels import read_qrels
from rankflavor.io.tables import Qrels, Run
from rankflavor.render.text import render_table
from rankflavor.report.html import render_report
from rankflavor.report.inputs import document_from_dict

from ..support.order_cases import examples

# q1: d1 judged by a person (2) and an LLM (0), d2 by the LLM (1), d3 by the person (0).
MIXED = "q1 0 d1 2 human:nist\nq1 0 d1 0 llm:m\nq1 0 d2 1 llm:m\nq1 0 d3 0 human:nist\n"
RUN = {"q1": {"d2": 3.0, "d1": 2.0, "d3": 1.0}}


def _file(tmp_path: Path, text: str, name: str = "q.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- tally ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint32, np.uint64])
def test_per_query_takes_query_codes_of_any_integer_type(dtype: type) -> None:
    # judgments (query code, kind): (1, human) (1, clicks) (0, llm) (1, human); query 2 has none.
    # By hand: query 0 -> llm 1; query 1 -> human 2, clicks 1; query 2 -> nothing.
    # (Unsigned 64-bit codes must not be promoted to floats on the way to the count.)
    table = per_query(("human", "llm", "clicks"), np.array([0, 2, 1, 0]), np.array([1, 1, 0, 1], dtype=dtype), 3)
    assert table.tolist() == [[0, 1, 0], [2, 0, 1], [0, 0, 0]]


def test_an_alignment_of_no_query_counts_no_label() -> None:
    nothing = pa.array([], pa.string())
    aligned = align(Qrels(nothing, nothing, np.zeros(0), label_source=nothing), Run(nothing, nothing, np.zeros(0)))
    assert counted(aligned, np.zeros(0, dtype=bool)) == ()


def test_merged_adds_up_the_pieces_that_counted() -> None:
    # a piece of no counts (None) is skipped wherever it comes; kinds in display order
    # (human, llm, clicks, then others alphabetically): llm 2 + 1 = 3, human 1, zzz 4, clicks 5
    parts = [None, (("llm", 2),), (("human", 1), ("llm", 1)), None, (("zzz", 4), ("clicks", 5))]
    assert merged(parts) == (("human", 1), ("llm", 3), ("clicks", 5), ("zzz", 4))
    assert merged([]) is None and merged([None, None]) is None  # no piece counted: no count at all
    assert merged([None, ()]) == ()  # a piece counted, and found no label: counted, none


def test_chunks_of_judgments_naming_no_source_count_nothing(tmp_path: Path) -> None:
    qrels = _file(tmp_path, "".join(f"q{q} 0 d{d} {(q + d) % 2}\n" for q in range(4) for d in range(3)))
    run = _file(tmp_path, "".join(f"q{q} Q0 d{d} {d + 1} {5 - d} t\n" for q in range(4) for d in range(3)), "r.txt")
    r = rf.evaluate(str(qrels), str(run), "ndcg@3", chunk_rows=4)
    assert r[0].labels is None and "labels" not in json.loads(json.dumps(r.to_dict()))["measures"][0]
    assert "labels:" not in render_table(r, per_query=False, width=200)


def test_a_measure_of_no_label_says_so_in_every_format(tmp_path: Path) -> None:
    # q1 is judged (by a person), q2 only in the run: run_only=include scores q2 (0: nothing
    # relevant) and missing=skip leaves q1 out, so the measure's one query has no label at all.
    qrels = _file(tmp_path, "q1 0 d1 2 human:nist\nq1 0 d2 1 human:nist\n")
    r = rf.evaluate(str(qrels), {"q2": {"d1": 1.0}}, "ndcg@3[run_only=include,missing=skip]")
    assert r[0].labels == () and r[0].per_query() == {"q2": 0.0}
    assert "labels: ndcg@3 over 1 queries: no labels\n" in render_table(r, per_query=False, width=200) + "\n"
    html = render_report([document_from_dict(json.loads(json.dumps(r.to_dict())), "r.json")])
    assert "ndcg@3 over 1 queries: no labels" in html
    assert sentence(()) == "no labels" and sentence((("llm", 1), ("human", 1234))) == "1 llm label, 1,234 human labels"


def test_the_sources_knob_refused_in_the_words_of_each_case(tmp_path: Path) -> None:
    def refused(qrels: Path, measure: str, what: str) -> None:
        with pytest.raises(UsageError) as err:
            rf.evaluate(str(qrels), RUN, measure)
        assert str(err.value) == (
            f"ndcg@3 sets {measure[7:-1]} but the labels it evaluates in {qrels} {what}; drop the knob (the engine sets "
            "it from the judgments' sources), or choose the labels with --labels")

    plain = _file(tmp_path, "q1 0 d1 2\n", "plain.txt")
    refused(plain, "ndcg@3[sources=human+llm]", "name no label source")
    one = _file(tmp_path, "q1 0 d1 2 llm:m\nq1 0 d2 0 llm:m\n", "one.txt")
    refused(one, "ndcg@3[sources=human+llm]", "are of one kind")
    three = _file(tmp_path, "q1 0 d1 2 human:a\nq1 0 d2 0 llm:m\nq1 0 d3 1 clicks:coec\n", "three.txt")
    refused(three, "ndcg@3[sources=human+llm]", "are of the kinds clicks+human+llm")  # (kinds sorted)


def test_a_verdict_on_the_first_kind_alone(tmp_path: Path) -> None:
    # The LLM judged q2 only; the runs hold q1 and q3, so the verdict rests on their four human
    # labels (human is the first kind of the file's two: its count is the only one found among them).
    qrels = _file(tmp_path, "q1 0 d1 1 human:nist\nq1 0 d2 0 human:nist\nq2 0 d1 1 llm:m\nq2 0 d2 0 llm:m\n"
                  "q3 0 d1 0 human:nist\nq3 0 d2 1 human:nist\n")
    ranking = {"d1": 2.0, "d2": 1.0}
    runs = {"A": {"q1": ranking, "q3": ranking}, "B": {"q1": ranking, "q3": {"d2": 2.0, "d1": 1.0}}}
    c = rf.compare(str(qrels), runs, "P@1", n_resamples=20, queries="intersection")
    assert "P@1: labels behind the verdict: 4 human labels over the 2 queries compared" in c.notes


# --- select ---------------------------------------------------------------------------------


def test_a_choice_that_is_not_one_is_refused_in_these_words() -> None:
    for text in ("prefer=", "prefer=human=llm", "Human", "later=llm", " = human"):
        with pytest.raises(UsageError) as err:
            parse_choice(text)
        assert str(err.value) == ("--labels: expected any, a kind (human, llm, clicks, or another kind present) or "
                                  f"prefer=KIND, received {text!r}")


def test_canonical_choices() -> None:
    assert [canonical_choice(t) for t in ("any", " any ", "llm", " prefer = human ", "prefer=rater_2")] == [
        "any", "any", "llm", "prefer=human", "prefer=rater_2"]


def test_choosing_from_judgments_that_name_no_source_is_refused_in_these_words(tmp_path: Path) -> None:
    plain = _file(tmp_path, "q1 0 d1 2\n", "plain.txt")
    for choice, rule in (("human", "human"), (" prefer = llm ", "prefer=llm")):
        with pytest.raises(UsageError) as err:
            rf.evaluate(str(plain), RUN, "ndcg@3", labels=choice)
        assert str(err.value) == (f"--labels {rule}: the judgments {plain} name no label source; give a source column, "
                                  "a fifth SOURCE field, or a rule for the file (--label-source human:NAME)")


def test_any_is_recorded_as_the_rule_and_drops_nothing(tmp_path: Path) -> None:
    path = _file(tmp_path, MIXED)
    q = read_qrels(path, labels="any")
    assert (q.label_rule, q.labels_dropped, len(q)) == ("any", (), 4)
    r = rf.evaluate(str(path), RUN, "ndcg@3[duplicates=first]", labels=" any ")
    assert r.provenance["qrels"]["labels"] == {"choice": "any", "dropped": {}}


def test_a_choice_that_keeps_every_judgment_is_still_recorded(tmp_path: Path) -> None:
    path = _file(tmp_path, "q1 0 d1 2 human:nist\nq1 0 d3 0 human:nist\n")
    for choice in ("human", "prefer=human"):
        q = read_qrels(path, labels=choice)
        assert (q.label_rule, q.labels_dropped, len(q)) == (choice, (), 2)
        r = rf.evaluate(str(path), RUN, "ndcg@3", labels=choice)
        assert r.provenance["qrels"]["labels"] == {"choice": choice, "dropped": {}}
        assert f"--labels {choice}: left out no label" in render_table(r, per_query=False, width=200)


def test_the_judgments_kept_keep_saying_where_they_were_read(tmp_path: Path) -> None:
    # from a file: still from it, each kept judgment at its own line (the person's labels of
    # MIXED are its lines 1 and 4)
    q = read_qrels(_file(tmp_path, MIXED), labels="human")
    assert q.from_file is True and q.lines_of(np.arange(len(q))).tolist() == [1, 4]
    # in memory: no line to name, before or after the choice (a duplicate among the person's labels)
    mem = Qrels(pa.array(["q1", "q1", "q1"]), pa.array(["d1", "d1", "d1"]), np.array([2.0, 1.0, 0.0]),
                label_source=pa.array(["human:a", "llm:b", "human:a"]))
    kept = select_labels(mem, "human")
    assert kept.from_file is False and kept.line_of(0) is None and kept.lines_of(np.arange(2)) is None
    with pytest.raises(InputError) as err:
        rf.evaluate(mem, RUN, "ndcg@3", labels="human")
    assert err.value.line is None and not re.search(r":\d+:|line \d", str(err.value)), str(err.value)


#: (first choice, the next, what the second records, what both left out, labels evaluated) on
#: MIXED (human d1 2, llm d1 0, llm d2 1, human d3 0), by hand:
RECHOSEN = [
    # human keeps d1 (2), d3 (0), leaving both llm labels out; choosing it again leaves out nothing more
    ("human", "human", "human", {"llm": 2}, (("human", 2),)),
    # any chooses nothing: the first choice stands
    ("human", "any", "human", {"llm": 2}, (("human", 2),)),
    ("any", "human", "human", {"llm": 2}, (("human", 2),)),
    # prefer=human leaves out the llm d1 (the person judged d1); human then the llm d2
    ("prefer=human", "human", "prefer=human, then human", {"llm": 2}, (("human", 2),)),
    # prefer=llm of what prefer=human kept: the llm judged d2 alone, nothing more left out
    ("prefer=human", "prefer=llm", "prefer=human, then prefer=llm", {"llm": 1}, (("human", 2), ("llm", 1))),
    ("llm", "prefer=llm", "llm, then prefer=llm", {"human": 2}, (("llm", 2),)),
]


@pytest.mark.parametrize(("first", "again", "rule", "dropped", "labels"), RECHOSEN)
def test_judgments_chosen_again_count_what_either_choice_left_out(tmp_path: Path, first: str, again: str, rule: str,
                                                                   dropped: dict[str, int], labels: tuple) -> None:  # type: ignore[type-arg]
    # (a second choice once recorded only what it left out itself, and any once replaced the first)
    q = read_qrels(_file(tmp_path, MIXED), labels=first)
    r = rf.evaluate(q, RUN, "ndcg@3", labels=again)
    assert r.provenance["qrels"]["labels"] == {"choice": rule, "dropped": dropped} and r[0].labels == labels
    left = ", ".join(f"{n} {k} label{'s' if n > 1 else ''}" for k, n in dropped.items())
    assert f"--labels {rule}: left out {left}" in render_table(r, per_query=False, width=200)


_ROW = st.tuples(st.sampled_from("abcd"), st.sampled_from("uvwxyz"), st.integers(0, 3),
                 st.sampled_from(["human:a", "human:b", "llm:m", "clicks:coec", "rater_2:x"]))


@settings(max_examples=examples(80), deadline=None)
@given(rows=st.lists(_ROW, min_size=1, max_size=14), pick=st.integers(0, 13), prefer=st.booleans())
# two pairs a loose key would take for one: (a, w) and (b, v) are (0, 2) and (1, 1) in codes by first
# appearance, both 2 under q * 1 + d (a doc span of 1 where the docs u, v, w span 3)
@example(rows=[("a", "u", 0, "llm:m"), ("b", "v", 1, "human:a"), ("a", "w", 2, "llm:m")], pick=1, prefer=True)
# and (a, w), (b, u): (0, 2) and (1, 0), both 2 under q * 2 + d
@example(rows=[("a", "u", 0, "llm:m"), ("b", "v", 0, "llm:m"), ("a", "w", 1, "llm:m"), ("b", "u", 1, "human:a")],
         pick=3, prefer=True)
def test_a_choice_keeps_what_its_definition_keeps(rows: list[tuple[str, str, int, str]], pick: int,
                                                  prefer: bool) -> None:
    # Brute force, from the module's definition: KIND keeps the rows of that kind; prefer=KIND keeps
    # them and every row of a (query, doc) pair no row of KIND judges. Left out: the rest, per kind.
    kind = rows[pick % len(rows)][3].split(":")[0]
    judged_by_kind = {(q, d) for q, d, _, s in rows if s.split(":")[0] == kind}
    keep = [r for r in rows if r[3].split(":")[0] == kind or (prefer and (r[0], r[1]) not in judged_by_kind)]
    left: dict[str, int] = {}
    for r in set(rows):
        n = rows.count(r) - keep.count(r)
        if n:
            left[r[3].split(":")[0]] = left.get(r[3].split(":")[0], 0) + n
    q = Qrels(pa.array([r[0] for r in rows]), pa.array([r[1] for r in rows]), np.array([float(r[2]) for r in rows]),
              label_source=pa.array([r[3] for r in rows]))
    kept = select_labels(q, f"prefer={kind}" if prefer else kind)
    assert kept.label_source is not None
    got = list(zip(to_strings(kept.query), to_strings(kept.doc), [int(g) for g in kept.grade],
                   to_strings(kept.label_source), strict=True))
    assert got == keep  # (in the order read)
    assert dict(kept.labels_dropped) == left
    assert [k for k, _ in kept.labels_dropped] == [k for k in ("human", "llm", "clicks", "rater_2") if k in left]
