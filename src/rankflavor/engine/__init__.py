"""The evaluation engine: one plan (:mod:`.plan`) from aligned tables through the ranker and the metric
kernels to results aggregated by explicit policy (:mod:`.aggregate`, :mod:`.results`); :mod:`.evaluate` is the
entry point, :mod:`.chunked` and :mod:`.merge` evaluate inputs larger than memory."""
