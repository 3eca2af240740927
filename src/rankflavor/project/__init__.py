"""A project's flavor, pinned: ``rankflavor.toml`` (config, schema), the flavor advisor
(``rankflavor init``), results files with provenance (``-o``, ``rankflavor show``) and the CI gate.

Public names::

    Config, load_config, find_config, project_config     config.py
    ConfigError, schema_markdown                         schema.py
"""

from rankflavor.project.config import Config, GateSettings, RunEntry, find_config, load_config, project_config
from rankflavor.project.schema import CONFIG_NAME, ConfigError, schema_markdown

__all__ = ["CONFIG_NAME", "Config", "ConfigError", "GateSettings", "RunEntry", "find_config", "load_config",
           "project_config", "schema_markdown"]
