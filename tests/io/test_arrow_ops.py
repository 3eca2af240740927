"""``rankflavor.io.arrow_ops`` names the pyarrow kernels that reading, alignment and ordering call,
over the public ``pyarrow.compute``, imported on the first call. Checked here: each function
against ``pyarrow.compute`` itself; a fresh interpreter that evaluates through every big-run path
(pieces, the docno cast, two-thread alignment, hashed text docnos) and gets the numbers of the
plain paths; a small evaluation that imports no compute module; and no private pyarrow module
anywhere in the library."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.io import arrow_ops

SRC = Path(rankflavor.__file__).resolve().parents[1]
#: Subprocesses import the rankflavor under test, whatever their working directory.
ENV = {**os.environ, "PYTHONPATH": str(SRC)}

texts = st.lists(st.text(alphabet=st.sampled_from("0123456789abZ+-. \x00é£"), max_size=6), max_size=30)


@settings(max_examples=200, deadline=None)
@given(values=texts, seed=st.integers(0, 2**32 - 1))
def test_functions_equal_pyarrow_compute(values: list[str], seed: int) -> None:
    arr = pa.array(values, type=pa.string())
    rng = np.random.default_rng(seed)
    other = pa.array(list(rng.permutation(np.array(values, dtype=object))) if values else [], type=pa.string())
    idx = pa.array(rng.integers(0, max(len(values), 1), size=len(values) // 2) if values else [], type=pa.int64())
    mask = pa.array(rng.random(len(values)) < 0.5, type=pa.bool_())
    assert arrow_ops.equal(arr, other).equals(pc.equal(arr, other))
    assert arrow_ops.not_equal(arr, other).equals(pc.not_equal(arr, other))
    assert arrow_ops.take(arr, idx).equals(pc.take(arr, idx))
    assert arrow_ops.filter_rows(arr, mask).equals(pc.filter(arr, mask))
    assert arrow_ops.dictionary_encode(arr).equals(pc.dictionary_encode(arr))
    assert arrow_ops.ascii_is_decimal(arr).equals(pc.ascii_is_decimal(arr))
    assert arrow_ops.all_true(pc.equal(arr, other)) == bool(pc.all(pc.equal(arr, other)).as_py())
    # Byte order (strcmp), as trec_eval breaks ties: Python's order of the UTF-8 bytes.
    order = arrow_ops.sort_indices(arr).to_pylist()
    assert [values[i].encode() for i in order] == sorted(v.encode() for v in values)
    try:
        expected = pc.cast(arr, pa.int64())
    except pa.ArrowInvalid:
        with pytest.raises(pa.ArrowInvalid):
            arrow_ops.cast(arr, pa.int64())
    else:
        assert arrow_ops.cast(arr, pa.int64()).equals(expected)


def test_cast_is_safe() -> None:
    with pytest.raises(pa.ArrowInvalid):
        arrow_ops.cast(pa.array(["1", "99999999999999999999"]), pa.int64())  # overflows int64
    with pytest.raises(pa.ArrowInvalid):
        arrow_ops.cast(pa.array([300], type=pa.int64()), pa.int8())


_SCRIPT = """
import json, sys
from rankflavor.io import docnos
from rankflavor.align import sizes
from rankflavor.io import columnar
# Every big-run path on small files: pieces, the docno cast, two-thread alignment.
columnar.PIECES_BYTES, columnar.PIECE_BYTES = 0, 300
docnos._CAST_ROWS = 0
sizes.PARALLEL_ROWS = 0
import rankflavor
res = rankflavor.evaluate(sys.argv[1], sys.argv[2], ["ndcg_cut.10", "map", "P.10", "bpref"], preset="trec_eval")
print("\\n@@" + json.dumps({"compute": "pyarrow.compute" in sys.modules,
                            "means": [m.mean for m in res]}))
"""


@pytest.mark.parametrize("docnos", ["integers", "text"])
def test_big_run_paths_give_the_numbers_of_the_plain_paths(tmp_path: Path, docnos: str) -> None:
    rng = np.random.default_rng(7)
    name = (lambda d: str(d)) if docnos == "integers" else (lambda d: f"doc-{d:05d}")
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"q{q} 0 {name(int(d))} {int(rng.integers(0, 4))}\n"
                             for q in range(30) for d in rng.choice(400, 12, replace=False)))
    run.write_text("".join(f"q{q} Q0 {name(int(d))} {r + 1} {100 - r}.5 tag\n"
                           for q in range(30) for r, d in enumerate(rng.choice(400, 40, replace=False))))
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, str(qrels), str(run)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=ENV)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.rsplit("\n@@", 1)[1])
    assert report["compute"] is True, "the big-run paths called no pyarrow kernel: they did not run"
    # It evaluated through those paths: the same numbers as the plain paths in this process.
    here = rankflavor.evaluate(str(qrels), str(run), ["ndcg_cut.10", "map", "P.10", "bpref"], preset="trec_eval")
    assert report["means"] == [m.mean for m in here]


def test_small_evaluation_imports_no_compute_module(tmp_path: Path) -> None:
    """A small run with integer docnos (MS MARCO style) needs no pyarrow kernel: no compute module
    is imported (the import is put off until a kernel is called)."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 7 2\nq1 0 12 0\nq2 0 30 1\n")
    run.write_text("q1 Q0 7 1 2.5 t\nq1 Q0 12 2 1.5 t\nq2 Q0 4 1 1.0 t\nq2 Q0 30 2 1.0 t\n")
    script = ("import json, sys, rankflavor\n"
              "r = rankflavor.evaluate(sys.argv[1], sys.argv[2], ['ndcg_cut.10', 'map'], preset='trec_eval')\n"
              "print(json.dumps([m for m in ('pyarrow._compute', 'pyarrow.compute') if m in sys.modules]))\n")
    proc = subprocess.run([sys.executable, "-c", script, str(qrels), str(run)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_the_library_uses_no_private_pyarrow_module() -> None:
    private = re.compile(r"pyarrow\._\w|from pyarrow import _|pa\._\w")
    found = [
        f"{path.relative_to(SRC)}:{n}"
        for path in sorted((SRC / "rankflavor").rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if private.search(line)
    ]
    assert found == []
