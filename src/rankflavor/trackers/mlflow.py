"""Log :func:`rankflavor.evaluate`'s results to MLflow, every number under a key that names its flavor.

>>> import rankflavor, rankflavor.mlflow                                   # doctest: +SKIP
>>> results = rankflavor.evaluate("qrels.txt", "bm25.run", ["ndcg@10", "AP"])  # doctest: +SKIP
>>> run_id = rankflavor.mlflow.log(results)                               # doctest: +SKIP

What one call logs into the run (``prefix`` starts every key and artifact name):

- **metrics**: each mean under ``<metric>_<k>__<flavor id>`` (``ndcg_10__3f2a9c1b``;
  :func:`rankflavor.trackers.keys.metric_key`). Text-valued measures (relstring) have no mean and no
  metric; an undefined mean (``empty=nan`` on every query) is logged as NaN.
- **params**: ``flavor.<key>`` the canonical flavor string; ``scored.<key>``,
  ``skipped_empty.<key>``, ``skipped_missing.<key>`` the queries behind each mean;
  ``counts.<name>`` every input count (run and qrels rows, unjudged retrieved, duplicates, ...);
  ``input.<role>.sha256``, ``input.<role>.bytes``, ``input.<role>.source`` for each input file
  (``role`` ``qrels`` or ``run``); ``rankflavor.version``. MLflow truncates a param value longer
  than ``MAX_PARAM_VAL_LENGTH`` (6000 characters in ``mlflow/utils/validation.py``) and a tag
  value longer than ``MAX_TAG_VAL_LENGTH`` (8000); a value that would not fit a param is logged
  as a tag of the same key when it fits one, else only in ``rankflavor/results.json`` (with the
  tag saying so). Canonical flavor strings are a few hundred characters: params in practice.
- **artifacts**: ``rankflavor/per_query.csv``, the bytes ``rankflavor eval -q --format csv``
  prints (every per-query value and each measure's ``all`` row with its counts), and
  ``rankflavor/results.json``, the results file ``eval -o`` writes (``rankflavor show`` reads it).

Which run: ``run_id`` when given; else the active run (:func:`mlflow.active_run`) when neither a
``client``, a ``tracking_uri`` nor an ``experiment`` is given; else a new run, ended when the call
returns (status FAILED if logging fails). Without ``client``, ``tracking_uri`` and ``experiment``
the new run goes through :func:`mlflow.start_run`, so MLflow's own configuration chooses
(``MLFLOW_TRACKING_URI``, ``MLFLOW_EXPERIMENT_NAME``/``_ID``, :func:`mlflow.set_experiment`), and it
ends before this returns; otherwise it is created through :class:`mlflow.MlflowClient` (no active
run touched) in ``experiment`` (created when absent), else in the experiment the environment
names, else MLflow's Default. Nothing process-wide is set.

MLflow refuses to change a logged param: log one result per run, or give each its ``prefix``
(``dev/``, ``test/``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankflavor.trackers.keys import check_prefix, hashed_provenance, logged

if TYPE_CHECKING:
    from rankflavor.engine.results import Results
    from rankflavor.trackers.keys import Logged

#: MLflow's value limits (``mlflow/utils/validation.py``: MAX_PARAM_VAL_LENGTH, MAX_TAG_VAL_LENGTH).
PARAM_LIMIT, TAG_LIMIT = 6000, 8000


def package() -> Any:
    """The MLflow package (absolute import: this module's own name is ``rankflavor.mlflow``)."""
    try:
        import mlflow
    except ImportError:  # pragma: no cover - depends on the environment
        from rankflavor.errors import UsageError

        raise UsageError("rankflavor.mlflow needs MLflow's client: pip install 'rankflavor[mlflow]' "
                         "(mlflow-skinny) or mlflow") from None
    return mlflow


def log(results: Results, *, run_id: str | None = None, experiment: str | None = None,
        run_name: str | None = None, tracking_uri: str | None = None, client: Any = None,
        prefix: str = "") -> str:
    """Log ``results`` to MLflow (see the module doc for the keys); return the run's id.

    Parameters
    ----------
    results : Results
        What :func:`rankflavor.evaluate` returned (or a results file read back).
    run_id : str, optional
        Log into this run (left running).
    experiment : str, optional
        Name of the experiment of a new run (created when absent).
    run_name : str, optional
        Name of a new run.
    tracking_uri : str, optional
        Tracking server or store (``sqlite:///mlflow.db``, ``http://...``) for this call only;
        default: MLflow's own configuration.
    client : mlflow.MlflowClient, optional
        The client to log through (its tracking URI).
    prefix : str
        Starts every key and artifact name (``dev/``): several results in one run.
    """
    mlflow = package()
    check_prefix(prefix)  # before a run is created
    record = logged(results)
    explicit = client is not None or tracking_uri is not None
    if client is None:
        client = mlflow.MlflowClient(tracking_uri=tracking_uri)
    if run_id is None and not explicit and experiment is None:
        active = mlflow.active_run()
        if active is not None:
            run_id = active.info.run_id
    if run_id is not None:
        _write(client, run_id, results, record, prefix)
        return run_id
    if not explicit and experiment is None:  # MLflow's own choice of experiment; no run is active here
        with mlflow.start_run(run_name=run_name) as run:
            _write(client, run.info.run_id, results, record, prefix)
        return str(run.info.run_id)
    new = client.create_run(_experiment_id(client, experiment) or _env_experiment(mlflow, client), run_name=run_name)
    try:
        _write(client, new.info.run_id, results, record, prefix)
    except BaseException:
        client.set_terminated(new.info.run_id, status="FAILED")
        raise
    client.set_terminated(new.info.run_id)
    return str(new.info.run_id)


def _experiment_id(client: Any, name: str | None) -> str | None:
    if name is None:
        return None
    found = client.get_experiment_by_name(name)
    return str(found.experiment_id) if found is not None else str(client.create_experiment(name))


def _env_experiment(mlflow: Any, client: Any) -> str:
    """The experiment MLflow's environment names (MLFLOW_EXPERIMENT_ID, else _NAME), else Default."""
    from mlflow.environment_variables import MLFLOW_EXPERIMENT_ID, MLFLOW_EXPERIMENT_NAME

    return str(MLFLOW_EXPERIMENT_ID.get() or _experiment_id(client, MLFLOW_EXPERIMENT_NAME.get()) or "0")


def params_and_tags(record: Logged, prefix: str = "") -> tuple[dict[str, str], dict[str, str]]:
    """The params and tags :func:`log` writes for ``record`` (each value placed where it fits)."""
    values: dict[str, str] = {"rankflavor.version": record.version}
    for key, flavor in record.flavors.items():
        values[f"flavor.{key}"] = flavor
        for name, n in record.scored[key].items():
            values[f"{'scored' if name == 'n_queries' else name}.{key}"] = str(n)
    for name, n in record.counts.items():
        values[f"counts.{name}"] = str(n)
    for role, entry in record.inputs.items():
        for name, v in entry.items():
            values[f"input.{role}.{name}"] = str(v)
    values = {prefix + k: v for k, v in values.items()}
    params: dict[str, str] = {}
    tags: dict[str, str] = {}
    for key, value in values.items():
        if len(value) <= PARAM_LIMIT:
            params[key] = value
        elif len(value) <= TAG_LIMIT:
            tags[key] = value
        else:
            tags[key] = f"{len(value)} characters: in the artifact rankflavor/{prefix}results.json"
    return params, tags


def _write(client: Any, run_id: str, results: Results, record: Logged, prefix: str) -> None:
    from mlflow.entities import Metric, Param, RunTag

    from rankflavor.base.finite import dumps
    from rankflavor.project.resultsfile import results_document
    from rankflavor.render.csvfmt import render_csv

    params, tags = params_and_tags(record, prefix)
    stamp = _now_ms()
    client.log_batch(run_id, metrics=[Metric(prefix + k, v, stamp, 0) for k, v in record.metrics.items()],
                     params=[Param(k, v) for k, v in params.items()],
                     tags=[RunTag(k, v) for k, v in tags.items()], synchronous=True)
    client.log_text(run_id, render_csv(results, True), f"rankflavor/{prefix}per_query.csv")
    doc = results_document(results)
    doc["provenance"] = hashed_provenance(doc.get("provenance") or {}, record.inputs)
    client.log_text(run_id, dumps(doc, ensure_ascii=False) + "\n", f"rankflavor/{prefix}results.json")


def _now_ms() -> int:
    import time

    return int(time.time() * 1000)


__all__ = ["PARAM_LIMIT", "TAG_LIMIT", "log", "package", "params_and_tags"]
