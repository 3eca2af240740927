"""Explain one query's measure position by position (:mod:`.api`; the result in :mod:`.result`)."""
