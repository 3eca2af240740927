"""How an ir_datasets dataset is named where a qrels path is expected (``irds:<dataset id>``).

Apart from :mod:`rankflavor.io.irds`, which reads such a dataset: every read of a file asks
whether its path is such a name, and need not import the dataset reader to know.
"""

from __future__ import annotations

import os
from typing import Any

#: What marks a dataset name where a qrels path is expected.
PREFIX = "irds:"


def irds_id(obj: Any) -> str | None:
    """The dataset id of an ``irds:<id>`` reference (a str or path-like), else None.

    >>> irds_id("irds:msmarco-passage/trec-dl-2019/judged"), irds_id("qrels.txt")
    ('msmarco-passage/trec-dl-2019/judged', None)
    """
    if isinstance(obj, os.PathLike):
        obj = os.fspath(obj)
    if isinstance(obj, str) and obj.startswith(PREFIX):
        return obj[len(PREFIX):]
    return None
