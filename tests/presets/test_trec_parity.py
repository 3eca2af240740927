"""rankflavor --preset trec_eval reproduces trec_eval's own outputs line for line.

Expected files come from trec_eval itself (its test suite, and 9.0.8 runs on real TREC DL /
TREC-COVID runs in ../shared/data/expected). Only the measures rankflavor implements are
compared (every all_trec family now, so every line: tests/presets/test_trec_all.py asserts nothing is
filtered out); every such line must match exactly.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from rankflavor.cli.main import cli
from rankflavor.presets.trec_eval import ALL_TREC, FAMILIES

from ..conftest import SHARED, shared_path

# A family's lines are named FAMILY or FAMILY_<parameters> (P_10, iprec_at_recall_0.10,
# utility_2,-1,0,0, ndcg_1=3,2=9); the alternation tries longer names first (Rprec_mult, Rprec).
_NAMES = "|".join(re.escape(f) for f in sorted([*FAMILIES, "runid", "num_q"], key=len, reverse=True))
IMPLEMENTED = re.compile(rf"^({_NAMES})(_.+)?$")

RUNS = {
    "dl19": "qrels.dl19-passage.txt",
    "dl20": "qrels.dl20-passage.txt",
    "covid": "qrels.beir-v1.0.0-trec-covid.test.txt",
}


def _expected_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if IMPLEMENTED.match(line.split("\t")[0].strip())]


def _run(args: list[str]) -> list[str]:
    result = CliRunner().invoke(cli, ["eval", "--preset", "trec_eval", "--format", "trec", *args])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def _real_cases() -> list[str]:
    expected = SHARED / "expected"
    names = sorted(p.name for p in expected.glob("rankllm.*.all_trec.q.c*.txt")) if expected.exists() else []
    return names or ["rankllm.dl19.bm25.top100.all_trec.q.c.txt"]


@pytest.mark.parametrize("name", _real_cases())
def test_real_runs_match_trec_eval_908(name: str) -> None:
    expected = shared_path("expected", name)
    run_name = name.split(".all_trec")[0]
    collection = run_name.split(".")[1]
    args = ["-q", "-c", "-m", "all_trec"]
    if ".l2." in name:
        args += ["-l", "2"]
    args += [str(shared_path("qrels", RUNS[collection])), str(shared_path("runs", run_name + ".run"))]
    want = _expected_lines(expected)
    assert len(want) > 2000  # every implemented measure, per topic and summary
    assert _run(args) == want


def test_mrr_at_10_depth_cut() -> None:
    expected = shared_path("expected", "rankllm.dl19.bm25.top100.recip_rank.M10.l2.q.c.txt")
    args = ["-q", "-c", "-l", "2", "-M", "10", "-m", "recip_rank",
            str(shared_path("qrels", RUNS["dl19"])), str(shared_path("runs", "rankllm.dl19.bm25.top100.run"))]
    assert _run(args) == expected.read_text().splitlines()


TREC_SUITE = {
    "out.test": ["qrels.test", "results.test"],
    "out.test.a": ["-m", "all_trec", "qrels.test", "results.test"],
    "out.test.aq": ["-m", "all_trec", "-q", "qrels.test", "results.test"],
    "out.test.aqc": ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"],
    "out.test.aqcM": ["-m", "all_trec", "-q", "-c", "-M", "100", "qrels.test", "results.trunc"],
    "out.test.aql": ["-m", "all_trec", "-m", "relstring.20", "-q", "-l", "2", "qrels.rel_level", "results.test"],
    "out.test.meas_params": [
        "-q", "-m", "iprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
        "-m", "Rprec_mult.5.0,0.2,0.35", "-m", "utility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
        "-m", "ndcg.1=3,2=9,4=4.5", "-m", "ndcg_cut.10,20,23.4", "-m", "success.2,5,20", "qrels.test", "results.test",
    ],
}


@pytest.mark.parametrize("name", sorted(TREC_SUITE))
def test_trec_eval_own_test_suite_v908(name: str) -> None:
    expected = shared_path("trec_eval_tests", "v9.0.8", name)
    folder = expected.parent.parent
    args = [str(folder / a) if (folder / a).exists() else a for a in TREC_SUITE[name]]
    want = _expected_lines(expected)
    assert len(want) >= 18
    assert _run(args) == want


def test_comment_suite_v908() -> None:
    """MS MARCO v2.1 segment ids containing '#', 301 run topics vs 31 qrels topics."""
    expected = shared_path("expected", "trec_eval_tests.comment.test.v9.0.8.txt")
    folder = shared_path("trec_eval_tests")
    got = _run([str(folder / "qrels.comment.test"), str(folder / "results.comment.test")])
    assert got == _expected_lines(expected)


def test_all_trec_lists_families_in_trec_order() -> None:
    assert ALL_TREC[0] == "runid" and ALL_TREC.index("ndcg") < ALL_TREC.index("ndcg_cut")
