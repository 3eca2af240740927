"""The label scale of an ir_datasets dataset: what ``scale=`` / ``--scale`` take when the judgments
are named ``irds:<id>`` and no scale is (:func:`scale_for`).

The grades and threshold come from the dataset's documented grade definitions
(:func:`rankflavor.io.irds.grade_rule`); a named scale (:data:`~rankflavor.presets.scales.SCALES`)
written for the dataset's family, with the same grades, threshold and negative rule, is used as
itself (DL19's 0-3 definitions: ``trec_dl``); any other dataset gets a :class:`Scale` named
``irds:<id>``, the same knobs either way.
"""

from __future__ import annotations

import functools
from typing import Any

from rankflavor.io.irds import PREFIX, grade_rule, irds_id
from rankflavor.presets.scales import SCALES, Scale, scale_named

#: The datasets a named scale was written for; another dataset with the same grades and threshold
#: gets a scale of its own name (same knobs, so the same numbers; its description names the dataset).
_FAMILIES = {
    "trec_dl": ("msmarco-passage/trec-dl-", "msmarco-document/trec-dl-", "msmarco-passage-v2/trec-dl-",
                "msmarco-document-v2/trec-dl-"),
    "msmarco": ("msmarco-passage/", "msmarco-document/", "msmarco-passage-v2/", "msmarco-document-v2/"),
    "beir": ("beir/",),
}


@functools.lru_cache(maxsize=64)
def dataset_scale(dataset_id: str) -> Scale | None:
    """The label scale of ``irds:<dataset_id>`` (None when it documents no grades).

    >>> dataset_scale("msmarco-passage/trec-dl-2019/judged").name  # doctest: +SKIP
    'trec_dl'
    """
    rule = grade_rule(dataset_id)
    if rule is None:
        return None
    grades = [float(g) for g in rule.grades]
    for name, families in _FAMILIES.items():
        named = SCALES[name]
        if (dataset_id.startswith(families) and list(named.grades) == grades and named.rel == rule.rel
                and named.negatives == rule.negatives and named.gains is None):
            return named
    listed = "; ".join(f"{g}: {t}" for g, t in sorted(rule.definitions.items()))
    return Scale(PREFIX + dataset_id, tuple(grades), rel=rule.rel, top=grades[-1], negatives=rule.negatives,
                 doc=f"ir_datasets' grade definitions ({listed}); {rule.how}.")


def scale_for(scale: Any, qrels: Any) -> Scale | None:
    """The label scale a call works under: ``scale`` when given (a name or a Scale), else the one
    an ``irds:`` qrels reference documents (:func:`dataset_scale`), else None.

    An explicit scale always wins; judgments of any other kind declare none.

    >>> scale_for("beir", "irds:x").name, scale_for(None, "qrels.txt")
    ('beir', None)
    """
    if scale is not None:
        return scale_named(scale)
    dataset_id = irds_id(qrels)
    return None if dataset_id is None else dataset_scale(dataset_id)


__all__ = ["dataset_scale", "scale_for"]
