"""Statistics that are not finite numbers have one meaning in every format (rankflavor.base.finite):
JSON ``null`` with the reason under ``"undefined"`` (or, when no producer explained it, under the
top-level ``"non_finite"``), and their word (``nan``, ``-inf``) in tables and CSV with the reason
in a note. Each case below makes one statistic degenerate on purpose."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from rankflavor.analysis.compare import compare
from rankflavor.base.finite import dumps, json_number, text
from rankflavor.render.comparefmt import render_compare

from ..support.formats_parse import csv_rows, invoke, table_rows


def test_dumps_writes_null_and_lists_every_unexplained_number() -> None:
    data = {"a": 1.0, "b": [float("nan"), {"c": float("-inf")}], "d": "x", "e": None, "f": True, "g": 3}
    out = json.loads(dumps(data))
    assert out["a"] == 1.0 and out["b"] == [None, {"c": None}] and out["e"] is None and out["f"] is True
    assert out["non_finite"] == [{"path": "b[0]", "value": "nan", "reason": "nan: not a finite number"},
                                 {"path": "b[1].c", "value": "-inf", "reason": "-inf: not a finite number"}]
    assert "NaN" not in dumps(data) and "Infinity" not in dumps(data)
    assert json.loads(dumps({"x": 0.5})) == {"x": 0.5}  # nothing to list: no key added
    assert json.loads(dumps([float("inf")])) == [None]
    assert (json_number(float("inf")), json_number(None), json_number(np.float64(0.25))) == (None, None, 0.25)
    assert [text(x, "+.2f") for x in (float("-inf"), float("inf"), float("nan"), None, 0.125)] == \
        ["-inf", "+inf", "nan", "-", "+0.12"]


def _identical_deltas() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, dict[str, float]]]]:
    qrels = {q: {f"{q}r": 1} for q in ("q1", "q2", "q3", "q4")}
    runs = {"top": {q: {f"{q}r": 2.0, f"{q}x": 1.0} for q in qrels},
            "second": {q: {f"{q}r": 1.0, f"{q}x": 2.0} for q in qrels}}
    return qrels, runs


def test_compare_effect_size_of_identical_deltas_in_every_format() -> None:
    qrels, runs = _identical_deltas()
    result = compare(qrels, runs, ["ndcg@10"], n_resamples=100)
    (p,) = result[0].pairs
    assert p.effect == -math.inf  # every query loses 1 - 1/log2(3): sd 0
    data = json.loads(render_compare(result, "json"))
    pair = data["measures"][0]["pairs"][0]
    assert pair["cohens_d"] is None and "standard deviation is 0" in pair["undefined"]["cohens_d"]
    assert "non_finite" not in data  # explained where it stands
    rows = csv_rows(render_compare(result, "csv"))
    head = rows[0]
    for r in rows[1:]:
        row = dict(zip(head, r, strict=True))
        assert row["cohens_d"] == "-inf" and "standard deviation is 0" in row["note"]
    table = render_compare(result, "table")
    assert any(r[4] == "-inf" for r in table_rows(table) if len(r) > 6)
    assert "note: b-a cohens_d -inf: every query's difference is the same" in table
    from rankflavor.report import document_from_dict
    from rankflavor.report.html import render_report

    page = render_report([document_from_dict(result.to_dict())])  # compare --html: the same result, no failure
    block = page.split('<script type="application/json" id="report-data">', 1)[1].split("</script>", 1)[0]
    json.loads(block, parse_constant=lambda c: pytest.fail(f"{c} in the report's data"))
    assert "-inf" in page  # the significance table prints the word, as the terminal's


def test_compare_nan_statistics_are_null_with_a_reason() -> None:
    """A p-value or interval that is NaN (not reachable from the CLI today, reachable from the
    library's own PairStat): null with the generic reason, printed as nan."""
    qrels, runs = _identical_deltas()
    result = compare(qrels, runs, ["ndcg@10"], n_resamples=100)
    m = result[0]
    p = replace(m.pairs[0], pvalues={**m.pairs[0].pvalues, "t": math.nan}, ci=(math.nan, math.inf))
    broken = replace(result, measures=[replace(m, pairs=[p])])
    pair = json.loads(render_compare(broken, "json"))["measures"][0]["pairs"][0]
    assert pair["pvalues"]["t"] is None and pair["ci"] == [None, None]
    assert pair["undefined"]["p_t"] == "nan: not a finite number" and pair["undefined"]["ci_high"].startswith("inf")
    table = render_compare(broken, "table")
    assert "[nan, +inf]" in table and "note: b-a p_t nan: not a finite number" in table


def test_raters_who_all_give_one_grade(tmp_path: Path) -> None:
    """Every rating the same grade: chance agreement is perfect, so kappa and alpha are 0/0."""
    path = tmp_path / "same.txt"
    path.write_text("q1 0 a 1 r1\nq1 0 a 1 r2\nq1 0 b 1 r1\nq1 0 b 1 r2\n")
    data = json.loads(invoke("raters", str(path), "--ratings-format", "trec", "--format", "json"))
    for stats in (data["overall"], data["per_query"]["q1"]):
        for name in ("cohen_kappa", "fleiss_kappa", "krippendorff_alpha"):
            assert stats[name] is None and stats["undefined"][name].startswith("nan: every rating is the same grade")
    table = invoke("raters", str(path), "--ratings-format", "trec")
    assert all(r[5:] == ["nan", "nan", "nan"] for r in table_rows(table))
    assert "note: all cohen_kappa nan: every rating is the same grade" in table


def test_spread_mean_a_policy_refused(tmp_path: Path) -> None:
    """A flavor whose policy refuses the data has no mean: null in JSON (the error says why), nan elsewhere."""
    from rankflavor.analysis.spread.api import spread
    from rankflavor.render.spreadfmt import render_spread

    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}  # q2 unanswered: missing=error refuses
    s = spread(qrels, {"A": run, "B": run}, "ndcg@3", grid={"missing": ["zero", "error"]}, presets=False)
    j = next(j for j, f in enumerate(s.flavors) if f.measure.flavor.missing == "error")
    data = json.loads(render_spread(s, "json"))
    assert data["flavors"][j]["mean"] == {"A": None, "B": None} and len(data["errors"]) == 2
    assert [r[2] for r in csv_rows(render_spread(s, "csv"))[1:] if r[1] == s.flavors[j].flavor] == ["nan", "nan"]
    row = next(r for r in table_rows(render_spread(s, "table", width=200)) if r[0] == str(j + 1))
    assert row[-2:] == ["nan", "nan"]


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_explain_and_identify_json_never_fail_on_a_nan(tmp_path: Path, fmt: str) -> None:
    """Quepid's AP@10 is NaN (0/0) on a query with nothing relevant: eval says null with its status."""
    (tmp_path / "q.txt").write_text("q1 0 a 0\nq2 0 c 1\n")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 3 A\nq2 Q0 c 1 3 A\n")
    out = invoke("eval", str(tmp_path / "q.txt"), str(tmp_path / "r.run"), "-m", "quepid:AP@10", "-q", "--format", fmt)
    if fmt == "json":
        (m,) = json.loads(out)["measures"]
        assert m["per_query"][0] == {"query": "q1", "value": None, "status": "empty"}
    else:
        assert "nan e" in out and "e: nothing relevant" in out
