"""Markdown and LaTeX renderers of eval results, spread and diff: the tables are there, and ids
(untrusted text) come out escaped so that they show as written and cannot break a table cell,
open code, become HTML, or run a TeX macro."""

from __future__ import annotations

import html
import re

import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.render.latex import latex_text
from rankflavor.render.md import md_code, md_text

HOSTILE = ["a|b", "`tick`", "<script>alert(1)</script>", "back\\slash", "R&D", "snake_case", "50%$#^~{x}"]


def _md_unescape(text: str) -> str:
    return html.unescape(re.sub(r"\\(.)", r"\1", text))


_LATEX_BACK = {r"\textbackslash{}": "\\", r"\textasciicircum{}": "^", r"\textasciitilde{}": "~",
               r"\textless{}": "<", r"\textgreater{}": ">", r"\textbar{}": "|"}


def _latex_unescape(text: str) -> str:
    for cmd, ch in _LATEX_BACK.items():
        text = text.replace(cmd, ch)
    return re.sub(r"\\([{}$&#_%])", r"\1", text)


@pytest.mark.parametrize("text", HOSTILE)
def test_md_escaping_round_trips_and_defuses(text: str) -> None:
    out = md_text(text)
    assert _md_unescape(out) == text
    assert "<" not in out and ">" not in out  # no HTML tag can form
    assert not re.search(r"(?<!\\)[|`]", out)  # no bare cell separator or code fence
    code = md_code(text)
    assert not re.search(r"(?<!\\)\|", code)


@pytest.mark.parametrize("text", HOSTILE)
def test_latex_escaping_round_trips_and_defuses(text: str) -> None:
    out = latex_text(text)
    assert _latex_unescape(out) == text
    bare = out
    for cmd in _LATEX_BACK:
        bare = bare.replace(cmd, "")
    assert not re.search(r"(?<!\\)[{}$&#_%^~<>|]", bare)  # every special character escaped
    assert not re.search(r"\\(?!textbackslash|textasciicircum|textasciitilde|textless|textgreater|textbar|[{}$&#_%])",
                         out)  # the only commands are the ones that print a character


@pytest.fixture(scope="module")
def hostile_results():  # type: ignore[no-untyped-def]
    qrels = {q: {"d1": 1, "d2": 0} for q in HOSTILE}
    run = {q: {"d1": 1.0, "d2": 2.0} for q in HOSTILE}
    return rankflavor.evaluate(qrels, run, ["ndcg@10", "ndcg@10[gain=exp2]"])


def test_md_tables_keep_their_columns_with_hostile_ids(hostile_results) -> None:  # type: ignore[no-untyped-def]
    out = rankflavor.render.render(hostile_results, "md", per_query=True)
    table_lines = [line for line in out.splitlines() if line.startswith("|")]
    per_query = [line for line in table_lines if line.count("|") > 0 and "ndcg@10[" not in line]
    for line in table_lines:
        cells = re.split(r"(?<!\\)\|", line)[1:-1]
        assert len(cells) in (3, 4), line  # query + two measures, or measure/value/queries/flavor
    shown = {_md_unescape(re.split(r"(?<!\\)\|", line)[1].strip()) for line in per_query}
    assert set(HOSTILE) <= shown
    assert "<script>" not in out
    # Per-query columns name their flavor: the two ndcg@10 columns differ.
    assert "`ndcg@10[=base]`" in out and "`ndcg@10[gain=exp2]`" in out


def test_latex_tables_keep_their_columns_with_hostile_ids(hostile_results) -> None:  # type: ignore[no-untyped-def]
    out = rankflavor.render.render(hostile_results, "latex", per_query=True)
    assert out.count(r"\begin{tabular}") == 2 == out.count(r"\end{tabular}")
    body = [line for line in out.splitlines() if line.endswith(r"\\") and not line.startswith("measure")]
    for line in body:
        cells = re.split(r"(?<!\\)&", line[:-2])
        assert len(cells) in (3, 4), line
    shown = {_latex_unescape(re.split(r"(?<!\\)&", line)[0].strip()) for line in body}
    assert set(HOSTILE) <= shown
    assert "<script>" not in out


def test_formats_on_eval_spread_diff(tmp_path) -> None:  # type: ignore[no-untyped-def]
    qrels, run, run2 = tmp_path / "q", tmp_path / "a_b|run", tmp_path / "r2"
    qrels.write_text("q1 0 d1 2\nq1 0 d2 1\nq_2 0 d1 1\n")
    run.write_text("q1 Q0 d2 1 2 t\nq1 Q0 d1 2 1 t\nq_2 Q0 d1 1 1 t\n")
    run2.write_text("q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq_2 Q0 d1 1 1 t\n")

    def go(*args: str) -> str:
        result = CliRunner().invoke(cli, list(args))
        assert result.exit_code == 0, result.output
        return result.output

    for fmt in ("md", "latex"):
        ev = go("eval", str(qrels), str(run), "-m", "ndcg@10", "-q", "--format", fmt)
        sp = go("spread", str(qrels), str(run), str(run2), "--vary", "gain=linear,exp2", "--format", fmt)
        df = go("diff", str(qrels), str(run), "ndcg@10", "ndcg@10[gain=exp2]", "--format", fmt)
        if fmt == "md":
            assert "| measure | value | queries | flavor |" in ev and "q\\_2" in ev
            assert "**spread per run" in sp and "spark\\_triples (defect)" in sp
            assert "a\\_b\\|run" in sp or "a\\_b" in sp
            assert "**path from A to B" in df
        else:
            assert r"\begin{tabular}" in ev and r"q\_2" in ev
            assert r"spark\_triples (defect)" in sp and r"\toprule" in sp
            assert r"\begin{tabular}" in df
        # The headline leaves the defect preset out, and says so.
        assert "left out of min/max" in sp
