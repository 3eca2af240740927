"""The ``report`` command: one self-contained HTML report from results files.

Defined here and added to the group by :mod:`rankflavor.cli.main` (``LAZY_COMMANDS``) when first named."""

from __future__ import annotations

import click

from rankflavor.cli.output import (
    quiet_option,
    typed_command_line,
    working,
)


@click.command("report")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="RESULTS.json...")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="The HTML file to write (self-contained: opens offline).")
@click.option("--title", default=None, help="Page title (default: rankflavor report).")
@quiet_option
def report_cmd(inputs: tuple[str, ...], output: str, title: str | None) -> None:
    """One HTML report from results files: `eval -q --format json` (one per system), `spread --format json`,
    `compare --format json`, `judgments --format json`. Summary table, per-query deltas, flavor spread,
    significance, judgment coverage and bounds, provenance."""
    from rankflavor.report import load_document, write_report

    with working(f"report: {len(inputs)} results file(s)"):
        write_report(output, [load_document(p) for p in inputs], command=typed_command_line(), title=title)
    click.echo(f"report written to {output}", err=True)


COMMANDS = [report_cmd]
