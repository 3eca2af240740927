"""NDCG and DCG on PyTorch tensors, for the validation loop of a ranking model.

A batch is padded: ``scores`` and ``labels`` of shape ``(n_queries, n_docs)``, with a ``mask``
(True = a real candidate) or ``-inf`` scores marking the padding. Everything is computed with torch
operations on the tensors' own device (CPU or GPU): the model's output is never copied to NumPy.
The only NumPy arrays are the flavor's constants (the discount denominators of
:func:`rankflavor.kernels.discount_denominators`), made once per call and moved to the device.

The flavor is a measure string as everywhere else (``"ndcg@10[gain=exp2]"``, ``"lightgbm:ndcg@10"``)
or ``k`` and knobs, and the value is :func:`rankflavor.evaluate`'s on the same candidates
(``tests/test_torch_metrics.py`` checks it to 1e-6 in float32). In a batch every candidate is
labelled, so ``ideal=global`` and ``ideal=local`` are one list. Knobs that need more than a padded
batch holds are refused with a :class:`~rankflavor.errors.FlavorError`: ``ideal=recall@K`` and
``as_supplied``, ``depth``, ``self_hits=drop``. Ties follow the flavor: ``input_order`` and
``docno_asc`` (column order: a candidate's docno is its column), ``docno_desc`` (later column
first), ``pessimistic``/``optimistic`` (lower/higher label first, then later column) and
``averaged`` (each tie group earns its mean gain, McSherry-Najork).

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

from typing import TYPE_CHECKING, Any

from .errors import EvaluationError, FlavorError, InputError, UsageError
from .kernels import discount_denominators
from .metrics import lookup

if TYPE_CHECKING:
    import torch

    from .measure import Measure

#: Knob values a padded batch can be scored under; any other value is refused.
_REFUSED = {
    "depth": lambda f: f.depth_limit is not None,
    "self_hits": lambda f: f.self_hits != "keep",
    "ideal": lambda f: f.ideal not in ("global", "local", "max"),
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
        True for a real candidate.
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
    """
    return _score("ndcg", scores, labels, k, mask, measure, preset, knobs)


def dcg(scores: torch.Tensor, labels: torch.Tensor, k: int | None = None, *, mask: torch.Tensor | None = None,
        measure: str | None = None, preset: str | None = None, **knobs: Any) -> torch.Tensor:
    """DCG of each query of a padded batch; arguments as :func:`ndcg`."""
    return _score("dcg", scores, labels, k, mask, measure, preset, knobs)


def _measure(kind: str, k: int | None, measure: str | None, preset: str | None, knobs: dict[str, Any]) -> Measure:
    from .arrays import _measure as array_measure

    m = array_measure(kind, k, preset, measure, False, knobs)
    if m.spec is not lookup(kind):
        raise FlavorError(f"{measure!r} is {m.spec.name}; rankflavor.torch.{kind} computes {kind} "
                          "(rankflavor.torch has ndcg and dcg)")
    for knob, refused in _REFUSED.items():
        if knob in m.spec.knobs and refused(m.flavor):
            raise FlavorError(f"{m.display}: {knob}={getattr(m.flavor, knob)} is not supported on a padded batch "
                              "(rankflavor.torch); evaluate with rankflavor.evaluate or rankflavor.ndcg_score")
    return m


def _score(kind: str, scores: torch.Tensor, labels: torch.Tensor, k: int | None, mask: torch.Tensor | None,
           measure: str | None, preset: str | None, knobs: dict[str, Any]) -> torch.Tensor:
    import torch

    m = _measure(kind, k, measure, preset, knobs)
    f = m.flavor
    if scores.ndim != 2 or labels.shape != scores.shape:
        raise UsageError(f"scores and labels must be tensors of one shape (n_queries, n_docs); received "
                         f"{tuple(scores.shape)} and {tuple(labels.shape)}")
    if mask is None:
        mask = scores > float("-inf")
    elif mask.shape != scores.shape or mask.dtype != torch.bool:
        raise UsageError(f"mask must be a bool tensor of shape {tuple(scores.shape)}; received {mask.dtype} "
                         f"of shape {tuple(mask.shape)}")
    device = scores.device
    out_dtype = scores.dtype if scores.is_floating_point() else torch.float64
    n_d = scores.shape[1]
    grade = labels.to(torch.float64)
    if bool(torch.isnan(scores[mask]).any()) or bool(torch.isnan(grade[mask]).any()):
        raise UsageError("scores and labels must not be NaN where mask is True")
    grade, judged = _grades(grade, mask, m)
    if f.singletons == "error":
        single = torch.nonzero(mask.sum(1) == 1).flatten().tolist()
        if single:
            raise EvaluationError(
                f"{len(single)} query(ies) rank a single document (batch rows {', '.join(map(str, single[:5]))}"
                f"{'...' if len(single) > 5 else ''}) and {m.name} says singletons=error; choose singletons=keep "
                "(scikit-learn refuses one-document lists)")
    key = scores.to(torch.float32 if f.precision == "float32" else torch.float64)
    key = torch.where(mask, key, torch.full_like(key, float("-inf")))
    order = _order(key, grade, mask, str(f.ties))
    ranked_key = key.gather(1, order)
    ranked_mask = mask.gather(1, order)
    gains = _gain(grade, judged, m)
    ranked_gain = gains.gather(1, order)
    if f.ties == "averaged":
        ranked_gain = _tie_averaged(ranked_gain, ranked_key, ranked_mask)
    n_ret = mask.sum(1)
    denom = torch.as_tensor(discount_denominators(f, max(n_d, m.k or 0, 1)), dtype=torch.float64, device=device)
    ranks = torch.arange(1, n_d + 1, device=device)
    cut = ranks <= (m.k if m.k is not None else n_d)
    dcg_value = torch.where(ranked_mask & cut, ranked_gain / denom[1:n_d + 1], 0.0).sum(1)
    if kind == "dcg":
        return dcg_value.to(out_dtype)
    slots = _ideal_slots(m, n_ret, n_d)
    if f.ideal == "max":
        if f.top_grade is None:
            raise FlavorError("ideal=max needs the top grade of the label scale: set max_grade=G")
        g_top = _gain(torch.tensor([[float(f.top_grade)]], dtype=torch.float64, device=device),
                      torch.ones((1, 1), dtype=torch.bool, device=device), m)[0, 0]
        cum = torch.cat([torch.zeros(1, dtype=torch.float64, device=device), torch.cumsum(g_top / denom[1:], 0)])
        longest = torch.where(torch.isinf(slots), n_ret.to(torch.float64), slots).to(torch.int64)
        idcg = cum[longest.clamp(max=len(cum) - 1)]
    else:
        ideal = torch.sort(torch.where(mask & (gains > 0), gains, 0.0), dim=1, descending=True, stable=True).values
        keep = ranks.unsqueeze(0) <= slots.unsqueeze(1)
        idcg = torch.where(keep & (ideal > 0), ideal / denom[1:n_d + 1], 0.0).sum(1)
    empty = idcg <= 0
    value = torch.where(empty, 0.0, dcg_value / torch.where(empty, 1.0, idcg))
    return _empty(value, empty, m).to(out_dtype)


def _grades(grade: torch.Tensor, mask: torch.Tensor, m: Measure) -> tuple[torch.Tensor, torch.Tensor]:
    """Grades and the judged flag under ``fractional``, ``negatives`` and ``max_grade``."""
    import torch

    f = m.flavor
    real = grade[mask]
    fractional = real != torch.trunc(real)
    if f.fractional == "error" and bool(fractional.any()):
        raise InputError("labels", None, f"{int(fractional.sum())} label(s) are not whole numbers and the flavor "
                         "says fractional=error")
    if f.fractional == "truncate":
        grade = torch.trunc(grade) + 0.0
    negative = mask & (grade < 0)
    if f.negatives == "error" and bool(negative.any()):
        raise InputError("labels", None, f"{int(negative.sum())} label(s) are negative and the flavor says "
                         "negatives=error; use negatives=unjudged or negatives=zero")
    top = f.top_grade
    if top is not None and bool((mask & (grade > top)).any()):
        raise InputError("labels", None, f"{int((mask & (grade > top)).sum())} label(s) are above max_grade="
                         f"{top:g}; {m.display} rejects them as its tool does")
    if f.negatives == "zero":
        return torch.where(mask, grade.clamp(min=0.0), 0.0), mask
    judged = mask & ~negative
    return torch.where(judged, grade, 0.0), judged


def _gain(grade: torch.Tensor, judged: torch.Tensor, m: Measure) -> torch.Tensor:
    """:func:`rankflavor.kernels.gain` on tensors."""
    import torch

    f = m.flavor
    if f.gain == "linear":
        out = grade.clone()
    elif f.gain == "exp2":
        out = torch.exp2(grade) - 1.0
    elif f.gain == "binary":
        out = (grade >= f.rel_threshold).to(torch.float64)
    else:
        out = grade.clone()
        for g, v in f.gain_table or ():
            out = torch.where(grade == g, torch.full_like(out, v), out)
    if f.grade_floor is not None:
        out = torch.where(grade < f.grade_floor, 0.0, out)
    return torch.where(judged, out, 0.0)


def _order(key: torch.Tensor, grade: torch.Tensor, mask: torch.Tensor, ties: str) -> torch.Tensor:
    """Column indices by score descending, ties by the rule (padding last)."""
    import torch

    n_d = key.shape[1]
    if ties in ("input_order", "docno_asc"):
        return torch.sort(key, dim=1, descending=True, stable=True).indices
    # docno descending first (later column first), then the grade for the grade rules, then the
    # score; each sort stable, so the earlier keys break the later key's ties.
    perm = torch.arange(n_d - 1, -1, -1, device=key.device).expand_as(key)
    if ties in ("pessimistic", "optimistic"):
        g = grade.gather(1, perm)
        by_grade = torch.sort(g, dim=1, descending=ties == "optimistic", stable=True).indices
        perm = perm.gather(1, by_grade)
    by_score = torch.sort(key.gather(1, perm), dim=1, descending=True, stable=True).indices
    return perm.gather(1, by_score)


def _tie_averaged(gain: torch.Tensor, key: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Every ranked candidate earns the mean gain of its run of equal scores."""
    import torch

    n_q, n_d = gain.shape
    new = torch.ones_like(mask)
    new[:, 1:] = key[:, 1:] != key[:, :-1]
    group = torch.cumsum(new.reshape(-1).to(torch.int64), 0) - 1  # ids across the whole batch
    flat_gain = torch.where(mask, gain, 0.0).reshape(-1)
    sums = torch.zeros(int(group[-1]) + 1 if len(group) else 0, dtype=gain.dtype, device=gain.device)
    sums.index_add_(0, group, flat_gain)
    sizes = torch.zeros_like(sums).index_add_(0, group, mask.reshape(-1).to(gain.dtype))
    mean = sums / sizes.clamp(min=1.0)
    return mean[group].reshape(n_q, n_d)


def _ideal_slots(m: Measure, n_ret: torch.Tensor, n_d: int) -> torch.Tensor:
    """Per query, the ideal slots that count (``ideal_cut``), as float (inf: all)."""
    import torch

    f = m.flavor
    if f.ideal_cut == "none":
        return torch.full(n_ret.shape, float("inf"), dtype=torch.float64, device=n_ret.device)
    limit = float("inf") if m.k is None else float(m.k)
    if f.ideal_cut == "hits":
        return torch.clamp(n_ret.to(torch.float64), max=limit)
    return torch.full(n_ret.shape, limit, dtype=torch.float64, device=n_ret.device)


def _empty(value: torch.Tensor, empty: torch.Tensor, m: Measure) -> torch.Tensor:
    """The ``empty`` policy on queries with nothing to find (IDCG = 0)."""
    import torch

    policy = m.flavor.empty
    if policy == "error" and bool(empty.any()):
        raise InputError("labels", None, f"{int(empty.sum())} query(ies) have nothing relevant and the flavor "
                         "says empty=error")
    fill = {"one": 1.0, "nan": float("nan"), "skip": float("nan")}.get(str(policy))
    return value if fill is None else torch.where(empty, fill, value)


__all__ = ["dcg", "ndcg"]
