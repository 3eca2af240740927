"""trec_eval 9.0.8 (and pytrec_eval): flavor and measure dialect.

Evidence: usnistgov/trec_eval tag v9.0.8 - ``form_res_rels.c`` (scores as C ``float``; ties by
docno descending with ``strcmp``; negative grades pooled-but-unjudged), ``m_ndcg.c`` (linear gain,
optional ``ndcg.L=g`` gain table, ideal over every judged document, not cut), ``m_ndcg_cut.c``
(ideal cut at k), ``meas_avg.c`` (``-c`` divides by the number of qrels topics),
``m_num_rel.c`` (under ``-c`` the summary counts qrels lines with rel > 0). Checked against
trec_eval's own test outputs and 9.0.8 outputs on real runs (``tests/test_trec_parity.py``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..errors import FlavorError
from ..flavor import Flavor, format_number
from ..measure import Measure
from .base import Preset, Template

DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
SUCCESS_CUTOFFS = (1, 5, 10)

#: trec_eval's measure table order (``measures.c``); output follows it, not the command line.
FAMILY_ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult",
    "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut",
    "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret",
)

#: Families rankflavor implements, each: (metric, takes cutoffs, default cutoffs, extra knobs).
FAMILIES: dict[str, tuple[str, bool, tuple[int, ...], dict[str, str]]] = {
    "num_ret": ("num_ret", False, (), {}),
    "num_rel": ("num_rel", False, (), {}),
    "num_rel_ret": ("num_rel_ret", False, (), {}),
    "map": ("AP", False, (), {}),
    "Rprec": ("Rprec", False, (), {}),
    "bpref": ("bpref", False, (), {}),
    "recip_rank": ("RR", False, (), {}),
    "P": ("P", True, DEFAULT_CUTOFFS, {}),
    "recall": ("recall", True, DEFAULT_CUTOFFS, {}),
    "ndcg": ("ndcg", False, (), {"ideal_cut": "none"}),
    "ndcg_cut": ("ndcg", True, DEFAULT_CUTOFFS, {"ideal_cut": "k"}),
    "map_cut": ("AP", True, DEFAULT_CUTOFFS, {}),
    "success": ("success", True, SUCCESS_CUTOFFS, {}),
}
PSEUDO = ("runid", "num_q")

#: ``-m all_trec``: every family rankflavor implements, in trec_eval's order.
ALL_TREC = tuple(f for f in FAMILY_ORDER if f in FAMILIES or f in PSEUDO)

_NAME = re.compile(r"^(?P<family>[A-Za-z_0-9]+)(?:\.(?P<params>.*))?$")


def _cutoffs(family: str, params: str) -> tuple[int, ...]:
    values: set[int] = set()
    for p in params.split(","):
        try:
            v = int(float(p))  # trec_eval reads cutoffs as long: 23.4 -> 23
        except ValueError:
            raise FlavorError(f"trec_eval measure {family}.{params}: cutoff {p!r} is not a number") from None
        if v < 1:
            raise FlavorError(f"trec_eval measure {family}.{params}: cutoffs must be positive, received {p!r}")
        values.add(v)
    return tuple(sorted(values))


def _gain_table(params: str) -> str:
    pairs = []
    for p in params.split(","):
        if "=" not in p:
            raise FlavorError(f"trec_eval ndcg parameters are rel=gain pairs (ndcg.1=1,2=3), received {p!r}")
        level, gain = p.split("=", 1)
        try:
            pairs.append(f"{format_number(int(float(level)))}:{format_number(float(gain))}")
        except ValueError:
            raise FlavorError(f"trec_eval ndcg parameter {p!r} is not rel=gain with numbers") from None
    return "{" + ",".join(pairs) + "}"


def parse(text: str) -> list[Template | str] | None:
    """Expand a trec_eval ``-m`` argument (``ndcg_cut.5,10``, ``P``, ``all_trec``, ``ndcg.1=3``)."""
    if text == "all_trec":
        out: list[Template | str] = []
        for fam in ALL_TREC:
            out.extend(parse(fam) or [])
        return out
    m = _NAME.match(text.strip())
    if not m:
        return None
    family, params = m.group("family"), m.group("params")
    if family in PSEUDO and params is None:
        return [family]
    if family not in FAMILIES:
        return None
    metric, cut, defaults, knobs = FAMILIES[family]
    if family == "ndcg" and params:
        return [Template("ndcg", None, {**knobs, "gain": _gain_table(params)}, f"ndcg_{params}")]
    if not cut:
        if params:
            raise FlavorError(f"trec_eval measure {family!r} takes no parameters, received {text!r}")
        return [Template(metric, None, dict(knobs), family)]
    ks = _cutoffs(family, params) if params else defaults
    return [Template(metric, k, dict(knobs), f"{family}_{k}") for k in ks]


def finalize(measure: Measure) -> Measure:
    """trec_eval -c sums num_rel over every qrels line with rel > 0 (``m_num_rel.c``)."""
    if measure.metric == "num_rel":
        total = "qrels_positive" if measure.flavor.missing == "zero" else "sum"
        return replace(measure, flavor=measure.flavor.with_knobs(total=total))
    return measure


def sort_key(label: str) -> tuple[int, float]:
    """Position of a trec_eval output name (``P_10``) in trec_eval's own output order."""
    for i, fam in sorted(enumerate(FAMILY_ORDER), key=lambda t: -len(t[1])):
        if label == fam:
            return (i, 0.0)
        if label.startswith(fam + "_"):
            rest = label[len(fam) + 1 :]
            try:
                return (i, float(rest))
            except ValueError:
                return (i, 0.0)
    return (len(FAMILY_ORDER), 0.0)


FLAVOR = Flavor(
    gain="linear",
    discount="log2",
    ideal="global",
    ideal_cut="k",
    unjudged="zero",
    negatives="unjudged",
    ties="docno_desc",
    precision="float32",
    empty="zero",
    missing="skip",
    duplicates="error",
)

TREC_EVAL = Preset(
    name="trec_eval",
    flavor=FLAVOR,
    summary="trec_eval 9.0.8: linear gain, log2(i+1), global ideal, float32 scores, docno-desc ties, missing topics skipped (-c: zero)",
    evidence="usnistgov/trec_eval v9.0.8 form_res_rels.c, m_ndcg.c, m_ndcg_cut.c, meas_avg.c; "
    "parity with trec_eval test outputs and real-run outputs in shared/data",
    dialect=parse,
    finalize=finalize,
)

PYTREC_EVAL = Preset(
    name="pytrec_eval",
    flavor=FLAVOR,
    summary="pytrec_eval 0.5 (trec_eval 9.0.5-era C code): same per-query numbers; missing topics omitted",
    evidence="pytrec-eval-terrier 0.5.11 differential tests (tests/test_pytrec_eval_diff.py)",
    dialect=parse,
    finalize=finalize,
)

PRESETS = [TREC_EVAL, PYTREC_EVAL]
