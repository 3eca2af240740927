"""``--label-source``: a rule giving the judgments of a file their label source.

Two forms (:func:`apply_rule`):

``SOURCE`` (``human:nist``, ``llm:gpt-4o``)
    Every judgment of a file that names no source (a TREC qrels file of four fields, a CSV file
    without a ``source`` column) has this source. A file that names its sources already is
    refused with it: one of the two would be silently ignored.
``NAME=SOURCE[,NAME=SOURCE...]``
    Sources the file names are renamed: a judgment whose source is ``NAME``, or whose source's
    detail is ``NAME`` (a Quepid judge ``OSC AI Judge`` is read as ``human:OSC AI Judge``:
    Quepid's export does not say which judges are AI judges), gets ``SOURCE``. A ``NAME`` no
    judgment has is refused (a typo would otherwise leave the labels as they were).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa

from rankflavor.errors import UsageError
from rankflavor.io.columns import as_numpy, from_numpy, string_array, to_strings
from rankflavor.io.labels.sources import encoded, one_source, source_problem
from rankflavor.io.tables import Qrels


def parse_rule(text: str) -> str | dict[str, str]:
    """A ``--label-source`` value: one source, or ``{NAME: SOURCE}``.

    >>> parse_rule("human:nist"), parse_rule("OSC AI Judge=llm:osc, bob=human:bob")
    ('human:nist', {'OSC AI Judge': 'llm:osc', 'bob': 'human:bob'})
    """
    t = text.strip()
    if "=" not in t:
        _check(t, text)
        return t
    out: dict[str, str] = {}
    for part in t.split(","):
        name, sep, target = part.partition("=")
        name, target = name.strip(), target.strip()
        if not sep or not name:
            raise UsageError(f"--label-source: expected SOURCE or NAME=SOURCE,..., received {part.strip()!r}")
        _check(target, text)
        if name in out:
            raise UsageError(f"--label-source: {name!r} given twice")
        out[name] = target
    return out


def _check(source: str, text: str) -> None:
    problem = source_problem(source)
    if problem is not None:
        raise UsageError(f"--label-source {text!r}: {problem}")


def apply_rule(qrels: Qrels, rule: str | None) -> Qrels:
    """``qrels`` with the label sources ``rule`` (a ``--label-source`` value) gives them.

    Raises
    ------
    UsageError
        A single source for judgments that name theirs; a rename for judgments that name none,
        or naming a source no judgment has.
    """
    if rule is None:
        return qrels
    parsed = parse_rule(rule)
    if isinstance(parsed, str):
        if qrels.label_source is not None:
            raise UsageError(f"--label-source {parsed}: {qrels.source} names the source of each judgment already "
                             "(a source column or field); rename its sources with NAME=SOURCE instead")
        return dataclasses.replace(qrels, label_source=one_source(len(qrels), parsed))
    if qrels.label_source is None:
        raise UsageError(f"--label-source {rule}: {qrels.source} names no label source to rename; give one source "
                         "for the whole file (--label-source human:NAME)")
    values = encoded(qrels.label_source)
    names = to_strings(values.dictionary) if len(values.dictionary) else []
    indices = as_numpy(values.indices)
    used = set(np.unique(indices).tolist())
    present = [n for i, n in enumerate(names) if i in used]
    renamed = []
    hit: set[str] = set()
    for name in names:
        key = name if name in parsed else name.split(":", 1)[1] if ":" in name and name.split(":", 1)[1] in parsed else None
        if key is not None:
            hit.add(key)
        renamed.append(parsed[key] if key is not None else name)
    missing = [n for n in parsed if n not in hit]
    if missing:
        raise UsageError(f"--label-source: no judgment of {qrels.source} has the source {missing[0]!r}; sources "
                         "present: " + ", ".join(present[:10]) + (", ..." if len(present) > 10 else ""))
    codes = from_numpy(indices.astype(np.int32, copy=False))
    return dataclasses.replace(qrels, label_source=pa.DictionaryArray.from_arrays(codes, string_array(renamed)))
