"""The flavor: every setting that changes an evaluation number, as one hashable value.

A :class:`Flavor` holds one canonical string per knob. The knob table :data:`KNOBS` is the single
source for validation, defaults, ``rankflavor flavors``, the docs and error messages. Which knobs a
metric reads, and how a measure prints, lives in :mod:`rankflavor.measure`.

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
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any

from .errors import FlavorError, did_you_mean

# ---------------------------------------------------------------------------------------------
# Value parsers: each takes user text and returns the canonical text, or raises FlavorError.


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
    return value


def _choice(name: str, choices: tuple[str, ...]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        t = text.strip()
        if t in choices:
            return t
        for c in choices:
            if c.lower() == t.lower():
                return c
        raise FlavorError(
            f"knob '{name}' has no value {t!r}; valid values: {', '.join(choices)}."
            + did_you_mean(t, choices)
        )

    return parse


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


def _parse_gain(text: str) -> str:
    t = text.strip()
    if t.startswith("{"):
        table = parse_gain_table(t)
        return "{" + ",".join(f"{format_number(g)}:{format_number(v)}" for g, v in table) + "}"
    aliases = {"exp2m1": "exp2", "exp": "exp2", "burges": "exp2", "lin": "linear", "identity": "linear"}
    t = aliases.get(t.lower(), t)
    return _choice("gain", ("linear", "exp2", "binary"))(t)


_JK = re.compile(r"^jk\(\s*([^)]+)\)$", re.IGNORECASE)


def _parse_discount(text: str) -> str:
    t = text.strip()
    m = _JK.match(t)
    if m:
        base = _number(m.group(1), "discount")
        if base <= 1:
            raise FlavorError(f"discount jk(b) needs a base b > 1, received {format_number(base)}")
        return f"jk({format_number(base)})"
    aliases = {"log2p1": "log2", "log": "log2", "inv_rank": "reciprocal", "1/i": "reciprocal", "jk": "jk(2)"}
    t = aliases.get(t.lower(), t)
    if t == "jk(2)":
        return t
    return _choice("discount", ("log2", "jk(2)", "reciprocal"))(t)


def _parse_ideal(text: str) -> str:
    t = text.strip()
    m = re.match(r"^recall@(\d+)$", t, re.IGNORECASE)
    if m:
        depth = int(m.group(1))
        if depth < 1:
            raise FlavorError(f"ideal recall@K needs K >= 1, received {depth}")
        return f"recall@{depth}"
    if t.lower() == "recall":
        raise FlavorError("ideal 'recall' needs its candidate depth K, e.g. ideal=recall@100")
    return _choice("ideal", ("global", "local", "recall@K", "max", "as_supplied"))(t)


def _parse_optional_number(name: str, *, integer: bool, minimum: float) -> Callable[[str], str]:
    def parse(text: str) -> str:
        t = text.strip()
        if t.lower() in ("none", "inf", ""):
            return "none"
        value = _number(t, name)
        if integer and not value.is_integer():
            raise FlavorError(f"knob '{name}' expects a whole number or none, received {t!r}")
        if value < minimum:
            raise FlavorError(f"knob '{name}' must be >= {format_number(minimum)}, received {t!r}")
        return format_number(value)

    return parse


def _parse_rel(text: str) -> str:
    return format_number(_number(text, "rel"))


def _parse_param(text: str) -> str:
    """``none``, one number (``0.1``) or a list (``(1,-1,0,0)``); order kept, it can matter."""
    t = text.strip()
    if t.lower() in ("", "none"):
        return "none"
    body = t[1:-1] if t.startswith("(") and t.endswith(")") else t
    values = [format_number(_number(part, "param")) for part in body.split(",")]
    return values[0] if len(values) == 1 else "(" + ",".join(values) + ")"


@dataclass(frozen=True)
class Knob:
    """One axis of the flavor: name, default, valid values, meaning and where it comes from."""

    name: str
    default: str
    values: str
    doc: str
    parse: Callable[[str], str]
    #: Printed in a canonical string only when set away from its default. Knobs added after the
    #: first release are quiet, so canonical strings written before them stay valid and unchanged.
    quiet: bool = False


KNOBS: dict[str, Knob] = {
    k.name: k
    for k in (
        Knob(
            "param", "none", "none | number | (number,...)",
            "The metric's own numeric parameter(s), as trec_eval's measure parameters: the recall "
            "level of IPrec (iprec_at_recall), the multiple of R of Rprec_mult, the recall levels of "
            "IPrec_avg (11pt_avg), the coefficients (a,b,c,d) of utility, x = beta^2 of F (set_F). "
            "none = the metric's default.",
            _parse_param,
        ),
        Knob(
            "gain", "linear", "linear | exp2 | binary | {grade:gain,...}",
            "How a grade becomes gain: linear g (trec_eval, sklearn), exp2 2^g-1 [Bur05] "
            "(LightGBM, gdeval), binary 1 if g >= rel, or a table; grades missing from a table "
            "keep gain g (trec_eval ndcg.L=g, ir_measures gains=).",
            _parse_gain,
        ),
        Knob(
            "discount", "log2", "log2 | jk(b) | reciprocal",
            "Rank discount: log2 divides rank i by log2(i+1); jk(b) is Järvelin-Kekäläinen "
            "[JK02]: ranks i < b undiscounted, i >= b divided by log_b(i); reciprocal divides by i "
            "(CatBoost denominator=Position).",
            _parse_discount,
        ),
        Knob(
            "ideal", "global", "global | local | recall@K | max | as_supplied",
            "What IDCG is computed from: global = every judgment of the query (trec_eval); local = "
            "the retrieved list re-sorted (sklearn, LightGBM); recall@K = the top K retrieved "
            "re-sorted; max = max_grade in every slot; as_supplied = the query's judgments in qrels "
            "file order, NOT sorted, zero grades keeping their slot, so NDCG can exceed 1 (Spark "
            "RankingMetrics.ndcgAt with relevance triples [SPK]).",
            _parse_ideal,
        ),
        Knob(
            "ideal_cut", "k", "k | hits | none",
            "Where the ideal list is cut: at the cutoff k (ndcg_cut), at min(k, hits returned) "
            "(Elasticsearch rank_eval), or not at all (trec_eval ndcg).",
            _choice("ideal_cut", ("k", "hits", "none")),
        ),
        Knob(
            "max_grade", "none", "none | number",
            "Top grade G of the label scale, used by ideal=max. Taken from configuration, never "
            "from the observed data. When set, NDCG/DCG reject a judgment above G as bad input "
            "(gdeval fixes G = 4 and dies on larger grades [GD]).",
            _parse_optional_number("max_grade", integer=False, minimum=0),
        ),
        Knob(
            "min_grade", "none", "none | number",
            "Grade floor of NDCG/DCG: grades below it gain 0 in the DCG and leave the ideal. ranx "
            "applies its relevance level (default 1, metric suffix -lN) this way to NDCG too [RX]; "
            "trec_eval never does (-l only changes binary metrics).",
            _parse_optional_number("min_grade", integer=False, minimum=-math.inf),
            quiet=True,
        ),
        Knob(
            "rel", "1", "number",
            "Relevance threshold: a judged document is relevant when grade >= rel (trec_eval -l). "
            "Used by binary metrics and gain=binary; never by graded NDCG.",
            _parse_rel,
        ),
        Knob(
            "unjudged", "zero", "zero | condensed",
            "Retrieved documents without a judgment: zero = grade 0, rank kept; condensed = "
            "removed before ranking [Sak07] (trec_eval -J).",
            _choice("unjudged", ("zero", "condensed")),
        ),
        Knob(
            "unjudged_grade", "none", "none | number",
            "Grade assumed in the DCG for retrieved documents absent from the qrels; never added to "
            "the ideal, so NDCG can exceed 1 (Elasticsearch/OpenSearch rank_eval dcg "
            "unknown_doc_rating [ES]). none = they gain 0.",
            _parse_optional_number("unjudged_grade", integer=False, minimum=-math.inf),
            quiet=True,
        ),
        Knob(
            "negatives", "unjudged", "unjudged | zero | error",
            "Negative grades in the qrels: unjudged = pooled but unjudged, gain 0, never in the "
            "ideal (trec_eval [TE]); zero = judged non-relevant; error = reject the input.",
            _choice("negatives", ("unjudged", "zero", "error")),
        ),
        Knob(
            "ties", "docno_desc", "docno_desc | docno_asc | input_order | averaged | pessimistic | optimistic",
            "Order of equal scores: docno_desc = docno descending by bytes (trec_eval); docno_asc; "
            "input_order = file order (LightGBM, XGBoost); averaged = tie-averaged gain [MN08] "
            "(sklearn; metrics that do not average gains order ties docno_desc); pessimistic = "
            "lowest grade first (CatBoost); optimistic = highest first; equal grades docno_desc.",
            _choice("ties", ("docno_desc", "docno_asc", "input_order", "averaged", "pessimistic", "optimistic")),
        ),
        Knob(
            "precision", "float64", "float64 | float32",
            "Precision scores are compared at: trec_eval <= 9.0.8 and pytrec_eval store scores as "
            "32-bit floats, so scores equal in float32 tie.",
            _choice("precision", ("float64", "float32")),
        ),
        Knob(
            "depth", "none", "none | N",
            "Only the top N retrieved documents per query are evaluated (trec_eval -M).",
            _parse_optional_number("depth", integer=True, minimum=1),
        ),
        Knob(
            "empty", "zero", "zero | one | nan | skip | error",
            "Value of a query with nothing relevant (IDCG = 0 for NDCG, R = 0 otherwise): zero "
            "(trec_eval, sklearn), one (LightGBM, XGBoost, CatBoost), nan (printed, left out of "
            "the mean), skip (left out), error.",
            _choice("empty", ("zero", "one", "nan", "skip", "error")),
        ),
        Knob(
            "missing", "zero", "zero | skip | error",
            "A query in the qrels that the run does not answer: zero (trec_eval -c, ir_measures), "
            "skip (trec_eval 9.0.x default, pytrec_eval), error (trec_eval 10.0 without -c).",
            _choice("missing", ("zero", "skip", "error")),
        ),
        Knob(
            "run_only", "skip", "skip | include | error",
            "A query in the run that has no judgments at all: skip (trec_eval, ir_measures, ranx "
            "make_comparable=True); include = evaluated as a query with nothing relevant, so empty "
            "sets its value and it counts in the mean (trectools divides by the run's topics [TT]); "
            "error (ranx without make_comparable [RX]).",
            _choice("run_only", ("skip", "include", "error")),
            quiet=True,
        ),
        Knob(
            "fractional", "keep", "keep | truncate | error",
            "Grades with a fractional part: keep (1.5 gains 1.5), truncate toward zero as "
            "trec_eval reads a grade (atol) and RankLib a label ((int) cast), or error, as "
            "pytrec_eval and ir_measures reject a relevance that is not an integer.",
            _choice("fractional", ("keep", "truncate", "error")),
            quiet=True,
        ),
        Knob(
            "self_hits", "keep", "keep | drop",
            "Retrieved documents whose id equals the query id: keep, or drop before ranking (BEIR "
            "EvaluateRetrieval.evaluate ignore_identical_ids=True, its default [BEIR]).",
            _choice("self_hits", ("keep", "drop")),
            quiet=True,
        ),
        Knob(
            "p_divisor", "k", "k | hits",
            "What P@k divides by: k (trec_eval: a short list counts as padded with non-relevant "
            "documents) or hits = min(k, documents returned) (Quepid P@k [QP], Elasticsearch "
            "precision).",
            _choice("p_divisor", ("k", "hits")),
            quiet=True,
        ),
        Knob(
            "duplicates", "error", "error | first | best",
            "A document listed twice for one query (run or qrels): error (trec_eval: refused where "
            "a scored query holds both lines within the depth cut), keep the first line, or keep "
            "the best (highest score / highest grade). Always counted.",
            _choice("duplicates", ("error", "first", "best")),
        ),
        Knob(
            "total", "sum", "sum | qrels_positive",
            "Summary of num_rel: sum of the per-query counts, or (trec_eval -c) the number of "
            "qrels lines with grade > 0 over every qrels query, whatever rel is.",
            _choice("total", ("sum", "qrels_positive")),
        ),
    )
}


@dataclass(frozen=True)
class Flavor:
    """Every evaluation setting, each held as its canonical text.

    Construct with keyword arguments (numbers or text); values are validated and canonicalised, so
    equal settings give equal, equally hashed flavors.

    Examples
    --------
    >>> Flavor(gain="exp2", ties="input_order").gain
    'exp2'
    >>> Flavor(rel=2).rel
    '2'
    """

    gain: str = KNOBS["gain"].default
    discount: str = KNOBS["discount"].default
    ideal: str = KNOBS["ideal"].default
    ideal_cut: str = KNOBS["ideal_cut"].default
    max_grade: str = KNOBS["max_grade"].default
    rel: str = KNOBS["rel"].default
    unjudged: str = KNOBS["unjudged"].default
    negatives: str = KNOBS["negatives"].default
    ties: str = KNOBS["ties"].default
    precision: str = KNOBS["precision"].default
    depth: str = KNOBS["depth"].default
    empty: str = KNOBS["empty"].default
    missing: str = KNOBS["missing"].default
    duplicates: str = KNOBS["duplicates"].default
    total: str = KNOBS["total"].default
    min_grade: str = KNOBS["min_grade"].default
    unjudged_grade: str = KNOBS["unjudged_grade"].default
    run_only: str = KNOBS["run_only"].default
    self_hits: str = KNOBS["self_hits"].default
    fractional: str = KNOBS["fractional"].default
    p_divisor: str = KNOBS["p_divisor"].default
    param: str = KNOBS["param"].default

    def __post_init__(self) -> None:
        for f in fields(self):
            raw = getattr(self, f.name)
            text = format_number(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) else raw
            if isinstance(raw, Mapping):
                text = "{" + ",".join(f"{format_number(g)}:{format_number(v)}" for g, v in raw.items()) + "}"
            if not isinstance(text, str):
                raise FlavorError(f"knob '{f.name}' expects text or a number, received {raw!r}")
            object.__setattr__(self, f.name, _canonical(f.name, text))

    def with_knobs(self, **knobs: Any) -> Flavor:
        """Return a copy with some knobs changed (validated)."""
        check_knob_names(knobs)
        return replace(self, **knobs)

    def knobs(self) -> dict[str, str]:
        """All knobs as ``{name: canonical text}``."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    # Typed views of the canonical text, used by the kernels.
    @property
    def rel_threshold(self) -> float:
        return float(self.rel)

    @property
    def depth_limit(self) -> int | None:
        return None if self.depth == "none" else int(self.depth)

    @property
    def top_grade(self) -> float | None:
        return None if self.max_grade == "none" else float(self.max_grade)

    @property
    def gain_table(self) -> tuple[tuple[float, float], ...] | None:
        return parse_gain_table(self.gain) if self.gain.startswith("{") else None

    @property
    def jk_base(self) -> float | None:
        m = _JK.match(self.discount)
        return float(m.group(1)) if m else None

    @property
    def recall_depth(self) -> int | None:
        return int(self.ideal.split("@")[1]) if self.ideal.startswith("recall@") else None

    @property
    def grade_floor(self) -> float | None:
        return None if self.min_grade == "none" else float(self.min_grade)

    @property
    def assumed_grade(self) -> float | None:
        return None if self.unjudged_grade == "none" else float(self.unjudged_grade)

    @property
    def param_values(self) -> tuple[float, ...] | None:
        """The ``param`` knob as numbers, or None for the metric's default."""
        if self.param == "none":
            return None
        return tuple(float(v) for v in self.param.strip("()").split(","))


@lru_cache(maxsize=4096)
def _canonical(name: str, text: str) -> str:
    return KNOBS[name].parse(text)


def check_knob_names(knobs: Mapping[str, Any]) -> None:
    """Raise :class:`FlavorError` naming any unknown knob and the closest valid one."""
    for name in knobs:
        if name not in KNOBS:
            raise FlavorError(
                f"unknown flavor knob '{name}'; valid knobs: {', '.join(KNOBS)}." + did_you_mean(name, KNOBS)
            )


def parse_knob_assignments(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Parse ``["gain=exp2", "ideal=local"]`` (CLI ``--flavor``) into validated canonical knobs."""
    out: dict[str, str] = {}
    for item in items:
        for part in split_top_level(item):
            if "=" not in part:
                raise FlavorError(f"--flavor expects knob=value, received {part!r}")
            name, value = part.split("=", 1)
            name = name.strip()
            check_knob_names({name: value})
            out[name] = _canonical(name, value.strip())
    return out


def split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside ``{}``, ``()`` or ``[]``."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]
