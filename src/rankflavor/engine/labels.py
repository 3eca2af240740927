"""The labels a measure evaluated, counted by the kind of their source, and the ``sources`` knob.

A measure's labels are the judgments (duplicates resolved) of the queries of its per-query
table (those its policies left out, such as ``missing=skip`` or ``empty=skip``, are not
counted). When they are of more than one kind, the measure carries the quiet knob
``sources=KIND+KIND`` (kinds sorted), so its flavor string says the number is not of one kind
of label; a measure that names the knob itself is refused where its labels are of other kinds,
as ``raters`` and ``order`` are refused where the inputs are not what they state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rankflavor.errors import UsageError
from rankflavor.io.labels.sources import LabelCounts

if TYPE_CHECKING:
    from rankflavor.align import Aligned
    from rankflavor.io.tables import Qrels
    from rankflavor.metrics.measure import Measure

def counted(aligned: Aligned, queries: np.ndarray) -> LabelCounts | None:
    """The labels of the query codes flagged in ``queries``, per kind present among them (None
    when the judgments name no source)."""
    table = aligned.label_counts
    if table is None:
        return None
    sums = table[queries].sum(axis=0) if len(table) else np.zeros(len(aligned.label_kinds), dtype=np.int64)
    return tuple((k, int(n)) for k, n in zip(aligned.label_kinds, sums.tolist(), strict=True) if n)


def knob_value(labels: LabelCounts | None) -> str:
    """The ``sources`` knob of a measure whose evaluated labels are ``labels``.

    >>> knob_value((("human", 3), ("llm", 2))), knob_value((("llm", 5),)), knob_value(None)
    ('human+llm', 'one', 'one')
    """
    kinds = [k for k, n in labels or () if n]
    return "+".join(sorted(kinds)) if len(kinds) > 1 else "one"


def labelled(measure: Measure, labels: LabelCounts | None, source: str) -> Measure:
    """``measure`` with the ``sources`` knob its evaluated ``labels`` give it.

    Raises
    ------
    UsageError
        When the measure names the knob and the labels are of other kinds (``source``: the
        judgments, for the message).
    """
    found = knob_value(labels)
    stated = str(measure.flavor.sources)
    if stated == found:
        return measure
    if stated == "one":
        return measure.with_knobs(sources=found)
    what = ("name no label source" if labels is None else
            "are of one kind" if found == "one" else f"are of the kinds {found}")
    raise UsageError(f"{measure.name} sets sources={stated} but the labels it evaluates in {source} {what}; drop the "
                     "knob (the engine sets it from the judgments' sources), or choose the labels with --labels")


def sentence(labels: LabelCounts) -> str:
    """``2,043 human labels, 380 llm labels``.

    >>> sentence((("human", 2043), ("llm", 1)))
    '2,043 human labels, 1 llm label'
    """
    return ", ".join(f"{n:,} {k} label{'s' if n != 1 else ''}" for k, n in labels) if labels else "no labels"


def verdict_note(name: str, qrels: Qrels, queries: Sequence[str] | np.ndarray) -> str:
    """What the labels behind a comparison's verdict on ``queries`` are (``compare``): by kind,
    and said plainly when they are an LLM's alone.

    >>> import pyarrow as pa
    >>> from rankflavor.io.tables import Qrels
    >>> q = Qrels(pa.array(["a", "a", "b"]), pa.array(["x", "y", "x"]), np.array([1.0, 0.0, 2.0]),
    ...           label_source=pa.array(["llm:m", "llm:m", "human:n"]))
    >>> verdict_note("ndcg@10", q, ["a"])
    'ndcg@10: the verdict rests on LLM labels alone (2 llm labels over the 1 queries compared)'
    """
    from rankflavor.io.columns import to_strings
    from rankflavor.io.labels.sources import kind_codes

    assert qrels.label_source is not None
    kinds, codes = kind_codes(qrels.label_source)
    wanted = {str(q) for q in queries}
    mine = np.fromiter((q in wanted for q in to_strings(qrels.query)), dtype=bool, count=len(qrels))
    tally = np.bincount(codes[mine], minlength=len(kinds))
    labels = tuple((k, int(n)) for k, n in zip(kinds, tally.tolist(), strict=True) if n)
    over = f"{sentence(labels)} over the {len(wanted)} queries compared"
    if labels and all(k == "llm" for k, _ in labels):
        return f"{name}: the verdict rests on LLM labels alone ({over})"
    return f"{name}: labels behind the verdict: {over}"
