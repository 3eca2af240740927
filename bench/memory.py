"""Where the memory goes: resident memory through each stage of one evaluation (issue 33).

    python3 bench/memory.py                       # 7000x1000, integer docnos, and text + random ties
    python3 bench/memory.py --size 20000x1000     # (python3 bench/generate.py --sizes 20000x1000 first)

One process per input pair, as a user runs it: a thread reads ``VmRSS`` from ``/proc/self/status``
every 2 ms while the main thread goes through the stages the engine goes through, each on the
public seams (``rankflavor.io``'s readers, ``rankflavor.engine.plan.Evaluation``): imports, reading the
qrels and the run, alignment, the score sort (ranking) and the NDCG@10 kernel with its mean. Per
stage: its seconds, the resident memory at its end, the peak inside it, and what the stage holds
on to (end minus start). The floor beside it is ``bench/run.py``'s ``read_floor`` (pyarrow's CSV
read of both files) measured the same way, so "peak / read" is the ratio README's ``eval-*``
memory column states. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def rss_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Sampler:
    """Resident memory every ``every`` seconds on a thread of its own; ``mark`` closes a stage."""

    def __init__(self, every: float = 0.002) -> None:
        self.every = every
        self.peak = rss_mib()
        self.stages: list[dict[str, float | str]] = []
        self._start_rss = self.peak
        self._start = time.perf_counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.peak = max(self.peak, rss_mib())

    def mark(self, stage: str) -> None:
        now, end = time.perf_counter(), rss_mib()
        self.peak = max(self.peak, end)
        self.stages.append({"stage": stage, "seconds": now - self._start, "end_mib": end, "peak_mib": self.peak,
                            "held_mib": end - self._start_rss})
        self._start, self._start_rss, self.peak = time.perf_counter(), end, end

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def child(kind: str, qrels: str, run: str) -> list[dict[str, float | str]]:
    sampler = Sampler()
    if kind == "read_floor":
        import pyarrow as pa
        from pyarrow import csv

        sampler.mark("import pyarrow")

        def read(path: str, names: list[str], kept: dict[str, pa.DataType]) -> pa.Table:
            return csv.read_csv(path, read_options=csv.ReadOptions(column_names=names, block_size=1 << 24),
                                parse_options=csv.ParseOptions(delimiter=" ", quote_char=False),
                                convert_options=csv.ConvertOptions(include_columns=list(kept), column_types=kept))

        judged = read(qrels, ["q", "i", "doc", "grade"], {"q": pa.string(), "doc": pa.string(), "grade": pa.float64()})
        sampler.mark("read qrels")
        table = read(run, ["q", "q0", "doc", "rank", "score", "tag"], {"q": pa.string(), "doc": pa.string(), "score": pa.float64()})
        sampler.mark("read run")
        assert judged.num_rows and table.num_rows
    else:
        os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")  # as the rankflavor command runs
        from rankflavor.engine.plan import Evaluation
        from rankflavor.io.qrels import read_qrels
        from rankflavor.io.run import read_run
        from rankflavor.presets import resolve_measures

        (measure,), _ = resolve_measures(["ndcg_cut.10"], "trec_eval", {})
        sampler.mark("import rankflavor")
        q = read_qrels(qrels)
        sampler.mark("read qrels")
        r = read_run(run)
        sampler.mark("read run")
        plan = Evaluation(q, r)
        plan.aligned(str(measure.flavor.duplicates))
        sampler.mark("align")
        plan.ranked(measure)
        sampler.mark("rank (score sort, ties)")
        result = plan.evaluate(measure)
        sampler.mark("NDCG@10 kernel and mean")
        assert 0 < result.summary < 1
        del plan, r, q
        sampler.mark("results kept, inputs let go")
    sampler.stop()
    return sampler.stages


def table(name: str, stages: list[dict[str, float | str]], floor_peak: float) -> str:
    lines = [f"**{name}**", "", "| stage | seconds | RSS at end MiB | peak in stage MiB | held by the stage MiB |",
             "|---|---:|---:|---:|---:|"]
    for s in stages:
        lines.append(f"| {s['stage']} | {s['seconds']:.3f} | {s['end_mib']:.0f} | {s['peak_mib']:.0f} | {s['held_mib']:+.0f} |")
    peak = max(float(s["peak_mib"]) for s in stages)
    lines += ["", f"peak {peak:.0f} MiB; the read floor's peak {floor_peak:.0f} MiB: {peak / floor_peak:.2f}x", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="7000x1000")
    parser.add_argument("--child", nargs=3, metavar=("KIND", "QRELS", "RUN"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE.parent / "src"), env.get("PYTHONPATH", "")) if p)
    data = HERE / "data"
    for label, qrels, run in ((f"{args.size}, integer docnos in rank order", data / f"qrels.{args.size}.txt",
                               data / f"run.{args.size}.txt"),
                              (f"{args.size}, text docnos, tied scores in random order", data / f"qrels.{args.size}.text.txt",
                               data / f"run.{args.size}.text.shuffled.txt")):
        if not run.exists():
            print(f"# {run} not found: python3 bench/generate.py --sizes {args.size} [--text-docnos --shuffle-ties]")
            continue
        got = {}
        for kind in ("read_floor", "rankflavor"):
            out = subprocess.run([sys.executable, __file__, "--child", kind, str(qrels), str(run)], env=env, check=True,
                                 capture_output=True, text=True).stdout
            got[kind] = json.loads(out.strip().splitlines()[-1])
        floor = max(float(s["peak_mib"]) for s in got["read_floor"])
        print(table(label, got["rankflavor"], floor))
    return 0


if __name__ == "__main__":
    sys.exit(main())
