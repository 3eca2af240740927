"""What a number means: the knob table and its values (:mod:`.knobs`, :mod:`.choices`, :mod:`.readers`),
the :class:`~rankflavor.flavor.flavor.Flavor`, the :class:`~rankflavor.metrics.measure.Measure` (metric, cutoff,
flavor) and the grade :class:`~rankflavor.presets.scales.Scale`."""
