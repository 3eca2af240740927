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
from pathlib import Path

import pytest

import rankflavor

from .io_cases import MEASURES_TREC, layouts

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
from rankflavor.arrays import ndcg_score
seen["arrays"] = float(ndcg_score(np.array([[3, 2, 0, 1]]), np.array([[0.1, 0.5, 0.3, 0.2]])))
columnar.PIECES_BYTES, columnar.PIECE_BYTES = 0, 300  # the piece reader
seen["pieces"] = rankflavor.evaluate(qrels, run, "ndcg@10")[0].mean
from rankflavor.explain import explain
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
