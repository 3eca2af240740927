"""Compare systems: paired significance tests, corrections, confidence intervals and flavor-robust
verdicts (:func:`compare`, :class:`Comparison`).

The modules, one concern each: ``settings`` (what every report states), ``scores`` (per-query values from the evaluation plan), ``queries``
(alignment by query id under a policy), ``analysis`` (the statistics of one measure), ``flavors``
and ``robust`` (the flavor grid and the verdicts in each flavor), ``result`` (the values), ``api``
(the entry) and ``saved`` (comparing saved results). The inputs' content hashes and the
same-qrels check are :mod:`rankflavor.engine.provenance`.
"""

from __future__ import annotations

from rankflavor.analysis.compare.api import DEFAULT_TESTS, compare
from rankflavor.analysis.compare.result import (
           Comparison,
           FlavorVerdict,
           MeasureComparison,
           PairStat,
           Robustness,
           SystemStat,
)
from rankflavor.analysis.compare.saved import compare_saved
from rankflavor.analysis.compare.settings import Settings
from rankflavor.engine.provenance import QrelsMismatchError

__all__ = ["DEFAULT_TESTS", "Comparison", "FlavorVerdict", "MeasureComparison", "PairStat", "QrelsMismatchError",
           "Robustness", "Settings", "SystemStat", "compare", "compare_saved"]
