"""``rankflavor.check``: validate judgments and runs without scoring them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from rankflavor.analysis.check.codes import run_codes
from rankflavor.analysis.check.findings import LIST_LIMIT, CheckReport, FileSummary, Finding, Overlap
from rankflavor.analysis.check.grades import check_qrels
from rankflavor.analysis.check.overlap import check_overlap
from rankflavor.analysis.check.reading import read_for_check
from rankflavor.analysis.check.scores import check_run
from rankflavor.io.tables import Qrels, Run
from rankflavor.presets.irds import scale_for
from rankflavor.presets.scales import Scale


def check(
    qrels: Any,
    runs: Any = (),
    *,
    qrels_format: str | None = None,
    run_format: str | None = None,
    columns: str | None = None,
    scale: str | Scale | None = None,
    limit: int = LIST_LIMIT,
) -> CheckReport:
    """Validate ``qrels`` and ``runs`` without scoring: every problem found, each with a count.

    Parameters
    ----------
    qrels : a path (TREC text, plain or compressed, or any format the io readers take), or
        whatever :func:`rankflavor.evaluate` takes for judgments.
    runs : one run or a sequence of them (paths or in-memory runs).
    qrels_format, run_format, columns : handed to the io readers for formats other than TREC
        text (None: by extension).
    scale : a label scale (name or :class:`~rankflavor.Scale`): grades off it are errors.
    limit : findings of one kind listed line by line per file; the rest are counted.

    Returns
    -------
    CheckReport
        Findings (errors, warnings, information), a summary per file, the overlap of each run
        with the judgments; ``exit_code`` 0 clean, 1 warnings, 3 errors.

    Notes
    -----
    A TREC file is read by the reader ``eval`` uses; only when it refuses the file does the
    line-by-line reader run again, collecting every malformed line (``file:line``, the line,
    what was expected) instead of stopping at the first. The good lines still get every table
    check: duplicates (both lines), the grade scale found (named from
    :data:`rankflavor.analysis.judgments.SCALES`), a qrels file that looks like a run and the other way
    round, queries whose scores are all equal, ranks that contradict scores, queries on one
    side only and how many run rows are judged.

    Examples
    --------
    >>> report = check({"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 0.5, "d2": 0.5}, "q2": {"d9": 1.0}})
    >>> report.exit_code, sorted({f.code for f in report.findings if f.severity != "info"})
    (1, ['equal_scores', 'run_only_queries'])
    """
    sc = scale_for(scale, qrels)  # named, or an ir_datasets dataset's documented grades
    options = _columns_of(columns)
    findings: list[Finding] = []
    files: list[FileSummary] = []
    overlaps: list[Overlap] = []
    judged = read_for_check("qrels", qrels, qrels_format, options["qrels"], limit)
    findings += judged.findings
    files.append(judged.summary)
    if isinstance(judged.table, Qrels):
        findings += check_qrels(judged.table, limit, sc)
    for k, one in enumerate(runs_of(runs), 1):
        read = read_for_check("run", one, run_format, options["run"], limit, f"run {k} ({type(one).__name__})")
        findings += read.findings
        files.append(read.summary)
        if not isinstance(read.table, Run):
            continue
        against = judged.table if isinstance(judged.table, Qrels) and len(judged.table) else None
        if not len(read.table):
            continue
        codes = run_codes(read.table, against)  # one coding for both: the run's checks and the overlap
        findings += check_run(read.table, limit, codes, against, read.ranks)
        if against is not None:
            overlap, found = check_overlap(against, read.table, codes)
            overlaps.append(overlap)
            findings += found
    return CheckReport(tuple(findings), tuple(files), tuple(overlaps), limit)


def _columns_of(columns: str | None) -> dict[str, dict[str, Any]]:
    """The io readers' options per kind of input: each gets the ``--columns`` roles of its kind
    (``grade`` for judgments, ``score`` for runs), as ``eval`` hands them out, so one option
    names both files' columns; an unknown role is a :class:`~rankflavor.errors.UsageError`."""
    from rankflavor.io.formats.spec import parse_columns, roles_of

    roles = parse_columns(columns)
    out: dict[str, dict[str, Any]] = {}
    for kind in ("qrels", "run"):
        mine = roles_of(roles, kind)
        out[kind] = {"columns": mine} if mine else {}
    return out


def runs_of(runs: Any) -> list[Any]:
    """``check``'s runs argument as a list: one run (a path, a table, a dict, a DataFrame) or several."""
    if runs is None:
        return []
    if isinstance(runs, (str, os.PathLike, Run)) or hasattr(runs, "columns") or isinstance(runs, dict):
        return [runs]
    if isinstance(runs, Sequence):
        return list(runs)
    return [runs]
