"""Differential tests: ``--preset pytrec_eval`` against the real pytrec_eval, query by query.

pytrec_eval (``pytrec-eval-terrier``) wraps trec_eval's C code, so it is the oracle for the
trec_eval flavor on inputs no reference file covers. Thousands of random queries are generated
with a seeded NumPy RNG to hit every corner the flavor has an opinion on:

* graded labels 0..4 and negative labels (-1, -2: pooled but unjudged in trec_eval);
* retrieved documents that are not judged, judged documents that are never retrieved;
* queries whose judgments are all grade 0, queries whose retrieved documents are all unjudged,
  queries only in the qrels (pytrec_eval omits them: ``missing=skip``) and only in the run;
* score ties, made common by drawing scores from small sets, including scores that differ in
  float64 but are equal as 32-bit floats (pytrec_eval stores scores as C ``float``), so the
  docno tie-break decides; random doc ids (mixed case, digits, punctuation, non-ASCII) so the
  ``strcmp`` order of the tie-break matters;
* lists from 1 to a few hundred documents.

Every per-query value of every shared measure must agree to 1e-9, and rankflavor must report
exactly the queries pytrec_eval reports. Settings: the default, ``relevance_level=2`` (rankflavor
``rel=2``, trec_eval ``-l 2``) and ``judged_docs_only_flag=True`` (``unjudged=condensed``, ``-J``).
The TREC DL 2019 runs in ``../shared/data/runs`` are compared the same way.

pytrec_eval 0.5.11 dies with a segmentation fault on a query whose judgments are all negative
(found while writing these tests: all -2 after another query with any measure; all -1 with
``map`` and ``bpref`` together), so the generator gives every query at least one judgment >= 0;
queries judged only 0 and negative are still generated. rankflavor's value for all-negative
queries is checked by hand in ``tests/engine/test_api.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rankflavor

from ..conftest import shared_path

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is in the [test] extras")

#: trec_eval measure arguments, the same text for both tools; pytrec_eval keys are ``P_10``.
MEASURES = (
    "ndcg",
    "ndcg_cut.1,5,10,20,100,1000",
    "map",
    "map_cut.5,10,100",
    "P.1,5,10,100,1000",
    "recall.5,10,100,1000",
    "recip_rank",
    "Rprec",
    "bpref",
    "success.1,5,10",
    "num_ret",
    "num_rel",
    "num_rel_ret",
)

#: (relevance_level, judged_docs_only_flag) as pytrec_eval takes them.
SETTINGS = [(1, False), (2, False), (1, True), (2, True)]

BATCHES = 5
QUERIES_PER_BATCH = 600
TOLERANCE = 1e-9

_ALPHABET = np.array([*"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.#", "é", "ß", "Ω"])


def _random_ids(rng: np.random.Generator, n: int, shortest: int, longest: int) -> list[str]:
    lengths = rng.integers(shortest, longest + 1, size=n)
    chars = _ALPHABET[rng.integers(0, len(_ALPHABET), size=int(lengths.sum()))].tolist()
    ends = np.cumsum(lengths).tolist()
    return ["".join(chars[end - length : end]) for end, length in zip(ends, lengths.tolist(), strict=True)]


def _random_scores(rng: np.random.Generator, n: int) -> np.ndarray:
    kind = int(rng.integers(0, 4))
    if kind == 0:  # few distinct values: ties everywhere
        return rng.integers(0, 4, size=n) / 2.0
    if kind == 1:  # distinct in float64, equal in float32
        base = rng.choice([0.1, 0.3, 7.25, 1000.5], size=n)
        return base * (1.0 + rng.choice([0.0, 1e-12, 3e-10, 1e-9], size=n))
    if kind == 2:  # continuous: ties rare
        return rng.normal(size=n)
    # large magnitudes: +0.01 vanishes in float32 (spacing 0.0625 at 1e6), negative scores too
    return rng.integers(-3, 3, size=n) * 1e6 + rng.choice([0.0, 0.01], size=n)


QUERY_KINDS = ["graded"] * 6 + ["all_zero", "qrels_only", "run_only", "none_judged_retrieved", "negative_and_zero"]


def random_collection(rng: np.random.Generator, n_queries: int) -> tuple[dict, dict]:
    """``(qrels, run)`` as pytrec_eval dicts, one randomly shaped query at a time."""
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_queries):
        query = _random_ids(rng, 1, 1, 4)[0] + str(i)
        kind = QUERY_KINDS[int(rng.integers(0, len(QUERY_KINDS)))]
        pool = list(dict.fromkeys(_random_ids(rng, int(rng.choice([3, 10, 40, 200])), 1, 6)))
        judged = [str(d) for d in rng.permutation(pool)[: int(rng.integers(1, len(pool) + 1))]]
        if kind == "all_zero":
            grades = np.zeros(len(judged), dtype=int)
        elif kind == "negative_and_zero":
            grades = rng.choice([-1, -2], size=len(judged))
        else:
            grades = rng.choice([-2, -1, 0, 0, 0, 1, 1, 2, 3, 4], size=len(judged))
        if grades.max() < 0:  # see the module docstring: pytrec_eval segfaults on these
            grades[0] = 0
        # Unjudged candidates: pool ids with a suffix, so they tie-break among judged ones.
        unjudged = [d + "~" for d in rng.permutation(pool)[: int(rng.integers(0, len(pool) + 1))]]
        if kind == "none_judged_retrieved":
            candidates = [d for d in pool if d not in set(judged)] + unjudged
        else:
            candidates = pool + unjudged
        candidates = list(dict.fromkeys(candidates)) or [query + "~"]
        if rng.random() < 0.3:  # short lists: shorter than most cutoffs and than R
            length = int(rng.integers(1, min(5, len(candidates)) + 1))
        else:
            length = int(rng.integers(1, len(candidates) + 1))
        retrieved = [str(d) for d in rng.permutation(candidates)[:length]]
        if kind != "run_only":
            qrels[query] = {d: int(g) for d, g in zip(judged, grades, strict=True)}
        if kind != "qrels_only":
            run[query] = {d: float(s) for d, s in zip(retrieved, _random_scores(rng, length), strict=True)}
    return qrels, run


def compare(results: rankflavor.Results, expected: dict[str, dict[str, float]]) -> tuple[int, float]:
    """Assert every per-query value matches; return (values compared, max |delta|)."""
    compared, worst = 0, 0.0
    assert len(results) > 0
    for m in results:
        key = m.measure.label
        assert key is not None, f"{m.measure} has no trec_eval label"
        got = m.per_query()
        assert set(got) == set(expected), (key, sorted(set(got) ^ set(expected))[:10])
        for query, value in got.items():
            want = expected[query][key]
            delta = abs(value - want)
            assert delta <= TOLERANCE, f"{key} query {query!r}: rankflavor {value!r}, pytrec_eval {want!r}"
            worst = max(worst, delta)
            compared += 1
    return compared, worst


def run_both(qrels: object, run: object, qrels_dict: dict, run_dict: dict, rel: int, judged_only: bool,
             **knobs: str) -> tuple[rankflavor.Results, dict[str, dict[str, float]]]:
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels_dict, set(MEASURES), relevance_level=rel, judged_docs_only_flag=judged_only
    )
    expected = evaluator.evaluate(run_dict)
    if judged_only:
        knobs["unjudged"] = "condensed"
    results = rankflavor.evaluate(qrels, run, list(MEASURES), preset="pytrec_eval", rel=rel, **knobs)
    return results, expected


_CACHE: dict[int, tuple[dict, dict]] = {}


def _batch(seed: int) -> tuple[dict, dict]:
    if seed not in _CACHE:
        _CACHE[seed] = random_collection(np.random.default_rng(20240 + seed), QUERIES_PER_BATCH)
    return _CACHE[seed]


@pytest.mark.parametrize("rel,judged_only", SETTINGS, ids=[f"l{r}{'-J' if j else ''}" for r, j in SETTINGS])
@pytest.mark.parametrize("seed", range(BATCHES))
def test_random_queries_match_pytrec_eval(seed: int, rel: int, judged_only: bool) -> None:
    qrels, run = _batch(seed)
    results, expected = run_both(qrels, run, qrels, run, rel, judged_only)
    compared, worst = compare(results, expected)
    # Most generated queries are in both inputs; a few hundred per batch is the floor.
    assert len(expected) > QUERIES_PER_BATCH * 0.7
    assert compared == len(expected) * len(results)
    assert worst <= TOLERANCE


def test_generator_covers_every_corner() -> None:
    """The random batches really contain what the module docstring promises."""
    qrels, run = _batch(0)
    grades = np.array([g for docs in qrels.values() for g in docs.values()])
    assert {-2, -1, 0, 1, 2, 3, 4} <= set(grades.tolist())
    assert any(all(g == 0 for g in docs.values()) for docs in qrels.values())
    assert any(max(docs.values()) == 0 and min(docs.values()) < 0 for docs in qrels.values())
    assert set(qrels) - set(run) and set(run) - set(qrels)
    both = set(qrels) & set(run)
    assert any(not set(run[q]) & set(qrels[q]) for q in both)  # nothing judged retrieved
    assert any(set(qrels[q]) - set(run[q]) for q in both)  # judged, never retrieved
    assert any(set(run[q]) - set(qrels[q]) for q in both)  # retrieved, unjudged
    f32_only_ties = 0
    for docs in run.values():
        s = np.array(list(docs.values()))
        f32_only_ties += len(np.unique(s)) - len(np.unique(s.astype(np.float32)))
    assert f32_only_ties > 100
    lengths = [len(d) for d in run.values()]
    assert min(lengths) == 1 and max(lengths) > 150


@pytest.mark.parametrize("knob,value", [("precision", "float64"), ("ties", "docno_asc"), ("ties", "input_order")])
def test_differential_test_can_fail(knob: str, value: str) -> None:
    """Changing the tie rule or the score precision must break agreement: the batches exercise
    float32-only ties and the docno tie-break, so the comparison above is not vacuous."""
    qrels, run = _batch(1)
    results, expected = run_both(qrels, run, qrels, run, 1, False, **{knob: value})
    differing = sum(
        abs(v - expected[q][m.measure.label]) > TOLERANCE for m in results for q, v in m.per_query().items()
    )
    assert differing > 50


def _read_trec(path: Path, grade_column: int, value_type: type) -> dict[str, dict[str, float]]:
    """Independent, minimal TREC reader, so the oracle's input does not pass through rankflavor."""
    out: dict[str, dict] = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if parts:
            out.setdefault(parts[0], {})[parts[2]] = value_type(parts[grade_column])
    return out


DL19_RUNS = (
    "rankllm.dl19.bm25.top100.run",
    "rankllm.dl19.bm25-rm3.top100.run",
    "rankllm.dl19.splade-p-p-ensemble-distil.top100.run",
    "rankllm.dl19.d-bert-kd-tasb.top100.run",
    "rankllm.dl19.bm25-rankgpt-gpt-3.5-turbo.top100.run",
)


@pytest.mark.parametrize("rel,judged_only", SETTINGS, ids=[f"l{r}{'-J' if j else ''}" for r, j in SETTINGS])
@pytest.mark.parametrize("run_name", DL19_RUNS)
def test_dl19_runs_match_pytrec_eval(run_name: str, rel: int, judged_only: bool) -> None:
    qrels_path = shared_path("qrels", "qrels.dl19-passage.txt")
    run_path = shared_path("runs", run_name)
    qrels = _read_trec(qrels_path, 3, int)
    run = _read_trec(run_path, 4, float)
    results, expected = run_both(str(qrels_path), str(run_path), qrels, run, rel, judged_only)
    compared, _ = compare(results, expected)
    assert len(expected) == 43
    assert compared == 43 * len(results)
