"""IR toolkits and leaderboards: ir_measures, gdeval, ranx, trectools, MS MARCO, TREC DL, BEIR.

Each preset pins the tool's flavor and parses the tool's own metric names. Where the tool installs
from PyPI it is checked by differential tests on thousands of random queries and on the real
TREC DL 2019 run (``tests/presets/test_presets_ir.py``); the evidence string of every preset says how.

The ir_measures preset, whose dialect is the largest, lives in :mod:`rankflavor.presets.irmeasures`;
NTCIREVAL's in :mod:`rankflavor.presets.ntcir`.

References
----------
TREC Web track ``gdeval.pl`` 1.2a (bundled with ir_measures): exp2 gain, score desc then docno desc,
grades > 4 rejected, topics without a positive judgment omitted.
AmenRa/ranx 0.3.21: ``ranx/metrics/*.py`` (``clean_qrels`` drops grades below the level for every
metric, NDCG included), ``ranx/meta/evaluate.py`` (``-lN`` suffix, ``check_keys``).
joaopalotti/trectools 0.0.50: ``trectools/trec_eval.py``, ``trec_run.py`` (``read_run`` sorts by
score desc, docid asc; ``get_ndcg`` never re-sorts; means divide by the run's topics).
microsoft MS MARCO ``ms_marco_eval.py`` (MRR@10 over every reference query).
beir-cellar/beir ``beir/retrieval/evaluation.py`` (pytrec_eval ``ndcg_cut``/``map_cut``/``recall``/
``P``, mean over the queries pytrec_eval returns, ``ignore_identical_ids=True``) and
``custom_metrics.py`` (``mrr``: Python sort, divided by every qrels query).
"""

from __future__ import annotations

import re

from rankflavor.errors import FlavorError
from rankflavor.flavor.flavor import Flavor, format_number
from rankflavor.presets.base import SELF, Preset, Template
from rankflavor.presets.irmeasures import IR_MEASURES, keyword_params
from rankflavor.presets.trec_eval import CANONICAL as TREC_EVAL_CANONICAL
from rankflavor.presets.trec_eval import FLAVOR as TREC_EVAL_FLAVOR
from rankflavor.presets.trec_eval import REFUSALS as TREC_EVAL_REFUSALS
from rankflavor.presets.trec_eval import combine as trec_eval_combine
from rankflavor.presets.trec_eval import finalize as trec_eval_finalize
from rankflavor.presets.trec_eval import parse as parse_trec_eval

# ---------------------------------------------------------------------------------------------
# gdeval.pl

_AT = re.compile(r"^(?P<name>[A-Za-z_\-]+)\s*@\s*(?P<k>\d+)$")


def parse_gdeval(text: str) -> list[Template | str] | None:
    """gdeval's output columns: ``ndcg@K`` (the cutoff is required)."""
    t = text.strip()
    m = _AT.match(t)
    name = (m.group("name") if m else t).lower()
    if name not in ("ndcg", "err"):
        return None
    if not m:
        raise FlavorError(f"gdeval always takes a cutoff (its argument k): write {name}@20, received {text!r}")
    if name == "err":  # G = 4 ($MAX_JUDGMENT), from the preset's max_grade
        return [Template("ERR", int(m.group("k")), {}, f"err@{m.group('k')}")]
    return [Template("ndcg", int(m.group("k")), {}, f"ndcg@{m.group('k')}")]


GDEVAL = Preset(
    name="gdeval",
    flavor=Flavor(
        gain="exp2",
        discount="log2",
        ideal="global",
        ideal_cut="k",
        max_grade="4",
        unjudged="zero",
        negatives="unjudged",
        ties="docno_desc",
        precision="float64",
        empty="skip",
        missing="skip",
        duplicates="error",
    ),
    summary="gdeval.pl 1.2a (TREC Web 2010-14): 2^g-1 gain, cutoff required, grades above 4 rejected, "
    "topics without a positive judgment or without a ranking left out of the mean",
    evidence="gdeval.pl 1.2a as bundled with ir_measures 0.4.3 (ir_measures/bin/gdeval.pl: dcg(), runOrder, "
    "$MAX_JUDGMENT = 4); differential tests running the perl script on random queries "
    "(tests/presets/test_presets_ir.py; values agree to its 5 printed decimals)",
    dialect=parse_gdeval,
    default_metrics=("ndcg@20",),
    canonical={"ndcg": ("ndcg@{k}", None), "ERR": ("err@{k}", None)},
    refusals={"ndcg": "gdeval always takes a cutoff: write gdeval:ndcg@20",
              "ERR": "gdeval always takes a cutoff: write gdeval:err@20"},
)

# ---------------------------------------------------------------------------------------------
# ranx

_RANX = re.compile(r"^(?P<name>[a-z][a-z0-9_\-]*?)(?:@(?P<k>\d+))?(?:-l(?P<level>-?\d+))?$")
#: ``rbp.95``, ``rbp@95``: ranx reads the digits as the decimals of p (``float(f"0.{k}")``).
_RANX_RBP = re.compile(r"^rbp(?:[.@](?P<p>\d+))?(?:-l(?P<level>-?\d+))?$")
#: ranx metric -> (rankflavor metric, extra knobs); the level N becomes min_grade (NDCG/DCG) or rel.
_RANX_METRICS: dict[str, tuple[str, dict[str, str]]] = {
    "ndcg": ("ndcg", {}),
    "ndcg_burges": ("ndcg", {"gain": "exp2"}),
    "dcg": ("dcg", {}),
    "dcg_burges": ("dcg", {"gain": "exp2"}),
    "mrr": ("RR", {}),
    "map": ("AP", {}),
    "recall": ("recall", {}),
    "precision": ("P", {}),
    "hit_rate": ("success", {}),
    "hits": ("hits", {}),
    "f1": ("F1", {}),
    # ranx counts a negative grade as a judged non-relevant document in N (qrels < level).
    "bpref": ("bpref_ranx", {"negatives": "zero"}),
    "r-precision": ("Rprec", {}),
}
#: ranx metrics whose cutoff is read and ignored (``bpref``, ``r_precision`` take k unused).
_RANX_NO_CUTOFF = ("bpref", "r-precision")


def parse_ranx(text: str) -> list[Template | str] | None:
    """ranx metric names: ``ndcg@10``, ``ndcg_burges@10-l2``, ``map@100``, ``r-precision``,
    ``hits@5``, ``f1@10``, ``bpref``, ``rbp.95``; every name of ranx 0.3.21's ``metric_switch``.

    >>> parse_ranx("ndcg@10-l2")[0].knobs
    {'min_grade': '2'}
    >>> parse_ranx("precision@10-l2")[0].knobs
    {'rel': '2'}
    >>> t = parse_ranx("rbp.95-l2")[0]; (t.metric, t.knobs)
    ('RBP_gain', {'param': '0.95', 'min_grade': '2'})
    """
    t = text.strip()
    rbp = _RANX_RBP.match(t)
    if rbp:
        return [_ranx_rbp(t, rbp)]
    m = _RANX.match(t)
    if not m:
        return None
    name = m.group("name")
    if name not in _RANX_METRICS:
        return None
    metric, knobs = _RANX_METRICS[name]
    k = int(m.group("k")) if m.group("k") else None
    if k == 0 or name in _RANX_NO_CUTOFF:
        k = None  # ranx: k = 0 is the whole run; bpref and r-precision ignore k
    level = _ranx_level(t, m.group("level"))
    if name == "bpref" and float(level) <= 0:
        raise FlavorError(
            f"ranx {t!r}: at a level <= 0 ranx's bpref counts grade 0 relevant and negative grades judged "
            "non-relevant; rankflavor's negatives knob cannot tell those apart. Use a level >= 1"
        )
    # ranx's own rule: its (n)dcg family drops grades below the level, the others read it as rel.
    level_knob = "min_grade" if name.startswith(("ndcg", "dcg")) else "rel"
    return [Template(metric, k, {**knobs, level_knob: level}, t)]


def _ranx_level(text: str, level: str | None) -> str:
    """The ``-lN`` level (default 1); negative levels are refused."""
    if level is None:
        return "1"
    if int(level) < 0:
        raise FlavorError(
            f"ranx {text!r}: at a negative level ranx keeps negative grades as judgments weighted by their "
            "value (a negative gain); rankflavor's negative-grade policies do not model that. Use a level >= 0"
        )
    return format_number(float(level))


def _ranx_rbp(text: str, m: re.Match[str]) -> Template:
    """``rbp.P[-lN]``: ranx's rank_biased_precision, r_i = the grade when it reaches the level."""
    if m.group("p") is None:
        raise FlavorError(f"ranx {text!r}: RBP needs its persistence, e.g. rbp.95 (p = 0.95), as ranx requires")
    p = float(f"0.{m.group('p')}")
    if p <= 0:
        raise FlavorError(f"ranx {text!r}: persistence p = {format_number(p)}; RBP needs 0 < p < 1")
    level = _ranx_level(text, m.group("level"))
    return Template("RBP_gain", None, {"param": format_number(p), "min_grade": level}, text)


RANX = Preset(
    name="ranx",
    flavor=Flavor(
        gain="linear",
        discount="log2",
        ideal="global",
        ideal_cut="k",
        min_grade="1",
        unjudged="zero",
        negatives="unjudged",
        ties="input_order",
        precision="float64",
        empty="zero",
        missing="error",
        run_only="error",
        duplicates="error",
    ),
    summary="ranx 0.3.21: its relevance level (default 1, suffix -lN) drops lower grades from NDCG and the "
    "ideal too; rbp.p weighs ranks by the raw grade; bpref is NaN without a judged non-relevant document; "
    "query sets must match (make_comparable=True = missing=zero, run_only=skip; a {} ranking scores 0); "
    "tie order undefined (numba sort)",
    evidence="ranx 0.3.21 ranx/metrics/*.py (clean_qrels, hits, f1, bpref, rank_biased_precision), "
    "meta/evaluate.py (metric_switch, -lN, rbp.p, check_keys); differential tests against ranx.evaluate on "
    "tie-free random queries and DL19 BM25 (tests/presets/test_presets_ir.py, tests/presets/test_dialect_ranx_sklearn.py); "
    "ranx's batch bpref zeroes the queries after one without a relevant judgment (a swallowed "
    "ZeroDivisionError): rankflavor gives each query its value alone",
    dialect=parse_ranx,
    default_metrics=("ndcg@10", "map@100", "mrr@10", "recall@100", "precision@10"),
    canonical={
        "ndcg": ("ndcg@{k}", "ndcg"), "dcg": ("dcg@{k}", "dcg"), "RR": ("mrr@{k}", "mrr"), "AP": ("map@{k}", "map"),
        "recall": ("recall@{k}", "recall"), "P": ("precision@{k}", "precision"), "success": ("hit_rate@{k}", "hit_rate"),
        "hits": ("hits@{k}", "hits"), "F1": ("f1@{k}", "f1"), "Rprec": (None, "r-precision"),
        "bpref_ranx": (None, "bpref"),
    },
    refusals={
        "bpref": "ranx's bpref is NaN for a query with no judged non-relevant document (trec_eval's is 1): write "
        "ranx:bpref (bpref_ranx)",
        "RBP": "ranx's rbp.p weighs ranks by the raw grade and needs p: write ranx:rbp.95 (RBP_gain)",
        "RBP_gain": "ranx's rbp needs its persistence: write ranx:rbp.95",
    },
)

# ---------------------------------------------------------------------------------------------
# trectools

_TT_LABEL = re.compile(r"^(?P<name>NDCG|P|R|MAP|recip_rank)@(?P<depth>\d+)$")
_TT_CALL = re.compile(
    r"^(?P<fn>get_ndcg|get_precision|get_recall|get_map|get_reciprocal_rank)\((?P<args>.*)\)$", re.DOTALL
)
_TT_FUNCTIONS = {
    "NDCG": "get_ndcg",
    "P": "get_precision",
    "R": "get_recall",
    "MAP": "get_map",
    "recip_rank": "get_reciprocal_rank",
}
_TT_METRIC = {
    "get_ndcg": "ndcg",
    "get_precision": "P",
    "get_recall": "recall",
    "get_map": "AP",
    "get_reciprocal_rank": "RR",
}


def _trectools_template(fn: str, depth: int, trec_eval: bool, remove_unjudged: bool, label: str) -> Template:
    knobs: dict[str, str] = {}
    if fn == "get_ndcg":
        # trec_eval=True only picks linear gain; get_ndcg never re-sorts the run (docid ascending).
        knobs["gain"] = "linear" if trec_eval else "exp2"
    else:
        # the other functions re-sort by score, then docid *descending*, when trec_eval=True.
        knobs["ties"] = "docno_desc" if trec_eval else "docno_asc"
    # get_map has no removeUnjudged; get_reciprocal_rank accepts it but reads the unfiltered run.
    if remove_unjudged and fn in ("get_ndcg", "get_precision", "get_recall"):
        knobs["unjudged"] = "condensed"
    return Template(_TT_METRIC[fn], depth, knobs, label)


def parse_trectools(text: str) -> list[Template | str] | None:
    """trectools result labels (``NDCG@10``, ``P@10``) or calls (``get_ndcg(depth=10, trec_eval=False)``)."""
    t = text.strip()
    m = _TT_LABEL.match(t)
    if m:
        return [_trectools_template(_TT_FUNCTIONS[m.group("name")], int(m.group("depth")), True, False, t)]
    c = _TT_CALL.match(t)
    if not c:
        return None
    args = keyword_params(t, c.group("args"), "trectools call")
    unknown = set(args) - {"depth", "trec_eval", "removeUnjudged", "per_query"}
    if unknown:
        raise FlavorError(f"trectools call {t!r}: unsupported argument(s) {', '.join(sorted(unknown))}")
    depth = args.get("depth", 1000)
    if not isinstance(depth, int) or depth < 1:
        raise FlavorError(f"trectools call {t!r}: depth must be a whole number >= 1, received {depth!r}")
    return [
        _trectools_template(
            c.group("fn"), depth, bool(args.get("trec_eval", True)), bool(args.get("removeUnjudged", False)), t
        )
    ]


TRECTOOLS = Preset(
    name="trectools",
    flavor=Flavor(
        gain="linear",
        discount="log2",
        ideal="global",
        ideal_cut="k",
        unjudged="zero",
        negatives="unjudged",
        ties="docno_asc",
        precision="float64",
        empty="zero",
        missing="skip",
        run_only="include",
        duplicates="error",
    ),
    summary="trectools 0.0.50: means divide by the run's topics (run-only topics count 0, qrels-only topics "
    "are left out); get_ndcg keeps read_run's docid-ascending ties, the other functions re-sort docid descending",
    evidence="trectools 0.0.50 trectools/trec_eval.py (get_ndcg, get_precision, get_recall, get_map, "
    "get_reciprocal_rank), trec_run.py (read_run sort); differential tests against TrecEval on random "
    "queries and DL19 BM25 (tests/presets/test_presets_ir.py)",
    dialect=parse_trectools,
    default_metrics=("NDCG@10", "P@10", "R@100", "MAP@1000", "recip_rank@1000"),
    canonical={"ndcg": ("NDCG@{k}", None), "P": ("P@{k}", None), "recall": ("R@{k}", None), "AP": ("MAP@{k}", None),
               "RR": ("recip_rank@{k}", None)},
    refusals={name: "trectools' functions always take a depth (default 1000): write trectools:" + tool
              for name, tool in (("ndcg", "NDCG@1000"), ("P", "P@1000"), ("recall", "R@1000"), ("AP", "MAP@1000"),
                                 ("RR", "recip_rank@1000"))},
)

# ---------------------------------------------------------------------------------------------
# Leaderboards: MS MARCO, TREC Deep Learning, BEIR


def parse_msmarco(text: str) -> list[Template | str] | None:
    """``MRR@10`` (the official metric) or ``MRR@k``."""
    m = re.match(r"^MRR\s*@\s*(\d+)$", text.strip(), re.IGNORECASE)
    if not m:
        return None
    return [Template("RR", int(m.group(1)), {}, f"MRR@{m.group(1)}")]


MSMARCO = Preset(
    name="msmarco",
    flavor=Flavor(
        gain="linear",
        discount="log2",
        ideal="global",
        ideal_cut="k",
        unjudged="zero",
        negatives="unjudged",
        ties="input_order",
        precision="float64",
        empty="zero",
        missing="zero",
        duplicates="error",
    ),
    summary="MS MARCO passage/document leaderboards: MRR@10 from ms_marco_eval.py, averaged over every "
    "reference query (missing = 0); the ranking is the file's order",
    evidence="microsoft MS MARCO ms_marco_eval.py (as bundled in ir_measures 0.4.3 bin/msmarco_eval.py: "
    "compute_metrics, MaxMRRRank = 10; the original divides by len(qids_to_relevant_passageids)); "
    "it orders by the rank column, rankflavor by score then file order (equal when ranks follow scores); "
    "checked against ir_measures RR@10 on DL19 (tests/presets/test_presets_ir.py)",
    dialect=parse_msmarco,
    default_metrics=("MRR@10",),
    canonical={"RR": ("MRR@{k}", None)},
    refusals={"RR": "ms_marco_eval.py computes MRR at a cutoff only: write msmarco:MRR@10"},
)

TREC_DL = Preset(
    name="trec_dl",
    flavor=TREC_EVAL_FLAVOR.with_knobs(rel="2", missing="zero"),  # trec_eval -c -l 2
    summary="TREC Deep Learning passage (NIST, Anserini): trec_eval -c; graded NDCG on 0-3, binary "
    "measures with -l 2 (grade 1 = related, not relevant); RR@10 is -M 10 recip_rank; document task: add -l 1",
    evidence="trec.nist.gov deep2019/2020 overview conventions; Anserini DL19/DL20 passage regressions "
    "(-c -m ndcg_cut.10; -c -l 2 -m map / recall.1000; -c -l 2 -M 10 -m recip_rank); checked against "
    "trec_eval 9.0.8 outputs in shared/data/expected (tests/presets/test_presets_ir.py)",
    dialect=parse_trec_eval,  # trec_eval -c -l 2, with trec_eval's names
    finalize=trec_eval_finalize,
    combine=trec_eval_combine,
    default_metrics=("ndcg@10", "AP", "RR@10", "recall@100", "recall@1000"),
    # RR@10 is NIST's and Anserini's trec_eval -c -l 2 -M 10 -m recip_rank: rankflavor's RR@10.
    canonical={**TREC_EVAL_CANONICAL, "RR": (SELF, "recip_rank")},
    refusals={k: v for k, v in TREC_EVAL_REFUSALS.items() if k != "RR"},
)

_BEIR = re.compile(r"^(?P<name>NDCG|MAP|Recall|P|MRR)@(?P<k>\d+)$")
_BEIR_METRIC = {"NDCG": "ndcg", "MAP": "AP", "Recall": "recall", "P": "P", "MRR": "RR"}


def parse_beir(text: str) -> list[Template | str] | None:
    """BEIR's result keys: ``NDCG@10``, ``MAP@10``, ``Recall@100``, ``P@10`` and ``MRR@10`` (evaluate_custom)."""
    m = _BEIR.match(text.strip())
    if not m:
        return None
    name = m.group("name")
    knobs: dict[str, str] = {}
    if name == "MRR":
        # custom_metrics.mrr: Python's stable sort on scores (dict order on ties), divided by every
        # qrels query rather than by the queries pytrec_eval returns.
        knobs = {"ties": "input_order", "precision": "float64", "missing": "zero"}
    return [Template(_BEIR_METRIC[name], int(m.group("k")), knobs, text.strip())]


BEIR = Preset(
    name="beir",
    # pytrec_eval (which refuses a fractional grade), less identical-id hits
    flavor=TREC_EVAL_FLAVOR.with_knobs(self_hits="drop", fractional="error"),
    summary="BEIR leaderboard (EvaluateRetrieval.evaluate): pytrec_eval ndcg_cut = LINEAR gain, mean over the "
    "queries the run answers, documents named like the query dropped; BEIR rounds to 5 decimals",
    evidence="beir-cellar/beir beir/retrieval/evaluation.py (pytrec_eval map_cut/ndcg_cut/recall/P, "
    "ignore_identical_ids=True, sum / len(scores)), custom_metrics.py (mrr); pytrec_eval parity via "
    "tests/presets/test_presets_ir.py on random queries and DL19",
    dialect=parse_beir,
    default_metrics=("NDCG@10", "Recall@100", "MAP@10", "P@10"),
    canonical={"ndcg": ("NDCG@{k}", None), "AP": ("MAP@{k}", None), "recall": ("Recall@{k}", None),
               "P": ("P@{k}", None), "RR": ("MRR@{k}", None)},
)

PRESETS = [IR_MEASURES, GDEVAL, RANX, TRECTOOLS, MSMARCO, TREC_DL, BEIR]
