"""What the rankflavor LightGBM metric adds to a training run, next to LightGBM's own ndcg.

Trains a LambdaRank model for ``--rounds`` (100) iterations on ``--queries`` (10,000) queries of
``--docs`` (50) documents with ``--features`` (20) random features, and evaluates NDCG@10 on a
validation set of the same shape at every iteration, three ways, in alternating rounds on the same
constructed data sets:

* builtin: ``params["metric"] = "ndcg"``, ``eval_at=[10]`` (LightGBM's C++ metric);
* interface: ``metric="None"`` and a ``feval`` that returns a constant: what LightGBM itself costs
  to hand every round's predictions to any Python metric (``Booster.__inner_predict``);
* rankflavor: ``metric="None"``, ``feval=rankflavor.training.lightgbm.eval_metric("lightgbm:ndcg@10")``
  (or ``--flavor``: another flavor's cost, e.g. ``ndcg@10``, rankflavor's defaults).

It prints the best of ``--repeat`` rounds of each, their ratio (the requirement: at most 1.10),
process CPU time beside wall clock (less moved by other processes on a shared machine), the
time spent inside the rankflavor callable (its own calls timed, the first one, which prepares
the groups, included: each run makes a new metric, as a training run does), and the largest difference
between the two logged series (the preset reproduces LightGBM's ndcg@10).

Usage::

    python3 bench/bench_callbacks.py                       # 10,000 x 50, 100 rounds, best of 3
    python3 bench/bench_callbacks.py --queries 1000 --rounds 20 --repeat 1   # a quick run
    python3 bench/bench_callbacks.py --flavor "ndcg@10[ties=averaged]"      # another flavor's cost

Timings are wall-clock on whatever else the machine is doing; LightGBM uses ``--threads``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np


def data(rng: np.random.Generator, queries: int, docs: int, features: int) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(size=(queries * docs, features))
    signal = x[:, :3] @ np.array([1.0, 0.6, 0.3]) + rng.normal(scale=1.0, size=len(x))
    return x, np.clip(np.round(signal + 0.5), 0, 4)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--docs", type=int, default=50)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--flavor", default="lightgbm:ndcg@10", help="the measure the callable logs")
    args = ap.parse_args(argv)

    import lightgbm as lgb

    import rankflavor.training.lightgbm

    rng = np.random.default_rng(args.seed)
    group = np.full(args.queries, args.docs)
    x, y = data(rng, args.queries, args.docs, args.features)
    xv, yv = data(rng, args.queries, args.docs, args.features)
    train = lgb.Dataset(x, y, group=group, params={"verbose": -1}).construct()
    valid = lgb.Dataset(xv, yv, group=group, reference=train, params={"verbose": -1}).construct()
    base = {"objective": "lambdarank", "verbose": -1, "num_threads": args.threads, "seed": args.seed}

    name = rankflavor.training.lightgbm.eval_metric(args.flavor).names[0]
    inside = [0.0]
    metric: list[Any] = []

    def timed(preds: Any, dataset: Any) -> Any:
        t = time.perf_counter()
        out = metric[0](preds, dataset)
        inside[0] += time.perf_counter() - t
        return out

    def constant(preds: Any, dataset: Any) -> Any:
        return ("constant", 0.0, True)

    def run(arm: str) -> tuple[float, float, dict[str, Any]]:
        log: dict[str, Any] = {}
        # A new metric every run: its first call (the groups and labels prepared) is timed too.
        metric[:] = [rankflavor.training.lightgbm.eval_metric(args.flavor)]
        params = {**base, "metric": "ndcg", "eval_at": [10]} if arm == "builtin" else {**base, "metric": "None"}
        feval = {"builtin": None, "interface": constant, "rankflavor": timed}[arm]
        t, c = time.perf_counter(), time.process_time()
        lgb.train(params, train, args.rounds, valid_sets=[valid], valid_names=["valid"], feval=feval,
                  callbacks=[lgb.record_evaluation(log)])
        return time.perf_counter() - t, time.process_time() - c, log["valid"]

    arms = ("builtin", "interface", "rankflavor")
    wall: dict[str, list[float]] = {arm: [] for arm in arms}
    cpu: dict[str, list[float]] = {arm: [] for arm in arms}
    inside_runs: list[float] = []
    logs: dict[str, Any] = {}
    for _ in range(args.repeat):  # alternate, so drift in the machine's load hits every arm alike
        for arm in arms:
            inside[0] = 0.0
            seconds, cpu_seconds, logs[arm] = run(arm)
            wall[arm].append(seconds)
            cpu[arm].append(cpu_seconds)
        inside_runs.append(inside[0])
    best = {arm: min(wall[arm]) for arm in arms}
    least = {arm: min(cpu[arm]) for arm in arms}
    paired = np.array(wall["rankflavor"]) / np.array(wall["builtin"])  # each repeat's own ratio
    inside_best = min(inside_runs)
    theirs = np.array(logs["builtin"]["ndcg@10"])
    ours = np.array(logs["rankflavor"][name])
    print(f"data        {args.queries} queries x {args.docs} documents, {args.features} features (train and valid)")
    print(f"training    lambdarank, {args.rounds} rounds, {args.threads} threads; ndcg@10 on valid every round")
    print(f"builtin     {best['builtin']:.2f} s   last ndcg@10 {theirs[-1]:.6f}")
    print(f"interface   {best['interface']:.2f} s   (a feval returning a constant: LightGBM handing the "
          f"predictions to Python, {1000 * (best['interface'] - best['builtin']) / args.rounds:+.1f} ms a round "
          "against the builtin)")
    print(f"rankflavor  {best['rankflavor']:.2f} s   last {name} {ours[-1]:.6f}   "
          f"(inside the callable {inside_best:.2f} s, {1000 * inside_best / args.rounds:.1f} ms a round)")
    print(f"ratio       {best['rankflavor'] / best['builtin']:.3f}x wall clock, "
          f"{least['rankflavor'] / least['builtin']:.3f}x process CPU time ({least['builtin']:.2f} s vs "
          f"{least['rankflavor']:.2f} s; best of {args.repeat}); each repeat's wall ratio "
          f"{' '.join(f'{r:.3f}' for r in paired)}, median {float(np.median(paired)):.3f}")
    print(f"vs feval    {best['rankflavor'] / best['interface']:.3f}x wall clock against the constant feval "
          "(what rankflavor's own work adds)")
    print(f"load        {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min) at the end")
    if args.flavor == "lightgbm:ndcg@10":  # the same flavor: the two series must agree
        print(f"agreement   max |rankflavor - builtin| over the rounds: {np.abs(ours - theirs).max():.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
