"""Numbers that are not finite, in every output format: one rule, in one place.

A statistic can be NaN or infinite by definition: Cohen's d of differences that are all the same
non-zero number is ``mean / 0 = ±inf``; a mean over no value is NaN. JSON has no such numbers
(``json.dumps(..., allow_nan=False)`` refuses them), so every format gives them this meaning:

* **JSON**: the value is ``null``, and the object holding it says why under ``"undefined"``,
  keyed by the field: ``{"cohens_d": null, "undefined": {"cohens_d": "-inf: ..."}}``. The reason
  starts with the word the other formats print. A non-finite number no producer explained is
  still written as ``null``, listed at the top level under ``"non_finite"`` with its JSON path
  and word (:func:`dumps`), so no output fails and none hides one.
* **table, CSV, Markdown, LaTeX**: the word :func:`word` gives (``nan``, ``inf``, ``-inf``;
  ``+inf`` in a signed column), which is what Python prints and what ``float()``, pandas and
  spreadsheet readers parse back; tables add the reason as a note line, CSV in a note column.

``None`` (nothing computed: a test not run, an interval not asked for) is ``null`` in JSON and
``-`` in the other formats; it is not a non-finite number.

Examples
--------
>>> text(float("-inf"), "+.2f"), text(float("nan")), text(0.5), text(None)
('-inf', 'nan', '0.5000', '-')
>>> json_number(float("inf")) is None, json_number(2)
(True, 2.0)
>>> print(dumps({"a": [1.0, float("nan")]}, indent=None))
{"a": [1.0, null], "non_finite": [{"path": "a[1]", "value": "nan", "reason": "nan: not a finite number"}]}
"""

from __future__ import annotations

import json
import math
from typing import Any

#: The key under which a JSON object names why its ``null`` fields hold no number.
UNDEFINED = "undefined"
#: The top-level key listing the non-finite numbers no producer explained.
NON_FINITE = "non_finite"


def is_finite(x: Any) -> bool:
    """``x`` is a number (not None) and finite."""
    return x is not None and math.isfinite(float(x))


def word(x: float, signed: bool = False) -> str:
    """The word a non-finite ``x`` prints as: ``nan``, ``inf`` (``+inf`` when ``signed``), ``-inf``."""
    if math.isnan(x):
        return "nan"  # (Python's "+" format would print "+nan")
    return format(float(x), "+" if signed else "")


def text(x: float | None, spec: str = ".4f") -> str:
    """``x`` formatted by ``spec``; a non-finite one as its :func:`word`, None as ``-``."""
    if x is None:
        return "-"
    if math.isnan(x):
        return "nan"
    return format(float(x), spec)


def json_number(x: float | None) -> float | None:
    """``x`` as a JSON number: None when it is None or not finite."""
    if x is None or not math.isfinite(x):
        return None
    return float(x)


def undefined(reasons: dict[str, str]) -> dict[str, Any]:
    """``{"undefined": reasons}`` when there is a reason, else ``{}``: merged into a JSON object."""
    return {UNDEFINED: dict(reasons)} if reasons else {}


def dumps(data: Any, indent: int | None = 2, **options: Any) -> str:
    """``data`` as JSON text, every non-finite number written as ``null``.

    Producers replace the numbers they can explain themselves (:func:`json_number`, with a reason
    under ``"undefined"``); any other non-finite float found is replaced here and, when ``data``
    is an object, listed under its ``"non_finite"`` key (path, word, reason). ``options`` go to
    :func:`json.dumps` (``ensure_ascii``, ``separators``). The text ends without a newline.
    """
    found: list[dict[str, str]] = []
    clean = _clean(data, "", found)
    if found and isinstance(clean, dict):
        clean = {**clean, NON_FINITE: [*clean.get(NON_FINITE, []), *found]}
    return json.dumps(clean, indent=indent, allow_nan=False, **options)


def _clean(value: Any, path: str, found: list[dict[str, str]]) -> Any:
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        w = word(value)
        found.append({"path": path or "$", "value": w, "reason": f"{w}: not a finite number"})
        return None
    if isinstance(value, dict):
        return {k: _clean(v, f"{path}.{k}" if path else str(k), found) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v, f"{path}[{i}]", found) for i, v in enumerate(value)]
    return value


__all__ = ["NON_FINITE", "UNDEFINED", "dumps", "is_finite", "json_number", "text", "undefined", "word"]
