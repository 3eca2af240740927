"""The benchmark's children: one tool's job in a fresh interpreter, one JSON line on stdout.

    python3 bench/child.py TOOL --case ndcg10 --qrels QRELS --run RUN [--inner-repeat 30]

``bench/run.py`` and ``bench/readme.py`` time these as whole processes, so this script imports
only what every child needs (json, os, sys, time) and each tool imports its own library: a
child's time is its tool's, not the harness's (bench/run.py's imports, argparse and statistics
among them, cost about 30 ms, a tenth of pytrec_eval's time on the small files of ``cli-small``).
The tools are described in bench/run.py's docstring.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

TOOLS = ("parse_floor", "read_floor", "parquet_floor", "rankflavor", "rankflavor_chunked", "pytrec_eval", "ir_measures",
         "ranx", "trec_eval", "spark", "spread", "rankflavor_cli", "rankflavor_baseline")
#: rankflavor's own tools: they run this checkout's ``src/`` (``rankflavor_baseline``: ``--baseline``'s).
OWN_TOOLS = ("rankflavor", "rankflavor_chunked", "spread", "rankflavor_cli", "rankflavor_baseline")
#: ``--case dicts``: in-process tools on prebuilt dicts, and the process pair on the files.
DICT_TOOLS = ("rankflavor", "pytrec_eval")

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


def child_report(tool: str, case: str, qrels: str, run: str, inner_repeat: int = 30) -> dict[str, Any]:
    if case == "dicts":
        return _warm_dicts(tool, qrels, run, inner_repeat)
    started = time.perf_counter()
    if tool in OWN_TOOLS and not os.environ.get("BENCH_NUMPY_DEFAULT_PAGES"):
        # As the rankflavor command does (rankflavor/base/pages.py); --numpy-default-pages measures a
        # library caller who leaves NumPy's default.
        os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    value: float
    extra: dict[str, Any] = {}
    if tool in ("parse_floor", "read_floor"):
        import pyarrow as pa
        from pyarrow import csv

        def read(path: str, names: list[str], kept: dict[str, Any]) -> Any:
            return csv.read_csv(
                path,
                read_options=csv.ReadOptions(column_names=names, block_size=1 << 24),
                parse_options=csv.ParseOptions(delimiter=" ", quote_char=False),
                convert_options=csv.ConvertOptions(include_columns=list(kept), column_types=kept),
            )

        table = read(run, ["q", "q0", "doc", "rank", "score", "tag"], {"q": pa.string(), "doc": pa.string(), "score": pa.float64()})
        value = float(table.num_rows)
        if tool == "read_floor":  # both inputs, as an evaluation must read them
            judged = read(qrels, ["q", "iter", "doc", "grade"], {"q": pa.string(), "doc": pa.string(), "grade": pa.float64()})
            extra["qrels_rows"] = judged.num_rows
    elif tool == "parquet_floor":
        import pyarrow.parquet as pq

        tables = [pq.ParquetFile(path, read_dictionary=["query_id"]).read() for path in (qrels, run)]
        value = float(tables[1].num_rows)
        extra["qrels_rows"] = tables[0].num_rows
    elif tool in ("rankflavor", "rankflavor_baseline"):
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
        from rankflavor.analysis.spread.api import spread

        result = spread(qrels, [run], "ndcg@10", grid=SPREAD_GRID, presets=False)
        extra["flavors"] = len(result.means[0]) if hasattr(result, "means") else None
        value = float(_mean(float(v) for v in result.means[0]))
    elif tool == "pytrec_eval":
        import pytrec_eval

        with open(qrels) as fh:
            judgments = pytrec_eval.parse_qrel(fh)
        with open(run) as fh:
            ranking = pytrec_eval.parse_run(fh)
        per_query = pytrec_eval.RelevanceEvaluator(judgments, {"ndcg_cut.10"} if case == "ndcg10" else PYTREC_TEN).evaluate(
            ranking
        )
        value = _mean(v["ndcg_cut_10"] for v in per_query.values())
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


def _trec_dicts(path: str, value_field: int, kind: type) -> dict[str, dict[str, Any]]:
    """A TREC file as pytrec_eval's dicts (``{query: {doc: value}}``), read with plain Python."""
    out: dict[str, dict[str, Any]] = {}
    with open(path) as fh:
        for line in fh:
            fields = line.split()
            out.setdefault(fields[0], {})[fields[2]] = kind(fields[value_field])
    return out


def _warm_dicts(tool: str, qrels: str, run: str, inner_repeat: int) -> dict[str, Any]:
    """Mean NDCG@10 on prebuilt pytrec_eval-style dicts, called once (imports included) and then
    ``inner_repeat`` times more in the same process."""
    judgments, ranking = _trec_dicts(qrels, 3, int), _trec_dicts(run, 4, float)
    started = time.perf_counter()
    if tool == "rankflavor":
        import rankflavor

        def call() -> float:
            return rankflavor.evaluate(judgments, ranking, ["ndcg_cut.10"], preset="trec_eval")["ndcg_cut_10"].mean

    elif tool == "pytrec_eval":
        import pytrec_eval

        def call() -> float:
            per_query = pytrec_eval.RelevanceEvaluator(judgments, {"ndcg_cut.10"}).evaluate(ranking)
            return _mean(v["ndcg_cut_10"] for v in per_query.values())

    else:
        raise SystemExit(f"--case dicts: tool {tool!r} has no dict form; use one of {', '.join(DICT_TOOLS)}")
    value = call()
    first = time.perf_counter() - started
    warm = []
    for _ in range(inner_repeat):
        began = time.perf_counter()
        call()
        warm.append(time.perf_counter() - began)
    return {"value": value, "first_call_seconds": first, "inner_seconds": _median(warm),
            "warm_min_seconds": min(warm), "warm_calls": inner_repeat}


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


def _mean(values: Any) -> float:
    items = [float(v) for v in values]
    return sum(items) / len(items)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def main(argv: list[str]) -> int:
    """``TOOL --case CASE --qrels QRELS --run RUN [--inner-repeat N]`` (what bench/run.py passes)."""
    if not argv or argv[0] not in TOOLS or len(argv) % 2 != 1:
        raise SystemExit(f"usage: child.py TOOL --case CASE --qrels QRELS --run RUN [--inner-repeat N]; tools: {', '.join(TOOLS)}")
    options = dict(zip(argv[1::2], argv[2::2], strict=True))
    unknown = set(options) - {"--case", "--qrels", "--run", "--inner-repeat"}
    if unknown or not {"--qrels", "--run"} <= set(options):
        raise SystemExit(f"child.py {argv[0]}: give --qrels and --run (and --case, --inner-repeat); not {sorted(unknown)}")
    report = child_report(argv[0], options.get("--case", "ndcg10"), options["--qrels"], options["--run"],
                          int(options.get("--inner-repeat", "30")))
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
