"""What decides an order: the :class:`Ordering` value, and what a measure's kernel reads of it.

An :class:`Ordering` holds the flavor knobs that change which rows are ranked and where (the
tie rule, score precision, depth, condensing, the grade policies, self-hits); measures whose
orderings are equal share one ranking. :class:`Needs` says which rows a kernel reads, so the
ranker can hand it fewer (the judged rows, or a top-k prefix).

Examples
--------
>>> from rankflavor.flavor.flavor import Flavor
>>> o = Ordering.of(Flavor(ties="averaged", depth="100"))
>>> o.ties, o.tie_rule, o.depth, o.condensed
('averaged', 'docno_desc', 100, False)
>>> Ordering.of(Flavor(gain="exp2")) == Ordering.of(Flavor())  # gain changes no order
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from rankflavor.order.ties import TIE_TABLE, order_rule, reads_grades

if TYPE_CHECKING:
    from rankflavor.flavor.flavor import Flavor

#: The flavor knobs an ordering reads (measures agreeing on them share one ranking); ``run_only``
#: says which queries' kept run duplicates a ranking reports (those of scored queries).
ORDER_KNOBS = ("negatives", "unjudged", "ties", "precision", "depth", "self_hits", "fractional", "run_only")

#: The tie rules (:data:`rankflavor.order.ties.TIE_TABLE`); every one but ``input_order`` ends in docno order.
TIE_RULES: tuple[str, ...] = tuple(TIE_TABLE)

#: The dtype scores are compared at, by the value of the ``precision`` knob.
SCORE_DTYPES: dict[str, str] = {"float64": "float64", "float32": "float32"}

#: What the ``unjudged`` knob does to a ranked row without a usable judgment: ``keep`` it at its
#: rank (gain 0), or ``drop`` it after the depth cut and close up the ranks (condensed lists).
UNJUDGED_ROWS: dict[str, str] = {"zero": "keep", "condensed": "drop"}


def order_key(flavor: Flavor) -> tuple[str, ...]:
    """The values of :data:`ORDER_KNOBS` in ``flavor``: equal keys, equal orderings."""
    return tuple(str(getattr(flavor, k)) for k in ORDER_KNOBS)


@dataclass(frozen=True)
class Ordering:
    """The ordering knobs of a flavor: the cache key of rankings.

    Attributes
    ----------
    ties : tie rule among equal scores (see :data:`TIE_RULES`).
    precision : ``float64``, or ``float32`` (scores compared as C floats, trec_eval <= 9.0.8).
    depth : rows kept per query (trec_eval ``-M``), None for all.
    unjudged : ``zero``, or ``condensed`` (unjudged rows removed after the depth cut, ranks closed up).
    negatives : ``unjudged`` (a negative grade is pooled but unjudged), ``zero`` or ``error``.
    self_hits : ``keep``, or ``drop`` (a document named like its query leaves the ranking first).
    fractional : ``keep``, ``truncate`` (grades toward zero, trec_eval's atol) or ``error``.
    run_only : ``skip``, ``include`` or ``error``: run-only queries are scored only under ``include``.
    """

    ties: str = "docno_desc"
    precision: str = "float64"
    depth: int | None = None
    unjudged: str = "zero"
    negatives: str = "unjudged"
    self_hits: str = "keep"
    fractional: str = "keep"
    run_only: str = "skip"

    @classmethod
    def of(cls, flavor: Flavor) -> Ordering:
        """The ordering of ``flavor``."""
        return cls(
            ties=str(flavor.ties), precision=str(flavor.precision), depth=flavor.depth_limit,
            unjudged=str(flavor.unjudged), negatives=str(flavor.negatives), self_hits=str(flavor.self_hits),
            fractional=str(flavor.fractional), run_only=str(flavor.run_only),
        )

    @property
    def tie_rule(self) -> str:
        """The rule that orders tied rows: ``averaged`` orders them like ``docno_desc`` (only the
        gains of NDCG/DCG are averaged; P@k, AP and Judged@k need an order)."""
        return order_rule(self.ties)

    @property
    def reorders_ties(self) -> bool:
        """The tie rule moves tied rows out of file order (it has keys: :data:`TIE_TABLE`)."""
        return bool(TIE_TABLE[self.ties].keys)

    @property
    def averaged(self) -> bool:
        """Gains are averaged over each tie group (McSherry-Najork)."""
        return TIE_TABLE[self.ties].averaged

    @property
    def condensed(self) -> bool:
        """Unjudged rows leave the ranking (after the depth cut), the ranks closing up."""
        return UNJUDGED_ROWS[self.unjudged] == "drop"

    @property
    def by_grade(self) -> bool:
        """The tie rule reads the grades (so its order depends on the grade policies)."""
        return reads_grades(self.ties)

    @property
    def score_dtype(self) -> str:
        """The dtype scores are compared at (:data:`SCORE_DTYPES`)."""
        return SCORE_DTYPES[self.precision]

    def relaxed(self) -> Ordering:
        """The same order before ``depth`` and condensing remove rows (which rows they removed,
        and where those sat, for explanations)."""
        return replace(self, depth=None, unjudged="zero")


@dataclass(frozen=True)
class Needs:
    """Which ranked rows a measure's kernel reads: what the metric declares
    (:meth:`rankflavor.metrics.registry.MetricSpec.needs`), so the ranker can hand it fewer rows.

    Attributes
    ----------
    judged_only : the kernel reads nothing of an unjudged row but its rank and the per-query
        counts: the judged rows suffice.
    top_rows : the kernel reads unjudged rows only down to this rank (whole tie groups), and the
        judged rows below it; None when it reads more.
    run : False for a kernel of the judgments alone (``num_rel``): run duplicates change nothing
        it reads, so its ranking reports none.
    """

    judged_only: bool = False
    top_rows: int | None = None
    run: bool = True


__all__ = ["ORDER_KNOBS", "SCORE_DTYPES", "TIE_RULES", "UNJUDGED_ROWS", "Needs", "Ordering", "order_key"]
