"""``rankflavor check``: validate judgments and runs before scoring them.

Public names::

    check(qrels, runs=(), qrels_format=None, run_format=None, columns=None, scale=None) -> CheckReport
    CheckReport, Finding, Severity, FileSummary, Overlap

Modules: ``findings`` (the typed values), ``reading`` (the io entry points, then the collecting
line pass), ``codes`` (id codes, duplicates), ``grades`` (judgments), ``scores`` (runs),
``overlap`` (a run against the judgments), ``api``.
"""

from rankflavor.analysis.check.api import check
from rankflavor.analysis.check.findings import CheckReport, FileSummary, Finding, Overlap, Severity

__all__ = ["CheckReport", "FileSummary", "Finding", "Overlap", "Severity", "check"]
