"""Metric families. Importing this package registers every metric."""

from rankflavor.metrics import binary, compat, counts, cwl, err, fallout, hits, ndcg, rbp, trec_extra, udcg  # noqa: F401  (registration side effects)
from rankflavor.metrics.registry import REGISTRY, Breakdown, MetricSpec, lookup, register

__all__ = ["REGISTRY", "Breakdown", "MetricSpec", "lookup", "register"]
