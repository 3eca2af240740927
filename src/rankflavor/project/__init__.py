"""A project's flavor, pinned: ``rankflavor.toml`` (config, schema), the flavor advisor
(``rankflavor init``), results files with provenance (``-o``, ``rankflavor show``) and the CI gate.

Public names::

    Config, load_config, project_config                  config.py
    CONFIG_NAME, find_config                             locate.py
    ConfigError, schema_markdown                         schema.py

Each is imported on first use: a command run outside any project looks for its file
(:mod:`rankflavor.project.locate`) without loading the config's reader.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankflavor.project.config import Config, GateSettings, RunEntry, load_config, project_config
    from rankflavor.project.locate import CONFIG_NAME, find_config
    from rankflavor.project.schema import ConfigError, schema_markdown

_LAZY = {
    "Config": "config", "GateSettings": "config", "RunEntry": "config", "load_config": "config",
    "project_config": "config", "CONFIG_NAME": "locate", "find_config": "locate", "ConfigError": "schema",
    "schema_markdown": "schema",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["CONFIG_NAME", "Config", "ConfigError", "GateSettings", "RunEntry", "find_config", "load_config",
           "project_config", "schema_markdown"]
