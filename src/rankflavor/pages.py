"""Fresh memory in ordinary pages while rankflavor evaluates.

NumPy advises the kernel to back each array of 4 MB or more with transparent huge pages. An
evaluation writes a few hundred MB of fresh arrays once each (a 7M-line run's scores, docno
keys, query codes), and on virtual machines whose memory the host backs only when first touched
(the 2-core VM the benchmarks run on), a fresh huge page costs about three times as much per MB
as fresh 4 KB pages: with the advice off, the 7k x 1000 bench job took 0.91x the wall time in 21
alternated pairs, and the system time fell from 0.85 s to 0.53 s. Where memory is backed up front
(most bare metal), the difference is a few tens of ms either way.

:func:`small_pages` turns the advice off for the duration of an evaluation and restores NumPy's
setting when the last evaluation running in the process ends. A process started with
``NUMPY_MADVISE_HUGEPAGE`` set keeps what it chose.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_active = 0
_saved = True


def _setter() -> Callable[[bool], bool] | None:
    """NumPy's switch for the advice (returns the previous setting); None where it has none."""
    import numpy as np

    for module in ("_core", "core"):
        multiarray = getattr(getattr(np, module, None), "multiarray", None)
        setter = getattr(multiarray, "_set_madvise_hugepage", None)
        if callable(setter):
            return setter  # type: ignore[no-any-return]
    return None


@contextmanager
def small_pages() -> Iterator[None]:
    """Allocate NumPy arrays without the huge-page advice inside the block (re-entrant, and
    shared by threads: the setting comes back when the last block exits)."""
    global _active, _saved
    setter = None if "NUMPY_MADVISE_HUGEPAGE" in os.environ else _setter()
    if setter is None:
        yield
        return
    with _lock:
        if _active == 0:
            _saved = setter(False)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                setter(_saved)
