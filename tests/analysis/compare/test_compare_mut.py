"""Mutation-found gaps in compare's flavor list (``flavor_variants``) and its robustness check
(``robustness``, ``count_holding``): expected values come from hand-built inputs, the measure
parser and ``rankflavor.evaluate``, not from the functions under test."""

from __future__ import annotations

import numpy as np
import pytest

import rankflavor
from rankflavor.analysis.compare.flavors import Variant, flavor_variants
from rankflavor.analysis.compare.robust import count_holding, robustness
from rankflavor.analysis.compare.scores import RunScores
from rankflavor.analysis.spread.api import one_measure
from rankflavor.base.progress import Recorder
from rankflavor.errors import RankflavorError, UsageError
from rankflavor.presets import PRESETS
from rankflavor.presets.scales import Scale

BASE = one_measure("ndcg@10")


def test_a_full_measure_of_the_same_metric_at_k_is_a_variant_labelled_by_its_knobs() -> None:
    want = one_measure("ndcg@10[gain=exp2]")
    variants, notes = flavor_variants(BASE, ["ndcg@10[gain=exp2]"])
    assert notes == []
    assert len(variants) == 1
    v = variants[0]
    # only the gain differs from ndcg@10's defaults; no preset made it, so no "[...]" suffix
    assert v.measure == want and v.label == "gain=exp2" and v.presets == () and v.defect is None


def test_the_base_flavor_itself_is_never_a_variant() -> None:
    # gain=linear is ndcg@10's default: the knob assignment names the base itself
    assert flavor_variants(BASE, ["gain=linear"]) == ([], [])
    base = one_measure("ndcg@10[gain=exp2]")
    variants, _ = flavor_variants(base, ["gain=exp2", "gain=linear"])
    assert [v.measure for v in variants] == [one_measure("ndcg@10[gain=linear]")]
    assert [v.label for v in variants] == ["gain=linear"]


def test_two_presets_sharing_a_flavor_are_joined_with_a_slash() -> None:
    alone = [flavor_variants(BASE, [p])[0] for p in ("elasticsearch", "opensearch")]
    assert len(alone[0]) == len(alone[1]) == 1 and alone[0][0].measure == alone[1][0].measure
    variants, _ = flavor_variants(BASE, ["elasticsearch", "opensearch"])
    assert len(variants) == 1
    assert variants[0].presets == ("elasticsearch", "opensearch")
    assert variants[0].label.endswith(" [elasticsearch/opensearch]")
    assert variants[0].label[: -len(" [elasticsearch/opensearch]")] == alone[0][0].label.split(" [")[0]


def test_a_preset_name_may_be_written_with_dashes() -> None:
    variants, _ = flavor_variants(BASE, ["spark-triples"])
    assert [v.presets for v in variants] == [("spark_triples",)]
    # only a defect preset produced it: it carries that preset's defect text
    assert variants[0].defect is not None and PRESETS["spark_triples"].defect in variants[0].defect


def test_notes_of_earlier_items_are_kept() -> None:
    note = "flavor P@5 not applied to ndcg@10: another metric@k"
    for later in ("grid", "sklearn"):
        _, notes = flavor_variants(BASE, ["P@5", later])
        assert notes[0] == note


def test_a_measure_without_cutoff_is_another_metric_at_k_not_a_knob_assignment() -> None:
    for text in ("ndcg[gain=exp2]", "ndcg"):
        assert flavor_variants(BASE, [text]) == ([], [f"flavor {text} not applied to ndcg@10: another metric@k"])


def test_text_with_an_at_sign_is_parsed_as_a_measure() -> None:
    with pytest.raises(RankflavorError, match=r"cutoff in 'ndcg@10=x'"):
        flavor_variants(BASE, ["ndcg@10=x"])


def test_usage_errors_name_the_flavors_option() -> None:
    with pytest.raises(UsageError, match=r"^flavors: expected exactly one measure, received 'trec_eval:ndcg_cut'"):
        flavor_variants(BASE, ["trec_eval:ndcg_cut"])
    with pytest.raises(UsageError, match=r"^flavors: give 'grid', preset names, knob assignments or measures$"):
        flavor_variants(BASE, [])


def test_a_declared_scale_adds_its_note() -> None:
    scale = Scale("g2", (0, 1, 2), rel=1, top=2)
    variants, notes = flavor_variants(BASE, ["trec_eval", "gain=exp2"], scale)
    assert len(variants) == 2
    assert len(notes) == 1 and notes[0].startswith(f"scale {scale.describe()}: the base and grid flavors take its knobs")


def _two_systems():  # type: ignore[no-untyped-def]
    qrels = {f"q{i}": {"a": 1, "b": 0, "c": 2} for i in range(6)}
    a = {f"q{i}": {"a": 0.5 + 0.01 * i, "b": 0.9, "c": 0.1 * i} for i in range(6)}
    b = {f"q{i}": {"a": 0.8, "b": 0.1, "c": 0.9 - 0.1 * i} for i in range(6)}
    return qrels, {"A": a, "B": b}


def _scores(values: dict[str, float]) -> RunScores:
    qs = sorted(values)
    return RunScores(np.array(qs), np.array([values[q] for q in qs], dtype=np.float64))


def test_robustness_records_refusals_goes_on_and_keeps_the_baseline_order() -> None:
    qrels, runs = _two_systems()
    c = rankflavor.compare(qrels, runs, "ndcg@3", n_resamples=100, baseline="B", tests=("t",))
    variants = [Variant(one_measure("ndcg@3[gain=exp2]"), "v-refused", (), None),
                Variant(one_measure("ndcg@3[ideal=local]"), "v-gap", (), None),
                Variant(one_measure("ndcg@3[ties=averaged]"), "v-ok", (), None),
                Variant(one_measure("ndcg@3[ties=input_order]"), "v-defect", ("x",), "x: a defect")]
    qs = [f"q{i}" for i in range(6)]
    a_vals = {q: 0.5 for q in qs}
    b_vals = {q: 0.5 + 0.1 * (i + 1) for i, q in enumerate(qs)}  # B - A: 0.1 .. 0.6, mean 0.35
    gap = {q: v for q, v in b_vals.items() if q != "q5"}
    scores = [[None, None], [_scores(a_vals), _scores(gap)], [_scores(a_vals), _scores(b_vals)],
              [_scores(a_vals), _scores(b_vals)]]
    rec = Recorder()
    r = robustness(list(c[0].pairs), ["A", "B"], variants, scores, {0: "refused by its policy"}, c.settings,
                   progress=rec)
    assert r.errors["v-refused"] == "refused by its policy"
    assert "6 in all, 5 in every system; B lacks 1 (q5)" in r.errors["v-gap"]
    assert [f.label for f in r.flavors] == ["v-ok", "v-defect"]
    ok = r.flavors[0]
    assert ok.flavor == str(one_measure("ndcg@3[ties=averaged]")) and ok.n == 6
    # baseline B: the pair is A - B = -(0.1 + ... + 0.6) / 6
    assert ok.deltas[0] == pytest.approx(-2.1 / 6)
    # the defect flavor is listed but, by default, not counted
    assert r.include_defects is False and [f.label for f in r.counted] == ["v-ok"]
    assert rec.events[0] == ("start", "re-testing under 4 flavors", 4)
    assert [e for e in rec.events if e[0] == "advance"] == [("advance", "re-testing under 4 flavors", 1)] * 4


def test_count_holding_counts_flavors_where_sign_and_verdict_agree() -> None:
    # B wins under the global ideal (A misses r2 on half the queries); under a local ideal both
    # rank what they retrieve of the relevant first, so both score 1.0 everywhere
    qrels = {f"q{i}": {"r1": 1, "r2": 1} for i in range(8)}
    b = {f"q{i}": {"r1": 2.0, "r2": 1.5, "x": 1.0} for i in range(8)}
    a = {q: ({"r1": 2.0, "x": 1.0, "y": 0.5} if i < 4 else dict(v)) for i, (q, v) in enumerate(b.items())}
    for run in (a, b):
        assert np.allclose(rankflavor.evaluate(qrels, run, "ndcg@3[ideal=local]")[0].values, 1.0)
    c = rankflavor.compare(qrels, {"A": a, "B": b}, "ndcg@3", n_resamples=200, baseline="A",
                           flavors=["ideal=local"], tests=("t",))
    r = c[0].robustness
    assert c[0].pairs[0].significant and c[0].pairs[0].delta > 0
    # the one flavor: delta 0 (a change of sign) and not significant (a change of verdict)
    assert count_holding(r, 0) == (0, 0)
