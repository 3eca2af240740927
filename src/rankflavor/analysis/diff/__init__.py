"""Diff: why two flavors of one metric give different numbers, knob by knob (:mod:`.api`)."""
