"""Train a small LightGBM ranker on generated data and log its validation NDCG in pinned flavors.

Each round logs LightGBM's own ``ndcg@10`` beside two rankflavor measures computed by the same
engine as ``rankflavor eval``: ``lightgbm:ndcg@10`` (LightGBM's flavor, so the two columns agree)
and ``ndcg@10[gain=exp2]`` (trec_eval's flavor with exponential gain: another number, named as such).

    python3 examples/lightgbm_ranker.py                 # 500 queries x 30 documents, 30 rounds
    python3 examples/lightgbm_ranker.py --queries 100 --rounds 5
"""

from __future__ import annotations

import argparse

import lightgbm as lgb
import numpy as np

import rankflavor.lightgbm


def make(rng: np.random.Generator, queries: int, docs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, graded labels 0-4 that depend on the first features, and group sizes."""
    x = rng.normal(size=(queries * docs, 8))
    relevance = x[:, 0] + 0.5 * x[:, 1] + rng.normal(scale=0.8, size=len(x))
    return x, np.clip(np.round(relevance + 0.5), 0, 4), np.full(queries, docs)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--docs", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args(argv)

    rng = np.random.default_rng(0)
    x, y, group = make(rng, args.queries, args.docs)
    xv, yv, group_v = make(rng, args.queries // 4 or 1, args.docs)
    train = lgb.Dataset(x, y, group=group)
    valid = lgb.Dataset(xv, yv, group=group_v, reference=train)

    metric = rankflavor.lightgbm.eval_metric(["lightgbm:ndcg@10", "ndcg@10[gain=exp2]"])
    log: dict = {}
    params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [10], "verbose": -1, "num_threads": 1}
    lgb.train(params, train, args.rounds, valid_sets=[valid], valid_names=["valid"], feval=metric,
              callbacks=[lgb.record_evaluation(log), lgb.log_evaluation(period=max(args.rounds // 5, 1))])

    columns = ["ndcg@10", *metric.names]
    print("round  " + "  ".join(f"{c:>30}" for c in columns))
    for i in range(args.rounds):
        print(f"{i + 1:5d}  " + "  ".join(f"{log['valid'][c][i]:30.6f}" for c in columns))
    for name, flavor in zip(metric.names, metric.flavors, strict=True):
        print(f"{name}: {flavor}")


if __name__ == "__main__":
    main()
