"""Judgments: the label scale, coverage of the runs' top k, and bounds under unjudged documents.

Public names::

    Scale, SCALES, scale_named          the label scale, declared once (scale.py)
    bounds(qrels, run, metrics, scale) -> Bounds          (bounds.py)
    judgments(qrels, runs, metrics, scale) -> Coverage    (coverage.py)
"""

from .bounds import Bounds, MeasureBounds, bounds
from .scale import SCALES, Scale, scale_named

__all__ = ["SCALES", "Bounds", "MeasureBounds", "Scale", "bounds", "scale_named"]
