"""``eval --mlflow`` and ``eval --wandb``: the options, and the call that logs the command's results
(:func:`rankflavor.mlflow.log`, :func:`rankflavor.wandb.log`) once they are printed.

The options are read back from the click context (as :func:`rankflavor.cli.output.screen_options`
does), so the command's own parameters do not change.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from rankflavor.errors import RankflavorError, UsageError

if TYPE_CHECKING:
    from rankflavor.engine.results import Results

F = TypeVar("F", bound=Callable[..., Any])

_KEY = "rankflavor.trackers.keys"


class TrackerError(RankflavorError):
    """The tracker refused or could not be reached (exit code 1): its own message, named."""


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    ctx.meta.setdefault(_KEY, {})[param.name] = value
    return value


def tracker_options(command: F) -> F:
    """``--mlflow``, ``--mlflow-uri``, ``--wandb``, ``--experiment`` and ``--run-name``."""
    options = [
        click.option("--mlflow", "mlflow", is_flag=True, expose_value=False, callback=_remember,
                     help="Also log the results to MLflow (needs rankflavor[mlflow]): each mean under "
                     "<metric>_<k>__<flavor id> (ndcg_10__3f2a9c1b), the flavor strings, counts and input "
                     "SHA-256 as params, per-query CSV and results JSON as artifacts. Into a new run; tracking "
                     "URI: --mlflow-uri, else MLflow's own (MLFLOW_TRACKING_URI)."),
        click.option("--mlflow-uri", "mlflow_uri", default=None, metavar="URI", expose_value=False,
                     callback=_remember, help="MLflow tracking URI for --mlflow (sqlite:///mlflow.db, http://...)."),
        click.option("--wandb", "wandb", is_flag=True, expose_value=False, callback=_remember,
                     help="Also log the results to Weights & Biases (needs rankflavor[wandb]; WANDB_MODE=offline "
                     "works): the same keys in the summary, flavors, counts and input SHA-256 in the config, "
                     "the per-query table. Into a new run."),
        click.option("--experiment", "experiment", default=None, metavar="NAME", expose_value=False,
                     callback=_remember, help="MLflow experiment (created when absent) and W&B project of the new "
                     "run (default: MLflow's MLFLOW_EXPERIMENT_NAME or Default; W&B's WANDB_PROJECT)."),
        click.option("--run-name", "run_name", default=None, metavar="NAME", expose_value=False,
                     callback=_remember, help="Name of the new MLflow / W&B run."),
    ]

    @functools.wraps(command)
    def checked(*args: Any, **kwargs: Any) -> Any:
        _check(click.get_current_context().meta.get(_KEY, {}))  # before the evaluation, not after it
        return command(*args, **kwargs)

    for option in reversed(options):
        checked = option(checked)
    return checked  # type: ignore[return-value]


def _check(opts: dict[str, Any]) -> None:
    """UsageError for a tracker option given without its tracker."""
    if not (opts.get("mlflow") or opts.get("wandb")):
        given = [name for name, flag in (("--mlflow-uri", "mlflow_uri"), ("--experiment", "experiment"),
                                         ("--run-name", "run_name")) if opts.get(flag) is not None]
        if given:
            raise UsageError(f"{', '.join(given)}: for --mlflow or --wandb, neither of which was given")
    elif opts.get("mlflow_uri") is not None and not opts.get("mlflow"):
        raise UsageError("--mlflow-uri: for --mlflow, which was not given")


def log_to_trackers(results: Results) -> None:
    """Log ``results`` where the command's options ask; say where on standard error."""
    ctx = click.get_current_context()
    opts: dict[str, Any] = ctx.meta.get(_KEY, {})
    if not (opts.get("mlflow") or opts.get("wandb")):
        return
    from rankflavor.cli.output import command_line
    from rankflavor.project.resultsfile import with_provenance

    results = with_provenance(results, command=command_line(), stamp=False)
    if opts.get("mlflow"):
        from rankflavor.trackers import mlflow as tracker

        refused = tracker.package().exceptions.MlflowException  # UsageError when MLflow is absent
        run_id = _guarded("MLflow", refused, lambda: tracker.log(results, experiment=opts.get("experiment"),
                                                                         run_name=opts.get("run_name"),
                                                                         tracking_uri=opts.get("mlflow_uri")))
        click.echo(f"rankflavor: logged to MLflow run {run_id}", err=True)
    if opts.get("wandb"):
        from rankflavor.trackers import wandb as wandb_tracker

        run = _guarded("W&B", wandb_tracker.package().Error, lambda: wandb_tracker.log(results, project=opts.get("experiment"),
                                                                    name=opts.get("run_name")))
        click.echo(f"rankflavor: logged to W&B run {run.id} ({run.dir})", err=True)


def _guarded(name: str, errors: type[Exception], call: Callable[[], Any]) -> Any:
    """``call()``, the tracker's own ``errors`` (and OSError: a store or server it cannot reach)
    raised as TrackerError naming the tracker."""
    try:
        return call()
    except (errors, OSError) as exc:
        raise TrackerError(f"{name} refused the results: {type(exc).__name__}: {exc}") from exc


__all__ = ["TrackerError", "log_to_trackers", "tracker_options"]
