"""The knobs' value readers: each takes user text and returns the knob's canonical value (a
choice knob's member, else its canonical text) with the parsed values it stores on the flavor
(:class:`rankflavor.flavor.flavor.Flavor`), or raises :class:`~rankflavor.errors.FlavorError`. The
table that names each knob's reader is :data:`rankflavor.flavor.knobs.KNOBS`.
"""



from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from typing import Any

from rankflavor.errors import FlavorError, did_you_mean
from rankflavor.flavor.choices import (
    Discount,
    Gain,
    Ideal,
)

#: What a reader returns: the knob's value, and ``{TypedKnobs attribute: parsed value}``.
Read = tuple[str, Mapping[str, Any]]
_NOTHING: Mapping[str, Any] = {}


#: The largest whole number a knob, a cutoff or a config key takes (2**53): knob text is read
#: as a float, which holds every whole number up to it exactly. A larger depth or K overflowed
#: the engine's int64 arithmetic (issue #32: ``depth = 99999999999999999999``).
LARGEST_WHOLE = 2**53


def format_number(x: float) -> str:
    """Shortest text that parses back to ``x`` (``3`` for 3.0, ``0.5`` for 0.5)."""
    if math.isfinite(x) and float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def _number(text: str, knob: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise FlavorError(f"knob '{knob}' expects a number, received {text!r}") from None
    if not math.isfinite(value):
        raise FlavorError(f"knob '{knob}' expects a finite number, received {text!r}")
    return value + 0.0  # -0.0 reads as 0, as its canonical text does


def _pick(name: str, choices: tuple[str, ...], text: str) -> str:
    """The choice ``text`` names (exactly, else ignoring case), or FlavorError listing them all."""
    t = text.strip()
    if t in choices:
        return t
    for c in choices:
        if c.lower() == t.lower():
            return c
    raise FlavorError(
        f"knob '{name}' has no value {t!r}; valid values: {', '.join(choices)}." + did_you_mean(t, choices)
    )


def choice(name: str, kind: type[StrEnum]) -> Callable[[str], Read]:
    texts = tuple(member.value for member in kind)

    def read(text: str) -> Read:
        return kind(_pick(name, texts, text)), _NOTHING

    return read


def parse_gain_table(text: str) -> tuple[tuple[float, float], ...]:
    """Parse ``{0:0,1:1,2:3}`` into sorted ``((grade, gain), ...)``."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise FlavorError(f"a gain table looks like {{0:0,1:1,2:3}}, received {text!r}")
    pairs: dict[float, float] = {}
    inner = body[1:-1].strip()
    if not inner:
        raise FlavorError("a gain table needs at least one grade:gain pair, received {}")
    for item in inner.split(","):
        if ":" not in item and "=" not in item:
            raise FlavorError(f"gain table entry {item.strip()!r} is not grade:gain")
        grade_text, gain_text = re.split(r"[:=]", item, maxsplit=1)
        grade = _number(grade_text, "gain")
        if grade in pairs:
            raise FlavorError(f"gain table lists grade {format_number(grade)} twice")
        pairs[grade] = _number(gain_text, "gain")
    return tuple(sorted(pairs.items()))


def table_text(pairs: Iterable[tuple[float, float]]) -> str:
    """``{grade:gain,...}`` in canonical form, from ``(grade, gain)`` pairs in order."""
    return "{" + ",".join(f"{format_number(g)}:{format_number(v)}" for g, v in pairs) + "}"


_GAIN_ALIASES = {"exp2m1": "exp2", "exp": "exp2", "burges": "exp2", "lin": "linear", "identity": "linear"}


def read_gain(text: str) -> Read:
    t = text.strip()
    if t.startswith("{"):
        table = parse_gain_table(t)
        return table_text(table), {"gain_kind": Gain.TABLE, "gain_table": table}
    kind = Gain(_pick("gain", ("linear", "exp2", "binary"), _GAIN_ALIASES.get(t.lower(), t)))
    return kind.value, {"gain_kind": kind, "gain_table": None}


_JK = re.compile(r"^jk\(\s*([^)]+)\)$", re.IGNORECASE)
_LOG = re.compile(r"^log\(\s*([^)]+)\)$", re.IGNORECASE)
_DISCOUNT_ALIASES = {"log2p1": "log2", "log": "log2", "inv_rank": "reciprocal", "1/i": "reciprocal", "jk": "jk(2)"}


def read_discount(text: str) -> Read:
    t = text.strip()
    t = _DISCOUNT_ALIASES.get(t.lower(), t)
    m = _JK.match(t)
    if m:
        base = _number(m.group(1), "discount")
        if base <= 1:
            raise FlavorError(f"discount jk(b) needs a base b > 1, received {format_number(base)}")
        return f"jk({format_number(base)})", {"discount_kind": Discount.JK, "jk_base": base, "log_base": None}
    m = _LOG.match(t)
    if m:
        base = _number(m.group(1), "discount")
        if base <= 1:  # b = 1: every discount infinite; b < 1: negative discounts
            raise FlavorError(f"discount log(b) needs a base b > 1, received {format_number(base)}")
        if base != 2:
            return f"log({format_number(base)})", {"discount_kind": Discount.LOG, "jk_base": None, "log_base": base}
        t = "log2"  # one flavor, one string
    # jk(2), log(b) are listed for the error message; their texts never get here.
    kind = Discount(_pick("discount", ("log2", "jk(2)", "reciprocal", "log(b)"), t))
    return kind.value, {"discount_kind": kind, "jk_base": None, "log_base": None}


_RECALL = re.compile(r"^recall@(\d+)$", re.IGNORECASE)


def read_ideal(text: str) -> Read:
    t = text.strip()
    m = _RECALL.match(t)
    if m:
        depth = int(m.group(1))
        if not 1 <= depth <= LARGEST_WHOLE:
            raise FlavorError(f"ideal recall@K needs 1 <= K <= 2**53 = {LARGEST_WHOLE}, received {depth}")
        return f"recall@{depth}", {"ideal_kind": Ideal.RECALL, "recall_depth": depth}
    if t.lower() in ("recall", "recall@k"):
        raise FlavorError("ideal 'recall' needs its candidate depth K, e.g. ideal=recall@100")
    kind = Ideal(_pick("ideal", ("global", "local", "recall@K", "max", "as_supplied"), t))
    return kind.value, {"ideal_kind": kind, "recall_depth": None}


def optional_number(name: str, typed: str, *, integer: bool, minimum: float) -> Callable[[str], Read]:
    def read(text: str) -> Read:
        t = text.strip()
        if t.lower() in ("none", "inf", ""):
            return "none", {typed: None}
        value = _number(t, name)
        if integer and not value.is_integer():
            raise FlavorError(f"knob '{name}' expects a whole number or none, received {t!r}")
        if value < minimum:
            raise FlavorError(f"knob '{name}' must be >= {format_number(minimum)}, received {t!r}")
        if integer and value > LARGEST_WHOLE:
            raise FlavorError(f"knob '{name}' must be at most 2**53 = {LARGEST_WHOLE} (or none), received {t!r}")
        if integer:  # its digits, however large (format_number writes 1e15 and up as floats)
            return str(int(value)), {typed: int(value)}
        return format_number(value), {typed: value}

    return read


def read_rel(text: str) -> Read:
    value = _number(text, "rel")
    return format_number(value), {"rel_threshold": value}


def read_param(text: str) -> Read:
    """``none``, one number (``0.1``) or a list (``(1,-1,0,0)``); order kept, it can matter."""
    t = text.strip()
    if t.lower() in ("", "none"):
        return "none", {"param_values": None}
    body = t[1:-1] if t.startswith("(") and t.endswith(")") else t
    values = tuple(_number(part, "param") for part in body.split(","))
    texts = [format_number(v) for v in values]
    return texts[0] if len(texts) == 1 else "(" + ",".join(texts) + ")", {"param_values": values}


#: What a label source's kind may be (it is printed in flavor strings); the readers check sources
#: against it too (rankflavor.io.labels.sources).
LABEL_KIND = re.compile(r"[a-z][a-z0-9_-]*")


def read_labels(text: str) -> Read:
    """``one``, or the kinds of the label sources evaluated joined by ``+`` (sorted; at least two)."""
    t = text.strip().lower()
    if t in ("one", ""):
        return "one", _NOTHING
    kinds = [k.strip() for k in t.split("+")]
    if len(kinds) < 2 or not all(LABEL_KIND.fullmatch(k) for k in kinds) or len(set(kinds)) != len(kinds):
        raise FlavorError(f"knob 'sources' expects one, or two or more label kinds joined by + (human+llm), "
                          f"received {text!r}")
    return "+".join(sorted(kinds)), _NOTHING


