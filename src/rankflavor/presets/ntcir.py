"""NTCIREVAL (and its Python port pyNTCIREVAL): the flavor and every name its ``compute`` prints.

NTCIREVAL reads a ranked list labelled with relevance levels L0..Ln and the gain of each level
(``-g gainL1:gainL2:...``, required by the tool). Its output names, and how each reads here:

======================  =====================================================================
``nDCG@l``              ``ndcg@l``: Järvelin-Kekäläinen discount, ranks below b = ``--logb``
                        (default 2) undiscounted, user gains, global ideal cut at l
``MSnDCG@l``            ``ndcg@l[discount=log2]``: the same gains, "Microsoft" log2(i+1)
``AP``, ``AP@l``        ``AP``, ``AP@l[ap_divisor=min_k_relevant]``: AP@l divides by min(l, R)
                        (``p_u`` stop probability), not by R as trec_eval's map_cut
``P@l``, ``Hit@l``      ``P@l`` (÷ l), ``success@l``
``RR``                  ``RR``, over the whole list
``ERR``                 ``ERR_gain[gain=-g table]``: R = gain / (last level's gain + 1), the whole
                        list (no cutoff); Chapelle's R when the gains are 2^L - 1
``nERR@l``              ``nERR_gain@l``: ERR@l over the ERR@l of the global ideal list
``RBP``                 ``RBP[param=p]``: r = gain / last level's gain, p = ``--rbp`` (default 0.95,
                        rankflavor's RBP defaults to 0.8), the whole list
======================  =====================================================================

Refused with the reason: Q-measure, O-measure, P-measure, P-plus and the four NCU variants
(rankflavor computes none of them), ``ERR@l`` and ``RBP@l`` (NTCIREVAL prints both for the whole
list only), and options that change nothing the name computes.

With ``-g`` the levels are the grades 1..n (``max_grade`` = n); without it the preset's linear
gain gives level L the gain L, and ERR, nERR and RBP need the top level as ``max_grade`` (or a
``--scale``). A query with nothing relevant scores 0 in every measure but nDCG, MSnDCG and nERR,
which divide 0 by 0 there (pyNTCIREVAL raises ZeroDivisionError: ``empty=error``).

References
----------
mpkato/pyNTCIREVAL 0.0.3: ``main.py`` (``compute``: ``-g`` required, ``--rbp`` 0.95, ``--logb`` 2,
``--cutoffs`` 1000), ``metrics/grade_metric.py`` (``_err_grade``, ``_rbp_grade``, ``maxgrade =
grades[-1]``), ``metrics/ncu.py`` (``p_u``), ``metrics/{ndcg,ms_ndcg,err,nerr,rbp,rr,precision,
hit}.py``; its own test outputs ``tests/dat/res_test_compute*.txt`` (``tests/presets/test_presets_ntcir.py``).
"""

from __future__ import annotations

import math
import re

from rankflavor.errors import FlavorError
from rankflavor.flavor.flavor import Flavor, format_number
from rankflavor.presets.base import Canonical, Preset, Template

#: NTCIREVAL's default cutoff (``--cutoffs``) and RBP persistence (``--rbp``).
DEFAULT_CUTOFF = 1000
DEFAULT_RBP = 0.95

_NAME = re.compile(r"^(?P<name>[A-Za-z][A-Za-z+,\-]*?)(?:@(?P<l>\d+))?(?P<opts>(?:\s+--?[a-z]+\s+\S+)*)\s*$")
_OPTION = re.compile(r"(--?[a-z]+)\s+(\S+)")
_NOT_MODELLED = {
    "q-measure", "qmeasure", "q", "o-measure", "omeasure", "p-measure", "pmeasure", "p-plus", "pplusmeasure",
    "p+-measure", "ncugu,p", "ncugup", "ncugu,br", "ncugubr", "ncurb,p", "ncurbp", "ncurb,br", "ncurbbr",
}
_CUT = {"nDCG", "MSnDCG", "nERR", "P", "Precision", "Hit"}  # names that carry @l (default 1000)
_WHOLE = {"RR", "ERR", "RBP"}  # names computed on the whole list only


def _gains(text: str) -> list[float]:
    try:
        gains = [float(g) for g in text.split(":")]
    except ValueError:
        raise FlavorError(f"NTCIREVAL -g takes gains like 1:3:7, received {text!r}") from None
    if not gains or not all(math.isfinite(g) for g in gains):
        raise FlavorError(f"NTCIREVAL -g takes finite gains like 1:3:7, received {text!r}")
    return gains


def _options(text: str, opts: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for flag, value in _OPTION.findall(opts):
        if flag not in ("-g", "--rbp", "--logb"):
            raise FlavorError(f"NTCIREVAL name {text!r}: option {flag} is not read here (-g, --rbp, --logb are)")
        if flag in found:
            raise FlavorError(f"NTCIREVAL name {text!r}: {flag} given twice")
        found[flag] = value
    return found


def parse_ntcireval(text: str) -> list[Template | str] | None:
    """NTCIREVAL's output names (``nDCG@10``, ``MSnDCG@0010``, ``AP@10``, ``ERR``, ``nERR@10``, ``RBP``,
    ``P@10``, ``Hit@10``, ``RR``), each optionally followed by ``-g 1:2:3``, ``--rbp 0.9``, ``--logb 3``.

    >>> sorted(parse_ntcireval("MSnDCG@10 -g 1:3:7")[0].knobs.items())
    [('discount', 'log2'), ('gain', '{1:1,2:3,3:7}'), ('max_grade', '3')]
    >>> t = parse_ntcireval("AP@10")[0]; (t.metric, t.k, t.knobs["ap_divisor"])
    ('AP', 10, 'min_k_relevant')
    >>> t = parse_ntcireval("ERR -g 1:3:7")[0]; (t.metric, t.k, t.knobs["gain"])
    ('ERR_gain', None, '{1:1,2:3,3:7}')
    """
    m = _NAME.match(text.strip())
    if not m:
        return None
    name, l_text = m.group("name"), m.group("l")
    if name.lower() in _NOT_MODELLED:
        raise FlavorError(f"NTCIREVAL's {name} is not reproduced: rankflavor computes no Q-measure, O-measure, "
                          "P-measure, P-plus or NCU")
    known = _CUT | _WHOLE | {"AP"}
    if name not in known:
        return None
    opts = _options(text, m.group("opts"))
    if name in _WHOLE and l_text is not None:
        raise FlavorError(f"NTCIREVAL prints {name} for the whole list only (no @l); received {text!r}")
    if name == "nERR" and l_text is None:
        l_text = str(DEFAULT_CUTOFF)
    knobs: dict[str, str] = {}
    if "-g" in opts:
        gains = _gains(opts["-g"])
        # -g gives one gain per relevance level L1..Ln; a grade above Ln has no level.
        knobs["gain"] = "{" + ",".join(f"{i}:{format_number(g)}" for i, g in enumerate(gains, 1)) + "}"
        knobs["max_grade"] = str(len(gains))
    if "--rbp" in opts and name != "RBP":
        raise FlavorError(f"NTCIREVAL name {text!r}: --rbp is RBP's persistence; {name} does not read it")
    if "--logb" in opts and name != "nDCG":
        raise FlavorError(f"NTCIREVAL name {text!r}: --logb is nDCG's discount base; {name} does not read it")
    k = int(l_text) if l_text is not None else (DEFAULT_CUTOFF if name in _CUT else None)
    if k is not None and k < 1:
        raise FlavorError(f"NTCIREVAL cutoffs are ranks >= 1, received {text!r}")
    label = text.strip()
    if name in ("nDCG", "MSnDCG"):
        if name == "MSnDCG":
            knobs["discount"] = "log2"
        elif "--logb" in opts:
            knobs["discount"] = _logb(text, opts["--logb"])
        return [Template("ndcg", k, knobs, label)]
    if name == "nERR":  # ERR@l over the ideal ERR@l: 0/0 (an error) with nothing relevant, as nDCG
        return [Template("nERR_gain", k, knobs, label)]
    knobs["empty"] = "zero"  # pyNTCIREVAL scores a query with nothing relevant 0 in these
    if name == "ERR":
        return [Template("ERR_gain", None, knobs, label)]
    if name == "RBP":
        p = float(opts.get("--rbp", DEFAULT_RBP))
        if not 0 < p < 1:
            raise FlavorError(f"NTCIREVAL --rbp is a persistence 0 < p < 1, received {opts['--rbp']!r}")
        return [Template("RBP", None, {**knobs, "param": format_number(p)}, label)]
    knobs.pop("gain", None)  # AP, P, Hit, RR read relevance levels only (level >= 1 is relevant)
    knobs.pop("max_grade", None)
    if name == "AP":
        return [Template("AP", k, {**knobs, **({"ap_divisor": "min_k_relevant"} if k is not None else {})}, label)]
    if name == "RR":
        return [Template("RR", None, knobs, label)]
    if name == "Hit":
        return [Template("success", k, knobs, label)]
    return [Template("P", k, knobs, label)]


def _logb(text: str, value: str) -> str:
    try:
        base = float(value)
    except ValueError:
        raise FlavorError(f"NTCIREVAL name {text!r}: --logb takes a number, received {value!r}") from None
    if base == 0:
        base = math.e  # NTCIREVAL: 0 means the natural logarithm
    if not base > 1:
        raise FlavorError(f"NTCIREVAL name {text!r}: --logb must be 0 (e) or > 1, received {value!r}")
    return f"jk({format_number(base)})"


#: rankflavor's names as NTCIREVAL's (``ntcireval:ndcg@10`` is its nDCG@10).
CANONICAL: Canonical = {
    "ndcg": ("nDCG@{k}", None), "AP": ("AP@{k}", "AP"), "P": ("P@{k}", None), "success": ("Hit@{k}", None),
    "RR": (None, "RR"), "RBP": (None, "RBP"), "ERR_gain": (None, "ERR"), "nERR_gain": ("nERR@{k}", None),
}  # fmt: skip

REFUSALS = {
    "ERR": "NTCIREVAL's ERR takes R = gain / (max gain + 1) from its -g gains over the whole list: write "
    "ntcireval:ERR (ERR_gain), or 'ERR -g 1:3:7' for Chapelle's R on a 0-3 scale",
    "nERR": "NTCIREVAL's nERR@l takes R = gain / (max gain + 1) from its -g gains: write ntcireval:nERR@10 (nERR_gain)",
    "ndcg": "NTCIREVAL's nDCG always has a cutoff l (default 1000): write ntcireval:nDCG@1000",
    "RR": "NTCIREVAL's RR covers the whole list: write ntcireval:RR",
    "RBP": "NTCIREVAL's RBP covers the whole list, with persistence 0.95 (--rbp): write ntcireval:RBP",
}

NTCIREVAL = Preset(
    name="ntcireval",
    flavor=Flavor(
        gain="linear",
        discount="jk(2)",
        ideal="global",
        ideal_cut="k",
        unjudged="zero",
        negatives="error",
        ties="input_order",
        precision="float64",
        empty="error",
        missing="zero",
        duplicates="error",
    ),
    summary="NTCIREVAL / pyNTCIREVAL 0.0.3: nDCG@l = Järvelin-Kekäläinen discount (ranks below b=2 "
    "undiscounted) with user gains (-g), MSnDCG@l = log2(i+1); AP@l divides by min(l, R); ERR and nERR@l "
    "stop with gain/(max gain+1); RBP's persistence is 0.95; ranked list as given; IDCG = 0 is undefined",
    evidence="pyNTCIREVAL 0.0.3 main.py, metrics/ndcg.py (_orig_dcglog), ms_ndcg.py, grade_metric.py "
    "(_err_grade, _rbp_grade), ncu.py (p_u), normalized_metric.py (ideal from per-level counts); its own test "
    "outputs tests/dat/res_test_compute*.txt and differential tests against pyNTCIREVAL on random queries "
    "(tests/presets/test_presets_ntcir.py, tests/presets/test_presets_ir.py); flavor-facts 4.1 fingerprints",
    dialect=parse_ntcireval,
    default_metrics=("nDCG@10", "MSnDCG@10", "nDCG@1000"),
    canonical=CANONICAL,
    refusals=REFUSALS,
)

PRESETS = [NTCIREVAL]
