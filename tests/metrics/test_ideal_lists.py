"""NDCG's ideals (``ideal``, ``ideal_cut``) against values computed by hand from their definitions.

Oracles: the flavor-axis example of /work/shared/flavor-facts.md section 4.3, whose table was
computed by hand from the definitions (not by rankflavor); and sums written out here from the
definition of section 1.3 (``max``: the top grade's gain in every slot of the cut, one per
retrieved document when uncut). flavor-facts' "local" ideal is the returned top k, which is
rankflavor's ``recall@10`` here; rankflavor's ``local`` re-sorts every retrieved document, which
on this 20-document run is flavor-facts' ``recall@20``.
"""

from __future__ import annotations

import math

import pytest

import rankflavor

QRELS = {"q": {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 3, "d6": 0, "d7": 2, "d8": 0, "d9": 1,
               "d11": 3, "d13": 2, "d14": 0, "d21": 3, "d22": 2, "d23": 1}}
RANKED = "d2 d3 d1 d4 d6 dU d7 d8 d5 d9 d10 d11 d12 d13 d14 d15 d16 d17 d18 d19".split()
RUN = {"q": {d: 20.0 - i for i, d in enumerate(RANKED)}}
GRADES = [QRELS["q"].get(d, 0) for d in RANKED]  # in rank order, dU unjudged

#: flavor-facts 4.3 (hand): DCG@10 and NDCG@10 under each ideal, per gain / discount.
TABLE = {
    ("linear", "jk(2)"): (6.3526, 0.6997, 0.5663, 0.4878, 0.4030),
    ("exp2", "log2"): (10.3270, 0.6907, 0.5411, 0.4550, 0.3247),
    ("linear", "log2"): (5.7895, 0.7722, 0.6166, 0.5235, 0.4247),
}


@pytest.mark.parametrize(("gain", "discount"), list(TABLE))
def test_flavor_facts_4_3(gain: str, discount: str) -> None:
    dcg, top_k, recall, glob, top = TABLE[gain, discount]
    knobs = f"gain={gain},discount={discount}"
    got = [r.mean for r in rankflavor.evaluate(QRELS, RUN, [
        f"dcg@10[{knobs}]", f"ndcg@10[{knobs},ideal=recall@10]", f"ndcg@10[{knobs},ideal=local]",
        f"ndcg@10[{knobs},ideal=recall@20]", f"ndcg@10[{knobs},ideal=global]", f"ndcg@10[{knobs},ideal=max,max_grade=3]",
    ])]
    assert got == pytest.approx([dcg, top_k, recall, recall, glob, top], abs=5e-5)


def _log2_dcg(gains: list[float], k: int | None = None) -> float:
    """DCG by its definition: gain at rank i divided by log2(i + 1)."""
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k] if k else gains))


@pytest.mark.parametrize("k", [1, 3, 10])
def test_ideal_max_is_the_top_grade_in_every_slot_of_the_cut(k: int) -> None:
    # ndcg@3[ideal=max,max_grade=3] = (2 + 0 + 3/2) / (3 + 3/log2(3) + 3/2) = 0.5475
    want = _log2_dcg(GRADES, k) / _log2_dcg([3] * k)
    got = rankflavor.evaluate(QRELS, RUN, f"ndcg@{k}[ideal=max,max_grade=3]")[0].mean
    assert got == pytest.approx(want, abs=1e-12)
    exp2 = rankflavor.evaluate(QRELS, RUN, f"ndcg@{k}[ideal=max,max_grade=4,gain=exp2]")[0].mean
    assert exp2 == pytest.approx(_log2_dcg([2.0**g - 1 for g in GRADES], k) / _log2_dcg([15.0] * k), abs=1e-12)


def test_ideal_max_uncut_and_cut_at_the_hits() -> None:
    # uncut: one slot per retrieved document (20); cut at k = 30 keeps 30 slots, at the hits 20
    uncut = rankflavor.evaluate(QRELS, RUN, "ndcg[ideal=max,max_grade=3]")[0].mean
    assert uncut == pytest.approx(_log2_dcg(GRADES) / _log2_dcg([3] * 20), abs=1e-12)
    at_k = rankflavor.evaluate(QRELS, RUN, "ndcg@30[ideal=max,max_grade=3]")[0].mean
    assert at_k == pytest.approx(_log2_dcg(GRADES) / _log2_dcg([3] * 30), abs=1e-12)
    hits = rankflavor.evaluate(QRELS, RUN, "ndcg@30[ideal=max,max_grade=3,ideal_cut=hits]")[0].mean
    assert hits == pytest.approx(uncut, abs=1e-12)
    depth = rankflavor.evaluate(QRELS, RUN, "ndcg@5[ideal=max,max_grade=3,ideal_cut=hits,depth=4]")[0].mean
    assert depth == pytest.approx(_log2_dcg(GRADES, 4) / _log2_dcg([3] * 4), abs=1e-12)


def test_global_ideal_cuts() -> None:
    every = sorted((g for g in QRELS["q"].values() if g > 0), reverse=True)  # 3 3 3 3 2 2 2 2 1 1 1
    cases = {"ndcg@10": _log2_dcg(every, 10), "ndcg@10[ideal_cut=none]": _log2_dcg(every),
             "ndcg@10[ideal_cut=hits,depth=4]": _log2_dcg(every, 4), "ndcg@10[ideal_cut=hits]": _log2_dcg(every, 10),
             "ndcg@10[depth=4]": _log2_dcg(every, 10)}
    for measure, idcg in cases.items():
        depth = 4 if "depth" in measure else None
        got = rankflavor.evaluate(QRELS, RUN, measure)[0].mean
        assert got == pytest.approx(_log2_dcg(GRADES[:depth], 10) / idcg, abs=1e-12), measure


def test_explained_ideal_lists_are_the_hand_lists() -> None:
    lists = {
        "ndcg@10[ideal=recall@10]": [3, 3, 2, 2, 1, 1],
        "ndcg@10[ideal=local]": [3, 3, 3, 2, 2, 2, 1, 1],
        "ndcg@10[ideal=global]": [3, 3, 3, 3, 2, 2, 2, 2, 1, 1],
        "ndcg@10[ideal=global,ideal_cut=none]": [3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1],
        "ndcg@10[ideal=max,max_grade=3]": [3] * 10,
    }
    for measure, grades in lists.items():
        e = rankflavor.explain(QRELS, RUN, "q", measure)
        assert [s.grade for s in e.ideal] == grades, measure
        assert [s.rank for s in e.ideal] == list(range(1, len(grades) + 1))
        assert e.idcg == pytest.approx(_log2_dcg(grades), abs=1e-12)
    e = rankflavor.explain(QRELS, RUN, "q", "ndcg@10")
    assert {s.doc for s in e.ideal if s.grade == 3} == {"d1", "d5", "d11", "d21"}
    assert {s.doc: s.retrieved_rank for s in e.ideal if s.grade == 3} == {"d1": 3, "d5": 9, "d11": 12, "d21": None}
    assert any("1 more candidate(s) left out" in n for n in e.notes)
    local = rankflavor.explain(QRELS, RUN, "q", "ndcg@10[ideal=local]")
    assert [s.doc for s in local.ideal if s.grade == 3] == ["d1", "d5", "d11"]  # ranked rows, in rank order


def test_a_grade_above_max_grade_is_refused_naming_it() -> None:
    from rankflavor.errors import InputError

    with pytest.raises(InputError) as err:
        rankflavor.evaluate(QRELS, RUN, "ndcg@10[ideal=max,max_grade=2]")
    text = str(err.value)
    assert "4 judgment(s) have a grade above max_grade=2 (largest 3)" in text  # d1, d5, d11, d21
    assert "ndcg@10 rejects them" in text and "Raise max_grade or remap the grades" in text
    assert rankflavor.evaluate(QRELS, RUN, "ndcg@10[ideal=max,max_grade=3]")[0].mean > 0  # 3 is not above 3
