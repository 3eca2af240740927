"""rankflavor.torch against the NumPy engine: random padded batches, every supported flavor knob.

The reference is :func:`rankflavor.evaluate` on the same candidates as dicts (padding left out,
documents named by zero-padded column, so docno order is column order): the engine's own NDCG,
computed on another path. Scores are rounded to one decimal so that ties are frequent and the
tie rules matter.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import rankflavor
from rankflavor.errors import EvaluationError, FlavorError, InputError

torch = pytest.importorskip("torch")
import rankflavor.torch as rt  # noqa: E402


def batch(seed: int, n_q: int = 60, n_d: int = 12, top: int = 4, dtype=torch.float32):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, top + 1, (n_q, n_d)).astype(np.float64)
    labels[rng.random((n_q, n_d)) < 0.4] = 0
    labels[:4] = 0  # queries with nothing relevant
    scores = np.round(rng.normal(size=(n_q, n_d)), 1)
    lengths = rng.integers(1, n_d + 1, n_q)
    mask = np.arange(n_d)[None, :] < lengths[:, None]
    return (torch.tensor(scores, dtype=dtype), torch.tensor(labels, dtype=dtype), torch.tensor(mask),
            scores.astype(np.float32 if dtype == torch.float32 else np.float64), labels, mask)


def reference(scores: np.ndarray, labels: np.ndarray, mask: np.ndarray, measure: str) -> np.ndarray:
    qrels = {f"q{i:03d}": {f"{j:03d}": float(labels[i, j]) for j in range(labels.shape[1]) if mask[i, j]}
             for i in range(len(labels))}
    run = {f"q{i:03d}": {f"{j:03d}": float(scores[i, j]) for j in range(labels.shape[1]) if mask[i, j]}
           for i in range(len(labels))}
    result = rankflavor.evaluate(qrels, run, measure)[0]
    assert list(result.queries) == sorted(qrels)  # every query scored, in batch order
    return np.asarray(result.values, dtype=np.float64)


FLAVORS = [
    "ndcg@5",
    "ndcg",
    "ndcg@3[gain=exp2]",
    "ndcg@5[gain=exp2,ties=input_order,empty=one]",
    "ndcg@5[ties=docno_asc,discount=jk(2)]",
    "ndcg@4[ties=averaged,ideal=local]",
    "ndcg@4[ties=pessimistic,gain=binary,rel=2]",
    "ndcg@4[ties=optimistic,discount=reciprocal]",
    "ndcg@6[ideal_cut=hits]",
    "ndcg@2[ideal_cut=none]",
    "ndcg@5[ideal=max,max_grade=4]",
    "ndcg@5[gain={1:1,2:5,3:6,4:20},precision=float32]",
    "ndcg@5[min_grade=2,empty=nan]",
    "ndcg@20",
    "lightgbm:ndcg@5",
    "xgboost:ndcg@5",
    "sklearn:ndcg@5",
    "catboost:NDCG:top=5",
    "dcg@5[gain=exp2]",
    "dcg[ties=averaged]",
]


@pytest.mark.parametrize("measure", FLAVORS)
def test_equals_the_engine_in_float32(measure: str) -> None:
    scores, labels, mask, s, y, m = batch(FLAVORS.index(measure))
    if measure.startswith("sklearn:"):  # scikit-learn refuses one-document lists (test below): two at least
        m[:, 1] = True
        mask = torch.tensor(m)
    fn = rt.dcg if measure.startswith("dcg") else rt.ndcg
    got = fn(scores, labels, mask=mask, measure=measure)
    assert got.dtype == torch.float32 and got.device == scores.device and got.shape == (len(y),)
    want = reference(s, y, m, measure)
    assert np.allclose(got.numpy(), want, atol=1e-6, rtol=0, equal_nan=True), measure


def test_one_document_lists_refused_alike_under_singletons_error() -> None:
    scores, labels, mask, s, y, m = batch(3)
    assert (m.sum(1) == 1).any()
    with pytest.raises(EvaluationError, match="rank a single document"):
        rt.ndcg(scores, labels, mask=mask, measure="sklearn:ndcg@5")
    with pytest.raises(EvaluationError, match="rank a single document"):
        reference(s, y, m, "sklearn:ndcg@5")
    kept = rt.ndcg(scores, labels, mask=mask, measure="sklearn:ndcg@5", singletons="keep")
    assert np.allclose(kept.numpy(), reference(s, y, m, "sklearn:ndcg@5[singletons=keep]"), atol=1e-6)


def test_float64_and_padding_by_minus_infinity() -> None:
    scores, labels, mask, s, y, m = batch(7, dtype=torch.float64)
    padded = torch.where(mask, scores, float("-inf"))
    got = rt.ndcg(padded, labels, k=5, gain="exp2")
    assert got.dtype == torch.float64
    assert np.abs(got.numpy() - reference(s, y, m, "ndcg@5[gain=exp2]")).max() < 1e-12


def test_knobs_distinguish() -> None:
    # the tests above cannot pass by accident: the flavors give different numbers on these batches
    scores, labels, mask, *_ = batch(11)
    a = rt.ndcg(scores, labels, mask=mask, measure="ndcg@4[ties=input_order]")
    b = rt.ndcg(scores, labels, mask=mask, measure="ndcg@4[ties=docno_desc]")
    c = rt.ndcg(scores, labels, mask=mask, measure="ndcg@4[ties=averaged]")
    assert (a - b).abs().max() > 1e-3 and (a - c).abs().max() > 1e-3


def test_refuses_what_a_batch_cannot_hold() -> None:
    scores, labels, mask, *_ = batch(1)
    for measure in ("ndcg@5[ideal=recall@8]", "ndcg@5[depth=3]", "ndcg@5[self_hits=drop]", "P@5"):
        with pytest.raises(FlavorError):
            rt.ndcg(scores, labels, mask=mask, measure=measure)
    with pytest.raises(InputError, match="negative"):
        rt.ndcg(scores, labels - 1, mask=mask, measure="sklearn:ndcg@5")
    with pytest.raises(InputError, match="max_grade"):
        rt.ndcg(scores, labels * 10, mask=mask, measure="lightgbm:ndcg@5")


def test_no_copy_to_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    scores, labels, mask, *_ = batch(2)

    def refuse(*_: object) -> None:
        raise AssertionError("Tensor.numpy() called")

    monkeypatch.setattr(torch.Tensor, "numpy", refuse)
    monkeypatch.setattr(torch.Tensor, "tolist", refuse)
    rt.ndcg(scores, labels, mask=mask, measure="ndcg@4[ties=averaged,gain=exp2]")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_gpu_tensors_stay_on_the_gpu() -> None:
    scores, labels, mask, s, y, m = batch(3)
    got = rt.ndcg(scores.cuda(), labels.cuda(), mask=mask.cuda(), k=5)
    assert got.is_cuda
    assert np.allclose(got.cpu().numpy(), reference(s, y, m, "ndcg@5"), atol=1e-6)


def test_package_imports_without_torch() -> None:
    code = ("import sys; sys.modules['torch'] = None; import rankflavor, rankflavor.lightgbm, rankflavor.xgboost; "
            "rankflavor.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}}, 'ndcg@1')\n"
            "try:\n    import rankflavor.torch as t; t.ndcg\nexcept ImportError: pass\n")
    subprocess.run([sys.executable, "-c", code], check=True)
