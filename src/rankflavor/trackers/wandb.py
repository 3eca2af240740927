"""Log :func:`rankflavor.evaluate`'s results to Weights & Biases, every number under a key that names
its flavor; works in W&B's offline mode (``WANDB_MODE=offline``, set by you, never by rankflavor).

>>> import rankflavor, rankflavor.wandb                                   # doctest: +SKIP
>>> results = rankflavor.evaluate("qrels.txt", "bm25.run", ["ndcg@10", "AP"])  # doctest: +SKIP
>>> run = rankflavor.wandb.log(results)                                   # doctest: +SKIP

What one call logs into the run (``prefix`` starts every key):

- **summary**: each mean under ``<metric>_<k>__<flavor id>`` (``ndcg_10__3f2a9c1b``), the keys of
  :mod:`rankflavor.mlflow` (:func:`rankflavor.trackers.keys.metric_key`). Text-valued measures
  (relstring) have no mean; an undefined mean is NaN, which W&B stores as ``null``.
- **config** ``rankflavor``: ``flavors`` (key -> canonical flavor string), ``names`` (key -> the
  name asked for), ``scored`` (key -> ``n_queries``, ``skipped_empty``, ``skipped_missing``),
  ``counts`` (every input count), ``inputs`` (role -> ``source``, ``bytes``, ``sha256``) and
  ``version``. W&B config values have no length limit to mind.
- **table** ``rankflavor/per_query`` (a :class:`wandb.Table`, logged with :meth:`wandb.Run.log`, so
  it takes one step): ``key, name, query, value, status, flavor`` per query and measure, and
  each measure's ``all`` row (status ``summary``); in an offline run its JSON is under the run
  directory's ``files/media/table/``.

Which run: ``run`` when given; else the active run (``wandb.run``); else a new one
(:func:`wandb.init` with ``project`` and ``name``, W&B's own settings for the rest), finished
before this returns (exit code 1 if logging fails). ``project`` and ``name`` while a run is active
are refused rather than logged elsewhere than asked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankflavor.trackers.keys import PER_QUERY_COLUMNS, check_prefix, logged, per_query_rows

if TYPE_CHECKING:
    from rankflavor.engine.results import Results
    from rankflavor.trackers.keys import Logged


def package() -> Any:
    """The wandb package (absolute import: this module's own name is ``rankflavor.wandb``)."""
    try:
        import wandb
    except ImportError:  # pragma: no cover - depends on the environment
        from rankflavor.errors import UsageError

        raise UsageError("rankflavor.wandb needs Weights & Biases: pip install 'rankflavor[wandb]'") from None
    return wandb


def log(results: Results, run: Any = None, *, project: str | None = None, name: str | None = None,
        prefix: str = "") -> Any:
    """Log ``results`` to W&B (see the module doc for the keys); return the run logged into.

    Parameters
    ----------
    results : Results
        What :func:`rankflavor.evaluate` returned (or a results file read back).
    run : wandb.Run, optional
        Log into this run (left running). Default: the active run, else a new one.
    project, name : str, optional
        Project and display name of a new run (W&B's defaults: ``WANDB_PROJECT``, a random name).
    prefix : str
        Starts every key (``dev/``): several results in one run.
    """
    from rankflavor.errors import UsageError

    wandb = package()
    check_prefix(prefix)
    record = logged(results)
    target = run if run is not None else wandb.run
    if target is not None:
        if run is None and (project is not None or name is not None):
            raise UsageError("a W&B run is active: pass it as run= (project and name are for a new run) "
                             "or finish it first")
        _write(wandb, target, results, record, prefix)
        return target
    target = wandb.init(project=project, name=name, job_type="evaluation")
    try:
        _write(wandb, target, results, record, prefix)
    except BaseException:
        target.finish(exit_code=1)
        raise
    target.finish()
    return target


def config_block(record: Logged) -> dict[str, Any]:
    """The ``rankflavor`` config value :func:`log` writes."""
    return {"version": record.version, "flavors": dict(record.flavors), "names": dict(record.names),
            "scored": {k: dict(v) for k, v in record.scored.items()}, "counts": dict(record.counts),
            "inputs": {k: dict(v) for k, v in record.inputs.items()}}


def _write(wandb: Any, run: Any, results: Results, record: Logged, prefix: str) -> None:
    run.config.update({f"{prefix}rankflavor": config_block(record)})
    run.summary.update({prefix + k: v for k, v in record.metrics.items()})
    table = wandb.Table(columns=PER_QUERY_COLUMNS, data=per_query_rows(results), allow_mixed_types=True)
    run.log({f"{prefix}rankflavor/per_query": table})


__all__ = ["config_block", "log", "package"]
