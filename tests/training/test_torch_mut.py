"""rankflavor.torch: what the comparisons of tests/training/test_torch_metrics.py do not reach.

Its messages (checked as text), refusals of table entries without a translation, batches wider
than 16 columns (where torch's unstable sort reorders ties), a torch default device or dtype other
than CPU float32 (bfloat16), zero-query batches, and ideal=max's slots. Expected values are hand-worked here
or come from :func:`rankflavor.evaluate` (the helpers of tests/training/test_torch_metrics.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from rankflavor.errors import FlavorError, InputError, UsageError

from .test_torch_metrics import reference

torch = pytest.importorskip("torch")
import rankflavor.training.torch as rt  # noqa: E402


def small() -> tuple[Any, Any]:
    """One query of three candidates: scores ranking labels [1, 2, 3] in column order."""
    return torch.tensor([[0.9, 0.8, 0.1]], dtype=torch.float64), torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64)


# ---------------------------------------------------------------------------------------------
# ndcg and dcg: their own names, their k


def test_each_function_names_itself_when_the_measure_is_another() -> None:
    s, y = small()
    with pytest.raises(FlavorError, match=r"rankflavor\.torch\.ndcg computes ndcg \(rankflavor\.torch has ndcg and dcg\)$"):
        rt.ndcg(s, y, measure="P@2")
    with pytest.raises(FlavorError, match=r"rankflavor\.torch\.dcg computes dcg \(rankflavor\.torch has ndcg and dcg\)$"):
        rt.dcg(s, y, measure="P@2")


def test_dcg_cuts_at_k() -> None:
    s, y = small()
    # ranks 1, 2, 3 hold grades 1, 2, 3; DCG@k = sum grade / log2(rank + 1)
    assert rt.dcg(s, y, k=1).item() == pytest.approx(1.0, abs=1e-12)
    assert rt.dcg(s, y, k=2).item() == pytest.approx(1 + 2 / math.log2(3), abs=1e-12)
    assert rt.dcg(s, y).item() == pytest.approx(1 + 2 / math.log2(3) + 3 / 2, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# Refusals and their messages


def test_a_refused_knob_names_the_way_out() -> None:
    s, y = small()
    with pytest.raises(FlavorError, match=r": self_hits=drop is not supported on a padded batch \(rankflavor\.torch\); "
                                          r"evaluate with rankflavor\.evaluate or rankflavor\.ndcg_score$"):
        rt.ndcg(s, y, k=2, self_hits="drop")


@pytest.mark.parametrize(("table", "key", "value", "knob", "text"), [
    ("SCORE_DTYPES", "float32", "int32", "precision", "float32"),  # a torch dtype, not a float one
    ("SCORE_DTYPES", "float32", "float_ish", "precision", "float32"),  # no torch dtype
    ("UNJUDGED_ROWS", "condensed", "hide", "unjudged", "condensed"),
    ("FRACTIONAL", "truncate", "round", "fractional", "truncate"),
    ("NEGATIVES", "zero", "clip", "negatives", "zero"),
    ("SINGLETONS_POLICY", "error", "warn", "singletons", "error"),
    ("EMPTY_POLICY", "one", ("fill", 1.0), "empty", "one"),
])
def test_a_table_entry_without_a_translation_is_refused_naming_its_knob(
        monkeypatch: pytest.MonkeyPatch, table: str, key: str, value: Any, knob: str, text: str) -> None:
    s, y = small()
    before = rt.ndcg(s, y, k=2, **{knob: text})  # translated: computed
    assert before.shape == (1,)
    monkeypatch.setitem(getattr(rt, table), key, value)  # the engine's table (one dict, imported by name)
    with pytest.raises(FlavorError, match=rf"{knob}={text} is not supported on a padded batch"):
        rt.ndcg(s, y, k=2, **{knob: text})


def test_empty_is_read_by_ndcg_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """DCG has no empty query: its ``empty`` (always the default) is not translated; NDCG's is
    checked against BATCH_KNOBS like every knob it reads."""
    s, y = small()
    monkeypatch.setitem(rt.EMPTY_POLICY, "zero", ("fill", 0.0))
    assert rt.dcg(s, y, k=1).item() == pytest.approx(1.0)
    with pytest.raises(FlavorError, match="empty=zero"):
        rt.ndcg(s, y, k=1)
    monkeypatch.undo()
    monkeypatch.delitem(rt.BATCH_KNOBS, "empty")  # empty held at its default
    with pytest.raises(FlavorError, match="empty=one"):
        rt.ndcg(s, y, k=1, empty="one")
    assert rt.ndcg(s, y, k=1).item() == pytest.approx(1 / 3)  # grade 1 at rank 1, ideal grade 3


def test_a_mask_of_another_dtype_or_shape_is_refused_with_both() -> None:
    s = torch.zeros(2, 3, dtype=torch.float64)
    y = torch.zeros(2, 3, dtype=torch.float64)
    with pytest.raises(UsageError, match=r"^mask must be a bool tensor of shape \(2, 3\); received torch\.float32 "
                                         r"of shape \(2, 3\)$"):
        rt.ndcg(s, y, k=2, mask=torch.ones(2, 3))
    with pytest.raises(UsageError, match=r"^mask must be a bool tensor of shape \(2, 3\); received torch\.bool "
                                         r"of shape \(2, 2\)$"):
        rt.ndcg(s, y, k=2, mask=torch.ones(2, 2, dtype=torch.bool))


def test_rows_without_a_candidate_are_counted_and_the_first_five_named() -> None:
    s = torch.zeros(8, 3, dtype=torch.float64)
    y = torch.zeros(8, 3, dtype=torch.float64)
    one = torch.ones(8, 3, dtype=torch.bool)
    one[5] = False  # one row of eight
    with pytest.raises(UsageError, match=r"^1 batch row\(s\) hold no candidate \(rows 5\.\.\.\): a query needs one; "
                                         r"leave such rows out$"):
        rt.ndcg(s, y, k=2, mask=one)
    seven = torch.zeros(8, 3, dtype=torch.bool)
    seven[2, 1] = True  # rows 0, 1, 3, 4, 5, 6, 7 are empty: the first five named
    with pytest.raises(UsageError, match=r"^7 batch row\(s\) hold no candidate \(rows 0, 1, 3, 4, 5\.\.\.\)"):
        rt.ndcg(s, y, k=2, mask=seven)


def test_a_non_finite_value_names_its_tensor() -> None:
    s, y = small()
    mask = torch.tensor([[True, True, False]])
    bad = torch.tensor([[0.9, float("nan"), 0.1]], dtype=torch.float64)
    with pytest.raises(UsageError, match=r"^scores must be finite where mask is True$"):
        rt.ndcg(bad, y, k=2, mask=mask)
    with pytest.raises(UsageError, match=r"^labels must be finite where mask is True$"):
        rt.ndcg(s, torch.tensor([[1.0, float("inf"), 3.0]], dtype=torch.float64), k=2, mask=mask)
    # padding may hold anything
    assert rt.ndcg(s, torch.tensor([[1.0, 2.0, float("nan")]]), k=2, mask=mask).shape == (1,)


def test_labels_of_a_dtype_without_isfinite_are_read_as_float64() -> None:
    # float8_e4m3fn holds 0..4 exactly; torch has no isfinite for it: the check reads float64 values
    s = torch.tensor([[0.9, 0.8, 0.1, 0.5]], dtype=torch.float64)
    y = torch.tensor([[1.0, 0.0, 4.0, 2.0]], dtype=torch.float64)
    mask = torch.ones(1, 4, dtype=torch.bool)
    got = rt.ndcg(s, y.to(torch.float8_e4m3fn), k=3, mask=mask)
    # scores .9, .8, .5 rank grades 1, 0, 2 in the top 3; the ideal 4, 2, 1
    want = (1 + 0 / math.log2(3) + 2 / 2) / (4 + 2 / math.log2(3) + 1 / 2)
    assert got.item() == pytest.approx(want, abs=1e-12)


def test_grade_refusals_count_the_real_candidates_only() -> None:
    s = torch.tensor([[0.9, 0.8, 0.1, 0.5, 0.4]], dtype=torch.float64)
    mask = torch.tensor([[True, True, True, True, False]])
    fractional = torch.tensor([[1.5, 2.0, 0.25, 3.0, 0.5]], dtype=torch.float64)  # 1.5 and 0.25 (0.5 is padding)
    with pytest.raises(InputError, match=r"^labels: 2 judgment\(s\) have a grade that is not a whole number"):
        rt.ndcg(s, fractional, k=2, mask=mask, fractional="error")
    negative = torch.tensor([[-1.0, -2.0, 0.0, -0.5, -3.0]], dtype=torch.float64)  # three (-3 is padding)
    with pytest.raises(InputError, match=r"^labels: 3 judgment\(s\) have a negative grade"):
        rt.ndcg(s, negative, k=2, mask=mask, negatives="error")


def test_labels_above_max_grade_are_counted_and_the_largest_named() -> None:
    s = torch.tensor([[0.9, 0.8, 0.1, 0.5]], dtype=torch.float64)
    y = torch.tensor([[5.0, 4.0, 1.0, 9.0]], dtype=torch.float64)  # 5 and 4 above 3; 9 is padding
    mask = torch.tensor([[True, True, True, False]])
    with pytest.raises(InputError, match=r"^labels: 2 judgment\(s\) have a grade above max_grade=3 \(largest 5\)"):
        rt.ndcg(s, y, k=2, mask=mask, max_grade=3)


def test_integer_scores_give_float64_values() -> None:
    s = torch.tensor([[9, 8, 1]])
    y = torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64)
    got = rt.dcg(s, y, k=2)
    assert got.dtype == torch.float64 and got.item() == pytest.approx(1 + 2 / math.log2(3), abs=1e-12)
    got = rt.ndcg(s, y, k=2)  # ideal: 3, 2
    assert got.dtype == torch.float64
    assert got.item() == pytest.approx((1 + 2 / math.log2(3)) / (3 + 2 / math.log2(3)), abs=1e-12)


def test_float32_labels_are_graded_in_float64() -> None:
    # the float32 label 0.3 is 0.30000001192092896; its exp2 gain 2**g - 1, at rank 1, is the DCG@1
    s = torch.tensor([[0.9, 0.1]], dtype=torch.float64)
    y = torch.tensor([[0.3, 2.7]], dtype=torch.float32)
    g = float(np.float32(0.3))
    got = rt.dcg(s, y, k=1, gain="exp2", fractional="keep")
    assert got.item() == pytest.approx(2.0 ** g - 1.0, abs=1e-15, rel=0)
    h = float(np.float32(2.7))
    got = rt.ndcg(s, y, k=2, gain="exp2", fractional="keep")  # ideal: 2.7, then 0.3
    want = ((2 ** g - 1) + (2 ** h - 1) / math.log2(3)) / ((2 ** h - 1) + (2 ** g - 1) / math.log2(3))
    assert got.item() == pytest.approx(want, abs=1e-15, rel=0)


# ---------------------------------------------------------------------------------------------
# Wide batches: ties sorted in more than 16 columns


def wide(seed: int, n_q: int = 10, n_d: int = 40) -> tuple[Any, Any, Any, np.ndarray, np.ndarray, np.ndarray]:
    """Integer scores 0..3 (long runs of ties), grades 0..3 and -1 (unjudged), 17 to 40 candidates."""
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 4, (n_q, n_d)).astype(np.float64)
    labels = rng.integers(0, 4, (n_q, n_d)).astype(np.float64)
    labels[rng.random((n_q, n_d)) < 0.25] = -1.0
    mask = np.arange(n_d)[None, :] < rng.integers(17, n_d + 1, n_q)[:, None]
    return torch.tensor(scores), torch.tensor(labels), torch.tensor(mask), scores, labels, mask


@pytest.mark.parametrize("ties", ["input_order", "docno_asc", "docno_desc", "optimistic", "pessimistic", "averaged"])
def test_wide_batches_with_ties_equal_the_engine(ties: str) -> None:
    scores, labels, mask, s, y, m = wide(1)
    for extra in ("", ",depth=30", ",unjudged=condensed", ",depth=25,unjudged=condensed"):
        # the gain table gives a judged 0 a gain (-1), an unjudged one none: rows tied on score and
        # grade are told apart
        for measure in (f"ndcg@20[ties={ties}{extra}]", f"dcg@12[ties={ties}{extra}]",
                        f"dcg@12[ties={ties},gain={{0:-1,1:1,2:3,3:7}}{extra}]"):
            fn = rt.dcg if measure.startswith("dcg") else rt.ndcg
            got = fn(scores, labels, mask=mask, measure=measure).numpy()
            assert np.allclose(got, reference(s, y, m, measure), atol=1e-9, rtol=0), measure


# ---------------------------------------------------------------------------------------------
# Torch's defaults: the values and their device are the input's, whatever the default device and dtype


FLAVORS = ["ndcg@3", "dcg@4", "ndcg@5[ties=averaged]", "ndcg@5[ideal=max,max_grade=4]",
           "ndcg@5[ideal=max,max_grade=4,ideal_cut=hits]", "ndcg[ideal=max,max_grade=4]",
           "ndcg@4[ideal=recall@6,depth=7,unjudged=condensed]", "ndcg@4[ideal=local,ideal_cut=hits]"]


def test_a_default_device_elsewhere_changes_nothing() -> None:
    scores, labels, mask, *_ = wide(2, n_d=20)
    for measure in FLAVORS:
        fn = rt.dcg if measure.startswith("dcg") else rt.ndcg
        want = fn(scores, labels, mask=mask, measure=measure)
        with torch.device("meta"):  # tensors made without a device would land there, holding no data
            got = fn(scores, labels, mask=mask, measure=measure)
        assert got.device == scores.device and torch.equal(got, want), measure


@pytest.mark.parametrize("measure", ["ndcg@259[ideal=global]", "ndcg@259[ideal=local]",
                                     "ndcg[ideal=global,ideal_cut=hits,depth=259]"])
def test_a_default_dtype_that_rounds_259_changes_nothing(measure: str) -> None:
    # 300 candidates of grade 1: every ranking is ideal, NDCG 1 by definition, its ideal cut at the
    # 259 slots of k or of the rows ranked. bfloat16 rounds 259 to 260 (and slot 260 stays 260).
    scores = torch.arange(300, 0, -1, dtype=torch.float64).reshape(1, 300)
    labels = torch.ones(1, 300, dtype=torch.float64)
    was = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        got = rt.ndcg(scores, labels, measure=measure)
    finally:
        torch.set_default_dtype(was)
    assert got.dtype == torch.float64 and got.item() == pytest.approx(1.0, abs=1e-12)


def test_a_batch_of_no_query() -> None:
    for ties in ("averaged", "docno_desc"):
        for n_d in (0, 3):
            got = rt.ndcg(torch.zeros(0, n_d, dtype=torch.float64), torch.zeros(0, n_d), k=2, ties=ties)
            assert got.shape == (0,) and got.dtype == torch.float64


# ---------------------------------------------------------------------------------------------
# ideal=max


def test_ideal_max_fills_k_slots_beyond_the_batch_or_the_rows_ranked() -> None:
    s = torch.tensor([[0.9, 0.5, 0.1]], dtype=torch.float64)
    y = torch.tensor([[3.0, 0.0, 3.0]], dtype=torch.float64)
    dcg = 3 / 1 + 0 / math.log2(3) + 3 / 2
    ten = 3 * sum(1 / math.log2(i + 1) for i in range(1, 11))  # the top grade in each of k = 10 slots
    three = 3 * (1 + 1 / math.log2(3) + 1 / 2)  # no k: one slot per candidate ranked
    assert rt.ndcg(s, y, k=10, ideal="max", max_grade=3).item() == pytest.approx(dcg / ten, abs=1e-12)
    assert rt.ndcg(s, y, ideal="max", max_grade=3).item() == pytest.approx(dcg / three, abs=1e-12)
    assert rt.ndcg(s, y, k=10, ideal="max", max_grade=3, ideal_cut="hits").item() == pytest.approx(dcg / three, abs=1e-12)


def test_ideal_max_sums_as_many_slots_as_the_limit_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    from rankflavor.metrics import ndcg as engine

    s = torch.tensor([[0.9, 0.5, 0.1, 0.3]], dtype=torch.float64)
    y = torch.tensor([[3.0, 0.0, 3.0, 1.0]], dtype=torch.float64)
    monkeypatch.setattr(engine, "MAX_SUMMED_SLOTS", 4)  # as many as the batch has columns
    # scores in order .9, .5, .3, .1 rank grades 3, 0, 1, 3; the ideal: the top grade 3 in each of 4 slots
    dcg = 3 + 0 / math.log2(3) + 1 / 2 + 3 / math.log2(5)
    ideal = 3 * (1 + 1 / math.log2(3) + 1 / 2 + 1 / math.log2(5))
    assert rt.ndcg(s, y, ideal="max", max_grade=3).item() == pytest.approx(dcg / ideal, abs=1e-12)
    monkeypatch.setattr(engine, "MAX_SUMMED_SLOTS", 3)
    with pytest.raises(FlavorError, match="4 slots"):
        rt.ndcg(s, y, ideal="max", max_grade=3)


# ---------------------------------------------------------------------------------------------
# Padding ranks after every candidate, even one whose score is -inf at the flavor's precision


@pytest.mark.parametrize("ties", ["input_order", "docno_asc", "docno_desc", "optimistic", "pessimistic", "averaged"])
def test_a_score_beyond_float32_ranks_before_the_padding(ties: str) -> None:
    # candidates: column 1 (grade 3, score -1e300: -inf in float32) and column 3 (grade 1, score 0.5);
    # columns 0 and 2 are padding. The ranking is column 3, then column 1, whatever the tie rule.
    scores = torch.tensor([[0.0, -1e300, 0.0, 0.5]], dtype=torch.float64)
    labels = torch.tensor([[0.0, 3.0, 0.0, 1.0]], dtype=torch.float64)
    mask = torch.tensor([[False, True, False, True]])
    dcg = 1 / 1 + 3 / math.log2(3)
    ideal = 3 / 1 + 1 / math.log2(3)
    for precision in ("float64", "float32"):
        flavor = {"precision": precision, "ties": ties}
        assert rt.dcg(scores, labels, k=2, mask=mask, **flavor).item() == pytest.approx(dcg, abs=1e-12), precision
        assert rt.ndcg(scores, labels, k=2, mask=mask, **flavor).item() == pytest.approx(dcg / ideal, abs=1e-12)
    with pytest.warns(RuntimeWarning, match="overflow"):  # the engine's cast to float32
        want = reference(scores.numpy(), labels.numpy(), mask.numpy(), f"ndcg@2[precision=float32,ties={ties}]")
    assert want[0] == pytest.approx(dcg / ideal, abs=1e-12)
