"""The ``rankflavor.toml`` schema: one table that drives validation, the docs and the errors.

Each :class:`Section` lists its keys (:class:`Key`): the type, what it means and the reader
that turns the TOML value into the checked value (or raises :class:`ConfigError` naming the
key, the value and what is valid). :func:`schema_markdown` prints the table for the README, and
:mod:`rankflavor.project.config` reads a file through it, so the three cannot drift apart.

A config is data: TOML has no tags and no code, and nothing here evaluates a string.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rankflavor.errors import UsageError, did_you_mean
from rankflavor.flavor.knobs import LARGEST_WHOLE
from rankflavor.project.locate import CONFIG_NAME

#: The file every command looks for, from the working directory upward.

#: The questions the advisor answers (``rankflavor init --question``).
QUESTIONS = ("ranking", "overall", "coverage")

#: Paired tests the gate may use for a significant drop (``rankflavor.stats``).
GATE_TESTS = ("t", "permutation", "bootstrap", "wilcoxon", "sign")


class ConfigError(UsageError):
    """``rankflavor.toml`` cannot be read, or a key or value in it is not valid (exit code 2)."""


Reader = Callable[[Any, str], Any]


def _show(value: Any) -> str:
    """A TOML value as written (strings quoted), cut to one readable line."""
    text = f'"{value}"' if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def bad(where: str, value: Any, expected: str) -> ConfigError:
    """The error for a value: ``where`` (``[gate] max_drop``), the value, what is valid."""
    return ConfigError(f"{where} = {_show(value)}: expected {expected}")


def text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise bad(where, value, "a non-empty string")
    return value.strip()


def choice(*options: str) -> Reader:
    def read(value: Any, where: str) -> str:
        if not isinstance(value, str) or value.strip().lower() not in options:
            hint = did_you_mean(str(value), options) if isinstance(value, str) else ""
            raise bad(where, value, "one of " + ", ".join(options) + "." + hint)
        return value.strip().lower()

    return read


def numeric(value: Any) -> bool:
    """The one rule every number in the file meets before its key's own range: a TOML integer or
    float (not a boolean), finite, and an integer no larger than 2**53 in magnitude (beyond it a
    float64, which knobs and thresholds are read into, cannot hold it exactly; issue #32's
    ``depth = 99999999999999999999`` overflowed the engine). No conversion here can raise.

    >>> [numeric(v) for v in (3, 0.5, 2**53, 2**53 + 1, float("inf"), float("nan"), True, "3")]
    [True, True, True, False, False, False, False, False]
    """
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) <= LARGEST_WHOLE
    return isinstance(value, float) and math.isfinite(value)


def number(low: float, high: float = math.inf, *, open_low: bool = False, open_high: bool = False) -> Reader:
    lo = "(" if open_low else "["
    hi = ")" if open_high or high == math.inf else "]"
    span = f"a number in {lo}{low:g}, {high:g}{hi}"

    def read(value: Any, where: str) -> float:
        if not numeric(value):
            raise bad(where, value, span)
        x = float(value)
        if x < low or x > high or (open_low and x == low) or (open_high and x == high):
            raise bad(where, value, span)
        return x

    return read


def _whole_in(value: Any, low: int) -> bool:
    return isinstance(value, int) and numeric(value) and low <= value <= LARGEST_WHOLE


def strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise bad(where, value, 'a non-empty list of strings, e.g. ["ndcg", "recall"]')
    return tuple(v.strip() for v in value)


def cutoffs(value: Any, where: str) -> tuple[int, ...]:
    if not (isinstance(value, list) and value and all(_whole_in(v, 1) for v in value)):
        raise bad(where, value, "a non-empty list of whole numbers from 1 to 2**53, e.g. [10, 100]")
    return tuple(dict.fromkeys(value))


def whole(value: Any, where: str) -> int:
    if not _whole_in(value, 0):
        raise bad(where, value, "a whole number from 0 to 2**53")
    return int(value)


def per_measure(read: Reader) -> Reader:
    """One number for every measure, or a table ``{"ndcg@10" = number, ...}`` (measure names are
    checked against the metric set when the whole file is read)."""

    def reader(value: Any, where: str) -> float | dict[str, float]:
        if isinstance(value, Mapping):
            if not value:
                raise bad(where, value, "a number or a table of measure = number")
            return {str(k): read(v, f"{where}.{k}") for k, v in value.items()}
        return read(value, where)

    return reader


def _knob(name: str) -> Reader:
    def read(value: Any, where: str) -> str:
        from rankflavor.flavor.flavor import KNOBS, FlavorError, format_number

        if not isinstance(value, str) and not numeric(value):  # then the knob's own range
            raise bad(where, value, f"text or a number ({KNOBS[name].values}); a number finite, a whole one "
                      "at most 2**53")
        raw = value if isinstance(value, str) else format_number(float(value))
        try:
            return str(KNOBS[name].parse(raw))
        except FlavorError as exc:
            raise ConfigError(f"{where} = {_show(value)}: {exc}") from None

    return read


def _scale(value: Any, where: str) -> str:
    from rankflavor.presets.scales import SCALES

    return str(choice(*SCALES)(value, where))


def _preset(value: Any, where: str) -> str:
    from rankflavor.presets import PRESETS

    return str(choice(*PRESETS)(str(value).replace("-", "_") if isinstance(value, str) else value, where))


@dataclass(frozen=True)
class Key:
    """One key of a section: its type as the docs print it, its meaning, its reader."""

    name: str
    kind: str
    doc: str
    read: Reader
    required: bool = False


@dataclass(frozen=True)
class Section:
    """One ``[section]``.

    ``layout``: ``keys`` (the fixed keys below), ``named`` (``[section.NAME]`` tables, each with
    the keys below), ``map`` (``NAME = value`` pairs read by the one key below).
    """

    name: str
    doc: str
    keys: tuple[Key, ...]
    layout: str = "keys"

    def key(self, name: str) -> Key | None:
        for k in self.keys:
            if k.name == name:
                return k
        return None


def _flavor_keys() -> tuple[Key, ...]:
    from rankflavor.flavor.flavor import KNOBS

    return tuple(Key(k.name, k.values, k.doc.split(". ")[0].rstrip(".") + ".", _knob(k.name)) for k in KNOBS.values())


SECTIONS: tuple[Section, ...] = (
    Section("project", "What the project is and how its grades read.", (
        Key("name", "string", "A name printed with every output.", text),
        Key("scale", "trec_dl | msmarco | beir | ecommerce",
            "The label scale (`rankflavor.analysis.judgments.SCALES`): its rel, negatives and top grade G set every "
            "measure's knobs, and a grade off it is an error naming file and line.", _scale),
        Key("preset", "preset name", "The flavor starts from this preset's knobs (`rankflavor flavors --presets`; "
            "`rankflavor init --preset`), so numbers compare with that tool's or leaderboard's.", _preset),
        Key("question", " | ".join(QUESTIONS), "The question the flavor answers (recorded by `rankflavor init`): "
            "ranking quality of what was returned, overall performance including recall, or how much of the "
            "relevant set is found.",
            choice(*QUESTIONS)),
    )),
    Section("flavor", "The pinned knobs (any knob of `rankflavor flavors`), set on every measure that reads "
            "them; unset knobs keep the preset's (or rankflavor's) value.", ()),
    Section("metrics", "The metric set.", (
        Key("measures", "list of strings", "Metric names (`ndcg`, `P`, `recall`) or measures with a cutoff "
            "(`ndcg@10`); a name without one is crossed with `cutoffs`.", strings, required=True),
        Key("cutoffs", "list of integers", "The cutoffs k of the metrics named without one (1 to 2**53).", cutoffs),
    )),
    Section("datasets", "Named judgment sets: `[datasets.NAME]`.", (
        Key("qrels", "path", "The qrels file (relative to this file).", text, required=True),
    ), layout="named"),
    Section("runs", "Named runs: `[runs.NAME]`.", (
        Key("path", "path", "The run file (relative to this file).", text, required=True),
        Key("dataset", "dataset name", "The dataset it answers (may be left out when there is one).", text),
    ), layout="named"),
    Section("baselines", "`DATASET = path`: the results file (`rankflavor eval -o`) the gate compares with.", (
        Key("*", "path", "A results JSON file (relative to this file).", text),
    ), layout="map"),
    Section("gate", "The thresholds of `rankflavor gate` (each a number for every measure, or a table "
            "`{\"ndcg@10\" = x}`).", (
        Key("floor", "number or table", "Absolute floor: a mean below it fails.", per_measure(number(-math.inf))),
        Key("max_drop", "number or table", "Largest allowed drop of the mean below the baseline's (absolute).",
            per_measure(number(0))),
        Key("alpha", "number in (0, 1)", "Significance level: a drop the paired test finds significant at alpha "
            "fails (left out: no test).", number(0, 1, open_low=True, open_high=True)),
        Key("test", " | ".join(GATE_TESTS), "The paired test of a significant drop (default t).",
            choice(*GATE_TESTS)),
        Key("seed", "integer", "Seed of the permutation and bootstrap tests (default 0; 0 to 2**53).",
            whole),
    )),
    Section("history", "The run history (SQLite; `rankflavor history`).", (
        Key("path", "path", "The database file: relative to this file and inside its folder (a folder missing "
            "there is created), or absolute (its folder must exist).", text),
    )),
)

_BY_NAME = {s.name: s for s in SECTIONS}


def section(name: str) -> Section:
    s = _BY_NAME[name]
    if name == "flavor" and not s.keys:
        s = Section(s.name, s.doc, _flavor_keys(), s.layout)
    return s


def unknown(where: str, name: str, valid: list[str], value: Any = None) -> ConfigError:
    """The error for a key the schema does not have: the key, its value, the valid keys."""
    shown = "" if value is None or isinstance(value, Mapping) else f" (= {_show(value)})"
    return ConfigError(f"unknown key {name!r}{shown} in {where}; valid keys: {', '.join(valid)}."
                       + did_you_mean(name, valid))


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def schema_markdown() -> str:
    """The schema as a Markdown table (the README's reference; ``[flavor]`` points to the knob table)."""
    lines = ["| section | key | type | meaning |", "|---|---|---|---|"]
    for s in SECTIONS:
        if s.name == "flavor":
            lines.append(f"| `[flavor]` | any knob | its values | {s.doc} |")
            continue
        head = f"[{s.name}.NAME]" if s.layout == "named" else f"[{s.name}]"
        for k in s.keys:
            name = "NAME" if k.name == "*" else k.name + (" (required)" if k.required else "")
            lines.append(f"| `{head}` | {name} | {_cell(k.kind)} | {_cell(k.doc)} |")
    return "\n".join(lines) + "\n"


__all__ = ["CONFIG_NAME", "GATE_TESTS", "QUESTIONS", "SECTIONS", "ConfigError", "Key", "Section", "schema_markdown",
           "section"]
