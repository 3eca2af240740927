"""Training-time metrics: what :mod:`rankflavor.lightgbm` and :mod:`rankflavor.xgboost` share.

A :class:`TrainingMetric` resolves its measure strings once (``lightgbm:ndcg@10``,
``ndcg@10[gain=exp2]``, under an optional preset), names each value it logs ``rankflavor:`` and
the text given (so it never collides with the library's own ``ndcg@10``), and keeps one
:class:`~rankflavor.training.rescore.Rescorer` per evaluation set it is called on: the groups, the labels
and the ideal lists are prepared at the first call, each later call only orders the new scores
and runs the kernels. Neither library is imported here: the callables read a data set through
its public getters (LightGBM ``Dataset.get_label``/``get_group``, XGBoost ``DMatrix.get_label``
and ``get_uint_info("group_ptr")``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from rankflavor.errors import UsageError
from rankflavor.metrics import REGISTRY
from rankflavor.metrics.measure import Measure
from rankflavor.training.rescore import Rescorer

#: Evaluation sets a metric keeps prepared (a training run has one or a few).
_KEPT = 8


class TrainingMetric:
    """Measures logged during training; the base of the libraries' callables.

    Parameters
    ----------
    flavor : str, Measure or list of them
        Measures as :func:`rankflavor.evaluate` takes them.
    preset : str, optional
        The preset of names without a ``PRESET:`` prefix.

    Attributes
    ----------
    names : the logged name of each measure: ``rankflavor:`` and the text given, or, where one
        text names several measures (LightGBM's ``ndcg`` is ndcg@1..5), ``rankflavor:`` and the
        preset and each measure's own name.
    flavors : the canonical flavor string of each measure.
    higher_is_better : per measure (False only for a residual, such as ``RBP_resid``).
    """

    def __init__(self, flavor: str | Measure | Iterable[str | Measure], preset: str | None = None) -> None:
        from rankflavor.presets import resolve_measures

        items = [flavor] if isinstance(flavor, (str, Measure)) else list(flavor)
        if not items:
            raise UsageError("flavor: give at least one measure, e.g. 'lightgbm:ndcg@10'")
        self.items = items
        self.preset = preset
        names: list[str] = []
        measures: list[Measure] = []
        for item in items:
            found, _ = resolve_measures([item], preset, {})
            if not found:
                raise UsageError(f"flavor {str(item)!r} names no measure with a value per query")
            for m in found:
                if m.spec.summary != "mean":
                    raise UsageError(f"flavor {str(item)!r}: {m.spec.name} is summarised as a {m.spec.summary}, "
                                     "not a mean over queries; a training metric is a mean")
            text = str(item).strip() if isinstance(item, str) else str(item)
            if len(found) == 1:
                names.append(self.logged_name(text))
            else:
                prefix = text.split(":", 1)[0] + ":" if ":" in text else (f"{preset}:" if preset else "")
                names += [self.logged_name(f"{prefix}{m.display}") for m in found]
            measures += found
        if len(set(names)) != len(names):
            raise UsageError(f"flavor: the measures would be logged under the same name twice: {names}")
        self.measures = measures
        self.names = names
        self.flavors = [str(m) for m in measures]
        residuals = {spec.residual for spec in REGISTRY.values() if spec.residual}
        self.higher_is_better = [m.spec.name not in residuals for m in measures]
        self._kept: list[tuple[Any, Rescorer]] = []
        #: XGBoost's scikit-learn API logs a callable under its ``__name__``.
        self.__name__ = names[0]

    @staticmethod
    def logged_name(text: str) -> str:
        """The name a measure given as ``text`` is logged under."""
        return f"rankflavor:{text}"

    def rescorer(self, key: Any, labels: Any, group: Any) -> Rescorer:
        """The rescorer of the evaluation set ``key`` (held, so its identity stays its own),
        made at the first call; ``labels`` and ``group`` are checked against it when the key is
        an array that might have been refilled."""
        for held, rescorer in self._kept:
            if held is key and (not isinstance(key, np.ndarray) or rescorer.same_groups(labels, group)):
                return rescorer
        if group is None:
            raise UsageError("the evaluation data carry no query groups: give group= (or qid= for XGBoost) "
                             "when the data set is made")
        made = Rescorer(labels, group=np.asarray(group).astype(np.int64), metrics=self.measures)
        self._kept = [*self._kept, (key, made)][-_KEPT:]
        return made

    def values(self, key: Any, labels: Any, group: Any, scores: Any) -> list[float]:
        """The mean of every measure on one evaluation set under ``scores``."""
        return self.rescorer(key, labels, group).means(scores)


def group_values(metric: TrainingMetric, labels: Any, scores: Any) -> float:
    """The value of a single group (the one measure of ``metric``), for APIs that call a metric
    group by group (XGBoost's ``XGBRanker``)."""
    if len(metric.measures) != 1:
        raise UsageError(f"this API logs one value per metric; {metric.items!r} names {len(metric.measures)} measures")
    labels = np.asarray(labels).ravel()
    return Rescorer(labels, group=[len(labels)], metrics=metric.measures).means(scores)[0]


__all__ = ["TrainingMetric", "group_values"]
