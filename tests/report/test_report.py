"""The HTML report: self-contained, correct, safe with hostile ids, and checked in a real browser.

The browser tests drive Debian's ``chromium`` with its ``chromium-driver`` through Selenium
(``.ci/run`` installs both). They load the report over ``file://`` and read Chrome's own logs:
the console log (no error) and the performance log's ``Network.requestWillBeSent`` events (no
request but the file itself). Where no browser is installed they skip and say so, unless
``RANKFLAVOR_REQUIRE_BROWSER=1`` (set by ``.ci/run`` once the install succeeded), when they fail.

``python3 -m tests.report.test_report`` rewrites ``docs/report.png``, the README's screenshot, from
``rankflavor demo`` data.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from markupsafe import escape

from rankflavor.cli.demo import generate
from rankflavor.cli.main import cli
from rankflavor.errors import InputError, UsageError
from rankflavor.report import document_from_dict, document_from_spread, load_document, render_report, write_report
from rankflavor.report.html import plotly_js, script_json

from ..conftest import shared_path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
BOLD = "r&amp;<b>bold</b>"  # markup Plotly itself would interpret
DEMO_MEASURES = ("trec_eval:ndcg_cut.10", "ndcg@10[gain=exp2]", "ndcg@10[ideal=local]", "AP", "P@10")


def run_cli(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args))
    return result


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``rankflavor demo`` data, evaluated per run (``eval -q --format json``) and spread over both."""
    return make_demo(tmp_path_factory.mktemp("demo"))


def make_demo(out: Path) -> dict[str, Path]:
    qrels, run_a, run_b = generate(out)
    files: dict[str, Path] = {}
    measures = [a for m in DEMO_MEASURES for a in ("-m", m)]
    for name, run in (("a", run_a), ("b", run_b)):
        res = run_cli("eval", str(qrels), str(run), *measures, "-q", "--format", "json")
        assert res.exit_code == 0, res.output
        files[name] = out / f"{name}.json"
        files[name].write_text(res.output)
    res = run_cli("spread", str(qrels), str(run_a), str(run_b), "--format", "json")
    assert res.exit_code == 0, res.output
    files["spread"] = out / "spread.json"
    files["spread"].write_text(res.output)
    res = run_cli("report", str(files["a"]), str(files["b"]), str(files["spread"]), "-o", str(out / "report.html"))
    assert res.exit_code == 0, res.output
    files["report"] = out / "report.html"
    return files


# -- the file itself (no browser) --------------------------------------------------------------


def test_report_is_self_contained(demo: dict[str, Path]) -> None:
    text = demo["report"].read_text()
    assert text.count(plotly_js()[:2000]) == 1  # Plotly's bundle inlined, once
    assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)\s*=", text, re.I)
    assert not re.search(r"https?://(?!www\.w3\.org/)[^\s\"'<>]*\.(js|css)\b", text[:20000] + text[-200000:])
    assert "default-src 'none'" in text  # the page's CSP refuses every fetch too


def test_summary_values_and_flavors_in_the_file(demo: dict[str, Path]) -> None:
    text = demo["report"].read_text()
    for name in ("a", "b"):
        for m in json.loads(demo[name].read_text())["measures"]:
            assert f">{m['value']:.4f}<" in text
            assert html.escape(m["flavor"]).replace(",", ",<wbr>") in text  # full flavor, wraps at commas only
    # Two columns of one name: their heads say which knobs set them apart.
    assert re.findall(r'class="differs">([^<]*)<', text) == ["gain=exp2, ideal=global", "gain=linear, ideal=local"]


def test_data_block_cannot_close_the_script() -> None:
    value = {"q": SCRIPT + IMG + "&amp;\u2028", "n": [1.5, None]}
    out = str(script_json(value))
    assert "<" not in out and ">" not in out and "&" not in out and "\u2028" not in out
    assert json.loads(out) == value


def test_provenance_hashes(demo: dict[str, Path], tmp_path: Path) -> None:
    text = demo["report"].read_text()
    for key in ("a", "b", "spread"):  # the results files, hashed when the report is made
        assert hashlib.sha256(demo[key].read_bytes()).hexdigest() in text
    data = json.loads(demo["a"].read_text())
    qrels = data["provenance"]["qrels"]["source"]
    assert hashlib.sha256(Path(qrels).read_bytes()).hexdigest() in text  # same size now: hashed, and said so
    assert "computed now from the file (same size)" in text
    data["provenance"]["run"]["sha256"] = "ab" * 32  # a recorded hash wins
    data["provenance"]["qrels"]["bytes"] += 1  # a file whose size changed is not hashed
    page = render_report([document_from_dict(data, "x.json")])
    assert "ab" * 32 in page and "recorded in the results" in page
    assert "the file changed size since" in page


def test_eval_html_and_report_errors(demo: dict[str, Path], tmp_path: Path) -> None:
    qrels = json.loads(demo["a"].read_text())["provenance"]["qrels"]["source"]
    run = json.loads(demo["a"].read_text())["provenance"]["run"]["source"]
    out = tmp_path / "eval.html"
    res = run_cli("eval", qrels, run, "-m", "ndcg@10", "--html", str(out))
    assert res.exit_code == 0, res.output
    page = out.read_text()
    assert "run_a.txt" in page and '"queries":["301"' in page  # per-query values without -q
    assert str(escape('"engine": "local"')) in page  # the settings that made the numbers
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    res = run_cli("report", str(bad), "-o", str(tmp_path / "r.html"))
    assert res.exit_code == 3 and "not valid JSON" in res.output
    bad.write_text('{"hello": 1}')
    res = run_cli("report", str(bad), "-o", str(tmp_path / "r.html"))
    assert res.exit_code == 3 and "not a rankflavor results file" in res.output
    res = run_cli("report", str(tmp_path / "absent.json"), "-o", str(tmp_path / "r.html"))
    assert res.exit_code == 3 and "cannot read" in res.output
    with pytest.raises(UsageError):
        write_report(tmp_path / "r.html", [])
    with pytest.raises(InputError):
        load_document(bad)


def test_summary_only_results_say_so(demo: dict[str, Path], tmp_path: Path) -> None:
    data = json.loads(demo["a"].read_text())
    for m in data["measures"]:
        m.pop("per_query")
    page = render_report([document_from_dict(data, "summary.json")])
    assert "holds no per-query values" in page and "The results hold no per-query values." in page


def test_one_run_in_several_files_is_one_row(demo: dict[str, Path]) -> None:
    data = json.loads(demo["a"].read_text())
    first, second = dict(data, measures=data["measures"][:2]), dict(data, measures=data["measures"][1:])
    other = json.loads(demo["b"].read_text())
    page = render_report([document_from_dict(d, f"{i}.json") for i, d in enumerate((first, second, other))])
    assert page.count('<th scope="row" class="system"') == 2 and "run_a.txt (2)" not in page
    changed = dict(data, measures=[dict(data["measures"][0], value=0.5)])  # the same flavor, another value
    page = render_report([document_from_dict(first, "1.json"), document_from_dict(changed, "2.json")])
    assert "run_a.txt (2)" in page  # kept apart: never two values in one cell


def test_compare_intervals_join_the_eval_rows(demo: dict[str, Path]) -> None:
    a, b = (json.loads(demo[k].read_text()) for k in ("a", "b"))
    m = a["measures"][0]
    cmp = {"kind": "compare", "systems": [
        {"name": "run_a.txt", "flavor": m["flavor"], "mean": m["value"], "ci": [0.1, 0.9]},
        {"name": "run_b.txt", "flavor": m["flavor"], "mean": 0.123, "ci": [0.05, 0.2]}]}
    page = render_report([document_from_dict(a, "a.json"), document_from_dict(b, "b.json"),
                          document_from_dict(cmp, "cmp.json")])
    assert page.count('<th scope="row" class="system"') == 3  # run_b's other mean gets a row of its own
    assert "run_b.txt (cmp.json)" in page and "[0.1000, 0.9000]" in page and "[0.0500, 0.2000]" in page
    assert f">{m['value']:.4f}</span> <span class=\"ci\"" in page  # run_a: eval's mean, compare's interval


def test_no_browser_skips_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.delenv("RANKFLAVOR_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no headless browser: chromium not found"):
        start_browser()
    monkeypatch.setenv("RANKFLAVOR_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="RANKFLAVOR_REQUIRE_BROWSER=1 but chromium not found"):
        start_browser()


def compare_doc() -> dict[str, Any]:
    """A compare-style result (the compare command lands separately): systems with CIs, pairs, settings."""
    flavor = "ndcg@10[gain=linear,discount=log2]"
    return {
        "kind": "compare", "measure": flavor, "test": "randomization", "correction": "holm", "seed": 7,
        "permutations": 1000, "alpha": 0.05, "n": 40,
        "systems": [{"name": SCRIPT, "mean": 0.5, "ci": [0.4, 0.6], "per_query": [{"query": "cq1", "value": 0.25}]},
                    {"name": IMG, "mean": 0.55, "ci": {"low": 0.45, "high": 0.65}, "per_query": [{"query": "cq1", "value": 0.75}]}],
        "pairs": [{"a": SCRIPT, "b": IMG, "diff": 0.05, "p_value": {"t": 0.01, "randomization": 0.012},
                   "moved": [SCRIPT, "q'\"2"], "significant": True}],
        "provenance": {"rankflavor": "0.1.0", "command": "rankflavor compare ...", "runs": [{"source": "a.txt", "sha256": "cd" * 32}]},
    }


def test_compare_and_coverage_sections_show_what_they_hold() -> None:
    coverage = {"coverage": [{"run": SCRIPT, "query": "q1", "judged@10": 0.8, "unjudged": [IMG, "d'\"2"]}],
                "bounds": [{"run": SCRIPT, "lower": 0.3, "upper": 0.7}]}
    page = render_report([document_from_dict(compare_doc(), "compare.json"), document_from_dict(coverage, "cov.json")])
    assert "[0.4000, 0.6000]" in page and "[0.4500, 0.6500]" in page  # CIs into the summary table
    assert "Comparison and significance" in page and "p_value.randomization" in page and "holm" in page
    assert "Judgment coverage and bounds" in page and "judged@10" in page
    assert "cd" * 32 in page and "rankflavor compare ..." in page
    assert '"queries":["cq1"],' in page and '"values":[[0.25],[0.75]]' in page  # per-query rows join the charts
    assert SCRIPT not in page and "<img" not in page


# -- in the browser ----------------------------------------------------------------------------


class Browser:
    """Headless Chromium under Selenium, recording console messages and network requests."""

    def __init__(self, binary: str, driver: str) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        opts = webdriver.ChromeOptions()
        opts.binary_location = binary
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                    "--disable-extensions", "--no-first-run", "--disable-background-networking"):
            opts.add_argument(arg)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        self.driver = webdriver.Chrome(service=Service(driver), options=opts)
        # Record alert() calls instead of blocking on them: a hostile id that runs would call it.
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {
            "source": "window.__alerts = []; window.alert = function (m) { window.__alerts.push(String(m)); };"})

    def load(self, path: Path, width: int = 1000, height: int = 700) -> dict[str, Any]:
        """Open ``path``; return the console errors, the URLs requested and the alerts raised."""
        d = self.driver
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                          {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        d.get_log("browser")  # drop what earlier pages left
        d.get_log("performance")
        d.get(path.resolve().as_uri())
        deadline = time.monotonic() + 30
        while d.execute_script("return document.readyState") != "complete" and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # Plotly draws on the next frames
        events = [json.loads(e["message"])["message"] for e in d.get_log("performance")]
        urls = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
        errors = [e for e in d.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
        return {"errors": errors, "urls": urls, "alerts": d.execute_script("return window.__alerts")}

    def js(self, script: str) -> Any:
        return self.driver.execute_script(script)

    def screenshot(self, path: Path, full: bool = False) -> None:
        if not full:
            self.driver.save_screenshot(str(path))
            return
        h = self.js("return document.documentElement.scrollHeight")
        w = self.js("return document.documentElement.clientWidth")
        shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True, "clip": {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}})
        path.write_bytes(base64.b64decode(shot["data"]))

    def quit(self) -> None:
        self.driver.quit()


def start_browser() -> Browser:
    """A headless Chromium, or a skip that says what is missing (a failure when CI promised one)."""
    required = os.environ.get("RANKFLAVOR_REQUIRE_BROWSER") == "1"

    def unavailable(why: str) -> Browser:
        if required:
            pytest.fail(f"RANKFLAVOR_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(f"no headless browser: {why} (install Debian's chromium and chromium-driver; .ci/run does)")

    try:
        import selenium  # noqa: F401
    except ImportError:
        return unavailable("the selenium package is not installed")
    binary = next((b for b in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if b), None)
    driver = shutil.which("chromedriver") or next((p for p in ("/usr/lib/chromium/chromedriver",) if os.path.exists(p)), None)
    if not binary or not driver:
        return unavailable(f"chromium {'found' if binary else 'not found'}, chromedriver {'found' if driver else 'not found'}")
    try:
        return Browser(binary, driver)
    except Exception as exc:  # the driver could not start the browser: say why
        return unavailable(f"chromium did not start: {str(exc).splitlines()[0]}")


@pytest.fixture(scope="module")
def browser() -> Any:
    b = start_browser()
    yield b
    b.quit()


def assert_clean(page: dict[str, Any], path: Path) -> None:
    assert page["errors"] == [], page["errors"]
    assert set(page["urls"]) == {path.resolve().as_uri()}, page["urls"]
    assert page["alerts"] == []


def chart_size(browser: Browser, element_id: str) -> tuple[float, float]:
    return tuple(browser.js(  # type: ignore[return-value]
        f"var e = document.getElementById({json.dumps(element_id)}); var s = e && e.querySelector('svg.main-svg');"
        "if (!s) { return [0, 0]; } var r = s.getBoundingClientRect(); return [r.width, r.height];"))


def test_browser_checks_can_fail(browser: Browser, tmp_path: Path) -> None:
    """The checks see what they look for: a script error, a request, an alert."""
    path = tmp_path / "bad.html"
    path.write_text('<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/x.png">'
                    '<script>alert(1); undefinedFunction();</script></body></html>')
    page = browser.load(path)
    assert any("undefinedFunction" in e["message"] for e in page["errors"])
    assert "http://127.0.0.1:9/x.png" in page["urls"]
    assert page["alerts"] == ["1"]


def test_demo_report_in_browser(browser: Browser, demo: dict[str, Path], tmp_path: Path) -> None:
    page = browser.load(demo["report"])
    assert_clean(page, demo["report"])
    rows = browser.js("return Array.from(document.querySelectorAll('#summary-table tbody tr')).map("
                      "r => Array.from(r.cells).map(c => c.textContent.trim()))")
    expected = []
    for name in ("a", "b"):
        data = json.loads(demo[name].read_text())
        expected.append([Path(data["provenance"]["run"]["source"]).name] + [f"{m['value']:.4f}" for m in data["measures"]])
    assert rows == expected
    for chart in ("spread-chart-0", "pq-delta", "pq-values"):
        w, h = chart_size(browser, chart)
        assert w > 100 and h > 100, (chart, w, h)
    worst = browser.js("return Array.from(document.querySelectorAll('#pq-worst tbody tr')).map(r => r.cells[0].textContent)")
    deltas = browser.js("return Array.from(document.querySelectorAll('#pq-worst tbody tr')).map(r => parseFloat(r.cells[3].textContent))")
    a = {r["query"]: r["value"] for r in json.loads(demo["a"].read_text())["measures"][0]["per_query"]}
    b = {r["query"]: r["value"] for r in json.loads(demo["b"].read_text())["measures"][0]["per_query"]}
    true = sorted((b[q] - a[q], q) for q in a.keys() & b.keys())
    assert worst == [q for _, q in true[:10]]  # the worst queries named, worst first
    assert deltas == pytest.approx([round(d, 4) for d, _ in true[:10]], abs=1e-4)
    # Sorting: the second metric column, clicked twice, puts the lower system first.
    browser.js("document.querySelectorAll('#summary-table thead th')[2].click();"
               "document.querySelectorAll('#summary-table thead th')[2].click();")
    order = browser.js("return Array.from(document.querySelectorAll('#summary-table tbody th')).map(c => c.textContent)")
    assert order == ["run_b.txt", "run_a.txt"]
    shot = tmp_path / "report.png"
    browser.screenshot(shot)
    assert shot.stat().st_size > 10_000


def hover_text(browser: Browser, element: Any) -> str:
    from selenium.webdriver.common.action_chains import ActionChains

    browser.driver.execute_script(
        "arguments[0].scrollIntoView({block: 'center'})", element)
    ActionChains(browser.driver).move_to_element(element).perform()
    time.sleep(0.1)
    return str(browser.js("return Array.from(document.querySelectorAll('.hovertext')).map(e => e.textContent).join('|')"))


def hostile_inputs(tmp: Path) -> list[Any]:
    """Results whose query ids, doc ids and run names are HTML and script."""
    qids = [SCRIPT, "q'\"quoted\"", "q&amp;", "q4"]
    docs = [SCRIPT, '"><img/src=x/onerror=alert(1)>', "d'\"", "d4"]
    qrels = tmp / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q in qids for d, g in zip(docs, (2, 1, 0, 1), strict=True)))
    paths = {}
    for i, name in enumerate((f"{IMG}'.txt", "run q'\"&amp;.txt")):
        p = tmp / name
        rng = np.random.default_rng(i)
        p.write_text("".join(f"{q} Q0 {d} {r} {s:.3f} {SCRIPT}\n" for q in qids
                             for r, (d, s) in enumerate(zip(docs, rng.random(4), strict=True), 1)))
        paths[name] = p
    docs_out = []
    for p in paths.values():
        res = run_cli("eval", str(qrels), str(p), "-m", "ndcg@10", "-m", "P@2", "-q", "--format", "json")
        assert res.exit_code == 0, res.output
        out = tmp / f"results{len(docs_out)}.json"
        out.write_text(res.output)
        docs_out.append(load_document(out))
    from rankflavor.analysis.spread.api import spread

    sp = spread(str(qrels), {SCRIPT: str(paths[f"{IMG}'.txt"]), BOLD: str(paths["run q'\"&amp;.txt"])}, "ndcg@3",
                presets=False)
    docs_out.append(document_from_spread(sp))
    docs_out.append(document_from_dict(compare_doc(), "compare.json"))
    docs_out.append(document_from_dict({"coverage": [{"run": SCRIPT, "unjudged": docs}]}, "coverage.json"))
    return docs_out


def test_hostile_ids_are_text(browser: Browser, tmp_path: Path) -> None:
    path = write_report(tmp_path / "hostile.html", hostile_inputs(tmp_path))
    text = path.read_text().replace(plotly_js(), "")
    assert SCRIPT not in text and "<img" not in text and "alert(1)>" not in text  # nothing raw in the file
    page = browser.load(path)
    assert_clean(page, path)
    assert browser.js("return document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert browser.js("return document.scripts.length") == 3  # data, Plotly, the page's own: none injected
    texts = set(browser.js("return Array.from(document.querySelectorAll('td, th, code, option, .legendtext, caption'))"
                           ".map(e => e.textContent)"))
    assert f"{IMG}'.txt" in texts and "run q'\"&amp;.txt" in texts  # run names from files, shown as typed
    assert SCRIPT in texts and "q'\"quoted\"" in texts and "q&amp;" in texts  # query ids (worst-queries table)
    assert IMG in texts  # spread run names and compare systems
    assert f"{SCRIPT}, \"><img/src=x/onerror=alert(1)>, d'\", d4" in texts  # doc ids in a coverage table
    hovers = []  # Plotly's hover labels draw the query ids literally too
    for bar in browser.driver.find_elements("css selector", "#pq-delta .barlayer .point"):
        hovers.append(hover_text(browser, bar))
    assert any(h.startswith(f"query {SCRIPT}") for h in hovers), hovers
    assert any(h.startswith("query q&amp;") for h in hovers), hovers  # entities not decoded by Plotly
    assert browser.js("return document.querySelectorAll('img, iframe, object, embed').length") == 0
    legend = browser.js("return Array.from(document.querySelectorAll('#spread-chart-0 .legendtext')).map(e => e.textContent)")
    assert legend == [SCRIPT, BOLD]  # Plotly draws the names literally: no bold, no entity decoded
    assert BOLD in texts
    assert chart_size(browser, "spread-chart-0")[0] > 100


def big_inputs(n_runs: int = 10, n_queries: int = 7000) -> list[Any]:
    """``n_runs`` eval results of ``n_queries`` synthetic per-query values each, and a spread."""
    rng = np.random.default_rng(25)
    flavor = "ndcg@10[gain=linear,discount=log2,ideal=global,ideal_cut=k,unjudged=zero,ties=docno_desc]"
    queries = [f"q{1000000 + i}" for i in range(n_queries)]
    base = rng.beta(2, 2, n_queries)
    docs = []
    for r in range(n_runs):
        values = np.clip(base + rng.normal(0.01 * r, 0.1, n_queries), 0, 1)
        docs.append(document_from_dict({
            "measures": [{"flavor": flavor, "name": "ndcg@10", "knobs": {}, "value": float(values.mean()),
                          "n_queries": n_queries,
                          "per_query": [{"query": q, "value": float(v), "status": "ok"} for q, v in zip(queries, values, strict=True)]}],
            "counts": {}, "provenance": {"rankflavor": "0.1.0", "run": {"source": f"run{r:02d}.txt"}},
        }, f"run{r:02d}.json"))
    flavors = [{"flavor": f"{flavor[:-1]},x={j}]", "origins": ["base"] if j == 0 else ["grid"], "knobs": {"x": str(j)},
                "mean": {f"run{r:02d}.txt": float(rng.random()) for r in range(n_runs)}} for j in range(24)]
    docs.append(document_from_dict({"measure": flavor, "runs": [f"run{r:02d}.txt" for r in range(n_runs)], "grid": {"x": []},
                                    "flavors": flavors, "pairs": [], "notes": []}, "spread.json"))
    return docs


def test_ten_runs_by_7000_queries(browser: Browser, tmp_path: Path) -> None:
    path = write_report(tmp_path / "big.html", big_inputs())
    size = path.stat().st_size
    assert size < 10_000_000, size
    text = path.read_text()
    assert text.count(plotly_js()[:2000]) == 1
    page = browser.load(path)
    assert_clean(page, path)
    assert browser.js("return document.querySelectorAll('#summary-table tbody tr').length") == 10
    assert browser.js("return document.querySelectorAll('#pq-worst tbody tr').length") == 10
    for chart in ("pq-delta", "pq-values", "spread-chart-0"):
        w, h = chart_size(browser, chart)
        assert w > 100 and h > 100, (chart, w, h)
    browser.screenshot(tmp_path / "big.png")


DL19_RUNS = ("rankllm.dl19.bm25.top100.run", "rankllm.dl19.bm25-rm3.top100.run",
             "rankllm.dl19.splade-p-p-ensemble-distil.top100.run", "rankllm.dl19.d-bert-kd-tasb.top100.run")


def test_real_dl19_report_highlights_order_flips(browser: Browser, tmp_path: Path) -> None:
    """The real DL19 runs: the pairs whose order flips and the flavors that reorder the runs are
    the ones the spread computes, and each run's summary is its eval value."""
    from rankflavor import evaluate
    from rankflavor.analysis.spread.api import spread
    from rankflavor.report import document_from_results

    qrels = str(shared_path("qrels", "qrels.dl19-passage.txt"))
    runs = [str(shared_path("runs", name)) for name in DL19_RUNS]
    results = [evaluate(qrels, r, ["trec_eval:ndcg_cut.10"]) for r in runs]
    sp = spread(qrels, runs, "trec_eval:ndcg_cut.10")
    path = write_report(tmp_path / "dl19.html", [*map(document_from_results, results), document_from_spread(sp)])
    page = browser.load(path)
    assert_clean(page, path)
    cells = browser.js("return Array.from(document.querySelectorAll('#summary-table tbody tr td')).map(c => c.textContent.trim())")
    assert cells == [f"{r[0].mean:.4f}" for r in results]
    # what every format of spread summarises: the flavors in its summaries (defect presets left out)
    assert sp.excluded
    flips = [(p.run_a, p.run_b) for p in sp.pairs if p.flips]
    assert flips  # real runs whose order depends on the flavor
    shown = browser.js("return Array.from(document.querySelectorAll('table.pairs tr.flip')).map(r => [r.cells[0].textContent, r.cells[1].textContent])")
    assert [tuple(x) for x in shown] == flips
    base = sp.orders and next(o.order for o in sp.orders if sp.flavors[0].flavor in o.flavors)
    reordering = sum(len(o.flavors) for o in sp.orders if o.order != base)
    assert browser.js("return document.getElementById('spread-chart-0').layout.shapes.length") == reordering > 0
    assert chart_size(browser, "spread-chart-0")[1] > 100
    browser.screenshot(tmp_path / "dl19.png")


# -- compare and judgments: their real JSON -------------------------------------------------------


@pytest.fixture(scope="module")
def stats_docs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``compare`` (quepid's flavor flips a sign) and ``judgments`` on the DL19 runs, as JSON and
    through their ``--html``."""
    out = tmp_path_factory.mktemp("stats")
    qrels = str(shared_path("qrels", "qrels.dl19-passage.txt"))
    runs = [str(shared_path("runs", name)) for name in DL19_RUNS]
    files = {"compare_html": out / "compare.html", "judgments_html": out / "judgments.html"}
    res = CliRunner().invoke(cli, ["compare", qrels, *runs[:3], "--resamples", "200", "--flavors",
                                   "quepid,spark_triples", "--format", "json", "--html", str(files["compare_html"])])
    assert res.exit_code == 0, res.output
    files["compare"] = out / "compare.json"
    files["compare"].write_text(res.stdout)
    res = CliRunner().invoke(cli, ["judgments", qrels, *runs, "-m", "ndcg@10", "-m", "P@10", "--scale", "trec_dl",
                                   "--format", "json", "--html", str(files["judgments_html"])])
    assert res.exit_code == 0, res.output
    files["judgments"] = out / "judgments.json"
    files["judgments"].write_text(res.stdout)
    return files


def table_text(browser: Browser, selector: str) -> list[list[str]]:
    return browser.js(f"return Array.from(document.querySelectorAll({json.dumps(selector + ' tbody tr')})).map("  # type: ignore[no-any-return]
                      "r => Array.from(r.cells).map(c => c.textContent.trim()))")


def test_compare_and_judgments_json_in_browser(browser: Browser, stats_docs: dict[str, Path], tmp_path: Path) -> None:
    """The significance table, the system means with CIs and the coverage panel show the values
    the JSON holds, each under its flavor string."""
    cmp, cov = (json.loads(stats_docs[k].read_text()) for k in ("compare", "judgments"))
    path = tmp_path / "stats.html"
    res = run_cli("report", str(stats_docs["compare"]), str(stats_docs["judgments"]), "-o", str(path))
    assert res.exit_code == 0, res.output
    page = browser.load(path)
    assert_clean(page, path)
    m = cmp["measures"][0]
    summary = {r[0]: r[1] for r in table_text(browser, "#summary-table")}
    assert summary == {s["name"]: f"{s['mean']:.4f} [{s['ci'][0]:.4f}, {s['ci'][1]:.4f}]" for s in m["systems"]}
    st = cmp["settings"]
    settings = browser.js("return document.querySelector('.significance .settings').textContent")
    for text in (", ".join(st["tests"]), f"correction {st['correction']}", f"seed {st['seed']}",
                 f"resamples {st['n_resamples']}", f"alpha {st['alpha']}"):
        assert text in settings, (text, settings)
    assert browser.js("return document.querySelector('.significance .m-n').textContent") == str(m["n"])
    flavors = browser.js("return Array.from(document.querySelectorAll('.significance h3 code.flavor')).map(c => c.textContent)")
    assert flavors == [m["flavor"]]
    rows = table_text(browser, "table.sig-table")
    rob = {(r["a"], r["b"]): r for r in m["robustness"]["pairs"]}
    assert len(rows) == len(m["pairs"]) == 3
    for row, p in zip(rows, m["pairs"], strict=True):
        r = rob[(p["a"], p["b"])]
        robust = ("holds in every flavor" if r["sign_holds"] and r["verdict_holds"] else
                  "".join(["" if r["sign_holds"] else "sign flipped by: " + "; ".join(r["sign_flipped_by"]),
                           "" if r["verdict_holds"] else "verdict flipped by: " + "; ".join(r["verdict_flipped_by"])]))
        pvals = [f"{p['pvalues'][t]:.1e}" if 0 < p["pvalues"][t] < 1e-4 else f"{p['pvalues'][t]:.4f}" for t in st["tests"]]
        assert row == [p["a"], p["b"], f"{p['delta']:+.4f} [{p['ci'][0]:.4f}, {p['ci'][1]:.4f}]", f"{p['cohens_d']:.3f}",
                       f"{p['wins']} / {p['losses']} / {p['ties']}", *pvals, f"{p['adjusted']['tukey_hsd']:.4f}",
                       "significant" if p["significant"] else "not significant", robust]
    assert any(not r["sign_holds"] for r in rob.values())  # the data really exercise "which flavors flip it"
    assert any(row[-1].startswith("sign flipped by: ") and "[quepid]" in row[-1] for row in rows)
    # The coverage panel: judged@k per run, the pool-bias warning, bounds with undecided runs flagged.
    cov_rows = table_text(browser, "table.cov-table")
    undecided = cov["undecided"][cov["runs"][0]["bounds"][0]["measure"]]  # keyed by the flavor string
    assert undecided  # overlapping intervals among the real runs
    for row, r in zip(cov_rows, cov["runs"], strict=True):
        b = r["bounds"][0]
        biased = r["run"] in cov["pool_bias"]["runs"]
        assert row[0] == r["run"] + (" ⚠" if biased else "")
        assert row[1] == f"{r['judged_at_k']:.4f}" and row[2] == str(r["unjudged_in_top_k"])
        interval = f"{b['value']:.4f} [{b['lower']:.4f}, {b['upper']:.4f}]"
        assert row[3] == interval + (" undecided" if r["run"] in undecided else "")
        assert row[4] == f"{b['condensed']:.4f}"
    warning = browser.js("return document.querySelector('.coverage .pool-bias .biased').textContent")
    assert warning == ", ".join(sorted(cov["pool_bias"]["runs"])) and cov["pool_bias"]["runs"]
    legend = browser.js("return Array.from(document.querySelectorAll('.coverage ol.flavors code')).map(c => c.textContent)")
    assert legend == [b["measure"] for b in cov["runs"][0]["bounds"]]
    browser.screenshot(tmp_path / "stats.png")


def test_compare_and_judgments_html_options(stats_docs: dict[str, Path]) -> None:
    """``compare --html`` and ``judgments --html`` write the report of what they printed."""
    cmp, cov = (json.loads(stats_docs[k].read_text()) for k in ("compare", "judgments"))
    page = stats_docs["compare_html"].read_text()
    assert 'class="significance"' in page and 'class="generic sig-table"' in page
    assert f'{cmp["measures"][0]["pairs"][0]["delta"]:+.4f}' in page
    assert cmp["provenance"]["qrels"]["sha256"] in page  # the inputs' hashes in the footer
    assert '"queries":[' in page  # per-query values join the per-query charts
    page = stats_docs["judgments_html"].read_text()
    assert 'class="generic cov-table"' in page and "Pool bias" in page and "undecided" in page
    assert f'{cov["runs"][0]["judged_at_k"]:.4f}' in page
    assert str(escape('"scale": "trec_dl"')) in page  # the settings that made the numbers


def test_hostile_names_in_a_real_comparison(tmp_path: Path) -> None:
    """Run names and query ids of a real ``compare`` document are text, in every cell and the data block."""
    from rankflavor.analysis.compare import compare
    from rankflavor.analysis.judgments import judgments

    img = '"><img/src=x/onerror=alert(1)>'  # an id has no whitespace
    qids = [SCRIPT, "q'\"quoted\"", img, "q4", "q5"]
    rng = np.random.default_rng(3)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 d{j} {int(rng.integers(0, 3))}\n" for q in qids for j in range(6)))
    runs = {}
    for name in (SCRIPT, IMG):
        p = tmp_path / f"run{len(runs)}.txt"
        p.write_text("".join(f"{q} Q0 d{j} {r} {s:.3f} t\n" for q in qids
                             for r, (j, s) in enumerate(zip(rng.permutation(6), rng.random(6), strict=True), 1)))
        runs[name] = str(p)
    result = compare(str(qrels), runs, ["ndcg@5"], n_resamples=50, flavors=["quepid"])
    cov = judgments(str(qrels), runs, ["ndcg@5"], scale="beir")
    page = render_report([document_from_dict(result.to_dict(), "c.json"), document_from_dict(cov.to_dict(), "j.json")])
    text = page.replace(plotly_js(), "")
    assert SCRIPT not in text and "<img" not in text
    assert f'<td class="pa">{escape(SCRIPT)}</td><td class="pb">{escape(IMG)}</td>' in text
    assert f'<td class="run">{escape(SCRIPT)}' in text and f'<th scope="row" class="system" data-sort="{escape(SCRIPT)}"' in text
    data = json.loads(text.split('<script type="application/json" id="report-data">', 1)[1].split("</script>", 1)[0])
    assert data["per_query"][0]["systems"] == [SCRIPT, IMG] and img in data["per_query"][0]["queries"]


def test_spread_marks_defect_presets_as_the_terminal_does(tmp_path: Path) -> None:
    """spark_triples reproduces Spark's unsorted-ideal defect: its flavor is marked, never shaded as
    an order flip, kept out of the pairs and per-run summaries (the spread's own, which every format
    renders) and off the chart's y range."""
    from rankflavor.analysis.spread.api import spread
    from rankflavor.render.spreadview import defect_flavors

    qrels = str(shared_path("qrels", "qrels.dl19-passage.txt"))
    runs = [str(shared_path("runs", name)) for name in DL19_RUNS[:2]]
    sp = spread(qrels, runs, "ndcg@10")
    defects = defect_flavors(sp)
    assert [sp.flavors[j].presets for j in defects] == [("spark_triples",)]
    page = render_report([document_from_spread(sp)])
    assert "reproduces a known defect: not in the highlighted flips" in page and str(escape(sp.all_notes[0])) in page
    body = page.split('class="generic pairs"', 1)[1].split("</table>", 1)[0]
    p = sp.pairs[0]
    assert f'<td class="num">{p.a_better}</td><td class="num">{p.b_better}</td>' in body  # the summaries' counts
    assert p.a_better + p.b_better + p.equal == len(sp.flavors) - 1
    summaries = page.split('class="generic spread-summaries"', 1)[1].split("</table>", 1)[0]
    for s in sp.summaries:  # each run's min, max and flavors counted, as every format prints them
        assert f">{s.high:.4f}</td>" in summaries and f'<td class="num">{s.n_flavors}</td>' in summaries
        assert s.n_flavors == len(sp.flavors) - 1
    fig = json.loads(page.split('<script type="application/json" id="report-data">', 1)[1].split("</script>", 1)[0]
                     )["spread_figures"][0]
    j = next(iter(defects))
    assert max(sp.means[:, j]) > 1 > fig["layout"]["yaxis"]["range"][1]  # the defect's NDCG above 1 is off the scale
    assert "known defect, off the scale" in fig["layout"]["annotations"][0]["text"]
    included = render_report([document_from_spread(sp.with_defects())])
    assert "reproduces a known defect: not in the highlighted flips" not in included  # counted, so not set apart
    assert f">{max(sp.means[:, j]):.4f}</td>" in included.split('class="generic spread-summaries"', 1)[1].split("</table>")[0]


# -- the README's screenshot ---------------------------------------------------------------------


def test_readme_reports_section_runs(tmp_path: Path) -> None:
    """The README's commands, as written, make the report; its screenshot is a small PNG."""
    import subprocess

    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Reports", 1)[1].split("\n## ", 1)[0]
    script = section.split("```bash\n", 1)[1].split("```", 1)[0]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    shell = f'rankflavor() {{ "{sys.executable}" -m rankflavor "$@"; }}\nset -e\n{script}'
    done = subprocess.run(["bash", "-c", shell], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "report.html").read_text()
    assert "run_a.txt" in page and "run_b.txt" in page and 'id="spread-chart-0"' in page
    png = ROOT / "docs" / "report.png"
    assert "](docs/report.png)" in section
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size < 200_000


def write_docs_png(out: Path = ROOT / "docs" / "report.png") -> Path:
    """Render the demo report in the browser and save the top of the page as a small PNG."""
    import tempfile

    from PIL import Image

    with tempfile.TemporaryDirectory() as tmp:
        files = make_demo(Path(tmp))
        b = start_browser()
        try:
            b.load(files["report"], 1000, 700)
            full = Path(tmp) / "full.png"
            b.screenshot(full, full=True)
        finally:
            b.quit()
        img = Image.open(full).convert("RGB")
        img = img.crop((0, 0, img.width, min(img.height, 1260))).resize((900, min(img.height, 1260) * 900 // img.width))
        img.quantize(colors=160, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)
    return out


if __name__ == "__main__":
    print(write_docs_png(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "report.png"))
