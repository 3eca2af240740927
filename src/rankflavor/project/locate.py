"""Where a project's ``rankflavor.toml`` is: the nearest one from a folder upward.

Kept apart from :mod:`rankflavor.project.config` so that a command run outside any project (most
``eval`` calls) looks for the file without importing the config's reader and schema.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The file name a project's config has.
CONFIG_NAME = "rankflavor.toml"


def find_config(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest ``rankflavor.toml`` in ``start`` (default: the working directory) or above it."""
    here = Path(start if start is not None else os.getcwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None
