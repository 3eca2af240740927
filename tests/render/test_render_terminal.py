"""The terminal, fixed: tables as wide as the terminal (80, 120, 200 columns), flavor strings that
wrap only after commas, per-query values whose column names the flavor, counts lines true of the
flavor used, presets readable at 100 columns, defect presets out of the spread headline."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.flavor.flavor import Flavor
from rankflavor.metrics.measure import Measure
from rankflavor.presets import PRESETS
from rankflavor.render.console import comma_pieces, measure_delta
from rankflavor.render.spreadfmt import defect_flavors, knob_delta, render_spread
from rankflavor.render.text import base_flavor, render_table

from ..conftest import shared_path

WIDTHS = (80, 120, 200)
DL19 = ("qrels", "qrels.dl19-passage.txt")
BM25 = ("runs", "rankllm.dl19.bm25.top100.run")
RM3 = ("runs", "rankllm.dl19.bm25-rm3.top100.run")

# flavor-facts §4.1 IR toy: q3 only in the qrels, q4 only in the run, d7/e9 unjudged, d6 negative.
QRELS = "q1 0 d1 3\nq1 0 d2 2\nq1 0 d3 0\nq1 0 d4 1\nq1 0 d5 2\nq1 0 d6 -1\nq2 0 e1 0\nq2 0 e2 0\nq3 0 f1 1\n"
RUN = ("q1 Q0 d3 1 10 t\nq1 Q0 d1 2 9 t\nq1 Q0 d2 3 8 t\nq1 Q0 d7 4 8 t\nq1 Q0 d6 5 7 t\nq1 Q0 d4 6 6 t\n"
       "q2 Q0 e1 1 5 t\nq2 Q0 e9 2 4 t\nq4 Q0 g1 1 5 t\n")
MEASURES = ["ndcg@10", "ndcg@10[gain=exp2]", "ndcg@10[ties=input_order,missing=skip]", "AP", "P@5[rel=2]",
            "ndcg@5[gain={0:0,1:1,2:3,3:7},discount=jk(2),ideal=recall@20]"]


@pytest.fixture
def toy(tmp_path: Path) -> tuple[str, str]:
    q, r = tmp_path / "toy.qrels", tmp_path / "toy.run"
    q.write_text(QRELS)
    r.write_text(RUN)
    return str(q), str(r)


def _whole_tokens(output: str, flavors: list[str]) -> None:
    """Every ``knob=value`` piece printed is whole: a comma piece of one of ``flavors`` or a knob
    at one of its values; nothing was cut mid-token (``missing=ze`` / ``ro``) or truncated (``…``)."""
    known = {f"{n}={v}" for n, v in Flavor().knobs().items()}
    for f in flavors:
        for p in comma_pieces(f):
            p = p.rstrip(",")
            known |= {p, p.rstrip("]"), p.split("[", 1)[-1].rstrip("]")}
    for line in output.splitlines():
        for chunk in re.split(r"[│┃\s]+", line):
            for piece in chunk.split(","):
                piece = piece.strip(";:").removeprefix("(")
                if piece.count(")") > piece.count("("):  # a sentence's closing parenthesis
                    piece = piece[:-1]
                if "=" in piece and "|" not in piece and piece != "=":
                    assert piece in known, (piece, line)
    assert "…" not in output


def _cli(*args: str, width: int) -> str:
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("width", WIDTHS)
def test_eval_table_fits_the_width_and_never_splits_a_flavor_token(toy: tuple[str, str], width: int) -> None:
    results = rankflavor.evaluate(*toy, MEASURES)
    output = render_table(results, per_query=True, width=width)
    assert max(len(line) for line in output.splitlines()) <= width
    base = base_flavor(results)
    flavors = [str(m.measure) for m in results] + [measure_delta(m.measure, base) for m in results]
    flavors.append(",".join(f"{n}={v}" for n, v in base.knobs().items()))
    _whole_tokens(output, flavors)
    # The CLI reads the terminal's width (COLUMNS) instead of a fixed 200 columns.
    cli_out = _cli("eval", *[a for m in MEASURES for a in ("-m", m)], *toy, width=width)
    assert max(len(line) for line in cli_out.splitlines()) <= width


@pytest.mark.parametrize("width", WIDTHS)
def test_every_per_query_column_names_its_flavor(toy: tuple[str, str], width: int) -> None:
    """Two flavors of ndcg@10 are two columns, each headed by the knobs that set it apart from the
    base printed above, and base + those knobs is exactly the measure's flavor."""
    results = rankflavor.evaluate(*toy, MEASURES[:5])
    output = render_table(results, per_query=True, width=width)
    base = base_flavor(results)
    base_line = ",".join(f"{n}={getattr(base, n)}" for n in dict.fromkeys(k for m in results for k in m.measure.knobs))
    assert base_line.replace(",", "") in output.replace("\n", "").replace(",", "")
    headers = [measure_delta(m.measure, base) for m in results]
    assert len(set(headers)) == len(headers)  # no two columns read alike
    assert "each column is measure[the knobs where it differs" in " ".join(output.split())  # not eaten as markup
    flat = "".join(output.split())
    for m, header in zip(results, headers, strict=True):
        assert header in flat
        knobs = dict(kv.split("=", 1) for kv in header[header.index("[") + 1:-1].split(",") if "=" in kv and kv != "=base")
        assert Measure(m.measure.metric, m.measure.k, base.with_knobs(**knobs)) == m.measure
    # Each value row is a query; q3 has no row in the missing=skip measure, shown as "-".
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in output.splitlines() if re.match(r"│ q\d ", line)]
    assert {r[0] for r in rows} == {"q1", "q2", "q3"}
    assert any("-" in r[1:] for r in rows if r[0] == "q3")
    assert not any("-" in r[1:] for r in rows if r[0] != "q3")


def test_narrow_table_states_the_base_once_and_rows_name_the_difference(toy: tuple[str, str]) -> None:
    results = rankflavor.evaluate(*toy, ["ndcg@10", "ndcg@10[gain=exp2]"])
    narrow = render_table(results, per_query=False, width=80)
    assert narrow.count("flavor base") == 1
    assert "ndcg@10[gain=exp2]" in narrow and "ndcg@10[=base]" in narrow
    wide = render_table(results, per_query=False, width=200)
    assert "flavor base" not in wide and str(results[1].measure).split(",")[0] in wide


def test_compact_rows_name_quiet_knobs_that_differ_from_the_base(toy: tuple[str, str]) -> None:
    """Regression: a quiet knob (fractional) set on one measure went into the base, and the measure
    at the default showed nothing, so the table read as if both truncated fractional grades."""
    results = rankflavor.evaluate(*toy, ["ndcg@10[fractional=truncate]", "ndcg@10[gain=exp2]"])
    base = base_flavor(results)
    for m in results:
        header = measure_delta(m.measure, base)
        knobs = dict(kv.split("=", 1) for kv in header[header.index("[") + 1:-1].split(",") if kv != "=base")
        assert Measure(m.measure.metric, m.measure.k, base.with_knobs(**knobs)) == m.measure, header
    assert "fractional=" in render_table(results, per_query=False, width=80)


# -- counts lines ------------------------------------------------------------------------------

def test_counts_line_is_true_under_run_only_include(toy: tuple[str, str]) -> None:
    """Regression: the line said "1 only in run (ignored)" while run_only=include put q4 in the mean."""
    results = rankflavor.evaluate(*toy, ["ndcg@10[run_only=include]"])
    assert results[0].n_queries == 4  # q4 is in the mean
    output = render_table(results, per_query=False, width=120)
    assert "ignored" not in output
    assert "only in run: in the mean as queries with nothing relevant (run_only=include)" in output
    skip = render_table(rankflavor.evaluate(*toy, ["ndcg@10"]), per_query=False, width=120)
    assert "only in run: ignored (run_only=skip)" in skip


def test_counts_lines_follow_each_knob(toy: tuple[str, str]) -> None:
    out = render_table(rankflavor.evaluate(*toy, ["ndcg@10[missing=skip,unjudged=condensed,negatives=zero]"]), False, 200)
    assert "only in qrels: left out of the mean (missing=skip)" in out
    assert "unjudged retrieved 2, removed before ranking (unjudged=condensed)" in out
    assert "negative grades 1, read as judged non-relevant (negatives=zero)" in out
    mixed = render_table(rankflavor.evaluate(*toy, ["ndcg@10", "AP[missing=skip]"]), False, 200)
    assert "scored 0 in ndcg@10 (missing=zero); left out of the mean in AP (missing=skip)" in mixed


def test_counts_line_names_negative_grades_udcg_reads_as_distractors() -> None:
    """Regression: the line said every negative grade was "pooled but unjudged" while UDCG, by its
    distractor_grade or utility=grade, scored it as a distractor."""
    qrels, run = {"q": {"a": 1, "b": -1, "c": 0}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7}}
    measures = ["UDCG@3[distractor_grade=-1]", "UDCG@3[utility=grade]", "ndcg@3"]
    out = render_table(rankflavor.evaluate(qrels, run, measures), False, 400)
    assert "grade -1 read as a distractor in UDCG@3 (distractor_grade=-1)" in out
    assert "read as negative utilities (distractors) in UDCG@3 (utility=grade)" in out
    assert "pooled but unjudged: gain 0, never in the ideal in ndcg@3 (negatives=unjudged)" in out
    plain = render_table(rankflavor.evaluate(qrels, run, ["UDCG@3"]), False, 400)
    # no distractor grade declared: unjudged, and the line says how to declare one (issue 34)
    assert ("negative grades 1, read as unjudged, not as distractors (a grade is a distractor only where "
            "--distractor-grade names it: --distractor-grade -1) in UDCG@3 (negatives=unjudged)") in plain


# -- flavors --presets -------------------------------------------------------------------------

def test_presets_are_readable_at_100_columns() -> None:
    output = _cli("flavors", "--presets", width=100)
    lines = output.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert "…" not in output
    flat = " ".join(output.split())
    for p in PRESETS.values():
        assert any(line.startswith(p.name) for line in lines), p.name  # one block per preset
        assert " ".join(p.evidence.split()) in flat  # nothing cut
    assert "spark_triples  [reproduces a known defect]" in lines
    knob_lines = [line for line in lines if line.startswith("  knobs: ") or (line.startswith("  ") and " " not in line.strip())]
    assert len(knob_lines) >= len(PRESETS)
    _whole_tokens("\n".join(knob_lines), [",".join(f"{n}={v}" for n, v in p.flavor.knobs().items()) for p in PRESETS.values()])


# -- spread ------------------------------------------------------------------------------------

def test_defect_presets_are_data_on_the_preset() -> None:
    marked = [p.name for p in PRESETS.values() if p.defect]
    assert marked == ["spark_triples"]
    assert "never sorted" in (PRESETS["spark_triples"].defect or "")


@pytest.fixture(scope="module")
def dl19_spread():  # type: ignore[no-untyped-def]
    # shared_path skips every test of this fixture where ../shared/data is absent
    return rankflavor.spread(str(shared_path(*DL19)), [str(shared_path(*BM25)), str(shared_path(*RM3))], "ndcg@10",
                             grid={"gain": ["linear", "exp2"]})


def test_spread_headline_leaves_defect_presets_out(dl19_spread) -> None:  # type: ignore[no-untyped-def]
    s = dl19_spread
    defects = defect_flavors(s)
    assert [s.flavors[j].presets for j in defects] == [("spark_triples",)]
    j = next(iter(defects))
    assert s.means[0, j] == pytest.approx(4.9706, abs=1e-4)  # the unsorted ideal: NDCG far above 1
    assert not s.include_defects and [f.flavor for f in s.excluded] == [s.flavors[j].flavor]
    assert max(r.high for r in s.summaries) <= 1.0  # the result's own summaries leave it out
    assert all(r.n_flavors == len(s.flavors) - 1 for r in s.summaries)
    assert all(p.a_better + p.b_better + p.equal == len(s.flavors) - 1 for p in s.pairs)
    assert all(s.flavors[j].flavor not in o.flavors for o in s.orders)
    note = s.all_notes[0]
    assert "spark_triples" in note and "--include-defects" in note and "never sorted" in note
    full = s.with_defects()
    assert max(r.high for r in full.summaries) > 4 and "include" in full.all_notes[0]
    assert all(r.n_flavors == len(s.flavors) for r in full.summaries)
    for width in WIDTHS:
        out = render_spread(s, "table", width=width)
        assert max(len(line) for line in out.splitlines()) <= width
        assert "spark_triples (defect)" in " ".join(out.split())  # listed, marked
        per_run = out[out.index("spread per run"):out.index("run pairs")]
        assert "4.9706" not in per_run and "4.9706" in out
        _whole_tokens(out, [knob_delta(f.measure, s.base) for f in s.flavors] + [str(s.base)])
    included = render_spread(full, "table", width=200)
    assert "4.9706" in included[included.index("spread per run"):included.index("run pairs")]


def test_a_flavor_a_sound_preset_shares_stays_in_the_headline() -> None:
    from rankflavor.analysis.spread.api import defect_reason

    assert defect_reason(["preset:spark_triples"]) is not None
    assert defect_reason(["preset:spark_triples", "preset:quepid"]) is None  # a sound preset shares it
    assert defect_reason(["grid", "preset:spark_triples"]) is None
    assert defect_reason(["base"]) is None


def test_spread_cli_include_defects(dl19_spread) -> None:  # type: ignore[no-untyped-def]
    args = ["spread", str(shared_path(*DL19)), str(shared_path(*BM25)), "--vary", "gain=linear"]
    default = _cli(*args, width=120)
    assert "left out of min/max" in " ".join(default.split())
    included = _cli(*args, "--include-defects", width=120)
    assert "4.9706" in included[included.index("spread per run"):]


# -- diff and explain fit too ------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
def test_diff_and_explain_fit_the_width(toy: tuple[str, str], width: int) -> None:
    a, b = "ndcg@10", "ndcg@10[gain=exp2,ideal=local,ties=input_order,empty=one,missing=skip]"
    out = _cli("diff", *toy, a, b, width=width)
    assert max(len(line) for line in out.splitlines()) <= width
    d = rankflavor.diff(*toy, a, b)
    _whole_tokens(out, [str(d.a), str(d.b)])
    assert "…" not in out
    ex = _cli("explain", *toy, "-Q", "q1", width=width)
    assert max(len(line) for line in ex.splitlines()) <= width
    assert "…" not in ex


def test_counts_lines_break_between_counts_not_inside_one(tmp_path: Path) -> None:
    """At 80 columns a long counts line breaks at its ' | ' separators: each count stays whole."""
    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b -1\n")
    run.write_text("".join(f"q1 Q0 d{i} {i + 1} {10 - i} t\n" for i in range(6)) + "q1 Q0 a 7 0.5 t\nq1 Q0 b 8 0.4 t\n")
    out = CliRunner().invoke(cli, ["eval", str(qrels), str(run), "-m", "ndcg@10"], env={"COLUMNS": "80"}).output
    assert all(len(line) <= 80 for line in out.splitlines())
    for phrase in ("duplicates resolved: run 0, qrels 0", "negative grades 1"):
        assert any(phrase in line for line in out.splitlines()), (phrase, out)
