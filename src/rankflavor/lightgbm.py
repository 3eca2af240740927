"""rankflavor's measures as LightGBM evaluation metrics: the public face of :mod:`rankflavor.training.lightgbm`, where the code lives."""

from rankflavor.training.lightgbm import LightGBMMetric, eval_metric

__all__ = ["LightGBMMetric", "eval_metric"]
