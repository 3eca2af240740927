"""``check``'s facts merge over any split of the input by whole queries (issue 35), without Spark.

The Spark engine's ``check`` computes each bucket's facts in its task and merges them on the
driver (:mod:`rankflavor.spark.checking`); that is right only if, for every table check, the
facts of the whole input equal the merge of the facts of its parts. Checked here directly on
random judgments and runs split at random into parts of whole queries, each part's rows keeping
their place in the input (``at``), as a Spark bucket's do: the judgments' facts, each run's, and
the overlap's, field by field (so the findings worded from them are the whole input's too).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankflavor.analysis.check.codes import run_codes
from rankflavor.analysis.check.facts import Histogram, Listed, Names, merged
from rankflavor.analysis.check.grades import qrels_facts, qrels_findings
from rankflavor.analysis.check.overlap import overlap_facts
from rankflavor.analysis.check.reading import read_for_check
from rankflavor.analysis.check.scores import run_facts, run_findings
from rankflavor.io.tables import Qrels, Run
from rankflavor.presets.scales import scale_named

LIMIT = 3  # (small: the listed rows' cut is where a merge can go wrong)

queries = st.sampled_from(["q1", "q2", "q10", "é", "Q", "q3"])
docs = st.sampled_from(["a", "b", "c", "d1", "d10", "x"])
judgment = st.tuples(queries, docs, st.sampled_from(["0", "1", "2", "3", "-1", "0.5", "7"]))
ranking = st.tuples(queries, docs, st.sampled_from(["1", "2", "x", "3"]),
                    st.sampled_from(["1", "2", "0.5", "2", "3", "1e3", "-1"]))


def _take(column: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    return column.take(pa.array(rows, pa.int64()))


def _lines(table: Qrels | Run, rows: np.ndarray) -> np.ndarray:
    """The file lines of ``rows``, as a Spark bucket's rows carry them (a column, not a start)."""
    return np.array([table.line_of(int(r)) for r in rows], dtype=np.int64)


def _qrels_part(table: Qrels, rows: np.ndarray) -> Qrels:
    return Qrels(_take(table.query, rows), _take(table.doc, rows), np.asarray(table.grade)[rows], table.source,
                 _lines(table, rows), from_file=table.from_file)


def _run_part(table: Run, rows: np.ndarray) -> Run:
    return Run(_take(table.query, rows), _take(table.doc, rows), np.asarray(table.score)[rows], table.source,
               _lines(table, rows), from_file=table.from_file)


def _rows_of(table: Qrels | Run, part: set[str]) -> np.ndarray:
    ids = table.query.to_pylist() if hasattr(table.query, "to_pylist") else list(table.query)
    return np.array([i for i, q in enumerate(ids) if str(q) in part], dtype=np.int64)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(judged=st.lists(judgment, max_size=14), ranked=st.lists(ranking, min_size=1, max_size=16),
       split=st.lists(st.integers(0, 2), min_size=6, max_size=6), scaled=st.booleans())
def test_facts_of_parts_merge_into_the_facts_of_the_whole(tmp_path: Path, judged, ranked, split, scaled) -> None:  # type: ignore[no-untyped-def]
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in judged))
    run_path.write_text("".join(f"{q} Q0 {d} {r} {s} t\n" for q, d, r, s in ranked))
    q_read = read_for_check("qrels", str(qrels_path), None, {}, LIMIT)
    r_read = read_for_check("run", str(run_path), None, {}, LIMIT)
    whole_q, whole_r = q_read.table, r_read.table
    assert isinstance(whole_r, Run)
    scale = scale_named("trec_dl") if scaled else None
    against = whole_q if isinstance(whole_q, Qrels) and len(whole_q) else None
    ranks = r_read.ranks
    # each query to one of three parts (the split drawn per query name)
    names = ["q1", "q2", "q10", "é", "Q", "q3"]
    parts = [{q for q, s in zip(names, split, strict=True) if s == k} for k in range(3)]

    q_parts, r_parts, o_parts = [], [], []
    for part in parts:
        q_rows = _rows_of(whole_q, part) if against is not None else np.zeros(0, dtype=np.int64)
        judged_part = _qrels_part(whole_q, q_rows) if against is not None else None
        if judged_part is not None:
            q_parts.append(qrels_facts(judged_part, LIMIT, scale, q_rows))
        r_rows = _rows_of(whole_r, part)
        run_part = _run_part(whole_r, r_rows)
        part_against = judged_part if judged_part is not None and len(judged_part) else None
        codes = run_codes(run_part, part_against)
        if len(run_part):
            part_ranks = None if ranks is None else (_take(ranks, r_rows) if hasattr(ranks, "take") else ranks[r_rows])
            r_parts.append(run_facts(run_part, LIMIT, codes, part_against, part_ranks, r_rows))
        if against is not None and (len(run_part) or part_against is not None):  # (as check_bucket)
            o_parts.append(overlap_facts(codes))

    if against is not None:
        whole_facts = qrels_facts(whole_q, LIMIT, scale)
        together = merged(q_parts)
        # (distinct grades are not a sum: the merge counts them from the merged histogram, as the
        # Spark driver does; past the histogram's cap it counts them over the whole input)
        assert together.grades.values is not None
        together = replace(together, distinct=len(together.grades.values))
        assert together == whole_facts
        assert qrels_findings(together, "q", scale) == qrels_findings(whole_facts, "q", scale)
    whole_codes = run_codes(whole_r, against)
    whole_run = run_facts(whole_r, LIMIT, whole_codes, against, ranks)
    assert merged(r_parts) == whole_run
    assert run_findings(merged(r_parts), "r") == run_findings(whole_run, "r")
    if against is not None:
        assert merged(o_parts) == overlap_facts(whole_codes)


def test_merges_keep_the_first_in_order_and_count_every_one() -> None:
    a, b = Names.of(["q9", "q2", "q3"]), Names.of(["q10", "q1", "q4", "q5"])
    both = merged([a, b])
    assert both.count == 7 and both.ids == ("q1", "q10", "q2", "q3", "q4")  # (byte order: "q10" < "q2")
    assert both.text().endswith(", ...") and not Names.of(["a"]).text().endswith("...")
    early, late = Listed(2, 3, ((1, 2, "x"), (7, 8, "y"))), Listed(2, 1, ((4, 5, "z"),))
    assert merged([late, early]) == Listed(2, 4, ((1, 2, "x"), (4, 5, "z")))
    assert merged([Histogram.of(np.array([1.0, 2.0]), 3), Histogram.of(np.array([2.0, 3.0]), 3)]).values == (
        (1.0, 1), (2.0, 2), (3.0, 1))
    assert merged([Histogram.of(np.array([1.0, 2.0]), 3), Histogram.of(np.array([4.0, 3.0]), 3)]).values is None
    assert merged([None, None]) is None and merged([3, None, 4]) == 7 and merged([True, False]) is False
