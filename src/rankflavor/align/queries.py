"""Query codes: every query id named by the run or the qrels becomes an integer code, in byte
order of the ids (sorting by code is sorting by ``strcmp``, trec_eval's topic order).

Only the distinct ids are sorted: the readers dictionary-encode query ids (a dictionary per
chunk), and plain arrays are encoded here (:func:`encode`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import numpy as np
import pyarrow as pa

from rankflavor.base.kernels import distinct, run_starts
from rankflavor.io import arrow_ops
from rankflavor.io.columns import as_numpy, plain_strings, to_strings

#: Dictionary parts of a column: per chunk, the dictionary indices and the dictionary's names.
Parts = list[tuple[np.ndarray, list[str]]]


def query_names(
    run_query: pa.Array | pa.ChunkedArray, qrels_query: pa.Array | pa.ChunkedArray, listed: Iterable[str] = ()
) -> tuple[Parts, Parts, list[str]]:
    """Dictionary parts of run and qrels query ids and every id they name, in byte order (some
    may be named by no row).

    Parameters
    ----------
    run_query, qrels_query : the query id columns, dictionary-encoded per chunk or plain.
    listed : ids an input names with no row (``Run.listed_empty``, ``Qrels.listed_empty``):
        queries too, though no row holds them.

    Returns
    -------
    The run's parts, the qrels' parts, and the sorted ids: the arguments of :func:`coded_queries`.

    >>> _, _, ids = query_names(pa.array(["q2", "q10"]), pa.array(["q3", "q2"]), listed=["q0"])
    >>> ids
    ['q0', 'q10', 'q2', 'q3']
    """
    r_parts, j_parts = _dictionary_parts(run_query), _dictionary_parts(qrels_query)
    # Python orders str by code point, which is UTF-8 byte order.
    return r_parts, j_parts, sorted(set(listed).union(*(names for _, names in r_parts + j_parts)))


def coded_queries(
    r_parts: Parts, j_parts: Parts, ids: list[str], r_runs: tuple[np.ndarray, ...] | None = None,
    listed: Collection[str] = (),
) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray, np.ndarray, np.ndarray | None]:
    """Query codes of run and qrels rows, ranked by byte order of the id.

    Parameters
    ----------
    r_parts, j_parts, ids : what :func:`query_names` returns.
    r_runs : where the runs of one id start in each run part, when the reader found them
        (:attr:`Run.query_runs`).
    listed : ids an input names with no row: queries, kept though no row uses them.

    Returns
    -------
    The code of every run row and of every qrels row, the ids by code (ids no row uses and
    no input lists are no queries and are left out), the run's and the qrels' rows per code,
    and the first run row of each query when every query's run rows are one block (else None).

    >>> rq, jq, ids, n_run, n_qrels, starts = coded_queries(*query_names(pa.array(["b", "b", "a"]), pa.array(["c"])))
    >>> rq.tolist(), jq.tolist(), ids, n_run.tolist(), n_qrels.tolist(), starts.tolist()
    ([1, 1, 0], [2], ['a', 'b', 'c'], [1, 2, 0], [0, 0, 1], [0, 2])
    >>> coded_queries(*query_names(pa.array(["b"]), pa.array(["c"]), ["a"]), listed={"a"})[2]
    ['a', 'b', 'c']
    """
    code = {name: i for i, name in enumerate(ids)}
    (rq, run_rows, starts), (jq, qrels_rows, _) = row_codes(r_parts, code, runs=r_runs), row_codes(j_parts, code, blocks=False)
    used = (run_rows > 0) | (qrels_rows > 0)
    if listed and not used.all():
        used |= np.fromiter((name in listed for name in ids), dtype=bool, count=len(ids))
    if used.all():
        return rq, jq, ids, run_rows, qrels_rows, starts
    # A dictionary may name ids no row uses (e.g. a filtered categorical): they are no queries.
    renumber = (np.cumsum(used) - 1).astype(rq.dtype)
    return (renumber[rq], renumber[jq], [n for n, u in zip(ids, used, strict=True) if u], run_rows[used],
            qrels_rows[used], starts)


def _dictionary_parts(values: pa.Array | pa.ChunkedArray) -> Parts:
    """(dictionary indices, dictionary names) of each chunk."""
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    if not chunks or not all(pa.types.is_dictionary(c.type) for c in chunks):
        chunks = [encode(plain_strings(values))]
    return [(as_numpy(c.indices), to_strings(c.dictionary)) for c in chunks]


def row_codes(
    parts: Parts, code: dict[str, int], blocks: bool = True, runs: tuple[np.ndarray, ...] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The code of every row of dictionary ``parts``, given the ``code`` of each name.

    Rows come in runs of one id (files are written query by query): each part's runs are found
    by one comparison of neighbouring indices, and the codes are written run by run, so no row
    is looked up in a table or counted one at a time.

    Parameters
    ----------
    parts : (dictionary indices, dictionary names) of each chunk.
    code : the code of every name the dictionaries hold.
    blocks : find the first row of each code's block.
    runs : where each part's runs start, when known (runs of equal values are runs of equal
        indices in any encoding of the part).

    Returns
    -------
    The code of every row, the rows per code, and (with ``blocks``) the first row of each
    code's block when every code's rows are one block (None otherwise).
    """
    # int32 while the codes fit: half the memory of a pass over the run (fresh pages cost).
    kind: type[np.signedinteger[Any]] = np.int32 if len(code) < 1 << 31 else np.int64
    run_codes, run_firsts = [], []
    start = 0
    if runs is not None and len(runs) != len(parts):
        runs = None
    for k, (idx, names) in enumerate(parts):
        if len(idx):
            table = np.array([code[n] for n in names], dtype=kind)
            first = runs[k] if runs is not None else run_starts(idx)
            run_codes.append(table[idx[first]])
            run_firsts.append(first + start)
        start += len(idx)
    if not run_codes:
        return np.zeros(0, dtype=kind), np.zeros(len(code), dtype=np.int64), np.zeros(0, dtype=np.int64)
    codes, starts = np.concatenate(run_codes), np.concatenate(run_firsts).astype(np.int64, copy=False)
    joined = np.concatenate([[True], codes[1:] != codes[:-1]])  # a run may go on in the next part
    codes, starts = codes[joined], starts[joined]
    lengths = np.diff(np.append(starts, start))
    counts = np.zeros(len(code), dtype=np.int64)
    np.add.at(counts, codes, lengths)
    # More runs than codes: some code has two (no sort needed to know).
    one_block_each = blocks and len(codes) <= len(code) and len(distinct(codes)) == len(codes)
    return np.repeat(codes, lengths), counts, starts if one_block_each else None


def encode(values: pa.Array) -> pa.DictionaryArray:
    """``values`` dictionary-encoded as one array (of one dictionary)."""
    encoded = arrow_ops.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    return encoded
