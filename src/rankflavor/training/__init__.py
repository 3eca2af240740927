"""Training-time metrics: arrays in scikit-learn style (:mod:`.arrays`), fixed labelled groups scored again
and again (:mod:`.rescore`, :mod:`.ltr`), and the LightGBM, XGBoost and PyTorch adapters (public as
:mod:`rankflavor.lightgbm`, :mod:`rankflavor.xgboost` and :mod:`rankflavor.torch`)."""
