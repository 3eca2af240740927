"""The ``history`` command, and what ``eval --record`` calls to append its results.

Defined here and added to the group by :mod:`rankflavor.cli.main`; like it, this module imports only
click at module level, so that the command's process settings come before NumPy.
"""

from __future__ import annotations

from typing import Any

import click

from rankflavor.cli.output import output_width, screen_options
from rankflavor.history.store import DEFAULT_PATH as DEFAULT_DB  # (sqlite3 and the errors only: no NumPy)

HISTORY_DB_HELP = f"The history database (SQLite) to append to / read from. Default: {DEFAULT_DB} in the working directory."


def record_eval(results: Any, db_path: str | None, command: str | None, dataset: str | None = None) -> int:
    """Append ``results`` to the history (``eval --record``) and say so on standard error."""
    from rankflavor.history import record_results

    path = db_path or DEFAULT_DB
    record_id = record_results(path, results, dataset=dataset, command=command)
    click.echo(f"recorded as record {record_id} in {path}", err=True)
    return record_id


@click.command("history")
@click.option("-m", "--metric", default=None, metavar="METRIC",
              help="The measure: metric@k (every flavor of it, each its own line), a canonical flavor string "
              "(that flavor only) or the name it was asked for. Default: every recorded measure.")
@click.option("--dataset", default=None, metavar="D", help="Only the records of this dataset.")
@click.option("--history-db", "db_path", default=None, type=click.Path(dir_okay=False), metavar="PATH",
              help=HISTORY_DB_HELP)
@click.option("--format", "fmt", type=click.Choice(("table", "json", "csv")), default="table", show_default=True,
              help="table: the points, the lines' flavors and a chart at the terminal's width (COLUMNS); "
              "json, csv: every point with its flavor, hashes and record.")
@screen_options
def history_cmd(metric: str | None, dataset: str | None, db_path: str | None, fmt: str) -> None:
    """A metric's trend over the recorded evaluations, one line per flavor (points of different
    flavors are never joined: the output says where and why they were split)."""
    from rankflavor.history import load_series
    from rankflavor.render.historyfmt import render_history

    path = db_path or DEFAULT_DB
    click.echo(render_history(load_series(path, metric, dataset), fmt, output_width(), source=path), nl=False)


COMMANDS = (history_cmd,)
