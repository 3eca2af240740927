"""rankflavor's measures as XGBoost evaluation metrics: the validation NDCG during training in the
project's pinned flavor.

>>> import rankflavor.xgboost
>>> metric = rankflavor.xgboost.eval_metric("xgboost:ndcg@10")
>>> metric.names, metric.maximize
(['rankflavor.xgboost.ndcg@10'], True)

* ``xgb.train(params, dtrain, evals=[(dvalid, "valid")], custom_metric=metric, maximize=True)``:
  each value is :func:`rankflavor.evaluate`'s on the model's scores of the evaluation
  ``DMatrix``, whose query groups come from its ``qid`` or ``group`` (``group_ptr``).
* ``XGBRanker(eval_metric=metric)``: XGBoost's scikit-learn API calls a callable metric once per
  query group, ``(y_true, y_pred)`` of that group, and logs the mean of the values **weighted by
  the group sizes** (``DMatrix.get_group()``), a group of one document counting 1.0
  (``xgboost/sklearn.py`` ``ltr_metric_decorator``, XGBoost 3.2). The callable returns
  rankflavor's value of each group, so the logged number equals rankflavor's mean only when every
  group has the same size (and more than one document); it also costs one small evaluation per
  group. Use ``xgb.train`` for the exact mean.

References
----------
XGBoost 3.2 ``xgboost.train`` (``custom_metric(predt, dtrain) -> (name, value)`` or a list of them,
``maximize``), ``DMatrix.get_uint_info("group_ptr")``; ``xgboost/sklearn.py`` ``ltr_metric_decorator``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from rankflavor.metrics.measure import Measure
from rankflavor.training.ltr import TrainingMetric, group_values


class XGBoostMetric(TrainingMetric):
    """An XGBoost evaluation metric (``custom_metric`` of ``xgboost.train``, ``eval_metric`` of
    ``XGBRanker``); see :func:`eval_metric`."""

    @staticmethod
    def logged_name(text: str) -> str:
        """``rankflavor.`` and the text with ``:`` as ``.`` and no blanks: XGBoost writes a custom
        metric into its evaluation line as ``name:value`` and splits that line at blanks and at
        every ``:`` (``xgboost.core._parse_eval_str``), so a ``:`` in the name breaks training."""
        return "rankflavor." + re.sub(r"\s+", "", text).replace(":", ".")

    @property
    def maximize(self) -> bool:
        """For ``xgb.train(..., maximize=...)`` (early stopping): every measure is higher-better."""
        return all(self.higher_is_better)

    def __call__(self, predt: Any, data: Any) -> Any:
        """``(predt, dmatrix)`` from ``xgboost.train``: ``(name, value)``, or a list of them for
        several measures. ``(y_true, y_pred)`` of one group from ``XGBRanker``: the value."""
        if hasattr(data, "get_uint_info"):  # xgboost.train: a DMatrix
            ptr = np.asarray(data.get_uint_info("group_ptr"), dtype=np.int64)
            group = np.diff(ptr) if len(ptr) > 1 else None
            values = self.values(data, data.get_label(), group, predt)
            pairs = list(zip(self.names, values, strict=True))
            return pairs[0] if len(pairs) == 1 else pairs
        return group_values(self, predt, data)


def eval_metric(flavor: str | Measure | Iterable[str | Measure], preset: str | None = None) -> XGBoostMetric:
    """An XGBoost evaluation metric computing ``flavor`` with rankflavor's engine.

    Parameters
    ----------
    flavor : str, Measure or list of them
        ``"xgboost:ndcg@10"`` (XGBoost's own flavor), ``"ndcg@10[gain=exp2]"``: any measure
        :func:`rankflavor.evaluate` takes.
    preset : str, optional
        The preset of names without a ``PRESET:`` prefix.

    Returns
    -------
    XGBoostMetric
        Logged as ``rankflavor.`` and the text given (``:`` as ``.``); pass ``maximize=metric.maximize`` to
        ``xgb.train`` for early stopping.
    """
    return XGBoostMetric(flavor, preset)


__all__ = ["XGBoostMetric", "eval_metric"]
