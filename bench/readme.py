"""Every speed and memory figure README states, measured by one command (issue 33).

    python3 bench/readme.py                 # make the data it lacks, measure, print the table
    python3 bench/readme.py --write         # and put the table into README.md and bench/RESULTS.md
    python3 bench/readme.py --big --write   # the 20M-line memory figure too (2 GB of data, ~5 min more)
    python3 bench/readme.py --only eval-int pytrec   # some figures (README is left alone)

Each figure is a pair of whole processes, A and B (``bench/run.py``'s ``spawn``: wall clock from
start to reaped, peak resident memory from ``os.wait4``), run once each unmeasured, then
``--pairs`` times interleaved (A B, then B A, and so on, so a drift of the machine's speed falls on
both). The table gives A's median seconds with their range, and the median and range of the
pairs' ratios A/B, of wall time and of peak memory (or of a figure the child process reports,
for the in-process timings of ``bench/run.py --case dicts``). The load average before and after is
printed with the machine, the date and the versions; a figure measured on a busy machine says so
by its range. No figure is picked by hand: README's block is this command's output.

The data are ``bench/generate.py``'s (made when missing): ``7000x1000`` (6.9M run lines, integer
docnos in rank order), the same with text docnos and tied scores in random file order, and
``1000x100``; the Parquet copies are written by ``rankflavor convert`` (that is a figure too).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import _cpu, _load, _precompile, _versions, spawn  # noqa: E402

DATA = HERE / "data"
BEGIN, END = "<!-- bench/readme.py: begin -->", "<!-- bench/readme.py: end -->"
PY = sys.executable


@dataclass
class Figure:
    """One line of the table: A against B, by wall time (and peak memory), or by numbers the
    children print (``metrics``: keys of their last JSON line)."""

    key: str
    what: str
    a: list[str]
    b: list[str]
    a_env: dict[str, str] = field(default_factory=dict)
    memory: bool = False
    metrics: tuple[str, ...] = ("wall",)
    ok: tuple[int, ...] = (0,)
    big: bool = False
    #: Issue 33's bound on a median ratio A/B, by what is measured: ``"time"`` (the first of
    #: ``metrics``; another metric by its name) or ``"memory"``. The table says whether each holds.
    targets: dict[str, float] = field(default_factory=dict)
    samples: list[tuple[dict[str, float], dict[str, float]]] = field(default_factory=list)


def paths(size: str, text: bool = False) -> tuple[str, str]:
    name = size + (".text" if text else "")
    return str(DATA / f"qrels.{name}.txt"), str(DATA / f"run.{name}{'.shuffled' if text else ''}.txt")


def child(tool: str, qrels: str, run: str, case: str = "ndcg10") -> list[str]:
    return [PY, str(HERE / "child.py"), tool, "--case", case, "--qrels", qrels, "--run", run, "--inner-repeat", "30"]


def rf(*args: str) -> list[str]:
    return [PY, "-m", "rankflavor", *args]


def eval_cmd(qrels: str, run: str, *more: str) -> list[str]:
    return rf("eval", qrels, run, "-m", "ndcg_cut.10", "--preset", "trec_eval", "--format", "json", "--quiet", *more)


def parquet(path: str) -> str:
    return re.sub(r"\.txt$", ".parquet", path)


def figures() -> list[Figure]:
    iq, ir = paths("7000x1000")
    tq, tr = paths("7000x1000", text=True)
    sq, sr = paths("1000x100")
    bq, br = paths("20000x1000")
    second = str(DATA / "run.1000x100.b.txt")
    return [
        Figure("eval-int", "7M-line run, integer docnos in rank order: `eval` (NDCG@10) / reading qrels + run",
               eval_cmd(iq, ir), child("read_floor", iq, ir), memory=True, targets={"memory": 1.3}),
        Figure("eval-int-run", "the same `eval` / reading the run alone", eval_cmd(iq, ir), child("parse_floor", iq, ir)),
        Figure("eval-text", "7M-line run, text docnos, tied scores in random order: `eval` / reading qrels + run",
               eval_cmd(tq, tr), child("read_floor", tq, tr), memory=True, targets={"time": 1.5, "memory": 1.3}),
        Figure("eval-text-run", "the same `eval` / reading the run alone", eval_cmd(tq, tr), child("parse_floor", tq, tr)),
        Figure("pytrec", "pytrec_eval / `eval`, 7M lines, integer docnos", child("pytrec_eval", iq, ir), eval_cmd(iq, ir),
               memory=True),
        Figure("pytrec-text", "pytrec_eval / `eval`, 7M lines, text docnos, random ties", child("pytrec_eval", tq, tr),
               eval_cmd(tq, tr), memory=True),
        Figure("ranx", "ranx / `eval`, 7M lines, integer docnos", child("ranx", iq, ir), eval_cmd(iq, ir), memory=True),
        Figure("spread24", "`spread` over 24 flavors of NDCG@10 / one flavor (library, 7M lines)",
               child("spread", iq, ir), child("rankflavor", iq, ir)),
        Figure("chunked", "`eval --chunk-rows 2000000` / `eval` (7M lines)", eval_cmd(iq, ir, "--chunk-rows", "2000000"),
               eval_cmd(iq, ir), memory=True),
        Figure("parquet-int", "`eval` of the Parquet copies / of the TREC text, integer docnos (7M)",
               eval_cmd(parquet(iq), parquet(ir)), eval_cmd(iq, ir), memory=True, targets={"time": 0.5, "memory": 1.0}),
        Figure("parquet-text", "`eval` of the Parquet copies / of the TREC text, text docnos, random ties (7M)",
               eval_cmd(parquet(tq), parquet(tr)), eval_cmd(tq, tr), memory=True, targets={"time": 0.5, "memory": 1.0}),
        Figure("parquet-floor", "pyarrow alone reading the Parquet copies (no evaluation) / `eval` of the TREC text, "
               "integer docnos (7M)", child("parquet_floor", parquet(iq), parquet(ir)), eval_cmd(iq, ir), memory=True),
        Figure("parquet-text-floor", "the same, text docnos, random ties (7M)",
               child("parquet_floor", parquet(tq), parquet(tr)), eval_cmd(tq, tr), memory=True),
        Figure("convert", "`convert` of the 7M-line run to Parquet / `eval` of it", rf("convert", ir, str(DATA / "run.7000x1000.converted.parquet"),
               "--quiet"), eval_cmd(iq, ir), memory=True),
        Figure("judgments", "`judgments` (coverage and NDCG@10 bounds, trec_dl) / `eval` of NDCG@10 (7M)",
               rf("judgments", iq, ir, "-m", "ndcg@10", "--scale", "trec_dl", "--quiet"),
               rf("eval", iq, ir, "-m", "ndcg@10", "--quiet"), memory=True),
        Figure("compare", "`compare` of two runs, defaults (10,000 resamples, t + permutation + bootstrap, BCa CIs) / "
               "`--test t --no-ci` (1000 queries)", rf("compare", sq, sr, second, "--format", "json", "--quiet"),
               rf("compare", sq, sr, second, "--test", "t", "--no-ci", "--format", "json", "--quiet")),
        Figure("dicts", "small inputs (1000 x 100 dicts), in one process: `rankflavor.evaluate` / pytrec_eval",
               child("rankflavor", sq, sr, "dicts"), child("pytrec_eval", sq, sr, "dicts"),
               metrics=("inner_seconds", "first_call_seconds"), targets={"first_call_seconds": 2.0}),
        Figure("cli-small", "small inputs (1000 x 100 files): `eval` / pytrec_eval from the files", eval_cmd(sq, sr),
               child("pytrec_eval", sq, sr), targets={"time": 1.0}),
        Figure("cli-floor", "importing NumPy, pyarrow and click alone (`python -c`) / pytrec_eval from the files (1000 x 100)",
               [PY, "-c", "import numpy, pyarrow, click"], child("pytrec_eval", sq, sr)),
        Figure("version", "`rankflavor --version` / a bare interpreter (`python -c pass`)", rf("--version"), [PY, "-c", "pass"]),
        Figure("hugepage", "`eval` with NumPy's huge-page advice on (`NUMPY_MADVISE_HUGEPAGE=1`) / the command's default",
               eval_cmd(iq, ir), eval_cmd(iq, ir), a_env={"NUMPY_MADVISE_HUGEPAGE": "1"}),
        Figure("allocator", "`eval` with pyarrow's bundled allocator (`ARROW_DEFAULT_MEMORY_POOL=mimalloc`) / the "
               "command's default (`system`), text docnos, random ties (7M)", eval_cmd(tq, tr), eval_cmd(tq, tr),
               a_env={"ARROW_DEFAULT_MEMORY_POOL": "mimalloc"}, memory=True),
        Figure("eval-20m", "20M-line run, integer docnos: `eval` / reading qrels + run", eval_cmd(bq, br),
               child("read_floor", bq, br), memory=True, big=True, targets={"memory": 1.3}),
    ]  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Data


def make_data(big: bool) -> None:
    """The generator's files, the second system of ``compare`` and the Parquet copies, when missing."""
    wanted = [("1000x100", []), ("7000x1000", []), ("7000x1000", ["--text-docnos", "--shuffle-ties"])]
    if big:
        wanted.append(("20000x1000", []))
    for size, flags in wanted:
        qrels, run = paths(size, text=bool(flags))
        if not (Path(qrels).exists() and Path(run).exists()):
            subprocess.run([PY, str(HERE / "generate.py"), "--sizes", size, *flags], check=True)
    second = DATA / "run.1000x100.b.txt"
    if not second.exists():  # another system: the same rankings, each score moved by a seeded draw
        draw = random.Random(7)
        with open(paths("1000x100")[1]) as fh, open(second, "w") as out:
            for line in fh:
                q, q0, doc, rank, score, _ = line.split()
                out.write(f"{q} {q0} {doc} {rank} {float(score) + draw.gauss(0, 2.0):.4f} b\n")
    env = own_env()
    for text in (False, True):
        for path in paths("7000x1000", text):
            if not Path(parquet(path)).exists():
                subprocess.run(rf("convert", path, parquet(path), "--quiet"), check=True, env=env)


def own_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This checkout's ``src/`` first on the path, as ``bench/run.py`` runs rankflavor."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE.parent / "src"), env.get("PYTHONPATH", "")) if p)
    env.update(extra or {})
    return env


# ---------------------------------------------------------------------------------------------
# Measuring


def sample(cmd: list[str], env: dict[str, str], figure: Figure, timeout: float) -> dict[str, float]:
    wall, peak_kb, out = spawn(cmd, timeout, env, figure.ok)
    got = {"wall": wall, "peak_mib": peak_kb / 1024}
    if figure.metrics != ("wall",):
        report = json.loads(out.strip().splitlines()[-1])
        got.update({m: float(report[m]) for m in figure.metrics})
    return got


def measure(figure: Figure, pairs: int, timeout: float) -> None:
    a_env, b_env = own_env(figure.a_env), own_env()
    sample(figure.a, a_env, figure, timeout)  # warm-up: the file cache, the .pyc files
    sample(figure.b, b_env, figure, timeout)
    for k in range(pairs):
        if k % 2 == 0:
            a = sample(figure.a, a_env, figure, timeout)
            b = sample(figure.b, b_env, figure, timeout)
        else:
            b = sample(figure.b, b_env, figure, timeout)
            a = sample(figure.a, a_env, figure, timeout)
        figure.samples.append((a, b))
        print(f"# {figure.key} pair {k + 1}: A {a}  B {b}", flush=True)


def spread_of(values: list[float], digits: int = 2, unit: str = "") -> str:
    return f"{statistics.median(values):.{digits}f}{unit} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def verdict(what: str, bound: float, ratios: list[float]) -> str:
    """Whether the median ratio is within issue 33's bound (and whether every pair was)."""
    median = statistics.median(ratios)
    held = "met" if median <= bound else "**not met**"
    if median <= bound < max(ratios):
        held += " (not in every pair)"
    return f"{what} at most {bound:g}x: {held}"


def rows(figure: Figure) -> list[str]:
    out = []
    for n, metric in enumerate(figure.metrics):
        a = [s[0][metric] for s in figure.samples]
        ratios = [s[0][metric] / s[1][metric] for s in figure.samples]
        seconds = spread_of(a, 3 if min(a) < 0.1 else 2)
        named = "" if metric == "wall" else f" [{metric.replace('_', ' ')}]"
        targets = []
        bound = figure.targets.get(metric, figure.targets.get("time") if n == 0 else None)
        if bound is not None:
            targets.append(verdict("time", bound, ratios))
        memory = ""
        if figure.memory:
            peaks = [s[0]["peak_mib"] / s[1]["peak_mib"] for s in figure.samples]
            memory = spread_of(peaks, 2, "x")
            memory += f"; A {statistics.median(s[0]['peak_mib'] for s in figure.samples):.0f} MiB"
            if "memory" in figure.targets:
                targets.append(verdict("memory", figure.targets["memory"], peaks))
        out.append(f"| `{figure.key}` | {figure.what}{named} | {seconds} | {spread_of(ratios, 2, 'x')} | {memory} | "
                   f"{'; '.join(targets)} |")
    return out


def table(done: list[Figure], started: str, load: tuple[str, str], pairs: int) -> str:
    versions = _versions()
    lines = [
        f"Measured {started} on {os.cpu_count()} CPUs ({_cpu()}), Python {platform.python_version()}, "
        + ", ".join(f"{k} {v}" for k, v in versions.items() if k != "python")
        + f"; load average before {load[0]}, after {load[1]}. Each row: {pairs} interleaved pairs of whole "
        "processes after one warm-up each; median (min-max). Rerun: `python3 bench/readme.py`.",
        "",
        "| figure | A / B | A seconds | A / B time | A / B peak memory | issue 33's target (median) |",
        "|---|---|---:|---:|---:|---|",
    ]
    for figure in done:
        lines.extend(rows(figure))
    return "\n".join(lines) + "\n"


def replace_block(path: Path, block: str, heading: str | None = None) -> None:
    text = path.read_text()
    wrapped = f"{BEGIN}\n{block}{END}"
    if BEGIN in text:
        text = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: wrapped, text, flags=re.S)
    elif heading is not None:
        text = text.rstrip("\n") + f"\n\n{heading}\n\n{wrapped}\n"
    else:
        raise SystemExit(f"{path} has no {BEGIN} ... {END} block to replace")
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5, help="measured pairs per figure (after one warm-up each)")
    parser.add_argument("--big", action="store_true", help="also the 20M-line figure (generates 20000x1000)")
    parser.add_argument("--only", nargs="+", metavar="KEY", help="only these figures (README is not written)")
    parser.add_argument("--write", action="store_true", help="put the table into README.md and bench/RESULTS.md")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per process")
    args = parser.parse_args(argv)
    chosen = [f for f in figures() if (args.big or not f.big) and (not args.only or f.key in args.only)]
    if args.only and len(chosen) != len(args.only):
        known = ", ".join(f.key for f in figures())
        raise SystemExit(f"--only: unknown figure among {args.only}; figures: {known}")
    make_data(args.big)
    _precompile(str(HERE.parent / "src"))
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    before = _load()
    print(f"# {started}; load average before: {before}", flush=True)
    done = []
    for figure in chosen:
        try:
            measure(figure, args.pairs, args.timeout)
        except (RuntimeError, TimeoutError) as exc:  # a tool not installed here: say so, go on
            print(f"# {figure.key}: skipped: {exc}", flush=True)
            continue
        done.append(figure)
    block = table(done, started, (before, _load()), args.pairs)
    print()
    print(block)
    out = HERE / "out" / "readme.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(block)
    if args.write and not args.only:
        replace_block(HERE.parent / "README.md", block)
        replace_block(HERE / "RESULTS.md", block, "## README's figures, as `bench/readme.py` measured them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
