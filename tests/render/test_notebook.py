"""examples/rankflavor.ipynb runs from top to bottom on DL19 in a real kernel (nbclient), and
what it shows is what the library computes: BM25's NDCG@10 of 0.5058, the escaped tables, the
report's charts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ..conftest import ROOT, shared_path

NOTEBOOK = ROOT / "examples" / "rankflavor.ipynb"


def test_the_example_notebook_executes_on_dl19(monkeypatch: pytest.MonkeyPatch) -> None:
    shared_path("qrels", "qrels.dl19-passage.txt")
    shared_path("runs", "rankllm.dl19.bm25.top100.run")
    shared_path("runs", "rankllm.dl19.bm25-rm3.top100.run")
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    # The kernel is a new process: it imports this checkout's package, whatever is installed.
    src = str(ROOT / "src")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import rankflavor\nprint(rankflavor.__file__)"))
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=120,
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()  # raises CellExecutionError, naming the cell, when a cell fails

    outputs = {i: cell.get("outputs", []) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"}
    # the kernel ran this checkout's rankflavor (the appended last cell says where it came from)
    assert nb.cells[-1].outputs[0]["text"].strip() == str(ROOT / "src" / "rankflavor" / "__init__.py")
    assert not [o for outs in outputs.values() for o in outs if o.get("output_type") == "error"]
    src_of = {i: nb.cells[i].source for i in outputs}

    def data(cell_start: str, mime: str) -> str:
        i = next(i for i, s in src_of.items() if s.startswith(cell_start))
        got = [o["data"][mime] for o in outputs[i] if mime in o.get("data", {})]
        assert got, (cell_start, mime, outputs[i])
        return got[0] if isinstance(got[0], str) else json.dumps(got[0])

    html = data("results = rf.evaluate", "text/html")
    assert "0.5058" in html and "ndcg@10[gain=linear" in html  # BM25 on DL19 (issue 36; Pyserini's figure)
    assert "<table>" in html
    assert "ndcg@10" in data("frame = results.to_pandas", "text/html")
    assert "spread of ndcg@10" in data("spread = rf.spread", "text/html")
    spread_fig = json.loads(data("spread.plot()", "application/vnd.plotly.v1+json"))
    assert [t["name"] for t in spread_fig["data"]] == ["bm25", "bm25-rm3"]
    compare_fig = json.loads(data("comparison.plot()", "application/vnd.plotly.v1+json"))
    assert [t["name"] for t in compare_fig["data"]] == ["bm25", "bm25-rm3"]


def test_the_notebook_is_committed_without_outputs() -> None:
    """Outputs (plotly.js alone is megabytes) are made by running it, not stored."""
    nb = json.loads(Path(NOTEBOOK).read_text(encoding="utf-8"))
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb["cells"] if c["cell_type"] == "code")
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
