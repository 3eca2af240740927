"""Command line: parse arguments, call the library, render, map errors to exit codes.

Exit codes: 0 ok, 2 usage or flavor error, 3 bad input file, 4 evaluation policy error
(``missing=error``/``empty=error``), 5 out of memory (:mod:`rankflavor.cli.errors`: the inputs
named, ``--chunk-rows`` suggested), 1 anything unexpected.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from rankflavor._version import __version__
from rankflavor.base.pages import prefer_small_pages
from rankflavor.cli.errors import CALLED, is_thread_limit, out_of_memory
from rankflavor.cli.inputs import SparkChoice, input_formats, spark_engine
from rankflavor.cli.output import (
    html_report,
    input_provenance,
    output_width,
    quiet_option,
    screen_options,
    shown_progress,
    typed_command_line,
    working,
)
from rankflavor.cli.trackers import log_to_trackers, tracker_options
from rankflavor.cli.vocabulary import deprecated_alias, diff_old_scale
from rankflavor.errors import RankflavorError

FORMATS = ("table", "json", "csv", "trec", "md", "latex")


def _fail(exc: RankflavorError) -> None:
    click.echo(f"rankflavor: error: {exc}", err=True)
    sys.exit(exc.exit_code)


#: Commands defined in modules of their own, by name: the module is imported only when its command
#: is named (or ``--help`` lists every command), so ``rankflavor --version`` or ``flavors`` pays for
#: none of them. The one table such a command is registered in; each module lists its commands
#: in ``COMMANDS``.
LAZY_COMMANDS: dict[str, str] = {
    "judgments": "judgments", "pool": "judgments", "raters": "judgments", "aggregate": "judgments",
    "history": "history", "compare": "compare", "show": "project", "init": "project",
    "gate": "project", "check": "check", "convert": "convert", "clicks": "clicks",
    "judge": "judge", "estimate": "estimate", "agreement": "estimate",
}  # fmt: skip


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            import importlib

            module = importlib.import_module(f"{__package__}.{LAZY_COMMANDS[cmd_name]}")
            for command in module.COMMANDS:
                self.add_command(command)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]):  # type: ignore[no-untyped-def]
        name, command, rest = super().resolve_command(ctx, args)
        ctx.meta[CALLED] = (name, command, list(rest))  # what an out-of-memory error names
        return name, command, rest

    def invoke(self, ctx: click.Context):  # type: ignore[no-untyped-def]
        try:
            return super().invoke(ctx)
        except RankflavorError as exc:
            _fail(exc)
        except MemoryError as exc:  # NumPy's _ArrayMemoryError and pyarrow's ArrowMemoryError too
            _fail(out_of_memory(ctx, exc))
        except RuntimeError as exc:
            if not is_thread_limit(exc):
                raise
            _fail(out_of_memory(ctx, exc))


_EPILOG = """Environment: the command sets NUMPY_MADVISE_HUGEPAGE=0 before NumPy is imported, so
fresh arrays come in ordinary pages (cheaper on virtual machines that back memory on first touch;
see rankflavor/base/pages.py). A value you set yourself is kept: NUMPY_MADVISE_HUGEPAGE=1 keeps NumPy's
huge-page advice. The Python library never changes it."""


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]}, epilog=_EPILOG)
@click.version_option(version=__version__, prog_name="rankflavor")  # (not package_name: no metadata lookup)
def cli() -> None:
    """Offline search-relevance evaluation where every number names its flavor."""


@cli.command("eval")
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


@cli.command("flavors")
@click.option("--presets", "show_presets", is_flag=True, help="Show the preset table instead of the knobs.")
@screen_options
def flavors_cmd(show_presets: bool) -> None:
    """List every flavor knob with its values, default and meaning (or the presets)."""
    if show_presets:
        from rankflavor.render.presetsfmt import render_presets

        click.echo(render_presets(output_width()), nl=False)
        return
    from rankflavor.render.flavorsfmt import render_flavors

    click.echo(render_flavors(output_width()), nl=False)


@cli.command("demo")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Also keep the generated qrels and runs in this folder.")
@screen_options
def demo_cmd(out_dir: str | None) -> None:
    """Generate a small judged collection and two runs, and show how the flavor moves NDCG."""
    from rankflavor.cli.demo import run_demo

    with working("demo: generating and evaluating"):
        text = run_demo(out_dir, output_width())
    click.echo(text, nl=False)


@cli.command("spread")
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


@cli.command("explain")
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


@cli.command("diff")
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


@cli.command("identify")
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


@cli.command("report")
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


def main() -> None:
    """The ``rankflavor`` command. Its process settings come first: nothing has imported NumPy yet
    (this module imports only click and the errors)."""
    prefer_small_pages()
    cli(prog_name="rankflavor")

