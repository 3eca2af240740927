"""What reading a TREC run costs Spark itself, beside rankflavor's Spark read of the same file
(issue 35: "reading that costs about what Spark's own CSV read costs"; the 3x-the-local-engine
target per million lines is set against these floors).

    python3 bench/spark_floor.py                       # the 7M-line run, local[2], 3 rounds
    python3 bench/spark_floor.py --master 'local[1]' --size 1000x1000 --rounds 5

One session; each job runs once unmeasured (the JVM compiles its code on the first run), then
``--rounds`` times in rotating order; medians and ranges in seconds, and per million lines:

* ``text``   - ``spark.read.text`` and a count of the lines: the bytes read and cut into lines;
* ``csv``    - ``spark.read.csv`` with the six fields typed (``sep=" "``, no quoting), the query
  ids counted and the scores summed: Spark's own typed read, no check;
* ``rankflavor`` - ``rankflavor.spark.read.read_systems`` on the judgments and the run: the
  split on blanks, the checks the local reader makes (fields, decimal scores, UTF-8, NUL), the
  counts and the input kept for the evaluation pass (``spark.rankflavor.inputKeep``'s default).

The local engine's whole ``eval`` of the same files is ``bench/spark.py``'s figure (0.19 s per
million lines here): 3x of it is 0.57 s per million lines.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--size", default="7000x1000")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    qrels, run = DATA / f"qrels.{args.size}.txt", DATA / f"run.{args.size}.txt"
    if not run.exists():
        sys.exit(f"{run} is missing: python3 bench/generate.py --sizes {args.size}")
    lines = sum(1 for _ in run.open("rb"))

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from rankflavor.spark.read import read_systems

    spark = (SparkSession.builder.master(args.master).config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "4g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    schema = "q string, q0 string, d string, rank int, v double, tag string"

    def kept(tables: object) -> None:
        q_table, r_tables = tables  # type: ignore[misc]
        for table in (q_table, *r_tables):
            if table.cached is not None:
                table.cached.unpersist()

    jobs: dict[str, Callable[[], object]] = {
        "text": lambda: spark.read.text(str(run)).count(),
        "csv": lambda: spark.read.csv(str(run), sep=" ", schema=schema, quote="").agg(
            F.count("q"), F.sum("v")).collect(),
        "rankflavor": lambda: kept(read_systems(spark, str(qrels), [str(run)])),
    }
    times: dict[str, list[float]] = {name: [] for name in jobs}
    for job in jobs.values():
        job()
    names = list(jobs)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            start = time.perf_counter()
            jobs[name]()
            times[name].append(time.perf_counter() - start)
    spark.stop()
    print(f"{args.master}, {lines:,} run lines ({run.name}), {args.rounds} rounds after one unmeasured run each; "
          "seconds, median (range)\n")
    print("| job | seconds | s per million lines |")
    print("|---|---:|---:|")
    for name, got in times.items():
        median = statistics.median(got)
        print(f"| `{name}` | {median:.2f} ({min(got):.2f}-{max(got):.2f}) | {median / lines * 1e6:.2f} |")


if __name__ == "__main__":
    main()
