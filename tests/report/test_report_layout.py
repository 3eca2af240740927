"""The HTML report as a person sees it (issue 34): the spread chart names its flavors on the axis,
the significance table fits its box with the verdict in view, a ``judgments`` report has no empty
section and shows every input's SHA-256, hashes wrap in whole groups, one run is one row.

The checks on the HTML text run everywhere; those on layout run in headless Chromium (the browser
of ``tests/report/test_report.py``, which skips where Debian's ``chromium`` and ``chromium-driver`` are not
installed). ``RANKFLAVOR_WRITE_SCREENSHOT=1`` makes the browser test write ``docs/report.png``, the
README's screenshot, from the report it checked.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rankflavor.cli.demo import generate
from rankflavor.cli.main import cli
from rankflavor.report import document_from_dict, load_document, render_report
from rankflavor.report.charts import TICK_CHARS, spread_figure, spread_view, tick_label

from .test_report import Browser, assert_clean, start_browser

ROOT = Path(__file__).resolve().parents[2]
MEASURES = ("trec_eval:ndcg_cut.10", "ndcg@10[gain=exp2]", "AP")


def run(*args: str) -> str:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``rankflavor demo`` data: eval JSON of both runs, spread, compare and judgments JSON, and the
    report of all five (written from the data folder, as a person would)."""
    out = tmp_path_factory.mktemp("mixed")
    qrels, run_a, run_b = (Path(p) for p in generate(out))
    files: dict[str, Path] = {"qrels": qrels, "run_a": run_a, "run_b": run_b}
    measures = [a for m in MEASURES for a in ("-m", m)]
    for name, r in (("a", run_a), ("b", run_b)):
        files[name] = out / f"{name}.json"
        files[name].write_text(run("eval", str(qrels), str(r), *measures, "-q", "--format", "json"))
    files["spread"] = out / "spread.json"
    files["spread"].write_text(run("spread", str(qrels), str(run_a), str(run_b), "--format", "json"))
    files["compare"] = out / "compare.json"
    files["compare"].write_text(run("compare", str(qrels), str(run_a), str(run_b), "--queries", "union-zero",
                                    "--resamples", "200", "--flavors", "grid", "--format", "json"))
    files["judgments"] = out / "judgments.json"
    files["judgments"].write_text(run("judgments", str(qrels), str(run_a), str(run_b), "--scale", "trec_dl",
                                      "--format", "json"))
    files["report"] = out / "report.html"
    run("report", *(str(files[k]) for k in ("a", "b", "spread", "compare", "judgments")), "-o", str(files["report"]))
    return files


def payload(page: str) -> dict[str, Any]:
    return json.loads(page.split('<script type="application/json" id="report-data">', 1)[1].split("</script>", 1)[0])


def visible(page: str) -> str:
    """The page's text without its scripts and tags (a hash's groups joined again)."""
    body = re.sub(r"<script.*?</script>|<style.*?</style>", "", page, flags=re.S)
    return re.sub(r"<[^>]+>", "", body.replace("<wbr>", ""))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- the spread chart names its flavors -------------------------------------------------------------

def test_spread_axis_names_every_flavor(mixed: dict[str, Path]) -> None:
    """The x axis was flavor numbers only; each tick now names its flavor: base, its presets, or the
    grid knobs that differ from the base, as the flavor table below the chart does."""
    data = json.loads(mixed["spread"].read_text())
    fig = payload(mixed["report"].read_text())["spread_figures"][0]
    axis = fig["layout"]["xaxis"]
    n = len(data["flavors"])
    assert axis["tickvals"] == list(range(1, n + 1)) and len(axis["ticktext"]) == n
    view = spread_view(data)
    assert axis["ticktext"] == [tick_label(r).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                                for r in view["rows"]]
    ticks = set(axis["ticktext"])
    assert "base" in ticks and "quepid" in ticks and "gain=exp2" in ticks and "ideal=local" in ticks
    assert "spark_triples (defect)" in ticks
    assert all(len(t) <= TICK_CHARS for t in axis["ticktext"])
    # the base's row is the flavor whose origins say base; a preset's, its preset
    base = next(r for r in view["rows"] if "base" in r["origins"])
    assert axis["ticktext"][base["i"] - 1] == "base"
    assert "flavor #" not in axis["title"]["text"]
    pairs = payload(mixed["report"].read_text())["pair_figures"]
    if pairs and pairs[0]:
        assert pairs[0]["layout"]["xaxis"]["ticktext"] == axis["ticktext"]


def test_long_flavor_names_are_cut_with_an_ellipsis() -> None:
    row = {"label": "grid gain=exp2, discount=jk(2), ideal=local, unjudged=condensed, ties=averaged"}
    label = tick_label(row)
    assert len(label) == TICK_CHARS and label.endswith("…") and label.startswith("gain=exp2, discount=jk(2)")
    view = {"runs": ["a"], "rows": [{"i": 1, "label": "base", "flavor": "ndcg@10", "means": [0.5], "reorders": False,
                                     "defect": []}], "pairs": []}
    assert spread_figure(view, "t")["layout"]["xaxis"]["ticktext"] == ["base"]


# -- judgments: no empty sections, every input's SHA-256 ---------------------------------------------

def test_judgments_report_has_no_empty_section_and_every_hash(mixed: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "j.html"
    run("judgments", str(mixed["qrels"]), str(mixed["run_a"]), str(mixed["run_b"]), "--scale", "trec_dl",
        "--html", str(out))
    page = out.read_text()
    assert 'id="summary"' not in page and 'id="per-query"' not in page
    assert "No eval or compare results" not in page and "hold no per-query values" not in page
    text = visible(page)
    for key in ("qrels", "run_a", "run_b"):
        assert sha256(mixed[key]) in text, key
    assert "not recorded; file not found" not in text
    # The same from the JSON through `rankflavor report`: paths and sizes recorded, hashed when made.
    data = json.loads(mixed["judgments"].read_text())
    assert data["provenance"]["qrels"] == {"source": str(mixed["qrels"]), "bytes": mixed["qrels"].stat().st_size}
    assert [r["source"] for r in data["provenance"]["runs"]] == [str(mixed["run_a"]), str(mixed["run_b"])]
    report = tmp_path / "r.html"
    run("report", str(mixed["judgments"]), "-o", str(report))
    text = visible(report.read_text())
    for key in ("qrels", "run_a", "run_b"):
        assert sha256(mixed[key]) in text, key
    assert 'id="summary"' not in report.read_text()


def test_an_empty_report_still_says_so() -> None:
    """A report of eval results without -q keeps its summary and says there are no per-query values."""
    doc = document_from_dict({"measures": [{"name": "ndcg@10", "flavor": "ndcg@10", "value": 0.5}], "counts": {}},
                             "e.json")
    page = render_report([doc])
    assert 'id="summary"' in page and "The results hold no per-query values." in page


def test_hashes_break_only_between_groups_of_16() -> None:
    from rankflavor.report.html import _hash

    digest = "0123456789abcdef" * 4
    cell = str(_hash(digest))
    assert cell.count('<span class="hg">') == 4 and cell.count("<wbr>") == 3
    assert re.sub(r"<[^>]+>", "", cell) == digest
    assert _hash(None) is None and str(_hash("<x>")) == '<span class="hg">&lt;x&gt;</span>'


# -- one run is one row ------------------------------------------------------------------------------

def test_one_run_from_two_working_directories_is_one_row(mixed: dict[str, Path]) -> None:
    """The same run evaluated as ``demo/run_a.txt`` and as ``../x/demo/run_a.txt`` (another working
    directory): one system, not two (its name and size identify it)."""
    a = json.loads(mixed["a"].read_text())
    again = json.loads(mixed["a"].read_text())
    for role in ("run", "qrels"):
        again["provenance"][role]["source"] = os.path.join("..", "elsewhere", os.path.basename(
            again["provenance"][role]["source"]))
    again["measures"] = [m for m in again["measures"] if m["name"] == "AP"]
    page = render_report([document_from_dict(a, "a.json"), document_from_dict(again, "a2.json"),
                          load_document(mixed["b"])])
    rows = re.findall(r'<th scope="row" class="system" data-sort="([^"]*)"', page)
    assert rows == ["run_a.txt", "run_b.txt"]
    # a different run of the same name (another size) keeps its own row
    other = json.loads(mixed["a"].read_text())
    other["provenance"]["run"]["bytes"] += 1
    other["measures"][0]["value"] += 0.1
    page = render_report([document_from_dict(a, "a.json"), document_from_dict(other, "other.json")])
    assert len(re.findall(r'<th scope="row" class="system"', page)) == 2


# -- the significance table fits its box -----------------------------------------------------------

def test_significance_table_css_keeps_the_verdict_in_view(mixed: dict[str, Path]) -> None:
    page = mixed["report"].read_text()
    assert '<div class="scroll"><table class="generic sig-table">' in page and '<th class="verdict">verdict</th>' in page
    css = (ROOT / "src" / "rankflavor" / "report" / "templates" / "report.css").read_text()
    rule = css.split(".sig-table th.verdict, .sig-table td.verdict {", 1)[1].split("}", 1)[0]
    assert "position: sticky" in rule and "right: 0" in rule and "white-space: nowrap" in rule


# -- in the browser ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser() -> Any:
    b = start_browser()
    yield b
    b.quit()


@pytest.mark.parametrize("width", [800, 1200])
def test_mixed_report_fits_and_names_in_a_browser(browser: Browser, mixed: dict[str, Path], tmp_path: Path,
                                                   width: int) -> None:
    page = browser.load(mixed["report"], width, 900)
    assert_clean(page, mixed["report"])
    # The page itself never scrolls sideways: wide tables scroll inside their own box.
    assert browser.js("return document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    # The verdict column is inside the significance table's box, whole, in every row.
    boxes = browser.js("""
        return Array.from(document.querySelectorAll('table.sig-table')).map(function (t) {
          var box = t.parentElement.getBoundingClientRect();
          return Array.from(t.querySelectorAll('th.verdict, td.verdict')).map(function (c) {
            var r = c.getBoundingClientRect();
            return [r.left >= box.left - 0.5, r.right <= box.right + 0.5, c.scrollWidth <= c.clientWidth + 1];
          });
        });""")
    assert boxes and all(all(all(flags) for flags in cells) for cells in boxes), boxes
    if width >= 1200:  # wide enough: the whole table fits its box, nothing to scroll
        assert browser.js("return Array.from(document.querySelectorAll('table.sig-table')).every("
                          "function (t) { return t.scrollWidth <= t.parentElement.clientWidth; })")
    # The spread chart's ticks are the flavors' names (drawn as SVG text by Plotly).
    ticks = browser.js("return Array.from(document.querySelectorAll('#spread-chart-0 .xtick text'))"
                       ".map(function (e) { return e.textContent; })")
    assert "base" in ticks and "quepid" in ticks and "gain=exp2" in ticks, ticks[:10]
    # A hash wraps in whole groups of 16 characters: no group broken across lines, at most 4 lines.
    cells = browser.js("""
        return Array.from(document.querySelectorAll('td.hash')).filter(function (c) {
          return c.textContent.length === 64; }).map(function (c) {
          var groups = Array.from(c.querySelectorAll('.hg'));
          return [groups.map(function (g) { return g.getClientRects().length; }),
                  new Set(groups.map(function (g) { return Math.round(g.getBoundingClientRect().top); })).size]; });""")
    assert cells
    for pieces, lines in cells:
        assert pieces == [1, 1, 1, 1] and lines <= 4, (pieces, lines)
    shot = tmp_path / "report.png"
    browser.screenshot(shot)
    assert shot.stat().st_size > 10_000
    if width == 1200 and os.environ.get("RANKFLAVOR_WRITE_SCREENSHOT") == "1":
        write_screenshot(browser, ROOT / "docs" / "report.png")


def write_screenshot(browser: Browser, out: Path) -> None:
    """The top of the checked page (summary table and the labelled spread chart) as a small PNG."""
    from PIL import Image

    full = out.with_suffix(".full.png")
    browser.screenshot(full, full=True)
    try:
        img = Image.open(full).convert("RGB")
        height = min(img.height, 1500)
        img = img.crop((0, 0, img.width, height)).resize((960, height * 960 // img.width))
        img.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)
    finally:
        full.unlink()
    assert out.stat().st_size < 200_000


def test_browser_is_the_one_report_tests_use() -> None:
    """This file drives the same browser as tests/report/test_report.py (one place says how to find it)."""
    if shutil.which("chromium") is None and os.environ.get("RANKFLAVOR_REQUIRE_BROWSER") != "1":
        with pytest.raises(pytest.skip.Exception, match="chromium and chromium-driver"):
            start_browser()


def test_report_names_the_flavor_that_flips_a_pair(tmp_path: Path) -> None:
    """As the terminal's flips column: A (one grade-3 document) beats B (six grade-1 documents)
    under exp2 gain only (7 > 3.30; linear 3 < 3.30), so the flip is named gain=exp2."""
    from rankflavor.analysis.spread.api import spread
    from rankflavor.report import document_from_spread

    (tmp_path / "q.txt").write_text("q1 0 d1 3\n" + "".join(f"q1 0 d{i} 1\n" for i in range(2, 8)))
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 9 A\n")
    (tmp_path / "b.run").write_text("".join(f"q1 Q0 d{i} {i - 1} {10 - i} B\n" for i in range(2, 8)))
    sp = spread(str(tmp_path / "q.txt"), [str(tmp_path / "a.run"), str(tmp_path / "b.run")], "ndcg@10",
                grid={"gain": ["linear", "exp2"]}, presets=False)
    page = render_report([document_from_spread(sp)])
    body = page.split('class="generic pairs"', 1)[1].split("</table>", 1)[0]
    exp2 = next(r for r in spread_view(sp.to_dict())["rows"] if "gain=exp2" in r["flavor"])
    assert f"<td>yes: A ahead under #{exp2['i']} gain=exp2</td>" in body


def test_a_report_of_spread_json_alone_shows_every_inputs_hash(mixed: dict[str, Path], tmp_path: Path) -> None:
    """`spread --format json` recorded no inputs, so a report built from it said "not recorded" for
    them: it now records each input's path and size, and the report hashes the files it names."""
    data = json.loads(mixed["spread"].read_text())
    assert data["provenance"]["qrels"] == {"source": str(mixed["qrels"]), "bytes": mixed["qrels"].stat().st_size}
    assert [r["source"] for r in data["provenance"]["runs"]] == [str(mixed["run_a"]), str(mixed["run_b"])]
    report = tmp_path / "s.html"
    run("report", str(mixed["spread"]), "-o", str(report))
    text = visible(report.read_text())
    for key in ("qrels", "run_a", "run_b"):
        assert sha256(mixed[key]) in text, key
    assert "not recorded; file not found" not in text
