"""The CI gate: runs evaluated under the pinned flavor, checked against a baseline results file.

Per run, dataset and measure of the metric set, each threshold of ``[gate]`` is one check:

``floor``
    the mean must be at least this (no baseline needed);
``max_drop``
    the mean may fall at most this far below the baseline's mean;
``alpha`` (with ``test``)
    a drop must not be significant: the paired test (:mod:`rankflavor.stats`) on the per-query
    values of the queries both evaluations hold, aligned by query id as
    :func:`rankflavor.compare` aligns them (``intersection``), fails the check when the mean
    dropped and p < alpha.

A baseline must have been scored under the pinned flavor (the same canonical flavor string of
every measure) and on the same judgments (the qrels' SHA-256); otherwise the comparison would be
between different numbers, and the gate refuses: :class:`BaselineFlavorError` (exit 2, the
knobs named one by one) or an :class:`~rankflavor.errors.InputError` (exit 3), as for a
missing baseline file.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankflavor.errors import EvaluationError, InputError, UsageError
from rankflavor.project.schema import ConfigError

if TYPE_CHECKING:
    from rankflavor.engine.results import MeasureResult, Results
    from rankflavor.project.config import Config

#: Slack of the threshold comparisons: a mean equal to its threshold in print passes.
_EPS = 1e-12


class BaselineFlavorError(ConfigError):
    """The baseline was scored under another flavor than the config pins (exit code 2)."""


@dataclass(frozen=True)
class Check:
    """One threshold of one measure on one run: its verdict and the sentence saying why."""

    dataset: str
    run: str
    measure: str
    kind: str
    passed: bool
    reason: str
    value: float
    baseline: float | None = None
    threshold: float | None = None
    pvalue: float | None = None

    def to_dict(self) -> dict[str, Any]:
        def num(x: float | None) -> float | None:
            return None if x is None or math.isnan(x) else x

        return {"dataset": self.dataset, "run": self.run, "measure": self.measure, "check": self.kind,
                "passed": self.passed, "reason": self.reason, "value": num(self.value),
                "baseline": num(self.baseline), "threshold": self.threshold, "pvalue": num(self.pvalue)}


@dataclass(frozen=True)
class RunGate:
    """One run evaluated on one dataset, with its checks."""

    dataset: str
    run: str
    path: str
    baseline: str | None
    results: Results
    checks: list[Check] = field(default_factory=list)


@dataclass(frozen=True)
class GateResult:
    config: Config
    runs: list[RunGate]

    @property
    def checks(self) -> list[Check]:
        return [c for r in self.runs for c in r.checks]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def render(self, fmt: str = "text") -> str:
        if fmt == "json":
            from rankflavor.base.finite import dumps

            return dumps({"passed": self.passed, "config": str(self.config.path),
                               "pinned": self.config.flavor_text(),
                               "runs": [{"dataset": r.dataset, "run": r.run, "path": r.path, "baseline": r.baseline,
                                         "checks": [c.to_dict() for c in r.checks]} for r in self.runs]}) + "\n"
        lines = [f"gate: config {self.config.path}; pinned flavor: {self.config.flavor_text()}"]
        for r in self.runs:
            base = f"baseline {r.baseline}" if r.baseline else "no baseline"
            lines.append(f"dataset {r.dataset}, run {r.run} ({r.path}), {base}")
            width = max((len(c.measure) for c in r.checks), default=0)
            lines += [f"  {'PASS' if c.passed else 'FAIL'}  {c.measure:<{width}}  {c.kind:<12} {c.reason}"
                      for c in r.checks]
        failed = [c for c in self.checks if not c.passed]
        if failed:
            which = "; ".join(f"{c.measure} on {c.dataset}/{c.run}: {c.kind}" for c in failed)
            lines.append(f"gate FAILED: {len(failed)} of {len(self.checks)} checks failed ({which})")
        else:
            lines.append(f"gate passed: {len(self.checks)} checks")
        return "\n".join(lines) + "\n"


def _targets(config: Config, runs: list[str], dataset: str | None) -> list[tuple[str, str, str]]:
    """``(dataset, run name, run path)`` of each run to gate."""
    if dataset is not None and dataset not in config.datasets:
        raise UsageError(f"--dataset {dataset!r}: not a dataset of {config.path}; its datasets: "
                         + (", ".join(config.datasets) or "(none)"))
    names = runs or list(config.runs)
    if not names:
        raise ConfigError(f"{config.path}: gate: no RUN given and [runs] names none")
    out = []
    for name in names:
        config.require_file_or_name(name, "run")
        if name in config.runs and not os.path.exists(name):
            ds = dataset or config.dataset_of(name)
            out.append((ds or "", name, str(config.runs[name].path)))
            continue
        ds = dataset or (next(iter(config.datasets)) if len(config.datasets) == 1 else None)
        if ds is None:
            raise UsageError(f"gate: run {name!r} is not a run of {config.path} ({', '.join(config.runs) or 'none'}); "
                             "give a run file with --dataset NAME" if config.datasets else
                             f"gate: {config.path} defines no [datasets]")
        out.append((ds, os.path.basename(name), name))
    for ds, _, _ in out:
        if ds not in config.datasets:
            raise ConfigError(f"{config.path}: gate: no dataset for the runs; define [datasets.NAME] qrels = ...")
    return out


def _baseline_path(config: Config, dataset: str, override: str | None) -> Path | None:
    if override is not None:
        return Path(override)
    return config.baselines.get(dataset)


def check_baseline(config: Config, baseline: Results, measures: list[MeasureResult], source: str,
                   qrels_sha256: str | None) -> dict[str, MeasureResult]:
    """The baseline's measure of each evaluated one, after refusing a baseline of another flavor
    (knob by knob) or of other judgments."""
    from rankflavor.project.flagging import knob_differences

    by_name = {m.measure.name: m for m in baseline.measures}
    out: dict[str, MeasureResult] = {}
    problems: list[str] = []
    for m in measures:
        b = by_name.get(m.measure.name)
        if b is None:
            problems.append(f"{m.measure.name} is not in the baseline (it holds "
                            f"{', '.join(by_name) or 'no measure'})")
            continue
        diffs = knob_differences(b.measure, m.measure)
        if diffs:
            problems.append(f"{m.measure.name}: " + ", ".join(f"{k}={v} in the baseline, {p} pinned"
                                                              for k, v, p in diffs))
        out[m.measure.name] = b
    if problems:
        raise BaselineFlavorError(
            f"baseline {source} was not scored under the flavor {config.path} pins ({config.flavor_text()}): "
            + "; ".join(problems) + ". Make the baseline again under the pinned flavor "
            "(rankflavor eval DATASET RUN -o FILE in the project), or change the config")
    recorded = baseline.provenance.get("qrels", {}).get("sha256") if isinstance(baseline.provenance.get("qrels"),
                                                                                   dict) else None
    if recorded and qrels_sha256 and recorded != qrels_sha256:
        raise InputError(source, None, f"the baseline was scored on other judgments (qrels SHA-256 {recorded[:12]}, "
                         f"now {qrels_sha256[:12]}): its means are not comparable; make the baseline again")
    return out


def _paired(new: MeasureResult, base: MeasureResult) -> tuple[Any, Any, int]:
    """Per-query values of the queries both hold with a finite value, aligned by query id."""
    import numpy as np

    from rankflavor.analysis.compare.queries import align_queries
    from rankflavor.analysis.compare.scores import RunScores

    def scores(m: MeasureResult) -> RunScores:
        v = np.asarray(m.values, dtype=np.float64)
        q = np.asarray(m.queries).astype(str)
        keep = np.isfinite(v)
        order = np.argsort(q[keep], kind="stable")
        return RunScores(q[keep][order], v[keep][order])

    a = align_queries([scores(new), scores(base)], ["run", "baseline"], "intersection")
    return a.matrix[0], a.matrix[1], a.dropped


def _test(name: str, a: Any, b: Any, seed: int) -> tuple[str, float]:
    from rankflavor import stats

    if name == "t":
        r = stats.paired_t(a, b)
    elif name == "permutation":
        r = stats.permutation(a, b, seed=seed)
    elif name == "bootstrap":
        r = stats.bootstrap_test(a, b, seed=seed)
    elif name == "wilcoxon":
        r = stats.wilcoxon(a, b)
    else:
        r = stats.sign_test(a, b)
    return r.name, float(r.pvalue)


def _checks(config: Config, ds: str, run: str, results: Results, base: dict[str, MeasureResult] | None) -> list[Check]:
    g = config.gate
    out: list[Check] = []
    for m in results.measures:
        name = m.measure.name
        value = float(m.summary)
        floor = g.floor_for(name)
        if floor is None:
            floor = g.floor_for(m.measure.display)
        if floor is not None:
            ok = value >= floor - _EPS
            out.append(Check(ds, run, name, "floor", ok, f"mean {value:.4f} {'>=' if ok else '<'} floor {floor:.4f}",
                             value, threshold=floor))
        b = base.get(name) if base is not None else None
        if b is None:
            continue
        bv = float(b.summary)
        drop = bv - value
        limit = g.max_drop_for(name)
        if limit is not None:
            ok = drop <= limit + _EPS
            moved = f"dropped {drop:.4f}" if drop > 0 else f"rose {-drop:.4f}"
            allowed = f"allowed drop {limit:.4f}" if ok else f"more than the allowed {limit:.4f}"
            out.append(Check(ds, run, name, "max_drop", ok, f"mean {value:.4f} {moved} from the baseline's {bv:.4f} "
                             f"({allowed})", value, bv, limit))
        if g.alpha is not None:
            a, bb, dropped = _paired(m, b)
            extra = f", {dropped} queries in only one of them left out" if dropped else ""
            try:
                test, p = _test(g.test, a, bb, g.seed)
            except EvaluationError as exc:  # identical or too few pairs: no evidence of a drop
                out.append(Check(ds, run, name, "significance", True, f"no test: {exc}", value, bv, g.alpha))
                continue
            ok, verdict = _significance_verdict(float(a.mean()), float(bb.mean()), p, g.alpha)
            out.append(Check(ds, run, name, "significance", ok, f"{test} p = {p:.4g} on {len(a)} queries{extra}: "
                             f"{verdict}", value, bv, g.alpha, p))
    return out


def _significance_verdict(new: float, base: float, p: float, alpha: float) -> tuple[bool, str]:
    """Whether the significance check passes, and the sentence saying which way the mean moved.

    The check fails only on a significant drop; a small p where the run scores higher is a
    significant rise, said as such (not "no drop", which would leave a reader to guess the sign).
    """
    if new < base:
        if p < alpha:
            return False, f"significantly lower than the baseline at alpha {alpha:g}: a drop"
        return True, f"lower than the baseline, not significantly at alpha {alpha:g}: no significant drop"
    if new > base:
        if p < alpha:
            return True, f"significantly higher than the baseline at alpha {alpha:g}: a rise, no drop"
        return True, f"higher than the baseline, not significantly at alpha {alpha:g}: no drop"
    return True, "the same mean as the baseline: no drop"


def gate(config: Config, runs: list[str] | None = None, *, baseline: str | None = None, dataset: str | None = None,
         command: str | None = None) -> GateResult:
    """Evaluate ``runs`` (config names or paths; default every ``[runs]`` entry) under the pinned
    flavor and check ``[gate]``; see the module doc for the checks and the refusals."""
    from rankflavor.base.sources import file_sha256
    from rankflavor.engine.evaluate import evaluate
    from rankflavor.project.flagging import project_block
    from rankflavor.project.resultsfile import read_results, with_provenance

    g = config.gate
    if not config.metric_texts:
        raise ConfigError(f"{config.path}: the gate needs the metric set: [metrics] measures")
    if g.floor is None and g.max_drop is None and g.alpha is None:
        raise ConfigError(f"{config.path}: [gate] sets no threshold; set floor, max_drop or alpha")
    needs_baseline = g.max_drop is not None or g.alpha is not None
    out: list[RunGate] = []
    baselines: dict[str, tuple[str, Results]] = {}
    for ds, name, path in _targets(config, list(runs or []), dataset):
        qrels = config.datasets[ds]
        base_path = _baseline_path(config, ds, baseline) if needs_baseline else None
        if needs_baseline and base_path is None:
            raise ConfigError(f"{config.path}: [gate] compares with a baseline, and dataset {ds!r} has none: set "
                              f"[baselines] {ds} = \"FILE\" (made by rankflavor eval {ds} RUN -o FILE) or pass --baseline-results FILE")
        if base_path is not None and str(base_path) not in baselines:
            if not base_path.is_file():
                raise InputError(str(base_path), None, f"the baseline results file of dataset {ds!r} does not exist; "
                                 f"make it with `rankflavor eval {ds} RUN -o {base_path}` under the pinned flavor")
            baselines[str(base_path)] = (str(base_path), read_results(base_path))
        knobs: dict[str, Any] = dict(config.knobs)
        results = evaluate(str(qrels), path, list(config.metric_texts), preset=config.preset, scale=config.scale,
                           **knobs)
        results = with_provenance(results, inputs={"qrels": str(qrels), "run": path}, command=command,
                                  project=project_block(config, results, dataset=ds, run=name))
        base = None
        if base_path is not None:
            src, b = baselines[str(base_path)]
            recorded = results.provenance.get("qrels", {})  # an ir_datasets dataset's: its cache file's
            q_hash = file_sha256(qrels) if qrels.is_file() else recorded.get("sha256") if isinstance(recorded, dict) else None
            base = check_baseline(config, b, results.measures, src, q_hash)
        out.append(RunGate(ds, name, path, str(base_path) if base_path else None, results,
                           _checks(config, ds, name, results, base)))
    return GateResult(config, out)


__all__ = ["BaselineFlavorError", "Check", "GateResult", "RunGate", "check_baseline", "gate"]
