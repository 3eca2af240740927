"""The HTML report: one self-contained file that opens offline, made from results files.

Public names::

    load_document(path) -> Document                  a results file (eval, spread, compare, judgments JSON)
    document_from_results(results) -> Document       eval results in memory
    document_from_spread(spread) -> Document         a spread in memory
    document_from_dict(data, source) -> Document     any results dict (compare's, for instance)
    render_report(docs, command=None, config=None, title=None) -> str
    write_report(path, docs, command=None, config=None, title=None) -> Path

A command's ``--html FILE`` passes its results as documents: ``eval`` uses
``document_from_results``; ``compare`` and ``judgments`` pass ``document_from_dict(result.to_dict())``.
A comparison's system means and bootstrap CIs join the summary table, its per-query values the
per-query charts, and its pairs make the significance table (:mod:`.sections`); a coverage report
makes the judgment-coverage panel and the bound intervals. JSON of another layout is shown as
generic tables.

The page shows the summary table (systems x flavor strings, sortable, intervals where the results
hold them), per-query values and deltas, the flavor-spread chart (defect presets marked and left
out of the highlighted flips), the significance table, the coverage panel, and a provenance footer.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rankflavor.errors import UsageError
from rankflavor.report.html import render_report
from rankflavor.report.inputs import (
    Document,
    document_from_dict,
    document_from_results,
    document_from_spread,
    load_document,
)


def write_report(path: str | os.PathLike[str], docs: Sequence[Document], command: str | None = None,
                 config: Any = None, title: str | None = None) -> Path:
    """Render ``docs`` and write the HTML to ``path``; returns the path.

    Raises
    ------
    UsageError
        No document was given, or the file cannot be written.
    """
    if not docs:
        raise UsageError("a report needs at least one results file")
    text = render_report(docs, command=command, config=config, title=title)
    out = Path(path)
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the report to {out}: {exc.strerror or exc}") from exc
    return out


__all__ = ["Document", "document_from_dict", "document_from_results", "document_from_spread", "load_document",
           "render_report", "write_report"]
