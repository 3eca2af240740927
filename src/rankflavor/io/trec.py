"""TREC qrels and run files, plain or gzip, whitespace-tolerant like trec_eval.

Two paths with one contract: a columnar path (pyarrow's CSV reader) for clean single-space
files, and a line-by-line path for everything else (tabs, runs of blanks, comments, blank
lines, CRLF) that also produces the exact error for a bad line. Whenever the columnar path is
unsure, the line path decides, so both accept and reject exactly the same files.

The readers live in modules of one concern each:

* :mod:`rankflavor.io.source` - a file's bytes, line-aligned pieces, the blank scan, :data:`BLANKS`;
* :mod:`rankflavor.io.parse` - pyarrow's parse of a whole file or of one piece;
* :mod:`rankflavor.io.columnar` - the columnar read, whole or in pieces on every core;
* :mod:`rankflavor.io.lines` - the line-by-line reader and the formats' rules;
* :mod:`rankflavor.io.qrels`, :mod:`rankflavor.io.run` - :func:`read_qrels`, :func:`read_run`.

This module gathers their public names, for code that imports them from here.
"""

from __future__ import annotations

from rankflavor.io.lines import QRELS_FIELDS, RUN_FIELDS
from rankflavor.io.qrels import read_qrels
from rankflavor.io.run import read_run
from rankflavor.io.source import BLANKS, read_bytes

__all__ = ["BLANKS", "QRELS_FIELDS", "RUN_FIELDS", "read_bytes", "read_qrels", "read_run"]
