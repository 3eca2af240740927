"""The ``agreement`` and ``estimate`` commands (issue 37 items 4 and 5): how far a judge agrees
with people, and a measure's mean with valid intervals from human and LLM judgments.

Defined here and added to the group by :mod:`rankflavor.cli.main`; like it, this module imports only
click at module level.
"""

from __future__ import annotations

from typing import Any

import click

from rankflavor.cli.inputs import judgment_formats
from rankflavor.cli.output import output_width, screen_options, working


def _lambda(ctx: click.Context, param: click.Parameter, value: str) -> float | None:
    """``tuned`` (PPI++) -> None; a number in [0, 1] -> itself."""
    if value.strip().lower() == "tuned":
        return None
    try:
        lam = float(value)
    except ValueError:
        raise click.BadParameter(f"expected 'tuned' or a number in [0, 1], received {value!r}") from None
    if not 0 <= lam <= 1:
        raise click.BadParameter(f"expected 'tuned' or a number in [0, 1], received {value!r}")
    return lam


_MEASURE_HELP = "Measure (canonical, dialect or PRESET:NAME), e.g. ndcg@10 or ndcg@10[gain=exp2m1]."


@click.command("estimate")
@click.argument("human_qrels", type=click.Path(dir_okay=False))
@click.argument("llm_qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--metric", "measure", default="ndcg@10", show_default=True, metavar="MEASURE", help=_MEASURE_HELP)
@click.option("--alpha", type=float, default=0.1, show_default=True,
              help="Error level: the intervals target coverage 1 - alpha.")
@click.option("--lambda", "lam", default="tuned", show_default=True, callback=_lambda, metavar="tuned|X",
              help="PPI's lambda: tuned (PPI++ power tuning), 1 (plain PPI), or any fixed X in [0, 1].")
@click.option("--alternative", type=click.Choice(("two-sided", "larger", "smaller")), default="two-sided",
              show_default=True, help="two-sided, larger (a lower bound only) or smaller (an upper bound only).")
@click.option("--preset", default=None, metavar="NAME", help="Tool whose flavor and metric names an unprefixed measure uses.")
@click.option("--flavor", "flavor_knobs", multiple=True, metavar="KNOB=VALUE", help="Knob of the measure. Repeatable.")
@click.option("--format", "fmt", type=click.Choice(("table", "json", "csv", "md")), default="table", show_default=True)
@judgment_formats(("human_qrels", "llm_qrels"), labels=False)
@screen_options
def estimate_cmd(human_qrels: str, llm_qrels: str, runs: tuple[str, ...], measure: str, alpha: float,
                 lam: float | None, alternative: str, preset: str | None, flavor_knobs: tuple[str, ...],
                 fmt: str) -> None:
    """MEASURE's mean per RUN from HUMAN_QRELS and LLM_QRELS: human-only, LLM-only and prediction-powered
    (PPI++) estimates with (1 - alpha) intervals, and what the LLM labels bought.

    The queries HUMAN_QRELS judges are the labelled ones; the queries only LLM_QRELS judges are the
    unlabelled ones. PPI is valid when the labelled queries are a random sample of all of them.
    """
    from rankflavor.analysis.estimate import estimate
    from rankflavor.flavor.flavor import parse_knob_assignments
    from rankflavor.render.estimatefmt import render_estimates

    knobs: dict[str, Any] = dict(parse_knob_assignments(list(flavor_knobs)))
    with working("estimate"):
        result = estimate(human_qrels, llm_qrels, list(runs), measure, alpha=alpha, lam=lam,
                          alternative=alternative, preset=preset, **knobs)
    click.echo(render_estimates(result, fmt, output_width()), nl=False)


@click.command("agreement")
@click.argument("human_qrels", type=click.Path(dir_okay=False))
@click.argument("judge_qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("-m", "--metric", "measure", default="ndcg@10", show_default=True, metavar="MEASURE",
              help=_MEASURE_HELP + " Computed both ways for each RUN.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Error level of the intervals (bias, paired metric difference).")
@click.option("--resamples", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Bootstrap resamples of the metric difference's interval.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--scale", "scale_name", default=None, metavar="NAME",
              help="Label scale (trec_dl, msmarco, beir, ecommerce): its grades are the kappas' and alpha's categories.")
@click.option("--preset", default=None, metavar="NAME", help="Tool whose flavor and metric names an unprefixed measure uses.")
@click.option("--flavor", "flavor_knobs", multiple=True, metavar="KNOB=VALUE", help="Knob of the measure. Repeatable.")
@click.option("--format", "fmt", type=click.Choice(("table", "json", "csv", "md")), default="table", show_default=True)
@judgment_formats(("human_qrels", "judge_qrels"), labels=False)
@screen_options
def agreement_cmd(human_qrels: str, judge_qrels: str, runs: tuple[str, ...], measure: str, alpha: float,
                  resamples: int, seed: int, scale_name: str | None, preset: str | None,
                  flavor_knobs: tuple[str, ...], fmt: str) -> None:
    """How far JUDGE_QRELS agrees with HUMAN_QRELS on the (query, doc) pairs both graded: weighted
    Cohen's kappa, Krippendorff's alpha, the confusion matrix, the mean grade bias; with RUNs, MEASURE
    computed both ways on the queries both judge, and its paired difference."""
    from rankflavor.analysis.estimate.agreement_api import judge_agreement
    from rankflavor.flavor.flavor import parse_knob_assignments
    from rankflavor.render.agreementfmt import render_agreement

    knobs: dict[str, Any] = dict(parse_knob_assignments(list(flavor_knobs)))
    with working("agreement"):
        result = judge_agreement(human_qrels, judge_qrels, list(runs), measure, alpha=alpha, n_resamples=resamples,
                                 seed=seed, scale=scale_name, preset=preset, **knobs)
    click.echo(render_agreement(result, fmt, output_width()), nl=False)


COMMANDS = [estimate_cmd, agreement_cmd]
