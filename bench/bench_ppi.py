"""Coverage of the nominal 90 % intervals of ``rankflavor.estimate``'s three estimators, measured
on simulated LLM judges.

The population is a realistic distribution of per-query NDCG@10: the per-query ``ndcg_cut_10``
values trec_eval 9.0.8 printed for the TREC DL 2019 passage runs in
``shared/data/expected/rankllm.dl19.*.all_trec.q.c.txt`` (5 runs x 43 queries), or, when that
data is absent, 200 draws of a Beta(2, 2) (said in the output). Its mean is the target.

Each seeded trial draws ``n`` labelled and ``N`` unlabelled queries from it with replacement.
A judge gives each query the value ``clip(truth + bias + noise, 0, 1)``, ``noise ~ N(0, sd)``:

* ``noisy``: bias 0, sd 0.15;
* ``biased``: bias +0.10, sd 0.10 (an LLM that grades generously);
* ``unrelated``: the value of another query drawn at random (a judge that knows nothing).

On every trial the script computes, with the library's own functions
(:mod:`rankflavor.analysis.estimate.ppi`): human only (the labelled truths), LLM only (every judge value),
PPI++ (lambda tuned) and plain PPI (lambda = 1), and counts how often each interval covers the
population mean. The Monte Carlo standard error of a coverage near 0.9 over ``T`` trials is
``sqrt(0.09 / T)``. The script exits with status 1 when a PPI coverage is more than 2 points from
nominal.

Usage::

    python3 bench/bench_ppi.py                          # 2,000 trials, n = 100, N = 1,000
    python3 bench/bench_ppi.py --trials 1000 --n 50 --big-n 500
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
EXPECTED = HERE.parent.parent / "shared" / "data" / "expected"

JUDGES = {"noisy": (0.0, 0.15), "biased": (0.10, 0.10), "unrelated": (None, None)}


def population() -> tuple[np.ndarray, str]:
    """Per-query NDCG@10 of the DL19 runs as trec_eval printed them, else a Beta(2, 2) stand-in."""
    values = []
    for path in sorted(EXPECTED.glob("rankllm.dl19.*.all_trec.q.c.txt")):
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == "ndcg_cut_10" and parts[1] != "all":
                values.append(float(parts[2]))
    if values:
        return np.asarray(values), f"DL19 per-query ndcg_cut_10 of trec_eval 9.0.8 ({len(values)} values)"
    return np.random.default_rng(12345).beta(2, 2, 200), "Beta(2, 2), 200 draws (shared data absent)"


def judge(name: str, truth: np.ndarray, pool: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    bias, sd = JUDGES[name]
    if bias is None:
        return rng.choice(pool, truth.size)
    return np.clip(truth + bias + rng.normal(0.0, sd, truth.size), 0.0, 1.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--n", type=int, default=100, help="labelled queries per trial")
    parser.add_argument("--big-n", type=int, default=1000, help="unlabelled queries per trial")
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE.parent / "src"))
    from rankflavor.analysis.estimate.ppi import classical_mean, ppi_mean

    pool, where = population()
    target = float(pool.mean())
    print(f"population: {where}; target mean {target:.4f}")
    print(f"{args.trials} trials, n = {args.n} labelled, N = {args.big_n} unlabelled, nominal "
          f"{1 - args.alpha:.0%}, seed {args.seed}; Monte Carlo s.e. of a coverage near 0.90: "
          f"{np.sqrt(0.09 / args.trials):.4f}")
    start = time.perf_counter()
    estimators = ("human only", "LLM only", "PPI++", "PPI (lambda=1)")
    print("\n| judge | estimator | coverage | mean width | mean lambda |\n|---|---|---:|---:|---:|")
    failed = False
    for j, name in enumerate(JUDGES):
        rng = np.random.default_rng([args.seed, j])
        covered = {e: 0 for e in estimators}
        width = {e: 0.0 for e in estimators}
        lam_sum = 0.0
        for _ in range(args.trials):
            truth = rng.choice(pool, args.n + args.big_n)
            pred = judge(name, truth, pool, rng)
            y, yhat, yu = truth[:args.n], pred[:args.n], pred[args.n:]
            tuned = ppi_mean(y, yhat, yu, args.alpha)
            lam_sum += float(tuned.lam or 0.0)
            for e, iv in zip(estimators, (classical_mean(y, args.alpha), classical_mean(pred, args.alpha),
                                          tuned, ppi_mean(y, yhat, yu, args.alpha, lam=1.0)), strict=True):
                covered[e] += iv.low <= target <= iv.high
                width[e] += iv.high - iv.low
        for e in estimators:
            cov = covered[e] / args.trials
            lam = f"{lam_sum / args.trials:.3f}" if e == "PPI++" else ("1" if e.startswith("PPI (") else "")
            print(f"| {name} | {e} | {cov:.4f} | {width[e] / args.trials:.4f} | {lam} |")
            if e.startswith("PPI") and abs(cov - (1 - args.alpha)) > 0.02:
                failed = True
    print(f"\n{time.perf_counter() - start:.1f} s")
    if failed:
        print("FAILED: a PPI coverage is more than 2 points from nominal")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
