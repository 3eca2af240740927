"""What a number means: the knob table and its values (:mod:`.knobs`, :mod:`.choices`, :mod:`.readers`)
and the :class:`~rankflavor.flavor.flavor.Flavor`, one hashable value of every knob.

A :class:`~rankflavor.metrics.measure.Measure` (a metric, a cutoff and a flavor) sits with the metrics,
whose registry it names; a grade :class:`~rankflavor.presets.scales.Scale` with the presets."""
