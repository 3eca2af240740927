"""The flavor: every setting that changes an evaluation number, as one hashable value.

A :class:`Flavor` parses each knob once, when it is made, with the readers of the knob table
(:data:`~rankflavor.flavor.knobs.KNOBS`, re-exported here). A choice knob holds a member of its
:class:`~enum.StrEnum` (:class:`~rankflavor.flavor.choices.Ties`, ...), which equals its canonical text; a
parametric knob holds its canonical text, and its parsed value is stored beside it
(:class:`TypedKnobs`). Which knobs a metric reads, and how a measure prints, lives in
:mod:`rankflavor.metrics.measure`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any

from rankflavor.errors import FlavorError, did_you_mean
from rankflavor.flavor.choices import (
    APDivisor,
    Discount,
    Duplicates,
    Empty,
    Fractional,
    Gain,
    Ideal,
    IdealCut,
    Missing,
    Negatives,
    Nonpositive,
    Order,
    PDivisor,
    Precision,
    Raters,
    RelevantSet,
    RunOnly,
    SelfHits,
    Singletons,
    Ties,
    Total,
    Unjudged,
    Utility,
)
from rankflavor.flavor.knobs import (
    KNOBS,
    Knob,
    Read,
    format_number,
    parse_gain_table,
    table_text,
)

__all__ = [
    "KNOBS",
    "KNOBS_ORDER",
    "APDivisor",
    "Discount",
    "Duplicates",
    "Empty",
    "Flavor",
    "Fractional",
    "Gain",
    "Ideal",
    "IdealCut",
    "Knob",
    "KnobValue",
    "Missing",
    "Negatives",
    "Nonpositive",
    "Order",
    "PDivisor",
    "Precision",
    "Raters",
    "RelevantSet",
    "RunOnly",
    "SelfHits",
    "Singletons",
    "Ties",
    "Total",
    "TypedKnobs",
    "Unjudged",
    "Utility",
    "check_knob_names",
    "format_number",
    "parse_gain_table",
    "parse_knob_assignments",
    "split_top_level",
]

#: What a knob may be given as: its text, a number, or (``gain``) a ``{grade: gain}`` mapping.
KnobValue = str | int | float | Mapping[float, float]


class TypedKnobs:
    """The parsed values of a flavor's parametric knobs, stored once when the flavor is made.

    Attributes
    ----------
    gain_kind : Gain
        The kind of ``gain``; ``gain_table`` holds a table's ``((grade, gain), ...)`` sorted by
        grade (None for the other kinds).
    discount_kind : Discount
        The kind of ``discount``; ``jk_base`` holds jk's base b, ``log_base`` log's base b (None
        for the other kinds).
    ideal_kind : Ideal
        The kind of ``ideal``; ``recall_depth`` holds recall@K's K (None for the other kinds).
    rel_threshold : float
        ``rel``.
    top_grade, grade_floor, assumed_grade : float or None
        ``max_grade``, ``min_grade``, ``unjudged_grade`` (None for ``none``).
    depth_limit : int or None
        ``depth`` (None for ``none``).
    param_values : tuple of float or None
        ``param`` (None for the metric's default).
    distractor_value, penalty_value : float or None
        ``distractor_grade``, ``penalty`` (None for ``none``).
    """

    gain_kind: Gain
    gain_table: tuple[tuple[float, float], ...] | None
    discount_kind: Discount
    jk_base: float | None
    log_base: float | None
    ideal_kind: Ideal
    recall_depth: int | None
    rel_threshold: float
    top_grade: float | None
    grade_floor: float | None
    assumed_grade: float | None
    depth_limit: int | None
    param_values: tuple[float, ...] | None
    distractor_value: float | None
    penalty_value: float | None


@dataclass(frozen=True, init=False, repr=False)
class Flavor(TypedKnobs):
    """Every evaluation setting, each parsed once into its canonical value.

    Construct with keyword arguments, one per knob of :data:`KNOBS` (text, numbers, or a mapping
    for a gain table); values are validated and canonicalised, so equal settings give equal,
    equally hashed flavors. Choice knobs hold their enum member; parametric knobs hold their
    canonical text, with the parsed values in the attributes of :class:`TypedKnobs`.

    Examples
    --------
    >>> Flavor(gain="exp2", ties="input_order").gain
    'exp2'
    >>> Flavor(rel=2).rel, Flavor(rel=2).rel_threshold
    ('2', 2.0)
    >>> Flavor(ties="AVERAGED").ties is Ties.AVERAGED, Ties.AVERAGED == "averaged"
    (True, True)
    >>> Flavor(discount="jk(3.5)").jk_base, Flavor(ideal="recall@20").recall_depth
    (3.5, 20)
    """

    # Knobs in canonical order (equality, hashing and repr follow it).
    gain: str
    discount: str
    ideal: str
    ideal_cut: IdealCut
    max_grade: str
    rel: str
    unjudged: Unjudged
    negatives: Negatives
    ties: Ties
    precision: Precision
    depth: str
    empty: Empty
    missing: Missing
    duplicates: Duplicates
    total: Total
    min_grade: str
    unjudged_grade: str
    run_only: RunOnly
    self_hits: SelfHits
    fractional: Fractional
    p_divisor: PDivisor
    param: str
    raters: Raters
    distractor_grade: str
    penalty: str
    utility: Utility
    order: Order
    singletons: Singletons
    ap_divisor: APDivisor
    relevant_set: RelevantSet
    nonpositive: Nonpositive
    sources: str

    def __init__(self, **knobs: KnobValue) -> None:
        state = self.__dict__  # frozen: written here once, never again
        state.update(_DEFAULTS)
        if knobs:
            check_knob_names(knobs)
            for name, raw in knobs.items():
                _store(state, name, raw)

    def with_knobs(self, **knobs: Any) -> Flavor:
        """Return a copy with some knobs changed (validated); the others are not parsed again."""
        check_knob_names(knobs)
        new = object.__new__(type(self))
        state = new.__dict__
        state.update(self.__dict__)
        for name, raw in knobs.items():
            _store(state, name, raw)
        return new

    def knobs(self) -> dict[str, str]:
        """All knobs as ``{name: canonical value}``."""
        state = self.__dict__
        return {name: state[name] for name in KNOBS_ORDER}

    def __repr__(self) -> str:
        return "Flavor(" + ", ".join(f"{name}={str(getattr(self, name))!r}" for name in KNOBS_ORDER) + ")"


#: The knobs in the order of :class:`Flavor`'s fields (the order of its equality and repr).
KNOBS_ORDER: tuple[str, ...] = tuple(f.name for f in fields(Flavor))


@lru_cache(maxsize=16384)
def _read(name: str, text: str) -> Read:
    """One knob's text read once per process: flavors are made in bulk from few distinct texts."""
    return KNOBS[name].read(text)


def _store(state: dict[str, Any], name: str, raw: Any) -> None:
    """Parse ``raw`` as knob ``name`` into ``state`` (a flavor's attributes)."""
    if not isinstance(raw, str):
        if isinstance(raw, Mapping):
            try:
                raw = table_text(raw.items())
            except (TypeError, ValueError):
                raise FlavorError(f"knob '{name}' expects a {{grade: gain}} mapping of numbers, received {raw!r}") from None
        elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
            raw = format_number(raw)
        else:
            raise FlavorError(f"knob '{name}' expects text or a number, received {raw!r}")
    value, typed = _read(name, raw)
    state[name] = value
    state.update(typed)


def _defaults() -> dict[str, Any]:
    state: dict[str, Any] = {}
    for name in KNOBS_ORDER:
        _store(state, name, KNOBS[name].default)
    return state


_DEFAULTS = _defaults()


def check_knob_names(knobs: Mapping[str, Any]) -> None:
    """Raise :class:`FlavorError` naming any unknown knob and the closest valid one."""
    for name in knobs:
        if name not in KNOBS:
            raise FlavorError(
                f"unknown flavor knob '{name}'; valid knobs: {', '.join(KNOBS)}." + did_you_mean(name, KNOBS)
            )


def parse_knob_assignments(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Parse ``["gain=exp2", "ideal=local"]`` (CLI ``--flavor``) into validated canonical knobs."""
    out: dict[str, str] = {}
    for item in items:
        for part in split_top_level(item):
            if "=" not in part:
                raise FlavorError(f"--flavor expects knob=value, received {part!r}")
            name, value = part.split("=", 1)
            name = name.strip()
            check_knob_names({name: value})
            out[name] = _read(name, value.strip())[0]
    return out


def split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside ``{}``, ``()`` or ``[]``."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]
