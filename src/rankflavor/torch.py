"""NDCG and DCG on PyTorch tensors, for the validation loop of a ranking model: the public face of :mod:`rankflavor.training.torch`, where the code lives."""

from rankflavor.training.torch import BATCH_KNOBS, dcg, ndcg

__all__ = ["BATCH_KNOBS", "dcg", "ndcg"]
