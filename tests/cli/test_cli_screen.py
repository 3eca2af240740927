"""What a person sees while a command works (issue #34): a progress bar on a terminal, nothing in
a pipe or under ``--quiet``; and the heavy libraries (statsmodels, SciPy, plotly, pyspark,
torch) loaded only by the commands that use them.

The terminal is a real pseudo-terminal (:mod:`pty`): the command runs in its own process with
standard error attached to it, as in a shell, and the test reads what reached the terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pty = pytest.importorskip("pty")

HEAVY = ("statsmodels", "scipy", "plotly", "pyspark", "torch")
QRELS = "".join(f"q{q} 0 d{d} {(q + d) % 3}\n" for q in range(1, 4) for d in range(1, 6))
RUN = "".join(f"q{q} Q0 d{d} {d} {10 - d} r\n" for q in range(1, 4) for d in range(1, 6))


def _inputs(tmp_path: Path) -> list[str]:
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.run").write_text(RUN)
    return [str(tmp_path / "q.txt"), str(tmp_path / "r.run")]


def _env() -> dict[str, str]:
    return {**os.environ, "TERM": "xterm", "COLUMNS": "100", "PYTHONPATH": os.pathsep.join(sys.path)}


def _on_terminal(args: list[str]) -> tuple[int, str, str]:
    """Run ``rankflavor ARGS`` with standard error on a pseudo-terminal, standard output in a pipe:
    (exit code, standard output, what the terminal received)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "rankflavor", *args], stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL, env=_env())
    os.close(slave)
    seen = bytearray()
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the other end closed (Linux raises EIO)
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    out = proc.stdout.read().decode() if proc.stdout else ""
    return proc.wait(timeout=120), out, seen.decode(errors="replace")


def _in_pipes(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rankflavor", *args], capture_output=True, text=True, env=_env(),
                          timeout=120)


IDENTIFY = ["identify", "--value", "0.5", "-m", "P@3"]


def test_identify_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    args = [IDENTIFY[0], *_inputs(tmp_path), *IDENTIFY[1:]]
    code, out, terminal = _on_terminal(args)
    assert code == 0, terminal
    assert "identify:" in terminal and "flavors" in terminal  # the bar's description
    assert "flavors tried" in out and "\x1b" not in out  # the result itself went to the pipe, plain
    piped = _in_pipes(args)
    assert piped.returncode == 0 and piped.stdout == out
    assert "identify:" not in piped.stderr and "\x1b" not in piped.stderr + piped.stdout
    code, quiet_out, quiet = _on_terminal([*args, "--quiet"])
    assert code == 0 and quiet_out == out and "identify:" not in quiet


def test_judgments_says_it_is_working_on_a_terminal_only(tmp_path: Path) -> None:
    args = ["judgments", *_inputs(tmp_path), "--scale", "trec_dl"]
    code, out, terminal = _on_terminal(args)
    assert code == 0 and "judgments: coverage and bounds" in terminal
    piped = _in_pipes(args)
    assert piped.returncode == 0 and "judgments: coverage" not in piped.stderr and piped.stdout == out


@pytest.mark.parametrize("command", ["demo", "convert", "aggregate", "report"])
def test_commands_that_write_files_say_they_are_working_too(tmp_path: Path, command: str) -> None:
    """The commands with no table to lay out take ``--quiet`` with the same meaning (and ``demo``,
    which prints one, ``--wide`` too)."""
    qrels, run = _inputs(tmp_path)
    if command == "demo":
        args = ["demo"]
    elif command == "convert":
        args = ["convert", run, str(tmp_path / "out.jsonl")]
    elif command == "aggregate":
        (tmp_path / "ratings.csv").write_text("query,doc,rater,grade\nq1,d1,ann,2\nq1,d1,bob,3\n")
        args = ["aggregate", str(tmp_path / "ratings.csv"), "--rule", "mean", "-o", str(tmp_path / "agg.txt")]
    else:
        results = tmp_path / "results.json"
        results.write_text(_in_pipes(["eval", qrels, run, "-m", "P@3", "--format", "json"]).stdout)
        args = ["report", str(results), "-o", str(tmp_path / "report.html")]
    code, out, terminal = _on_terminal(args)
    assert code == 0, terminal
    assert f"{command}" in terminal and "\x1b[" in terminal  # the bar, drawn on the terminal
    code, quiet_out, quiet = _on_terminal([*args, "--quiet"])
    assert code == 0 and quiet_out == out and "\x1b[" not in quiet
    piped = _in_pipes(args)
    assert piped.returncode == 0 and piped.stdout == out and "\x1b" not in piped.stderr + piped.stdout


_PROBE = """
import json, sys
from click.testing import CliRunner
from rankflavor.cli.main import cli
steps = {}
for name, args in json.loads(sys.argv[1]):
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, (args, r.output)
    steps[name] = sorted(m for m in sys.modules if m.split(".")[0] in json.loads(sys.argv[2]))
print(json.dumps(steps))
"""


def _loaded(steps: list[tuple[str, list[str]]], watch: tuple[str, ...]) -> dict[str, list[str]]:
    """The watched top-level modules loaded after each step, run in order in one fresh process."""
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(steps), json.dumps(watch)],
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_cli_loads_heavy_libraries_only_where_used(tmp_path: Path) -> None:
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("query,doc,rater,grade\nq1,a,ann,1\nq1,a,bob,2\nq1,b,ann,0\nq1,b,bob,0\nq2,c,ann,3\n"
                       "q2,c,bob,3\n")
    loaded = _loaded([("version", ["--version"]), ("eval --help", ["eval", "--help"]),
                      ("raters", ["raters", str(ratings)]), ("raters json", ["raters", str(ratings), "--format", "json"])],
                     (*HEAVY, "numpy", "pandas"))
    assert loaded["version"] == [] and loaded["eval --help"] == []  # not even NumPy
    assert not [m for m in loaded["raters json"] if m.split(".")[0] in HEAVY], loaded["raters json"]
