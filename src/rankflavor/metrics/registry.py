"""The metric registry: what each metric is called, which flavor knobs it reads, its kernel.

Adding a metric = one module that calls :func:`register` with a :class:`MetricSpec`, plus its
tests. Nothing else dispatches on metric names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..measure import Measure
    from ..order import Ranked

#: Knobs that decide which documents are ranked and in which order; every per-query metric reads them.
INPUT_KNOBS: tuple[str, ...] = (
    "unjudged", "negatives", "ties", "precision", "depth", "duplicates", "missing", "self_hits", "run_only",
    "fractional",
)

#: Summary kinds a :class:`MetricSpec` may declare.
SUMMARIES: tuple[str, ...] = ("mean", "sum", "geometric", "none")

#: Floor applied before the log of a geometric-mean summary: trec_eval's ``MIN_GEO_MEAN``
#: (``trec_eval.h``), so one zero does not zero the whole summary.
GEO_MEAN_FLOOR = 1e-5

#: ``kernel(ranked, measure) -> (values, empty)``: one value per query code, and whether the query
#: had nothing to find (IDCG = 0 or R = 0). Pure: no I/O, no sorting, no policy.
Kernel = Callable[["Ranked", "Measure"], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class MetricSpec:
    """A metric: its canonical name, the knobs it reads, cutoff rule and kernel.

    Attributes
    ----------
    name : canonical name, printed in every flavor string.
    knobs : flavor knobs this metric reads; the rest are not printed and do not change it.
    cutoff : ``"optional"``, ``"required"`` or ``"none"`` (whether ``@k`` is allowed).
    summary : ``"mean"`` over queries, ``"sum"`` for counts (trec_eval's num_* rows), ``"geometric"``
        (geometric mean of values floored at ``GEO_MEAN_FLOOR``, trec_eval gm_map/gm_bpref; per-query
        values stay the plain ones), or ``"none"`` for per-query-only values that may be text
        (trec_eval relstring).
    aliases : other accepted spellings (case-insensitive).
    doc : one line for ``rankflavor flavors`` and the docs.
    judged_only : whether, for a given measure, the kernel reads nothing of a retrieved row
        that has no judgment beyond its rank and the per-query counts (``n_ret``). Such kernels
        get only the judged rows (:meth:`Ranked.judged_rows`), typically a few percent of a
        run. ``True``, ``False`` or a predicate on the measure.
    top_rows : for a measure that reads unjudged rows only in its top ``k`` (and, beyond them,
        the judged rows alone), that ``k``; None otherwise. Such kernels get the top ``k`` rows
        of every query, extended to the end of the tie group at rank ``k``, and the judged rows
        below (:func:`rankflavor.order.rank_prefix`).
    reads_run : False for a metric of the judgments alone (num_rel): run duplicates change
        nothing it reads, so its ranking refuses none under ``duplicates=error``.
    """

    name: str
    knobs: tuple[str, ...]
    kernel: Kernel
    cutoff: str = "optional"
    summary: str = "mean"
    aliases: tuple[str, ...] = ()
    doc: str = ""
    uses_empty: bool = True
    judged_only: bool | Callable[[Measure], bool] = False
    top_rows: Callable[[Measure], int | None] | None = None
    reads_run: bool = True

    def reads_judged_only(self, measure: Measure) -> bool:
        return self.judged_only(measure) if callable(self.judged_only) else self.judged_only

    def reads_top_rows(self, measure: Measure) -> int | None:
        return self.top_rows(measure) if self.top_rows is not None else None

    def compute(self, ranked: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
        """Run the kernel on the rows it needs."""
        return self.kernel(ranked.judged_rows if self.reads_judged_only(measure) else ranked, measure)


REGISTRY: dict[str, MetricSpec] = {}
_LOOKUP: dict[str, str] = {}


def register(spec: MetricSpec) -> MetricSpec:
    if spec.summary not in SUMMARIES:
        raise ValueError(f"MetricSpec {spec.name!r}: summary must be one of {SUMMARIES}, received {spec.summary!r}")
    REGISTRY[spec.name] = spec
    for alias in (spec.name, *spec.aliases):
        _LOOKUP[alias.lower()] = spec.name
    return spec


def lookup(name: str) -> MetricSpec | None:
    key = _LOOKUP.get(name.lower())
    return REGISTRY[key] if key else None


def known_names() -> list[str]:
    return list(REGISTRY)
