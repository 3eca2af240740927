"""The metric registry: what each metric is called, what it reads and needs, how it summarises;
and the :class:`Measure`, a registered metric with a cutoff and a flavor (parsed and built by
:mod:`rankflavor.metrics.measure`).

Adding a metric = one module that calls :func:`register` with a :class:`MetricSpec`, plus its
tests. Nothing else dispatches on metric names: the engine, :mod:`rankflavor.metrics.measure`,
:mod:`rankflavor.analysis.explain` and the renderers ask the spec (``tests/architecture/test_metrics_alone.py`` checks
that no module outside ``metrics/`` compares a metric's name with a literal).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import NDArray

from rankflavor.errors import FlavorError, did_you_mean
from rankflavor.flavor.flavor import KNOBS, Flavor
from rankflavor.flavor.knobs import LARGEST_WHOLE
from rankflavor.metrics.summary import GEO_MEAN_FLOOR, RULES

if TYPE_CHECKING:
    from rankflavor.order import GainFn, Ranked
    from rankflavor.order.strategy import Needs

#: Knobs that decide which documents are ranked and in which order; every per-query metric reads them.
INPUT_KNOBS: tuple[str, ...] = (
    "unjudged", "negatives", "ties", "precision", "depth", "duplicates", "missing", "self_hits", "run_only",
    "fractional", "raters", "order", "singletons", "sources",
)

#: Summary kinds a :class:`MetricSpec` may declare (:data:`rankflavor.metrics.summary.RULES`).
SUMMARIES: tuple[str, ...] = tuple(RULES)

#: Per-query values of a kernel: float64, or text (object) for a per-query-only metric (relstring).
Values = NDArray[np.float64] | NDArray[np.object_]


class Kernel(Protocol):
    """``kernel(ranked, measure) -> (values, empty)``: one value per query code, and whether the
    query had nothing to find (IDCG = 0 or R = 0). Pure: no I/O, no sorting, no policy knob (the
    ``empty``, ``missing``, ``run_only`` policies apply later, in :func:`rankflavor.engine.aggregate.aggregate`)."""

    def __call__(self, ranked: Ranked, measure: Measure, /) -> tuple[Values, NDArray[np.bool_]]: ...


class SummaryRule(Protocol):
    """A metric's own summary: ``rule(measure, values, computed, missing, judgments) -> (summary,
    rows in it)``; ``judgments`` are the grades of every usable judgment (see
    :mod:`rankflavor.metrics.summary` for the rest)."""

    def __call__(self, measure: Measure, values: Values, computed: NDArray[np.bool_], missing: NDArray[np.bool_],
                 judgments: NDArray[np.float64], /) -> tuple[float, int]: ...


@dataclass(frozen=True)
class IdealList:
    """The ideal lists a metric divides by, of every query: one row per slot, grouped by query
    code, slots ascending within a query.

    Attributes
    ----------
    q : query code of each slot.
    slot : 1-based position in the query's ideal list.
    value : what the slot holds (NDCG: a gain).
    counted : the slot is within the ideal cut (``ideal_cut``): only those enter the ideal.
    index : where the slot's value came from: an index into the :class:`~rankflavor.order.Ranked`
        judgments (``jq``, ``jgrade``) when ``of`` is ``"judgments"``, into its ranked rows when
        ``"rows"``; unused (-1) when ``"none"`` (``ideal=max``: the top grade in every slot).
    of : ``"judgments"``, ``"rows"`` or ``"none"``.
    """

    q: NDArray[np.integer]
    slot: NDArray[np.int64]
    value: NDArray[np.float64]
    counted: NDArray[np.bool_]
    index: NDArray[np.int64]
    of: str


@dataclass(frozen=True)
class Breakdown:
    """What :func:`rankflavor.analysis.explain.api.explain` can show of a metric, position by position: a sum
    over the ranks of gain / discount (under the flavor's ``discount``).

    Attributes
    ----------
    gain_of : ``gain_of(measure)``, the kernel's own gain rule ``(grade, judged, pooled) -> gains``
        for each ranked row; :meth:`rankflavor.order.Ranked.gains` averages it over tie groups under
        ``ties=averaged``, as the kernel reads it, so the breakdown sums to the value.
    ideal_cut : ``ideal_cut(ranked, measure)``, per query code how many slots of the ideal list
        count (``inf`` for all), for a metric that divides by an ideal (:attr:`MetricSpec.uses_ideal`).
    ideal_list : ``ideal_list(ranked, measure)``, the :class:`IdealList` the kernel divides by
        (its counted slots' value / discount, summed per query, is the kernel's ideal), for a
        metric that divides by an ideal: explain shows it as it is.
    """

    gain_of: Callable[[Measure], GainFn]
    ideal_cut: Callable[[Ranked, Measure], NDArray[np.float64]] | None = None
    ideal_list: Callable[[Ranked, Measure], IdealList] | None = None


@dataclass(frozen=True)
class MetricSpec:
    """A metric: its canonical name, the knobs it reads, what it needs, its kernel and summary.

    Attributes
    ----------
    name : canonical name, printed in every flavor string.
    knobs : flavor knobs this metric reads; the rest are not printed and do not change it.
    kernel : the per-query computation (:class:`Kernel`).
    cutoff : ``"optional"``, ``"required"`` or ``"none"`` (whether ``@k`` is allowed).
    summary : ``"mean"`` over queries, ``"sum"`` for counts (trec_eval's num_* rows), ``"geometric"``
        (geometric mean of values floored at ``GEO_MEAN_FLOOR``, trec_eval gm_map/gm_bpref; per-query
        values stay the plain ones), or ``"none"`` for per-query-only values that may be text
        (trec_eval relstring). Renderers read it (counts print as integers).
    summary_rule : the metric's own summary (:class:`SummaryRule`) in place of the kind's rule
        (:data:`rankflavor.metrics.summary.RULES`); trec_eval's ``num_rel`` under
        ``total=qrels_positive`` counts the qrels' positive lines.
    aliases : other accepted spellings (case-insensitive).
    doc : one line for ``rankflavor flavors`` and the docs.
    uses_empty : the ``empty`` policy applies to it (it has queries with nothing to find).
    knob_when : knobs of ``knobs`` the metric reads only under some flavors, each with the
        predicate on the flavor that says when (ndcg reads ``rel`` only under ``gain=binary``).

    What the kernel needs (by default: every retrieved row, ranked):

    judged_only : whether, for a given measure, the kernel reads nothing of a retrieved row
        that has no judgment beyond its rank and the per-query counts (``n_ret``). Such kernels
        get only the judged rows (:meth:`Ranked.judged_rows`), typically a few percent of a
        run. ``True``, ``False`` or a predicate on the measure.
    top_rows : for a measure that reads unjudged rows only in its top ``k`` (and, beyond them,
        the judged rows alone), that ``k``; None otherwise. Such kernels get the top ``k`` rows
        of every query, extended to the end of the tie group at rank ``k``, and the judged rows
        below (:func:`rankflavor.order.rank_prefix`).
    reads_to : for a measure whose kernel reads no ranked row below some rank, that rank: given
        only the rows ranked at or above it (ranks, ``n_ret`` and the judgments still the full
        list's, :attr:`Ranked.to_rank <rankflavor.order.Ranked.to_rank>`), it computes the same
        values. A ranking made again and again (:class:`~rankflavor.training.rescore.Rescorer`) then
        gathers those rows alone. None (or a predicate's None): it reads every row.
    reads_run : False for a metric of the judgments alone (num_rel): run duplicates change
        nothing it reads, so its ranking refuses none under ``duplicates=error``.
    uses_ideal : the value is normalised by an ideal list made from the judgments (ndcg, G):
        :func:`rankflavor.analysis.explain.api.explain` shows that list.
    breakdown : what ``explain`` can show position by position (:class:`Breakdown`); None when
        the metric is not a sum of gains over ranks.
    top_grade_when : predicate on the flavor saying when the scale's top grade G changes the
        value (``ideal=max`` NDCG, ERR, graded RBP); a label scale sets ``max_grade`` there only
        (:meth:`rankflavor.analysis.judgments.Scale.measure`). None: never.
    residual : the name of a metric whose per-query value, added to this one's, bounds it from
        above over every grading of the unjudged documents and the ranks past the run's end
        (RBP's residual, Moffat & Zobel 2008); :func:`rankflavor.bounds` then uses it for the
        upper bound instead of imputing the top grade. None: bounds impute.
    hints : ``(knob, text)`` pairs: what to use instead when a measure sets a knob the metric does
        not read (ERR's ``gain``: ERR_gain), added to that refusal.
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
    reads_to: Callable[[Measure], int | None] | None = None
    reads_run: bool = True
    uses_ideal: bool = False
    summary_rule: SummaryRule | None = None
    knob_when: tuple[tuple[str, Callable[[Flavor], bool]], ...] = ()
    breakdown: Breakdown | None = None
    top_grade_when: Callable[[Flavor], bool] | None = None
    residual: str | None = None
    hints: tuple[tuple[str, str], ...] = ()

    def needs_top_grade(self, flavor: Flavor) -> bool:
        """Whether the top grade G changes this metric's value under ``flavor``."""
        return self.top_grade_when is not None and bool(self.top_grade_when(flavor))

    def reads_judged_only(self, measure: Measure) -> bool:
        return self.judged_only(measure) if callable(self.judged_only) else self.judged_only

    def reads_top_rows(self, measure: Measure) -> int | None:
        return self.top_rows(measure) if self.top_rows is not None else None

    def needs(self, measure: Measure) -> Needs:
        """Which ranked rows this metric's kernel reads for ``measure``: the ranker hands it no more."""
        from rankflavor.order.strategy import Needs

        return Needs(bool(self.reads_judged_only(measure)), self.reads_top_rows(measure), bool(self.reads_run))

    def deepest_rank(self, measure: Measure) -> int | None:
        """The deepest rank whose row the kernel reads under ``measure`` (see :attr:`reads_to`)."""
        return self.reads_to(measure) if self.reads_to is not None else None

    def knobs_read(self, flavor: Flavor) -> set[str]:
        """The knobs of :attr:`knobs` this metric reads under ``flavor`` (see :attr:`knob_when`)."""
        skipped = {knob for knob, applies in self.knob_when if not applies(flavor)}
        return {knob for knob in self.knobs if knob not in skipped}

    def compute(self, ranked: Ranked, measure: Measure) -> tuple[Values, NDArray[np.bool_]]:
        """Run the kernel on the rows it needs."""
        return self.kernel(ranked.judged_rows if self.reads_judged_only(measure) else ranked, measure)

    def summarize(self, measure: Measure, values: Values, computed: NDArray[np.bool_], missing: NDArray[np.bool_],
                  judgments: NDArray[np.float64]) -> tuple[float, int]:
        """The summary of ``values`` (the rows entering it) and how many rows entered it."""
        if self.summary_rule is not None:
            return self.summary_rule(measure, values, computed, missing, judgments)
        return RULES[self.summary](values, computed, missing)


REGISTRY: dict[str, MetricSpec] = {}
_LOOKUP: dict[str, str] = {}


def register(spec: MetricSpec) -> MetricSpec:
    if spec.summary not in SUMMARIES:
        raise ValueError(f"MetricSpec {spec.name!r}: summary must be one of {SUMMARIES}, received {spec.summary!r}")
    unknown = {knob for knob, _ in spec.knob_when} - set(spec.knobs)
    if unknown:
        raise ValueError(f"MetricSpec {spec.name!r}: knob_when names knobs it does not read: {sorted(unknown)}")
    if spec.uses_ideal and spec.breakdown is not None and (spec.breakdown.ideal_cut is None
                                                           or spec.breakdown.ideal_list is None):
        raise ValueError(f"MetricSpec {spec.name!r}: a breakdown of a metric with an ideal needs its ideal_cut "
                         "and ideal_list")
    REGISTRY[spec.name] = spec
    for alias in (spec.name, *spec.aliases):
        _LOOKUP[alias.lower()] = spec.name
    return spec


def lookup(name: str) -> MetricSpec | None:
    key = _LOOKUP.get(name.lower())
    return REGISTRY[key] if key else None


def known_names() -> list[str]:
    return list(REGISTRY)


def explainable() -> list[str]:
    """Metrics :func:`rankflavor.analysis.explain.api.explain` can break down (those with a :class:`Breakdown`)."""
    return [name for name, spec in REGISTRY.items() if spec.breakdown is not None]


# -- measures: a metric of this registry, a cutoff and a flavor ---------------------------------

_DEFAULT_FLAVOR = Flavor()
_DEFAULT_KNOBS = _DEFAULT_FLAVOR.knobs()
_KNOB_NAMES = tuple(_DEFAULT_KNOBS)


def relevant_knobs(metric: str, k: int | None, flavor: Flavor, *, quiet_defaults: bool = False) -> tuple[str, ...]:
    """The knobs that change ``metric`` under ``flavor``, in canonical print order.

    Quiet knobs (``Knob.quiet``) left at their default are omitted unless ``quiet_defaults``.
    """
    spec = REGISTRY[metric]
    wanted = spec.knobs_read(flavor)
    if "max_grade" in wanted and flavor.ideal != "max" and flavor.max_grade == "none":
        wanted.discard("max_grade")
    if not quiet_defaults:
        wanted = {n for n in wanted if not (KNOBS[n].quiet and getattr(flavor, n) == KNOBS[n].default)}
    if spec.uses_empty:
        wanted.add("empty")
    order = [*KNOBS]
    # Input policies print after the metric's own knobs, in one fixed order.
    own = [n for n in order if n in wanted and n not in INPUT_KNOBS and n != "empty"]
    inputs = [n for n in INPUT_KNOBS if n in wanted]
    tail = ["empty"] if "empty" in wanted else []
    return (*own, *inputs, *tail)


@dataclass(frozen=True)
class Measure:
    """One measure: ``metric@k[knob=value,...]``.

    Knobs the metric does not read are reset to their defaults, so two measures that compute the
    same number compare (and hash) equal, and ``str()`` names every knob that matters.

    Parameters
    ----------
    metric : canonical metric name (see ``rankflavor flavors``).
    k : cutoff, or None.
    flavor : the full flavor; irrelevant knobs are normalised away.
    label : how the user or a tool dialect named it (``ndcg_cut_10``, ``lightgbm:ndcg@10``); not
        part of equality.
    """

    metric: str
    k: int | None = None
    flavor: Flavor = _DEFAULT_FLAVOR
    label: str | None = field(default=None, compare=False)
    preset: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        spec = lookup(self.metric)
        if spec is None:
            raise FlavorError(
                f"unknown metric '{self.metric}'; valid metrics: {', '.join(known_names())}."
                + did_you_mean(self.metric, known_names())
            )
        object.__setattr__(self, "metric", spec.name)
        if self.k is not None:
            if spec.cutoff == "none":
                raise FlavorError(f"metric '{spec.name}' takes no cutoff, received @{self.k}")
            if not 1 <= self.k <= LARGEST_WHOLE or int(self.k) != self.k:  # (inf and NaN fail the range)
                raise FlavorError(f"cutoff k must be a whole number from 1 to 2**53, received {self.k!r}")
            object.__setattr__(self, "k", int(self.k))
        elif spec.cutoff == "required":
            raise FlavorError(f"metric '{spec.name}' needs a cutoff, e.g. {spec.name}@10")
        flavor = self.flavor
        if self.k is None and flavor.ideal_cut == "k":
            flavor = flavor.with_knobs(ideal_cut="none")
        keep = set(relevant_knobs(spec.name, self.k, flavor))
        # Only the knobs reset to their default are parsed again (grids build measures in bulk).
        reset = {n: _DEFAULT_KNOBS[n] for n in _KNOB_NAMES if n not in keep and getattr(flavor, n) != _DEFAULT_KNOBS[n]}
        if self.k is None and "ideal_cut" in keep and flavor.ideal_cut == "k":
            reset["ideal_cut"] = "none"
        object.__setattr__(self, "flavor", flavor.with_knobs(**reset) if reset else flavor)

    @property
    def spec(self) -> MetricSpec:
        return REGISTRY[self.metric]

    @property
    def knobs(self) -> dict[str, str]:
        """The knobs that matter for this measure, as printed."""
        return {n: getattr(self.flavor, n) for n in relevant_knobs(self.metric, self.k, self.flavor)}

    @property
    def name(self) -> str:
        """``metric@k`` without the flavor."""
        return self.metric if self.k is None else f"{self.metric}@{self.k}"

    @property
    def display(self) -> str:
        """The user's own name for the measure if they gave one, else ``metric@k``."""
        return self.label or self.name

    def __str__(self) -> str:
        return self.name + "[" + ",".join(f"{n}={v}" for n, v in self.knobs.items()) + "]"

    def with_knobs(self, **knobs: Any) -> Measure:
        return replace(self, flavor=self.flavor.with_knobs(**knobs))


__all__ = [
    "GEO_MEAN_FLOOR", "INPUT_KNOBS", "REGISTRY", "SUMMARIES", "Breakdown", "IdealList", "Kernel", "Measure", "MetricSpec",
    "SummaryRule",
    "Values", "explainable", "known_names", "lookup", "register", "relevant_knobs",
]
