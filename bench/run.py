"""Benchmark harness: rankflavor and its peers on the same files, each run as its own process.

Every measurement is one fresh process doing the whole job, from the files on disk to the mean
(reading included, interpreter start-up included), the way a user meets each tool. The parent
times it (wall clock) and takes the child's peak resident memory from ``os.wait4``
(``ru_maxrss``). Tools run round-robin, one after another (never concurrently), ``--repeat``
times after one unmeasured warm-up round, and the median is reported. The child also reports the
time it spent inside the job (after imports), and the value it computed, so a table row that
disagrees with the others shows up.

Tools (each skipped, saying why, when not installed):

* ``rankflavor``   - ``rankflavor.evaluate`` with trec_eval's flavor (the preset).
* ``rankflavor_chunked`` - the same, streaming the run in chunks of 2M rows (``chunk_rows``):
  memory bounded by the chunk, not the run. Not in the default ``--tools``.
* ``pytrec_eval``  - pytrec-eval-terrier: trec_eval's own C code behind Python dicts.
* ``ir_measures``  - ``ir_measures.calc_aggregate`` on its TREC readers.
* ``ranx``         - ``ranx.Qrels/Run.from_file`` + ``ranx.evaluate`` (numba).
* ``trec_eval``    - a trec_eval binary given with ``--trec-eval PATH``.
* ``parse_floor``  - the fastest columnar read of the run file alone (``pyarrow.csv`` into
  string and float columns): no tool can evaluate faster than it can read.
* ``read_floor``   - the same read of the run and of the qrels file: what an evaluation must
  read. Not in the default ``--tools``.
* ``parquet_floor`` - ``pyarrow.parquet`` reading a Parquet qrels and run (``--qrels``, ``--run``:
  Parquet files), query ids as dictionaries: what an evaluation of the Parquet pair must read.
  Not in the default ``--tools``.
* ``spark``        - rankflavor's Spark engine on a ``local[2]`` session (JVM start-up is in the
  wall time; the in-process time excludes it).
* ``spread``       - ``rankflavor.spread`` of NDCG@10 over a 24-flavor grid (gain x discount x
  ideal x ties; ``--case ndcg10`` only).
* ``rankflavor_cli`` - the command line, ``python -m rankflavor eval QRELS RUN -m ndcg_cut.10
  --preset trec_eval --format json``. Not in the default ``--tools``.

Cases: ``ndcg10`` (mean NDCG@10, trec_eval's ``ndcg_cut.10``), ``ten`` (ndcg, ndcg_cut.10,
map, P.10, recall.100, recall.1000, recip_rank, Rprec, bpref, success.10 in one call) and
``dicts``, the small inputs pytrec_eval users have (``--size 1000x100`` by default): warm, in
one process, ``rankflavor.evaluate`` on pytrec_eval-style dicts against
``pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)`` on the same prebuilt
dicts (``--inner-repeat`` calls each after a first one, median reported), and, as processes, the
``rankflavor_cli`` on the files against pytrec_eval from the files (the ``ndcg10`` case of
``pytrec_eval``); one table puts each pair and its ratio side by side.

``--shuffled-ties`` reads ``run.SIZE[.text].shuffled.txt``: the same run with the rows of equal
score of each query in random order (``generate.py --shuffle-ties``).

Usage::

    python3 bench/generate.py --sizes 7000x1000
    python3 bench/run.py --size 7000x1000 --repeat 5
    python3 bench/run.py --size 7000x1000 --case ten --tools rankflavor pytrec_eval ranx ir_measures
    python3 bench/run.py --size 50000x1000 --repeat 1 --tools parse_floor rankflavor --timeout 1800
    python3 bench/run.py --case dicts --repeat 5
    python3 bench/run.py --size 7000x1000 --text-docnos --shuffled-ties --tools parse_floor rankflavor pytrec_eval
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# The children are bench/child.py's: a lean script, so a child's time holds its tool, not this harness.
from child import CHUNK_ROWS, DICT_TOOLS, OWN_TOOLS, SPREAD_GRID, TEN, TOOLS, child_report  # noqa: E402,F401

#: Tools a plain run leaves out unless named in ``--tools``.
NOT_DEFAULT = ("read_floor", "parquet_floor", "rankflavor_chunked", "rankflavor_cli", "rankflavor_baseline")
CASES = ("ndcg10", "ten", "dicts")
FILE_PAIR = ("rankflavor_cli", "pytrec_eval")
#: The size ``--case dicts`` reads unless ``--size`` is given.
DICTS_SIZE = "1000x100"

# ---------------------------------------------------------------------------------------------
# Parent: spawn, time, wait4, summarise.


@dataclass
class Sample:
    wall: float
    peak_rss_kb: int
    report: dict[str, Any]


@dataclass
class Row:
    tool: str
    case: str
    samples: list[Sample] = field(default_factory=list)
    skipped: str | None = None

    @property
    def median_wall(self) -> float:
        return statistics.median(s.wall for s in self.samples)

    @property
    def peak_rss_mb(self) -> float:
        return max(s.peak_rss_kb + (s.report.get("jvm_peak_rss_kb") or 0) for s in self.samples) / 1024


def _available(tool: str, trec_eval: str | None, baseline: str | None = None) -> str | None:
    """None when the tool can run here, else why not."""
    modules = {"pytrec_eval": "pytrec_eval", "ir_measures": "ir_measures", "ranx": "ranx", "spark": "pyspark"}
    if tool == "trec_eval":
        return None if trec_eval and os.access(trec_eval, os.X_OK) else "no --trec-eval PATH given"
    if tool == "rankflavor_baseline":
        return None if baseline and (Path(baseline) / "rankflavor").is_dir() else "no --baseline SRC (a checkout's src/) given"
    if tool == "spread":
        import importlib.util

        return None if importlib.util.find_spec("rankflavor.spread") else "rankflavor.spread is not installed"
    if tool in modules:
        import importlib.util

        if importlib.util.find_spec(modules[tool]) is None:
            return f"python module {modules[tool]} is not installed"
    return None


def _command(tool: str, case: str, qrels: str, run: str, trec_eval: str | None, inner_repeat: int = 30) -> list[str]:
    names = ["ndcg_cut.10"] if case == "ndcg10" else TEN["trec_eval"]
    if tool == "trec_eval":
        assert trec_eval is not None
        return [trec_eval, *[x for n in names for x in ("-m", n)], qrels, run]
    if tool == "rankflavor_cli":
        # JSON: the value in full (the default table rounds it); what a script would ask for.
        return [sys.executable, "-m", "rankflavor", "eval", qrels, run, "--preset", "trec_eval", "--format", "json",
                *[x for n in names for x in ("-m", n)]]
    return [sys.executable, str(HERE / "child.py"), tool, "--case", case, "--qrels", qrels, "--run", run,
            "--inner-repeat", str(inner_repeat)]


def _environment(tool: str, baseline: str | None, default_pages: bool) -> dict[str, str]:
    """The child's environment: rankflavor's tools import this checkout's ``src/`` (the baseline
    tool ``--baseline``'s), so one run compares two trees side by side."""
    env = dict(os.environ)
    if tool in OWN_TOOLS:
        src = baseline if tool == "rankflavor_baseline" else str(HERE.parent / "src")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(src), env.get("PYTHONPATH", "")) if p)
        if default_pages:
            env["BENCH_NUMPY_DEFAULT_PAGES"] = "1"
            env.pop("NUMPY_MADVISE_HUGEPAGE", None)
    return env


def spawn(cmd: list[str], timeout: float, env: dict[str, str] | None = None,
          ok: tuple[int, ...] = (0,)) -> tuple[float, int, str]:
    """Run ``cmd`` as one process: its wall seconds (start to reaped), its peak resident KiB
    (``ru_maxrss`` from ``os.wait4``) and its standard output. Raises RuntimeError when it
    exits with a code not in ``ok``, TimeoutError past ``timeout`` seconds."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=errors, stdin=subprocess.DEVNULL, env=env)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                raise TimeoutError(f"{' '.join(cmd[:4])} exceeded --timeout {timeout:g} s")
            time.sleep(0.005)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in ok:
            errors.seek(0)
            err = errors.read().decode(errors="replace").strip()
            last = err.splitlines()[-1] if err else ""
            raise RuntimeError(f"{' '.join(cmd[:4])} exited {proc.returncode}: {last[-300:]}")
        out.seek(0)
        return wall, usage.ru_maxrss, out.read().decode(errors="replace")


def _measure(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> Sample:
    wall, peak_kb, text = spawn(cmd, timeout, env)
    if cmd[:3] == [sys.executable, "-m", "rankflavor"]:  # the command line's JSON
        measures = json.loads(text)["measures"]
        report = {"value": next(float(m["value"]) for m in measures if m["name"] == "ndcg_cut_10")}
    elif cmd[0] == sys.executable:
        report = json.loads(text.strip().splitlines()[-1])
    else:  # trec_eval: "ndcg_cut_10   all   0.1234"
        report = {"value": float(next(ln.split()[2] for ln in text.splitlines() if ln.startswith("ndcg_cut_10 ")))}
    return Sample(wall, peak_kb, report)


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for dist in ("rankflavor", "pytrec-eval-terrier", "ir-measures", "ranx", "pyspark", "numpy", "pyarrow"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _table(rows: list[Row], floor: Row | None, reference: Row | None) -> str:
    head = (
        "| tool | case | median wall s | min s | in-process s | peak RSS MB | time / rankflavor | time / parse floor | value |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    lines = [head]
    for row in rows:
        if row.skipped:
            lines.append(f"| {row.tool} | {row.case} | skipped: {row.skipped} | | | | | | |")
            continue
        wall = row.median_wall
        inner = statistics.median(s.report.get("inner_seconds", float("nan")) for s in row.samples)
        vs_ref = f"{wall / reference.median_wall:.2f}x" if reference and reference.samples and row is not reference else ""
        vs_floor = f"{wall / floor.median_wall:.2f}" if floor and floor.samples else ""
        value = row.samples[-1].report.get("value")
        shown = f"{value:.6f}" if isinstance(value, float) and row.tool not in ("parse_floor", "read_floor") else f"{value:.0f} rows"
        lines.append(
            f"| {row.tool} | {row.case} | {wall:.3f} | {min(s.wall for s in row.samples):.3f} | {inner:.3f} | "
            f"{row.peak_rss_mb:.0f} | {vs_ref} | {vs_floor} | {shown} |"
        )
    return "\n".join(lines)


def _dicts_table(rows: list[Row]) -> str:
    """``--case dicts``: each rankflavor figure beside pytrec_eval's, and their ratio."""

    def find(tool: str, case: str) -> Row | None:
        return next((r for r in rows if r.tool == tool and r.case == case and r.samples), None)

    def median(row: Row | None, key: str) -> float | None:
        return None if row is None else statistics.median(s.report[key] for s in row.samples)

    ours, theirs = find("rankflavor", "dicts"), find("pytrec_eval", "dicts")
    cli, files = find("rankflavor_cli", "ndcg10"), find("pytrec_eval", "ndcg10")
    pairs = [
        ("warm call on prebuilt dicts, ms (median of medians)", median(ours, "inner_seconds"), median(theirs, "inner_seconds"), 1e3),
        ("first call in a fresh process, imports included, ms", median(ours, "first_call_seconds"),
         median(theirs, "first_call_seconds"), 1e3),
        ("from the files as a process: CLI vs pytrec_eval, s (median wall)", cli.median_wall if cli else None,
         files.median_wall if files else None, 1.0),
    ]
    lines = ["| comparison | rankflavor | pytrec_eval | rankflavor / pytrec_eval |", "|---|---:|---:|---:|"]
    for label, a, b, scale in pairs:
        shown = [f"{x * scale:.3f}" if scale == 1.0 and x is not None else f"{x * scale:.1f}" if x is not None else "n/a"
                 for x in (a, b)]
        ratio = f"{a / b:.2f}x" if a is not None and b else ""
        lines.append(f"| {label} | {shown[0]} | {shown[1]} | {ratio} |")
    values = {f"{r.tool}/{r.case}": r.samples[-1].report.get("value") for r in (ours, theirs, cli, files) if r is not None}
    lines.append("")
    lines.append("values: " + ", ".join(f"{k} {v:.6f}" for k, v in values.items() if isinstance(v, float)))
    return "\n".join(lines)


def _precompile(*sources: str) -> None:
    """Byte-compile rankflavor's modules as ``pip install`` does for every installed package.

    An editable checkout has no ``.pyc`` files, and with ``PYTHONDONTWRITEBYTECODE`` set (as on
    the development machine) every timed process would compile each module from source again,
    about 60 ms that no installed peer pays.
    """
    import compileall

    for src in sources:
        compileall.compile_dir(str(Path(src) / "rankflavor"), quiet=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark rankflavor against its peers (see the module docstring).")
    parser.add_argument("--size", help=f"QUERIESxDOCS of bench/data/{{qrels,run}}.SIZE.txt (7000x1000; {DICTS_SIZE} for "
                                        "--case dicts alone)")
    parser.add_argument("--text-docnos", action="store_true", help="use the text-docno files (*.SIZE.text.txt)")
    parser.add_argument("--shuffled-ties", action="store_true",
                        help="use the run with tied scores in random order (run.SIZE[.text].shuffled.txt)")
    parser.add_argument("--qrels", help="qrels file (overrides --size)")
    parser.add_argument("--run", help="run file (overrides --size)")
    parser.add_argument("--tools", nargs="+", default=[t for t in TOOLS if t not in NOT_DEFAULT], choices=TOOLS)
    parser.add_argument("--case", nargs="+", default=["ndcg10"], choices=CASES)
    parser.add_argument("--repeat", type=int, default=5, help="measured runs per tool (median reported)")
    parser.add_argument("--no-warmup", action="store_true", help="skip the unmeasured first round")
    parser.add_argument("--trec-eval", dest="trec_eval", help="path of a trec_eval binary (optional)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run before a tool is dropped")
    parser.add_argument("--inner-repeat", type=int, default=30, help="--case dicts: warm calls per process")
    parser.add_argument("--json", type=Path, help="also write every sample here")
    parser.add_argument("--baseline", help="src/ folder of another rankflavor checkout: adds the tool rankflavor_baseline "
                                           "(that tree, same job), measured in the same rounds")
    parser.add_argument("--numpy-default-pages", action="store_true",
                        help="rankflavor's tools keep NumPy's default huge-page advice, as a library caller does "
                             "(by default they run as the rankflavor command does, with NUMPY_MADVISE_HUGEPAGE=0)")
    parser.add_argument("--child", choices=TOOLS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.baseline and "rankflavor_baseline" not in args.tools:
        args.tools = [*args.tools, "rankflavor_baseline"]
    size = args.size or (DICTS_SIZE if args.case == ["dicts"] else "7000x1000")
    name = size + (".text" if args.text_docnos else "")
    qrels = args.qrels or str(HERE / "data" / f"qrels.{name}.txt")
    run = args.run or str(HERE / "data" / f"run.{name}{'.shuffled' if args.shuffled_ties else ''}.txt")
    if args.child:
        print(json.dumps(child_report(args.child, args.case[0], qrels, run, args.inner_repeat)))
        return 0
    for path in (qrels, run):
        if not os.path.exists(path):
            hint = (" --text-docnos" if args.text_docnos else "") + (" --shuffle-ties" if args.shuffled_ties else "")
            raise SystemExit(f"{path} not found: run python3 bench/generate.py --sizes {size}{hint} first")

    _precompile(str(HERE.parent / "src"), *([args.baseline] if args.baseline else []))
    rows: list[Row] = []

    def add(tool: str, case: str) -> None:
        if not any(r.tool == tool and r.case == case for r in rows):
            rows.append(Row(tool, case, skipped=_available(tool, args.trec_eval, args.baseline)))

    for case in args.case:
        if case == "dicts":  # its own tools: the dict pair, and the process pair on the files
            for tool in DICT_TOOLS:
                add(tool, "dicts")
            for tool in FILE_PAIR:
                add(tool, "ndcg10")
            continue
        for tool in args.tools:
            if tool == "spread" and case != "ndcg10":
                continue
            add(tool, case)
    print(f"# {Path(run).name} ({os.path.getsize(run) / 1e6:.0f} MB), {Path(qrels).name}; {os.cpu_count()} CPUs: {_cpu()}")
    print(f"# versions: {_versions()}")
    print(f"# load average before: {_load()}", flush=True)
    rounds = args.repeat + (0 if args.no_warmup else 1)
    for r in range(rounds):
        for row in rows:
            if row.skipped:
                continue
            try:
                sample = _measure(_command(row.tool, row.case, qrels, run, args.trec_eval, args.inner_repeat), args.timeout,
                                  _environment(row.tool, args.baseline, args.numpy_default_pages))
            except (TimeoutError, RuntimeError) as exc:
                row.skipped = str(exc)
                print(f"# {row.tool}/{row.case}: {exc}", flush=True)
                continue
            if r > 0 or args.no_warmup:
                row.samples.append(sample)
            print(
                f"# round {r}{' (warm-up)' if r == 0 and not args.no_warmup else ''} {row.tool}/{row.case}: "
                f"{sample.wall:.3f} s, {sample.peak_rss_kb / 1024:.0f} MB, {sample.report}",
                flush=True,
            )
    print(f"# load average after: {_load()}")
    for case in args.case:
        print()
        if case == "dicts":
            print(_dicts_table(rows))
            continue
        case_rows = [r for r in rows if r.case == case]
        floor = next((r for r in rows if r.tool == "parse_floor" and r.case == case), None)
        reference = next((r for r in case_rows if r.tool == "rankflavor"), None)
        print(_table(case_rows, floor, reference))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        dump = [
            {"tool": r.tool, "case": r.case, "skipped": r.skipped,
             "samples": [{"wall": s.wall, "peak_rss_kb": s.peak_rss_kb, **s.report} for s in r.samples]}
            for r in rows
        ]  # fmt: skip
        args.json.write_text(json.dumps({"qrels": qrels, "run": run, "versions": _versions(), "rows": dump}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
