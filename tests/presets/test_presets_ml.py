"""ML-library presets against the real libraries, the shipped LightGBM LETOR run and §4.2 fingerprints.

Differential tests: thousands of random groups (graded labels, heavy ties, float32-only ties,
all-zero groups, groups longer than XGBoost's default cutoff of 32, varied k) are scored by the
library through its own public API and by :func:`rankflavor.ndcg_score` under the library's preset;
every group must agree to 1e-9 (1e-6 where the library computes in float32). Each test also checks
that a wrong flavor disagrees on the same data, so the data exercises what the preset pins.

Libraries come from the ``peers`` extra (``pip install -e '.[peers]'``; torchmetrics from ``torch``); a library that is not
installed skips its test and says so. RankLib (Java, not on PyPI) is checked against the values
flavor-facts.md §4.2 recorded by running it.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.errors import EvaluationError, FlavorError, InputError, UsageError
from rankflavor.presets import get_preset, resolve_measures

from ..conftest import shared_path

EXACT = 1e-9
FLOAT32 = 1e-6


def _require(module: str) -> Any:
    extra = "torch" if module.startswith("torch") else "peers"  # torch's CPU wheel: README, Set-up
    return pytest.importorskip(
        module, reason=f"{module} is not installed; `pip install -e '.[{extra}]'` runs this differential test"
    )


# ---------------------------------------------------------------------------------------------
# Random groups


@dataclass
class Groups:
    """Consecutive groups as 1-D arrays (LightGBM/XGBoost layout)."""

    labels: np.ndarray
    scores: np.ndarray
    sizes: np.ndarray

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.sizes)])

    def group(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.starts[i], self.starts[i + 1]
        return self.labels[a:b], self.scores[a:b]

    def __len__(self) -> int:
        return len(self.sizes)


def random_groups(
    seed: int,
    n_groups: int,
    *,
    min_size: int = 1,
    max_size: int = 40,
    max_label: int = 4,
    label_step: float | None = None,
    distinct_scores: bool = False,
) -> Groups:
    """Groups mixing the cases flavors disagree on.

    Labels are whole grades 0..max_label, or multiples of ``label_step`` (floats), and one group in
    eight is all zero. Scores are continuous, coarse (few distinct values: many ties), or near-ties
    that differ in float64 but tie in float32.
    """
    rng = np.random.default_rng(seed)
    sizes = rng.integers(min_size, max_size + 1, n_groups)
    labels: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    for n in sizes:
        if rng.random() < 0.125:
            y = np.zeros(n)
        elif label_step is not None:
            y = rng.integers(0, int(max_label / label_step) + 1, n) * label_step
        else:
            # skewed towards low grades, as real judgments are
            y = np.minimum(rng.geometric(0.45, n) - 1, max_label).astype(np.float64)
        style = 0 if distinct_scores else rng.integers(0, 3)
        if style == 0:
            s = rng.normal(size=n)
        elif style == 1:
            s = rng.integers(0, 4, n).astype(np.float64) / 4
        else:
            s = 0.5 + rng.integers(0, 3, n) * 1e-12 + (rng.integers(0, 2, n) * 0.25)
        labels.append(y)
        scores.append(s)
    return Groups(np.concatenate(labels), np.concatenate(scores), sizes.astype(np.int64))


#: The random data sets, built once per session (several tests read each).
DATASETS: dict[str, dict[str, Any]] = {
    "sklearn": {"seed": 1, "n_groups": 2000, "min_size": 2},  # scikit-learn rejects one-document rows
    "sklearn-float": {"seed": 2, "n_groups": 600, "min_size": 2, "label_step": 0.1},
    "sklearn-distinct": {"seed": 3, "n_groups": 1000, "min_size": 2, "distinct_scores": True},
    "sklearn-short-tied": {"seed": 4, "n_groups": 2000, "min_size": 2, "max_size": 12},
    "torchmetrics": {"seed": 11, "n_groups": 2000},
    "torchmetrics-float": {"seed": 12, "n_groups": 600, "label_step": 0.25},
    "torchmetrics-empty": {"seed": 13, "n_groups": 600},
    "lightgbm": {"seed": 21, "n_groups": 3000},
    "lightgbm-gain": {"seed": 22, "n_groups": 1000},
    "xgboost": {"seed": 31, "n_groups": 3000, "max_size": 45},
    "xgboost-linear": {"seed": 32, "n_groups": 1000, "label_step": 0.5},
    "catboost": {"seed": 41, "n_groups": 2000, "label_step": 0.25, "max_label": 3},  # CatBoost labels are float32
}


@functools.cache
def dataset(name: str) -> Groups:
    return random_groups(**DATASETS[name])


def ours(name: str, k: int | None, preset: str, **kw: Any) -> np.ndarray:
    groups = dataset(name)
    out = rankflavor.ndcg_score(groups.labels, groups.scores, k, preset=preset, group=groups.sizes, per_query=True, **kw)
    assert isinstance(out, np.ndarray)
    return out


def ours_metric(name: str, preset: str, metric: str, **kw: Any) -> np.ndarray:
    groups = dataset(name)
    out = rankflavor.ndcg_score(groups.labels, groups.scores, preset=preset, metric=metric, group=groups.sizes, per_query=True, **kw)
    assert isinstance(out, np.ndarray)
    return out


def worst(a: np.ndarray, b: np.ndarray) -> float:
    assert a.shape == b.shape
    return float(np.max(np.abs(a - b)))


# ---------------------------------------------------------------------------------------------
# The real libraries, through their own APIs (each result computed once per session)


@functools.cache
def sklearn_per_group(name: str, k: int | None, dcg: bool = False, ignore_ties: bool = False) -> np.ndarray:
    """scikit-learn's value for every group. Groups of one size form a 2-D array; the per-row
    scores come from the function ``ndcg_score``/``dcg_score`` average (checked against the public
    mean of each size), or from one public call per row where that function is absent."""
    from sklearn.metrics import _ranking, dcg_score, ndcg_score

    public = dcg_score if dcg else ndcg_score
    rows_fn = getattr(_ranking, "_dcg_sample_scores" if dcg else "_ndcg_sample_scores", None)
    groups = dataset(name)
    out = np.empty(len(groups))
    starts = groups.starts
    for size in np.unique(groups.sizes):
        which = np.flatnonzero(groups.sizes == size)
        y = np.stack([groups.labels[starts[i] : starts[i] + size] for i in which])
        s = np.stack([groups.scores[starts[i] : starts[i] + size] for i in which])
        if rows_fn is None:
            out[which] = [public(y[j : j + 1], s[j : j + 1], k=k, ignore_ties=ignore_ties) for j in range(len(which))]
            continue
        rows = rows_fn(y, s, k=k, ignore_ties=ignore_ties)
        assert abs(public(y, s, k=k, ignore_ties=ignore_ties) - np.mean(rows)) <= 1e-12
        out[which] = rows
    return out


@functools.cache
def torchmetrics_per_group(name: str, k: int | None) -> np.ndarray:
    """torchmetrics' value for every group: RetrievalNormalizedDCG with an aggregation that keeps
    the per-query values (they come in index order)."""
    import torch
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    groups = dataset(name)
    metric = RetrievalNormalizedDCG(top_k=k, aggregation=lambda values, dim=None: values)
    index = torch.tensor(np.repeat(np.arange(len(groups)), groups.sizes))
    return metric(torch.tensor(groups.scores), torch.tensor(groups.labels), indexes=index).double().numpy()


@functools.cache
def lightgbm_per_group(name: str, ks: tuple[int, ...], label_gain: tuple[float, ...] | None = None) -> dict[int, np.ndarray]:
    """LightGBM's ndcg@k of every group: a Booster without trees evaluates each group as a
    validation set whose init_score is the model output, so the metric sees exactly our scores."""
    import lightgbm as lgb

    params: dict[str, Any] = {"objective": "lambdarank", "metric": "ndcg", "eval_at": list(ks), "verbose": -1, "num_threads": 1}
    if label_gain is not None:
        params["label_gain"] = list(label_gain)
    train = lgb.Dataset(np.zeros((2, 1)), np.array([0.0, 1.0]), group=[2], params=params, free_raw_data=False)
    booster = lgb.Booster(params, train)
    groups = dataset(name)
    for i in range(len(groups)):
        y, s = groups.group(i)
        valid = lgb.Dataset(np.zeros((len(y), 1)), y, group=[len(y)], init_score=s, reference=train, params=params)
        booster.add_valid(valid, f"g{i}")
    out: dict[int, np.ndarray] = {k: np.full(len(groups), np.nan) for k in ks}
    for ev in booster.eval_valid():
        out[int(ev.metric_name.split("@")[1])][int(ev.dataset_name[1:])] = ev.metric_value
    return out


@functools.cache
def xgboost_per_group(name: str, metrics: tuple[str, ...], exp_gain: bool = True) -> dict[str, np.ndarray]:
    """XGBoost's eval metric of every group: a 0-round booster evaluates DMatrices that carry our
    scores as base_margin (its prediction with no trees)."""
    import xgboost as xgb

    seed = xgb.DMatrix(np.zeros((2, 1)), label=[0.0, 1.0])
    seed.set_group([2])
    params = {"objective": "rank:ndcg", "eval_metric": list(metrics), "nthread": 1, "ndcg_exp_gain": exp_gain}
    booster = xgb.train(params, seed, num_boost_round=0)
    groups = dataset(name)
    evals = []
    for i in range(len(groups)):
        y, s = groups.group(i)
        d = xgb.DMatrix(np.zeros((len(y), 1)), label=y, base_margin=s, nthread=1)
        d.set_group([len(y)])
        evals.append((d, f"g{i}"))
    out: dict[str, np.ndarray] = {m: np.full(len(groups), np.nan) for m in metrics}
    for group, metric, value in re.findall(r"\t(g\d+)-(\S+):(\S+)", booster.eval_set(evals)):
        out[metric][int(group[1:])] = float(value)
    return out


@functools.cache
def catboost_per_group(name: str, metric: str) -> np.ndarray:
    from catboost.utils import eval_metric

    groups = dataset(name)
    zeros = np.zeros(int(groups.sizes.max()), dtype=int)
    return np.array([eval_metric(y, s, metric, group_id=zeros[: len(y)])[0] for y, s in map(groups.group, range(len(groups)))])


# ---------------------------------------------------------------------------------------------
# scikit-learn


def compare_sklearn() -> dict[str, float]:
    found: dict[str, float] = {}
    for name in ("sklearn", "sklearn-float"):
        for k in (None, 1, 3, 5, 10):
            found[f"{name} ndcg k={k}"] = worst(ours(name, k, "sklearn"), sklearn_per_group(name, k))
        groups = dataset(name)
        for k in (None, 3):
            got = rankflavor.dcg_score(groups.labels, groups.scores, k, group=groups.sizes, per_query=True)
            assert isinstance(got, np.ndarray)
            found[f"{name} dcg k={k}"] = worst(got, sklearn_per_group(name, k, dcg=True))
    for k in (None, 3):
        found[f"ignore_ties distinct k={k}"] = worst(
            ours("sklearn-distinct", k, "sklearn", ignore_ties=True), sklearn_per_group("sklearn-distinct", k, ignore_ties=True)
        )
    # With ties scikit-learn ranks by np.argsort reversed; where this NumPy's argsort keeps ties in
    # index order (it does not always) that is later column first, which the preset reproduces.
    tied = dataset("sklearn-short-tied")
    stable = np.array([np.array_equal(np.argsort(s), np.argsort(s, kind="stable")) for _, s in map(tied.group, range(len(tied)))])
    assert stable.sum() > 300
    for k in (None, 3):
        got = ours("sklearn-short-tied", k, "sklearn", ignore_ties=True)[stable]
        found[f"ignore_ties tied k={k}"] = worst(got, sklearn_per_group("sklearn-short-tied", k, ignore_ties=True)[stable])
    return found


def test_sklearn_matches_ndcg_and_dcg_score_on_random_groups() -> None:
    _require("sklearn")
    found = compare_sklearn()
    assert max(found.values()) <= EXACT, found
    # the data exercises ties: ranking them in input order instead of averaging disagrees
    assert worst(ours("sklearn", 3, "sklearn", ties="input_order"), sklearn_per_group("sklearn", 3)) > 1e-3


def test_sklearn_sample_weight_and_2d_mean() -> None:
    sk = _require("sklearn.metrics")
    rng = np.random.default_rng(5)
    y = np.minimum(rng.geometric(0.45, (400, 8)) - 1, 4).astype(np.float64)
    y[::9] = 0
    s = rng.integers(0, 5, (400, 8)) / 4
    w = rng.random(400)
    for k in (None, 2, 5):
        assert abs(rankflavor.ndcg_score(y, s, k) - sk.ndcg_score(y, s, k=k)) <= EXACT
        assert abs(rankflavor.ndcg_score(y, s, k, sample_weight=w) - sk.ndcg_score(y, s, k=k, sample_weight=w)) <= EXACT
        assert abs(rankflavor.dcg_score(y, s, k, sample_weight=w) - sk.dcg_score(y, s, k=k, sample_weight=w)) <= EXACT


def test_qid_rows_need_not_be_adjacent() -> None:
    groups = dataset("lightgbm")
    qid = np.repeat(np.arange(len(groups)), groups.sizes)
    # deal the rows round-robin: queries interleave, each keeps its own row order (= input order)
    rank_in_query = np.concatenate([np.arange(n) for n in groups.sizes])
    dealt = np.lexsort((qid, rank_in_query))
    names = np.array([f"query-{len(groups) - q:04d}" for q in qid])  # sorted order would reverse them
    got = rankflavor.ndcg_score(
        groups.labels[dealt], groups.scores[dealt], 5, preset="lightgbm", qid=names[dealt], per_query=True
    )
    assert isinstance(got, np.ndarray)
    assert np.array_equal(got, ours("lightgbm", 5, "lightgbm"))  # reported in order of first appearance


# ---------------------------------------------------------------------------------------------
# torchmetrics


def compare_torchmetrics() -> dict[str, float]:
    found: dict[str, float] = {}
    for name in ("torchmetrics", "torchmetrics-float"):
        for k in (None, 1, 10):
            found[f"{name} k={k}"] = worst(ours(name, k, "torchmetrics"), torchmetrics_per_group(name, k))
    return found


def test_torchmetrics_matches_retrieval_normalized_dcg_on_random_groups() -> None:
    _require("torch")
    _require("torchmetrics")
    found = compare_torchmetrics()
    assert max(found.values()) <= FLOAT32, found
    # float32 ties matter: scikit-learn's float64 flavor disagrees on the same groups
    assert worst(ours("torchmetrics", 10, "sklearn", singletons="keep"), torchmetrics_per_group("torchmetrics", 10)) > 1e-3


def test_torchmetrics_empty_target_action() -> None:
    _require("torch")
    _require("torchmetrics")
    import torch
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    groups = dataset("torchmetrics-empty")
    index = torch.tensor(np.repeat(np.arange(len(groups)), groups.sizes))
    assert (ours("torchmetrics-empty", None, "sklearn", singletons="keep") == 0).sum() > 40  # all-zero groups are there
    for action in ("neg", "pos", "skip"):
        for k in (None, 3):
            metric = RetrievalNormalizedDCG(top_k=k, empty_target_action=action)
            theirs = float(metric(torch.tensor(groups.scores), torch.tensor(groups.labels), indexes=index))
            name = f"RetrievalNormalizedDCG(top_k={k}, empty_target_action={action})"
            mine = rankflavor.ndcg_score(groups.labels, groups.scores, preset="torchmetrics", metric=name, group=groups.sizes)
            assert abs(mine - theirs) <= FLOAT32, (action, k)
    with pytest.raises(ValueError, match="no positive target"):
        RetrievalNormalizedDCG(empty_target_action="error")(torch.tensor(groups.scores), torch.tensor(groups.labels), indexes=index)
    with pytest.raises(rankflavor.EvaluationError, match="empty=error"):
        ours_metric("torchmetrics-empty", "torchmetrics", "RetrievalNormalizedDCG(empty_target_action=error)")


# ---------------------------------------------------------------------------------------------
# LightGBM

LGB_KS = (1, 2, 3, 5, 10, 30)
LGB_GAINS = (0.0, 1.0, 3.5, 4.0, 20.0)


def compare_lightgbm() -> dict[str, float]:
    found: dict[str, float] = {}
    theirs = lightgbm_per_group("lightgbm", LGB_KS)
    for k in LGB_KS:
        found[f"ndcg@{k}"] = worst(ours("lightgbm", k, "lightgbm"), theirs[k])
    theirs = lightgbm_per_group("lightgbm-gain", (1, 3, 10), LGB_GAINS)
    for k in (1, 3, 10):
        metric = f"ndcg@{k}(label_gain={','.join(map(str, LGB_GAINS))})"
        found[metric] = worst(ours_metric("lightgbm-gain", "lightgbm", metric), theirs[k])
    return found


def test_lightgbm_matches_its_ndcg_on_random_groups() -> None:
    _require("lightgbm")
    found = compare_lightgbm()
    assert max(found.values()) <= EXACT, found
    theirs = lightgbm_per_group("lightgbm", LGB_KS)[3]
    assert worst(ours("lightgbm", 3, "lightgbm", ties="docno_desc"), theirs) > 1e-3  # ties are exercised
    assert worst(ours("lightgbm", 3, "lightgbm", empty="zero"), theirs) > 0.5  # all-zero groups are there


def test_lightgbm_default_eval_at_names() -> None:
    lgb = _require("lightgbm")
    measures, _ = resolve_measures(["ndcg"], "lightgbm", {})
    params = {"objective": "lambdarank", "metric": "ndcg", "verbose": -1, "num_threads": 1}
    train = lgb.Dataset(np.zeros((3, 1)), np.array([0.0, 1.0, 2.0]), group=[3], params=params)
    booster = lgb.Booster(params, train)
    booster.add_valid(lgb.Dataset(np.zeros((3, 1)), np.array([0.0, 1.0, 2.0]), group=[3], reference=train, params=params), "v")
    assert [m.label for m in measures] == [ev.metric_name for ev in booster.eval_valid()]


def test_lightgbm_rejects_what_lightgbm_rejects() -> None:
    with pytest.raises(InputError, match="max_grade=30"):
        rankflavor.ndcg_score([[31, 0]], [[1.0, 0.0]], preset="lightgbm")
    with pytest.raises(InputError, match="negative"):
        rankflavor.ndcg_score([[-1, 2]], [[1.0, 0.0]], preset="lightgbm")
    with pytest.raises(InputError, match="max_grade=2"):
        rankflavor.ndcg_score([[3, 0]], [[1.0, 0.0]], preset="lightgbm", metric="ndcg@2(label_gain=0,1,3)")


def test_lightgbm_letor_run_matches_lightgbms_own_metrics() -> None:
    """The shipped LETOR case: LightGBM's recorded validation NDCG, from the TREC files, via the CLI."""
    qrels = shared_path("letor", "qrels.lightgbm-rank-test.txt")
    run = shared_path("letor", "lightgbm.rank-test.lambdarank20.run")
    recorded = json.loads(shared_path("letor", "lightgbm_metrics.json").read_text())["valid_ndcg"]
    args = ["eval", str(qrels), str(run), "--preset", "lightgbm", "--format", "json"]
    for name in recorded:
        args += ["-m", name]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    got = {m["name"]: m["value"] for m in json.loads(result.output)["measures"]}
    assert set(got) == set(recorded)
    for name, value in recorded.items():
        assert abs(got[name] - value) <= EXACT, (name, got[name], value)
    # the tied pairs in this run decide the fourth decimal: trec_eval's tie order misses it
    wrong = rankflavor.evaluate(str(qrels), str(run), ["ndcg@10"], preset="lightgbm", ties="docno_desc")
    assert abs(wrong["ndcg@10"].mean - recorded["ndcg@10"]) > 1e-5


# ---------------------------------------------------------------------------------------------
# XGBoost

XGB_METRICS = ("ndcg", "ndcg-", "ndcg@1", "ndcg@3", "ndcg@10-", "ndcg@40")


def compare_xgboost() -> dict[str, float]:
    found: dict[str, float] = {}
    theirs = xgboost_per_group("xgboost", XGB_METRICS)
    for metric in XGB_METRICS:
        found[metric] = worst(ours_metric("xgboost", "xgboost", metric), theirs[metric])
    theirs = xgboost_per_group("xgboost-linear", ("ndcg@5", "ndcg"), exp_gain=False)
    for metric in ("ndcg@5", "ndcg"):
        found[f"{metric}(ndcg_exp_gain=false)"] = worst(
            ours_metric("xgboost-linear", "xgboost", f"{metric}(ndcg_exp_gain=false)"), theirs[metric]
        )
    return found


def test_xgboost_matches_its_ndcg_on_random_groups() -> None:
    _require("xgboost")
    found = compare_xgboost()
    assert max(found.values()) <= EXACT, found
    theirs = xgboost_per_group("xgboost", XGB_METRICS)
    # bare ndcg is NDCG@32, not the whole group; scores compare as float32
    assert worst(ours("xgboost", None, "xgboost"), theirs["ndcg"]) > 1e-3
    assert worst(ours("xgboost", 3, "xgboost", precision="float64"), theirs["ndcg@3"]) > 1e-3


def test_xgboost_rejects_negative_labels_it_would_score_as_negative_gains() -> None:
    # XGBoost with ndcg_exp_gain=false scores labels [-1, 2, 0] as 0.174573 (flavor-facts §4.2);
    # rankflavor has no negative-gain knob, so it refuses instead of printing another number.
    with pytest.raises(InputError, match="negative"):
        rankflavor.ndcg_score([-1, 2, 0], [3.0, 2.0, 1.0], preset="xgboost", metric="ndcg(ndcg_exp_gain=false)", group=[3])


# ---------------------------------------------------------------------------------------------
# CatBoost

CB_METRICS = (
    "NDCG",
    "NDCG:top=3",
    "NDCG:top=10;type=Exp",
    "NDCG:denominator=Position",
    "NDCG:top=5;type=Exp;denominator=Position",
    "DCG:top=3",
    "DCG:type=Exp",
)


def compare_catboost() -> dict[str, float]:
    return {metric: worst(ours_metric("catboost", "catboost", metric), catboost_per_group("catboost", metric)) for metric in CB_METRICS}


def test_catboost_matches_eval_metric_on_random_groups() -> None:
    _require("catboost")
    found = compare_catboost()
    assert max(found.values()) <= EXACT, found
    from catboost.utils import eval_metric

    theirs = catboost_per_group("catboost", "NDCG:top=3")
    assert worst(ours("catboost", 3, "catboost", ties="input_order"), theirs) > 1e-3  # pessimistic ties matter
    groups = dataset("catboost")  # and the mean CatBoost reports over all groups at once
    mean = eval_metric(groups.labels, groups.scores, "NDCG:top=3", group_id=np.repeat(np.arange(len(groups)), groups.sizes))[0]
    assert abs(rankflavor.ndcg_score(groups.labels, groups.scores, 3, preset="catboost", group=groups.sizes) - mean) <= EXACT


# ---------------------------------------------------------------------------------------------
# flavor-facts §4.2 fingerprints (recorded by running each tool; the only oracle for RankLib)

Y = [3, 2, 3, 0, 1, 2]
S = [0.9, 0.8, 0.1, 0.7, 0.6, 0.3]
ST = [0.9, 0.6, 0.6, 0.7, 0.5, 0.3]
Y_REV = [3, 3, 2, 0, 1, 2]  # ST with doc1 and doc2 swapped in input order (their scores tie)
ZERO_Y, ZERO_S = [0, 0, 0], [0.3, 0.2, 0.1]


def _one(y: list[float], s: list[float], preset: str, k: int | None = None, **kw: Any) -> float:
    return float(rankflavor.ndcg_score([y], [s], k, preset=preset, **kw))


def _mean_with_zero_group(preset: str, k: int | None = 3, **kw: Any) -> float:
    return float(rankflavor.ndcg_score(Y + ZERO_Y, S + ZERO_S, k, preset=preset, group=[6, 3], **kw))


# (preset, extra arguments) -> {case: value}; cases: S@6, S@3, ST@6, ST@3, ST-rev@3, zero, mean@3
FINGERPRINTS: list[tuple[str, dict[str, Any], dict[str, float]]] = [
    ("sklearn", {}, {"S@6": 0.915119, "S@3": 0.723233, "ST@6": 0.899869, "ST@3": 0.721220, "ST-rev@3": 0.721220,
                     "zero": 0.0, "mean@3": 0.361616}),
    ("sklearn", {"ignore_ties": True}, {"S@6": 0.915119, "S@3": 0.723233, "ST@6": 0.904723, "ST@3": 0.763645}),
    ("sklearn", {"gain": "exp2"}, {"S@6": 0.889149, "S@3": 0.688482}),
    ("torchmetrics", {}, {"S@6": 0.915119, "S@3": 0.723233, "ST@6": 0.899869, "ST@3": 0.721220, "zero": 0.0,
                          "mean@3": 0.361616}),
    ("torchmetrics", {"empty": "one"}, {"mean@3": 0.861616}),
    ("torchmetrics", {"empty": "skip"}, {"mean@3": 0.723233}),
    ("lightgbm", {}, {"S@6": 0.889149, "S@3": 0.688482, "ST@6": 0.888651, "ST@3": 0.658073, "ST-rev@3": 0.812913,
                      "zero": 1.0, "mean@3": 0.844241}),
    ("xgboost", {}, {"S@6": 0.889149, "S@3": 0.688482, "ST@6": 0.888651, "ST@3": 0.658073, "ST-rev@3": 0.812913,
                     "zero": 1.0, "mean@3": 0.844241}),
    ("xgboost", {"empty": "zero"}, {"S@6": 0.889149, "S@3": 0.688482, "zero": 0.0, "mean@3": 0.344241}),
    ("xgboost", {"gain": "linear", "max_grade": "none"}, {"S@6": 0.915119, "S@3": 0.723233}),
    ("catboost", {}, {"S@6": 0.915119, "S@3": 0.723233, "ST@6": 0.895015, "ST@3": 0.678796, "ST-rev@3": 0.678796,
                      "zero": 1.0, "mean@3": 0.861616}),
    ("catboost", {"gain": "exp2"}, {"S@6": 0.889149, "S@3": 0.688482, "ST@6": 0.888651, "ST@3": 0.658073,
                                    "ST-rev@3": 0.658073, "zero": 1.0, "mean@3": 0.844241}),
    ("catboost", {"discount": "reciprocal"}, {"S@6": 0.877841, "ST@6": 0.84375, "zero": 1.0}),
    ("catboost", {"gain": "exp2", "discount": "reciprocal"}, {"S@3": 0.739130, "ST@3": 0.695652, "zero": 1.0,
                                                              "mean@3": 0.869565}),
    ("ranklib", {}, {"S@6": 0.889149, "S@3": 0.688482, "ST@6": 0.888651, "ST@3": 0.658073, "ST-rev@3": 0.812913,
                     "zero": 0.0}),
]


def _case(name: str, preset: str, kw: dict[str, Any]) -> float:
    if name == "zero":
        return _one(ZERO_Y, ZERO_S, preset, None, **kw)
    if name == "mean@3":
        return _mean_with_zero_group(preset, 3, **kw)
    run, k = name.split("@")
    y, s = {"S": (Y, S), "ST": (Y, ST), "ST-rev": (Y_REV, ST)}[run]
    return _one(y, s, preset, int(k), **kw)


@pytest.mark.parametrize(("preset", "kw", "expected"), FINGERPRINTS, ids=[f"{p}-{kw}" for p, kw, _ in FINGERPRINTS])
def test_section_4_2_fingerprints(preset: str, kw: dict[str, Any], expected: dict[str, float]) -> None:
    got = {name: _case(name, preset, kw) for name in expected}
    for name, value in expected.items():
        assert abs(got[name] - value) <= 5e-7, (name, got[name], value)


def test_section_4_2_probes() -> None:
    # torchmetrics: 0.5+1e-12 and 0.5 tie in float32; scikit-learn (float64) ranks them apart
    assert abs(_one([0, 1], [0.5 + 1e-12, 0.5], "torchmetrics") - 0.815465) <= 5e-7
    assert abs(_one([0, 1], [0.5 + 1e-12, 0.5], "sklearn") - 0.630930) <= 5e-7
    assert abs(float(rankflavor.dcg_score([Y], [S], 6)) - 6.534863) <= 5e-7
    assert rankflavor.ndcg_score([[0, 0, 0], [1, 0, 2]], [[0.3, 0.2, 0.1], [0.2, 0.1, 0.3]]) == 0.5
    # scikit-learn refuses a one-document list; kept, it scores as an all-zero row
    with pytest.raises(EvaluationError, match=r"single document \(q1\)"):
        rankflavor.ndcg_score([1, 0, 2, 0], [0.2, 0.1, 0.3, 0.0], group=[3, 1], preset="sklearn")
    kept = rankflavor.ndcg_score([1, 0, 2, 0], [0.2, 0.1, 0.3, 0.0], group=[3, 1], preset="sklearn", singletons="keep")
    assert abs(kept - 0.5) <= EXACT
    # XGBoost, a 40-document group whose only relevant document is ranked last
    y40, s40 = [0] * 39 + [1], [-float(i) for i in range(40)]
    assert _one(y40, s40, "xgboost", metric="ndcg") == 0.0
    assert _one(y40, s40, "xgboost", metric="ndcg@32") == 0.0
    assert abs(_one(y40, s40, "xgboost", metric="ndcg@40") - 0.1867) <= 5e-5


def test_ranklib_qrel_ideal_from_every_judgment() -> None:
    """RankLib -qrel with an extra unretrieved grade-3 document (flavor-facts §4.2 probe)."""
    qrels = {"q": {**{f"d{i}": g for i, g in enumerate(Y)}, "unretrieved": 3}}
    run = {"q": {f"d{i}": s for i, s in enumerate(S)}}
    res = rankflavor.evaluate(qrels, run, ["NDCG@3", "NDCG@6"], preset="ranklib_qrel")
    assert abs(res["NDCG@3"].mean - 0.596171) <= 5e-7
    assert abs(res["NDCG@6"].mean - 0.732144) <= 5e-7
    plain = rankflavor.evaluate(qrels, run, ["NDCG@3", "NDCG@6"], preset="ranklib")
    assert abs(plain["NDCG@3"].mean - 0.688482) <= 5e-7
    assert abs(plain["NDCG@6"].mean - 0.889149) <= 5e-7


def test_ranklib_truncates_float_labels() -> None:
    """flavor-facts §4.2 probe: labels [0.5, 1.7, 0] -> RankLib 0.630930 (labels truncated to int)."""
    assert abs(_one([0.5, 1.7, 0], [3.0, 2.0, 1.0], "ranklib", 3) - 0.630930) <= 5e-7


# ---------------------------------------------------------------------------------------------
# Dialects


@pytest.mark.parametrize(
    ("preset", "name", "metric", "k", "knobs"),
    [
        ("sklearn", "ndcg@10", "ndcg", 10, {"ties": "averaged", "ideal": "local", "empty": "zero"}),
        ("sklearn", "ndcg_score(k=5, ignore_ties=True)", "ndcg", 5, {"ties": "docno_desc"}),
        ("sklearn", "dcg@3(log_base=2)", "dcg", 3, {"gain": "linear", "discount": "log2"}),
        ("sklearn", "dcg_score(k=3, log_base=10)", "dcg", 3, {"discount": "log(10)"}),
        ("torchmetrics", "RetrievalNormalizedDCG(top_k=3, empty_target_action='skip')", "ndcg", 3,
         {"empty": "skip", "precision": "float32"}),
        ("lightgbm", "ndcg@10", "ndcg", 10, {"gain": "exp2", "ties": "input_order", "empty": "one", "max_grade": "30"}),
        ("lightgbm", "ndcg@2(label_gain=0,1,3)", "ndcg", 2, {"gain": "{0:0,1:1,2:3}", "max_grade": "2"}),
        ("xgboost", "ndcg", "ndcg", 32, {"empty": "one", "precision": "float32"}),
        ("xgboost", "ndcg-", "ndcg", 32, {"empty": "zero"}),
        ("xgboost", "ndcg@7-", "ndcg", 7, {"empty": "zero"}),
        ("xgboost", "ndcg@7(ndcg_exp_gain=false)", "ndcg", 7, {"gain": "linear"}),
        ("catboost", "NDCG", "ndcg", None, {"gain": "linear", "ties": "pessimistic", "empty": "one"}),
        ("catboost", "NDCG:top=10;type=Exp;denominator=Position", "ndcg", 10, {"gain": "exp2", "discount": "reciprocal"}),
        ("catboost", "NDCG:top=-1", "ndcg", None, {}),
        ("ranklib", "NDCG", "ndcg", 10, {"gain": "exp2", "empty": "zero", "ideal": "local"}),
        ("ranklib", "NDCG@0", "ndcg", None, {}),
        ("ranklib_qrel", "NDCG@5", "ndcg", 5, {"ideal": "global", "ideal_cut": "k"}),
    ],
)
def test_dialect(preset: str, name: str, metric: str, k: int | None, knobs: dict[str, str]) -> None:
    measures, _ = resolve_measures([name], preset, {})
    assert len(measures) == 1
    m = measures[0]
    assert (m.metric, m.k) == (metric, k)
    for knob, value in knobs.items():
        assert getattr(m.flavor, knob) == value, knob
    assert m.preset == preset
    assert str(m) == str(rankflavor.parse_measure(str(m)))  # the flavor string parses back


@pytest.mark.parametrize(
    ("preset", "name", "message"),
    [
        ("sklearn", "ndcg@3(ignore_tie=True)", "unknown argument 'ignore_tie'"),
        ("sklearn", "ndcg(log_base=10)", "unknown argument 'log_base'"),
        ("sklearn", "dcg@3(log_base=1)", "needs b > 1"),
        ("sklearn", "dcg@3(log_base=0)", "must be in (0, inf)"),
        ("sklearn", "ndcg@3(ignore_ties=maybe)", "true or false"),
        ("sklearn", "ndcg@3(k=4)", "give the cutoff once"),
        ("torchmetrics", "RetrievalNormalizedDCG(empty_target_action=zero)", "neg, pos, skip, error"),
        ("torchmetrics", "RetrievalNormalizedDCG(aggregation=median)", "not modelled"),
        ("lightgbm", "map@5", "not modelled by preset lightgbm"),
        ("lightgbm", "ndcg@3(label_gain=a,b)", "list of numbers"),
        ("xgboost", "ndcg@3(exp_gain=false)", "unknown argument"),
        ("catboost", "NDCG:top=0", "top must be -1"),
        ("catboost", "NDCG:type=Linear", "Base or Exp"),
        ("catboost", "NDCG:denominator=Log", "LogPosition or Position"),
        ("catboost", "NDCG:tpo=3", "unknown parameter 'tpo'"),
        ("catboost", "MAP:top=10", "not modelled by preset catboost"),
        ("ranklib", "P@10", "min(k, list size)"),
        ("ranklib_qrel", "NDCG@0", "scores every query 0"),
    ],
)
def test_dialect_errors(preset: str, name: str, message: str) -> None:
    with pytest.raises(FlavorError, match=re.escape(message)):
        resolve_measures([name], preset, {})


def test_every_ml_preset_is_registered_with_evidence() -> None:
    for name in ("sklearn", "torchmetrics", "lightgbm", "xgboost", "catboost", "ranklib", "ranklib_qrel"):
        preset = get_preset(name)
        assert preset.flavor.ideal in ("local", "global") and preset.evidence and preset.dialect is not None
        measures, _ = resolve_measures(list(preset.default_metrics), name, {})
        assert measures and all(m.preset == name for m in measures)
        # torchmetrics names its other retrieval metrics too (tests/presets/test_presets_torchmetrics.py)
        assert all(m.metric == "ndcg" for m in measures) or name == "torchmetrics"


# ---------------------------------------------------------------------------------------------
# Array API arguments

BAD_CALLS: list[tuple[Callable[[], object], type[Exception], str]] = [
    (lambda: rankflavor.ndcg_score([[1, 0]], [[1.0, 0.0, 2.0]]), UsageError, "same shape"),
    (lambda: rankflavor.ndcg_score([1, 0], [1.0, 0.0]), UsageError, "group="),
    (lambda: rankflavor.ndcg_score([1, 0], [1.0, 0.0], group=[3]), UsageError, "sum to the number of rows, 2"),
    (lambda: rankflavor.ndcg_score([1, 0], [1.0, 0.0], group=[2], qid=[0, 0]), UsageError, "not both"),
    (lambda: rankflavor.ndcg_score([1, 0], [1.0, 0.0], group=[0, 2]), UsageError, "group sizes must be >= 1"),
    (lambda: rankflavor.ndcg_score([1, 0], [1.0, 0.0], qid=[0]), UsageError, "one query id per row"),
    (lambda: rankflavor.ndcg_score([[1, 0]], [[1.0, float("nan")]]), UsageError, "y_score[0, 1] is nan"),
    (lambda: rankflavor.ndcg_score([[1, 0]], [[1.0, 0.0]], k=0), UsageError, "k must be a whole number >= 1"),
    (lambda: rankflavor.ndcg_score([[1, 0]], [[1.0, 0.0]], sample_weight=[1, 2]), UsageError, "one weight per query"),
    (lambda: rankflavor.ndcg_score([[-1, 2]], [[1.0, 0.0]]), InputError, "negative"),
    (lambda: rankflavor.ndcg_score([[1, 0]], [[1.0, 0.0]], preset="lightgbm", ignore_ties=True), UsageError, "ignore_ties"),
    (lambda: rankflavor.ndcg_score([[1, 0]], [[1.0, 0.0]], 3, preset="xgboost", metric="ndcg@3"), UsageError, "not both"),
    (lambda: rankflavor.ndcg_score([[1, 0]], [[1.0, 0.0]], preset="lightgbm", metric="ndcg"), UsageError, "names 5 measures"),
    (lambda: rankflavor.ndcg_score([[1, 0]], [[1.0, 0.0]], preset="sklern"), FlavorError, "Did you mean 'sklearn'"),
    (lambda: rankflavor.ndcg_score([[1, 0]], [[1.0, 0.0]], gian="exp2"), FlavorError, "unknown flavor knob 'gian'"),
]


@pytest.mark.parametrize(("call", "error", "message"), BAD_CALLS)
def test_array_api_errors(call: Callable[[], object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        call()


def test_array_api_knobs_override_the_preset() -> None:
    # scikit-learn fed 2^y - 1 equals the exp2 gain knob (flavor-facts §4.2)
    assert abs(_one(Y, S, "sklearn", 3, gain="exp2") - 0.688482) <= 5e-7
    # empty=skip leaves the all-zero group out of the mean and marks it NaN per query
    per = rankflavor.ndcg_score(Y + ZERO_Y, S + ZERO_S, 3, group=[6, 3], empty="skip", per_query=True)
    assert isinstance(per, np.ndarray)
    assert np.isnan(per[1]) and abs(per[0] - 0.723233) <= 5e-7
    # preset=None is rankflavor's own default flavor (global ideal = every label of the group)
    assert abs(_one(Y, S, None, 3) - 0.723233) <= 5e-7
