"""rankflavor's measures as XGBoost evaluation metrics: the public face of :mod:`rankflavor.training.xgboost`, where the code lives."""

from rankflavor.training.xgboost import XGBoostMetric, eval_metric

__all__ = ["XGBoostMetric", "eval_metric"]
