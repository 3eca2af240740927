"""The ``judgments``, ``pool``, ``raters`` and ``aggregate`` commands (judgments: coverage and bounds,
what to judge next, several raters).

Defined here and added to the group by :mod:`rankflavor.cli.main`; like it, this module imports only
click at module level, so that the command's process settings come before NumPy.
"""

from __future__ import annotations

import click

from rankflavor.cli.inputs import SparkChoice, input_formats, spark_engine
from rankflavor.cli.output import (
    emit,
    html_report,
    input_provenance,
    output_width,
    quiet_option,
    screen_options,
    working,
)
from rankflavor.cli.vocabulary import deprecated_alias

RATINGS_FORMATS = ("auto", "trec", "csv", "quepid")
_SCALE_HELP = ("Label scale the grades must be on (trec_dl, msmarco, beir, ecommerce); a grade off it is an "
               "error naming file and line.")


@click.command("judgments")
@click.argument("qrels", type=click.Path())
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("-m", "--metric", "metrics", multiple=True, metavar="MEASURE",
              help="Measure to bound: ndcg, dcg, P, AP, RR, ERR or RBP (ndcg@10, P@10, AP@100, RR, ERR@20, "
              "RBP@100[param=0.8]). Repeatable; default ndcg@10. The first one's cutoff is the coverage's k.")
@click.option("--scale", "scale_name", default=None, metavar="NAME",
              help="Label scale: trec_dl (0-3, relevant >= 2), msmarco (0-1), beir (0-2, relevant >= 1), "
              "ecommerce (0-4, relevant >= 3). The intervals range over its grades; a grade off it is an error.")
@click.option("-q", "per_query", is_flag=True, help="Per-query coverage and bounds (table format).")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True)
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the HTML report (coverage panel and bound intervals) to FILE.")
@spark_engine
@input_formats
@screen_options
def judgments_cmd(qrels: str, runs: tuple[str, ...], metrics: tuple[str, ...], scale_name: str | None,
                  per_query: bool, fmt: str, html_path: str | None, engine: str = "local",
                  spark: SparkChoice | None = None) -> None:
    """Coverage of each RUN's top k by QRELS, the pool-bias warning, and bounds under unjudged documents."""
    from rankflavor.analysis.judgments import judgments
    from rankflavor.render.judgmentsfmt import render_judgments

    with working(f"judgments: coverage and bounds of {len(runs)} run{'s' if len(runs) != 1 else ''}"):
        if spark is not None:
            from rankflavor.spark import judgments_spark

            cov = judgments_spark(qrels, list(runs), list(metrics) or ["ndcg@10"], scale=scale_name,
                                  spark=spark.session())
        else:
            cov = judgments(qrels, list(runs), list(metrics) or ["ndcg@10"], scale=scale_name)
    if html_path:
        from rankflavor.report import document_from_dict

        data = {**cov.to_dict(), "provenance": input_provenance(qrels, runs, hashes=True)}
        html_report(html_path, [document_from_dict(data, "judgments results (in memory)")],
                     {"metrics": list(metrics) or ["ndcg@10"], "scale": scale_name})
    if fmt == "json":  # the inputs' paths and sizes, so `rankflavor report` can show their SHA-256
        from rankflavor.base.finite import dumps

        click.echo(dumps({**cov.to_dict(), "provenance": input_provenance(qrels, runs)}))
        return
    click.echo(render_judgments(cov, fmt, per_query, output_width()), nl=False)


@click.command("pool")
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("-k", "--cutoff", "depth", type=click.IntRange(min=1), default=10, show_default=True, metavar="K",
              help="The pool's cutoff: each run's top K documents per query are pooled (the K of the NDCG@K whose "
              "bounds to close). Not the depth knob, which cuts the run before scoring.")
@click.option("--budget", type=click.IntRange(min=0), default=None, metavar="N",
              help="Keep the N candidates whose judgment is sure to shrink the runs' exact NDCG@K intervals most, "
              "whatever grade it gets (see `rankflavor.pool`).")
@click.option("--qrels", default=None, type=click.Path(),
              help="Judgments so far: their documents are not pooled again. Needs --scale.")
@click.option("--scale", default=None, metavar="NAME",
              help="Label scale of QRELS: its grades are what an unjudged document may get (0 and 1 without one).")
@click.option("--strategy", type=click.Choice(("gap", "random")), default="gap", show_default=True,
              help="With --budget: gap (by priority) or random (uniform, the baseline, with --seed).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --strategy random.")
@click.option("--format", "fmt", type=click.Choice(("trec", "csv", "quepid")), default="trec", show_default=True,
              help="trec: a qrels stub 'query 0 doc' with the grade left empty (readers refuse it until filled); "
              "csv: query,doc,priority,runs,best_rank; quepid: Quepid's ratings import CSV query,docid,rating.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the candidates here (default: standard output). The counts go to standard error.")
@spark_engine
@input_formats
@screen_options
@deprecated_alias("--depth", "-k/--cutoff", "depth", type=click.IntRange(min=1))
def pool_cmd(runs: tuple[str, ...], depth: int, budget: int | None, qrels: str | None, scale: str | None,
             strategy: str, seed: int, fmt: str, output: str | None, engine: str = "local",
             spark: SparkChoice | None = None) -> None:
    """The unjudged documents of the RUNS' top K that need judging: depth-K pooling, or a budget of them."""
    from rankflavor.analysis.judgments.pool import pool
    from rankflavor.render.console import terminal_width
    from rankflavor.render.fit import wrap_lines

    with working(f"pool: {len(runs)} run{'s' if len(runs) != 1 else ''}"):
        if spark is not None:
            from rankflavor.spark import pool_spark

            result = pool_spark(list(runs), depth, qrels, budget, scale=scale, strategy=strategy, seed=seed,
                                spark=spark.session())
        else:
            result = pool(list(runs), depth, qrels, budget, scale=scale, strategy=strategy, seed=seed)
    emit(result.render(fmt), output)
    click.echo(wrap_lines(result.summary(), output_width() or terminal_width()), err=True, nl=False)


@click.command("raters")
@click.argument("ratings", type=click.Path(dir_okay=False))
@click.option("--ratings-format", "input_format", type=click.Choice(RATINGS_FORMATS), default="auto", show_default=True,
              help="Format of RATINGS: trec (query iteration doc grade rater), csv (query,doc,rater,grade) or "
              "quepid (a book's judgements export: query,docid,<judge>,...); auto guesses from the first line.")
@click.option("--scale", default=None, metavar="NAME", help=_SCALE_HELP + " Its grades are alpha's value domain.")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True)
@screen_options
@deprecated_alias("--input-format", "--ratings-format", "input_format", type=click.Choice(RATINGS_FORMATS))
def raters_cmd(ratings: str, input_format: str, scale: str | None, fmt: str) -> None:
    """Agreement between the raters of RATINGS: Cohen's kappa (two raters), Fleiss' kappa, Krippendorff's alpha."""
    from rankflavor.base.finite import dumps
    from rankflavor.raters import agreement
    from rankflavor.raters.files import read_ratings

    grades = _grades(scale)
    with working("raters: agreement"):
        result = agreement(read_ratings(ratings, input_format, grades), grades)
    if fmt == "json":
        click.echo(dumps(result.to_dict()))
        return
    from rankflavor.render.ratersfmt import render_agreement

    click.echo(render_agreement(result, output_width()), nl=False)


def _grades(scale: str | None) -> tuple[float, ...] | None:
    """The grades of the named label scale; None without one (the judgments package, which
    defines the scales, is imported only then: it loads the bounds machinery)."""
    if scale is None:
        return None
    from rankflavor.presets.scales import scale_named

    sc = scale_named(scale)
    return None if sc is None else tuple(sc.grades)


@click.command("aggregate")
@click.argument("ratings", type=click.Path(dir_okay=False))
@click.option("--rule", required=True, metavar="RULE",
              help="mean, rounded_mean (Quepid before PR #1597), quepid (Quepid since), median, majority "
              "(ties to the lowest grade), max or min.")
@click.option("--ratings-format", "input_format", type=click.Choice(RATINGS_FORMATS), default="auto", show_default=True,
              help="Format of RATINGS (see `rankflavor raters --help`).")
@click.option("--scale", default=None, metavar="NAME", help=_SCALE_HELP)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the qrels here (default: standard output).")
@deprecated_alias("--input-format", "--ratings-format", "input_format", type=click.Choice(RATINGS_FORMATS))
@quiet_option
def aggregate_cmd(ratings: str, rule: str, input_format: str, scale: str | None, output: str | None) -> None:
    """One grade per (query, doc) of RATINGS by RULE, as a TREC qrels file whose header names the rule."""
    from rankflavor.raters import aggregate_ratings
    from rankflavor.raters.files import read_ratings, write_aggregated
    from rankflavor.raters.rules import check_rule

    check_rule(rule)  # before reading: an unknown rule is a usage error whatever the file holds
    with working("aggregate"):
        read = read_ratings(ratings, input_format, _grades(scale))
        text = write_aggregated(aggregate_ratings(read, rule), len(set(read.rater)))
    emit(text, output)


COMMANDS = (judgments_cmd, pool_cmd, raters_cmd, aggregate_cmd)
