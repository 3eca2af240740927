"""JSON: every measure with its canonical flavor string, counts and provenance."""

from __future__ import annotations

from rankflavor.base.finite import dumps
from rankflavor.engine.results import Results


def render_json(results: Results, per_query: bool) -> str:
    data = results.to_dict()
    if not per_query:
        for m in data["measures"]:
            m.pop("per_query", None)
    return dumps(data) + "\n"
