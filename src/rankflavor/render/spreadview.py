"""What the spread renderers show of a :class:`rankflavor.spread.Spread`: flavors as the knobs
that differ from the base, short run names, where a flavor came from, and the headline without
the flavors of presets that reproduce a tool's known defect."""

from __future__ import annotations

import re
from dataclasses import replace

from ..measure import Measure
from ..spread import Spread
from ..spreadresult import SpreadFlavor


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
    """Flavor index -> the defect presets it came from, for flavors that ONLY such presets produced
    (a flavor that is also the base, a grid cell or a sound preset's stays in the headline)."""
    from ..presets import PRESETS

    out = {}
    for j, f in enumerate(s.flavors):
        names = f.presets
        if names and len(names) == len(f.origins) and all(PRESETS[n].defect for n in names if n in PRESETS):
            out[j] = names
    return out


def headline(s: Spread, include_defects: bool = False) -> tuple[Spread, list[str]]:
    """The spread whose min/max, pairs and orders are the headline, and the notes that say what it leaves out.

    Flavors of presets marked ``defect`` (they reproduce a tool's bug, e.g. ``spark_triples``'s
    unsorted ideal, NDCG above 1) are dropped unless ``include_defects``; the base stays first.
    """
    from ..presets import PRESETS

    defects = defect_flavors(s)
    if not defects:
        return s, []
    names = sorted({n for ns in defects.values() for n in ns})
    why = "; ".join(f"{n}: {PRESETS[n].defect}" for n in names)
    if include_defects:
        return s, [f"the headline includes {len(defects)} flavor(s) of preset(s) that reproduce a known defect ({why})"]
    keep = [j for j in range(len(s.flavors)) if j not in defects]
    kept = replace(s, flavors=tuple(s.flavors[j] for j in keep), means=s.means[:, keep], n_queries=s.n_queries[:, keep])
    note = (f"{len(defects)} flavor(s) only from preset(s) that reproduce a known defect ({', '.join(names)}) are "
            f"listed but left out of min/max, pairs and run orders (--include-defects counts them): {why}")
    return kept, [note]


def origin_text(f: SpreadFlavor) -> str:
    """Where a flavor came from: grid, base, preset names (a defect preset marked ``(defect)``)."""
    from ..presets import PRESETS

    out = []
    for o in f.origins:
        if o == "grid":
            continue
        name = o.replace("preset:", "")
        out.append(name + (" (defect)" if o.startswith("preset:") and name in PRESETS and PRESETS[name].defect else ""))
    return ", ".join(out) or "grid"
