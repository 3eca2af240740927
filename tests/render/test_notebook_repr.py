"""What a notebook shows of every result object (rankflavor.base.display, rankflavor.render.notebook):
the terminal's tables, every id escaped, rows capped with the rest counted, and the report's
charts from ``Spread.plot()`` / ``Comparison.plot()``."""

from __future__ import annotations

import html.parser
import math
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import pytest
from markdown_it import MarkdownIt

import rankflavor as rf
from rankflavor.raters.ratings import Ratings
from rankflavor.render.csvfmt import render_csv
from rankflavor.render.notebook import MAX_LINES, MAX_ROWS, text_html, text_markdown

EVIL = "<script>alert(1)</script>"
AMP = "R&D"
QRELS = {EVIL: {"a": 2, "b": 0, AMP: 1}, AMP: {"c": 1, "d": 2}, "q3": {"e": 1}}
RUNS = {EVIL: {EVIL: {"a": 0.9, "x": 0.8, AMP: 0.7}, AMP: {"d": 0.9, "c": 0.1}, "q3": {"e": 0.3, "y": 0.9}},
        AMP: {EVIL: {AMP: 0.9, "a": 0.5}, AMP: {"c": 0.9, "z": 0.5}, "q3": {"y": 0.9}}}

#: The tags a view may write; anything else in the HTML came from an id.
TAGS = {"div", "table", "caption", "thead", "tbody", "tr", "th", "td", "b", "code", "p", "br", "pre"}
#: ... and what Markdown makes of the views' Markdown (code spans and fences, emphasis, sup).
MD_TAGS = {"strong", "em", "sup"}


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parsed(markup: str) -> _Tags:
    p = _Tags()
    p.feed(markup)
    p.close()
    return p


def _results() -> Any:
    return rf.evaluate(QRELS, RUNS[EVIL], ["ndcg@3", "P@2"])


def _history(tmp_path: Path) -> Any:
    from rankflavor.history.record import record_results
    from rankflavor.history.series import load_series

    db = tmp_path / "h.sqlite"
    record_results(db, _results(), dataset=EVIL, run=AMP)
    return load_series(db)[0]


def _objects(tmp_path: Path) -> dict[str, Any]:
    ratings = Ratings.from_rows([(EVIL, d, r, g) for d, ga, gb in [(AMP, 0, 0), ("b", 1, 1), ("c", 2, 1)]
                                 for r, g in ((AMP, ga), ("bob", gb))])
    return {
        "Results": _results(),
        "Spread": rf.spread(QRELS, RUNS, "ndcg@3", grid={"gain": ["linear", "exp2"]}, presets=["trec_eval"]),
        "Comparison": rf.compare(QRELS, RUNS, ["ndcg@3"], n_resamples=100),
        "Coverage": rf.judgments(QRELS, RUNS, ["ndcg@3"], scale="trec_dl"),
        "Bounds": rf.bounds(QRELS, RUNS[EVIL], ["ndcg@3"], scale="trec_dl"),
        "Series": _history(tmp_path),
        "Identification": rf.identify(QRELS, RUNS[EVIL], rf.evaluate(QRELS, RUNS[EVIL], ["ndcg@3"])[0].summary,
                                      "ndcg@3", presets=["trec_eval"], grid={"gain": ["linear"]}),
        "Agreement": rf.agreement(ratings),
    }


def test_every_result_object_shows_escaped_html_and_markdown(tmp_path: Path) -> None:
    for name, obj in _objects(tmp_path).items():
        page = obj._repr_html_()
        assert isinstance(page, str) and page, name
        parsed = _parsed(page)
        assert set(parsed.tags) <= TAGS, (name, set(parsed.tags) - TAGS)
        assert "<script" not in page.lower(), name
        md = obj._repr_markdown_()
        assert isinstance(md, str) and md, name
        # rendered as Jupyter renders Markdown (CommonMark, raw HTML allowed, GFM tables): no tag from an id
        rendered = _parsed(MarkdownIt("commonmark").enable("table").render(md))
        assert set(rendered.tags) <= TAGS | MD_TAGS, (name, set(rendered.tags) - TAGS - MD_TAGS)
        if name not in ("Identification", "Bounds"):  # these two views show no query or run id here
            assert EVIL in "".join(rendered.text), name
    # the ids are there, as text: decoded, the HTML shows them as written
    shown = "".join(_parsed(_results()._repr_html_()).text)
    assert EVIL in shown and AMP in shown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in _results()._repr_html_()
    assert "R&amp;D" in _results()._repr_html_()


def test_results_html_holds_the_numbers_and_flavors_of_the_csv() -> None:
    """Every summary and per-query number of eval's CSV, at the terminal's four decimals, and
    every canonical flavor string, are in the notebook's table."""
    res = _results()
    text = "".join(_parsed(res._repr_html_()).text)
    for line in render_csv(res, per_query=True).splitlines()[1:]:
        metric, query, value, *_ = line.split(",")
        if value:
            assert f"{float(value):.4f}" in text, (metric, query, value)
    for m in res:
        assert str(m.measure) in text
    assert "Flavor base of the per-query columns" in text


def test_tables_are_capped_and_say_how_many_rows_are_hidden() -> None:
    n = MAX_ROWS + 7
    qrels = {f"q{i:02d}": {"a": 1} for i in range(n)}
    run = {f"q{i:02d}": {"a": 1.0, "b": 0.5} for i in range(n)}
    page = rf.evaluate(qrels, run, ["P@1"])._repr_html_()
    body = page.split("per query")[1]
    assert body.count("<tr>") == MAX_ROWS + 1  # the header row and the rows kept
    assert f"7 more rows of {n} not shown" in page
    md = rf.evaluate(qrels, run, ["P@1"])._repr_markdown_()
    assert f"7 more rows of {n} not shown" in md and "| q19 |" in md and "| q20 |" not in md


def test_terminal_text_is_capped_and_fenced_safely() -> None:
    text = "\n".join(f"line {i} {EVIL}" for i in range(MAX_LINES + 5))
    page = text_html(text)
    assert "<script" not in page and "5 more lines of 85 not shown" in page
    assert page.count("line ") == MAX_LINES
    md = text_markdown("a ``` b\n```` c")
    fence = md.split("text\n")[0]
    assert fence == "`````"  # longer than any run of backticks inside, so the text cannot close it
    assert md.rstrip().endswith(fence)


def test_compare_markdown_escapes_system_names() -> None:
    """compare --format md wrote system names raw: a <script> name became HTML in a pull request."""
    from rankflavor.render.comparetex import render_markdown

    md = render_markdown(rf.compare(QRELS, RUNS, ["ndcg@3"], n_resamples=100))
    assert "<script>" not in md and "&lt;script&gt;" in md and "R&amp;D" in md


def test_spread_plot_is_the_report_chart() -> None:
    from rankflavor.report.charts import spread_figure, spread_view

    s = rf.spread(QRELS, RUNS, "ndcg@3", grid={"gain": ["linear", "exp2"]}, presets=["trec_eval"])
    fig = s.plot()
    assert isinstance(fig, go.Figure)
    report = go.Figure(spread_figure(spread_view(s.to_dict()), f"spread of {s.base.display}"))
    assert fig.to_json() == report.to_json()
    # each run's line holds its means (independent of the chart code: sorted by the mean over runs)
    doc = s.to_dict()
    order = sorted(doc["flavors"], key=lambda f: sum(f["mean"].values()) / len(f["mean"]))
    for trace, run in zip(fig.data, doc["runs"], strict=True):
        assert trace.name == "&lt;script&gt;alert(1)&lt;/script&gt;" if run == EVIL else trace.name == "R&amp;D"
        assert [float(y) for y in trace.y] == pytest.approx([f["mean"][run] for f in order])


def test_comparison_plot_shows_each_mean_and_interval() -> None:
    c = rf.compare(QRELS, RUNS, ["ndcg@3", "P@2"], n_resamples=100)
    fig = c.plot()
    assert isinstance(fig, go.Figure)
    doc = c.to_dict()
    for trace, system in zip(fig.data, doc["systems"], strict=True):
        stats = [next(s for s in m["systems"] if s["name"] == system) for m in doc["measures"]]
        assert list(trace.y) == [s["mean"] for s in stats]
        plus = [s["ci"][1] - s["mean"] for s in stats]
        minus = [s["mean"] - s["ci"][0] for s in stats]
        assert all(math.isclose(a, b) for a, b in zip(trace.error_y.array, plus, strict=True))
        assert all(math.isclose(a, b) for a, b in zip(trace.error_y.arrayminus, minus, strict=True))
        assert "<script" not in trace.name
