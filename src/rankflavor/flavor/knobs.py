"""The knob table: every axis of a flavor, its values, default, meaning and sources.

:data:`KNOBS` is the single source for validation, defaults, ``rankflavor flavors``, the docs and
error messages. Each knob's reader turns user text into its canonical value, once: a member of
the knob's :class:`~enum.StrEnum` for a choice knob (equal to its canonical text,
``Ties.AVERAGED == "averaged"``), else the canonical text together with the parsed values that
:class:`rankflavor.flavor.flavor.Flavor` stores beside it (numbers, the gain table, the jk base, the
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
from collections.abc import Callable
from dataclasses import dataclass

from rankflavor.flavor.choices import (
    APDivisor,
    Duplicates,
    Empty,
    Fractional,
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
from rankflavor.flavor.readers import (
    LABEL_KIND,
    LARGEST_WHOLE,
    Read,
    choice,
    format_number,
    optional_number,
    parse_gain_table,
    read_discount,
    read_gain,
    read_ideal,
    read_labels,
    read_param,
    read_rel,
    table_text,
)


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
            read_param,
        ),
        Knob(
            "gain", "linear", "linear | exp2 | binary | {grade:gain,...}",
            "How a grade becomes gain: linear g (trec_eval, sklearn), exp2 2^g-1 [Bur05] "
            "(LightGBM, gdeval), binary 1 if g >= rel, or a table; grades missing from a table "
            "keep gain g (trec_eval ndcg.L=g, ir_measures gains=). Read by NDCG/DCG, RBP "
            "(gain(g)/gain(G)) and ERR_gain/nERR_gain (stopping probability gain(g)/(gain(G)+1), "
            "NTCIREVAL's ERR with -g gains); ERR and nERR are Chapelle's (2^g-1)/2^G and refuse it.",
            read_gain,
        ),
        Knob(
            "discount", "log2", "log2 | jk(b) | reciprocal | log(b)",
            "Rank discount: log2 divides rank i by log2(i+1); jk(b) is Järvelin-Kekäläinen "
            "[JK02]: ranks i < b undiscounted, i >= b divided by log_b(i); reciprocal divides by i "
            "(CatBoost denominator=Position); log(b) divides by log_b(i+1), b > 1 (scikit-learn "
            "dcg_score log_base=b: DCG times ln 2 / ln b, NDCG unchanged; log(2) is log2).",
            read_discount,
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
            read_ideal,
        ),
        Knob(
            "ideal_cut", "k", "k | hits | none",
            "Where the ideal list is cut: at the cutoff k (ndcg_cut), at min(k, hits returned) "
            "(Elasticsearch rank_eval), or not at all (trec_eval ndcg).",
            choice("ideal_cut", IdealCut),
        ),
        Knob(
            "max_grade", "none", "none | number",
            "Top grade G of the label scale, used by ideal=max. Taken from configuration, never "
            "from the observed data. When set, NDCG/DCG reject a judgment above G as bad input "
            "(gdeval fixes G = 4 and dies on larger grades [GD]).",
            optional_number("max_grade", "top_grade", integer=False, minimum=0),
        ),
        Knob(
            "min_grade", "none", "none | number",
            "Grade floor of NDCG/DCG: grades below it gain 0 in the DCG and leave the ideal. ranx "
            "applies its relevance level (default 1, metric suffix -lN) this way to NDCG too [RX]; "
            "trec_eval never does (-l only changes binary metrics).",
            optional_number("min_grade", "grade_floor", integer=False, minimum=-math.inf),
            quiet=True,
        ),
        Knob(
            "rel", "1", "number",
            "Relevance threshold: a judged document is relevant when grade >= rel (trec_eval -l). "
            "Used by binary metrics and gain=binary; never by graded NDCG.",
            read_rel,
        ),
        Knob(
            "unjudged", "zero", "zero | condensed",
            "Retrieved documents without a judgment: zero = grade 0, rank kept; condensed = "
            "removed before ranking [Sak07] (trec_eval -J).",
            choice("unjudged", Unjudged),
        ),
        Knob(
            "unjudged_grade", "none", "none | number",
            "Grade assumed in the DCG for retrieved documents absent from the qrels; never added to "
            "the ideal, so NDCG can exceed 1 (Elasticsearch/OpenSearch rank_eval dcg "
            "unknown_doc_rating [ES]). none = they gain 0.",
            optional_number("unjudged_grade", "assumed_grade", integer=False, minimum=-math.inf),
            quiet=True,
        ),
        Knob(
            "negatives", "unjudged", "unjudged | zero | error",
            "Negative grades in the qrels: unjudged = pooled but unjudged, gain 0, never in the "
            "ideal (trec_eval [TE]); zero = judged non-relevant; error = reject the input.",
            choice("negatives", Negatives),
        ),
        Knob(
            "ties", "docno_desc", "docno_desc | docno_asc | input_order | averaged | pessimistic | optimistic",
            "Order of equal scores: docno_desc = docno descending by bytes (trec_eval); docno_asc; "
            "input_order = file order (LightGBM, XGBoost); averaged = tie-averaged gain [MN08] "
            "(sklearn; metrics that do not average gains order ties docno_desc); pessimistic = "
            "lowest grade first (CatBoost); optimistic = highest first; equal grades docno_desc.",
            choice("ties", Ties),
        ),
        Knob(
            "precision", "float64", "float64 | float32",
            "Precision scores are compared at: trec_eval <= 9.0.8 and pytrec_eval store scores as "
            "32-bit floats, so scores equal in float32 tie.",
            choice("precision", Precision),
        ),
        Knob(
            "depth", "none", "none | N",
            "Only the top N retrieved documents per query are evaluated (trec_eval -M).",
            optional_number("depth", "depth_limit", integer=True, minimum=1),
        ),
        Knob(
            "empty", "zero", "zero | one | nan | skip | error",
            "Value of a query with nothing relevant (IDCG = 0 for NDCG, R = 0 otherwise): zero "
            "(trec_eval, sklearn), one (LightGBM, XGBoost, CatBoost), nan (printed, left out of "
            "the mean), skip (left out), error.",
            choice("empty", Empty),
        ),
        Knob(
            "missing", "zero", "zero | skip | error",
            "A query in the qrels that the run does not answer: zero (trec_eval -c, ir_measures), "
            "skip (trec_eval 9.0.x default, pytrec_eval), error (trec_eval 10.0 without -c).",
            choice("missing", Missing),
        ),
        Knob(
            "run_only", "skip", "skip | include | error",
            "A query in the run that has no judgments at all: skip (trec_eval, ir_measures, ranx "
            "make_comparable=True); include = evaluated as a query with nothing relevant, so empty "
            "sets its value and it counts in the mean (trectools divides by the run's topics [TT]); "
            "error (ranx without make_comparable [RX]).",
            choice("run_only", RunOnly),
            quiet=True,
        ),
        Knob(
            "fractional", "keep", "keep | truncate | error",
            "Grades with a fractional part: keep (1.5 gains 1.5), truncate toward zero as "
            "trec_eval reads a grade (atol) and RankLib a label ((int) cast), or error, as "
            "pytrec_eval and ir_measures reject a relevance that is not an integer.",
            choice("fractional", Fractional),
            quiet=True,
        ),
        Knob(
            "self_hits", "keep", "keep | drop",
            "Retrieved documents whose id equals the query id: keep, or drop before ranking (BEIR "
            "EvaluateRetrieval.evaluate ignore_identical_ids=True, its default [BEIR]).",
            choice("self_hits", SelfHits),
            quiet=True,
        ),
        Knob(
            "p_divisor", "k", "k | hits | judged",
            "What P@k divides by: k (trec_eval: a short list counts as padded with non-relevant "
            "documents), hits = min(k, documents returned) (Quepid P@k [QP], Elasticsearch "
            "precision, torchmetrics adaptive_k=True), or judged = the judged documents among the top "
            "k (Elasticsearch precision with ignore_unlabeled=true [ES]; 0 when there are none).",
            choice("p_divisor", PDivisor),
            quiet=True,
        ),
        Knob(
            "ap_divisor", "relevant", "relevant | min_k_relevant | found",
            "What average precision divides its sum of precisions at the relevant ranks by: relevant "
            "= R, every relevant judgment (trec_eval map and map_cut); min_k_relevant = min(k, R) "
            "(NTCIREVAL AP@l [NTC], Spark meanAveragePrecisionAt(k) [SPK]; R without a cutoff); found "
            "= the relevant documents in the top k (torchmetrics retrieval_average_precision [TM]).",
            choice("ap_divisor", APDivisor),
            quiet=True,
        ),
        Knob(
            "relevant_set", "qrels", "qrels | retrieved",
            "Which documents make a query's relevant set: qrels = every relevant judgment (R of "
            "recall, R-precision and AP, and the test for a query with nothing relevant, as "
            "trec_eval); retrieved = only the relevant documents the run retrieved, as a library "
            "that sees only the scored candidates counts them (torchmetrics retrieval metrics [TM]).",
            choice("relevant_set", RelevantSet),
            quiet=True,
        ),
        Knob(
            "nonpositive", "keep", "keep | nonrelevant",
            "A retrieved document whose score is not positive (<= 0, at the flavor's precision): keep "
            "its judged relevance, or count it as nonrelevant, as torchmetrics' retrieval_precision, "
            "retrieval_recall, retrieval_average_precision and retrieval_reciprocal_rank do "
            "(torch.where(preds > 0, target, 0) [TM]); it keeps its rank either way.",
            choice("nonpositive", Nonpositive),
            quiet=True,
        ),
        Knob(
            "duplicates", "error", "error | first | best",
            "A document listed twice for one query (run or qrels): error (trec_eval: refused where "
            "a scored query holds both lines within the depth cut), keep the first line, or keep "
            "the best (highest score / highest grade). Always counted.",
            choice("duplicates", Duplicates),
        ),
        Knob(
            "total", "sum", "sum | qrels_positive",
            "Summary of num_rel: sum of the per-query counts, or (trec_eval -c) the number of "
            "qrels lines with grade > 0 over every qrels query, whatever rel is.",
            choice("total", Total),
        ),
        Knob(
            "raters", "none", "none | mean | rounded_mean | quepid | median | majority | max | min",
            "The judgments are several raters' grades aggregated per (query, doc) by this rule "
            "(rankflavor aggregate --rule, eval --raters); none = one grade per pair as read. A "
            "measure naming a rule refuses judgments that are not ratings aggregated by it.",
            choice("raters", Raters),
            quiet=True,
        ),
        Knob(
            "distractor_grade", "none", "none | number",
            "Judgments with exactly this grade mark distractors: passages that mislead an LLM reader "
            "(UDCG [UDCG]). Explicit, never guessed: a negative grade means unjudged (trec_eval) "
            "unless named here. none = no judgment marks a distractor.",
            optional_number("distractor_grade", "distractor_value", integer=False, minimum=-math.inf),
            quiet=True,
        ),
        Knob(
            "penalty", "none", "none | number",
            "Weight of a distractor's utility in UDCG; none = -1/3, the authors' code's default "
            "irrelevant_weight [UDCG].",
            optional_number("penalty", "penalty_value", integer=False, minimum=-math.inf),
            quiet=True,
        ),
        Knob(
            "utility", "label", "label | grade",
            "Where UDCG takes each passage's utility from: label = 1 for a relevant passage (grade >= "
            "rel), penalty for a distractor, 0 otherwise; grade = the judgment's value is the "
            "passage's utility (an LLM judge's, read as the grade column): positive as it is, "
            "negative times -penalty [UDCG].",
            choice("utility", Utility),
            quiet=True,
        ),
        Knob(
            "order", "score", "score | rank",
            "What ranks the run: score = scores descending (every TREC-style tool); rank = the "
            "run's own ranks ascending, for a run that has no scores (MS MARCO run TSV "
            "qid<TAB>pid<TAB>rank, a Quepid snapshot, search hits without _score). Set by the "
            "reader: measures on a rank-only run carry order=rank; a measure naming it refuses a "
            "scored run. Equal ranks are ties, broken by the ties knob.",
            choice("order", Order),
            quiet=True,
        ),
        Knob(
            "singletons", "keep", "keep | error",
            "A query whose ranking holds a single document: keep = evaluated as any other; error = "
            "refused, naming the query, as scikit-learn's ndcg_score and dcg_score refuse a list of "
            "one document (\"Computing NDCG is only meaningful when there is more than 1 document\" [SK]).",
            choice("singletons", Singletons),
            quiet=True,
        ),
        Knob(
            "sources", "one", "one | KIND+KIND...",
            "The kinds of label source (human, llm, clicks, ...) of the judgments the measure "
            "evaluated, when there are more than one: a number resting partly on LLM or click labels "
            "says so (sources=human+llm). Set by the engine from the judgments' sources (rankflavor.io.labels); "
            "one = the labels are of one kind, or name no source. A measure naming kinds refuses "
            "judgments whose evaluated labels are of other kinds (eval --labels chooses them).",
            read_labels,
            quiet=True,
        ),
    )
}


__all__ = ["KNOBS", "LABEL_KIND", "LARGEST_WHOLE", "Knob", "Read", "format_number", "parse_gain_table", "table_text"]
