"""What the TREC reader does to one piece of a run, step by step, against pyarrow's parse alone.

    python3 bench/pieces.py                                  # the text-docno run with random ties
    python3 bench/pieces.py bench/data/run.7000x1000.txt     # any run file bench/generate.py made

One piece of :data:`rankflavor.io.columnar.PIECE_BYTES` from the middle of the file (whole
lines), each step timed in this process, best of 7 (warm: the piece and its columns in cache,
as a read worker has them): the blank scan that keeps the fast path to trec_eval's whitespace
rules (``clean``), pyarrow's parse of the kept columns alone, the reader's parse (the same parse,
the query ids encoded from their runs), and the worker's note of the piece (docno integers or
hashes, query runs, descent), with the docno hashes alone beside it.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyarrow import csv

from rankflavor.io.columnar import PIECE_BYTES
from rankflavor.io.docnos import hash64
from rankflavor.io.lines import RUN_FIELDS
from rankflavor.io.parse import QUERY, csv_options, parse_bytes
from rankflavor.io.run import run_piece
from rankflavor.io.source import clean

HERE = Path(__file__).resolve().parent


def best(step: Callable[[], Any], times: int = 7) -> tuple[float, Any]:
    """The least of ``times`` timings of ``step`` (ms), and its result."""
    took, out = [], None
    for _ in range(times):
        began = time.perf_counter()
        out = step()
        took.append(time.perf_counter() - began)
    return min(took) * 1e3, out


def main(argv: list[str]) -> int:
    path = argv[0] if argv else str(HERE / "data" / "run.7000x1000.text.shuffled.txt")
    with open(path, "rb") as fh:
        fh.seek(os.path.getsize(path) // 2)
        data = fh.read(PIECE_BYTES)
    data = data[data.index(b"\n") + 1 : data.rindex(b"\n") + 1]  # whole lines
    kinds = {0: QUERY, 2: pa.string(), 4: pa.float64()}
    plain = {0: pa.string(), 2: pa.string(), 4: pa.float64()}
    scan, _ = best(lambda: clean(data, 0, len(data)))
    alone, _ = best(lambda: csv.read_csv(pa.BufferReader(pa.py_buffer(data)), **csv_options(RUN_FIELDS, plain, len(data) + 1, threads=False)))
    parsed, cols = best(lambda: parse_bytes(data, RUN_FIELDS, kinds))
    noted, _ = best(lambda: run_piece(cols))
    hashed, _ = best(lambda: hash64(cols[1]))
    print(f"{path}: one piece of {len(data) / 2**20:.1f} MiB, {len(cols[0]):,} lines; ms, best of 7\n")
    print("| step | ms |\n|---|---:|")
    for what, ms in (("blank scan (`clean`)", scan), ("pyarrow's parse alone", alone),
                     ("the reader's parse (`parse_bytes`: scan, parse, query ids encoded)", parsed),
                     ("the worker's note (`run_piece`)", noted), ("of which the docno hashes (`hash64`)", hashed)):
        print(f"| {what} | {ms:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
