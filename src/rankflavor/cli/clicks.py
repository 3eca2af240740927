"""The ``clicks`` command: graded judgments from OpenSearch UBI click logs by clicks over expected
clicks (COEC), as the Search Relevance Workbench computes them (:mod:`rankflavor.clicks`).

Defined here and added to the group by :mod:`rankflavor.cli.main`; like it, this module imports only
click at module level.
"""

from __future__ import annotations

import click

from rankflavor.cli.output import emit, quiet_option, working

_FORMATS = ("trec", "json", "csv")


@click.command("clicks")
@click.argument("queries", type=click.Path(dir_okay=False))
@click.argument("events", type=click.Path(dir_okay=False))
@click.option("--max-rank", type=click.IntRange(min=1), default=20, show_default=True, metavar="N",
              help="SRW's maxRank: events at a position (event_attributes.position.ordinal, as logged) above N are "
              "left out; the position-bias table has positions 0 to N-1. SRW has no default; 20 is its demo's.")
@click.option("--min-impressions", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
              help="Drop a (query, document) pair with fewer than N impressions (counted). 0: none dropped, as SRW, "
              "which rates a pair without impression 0.")
@click.option("--min-clicks", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
              help="Drop a pair with fewer than N clicks (counted). 0: none dropped, as SRW.")
@click.option("--start-date", default=None, metavar="YYYY-MM-DD",
              help="SRW's startDate: only events from this day on (UTC, inclusive).")
@click.option("--end-date", default=None, metavar="YYYY-MM-DD",
              help="SRW's endDate: only events up to this day (UTC, inclusive).")
@click.option("--click-action", default="click", show_default=True, metavar="NAME",
              help="The action_name of a click (compared ignoring case).")
@click.option("--impression-action", default="impression", show_default=True, metavar="NAME",
              help="The action_name of an impression (compared ignoring case).")
@click.option("--digits", type=click.IntRange(min=0, max=12), default=3, show_default=True, metavar="N",
              help="Decimals of the ratings written (SRW writes 3, rounding half up).")
@click.option("--query-map", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="TSV lines 'QUERY_ID<TAB>USER QUERY': the run's query ids by the query text logged. Pairs of a "
              "text it lacks are dropped (counted). Without it, a query's id is its text with blanks, % and "
              "unprintable characters percent-encoded ('iphone%20headphones').")
@click.option("--format", "fmt", type=click.Choice(_FORMATS), default="trec", show_default=True,
              help="trec: qrels 'QUERY 0 DOC RATING clicks:coec'; json: judgments with their clicks, impressions, "
              "position and expected clicks, the position-bias table and every count; csv: a row per judgment.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None, metavar="FILE",
              help="Write the judgments here (default: standard output). The counts and the position-bias table "
              "go to standard error.")
@quiet_option
def clicks_cmd(queries: str, events: str, max_rank: int, min_impressions: int, min_clicks: int,
               start_date: str | None, end_date: str | None, click_action: str, impression_action: str, digits: int,
               query_map: str | None, fmt: str, output: str | None) -> None:
    """Graded judgments from the UBI query log QUERIES and event log EVENTS (JSON lines, search
    hits, _bulk files or Parquet; one file holding both may be given twice): clicks over expected
    clicks per (query text, document), the position bias estimated from the logs, as OpenSearch's
    Search Relevance Workbench computes them. The label source is clicks:coec."""
    from rankflavor.clicks import coec, read_query_map, read_ubi_events, read_ubi_queries

    with working("clicks: reading the UBI logs"):
        mapping = None if query_map is None else read_query_map(query_map)
        result = coec(read_ubi_queries(queries), read_ubi_events(events), max_rank=max_rank,
                      min_impressions=min_impressions, min_clicks=min_clicks, start_date=start_date,
                      end_date=end_date, click_action=click_action, impression_action=impression_action,
                      digits=digits, query_map=mapping)
    text = result.render(fmt)
    emit(text, output)
    click.echo(result.summary(), err=True, nl=False)


COMMANDS = (clicks_cmd,)
