"""The ir_measures preset: its flavor and its measure names (``nDCG(judged_only=True)@10``).

References
----------
terrierteam/ir_measures 0.4.3: ``providers/pytrec_eval_provider.py``, ``msmarco_provider.py``
(RR@k: score desc, docno asc), ``judged_provider.py``, ``gdeval_provider.py``,
``providers/base.py`` (qrels topics missing from the output score ``DEFAULT`` = 0); the other
providers (cwl_eval, compat, gdeval's ERR, pytrec_eval's set measures) are in :mod:`.irmeasures_more`.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from rankflavor.errors import FlavorError
from rankflavor.flavor.flavor import Flavor, format_number
from rankflavor.presets.base import Preset, Template
from rankflavor.presets.irmeasures_more import OTHER_MEASURES, int_cutoff, other_template

# ---------------------------------------------------------------------------------------------
# ir_measures


IR_MEASURES_FLAVOR = Flavor(
    gain="linear",
    discount="log2",
    ideal="global",
    ideal_cut="k",
    unjudged="zero",
    negatives="unjudged",
    ties="docno_desc",
    precision="float32",
    empty="zero",
    missing="zero",
    run_only="skip",
    duplicates="error",
    fractional="error",  # its Qrel relevance is an int; pytrec_eval refuses any other
)

#: ir_measures measure names (and registered aliases) -> (rankflavor metric, parameters it accepts,
#: whether a cutoff is required).
_IRM_MEASURES: dict[str, tuple[str, frozenset[str], bool]] = {
    "nDCG": ("ndcg", frozenset({"dcg", "gains", "judged_only"}), False),
    "P": ("P", frozenset({"rel", "judged_only"}), True),
    "RR": ("RR", frozenset({"rel", "judged_only"}), False),
    "AP": ("AP", frozenset({"rel", "judged_only"}), False),
    "R": ("recall", frozenset({"judged_only"}), True),
    "Judged": ("judged", frozenset(), False),
    "Success": ("success", frozenset({"rel", "judged_only"}), True),
    "Rprec": ("Rprec", frozenset({"rel", "judged_only"}), False),
    "Bpref": ("bpref", frozenset({"rel"}), False),
    "NumRet": ("num_ret", frozenset({"rel"}), False),
    "NumRelRet": ("num_rel_ret", frozenset({"rel"}), False),
    "NumRel": ("num_rel", frozenset(), False),
}
_IRM_ALIASES = {
    "NDCG": "nDCG",
    "Precision": "P",
    "MRR": "RR",
    "MAP": "AP",
    "Recall": "R",
    "RPrec": "Rprec",
    "BPref": "Bpref",
}
_IRM_NAME = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z_0-9]*)\s*(?:\((?P<params>.*)\))?\s*(?:@\s*(?P<cutoff>[0-9.]+))?$",
                       re.DOTALL)

#: ir_measures answers RR@k and Judged in Python (msmarco and judged providers): scores compared
#: as float64, ties by docno ascending, not pytrec_eval's float32 and docno descending.
_PYTHON_SORT = {"ties": "docno_asc", "precision": "float64"}


def keyword_params(text: str, params: str | None, what: str = "ir_measures measure") -> dict[str, Any]:
    """The ``name=literal`` parameters of a Python-call-like measure name (``what`` names it in errors)."""
    if not params or not params.strip():
        return {}
    try:
        call = ast.parse(f"_({params})", mode="eval").body
    except SyntaxError:
        raise FlavorError(f"{what} {text!r}: cannot read the parameters {params!r}") from None
    if not isinstance(call, ast.Call) or call.args:
        raise FlavorError(f"{what} {text!r}: parameters are name=value pairs, received {params!r}")
    out: dict[str, Any] = {}
    for kw in call.keywords:
        try:
            out[str(kw.arg)] = ast.literal_eval(kw.value)
        except ValueError:
            raise FlavorError(f"{what} {text!r}: parameter {kw.arg} must be a literal") from None
    return out


def _gains_knob(text: str, gains: Any) -> str:
    if not isinstance(gains, dict) or not gains:
        raise FlavorError(f"ir_measures measure {text!r}: gains must be a non-empty dict like {{0:0,1:1,2:3}}")
    pairs = []
    for grade, gain in sorted(gains.items()):
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (grade, gain)):
            raise FlavorError(f"ir_measures measure {text!r}: gains maps numbers to numbers, received {gains!r}")
        pairs.append(f"{format_number(grade)}:{format_number(gain)}")
    return "{" + ",".join(pairs) + "}"


def parse_ir_measures(text: str) -> list[Template | str] | None:
    """Read an ir_measures measure name (``nDCG(judged_only=True)@10``, ``P(rel=2)@10``, ``RR@10``).

    Returns None for names that are not ir_measures measures, so canonical names still work.

    >>> [t.knobs for t in parse_ir_measures("RR@10")]  # msmarco provider: Python sort
    [{'ties': 'docno_asc', 'precision': 'float64'}]
    >>> parse_ir_measures("nDCG(dcg='exp-log2')@10")[0].knobs["gain"]
    'exp2'
    >>> t = parse_ir_measures("NERR10(max_rel=3, p=0.7)")[0]
    >>> t.metric, t.knobs["param"], t.knobs["max_grade"]
    ('NERR10', '0.7', '3')
    """
    m = _IRM_NAME.match(text.strip())
    if not m:
        return None
    name = _IRM_ALIASES.get(m.group("name"), m.group("name"))
    if name == "NumQ" and not m.group("params") and not m.group("cutoff"):
        return ["num_q"]
    if name in OTHER_MEASURES:
        return [other_template(name, text, keyword_params(text, m.group("params")), m.group("cutoff"))]
    if name not in _IRM_MEASURES:
        return None
    metric, allowed, needs_cutoff = _IRM_MEASURES[name]
    params = keyword_params(text, m.group("params"))
    unknown = set(params) - allowed
    if unknown:
        raise FlavorError(
            f"ir_measures measure {text!r}: {name} takes {', '.join(sorted(allowed)) or 'no parameters'} "
            f"(and @cutoff), received {', '.join(sorted(unknown))}"
        )
    k = int_cutoff(text, m.group("cutoff"))
    if needs_cutoff and k is None:
        raise FlavorError(f"ir_measures measure {name} needs a cutoff, e.g. {name}@10; received {text!r}")
    knobs: dict[str, str] = {}
    if "rel" in params:
        knobs["rel"] = format_number(float(params["rel"]))
    if params.get("judged_only"):
        knobs["unjudged"] = "condensed"
    if name == "nDCG":
        knobs["ideal_cut"] = "k" if k is not None else "none"
        if "gains" in params:
            knobs["gain"] = _gains_knob(text, params["gains"])
        dcg = params.get("dcg", "log2")
        if dcg == "exp-log2":  # answered by gdeval.pl
            if k is None or "gains" in params or params.get("judged_only"):
                raise FlavorError(
                    f"ir_measures measure {text!r}: dcg='exp-log2' runs gdeval, which needs a cutoff and "
                    "takes neither gains nor judged_only"
                )
            knobs.update(gain="exp2", precision="float64", max_grade="4")
        elif dcg != "log2":
            raise FlavorError(f"ir_measures measure {text!r}: dcg is 'log2' or 'exp-log2', received {dcg!r}")
    if (name == "RR" and k is not None) or name == "Judged":
        if params.get("judged_only"):
            raise FlavorError(f"ir_measures has no provider for {text!r} (RR@k is MS MARCO's, without judged_only)")
        knobs.update(_PYTHON_SORT)
    if name == "NumRet" and "rel" in params:
        metric = "num_rel_ret"
    return [Template(metric, k, knobs, text.strip())]


IR_MEASURES = Preset(
    name="ir_measures",
    flavor=IR_MEASURES_FLAVOR,
    summary="ir_measures 0.4.3: pytrec_eval's numbers, but qrels topics missing from the run score 0; "
    "RR@k and Judged sort in Python (float64, docno ascending); nDCG(dcg='exp-log2') and ERR@k are gdeval; "
    "RBP(rel), NERR8-11, INST, INSQ, BPM, SDCG are cwl_eval (gains (g-min_rel)/(max_rel-min_rel), "
    "1000 ranks, ties in input order); Compat is its own provider (ties docno ascending)",
    evidence="ir_measures 0.4.3 providers/pytrec_eval_provider.py, msmarco_provider.py, judged_provider.py, "
    "gdeval_provider.py, cwl_eval.py (cwl-eval 1.0.12 ruler/measures), compat_provider.py, providers/base.py "
    "(missing topics = DEFAULT 0), __init__.py DefaultPipeline order; differential tests against "
    "ir_measures.calc_aggregate and iter_calc on random queries and on DL19 BM25 (tests/presets/test_presets_ir.py, "
    "tests/presets/test_dialect_irmeasures.py)",
    dialect=parse_ir_measures,
    default_metrics=("nDCG@10", "AP", "RR@10", "R@100", "P@10", "Judged@10"),
    canonical={
        "ndcg": ("nDCG@{k}", "nDCG"), "P": ("P@{k}", "SetP"), "recall": ("R@{k}", "SetR"), "AP": ("AP@{k}", "AP"),
        "RR": ("RR@{k}", "RR"), "judged": ("Judged@{k}", "Judged"), "success": ("Success@{k}", None),
        "Rprec": (None, "Rprec"), "bpref": (None, "Bpref"), "num_ret": (None, "NumRet"),
        "num_rel_ret": (None, "NumRelRet"), "num_rel": (None, "NumRel"), "relative_P": (None, "SetRelP"),
        "F": (None, "SetF"), "set_AP": (None, "SetAP"), "infAP": (None, "infAP"), "ERR": ("ERR@{k}", None),
        "Compat": (None, "Compat"),
    },
    refusals={
        "ERR": "ir_measures' ERR@k is gdeval's, which needs a cutoff: write ir_measures:ERR@20",
        "RBP": "ir_measures' RBP is cwl_eval's, which needs rel: write ir_measures:RBP(rel=1)",
        "IPrec": "ir_measures' IPrec takes the recall level as its cutoff: write ir_measures:IPrec@0.5",
        **{name: f"ir_measures' {name} (cwl_eval) needs max_rel: write e.g. ir_measures:{name}(max_rel=3)"
           for name in ("NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ", "BPM", "SDCG")},
    },
)
