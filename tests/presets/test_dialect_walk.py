"""No name falls through a preset: each reads as the tool's own measure, or is refused.

Under ``--preset NAME`` (or ``NAME:metric``) a metric name means what that tool computes under it.
Three walks check it:

* every registered metric (so any metric added later), with and without a cutoff, under every
  preset: it is read by the preset's dialect (a tool name), translated by the preset's canonical map
  to the tool's own name for it, or refused with a reason. Only the ``rankflavor`` preset, and the
  few ``SELF`` entries listed here with the test that checks each against the tool's output, read
  rankflavor's own computation;
* every entry of every canonical map names a tool name the dialect reads, as the same metric;
* the names each tool's users type (its output names, classes, functions, JSON bodies) are all
  claimed by the dialect: read or refused, never handed to rankflavor's parser.

Each dialect name is checked against its tool in the preset's own tests (``test_presets_*.py``,
``test_dialect_*.py``).
"""

from __future__ import annotations

import importlib

import pytest

from rankflavor.errors import FlavorError
from rankflavor.metrics import registry
from rankflavor.metrics.registry import MetricSpec
from rankflavor.presets import PRESETS, canonical_name, resolve_measures
from rankflavor.presets.base import SELF

#: Canonical names a preset reads as rankflavor computes them, each with the test that checks
#: the preset's tool gives the same numbers.
SELF_CHECKED = {
    ("trec_dl", "RR"): "tests.presets.test_presets_ir:test_trec_dl_preset_matches_nist_conventions",
}


def _texts(name: str) -> list[str]:
    spec = registry.REGISTRY[name]
    return ([name] if spec.cutoff != "required" else []) + ([f"{name}@5"] if spec.cutoff != "none" else [])


def _how(preset: str, text: str) -> str:
    """How ``text`` reads under ``preset``: dialect, translated, self (rankflavor's own) or refused."""
    p = PRESETS[preset]
    try:
        if p.dialect is not None and p.dialect(text) is not None:
            return "dialect"
        if canonical_name(p, text) is not None:
            return "translated"
    except FlavorError:
        return "refused"
    return "self"


CASES = [(p, name) for p in PRESETS if p != "rankflavor" for name in registry.REGISTRY]


@pytest.mark.parametrize(("preset", "metric"), CASES)
def test_every_metric_under_every_preset_is_the_tools_or_refused(preset: str, metric: str) -> None:
    for text in _texts(metric):
        how = _how(preset, text)
        try:
            measures, _ = resolve_measures([f"{preset}:{text}"], None, {})
        except FlavorError as exc:
            assert how in ("dialect", "refused", "translated"), (preset, text, how)
            assert str(exc), (preset, text)
            continue
        assert measures, (preset, text)
        assert how != "refused", (preset, text)
        if how == "self":  # rankflavor's own computation: only where a test checks it is the tool's
            assert (preset, metric) in SELF_CHECKED, f"{preset}:{text} falls through to rankflavor's {metric}"
        assert all(m.preset == preset for m in measures), (preset, text)


def test_self_entries_are_listed_and_their_tests_exist() -> None:
    found = {(name, metric) for name, p in PRESETS.items() if p.canonical
             for metric, forms in p.canonical.items() if SELF in forms}
    assert found == set(SELF_CHECKED)
    for target in SELF_CHECKED.values():
        module, function = target.split(":")
        assert callable(getattr(importlib.import_module(module), function)), target


@pytest.mark.parametrize("preset", [p for p in PRESETS if p != "rankflavor"])
def test_canonical_maps_name_tool_names_of_the_same_metric(preset: str) -> None:
    p = PRESETS[preset]
    assert p.canonical is not None
    for metric, forms in p.canonical.items():
        assert metric in registry.REGISTRY, (preset, metric)
        for form, k in zip(forms, (5, None), strict=True):
            if form is None or form == SELF:
                continue
            text = form.format(k=k)
            assert p.dialect is not None and p.dialect(text) is not None, (preset, metric, text)
            # With a knob in brackets no dialect claims the canonical text: the map translates it.
            canonical = metric + (f"@{k}" if k is not None else "") + "[duplicates=error]"
            ours = resolve_measures([canonical], preset, {})[0]
            tools = [m.with_knobs(duplicates="error") for m in resolve_measures([text], preset, {})[0]]
            assert [(m.metric, m.k, m.flavor) for m in ours] == [(m.metric, m.k, m.flavor) for m in tools], text
            assert all(m.metric == metric for m in ours), (preset, canonical, [m.metric for m in ours])
            assert all(m.display == canonical for m in ours), (preset, canonical)  # the name the user typed
    for metric in p.refusals:
        assert metric in registry.REGISTRY, (preset, metric)


def test_a_metric_added_later_is_refused_under_every_preset(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new canonical metric is no preset's until a preset maps it: the walk refuses it everywhere."""
    spec = MetricSpec("zz_added_later", registry.REGISTRY["P"].knobs, registry.REGISTRY["P"].kernel)
    monkeypatch.setitem(registry.REGISTRY, spec.name, spec)
    monkeypatch.setitem(registry._LOOKUP, spec.name.lower(), spec.name)
    for preset in PRESETS:
        if preset == "rankflavor":
            assert resolve_measures([f"{preset}:zz_added_later@5"], None, {})[0][0].metric == "zz_added_later"
            continue
        with pytest.raises(FlavorError, match=f"{preset}:zz_added_later@5 is not reproduced"):
            resolve_measures([f"{preset}:zz_added_later@5"], None, {})


def test_a_refusal_says_what_differs_and_what_to_write() -> None:
    with pytest.raises(FlavorError, match=r"ntcireval:err is not reproduced: NTCIREVAL's ERR takes R = gain / "
                                          r"\(max gain \+ 1\).*rankflavor:err"):
        resolve_measures(["ntcireval:err"], None, {})
    with pytest.raises(FlavorError, match=r"trec_eval:RBP is not reproduced: trec_eval 9.0.8 has no rbp"):
        resolve_measures(["trec_eval:RBP"], None, {})
    with pytest.raises(FlavorError, match=r"sklearn:AP@10 is not reproduced: sklearn has no AP computed as "
                                          r"rankflavor's AP.*e\.g\. ndcg@10, ndcg.*rankflavor:AP@10"):
        resolve_measures(["sklearn:AP@10"], None, {})
    with pytest.raises(FlavorError, match="gdeval always takes a cutoff"):
        resolve_measures(["gdeval:ndcg"], None, {})


def test_a_canonical_name_keeps_its_bracket_knobs_under_the_tools_name() -> None:
    (m,), _ = resolve_measures(["trec_eval:ndcg@10[gain=exp2]"], None, {})
    assert (m.metric, m.k, m.flavor.gain, m.flavor.ideal_cut, m.flavor.precision) == ("ndcg", 10, "exp2", "k", "float32")
    assert m.display == "ndcg@10[gain=exp2]"
    with pytest.raises(FlavorError, match="does not change"):
        resolve_measures(["spark:ndcg@10[p_divisor=hits]"], None, {})


#: What each tool's users type: its output names, functions, classes, request bodies, with the
#: tool's own spellings; every one must be claimed by the dialect (read or refused).
VOCABULARY: dict[str, tuple[str, ...]] = {
    "trec_eval": ("map", "P.10", "ndcg_cut.10", "recip_rank", "bpref", "all_trec", "set_F", "iprec_at_recall"),
    "ir_measures": ("nDCG@10", "AP", "RR@10", "R@100", "P@10", "Judged@10", "ERR@10", "RBP(rel=1)", "SetP", "Bpref",
                    "NERR10(max_rel=3)", "Compat", "MAP", "MRR", "NumQ"),
    "gdeval": ("ndcg@20", "err@20", "ndcg", "err"),
    "ranx": ("ndcg@10", "ndcg_burges@10", "map@100", "mrr", "recall@10", "precision@10", "hit_rate@5", "hits@5",
             "f1@5", "bpref", "r-precision", "rbp.95", "dcg@3", "dcg_burges@3"),
    "trectools": ("NDCG@10", "P@10", "R@100", "MAP@1000", "recip_rank@1000", "get_ndcg(depth=10)",
                  "get_map(depth=100)"),
    "ntcireval": ("nDCG@10", "MSnDCG@10", "AP", "AP@10", "Q-measure", "Q@1000", "RR", "O-measure", "P-measure",
                  "P-plus", "NCUgu,P", "NCUgu,BR", "NCUrb,P", "NCUrb,BR", "RBP", "ERR", "nERR@10", "P@10", "Hit@10",
                  "nDCG@0010 -g 1:2:3"),
    "msmarco": ("MRR@10",),
    "beir": ("NDCG@10", "MAP@100", "Recall@100", "P@10", "MRR@10"),
    "sklearn": ("ndcg_score(k=10)", "dcg_score(k=5)", "ndcg@10", "dcg@10"),
    "torchmetrics": ("RetrievalNormalizedDCG", "RetrievalPrecision", "RetrievalRecall", "RetrievalMAP", "RetrievalMRR",
                     "RetrievalHitRate", "RetrievalFallOut", "RetrievalRPrecision", "RetrievalAUROC",
                     "RetrievalPrecisionRecallCurve", "RetrievalRecallAtFixedPrecision", "retrieval_normalized_dcg",
                     "retrieval_precision", "retrieval_recall", "retrieval_average_precision",
                     "retrieval_reciprocal_rank", "retrieval_hit_rate", "retrieval_fall_out", "retrieval_r_precision",
                     "retrieval_auroc", "retrieval_precision_recall_curve"),
    "lightgbm": ("ndcg", "ndcg@10", "map", "lambdarank"),
    "xgboost": ("ndcg", "ndcg@10", "ndcg@10-", "map@10", "pre@10", "auc"),
    "catboost": ("NDCG", "NDCG:top=10", "DCG", "MAP:top=10", "PrecisionAt:top=10", "RecallAt:top=10", "MRR", "ERR",
                 "PFound"),
    "ranklib": ("NDCG@10", "DCG@10", "P@10", "MAP", "ERR@10", "RR@10", "BEST@10"),
    "elasticsearch": ("dcg", "precision", "recall", "mean_reciprocal_rank", "expected_reciprocal_rank(maximum_relevance=3)",
                      '{"precision": {"k": 10}}', '{"expected_reciprocal_rank": {"maximum_relevance": 3}}'),
    "quepid": ("nDCG@10", "NDCG_CUT@10", "P@10", "AP@10", "RR@10", "ERR@10", "DCG@10", "CG@10"),
    "spark": ("ndcgAt(10)", "precisionAt(10)", "recallAt(10)", "meanAveragePrecision", "meanAveragePrecisionAt(10)"),
}
VOCABULARY["pytrec_eval"] = VOCABULARY["trec_eval"]
VOCABULARY["trec_dl"] = VOCABULARY["trec_eval"]
VOCABULARY["ranklib_qrel"] = VOCABULARY["ranklib"]
VOCABULARY["opensearch"] = VOCABULARY["elasticsearch"]
VOCABULARY["spark_triples"] = VOCABULARY["spark"]


def test_every_preset_has_a_vocabulary() -> None:
    assert set(VOCABULARY) == set(PRESETS) - {"rankflavor"}


@pytest.mark.parametrize(("preset", "name"), [(p, n) for p, names in VOCABULARY.items() for n in names])
def test_the_tools_own_names_never_fall_through(preset: str, name: str) -> None:
    assert _how(preset, name) in ("dialect", "refused"), (preset, name)
