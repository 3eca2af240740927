"""The flavor commands: ``spread`` (one measure under a grid of flavors), ``explain`` (one query,
position by position), ``diff`` (two flavors, knob by knob) and ``identify`` (which flavor gave a number).

Defined here and added to the group by :mod:`rankflavor.cli.main` (``LAZY_COMMANDS``) when first named."""

from __future__ import annotations

from typing import Any

import click

from rankflavor.cli.inputs import SparkChoice, input_formats, spark_engine
from rankflavor.cli.output import (
    html_report,
    input_provenance,
    output_width,
    screen_options,
    shown_progress,
)
from rankflavor.cli.vocabulary import deprecated_alias, diff_old_scale


@click.command("spread")
@click.argument("qrels", type=click.Path())
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("-m", "--metric", "measure", default="ndcg@10", show_default=True, metavar="MEASURE",
              help="The measure whose flavor the grid varies (canonical, dialect or PRESET:NAME).")
@click.option("-k", "cutoff", type=int, default=None, metavar="K", help="Cutoff of the measure (metric@K).")
@click.option("--preset", default=None, metavar="NAME", help="Tool whose flavor and metric names the measure uses.")
@click.option("--flavor", "flavor_knobs", multiple=True, metavar="KNOB=VALUE", help="Knob of the base flavor. Repeatable.")
@click.option("--vary", multiple=True, metavar="KNOB=V1,V2,...",
              help="A grid knob and its values. Repeatable; replaces the default grid "
              "(gain x discount x ideal x unjudged x ties).")
@click.option("--no-presets", is_flag=True, help="Leave out the flavors of the registered presets.")
@click.option("--include-defects", is_flag=True,
              help="Count the flavors of presets that reproduce a tool's known defect (spark_triples) in the "
              "summaries (min/max per run, pairs, run orders) of every format; by default every format lists "
              "them, with the reason, but leaves them out of the summaries.")
@click.option("--format", "fmt", type=click.Choice(("table", "json", "csv", "md", "latex")), default="table",
              show_default=True,
              help="csv: run,flavor,mean,in_summary,excluded_because (the means; every other format also has the "
              "summaries, over the same flavors).")
@click.option("--scale", "scale_name", default=None, metavar="NAME",
              help="Label scale (trec_dl, msmarco, beir, ecommerce): grades checked; the base and grid flavors take "
              "its rel, negatives and G (knobs typed here win); preset rows keep their tool's own flavor.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the HTML report (the flavor-spread chart, each flavor named by the knobs "
              "that differ, and the pairs whose order flips) to FILE.")
@spark_engine
@input_formats
@screen_options
def spread_cmd(qrels: str, runs: tuple[str, ...], measure: str, cutoff: int | None, preset: str | None,
               flavor_knobs: tuple[str, ...], vary: tuple[str, ...], no_presets: bool, include_defects: bool,
               fmt: str, scale_name: str | None = None, html_path: str | None = None, engine: str = "local",
               spark: SparkChoice | None = None) -> None:
    """Evaluate RUNs under a grid of flavors and every preset: spread, knob effects, order flips."""
    from rankflavor.analysis.spread.api import parse_grid, spread
    from rankflavor.flavor.flavor import parse_knob_assignments
    from rankflavor.render.spreadfmt import render_spread

    grid = parse_grid(vary) if vary else None
    knobs: dict[str, Any] = dict(parse_knob_assignments(list(flavor_knobs)))
    with shown_progress() as bar:
        result = spread(qrels, list(runs), measure, grid=grid, presets=not no_presets, preset=preset, k=cutoff,
                        scale=scale_name, include_defects=include_defects, progress=bar, engine=engine,
                        spark=None if spark is None else spark.session(), **knobs)
    if html_path:
        from rankflavor.report import document_from_dict

        data = {**result.to_dict(), "provenance": input_provenance(qrels, runs, hashes=True)}
        html_report(html_path, [document_from_dict(data, "spread results (in memory)")],
                    {"measure": measure, "preset": preset, "flavor": knobs})
    if fmt == "json":  # the inputs' paths and sizes, so `rankflavor report` can show their SHA-256
        from rankflavor.base.finite import dumps

        click.echo(dumps({**result.to_dict(), "provenance": input_provenance(qrels, runs)}))
        return
    click.echo(render_spread(result, fmt, output_width()), nl=False)


@click.command("explain")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("-Q", "--query", required=True, metavar="QUERY", help="The query id to explain.")
@click.option("-m", "--metric", "measure", default="ndcg@10", show_default=True, metavar="MEASURE",
              help="One ndcg or dcg measure (canonical, dialect or PRESET:NAME).")
@click.option("--preset", default=None, metavar="NAME", help="Tool whose flavor and metric names the measure uses.")
@click.option("--flavor", "flavor_knobs", multiple=True, metavar="KNOB=VALUE", help="Flavor knob. Repeatable.")
@click.option("--show-ignored", type=int, default=5, show_default=True, metavar="N",
              help="Documents listed per reason for being left out (table format).")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True)
@input_formats
@screen_options
def explain_cmd(qrels: str, run: str, query: str, measure: str, preset: str | None, flavor_knobs: tuple[str, ...],
                show_ignored: int, fmt: str) -> None:
    """Per-position table of one query: gains, discounts, contributions, the ideal list, what was ignored."""
    from rankflavor.analysis.explain.api import explain
    from rankflavor.flavor.flavor import parse_knob_assignments
    from rankflavor.render.explainfmt import render_explanation

    result = explain(qrels, run, query, measure, preset=preset, **parse_knob_assignments(list(flavor_knobs)))
    click.echo(render_explanation(result, fmt, show_ignored, output_width()), nl=False)


@click.command("diff")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.argument("flavor_a", metavar="FLAVOR_A")
@click.argument("flavor_b", metavar="FLAVOR_B")
@click.option("--preset", default=None, metavar="NAME", help="Tool whose flavor and metric names unprefixed measures use.")
@click.option("--flavor", "flavor_knobs", multiple=True, metavar="KNOB=VALUE", help="Knob applied to both. Repeatable.")
@click.option("--order", "path_order", default=None, metavar="KNOB,KNOB,...",
              help="Knobs to change first, in this order (k = the cutoff); the rest follow the default order.")
@click.option("--deltas", "scale", type=click.Choice(("value", "mean")), default="value", show_default=True,
              help="Per-query deltas as the query's own value, or as its share of the mean.")
@click.option("--top", type=int, default=10, show_default=True, metavar="N", help="Queries listed as moving most.")
@click.option("--format", "fmt", type=click.Choice(("table", "json", "csv", "md", "latex")), default="table",
              show_default=True,
              help="csv: knob,query,delta for every query (query all: the step's delta of the mean; knob total: "
              "B - A), the deltas only; the others also give A's and B's means and each step's mean after it.")
@deprecated_alias("--scale", "--deltas", "scale", convert=diff_old_scale)
@input_formats
@screen_options
def diff_cmd(qrels: str, run: str, flavor_a: str, flavor_b: str, preset: str | None, flavor_knobs: tuple[str, ...],
             path_order: str | None, scale: str, top: int, fmt: str) -> None:
    """Why FLAVOR_A and FLAVOR_B differ on RUN: the gap attributed to each knob, per query and in the mean."""
    from rankflavor.analysis.diff.api import diff
    from rankflavor.flavor.flavor import parse_knob_assignments
    from rankflavor.render.difffmt import render_diff

    order = path_order.split(",") if path_order else None
    result = diff(qrels, run, flavor_a, flavor_b, order=order, preset=preset,
                  **parse_knob_assignments(list(flavor_knobs)))
    click.echo(render_diff(result, fmt, scale, top, output_width()), nl=False)


# ---------------------------------------------------------------------------------------------
# identify (issue 20): which flavor produced this number?


@click.command("identify")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--value", default=None, metavar="X",
              help="The reported mean, as printed (0.5058: matched to half a unit of its last digit).")
@click.option("-m", "--metric", "measure", default=None, metavar="MEASURE",
              help="Metric and cutoff to search around (canonical, dialect or PRESET:NAME). Default: the "
              "measure named in --per-query, else ndcg@10.")
@click.option("--per-query", "per_query", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Another tool's per-query output: trec_eval -q text, CSV query,value, or JSON {query: value}.")
@click.option("--tolerance", type=float, default=None, metavar="T",
              help="Match every number within T instead of its printed precision.")
@click.option("--show", type=click.IntRange(min=1), default=8, show_default=True, metavar="N",
              help="Candidates listed per group (table format).")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True)
@screen_options
def identify_cmd(qrels: str, run: str, value: str | None, measure: str | None, per_query: str | None,
                 tolerance: float | None, show: int, fmt: str) -> None:
    """Which flavors reproduce a reported number (--value) or per-query output (--per-query) on QRELS and RUN."""
    from rankflavor.analysis.identify import identify
    from rankflavor.render.identifyfmt import render_identification

    with shown_progress() as bar:
        result = identify(qrels, run, value, measure if measure or per_query else "ndcg@10", per_query,
                          tolerance=tolerance, progress=bar)
    click.echo(render_identification(result, fmt, show, output_width()), nl=False)
# -- report ---------------------------------------------------------------------------------------


COMMANDS = [spread_cmd, explain_cmd, diff_cmd, identify_cmd]
