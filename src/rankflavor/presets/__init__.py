"""Preset registry and measure resolution (``PRESET:NAME``, dialects, canonical strings)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..errors import FlavorError, did_you_mean
from ..flavor import Flavor, parse_knob_assignments
from ..measure import Measure, build_measure, parse_measure
from .base import Preset, Template
from .trec_eval import TREC_EVAL

NATIVE = Preset(
    name="rankflavor",
    flavor=Flavor(),
    summary="rankflavor defaults: trec_eval's NDCG with float64 scores and missing queries scored 0",
    evidence="documented defaults in rankflavor.flavor.KNOBS",
)

#: Modules of this package that define presets; each exposes ``PRESETS: list[Preset]``.
#: Adding a tool family = one module here (its dialect, pinned knobs, evidence) + its tests.
_MODULES = ("trec_eval",)


def _load() -> dict[str, Preset]:
    import importlib

    found: dict[str, Preset] = {NATIVE.name: NATIVE}
    for name in _MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        for preset in module.PRESETS:
            found[preset.name] = preset
    return found


PRESETS: dict[str, Preset] = _load()

_PREFIX = re.compile(r"^(?P<preset>[A-Za-z_][A-Za-z0-9_\-]*):(?P<rest>.+)$", re.DOTALL)


def get_preset(name: str | None) -> Preset:
    if name is None:
        return NATIVE
    key = name.lower().replace("-", "_")
    if key in PRESETS:
        return PRESETS[key]
    raise FlavorError(f"unknown preset '{name}'; valid presets: {', '.join(PRESETS)}." + did_you_mean(name, PRESETS))


def resolve_measures(
    items: Iterable[str | Measure], preset: str | None, overrides: dict[str, str]
) -> tuple[list[Measure], tuple[str, ...]]:
    """Turn user metric texts into measures; also return requested pseudo-measures (runid, num_q)."""
    knobs = parse_knob_assignments([f"{k}={v}" for k, v in overrides.items()]) if overrides else {}
    default = get_preset(preset)
    measures: list[Measure] = []
    extras: list[str] = []
    for item in items:
        if isinstance(item, Measure):
            measures.append(item)
            continue
        text = item.strip()
        chosen = default
        m = _PREFIX.match(text)
        if m and m.group("preset").lower().replace("-", "_") in PRESETS:
            chosen = PRESETS[m.group("preset").lower().replace("-", "_")]
            text = m.group("rest").strip()
        for x in _resolve_one(text, chosen, knobs):
            if isinstance(x, str):
                if x not in extras:
                    extras.append(x)
            elif x not in measures:
                measures.append(x)
    return measures, tuple(extras)


def _resolve_one(text: str, preset: Preset, knobs: dict[str, str]) -> list[Measure | str]:
    templates = preset.dialect(text) if preset.dialect else None
    if templates is None:
        try:
            measure = parse_measure(text, base=preset.flavor, overrides=knobs)
        except FlavorError as exc:
            hint = ""
            if preset.dialect is None and TREC_EVAL.dialect and TREC_EVAL.dialect(text):
                hint = f" ({text!r} is a trec_eval name: use --preset trec_eval or trec_eval:{text})"
            raise FlavorError(str(exc) + hint) from None
        return [_finish(preset, Measure(measure.metric, measure.k, measure.flavor, label=None, preset=preset.name))]
    out: list[Measure | str] = []
    for t in templates:
        if isinstance(t, str):
            out.append(t)
            continue
        base = preset.flavor.with_knobs(**t.knobs) if t.knobs else preset.flavor
        measure = build_measure(t.metric, t.k, base, knobs, {}, label=t.label, preset=preset.name)
        out.append(_finish(preset, measure))
    return out


def _finish(preset: Preset, measure: Measure) -> Measure:
    return preset.finalize(measure) if preset.finalize else measure


__all__ = ["PRESETS", "Preset", "Template", "get_preset", "resolve_measures"]
