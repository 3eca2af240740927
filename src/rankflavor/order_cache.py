# temporary: replaced by the Ranker's caches (the evaluation plan owns them).
"""Work shared by every ordering of one alignment (score sorts, docno ranks of tied rows, ideal
lists), kept against the alignment without being part of it: order.py and metrics/ndcg.py keep
here what they used to keep in a mutable ``memo`` field of the frozen :class:`Aligned`.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .align import Aligned

# temporary: replaced by the Ranker's caches
_MEMOS: weakref.WeakKeyDictionary[Aligned, dict[Any, Any]] = weakref.WeakKeyDictionary()


def memo_of(aligned: Aligned) -> dict[Any, Any]:
    """The cache of ``aligned``: one per alignment (by identity), gone with it.

    >>> from rankflavor.align import align
    >>> from rankflavor.io.inputs import as_qrels, as_run
    >>> q, r = as_qrels({"q": {"d": 1}}), as_run({"q": {"d": 1.0}})
    >>> a, b = align(q, r), align(q, r)
    >>> memo_of(a) is memo_of(a), memo_of(a) is memo_of(b)
    (True, False)
    """
    memo = _MEMOS.get(aligned)
    if memo is None:
        memo = _MEMOS.setdefault(aligned, {})
    return memo
