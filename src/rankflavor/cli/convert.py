"""The ``convert`` command: judgments or a run from any supported format into any other.

Defined here and added to the group by :mod:`rankflavor.cli.main`; like it, this module imports only
click at module level.
"""

from __future__ import annotations

import click

from rankflavor.cli.inputs import FORMAT_NAMES
from rankflavor.cli.output import quiet_option, working
from rankflavor.cli.vocabulary import deprecated_alias


@click.command("convert")
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=False))
@click.argument("output_path", metavar="OUT", type=click.Path(dir_okay=False, writable=True))
@click.option("--kind", type=click.Choice(("auto", "qrels", "run")), default="auto", show_default=True,
              help="IN holds judgments (qrels) or a run; auto: whichever it reads as.")
@click.option("--in-format", "from_format", type=click.Choice(FORMAT_NAMES, case_sensitive=False), default="auto",
              show_default=True, help="Format of IN (auto: by its name and first line).")
@click.option("--out-format", "to_format", type=click.Choice(FORMAT_NAMES, case_sensitive=False), default="auto",
              show_default=True, help="Format of OUT (auto: by its name; .gz .bz2 .xz .zst compress it).")
@click.option("--columns", default=None, metavar="ROLE=NAME,...",
              help="Column names of a csv, tsv, jsonl or parquet IN: query=qid,doc=docid,grade=label or score=/rank=.")
@click.option("--lossy", is_flag=True,
              help="Allow the documented losses: a scored run into a format of ranks (msmarco, quepid) keeps each "
              "row's position as its rank; a run of ranks into a format of scores (trec, json) gets minus the rank "
              "as its score. Without it such a conversion is refused.")
@deprecated_alias("--from", "--in-format", "from_format", type=click.Choice(FORMAT_NAMES, case_sensitive=False))
@deprecated_alias("--to", "--out-format", "to_format", type=click.Choice(FORMAT_NAMES, case_sensitive=False))
@quiet_option
def convert_cmd(input_path: str, output_path: str, kind: str, from_format: str, to_format: str, columns: str | None,
                lossy: bool) -> None:
    """Convert judgments or a run from IN to OUT, exactly: reading OUT gives what reading IN gave."""
    from rankflavor.io.convert import convert

    with working("convert"):
        done = convert(input_path, output_path, kind=kind, from_format=from_format, to_format=to_format,
                       columns=columns, lossy=lossy)
    click.echo(done.summary(), err=True, nl=False)


COMMANDS = [convert_cmd]
