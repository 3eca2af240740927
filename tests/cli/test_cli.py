"""The command line: output formats carry the canonical flavor and exact values, ``flavors``
documents every knob, ``python -m rankflavor`` works, and the trec_eval preset reproduces the
flavor-facts.md §4.1 IR toy fingerprints (values produced there by running trec_eval 9.0.8 and
pytrec_eval 0.5.11).
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.flavor.flavor import KNOBS
from rankflavor.metrics import REGISTRY

# flavor-facts §4.1 IR toy, as TREC files.
TOY_QRELS = """q1 0 d1 3
q1 0 d2 2
q1 0 d3 0
q1 0 d4 1
q1 0 d5 2
q1 0 d6 -1
q2 0 e1 0
q2 0 e2 0
q3 0 f1 1
"""
TOY_RUN = """q1 Q0 d3 1 10 toy
q1 Q0 d1 2 9 toy
q1 Q0 d2 3 8 toy
q1 Q0 d7 4 8 toy
q1 Q0 d6 5 7 toy
q1 Q0 d4 6 6 toy
q2 Q0 e1 1 5 toy
q2 Q0 e9 2 4 toy
q4 Q0 g1 1 5 toy
"""


@pytest.fixture
def toy(write) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    return str(write("toy.qrels", TOY_QRELS)), str(write("toy.run", TOY_RUN))


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    assert result.exception is None
    return result.output


def trec_values(output: str) -> dict[tuple[str, str], str]:
    """``{(measure, query): value text}`` from trec_eval's layout."""
    out = {}
    for line in output.splitlines():
        name, query, value = line.split("\t")
        out[(name.strip(), query)] = value
    return out


# ---------------------------------------------------------------------------------------------
# flavor-facts §4.1 under --preset trec_eval


def test_toy_fingerprints_trec_eval(toy: tuple[str, str]) -> None:
    """§4.1: ndcg 0.5464, ndcg_cut_3 0.3597, map 0.375, bpref 0.0 for q1; mean ndcg 0.2732 over
    q1,q2 (num_q 2; 9.0.8 skips the missing q3)."""
    got = trec_values(invoke("eval", "--preset", "trec_eval", "-q", "--format", "trec",
                             "-m", "ndcg", "-m", "ndcg_cut.3", "-m", "map", "-m", "bpref", "-m", "num_q", *toy))
    assert got[("ndcg", "q1")] == "0.5464"
    assert got[("ndcg_cut_3", "q1")] == "0.3597"
    assert got[("map", "q1")] == "0.3750"
    assert got[("bpref", "q1")] == "0.0000"
    assert got[("ndcg", "all")] == "0.2732"
    assert got[("num_q", "all")] == "2"
    assert not any(q in ("q3", "q4") for _, q in got)  # missing and unjudged topics print no rows


def test_toy_fingerprints_trec_eval_options(toy: tuple[str, str]) -> None:
    """§4.1: -J ndcg 0.5838 / ndcg_cut_3 0.5498; -M 3 ndcg 0.3325; -l 2 map 0.375 -> 0.333 with
    ndcg and ndcg_cut_3 unchanged; -c: mean over q1, q2, q3 (0.5464 / 3 = 0.1821)."""
    base = ["eval", "--preset", "trec_eval", "-q", "--format", "trec", "-m", "ndcg", "-m", "ndcg_cut.3", "-m", "map"]
    judged_only = trec_values(invoke(*base, "-J", *toy))
    assert (judged_only[("ndcg", "q1")], judged_only[("ndcg_cut_3", "q1")]) == ("0.5838", "0.5498")
    assert trec_values(invoke(*base, "-M", "3", *toy))[("ndcg", "q1")] == "0.3325"
    level2 = trec_values(invoke(*base, "-l", "2", *toy))
    assert level2[("map", "q1")] == "0.3333"
    assert (level2[("ndcg", "q1")], level2[("ndcg_cut_3", "q1")]) == ("0.5464", "0.3597")
    complete = trec_values(invoke(*base, "-c", "-m", "num_q", *toy))
    assert complete[("ndcg", "all")] == "0.1821" and complete[("num_q", "all")] == "3"


def test_toy_fingerprints_gain_table_and_pytrec_eval_digits(toy: tuple[str, str]) -> None:
    """§4.1: trec_eval ndcg.1=1,2=3,3=7 0.5603; pytrec_eval ndcg 0.5463908402749824 and
    ndcg_cut_3 0.3597186998521971 (csv keeps full precision)."""
    got = trec_values(invoke("eval", "--preset", "trec_eval", "-q", "--format", "trec", "-m", "ndcg.1=1,2=3,3=7", *toy))
    assert got[("ndcg_1=1,2=3,3=7", "q1")] == "0.5603"
    rows = list(csv.DictReader(io.StringIO(invoke("eval", "--preset", "pytrec_eval", "-q", "--format", "csv",
                                                  "-m", "ndcg", "-m", "ndcg_cut.3", *toy))))
    q1 = {r["metric"]: float(r["value"]) for r in rows if r["query"] == "q1"}
    assert abs(q1["ndcg"] - 0.5463908402749824) < 1e-15
    assert abs(q1["ndcg_cut_3"] - 0.3597186998521971) < 1e-15


# ---------------------------------------------------------------------------------------------
# Formats


MEASURES = ["-m", "ndcg@10[gain=exp2]", "-m", "AP", "-m", "num_ret", "-m", "ndcg[empty=nan]"]


def test_csv_columns_all_row_and_exact_values(toy: tuple[str, str]) -> None:
    text = invoke("eval", "-q", "--format", "csv", *MEASURES, *toy)
    rows = list(csv.DictReader(io.StringIO(text)))
    # the original four columns first; then each summary's counts and each row's status (test_formats_agree)
    assert text.splitlines()[0] == "metric,query,value,flavor,n_queries,skipped_empty,skipped_missing,status"
    results = rankflavor.evaluate(*toy, ["ndcg@10[gain=exp2]", "AP", "num_ret", "ndcg[empty=nan]"])
    assert len(rows) == sum(len(m.queries) + 1 for m in results)
    for m in results:
        mine = [r for r in rows if r["flavor"] == str(m.measure)]
        assert mine and all(r["metric"] == m.measure.display for r in mine)
        values = {r["query"]: float(r["value"]) for r in mine}
        assert values.pop("all") == m.summary  # the mean row, value round-trips exactly
        expected = m.per_query()
        assert values.keys() == expected.keys()
        for q, v in values.items():
            assert v == expected[q] or (v != v and expected[q] != expected[q])  # NaN stays NaN
    summary_only = list(csv.DictReader(io.StringIO(invoke("eval", "--format", "csv", *MEASURES, *toy))))
    assert {r["query"] for r in summary_only} == {"all"} and len(summary_only) == 4


def test_json_parses_and_carries_the_flavor(toy: tuple[str, str]) -> None:
    data = json.loads(invoke("eval", "-q", "--format", "json", *MEASURES, *toy))
    results = rankflavor.evaluate(*toy, ["ndcg@10[gain=exp2]", "AP", "num_ret", "ndcg[empty=nan]"])
    assert [m["flavor"] for m in data["measures"]] == [str(m.measure) for m in results]
    for entry, m in zip(data["measures"], results, strict=True):
        assert entry["value"] == m.summary
        assert {row["query"]: row["value"] for row in entry["per_query"]} == {
            q: (None if v != v else v) for q, v in m.per_query().items()}
    assert data["counts"]["queries_only_in_run"] == 1 and data["counts"]["unjudged_retrieved"] == 2
    summary_only = json.loads(invoke("eval", "--format", "json", *MEASURES, *toy))
    assert all("per_query" not in m for m in summary_only["measures"])


def _table_flavors(output: str) -> dict[str, str]:
    """Reassemble the folded flavor column of the summary table: ``{measure: flavor text}``."""
    flavors: dict[str, str] = {}
    current = None
    for line in output.splitlines():
        if line.startswith("└"):
            break
        if not line.startswith("│"):
            continue
        cells = line.split("│")
        if cells[1].strip():
            current = cells[1].strip()
            flavors[current] = ""
        assert current is not None
        flavors[current] += cells[-2].strip()
    return flavors


def test_table_shows_the_full_canonical_flavor(toy: tuple[str, str]) -> None:
    # A wide terminal shows full flavor strings (a narrow one, the knobs that differ from a base:
    # tests/render/test_render_terminal.py).
    result = CliRunner().invoke(cli, ["eval", *MEASURES, "-m", "ndcg@5[gain={0:0,1:1,2:3,3:7},discount=jk(2),ideal=recall@20]",
                                      *toy], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    output = result.output
    results = rankflavor.evaluate(*toy, ["ndcg@10[gain=exp2]", "AP", "num_ret", "ndcg[empty=nan]",
                                         "ndcg@5[gain={0:0,1:1,2:3,3:7},discount=jk(2),ideal=recall@20]"])
    shown = _table_flavors(output)
    assert len(shown) == len(results)
    for m in results:
        assert shown[m.measure.display] == str(m.measure)  # brackets and braces survive rich markup
    assert "2 evaluated, 1 only in qrels, 1 only in run" in output


def test_table_does_not_eat_brackets_in_query_ids(tmp_path: Path) -> None:
    """Regression: per-query rows printed query ids through rich markup, so ``[b]q`` and
    ``q[red]`` both showed as ``q``."""
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("[b]q 0 d 1\nq[red] 0 d 1\n")
    run.write_text("[b]q Q0 d 1 1.0 t\nq[red] Q0 d 1 1.0 t\n")
    output = invoke("eval", "-q", "-m", "ndcg", str(qrels), str(run))
    assert "[b]q" in output and "q[red]" in output


def test_trec_format_layout(toy: tuple[str, str]) -> None:
    lines = invoke("eval", "--preset", "trec_eval", "-q", "--format", "trec", "-m", "P.5", "-m", "num_ret", *toy).splitlines()
    assert lines[0] == "num_ret               \tq1\t6"  # trec_eval's table order: num_ret before P
    assert lines[1] == "P_5                   \tq1\t0.4000"
    assert lines[-1] == "P_5                   \tall\t0.2000"


# ---------------------------------------------------------------------------------------------
# Other commands


def test_flavors_lists_every_knob_value_and_metric() -> None:
    output = invoke("flavors")
    flat = " ".join(output.split())
    for knob in KNOBS.values():
        assert knob.name in output
        for value in (v.strip() for v in knob.values.split("|")):
            assert value in flat, (knob.name, value)
    for citation in ("[MN08]", "[JK02]", "[Sak07]", "[TE]"):  # rich markup must keep them
        assert citation in flat
    for metric in REGISTRY:
        assert metric in output


def test_flavors_presets_lists_the_presets() -> None:
    from rankflavor.presets import PRESETS

    output = invoke("flavors", "--presets")
    for name in PRESETS:
        assert name in output


def test_python_dash_m_help_and_version() -> None:
    proc = subprocess.run([sys.executable, "-m", "rankflavor", "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Usage:" in proc.stdout
    for command in ("eval", "flavors"):
        assert command in proc.stdout
    assert rankflavor.__version__ in invoke("--version")


def test_the_version_is_the_packages() -> None:
    """--version prints rankflavor.__version__ (no metadata lookup at start-up), which must be the
    version the package is built with (pyproject.toml) and installed as."""
    import importlib.metadata
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert project["project"]["version"] == rankflavor.__version__ == importlib.metadata.version("rankflavor")
    assert invoke("--version").strip() == f"rankflavor, version {rankflavor.__version__}"


def test_eval_help_documents_the_trec_eval_options() -> None:
    output = invoke("eval", "--help")
    for option in ("-q", "-c", "-l", "-M", "-J", "--format", "--flavor", "--preset"):
        assert option in output


def test_flavor_option_applies_only_where_read(toy: tuple[str, str]) -> None:
    """--flavor gain=exp2 changes ndcg but not AP (which does not read it), and is named in the
    printed flavor; the same knob inside AP's brackets would be an error."""
    text = invoke("eval", "--format", "csv", "-m", "ndcg", "-m", "AP", "--flavor", "gain=exp2", *toy)
    flavors = [r["flavor"] for r in csv.DictReader(io.StringIO(text))]
    assert "gain=exp2" in flavors[0] and "gain" not in flavors[1]
