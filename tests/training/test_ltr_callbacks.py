"""Training-time metrics (rankflavor.lightgbm, rankflavor.xgboost) against the real libraries.

Each test trains a small model with the callable, records what the library logged, then
predicts the validation set at a few iterations and evaluates those scores with
:func:`rankflavor.evaluate` (the reference: the engine on dict inputs, not the callable's
path); and the preset flavors are compared with the libraries' own ``ndcg@k`` logged in the same
run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rankflavor
from rankflavor.errors import FlavorError, UsageError

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

ROUNDS = 12
CHECKED = (1, 2, 5, ROUNDS)


def groups(seed: int, n_groups: int = 80, sizes: tuple[int, int] = (2, 16), equal: int | None = None):
    """Features, labels 0-4 (some groups all 0) and group sizes."""
    rng = np.random.default_rng(seed)
    size = np.full(n_groups, equal) if equal else rng.integers(sizes[0], sizes[1], n_groups)
    n = int(size.sum())
    x = rng.normal(size=(n, 6))
    label = np.clip(np.round(x[:, 0] + 0.7 * x[:, 1] + rng.normal(scale=0.8, size=n) + 1), 0, 4)
    group_of = np.repeat(np.arange(n_groups), size)
    label[np.isin(group_of, rng.choice(n_groups, n_groups // 8, replace=False))] = 0
    return x, label, size


def reference(label: np.ndarray, size: np.ndarray, scores: np.ndarray, measure: str) -> float:
    """rankflavor.evaluate on {query: {doc: ...}} dicts: documents named by zero-padded position
    (byte order = array order), inserted in array order."""
    qrels: dict[str, dict[str, float]] = {}
    run: dict[str, dict[str, float]] = {}
    start = 0
    for g, n in enumerate(size):
        rows = range(start, start + int(n))
        qrels[f"q{g:04d}"] = {f"{j - start:03d}": float(label[j]) for j in rows}
        run[f"q{g:04d}"] = {f"{j - start:03d}": float(scores[j]) for j in rows}
        start += int(n)
    return rankflavor.evaluate(qrels, run, measure)[0].mean


def lgb_data(seed: int, **kw):
    x, y, g = groups(seed, **kw)
    xv, yv, gv = groups(seed + 100, **kw)
    train = lgb.Dataset(x, y, group=g, params={"verbose": -1, "min_data_in_leaf": 5})
    valid = lgb.Dataset(xv, yv, group=gv, reference=train)
    return train, valid, (xv, yv, gv)


PARAMS = {"objective": "lambdarank", "verbose": -1, "num_leaves": 7, "learning_rate": 0.3, "min_data_in_leaf": 5,
          "num_threads": 1, "deterministic": True, "seed": 3}


def test_lightgbm_train_logs_what_evaluate_computes() -> None:
    measures = ["ndcg@5[gain=exp2]", "lightgbm:ndcg@3", "trec_eval:ndcg_cut.10"]
    metric = rankflavor.lightgbm.eval_metric(measures)
    train, valid, (xv, yv, gv) = lgb_data(1)
    log: dict = {}
    booster = lgb.train({**PARAMS, "metric": "None"}, train, ROUNDS, valid_sets=[valid], valid_names=["v"],
                        feval=metric, callbacks=[lgb.record_evaluation(log)])
    assert list(log["v"]) == ["rankflavor:ndcg@5[gain=exp2]", "rankflavor:lightgbm:ndcg@3",
                              "rankflavor:trec_eval:ndcg_cut.10"]
    for it in CHECKED:
        scores = booster.predict(xv, num_iteration=it, raw_score=True)
        for name, measure in zip(metric.names, measures, strict=True):
            assert log["v"][name][it - 1] == pytest.approx(reference(yv, gv, scores, measure), abs=1e-12), (it, name)
    series = log["v"]["rankflavor:lightgbm:ndcg@3"]
    assert len(set(series)) > 2  # the model moves: the values are not a constant that would pass anyway


def test_lightgbm_preset_reproduces_lightgbms_own_ndcg() -> None:
    metric = rankflavor.lightgbm.eval_metric(["lightgbm:ndcg@1", "lightgbm:ndcg@3", "lightgbm:ndcg@10"])
    train, valid, _ = lgb_data(2)
    log: dict = {}
    lgb.train({**PARAMS, "metric": "ndcg", "eval_at": [1, 3, 10]}, train, ROUNDS, valid_sets=[valid],
              valid_names=["v"], feval=metric, callbacks=[lgb.record_evaluation(log)])
    for k in (1, 3, 10):
        theirs, ours = np.array(log["v"][f"ndcg@{k}"]), np.array(log["v"][f"rankflavor:lightgbm:ndcg@{k}"])
        assert np.abs(theirs - ours).max() < 1e-6, k
    # the flavor matters on these data: a different tie rule or gain is visibly off
    other = rankflavor.lightgbm.eval_metric("ndcg@3[gain=linear,ideal=local,empty=one,ties=input_order]")
    log2: dict = {}
    lgb.train({**PARAMS, "metric": "ndcg", "eval_at": [3]}, train, 4, valid_sets=[valid], valid_names=["v"],
              feval=other, callbacks=[lgb.record_evaluation(log2)])
    assert np.abs(np.array(log2["v"]["ndcg@3"]) - np.array(log2["v"][other.names[0]])).max() > 1e-3


def test_lightgbm_default_ndcg_logs_eval_at_1_to_5() -> None:
    metric = rankflavor.lightgbm.eval_metric("lightgbm:ndcg")
    assert metric.names == [f"rankflavor:lightgbm:ndcg@{k}" for k in range(1, 6)]


def test_lgbm_ranker_eval_metric() -> None:
    x, y, g = groups(3)
    xv, yv, gv = groups(103)
    metric = rankflavor.lightgbm.eval_metric("lightgbm:ndcg@5")
    model = lgb.LGBMRanker(n_estimators=6, num_leaves=7, min_child_samples=5, verbose=-1, n_jobs=1)
    model.fit(x, y, group=g, eval_X=(xv,), eval_y=(yv,), eval_group=[gv], eval_metric=metric, eval_at=[5])
    logged = model.evals_result_["valid_0"]
    assert np.abs(np.array(logged["ndcg@5"]) - np.array(logged["rankflavor:lightgbm:ndcg@5"])).max() < 1e-6
    last = model.predict(xv, raw_score=True)
    assert logged["rankflavor:lightgbm:ndcg@5"][-1] == pytest.approx(reference(yv, gv, last, "lightgbm:ndcg@5"),
                                                                      abs=1e-12)


def xgb_data(seed: int, **kw):
    x, y, g = groups(seed, **kw)
    xv, yv, gv = groups(seed + 100, **kw)
    qid = np.repeat(np.arange(len(g)), g)
    qv = np.repeat(np.arange(len(gv)), gv)
    return xgb.DMatrix(x, y, qid=qid), xgb.DMatrix(xv, yv, qid=qv), (xv, yv, gv, qv)


XGB_PARAMS = {"objective": "rank:ndcg", "max_depth": 3, "eta": 0.3, "nthread": 1, "seed": 3}


def test_xgboost_train_logs_what_evaluate_computes() -> None:
    measures = ["xgboost:ndcg@5", "ndcg@5[gain=exp2]"]
    metric = rankflavor.xgboost.eval_metric(measures)
    dtrain, dvalid, (_, yv, gv, _) = xgb_data(4)
    log: dict = {}
    booster = xgb.train({**XGB_PARAMS, "eval_metric": "ndcg@5"}, dtrain, ROUNDS, evals=[(dvalid, "v")],
                        custom_metric=metric, maximize=metric.maximize, evals_result=log, verbose_eval=False)
    for it in CHECKED:
        scores = booster.predict(dvalid, iteration_range=(0, it), output_margin=True)
        for name, measure in zip(metric.names, measures, strict=True):
            # XGBoost prints a custom metric with %f: rankflavor's value to six decimals
            assert log["v"][name][it - 1] == float(f"{reference(yv, gv, scores, measure):f}"), (it, name)
    assert metric.names == ["rankflavor.xgboost.ndcg@5", "rankflavor.ndcg@5[gain=exp2]"]
    # the preset reproduces XGBoost's own ndcg@5, logged in the same run
    assert np.abs(np.array(log["v"]["ndcg@5"]) - np.array(log["v"]["rankflavor.xgboost.ndcg@5"])).max() < 1e-6
    assert len(set(log["v"]["rankflavor.xgboost.ndcg@5"])) > 2


def test_xgb_ranker_eval_metric_with_equal_groups() -> None:
    # XGBRanker calls the metric group by group and weights the mean by group size: equal sizes
    # make that the plain mean over queries.
    x, y, _ = groups(5, n_groups=40, equal=8)
    xv, yv, gv = groups(105, n_groups=40, equal=8)
    metric = rankflavor.xgboost.eval_metric("xgboost:ndcg@5")
    model = xgb.XGBRanker(n_estimators=5, max_depth=3, eval_metric=metric, n_jobs=1)
    model.fit(x, y, qid=np.repeat(np.arange(40), 8), eval_set=[(xv, yv)], eval_qid=[np.repeat(np.arange(40), 8)],
              verbose=False)
    logged = model.evals_result()["validation_0"]["rankflavor.xgboost.ndcg@5"]
    last = model.predict(xv, output_margin=True)
    assert logged[-1] == float(f"{reference(yv, gv, last, 'xgboost:ndcg@5'):f}")


def test_refusals() -> None:
    with pytest.raises(FlavorError):
        rankflavor.lightgbm.eval_metric("lightgbm:map@5")  # not modelled: refused, not silently another metric
    with pytest.raises(UsageError, match="summarised"):
        rankflavor.lightgbm.eval_metric("trec_eval:num_ret")
    with pytest.raises(UsageError, match="same name"):
        rankflavor.lightgbm.eval_metric(["ndcg@5", "ndcg@5"])
    metric = rankflavor.xgboost.eval_metric("ndcg@3")
    with pytest.raises(UsageError, match="query groups"):
        metric(np.zeros(3), xgb.DMatrix(np.zeros((3, 1)), np.array([0.0, 1.0, 2.0])))
    with pytest.raises(UsageError, match="finite"):
        rankflavor.lightgbm.eval_metric("ndcg@3")(np.array([0.0, 1.0]), np.array([np.nan, 1.0]), None,
                                                  np.array([2]))
    assert rankflavor.xgboost.eval_metric("rbp_resid").maximize is False


RESCORED = ["ndcg@5", "ndcg@5[ties=averaged,gain=exp2]", "ndcg@4[ties=pessimistic,depth=6]", "lightgbm:ndcg@3",
            "xgboost:ndcg@4", "ndcg@5[ties=docno_asc,precision=float32,ideal_cut=hits]", "AP", "P@3", "nERR@5[max_grade=4]",
            "ndcg@3[ideal=local,depth=4]", "catboost:NDCG:top=4",
            # the block ranker's rows down to the deepest rank a measure reads (reads_to), under
            # each ideal, and an ordering whose measures read every row (ndcg uncut)
            "ndcg@3[ideal=recall@6]", "ndcg@4[ideal=max,max_grade=4]", "ndcg@3[ideal_cut=none,ties=docno_desc]",
            "dcg@2[ties=optimistic]", "ndcg@2[ideal=local]", "ndcg@6[ties=input_order]", "ndcg[ties=input_order]",
            "ndcg@20[ties=input_order]"]


def test_rescorer_equals_evaluate_on_tied_scores() -> None:
    # every path of the rescorer (the block ranker under each tie rule, the general ranker under
    # depth) against rankflavor.evaluate, on scores rounded so that ties are everywhere
    from rankflavor.training.rescore import Rescorer

    _, label, size = groups(9, n_groups=50)
    rescorer = Rescorer(label, group=size, metrics=RESCORED)
    rng = np.random.default_rng(9)
    for _ in range(3):
        scores = np.round(rng.normal(size=len(label)), 1)
        got = rescorer.means(scores)
        for measure, value in zip(RESCORED, got, strict=True):
            assert value == pytest.approx(reference(label, size, scores, measure), abs=1e-12), measure


def test_example_trains_and_logs() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "lightgbm_ranker.py"
    out = subprocess.run([sys.executable, str(example), "--queries", "40", "--docs", "10", "--rounds", "3"],
                         check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("round"))  # after LightGBM's own log lines
    assert "rankflavor:lightgbm:ndcg@10" in lines[head] and "rankflavor:ndcg@10[gain=exp2]" in lines[head]
    rows = [line.split() for line in lines[head + 1:head + 4]]
    assert [r[0] for r in rows] == ["1", "2", "3"]
    for r in rows:  # LightGBM's ndcg@10 and the preset agree to the printed digits
        assert r[1] == r[2]
