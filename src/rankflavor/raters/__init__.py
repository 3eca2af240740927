"""Judgments with several raters per (query, document): aggregation rules and agreement.

* :mod:`~rankflavor.raters.ratings` - :class:`Ratings`, one row per (query, document, rater);
* :mod:`~rankflavor.raters.rules` - :func:`aggregate_ratings`: one grade per pair by a named rule,
  as a :class:`~rankflavor.io.tables.Qrels` the ordinary engine evaluates;
* :mod:`~rankflavor.raters.reliability` - :func:`agreement`: Cohen's kappa, Fleiss' kappa and
  Krippendorff's alpha, overall and per query, computed by statsmodels and krippendorff.

The file readers are in :mod:`rankflavor.raters.files` (``read_ratings``).
"""

from __future__ import annotations

from rankflavor.raters.ratings import Ratings
from rankflavor.raters.reliability import Agreement, agreement
from rankflavor.raters.rules import RULES, aggregate_ratings

__all__ = ["RULES", "Agreement", "Ratings", "aggregate_ratings", "agreement"]
