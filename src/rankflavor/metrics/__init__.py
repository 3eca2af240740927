"""Metric families. Importing this package registers every metric.

A metric is one module here that calls :func:`~rankflavor.metrics.registry.register` with its
:class:`~rankflavor.metrics.registry.MetricSpec`: every module of the package is imported below,
in name order, so a new metric needs no line anywhere else (CONTRIBUTING.md).
"""

import importlib
import pkgutil

from rankflavor.metrics.registry import REGISTRY, Breakdown, MetricSpec, lookup, register

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")  # (registration side effects)

__all__ = ["REGISTRY", "Breakdown", "MetricSpec", "lookup", "register"]
