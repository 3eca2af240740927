"""Fresh memory in ordinary pages for the ``rankflavor`` command: a setting of the process, made
by the command, never by the library.

NumPy advises the kernel to back each large array with transparent huge pages. An evaluation
writes its large arrays once each (a big run's scores, docno keys, query codes), and on virtual
machines whose memory the host backs only when first touched, a fresh huge page costs more per
byte than fresh ordinary pages; where memory is backed up front (most bare metal) it makes
little difference either way. The measurements are in ``bench/RESULTS.md``.

NumPy reads its public switch, the environment variable ``NUMPY_MADVISE_HUGEPAGE``, once, when it
is imported. :func:`prefer_small_pages` sets it to ``0`` for the ``rankflavor`` command before
anything imports NumPy, unless the user set it (their choice wins). ``rankflavor.evaluate`` and
the rest of the library leave the process as they found it: a program that wants the same
setting exports the variable, or sets it before it imports NumPy.

Arrow's allocator is chosen the same way, by pyarrow's public ``ARROW_DEFAULT_MEMORY_POOL``, read
when pyarrow first makes its default pool: :func:`prefer_system_allocator` sets it to ``system``
(the C library's malloc) for the command. A reader's buffers go back to the system when it frees
them, where pyarrow's bundled allocator keeps them for reuse; alignment then allocates on top of
less: the 7M-line run of text docnos peaked about a fifth lower at the same time (``bench/readme.py``
row ``allocator``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping

#: NumPy's environment variable for the huge-page advice (``0`` off, ``1`` on).
VARIABLE = "NUMPY_MADVISE_HUGEPAGE"
#: pyarrow's environment variable for its default memory pool (``system``, ``jemalloc``, ``mimalloc``).
ARROW_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"


def prefer_small_pages(environ: MutableMapping[str, str] | None = None) -> bool:
    """Set ``NUMPY_MADVISE_HUGEPAGE=0`` unless it is set or NumPy is already imported.

    Parameters
    ----------
    environ : mapping, optional
        The environment to set it in; ``os.environ`` (this process and the processes it
        starts) by default.

    Returns
    -------
    bool
        True if this call set it. False if the variable was already set (kept as it is), or if
        NumPy is already imported in this process, which then keeps the advice it started with.

    Examples
    --------
    >>> env = {VARIABLE: "1"}  # the user's choice
    >>> prefer_small_pages(env), env
    (False, {'NUMPY_MADVISE_HUGEPAGE': '1'})
    """
    return _prefer(environ, VARIABLE, "0", "numpy")


def prefer_system_allocator(environ: MutableMapping[str, str] | None = None) -> bool:
    """Set ``ARROW_DEFAULT_MEMORY_POOL=system`` unless it is set or pyarrow is already imported.

    Parameters
    ----------
    environ : mapping, optional
        The environment to set it in; ``os.environ`` (this process and the processes it
        starts) by default.

    Returns
    -------
    bool
        True if this call set it; False if the variable was already set (the user's choice,
        kept) or pyarrow is already imported (its pool may be made already).

    Examples
    --------
    >>> env = {ARROW_VARIABLE: "mimalloc"}  # the user's choice
    >>> prefer_system_allocator(env), env
    (False, {'ARROW_DEFAULT_MEMORY_POOL': 'mimalloc'})
    """
    return _prefer(environ, ARROW_VARIABLE, "system", "pyarrow")


def _prefer(environ: MutableMapping[str, str] | None, variable: str, value: str, library: str) -> bool:
    """Set ``variable=value`` in ``environ`` (``os.environ`` by default) unless it is set (the
    user's choice) or ``library``, which reads it once, is already imported."""
    env = os.environ if environ is None else environ
    if variable in env or library in sys.modules:
        return False
    env[variable] = value
    return True
