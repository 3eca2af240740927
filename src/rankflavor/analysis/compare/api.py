"""``rankflavor.compare``: paired significance of systems under one or more measures, with
confidence intervals, corrections for multiple comparisons and a flavor-robustness check.

References
----------
.. [Smu07] M. D. Smucker, J. Allan, B. Carterette. "A Comparison of Statistical Significance
   Tests for Information Retrieval Evaluation". CIKM 2007.
.. [Car12] B. Carterette. "Multiple Testing in Statistical Analysis of Systems-Based Information
   Retrieval Experiments". ACM TOIS 30(1), 2012 (randomized Tukey HSD).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rankflavor._version import __version__
from rankflavor.analysis.compare.analysis import analyse
from rankflavor.analysis.compare.flavors import Variant, flavor_variants
from rankflavor.analysis.compare.queries import align_queries
from rankflavor.analysis.compare.result import Comparison, MeasureComparison
from rankflavor.analysis.compare.robust import robustness
from rankflavor.analysis.compare.scores import run_scores, score_runs
from rankflavor.analysis.compare.settings import Settings, make_settings
from rankflavor.analysis.spread.api import run_names
from rankflavor.base.progress import Progress
from rankflavor.engine.provenance import check_same_qrels, describe, described_elsewhere
from rankflavor.errors import UsageError
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.irds import irds_id
from rankflavor.metrics.measure import Measure

if TYPE_CHECKING:
    from rankflavor.presets.scales import Scale

DEFAULT_TESTS = ("t", "permutation", "bootstrap")


def _measures(metrics: str | Measure | Iterable[str | Measure], preset: str | None, knobs: dict[str, Any],
              scale: Scale | None) -> list[Measure]:
    from rankflavor.presets import resolve_measures

    items = [metrics] if isinstance(metrics, (str, Measure)) else list(metrics)
    if not items:
        raise UsageError("metrics: give at least one measure, e.g. metrics=['ndcg@10']")
    measures, extras = resolve_measures(items, preset, {k: v if isinstance(v, str) else str(v) for k, v in knobs.items()},
                                        scale)
    if extras:
        raise UsageError(f"metrics: {', '.join(extras)} name no per-query value to compare")
    return measures


def _baseline(baseline: str | int | None, names: list[str], given: list[Any]) -> str | None:
    if baseline is None:
        return None
    if isinstance(baseline, int) and not isinstance(baseline, bool):
        if not 0 <= baseline < len(names):
            raise UsageError(f"baseline: no system number {baseline}; there are {len(names)}")
        return names[baseline]
    for name, item in zip(names, given, strict=True):
        if baseline == name or (isinstance(item, str) and baseline == item):
            return name
    from rankflavor.errors import did_you_mean

    raise UsageError(f"baseline: no system named {baseline!r}; systems: {', '.join(names)}." + did_you_mean(str(baseline), names))


def compare(
    qrels: Any,
    runs: Any,
    metrics: str | Measure | Iterable[str | Measure] = "ndcg@10",
    *,
    baseline: str | int | None = None,
    queries: str = "error",
    tests: str | Sequence[str] = DEFAULT_TESTS,
    correction: str | None = None,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    ci_level: float | None = 0.95,
    flavors: str | Iterable[str] | None = None,
    preset: str | None = None,
    force: bool = False,
    scale: str | Scale | None = None,
    include_defects: bool = False,
    progress: Progress | None = None,
    labels: str | None = None,
    engine: str = "local",
    spark: Any = None,
    **knobs: Any,
) -> Comparison:
    """Compare systems query by query: means with CIs, paired tests, corrections, flavor robustness.

    Parameters
    ----------
    qrels : path, ``{query: {doc: grade}}`` or DataFrame
        The judgments (read once).
    runs : a list of runs (paths, dicts, DataFrames) or ``{name: run}``; at least two.
    metrics : measure or list of measures (canonical, dialect, ``PRESET:NAME``).
    baseline : name (or position) of the system every other is compared with; None: all pairs.
    queries : ``"error"`` (the systems must answer the same queries), ``"intersection"``, ``"union-zero"``.
    tests : paired tests among ``t``, ``permutation`` (randomization, Smyth–Phipson), ``bootstrap``,
        ``wilcoxon``, ``sign``. The first decides the verdict.
    correction : ``holm``, ``bonferroni``, ``bh`` or ``tukey`` (randomized Tukey HSD); default Holm
        against a baseline, Tukey HSD for all pairs.
    alpha, n_resamples, seed : the verdict's level; resamples and seed of every resampling.
    ci_level : level of the bootstrap confidence intervals of means and differences (None: none).
    flavors : ``"grid"`` (spread's default grid and every preset) or a list of presets, knob
        assignments or measures: re-test every pair under each and say which flavors flip it.
    preset : tool whose flavor and metric names unprefixed measures use.
    force : compare even when the systems were scored against different judgments.
    scale : the label scale (``trec_dl``, ...): grades checked against it, and every measure
        and grid flavor takes its knobs as :func:`rankflavor.evaluate` does; preset flavors keep
        their tool's own (as in :func:`rankflavor.spread`).
    include_defects : count the ``flavors`` only presets that reproduce a tool's known defect
        produced (``spark_triples``: NDCG above 1) in the sign and verdict flips. By default they
        are re-tested and listed, each with its reason, but left out of them, by the rule of
        :func:`rankflavor.spread` (:attr:`Robustness.excluded`); :meth:`Comparison.with_defects`
        switches later.
    progress : told of the scoring, each resampling test's blocks and each flavor re-tested
        (:mod:`rankflavor.base.progress`; nothing is shown when None).
    labels : which judgments to use by the kind of their label source, as :func:`rankflavor.evaluate`
        takes it (``human``, ``llm``, ``prefer=human``, ...). When the judgments name their sources,
        a note says what the labels behind each measure's verdict are, and when they are an LLM's
        alone (:mod:`rankflavor.io.labels`).
    engine : ``"local"`` (default) or ``"spark"``: Spark reads the judgments and runs (paths
        Spark resolves, Parquet directories, Spark DataFrames) and scores every system under
        every measure and flavor in one pass over buckets of queries
        (:func:`rankflavor.spark.score_spark`); the statistics then run here, on the per-query
        values, as locally. An input that is not a file on this machine is described by its
        source alone (no SHA-256).
    spark : with ``engine="spark"``: the SparkSession (default: the DataFrames' own, or
        :func:`rankflavor.spark.local_session`).
    **knobs : flavor knobs applied to every measure that reads them.

    Returns
    -------
    Comparison

    Examples
    --------
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> runs = {"A": {"q1": {"a": 1.0, "x": 2.0}, "q2": {"b": 1.0}, "q3": {"x": 1.0, "c": 0.5}},
    ...         "B": {"q1": {"a": 2.0}, "q2": {"b": 1.0}, "q3": {"c": 1.0}}}
    >>> c = compare(qrels, runs, "P@1", baseline="A", n_resamples=100)
    >>> p = c["P@1"].pairs[0]
    >>> (p.a, p.b, round(p.delta, 4), p.wins, p.losses, p.ties)
    ('A', 'B', 0.6667, 2, 0, 1)
    """
    names, items = run_names(runs)
    if len(items) < 2:
        raise UsageError(f"runs: give at least two systems to compare, received {len(items)}")
    settings = make_settings(tests, correction, alpha, n_resamples, seed, queries, _baseline(baseline, names, items),
                             ci_level)
    sc = None
    if scale is not None or irds_id(qrels) is not None:
        from rankflavor.presets.irds import scale_for

        sc = scale_for(scale, qrels)  # named, or an ir_datasets dataset's documented grades
    measures = _measures(metrics, preset, knobs, sc)
    if engine not in ("local", "spark"):
        raise UsageError(f"engine: expected 'local' or 'spark', received {engine!r}")
    q_table = None
    if engine == "spark":
        if labels is not None:
            raise UsageError("labels: choosing judgments by their label source is for the local engine")
        q_info = described_elsewhere(qrels, "qrels")
        run_info = [{"name": n, **described_elsewhere(item, "run")} for n, item in zip(names, items, strict=True)]
    else:
        q_table = as_qrels(qrels)
        if labels is not None:
            from rankflavor.io.labels import select_labels

            q_table = select_labels(q_table, labels)
        if sc is not None:
            sc.check(q_table)
        run_tables = [as_run(item) for item in items]
        q_info = describe(qrels, q_table)
        run_info = [{"name": n, **describe(item, t)} for n, item, t in zip(names, items, run_tables, strict=True)]
    # Every system here is scored against this one qrels; saved comparisons merged later carry their own.
    check_same_qrels({n: q_info["sha256"] for n in names}, force)

    variants: list[list[Variant]] = []
    notes: list[str] = []
    for m in measures:
        if flavors is None:
            variants.append([])
            continue
        found, found_notes = flavor_variants(m, flavors, sc)
        variants.append(found)
        notes += [n for n in found_notes if n not in notes]
    every = list(measures) + [v.measure for vs in variants for v in vs]
    if q_table is None:
        from rankflavor.spark import score_spark

        grid, errors = score_spark(qrels, items, every, spark=spark, scale=sc)
        scores = [[None if res is None else run_scores(res) for res in row] for row in grid]
    else:
        scores, errors = score_runs(q_table, run_tables, every, progress)
    refused = sorted((j, r) for r, j in errors if j < len(measures))
    if refused:  # a measure asked for, refused by its policy: the error evaluate() would raise
        j, r = refused[0]
        raise errors[(r, j)]

    blocks = []
    offset = len(measures)
    for j, m in enumerate(measures):
        aligned = align_queries([scores[r][j] for r in range(len(names))], names, settings.queries)  # type: ignore[misc]
        systems, pairs = analyse(aligned.matrix, aligned.queries, names, settings, progress)
        robust = None
        if flavors is not None:
            cols = range(offset, offset + len(variants[j]))
            var_errors = {v: f"{names[r]}: {errors[(r, col)]}" for v, col in enumerate(cols)
                          for r in range(len(names)) if (r, col) in errors}
            per_variant = [[scores[r][col] for r in range(len(names))] for col in cols]
            robust = robustness(pairs, names, variants[j], per_variant, var_errors, settings, progress=progress,
                                include_defects=include_defects)
            offset += len(variants[j])
        blocks.append(MeasureComparison(str(m), m.display, aligned.queries, aligned.matrix, systems, pairs,
                                        aligned.dropped, aligned.zero_filled, robust))
        if q_table is not None and q_table.label_source is not None:
            from rankflavor.engine.labels import verdict_note

            notes.append(verdict_note(m.display, q_table, aligned.queries))
    provenance = {"rankflavor": __version__, "qrels": q_info, "runs": run_info,
                  "flavors": [str(m) for m in every]}
    return Comparison(tuple(names), settings, blocks, provenance, tuple(notes))


__all__ = ["DEFAULT_TESTS", "Settings", "compare"]
