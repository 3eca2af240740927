"""Spread.to_dict, the defect note and the plot, checked from outside: every value of the JSON is
recomputed here from rankflavor.evaluate() under each flavor (and from the grid asked for), the
note from hand-made (presets, defect) lists."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

import rankflavor
from rankflavor.analysis.spread.api import TIE_TOLERANCE, spread
from rankflavor.analysis.spread.result import defect_note
from rankflavor.errors import EvaluationError
from rankflavor.metrics.measure import parse_measure

from .test_spread import random_case

GRID = {"gain": ["linear", "exp2"], "empty": ["zero", "error"]}


def _case():  # type: ignore[no-untyped-def]
    qrels, run_a = random_case(7)  # q1 has nothing relevant: empty=error fails on both runs
    _, run_b = random_case(8)
    runs = {"A": run_a, "B": run_b}
    s = spread(qrels, runs, "ndcg@5", grid=GRID, presets=["spark_triples", "trec_eval"])
    return qrels, runs, s


def _evaluate(qrels, runs, flavors):  # type: ignore[no-untyped-def]
    means = np.full((len(runs), len(flavors)), np.nan)
    errors = {}
    for r, (name, run) in enumerate(runs.items()):
        for j, f in enumerate(flavors):
            try:
                means[r, j] = rankflavor.evaluate(qrels, run, f)[0].mean
            except EvaluationError as e:
                errors[(name, f)] = str(e)
    return means, errors


def _none(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def test_to_dict_every_section_against_evaluate() -> None:
    qrels, runs, s = _case()
    d = json.loads(json.dumps(s.to_dict(), allow_nan=False))  # JSON-ready: NaN must be None
    names = list(runs)
    flavors = [f["flavor"] for f in d["flavors"]]
    means, errors = _evaluate(qrels, runs, flavors)
    assert d["grid"] == GRID

    # flavors: knobs are the grid cell (every cell of the product once), None off the grid
    cells = []
    for f in d["flavors"]:
        m = parse_measure(f["flavor"])
        if f["knobs"] is None:
            assert "grid" not in f["origins"]
            continue
        assert set(f["knobs"]) == set(GRID)
        for knob, value in f["knobs"].items():
            assert str(getattr(m.flavor, knob)) == value
        cells.append(tuple(f["knobs"][k] for k in GRID))
    assert sorted(cells) == sorted(itertools.product(*GRID.values()))
    for j, f in enumerate(d["flavors"]):
        assert f["mean"] == {n: _none(means[r, j]) for r, n in enumerate(names)}
    assert any(v is None for f in d["flavors"] for v in f["mean"].values())

    # which flavors count: all but the one only spark_triples (a known-defect preset) produced
    use = [f["origins"] != ["preset:spark_triples"] for f in d["flavors"]]
    assert [f["in_summary"] for f in d["flavors"]] == use and not all(use)
    um = np.where(use, means, np.nan)

    # knob effects, brute force over the grid
    index = {tuple(f["knobs"][k] for k in GRID): j for j, f in enumerate(d["flavors"]) if f["knobs"]}
    assert [e["knob"] for e in d["knob_effects"]] == list(GRID)
    overall = {}
    for e in d["knob_effects"]:
        knob = e["knob"]
        assert e["values"] == GRID[knob]
        pos = list(GRID).index(knob)
        others = [v for k, v in GRID.items() if k != knob]
        mean_swing, max_swing, by_value = {}, {}, {v: {} for v in GRID[knob]}
        for r, n in enumerate(names):
            swings = []
            for rest in itertools.product(*others):
                vals = []
                for v in GRID[knob]:
                    cell = list(rest)
                    cell.insert(pos, v)
                    x = means[r, index[tuple(cell)]]
                    if not math.isnan(x):
                        vals.append(x)
                if len(vals) >= 2:
                    swings.append(max(vals) - min(vals))
            mean_swing[n] = sum(swings) / len(swings) if swings else None
            max_swing[n] = max(swings) if swings else None
            for v in GRID[knob]:
                vals = [means[r, j] for c, j in index.items() if c[pos] == v and not math.isnan(means[r, j])]
                by_value[v][n] = sum(vals) / len(vals) if vals else None
        assert e["mean_swing"] == pytest.approx(mean_swing, abs=1e-15)
        assert e["max_swing"] == pytest.approx(max_swing, abs=1e-15)
        assert e["by_value"].keys() == by_value.keys()
        for v in by_value:
            assert e["by_value"][v] == pytest.approx(by_value[v], abs=1e-15)
        ok = [x for x in mean_swing.values() if x is not None]
        expected_overall = sum(ok) / len(ok) if ok else None
        assert e["overall"] == pytest.approx(expected_overall, abs=1e-15)
        overall[knob] = expected_overall
    assert any(v is None for e in d["knob_effects"] for x in e["by_value"].values() for v in x.values())
    assert d["most_moving_knob"] == max((k for k in overall if overall[k] is not None), key=overall.__getitem__)

    # pairs: A minus B over the flavors counted and evaluated by both
    ((a, b),) = itertools.combinations(range(len(names)), 2)
    (p,) = d["pairs"]
    diff = um[a] - um[b]
    ok = [j for j in range(len(flavors)) if not math.isnan(diff[j])]
    assert p["min_diff"] == min(diff[j] for j in ok) and p["max_diff"] == max(diff[j] for j in ok)
    assert diff[flavors.index(p["min_flavor"])] == p["min_diff"]
    assert diff[flavors.index(p["max_flavor"])] == p["max_diff"]
    a_better = sum(diff[j] > TIE_TOLERANCE for j in ok)
    b_better = sum(diff[j] < -TIE_TOLERANCE for j in ok)
    assert (p["a_better"], p["b_better"]) == (a_better, b_better)
    assert p["flips"] is bool(a_better > 0 and b_better > 0)

    # orders: per flavor counted and evaluated by every run, the runs best first
    complete = [j for j in range(len(flavors)) if not np.isnan(um[:, j]).any()]
    found: dict[tuple[str, ...], list[str]] = {}
    for j in complete:
        order = tuple(sorted(names, key=lambda n, j=j: (-round(um[names.index(n), j], 12), names.index(n))))
        found.setdefault(order, []).append(flavors[j])
    assert {tuple(o["order"]): o["flavors"] for o in d["orders"]} == found
    assert all(o["n_flavors"] == len(found[tuple(o["order"])]) for o in d["orders"])
    assert d["order_changes"] is (len(found) > 1)

    # errors: the (run, flavor) pairs evaluate() refuses, with its message
    assert errors
    assert {(e["run"], e["flavor"]): e["error"] for e in d["errors"]} == errors


def test_to_dict_orders_that_change() -> None:
    """Two runs whose order depends on the gain: order_changes is true and each order names its flavor."""
    # Same ideal for both runs, so the order is the order of DCG@3:
    #   A = [d1, x, y]:  linear 3,                      exp2 2^3-1 = 7
    #   B = [d2, d3, x]: linear 2 + 2/log2(3) = 3.262,  exp2 3 + 3/log2(3) = 4.893
    # linear puts B first, exp2 puts A first.
    qrels = {"q": {"d1": 3.0, "d2": 2.0, "d3": 2.0}}
    runs = {"A": {"q": {"d1": 3.0, "x": 2.0, "y": 1.0}}, "B": {"q": {"d2": 3.0, "d3": 2.0, "x": 1.0}}}
    s = spread(qrels, runs, "ndcg@3", grid={"gain": ["linear", "exp2"]}, presets=False)
    d = json.loads(json.dumps(s.to_dict(), allow_nan=False))
    flavors = [f["flavor"] for f in d["flavors"]]
    means, _ = _evaluate(qrels, runs, flavors)
    found: dict[tuple[str, ...], list[str]] = {}
    for j, f in enumerate(flavors):
        order = ("A", "B") if means[0, j] >= means[1, j] else ("B", "A")
        found.setdefault(order, []).append(f)
    assert len(found) == 2
    assert {tuple(o["order"]): (o["n_flavors"], o["flavors"]) for o in d["orders"]} == \
        {o: (len(fl), fl) for o, fl in found.items()}
    assert d["order_changes"] is True
    (p,) = d["pairs"]
    assert p["flips"] is True and p["a_better"] == 1 and p["b_better"] == 1


def test_defect_note_joins_names_and_reasons() -> None:
    flavors = [(("p2", "p1"), "reason one"), ((), None), (("p3",), "reason two"), (("p1",), "reason one")]
    kept = defect_note(flavors, True, "the summaries")
    assert kept == ("the summaries include 3 flavor(s) of preset(s) that reproduce a known defect "
                    "(p1, p2, p3): reason one; reason two")
    left = defect_note(flavors, False, "the summaries")
    assert left == ("3 flavor(s) only from preset(s) that reproduce a known defect (p1, p2, p3) are listed "
                    "but left out of the summaries (include_defects / --include-defects counts them): "
                    "reason one; reason two")
    assert defect_note([((), None)], False, "x") is None


def test_plot_draws_each_run_mean_per_flavor() -> None:
    pytest.importorskip("plotly")
    _, runs, s = _case()
    fig = s.plot()
    assert [t.name for t in fig.data] == list(runs)
    for r, trace in enumerate(fig.data):
        ys = sorted(y for y in trace.y if y is not None and not math.isnan(y))
        assert ys == sorted(x for x in s.means[r] if not math.isnan(x))


def test_with_defects_switches_the_defect_flavors_in_and_out() -> None:
    """with_defects() counts the defect preset's flavor in the summaries; with_defects(False)
    leaves it out again: the flavors excluded are exactly those with a defect, by the rule."""
    _, _, s = _case()
    defects = [f.flavor for f in s.flavors if f.defect is not None]
    assert defects  # (spark_triples reproduces a known defect)
    assert [f.flavor for f in s.excluded] == defects
    counted = s.with_defects()
    assert counted.include_defects is True and counted.excluded == []
    assert counted.in_summary.tolist() == [True] * len(s.flavors)
    again = counted.with_defects(False)
    assert again.include_defects is False and [f.flavor for f in again.excluded] == defects
