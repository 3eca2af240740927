"""``rankflavor gate`` in CI (issue 36, part 5): the Markdown job summary, GitHub annotations,
$GITHUB_STEP_SUMMARY, and the example workflow and pre-commit hook naming what exists.

The workflow-command format is GitHub's: ``::command key=value,key=value::message``, a message
escaping ``%``, CR and LF as ``%25``, ``%0D``, ``%0A`` and a property value ``:`` and ``,`` too
(``%3A``, ``%2C``): actions/toolkit, packages/core/src/command.ts (escapeData, escapeProperty),
which the runner reverses (actions/runner, src/Runner.Worker/ActionCommandManager.cs).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from rankflavor.cli.main import cli
from rankflavor.errors import EvaluationError, InputError, ResourceError, UsageError
from rankflavor.render.gatefmt import workflow_command

from .test_project_gate import invoke, make_baseline, project

ROOT = Path(__file__).parents[2]
WORKFLOW = ROOT / "docs" / "ci" / "rankflavor-gate.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"


def _table_rows(md: str) -> list[list[str]]:
    """The body rows of the Markdown tables, cells stripped."""
    rows = []
    for line in md.splitlines():
        if line.startswith("| ") and not line.startswith("| result"):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def test_markdown_summary_holds_the_json_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, "floor = 0.55\nmax_drop = 0.05\nalpha = 0.05\ntest = 't'"))
    make_baseline("splade")
    code, md, _ = invoke("gate", "bm25", "rm3", "--format", "md")
    assert code == 1
    code_json, out, _ = invoke("gate", "bm25", "rm3", "--format", "json")
    assert code_json == 1
    checks = [c for r in json.loads(out)["runs"] for c in r["checks"]]
    rows = _table_rows(md)
    assert len(rows) == len(checks) == 6
    for row, c in zip(rows, checks, strict=True):
        mark, measure, kind, value, baseline, threshold, p, why = row
        assert mark == ("PASS" if c["passed"] else "**FAIL**")
        assert (measure, kind) == (c["measure"], c["check"])
        assert float(value) == round(c["value"], 4)
        assert (baseline == "") == (c["baseline"] is None)
        if baseline:
            assert float(baseline) == round(c["baseline"], 4)
        assert float(threshold) == round(c["threshold"], 4)
        assert (p == "") == (c["pvalue"] is None)
        if p:
            assert float(p) == pytest.approx(c["pvalue"], rel=1e-3)
        assert why.replace("&lt;", "<").replace("&gt;", ">") == c["reason"]
    assert md.startswith("## rankflavor gate FAILED\n")
    assert "### dl19 / bm25" in md and "### dl19 / rm3" in md
    assert "`ndcg@10[gain=linear,discount=log2," in md  # each measure's canonical flavor
    failed = [f"{c['measure']} on {c['dataset']}/{c['run']}: {c['check']}" for c in checks if not c["passed"]]
    assert len(failed) == 6  # bm25 0.5058 and rm3 0.5216: under the floor, and far and significantly below splade's 0.7308
    last = f"gate FAILED: {len(failed)} of {len(checks)} checks failed ({'; '.join(failed)})"
    assert md.rstrip().endswith(last.replace("_", "\\_"))


def _annotations(out: str) -> list[str]:
    """The workflow commands after the gate's output (which stop-commands markers enclose)."""
    lines = out.splitlines()
    token = lines[0].removeprefix("::stop-commands::")
    return [line for line in lines[lines.index(f"::{token}::") + 1:] if line.startswith("::")]


def _unescape_property(text: str) -> str:
    # the runner's order: every escape but %25 first, %25 last, so "%253A" stays "%3A"
    for escaped, raw in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ",")):
        text = text.replace(escaped, raw)
    return text.replace("%25", "%")


def test_annotations_escape_an_untrusted_run_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ..conftest import shared_path

    monkeypatch.chdir(project(tmp_path, "floor = 0.6", baseline=None))
    evil = "a,b:c%d\n::error::forged.run"
    shutil.copyfile(shared_path("runs", "rankllm.dl19.bm25.top100.run"), tmp_path / evil)
    code, out, _ = invoke("gate", evil, "--github")
    assert code == 1
    lines = out.splitlines()
    # the gate's own output between stop-commands markers (GitHub's "Stopping and starting workflow
    # commands"), its name on one line with the line break shown as \n
    token = lines[0].removeprefix("::stop-commands::")
    assert re.fullmatch(r"[0-9a-f]{32}", token)
    end = lines.index(f"::{token}::")
    assert "run a,b:c%d\\n::error::forged.run (" in " ".join(lines[1:end])
    commands = [line for line in lines[end + 1:] if line.startswith("::")]
    assert commands == [
        "::error file=rankflavor.toml,title=rankflavor gate%3A ndcg@10 floor on dl19/a%2Cb%3Ac%25d%0A%3A%3Aerror%3A%3A"
        "forged.run::FAIL: ndcg@10 on dl19/a,b:c%25d%0A::error::forged.run: mean 0.5058 < floor 0.6000"]
    props, message = commands[0][len("::error "):].split("::", 1)
    title = dict(p.split("=", 1) for p in props.split(","))["title"]
    assert _unescape_property(title) == f"rankflavor gate: ndcg@10 floor on dl19/{evil}"
    assert _unescape_property(message) == f"FAIL: ndcg@10 on dl19/{evil}: mean 0.5058 < floor 0.6000"
    assert workflow_command("warning", "100%\r\n", title="x") == "::warning title=x::100%25%0D%0A"
    assert workflow_command("notice", "m", file=None, title="") == "::notice::m"


def test_a_drop_within_the_limit_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, "max_drop = 0.05"))
    make_baseline("rm3")  # 0.5216; bm25 0.5058 drops 0.0158, within 0.05
    code, out, _ = invoke("gate", "bm25", "--github")
    assert code == 0
    assert _annotations(out) == [
        "::warning file=rankflavor.toml,title=rankflavor gate%3A ndcg@10 max_drop on dl19/bm25::dropped: ndcg@10 on "
        "dl19/bm25: mean 0.5058 dropped 0.0157 from the baseline's 0.5216 (allowed drop 0.0500)"]
    code, out, _ = invoke("gate", "rm3", "--github")  # the baseline itself: nothing dropped, no annotation
    assert code == 0 and _annotations(out) == []


def test_step_summary_is_appended_when_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, "floor = 0.6", baseline=None))
    md = invoke("gate", "bm25", "--format", "md")[1]
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n")
    r = CliRunner().invoke(cli, ["gate", "bm25", "--github"], env={"COLUMNS": "200", "GITHUB_STEP_SUMMARY": str(summary)})
    assert r.exit_code == 1
    assert summary.read_text() == "earlier step\n" + md + "\n"
    r = CliRunner().invoke(cli, ["gate", "bm25", "--github"], env={"GITHUB_STEP_SUMMARY": str(tmp_path / "no" / "f")})
    assert r.exit_code == 3 and "cannot append the job summary to $GITHUB_STEP_SUMMARY" in r.stderr
    r = CliRunner().invoke(cli, ["gate", "bm25", "--github"], env={"GITHUB_STEP_SUMMARY": None})
    assert r.exit_code == 1 and "::error " in r.stdout


# -- the workflow and the hook -----------------------------------------------------------------------

def _check_rankflavor_command(line: str) -> None:
    """``rankflavor SUB --opt ...``: SUB exists and each option is in its --help."""
    args = shlex.split(line)
    assert args[0] == "rankflavor", line
    r = CliRunner().invoke(cli, [args[1], "--help"])
    assert r.exit_code == 0, r.output
    for a in args[2:]:
        if a.startswith("--"):
            assert re.search(rf"(^|\s){re.escape(a.split('=')[0])}\b", r.output), (a, r.output)


def test_workflow_parses_and_names_what_exists() -> None:
    doc = yaml.safe_load(WORKFLOW.read_text())
    assert doc["name"] and doc["jobs"]["gate"]["runs-on"]
    steps = doc["jobs"]["gate"]["steps"]
    runs = [s["run"] for s in steps if "run" in s]
    gate_lines = [r for r in runs if r.startswith("rankflavor ")]
    assert gate_lines == ["rankflavor gate --github"]
    for line in gate_lines:
        _check_rankflavor_command(line)
    fetch = [r for r in runs if r.startswith("ir_datasets ")]
    assert fetch, runs
    exe = shutil.which("ir_datasets")
    if exe is None:
        pytest.skip("ir_datasets' command is not installed")
    for line in fetch:  # the subcommand exists (its help), not run: it would download
        args = shlex.split(line.split(">")[0])
        proc = subprocess.run([exe, args[1], "--help"], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and "qrels" in proc.stdout


def test_pre_commit_hook_parses_and_names_what_exists() -> None:
    hooks = yaml.safe_load(HOOKS.read_text())
    assert [h["id"] for h in hooks] == ["rankflavor-gate"]
    hook = hooks[0]
    # pre-commit's required keys of a hook definition (id, name, entry, language)
    assert {"id", "name", "entry", "language"} <= hook.keys() and hook["language"] == "python"
    assert hook["pass_filenames"] is False  # gate takes run names from rankflavor.toml, not changed files
    _check_rankflavor_command(hook["entry"])


@pytest.mark.parametrize("path", [WORKFLOW, HOOKS])
def test_documented_exit_codes_are_the_real_ones(path: Path) -> None:
    text = " ".join(line.lstrip("# ") for line in path.read_text().splitlines() if line.startswith("#"))
    codes = dict(re.findall(r"\b([0-5]) (passed|a check failed|usage or config error|input error|"
                            r"evaluation policy error|out of memory)", text))
    assert codes == {"0": "passed", "1": "a check failed", "2": "usage or config error", "3": "input error",
                     "4": "evaluation policy error", "5": "out of memory"}
    assert (UsageError.exit_code, InputError.exit_code, EvaluationError.exit_code, ResourceError.exit_code) == (2, 3, 4, 5)
