"""Judgments: coverage of the runs' top k, bounds under unjudged documents, and pooling.

Public names::

    Scale, SCALES, scale_named          the label scale (declared in rankflavor.presets.scales)
    bounds(qrels, run, metrics, scale) -> Bounds          (bounds.py; the result in result.py)
    judgments(qrels, runs, metrics, scale) -> Coverage    (coverage.py)
"""

from rankflavor.analysis.judgments.bounds import Bounds, MeasureBounds, bounds
from rankflavor.analysis.judgments.coverage import BIAS_RULE, Coverage, RunCoverage, judgments
from rankflavor.presets.scales import SCALES, Scale, scale_named

__all__ = ["BIAS_RULE", "SCALES", "Bounds", "Coverage", "MeasureBounds", "RunCoverage", "Scale", "bounds", "judgments",
           "scale_named"]
