"""Label sources: who or what gave each judgment, as the text ``KIND:DETAIL`` (or a bare ``KIND``).

``KIND`` is the text before the first ``:`` (``human``, ``llm``, ``clicks``; any other kind is
kept and is its own kind), ``DETAIL`` names the rater, the model and prompt, or the click
model: ``human:nist``, ``llm:gpt-4o@3f2a9c1b7d4e``, ``clicks:coec``. A :class:`~rankflavor.io.tables.Qrels`
holds one source per judgment in :attr:`~rankflavor.io.tables.Qrels.label_source`, or None when
its judgments come from one source that is not named (every judgments file before sources
existed): then nothing here runs.

A source is refused (naming the file and the line or row) when it is empty, holds a NUL byte,
or its kind is not lower-case letters, digits, ``_`` and ``-`` starting with a letter: kinds are
printed in flavor strings (``labels=human+llm``), so they must read back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pyarrow as pa

from rankflavor.errors import InputError
from rankflavor.flavor.knobs import LABEL_KIND
from rankflavor.io import arrow_ops
from rankflavor.io.columns import as_numpy, to_strings

#: The kinds the issue names, in the order counts are shown; other kinds follow alphabetically.
KNOWN_KINDS: tuple[str, ...] = ("human", "llm", "clicks")
KIND = LABEL_KIND  # one rule for a kind, in the flavor vocabulary and the readers


def kind_of(source: str) -> str:
    """The kind of a source: the text before its first ``:``.

    >>> kind_of("llm:gpt-4o@3f2a9c1b7d4e"), kind_of("human"), kind_of("clicks:coec")
    ('llm', 'human', 'clicks')
    """
    return source.split(":", 1)[0]


def source_problem(source: str) -> str | None:
    """Why ``source`` is not a label source, or None when it is one.

    >>> source_problem("human:nist") is None, source_problem("Human:x")
    (True, "label source 'Human:x': its kind 'Human' must be lower-case letters, digits, _ or - (e.g. human:NAME, llm:MODEL, clicks:coec)")
    """
    if not source:
        return "label source is empty (expected KIND:DETAIL, e.g. human:nist, llm:MODEL, clicks:coec)"
    if "\x00" in source:
        return "label source holds a NUL byte"
    kind = kind_of(source)
    if not KIND.fullmatch(kind):
        return (f"label source {source!r}: its kind {kind!r} must be lower-case letters, digits, _ or - "
                "(e.g. human:NAME, llm:MODEL, clicks:coec)")
    return None


def ordered_kinds(kinds: set[str] | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Kinds in display order: human, llm, clicks, then the others alphabetically.

    >>> ordered_kinds({"zzz", "llm", "human"})
    ('human', 'llm', 'zzz')
    """
    known = [k for k in KNOWN_KINDS if k in kinds]
    return (*known, *sorted(k for k in kinds if k not in KNOWN_KINDS))


def encoded(column: pa.Array | pa.ChunkedArray) -> pa.DictionaryArray:
    """A source column as one dictionary array (its distinct sources are its dictionary)."""
    if isinstance(column, pa.ChunkedArray):
        if pa.types.is_dictionary(column.type) and column.num_chunks > 1:
            column = column.unify_dictionaries()
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if pa.types.is_dictionary(column.type):
        return column
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        column = arrow_ops.cast(column, pa.string())
    return arrow_ops.dictionary_encode(column)


def checked_sources(column: pa.Array | pa.ChunkedArray, source: str,
                    where: Callable[[int], tuple[int | None, str]]) -> pa.DictionaryArray:
    """``column`` (one source per row) dictionary-encoded, each distinct source checked once;
    a null or bad one is an :class:`InputError` naming the first row (``where(row)``: its line,
    and how the format names a row) that holds it."""
    values = encoded(column)
    if values.null_count:
        row = int(np.flatnonzero(~as_numpy(values.is_valid()))[0])
        raise _bad(source, where, row, "label source is missing (null): give one, or a rule (--label-source)")
    names = to_strings(values.dictionary) if len(values.dictionary) else []
    indices = as_numpy(values.indices)
    for code, name in enumerate(names):
        problem = source_problem(name)
        if problem is not None:
            used = np.flatnonzero(indices == code)
            if len(used):
                raise _bad(source, where, int(used[0]), problem)
    return values


def kind_codes(column: pa.Array | pa.ChunkedArray) -> tuple[tuple[str, ...], np.ndarray]:
    """The kinds present (:func:`ordered_kinds`) and each row's kind as an index into them."""
    values = encoded(column)
    names = to_strings(values.dictionary) if len(values.dictionary) else []
    indices = as_numpy(values.indices)
    kinds = ordered_kinds({kind_of(n) for n in set(names)})
    position = {k: i for i, k in enumerate(kinds)}
    per_entry = np.array([position[kind_of(n)] for n in names], dtype=np.int64)
    used = np.unique(indices) if len(indices) else np.zeros(0, dtype=np.int64)
    present = ordered_kinds({kind_of(names[i]) for i in used.tolist()})
    if present != kinds:  # an entry no row uses: index the kinds the rows hold
        position = {k: i for i, k in enumerate(present)}
        per_entry = np.array([position.get(kind_of(n), -1) for n in names], dtype=np.int64)
        kinds = present
    return kinds, per_entry[indices] if len(names) else np.zeros(len(indices), dtype=np.int64)


def one_source(n: int, text: str) -> pa.DictionaryArray:
    """``n`` rows of the source ``text`` (a rule for a whole file), as a dictionary array."""
    from rankflavor.io.columns import from_numpy, string_array

    return pa.DictionaryArray.from_arrays(from_numpy(np.zeros(n, dtype=np.int32)), string_array([text]))


def _bad(source: str, where: Callable[[int], tuple[int | None, str]], row: int, message: str) -> InputError:
    line, label = where(row)
    return InputError(source, line, label + message)


#: Labels per kind, in display order: ``(("human", 2043), ("llm", 380))``.
LabelCounts = tuple[tuple[str, int], ...]


def per_query(kinds: Sequence[str], codes: np.ndarray, judgment_query: np.ndarray, n_queries: int) -> np.ndarray:
    """``(n_queries, len(kinds))``: per query code, its judgments of each kind.

    >>> per_query(("human", "llm"), np.array([0, 1, 1]), np.array([0, 0, 1]), 2).tolist()
    [[1, 1], [0, 1]]
    """
    n = len(kinds)
    flat = np.asarray(judgment_query, dtype=np.int64) * n + codes
    return np.bincount(flat, minlength=n_queries * n).reshape(n_queries, n)


def merged(parts: Iterable[LabelCounts | None]) -> LabelCounts | None:
    """The counts of pieces of disjoint queries added up (None when no piece counted any)."""
    total: dict[str, int] = {}
    seen = False
    for part in parts:
        if part is None:
            continue
        seen = True
        for kind, n in part:
            total[kind] = total.get(kind, 0) + n
    if not seen:
        return None
    return tuple((k, total[k]) for k in ordered_kinds(list(total)))
