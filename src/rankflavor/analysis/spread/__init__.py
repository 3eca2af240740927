"""Spread: one measure under a grid of flavors and every preset (:mod:`.api`; the result in :mod:`.result`)."""
