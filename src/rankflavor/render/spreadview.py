"""What the spread renderers show of a :class:`rankflavor.analysis.spread.api.Spread`: flavors as the knobs
that differ from the base, short run names, where a flavor came from. Which flavors enter the
summaries is the result's own decision (:attr:`rankflavor.analysis.spread.api.Spread.in_summary`), which
every format renders."""

from __future__ import annotations

import re

from rankflavor.analysis.spread.api import Spread
from rankflavor.analysis.spread.result import PairComparison, SpreadFlavor
from rankflavor.metrics.measure import Measure


def knob_delta(measure: Measure, base: Measure) -> str:
    """The knobs (and cutoff) where ``measure`` differs from ``base``, as ``knob=value,...``."""
    parts = [] if measure.k == base.k else [f"k={measure.k}"]
    mine, theirs = measure.flavor.knobs(), base.flavor.knobs()
    parts += [f"{n}={v}" for n, v in mine.items() if theirs.get(n) != v]
    return ",".join(parts) or "(base)"


def short_names(names: list[str] | tuple[str, ...]) -> list[str]:
    """Run names without the prefix and suffix they all share (cut at ``.``, ``_``, ``-`` or ``/``)."""
    if len(names) < 2:
        return list(names)
    prefix = _common([n for n in names])
    suffix = _common([n[::-1] for n in names])
    out = []
    for n in names:
        cut = n[len(prefix):len(n) - len(suffix)] if len(prefix) + len(suffix) < len(n) else n
        out.append(cut or n)
    return out if len(set(out)) == len(out) else list(names)


def _common(texts: list[str]) -> str:
    first = texts[0]
    n = 0
    while n < len(first) and all(len(t) > n and t[n] == first[n] for t in texts):
        n += 1
    common = first[:n]
    ends = [m.end() for m in re.finditer(r"[._\-/]", common)]
    return common[: ends[-1]] if ends else ""


def defect_flavors(s: Spread) -> dict[int, tuple[str, ...]]:
    """Flavor index -> its presets, for the flavors marked :attr:`SpreadFlavor.defect` (only presets
    that reproduce a tool's known defect produced them; whether the summaries count them is
    :attr:`Spread.include_defects`)."""
    return {j: f.presets for j, f in enumerate(s.flavors) if f.defect is not None}


def origin_text(f: SpreadFlavor) -> str:
    """Where a flavor came from: grid, base, preset names (a defect preset marked ``(defect)``)."""
    from rankflavor.presets import PRESETS

    out = []
    for o in f.origins:
        if o == "grid":
            continue
        name = o.replace("preset:", "")
        out.append(name + (" (defect)" if o.startswith("preset:") and name in PRESETS and PRESETS[name].defect else ""))
    return ", ".join(out) or "grid"


def flip_text(s: Spread, p: PairComparison) -> str:
    """A pair's ``flips`` cell: ``no``, or which run gets ahead under which flavor, named.

    The flavor named is the one where the difference goes furthest against the base flavor's sign
    (``B ahead under #57 quepid``), so a reader need not scan the flavor table for it; the number
    is its row in the flavor table, the name its presets, else the knobs that differ from the base.
    """
    if not p.flips:
        return "no"
    against_base = p.min_flavor if p.base_diff >= 0 else p.max_flavor
    ahead = "B" if p.base_diff >= 0 else "A"
    j = next(i for i, f in enumerate(s.flavors) if f.flavor == against_base)
    f = s.flavors[j]
    label = origin_text(f) if f.presets else knob_delta(f.measure, s.base)
    return f"FLIPS: {ahead} ahead under #{j + 1} {label}"
