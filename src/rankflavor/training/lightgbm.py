"""rankflavor's measures as LightGBM evaluation metrics: the validation NDCG during training in the
project's pinned flavor.

>>> import rankflavor.lightgbm
>>> metric = rankflavor.lightgbm.eval_metric("lightgbm:ndcg@10")
>>> metric.names, metric.higher_is_better
(['rankflavor:lightgbm:ndcg@10'], [True])

Then ``lgb.train(params, train, valid_sets=[valid], feval=metric)`` (with ``metric="None"`` in
``params`` to log only this one, or LightGBM's own beside it), or
``LGBMRanker().fit(X, y, group=g, eval_set=[(Xv, yv)], eval_group=[gv], eval_metric=metric)``.
Each value is :func:`rankflavor.evaluate`'s on the model's scores of that evaluation set, its
query groups read from the data set (``Dataset.get_group``, or the ``group`` the scikit-learn
API passes). ``lightgbm:ndcg@k`` reproduces LightGBM's own ``ndcg@k`` (``tests/training/test_ltr_callbacks.py``).

References
----------
LightGBM 4.7 ``lightgbm.train`` (``feval``: ``(preds, eval_data) -> (name, value, is_higher_better)``
or a list of them) and ``lightgbm/sklearn.py`` ``_EvalFunctionWrapper`` (a callable of four
parameters is called with ``(y_true, y_pred, weight, group)``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rankflavor.metrics.measure import Measure
from rankflavor.training.ltr import TrainingMetric


class LightGBMMetric(TrainingMetric):
    """A LightGBM evaluation metric (``feval`` of ``lightgbm.train``, ``eval_metric`` of the
    scikit-learn API); see :func:`eval_metric`."""

    def __call__(self, preds_or_labels: Any, data: Any, weight: Any = None,
                 group: Any = None) -> list[tuple[str, float, bool]]:
        """``(preds, eval_data)`` from ``lightgbm.train``, or ``(y_true, y_pred, weight, group)``
        from the scikit-learn API: a ``(name, value, is_higher_better)`` per measure.

        Sample weights are not read: the metric is the unweighted mean over queries, as
        :func:`rankflavor.evaluate` gives it.
        """
        if hasattr(data, "get_label"):  # lightgbm.train: a Dataset
            preds = preds_or_labels
            values = self.values(data, data.get_label(), data.get_group(), preds)
        else:  # the scikit-learn API: arrays, and the group sizes
            labels, preds = preds_or_labels, data
            values = self.values(labels, labels, group, preds)
        return list(zip(self.names, values, self.higher_is_better, strict=True))


def eval_metric(flavor: str | Measure | Iterable[str | Measure], preset: str | None = None) -> LightGBMMetric:
    """A LightGBM evaluation metric computing ``flavor`` with rankflavor's engine.

    Parameters
    ----------
    flavor : str, Measure or list of them
        ``"lightgbm:ndcg@10"`` (LightGBM's own flavor), ``"ndcg@10[gain=exp2]"``,
        ``"trec_eval:ndcg_cut.10"``: any measure :func:`rankflavor.evaluate` takes.
    preset : str, optional
        The preset of names without a ``PRESET:`` prefix.

    Returns
    -------
    LightGBMMetric
        Logged as ``rankflavor:`` and the text given (``rankflavor:lightgbm:ndcg@10``), higher is
        better.
    """
    return LightGBMMetric(flavor, preset)


__all__ = ["LightGBMMetric", "eval_metric"]
