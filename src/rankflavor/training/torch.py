"""NDCG and DCG on PyTorch tensors, for the validation loop of a ranking model.

A batch is padded: ``scores`` and ``labels`` of shape ``(n_queries, n_docs)``, with a ``mask``
(True = a real candidate) or ``-inf`` scores marking the padding. Everything is computed with torch
operations on the tensors' own device (CPU or GPU): the model's output is never copied to NumPy.
The only NumPy arrays are the flavor's constants (the discount denominators of
:func:`rankflavor.metrics.gains.discount_denominators` for the batch's columns, the top grade's gain),
made once per call and moved to the device, and under ``ideal=max`` the ideal DCG of the top
grade's gain over each possible count of slots (k of them, whatever the batch holds, when cut at
k alone), summed by the engine's :func:`rankflavor.metrics.ndcg.top_grade_sums`.

The flavor is a measure string as everywhere else (``"ndcg@10[gain=exp2]"``, ``"lightgbm:ndcg@10"``)
or ``k`` and knobs, and the value is :func:`rankflavor.evaluate`'s on the same candidates: every
candidate judged with its label, named by its column (so docno order is column order), each row
a query. This module holds no rule of its own. Each knob's value is looked up in the engine's own
table (:data:`rankflavor.metrics.gains.GAIN_FORMULAS`, :data:`rankflavor.order.grades.FRACTIONAL` and
``NEGATIVES``, :data:`rankflavor.order.ties.TIE_TABLE`, :data:`rankflavor.order.strategy.SCORE_DTYPES`
and ``UNJUDGED_ROWS``, :data:`rankflavor.metrics.ndcg.IDEAL_SOURCES` and ``IDEAL_CUTS``,
:data:`rankflavor.engine.aggregate.EMPTY_POLICY` and ``SINGLETONS_POLICY``) and only what the table says
is translated into tensor operations here; an entry without a translation is refused with a
:class:`~rankflavor.errors.FlavorError` naming the knob, never computed another way. The errors
are the engine's, with its messages: :class:`~rankflavor.errors.InputError` for labels a grade
policy refuses, :class:`~rankflavor.errors.EvaluationError` for a query ``singletons=error`` or
``empty=error`` refuses (rows named ``batch row i``).

What a padded batch cannot hold is refused (:data:`BATCH_KNOBS`): ``ideal=as_supplied`` (a batch
has no file order of judgments), ``self_hits=drop`` (no ids), ``order=rank`` (a batch has scores),
``raters`` (labels are not aggregated ratings), ``sources`` (a batch's labels name no label
source, :mod:`rankflavor.io.labels`). Knobs a batch cannot tell apart (every candidate
is labelled once, every query has candidates) take any value: ``duplicates``, ``missing``,
``run_only``, ``unjudged_grade``. ``tests/training/test_torch_metrics.py`` compares every value of every knob
with the engine on random batches.

Examples
--------
>>> import torch
>>> scores = torch.tensor([[0.9, 0.8, 0.1, 0.7], [0.3, 0.2, 0.5, float("-inf")]])
>>> labels = torch.tensor([[3.0, 2.0, 3.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
>>> [round(v, 4) for v in ndcg(scores, labels, k=3).tolist()]   # trec_eval's flavor
[0.7232, 0.5]
>>> [round(v, 4) for v in ndcg(scores, labels, measure="lightgbm:ndcg@3").tolist()]
[0.6885, 0.5]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rankflavor.engine.aggregate import EMPTY_POLICY, SINGLETONS_POLICY, policy_error
from rankflavor.errors import FlavorError, InputError, UsageError
from rankflavor.flavor.flavor import KNOBS
from rankflavor.metrics import lookup
from rankflavor.metrics.gains import GAIN_FORMULAS, discount_denominators, gain
from rankflavor.metrics.ndcg import IDEAL_CUTS, IDEAL_SOURCES, above_scale, top_grade_sums, top_value
from rankflavor.order.grades import FRACTIONAL, NEGATIVES, fractional_error, negatives_error
from rankflavor.order.strategy import SCORE_DTYPES, UNJUDGED_ROWS, Ordering
from rankflavor.order.ties import TIE_TABLE

if TYPE_CHECKING:
    import torch

    from rankflavor.flavor.flavor import Flavor
    from rankflavor.metrics.measure import Measure

#: How a padded batch holds each knob NDCG and DCG read: ``mapped`` (its value is looked up in the
#: engine's table and translated here; a value whose entry has no translation is refused), or
#: ``inert`` (nothing it decides can happen in a batch: any value, the same numbers). A knob not
#: listed is held at its default only: any other value is refused, so a knob added to the engine
#: is refused here until it is mapped.
BATCH_KNOBS: dict[str, str] = {
    "gain": "mapped", "rel": "mapped", "discount": "mapped", "min_grade": "mapped", "max_grade": "mapped",
    "ideal": "mapped", "ideal_cut": "mapped", "negatives": "mapped", "fractional": "mapped", "ties": "mapped",
    "precision": "mapped", "depth": "mapped", "unjudged": "mapped", "singletons": "mapped", "empty": "mapped",
    # every candidate is labelled (pooled) and listed once, and every query has candidates
    "unjudged_grade": "inert", "duplicates": "inert", "missing": "inert", "run_only": "inert",
}


def ndcg(scores: torch.Tensor, labels: torch.Tensor, k: int | None = None, *, mask: torch.Tensor | None = None,
         measure: str | None = None, preset: str | None = None, **knobs: Any) -> torch.Tensor:
    """NDCG of each query of a padded batch.

    Parameters
    ----------
    scores : tensor (n_queries, n_docs)
        Model scores; ``-inf`` marks padding when no ``mask`` is given.
    labels : tensor (n_queries, n_docs)
        Graded labels (padding: any value).
    k : int, optional
        Cutoff; None = the whole list. Or give ``measure``.
    mask : bool tensor (n_queries, n_docs), optional
        True for a real candidate; every row needs one.
    measure : str, optional
        A measure string naming one NDCG (``"ndcg@10[gain=exp2]"``, ``"xgboost:ndcg@10"``).
    preset : str, optional
        The preset of ``measure`` without a prefix, or of ``k`` and the knobs; None: rankflavor's
        defaults.
    **knobs
        Flavor knobs (``gain="exp2"``, ``ties="input_order"``).

    Returns
    -------
    tensor (n_queries,)
        Per query, on the input's device, float64 or the scores' float dtype; NaN where
        ``empty=nan`` or ``empty=skip`` leaves a query without a value.

    Raises
    ------
    FlavorError
        A knob value a padded batch cannot hold (named).
    InputError
        Labels the flavor's grade policies refuse (``fractional=error``, ``negatives=error``,
        above ``max_grade``).
    EvaluationError
        A query refused by ``singletons=error`` or ``empty=error``.
    UsageError
        Tensors of the wrong shape, a row without a candidate, non-finite values.
    """
    return _score("ndcg", scores, labels, k, mask, measure, preset, knobs)


def dcg(scores: torch.Tensor, labels: torch.Tensor, k: int | None = None, *, mask: torch.Tensor | None = None,
        measure: str | None = None, preset: str | None = None, **knobs: Any) -> torch.Tensor:
    """DCG of each query of a padded batch; arguments as :func:`ndcg`."""
    return _score("dcg", scores, labels, k, mask, measure, preset, knobs)


# -- the flavor, translated -------------------------------------------------------------------------

#: The tensor translation of each gain formula (:data:`rankflavor.metrics.gains.GAIN_FORMULAS`).
_GAINS: dict[str, Callable[[torch.Tensor, Flavor], torch.Tensor]] = {
    "grade": lambda grade, f: grade.clone(),
    "exp2m1": lambda grade, f: _torch().exp2(grade) - 1.0,
    "at_least_rel": lambda grade, f: (grade >= f.rel_threshold).to(grade.dtype),
    "table": lambda grade, f: _table_gain(grade, f),
}

#: What is translated of each other table: the entries this module computes.
_FRACTIONAL = ("keep", "truncate", "refuse")
_NEGATIVES = ("unjudged", "zero", "refuse")
_TIE_KEYS = ("docno", "grade")
_UNJUDGED_ROWS = ("keep", "drop")
_IDEALS = ("judgments", "rows", "top_rows", "top_grade")
_SINGLETONS = ("keep", "refuse")
_EMPTY = ("value", "skip", "refuse")


@dataclass(frozen=True)
class _Plan:
    """A measure's flavor as the entries of the engine's tables that this module translates."""

    measure: Measure
    gain: str
    fractional: str
    negatives: str
    ordering: Ordering
    score_dtype: str
    ideal: str | None
    cut_at_k: bool
    cut_at_hits: bool
    singletons: str
    empty: tuple[str, float] | None


def _plan(m: Measure) -> _Plan:
    """Look every knob of ``m`` up in the engine's tables; refuse what has no translation here."""
    import torch

    f = m.flavor
    spec = m.spec
    read = [*spec.knobs, *(("empty",) if spec.uses_empty else ())]
    for knob in read:
        if knob not in BATCH_KNOBS and str(getattr(f, knob)) != KNOBS[knob].default:
            _refuse(m, knob)
    ordering = Ordering.of(f)

    def entry(knob: str, value: Any, translated: tuple[str, ...] | Callable[[Any], bool]) -> Any:
        ok = translated(value) if callable(translated) else value in translated
        if not ok:
            _refuse(m, knob)
        return value

    tie = TIE_TABLE.get(str(f.ties))
    if tie is None or not all(what in _TIE_KEYS for what, _ in tie.keys):
        _refuse(m, "ties")
    dtype = entry("precision", SCORE_DTYPES.get(str(f.precision)),
                  lambda name: isinstance(getattr(torch, str(name), None), torch.dtype)
                  and getattr(torch, str(name)).is_floating_point)
    entry("unjudged", UNJUDGED_ROWS.get(str(f.unjudged)), _UNJUDGED_ROWS)
    ideal = entry("ideal", IDEAL_SOURCES.get(str(f.ideal_kind)), _IDEALS) if "ideal" in spec.knobs else None
    at_k, at_hits = IDEAL_CUTS[f.ideal_cut] if "ideal_cut" in spec.knobs else (True, False)
    return _Plan(
        measure=m,
        gain=entry("gain", GAIN_FORMULAS.get(str(f.gain_kind)), tuple(_GAINS)),
        fractional=entry("fractional", FRACTIONAL.get(str(f.fractional)), _FRACTIONAL),
        negatives=entry("negatives", NEGATIVES.get(str(f.negatives)), _NEGATIVES),
        ordering=ordering,
        score_dtype=dtype,
        ideal=ideal,
        cut_at_k=at_k,
        cut_at_hits=at_hits,
        singletons=entry("singletons", SINGLETONS_POLICY.get(str(f.singletons)), _SINGLETONS),
        empty=(entry("empty", EMPTY_POLICY.get(str(f.empty)), lambda e: e is not None and e[0] in _EMPTY)
               if spec.uses_empty else None),
    )


def _refuse(m: Measure, knob: str) -> None:
    raise FlavorError(f"{m.display}: {knob}={getattr(m.flavor, knob)} is not supported on a padded batch "
                      "(rankflavor.torch); evaluate with rankflavor.evaluate or rankflavor.ndcg_score")


def _measure(kind: str, k: int | None, measure: str | None, preset: str | None, knobs: dict[str, Any]) -> Measure:
    from rankflavor.training.arrays import _measure as array_measure

    m = array_measure(kind, k, preset, measure, False, knobs)
    if m.spec is not lookup(kind):
        raise FlavorError(f"{measure!r} is {m.spec.name}; rankflavor.torch.{kind} computes {kind} "
                          "(rankflavor.torch has ndcg and dcg)")
    return m


# -- the computation ----------------------------------------------------------------------------------


def _score(kind: str, scores: torch.Tensor, labels: torch.Tensor, k: int | None, mask: torch.Tensor | None,
           measure: str | None, preset: str | None, knobs: dict[str, Any]) -> torch.Tensor:
    import torch

    m = _measure(kind, k, measure, preset, knobs)
    plan = _plan(m)
    mask = _checked(scores, labels, mask)
    out_dtype = scores.dtype if scores.is_floating_point() else torch.float64
    n_d = scores.shape[1]
    # the ranking: grade policies (refusals first, as the engine's ranker), then the order
    grade, judged = _grades(labels.to(torch.float64), mask, plan)
    top = m.flavor.top_grade
    above = mask & judged & (grade > top) if top is not None else None
    if above is not None and bool(above.any()):
        raise InputError("labels", None, above_scale(m, int(above.sum()), float(grade[mask & judged].max())))
    order, kept, key = _rank(scores, grade, judged, mask, plan)
    gains = _gain(grade, judged, m)
    ranked_gain = gains.gather(1, order)
    if plan.ordering.averaged:
        ranked_gain = _tie_averaged(ranked_gain, key.gather(1, order), kept)
    n_ret = kept.sum(1)
    # sized by the rows read (k may be 2**53); ideal=max's k slots are summed without a table
    denom = torch.as_tensor(discount_denominators(m.flavor, max(n_d, 1)), dtype=torch.float64, device=scores.device)
    ranks = torch.arange(1, n_d + 1, device=scores.device)
    in_cut = kept & (ranks <= (m.k if m.k is not None else n_d))
    value = torch.where(in_cut, ranked_gain / denom[1:n_d + 1], 0.0).sum(1)
    empty = None
    if plan.ideal is not None:
        ideal = _idcg(plan, gains, mask & judged, order, kept, n_ret, denom)
        empty = ideal <= 0
        value = torch.where(empty, 0.0, value / torch.where(empty, 1.0, ideal))
    # the aggregation's policies, in the engine's order
    if plan.singletons == "refuse":
        _refuse_rows(m, mask.sum(1) == 1, "singletons")
    if plan.empty is not None and empty is not None:
        action, fill = plan.empty
        if action == "refuse":
            _refuse_rows(m, empty, "empty")
        value = torch.where(empty, fill, value)  # value; or skip: no value, NaN
    return value.to(out_dtype)


def _checked(scores: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """The mask of real candidates, after checking the tensors hold a batch."""
    import torch

    if scores.ndim != 2 or labels.shape != scores.shape:
        raise UsageError(f"scores and labels must be tensors of one shape (n_queries, n_docs); received "
                         f"{tuple(scores.shape)} and {tuple(labels.shape)}")
    if mask is None:
        mask = scores > float("-inf")
    elif mask.shape != scores.shape or mask.dtype != torch.bool:
        raise UsageError(f"mask must be a bool tensor of shape {tuple(scores.shape)}; received {mask.dtype} "
                         f"of shape {tuple(mask.shape)}")
    empty_rows = ~mask.any(1)
    if bool(empty_rows.any()):
        rows = torch.nonzero(empty_rows).flatten()[:5]
        raise UsageError(f"{int(empty_rows.sum())} batch row(s) hold no candidate (rows "
                         f"{', '.join(str(int(r)) for r in rows)}...): a query needs one; leave such rows out")
    for name, t in (("scores", scores), ("labels", labels)):
        if not bool(torch.isfinite(t.to(torch.float64)[mask]).all()):
            raise UsageError(f"{name} must be finite where mask is True")
    return mask


def _grades(grade: torch.Tensor, mask: torch.Tensor, plan: _Plan) -> tuple[torch.Tensor, torch.Tensor]:
    """Grades and the judged flag under the ``fractional`` and ``negatives`` entries
    (:data:`rankflavor.order.grades.FRACTIONAL`, ``NEGATIVES``), refusals as the engine's."""
    import torch

    fractional = mask & (grade != torch.trunc(grade))
    n_fractional = int(fractional.sum())
    if plan.fractional == "refuse" and n_fractional:
        raise InputError("labels", None, fractional_error(n_fractional))
    if plan.fractional == "truncate":
        grade = torch.trunc(grade) + 0.0  # toward zero: -0.5 becomes a judged 0
    negative = mask & (grade < 0)
    if plan.negatives == "refuse" and bool(negative.any()):
        raise InputError("labels", None, negatives_error(int(negative.sum())))
    if plan.negatives == "zero":
        return torch.where(mask, grade.clamp(min=0.0), 0.0), mask
    judged = mask & ~negative
    return torch.where(judged, grade, 0.0), judged


def _gain(grade: torch.Tensor, judged: torch.Tensor, m: Measure) -> torch.Tensor:
    """:func:`rankflavor.metrics.gains.gain` on tensors: the formula of :data:`~rankflavor.metrics.gains.GAIN_FORMULAS`,
    0 below ``min_grade`` and where unjudged."""
    f = m.flavor
    out = _GAINS[GAIN_FORMULAS[str(f.gain_kind)]](grade, f)
    if f.grade_floor is not None:
        out = out.masked_fill(grade < f.grade_floor, 0.0)
    return out.masked_fill(~judged, 0.0)


def _table_gain(grade: torch.Tensor, f: Flavor) -> torch.Tensor:
    out = grade.clone()
    for g, v in f.gain_table or ():
        out = out.masked_fill(grade == g, v)
    return out


def _rank(scores: torch.Tensor, grade: torch.Tensor, judged: torch.Tensor, mask: torch.Tensor,
          plan: _Plan) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Column indices in rank order, which ranked positions are kept (``depth``, condensing), and
    the scores at the flavor's precision (padding last, at -inf)."""
    import torch

    key = scores.to(getattr(torch, plan.score_dtype))
    key = torch.where(mask, key, torch.full_like(key, float("-inf")))
    n_q, n_d = key.shape
    column = torch.arange(n_d, device=key.device).expand(n_q, n_d)
    # Stable sorts from the least significant key up: the tie rule's keys (a candidate's docno
    # is its column; file order is column order), then the score.
    order = column
    for what, descending in reversed(TIE_TABLE[str(plan.ordering.ties)].keys):
        by = column if what == "docno" else grade
        order = order.gather(1, torch.sort(by.gather(1, order), dim=1, descending=descending, stable=True).indices)
    order = order.gather(1, torch.sort(key.gather(1, order), dim=1, descending=True, stable=True).indices)
    kept = mask.gather(1, order)
    o = plan.ordering
    if o.depth is not None:  # the top N of each query (trec_eval -M), then condensing
        kept = kept & (torch.cumsum(kept, 1) <= o.depth)
    if o.condensed:  # unjudged rows leave; the ranks close up
        kept = kept & judged.gather(1, order)
    # kept rows lead, the ranks closed up: padding sorts last by its -inf key, but so may a candidate
    # whose score is -inf at the flavor's precision (a float64 score beyond float32's range)
    close_up = torch.sort((~kept).to(torch.uint8), dim=1, stable=True).indices
    order, kept = order.gather(1, close_up), kept.gather(1, close_up)
    return order, kept, key


def _tie_averaged(gain: torch.Tensor, key: torch.Tensor, kept: torch.Tensor) -> torch.Tensor:
    """Every kept candidate earns the mean gain of its run of equal scores (kept rows lead)."""
    import torch

    n_q, n_d = gain.shape
    new = torch.ones_like(kept)
    new[:, 1:] = key[:, 1:] != key[:, :-1]
    group = torch.cumsum(new.reshape(-1).to(torch.int64), 0) - 1  # ids across the whole batch
    flat_gain = torch.where(kept, gain, 0.0).reshape(-1)
    sums = torch.zeros(int(group[-1]) + 1 if len(group) else 0, dtype=gain.dtype, device=gain.device)
    sums.index_add_(0, group, flat_gain)
    sizes = torch.zeros_like(sums).index_add_(0, group, kept.reshape(-1).to(gain.dtype))
    mean = sums / sizes.clamp(min=1.0)
    return mean[group].reshape(n_q, n_d)


def _idcg(plan: _Plan, gains: torch.Tensor, usable: torch.Tensor, order: torch.Tensor, kept: torch.Tensor,
          n_ret: torch.Tensor, denom: torch.Tensor) -> torch.Tensor:
    """IDCG per query from the ideal's source (:data:`~rankflavor.metrics.ndcg.IDEAL_SOURCES`)
    and cut (:data:`~rankflavor.metrics.ndcg.IDEAL_CUTS`)."""
    import torch

    m = plan.measure
    f = m.flavor
    n_d = gains.shape[1]
    limit = float(m.k) if plan.cut_at_k and m.k is not None else float("inf")
    cut = torch.full(n_ret.shape, limit, dtype=torch.float64, device=gains.device)
    if plan.cut_at_hits:
        cut = torch.clamp(n_ret.to(torch.float64), max=limit)
    if plan.ideal == "top_grade":
        g_top = top_value(m, lambda grade, judged: gain(grade, judged, f))
        # the engine's own running sums (metrics.ndcg.top_grade_sums), flavor constants made on the
        # host: cut at k alone, every row has k slots (k may exceed the batch); else at most n_d
        if plan.cut_at_k and not plan.cut_at_hits and m.k is not None:
            return torch.full(n_ret.shape, float(top_grade_sums(m, g_top, np.array([m.k]))[0]), dtype=torch.float64,
                              device=gains.device)
        table = torch.as_tensor(top_grade_sums(m, g_top, np.arange(n_d + 1)), dtype=torch.float64, device=gains.device)
        slots = torch.where(torch.isinf(cut), n_ret.to(torch.float64), cut).to(torch.int64)
        return table[slots]
    if plan.ideal == "judgments":  # every usable judgment: every labelled candidate
        candidates = torch.where(usable, gains, 0.0)
    else:  # the ranked rows kept, or those down to rank K
        ranked = torch.where(kept, gains.gather(1, order), 0.0)
        depth = f.recall_depth if plan.ideal == "top_rows" else None
        candidates = ranked if depth is None else ranked.masked_fill(torch.arange(n_d, device=gains.device) >= depth, 0.0)
    ideal = torch.sort(candidates, dim=1, descending=True).values
    slot = torch.arange(1, n_d + 1, device=gains.device)
    counted = (ideal > 0) & (slot.unsqueeze(0) <= cut.unsqueeze(1))
    return torch.where(counted, ideal / denom[1:n_d + 1], 0.0).sum(1)


def _refuse_rows(m: Measure, rows: torch.Tensor, knob: str) -> None:
    """The engine's refusal of ``knob``'s ``error`` value, naming batch rows."""
    import torch

    if bool(rows.any()):
        first = torch.nonzero(rows).flatten()[:5]
        raise policy_error([f"batch row {int(i)}" for i in first], int(rows.sum()), m, knob)


def _torch() -> Any:
    import torch

    return torch


__all__ = ["BATCH_KNOBS", "dcg", "ndcg"]
