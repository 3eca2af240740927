"""Progress (issue 19, item 6): long work reports to a progress the caller passes, in coarse
steps (pieces of a file, flavors, blocks of resamples, Spark tasks), never per query; the command
shows bars only when standard error is a terminal, so pipes and CI logs get none.

Checked here: the units reported add up to the work's size (bytes of the file, resamples, runs x
flavors) in at most one step per block; results are the same with and without a progress; pipes
(CliRunner, a subprocess) get no progress output; a real pseudo-terminal and an injected
``Console(force_terminal=True)`` do.
"""

from __future__ import annotations

import gzip
import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from rich.console import Console

from rankflavor import compare, evaluate, spread, stats
from rankflavor.base.progress import Progress, Recorder, RichProgress, task, terminal_progress
from rankflavor.cli.main import cli
from rankflavor.io import stream as chunked

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _files(tmp_path: Path, n_q: int = 30, seed: int = 0, name: str = "run.txt") -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    q_lines, r_lines = [], []
    for q in range(n_q):
        for d in range(8):
            q_lines.append(f"q{q:03d} 0 d{d} {rng.integers(0, 4)}")
        for rank, d in enumerate(rng.permutation(12)):
            r_lines.append(f"q{q:03d} Q0 d{d} {rank + 1} {30 - rank + rng.random():.6f} sys")
    qrels, run = tmp_path / "qrels.txt", tmp_path / name
    qrels.write_text("\n".join(q_lines) + "\n")
    run.write_text("\n".join(r_lines) + "\n")
    return qrels, run


def _advanced(rec: Recorder, prefix: str) -> list[float]:
    return [float(n) for kind, d, n in rec.events if kind == "advance" and d.startswith(prefix) and n is not None]


def _started(rec: Recorder, prefix: str) -> list[float | None]:
    return [n for kind, d, n in rec.events if kind == "start" and d.startswith(prefix)]


def test_the_protocol() -> None:
    assert isinstance(Recorder(), Progress)
    assert isinstance(RichProgress(Console(file=io.StringIO())), Progress)
    with task(None, "silent", 5) as t:  # no progress: a task that does nothing
        t.advance(3)


@pytest.mark.parametrize("gzipped", [False, True])
def test_chunked_read_reports_the_files_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gzipped: bool) -> None:
    monkeypatch.setattr(chunked, "PIECE_BYTES", 1024)  # several pieces
    qrels, run = _files(tmp_path)
    if gzipped:
        packed = tmp_path / "run.txt.gz"
        packed.write_bytes(gzip.compress(run.read_bytes()))
        run = packed
    rec = Recorder()
    with_bar = evaluate(str(qrels), str(run), ["ndcg@5", "AP"], chunk_rows=50, progress=rec)
    without = evaluate(str(qrels), str(run), ["ndcg@5", "AP"], chunk_rows=50)
    assert with_bar.means() == without.means()
    size = os.path.getsize(run)
    assert _started(rec, "evaluating run.txt") == [size]
    steps = _advanced(rec, "evaluating run.txt")
    assert sum(steps) == size  # every byte of the file, counted once
    lines = len(evaluate(str(qrels), str(run), ["num_ret"])[0].queries) * 12
    assert 2 <= len(steps) <= lines // 10  # a step per piece of the file, not per row
    assert rec.events[-1][0] == "end"


def test_whole_reads_report_each_input(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path)
    rec = Recorder()
    evaluate(str(qrels), str(run), ["ndcg@5"], progress=rec)
    assert [d for kind, d, _ in rec.events if kind == "start"] == ["reading qrels.txt", "reading run.txt"]
    assert [kind for kind, _, _ in rec.events] == ["start", "advance", "end"] * 2


def test_spread_reports_each_run_and_flavor(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path)
    _, run2 = _files(tmp_path, seed=1, name="run2.txt")
    rec = Recorder()
    grid = {"gain": ["linear", "exp2"], "ideal": ["global", "local"]}
    got = spread(str(qrels), [str(run), str(run2)], "ndcg@5", grid=grid, presets=False, progress=rec)
    plain = spread(str(qrels), [str(run), str(run2)], "ndcg@5", grid=grid, presets=False)
    assert np.array_equal(got.means, plain.means)
    n = 2 * len(got.flavors)
    assert _started(rec, "spread") == [n] and _advanced(rec, "spread") == [1.0] * n


@pytest.mark.parametrize("n_queries", [8, 60])  # 2**8 <= 10,000: exact enumeration; 2**60: random
def test_resampling_tests_report_their_resamples(n_queries: int) -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(0.01, 0.1, size=(3, n_queries))
    rec = Recorder()
    assert np.array_equal(stats.permutation_many(d, n_resamples=10_000, seed=1, progress=rec),
                          stats.permutation_many(d, n_resamples=10_000, seed=1))
    total = 2**n_queries if n_queries == 8 else 10_000
    assert sum(_advanced(rec, "permutation")) == total
    rows = max(1, stats.randomization.BLOCK_ELEMENTS // n_queries)
    assert len(_advanced(rec, "permutation")) == -(-total // rows)  # one step per block of resamples
    rec = Recorder()
    assert np.array_equal(stats.bootstrap_test_many(d, n_resamples=3000, seed=2, progress=rec),
                          stats.bootstrap_test_many(d, n_resamples=3000, seed=2))
    assert sum(_advanced(rec, "bootstrap test")) == 3000
    rec = Recorder()
    assert np.array_equal(stats.bootstrap_ci_many(d, n_resamples=2000, seed=2, batch=300, progress=rec),
                          stats.bootstrap_ci_many(d, n_resamples=2000, seed=2, batch=300))
    assert _advanced(rec, "bootstrap intervals") == [300.0] * 6 + [200.0]
    rec = Recorder()
    m = rng.random((n_queries, 3))
    assert np.array_equal(stats.tukey_hsd_randomized(m, n_resamples=500, seed=0, progress=rec),
                          stats.tukey_hsd_randomized(m, n_resamples=500, seed=0))
    assert sum(_advanced(rec, "Tukey")) == 500


def test_compare_reports_scoring_tests_and_flavors(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path)
    _, run2 = _files(tmp_path, seed=1, name="run2.txt")
    rec = Recorder()
    got = compare(str(qrels), [str(run), str(run2)], "ndcg@5", n_resamples=500, flavors=["trec_eval", "beir"],
                  progress=rec)
    plain = compare(str(qrels), [str(run), str(run2)], "ndcg@5", n_resamples=500, flavors=["trec_eval", "beir"])
    assert got.to_dict() == plain.to_dict()
    started = [d for kind, d, _ in rec.events if kind == "start"]
    assert started[0] == "scoring 2 runs x 3 measures"
    assert any(d.startswith("permutation test") for d in started)
    assert any(d.startswith("bootstrap intervals") for d in started)
    assert "re-testing under 2 flavors" in started
    assert sum(_advanced(rec, "scoring")) == 6


def test_no_progress_output_in_pipes(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path)
    _, run2 = _files(tmp_path, seed=1, name="run2.txt")
    runner = CliRunner()
    for args in (["eval", str(qrels), str(run), "--chunk-rows", "40"],
                 ["spread", str(qrels), str(run), "--no-presets"],
                 ["compare", str(qrels), str(run), str(run2), "--resamples", "200"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert result.stderr == "", args
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-m", "rankflavor", "eval", str(qrels), str(run), "--chunk-rows", "40"],
                          capture_output=True, text=True, env=env, check=True)
    assert done.stderr == "" and "ndcg@10" in done.stdout


def test_a_terminal_gets_bars(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path)
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=100)
    with terminal_progress(console=console) as bar:
        assert isinstance(bar, RichProgress)
        evaluate(str(qrels), str(run), ["ndcg@5"], chunk_rows=40, progress=bar)
    assert "evaluating run.txt in chunks" in buf.getvalue()

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    with terminal_progress(io.StringIO()) as none:
        assert none is None  # not a terminal: no progress at all
    with terminal_progress(Tty()) as some:
        assert isinstance(some, RichProgress)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="pseudo-terminals need a POSIX system")
def test_the_command_on_a_real_terminal_draws_bars(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path, n_q=200)
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": SRC, "TERM": "xterm", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    child = subprocess.Popen([sys.executable, "-m", "rankflavor", "eval", str(qrels), str(run), "--chunk-rows", "100"],
                             stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                block = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not block:
                break
            seen += block
    finally:
        os.close(master)
        out = child.stdout.read() if child.stdout else b""
        child.wait(timeout=60)
    assert child.returncode == 0
    assert b"evaluating run.txt in chunks" in seen
    assert b"ndcg@10" in out and b"evaluating" not in out  # bars on standard error only
