"""The ir_measures measures beyond pytrec_eval's core: set measures, IPrec, infAP (pytrec_eval),
ERR (gdeval), the C/W/L family (cwl_eval) and Compat, with the provider each one runs on.

Which provider answers a measure is ir_measures 0.4.3's ``DefaultPipeline`` order (runtime,
pytrec_eval, cwl_eval, compat, pyndeval, judged, msmarco, gdeval, accuracy, ranx; trectools is
disabled there). What each provider does, read from its source:

- pytrec_eval: ``SetP`` = set_P, ``SetRelP`` = ``SetP(relative=True)`` = set_relative_P, ``SetR`` =
  set_recall, ``SetF(beta)`` = set_F, ``SetAP`` = set_map, ``IPrec@r`` = iprec_at_recall (the
  level printed ``%.2f``), ``infAP``; ``rel`` is pytrec_eval's relevance level, ``judged_only``
  its -J (SetR and infAP take neither).
- gdeval.pl (``ERR@k``, cutoff required): R = (2^g - 1) / 2^4, a fixed top grade of 4 (a grade
  above 4 makes gdeval fail), scores compared as Perl numbers, ties by docno descending.
- cwl_eval 1.0.12 (``providers/cwl_eval.py``): ``max_rel`` required, ``min_rel`` 0; a grade is
  clipped below at 0, then to [min_rel, max_rel], and scaled to (g - min_rel) / (max_rel - min_rel);
  unjudged documents gain 0; every ranking padded or cut to 1000 ranks; the run sorted by score
  (Python floats), ties kept in input order. RBP needs ``rel`` (binary), p default 0.8; NERR10
  p 0.9; NERR11, INST, INSQ, BPM: T 1.0; NERR8, NERR9, SDCG, BPM need a cutoff.
- compat (``providers/compat_provider.py``): p 0.95, normalize True; run ties by docno ascending.

Deviations, refused with the reason: ``RBP`` without ``rel`` and ``RBP@k`` (no provider in the
default pipeline: cwl_eval takes neither, trectools is disabled); ``ERR`` without a cutoff
(gdeval needs one); a grade above ``max_rel`` (cwl_eval clips it with a logged warning; rankflavor
refuses the input, as for every declared top grade); Compat queries whose ideal ties (equal grade
and score) ir_measures orders by qrels file order, when that order changes the value.
"""

from __future__ import annotations

from typing import Any

from rankflavor.errors import FlavorError
from rankflavor.flavor.flavor import format_number
from rankflavor.presets.base import Template

#: cwl_eval reads the run in score order with ties as given, in float64.
_CWL_SORT = {"ties": "input_order", "precision": "float64"}
#: The compat provider sorts with Python: docno ascending, then score descending (stable).
_COMPAT_SORT = {"ties": "docno_asc", "precision": "float64"}
_GRADED = frozenset({"min_rel", "max_rel"})
_CWL_GRADED = ("NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ", "BPM", "SDCG")

#: name -> (rankflavor metric, parameters it takes, cutoff: "required" | "optional" | "none")
OTHER_MEASURES: dict[str, tuple[str, frozenset[str], str]] = {
    "SetP": ("P", frozenset({"rel", "relative", "judged_only"}), "none"),
    "SetRelP": ("relative_P", frozenset({"rel", "judged_only"}), "none"),
    "SetR": ("recall", frozenset({"rel"}), "none"),
    "SetF": ("F", frozenset({"rel", "beta", "judged_only"}), "none"),
    "SetAP": ("set_AP", frozenset({"rel", "judged_only"}), "none"),
    "IPrec": ("IPrec", frozenset({"rel", "judged_only"}), "required"),
    "infAP": ("infAP", frozenset({"rel"}), "none"),
    "ERR": ("ERR", frozenset(), "required"),
    "RBP": ("RBP_cwl", frozenset({"rel", "p"}), "none"),
    "NERR8": ("NERR8", _GRADED, "required"),
    "NERR9": ("NERR9", _GRADED, "required"),
    "NERR10": ("NERR10", _GRADED | {"p"}, "none"),
    "NERR11": ("NERR11", _GRADED | {"T"}, "none"),
    "INST": ("INST", _GRADED | {"T"}, "none"),
    "INSQ": ("INSQ", _GRADED | {"T"}, "none"),
    "BPM": ("BPM", _GRADED | {"T"}, "required"),
    "SDCG": ("SDCG", _GRADED | {"dcg"}, "required"),
    "Compat": ("Compat", frozenset({"p", "normalize"}), "none"),
}


def int_cutoff(text: str, cutoff: str | None) -> int | None:
    """The ``@k`` of ``text`` as a rank cutoff (a positive integer)."""
    if cutoff is None:
        return None
    if not cutoff.isdigit() or int(cutoff) < 1:
        raise FlavorError(f"ir_measures measure {text!r}: the cutoff is a positive integer, received @{cutoff}")
    return int(cutoff)


def _number(text: str, params: dict[str, Any], key: str, default: float, low: float, high: float) -> float:
    value = params.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise FlavorError(f"ir_measures measure {text!r}: {key} is a number in [{format_number(low)}, "
                          f"{format_number(high)}], received {value!r}")
    return float(value)


def _integer(text: str, params: dict[str, Any], key: str) -> int:
    value = params[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise FlavorError(f"ir_measures measure {text!r}: {key} is an integer grade, received {value!r}")
    return value


def _flag(text: str, params: dict[str, Any], key: str, default: bool) -> bool:
    value = params.get(key, default)
    if not isinstance(value, bool):
        raise FlavorError(f"ir_measures measure {text!r}: {key} is True or False, received {value!r}")
    return value


def _scale(text: str, name: str, params: dict[str, Any]) -> dict[str, str]:
    """cwl_eval's gain scaling (max(g, 0) clipped to [min_rel, max_rel], minus min_rel, over
    max_rel - min_rel) as the gain and max_grade knobs: r = gain(g) / gain(max_rel)."""
    if "max_rel" not in params:
        raise FlavorError(f"ir_measures measure {text!r}: {name} needs max_rel, the top grade of the scale "
                          f"(e.g. {name}(max_rel=3))")
    top, low = _integer(text, params, "max_rel"), _integer(text, params, "min_rel") if "min_rel" in params else 0
    if low >= top:
        raise FlavorError(f"ir_measures measure {text!r}: min_rel must be below max_rel, received {low} and {top}")
    knobs = {"max_grade": str(top)}
    if low != 0:
        # grade g (>= 0 once clipped) gains max(g, min_rel) - min_rel; grades never above max_rel.
        knobs["gain"] = "{" + ",".join(f"{g}:{max(g, low) - low}" for g in range(0, top + 1)) + "}"
    if low < 0:
        knobs["negatives"] = "zero"  # cwl_eval clips a judged negative grade to 0: it gains -min_rel
    return knobs


def _cutoff_for(text: str, name: str, how: str, cutoff: str | None) -> tuple[int | None, float | None]:
    if how == "none" and cutoff is not None:
        raise FlavorError(f"ir_measures measure {text!r}: {name} takes no @cutoff"
                          + (" (RBP@k has no provider in ir_measures' default pipeline)" if name == "RBP" else ""))
    if how == "required" and cutoff is None:
        why = {"ERR": " (ERR is gdeval's, which needs a depth)", "IPrec": " (the recall level, e.g. IPrec@0.5)"}
        raise FlavorError(f"ir_measures measure {text!r}: {name} needs @cutoff{why.get(name, '')}")
    if name == "IPrec":
        level = float(cutoff) if cutoff and cutoff.count(".") <= 1 and cutoff != "." else -1.0
        if not 0 <= level <= 1:
            raise FlavorError(f"ir_measures measure {text!r}: IPrec@r takes a recall level 0 <= r <= 1, "
                              f"received @{cutoff}")
        return None, level
    return int_cutoff(text, cutoff), None


def other_template(name: str, text: str, params: dict[str, Any], cutoff: str | None) -> Template:
    """The measure ``text`` (an :data:`OTHER_MEASURES` name with ``params`` and ``@cutoff``) as a template."""
    metric, allowed, how = OTHER_MEASURES[name]
    unknown = set(params) - allowed
    if unknown:
        raise FlavorError(
            f"ir_measures measure {text!r}: {name} takes {', '.join(sorted(allowed)) or 'no parameters'}, "
            f"received {', '.join(sorted(unknown))}"
        )
    k, level = _cutoff_for(text, name, how, cutoff)
    label = text.strip()
    knobs: dict[str, str] = {}
    if "rel" in params:
        knobs["rel"] = str(_integer(text, params, "rel"))
    if _flag(text, params, "judged_only", False):
        knobs["unjudged"] = "condensed"
    if name == "SetP" and _flag(text, params, "relative", False):
        metric = "relative_P"
    elif name == "SetF":
        knobs["param"] = format_number(_number(text, params, "beta", 1.0, 0.0, float("inf")))
    elif name == "IPrec":
        # pytrec_eval gets the level printed %.2f (iprec_at_recall_0.12 for 0.125)
        knobs["param"] = format_number(float(f"{level:.2f}"))
    elif name == "ERR":
        knobs.update(max_grade="4", precision="float64")  # gdeval: $MAX_JUDGMENT = 4, Perl numbers
    elif name == "RBP":
        if "rel" not in params:
            raise FlavorError(
                f"ir_measures measure {text!r}: graded RBP has no provider in ir_measures' default pipeline "
                "(cwl_eval takes RBP with rel only; trectools is disabled): give rel, e.g. RBP(rel=1)"
            )
        knobs.update(gain="binary", param=format_number(_number(text, params, "p", 0.8, 0.0, 1.0)), **_CWL_SORT)
        if int(knobs["rel"]) <= 0:
            knobs["negatives"] = "zero"  # cwl_eval clips a judged negative grade to 0, relevant at rel <= 0
    elif name == "Compat":
        p = _number(text, params, "p", 0.95, 0.0, 1.0)
        normalize = _flag(text, params, "normalize", True)
        knobs.update(param=f"({format_number(p)},{int(normalize)},1)", **_COMPAT_SORT)
    elif name in _CWL_GRADED:
        if params.get("dcg", "log2") != "log2":
            raise FlavorError(f"ir_measures measure {text!r}: SDCG takes dcg='log2' only, received {params['dcg']!r}")
        knobs.update(_scale(text, name, params), **_CWL_SORT)
        if "p" in allowed:
            knobs["param"] = format_number(_number(text, params, "p", 0.9, 0.0, 1.0))
        elif "T" in allowed:
            knobs["param"] = format_number(_number(text, params, "T", 1.0, 1e-300, float("inf")))
    return Template(metric, k, knobs, label)
