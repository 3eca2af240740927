"""Where each judgment came from: label sources (``human:nist``, ``llm:MODEL@PROMPT``,
``clicks:coec``), carried from the reader through alignment into every result.

* :mod:`~rankflavor.io.labels.sources` - the ``KIND:DETAIL`` text, its kind, its checks;
* :mod:`~rankflavor.io.labels.rules` - ``--label-source``: a source for a file that names none;
* :mod:`~rankflavor.io.labels.select` - ``--labels``: which judgments to evaluate by kind;
* :mod:`~rankflavor.engine.labels` - the labels each measure evaluated, counted by kind, and
  the ``sources`` knob of a measure whose labels are of more than one kind.
"""

from __future__ import annotations

from rankflavor.io.labels.rules import apply_rule, parse_rule
from rankflavor.io.labels.select import CHOICES, canonical_choice, parse_choice, select_labels
from rankflavor.io.labels.sources import KNOWN_KINDS, kind_of, source_problem

__all__ = ["CHOICES", "KNOWN_KINDS", "apply_rule", "canonical_choice", "kind_of", "parse_choice", "parse_rule",
           "select_labels", "source_problem"]
