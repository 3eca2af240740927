"""Experiment trackers: the keys that name each number's flavor (:mod:`.keys`) and the MLflow and Weights &
Biases loggers (reachable as ``rankflavor.mlflow`` and ``rankflavor.wandb``)."""
