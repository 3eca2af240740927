"""A format's reader by name: which reader reads a file, given its format or its name and first bytes.

:func:`read_formatted` is what :func:`rankflavor.io.qrels.read_qrels` and
:func:`rankflavor.io.run.read_run` call for every format but TREC's (which they read
themselves); it answers None when the file turns out to be TREC text after all (a ``.tsv`` of
TREC lines, MS MARCO qrels).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from rankflavor.errors import InputError
from rankflavor.io.formats.spec import TABLE, format_by_name, function_of
from rankflavor.io.source import read_bytes
from rankflavor.io.tables import Qrels, Run


def choose(path: str | os.PathLike[str], kind: str, fmt: str | None) -> str:
    """The format ``path`` is read in (``fmt`` when given, else by its name): ``trec`` where the
    TREC readers read it (MS MARCO qrels are TREC qrels separated by tabs)."""
    chosen = fmt or format_by_name(path)
    if chosen == "msmarco" and kind == "qrels":
        return "trec"
    return chosen


def read_formatted(path: str | os.PathLike[str], kind: str, fmt: str | None, columns: Mapping[str, str]
                   ) -> Qrels | Run | None:
    """Judgments (``kind="qrels"``) or a run read in format ``fmt`` (None: by the file's name and
    first line); None when it is TREC text, for the TREC reader.

    Raises
    ------
    InputError
        Naming the file and the line, row or JSON path of the first problem.
    """
    chosen = choose(path, kind, fmt)
    if chosen == "trec":
        return None
    source = str(path)
    spec = TABLE[chosen]
    if kind not in spec.holds:
        from rankflavor.errors import UsageError

        raise UsageError(f"{path}: the {chosen} format holds judgments, not a run")
    if spec.from_path:
        if not os.path.isfile(path):
            read_bytes(path)  # the error for a missing file, a directory
        return function_of(str(spec.reader))(path, kind, columns)
    data = read_bytes(path)
    if not data.strip():
        raise InputError(source, None, f"is empty; expected {chosen} {kind}")
    if fmt is None and chosen in ("csv", "tsv"):  # a header, or another format's first line?
        from rankflavor.io.formats.delimited import sniff

        found = sniff(data[:4096])
        if found == "trec":
            return None
        if found == "quepid-book":
            found = "quepid"
        if found != "named" and not (found == "msmarco" and kind == "qrels"):
            chosen = found
    if fmt is None and chosen == "json":  # a .json file: nested ids, a _rank_eval document or an SRW list
        from rankflavor.io.formats import jsondoc

        value = jsondoc.load(source, data)
        chosen = jsondoc.kind_of(value)
        if chosen == "srw" and kind == "run":
            from rankflavor.errors import UsageError

            raise UsageError(f"{path}: a Search Relevance Workbench judgment list holds judgments, not a run")
        return function_of(str(TABLE[chosen].reader))(source, data, kind, columns, value=value)
    return function_of(str(TABLE[chosen].reader))(source, data, kind, columns)
