"""Small random cases with distinct scores (no tie rule involved), and the ranked grades a reference
implementation reads: shared by the ERR, RBP and UDCG tests."""

from __future__ import annotations

import numpy as np

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


def distinct_case(seed: int, n_queries: int, max_grade: int = 3, *, negatives: bool = False,
                  depth: int = 25) -> tuple[Qrels, Run]:
    """Runs of 0..depth documents with distinct scores; about a third of the retrieved documents
    unjudged, some judged documents never retrieved, some queries without a positive grade."""
    rng = np.random.default_rng(seed)
    qrels: Qrels = {}
    run: Run = {}
    low = -1 if negatives else 0
    for i in range(n_queries):
        q = f"q{i}"
        n = int(rng.integers(0, depth + 1))
        docs = [f"d{j}" for j in range(n + int(rng.integers(0, 6)))]
        judged = {d: int(rng.integers(low, max_grade + 1)) for d in docs if rng.random() < 0.67}
        if rng.random() < 0.15:  # nothing relevant
            judged = {d: min(g, 0) for d, g in judged.items()}
        if not judged:
            judged = {"dz": int(rng.integers(0, max_grade + 1))}
        qrels[q] = judged
        if n or rng.random() < 0.5:
            scores = rng.permutation(n) + rng.random(n) * 0.5
            run[q] = {docs[j]: float(scores[j]) for j in range(n)}
    return qrels, run


def ranked_grades(qrels: Qrels, run: Run, q: str) -> list[int | None]:
    """The grades of ``q``'s run in rank order (None: unjudged)."""
    docs = sorted(run.get(q, {}).items(), key=lambda kv: -kv[1])
    return [qrels.get(q, {}).get(d) for d, _ in docs]
