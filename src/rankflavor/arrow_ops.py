"""pyarrow's compute kernels, called by name without importing ``pyarrow.compute``.

Importing ``pyarrow.compute`` builds a Python wrapper (signature, docstring) for each of its
several hundred functions: about 70 ms of Python, holding the GIL. Started on a thread beside
the run reader's workers, it made their Python steps between pyarrow calls wait: the 7M-line
bench run read about 0.1 s slower, and the whole evaluation took 1.10x as long. The kernels
themselves are in pyarrow's compiled ``pyarrow._compute`` (about 8 ms to import), whose
``call_function`` is the one ``pyarrow.compute`` re-exports. The reading and alignment paths
call them here; code off those paths may use ``pyarrow.compute`` as usual.

Array methods such as ``Array.take`` or ``Array.cast`` import ``pyarrow.compute`` themselves:
the paths above use the functions below instead.
"""

from __future__ import annotations

import functools
from typing import Any

import pyarrow as pa


@functools.cache
def _compute() -> Any:
    """The module with ``call_function`` and ``CastOptions``, imported on first use: a small
    evaluation needs no kernel, and the import costs 8 ms of its 0.3 s."""
    try:
        import pyarrow._compute as compiled
    except ImportError:  # pragma: no cover - a pyarrow without the private module: the public one
        import pyarrow.compute as compiled
    return compiled


def call_function(name: str, args: list[Any], options: Any = None) -> Any:
    return _compute().call_function(name, args, options)


def cast(values: pa.Array, target: pa.DataType) -> Any:
    """``pyarrow.compute.cast(values, target)``: safe (raises ``ArrowInvalid`` on a value the
    target cannot hold or a string it cannot parse)."""
    return call_function("cast", [values], _compute().CastOptions(target))


def take(values: pa.Array, indices: pa.Array) -> Any:
    return call_function("take", [values, indices])


def filter_rows(values: pa.Array, mask: pa.Array) -> Any:
    return call_function("filter", [values, mask])


def equal(left: Any, right: Any) -> Any:
    return call_function("equal", [left, right])


def not_equal(left: Any, right: Any) -> Any:
    return call_function("not_equal", [left, right])


def all_true(values: Any) -> bool:
    """``bool(pyarrow.compute.all(values).as_py())``."""
    return bool(call_function("all", [values]).as_py())


def dictionary_encode(values: Any) -> Any:
    return call_function("dictionary_encode", [values])


def ascii_is_decimal(values: Any) -> Any:
    return call_function("ascii_is_decimal", [values])


def sort_indices(values: Any) -> Any:
    """Ascending, in byte order for strings (``strcmp``)."""
    return call_function("sort_indices", [values])
