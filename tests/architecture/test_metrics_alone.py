"""Every metric, and every preset's own metric names, evaluated alone.

Each registered metric (with and without a cutoff where one is allowed) and each name of each
preset's dialect runs on its own through :func:`rankflavor.evaluate` and through ``rankflavor
eval``, on small random data and on a real TREC DL 2019 run. Each gives a value (the CLI's JSON
equal to the API's) or a typed refusal (:class:`~rankflavor.errors.RankflavorError`, the CLI's
exit code and one-line message), never a traceback. A measure that reads no alignment (ir_measures
``NumQ``) once died with ``StopIteration``.

Also here: no module outside ``metrics/`` dispatches on a metric's name (the registry's promise).
"""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.errors import RankflavorError
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.metrics import REGISTRY
from rankflavor.presets import PRESETS
from rankflavor.presets.trec_eval import FAMILIES, NICKNAMES, PSEUDO

from ..conftest import shared_path

SRC = Path(rankflavor.__file__).resolve().parent


# ---------------------------------------------------------------------------------------------
# Inputs: (qrels path, run path, qrels table, run table), read once per module.


def _random_files(directory: Path, seed: int = 26) -> tuple[Path, Path]:
    """12 queries: graded judgments 0-3, tied scores, unjudged retrieved documents, a query with
    nothing relevant, one only in the qrels and one only in the run."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(12):
        docs = [f"d{i}" for i in rng.choice(60, size=int(rng.integers(5, 30)), replace=False)]
        judged = [*docs[: int(rng.integers(1, len(docs)))], f"x{q}"]  # x: judged, never retrieved
        for d in judged:
            grade = 0 if q == 3 else int(rng.integers(0, 4))
            if q != 11:
                qrels.append(f"q{q} 0 {d} {grade}")
        if q != 10:
            for rank, d in enumerate(docs, 1):
                run.append(f"q{q} Q0 {d} {rank} {round(float(rng.random()), 1)} rnd")
    (directory / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (directory / "run.txt").write_text("\n".join(run) + "\n")
    return directory / "qrels.txt", directory / "run.txt"


@pytest.fixture(scope="module", params=["random", "dl19"])
def data(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, ...]:
    if request.param == "random":
        q, r = _random_files(tmp_path_factory.mktemp("alone"))
    else:
        q = shared_path("qrels", "qrels.dl19-passage.txt")
        r = shared_path("runs", "rankllm.dl19.bm25.top100.run")
    return str(q), str(r), as_qrels(str(q)), as_run(str(r))


def _alone(data: tuple[Any, ...], metric: str, preset: str | None = None) -> str | None:
    """Evaluate ``metric`` alone through the API and the CLI; both agree. The refusal's error
    class name, or None when a value came back."""
    q_path, r_path, qrels, run = data
    preset_args = ["--preset", preset] if preset else []
    cli_run = CliRunner().invoke(cli, ["eval", q_path, r_path, "-m", metric, *preset_args, "-q", "--format", "json"])
    assert cli_run.exception is None or isinstance(cli_run.exception, SystemExit), (metric, cli_run.exc_info)
    assert "Traceback" not in cli_run.output, (metric, cli_run.output)
    try:
        res = rankflavor.evaluate(qrels, run, metric, preset=preset)
    except RankflavorError as exc:
        assert str(exc), metric
        assert cli_run.exit_code == exc.exit_code != 0, (metric, cli_run.exit_code, exc)
        assert cli_run.stderr.startswith("rankflavor: error: "), (metric, cli_run.stderr)
        return type(exc).__name__
    assert cli_run.exit_code == 0, (metric, cli_run.output)
    assert len(res) or res.extras, metric
    for m in res:
        assert isinstance(m.summary, float) and len(m.values) == len(m.queries) == len(m.status)
        if m.measure.metric in UNDEFINED_SOMETIMES:  # NaN exactly where a query's value is NaN
            assert math.isnan(m.summary) == bool(np.isnan(m.values).any()), (str(m.measure), m.summary)
        elif m.measure.spec.summary != "none":
            assert m.values.dtype == np.float64 and not math.isnan(m.summary), (str(m.measure), m.summary)
    api = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert json.loads(cli_run.stdout)["measures"] == api["measures"], metric
    if res.extras:  # pseudo-measures (num_q, runid) print in trec_eval's layout only
        trec = CliRunner().invoke(cli, ["eval", q_path, r_path, "-m", metric, *preset_args, "--format", "trec"])
        assert trec.exit_code == 0 and all(f"{x:<22}\tall\t" in trec.stdout for x in res.extras), trec.output
    return None


# ---------------------------------------------------------------------------------------------
# Every registered metric.


def _registry_measures() -> list[str]:
    out = []
    for name, spec in REGISTRY.items():
        if spec.cutoff != "required":
            out.append(name)
        if spec.cutoff != "none":
            out.append(f"{name}@5")
    return out


#: The metrics that, alone and under default knobs, refuse with a typed error: each needs a knob
#: with no default (its parameter; ERR, nERR and graded RBP the top grade of the scale).
NEEDS_A_KNOB = {"IPrec", "Rprec_mult", "ERR", "ERR@5", "nERR", "nERR@5", "RBP", "RBP@5",
                "ERR_gain", "ERR_gain@5", "nERR_gain", "nERR_gain@5",
                # the C/W/L family scales gains by the top grade (ir_measures' max_rel)
                "RBP_cwl", "NERR8@5", "NERR9@5", "NERR10", "NERR11", "INST", "INSQ", "BPM@5", "SDCG@5"}
#: Metrics whose per-query value is NaN on some inputs, as the tool's is (ranx's bpref: a query
#: with relevant documents retrieved and no judged non-relevant one is 0 / 0), so the mean too.
UNDEFINED_SOMETIMES = {"bpref_ranx"}


def test_every_registered_metric_is_listed() -> None:
    assert {m.split("@")[0] for m in _registry_measures()} == set(REGISTRY)


@pytest.mark.parametrize("metric", _registry_measures())
def test_each_registered_metric_alone(data: tuple[Any, ...], metric: str) -> None:
    refused = _alone(data, metric)
    if metric in NEEDS_A_KNOB:
        assert refused == "FlavorError", metric
    else:
        assert refused is None, (metric, refused)


# ---------------------------------------------------------------------------------------------
# Every preset's dialect names: the names its users quote (``default_metrics``), every trec_eval
# family, nickname and pseudo-measure, and more of each tool's own names.

MORE_NAMES: dict[str, tuple[str, ...]] = {
    "trec_eval": ("ndcg_cut.10", "P.5,10", "iprec_at_recall.0.5", "relstring.5", "ndcg.1=1,2=3,3=7", "set_F.0.5"),
    "ir_measures": ("NumQ", "NumRet", "NumRel", "NumRelRet", "nDCG", "nDCG(dcg='exp-log2')@10", "P(rel=2)@10",
                    "R@100", "Success@10", "Rprec", "Bpref", "Judged@10", "RR", "MAP", "ERR@10"),
    "gdeval": ("err@20",),
    "ranx": ("ndcg_burges@10-l2", "dcg@10", "map@100", "hit_rate@10", "r-precision", "precision@10-l2", "bpref"),
    "trectools": ("get_ndcg(depth=10)", "get_precision(depth=10)", "get_map(depth=1000)"),
    "ntcireval": ("MSnDCG@10", "nDCG@10 -g 1:2:3", "AP", "AP@10", "RR", "P@10", "Hit@10", "ERR -g 1:2:3",
                  "nERR@10 -g 1:2:3", "RBP -g 1:2:3", "RBP --rbp 0.8 -g 1:3:7", "nDCG@0010 --logb 3"),
    "msmarco": ("MRR@100",),
    "beir": ("MRR@10",),
    "quepid": ("ERR@10",),
    "elasticsearch": ("dcg@5(normalize=true)", "precision@5(ignore_unlabeled=true)", "recall(relevant_rating_threshold=2)",
                      "mean_reciprocal_rank@3", "expected_reciprocal_rank(maximum_relevance=3,unknown_doc_rating=1)",
                      '{"precision": {"k": 5, "relevant_rating_threshold": 2}}'),
    "spark": ("recallAt(10)", "meanAveragePrecisionAt(10)"),
    "spark_triples": ("precisionAt(5)", "recallAt(5)", "meanAveragePrecision", "meanAveragePrecisionAt(5)"),
    "torchmetrics": ("RetrievalNormalizedDCG(top_k=5)", "retrieval_precision(top_k=5, adaptive_k=True)",
                     "RetrievalRecall(top_k=5)", "RetrievalMAP(empty_target_action=skip)", "retrieval_reciprocal_rank",
                     "RetrievalHitRate(top_k=3)", "RetrievalFallOut(top_k=5)", "retrieval_r_precision"),
    "sklearn": ("ndcg_score(k=10, ignore_ties=True)", "dcg@5"),
    "lightgbm": ("ndcg@3",),
    "pytrec_eval": ("map", "ndcg_cut.10"),
}


def _preset_names() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for name, preset in PRESETS.items():
        names = list(preset.default_metrics) + list(MORE_NAMES.get(name, ()))
        if name == "trec_eval":
            names += [*FAMILIES, *PSEUDO, *NICKNAMES]
        out += [(name, n) for n in dict.fromkeys(names)]
    return out


def test_every_preset_has_names_here() -> None:
    assert {p for p, _ in _preset_names()} >= set(PRESETS) - {"rankflavor"}
    assert set(MORE_NAMES) <= set(PRESETS)


@pytest.mark.parametrize(("preset", "name"), _preset_names())
def test_each_preset_name_alone(data: tuple[Any, ...], preset: str, name: str) -> None:
    refused = _alone(data, name, preset)
    # What the tool's users quote gives a number on a real run (the random data has queries in
    # the run or the qrels alone, which some presets refuse, as their tools do).
    if name in PRESETS[preset].default_metrics and "dl19" in data[0]:
        assert refused is None, (preset, name, refused)


def test_numq_alone_counts_the_queries(data: tuple[Any, ...]) -> None:
    """``-m ir_measures:NumQ`` asks for no measure that needs an alignment (it died with
    ``StopIteration`` in ``engine.evaluate_tables``); it prints the queries evaluated."""
    q_path, r_path, qrels, run = data
    res = rankflavor.evaluate(qrels, run, "ir_measures:NumQ")
    assert len(res) == 0 and res.extras == ("num_q",)
    out = CliRunner().invoke(cli, ["eval", q_path, r_path, "-m", "ir_measures:NumQ", "--format", "trec"])
    assert out.exit_code == 0, out.output
    assert out.stdout == f"{'num_q':<22}\tall\t{res.counts.queries_evaluated}\n"
    assert res.counts.queries_evaluated == (43 if "dl19" in q_path else 10)


# ---------------------------------------------------------------------------------------------
# No metric-name dispatch outside metrics/.

#: Modules being replaced elsewhere that still dispatch on metric names; empty it as they go.
KNOWN_NAME_BRANCHES: set[str] = set()


def _string_literals(node: ast.expr, constants: dict[str, ast.expr]) -> bool:
    """``node`` is a string literal, a container of them, or a module constant bound to one."""
    if isinstance(node, ast.Name) and node.id in constants:
        return _string_literals(constants[node.id], {})
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_string_literals(e, constants) for e in node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.keys) and all(k is not None and _string_literals(k, constants) for k in node.keys)
    return False


def _names_a_metric(node: ast.expr, bare: bool) -> bool:
    """``x.metric``, ``x.spec.name`` or ``spec.name`` (and, if ``bare``, a variable ``metric``):
    an expression holding a canonical metric name."""
    if isinstance(node, ast.Name):
        return bare and node.id == "metric"
    return isinstance(node, ast.Attribute) and (
        node.attr == "metric"
        or (node.attr == "name" and isinstance(node.value, ast.Attribute) and node.value.attr == "spec")
        or (node.attr == "name" and isinstance(node.value, ast.Name) and node.value.id == "spec")
    )


def name_branches(source: str, bare: bool = True) -> list[int]:
    """Lines comparing a metric's name with string literals, or looking it up in a literal table.

    ``bare=False`` ignores variables named ``metric``: in a preset's dialect parser such a
    variable holds the tool's own name being mapped, which is the dialect's business.
    """
    tree = ast.parse(source)
    constants = {t.id: n.value for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                 if isinstance(t, ast.Name)}
    constants |= {n.target.id: n.value for n in tree.body if isinstance(n, ast.AnnAssign) and n.value is not None
                  and isinstance(n.target, ast.Name)}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_names_a_metric(s, bare) for s in sides) and any(_string_literals(s, constants) for s in sides):
                lines.append(node.lineno)
        elif isinstance(node, ast.Subscript) and _names_a_metric(node.slice, bare):
            if _string_literals(node.value, constants):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            if node.args and _names_a_metric(node.args[0], bare) and _string_literals(node.func.value, constants):
                lines.append(node.lineno)
    return sorted(lines)


def test_the_name_branch_finder_finds_them() -> None:
    source = '''
EXPLAINED = ("ndcg", "dcg")
TABLE = {"ndcg": 1}
def f(measure, spec, other, metric):
    if measure.metric == "ndcg": pass
    if measure.metric not in EXPLAINED: pass
    if spec.name in ("num_rel",): pass
    x = TABLE[measure.spec.metric]
    y = TABLE.get(m.metric)
    if measure.metric == other.metric: pass
    if "rel" in measure.spec.knobs: pass
    if "rel" in wanted and metric in ("ndcg", "dcg"): pass
'''
    assert name_branches(source) == [5, 6, 7, 8, 9, 12]
    assert name_branches(source, bare=False) == [5, 6, 7, 8, 9]


def test_no_metric_name_branch_outside_metrics() -> None:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("metrics/"):
            continue
        lines = name_branches(path.read_text(encoding="utf-8"), bare=not rel.startswith("presets/"))
        if lines:
            found[rel] = lines
    unexpected = {f: lines for f, lines in found.items() if f not in KNOWN_NAME_BRANCHES}
    assert not unexpected, f"branches on a metric's name outside metrics/ (ask its MetricSpec): {unexpected}"
    assert set(found) == KNOWN_NAME_BRANCHES, f"no name branch left in {KNOWN_NAME_BRANCHES - set(found)}: unlist it"
