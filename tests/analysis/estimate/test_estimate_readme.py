"""README's DL19 worked example of agreement and estimate: the judgments built as its awk lines
build them, each command's output compared with the lines README shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rankflavor.cli.main import cli

from ...conftest import shared_path

ROOT = Path(__file__).resolve().parents[3]


def _block() -> list[str]:
    text = (ROOT / "README.md").read_text()
    start = text.index("$ D=../shared/data\n$ awk '$1 % 2 == 0")
    return text[start:text.index("```", start)].splitlines()


def test_the_readme_example_is_what_the_commands_print(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels = shared_path("qrels", "qrels.dl19-passage.txt")
    run = shared_path("runs", "rankllm.dl19.bm25.top100.run")
    human, llm = [], []
    for line in qrels.read_text().splitlines():
        q, _, doc, grade = line.split()
        if int(q) % 2 == 0:  # awk '$1 % 2 == 0 {print $1, 0, $3, $4, "human:nist"}'
            human.append(f"{q} 0 {doc} {grade} human:nist\n")
        g = int(grade)  # awk '{g = $4; if ($3 % 5 == 0 && g < 3) g++; print $1, 0, $3, g, "llm:stand-in"}'
        if int(doc) % 5 == 0 and g < 3:
            g += 1
        llm.append(f"{q} 0 {doc} {g} llm:stand-in\n")
    (tmp_path / "human.qrels").write_text("".join(human))
    (tmp_path / "llm.qrels").write_text("".join(llm))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    block = _block()
    at = next(i for i, line in enumerate(block) if line.startswith("$ rankflavor agreement"))
    est = next(i for i, line in enumerate(block) if line.startswith("$ rankflavor estimate"))
    agreed = CliRunner().invoke(cli, ["agreement", "human.qrels", "llm.qrels"])
    assert agreed.exit_code == 0, agreed.output
    assert agreed.stdout.splitlines()[:5] == block[at + 1:est]  # | head -5
    estimated = CliRunner().invoke(cli, ["estimate", "human.qrels", "llm.qrels", str(run), "-m", "ndcg@10"])
    assert estimated.exit_code == 0, estimated.output
    assert estimated.stdout.splitlines()[5:15] == block[est + 1:]  # | sed -n 6,15p
    # the prose beside it: the full-judgment value lies inside the PPI interval README states
    full = CliRunner().invoke(cli, ["eval", str(qrels), str(run), "-m", "ndcg@10", "--format", "json"])
    import json

    value = json.loads(full.stdout)["measures"][0]["value"]
    assert round(value, 4) == 0.5058 and 0.4549 <= value <= 0.5817
    assert "BM25 0.5058 under the same flavor: inside the PPI interval [0.4549, 0.5817]" in " ".join(
        (ROOT / "README.md").read_text().split())


def test_the_readme_fill_example_is_what_judgments_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README's judgments example over mixed sources: a third of DL19's lines given back as an LLM's."""
    qrels = shared_path("qrels", "qrels.dl19-passage.txt")
    run = shared_path("runs", "rankllm.dl19.bm25.top100.run")
    lines = qrels.read_text().splitlines()
    human = [f"{q} 0 {d} {g} human:nist\n" for n, (q, _, d, g) in enumerate(map(str.split, lines), 1) if n % 3 != 0]
    llm = [f"{q} 0 {d} {g} llm:stand-in\n" for n, (q, _, d, g) in enumerate(map(str.split, lines), 1) if n % 3 == 0]
    (tmp_path / "mixed.qrels").write_text("".join(human + llm))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    text = (ROOT / "README.md").read_text()
    start = text.index("$ rankflavor judgments mixed.qrels")
    block = text[start:text.index("```", start)].splitlines()
    got = CliRunner().invoke(cli, ["judgments", "mixed.qrels", str(run), "-m", "ndcg@10", "--scale", "trec_dl",
                                   "--labels", "prefer=human"])
    assert got.exit_code == 0, got.output
    assert got.stdout.splitlines()[-3:] == block[2:]
