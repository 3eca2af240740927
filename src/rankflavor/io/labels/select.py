"""``--labels``: which judgments to evaluate by their source's kind, everything left out counted.

Choices (:func:`parse_choice`):

``any`` (the default)
    Every judgment, whatever its source. Nothing is dropped; a (query, doc) pair judged by two
    sources is a duplicate judgment, resolved by the ``duplicates`` knob and counted, as any
    other duplicate.
``KIND`` (``human``, ``llm``, ``clicks``, or any other kind present)
    Only the judgments of that kind; the others are dropped and counted per kind.
``prefer=KIND``
    Where a (query, doc) pair has a judgment of KIND, only those; elsewhere every judgment, of
    whatever kind. What is dropped (the other kinds' judgments of pairs KIND judged) is counted.

Judgments that name no source (:attr:`Qrels.label_source` None) are one unnamed source: ``any``
keeps them as they are; any other choice is a :class:`~rankflavor.errors.UsageError` (there is
no kind to choose by), as is a kind no judgment has.

Judgments chosen already (read with ``labels=``, then evaluated with ``labels=``) are chosen
again from what the first choice kept: ``any`` leaves the first choice standing, another choice
is recorded after it (``prefer=human, then human``, or the one choice when both are the same),
and what either left out stays counted.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rankflavor.errors import UsageError
from rankflavor.io.labels.sources import KIND, KNOWN_KINDS, kind_codes, merged
from rankflavor.io.tables import Qrels

#: The ``--labels`` values the help lists (any other kind present is accepted too).
CHOICES = ("any", *KNOWN_KINDS, *(f"prefer={k}" for k in KNOWN_KINDS))


def parse_choice(text: str) -> tuple[str, str | None]:
    """``(mode, kind)`` of a ``--labels`` value: ``("any", None)``, ``("only", KIND)`` or
    ``("prefer", KIND)``.

    >>> parse_choice("any"), parse_choice("llm"), parse_choice(" prefer=human ")
    (('any', None), ('only', 'llm'), ('prefer', 'human'))
    """
    t = text.strip()
    mode, _, kind = t.partition("=") if "=" in t else ("only", "", t)
    mode = mode.strip()
    kind = kind.strip()
    if mode == "only" and kind == "any":
        return "any", None
    if mode not in ("only", "prefer") or not KIND.fullmatch(kind):
        raise UsageError(f"--labels: expected any, a kind ({', '.join(KNOWN_KINDS)}, or another kind present) or "
                         f"prefer=KIND, received {text!r}")
    return mode, kind


def canonical_choice(text: str) -> str:
    """The canonical text of a ``--labels`` value (``any``, ``llm``, ``prefer=human``)."""
    mode, kind = parse_choice(text)
    return "any" if mode == "any" else kind if mode == "only" else f"prefer={kind}"  # type: ignore[return-value]


def select_labels(qrels: Qrels, choice: str | None) -> Qrels:
    """``qrels`` keeping the judgments ``choice`` (a ``--labels`` value) selects, with the rule
    and what it dropped recorded (:attr:`Qrels.label_rule`, :attr:`Qrels.labels_dropped`).

    Raises
    ------
    UsageError
        For a choice other than ``any`` on judgments that name no source, or a kind that no
        judgment has (listing those present).

    Examples
    --------
    >>> import pyarrow as pa
    >>> q = Qrels(pa.array(["q", "q", "q"]), pa.array(["a", "a", "b"]), np.array([2.0, 1.0, 0.0]),
    ...           label_source=pa.array(["human:x", "llm:m", "llm:m"]))
    >>> kept = select_labels(q, "prefer=human")
    >>> kept.doc.to_pylist(), kept.labels_dropped
    (['a', 'b'], (('llm', 1),))
    """
    if choice is None:
        return qrels
    mode, kind = parse_choice(choice)
    if mode == "any":  # nothing more chosen: an earlier choice stands
        return qrels if qrels.label_source is None else dataclasses.replace(qrels, label_rule=qrels.label_rule or "any")
    rule = canonical_choice(choice)
    if qrels.label_source is None:
        raise UsageError(f"--labels {rule}: the judgments {qrels.source} name no label source; give a source column, "
                         "a fifth SOURCE field, or a rule for the file (--label-source human:NAME)")
    kinds, codes = kind_codes(qrels.label_source)
    if kind not in kinds:
        raise UsageError(f"--labels {rule}: no judgment in {qrels.source} is of kind {kind!r}; kinds present: "
                         + ", ".join(kinds))
    wanted = kinds.index(kind)
    mine = codes == wanted
    if mode == "only":
        keep = mine
    else:  # prefer: drop the other kinds' judgments of the pairs that KIND judged
        keep = mine | ~_pairs_judged_by(qrels, mine)
    if qrels.label_rule not in (None, "any", rule):  # chosen before, otherwise: both choices named
        rule = f"{qrels.label_rule}, then {rule}"
    if keep.all():  # nothing left out (what an earlier choice left out stays counted)
        return dataclasses.replace(qrels, label_rule=rule)
    dropped = np.bincount(codes[~keep], minlength=len(kinds))
    counted = tuple((k, int(n)) for k, n in zip(kinds, dropped.tolist(), strict=True) if n)
    # with what an earlier choice left out, when these judgments were chosen before
    return _subset(qrels, np.flatnonzero(keep), rule, merged((qrels.labels_dropped, counted)) or ())


def _pairs_judged_by(qrels: Qrels, mine: np.ndarray) -> np.ndarray:
    """Per row, does a row flagged in ``mine`` judge the same (query, doc) pair (``qrels`` has a
    row: the chosen kind's)."""
    # one code per distinct (query code, doc code) row: exact for any number of ids (no product of
    # codes that could overflow), and without the alignment package, which imports this one
    _, pair = np.unique(np.stack([_codes(qrels.query), _codes(qrels.doc)], axis=1), axis=0, return_inverse=True)
    pair = pair.ravel()  # (one axis whatever the NumPy: 2.0.0 gave this inverse another shape)
    return np.isin(pair, pair[mine])


def _codes(column) -> np.ndarray:  # type: ignore[no-untyped-def]
    from rankflavor.io.columns import as_numpy
    from rankflavor.io.labels.sources import encoded

    return as_numpy(encoded(column).indices).astype(np.int64)


def _subset(qrels: Qrels, rows: np.ndarray, rule: str, dropped: tuple[tuple[str, int], ...]) -> Qrels:
    from rankflavor.io.columns import dictionary_array, take, to_strings

    query = dictionary_array(to_strings(take(qrels.query, rows)))
    assert qrels.label_source is not None
    return dataclasses.replace(
        qrels,
        query=query,
        doc=take(qrels.doc, rows),
        grade=qrels.grade[rows],
        lines=qrels.lines_of(rows),
        from_file=False if qrels.lines_of(rows) is None else qrels.from_file,
        doc_canonical=None,
        label_source=take(qrels.label_source, rows),
        label_rule=rule,
        labels_dropped=dropped,
    )
