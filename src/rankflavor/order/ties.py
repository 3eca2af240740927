"""THE tie rules: how rows of equal score are ordered, and how ``averaged`` shares their gains.

Every path of the ranker (the full sort, the judged rows of a run in rank order, the top-k
prefix) orders tied rows through :func:`tie_order`, and every kernel gets tie-averaged gains
through :func:`averaged` / :func:`averaged_at`, so a rule is written once.

* ``docno_desc`` / ``docno_asc``: docno in byte order (``strcmp``, trec_eval's ``-M`` sort),
  descending / ascending; the file position of a row does not matter.
* ``input_order``: file order (a stable sort; LightGBM, XGBoost).
* ``pessimistic`` / ``optimistic``: lowest / highest grade first (CatBoost), then docno descending.
* ``averaged`` (McSherry-Najork): rows ordered as ``docno_desc`` (metrics that need an order
  read that one), and every row of a tie group earns the group's mean gain.

Each rule is data, :data:`TIE_TABLE`: the keys that order a run of equal scores and whether gains
are averaged over it. The NumPy paths here and :mod:`rankflavor.torch` both read that table, so a
rule added to it is either computed alike on tensors or refused there.

Examples
--------
>>> import numpy as np
>>> group = np.array([0, 0, 0]); docno_rank = np.array([2, 0, 1]); grade = np.array([1.0, 0.0, 3.0])
>>> tie_order(group, docno_rank, grade, "docno_desc").tolist()  # highest docno rank first
[0, 2, 1]
>>> tie_order(group, docno_rank, grade, "optimistic").tolist()
[2, 0, 1]
>>> averaged(np.array([1.0, 0.0, 3.0, 2.0]), np.array([0, 0, 1, 1])).tolist()
[0.5, 0.5, 2.5, 2.5]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from rankflavor.base.kernels import distinct, ranges
from rankflavor.io import arrow_ops
from rankflavor.io.columns import as_numpy, take
from rankflavor.order.layout import Layout, Rounded, Scores, equal_score_end

if TYPE_CHECKING:
    from rankflavor.align import Aligned

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


#: A key that orders the rows of a run of equal scores: (what, descending), what ``"docno"``
#: (byte order, ``strcmp``) or ``"grade"`` (under the grade policies; 0 when unjudged).
TieKey = tuple[str, bool]

DOCNO_ASC: TieKey = ("docno", False)
DOCNO_DESC: TieKey = ("docno", True)
GRADE_ASC: TieKey = ("grade", False)
GRADE_DESC: TieKey = ("grade", True)


@dataclass(frozen=True)
class TieRule:
    """What a value of the ``ties`` knob does.

    Attributes
    ----------
    keys : the keys ordering a run of equal scores, most significant first; none: file order
        (a stable sort). Every rule with keys ends in a docno key, so its order is total.
    averaged : every row of a tie group earns the group's mean gain (McSherry-Najork); the rows
        are still ordered by ``keys`` for metrics that read an order.
    """

    keys: tuple[TieKey, ...]
    averaged: bool = False


#: Every tie rule, by the value of the ``ties`` knob.
TIE_TABLE: dict[str, TieRule] = {
    "docno_desc": TieRule((DOCNO_DESC,)),
    "docno_asc": TieRule((DOCNO_ASC,)),
    "input_order": TieRule(()),
    "averaged": TieRule((DOCNO_DESC,), averaged=True),
    "pessimistic": TieRule((GRADE_ASC, DOCNO_DESC)),
    "optimistic": TieRule((GRADE_DESC, DOCNO_DESC)),
}


def order_rule(ties: str) -> str:
    """The rule that orders tied rows: an averaging rule orders them as the plain rule with the
    same keys (``averaged`` as ``docno_desc``: only NDCG/DCG average gains; P@k, AP and Judged@k
    need an order), so the two share one ordering."""
    plain = TieRule(TIE_TABLE[ties].keys)
    return next(name for name, rule in TIE_TABLE.items() if rule == plain)


def reads_grades(rule: str) -> bool:
    """Does the tie ``rule`` order by grade (so its order depends on the grade policies)?"""
    return any(what == "grade" for what, _ in TIE_TABLE[rule].keys)


_POW10 = 10 ** np.arange(1, 19, dtype=np.int64)


def docno_byte_order(aligned: Aligned, rows: npt.NDArray[np.integer]) -> Ints:
    """Argsort of the docnos of aligned run ``rows`` in byte order (``strcmp``).

    Canonical integer docnos skip the strings: right-padding the digits with zeros to a common
    width, then breaking equal pads by length, orders them exactly as their text ("1" < "10" <
    "100" < "11" < "2").
    """
    offset = aligned.doc_value_offset
    if offset is not None and len(rows):
        value = aligned.run_doc[rows] + offset
        digits = np.searchsorted(_POW10, value, side="right") + 1
        width = int(digits.max())
        if width <= 16:
            padded = value * 10 ** (width - digits)
            return np.argsort(padded * 32 + digits)  # keys are distinct within a query
    return as_numpy(arrow_ops.sort_indices(take(aligned.run_doc_strings, aligned.input_rows(rows))))


#: :func:`tie_order` combines its keys into one int64 key while their product stays below this.
ONE_KEY_LIMIT = 2.0**62


def tie_order(group: Ints, docno_rank: Ints, grade: Floats, rule: str) -> Ints:
    """Permutation ordering tied rows (given in rank order, with their tie group, docno rank
    and grade) by group, then by the keys of the tie ``rule`` (:data:`TIE_TABLE`; a rule
    with keys, as :func:`order_rule` gives them)."""
    n = len(group)
    keys: list[Ints] = []
    sizes: list[int] = []
    for what, descending in TIE_TABLE[rule].keys:
        if what == "docno":
            code, size = docno_rank, n
        else:  # grade: its level among the distinct grades
            levels = distinct(grade)
            code, size = np.searchsorted(levels, grade), len(levels)
        keys.append(size - 1 - code if descending else code)
        sizes.append(size)
    # Every combined key is below (largest group id + 1) x the key sizes: the group ids (of a
    # whole run's tie groups) may be far more than the n rows here.
    if (float(group.max(initial=-1)) + 1.0) * math.prod(map(float, sizes)) < ONE_KEY_LIMIT:  # beats a lexsort
        combined = group
        for code, size in zip(keys, sizes, strict=True):
            combined = combined * size + code
        return np.argsort(combined)  # the last key (docno) is distinct: any sort is exact
    return np.lexsort((*reversed(keys), group))


@dataclass(frozen=True)
class TiedRows:
    """The rows of a sorted run that need the tie rule: their positions in the sorted order,
    their tie group and the byte-order rank of their docno among them."""

    pos: Ints
    group: Ints
    docno_rank: Ints


def tied_rows(order: Ints, q: npt.NDArray[np.integer], score: Scores, aligned: Aligned, exact_rows: bool = True,
              identity: bool = False) -> TiedRows | None:
    """The rows of ``order`` (rows sorted by query and score; ``identity``: it is 0..n-1) that
    share their query and score with a neighbour.

    Only tied rows need a docno comparison (trec_eval's ``strcmp``), so only their strings are
    sorted; without ``exact_rows`` only the tie groups whose rows differ in judgment: no order
    of a group of equal judgments changes what a kernel reads at each rank. None when nothing
    needs ordering.
    """
    if len(order) < 2:
        return None
    qs = q if identity else q[order]
    ss = score if identity else score[order]
    same = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    if not same.any():
        return None
    group_of_row = np.cumsum(np.concatenate([[True], ~same]))
    if exact_rows:
        tied = np.zeros(len(order), dtype=bool)
        tied[1:] |= same
        tied[:-1] |= same
    else:
        g = aligned.run_grade if identity else aligned.run_grade[order]
        g = np.where(np.isnan(g), np.inf, g)  # unjudged is its own value (grades are finite)
        mixed = same & (g[1:] != g[:-1])
        if not mixed.any():
            return None
        mixed_group = np.zeros(int(group_of_row[-1]) + 1, dtype=bool)
        mixed_group[group_of_row[1:][mixed]] = True
        tied = mixed_group[group_of_row]
    pos = np.flatnonzero(tied)
    by_docno = docno_byte_order(aligned, order[pos])
    docno_rank = np.empty(len(pos), dtype=np.int64)
    docno_rank[by_docno] = np.arange(len(pos))
    return TiedRows(pos, group_of_row[pos], docno_rank)


def break_ties(order: Ints, tied: TiedRows | None, grade: Floats, rule: str) -> Ints:
    """Reorder rows inside each run of equal scores by the tie ``rule``; file order stays
    otherwise. ``order`` itself is returned when nothing moves."""
    if not TIE_TABLE[rule].keys or tied is None:
        return order
    rows = order[tied.pos]
    out = order.copy()
    out[tied.pos] = rows[tie_order(tied.group, tied.docno_rank, grade[rows], rule)]
    return out


def retie_judged(aligned: Aligned, score: Scores | Rounded, layout: Layout, block: Ints, grade: Floats,
                 rule: str, position: Ints) -> None:
    """Move the judged rows of a run in rank order (``aligned.judged_row``, in query blocks
    ``block`` of ``layout``; ``grade`` under the ordering) to their positions after the tie
    ``rule`` orders every run of equal scores that mixes judgments; in ``position``, in place.

    Only those runs of equal scores are found (by bisection: scores descend in a block), so no
    pass over every row of the run.
    """
    jr = aligned.judged_row
    q = aligned.run_q
    n = len(q)
    prev_tied = np.zeros(len(jr), dtype=bool)
    next_tied = np.zeros(len(jr), dtype=bool)
    has_prev, has_next = jr > 0, jr < n - 1
    p, nx = jr[has_prev], jr[has_next]
    prev_tied[has_prev] = (q[p] == q[p - 1]) & (score[p] == score[p - 1])
    next_tied[has_next] = (q[nx] == q[nx + 1]) & (score[nx] == score[nx + 1])
    tied = prev_tied | next_tied
    if not tied.any():
        return
    rows_tied, block_tied = jr[tied], block[tied]
    block_start = layout.starts[block_tied]
    first = equal_score_end(score, rows_tied, block_start, rows_tied, left=True)
    last = equal_score_end(score, rows_tied, rows_tied, block_start + layout.lengths[block_tied] - 1, left=False)
    new_group = np.concatenate([[True], first[1:] != first[:-1]])  # ``first`` ascends with the rows
    a, b = first[new_group], last[new_group] + 1
    # A group mixes judgments if it holds an unjudged row or judged rows of different grades.
    lo, hi = np.searchsorted(jr, a), np.searchsorted(jr, b)
    raw = aligned.judged_grade
    member = np.repeat(np.arange(len(a)), hi - lo)
    differs = np.zeros(len(a), dtype=bool)
    differs[member[raw[ranges(lo, hi - lo)] != raw[lo][member]]] = True
    mixed = ((hi - lo) < (b - a)) | differs
    if not mixed.any():
        return
    a, b = a[mixed], b[mixed]
    group_of = np.repeat(np.arange(len(a)), b - a)
    rows = ranges(a, b - a)
    at = np.minimum(np.searchsorted(jr, rows), len(jr) - 1)
    is_judged = jr[at] == rows
    row_grade = np.where(is_judged, grade[at], 0.0)
    by_docno = docno_byte_order(aligned, rows)
    docno_rank = np.empty(len(rows), dtype=np.int64)
    docno_rank[by_docno] = np.arange(len(rows))
    local = tie_order(group_of, docno_rank, row_grade, rule)
    # The row rows[local[k]] takes the place of rows[k].
    new_place = np.empty(len(rows), dtype=np.int64)
    new_place[local] = rows
    position[at[is_judged]] = new_place[is_judged]


def tie_groups(q: npt.NDArray[np.integer], score: Scores) -> Ints:
    """Id of the run of equal scores each ranked row belongs to (increasing along the rows,
    never shared across queries)."""
    new_group = np.ones(len(q), dtype=bool)
    if len(q) > 1:
        new_group[1:] = (q[1:] != q[:-1]) | (score[1:] != score[:-1])
    return np.cumsum(new_group) - 1


def averaged(gain: Floats, tie_group: Ints) -> Floats:
    """McSherry-Najork: every row of a tie group earns the group's mean gain."""
    if not len(gain):
        return gain
    sums = np.bincount(tie_group, weights=gain)
    sizes = np.bincount(tie_group)
    return (sums / sizes)[tie_group]


def averaged_at(gain_of_rows: Callable[[Ints], Floats], tie_group: Ints, top: Ints) -> Floats:
    """:func:`averaged` at rows ``top`` only (ascending, as a kernel's ``flatnonzero`` gives
    them), from the gains of the groups that reach into ``top`` (``gain_of_rows(rows)``): summed
    in row order, as over the whole list, so the same means bit for bit."""
    at = tie_group[top]
    if (at[1:] < at[:-1]).any():
        raise ValueError("averaged_at: the rows must be in ascending order")
    first = np.ones(len(at), dtype=bool)
    first[1:] = at[1:] != at[:-1]
    groups = at[first]
    sizes = np.bincount(tie_group)  # group ids run 0, 1, ... along the rows
    size = sizes[groups]
    start = (np.cumsum(sizes) - sizes)[groups]
    g = gain_of_rows(ranges(start, size))
    mean = np.bincount(np.repeat(np.arange(len(groups)), size), weights=g, minlength=len(groups)) / size
    return mean[np.cumsum(first) - 1]
