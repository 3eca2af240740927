"""The ``compare`` command (issue 22): paired significance of runs, their flavor robustness.

Defined here and added to the group by :mod:`rankflavor.cli.main`; like it, this module imports only
click at module level.
"""

from __future__ import annotations

from typing import Any

import click

from rankflavor.cli.inputs import SparkChoice, input_formats, spark_engine
from rankflavor.cli.output import html_report, output_width, screen_options, shown_progress


@click.command("compare")
@click.argument("qrels", type=click.Path())
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("-m", "--metric", "metrics", multiple=True, metavar="METRIC",
              help="Measure to compare on (canonical, dialect or PRESET:NAME). Repeatable; default ndcg@10.")
@click.option("--baseline", default=None, metavar="RUN",
              help="Compare every run with this one (its file name or path); default: all pairs.")
@click.option("--queries", "query_policy", type=click.Choice(("error", "intersection", "union-zero")), default="error",
              show_default=True, help="Runs answering different queries: refuse, keep the common ones, or score 0.")
@click.option("--test", "tests", multiple=True, metavar="TEST",
              help="t, permutation, bootstrap, wilcoxon or sign. Repeatable; the first decides the verdict. "
              "Default: t, permutation, bootstrap.")
@click.option("--correction", type=click.Choice(("holm", "bonferroni", "bh", "tukey")), default=None,
              help="Multiple comparisons: default holm with --baseline, randomized Tukey HSD for all pairs.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level.")
@click.option("--resamples", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Permutations and bootstrap resamples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every resampling.")
@click.option("--no-ci", is_flag=True, help="Skip the bootstrap confidence intervals (the tests are kept).")
@click.option("--flavors", default=None, metavar="grid|PRESET,...",
              help="Re-test every pair under spread's flavor grid and every preset (grid) or the listed presets, "
              "and say which flavors flip its sign or verdict.")
@click.option("--include-defects", is_flag=True,
              help="Count the --flavors of presets that reproduce a tool's known defect (spark_triples) in the sign "
              "and verdict flips of every format; by default every format lists them, with the reason, but leaves "
              "them out of the flips (as spread does).")
@click.option("--preset", default=None, metavar="NAME", help="Tool whose flavor and metric names unprefixed measures use.")
@click.option("--flavor", "flavor_knobs", multiple=True, metavar="KNOB=VALUE", help="Knob of every measure. Repeatable.")
@click.option("--results", "saved", is_flag=True,
              help="The arguments are saved comparisons (--format json): test their systems together, refusing "
              "files scored on different qrels (content hashes) unless --force.")
@click.option("--force", is_flag=True, help="Compare even results scored on different qrels.")
@click.option("--format", "fmt", type=click.Choice(("table", "json", "csv", "md", "latex")), default="table",
              show_default=True,
              help="table, json, csv: every number (means, CIs, deltas, Cohen's d, p-values, verdicts). md, latex: "
              "summary-only paper tables (each system's mean, marked with the systems it beats significantly).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the HTML report (means with CIs, significance table, per-query deltas) to FILE.")
@click.option("--scale", "scale_name", default=None, metavar="NAME",
              help="Label scale (trec_dl, msmarco, beir, ecommerce): grades checked; every measure takes its rel, "
              "negatives and G (knobs typed here win); --flavors presets keep their tool's own flavor.")
@spark_engine
@input_formats
@screen_options
def compare_cmd(qrels: str, runs: tuple[str, ...], metrics: tuple[str, ...], baseline: str | None, query_policy: str,
                tests: tuple[str, ...], correction: str | None, alpha: float, resamples: int, seed: int, no_ci: bool,
                flavors: str | None, include_defects: bool, preset: str | None, flavor_knobs: tuple[str, ...],
                saved: bool, force: bool, fmt: str, html_path: str | None = None,
                scale_name: str | None = None, engine: str = "local", spark: SparkChoice | None = None) -> None:
    """Paired significance of RUNs against QRELS: means with CIs, tests, corrections, flavor robustness."""
    from rankflavor.analysis.compare import DEFAULT_TESTS, compare, compare_saved
    from rankflavor.flavor.flavor import parse_knob_assignments
    from rankflavor.render.comparefmt import render_compare

    if saved:
        if scale_name:
            from rankflavor.errors import UsageError

            raise UsageError("--scale is for runs scored here; saved comparisons keep the flavors they were scored under")
        if spark is not None:
            from rankflavor.errors import UsageError

            raise UsageError("--engine spark scores runs; saved comparisons (--results) are already scored")
        with shown_progress() as bar:
            result = compare_saved([qrels, *runs], list(metrics) or None, baseline=baseline, queries=query_policy,
                                   tests=tests or DEFAULT_TESTS, correction=correction, alpha=alpha,
                                   n_resamples=resamples, seed=seed, ci_level=None if no_ci else 0.95, force=force,
                                   progress=bar)
    else:
        chosen = None if flavors is None else [f.strip() for f in flavors.split(",") if f.strip()]
        knobs: dict[str, Any] = dict(parse_knob_assignments(list(flavor_knobs)))
        with shown_progress() as bar:
            result = compare(qrels, list(runs), list(metrics) or ["ndcg@10"], baseline=baseline,
                             queries=query_policy, tests=tests or DEFAULT_TESTS, correction=correction, alpha=alpha,
                             n_resamples=resamples, seed=seed, ci_level=None if no_ci else 0.95, flavors=chosen,
                             preset=preset, force=force, scale=scale_name, include_defects=include_defects,
                             progress=bar, engine=engine, spark=None if spark is None else spark.session(), **knobs)
    if html_path:
        from rankflavor.report import document_from_dict

        html_report(html_path, [document_from_dict(result.to_dict(), "compare results (in memory)")])
    click.echo(render_compare(result, fmt, output_width()), nl=False)


COMMANDS = [compare_cmd]
