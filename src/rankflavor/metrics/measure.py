"""A measure is a metric, an optional cutoff and a flavor; its canonical string parses back to it.

>>> m = parse_measure("ndcg@10[gain=exp2,ties=input_order]")
>>> str(m)  # doctest: +NORMALIZE_WHITESPACE
'ndcg@10[gain=exp2,discount=log2,ideal=global,ideal_cut=k,unjudged=zero,negatives=unjudged,ties=input_order,precision=float64,depth=none,duplicates=error,missing=zero,empty=zero]'
>>> parse_measure(str(m)) == m
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from rankflavor.errors import FlavorError, did_you_mean
from rankflavor.flavor.flavor import KNOBS, Flavor, split_top_level
from rankflavor.flavor.knobs import LARGEST_WHOLE
from rankflavor.metrics import registry

_DEFAULT = Flavor()
_DEFAULT_KNOBS = _DEFAULT.knobs()
_KNOB_NAMES = tuple(_DEFAULT_KNOBS)

_MEASURE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:@(?P<k>[^\[\]]+))?(?:\[(?P<knobs>.*)\])?$", re.DOTALL)


def relevant_knobs(metric: str, k: int | None, flavor: Flavor, *, quiet_defaults: bool = False) -> tuple[str, ...]:
    """The knobs that change ``metric`` under ``flavor``, in canonical print order.

    Quiet knobs (``Knob.quiet``) left at their default are omitted unless ``quiet_defaults``.
    """
    spec = registry.REGISTRY[metric]
    wanted = spec.knobs_read(flavor)
    if "max_grade" in wanted and flavor.ideal != "max" and flavor.max_grade == "none":
        wanted.discard("max_grade")
    if not quiet_defaults:
        wanted = {n for n in wanted if not (KNOBS[n].quiet and getattr(flavor, n) == KNOBS[n].default)}
    if spec.uses_empty:
        wanted.add("empty")
    order = [*KNOBS]
    # Input policies print after the metric's own knobs, in one fixed order.
    own = [n for n in order if n in wanted and n not in registry.INPUT_KNOBS and n != "empty"]
    inputs = [n for n in registry.INPUT_KNOBS if n in wanted]
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
    flavor: Flavor = _DEFAULT
    label: str | None = field(default=None, compare=False)
    preset: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        spec = registry.lookup(self.metric)
        if spec is None:
            raise FlavorError(
                f"unknown metric '{self.metric}'; valid metrics: {', '.join(registry.known_names())}."
                + did_you_mean(self.metric, registry.known_names())
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
    def spec(self) -> registry.MetricSpec:
        return registry.REGISTRY[self.metric]

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


def parse_measure(text: str, base: Flavor | None = None, overrides: dict[str, str] | None = None) -> Measure:
    """Parse ``metric[@k][[knob=value,...]]`` (the canonical form) into a :class:`Measure`.

    Knob precedence, lowest first: ``base`` (a preset's or the default flavor), ``overrides``
    (command-line ``--flavor`` knobs, applied only where the metric reads them), then the knobs
    written in the brackets, which must all be read by the metric.
    """
    m = _MEASURE.match(text.strip())
    if not m:
        raise FlavorError(f"cannot parse measure {text!r}; expected metric[@k][[knob=value,...]], e.g. ndcg@10[gain=exp2]")
    spec = registry.lookup(m.group("name"))
    if spec is None:
        names = registry.known_names()
        raise FlavorError(
            f"unknown metric '{m.group('name')}' in {text!r}; valid metrics: {', '.join(names)}."
            + did_you_mean(m.group("name"), names)
        )
    k: int | None = None
    if m.group("k") is not None:
        raw = m.group("k").strip()
        if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= LARGEST_WHOLE:
            raise FlavorError(f"cutoff in {text!r} must be a whole number from 1 to 2**53, received {raw!r}")
        k = int(raw)
    flavor = base or _DEFAULT
    explicit: dict[str, str] = {}
    if m.group("knobs"):
        for part in split_top_level(m.group("knobs")):
            if "=" not in part:
                raise FlavorError(f"expected knob=value inside [...] of {text!r}, received {part!r}")
            name, value = (s.strip() for s in part.split("=", 1))
            if name not in KNOBS:
                raise FlavorError(
                    f"unknown flavor knob '{name}' in {text!r}; valid knobs: {', '.join(KNOBS)}." + did_you_mean(name, KNOBS)
                )
            explicit[name] = value
    return build_measure(spec.name, k, flavor, overrides or {}, explicit, label=None, source=text)


def build_measure(
    metric: str,
    k: int | None,
    base: Flavor,
    overrides: dict[str, str],
    explicit: dict[str, str],
    *,
    label: str | None = None,
    preset: str | None = None,
    source: str | None = None,
) -> Measure:
    """Combine base, overrides and explicit knobs into a measure, checking explicit knobs apply."""
    # One dict, so a knob in both (``-l 2`` and ``AP[rel=3]``) takes the bracket's value.
    flavor = base.with_knobs(**{**overrides, **explicit}) if (overrides or explicit) else base
    measure = Measure(metric, k, flavor, label=label, preset=preset)
    kept = set(relevant_knobs(measure.metric, measure.k, flavor, quiet_defaults=True))
    for name in explicit:
        if name not in kept:
            hint = dict(measure.spec.hints).get(name)
            raise FlavorError(
                f"knob '{name}' does not change {measure.name}"
                + (f" in {source!r}" if source else "")
                + f"; it reads: {', '.join(sorted(kept))}"
                + (f". {hint}" if hint else "")
            )
    return measure
