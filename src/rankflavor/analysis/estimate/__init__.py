"""How far to trust a judge, and scores with valid intervals from human and LLM judgments.

* :mod:`~rankflavor.analysis.estimate.ppi` - means with (1 - alpha) intervals: classical and
  prediction-powered (PPI, PPI++), on per-query values;
* :mod:`~rankflavor.analysis.estimate.api` - :func:`estimate`: per run, the human-only, LLM-only and PPI
  estimates of a measure's mean (``rankflavor estimate``);
* :mod:`~rankflavor.analysis.estimate.agreement` and :mod:`~rankflavor.analysis.estimate.agreement_api` - :func:`judge_agreement`: a judge against human
  judgments, on the pairs both graded (kappas, alpha, confusion, bias) and on the metric
  (``rankflavor agreement``);
* every format of each is rendered in :mod:`rankflavor.render` (:mod:`~rankflavor.render.estimatefmt`,
  :mod:`~rankflavor.render.agreementfmt`).
"""

from __future__ import annotations

from rankflavor.analysis.estimate.agreement import GradeAgreement
from rankflavor.analysis.estimate.agreement_api import JudgeAgreement, RunMetric, judge_agreement
from rankflavor.analysis.estimate.api import estimate
from rankflavor.analysis.estimate.ppi import Interval, classical_mean, ppi_mean
from rankflavor.analysis.estimate.result import Estimates, RunEstimate

__all__ = ["Estimates", "GradeAgreement", "Interval", "JudgeAgreement", "RunEstimate", "RunMetric", "classical_mean",
           "estimate", "judge_agreement", "ppi_mean"]
