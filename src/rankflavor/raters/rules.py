"""Aggregation of several raters' grades into one grade per (query, document), by a named rule.

The result is an ordinary :class:`~rankflavor.io.tables.Qrels`; its ``source`` names the rule
(``ratings.csv[raters=median]``), so the rule travels into the provenance of every result the
engine computes from it, and :func:`rankflavor.raters.files.write_aggregated` writes it into the
header comment of the qrels file it writes.

Rules (``g`` are one pair's grades, sorted ascending, ``n`` of them):

``mean``
    The arithmetic mean (a fractional grade when the raters differ).
``rounded_mean``
    The mean rounded half away from zero (2.5 -> 3): Ruby's ``Float#round``, which Quepid applied
    to the mean of a book's judgements for explicit-judgement books until Quepid PR #1597
    (``app/services/ratings_manager.rb``, before commit 3fde9375, January 2026).
``quepid``
    Quepid's rule since PR #1597: with fewer than 3 ratings their mean; otherwise the top three
    ratings' common value if they agree, else the least of the three - which is the third highest
    rating in both cases; then rounded as ``rounded_mean`` (explicit-judgement books).
``median``
    The median (the mean of the two middle grades when ``n`` is even, so possibly x.5).
``majority``
    The most frequent grade; a tie between grades goes to the lowest of them (the cautious
    choice: a document is not promoted on a split vote).
``max``, ``min``
    The highest or lowest grade.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankflavor.errors import UsageError, did_you_mean
from rankflavor.io.columns import dictionary_array, string_array
from rankflavor.io.tables import Qrels
from rankflavor.raters.ratings import Ratings

#: Per rule: its meaning, shown by ``rankflavor raters --help`` and in errors.
RULES: dict[str, str] = {
    "mean": "arithmetic mean",
    "rounded_mean": "mean rounded half away from zero (Quepid before PR #1597)",
    "quepid": "Quepid since PR #1597: mean of 1-2 ratings, else the third highest, rounded",
    "median": "median (middle two averaged)",
    "majority": "most frequent grade, ties to the lowest",
    "max": "highest grade",
    "min": "lowest grade",
}


def round_half_away(x: np.ndarray) -> np.ndarray:
    """Round half away from zero, as Ruby's ``Float#round`` (NumPy rounds half to even).

    Examples
    --------
    >>> round_half_away(np.array([0.5, 1.5, 2.5, -0.5, 2.4])).tolist()
    [1.0, 2.0, 3.0, -1.0, 2.0]
    """
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def check_rule(rule: str) -> str:
    """``rule`` if it is a known rule, else a :class:`~rankflavor.errors.UsageError` listing them."""
    if rule not in RULES:
        raise UsageError(f"unknown raters rule '{rule}'; valid rules: {', '.join(RULES)}." + did_you_mean(rule, RULES))
    return rule


def aggregate_ratings(ratings: Ratings, rule: str) -> Qrels:
    """One grade per (query, document) from several raters' grades, by ``rule``.

    Parameters
    ----------
    ratings : Ratings
        The ratings (see :func:`rankflavor.raters.files.read_ratings`).
    rule : str
        One of :data:`RULES`.

    Returns
    -------
    Qrels
        One row per pair in (query, doc) order; ``source`` is ``"<ratings source>[raters=<rule>]"``.

    Raises
    ------
    UsageError
        For an unknown rule.

    Examples
    --------
    >>> r = Ratings.from_rows([("q", "d", "a", 1), ("q", "d", "b", 2), ("q", "d", "c", 2), ("q", "e", "a", 0)])
    >>> aggregate_ratings(r, "mean").grade.round(4).tolist(), aggregate_ratings(r, "min").grade.tolist()
    ([1.6667, 0.0], [1.0, 0.0])
    >>> aggregate_ratings(r, "median").source
    'ratings[raters=median]'
    """
    check_rule(rule)
    codes, pair_query, pair_doc = ratings.pairs()
    order = np.lexsort((ratings.grade, codes))
    g = ratings.grade[order]
    c = codes[order]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]]) if len(c) else np.zeros(0, dtype=np.int64)
    counts = np.diff(np.r_[starts, len(c)])
    grades = _RULE_FNS[rule](g, c, starts, counts)
    return Qrels(dictionary_array(list(pair_query)), string_array(list(pair_doc)), grades.astype(np.float64),
                 f"{ratings.source}[raters={rule}]", raters=rule)


_Fn = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _mean(g: np.ndarray, c: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    return np.add.reduceat(g, starts) / counts if len(g) else g


def _median(g: np.ndarray, c: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    return (g[starts + (counts - 1) // 2] + g[starts + counts // 2]) / 2


def _majority(g: np.ndarray, c: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    # Runs of one grade within a pair (rows sorted by pair, then grade).
    run_starts = np.flatnonzero(np.r_[True, (c[1:] != c[:-1]) | (g[1:] != g[:-1])]) if len(g) else starts
    run_len = np.diff(np.r_[run_starts, len(g)])
    run_pair, run_grade = c[run_starts], g[run_starts]
    # Per pair, the longest run, the lowest grade among equally long ones.
    best = np.lexsort((run_grade, -run_len, run_pair))
    first = np.r_[True, run_pair[best][1:] != run_pair[best][:-1]]
    return run_grade[best][first]


def _quepid(g: np.ndarray, c: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    # The top three agree -> their value; else their least: the third highest either way.
    third = g[np.maximum(starts + counts - 3, starts)]
    return round_half_away(np.where(counts < 3, _mean(g, c, starts, counts), third))


_RULE_FNS: dict[str, _Fn] = {
    "mean": _mean,
    "rounded_mean": lambda g, c, s, n: round_half_away(_mean(g, c, s, n)),
    "quepid": _quepid,
    "median": _median,
    "majority": _majority,
    "max": lambda g, c, s, n: np.maximum.reduceat(g, s) if len(g) else g,
    "min": lambda g, c, s, n: np.minimum.reduceat(g, s) if len(g) else g,
}
