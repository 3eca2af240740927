"""The flavors a comparison is re-run under: the grid of :func:`rankflavor.spread`, presets, knob sets.

``flavors="grid"`` is spread's default: every cell of :data:`~rankflavor.analysis.spread.api.DEFAULT_GRID`
plus the flavor of every registered preset. A list may mix ``"grid"``, preset names (that
preset's flavor of the same metric@k), knob assignments (``"gain=exp2,ideal=local"``, applied to
the base) and full measures (``"ndcg@10[gain=exp2]"``, used for the base of the same metric@k).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from rankflavor.analysis.spread.api import (
    DEFAULT_GRID,
    PRESET_ORIGIN,
    build_flavors,
    canonical_grid,
    defect_reason,
    one_measure,
    scale_note,
)
from rankflavor.analysis.spread.result import SpreadFlavor
from rankflavor.errors import UsageError
from rankflavor.flavor.flavor import parse_knob_assignments, split_top_level
from rankflavor.metrics.measure import Measure

if TYPE_CHECKING:
    from rankflavor.presets.scales import Scale


class Variant(NamedTuple):
    """A flavor a comparison is re-run under.

    Attributes
    ----------
    measure : the measure (same metric@k as the base, another flavor).
    label : what the renderers print: the knobs that differ from the base, then ``[presets]``.
    presets : the presets whose flavor it is.
    defect : why it stays out of the flips unless ``include_defects``: set when only presets that
        reproduce a tool's known defect produced it (:func:`rankflavor.analysis.spread.api.defect_reason`, the
        rule spread applies); None when the grid, a sound preset or the user's own list has it.
    """

    measure: Measure
    label: str
    presets: tuple[str, ...]
    defect: str | None


def _label(measure: Measure, base: Measure, origins: Sequence[str]) -> str:
    presets = [o[len(PRESET_ORIGIN):] for o in origins if o.startswith(PRESET_ORIGIN)]
    mine, theirs = measure.flavor.knobs(), base.flavor.knobs()
    delta = ([] if measure.k == base.k else [f"k={measure.k}"]) + [f"{n}={v}" for n, v in mine.items() if theirs.get(n) != v]
    text = ",".join(delta) or "(base)"
    return f"{text} [{'/'.join(presets)}]" if presets else text


def flavor_variants(base: Measure, flavors: str | Iterable[str],
                    scale: Scale | None = None) -> tuple[list[Variant], list[str]]:
    """The variants of ``base`` other than itself, and notes on what was skipped (and, under a
    ``scale``, which preset flavors keep their tool's own knobs).

    A variant only presets reproducing a tool's known defect produced (``spark_triples``) carries
    its reason in :attr:`Variant.defect`; one the user names as a knob assignment or a measure
    does not, even when a defect preset shares it (as in :func:`rankflavor.analysis.spread.api.spread`, where a
    grid cell does the same)."""
    from rankflavor.presets import PRESETS

    items = [flavors] if isinstance(flavors, str) else list(flavors)
    found: dict[Measure, list[str]] = {}
    notes: list[str] = []

    def add(m: Measure, origins: Sequence[str]) -> None:
        key = Measure(m.metric, m.k, m.flavor)
        if key != Measure(base.metric, base.k, base.flavor):
            found.setdefault(key, [])
            found[key].extend(o for o in origins if o not in found[key])

    # origin "flavors": the user's own knob assignment or measure (never a defect, like a grid cell)
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
            add(Measure(base.metric, base.k, base.flavor.with_knobs(**knobs)), ("flavors",))
        else:
            m = one_measure(text, what="flavors")
            if (m.metric, m.k) == (base.metric, base.k):
                add(m, ("flavors",))
            else:
                notes.append(f"flavor {text} not applied to {base.display}: another metric@k")
    if not items:
        raise UsageError("flavors: give 'grid', preset names, knob assignments or measures")
    if scale is not None:
        notes.append(scale_note(scale, [SpreadFlavor(m, tuple(o), None) for m, o in found.items()]))
    return [Variant(m, _label(m, base, o), tuple(x[len(PRESET_ORIGIN):] for x in o if x.startswith(PRESET_ORIGIN)),
                    defect_reason(o)) for m, o in found.items()], notes


__all__ = ["Variant", "flavor_variants"]
