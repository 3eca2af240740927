"""The flavor space :func:`rankflavor.identify` searches: every preset, and every combination of the
knobs that move the score, at the stated cutoff and the common ones.

The grid is built with :func:`rankflavor.analysis.spread.api.build_flavors` (one list per cutoff), so a grid
cell equal to a preset's flavor is one entry carrying both origins.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rankflavor.analysis.spread.api import PRESET_ORIGIN, build_flavors, canonical_grid
from rankflavor.flavor.flavor import Flavor
from rankflavor.metrics.measure import Measure

#: Knobs tools disagree on, with the values tools use (flavor-facts §1): the full search grid.
#: A knob the metric does not read is left out; ``rel`` moves NDCG only under ``gain=binary``,
#: so its cells collapse elsewhere.
IDENTIFY_GRID: dict[str, tuple[str, ...]] = {
    "gain": ("linear", "exp2", "binary"),
    "discount": ("log2", "jk(2)"),
    "ideal": ("global", "local"),
    "ideal_cut": ("k", "hits", "none"),
    "unjudged": ("zero", "condensed"),
    "ties": ("docno_desc", "docno_asc", "input_order", "averaged", "pessimistic"),
    "precision": ("float64", "float32"),
    "rel": ("1", "2"),
    "empty": ("zero", "one", "skip"),
    "missing": ("zero", "skip"),
}

#: Cutoffs searched beside the stated one, for a metric that takes a cutoff.
COMMON_CUTOFFS: tuple[int, ...] = (5, 10, 20, 100, 1000)

_DEFAULT = Flavor()


@dataclass(frozen=True)
class Entry:
    """One flavor of the space: the measure, the presets whose flavor it is, and the cutoff
    stated (``changed``: how far it is from the stated measure, computed for candidates only)."""

    measure: Measure
    presets: tuple[str, ...]
    stated_k: int | None

    @property
    def changed(self) -> tuple[str, ...]:
        return changed_knobs(self.measure, self.stated_k)

    @property
    def distance(self) -> int:
        return len(self.changed)


def changed_knobs(measure: Measure, stated_k: int | None) -> tuple[str, ...]:
    """``knob=value`` for each knob ``measure`` prints away from rankflavor's default (and
    ``k=...`` when its cutoff is not the stated one)."""
    out = [] if measure.k == stated_k else [f"k={measure.k if measure.k is not None else 'none'}"]
    out += [f"{n}={v}" for n, v in measure.knobs.items() if v != getattr(_DEFAULT, n)]
    return tuple(out)


def cutoffs(base: Measure, ks: Iterable[int | None] | None) -> list[int | None]:
    """The stated cutoff first, then ``ks`` (default :data:`COMMON_CUTOFFS`, plus no cutoff
    where the metric allows one), those the metric accepts only."""
    cutoff = base.spec.cutoff
    if cutoff == "none":
        return [None]
    wanted: list[int | None] = list(ks) if ks is not None else [*COMMON_CUTOFFS, None]
    out: list[int | None] = [base.k]
    for k in wanted:
        if k is None and cutoff == "required":
            continue
        if k not in out:
            out.append(k)
    return out


def flavor_space(base: Measure, grid: Mapping[str, Iterable[str]] | None = None,
                 ks: Iterable[int | None] | None = None,
                 presets: bool | Iterable[str] = True) -> tuple[list[Entry], list[str]]:
    """Every flavor to try: per cutoff, the grid cells and each preset's flavor; deduplicated."""
    plain = Measure(base.metric, base.k, _DEFAULT)
    canon, notes = canonical_grid(IDENTIFY_GRID if grid is None else grid, plain)
    notes = [n for n in notes if "does not read" not in n]  # the default grid spans every metric
    names = list(presets) if not isinstance(presets, bool) else presets
    found: dict[Measure, list[str]] = {}
    for k in cutoffs(base, ks):
        flavors, more = build_flavors(Measure(base.metric, k, _DEFAULT), canon, names)
        if k == base.k:  # a preset without this metric at another cutoff is no news
            notes += more
        for f in flavors:
            found.setdefault(f.measure, []).extend(o[len(PRESET_ORIGIN):] for o in f.origins if o.startswith(PRESET_ORIGIN))
    entries = [Entry(m, tuple(dict.fromkeys(p)), base.k) for m, p in found.items()]
    return entries, notes


__all__ = ["COMMON_CUTOFFS", "IDENTIFY_GRID", "Entry", "changed_knobs", "cutoffs", "flavor_space"]
