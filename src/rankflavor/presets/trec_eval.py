"""trec_eval 9.0.8 (and pytrec_eval): flavor and measure dialect.

Evidence: usnistgov/trec_eval tag v9.0.8 - ``form_res_rels.c`` (scores as C ``float``; ties by
docno descending with ``strcmp``; negative grades pooled-but-unjudged), ``m_ndcg.c`` (linear gain,
optional ``ndcg.L=g`` gain table, ideal over every judged document, not cut), ``m_ndcg_cut.c``
(ideal cut at k), ``meas_avg.c`` (``-c`` divides by the number of qrels topics),
``m_num_rel.c`` (under ``-c`` the summary counts qrels lines with rel > 0). Checked against
trec_eval's own test outputs and 9.0.8 outputs on real runs (``tests/presets/test_trec_parity.py``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import NamedTuple

from rankflavor.errors import FlavorError
from rankflavor.flavor.flavor import Flavor, format_number
from rankflavor.metrics.measure import Measure
from rankflavor.metrics.trec_extra import ELEVEN_POINTS, R_MULTIPLES, UTILITY_DEFAULT
from rankflavor.presets.base import Canonical, Preset, Template

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


class Family(NamedTuple):
    """How one trec_eval measure family maps to rankflavor.

    Attributes
    ----------
    metric : canonical rankflavor metric.
    suffixed : output names carry the parameter (``P_10``, ``iprec_at_recall_0.10``).
    defaults : default parameters (cutoffs, levels or values), as trec_eval's tables.
    knobs : knobs the family pins (``ndcg`` is uncut, ``ndcg_cut`` cut at k).
    kind : how ``family.params`` is read: ``plain`` (no parameters), ``long_cutoffs`` (one measure
        per integer cutoff k), ``float_cutoffs`` (one per number, named ``%3.2f``), ``float_params``
        (one measure; numbers in the given order; named ``family_<params>``), ``gain_pairs``
        (``level=gain`` table; named ``family_<params>``).
    """

    metric: str
    suffixed: bool
    defaults: tuple[float, ...] = ()
    knobs: dict[str, str] = {}  # noqa: RUF012  (NamedTuple default, never mutated)
    kind: str = "plain"


#: Every trec_eval 9.0.8 ``all_trec`` family (``measures.c``), as rankflavor measures.
FAMILIES: dict[str, Family] = {
    "num_ret": Family("num_ret", False),
    "num_rel": Family("num_rel", False),
    "num_rel_ret": Family("num_rel_ret", False),
    "map": Family("AP", False),
    "gm_map": Family("GMAP", False),
    "Rprec": Family("Rprec", False),
    "bpref": Family("bpref", False),
    "recip_rank": Family("RR", False),
    "iprec_at_recall": Family("IPrec", True, ELEVEN_POINTS, {}, "float_cutoffs"),
    "P": Family("P", True, DEFAULT_CUTOFFS, {}, "long_cutoffs"),
    "relstring": Family("relstring", False, (10,), {}, "float_params"),
    "recall": Family("recall", True, DEFAULT_CUTOFFS, {}, "long_cutoffs"),
    "infAP": Family("infAP", False),
    "gm_bpref": Family("gm_bpref", False),
    "Rprec_mult": Family("Rprec_mult", True, R_MULTIPLES, {}, "float_cutoffs"),
    "utility": Family("utility", False, UTILITY_DEFAULT, {}, "float_params"),
    "11pt_avg": Family("IPrec_avg", False, ELEVEN_POINTS, {}, "float_params"),
    "binG": Family("binG", False),
    "G": Family("G", False, (), {}, "gain_pairs"),
    "ndcg": Family("ndcg", False, (), {"ideal_cut": "none"}, "gain_pairs"),
    "ndcg_rel": Family("ndcg_rel", False, (), {}, "gain_pairs"),
    "Rndcg": Family("Rndcg", False, (), {}, "gain_pairs"),
    "ndcg_cut": Family("ndcg", True, DEFAULT_CUTOFFS, {"ideal_cut": "k"}, "long_cutoffs"),
    "map_cut": Family("AP", True, DEFAULT_CUTOFFS, {}, "long_cutoffs"),
    "relative_P": Family("relative_P", True, DEFAULT_CUTOFFS, {}, "long_cutoffs"),
    "success": Family("success", True, SUCCESS_CUTOFFS, {}, "long_cutoffs"),
    "set_P": Family("P", False),
    "set_relative_P": Family("relative_P", False),
    "set_recall": Family("recall", False),
    "set_map": Family("set_AP", False),
    "set_F": Family("F", False, (1.0,), {}, "float_params"),
    "num_nonrel_judged_ret": Family("num_nonrel_judged_ret", False),
}
PSEUDO = ("runid", "num_q")

#: ``-m all_trec``: every family, in trec_eval's order.
ALL_TREC = tuple(f for f in FAMILY_ORDER if f in FAMILIES or f in PSEUDO)

#: trec_eval's measure nicknames (``measures.c``); ``official`` is the default set.
NICKNAMES: dict[str, tuple[str, ...]] = {
    "all_trec": ALL_TREC,
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
}

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


def _numbers(family: str, params: str) -> tuple[float, ...]:
    """Comma-separated numbers, in order (trec_eval reads them with ``atof``)."""
    out = []
    for p in params.split(","):
        try:
            out.append(float(p))
        except ValueError:
            raise FlavorError(f"trec_eval measure {family}.{params}: parameter {p!r} is not a number") from None
    return tuple(out)


def _gain_table(params: str) -> str:
    pairs = []
    for p in params.split(","):
        if "=" not in p:
            raise FlavorError(f"trec_eval gain parameters are rel=gain pairs (ndcg.1=1,2=3), received {p!r}")
        level, gain = p.split("=", 1)
        try:
            pairs.append(f"{format_number(int(float(level)))}:{format_number(float(gain))}")
        except ValueError:
            raise FlavorError(f"trec_eval gain parameter {p!r} is not rel=gain with numbers") from None
    return "{" + ",".join(pairs) + "}"


def _param_knob(values: tuple[float, ...]) -> str:
    text = ",".join(format_number(v) for v in values)
    return f"({text})" if len(values) > 1 else text


def _family_templates(family: str, params: str | None, text: str) -> list[Template | str]:
    spec = FAMILIES[family]
    knobs = dict(spec.knobs)
    if spec.kind == "plain":
        if params:
            raise FlavorError(f"trec_eval measure {family!r} takes no parameters, received {text!r}")
        return [Template(spec.metric, None, knobs, family)]
    if spec.kind == "long_cutoffs":
        ks = _cutoffs(family, params) if params else tuple(int(k) for k in spec.defaults)
        return [Template(spec.metric, k, knobs, f"{family}_{k}") for k in ks]
    if spec.kind == "float_cutoffs":
        levels = sorted(_numbers(family, params)) if params else list(spec.defaults)
        if len(set(levels)) != len(levels):
            raise FlavorError(f"trec_eval measure {text!r}: duplicate parameters (trec_eval rejects them)")
        return [Template(spec.metric, None, {**knobs, "param": format_number(v)}, f"{family}_{v:3.2f}") for v in levels]
    if spec.kind == "gain_pairs":
        if not params:
            return [Template(spec.metric, None, knobs, family)]
        return [Template(spec.metric, None, {**knobs, "gain": _gain_table(params)}, f"{family}_{params}")]
    # float_params: one measure; the name carries the parameters exactly as typed.
    values = _numbers(family, params) if params else spec.defaults
    label = f"{family}_{params}" if params else family
    if family == "relstring":
        length = int(values[0])  # trec_eval: (long) params[0]
        if length < 1:
            raise FlavorError(f"trec_eval measure {text!r}: the string length must be >= 1, received {params!r}")
        return [Template(spec.metric, length, knobs, label)]
    if family == "utility" and len(values) != 4:
        raise FlavorError(f"trec_eval measure {text!r}: utility takes 4 coefficients, received {len(values)}")
    return [Template(spec.metric, None, {**knobs, "param": _param_knob(values)}, label)]


def parse(text: str) -> list[Template | str] | None:
    """Expand a trec_eval ``-m`` argument (``ndcg_cut.5,10``, ``P``, ``all_trec``, ``ndcg.1=3``,
    ``iprec_at_recall..10,.20``, ``utility.2,-1,0,0``)."""
    m = _NAME.match(text.strip())
    if not m:
        return None
    family, params = m.group("family"), m.group("params")
    if family in NICKNAMES:  # trec_eval ignores parameters given to a nickname
        out: list[Template | str] = []
        for fam in NICKNAMES[family]:
            out.extend(parse(fam) or [])
        return out
    if family in PSEUDO and params is None:
        return [family]
    if family not in FAMILIES:
        return None
    return _family_templates(family, params, text)


def combine(items: list[str | Measure]) -> list[str | Measure]:
    """Combine ``-m`` arguments as trec_eval does: a family given with parameters replaces its
    default parameters wherever it is also named plainly or through a nickname (``-m all_trec
    -m relstring.20`` prints only relstring_20).

    trec_eval keeps only the first parameter list of a family (``-m P.5 -m P.10`` prints P_5);
    rankflavor keeps them all rather than drop a request silently.
    """
    with_params: set[str] = set()
    for item in items:
        if isinstance(item, str):
            m = _NAME.match(item.strip())
            if m and m.group("family") in FAMILIES and m.group("params"):
                with_params.add(m.group("family"))
    out: list[str | Measure] = []
    for item in items:
        m = _NAME.match(item.strip()) if isinstance(item, str) else None
        if m is None or m.group("params"):
            out.append(item)
            continue
        family = m.group("family")
        if family in NICKNAMES:
            out.extend(f for f in NICKNAMES[family] if f not in with_params)
        elif family not in with_params:
            out.append(item)
    return out


def finalize(measure: Measure) -> Measure:
    """trec_eval -c sums num_rel over every qrels line with rel > 0 (``m_num_rel.c``): the
    ``total`` knob follows ``missing`` for the measures that read it (the spec's summary rule
    does the counting)."""
    if "total" in measure.spec.knobs:
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


#: rankflavor's names as trec_eval's: every canonical metric a trec_eval 9.0.8 measure computes
#: (``PRESET:ndcg@10`` is ``ndcg_cut.10``); the others are refused (:data:`REFUSALS`).
CANONICAL: Canonical = {
    "num_ret": (None, "num_ret"), "num_rel": (None, "num_rel"), "num_rel_ret": (None, "num_rel_ret"),
    "AP": ("map_cut.{k}", "map"), "GMAP": (None, "gm_map"), "Rprec": (None, "Rprec"), "bpref": (None, "bpref"),
    "RR": (None, "recip_rank"), "IPrec": (None, "iprec_at_recall"), "P": ("P.{k}", "set_P"),
    "relstring": ("relstring.{k}", "relstring"), "recall": ("recall.{k}", "set_recall"), "infAP": (None, "infAP"),
    "gm_bpref": (None, "gm_bpref"), "Rprec_mult": (None, "Rprec_mult"), "utility": (None, "utility"),
    "IPrec_avg": (None, "11pt_avg"), "binG": (None, "binG"), "G": (None, "G"), "ndcg": ("ndcg_cut.{k}", "ndcg"),
    "ndcg_rel": (None, "ndcg_rel"), "Rndcg": (None, "Rndcg"), "relative_P": ("relative_P.{k}", "set_relative_P"),
    "success": ("success.{k}", None), "set_AP": (None, "set_map"), "F": (None, "set_F"),
    "num_nonrel_judged_ret": (None, "num_nonrel_judged_ret"),
}  # fmt: skip

#: Why trec_eval's number differs from a canonical name's, where trec_eval has a measure of the name.
REFUSALS = {
    "RR": "trec_eval's recip_rank has no cutoff; trec_eval -M k -m recip_rank (depth=k) is RR@k: write "
    "recip_rank with --flavor depth=k, or use the trec_dl preset, whose RR@10 is that",
    "RBP": "trec_eval 9.0.8 has no rbp (10.0's rbp takes p = 0.9 and rescales graded gains by the qrels' "
    "range): not reproduced",
    "dcg": "trec_eval 9.0.8 has no dcg (10.0 adds it): not reproduced",
    "success": "trec_eval's success has cutoffs only (success.1,5,10)",
}

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
    fractional="truncate",  # get_qrels.c reads a grade with atol
)

TREC_EVAL = Preset(
    name="trec_eval",
    flavor=FLAVOR,
    summary="trec_eval 9.0.8: linear gain, log2(i+1), global ideal, float32 scores, docno-desc ties, missing topics skipped (-c: zero)",
    evidence="usnistgov/trec_eval v9.0.8 form_res_rels.c, m_ndcg.c, m_ndcg_cut.c, meas_avg.c; "
    "parity with trec_eval test outputs and real-run outputs in shared/data",
    dialect=parse,
    finalize=finalize,
    combine=combine,
    canonical=CANONICAL,
    refusals=REFUSALS,
)

PYTREC_EVAL = Preset(
    name="pytrec_eval",
    # Its Python binding refuses a relevance that is not an int ("Expected relevance to be integer").
    flavor=FLAVOR.with_knobs(fractional="error"),
    summary="pytrec_eval 0.5 (trec_eval 9.0.5-era C code): same per-query numbers; missing topics omitted",
    evidence="pytrec-eval-terrier 0.5.11 differential tests (tests/presets/test_pytrec_eval_diff.py)",
    dialect=parse,
    finalize=finalize,
    combine=combine,
    canonical=CANONICAL,
    refusals=REFUSALS,
)

PRESETS = [TREC_EVAL, PYTREC_EVAL]
