"""Random collections shared by the ordering and plan tests: a hypothesis strategy of small
collections with heavy ties (every tie rule, depth, condensing, negatives, precision, self-hits
and duplicates policy drawn), a seeded generator of runs in rank order, and the public-seam
helpers that rank them.

Not a test module: ``test_order_*.py`` and ``test_plan.py`` import it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from rankflavor.align import Aligned
from rankflavor.engine.plan import check_duplicates
from rankflavor.flavor.flavor import Flavor
from rankflavor.io.columns import string_array
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import Measure, parse_measure
from rankflavor.order import Ordering, Ranked, Ranker


def full_rank(aligned: Aligned, flavor: Flavor, exact: bool = True, ranker: Ranker | None = None) -> Ranked:
    """Every row ranked under ``flavor``, kept duplicates refused as evaluate() refuses them."""
    ranked = (ranker or Ranker(aligned)).rank(Ordering.of(flavor), exact=exact)
    check_duplicates(ranked)
    return ranked


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def seeded_case(seed: int, n_queries: int = 12, integer_docs: bool = True) -> tuple[Qrels, Run]:
    """A run in rank order (query blocks not in byte order of the ids), heavy ties, about half
    the retrieved documents judged (grades -1..3), a few judged documents not retrieved."""
    rng = np.random.default_rng(seed)
    rq: list[str] = []
    rd: list[str] = []
    rs: list[float] = []
    jq: list[str] = []
    jd: list[str] = []
    jg: list[float] = []
    for i in rng.permutation(n_queries):
        q = f"q{i}"
        n = int(rng.integers(1, 40))
        docs = rng.choice(200, size=n, replace=False)
        names = [str(d) if integer_docs else f"d{d:03d}" for d in docs]
        scores = np.sort(rng.choice([0.0, 0.5, 1.0, 1.5, 2.0], size=n) if rng.random() < 0.7 else rng.random(n))[::-1]
        rq += [q] * n
        rd += names
        rs += scores.tolist()
        judged = rng.random(n) < 0.5
        for name, j in zip(names, judged, strict=True):
            if j:
                jq.append(q)
                jd.append(name)
                jg.append(float(rng.choice([-1, 0, 1, 2, 3])))
        for extra in rng.choice(np.arange(200, 260), size=int(rng.integers(0, 4)), replace=False):
            jq.append(q)
            jd.append(str(extra) if integer_docs else f"d{extra:03d}")
            jg.append(float(rng.choice([0, 1, 2])))
    qrels = Qrels(string_array(jq), string_array(jd), np.array(jg), "qrels")
    run = Run(string_array(rq), string_array(rd), np.array(rs), "run")
    return qrels, run


#: Byte order "1" < "10" < "2" < "q" differs from numeric order; numeric ids are also docnos (self hits).
QUERY_IDS = ["10", "2", "1", "q"]
NUMERIC_DOCS = ["0", "1", "2", "9", "10", "11", "100", "101", "99", "123456789"]
TEXT_DOCS = ["007", "a", "B", "b", "d1", "d10", "d2", "é", "Z", "_"]
SCORES = [0.0, 0.5, 1.0, 1.0 + 1e-12, 2.0]  # few values: ties everywhere; the 4th ties 1.0 in float32
GRADES: list[float | None] = [None, None, None, -2.0, -1.0, 0.0, 0.0, 1.0, 2.0, 3.0]  # None: not judged

TIES = ["docno_desc", "docno_asc", "input_order", "averaged", "pessimistic", "optimistic"]
KNOB_CHOICES: dict[str, list[str]] = {
    "ties": TIES,
    "depth": ["none", "1", "3", "8"],
    "unjudged": ["zero", "condensed"],
    "negatives": ["unjudged", "zero"],
    "precision": ["float64", "float32"],
    "self_hits": ["keep", "drop"],
}

#: A broad list of measures (relstring left out: per-query text).
MEASURE_TEXTS = [
    "ndcg@5", "ndcg@10[gain=exp2]", "ndcg", "ndcg@5[ideal=local]", "ndcg@5[ideal_cut=hits]",
    "ndcg@5[ideal_cut=none]", "ndcg@5[ideal=max,max_grade=3]", "ndcg@5[ideal=as_supplied]",
    "ndcg@5[ideal=recall@5]", "ndcg@5[discount=jk(2)]", "ndcg@5[discount=reciprocal]", "ndcg@3[min_grade=2]",
    "ndcg@5[gain=binary,rel=2]", "ndcg@5[gain={0:1,1:3,2:7}]", "ndcg@5[unjudged_grade=1]", "ndcg[gain=exp2]",
    "dcg@5", "dcg", "dcg@3[gain=exp2]", "dcg@5[unjudged_grade=2]",
    "P@5", "P@5[p_divisor=hits]", "P", "P@3[rel=2]", "recall@5", "recall", "AP", "AP@5", "AP[rel=2]",
    "RR", "RR@3", "Rprec", "bpref", "bpref@5", "success@3", "judged@5", "judged",
    "num_ret", "num_rel", "num_rel_ret", "GMAP", "gm_bpref", "infAP", "ERR@5[max_grade=3]", "ERR[max_grade=3]",
    "IPrec[param=0.5]", "IPrec_avg", "Rprec_mult[param=2]", "utility", "binG", "G", "ndcg_rel", "Rndcg",
    "relative_P@5", "set_AP", "F", "num_nonrel_judged_ret",
    "RBP@5[max_grade=3]", "RBP[gain=binary,param=0.5]", "nERR@5[max_grade=3]", "nERR[max_grade=3,ideal=local]", "UDCG@5",
    "RBP_resid@5", "RBP_resid[param=0.9]",
    "RBP_cwl[max_grade=3]", "NERR8@5[max_grade=3]", "NERR9@5[max_grade=3]", "NERR10[max_grade=3]",
    "NERR11[max_grade=3]", "INST[max_grade=3]", "INSQ[max_grade=3,param=2]", "BPM@5[max_grade=3]",
    "SDCG@5[max_grade=3]", "Compat", "Compat[param=(0.8,0)]",
    "hits@5", "hits", "F1@5", "F1", "RBP_gain@5[param=0.9]", "RBP_gain", "bpref_ranx", "bpref_ranx[rel=2]",
    "ERR_gain@5[max_grade=3]", "nERR_gain@5[max_grade=3,gain={1:1,2:3,3:7}]", "ERR@5[max_grade=3,unjudged_grade=1]",
    "fallout@5", "fallout", "P@5[p_divisor=judged]", "AP@5[ap_divisor=min_k_relevant]", "AP@5[ap_divisor=found]",
    "recall@5[relevant_set=retrieved]", "RR@5[nonpositive=nonrelevant]",
]  # fmt: skip


@functools.cache
def measures_of(knobs: tuple[tuple[str, str], ...]) -> tuple[Measure, ...]:
    return tuple(parse_measure(t, overrides=dict(knobs)) for t in MEASURE_TEXTS)


@dataclass(frozen=True)
class Case:
    """A random collection: rows in file order, as tables, and the flavor knobs to apply."""

    run_rows: list[tuple[str, str, float]]
    judgments: list[tuple[str, str, float]]
    run: Run
    qrels: Qrels
    knobs: dict[str, str]

    @property
    def measures(self) -> tuple[Measure, ...]:
        return measures_of(tuple(sorted(self.knobs.items())))


def _strings(draw: st.DrawFn, values: list[str], dictionary: bool) -> pa.Array | pa.ChunkedArray:
    """Strings in one of the layouts the readers produce: plain, dictionary, or chunked."""
    arr = pa.array(values, type=pa.string())
    if dictionary:
        return arr.dictionary_encode()
    if len(values) >= 2 and draw(st.booleans()):
        cut = draw(st.integers(1, len(values) - 1))
        return pa.chunked_array([arr.slice(0, cut), arr.slice(cut)])
    return arr


@st.composite
def cases(draw: st.DrawFn, contiguous: bool | None = None) -> Case:
    pool = NUMERIC_DOCS if draw(st.booleans()) else NUMERIC_DOCS + TEXT_DOCS
    duplicates = draw(st.sampled_from(["error", "first", "best"]))
    queries = draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=4, unique=True))
    blocks: list[list[tuple[str, str, float]]] = []
    judgments: list[tuple[str, str, float]] = []
    in_rank_order = draw(st.booleans())  # like most real runs; evaluate may then rank the judged rows alone
    for i, q in enumerate(queries):
        docs = draw(st.lists(st.sampled_from(pool), max_size=len(pool), unique=True))
        block = [(q, d, draw(st.sampled_from(SCORES))) for d in docs]
        blocks.append(sorted(block, key=lambda r: -r[2]) if in_rank_order else block)
        if i == 0 or draw(st.booleans()):  # some queries are not judged at all (run only)
            for d in pool:
                g = draw(st.sampled_from(GRADES))
                if g is not None:
                    judgments.append((q, d, g))
    if draw(st.booleans()):  # a query judged but not retrieved
        judgments.append(("only_qrels", "a", 1.0))
    # The first query is both retrieved and judged (with none in both, evaluate refuses the input).
    if not any(q == queries[0] for q, _, _ in judgments):
        judgments.append((queries[0], pool[0], 1.0))
    if not blocks[0]:
        blocks[0].append((queries[0], pool[0], 1.0))
    if duplicates != "error":
        for _ in range(draw(st.integers(0, 3))):
            b = draw(st.integers(0, len(blocks) - 1))
            if blocks[b]:
                q, d, _s = blocks[b][draw(st.integers(0, len(blocks[b]) - 1))]
                blocks[b].insert(draw(st.integers(0, len(blocks[b]))), (q, d, draw(st.sampled_from(SCORES))))
        for _ in range(draw(st.integers(0, 2))):
            q, d, _g = judgments[draw(st.integers(0, len(judgments) - 1))]
            judgments.insert(draw(st.integers(0, len(judgments))), (q, d, draw(st.sampled_from([0.0, 1.0, 3.0]))))
    rows = [r for b in blocks for r in b]
    interleave = (not contiguous) if contiguous is not None else (not in_rank_order and draw(st.booleans()))
    if interleave:
        rows = list(draw(st.permutations(rows)))
    knobs = {k: draw(st.sampled_from(v)) for k, v in KNOB_CHOICES.items()}
    knobs["duplicates"] = duplicates
    run = Run(
        _strings(draw, [q for q, _, _ in rows], draw(st.booleans())),
        _strings(draw, [d for _, d, _ in rows], False),
        np.array([s for _, _, s in rows], dtype=np.float64),
        "random run",
    )
    qrels = Qrels(
        _strings(draw, [q for q, _, _ in judgments], draw(st.booleans())),
        _strings(draw, [d for _, d, _ in judgments], False),
        np.array([g for _, _, g in judgments], dtype=np.float64),
        "random qrels",
    )
    return Case(rows, judgments, run, qrels, knobs)


def examples(n: int) -> int:
    """``n`` examples under hypothesis' default profile (100 examples a test), scaled by the profile
    loaded: the mutation runs' (tests/conftest.py) runs a fifth as many."""
    return max(1, n * settings.default.max_examples // 100)


RANDOM = settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def as_list(values: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> list[Any]:
    table = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    return table.take(pa.array(rows, type=pa.int64())).to_pylist()

