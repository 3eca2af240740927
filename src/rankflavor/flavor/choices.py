"""The values of the flavor knobs that are choices, and the kinds of the parametric ones.

Each member equals its canonical text, so ``flavor.ties == "averaged"`` and
``flavor.ties is Ties.AVERAGED`` agree. The knob table (:mod:`rankflavor.flavor.knobs`) reads user text
into these members.
"""

from __future__ import annotations

from enum import StrEnum


class Gain(StrEnum):
    """Kind of gain (:attr:`TypedKnobs.gain_kind`); a table's entries are in ``gain_table``."""

    LINEAR = "linear"
    EXP2 = "exp2"
    BINARY = "binary"
    TABLE = "table"


class Discount(StrEnum):
    """Kind of discount (:attr:`TypedKnobs.discount_kind`); jk's base is in ``jk_base``, log's in
    ``log_base``."""

    LOG2 = "log2"
    JK = "jk"
    RECIPROCAL = "reciprocal"
    LOG = "log"


class Ideal(StrEnum):
    """Source of the ideal list (:attr:`TypedKnobs.ideal_kind`); recall@K's K is in ``recall_depth``."""

    GLOBAL = "global"
    LOCAL = "local"
    RECALL = "recall"
    MAX = "max"
    AS_SUPPLIED = "as_supplied"


class IdealCut(StrEnum):
    K = "k"
    HITS = "hits"
    NONE = "none"


class Unjudged(StrEnum):
    ZERO = "zero"
    CONDENSED = "condensed"


class Negatives(StrEnum):
    UNJUDGED = "unjudged"
    ZERO = "zero"
    ERROR = "error"


class Ties(StrEnum):
    DOCNO_DESC = "docno_desc"
    DOCNO_ASC = "docno_asc"
    INPUT_ORDER = "input_order"
    AVERAGED = "averaged"
    PESSIMISTIC = "pessimistic"
    OPTIMISTIC = "optimistic"


class Precision(StrEnum):
    FLOAT64 = "float64"
    FLOAT32 = "float32"


class Empty(StrEnum):
    ZERO = "zero"
    ONE = "one"
    NAN = "nan"
    SKIP = "skip"
    ERROR = "error"


class Missing(StrEnum):
    ZERO = "zero"
    SKIP = "skip"
    ERROR = "error"


class RunOnly(StrEnum):
    SKIP = "skip"
    INCLUDE = "include"
    ERROR = "error"


class Fractional(StrEnum):
    KEEP = "keep"
    TRUNCATE = "truncate"
    ERROR = "error"


class SelfHits(StrEnum):
    KEEP = "keep"
    DROP = "drop"


class PDivisor(StrEnum):
    K = "k"
    HITS = "hits"
    JUDGED = "judged"


class APDivisor(StrEnum):
    """What average precision divides its sum of precisions by."""

    RELEVANT = "relevant"
    MIN_K_RELEVANT = "min_k_relevant"
    FOUND = "found"


class RelevantSet(StrEnum):
    """Which documents make a query's relevant set R (and its empty test)."""

    QRELS = "qrels"
    RETRIEVED = "retrieved"


class Nonpositive(StrEnum):
    """A retrieved document whose score is not positive."""

    KEEP = "keep"
    NONRELEVANT = "nonrelevant"


class Duplicates(StrEnum):
    ERROR = "error"
    FIRST = "first"
    BEST = "best"


class Total(StrEnum):
    SUM = "sum"
    QRELS_POSITIVE = "qrels_positive"


class Raters(StrEnum):
    """How several raters' grades became the judgments (the rules of :mod:`rankflavor.raters.rules`)."""

    NONE = "none"
    MEAN = "mean"
    ROUNDED_MEAN = "rounded_mean"
    QUEPID = "quepid"
    MEDIAN = "median"
    MAJORITY = "majority"
    MAX = "max"
    MIN = "min"


class Utility(StrEnum):
    """Where UDCG takes a passage's utility from (:mod:`rankflavor.metrics.udcg`)."""

    LABEL = "label"
    GRADE = "grade"


class Order(StrEnum):
    """What ranks a run's documents: its scores, or (a run that has none) its ranks."""

    SCORE = "score"
    RANK = "rank"


class Singletons(StrEnum):
    """A query whose ranking holds one document (scikit-learn refuses such a list)."""

    KEEP = "keep"
    ERROR = "error"


__all__ = ["APDivisor", "Discount", "Duplicates", "Empty", "Fractional", "Gain", "Ideal", "IdealCut", "Missing", "Negatives", "Nonpositive", "Order", "PDivisor", "Precision", "Raters", "RelevantSet", "RunOnly", "SelfHits", "Singletons", "Ties", "Total", "Unjudged", "Utility"]
