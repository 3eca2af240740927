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
* ``spark``        - rankflavor's Spark engine on a ``local[2]`` session (JVM start-up is in the
  wall time; the in-process time excludes it).
* ``spread``       - ``rankflavor.spread`` of NDCG@10 over a 24-flavor grid (gain x discount x
  ideal x ties; ``--case ndcg10`` only).

Cases: ``ndcg10`` (mean NDCG@10, trec_eval's ``ndcg_cut.10``) and ``ten`` (ndcg, ndcg_cut.10,
map, P.10, recall.100, recall.1000, recip_rank, Rprec, bpref, success.10 in one call).

Usage::

    python3 bench/generate.py --sizes 7000x1000
    python3 bench/run.py --size 7000x1000 --repeat 5
    python3 bench/run.py --size 7000x1000 --case ten --tools rankflavor pytrec_eval ranx ir_measures
    python3 bench/run.py --size 50000x1000 --repeat 1 --tools parse_floor rankflavor --timeout 1800
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
TOOLS = ("parse_floor", "rankflavor", "rankflavor_chunked", "pytrec_eval", "ir_measures", "ranx", "trec_eval", "spark", "spread")
CASES = ("ndcg10", "ten")

#: The ten measures of ``--case ten``, in each tool's own names.
TEN = {
    "trec_eval": ["ndcg", "ndcg_cut.10", "map", "P.10", "recall.100,1000", "recip_rank", "Rprec", "bpref", "success.10"],
    "ranx": ["ndcg", "ndcg@10", "map", "precision@10", "recall@100", "recall@1000", "mrr", "r-precision", "bpref",
             "hit_rate@10"],
    "ir_measures": ["nDCG", "nDCG@10", "AP", "P@10", "R@100", "R@1000", "RR", "Rprec", "Bpref", "Success@10"],
}  # fmt: skip
#: ``--tools rankflavor_chunked``: the run is streamed in chunks of about this many rows.
CHUNK_ROWS = 2_000_000
#: ``--tools spread``: 2 x 2 x 2 x 3 = 24 flavors of NDCG@10 (rankflavor's default grid also varies
#: ``unjudged``: 48).
SPREAD_GRID = {
    "gain": ("linear", "exp2"),
    "discount": ("log2", "jk(2)"),
    "ideal": ("global", "local"),
    "ties": ("docno_desc", "input_order", "averaged"),
}
#: pytrec_eval takes the trec_eval names, with every cutoff spelled out.
PYTREC_TEN = {"ndcg", "ndcg_cut.10", "map", "P.10", "recall.100", "recall.1000", "recip_rank", "Rprec", "bpref", "success.10"}


# ---------------------------------------------------------------------------------------------
# Children: one function per tool, run in a fresh interpreter; each prints one JSON line.


def _child(tool: str, case: str, qrels: str, run: str) -> dict[str, Any]:
    started = time.perf_counter()
    if tool in ("rankflavor", "rankflavor_chunked", "spread"):  # as the rankflavor command does (rankflavor/pages.py)
        os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    value: float
    extra: dict[str, Any] = {}
    if tool == "parse_floor":
        import pyarrow as pa
        from pyarrow import csv

        names = ["q", "q0", "doc", "rank", "score", "tag"]
        table = csv.read_csv(
            run,
            read_options=csv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False),
            convert_options=csv.ConvertOptions(
                include_columns=["q", "doc", "score"], column_types={"q": pa.string(), "doc": pa.string(), "score": pa.float64()}
            ),
        )
        value = float(table.num_rows)
    elif tool == "rankflavor":
        import rankflavor

        names = ["ndcg_cut.10"] if case == "ndcg10" else TEN["trec_eval"]
        res = rankflavor.evaluate(qrels, run, names, preset="trec_eval")
        value = res["ndcg_cut_10"].mean
        extra["measures"] = len(res)
    elif tool == "rankflavor_chunked":
        import rankflavor

        names = ["ndcg_cut.10"] if case == "ndcg10" else TEN["trec_eval"]
        res = rankflavor.evaluate(qrels, run, names, preset="trec_eval", chunk_rows=CHUNK_ROWS)
        value = res["ndcg_cut_10"].mean
        extra["chunk_rows"] = CHUNK_ROWS
    elif tool == "spark":
        from rankflavor.spark import evaluate_spark, local_session

        spark = local_session()
        begun = time.perf_counter()
        names = ["ndcg_cut.10"] if case == "ndcg10" else TEN["trec_eval"]
        res = evaluate_spark(qrels, run, names, preset="trec_eval", spark=spark)
        value = res["ndcg_cut_10"].mean
        extra["seconds_after_session_start"] = time.perf_counter() - begun
        extra["jvm_peak_rss_kb"] = _jvm_peak_rss_kb(spark)
        spark.stop()
    elif tool == "spread":
        from rankflavor.spread import spread

        result = spread(qrels, [run], "ndcg@10", grid=SPREAD_GRID, presets=False)
        extra["flavors"] = len(result.means[0]) if hasattr(result, "means") else None
        value = float(statistics.fmean(float(v) for v in result.means[0]))
    elif tool == "pytrec_eval":
        import pytrec_eval

        with open(qrels) as fh:
            judgments = pytrec_eval.parse_qrel(fh)
        with open(run) as fh:
            ranking = pytrec_eval.parse_run(fh)
        per_query = pytrec_eval.RelevanceEvaluator(judgments, {"ndcg_cut.10"} if case == "ndcg10" else PYTREC_TEN).evaluate(
            ranking
        )
        value = statistics.fmean(v["ndcg_cut_10"] for v in per_query.values())
    elif tool == "ir_measures":
        import ir_measures

        measures = [ir_measures.parse_measure(m) for m in (["nDCG@10"] if case == "ndcg10" else TEN["ir_measures"])]
        agg = ir_measures.calc_aggregate(measures, ir_measures.read_trec_qrels(qrels), ir_measures.read_trec_run(run))
        value = float(agg[ir_measures.parse_measure("nDCG@10")])
    elif tool == "ranx":
        from ranx import Qrels, Run, evaluate

        ranx_names = ["ndcg@10"] if case == "ndcg10" else TEN["ranx"]
        # make_comparable: ranx refuses runs that miss a qrels query unless told to score it 0.
        scores = evaluate(
            Qrels.from_file(qrels, kind="trec"), Run.from_file(run, kind="trec"), ranx_names, make_comparable=True
        )
        value = float(scores if isinstance(scores, float) else scores["ndcg@10"])
    else:
        raise SystemExit(f"--child: unknown tool {tool!r}; valid tools: {', '.join(TOOLS)}")
    return {"value": value, "inner_seconds": time.perf_counter() - started, **extra}


def _jvm_peak_rss_kb(spark: Any) -> int | None:
    """Peak RSS of the local Spark JVM (a grandchild the parent's wait4 cannot see)."""
    try:
        pid = spark.sparkContext._gateway.proc.pid
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (AttributeError, OSError, ValueError):
        return None
    return None


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


def _available(tool: str, trec_eval: str | None) -> str | None:
    """None when the tool can run here, else why not."""
    modules = {"pytrec_eval": "pytrec_eval", "ir_measures": "ir_measures", "ranx": "ranx", "spark": "pyspark"}
    if tool == "trec_eval":
        return None if trec_eval and os.access(trec_eval, os.X_OK) else "no --trec-eval PATH given"
    if tool == "spread":
        import importlib.util

        return None if importlib.util.find_spec("rankflavor.spread") else "rankflavor.spread is not installed"
    if tool in modules:
        import importlib.util

        if importlib.util.find_spec(modules[tool]) is None:
            return f"python module {modules[tool]} is not installed"
    return None


def _command(tool: str, case: str, qrels: str, run: str, trec_eval: str | None) -> list[str]:
    if tool == "trec_eval":
        assert trec_eval is not None
        names = ["ndcg_cut.10"] if case == "ndcg10" else TEN["trec_eval"]
        return [trec_eval, *[x for n in names for x in ("-m", n)], qrels, run]
    return [sys.executable, str(Path(__file__).resolve()), "--child", tool, "--case", case, "--qrels", qrels, "--run", run]


def _measure(cmd: list[str], timeout: float) -> Sample:
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
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
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.returncode != 0:
            last = err.strip().splitlines()[-1] if err.strip() else ""
            raise RuntimeError(f"{' '.join(cmd[:4])} exited {proc.returncode}: {last[-300:]}")
        out.seek(0)
        text = out.read().decode(errors="replace")
    if cmd[0] == sys.executable:
        report = json.loads(text.strip().splitlines()[-1])
    else:  # trec_eval: "ndcg_cut_10   all   0.1234"
        report = {"value": float(next(ln.split()[2] for ln in text.splitlines() if ln.startswith("ndcg_cut_10 ")))}
    return Sample(wall, usage.ru_maxrss, report)


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
        shown = f"{value:.6f}" if isinstance(value, float) and row.tool != "parse_floor" else f"{value:.0f} rows"
        lines.append(
            f"| {row.tool} | {row.case} | {wall:.3f} | {min(s.wall for s in row.samples):.3f} | {inner:.3f} | "
            f"{row.peak_rss_mb:.0f} | {vs_ref} | {vs_floor} | {shown} |"
        )
    return "\n".join(lines)


def _precompile() -> None:
    """Byte-compile rankflavor's modules as ``pip install`` does for every installed package.

    An editable checkout has no ``.pyc`` files, and with ``PYTHONDONTWRITEBYTECODE`` set (as on
    the development machine) every timed process would compile each module from source again,
    about 60 ms that no installed peer pays.
    """
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("rankflavor")
    for location in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(location, quiet=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark rankflavor against its peers (see the module docstring).")
    parser.add_argument("--size", default="7000x1000", help="QUERIESxDOCS of bench/data/{qrels,run}.SIZE.txt")
    parser.add_argument("--text-docnos", action="store_true", help="use the text-docno files (*.SIZE.text.txt)")
    parser.add_argument("--qrels", help="qrels file (overrides --size)")
    parser.add_argument("--run", help="run file (overrides --size)")
    parser.add_argument("--tools", nargs="+", default=[t for t in TOOLS if t != "rankflavor_chunked"], choices=TOOLS)
    parser.add_argument("--case", nargs="+", default=["ndcg10"], choices=CASES)
    parser.add_argument("--repeat", type=int, default=5, help="measured runs per tool (median reported)")
    parser.add_argument("--no-warmup", action="store_true", help="skip the unmeasured first round")
    parser.add_argument("--trec-eval", dest="trec_eval", help="path of a trec_eval binary (optional)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run before a tool is dropped")
    parser.add_argument("--json", type=Path, help="also write every sample here")
    parser.add_argument("--child", choices=TOOLS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    name = args.size + (".text" if args.text_docnos else "")
    qrels = args.qrels or str(HERE / "data" / f"qrels.{name}.txt")
    run = args.run or str(HERE / "data" / f"run.{name}.txt")
    if args.child:
        print(json.dumps(_child(args.child, args.case[0], qrels, run)))
        return 0
    for path in (qrels, run):
        if not os.path.exists(path):
            hint = " --text-docnos" if args.text_docnos else ""
            raise SystemExit(f"{path} not found: run python3 bench/generate.py --sizes {args.size}{hint} first")

    _precompile()
    rows: list[Row] = []
    for case in args.case:
        for tool in args.tools:
            if tool == "spread" and case != "ndcg10":
                continue
            rows.append(Row(tool, case, skipped=_available(tool, args.trec_eval)))
    print(f"# {Path(run).name} ({os.path.getsize(run) / 1e6:.0f} MB), {Path(qrels).name}; {os.cpu_count()} CPUs: {_cpu()}")
    print(f"# versions: {_versions()}")
    print(f"# load average before: {_load()}", flush=True)
    rounds = args.repeat + (0 if args.no_warmup else 1)
    for r in range(rounds):
        for row in rows:
            if row.skipped:
                continue
            try:
                sample = _measure(_command(row.tool, row.case, qrels, run, args.trec_eval), args.timeout)
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
        case_rows = [r for r in rows if r.case == case]
        floor = next((r for r in rows if r.tool == "parse_floor" and r.case == case), None)
        reference = next((r for r in case_rows if r.tool == "rankflavor"), None)
        print()
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
