"""Counts (trec_eval num_ret, num_rel, num_rel_ret); their summary is a sum, not a mean."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import kernels as K
from .registry import INPUT_KNOBS, MetricSpec, register


def num_ret(r, measure):  # type: ignore[no-untyped-def]
    return r.n_ret.astype(np.float64), np.zeros(r.n_queries, dtype=bool)


def num_rel(r, measure):  # type: ignore[no-untyped-def]
    t = measure.flavor.rel_threshold
    return K.segment_sum(r.jq, (r.jgrade >= t).astype(np.float64), r.n_queries), np.zeros(r.n_queries, dtype=bool)


def num_rel_ret(r, measure):  # type: ignore[no-untyped-def]
    t = measure.flavor.rel_threshold
    rel = r.judged & (r.grade >= t)
    return K.segment_sum(r.q, rel.astype(np.float64), r.n_queries), np.zeros(r.n_queries, dtype=bool)


for spec in (
    MetricSpec("num_ret", INPUT_KNOBS, num_ret, cutoff="none", summary="sum", uses_empty=False,
               doc="Documents retrieved (after depth and condensing)."),
    MetricSpec("num_rel", ("rel", "negatives", "fractional", "duplicates", "missing", "total"), num_rel, cutoff="none",
               summary="sum", uses_empty=False, reads_run=False, doc="Relevant judgments (grade >= rel)."),
    MetricSpec("num_rel_ret", ("rel", *INPUT_KNOBS), num_rel_ret, cutoff="none", summary="sum", uses_empty=False,
               doc="Relevant documents retrieved."),
):
    register(replace(spec, judged_only=True))
