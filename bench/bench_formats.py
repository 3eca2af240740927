"""Reading the 7M-line run as Parquet and as JSON Lines, against the TREC text read, side by side.

The same run (bench/generate.py's ``run.7000x1000.txt``: 6,916,609 lines) is written once as
Parquet (``query_id`` dictionary-encoded, ``doc_id`` text, ``score`` float64; pyarrow's default
Snappy compression) and as JSONL (``{"query_id": ..., "doc_id": ..., "score": ...}`` per line),
next to it in ``bench/data/``. Each measurement is a fresh process that imports rankflavor and
reads the file into the run table the engine reads (``rankflavor.io.run.read_run``), so it
includes interpreter start-up and imports, as a user's command would; the three formats run
round-robin, after one unmeasured warm-up round, and the median of ``--repeat`` rounds is
reported with the ratio to the TREC read. A last check reads all three in one process and
asserts they hold the same rows.

Usage::

    python3 bench/bench_formats.py                   # 7000x1000, 5 rounds
    python3 bench/bench_formats.py --size 1000x100 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def _data(size: str, out: Path) -> Path:
    sys.path.insert(0, str(HERE))
    from generate import ensure  # bench/generate.py

    return ensure(size, out)[1]


def _copies(trec: Path) -> dict[str, Path]:
    """The run as Parquet and JSONL beside the TREC file (written once)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    sys.path.insert(0, str(SRC))
    from rankflavor.io.run import read_run

    parquet = trec.with_suffix(".parquet")
    jsonl = trec.with_suffix(".jsonl")
    if parquet.exists() and jsonl.exists():
        return {"trec": trec, "parquet": parquet, "jsonl": jsonl}
    print(f"writing {parquet.name} and {jsonl.name} ...", flush=True)
    run = read_run(trec)
    query = run.query.combine_chunks() if isinstance(run.query, pa.ChunkedArray) else run.query
    doc = run.doc.combine_chunks() if isinstance(run.doc, pa.ChunkedArray) else run.doc
    pq.write_table(pa.table({"query_id": query, "doc_id": doc, "score": pa.array(run.score)}), parquet)
    queries = query.dictionary_decode().to_pylist() if pa.types.is_dictionary(query.type) else query.to_pylist()
    docs = doc.to_pylist()
    scores = np.asarray(run.score).tolist()
    with open(jsonl, "w") as fh:
        step = 500_000
        for at in range(0, len(scores), step):
            fh.write("".join(json.dumps({"query_id": q, "doc_id": d, "score": s}) + "\n"
                             for q, d, s in zip(queries[at:at + step], docs[at:at + step], scores[at:at + step], strict=True)))
    return {"trec": trec, "parquet": parquet, "jsonl": jsonl}


_READ = ("import sys, time; t = time.perf_counter(); from rankflavor.io.run import read_run; "
         "r = read_run(sys.argv[1]); print(len(r), r.ranked_by, time.perf_counter() - t)")


def _time(path: Path) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "NUMPY_MADVISE_HUGEPAGE": "0"}
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _READ, str(path)], capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - start, int(out.stdout.split()[0])


def _same_rows(paths: dict[str, Path]) -> None:
    import numpy as np

    sys.path.insert(0, str(SRC))
    from rankflavor.io.columns import plain_strings
    from rankflavor.io.run import read_run

    runs = {name: read_run(p) for name, p in paths.items()}
    ref = runs["trec"]
    for name, run in runs.items():
        assert len(run) == len(ref), name
        assert np.array_equal(run.score, ref.score), name
        assert plain_strings(run.doc).equals(plain_strings(ref.doc)), name
        assert plain_strings(run.query).equals(plain_strings(ref.query)), name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="7000x1000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    args = parser.parse_args(argv)
    paths = _copies(_data(args.size, args.data))
    for name, p in paths.items():
        print(f"{name:8s} {p.name}  {p.stat().st_size / 1e6:8.1f} MB")
    for p in paths.values():  # warm-up round (page cache, imports compiled)
        _time(p)
    times: dict[str, list[float]] = {name: [] for name in paths}
    rows = 0
    for _ in range(args.repeat):
        for name, p in paths.items():
            t, rows = _time(p)
            times[name].append(t)
    base = statistics.median(times["trec"])
    print(f"\nread_run of {rows:,} rows, fresh process each, median of {args.repeat} rounds:")
    print(f"{'format':8s} {'median s':>9s} {'min s':>7s} {'max s':>7s} {'time / trec':>12s}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:8s} {med:9.2f} {min(ts):7.2f} {max(ts):7.2f} {med / base:12.2f}")
    _same_rows(paths)
    print("\nall three read the same rows (ids, scores, order).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
