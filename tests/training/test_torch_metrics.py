"""rankflavor.torch against the NumPy engine: every knob value it accepts, on random padded batches.

The reference is :func:`rankflavor.evaluate` on the same candidates as dicts (padding left out,
every candidate judged with its label, documents named by zero-padded column, so docno order is
column order): the engine's own NDCG, computed on another path. The outcome compared is the
per-query values (float64 to 1e-9, float32 to 1e-6) or, where the engine refuses, the error's
type. The knob values come from the knob table (``Knob.values``), so a value added there is
swept here; the values rankflavor.torch refuses must be exactly those a padded batch cannot
hold, each refused with a FlavorError naming its knob.

Batches hold what makes the knobs matter: scores rounded to one decimal (heavy ties), pairs that
tie in float32 only, zeros, queries with nothing relevant, one-document lists, padding, and (the
"messy" batches) fractional and negative labels.
"""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import rankflavor
from rankflavor.errors import EvaluationError, FlavorError, InputError, RankflavorError, UsageError
from rankflavor.flavor.flavor import KNOBS, Flavor
from rankflavor.metrics import REGISTRY
from rankflavor.metrics.measure import Measure
from rankflavor.presets import PRESETS, resolve_measures

torch = pytest.importorskip("torch")
import rankflavor.torch as rt  # noqa: E402

Batch = tuple[Any, Any, Any, np.ndarray, np.ndarray, np.ndarray]


def batch(seed: int, n_q: int = 24, n_d: int = 9, top: int = 4, dtype: Any = None, messy: bool = False) -> Batch:
    """(scores, labels, mask) tensors and the same as NumPy arrays (scores at the tensor's precision)."""
    dtype = dtype or torch.float64
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, top + 1, (n_q, n_d)).astype(np.float64)
    labels[rng.random((n_q, n_d)) < 0.4] = 0
    labels[:3] = 0  # queries with nothing relevant
    if messy:
        labels[rng.random((n_q, n_d)) < 0.15] -= 0.5  # fractional (and -0.5)
        labels[rng.random((n_q, n_d)) < 0.1] = -1.0  # negative
    scores = np.round(rng.normal(size=(n_q, n_d)), 1)
    near = rng.random((n_q, n_d)) < 0.15  # equal in float32, not in float64
    scores[:, 1:][near[:, 1:]] = scores[:, :-1][near[:, 1:]] + 1e-12
    lengths = rng.integers(1, n_d + 1, n_q)
    lengths[3] = 1  # a one-document list
    mask = np.arange(n_d)[None, :] < lengths[:, None]
    s = torch.tensor(scores, dtype=dtype)
    return (s, torch.tensor(labels, dtype=dtype), torch.tensor(mask), s.to(torch.float64).numpy(), labels, mask)


def reference(scores: np.ndarray, labels: np.ndarray, mask: np.ndarray, measure: str | Measure) -> np.ndarray:
    """Per-query values of rankflavor.evaluate (NaN where a query gets none)."""
    qrels = {f"q{i:03d}": {f"{j:03d}": float(labels[i, j]) for j in range(labels.shape[1]) if mask[i, j]}
             for i in range(len(labels))}
    run = {f"q{i:03d}": {f"{j:03d}": float(scores[i, j]) for j in range(labels.shape[1]) if mask[i, j]}
           for i in range(len(labels))}
    result = rankflavor.evaluate(qrels, run, [measure])[0]
    values = np.full(len(labels), np.nan)
    values[[int(q[1:]) for q in result.queries]] = np.asarray(result.values, dtype=np.float64)
    return values


def outcome(call: Any, *args: Any, **kwargs: Any) -> np.ndarray | type[BaseException]:
    """``call(*args, **kwargs)`` as float64 values, or the type of the error it raised."""
    try:
        out = call(*args, **kwargs)
    except RankflavorError as exc:
        return type(exc)
    return np.asarray(out.cpu().numpy() if hasattr(out, "cpu") else out, dtype=np.float64)


def same(got: Any, want: Any, atol: float) -> bool:
    if isinstance(got, type) or isinstance(want, type):
        return got is want
    return bool(np.allclose(got, want, atol=atol, rtol=0, equal_nan=True))


def compare(m: Measure, b: Batch, atol: float = 1e-9) -> Any:
    """Torch's outcome for ``m`` on batch ``b``, checked against the engine's; returned."""
    scores, labels, mask, s, y, msk = b
    fn = rt.ndcg if m.spec.uses_ideal else rt.dcg
    got = outcome(fn, scores, labels, mask=mask, measure=str(m))
    if got is FlavorError and refused(m):
        return got
    want = outcome(reference, s, y, msk, m)
    assert same(got, want, atol), (str(m), got, want)
    return got


# ---------------------------------------------------------------------------------------------
# The knob values, from the knob table


#: Values standing for the placeholders of ``Knob.values`` ("number", "N", "jk(b)", ...).
SAMPLES: dict[str, list[str]] = {
    "{grade:gain,...}": ["{1:1,2:5,3:6,4:20}", "{0:-1,2:3}"],
    "jk(b)": ["jk(3)"],
    "log(b)": ["log(10)"],
    "recall@K": ["recall@3", "recall@20"],
    "number": ["2", "4"],
    "N": ["3"],
    "KIND+KIND...": ["human+llm"],
}


def knob_values(name: str) -> list[str]:
    """Every value the knob table lists for ``name`` (placeholders by their samples)."""
    out = []
    for alternative in KNOBS[name].values.split("|"):
        alternative = alternative.strip()
        for text in SAMPLES.get(alternative, [alternative]):
            KNOBS[name].parse(text)  # a value, or SAMPLES needs the placeholder
            out.append(text)
    return out


#: The knobs NDCG and DCG read (and ``empty``).
SWEPT = sorted({*REGISTRY["ndcg"].knobs, *REGISTRY["dcg"].knobs, "empty"})


def refused(m: Measure) -> bool:
    """What a padded batch cannot hold: judgments in file order, ids, a run of ranks, ratings, label sources."""
    f = m.flavor
    return (("ideal" in m.spec.knobs and f.ideal == "as_supplied") or f.self_hits != "keep" or f.order != "score"
            or f.raters != "none" or f.sources != "one")


def measures(metric: str, k: int | None, base: dict[str, str], knob: str, value: str) -> Measure:
    knobs = {**base, knob: value}
    if knob == "ideal" and value == "max":
        knobs.setdefault("max_grade", "4")
    return Measure(metric, k, Flavor(**knobs))


#: Flavors each value is set on, and the measures of each: the default flavor; the others where
#: knobs meet (rel under binary gain, a cut below k where depth or condensing shorten the list).
BASES: list[tuple[dict[str, str], tuple[tuple[str, int | None], ...]]] = [
    ({}, (("ndcg", 3), ("ndcg", None), ("dcg", 3))),
    ({"gain": "binary", "rel": "2", "ties": "averaged", "ideal": "local", "depth": "6", "unjudged": "condensed",
      "empty": "one"}, (("ndcg", 3), ("ndcg", None))),
    ({"ideal": "max", "max_grade": "4", "depth": "2", "gain": "exp2", "ties": "optimistic"}, (("ndcg", 3),)),
    ({"depth": "2", "unjudged": "condensed", "discount": "jk(2)", "precision": "float32"}, (("ndcg", 3),)),
]


def test_the_sweep_covers_every_value_of_the_table() -> None:
    assert {"gain", "discount", "ideal", "ideal_cut", "ties", "precision", "depth", "unjudged", "negatives",
            "fractional", "empty", "singletons", "min_grade", "max_grade"} <= set(SWEPT)
    for name in SWEPT:
        values = knob_values(name)
        assert KNOBS[name].default in values or name in ("gain", "discount") or KNOBS[name].default.isdigit()


@pytest.mark.parametrize("knob", SWEPT)
def test_every_value_equals_the_engine_or_is_refused_naming_the_knob(knob: str) -> None:
    outcomes: list[Any] = []
    for i, value in enumerate(knob_values(knob)):
        b = batch(100 + i, messy=True)
        for base, metrics in BASES:
            for metric, k in metrics:
                m = measures(metric, k, base, knob, value)
                got = compare(m, b)
                if refused(m):
                    assert got is FlavorError, str(m)
                    with pytest.raises(FlavorError, match=f"{knob}="):
                        rt.ndcg(b[0], b[1], mask=b[2], measure=str(m))
                elif metric == "ndcg" and k == 3:
                    outcomes.append(got if isinstance(got, type) else got.round(12).tobytes())
    if knob in rt.BATCH_KNOBS and rt.BATCH_KNOBS[knob] == "mapped" and knob != "rel":
        assert len(set(outcomes)) > 1, f"no value of {knob} changed anything: the batches do not exercise it"


def test_exactly_what_a_batch_cannot_hold_is_refused() -> None:
    b = batch(7)
    refusals = set()
    for knob in SWEPT:
        for value in knob_values(knob):
            m = measures("ndcg", 3, {}, knob, value)
            if outcome(rt.ndcg, b[0], b[1], mask=b[2], measure=str(m)) is FlavorError and knob != "max_grade":
                refusals.add((knob, value))
    assert refusals == {("ideal", "as_supplied"), ("self_hits", "drop"), ("order", "rank")} | {
        ("raters", v) for v in knob_values("raters") if v != "none"} | {
        ("sources", v) for v in knob_values("sources") if v != "one"}


@pytest.mark.parametrize("seed", range(6))
def test_random_flavors_equal_the_engine(seed: int) -> None:
    rng = np.random.default_rng(seed)
    b = batch(200 + seed, messy=seed % 2 == 1)
    for _ in range(12):
        knobs = {name: str(rng.choice(knob_values(name))) for name in SWEPT}
        knobs["max_grade"] = "4" if rng.random() < 0.8 else "none"
        metric = "ndcg" if rng.random() < 0.8 else "dcg"
        compare(Measure(metric, [None, 1, 3, 5, 12][int(rng.integers(5))], Flavor(**knobs)), b)


#: Dialect names beside the canonical ones, per preset.
DIALECT = {"lightgbm": ["ndcg@3(label_gain=0,1,3,7,15)"], "xgboost": ["ndcg@3-", "ndcg"],
           "catboost": ["NDCG:top=3;type=Exp", "NDCG:top=3;denominator=Position"]}


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_equals_the_engine_or_is_refused(preset: str) -> None:
    texts = ["ndcg@3", "ndcg", "dcg@3", "dcg", *DIALECT.get(preset, [])]
    for i, messy in enumerate((False, True)):
        b = batch(300 + i, messy=messy, top=3)
        scores, labels, mask, s, y, msk = b
        for text in texts:
            try:
                found, _ = resolve_measures([text], preset, {})
            except RankflavorError:
                continue  # the preset has no such name (its dialect), or no such measure
            fn = rt.ndcg if text.lower().startswith("ndcg") else rt.dcg
            if len(found) != 1:  # a name for several measures (LightGBM's ndcg: @1..@5)
                with pytest.raises(UsageError, match="name exactly one"):
                    fn(scores, labels, mask=mask, measure=text, preset=preset)
                continue
            (m,) = found
            if m.metric not in ("ndcg", "dcg"):
                continue
            got = outcome(fn, scores, labels, mask=mask, measure=text, preset=preset)
            if refused(m):
                assert got is FlavorError, (preset, text)
                continue
            want = outcome(reference, s, y, msk, m)
            assert same(got, want, 1e-9), (preset, text, got, want)


@pytest.mark.parametrize("measure", ["ndcg@5", "ndcg@3[gain=exp2,ties=averaged,precision=float32]", "lightgbm:ndcg@5",
                                     "xgboost:ndcg@5", "catboost:NDCG:top=5", "torchmetrics:ndcg@4", "dcg@5[gain=exp2]",
                                     "ndcg@4[ideal=recall@6,depth=7,unjudged=condensed,ties=pessimistic]"])
def test_float32_batches_equal_the_engine(measure: str) -> None:
    scores, labels, mask, s, y, m = batch(5, dtype=torch.float32)
    fn = rt.dcg if measure.startswith("dcg") else rt.ndcg
    got = fn(scores, labels, mask=mask, measure=measure)
    assert got.dtype == torch.float32 and got.device == scores.device and got.shape == (len(y),)
    (want_measure,), _ = resolve_measures([measure], None, {})
    assert np.allclose(got.numpy(), reference(s, y, m, want_measure), atol=1e-6, rtol=0, equal_nan=True), measure


# ---------------------------------------------------------------------------------------------
# The engine's errors, and refusals that come from the tables


def test_refusals_are_the_engines_errors() -> None:
    scores, labels, mask, s, y, m = batch(3)
    assert (m.sum(1) == 1).any() and (np.where(m, y, 0).max(1) == 0).any()
    with pytest.raises(EvaluationError, match=r"rank a single document.*batch row 3"):
        rt.ndcg(scores, labels, mask=mask, measure="sklearn:ndcg@5")
    # empty=error: the engine's EvaluationError (exit 4), naming the rows; it once raised InputError
    with pytest.raises(EvaluationError, match=r"6 query\(ies\) have nothing relevant \(batch row 0, batch row 1"):
        rt.ndcg(scores, labels, mask=mask, k=5, empty="error")
    assert EvaluationError.exit_code == 4
    with pytest.raises(EvaluationError, match="nothing relevant"):
        reference(s, y, m, "ndcg@5[empty=error]")
    assert rt.dcg(scores, labels, mask=mask, k=5).shape == (len(y),)  # DCG has no empty query
    with pytest.raises(InputError, match="negative grade"):
        rt.ndcg(scores, labels - 1, mask=mask, measure="sklearn:ndcg@5")
    with pytest.raises(InputError, match="not a whole number"):
        rt.ndcg(scores, labels + 0.5, mask=mask, k=5, fractional="error")
    with pytest.raises(InputError, match="above max_grade=30"):
        rt.ndcg(scores, labels * 10, mask=mask, measure="lightgbm:ndcg@5")
    with pytest.raises(FlavorError, match="max_grade"):
        rt.ndcg(scores, labels, mask=mask, k=5, ideal="max")
    with pytest.raises(FlavorError, match="ndcg and dcg"):
        rt.ndcg(scores, labels, mask=mask, measure="P@5")
    with pytest.raises(UsageError, match="hold no candidate"):
        rt.ndcg(scores, labels, mask=torch.zeros_like(mask), k=5)
    with pytest.raises(UsageError, match="finite"):
        rt.ndcg(torch.where(mask, float("nan"), scores), labels, mask=mask, k=5)
    with pytest.raises(UsageError, match="one shape"):
        rt.ndcg(scores, labels[:, :2], k=5)


def test_an_entry_without_a_translation_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule the engine gains (a formula, a tie key, an ideal source, a knob) is refused on a batch
    until it is translated: never computed another way."""
    import rankflavor.metrics.gains as K
    from rankflavor.metrics import ndcg
    from rankflavor.order import ties

    scores, labels, mask, *_ = batch(4)
    assert rt.ndcg(scores, labels, mask=mask, k=5, gain="exp2", ties="optimistic", depth=3).shape == (len(mask),)
    monkeypatch.setitem(K.GAIN_FORMULAS, "exp2", "exp3m1")
    with pytest.raises(FlavorError, match="gain=exp2"):
        rt.ndcg(scores, labels, mask=mask, k=5, gain="exp2")
    monkeypatch.setitem(ties.TIE_TABLE, "optimistic", ties.TieRule((("score_rank", True),)))
    with pytest.raises(FlavorError, match="ties=optimistic"):
        rt.ndcg(scores, labels, mask=mask, k=5, ties="optimistic")
    monkeypatch.setitem(ndcg.IDEAL_SOURCES, "global", "judgments_as_supplied")
    with pytest.raises(FlavorError, match="ideal=global"):
        rt.ndcg(scores, labels, mask=mask, k=5)
    monkeypatch.delitem(rt.BATCH_KNOBS, "depth")
    assert rt.dcg(scores, labels, mask=mask, k=5).shape == (len(mask),)  # depth at its default
    with pytest.raises(FlavorError, match="depth=3"):
        rt.dcg(scores, labels, mask=mask, k=5, depth=3)


# ---------------------------------------------------------------------------------------------
# Hand values and the tensor path


def test_a_hand_computed_batch() -> None:
    # One query, labels [3, 2, 3, 0, 1, 2], scores ranking them [3, 2, 0, 1, 2, 3] (flavor-facts 4.2's S).
    scores = torch.tensor([[0.9, 0.8, 0.1, 0.7, 0.6, 0.3]])
    labels = torch.tensor([[3.0, 2.0, 3.0, 0.0, 1.0, 2.0]])
    dcg3 = 3 + 2 / math.log2(3) + 0 / 2
    idcg3 = 3 + 3 / math.log2(3) + 2 / 2
    assert rt.ndcg(scores, labels, k=3).item() == pytest.approx(dcg3 / idcg3, abs=1e-6)  # 0.723233
    assert rt.ndcg(scores, labels, k=3, ideal="max", max_grade=3).item() == pytest.approx(
        dcg3 / (3 * (1 + 1 / math.log2(3) + 1 / 2)), abs=1e-6)
    assert rt.ndcg(scores, labels, measure="lightgbm:ndcg@3").item() == pytest.approx(0.688482, abs=1e-6)
    # depth=2 and the recall ideal: DCG of the top 2, ideal of the top 2 (grades 3, 2) re-sorted
    assert rt.ndcg(scores, labels, k=2, ideal="local", depth=2).item() == pytest.approx(1.0, abs=1e-6)


def test_padding_by_minus_infinity_equals_a_mask() -> None:
    scores, labels, mask, s, y, m = batch(7)
    padded = torch.where(mask, scores, float("-inf"))
    got = rt.ndcg(padded, labels, k=5, gain="exp2")
    assert got.dtype == torch.float64
    assert np.abs(got.numpy() - reference(s, y, m, "ndcg@5[gain=exp2]")).max() < 1e-12


def test_knobs_distinguish() -> None:
    # the comparisons above cannot pass by accident: the flavors give different numbers on these batches
    scores, labels, mask, *_ = batch(11)
    a = rt.ndcg(scores, labels, mask=mask, measure="ndcg@4[ties=input_order]")
    b = rt.ndcg(scores, labels, mask=mask, measure="ndcg@4[ties=docno_desc]")
    c = rt.ndcg(scores, labels, mask=mask, measure="ndcg@4[ties=averaged]")
    assert (a - b).abs().max() > 1e-3 and (a - c).abs().max() > 1e-3


def test_no_copy_to_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    scores, labels, mask, *_ = batch(2)

    def refuse(*_: object) -> None:
        raise AssertionError("Tensor.numpy() called")

    monkeypatch.setattr(torch.Tensor, "numpy", refuse)
    monkeypatch.setattr(torch.Tensor, "tolist", refuse)
    for measure in ("ndcg@4[ties=averaged,gain=exp2]", "ndcg@4[ideal=max,max_grade=4,depth=3,unjudged=condensed]",
                    "ndcg@3[ideal=recall@5,ideal_cut=hits,ties=pessimistic,precision=float32]"):
        rt.ndcg(scores, labels, mask=mask, measure=measure)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_gpu_tensors_stay_on_the_gpu() -> None:
    scores, labels, mask, s, y, m = batch(3)
    got = rt.ndcg(scores.cuda(), labels.cuda(), mask=mask.cuda(), k=5)
    assert got.is_cuda
    assert np.allclose(got.cpu().numpy(), reference(s, y, m, "ndcg@5"), atol=1e-9)


def test_package_imports_without_torch() -> None:
    code = ("import sys; sys.modules['torch'] = None; import rankflavor, rankflavor.lightgbm, rankflavor.xgboost; "
            "rankflavor.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}}, 'ndcg@1')\n"
            "try:\n    import rankflavor.torch as t; t.ndcg\nexcept ImportError: pass\n")
    subprocess.run([sys.executable, "-c", code], check=True)
