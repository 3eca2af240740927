"""The ``check`` command: validate judgments and runs before scoring them.

Defined here and added to the group by :mod:`rankflavor.cli.main`; like it, this module imports only
click at module level, so that the command's process settings come before NumPy. The exit status
is the report's (0 clean, 1 warnings, 3 errors); a usage error exits 2 as everywhere.
"""

from __future__ import annotations

import sys

import click

from rankflavor.cli.inputs import FORMAT_HELP, FORMAT_NAMES, SparkChoice, auto_is_none, spark_engine
from rankflavor.cli.output import output_width, screen_options, working


@click.command("check")
@click.argument("qrels", type=click.Path())
@click.argument("runs", nargs=-1, type=click.Path())
@click.option("--qrels-format", type=click.Choice(FORMAT_NAMES, case_sensitive=False), default="auto",
              show_default=True, callback=auto_is_none, help="Format of QRELS: " + FORMAT_HELP)
@click.option("--run-format", type=click.Choice(FORMAT_NAMES, case_sensitive=False), default="auto",
              show_default=True, callback=auto_is_none, help="Format of the run(s), as --qrels-format.")
@click.option("--columns", default=None, metavar="ROLE=NAME,...",
              help="Column names of CSV/TSV/JSONL/Parquet inputs (query=qid,doc=docid,grade=label).")
@click.option("--scale", default=None, metavar="NAME",
              help="Label scale the grades must be on (trec_dl, msmarco, beir, ecommerce): grades off it are errors.")
@click.option("--limit", type=click.IntRange(min=1), default=100, show_default=True,
              help="Findings of one kind listed line by line per file; the rest are counted.")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True)
@spark_engine
@screen_options
def check_cmd(qrels: str, runs: tuple[str, ...], qrels_format: str | None, run_format: str | None,
              columns: str | None, scale: str | None, limit: int, fmt: str, engine: str = "local",
              spark: SparkChoice | None = None) -> None:
    """Validate QRELS and RUNs without scoring: malformed lines, duplicates, overlap, suspicious patterns.

    With --engine spark, QRELS and RUNs may be directories of part files (TREC text, or Parquet
    named *.parquet); the report is the local engine's for the same rows.

    Exit status: 0 clean, 1 warnings, 3 errors.
    """
    from rankflavor.analysis.check import check
    from rankflavor.render.checkfmt import render_check

    if spark is not None and (qrels_format or run_format or columns):
        from rankflavor.errors import UsageError

        raise UsageError("--qrels-format, --run-format and --columns are for the local engine (Spark reads TREC "
                         "files and Parquet named *.parquet)")
    with working(f"check: {1 + len(runs)} file{'s' if runs else ''}"):
        if spark is not None:
            from rankflavor.spark import check_spark

            report = check_spark(qrels, list(runs), spark=spark.session(), scale=scale, limit=limit)
        else:
            report = check(qrels, list(runs), qrels_format=qrels_format, run_format=run_format, columns=columns,
                           scale=scale, limit=limit)
    click.echo(render_check(report, fmt, output_width()), nl=False)
    sys.exit(report.exit_code)


COMMANDS = (check_cmd,)
