"""Inputs as callers have them - TREC files in every layout, pytrec_eval-style dicts,
DataFrames - become the same tables, through ``rankflavor.io.inputs``, without importing pandas.

No pandas import is watched in ``sys.modules`` of a fresh interpreter after evaluating through
the library and the command line, for every reader path (columnar, whitespace-normalised, line
by line, gzip, pieces, chunks) and for dict inputs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.errors import InputError
from rankflavor.io.columns import to_strings
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.tables import Qrels, Run

from ..support.io_cases import MEASURES_TREC, layouts

# ---------------------------------------------------------------------------------------------
# No pandas import on the command-line path
# ---------------------------------------------------------------------------------------------


_NO_PANDAS_SCRIPT = """
import json, runpy, sys
qrels, run = sys.argv[1], sys.argv[2]
import rankflavor
res = rankflavor.evaluate(qrels, run, {measures!r}, preset="trec_eval")
library = {{m.measure.display: m.summary for m in res}}
after_library = "pandas" in sys.modules
sys.argv = ["rankflavor", "eval", qrels, run, "--preset", "trec_eval", "--format", "json",
            *[x for m in {measures!r} for x in ("-m", m)]]
code = None
try:
    runpy.run_module("rankflavor", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
print("\\n@@" + json.dumps({{"library": library, "after_library": after_library,
                            "after_cli": "pandas" in sys.modules, "exit": code}}))
"""


@pytest.mark.parametrize("layout", ["plain", "tabs", "lines", "gzip"])
def test_evaluate_and_cli_do_not_import_pandas(tmp_path: Path, layout: str) -> None:
    qrels, run = layouts(tmp_path)[layout]
    script = _NO_PANDAS_SCRIPT.format(measures=MEASURES_TREC)
    proc = subprocess.run(
        [sys.executable, "-c", script, str(qrels), str(run)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.rsplit("\n@@", 1)[1])
    assert report["exit"] in (0, None), proc.stderr
    assert report["after_library"] is False, "rankflavor.evaluate imported pandas"
    assert report["after_cli"] is False, "python -m rankflavor eval imported pandas"
    # The subprocess really evaluated: the same four numbers as this process for the same files.
    here = rankflavor.evaluate(str(qrels), str(run), MEASURES_TREC, preset="trec_eval")
    assert report["library"] == {m.measure.display: m.summary for m in here}
    cli = json.loads(proc.stdout.rsplit("\n@@", 1)[0])
    assert {m["name"]: m["value"] for m in cli["measures"]} == {m.measure.display: m.summary for m in here}


_NO_PANDAS_PATHS_SCRIPT = """
import json, sys
import numpy as np
import rankflavor
from rankflavor.io import columnar
qrels, run = sys.argv[1], sys.argv[2]
seen = {}
seen["chunked"] = rankflavor.evaluate(qrels, run, "ndcg@10", chunk_rows=7)[0].mean
seen["pandas after chunked"] = "pandas" in sys.modules
seen["dicts"] = rankflavor.evaluate({"q1": {"a": 2}}, {"q1": {"a": 1.0, "b": 2.0}}, "ndcg@10")[0].mean
from rankflavor.training.arrays import ndcg_score
seen["arrays"] = float(ndcg_score(np.array([[3, 2, 0, 1]]), np.array([[0.1, 0.5, 0.3, 0.2]])))
columnar.PIECES_BYTES, columnar.PIECE_BYTES = 0, 300  # the piece reader
seen["pieces"] = rankflavor.evaluate(qrels, run, "ndcg@10")[0].mean
from rankflavor.analysis.explain.api import explain
seen["explain"] = len(explain(qrels, run, "q1", "ndcg@10").rows)
print(json.dumps({"seen": seen, "pandas": "pandas" in sys.modules}))
"""


def test_chunks_dicts_arrays_pieces_and_explain_import_no_pandas(tmp_path: Path) -> None:
    """pa.array on Python objects imports pandas when it is installed (~0.4 s); the other
    entry points build arrays without it. (Chunked evaluation, dict inputs and the arrays API
    each imported it before this test.)"""
    pytest.importorskip("pandas", reason="pandas is not installed here, so no import of it can be seen")
    qrels, run = layouts(tmp_path)["plain"]
    proc = subprocess.run([sys.executable, "-c", _NO_PANDAS_PATHS_SCRIPT, str(qrels), str(run)], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    here = rankflavor.evaluate(str(qrels), str(run), "ndcg@10")[0].mean
    assert report["seen"]["chunked"] == report["seen"]["pieces"] == here  # the paths really ran
    assert report["seen"]["explain"] > 0 and 0 < report["seen"]["arrays"] < 1
    assert report["seen"]["pandas after chunked"] is False, "chunked evaluation imported pandas"
    assert report["pandas"] is False, "an entry point imported pandas"


def test_python_dash_m_eval_imports_no_pandas_module(tmp_path: Path) -> None:
    """The real ``python -m rankflavor eval`` process, watched through ``-X importtime``."""
    qrels, run = layouts(tmp_path)["plain"]
    metrics = [x for m in MEASURES_TREC for x in ("-m", m)]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "rankflavor", "eval", str(qrels), str(run), "--preset", "trec_eval",
         *metrics],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert "numpy" in imported and "pyarrow" in imported  # the import log was captured
    assert not [m for m in imported if m == "pandas" or m.startswith("pandas.")]
    assert "ndcg_cut_10" in proc.stdout


# ---------------------------------------------------------------------------------------------
# Dicts and DataFrames to columns
# ---------------------------------------------------------------------------------------------


def _rows(table: Qrels | Run) -> list[tuple[str, str, float]]:
    values = table.grade if isinstance(table, Qrels) else table.score
    return list(zip(to_strings(table.query), to_strings(table.doc), values.tolist(), strict=True))


def _nested_oracle(obj: dict[Any, dict[Any, Any]]) -> list[tuple[str, str, float]]:
    """What a dict means: a row per (query, doc), ids as ``str`` spells them, values as ``float``."""
    return [(str(q), str(d), float(v)) for q, inner in obj.items() for d, v in inner.items()]


_IDS = st.one_of(st.text(min_size=1, max_size=6), st.integers(-5, 10**12))
_VALUES = st.one_of(st.integers(-3, 5), st.floats(-1e6, 1e6, allow_nan=False), st.booleans(),
                    st.sampled_from(["2", " 3 ", "1e2"]), st.builds(np.float32, st.floats(0, 10, width=32)))


@settings(max_examples=200, deadline=None)
@given(obj=st.dictionaries(_IDS, st.dictionaries(_IDS, _VALUES, max_size=8), min_size=1, max_size=6))
def test_dicts_become_the_rows_they_hold(obj: dict[Any, dict[Any, Any]]) -> None:
    """Text and integer ids (a query 1 and a query "1" are one query), queries without
    documents, numbers of every Python kind: the rows of the dict, in its order, and the queries
    it lists with no document (a dict of those alone is a table of no rows that lists them)."""
    want = _nested_oracle(obj)
    listed = list(dict.fromkeys(str(q) for q, inner in obj.items() if not inner))
    if any("\x00" in q or "\x00" in d for q, d, _ in want) or any("\x00" in q for q in listed):
        for read in (as_run, as_qrels):  # no id may hold a NUL (rankflavor.io.nul)
            with pytest.raises(InputError, match=r"id holds a NUL byte"):
                read(obj)
        return
    for table in (as_run(obj), as_qrels(obj)):
        assert _rows(table) == want and list(table.listed_empty) == listed


def test_a_dict_naming_no_query_is_empty() -> None:
    """``{}`` names nothing to evaluate; ``{"q": {}}`` names a query (as the JSON file does)."""
    for read in (as_run, as_qrels):
        with pytest.raises(InputError, match="is empty"):
            read({})
        assert read({"q": {}}).listed_empty == ("q",) and len(read({"q": {}})) == 0


@pytest.mark.parametrize(
    ("run", "fragment"),
    [
        ({None: {"a": 1.0}}, "query None doc 'a': a missing value is not an id"),
        ({float("nan"): {"a": 1.0}}, "query nan doc 'a': a missing value is not an id"),
        ({"q": {"a": 1.0, None: 2.0}}, "query 'q' doc None: a missing value is not an id"),
        ({"q": {"a": 1.0, float("nan"): 2.0}}, "query 'q' doc nan: a missing value is not an id"),
        ({"q": {"a": 1.0}, "r": {"b": None}}, "query 'r' doc 'b': score None is not a number"),
        ({"q": {"a": 1.0}, "r": {"b": "x"}}, "query 'r' doc 'b': score 'x' is not a number"),
        ({"q": {"a": 1.0}, "r": {"b": "inf"}}, "query 'r' doc 'b': score 'inf' is not a finite number"),
        ({"q": {"a": 1.0}, "r": {"b": [1.0]}}, "query 'r' doc 'b': score [1.0] is not a number"),
        ({"q": {"a": 1.0, "b": float("nan"), "c": "x"}}, "query 'q' doc 'b': score nan is not a finite number"),
    ],
)
def test_a_bad_dict_entry_is_named(run: dict[Any, Any], fragment: str) -> None:
    """The first bad entry in the dict's order is the one named; a query listed with no document
    is a query too (a missing id is refused there as well, not left out uncounted)."""
    with pytest.raises(InputError) as info:
        as_run(run)
    assert fragment in str(info.value) and info.value.source == "run dict"
    for first in ({None: {}}, {float("nan"): {}}):
        with pytest.raises(InputError, match=r"query (None|nan) \(listed with no document\): a missing value"):
            as_run({**first, "q": {"a": 1.0, "b": "x"}})  # named before the later bad score


def _python_calls(work: Callable[[], object]) -> int:
    """Python-level function calls (and generator steps) while ``work`` runs."""
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        work()
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.parametrize("docnos", ["text", "integers", "non_ascii"])
def test_dicts_take_no_python_step_per_document(docnos: str) -> None:
    """Converting a dict costs Python steps per query, none per document: a hundred times the
    documents take no more Python calls. (A comprehension over the documents, as the
    conversion once had, steps once per document.)"""
    def nested(depth: int) -> dict[str, dict[Any, float]]:
        doc = {"text": lambda i: f"d{i}", "integers": lambda i: i, "non_ascii": lambda i: f"dé{i}"}[docnos]
        return {f"q{q}": {doc(i): float(i % 7) for i in range(depth)} for q in range(5)}

    small, large = nested(20), nested(2000)
    as_run(small), as_qrels(small)  # whatever a first call does once
    per_query = _python_calls(lambda: (as_run(small), as_qrels(small)))
    assert _python_calls(lambda: (as_run(large), as_qrels(large))) < per_query + 100  # not + 19,800
    assert _rows(as_run(large)) == _nested_oracle(large)


@pytest.mark.parametrize("dtype", ["str", "object", "string[pyarrow]", "arrow"])
def test_frames_of_every_string_column_kind_read_alike(dtype: str) -> None:
    pd = pytest.importorskip("pandas")
    import pyarrow as pa

    frame = pd.DataFrame({"query_id": ["q1", "q1", "q2", "qé"], "doc_id": ["a", "b", "a", "c"], "score": [2.0, 1, 3, 0.5]})
    if dtype == "arrow":
        data: Any = pa.Table.from_pandas(frame, preserve_index=False)
    else:
        data = frame.astype({"query_id": dtype, "doc_id": dtype})
    assert _rows(as_run(data)) == [("q1", "a", 2.0), ("q1", "b", 1.0), ("q2", "a", 3.0), ("qé", "c", 0.5)]
    # Aligned with judgments from a dict (pandas' pyarrow strings are large_string: they once were not joined).
    result = rankflavor.evaluate({"q1": {"b": 1}, "q2": {"a": 1}}, data, ["P@1", "num_rel_ret"], preset="trec_eval")
    assert result["num_rel_ret"].per_query() == {"q1": 1.0, "q2": 1.0}


@pytest.mark.parametrize("dtype", ["str", "string[pyarrow]", "Int64", "float64", "arrow"])
def test_a_missing_id_in_any_column_kind_is_named(dtype: str) -> None:
    """Missing values in nullable string and integer columns, NaN in a float column, an Arrow
    null: each an error naming its row, never the id "nan" or "<NA>"."""
    pd = pytest.importorskip("pandas")
    import pyarrow as pa

    ids = [1, 2, None, 4] if dtype in ("Int64", "float64") else ["1", "2", None, "4"]
    frame = pd.DataFrame({"query_id": ["q"] * 4, "doc_id": pd.Series(ids, dtype=None if dtype == "arrow" else dtype),
                          "relevance": [1, 0, 2, 1]})
    data: Any = pa.Table.from_pandas(frame, preserve_index=False) if dtype == "arrow" else frame
    with pytest.raises(InputError, match=r"qrels DataFrame: column 'doc_id' row 2: .* is a missing value, not an id"):
        as_qrels(data)


@pytest.mark.parametrize("dtype", ["int64", "float64", "bool", "Int64", "int32[pyarrow]"])
def test_numeric_ids_are_spelled_as_str_spells_them(dtype: str) -> None:
    pd = pytest.importorskip("pandas")
    import pyarrow as pa

    values = [True, False, True] if dtype == "bool" else [7, 10, 7]
    column = pd.Series(values, dtype=dtype)
    frame = pd.DataFrame({"query_id": column, "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, 3.0]})
    want = [str(v) for v in column.tolist()]
    assert to_strings(as_run(frame).query) == want
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if not pa.types.is_floating(table.column("query_id").type):
        assert to_strings(as_run(table).query) == want
