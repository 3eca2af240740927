"""Preset registry and measure resolution (``PRESET:NAME``, dialects, canonical strings)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from rankflavor.errors import FlavorError, did_you_mean
from rankflavor.flavor.flavor import Flavor, parse_knob_assignments, split_top_level
from rankflavor.metrics.measure import Measure, build_measure, parse_measure
from rankflavor.presets.base import SELF, Preset, Template

if TYPE_CHECKING:
    from rankflavor.presets.scales import Scale

NATIVE = Preset(
    name="rankflavor",
    flavor=Flavor(),
    summary="rankflavor defaults: trec_eval's NDCG with float64 scores and missing queries scored 0",
    evidence="documented defaults in rankflavor.flavor.flavor.KNOBS",
    canonical=None,  # rankflavor's own names, every one
)

#: Where each preset is defined: a module of this package exposing ``PRESETS: list[Preset]``.
#: Adding a tool family = one module here (its dialect, pinned knobs, evidence) + its tests; a
#: test checks this table against the modules. A preset's module is imported on first use only
#: (an evaluation under one preset does not pay for importing every tool's dialect).
_WHERE = {
    "trec_eval": "trec_eval", "pytrec_eval": "trec_eval",
    "sklearn": "ml", "torchmetrics": "torchmetrics", "lightgbm": "ml", "xgboost": "ml", "catboost": "ml", "ranklib": "ml",
    "ranklib_qrel": "ml",
    "ir_measures": "ir", "gdeval": "ir", "ranx": "ir", "trectools": "ir", "ntcireval": "ntcir", "msmarco": "ir",
    "trec_dl": "ir", "beir": "ir",
    "elasticsearch": "rankeval", "opensearch": "rankeval", "quepid": "engines", "spark": "engines",
    "spark_triples": "engines",
}  # fmt: skip


class _Registry(Mapping[str, Preset]):
    """Presets by name, in a fixed order; each module is imported when one of its presets is
    first looked up (or when all are listed)."""

    def __init__(self) -> None:
        self._loaded: dict[str, Preset] = {NATIVE.name: NATIVE}

    def _load(self, module_name: str) -> None:
        import importlib

        module = importlib.import_module(f"{__name__}.{module_name}")
        for preset in module.PRESETS:
            self._loaded[preset.name] = preset

    def __getitem__(self, name: str) -> Preset:
        if name not in self._loaded and name in _WHERE:
            self._load(_WHERE[name])
        return self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name == NATIVE.name or name in _WHERE

    def __iter__(self) -> Iterator[str]:
        return iter([NATIVE.name, *_WHERE])

    def __len__(self) -> int:
        return 1 + len(_WHERE)


PRESETS: Mapping[str, Preset] = _Registry()

_PREFIX = re.compile(r"^(?P<preset>[A-Za-z_][A-Za-z0-9_\-]*):(?P<rest>.+)$", re.DOTALL)


def get_preset(name: str | None) -> Preset:
    if name is None:
        return NATIVE
    key = name.lower().replace("-", "_")
    if key in PRESETS:
        return PRESETS[key]
    raise FlavorError(f"unknown preset '{name}'; valid presets: {', '.join(PRESETS)}." + did_you_mean(name, PRESETS))


def resolve_measures(
    items: Iterable[str | Measure], preset: str | None, overrides: dict[str, str], scale: Scale | None = None
) -> tuple[list[Measure], tuple[str, ...]]:
    """Turn user metric texts into measures; also return requested pseudo-measures (runid, num_q).

    Knob precedence, lowest first: the preset's flavor (and its dialect's knobs for the name),
    the label ``scale`` (``rel``, ``negatives``: the data's own declaration beats a tool's
    default, so ``--preset trec_eval --scale trec_dl`` is trec_eval run with ``-l 2``), the
    ``overrides`` (``--flavor``, ``-l``, ``-M``: what the user typed for this evaluation), then the
    knobs in a measure's brackets. Last, the scale sets ``max_grade`` where G changes the value
    (:meth:`~rankflavor.analysis.judgments.Scale.with_top_grade`). A :class:`Measure` passed as a value
    takes the scale's knobs only where it left them at their defaults.

    Under a preset, a text its dialect does not claim is a rankflavor name: it is translated to
    the tool's own name for that measure (:attr:`Preset.canonical`, e.g. ``elasticsearch:P@10`` is
    ``_rank_eval``'s ``precision@10``), its bracket knobs kept, or refused with the reason; only the
    ``rankflavor`` preset reads every rankflavor name as rankflavor computes it.
    """
    knobs = parse_knob_assignments([f"{k}={v}" for k, v in overrides.items()]) if overrides else {}
    default = get_preset(preset)
    measures: list[Measure] = []
    extras: list[str] = []
    if default.combine is not None:
        items = default.combine(list(items))
    for item in items:
        if isinstance(item, Measure):
            measures.append(item if scale is None else scale.measure(item))
            continue
        text = item.strip()
        chosen = default
        m = _PREFIX.match(text)
        if m and m.group("preset").lower().replace("-", "_") in PRESETS:
            chosen = PRESETS[m.group("preset").lower().replace("-", "_")]
            text = m.group("rest").strip()
        for x in _resolve_one(text, chosen, knobs, scale):
            if isinstance(x, str):
                if x not in extras:
                    extras.append(x)
            elif x not in measures:
                measures.append(x)
    return measures, tuple(extras)


#: A canonical measure text: ``metric[@k][[knob=value,...]]`` (as :func:`rankflavor.metrics.measure.parse_measure`).
_CANONICAL = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:@(?P<k>\d+))?(?P<knobs>\[.*\])?$", re.DOTALL)


def _resolve_one(text: str, preset: Preset, knobs: dict[str, str], scale: Scale | None) -> list[Measure | str]:
    templates = preset.dialect(text) if preset.dialect else None
    explicit: dict[str, str] = {}
    label: str | None = None
    if templates is None:
        translated = canonical_name(preset, text)
        if translated is None:  # rankflavor's own name, as rankflavor computes it
            try:
                measure = parse_measure(text, base=_under(preset.flavor, scale), overrides=knobs)
            except FlavorError as exc:
                hint = ""
                trec_dialect = PRESETS["trec_eval"].dialect
                if preset.dialect is None and trec_dialect and trec_dialect(text):
                    hint = f" ({text!r} is a trec_eval name: use --preset trec_eval or trec_eval:{text})"
                raise FlavorError(str(exc) + hint) from None
            return [_finish(preset, Measure(measure.metric, measure.k, measure.flavor, label=None, preset=preset.name),
                            scale)]
        tool_text, explicit = translated
        templates = preset.dialect(tool_text) if preset.dialect else None
        if not templates:  # a map entry the dialect does not read: a bug of the preset, not of the input
            raise FlavorError(f"preset {preset.name}: {text!r} maps to {tool_text!r}, which its dialect does not read")
        label = text.strip()
    out: list[Measure | str] = []
    for t in templates:
        if isinstance(t, str):
            out.append(t)
            continue
        base = preset.flavor.with_knobs(**t.knobs) if t.knobs else preset.flavor
        measure = build_measure(t.metric, t.k, _under(base, scale), knobs, explicit, label=label or t.label,
                                preset=preset.name, source=text if explicit else None)
        out.append(_finish(preset, measure, scale))
    return out


def canonical_name(preset: Preset, text: str) -> tuple[str, dict[str, str]] | None:
    """How a canonical measure text reads under ``preset``: the tool's own name for it and the knobs
    written in its brackets, or None when rankflavor's own computation is the preset's (the
    ``rankflavor`` preset, a :data:`~rankflavor.presets.base.SELF` entry, a text that is no
    canonical name: the canonical parser then reports it). Raises :class:`FlavorError` naming what
    differs and what to write instead when the tool has no such measure.
    """
    if preset.canonical is None:
        return None
    from rankflavor.metrics import registry

    m = _CANONICAL.match(text.strip())
    spec = registry.lookup(m.group("name")) if m else None
    if m is None or spec is None:
        return None
    k = int(m.group("k")) if m.group("k") else None
    if k == 0:
        return None  # no measure: the canonical parser says why
    forms = preset.canonical.get(spec.name)
    form = None if forms is None else forms[0] if k is not None else forms[1]
    if form == SELF:
        return None
    if form is None:
        shown = spec.name + (f"@{k}" if k is not None else "")
        reason = preset.refusals.get(spec.name)
        if reason is None:
            has = forms is not None
            reason = (f"{preset.name} has {spec.name} only " + ("with a cutoff" if k is None else "without one")
                      if has else f"{preset.name} has no {spec.name} computed as rankflavor's {spec.name}")
        own = ", ".join(preset.default_metrics[:3])
        raise FlavorError(
            f"{preset.name}:{text.strip()} is not reproduced: {reason}. "
            + (f"The tool's own names work under the preset (e.g. {own}); " if own else "")
            + f"for rankflavor's {shown} write rankflavor:{text.strip()} (or drop the preset)"
        )
    explicit: dict[str, str] = {}
    if m.group("knobs"):
        for part in split_top_level(m.group("knobs")[1:-1]):
            if "=" not in part:
                raise FlavorError(f"expected knob=value inside [...] of {text!r}, received {part!r}")
            name, value = (x.strip() for x in part.split("=", 1))
            explicit[name] = value
    return form.format(k=k), explicit


def _under(base: Flavor, scale: Scale | None) -> Flavor:
    """``base`` with the scale's knobs over it (the scale beats a preset's default)."""
    return base if scale is None else base.with_knobs(**scale.knobs())


def _finish(preset: Preset, measure: Measure, scale: Scale | None = None) -> Measure:
    done = preset.finalize(measure) if preset.finalize else measure
    return done if scale is None else scale.with_top_grade(done)


#: Knobs shown as columns of the flavor table; every other knob a preset sets away from its
#: default is listed under "other knobs".
_TABLE_KNOBS = ("gain", "discount", "ideal", "ideal_cut", "unjudged", "negatives", "ties", "precision", "empty", "missing")


def flavor_table_markdown() -> str:
    """The preset flavor table of ``docs/flavors.md``, generated from the registry.

    Three parts: the pinned knobs of every preset, what each reproduces with its evidence, and the
    canonical flavor string of each preset's default measures (what ``rankflavor eval QRELS RUN
    --preset NAME`` prints). ``tests/presets/test_presets_ir.py`` fails when the document drifts from it.
    """

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    default = Flavor()
    head = ["preset", *_TABLE_KNOBS, "other knobs"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in PRESETS.values():
        others = [f"{n}={v}" for n, v in p.flavor.knobs().items() if n not in _TABLE_KNOBS and v != getattr(default, n)]
        row = [f"`{p.name}`", *(f"`{getattr(p.flavor, n)}`" for n in _TABLE_KNOBS), ", ".join(f"`{o}`" for o in others)]
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    lines += ["", "| preset | what it reproduces | evidence |", "|---|---|---|"]
    lines += [f"| `{p.name}` | {cell(p.summary)}" + (f" **Reproduces a known defect:** {cell(p.defect)}" if p.defect else "")
              + f" | {cell(p.evidence)} |" for p in PRESETS.values()]
    lines += ["", "Default measures (`rankflavor eval QRELS RUN --preset NAME` without `-m`) and their full flavor:", ""]
    for p in PRESETS.values():
        if not p.default_metrics:
            continue
        measures, _ = resolve_measures(list(p.default_metrics), p.name, {})
        lines += [f"- `{p.name}`:"]
        lines += [f"  - {cell(m.display)}: `{m}`" for m in measures]
    return "\n".join(lines) + "\n"


#: The block of ``docs/flavors.md`` that :func:`write_flavor_doc` owns.
GENERATED = re.compile(r"(<!-- BEGIN GENERATED[^>]*-->\n)(.*?)(<!-- END GENERATED -->)", re.DOTALL)


def write_flavor_doc(path: str = "docs/flavors.md") -> None:
    """Regenerate the preset table inside ``path`` (between its GENERATED markers)."""
    from pathlib import Path

    doc = Path(path)
    text, n = GENERATED.subn(lambda m: m.group(1) + flavor_table_markdown() + m.group(3), doc.read_text())
    if n != 1:
        raise FlavorError(f"{path}: expected one <!-- BEGIN GENERATED --> ... <!-- END GENERATED --> block, found {n}")
    doc.write_text(text)


__all__ = ["PRESETS", "Preset", "Template", "canonical_name", "flavor_table_markdown", "get_preset", "resolve_measures",
           "write_flavor_doc"]
