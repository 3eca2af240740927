"""The call grammar the ML libraries' metric names share: ``NAME[@k[,k...]][-][(key=value, ...)]``.

Parsed once here for every preset in :mod:`rankflavor.presets.ml` (scikit-learn, torchmetrics,
LightGBM, XGBoost, RankLib); each preset then reads the typed :class:`_Call`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rankflavor.errors import FlavorError, did_you_mean

_CALL = re.compile(
    r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*"
    r"(?:@\s*(?P<k>[0-9][0-9,\s]*?))?\s*(?P<minus>-)?\s*"
    r"(?:\((?P<args>.*)\))?\s*$",
    re.DOTALL,
)
# A comma starts a new argument only when a ``key=`` follows, so list values need no brackets.
_ARG_SPLIT = re.compile(r",\s*(?=[A-Za-z_][A-Za-z0-9_]*\s*=)")


class _Call:
    """One parsed metric name: ``name``, cutoffs after ``@``, a trailing ``-`` and keyword args."""

    def __init__(self, text: str, tool: str) -> None:
        m = _CALL.match(text)
        if not m:
            raise ValueError(text)
        self.text = text.strip()
        self.tool = tool
        self.name = m.group("name")
        self.ks: list[int] = []
        if m.group("k") is not None:
            self.ks = [int(p) for p in m.group("k").replace(" ", "").split(",") if p]
        self.minus = m.group("minus") is not None
        self.args: dict[str, str] = {}
        body = (m.group("args") or "").strip()
        if body:
            for part in _ARG_SPLIT.split(body):
                if "=" not in part:
                    raise FlavorError(f"{tool} metric {self.text!r}: expected key=value arguments, received {part.strip()!r}")
                key, value = (s.strip() for s in part.split("=", 1))
                if key in self.args:
                    raise FlavorError(f"{tool} metric {self.text!r}: argument {key!r} given twice")
                self.args[key] = value.strip().strip("'\"")

    def reject_unknown(self, allowed: tuple[str, ...]) -> None:
        for key in self.args:
            if key not in allowed:
                raise FlavorError(
                    f"{self.tool} metric {self.text!r}: unknown argument {key!r}; valid arguments: "
                    f"{', '.join(allowed) or 'none'}." + did_you_mean(key, allowed)
                )

    def reject_minus(self) -> None:
        if self.minus:
            raise FlavorError(f"{self.tool} metric {self.text!r}: a trailing '-' is XGBoost syntax, not {self.tool}'s")


def _try_call(text: str, tool: str, names: tuple[str, ...]) -> _Call | None:
    """Parse ``text`` when its name is one of ``names`` (case-insensitive), else None."""
    m = _CALL.match(text)
    if not m or m.group("name").lower() not in {n.lower() for n in names}:
        return None
    return _Call(text, tool)


def _bool(call: _Call, key: str) -> bool:
    value = call.args[key].lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise FlavorError(f"{call.tool} metric {call.text!r}: {key} must be true or false, received {call.args[key]!r}")


def _positive_int(call: _Call, key: str, value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise FlavorError(f"{call.tool} metric {call.text!r}: {key} must be a whole number, received {value!r}") from None
    if number < 1:
        raise FlavorError(f"{call.tool} metric {call.text!r}: {key} must be >= 1, received {value!r}")
    return number


def _numbers(call: _Call, key: str) -> list[float]:
    body = call.args[key].strip().strip("[]()")
    try:
        return [float(p) for p in body.split(",") if p.strip()]
    except ValueError:
        raise FlavorError(
            f"{call.tool} metric {call.text!r}: {key} must be a comma-separated list of numbers, "
            f"received {call.args[key]!r}"
        ) from None


def _one_cutoff(call: _Call, key: str | None = None) -> int | None:
    """The single cutoff given as ``@k`` or as argument ``key`` (None when neither)."""
    if len(call.ks) > 1:
        raise FlavorError(f"{call.tool} metric {call.text!r}: one cutoff only, received {len(call.ks)}")
    k = call.ks[0] if call.ks else None
    if key and key in call.args and call.args[key].lower() != "none":
        if k is not None:
            raise FlavorError(f"{call.tool} metric {call.text!r}: give the cutoff once, as @k or {key}=")
        k = _positive_int(call, key, call.args[key])
    if k is not None and k < 1:
        raise FlavorError(f"{call.tool} metric {call.text!r}: the cutoff must be >= 1, received @{k}")
    return k


def _unsupported(tool: str, names: dict[str, str]) -> Callable[[str], None]:
    """Guard: the tool's own name for a metric this preset does not model (it would otherwise fall
    through to the canonical metric of the same name, which computes something else)."""

    def check(text: str) -> None:
        m = _CALL.match(text)
        if m and m.group("name").lower() in names:
            raise FlavorError(
                f"{tool}'s {m.group('name')} is not modelled by preset {tool} ({names[m.group('name').lower()]}); "
                f"only its NDCG and DCG are. For rankflavor's own metric write rankflavor:{text.strip()}"
            )

    return check
