"""The ``eval`` command: one run (or several) against the judgments, every number named by its flavor.

Defined here and added to the group by :mod:`rankflavor.cli.main` (``LAZY_COMMANDS``) when first named."""

from __future__ import annotations

from typing import Any

import click

from rankflavor.cli.inputs import SparkChoice, input_formats, spark_engine
from rankflavor.cli.output import (
    html_report,
    output_width,
    screen_options,
    shown_progress,
)
from rankflavor.cli.trackers import log_to_trackers, tracker_options
from rankflavor.render import FORMATS


@click.command("eval")
@click.argument("qrels", type=click.Path())
@click.argument("run", type=click.Path())
@spark_engine
@click.option("-m", "--metric", "metrics", multiple=True, metavar="METRIC",
              help="Measure: canonical (ndcg@10[gain=exp2]), the preset's own name (ndcg_cut.10), "
              "or PRESET:NAME (lightgbm:ndcg@10). Repeatable.")
@click.option("--preset", default=None, metavar="NAME",
              help="Tool whose flavor and metric names to use (beir, trec_dl, msmarco, ir_measures, ranx, "
              "trectools, gdeval, ntcireval, elasticsearch, quepid, spark, sklearn, lightgbm, ...). Without -m, "
              "reports the measures that tool's users quote, each with its full flavor: --preset beir gives "
              "the BEIR leaderboard's NDCG@10. All presets: rankflavor flavors --presets.")
@click.option("--flavor", "flavor_knobs", multiple=True, metavar="KNOB=VALUE",
              help="Set a flavor knob on every measure that reads it. Repeatable; see `rankflavor flavors`.")
@click.option("-q", "per_query", is_flag=True, help="Per-query values as well as the summary.")
@click.option("-c", "complete", is_flag=True, help="Score queries missing from the run as 0 (missing=zero).")
@click.option("-l", "level", type=float, default=None, metavar="N",
              help="Relevance threshold for binary measures (rel=N), as trec_eval -l.")
@click.option("-M", "max_docs", type=int, default=None, metavar="N",
              help="Evaluate only the top N documents per query (depth=N), as trec_eval -M.")
@click.option("-J", "judged_only", is_flag=True, help="Drop unjudged documents before ranking (unjudged=condensed).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table: the terminal's width (COLUMNS); trec: trec_eval's own layout; md, latex: tables for "
              "pull requests and papers; csv: metric,query,value,flavor,n_queries,skipped_empty,skipped_missing,"
              "status (the counts on each measure's all row).")
@click.option("--chunk-rows", type=click.IntRange(min=1), default=None, metavar="N",
              help="Stream the run in chunks of about N rows (whole queries each): memory bounded by N.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the HTML report (with every per-query value) to FILE; see `rankflavor report`.")
@click.option("--scale", "scale_name", default=None, metavar="NAME",
              help="Label scale (trec_dl, msmarco, beir, ecommerce): its rel, negatives and top grade G set every "
              "measure's knobs; a grade off it is an error naming file and line.")
@click.option("--raters", "raters_rule", default=None, metavar="RULE",
              help="QRELS is a ratings file (several raters per pair; see `rankflavor raters`): aggregate it by "
              "RULE (mean, rounded_mean, quepid, median, majority, max, min), named in every flavor string.")
@click.option("--distractor-grade", "distractor_grade", type=float, default=None, metavar="G",
              help="Judgments with grade G mark distractors (passages that mislead an LLM reader; UDCG): "
              "distractor_grade=G on every measure that reads it. Without it a negative grade is unjudged.")
@click.option("-o", "--output", "output_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the results file: JSON with every per-query value and provenance (input hashes, "
              "version, config, time, command); `rankflavor show FILE --format F` prints what this command prints.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="rankflavor.toml (default: the nearest one from the working directory upward): QRELS and RUN may "
              "name its datasets and runs; its metric set and pinned flavor apply, and a differing knob is flagged.")
@click.option("--record", "record", is_flag=True,
              help="Append the results (flavors, means, per-query values, input hashes) to the history database; "
              "see `rankflavor history`.")
@click.option("--history-db", "history_db", default=None, type=click.Path(dir_okay=False), metavar="PATH",
              help="The history database --record appends to (default: rankflavor-history.sqlite here).")
@tracker_options
@input_formats
@screen_options
def eval_cmd(
    qrels: str,
    run: str,
    engine: str,
    metrics: tuple[str, ...],
    preset: str | None,
    flavor_knobs: tuple[str, ...],
    per_query: bool,
    complete: bool,
    level: float | None,
    max_docs: int | None,
    judged_only: bool,
    fmt: str,
    chunk_rows: int | None,
    html_path: str | None,
    scale_name: str | None = None,
    raters_rule: str | None = None,
    distractor_grade: float | None = None,
    output_path: str | None = None,
    config_path: str | None = None,
    record: bool = False,
    history_db: str | None = None,
    spark: SparkChoice | None = None,
) -> None:
    """Evaluate RUN against QRELS (TREC by default; every format of --qrels-format/--run-format,
    plain or compressed)."""
    from rankflavor.cli.project import eval_project
    from rankflavor.engine.evaluate import evaluate
    from rankflavor.flavor.flavor import parse_knob_assignments
    from rankflavor.render import render

    knobs: dict[str, Any] = dict(parse_knob_assignments(list(flavor_knobs)))
    if complete:
        knobs["missing"] = "zero"
    if level is not None:
        knobs["rel"] = str(level)
    if max_docs is not None:
        knobs["depth"] = str(max_docs)
    if judged_only:
        knobs["unjudged"] = "condensed"
    if distractor_grade is not None:
        knobs["distractor_grade"] = str(distractor_grade)
    project = eval_project(config_path, qrels, run, list(metrics), preset, knobs, scale_name)
    qrels, run, preset, scale_name, knobs = project.qrels, project.run, project.preset, project.scale, project.knobs
    wanted = list(metrics) or project.metrics or _default_metrics(preset)
    if spark is not None:
        from rankflavor.errors import UsageError
        from rankflavor.spark import evaluate_spark

        if click.get_current_context().params.get("chunk_rows"):
            raise UsageError("--chunk-rows is for the local engine; Spark partitions the data itself")
        session = spark.session()
        with shown_progress() as bar:
            results = evaluate_spark(qrels, run, wanted, preset=preset, scale=scale_name, raters=raters_rule,
                                     progress=bar, spark=session, **knobs)
    else:
        with shown_progress() as bar:
            results = evaluate(qrels, run, wanted, preset=preset, chunk_rows=chunk_rows, scale=scale_name,
                               raters=raters_rule, progress=bar, **knobs)
    results = project.finish(results, output_path, record, history_db)
    click.echo(render(results, fmt, per_query, output_width()), nl=False)
    project.note(results, fmt)
    if html_path:
        from rankflavor.report import document_from_results

        html_report(html_path, [document_from_results(results)],
                     {"engine": engine, "preset": preset, "metrics": wanted, "flavor": knobs})
    log_to_trackers(results)  # --mlflow, --wandb (cli_trackers.py): after every output, so a refusal costs none


def _default_metrics(preset: str | None) -> list[str]:
    if preset:
        from rankflavor.presets import get_preset

        chosen = get_preset(preset).default_metrics  # the measures that tool's users quote
        if chosen:
            return list(chosen)
    if preset and preset.lower() in ("trec_eval", "pytrec_eval"):
        return ["official"]  # trec_eval's default measure set (its "official" nickname)
    return ["ndcg@10", "AP", "P@10", "recall@100", "RR"]


COMMANDS = [eval_cmd]
