"""The flavors a comparison is re-run under: the grid of :func:`rankflavor.spread`, presets, knob sets.

``flavors="grid"`` is spread's default: every cell of :data:`~rankflavor.spread.DEFAULT_GRID`
plus the flavor of every registered preset. A list may mix ``"grid"``, preset names (that
preset's flavor of the same metric@k), knob assignments (``"gain=exp2,ideal=local"``, applied to
the base) and full measures (``"ndcg@10[gain=exp2]"``, used for the base of the same metric@k).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..flavor import parse_knob_assignments, split_top_level
from ..measure import Measure
from ..spread import DEFAULT_GRID, build_flavors, canonical_grid, one_measure, scale_note
from ..spreadresult import SpreadFlavor

if TYPE_CHECKING:
    from ..judgments.scale import Scale


def _label(measure: Measure, base: Measure, origins: Sequence[str]) -> str:
    presets = [o.split(":", 1)[1] for o in origins if o.startswith("preset:")]
    mine, theirs = measure.flavor.knobs(), base.flavor.knobs()
    delta = ([] if measure.k == base.k else [f"k={measure.k}"]) + [f"{n}={v}" for n, v in mine.items() if theirs.get(n) != v]
    text = ",".join(delta) or "(base)"
    return f"{text} [{'/'.join(presets)}]" if presets else text


def flavor_variants(base: Measure, flavors: str | Iterable[str],
                    scale: Scale | None = None) -> tuple[list[tuple[Measure, str]], list[str]]:
    """The (measure, label) variants of ``base`` other than itself, and notes on what was skipped
    (and, under a ``scale``, which preset flavors keep their tool's own knobs)."""
    from ..presets import PRESETS

    items = [flavors] if isinstance(flavors, str) else list(flavors)
    found: dict[Measure, list[str]] = {}
    notes: list[str] = []

    def add(m: Measure, origins: Sequence[str]) -> None:
        key = Measure(m.metric, m.k, m.flavor)
        if key != Measure(base.metric, base.k, base.flavor):
            found.setdefault(key, [])
            found[key].extend(o for o in origins if o not in found[key])

    for item in items:
        text = str(item).strip()
        if text == "grid":
            grid, grid_notes = canonical_grid(DEFAULT_GRID, base)
            variants, preset_notes = build_flavors(base, grid, True)
            notes += grid_notes + preset_notes
            for v in variants:
                add(v.measure, v.origins)
        elif text.lower().replace("-", "_") in PRESETS:
            variants, preset_notes = build_flavors(base, {}, [text])
            notes += preset_notes
            for v in variants[1:]:
                add(v.measure, v.origins)
        elif "=" in text and "[" not in text and "@" not in text:
            knobs = parse_knob_assignments(split_top_level(text))
            add(Measure(base.metric, base.k, base.flavor.with_knobs(**knobs)), ())
        else:
            m = one_measure(text, what="flavors")
            if (m.metric, m.k) == (base.metric, base.k):
                add(m, ())
            else:
                notes.append(f"flavor {text} not applied to {base.display}: another metric@k")
    if not items:
        raise UsageError("flavors: give 'grid', preset names, knob assignments or measures")
    if scale is not None:
        notes.append(scale_note(scale, [SpreadFlavor(m, tuple(o), None) for m, o in found.items()]))
    return [(m, _label(m, base, o)) for m, o in found.items()], notes


__all__ = ["flavor_variants"]
