"""What a preset is: a named flavor plus that tool's own metric dialect, with its evidence."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from rankflavor.flavor.flavor import Flavor
from rankflavor.metrics.measure import Measure


@dataclass(frozen=True)
class Template:
    """One measure a dialect name stands for, before user overrides are applied."""

    metric: str
    k: int | None = None
    knobs: dict[str, str] = field(default_factory=dict)
    label: str | None = None


#: A dialect parses one of the tool's own metric names into templates, or returns None when the
#: text is not in the dialect (then the preset's :attr:`Preset.canonical` map is tried).
#: Pseudo-measures (``runid``, ``num_q``) are returned as plain strings.
Dialect = Callable[[str], "list[Template | str] | None"]

#: In a :attr:`Preset.canonical` entry: the canonical name is the preset's own name for the measure
#: (a preset made of conventions around rankflavor's names, such as ``trec_dl``'s ``RR@10``, which
#: NIST and Anserini compute as ``trec_eval -M 10 -m recip_rank``); a test names the check.
SELF = "="

#: ``{canonical metric: (the tool's own name at cutoff k, with "{k}"; its name without a cutoff)}``;
#: None where the tool has no such measure.
Canonical = Mapping[str, tuple[str | None, str | None]]


@dataclass(frozen=True)
class Preset:
    """A tool's NDCG conventions, pinned.

    Attributes
    ----------
    name : the preset name (``--preset NAME``, ``NAME:metric``).
    flavor : every knob as the tool sets it.
    summary : one line for the flavor table.
    evidence : where each setting was verified (tool version, source file, fixture).
    dialect : parser for the tool's own metric names.
    finalize : last adjustment after user overrides (for knobs that follow other knobs).
    default_metrics : what ``rankflavor eval --preset NAME`` reports when no ``-m`` is given, in
        the tool's own names (the measures its users quote: BEIR's NDCG@10, MS MARCO's MRR@10).
    combine : rewrites the whole list of metric arguments before they are parsed, for tools whose
        arguments interact (trec_eval: ``-m all_trec -m relstring.20`` means relstring_20 only).
    defect : set when the preset reproduces a known defect of the tool rather than a convention:
        what is wrong, with the evidence. ``rankflavor spread`` leaves such flavors out of its
        headline min/max, pair flips and run orders unless asked to include them.
    canonical : how a rankflavor metric name the dialect does not claim reads under the preset
        (``PRESET:ndcg@10``, and ``rankflavor spread``'s row of each preset): translated to the
        tool's own name for that measure (:data:`Canonical`), so it means what the tool computes
        under that name. A metric absent from the map, or a form (with or without a cutoff) the
        tool lacks, is refused with the reason in :attr:`refusals`, or a general one. None: every
        canonical name is the preset's own (rankflavor's defaults only). ``tests/presets/test_dialect_walk.py``
        walks every registered metric under every preset.
    refusals : ``{canonical metric: why the tool's number differs and what to write instead}``.
    """

    name: str
    flavor: Flavor
    summary: str
    evidence: str
    dialect: Dialect | None = None
    finalize: Callable[[Measure], Measure] | None = None
    default_metrics: tuple[str, ...] = ()
    combine: Callable[[list[str | Measure]], list[str | Measure]] | None = None
    defect: str | None = None
    canonical: Canonical | None = field(default_factory=dict)
    refusals: Mapping[str, str] = field(default_factory=dict)
