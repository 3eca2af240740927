"""The one entry point: read -> align -> order -> kernels -> aggregate by policy -> Results.

A judgments file is read on a thread of its own while the measures are resolved and the engine's
modules are imported (Python on one core that the read no longer waits behind; measured in
``bench/RESULTS.md``). Hence the imports inside :func:`evaluate`. A run file read whole starts at once
too, so that its pieces fill the core the imports leave idle.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from rankflavor.base.progress import Progress, task
from rankflavor.base.threads import in_background
from rankflavor.errors import InputError, UsageError
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.irdsname import irds_id
from rankflavor.io.tables import Qrels, Run

if TYPE_CHECKING:
    from rankflavor.engine.results import Results
    from rankflavor.metrics.measure import Measure


def evaluate(
    qrels: Any,
    run: Any,
    metrics: str | Measure | Iterable[str | Measure],
    preset: str | None = None,
    chunk_rows: int | None = None,
    scale: Any = None,
    raters: str | None = None,
    progress: Progress | None = None,
    labels: str | None = None,
    label_source: str | None = None,
    **knobs: Any,
) -> Results:
    """Evaluate a run against judgments under explicit flavors.

    Parameters
    ----------
    qrels : path, ``{query: {doc: grade}}`` or DataFrame (query_id, doc_id, relevance)
        The judgments; ``"irds:<dataset id>"``: an ir_datasets dataset's (:mod:`rankflavor.io.irds`).
    run : path, ``{query: {doc: score}}`` or DataFrame (query_id, doc_id, score)
        The ranking to evaluate.
    metrics : str, Measure or list of them
        Canonical measures (``"ndcg@10[gain=exp2]"``), or names in the preset's own dialect
        (``"ndcg_cut.10"`` under ``preset="trec_eval"``), or ``"PRESET:NAME"``.
    preset : str, optional
        Tool whose defaults and metric names to use (see ``rankflavor flavors --presets``).
    chunk_rows : int, optional
        Stream a run file in chunks of about this many rows, whole queries per chunk, so memory
        is bounded by the chunk (see :mod:`rankflavor.engine.chunked`); per-query values are identical.
    scale : str or Scale, optional
        The label scale (``trec_dl``, ``msmarco``, ``beir``, ``ecommerce`` or a
        :class:`~rankflavor.analysis.judgments.Scale`), declared once: its ``rel`` and ``negatives``
        take precedence over the preset's, the knobs given here (``rel=1``) and in a measure's
        brackets over the scale's (:func:`rankflavor.presets.resolve_measures`); ``max_grade``
        is set where G changes the value (G comes from the scale, never from the data), and a
        grade off the scale is an InputError naming file and line. None with ``qrels`` an
        ir_datasets name (``irds:<id>``): the scale its documented grades give
        (:func:`rankflavor.io.irds.dataset_scale`), if any.
    raters : str, optional
        ``qrels`` is a ratings file (several raters per pair, :func:`rankflavor.raters.files.read_ratings`)
        aggregated by this rule (:data:`rankflavor.raters.RULES`); every measure then carries
        the ``raters`` knob, so its flavor string names the rule. Judgments already aggregated
        (a :class:`~rankflavor.io.tables.Qrels` from :func:`rankflavor.raters.aggregate_ratings`)
        carry their rule without it.
    labels : str, optional
        Which judgments to evaluate by the kind of their label source (:mod:`rankflavor.io.labels`):
        ``any`` (all, the default), ``human``, ``llm``, ``clicks`` (or another kind present),
        or ``prefer=KIND`` (that kind's judgment where a (query, doc) pair has one, any other
        elsewhere). What is left out is counted in the results' provenance (``qrels.labels``).
    label_source : str, optional
        The label source of judgments that name none (``"human:nist"``), or ``"NAME=SOURCE,..."``
        renaming those they name (:func:`rankflavor.io.labels.apply_rule`).
    progress : rankflavor.base.progress.Progress, optional
        Told of the work as it goes: the run file's bytes piece by piece under ``chunk_rows``,
        else each input file's read (done or not). Nothing is shown when None.
    **knobs
        Flavor knobs applied to every measure that reads them (``gain="exp2"``, ``rel=2``).

    Returns
    -------
    Results
        Per-query values, summaries, input counts and canonical flavor strings.

    Examples
    --------
    >>> qrels = {"q1": {"a": 2, "b": 0, "c": 1}}
    >>> run = {"q1": {"a": 0.2, "b": 0.9, "c": 0.5}}
    >>> r = evaluate(qrels, run, ["ndcg@3", "ndcg@3[gain=exp2]"])
    >>> [round(m.mean, 4) for m in r]
    [0.6199, 0.5869]
    >>> evaluate(qrels, run, "P@3", scale="trec_dl")[0].measure.knobs["rel"]
    '2'
    """
    sc = None
    if scale is not None or irds_id(qrels) is not None:
        # (the judgments package is imported only for a scale: it loads pyarrow.compute)
        from rankflavor.presets.irds import scale_for

        # an unknown name is a usage error before any file is read; an ir_datasets dataset's
        # documented grades give the scale when none is named
        sc = scale_for(scale, qrels)
    if raters is not None:
        from rankflavor.raters.files import read_aggregated

        qrels = read_aggregated(qrels, raters, None if sc is None else sc.grades)
    # Started first, so that the imports below overlap it; an error in it is raised below, after
    # the measures' (which name what the caller typed, as before).
    q_reading: Future[Qrels] | None = in_background(as_qrels, qrels) if isinstance(qrels, (str, os.PathLike)) else None
    # A run file read whole starts too: its pieces take the core that the imports and the
    # judgments' read leave idle. Its errors are raised below as well, after the qrels'.
    whole_run = chunk_rows is None and isinstance(run, (str, os.PathLike))
    r_reading: Future[Run] | None = in_background(as_run, run) if whole_run else None
    from rankflavor.engine.plan import evaluate_tables
    from rankflavor.metrics.measure import Measure
    from rankflavor.presets import resolve_measures

    items = [metrics] if isinstance(metrics, (str, Measure)) else list(metrics)
    if not items:
        raise UsageError("metrics: give at least one measure, e.g. metrics=['ndcg@10']")
    measures, extras = resolve_measures(items, preset, {k: str(v) if not isinstance(v, str) else v for k, v in knobs.items()},
                                        sc)
    if q_reading is not None and progress is not None:
        with task(progress, f"reading {os.path.basename(os.fspath(qrels))}", 1) as bar:
            q_reading.exception()  # (raised below, as without a progress)
            bar.advance()
    q_table = q_reading.result() if q_reading is not None else as_qrels(qrels)
    if labels is not None or label_source is not None:
        from rankflavor.io.labels import apply_rule, select_labels

        q_table = select_labels(apply_rule(q_table, label_source), labels)
    if sc is not None:
        # Aggregated ratings were checked rating by rating as read; a mean or median may fall
        # between the scale's grades by the rule's own construction.
        if q_table.raters is None:
            try:
                sc.check(q_table)
            except InputError:
                if r_reading is not None:  # not left running while the error ends the process
                    r_reading.exception()
                raise
    measures = _declared_by_judgments(q_table, measures)
    if q_table.raters is not None:  # the rule is named in every flavor string
        # (a measure naming another rule keeps it, and the plan refuses it)
        measures = [m.with_knobs(raters=q_table.raters) if m.flavor.raters == "none" else m for m in measures]
    if chunk_rows is not None:
        if not isinstance(run, (str, os.PathLike)):
            raise UsageError("chunk_rows: chunked evaluation streams a run file; pass its path")
        from rankflavor.io.formats.read import choose
        from rankflavor.io.formats.spec import split_input

        path, fmt, _ = split_input(run, None, None, "run")
        if choose(path, "run", fmt) != "trec":
            raise UsageError(f"chunk_rows: chunked evaluation streams TREC run files; {path} is read as "
                             f"{choose(path, 'run', fmt)} (convert it: rankflavor convert)")
        from rankflavor.engine.chunked import evaluate_chunked

        return evaluate_chunked(q_table, run, measures, chunk_rows, extras, progress)
    if r_reading is not None and progress is not None:
        with task(progress, f"reading {os.path.basename(os.fspath(run))}", 1) as bar:
            r_reading.exception()  # (raised below, as without a progress)
            bar.advance()
    r_table = r_reading.result() if r_reading is not None else as_run(run)
    return evaluate_tables(q_table, r_table, measures, extras=extras)


def _declared_by_judgments(q_table: Qrels, measures: list[Any]) -> list[Any]:
    """Measures taking what the judgments declare of themselves (their distractor grade, their
    grade column holding utilities), where they read it; a measure naming another distractor
    grade contradicts the judgments: FlavorError."""
    from rankflavor.errors import FlavorError
    from rankflavor.flavor.flavor import format_number

    out = []
    for m in measures:
        read = m.spec.knobs_read(m.flavor)
        if q_table.utilities and "utility" in read and m.flavor.utility == "label":
            if m.flavor.distractor_value is not None:
                raise FlavorError(f"{m.name} sets distractor_grade, a label of grades, but the judgments hold "
                                  "per-passage utilities (a negative one is a distractor)")
            m = m.with_knobs(utility="grade")
        g = q_table.distractor_grade
        if g is not None and "distractor_grade" in m.spec.knobs:
            current = m.flavor.distractor_value
            if current is not None and current != g:
                raise FlavorError(f"{m.name} sets distractor_grade={format_number(current)} but the judgments "
                                  f"mark distractors with grade {format_number(g)}")
            if current is None:
                m = m.with_knobs(distractor_grade=format_number(g))
        out.append(m)
    return out
