"""The knob table: every axis of a flavor, its values, default, meaning and sources.

:data:`KNOBS` is the single source for validation, defaults, ``rankflavor flavors``, the docs and
error messages. Each knob's reader turns user text into its canonical value, once: a member of
the knob's :class:`~enum.StrEnum` for a choice knob (equal to its canonical text,
``Ties.AVERAGED == "averaged"``), else the canonical text together with the parsed values that
:class:`rankflavor.flavor.Flavor` stores beside it (numbers, the gain table, the jk base, the
recall depth, the kind of gain, discount and ideal).

References
----------
.. [JK02] K. Järvelin, J. Kekäläinen. "Cumulated gain-based evaluation of IR techniques".
   ACM TOIS 20(4):422-446, 2002.
.. [Bur05] C. Burges et al. "Learning to Rank using Gradient Descent". ICML 2005 (2^g - 1 gain).
.. [MN08] F. McSherry, M. Najork. "Computing Information Retrieval Performance Measures
   Efficiently in the Presence of Tied Scores". ECIR 2008.
.. [Sak07] T. Sakai. "Alternatives to Bpref". SIGIR 2007 (condensed lists).
.. [TE] usnistgov/trec_eval 9.0.8: ``form_res_rels.c`` (ties, negative grades, float scores),
   ``m_ndcg.c``, ``m_ndcg_cut.c``, ``trec_eval.c`` (-c, -l, -M, -J).
.. [RX] AmenRa/ranx 0.3.21: ``ranx/metrics/ndcg.py`` and ``common.py`` (``clean_qrels`` drops grades
   below the level before DCG and IDCG), ``ranx/meta/evaluate.py`` (``check_keys``, ``-lN``).
.. [TT] joaopalotti/trectools 0.0.50: ``trectools/trec_eval.py`` (``get_ndcg``: mean = sum over
   topics / number of run topics).
.. [ES] elastic/elasticsearch ``modules/rank-eval/.../DiscountedCumulativeGain.java``
   (``unknown_doc_rating``, ideal cut at the number of hits); OpenSearch shares the code.
.. [SPK] apache/spark ``mllib/.../evaluation/RankingMetrics.scala`` (``ndcgAt``, 3.4+ triples).
.. [GD] TREC Web track ``gdeval.pl`` 1.2a (bundled with ir_measures 0.4.3): ``$MAX_JUDGMENT = 4``.
.. [QP] o19s/quepid ``db/scorers/p@10.js`` (divides by the documents processed, at most k).
.. [BEIR] beir-cellar/beir ``beir/retrieval/evaluation.py`` (``ignore_identical_ids``).
.. [SK] scikit-learn 1.9.1 ``sklearn/metrics/_ranking.py`` (``ndcg_score``; ``dcg_score`` rejects a
   one-column ``y_true`` as a 'binary' target).
.. [NTC] mpkato/pyNTCIREVAL 0.0.3 ``metrics/ncu.py`` (``p_u``: AP@l divides by min(l, R)),
   ``metrics/grade_metric.py`` (ERR's gain / (max gain + 1), RBP's gain / max gain).
.. [TM] Lightning-AI/torchmetrics 1.9 ``functional/retrieval/*.py`` (``preds > 0`` filter, average
   precision over the relevant documents found), ``retrieval/base.py`` (``empty_target_action``).
.. [UDCG] G. Trappolini et al. "Redefining Retrieval Evaluation in the Era of LLMs". arXiv 2510.21440
   (2025); GiovanniTRA/UDCG ``src/compute_udcg_scores.py`` (see :mod:`rankflavor.metrics.udcg`).
"""


from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .choices import (
    APDivisor,
    Discount,
    Duplicates,
    Empty,
    Fractional,
    Gain,
    Ideal,
    IdealCut,
    Missing,
    Negatives,
    Nonpositive,
    Order,
    PDivisor,
    Precision,
    Raters,
    RelevantSet,
    RunOnly,
    SelfHits,
    Singletons,
    Ties,
    Total,
    Unjudged,
    Utility,
)
from .errors import FlavorError, did_you_mean

# ---------------------------------------------------------------------------------------------
# Value readers: each takes user text and returns the knob's canonical value (a choice knob's
# member, else its canonical text) with the parsed values it stores on the flavor, or raises
# FlavorError.

#: What a reader returns: the knob's value, and ``{TypedKnobs attribute: parsed value}``.
Read = tuple[str, Mapping[str, Any]]
_NOTHING: Mapping[str, Any] = {}


#: The largest whole number a knob, a cutoff or a config key takes (2**53): knob text is read
#: as a float, which holds every whole number up to it exactly. A larger depth or K overflowed
#: the engine's int64 arithmetic (issue #32: ``depth = 99999999999999999999``).
LARGEST_WHOLE = 2**53


def format_number(x: float) -> str:
    """Shortest text that parses back to ``x`` (``3`` for 3.0, ``0.5`` for 0.5)."""
    if math.isfinite(x) and float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def _number(text: str, knob: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise FlavorError(f"knob '{knob}' expects a number, received {text!r}") from None
    if not math.isfinite(value):
        raise FlavorError(f"knob '{knob}' expects a finite number, received {text!r}")
    return value + 0.0  # -0.0 reads as 0, as its canonical text does


def _pick(name: str, choices: tuple[str, ...], text: str) -> str:
    """The choice ``text`` names (exactly, else ignoring case), or FlavorError listing them all."""
    t = text.strip()
    if t in choices:
        return t
    for c in choices:
        if c.lower() == t.lower():
            return c
    raise FlavorError(
        f"knob '{name}' has no value {t!r}; valid values: {', '.join(choices)}." + did_you_mean(t, choices)
    )


def _choice(name: str, kind: type[StrEnum]) -> Callable[[str], Read]:
    texts = tuple(member.value for member in kind)

    def read(text: str) -> Read:
        return kind(_pick(name, texts, text)), _NOTHING

    return read


def parse_gain_table(text: str) -> tuple[tuple[float, float], ...]:
    """Parse ``{0:0,1:1,2:3}`` into sorted ``((grade, gain), ...)``."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise FlavorError(f"a gain table looks like {{0:0,1:1,2:3}}, received {text!r}")
    pairs: dict[float, float] = {}
    inner = body[1:-1].strip()
    if not inner:
        raise FlavorError("a gain table needs at least one grade:gain pair, received {}")
    for item in inner.split(","):
        if ":" not in item and "=" not in item:
            raise FlavorError(f"gain table entry {item.strip()!r} is not grade:gain")
        grade_text, gain_text = re.split(r"[:=]", item, maxsplit=1)
        grade = _number(grade_text, "gain")
        if grade in pairs:
            raise FlavorError(f"gain table lists grade {format_number(grade)} twice")
        pairs[grade] = _number(gain_text, "gain")
    return tuple(sorted(pairs.items()))


def table_text(pairs: Iterable[tuple[float, float]]) -> str:
    """``{grade:gain,...}`` in canonical form, from ``(grade, gain)`` pairs in order."""
    return "{" + ",".join(f"{format_number(g)}:{format_number(v)}" for g, v in pairs) + "}"


_GAIN_ALIASES = {"exp2m1": "exp2", "exp": "exp2", "burges": "exp2", "lin": "linear", "identity": "linear"}


def _read_gain(text: str) -> Read:
    t = text.strip()
    if t.startswith("{"):
        table = parse_gain_table(t)
        return table_text(table), {"gain_kind": Gain.TABLE, "gain_table": table}
    kind = Gain(_pick("gain", ("linear", "exp2", "binary"), _GAIN_ALIASES.get(t.lower(), t)))
    return kind.value, {"gain_kind": kind, "gain_table": None}


_JK = re.compile(r"^jk\(\s*([^)]+)\)$", re.IGNORECASE)
_LOG = re.compile(r"^log\(\s*([^)]+)\)$", re.IGNORECASE)
_DISCOUNT_ALIASES = {"log2p1": "log2", "log": "log2", "inv_rank": "reciprocal", "1/i": "reciprocal", "jk": "jk(2)"}


def _read_discount(text: str) -> Read:
    t = text.strip()
    t = _DISCOUNT_ALIASES.get(t.lower(), t)
    m = _JK.match(t)
    if m:
        base = _number(m.group(1), "discount")
        if base <= 1:
            raise FlavorError(f"discount jk(b) needs a base b > 1, received {format_number(base)}")
        return f"jk({format_number(base)})", {"discount_kind": Discount.JK, "jk_base": base, "log_base": None}
    m = _LOG.match(t)
    if m:
        base = _number(m.group(1), "discount")
        if base <= 1:  # b = 1: every discount infinite; b < 1: negative discounts
            raise FlavorError(f"discount log(b) needs a base b > 1, received {format_number(base)}")
        if base != 2:
            return f"log({format_number(base)})", {"discount_kind": Discount.LOG, "jk_base": None, "log_base": base}
        t = "log2"  # one flavor, one string
    # jk(2), log(b) are listed for the error message; their texts never get here.
    kind = Discount(_pick("discount", ("log2", "jk(2)", "reciprocal", "log(b)"), t))
    return kind.value, {"discount_kind": kind, "jk_base": None, "log_base": None}


_RECALL = re.compile(r"^recall@(\d+)$", re.IGNORECASE)


def _read_ideal(text: str) -> Read:
    t = text.strip()
    m = _RECALL.match(t)
    if m:
        depth = int(m.group(1))
        if not 1 <= depth <= LARGEST_WHOLE:
            raise FlavorError(f"ideal recall@K needs 1 <= K <= 2**53 = {LARGEST_WHOLE}, received {depth}")
        return f"recall@{depth}", {"ideal_kind": Ideal.RECALL, "recall_depth": depth}
    if t.lower() in ("recall", "recall@k"):
        raise FlavorError("ideal 'recall' needs its candidate depth K, e.g. ideal=recall@100")
    kind = Ideal(_pick("ideal", ("global", "local", "recall@K", "max", "as_supplied"), t))
    return kind.value, {"ideal_kind": kind, "recall_depth": None}


def _optional_number(name: str, typed: str, *, integer: bool, minimum: float) -> Callable[[str], Read]:
    def read(text: str) -> Read:
        t = text.strip()
        if t.lower() in ("none", "inf", ""):
            return "none", {typed: None}
        value = _number(t, name)
        if integer and not value.is_integer():
            raise FlavorError(f"knob '{name}' expects a whole number or none, received {t!r}")
        if value < minimum:
            raise FlavorError(f"knob '{name}' must be >= {format_number(minimum)}, received {t!r}")
        if integer and value > LARGEST_WHOLE:
            raise FlavorError(f"knob '{name}' must be at most 2**53 = {LARGEST_WHOLE} (or none), received {t!r}")
        if integer:  # its digits, however large (format_number writes 1e15 and up as floats)
            return str(int(value)), {typed: int(value)}
        return format_number(value), {typed: value}

    return read


def _read_rel(text: str) -> Read:
    value = _number(text, "rel")
    return format_number(value), {"rel_threshold": value}


def _read_param(text: str) -> Read:
    """``none``, one number (``0.1``) or a list (``(1,-1,0,0)``); order kept, it can matter."""
    t = text.strip()
    if t.lower() in ("", "none"):
        return "none", {"param_values": None}
    body = t[1:-1] if t.startswith("(") and t.endswith(")") else t
    values = tuple(_number(part, "param") for part in body.split(","))
    texts = [format_number(v) for v in values]
    return texts[0] if len(texts) == 1 else "(" + ",".join(texts) + ")", {"param_values": values}


#: What a label source's kind may be (it is printed in flavor strings); the readers check sources
#: against it too (rankflavor.labels.sources).
LABEL_KIND = re.compile(r"[a-z][a-z0-9_-]*")


def _read_labels(text: str) -> Read:
    """``one``, or the kinds of the label sources evaluated joined by ``+`` (sorted; at least two)."""
    t = text.strip().lower()
    if t in ("one", ""):
        return "one", _NOTHING
    kinds = [k.strip() for k in t.split("+")]
    if len(kinds) < 2 or not all(LABEL_KIND.fullmatch(k) for k in kinds) or len(set(kinds)) != len(kinds):
        raise FlavorError(f"knob 'sources' expects one, or two or more label kinds joined by + (human+llm), "
                          f"received {text!r}")
    return "+".join(sorted(kinds)), _NOTHING


@dataclass(frozen=True)
class Knob:
    """One axis of the flavor: name, default, valid values, meaning and where it comes from."""

    name: str
    default: str
    values: str
    doc: str
    #: User text -> the knob's canonical value and the parsed values it stores (:data:`Read`).
    read: Callable[[str], Read]
    #: Printed in a canonical string only when set away from its default. Knobs added after the
    #: first release are quiet, so canonical strings written before them stay valid and unchanged.
    quiet: bool = False

    def parse(self, text: str) -> str:
        """The canonical value of ``text`` (a choice knob's enum member), or FlavorError."""
        return self.read(text)[0]


KNOBS: dict[str, Knob] = {
    k.name: k
    for k in (
        Knob(
            "param", "none", "none | number | (number,...)",
            "The metric's own numeric parameter(s), as trec_eval's measure parameters: the recall "
            "level of IPrec (iprec_at_recall), the multiple of R of Rprec_mult, the recall levels of "
            "IPrec_avg (11pt_avg), the coefficients (a,b,c,d) of utility, x = beta^2 of F (set_F). "
            "none = the metric's default.",
            _read_param,
        ),
        Knob(
            "gain", "linear", "linear | exp2 | binary | {grade:gain,...}",
            "How a grade becomes gain: linear g (trec_eval, sklearn), exp2 2^g-1 [Bur05] "
            "(LightGBM, gdeval), binary 1 if g >= rel, or a table; grades missing from a table "
            "keep gain g (trec_eval ndcg.L=g, ir_measures gains=). Read by NDCG/DCG, RBP "
            "(gain(g)/gain(G)) and ERR_gain/nERR_gain (stopping probability gain(g)/(gain(G)+1), "
            "NTCIREVAL's ERR with -g gains); ERR and nERR are Chapelle's (2^g-1)/2^G and refuse it.",
            _read_gain,
        ),
        Knob(
            "discount", "log2", "log2 | jk(b) | reciprocal | log(b)",
            "Rank discount: log2 divides rank i by log2(i+1); jk(b) is Järvelin-Kekäläinen "
            "[JK02]: ranks i < b undiscounted, i >= b divided by log_b(i); reciprocal divides by i "
            "(CatBoost denominator=Position); log(b) divides by log_b(i+1), b > 1 (scikit-learn "
            "dcg_score log_base=b: DCG times ln 2 / ln b, NDCG unchanged; log(2) is log2).",
            _read_discount,
        ),
        Knob(
            "ideal", "global", "global | local | recall@K | max | as_supplied",
            "What IDCG is computed from: global = every judgment of the query (trec_eval); local = "
            "the retrieved list re-sorted (sklearn, LightGBM); recall@K = the top K retrieved "
            "re-sorted; max = max_grade in every slot; as_supplied = the query's judgments in docno "
            "order (code-point order of the ids: a TREC qrels file as NIST distributes it, whatever "
            "order its lines are read in), NOT sorted by grade, zero grades keeping their slot, so "
            "NDCG can exceed 1 (Spark RankingMetrics.ndcgAt with relevance triples [SPK]: the label "
            "array as the caller built it).",
            _read_ideal,
        ),
        Knob(
            "ideal_cut", "k", "k | hits | none",
            "Where the ideal list is cut: at the cutoff k (ndcg_cut), at min(k, hits returned) "
            "(Elasticsearch rank_eval), or not at all (trec_eval ndcg).",
            _choice("ideal_cut", IdealCut),
        ),
        Knob(
            "max_grade", "none", "none | number",
            "Top grade G of the label scale, used by ideal=max. Taken from configuration, never "
            "from the observed data. When set, NDCG/DCG reject a judgment above G as bad input "
            "(gdeval fixes G = 4 and dies on larger grades [GD]).",
            _optional_number("max_grade", "top_grade", integer=False, minimum=0),
        ),
        Knob(
            "min_grade", "none", "none | number",
            "Grade floor of NDCG/DCG: grades below it gain 0 in the DCG and leave the ideal. ranx "
            "applies its relevance level (default 1, metric suffix -lN) this way to NDCG too [RX]; "
            "trec_eval never does (-l only changes binary metrics).",
            _optional_number("min_grade", "grade_floor", integer=False, minimum=-math.inf),
            quiet=True,
        ),
        Knob(
            "rel", "1", "number",
            "Relevance threshold: a judged document is relevant when grade >= rel (trec_eval -l). "
            "Used by binary metrics and gain=binary; never by graded NDCG.",
            _read_rel,
        ),
        Knob(
            "unjudged", "zero", "zero | condensed",
            "Retrieved documents without a judgment: zero = grade 0, rank kept; condensed = "
            "removed before ranking [Sak07] (trec_eval -J).",
            _choice("unjudged", Unjudged),
        ),
        Knob(
            "unjudged_grade", "none", "none | number",
            "Grade assumed in the DCG for retrieved documents absent from the qrels; never added to "
            "the ideal, so NDCG can exceed 1 (Elasticsearch/OpenSearch rank_eval dcg "
            "unknown_doc_rating [ES]). none = they gain 0.",
            _optional_number("unjudged_grade", "assumed_grade", integer=False, minimum=-math.inf),
            quiet=True,
        ),
        Knob(
            "negatives", "unjudged", "unjudged | zero | error",
            "Negative grades in the qrels: unjudged = pooled but unjudged, gain 0, never in the "
            "ideal (trec_eval [TE]); zero = judged non-relevant; error = reject the input.",
            _choice("negatives", Negatives),
        ),
        Knob(
            "ties", "docno_desc", "docno_desc | docno_asc | input_order | averaged | pessimistic | optimistic",
            "Order of equal scores: docno_desc = docno descending by bytes (trec_eval); docno_asc; "
            "input_order = file order (LightGBM, XGBoost); averaged = tie-averaged gain [MN08] "
            "(sklearn; metrics that do not average gains order ties docno_desc); pessimistic = "
            "lowest grade first (CatBoost); optimistic = highest first; equal grades docno_desc.",
            _choice("ties", Ties),
        ),
        Knob(
            "precision", "float64", "float64 | float32",
            "Precision scores are compared at: trec_eval <= 9.0.8 and pytrec_eval store scores as "
            "32-bit floats, so scores equal in float32 tie.",
            _choice("precision", Precision),
        ),
        Knob(
            "depth", "none", "none | N",
            "Only the top N retrieved documents per query are evaluated (trec_eval -M).",
            _optional_number("depth", "depth_limit", integer=True, minimum=1),
        ),
        Knob(
            "empty", "zero", "zero | one | nan | skip | error",
            "Value of a query with nothing relevant (IDCG = 0 for NDCG, R = 0 otherwise): zero "
            "(trec_eval, sklearn), one (LightGBM, XGBoost, CatBoost), nan (printed, left out of "
            "the mean), skip (left out), error.",
            _choice("empty", Empty),
        ),
        Knob(
            "missing", "zero", "zero | skip | error",
            "A query in the qrels that the run does not answer: zero (trec_eval -c, ir_measures), "
            "skip (trec_eval 9.0.x default, pytrec_eval), error (trec_eval 10.0 without -c).",
            _choice("missing", Missing),
        ),
        Knob(
            "run_only", "skip", "skip | include | error",
            "A query in the run that has no judgments at all: skip (trec_eval, ir_measures, ranx "
            "make_comparable=True); include = evaluated as a query with nothing relevant, so empty "
            "sets its value and it counts in the mean (trectools divides by the run's topics [TT]); "
            "error (ranx without make_comparable [RX]).",
            _choice("run_only", RunOnly),
            quiet=True,
        ),
        Knob(
            "fractional", "keep", "keep | truncate | error",
            "Grades with a fractional part: keep (1.5 gains 1.5), truncate toward zero as "
            "trec_eval reads a grade (atol) and RankLib a label ((int) cast), or error, as "
            "pytrec_eval and ir_measures reject a relevance that is not an integer.",
            _choice("fractional", Fractional),
            quiet=True,
        ),
        Knob(
            "self_hits", "keep", "keep | drop",
            "Retrieved documents whose id equals the query id: keep, or drop before ranking (BEIR "
            "EvaluateRetrieval.evaluate ignore_identical_ids=True, its default [BEIR]).",
            _choice("self_hits", SelfHits),
            quiet=True,
        ),
        Knob(
            "p_divisor", "k", "k | hits | judged",
            "What P@k divides by: k (trec_eval: a short list counts as padded with non-relevant "
            "documents), hits = min(k, documents returned) (Quepid P@k [QP], Elasticsearch "
            "precision, torchmetrics adaptive_k=True), or judged = the judged documents among the top "
            "k (Elasticsearch precision with ignore_unlabeled=true [ES]; 0 when there are none).",
            _choice("p_divisor", PDivisor),
            quiet=True,
        ),
        Knob(
            "ap_divisor", "relevant", "relevant | min_k_relevant | found",
            "What average precision divides its sum of precisions at the relevant ranks by: relevant "
            "= R, every relevant judgment (trec_eval map and map_cut); min_k_relevant = min(k, R) "
            "(NTCIREVAL AP@l [NTC], Spark meanAveragePrecisionAt(k) [SPK]; R without a cutoff); found "
            "= the relevant documents in the top k (torchmetrics retrieval_average_precision [TM]).",
            _choice("ap_divisor", APDivisor),
            quiet=True,
        ),
        Knob(
            "relevant_set", "qrels", "qrels | retrieved",
            "Which documents make a query's relevant set: qrels = every relevant judgment (R of "
            "recall, R-precision and AP, and the test for a query with nothing relevant, as "
            "trec_eval); retrieved = only the relevant documents the run retrieved, as a library "
            "that sees only the scored candidates counts them (torchmetrics retrieval metrics [TM]).",
            _choice("relevant_set", RelevantSet),
            quiet=True,
        ),
        Knob(
            "nonpositive", "keep", "keep | nonrelevant",
            "A retrieved document whose score is not positive (<= 0, at the flavor's precision): keep "
            "its judged relevance, or count it as nonrelevant, as torchmetrics' retrieval_precision, "
            "retrieval_recall, retrieval_average_precision and retrieval_reciprocal_rank do "
            "(torch.where(preds > 0, target, 0) [TM]); it keeps its rank either way.",
            _choice("nonpositive", Nonpositive),
            quiet=True,
        ),
        Knob(
            "duplicates", "error", "error | first | best",
            "A document listed twice for one query (run or qrels): error (trec_eval: refused where "
            "a scored query holds both lines within the depth cut), keep the first line, or keep "
            "the best (highest score / highest grade). Always counted.",
            _choice("duplicates", Duplicates),
        ),
        Knob(
            "total", "sum", "sum | qrels_positive",
            "Summary of num_rel: sum of the per-query counts, or (trec_eval -c) the number of "
            "qrels lines with grade > 0 over every qrels query, whatever rel is.",
            _choice("total", Total),
        ),
        Knob(
            "raters", "none", "none | mean | rounded_mean | quepid | median | majority | max | min",
            "The judgments are several raters' grades aggregated per (query, doc) by this rule "
            "(rankflavor aggregate --rule, eval --raters); none = one grade per pair as read. A "
            "measure naming a rule refuses judgments that are not ratings aggregated by it.",
            _choice("raters", Raters),
            quiet=True,
        ),
        Knob(
            "distractor_grade", "none", "none | number",
            "Judgments with exactly this grade mark distractors: passages that mislead an LLM reader "
            "(UDCG [UDCG]). Explicit, never guessed: a negative grade means unjudged (trec_eval) "
            "unless named here. none = no judgment marks a distractor.",
            _optional_number("distractor_grade", "distractor_value", integer=False, minimum=-math.inf),
            quiet=True,
        ),
        Knob(
            "penalty", "none", "none | number",
            "Weight of a distractor's utility in UDCG; none = -1/3, the authors' code's default "
            "irrelevant_weight [UDCG].",
            _optional_number("penalty", "penalty_value", integer=False, minimum=-math.inf),
            quiet=True,
        ),
        Knob(
            "utility", "label", "label | grade",
            "Where UDCG takes each passage's utility from: label = 1 for a relevant passage (grade >= "
            "rel), penalty for a distractor, 0 otherwise; grade = the judgment's value is the "
            "passage's utility (an LLM judge's, read as the grade column): positive as it is, "
            "negative times -penalty [UDCG].",
            _choice("utility", Utility),
            quiet=True,
        ),
        Knob(
            "order", "score", "score | rank",
            "What ranks the run: score = scores descending (every TREC-style tool); rank = the "
            "run's own ranks ascending, for a run that has no scores (MS MARCO run TSV "
            "qid<TAB>pid<TAB>rank, a Quepid snapshot, search hits without _score). Set by the "
            "reader: measures on a rank-only run carry order=rank; a measure naming it refuses a "
            "scored run. Equal ranks are ties, broken by the ties knob.",
            _choice("order", Order),
            quiet=True,
        ),
        Knob(
            "singletons", "keep", "keep | error",
            "A query whose ranking holds a single document: keep = evaluated as any other; error = "
            "refused, naming the query, as scikit-learn's ndcg_score and dcg_score refuse a list of "
            "one document (\"Computing NDCG is only meaningful when there is more than 1 document\" [SK]).",
            _choice("singletons", Singletons),
            quiet=True,
        ),
        Knob(
            "sources", "one", "one | KIND+KIND...",
            "The kinds of label source (human, llm, clicks, ...) of the judgments the measure "
            "evaluated, when there are more than one: a number resting partly on LLM or click labels "
            "says so (sources=human+llm). Set by the engine from the judgments' sources (rankflavor.labels); "
            "one = the labels are of one kind, or name no source. A measure naming kinds refuses "
            "judgments whose evaluated labels are of other kinds (eval --labels chooses them).",
            _read_labels,
            quiet=True,
        ),
    )
}
