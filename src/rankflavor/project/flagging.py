"""Which config and flavor an output used, and where its flavor leaves the pinned one, knob by knob.

:func:`project_block` goes into the results' provenance (``provenance["project"]``), so an output
read back from a results file (``rankflavor show``) states it exactly as the command did;
:func:`project_note` prints it for each format: after the table (table, md, latex), inside the
JSON (json), or on standard error where the layout is a machine format (csv, trec).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankflavor.engine.results import Results
    from rankflavor.metrics.measure import Measure
    from rankflavor.project.config import Config


def knob_differences(measure: Measure, pinned: Measure) -> list[tuple[str, str, str]]:
    """``(knob, value, pinned value)`` for each knob either measure reads where the two differ."""
    from rankflavor.flavor.flavor import KNOBS

    read = set(measure.knobs) | set(pinned.knobs)
    out = []
    for name in KNOBS:
        if name in read:
            mine, theirs = str(getattr(measure.flavor, name)), str(getattr(pinned.flavor, name))
            if mine != theirs:
                out.append((name, mine, theirs))
    return out


def pinned_measures(config: Config, texts: Iterable[str] = ()) -> dict[str, Measure]:
    """The pinned measure of each ``metric@k`` in the metric set, and of ``texts`` where they parse
    under the pinned flavor (a dialect name of another preset may not)."""
    from rankflavor.errors import FlavorError

    out = {m.name: m for m in config.measures()} if config.metric_texts else {}
    for text in texts:
        try:
            for m in config.measures([text]):
                out.setdefault(m.name, m)
        except FlavorError:
            continue
    return out


def project_block(config: Config, results: Results, texts: Iterable[str] = (), *, dataset: str | None = None,
                  run: str | None = None) -> dict[str, Any]:
    """The provenance record of the config an evaluation ran under, with every knob where a
    measure's flavor differs from the pinned one."""
    pinned = pinned_measures(config, texts)
    in_set = {m.name for m in config.measures()} if config.metric_texts else set()
    differs: list[dict[str, str]] = []
    outside = [m.measure.display for m in results.measures if in_set and m.measure.name not in in_set]
    for m in results.measures:
        p = pinned.get(m.measure.name)
        if p is None:
            continue
        for knob, value, want in knob_differences(m.measure, p):
            differs.append({"measure": m.measure.display, "knob": knob, "value": value, "pinned": want})
    block: dict[str, Any] = {"config": str(config.path), "config_sha256": config.sha256, "pinned": config.flavor_text()}
    if config.name:
        block["name"] = config.name
    if dataset is not None:
        block["dataset"] = dataset
    if run is not None:
        block["run"] = run
    block["differs"] = differs
    block["outside_metric_set"] = outside
    return block


def note_lines(block: Mapping[str, Any]) -> list[str]:
    """The sentences of a project block."""
    name = f" ({block['name']})" if block.get("name") else ""
    lines = [f"config: {block['config']}{name}; pinned flavor: {block['pinned']}"]
    by_measure: dict[str, list[str]] = {}
    for d in block.get("differs", []):
        by_measure.setdefault(d["measure"], []).append(f"{d['knob']}={d['value']} (pinned {d['pinned']})")
    if by_measure:
        lines.append("FLAVOR DIFFERS from the pinned one, so these numbers are not the project's:")
        lines += [f"  {m}: " + ", ".join(parts) for m, parts in by_measure.items()]
    elif not block.get("outside_metric_set"):
        lines.append("every measure is under the pinned flavor")
    if block.get("outside_metric_set"):
        lines.append("not in the project's metric set: " + ", ".join(block["outside_metric_set"]))
    return lines


def project_note(results: Results, fmt: str) -> tuple[str, str]:
    """``(text after the output, text for standard error)`` naming the config and the flavor."""
    block = results.provenance.get("project")
    if not isinstance(block, Mapping):
        return "", ""
    lines = note_lines(block)
    if fmt == "json":
        return "", ""
    if fmt in ("csv", "trec"):
        return "", "".join(f"rankflavor: {line}\n" for line in lines)
    if fmt == "md":
        from rankflavor.render.md import md_text

        return "\n" + "  \n".join(md_text(line) for line in lines) + "\n", ""
    if fmt == "latex":
        from rankflavor.render.latex import latex_text

        return "".join(f"% {latex_text(line)}\n" for line in lines), ""
    return "".join(line + "\n" for line in lines), ""


__all__ = ["knob_differences", "note_lines", "pinned_measures", "project_block", "project_note"]
