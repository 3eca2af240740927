"""Sentences that misled (issue 34), each rewritten to say what happened and what to do; one test a
sentence, on inputs small enough to reason about by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rankflavor.cli.main import cli
from rankflavor.errors import InputError, UsageError
from rankflavor.io.lines import parse_qrels_lines, parse_run_lines
from rankflavor.project.gate import _significance_verdict


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, r.stdout, r.stderr


# -- identify --per-query: -m takes the name the file prints ------------------------------------------

def test_identify_takes_the_measure_name_the_file_prints() -> None:
    """trec_eval -q prints ``ndcg_cut_10``; "give -m" used to refuse that very name ("Did you mean
    'ndcg'?"). It is trec_eval's ``ndcg_cut.10``: ndcg@10 under trec_eval's flavor."""
    from rankflavor.analysis.identify import _given, _picker
    from rankflavor.analysis.spread.api import one_measure

    assert _given("ndcg_cut_10") == one_measure("trec_eval:ndcg_cut.10")
    assert (_given("P_10").metric, _given("P_10").k) == ("P", 10)
    assert _picker("ndcg_cut_10")(["ndcg_cut_10", "P_10"]) == "ndcg_cut_10"
    assert _picker("ndcg@10")(["P_10", "ndcg_cut_10"]) == "ndcg_cut_10"
    with pytest.raises(UsageError, match=r"-m takes rankflavor's names, ndcg@10; a preset's, "
                                         r"trec_eval:ndcg_cut.10; or the name as the per-query file prints it"):
        _given("ndcg_cut_x")


def test_identify_without_m_says_which_forms_it_takes(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 2.0 r\nq2 Q0 c 1 2.0 r\n")
    (tmp_path / "pq.txt").write_text("ndcg_cut_10\tq1\t1.0000\nP_10\tq1\t0.1000\nndcg_cut_10\tq2\t0.0000\n"
                                     "P_10\tq2\t0.0000\n")
    code, _, err = invoke("identify", str(tmp_path / "q.txt"), str(tmp_path / "r.run"),
                          "--per-query", str(tmp_path / "pq.txt"))
    assert code == 2
    assert ("the per-query output holds 2 measures (ndcg_cut_10, P_10): name the one to match with -m, as the file "
            "prints it (-m ndcg_cut_10) or as rankflavor names it (-m ndcg@10)") in err


# -- gate: which way the mean moved -------------------------------------------------------------------

@pytest.mark.parametrize(("new", "base", "p", "passed", "said"), [
    (0.60, 0.50, 0.001, True, "significantly higher than the baseline at alpha 0.05: a rise, no drop"),
    (0.52, 0.50, 0.30, True, "higher than the baseline, not significantly at alpha 0.05: no drop"),
    (0.48, 0.50, 0.30, True, "lower than the baseline, not significantly at alpha 0.05: no significant drop"),
    (0.40, 0.50, 0.001, False, "significantly lower than the baseline at alpha 0.05: a drop"),
    (0.50, 0.50, 1.0, True, "the same mean as the baseline: no drop"),
])
def test_gate_says_which_way_the_mean_moved(new: float, base: float, p: float, passed: bool, said: str) -> None:
    """A small p beside "no drop" read as a drop; the sentence now names the direction."""
    assert _significance_verdict(new, base, p, 0.05) == (passed, said)


# -- spread: the flavor that flips a pair -------------------------------------------------------------

def test_spread_names_the_flavor_that_flips(tmp_path: Path) -> None:
    """A ranks the one grade-3 document first; B ranks six grade-1 documents. Linear gain: B's DCG
    1 + 1/log2(3) + ... + 1/log2(7) = 3.30 beats A's 3; exp2 gain: A's 7 beats B's 3.30. So under
    the base (linear) B is ahead, and the flavor that flips the pair is gain=exp2, row #2."""
    (tmp_path / "q.txt").write_text("q1 0 d1 3\n" + "".join(f"q1 0 d{i} 1\n" for i in range(2, 8)))
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 9 A\n")
    (tmp_path / "b.run").write_text("".join(f"q1 Q0 d{i} {i - 1} {10 - i} B\n" for i in range(2, 8)))
    args = ["spread", str(tmp_path / "q.txt"), str(tmp_path / "a.run"), str(tmp_path / "b.run"),
            "--vary", "gain=linear,exp2", "--no-presets"]
    code, out, _ = invoke(*args, "--format", "md")
    assert code == 0
    assert "| 2 | `gain=exp2` |" in out
    assert "FLIPS: A ahead under #2 gain=exp2 |" in out
    wide = CliRunner().invoke(cli, args, env={"COLUMNS": "160"})
    assert wide.exit_code == 0 and "FLIPS: A ahead under #2 gain=exp2" in wide.stdout


# -- project: a run name the config does not give -----------------------------------------------------

def _project(root: Path) -> None:
    (root / "q.txt").write_text("q1 0 a 1\n")
    (root / "bm25.run").write_text("q1 Q0 a 1 2.0 r\n")
    (root / "rankflavor.toml").write_text("[project]\nname = 't'\n[metrics]\nmeasures = ['ndcg@10']\n"
                                          "[datasets.dl19]\nqrels = 'q.txt'\n[runs.bm25]\npath = 'bm25.run'\n"
                                          "[gate]\nfloor = 0.0\n")


def test_an_unknown_run_name_names_the_projects_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: "tasb: file not found". Now the project's runs and the next step."""
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    for args in (("eval", "dl19", "bm52"), ("gate", "bm52")):
        code, _, err = invoke(*args)
        assert code == 3, err
        assert (f"bm52: no such file, and {tmp_path / 'rankflavor.toml'} names no run 'bm52' (its runs: bm25). "
                "Did you mean 'bm25'? Give the file's path, or add [runs.bm52] path = \"FILE\" to rankflavor.toml") in err
    code, _, err = invoke("eval", "dl91", "bm25")
    assert code == 3 and "names no dataset 'dl91' (its datasets: dl19)" in err and "[datasets.dl91] qrels" in err
    assert invoke("eval", "dl19", "bm25")[0] == 0


# -- one short line in a good file is not a swapped pair of inputs ------------------------------------

def test_a_short_line_after_good_lines_is_not_called_a_swap() -> None:
    good = b"q1 Q0 a 1 3.0 A\nq1 Q0 b 2 2.0 A\n"
    with pytest.raises(InputError) as caught:
        parse_run_lines("r.run", good + b"q1 Q0 c 3\n")
    said = str(caught.value)
    assert said.startswith("r.run:3: expected 6 whitespace-separated fields")
    assert "wrong order" not in said
    assert "The lines before it read as a run, so this one line is cut short or damaged (the inputs are not " \
           "swapped): fix or remove it" in said
    # The first line of a qrels file given as RUN: that is the swap, and it is still said.
    with pytest.raises(InputError, match="This looks like a qrels line: were QRELS and RUN given in the wrong order"):
        parse_run_lines("q.txt", b"q1 0 a 1\nq1 0 b 0\n")
    with pytest.raises(InputError, match="This looks like a run line: were QRELS and RUN given in the wrong order"):
        parse_qrels_lines("r.run", good)
    with pytest.raises(InputError) as caught:
        parse_qrels_lines("q.txt", b"q1 0 a 1\nq1 0 b 0 extra 1\n")
    assert "wrong order" not in str(caught.value) and "The lines before it read as judgments" in str(caught.value)


def test_a_short_line_through_the_command(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text("q1 0 a 1\n")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 3.0 A\nq1 Q0 b 2 2.0 A\nq1 Q0 c 3\n")
    code, _, err = invoke("eval", str(tmp_path / "q.txt"), str(tmp_path / "r.run"))
    assert code == 3 and "r.run:3:" in err and "wrong order" not in err and "cut short or damaged" in err


# -- eval's footer: negative grades under UDCG --------------------------------------------------------

def test_footer_says_udcg_reads_negatives_as_unjudged_not_distractors(tmp_path: Path) -> None:
    """Without --distractor-grade UDCG reads a -1 as unjudged (distractors are never guessed); the
    footer said "pooled but unjudged: gain 0, never in the ideal", words about NDCG, and not how to
    make them distractors."""
    (tmp_path / "q.txt").write_text("q1 0 a 2\nq1 0 b -1\nq2 0 a 1\nq2 0 d -1\n")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 3.0 A\nq1 Q0 b 2 2.0 A\nq2 Q0 d 1 2.0 A\nq2 Q0 a 2 1.0 A\n")
    args = ["eval", str(tmp_path / "q.txt"), str(tmp_path / "r.run"), "-m", "UDCG@5", "-m", "ndcg@5"]
    out = " ".join(invoke(*args)[1].split())
    assert ("negative grades 2, read as unjudged, not as distractors (a grade is a distractor only where "
            "--distractor-grade names it: --distractor-grade -1) in UDCG@5 (negatives=unjudged); read as pooled but "
            "unjudged: gain 0, never in the ideal in ndcg@5 (negatives=unjudged)") in out
    out = " ".join(invoke(*args, "--distractor-grade", "-1")[1].split())
    assert "grade -1 read as a distractor in UDCG@5 (distractor_grade=-1)" in out
    assert "not as distractors" not in out
