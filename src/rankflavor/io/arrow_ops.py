"""The pyarrow compute kernels that reading, alignment and ordering call, by name.

Each function is the ``pyarrow.compute`` function of the same meaning, with its default options.
``pyarrow.compute`` is imported on the first call rather than with this module: importing it
builds a Python wrapper for each of its several hundred functions, and a small evaluation (say,
integer docnos that NumPy reads) calls no kernel at all.

Array methods such as ``Array.take`` or ``Array.cast`` import ``pyarrow.compute`` themselves; the
paths above use the functions below, so the import happens in one known place.
"""

from __future__ import annotations

import functools
from typing import Any

import pyarrow as pa


@functools.cache
def _compute() -> Any:
    """``pyarrow.compute``, imported on first use."""
    import pyarrow.compute

    return pyarrow.compute


def cast(values: pa.Array, target: pa.DataType) -> Any:
    """``pyarrow.compute.cast(values, target)``: safe (raises ``ArrowInvalid`` on a value the
    target cannot hold or a string it cannot parse)."""
    return _compute().cast(values, target, safe=True)


def take(values: pa.Array, indices: pa.Array) -> Any:
    return _compute().take(values, indices)


def filter_rows(values: pa.Array, mask: pa.Array) -> Any:
    return _compute().filter(values, mask)


def equal(left: Any, right: Any) -> Any:
    return _compute().equal(left, right)


def not_equal(left: Any, right: Any) -> Any:
    return _compute().not_equal(left, right)


def all_true(values: Any) -> bool:
    """``bool(pyarrow.compute.all(values).as_py())``."""
    return bool(_compute().all(values).as_py())


def dictionary_encode(values: Any) -> Any:
    return _compute().dictionary_encode(values)


def ascii_is_decimal(values: Any) -> Any:
    return _compute().ascii_is_decimal(values)


def sort_indices(values: Any) -> Any:
    """Ascending, in byte order for strings (``strcmp``)."""
    return _compute().sort_indices(values)


def binary_length(values: Any) -> Any:
    """Bytes of each string (``pyarrow.compute.binary_length``)."""
    return _compute().binary_length(values)


def unique(values: Any) -> Any:
    """The distinct values in first-seen order (``pyarrow.compute.unique``)."""
    return _compute().unique(values)


def index_in(values: Any, value_set: Any) -> Any:
    """Each value's index in ``value_set`` (``pyarrow.compute.index_in``; null where absent)."""
    return _compute().index_in(values, value_set=value_set)
