"""A measure is a metric, an optional cutoff and a flavor; its canonical string parses back to it.

>>> m = parse_measure("ndcg@10[gain=exp2,ties=input_order]")
>>> str(m)  # doctest: +NORMALIZE_WHITESPACE
'ndcg@10[gain=exp2,discount=log2,ideal=global,ideal_cut=k,unjudged=zero,negatives=unjudged,ties=input_order,precision=float64,depth=none,duplicates=error,missing=zero,empty=zero]'
>>> parse_measure(str(m)) == m
True
"""

from __future__ import annotations

import re

from rankflavor.errors import FlavorError, did_you_mean
from rankflavor.flavor.flavor import KNOBS, Flavor, split_top_level
from rankflavor.flavor.knobs import LARGEST_WHOLE
from rankflavor.metrics import registry
from rankflavor.metrics.registry import Measure, relevant_knobs

_DEFAULT = Flavor()

_MEASURE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:@(?P<k>[^\[\]]+))?(?:\[(?P<knobs>.*)\])?$", re.DOTALL)


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


__all__ = ["Measure", "build_measure", "parse_measure", "relevant_knobs"]
