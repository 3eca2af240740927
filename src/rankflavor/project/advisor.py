"""The flavor advisor (``rankflavor init``): what the judgments and the question say each knob should be.

:func:`facts` inspects the judgments (grades, the named scale they fit, binary or graded, grades
per query) and each run (coverage of its top k by :func:`rankflavor.judgments`, the queries whose
NDCG@k changes with the tie rule, the queries with no positive grade in the top k, whose local
ideal is empty).
:func:`advise` applies the rules of :data:`RULES`, one per knob, and says which rule chose each
value and why, in one sentence; where the data makes a knob moot or the choice dangerous it
warns. ``match`` pins a preset's flavor instead (numbers comparable with its leaderboard) and
warns where the rules would have chosen otherwise.

The rules follow the practice of offline evaluation: choose the gain by the grade scale (binary:
moot; a five-point product scale: exponential, Burges et al. 2005), the ideal by the question
(quality of what was returned: local; overall performance including recall: global), keep the
rank discount every tool uses, average tied scores when ties change the number (McSherry &
Najork 2008), condense lists only when judgments are sparse and non-relevant documents are
judged (Sakai 2007), and score unanswered queries 0.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from rankflavor.errors import UsageError
from rankflavor.project.schema import QUESTIONS

#: Mean judged share of the top k under which a global ideal is flagged as dangerous.
LOW_COVERAGE = 0.8
#: Mean judged share of the top k under which lists are condensed (when non-relevant documents are judged).
CONDENSE_BELOW = 0.5

#: Every rule the advisor applies, by the id its reasons cite.
RULES: dict[str, str] = {
    "S1": "grades on a named scale: declare that scale (its rel, negatives and top grade G)",
    "S2": "grades on no named scale: no scale; rel stays 1",
    "G1": "binary grades: the gain axis is moot (linear = exp2); keep linear",
    "G2": "five or more grade levels (a 0-4 product scale): exponential gain 2^g-1",
    "G3": "three or four grade levels (TREC/BEIR 0-2, 0-3): linear gain, the tracks' published convention",
    "D1": "the log2(i+1) discount every current tool uses",
    "N1": "question ranking (quality of what was returned): local ideal",
    "N2": "question overall (performance including recall): global ideal",
    "N3": "question coverage (how much of the relevant set is found): global ideal, not cut at k",
    "C1": "ideal cut at k (ndcg_cut): a perfect top k scores 1",
    "U1": "unjudged documents as grade 0 (every tool's default) while most of the top k is judged",
    "U2": f"fewer than {CONDENSE_BELOW:.0%} of the top k judged, non-relevant documents judged: condensed lists",
    "U3": "only relevant documents judged: unjudged must stay zero (condensing would score every run 1)",
    "T1": "tied scores change NDCG@k: averaged ties (McSherry & Najork 2008)",
    "T2": "no tie changes NDCG@k (or no run given): trec_eval's docno_desc",
    "M1": "a query the run does not answer scores 0 (trec_eval -c)",
    "E1": "a query with nothing relevant scores 0 (trec_eval)",
    "P1": "--preset NAME: the preset's value, so the numbers compare with its tool or leaderboard",
}


@dataclass(frozen=True)
class RunFacts:
    """One run's top k under the judgments."""

    name: str
    path: str
    judged_at_k: float
    tie_queries: int
    #: Queries whose top k holds no document of a positive grade (a local ideal's IDCG is 0).
    no_gain_in_top: int
    queries: int


@dataclass(frozen=True)
class Facts:
    """What the judgments and runs show."""

    qrels: str
    k: int
    judgments: int
    queries: int
    grades: dict[str, int]
    negatives: int
    scale: str | None
    levels: int
    binary: bool
    rel: float
    judged_per_query: float
    relevant_per_query: float
    no_relevant: int
    judges_nonrelevant: bool
    runs: list[RunFacts] = field(default_factory=list)
    pool_bias: list[str] = field(default_factory=list)

    @property
    def coverage(self) -> float | None:
        """The lowest mean judged@k of the runs (None without runs)."""
        return min((r.judged_at_k for r in self.runs), default=None)

    def lines(self) -> list[str]:
        hist = ", ".join(f"{g}: {n}" for g, n in self.grades.items())
        out = [f"judgments: {self.judgments} on {self.queries} queries; grades {hist}"
               + (f"; {self.negatives} negative labels" if self.negatives else ""),
               f"  scale: {self.scale or 'none of the named ones'}; {'binary' if self.binary else 'graded'} "
               f"({self.levels} grade level{'s' if self.levels != 1 else ''}); per query {self.judged_per_query:.1f} judged, "
               f"{self.relevant_per_query:.1f} relevant (grade >= {self.rel:g}); "
               f"{self.no_relevant} queries with nothing relevant"]
        for r in self.runs:
            out.append(f"run {r.name}: judged@{self.k} {r.judged_at_k:.1%}; {r.tie_queries} queries whose "
                       f"NDCG@{self.k} changes with the tie rule; {r.no_gain_in_top} of {r.queries} queries "
                       f"with no positive grade in the top {self.k}")
        if self.pool_bias:
            out.append("pool bias: " + ", ".join(self.pool_bias) + " retrieve(s) documents the pool never saw")
        return out


@dataclass(frozen=True)
class Choice:
    """One knob's recommended value, the rule that chose it and one sentence why."""

    knob: str
    value: str
    rule: str
    reason: str


@dataclass(frozen=True)
class Advice:
    facts: Facts
    question: str
    match: str | None
    scale: str | None
    choices: list[Choice]
    warnings: list[str]
    measures: list[str]

    @property
    def knobs(self) -> dict[str, str]:
        return {c.knob: c.value for c in self.choices if self.match is None}

    def choice(self, knob: str) -> Choice:
        for c in self.choices:
            if c.knob == knob:
                return c
        raise KeyError(knob)

    @property
    def scale_reason(self) -> str:
        """Why the scale is (or is not) pinned, citing its rule."""
        from rankflavor.presets.scales import scale_named

        sc = scale_named(self.scale)
        if sc is not None:
            return (f"[S1] the grades seen fit the {sc.name} scale ({sc.describe().split(': ', 1)[1]}); it sets rel, "
                    "negatives and G for every measure and refuses a grade off it")
        if self.facts.scale is not None:
            return f"[P1] left out: its rel would change the {self.match} preset's binary measures"
        return "[S2] the grades fit no named scale; rel stays 1"

    def render(self) -> str:
        lines = self.facts.lines()
        head = f"recommended flavor for the question '{self.question}'"
        lines += ["", head + (f", pinned to preset {self.match}:" if self.match else ":")]
        width = max(len(f"{c.knob} = {c.value}") for c in self.choices)
        lines.append(f"  {'scale = ' + (self.scale or 'none'):<{width}}  {self.scale_reason}")
        lines += [f"  {c.knob + ' = ' + c.value:<{width}}  [{c.rule}] {c.reason}" for c in self.choices]
        lines.append("  measures: " + ", ".join(self.measures))
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines) + "\n"

    def toml(self, config_dir: str = ".") -> str:
        """The config file: the choices with their reasons as comments, the dataset and the runs."""
        from rankflavor._version import __version__

        def s(x: str) -> str:  # a TOML basic string (JSON's escapes are TOML's)
            return json.dumps(x, ensure_ascii=False)

        def rel(path: str) -> str:  # relative to the config when inside its folder, else absolute
            full = os.path.abspath(path)
            inner = os.path.relpath(full, os.path.abspath(config_dir))
            return full if inner.startswith(os.pardir) else inner

        today = datetime.now(UTC).date().isoformat()
        out = [f"# rankflavor.toml written by `rankflavor init` on {today} (rankflavor {__version__}).",
               "# The flavor is pinned for the whole project: every rankflavor command run here reads it,",
               "# and flags a number computed under another flavor knob by knob.", "", "[project]"]
        out.append(f"# {self.scale_reason}")
        if self.scale:
            out.append(f"scale = {s(self.scale)}")
        if self.match:
            out.append(f"preset = {s(self.match)}  # {RULES['P1']}")
        out += [f"question = {s(self.question)}", "", "[flavor]"]
        if self.match:
            out.append(f"# every knob is the preset's (rankflavor flavors --presets: {self.match})")
        else:
            for c in self.choices:
                out += [f"# [{c.rule}] {c.reason}", f"{c.knob} = {s(c.value)}"]
        out += ["", "[metrics]", "measures = [" + ", ".join(s(m) for m in self.measures) + "]", ""]
        ds = dataset_name(self.facts.qrels)
        out += [f"[datasets.{s(ds)}]", f"qrels = {s(rel(self.facts.qrels))}", ""]
        for r in self.facts.runs:
            out += [f"[runs.{s(r.name)}]", f"path = {s(rel(r.path))}", f"dataset = {s(ds)}", ""]
        first = self.facts.runs[0].name if self.facts.runs else "RUN"
        out += ["# The gate (rankflavor gate) compares with a baseline made under this flavor:",
                f"#   rankflavor eval {ds} {first} -o baselines/{ds}.json",
                "# [baselines]", f"# {s(ds)} = \"baselines/{ds}.json\"", "# [gate]", "# max_drop = 0.01",
                "# alpha = 0.05", "", "[history]", 'path = "rankflavor-history.sqlite"', ""]
        return "\n".join(out)


def dataset_name(path: str) -> str:
    """A short name for a judgments file: its name without ``qrels.`` and the extension."""
    base = os.path.basename(path)
    base = re.sub(r"\.(txt|tsv|csv|gz|qrels)$", "", base, flags=re.IGNORECASE)
    base = re.sub(r"\.(txt|tsv|csv|qrels)$", "", base, flags=re.IGNORECASE)
    base = re.sub(r"^qrels[._-]", "", base, flags=re.IGNORECASE)
    return re.sub(r"[^A-Za-z0-9_-]+", "-", base).strip("-") or "qrels"


def run_name(path: str, taken: set[str]) -> str:
    base = re.sub(r"\.(run|txt|tsv|trec|gz)$", "", os.path.basename(path), flags=re.IGNORECASE)
    base = re.sub(r"[^A-Za-z0-9_-]+", "-", base).strip("-") or "run"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def fitting_scale(grades: np.ndarray) -> str | None:
    """The smallest named scale whose grades hold every non-negative grade observed."""
    from rankflavor.presets.scales import SCALES

    seen = set(np.unique(grades[grades >= 0]).tolist())
    fits = [s for s in SCALES.values() if seen <= set(s.grades)]
    return min(fits, key=lambda s: len(s.grades)).name if fits else None


def facts(qrels: str, runs: list[str], k: int = 10) -> Facts:
    """Inspect the judgments and each run's top k (see the module doc)."""
    import pyarrow.compute as pc

    from rankflavor.analysis.judgments import judgments
    from rankflavor.engine.evaluate import evaluate
    from rankflavor.flavor.flavor import format_number
    from rankflavor.io.columns import as_numpy, plain_strings
    from rankflavor.io.inputs import as_qrels, as_run
    from rankflavor.presets.scales import scale_named

    q = as_qrels(qrels)
    grade = np.asarray(q.grade, dtype=np.float64)
    if not len(grade):
        raise UsageError(f"{qrels}: no judgments")
    scale = fitting_scale(grade)
    sc = scale_named(scale)
    rel = sc.rel if sc is not None else 1.0
    values, counts = np.unique(grade, return_counts=True)
    hist = {format_number(float(v)): int(c) for v, c in zip(values, counts, strict=True)}
    query = plain_strings(q.query)  # (readers hand over dictionary-encoded ids)
    codes = as_numpy(pc.index_in(query, value_set=pc.unique(query))).astype(np.int64)
    n_q = int(codes.max()) + 1
    relevant = np.bincount(codes[grade >= rel], minlength=n_q)
    levels = len(np.unique(grade[grade >= 0]))
    positive = np.unique(grade[grade >= rel])
    smallest_positive = float(grade[grade > 0].min()) if (grade > 0).any() else 1.0
    names: set[str] = set()
    run_facts: list[RunFacts] = []
    bias: list[str] = []
    if runs:
        tables: dict[str, Any] = {}
        for file in runs:  # (two files of one name get -2, -3, ...)
            name = run_name(file, names)
            names.add(name)
            tables[name] = as_run(file)
        cov = judgments(q, dict(tables), [f"ndcg@{k}"], scale=sc)
        bias = list(cov.pool_bias)
        for (name, table), path in zip(tables.items(), runs, strict=True):
            # P@k at the smallest positive grade is 0 exactly where the top k gains nothing.
            res = evaluate(q, table, [f"ndcg@{k}[ties=docno_desc]", f"ndcg@{k}[ties=docno_asc]", f"P@{k}"],
                           rel=format_number(smallest_positive))
            a, b, p = (np.asarray(m.values, dtype=np.float64) for m in res.measures)
            answered = np.asarray(res.measures[2].status) != "missing"
            run_facts.append(RunFacts(name, path, cov.run(name).mean_judged, int((~np.isclose(a, b)).sum()),
                                      int(((p == 0) & answered).sum()), int(answered.sum())))
    return Facts(q.source, k, len(grade), n_q, hist, int((grade < 0).sum()), scale, levels, len(positive) <= 1,
                 rel, len(grade) / n_q, float(relevant.mean()), int((relevant == 0).sum()),
                 bool(((grade >= 0) & (grade < rel)).any()), run_facts, bias)


def _rules(f: Facts, question: str) -> tuple[list[Choice], list[str]]:
    choices: list[Choice] = []
    warn: list[str] = []
    add = choices.append
    if f.binary:
        add(Choice("gain", "linear", "G1", "the judgments are binary, so linear and exp2 gains are equal (2^1-1 = 1) "
                   "and the gain knob is moot; linear is trec_eval's"))
        warn.append("gain is moot on binary judgments: any gain gives the same numbers")
    elif f.levels >= 5:
        add(Choice("gain", "exp2", "G2", f"a {f.levels}-level scale as product search grades (0-4) takes exponential "
                   "gain 2^g-1 (Burges et al. 2005), so one exact match (gain 15) outweighs several partial ones (3)"))
    else:
        add(Choice("gain", "linear", "G3", f"a {f.levels}-level graded scale as TREC's and BEIR's takes linear gain, "
                   "the convention of trec_eval and of the tracks' published NDCG"))
    add(Choice("discount", "log2", "D1", "rank i is divided by log2(i+1), as in every current tool; jk(b) only "
               "reproduces pre-2009 trec_eval numbers"))
    if question == "ranking":
        add(Choice("ideal", "local", "N1", "the question is the quality of what was returned, so the ideal is the "
                   "returned list re-sorted: relevant documents a run never saw do not lower its score"))
    elif question == "overall":
        add(Choice("ideal", "global", "N2", "the question is overall performance including recall, so the ideal holds "
                   "every judged document of the query, retrieved or not"))
    else:
        add(Choice("ideal", "global", "N3", "the question is how much of the relevant set is found, so the ideal "
                   "holds every judged document and is not cut at k"))
    if question == "coverage":
        add(Choice("ideal_cut", "none", "N3", "the ideal is the whole judged list, so a query scores 1 only when "
                   "everything relevant is ranked first (trec_eval ndcg)"))
    else:
        add(Choice("ideal_cut", "k", "C1", f"the ideal is cut at k = {f.k} (ndcg_cut), so a perfect top k scores 1"))
    cov = f.coverage
    if not f.judges_nonrelevant:
        add(Choice("unjudged", "zero", "U3", "the qrels list only relevant documents (no grade below "
                   f"{f.rel:g}), so unjudged documents must count as non-relevant: a condensed list would hold "
                   "only relevant documents and score every run 1"))
    elif cov is not None and cov < CONDENSE_BELOW:
        add(Choice("unjudged", "condensed", "U2", f"only {cov:.0%} of the runs' top {f.k} is judged, so lists are "
                   "condensed to the judged documents (Sakai 2007, trec_eval -J) rather than counting every unjudged "
                   "one as non-relevant"))
    else:
        seen = f"{cov:.0%} of the runs' top {f.k} is judged" if cov is not None else "no run was given to measure coverage"
        add(Choice("unjudged", "zero", "U1", f"unjudged documents count as grade 0, every tool's default ({seen})"))
    ties = sum(r.tie_queries for r in f.runs)
    if ties:
        worst = max(f.runs, key=lambda r: r.tie_queries)
        add(Choice("ties", "averaged", "T1", f"tied scores change NDCG@{f.k} of {worst.tie_queries} queries of run "
                   f"{worst.name} with the tie rule, so tied documents share their mean gain (McSherry & Najork "
                   "2008) instead of an order by docno"))
    else:
        why = "no run was given" if not f.runs else f"no tie in the runs changes NDCG@{f.k}"
        add(Choice("ties", "docno_desc", "T2", f"{why}, so trec_eval's rule (score, then docno descending) is kept: "
                   "deterministic and as published numbers"))
    add(Choice("missing", "zero", "M1", "a query the run does not answer scores 0 (trec_eval -c), so a failure "
               "lowers the mean instead of leaving it"))
    add(Choice("empty", "zero", "E1", f"a query with nothing relevant scores 0 as in trec_eval ({f.no_relevant} "
               "judged queries have nothing relevant)"))
    return choices, warn


def _warnings(f: Facts, knobs: dict[str, str]) -> list[str]:
    warn: list[str] = []
    ideal = knobs.get("ideal", "global")
    for r in f.runs:
        if ideal == "global" and r.judged_at_k < LOW_COVERAGE and knobs.get("unjudged", "zero") == "zero":
            warn.append(f"global ideal with low coverage: only {r.judged_at_k:.0%} of run {r.name}'s top {f.k} is "
                        "judged; its unjudged documents score 0 against an ideal of every judged relevant document, "
                        "so its NDCG is biased low (Buckley et al. 2006): read `rankflavor judgments` bounds")
        if ideal == "local" and r.no_gain_in_top:
            warn.append(f"local ideal: {r.no_gain_in_top} of {r.queries} queries have no positive grade in run "
                        f"{r.name}'s top {f.k}; their local ideal is empty (IDCG 0) and empty=zero scores them 0 "
                        "whatever else the judgments hold, so report recall beside it")
    if f.pool_bias:
        warn.append("pool bias: " + ", ".join(f.pool_bias) + " retrieve documents the judgment pool never saw; "
                    "their scores are biased low against the others")
    if not f.runs:
        warn.append("no run given: coverage and ties were not measured; pass RUNs for advice from them")
    if f.scale is None:
        warn.append("the grades fit no named scale (trec_dl, msmarco, beir, ecommerce): no scale is pinned, rel "
                    "stays 1; declare a Scale of your own to check the grades")
    if f.negatives:
        warn.append(f"{f.negatives} negative labels are read as pooled but unjudged (negatives=unjudged)")
    return warn


def _measures(question: str, k: int) -> list[str]:
    if question == "ranking":
        return [f"ndcg@{k}", f"P@{k}", "RR"]
    if question == "overall":
        return [f"ndcg@{k}", "AP", f"recall@{max(k, 100)}"]
    return [f"ndcg@{k}", f"recall@{k}", f"recall@{max(k, 100)}"]


def advise(qrels: str, runs: list[str] | None = None, *, question: str | None = None, match: str | None = None,
           k: int = 10) -> Advice:
    """Recommend a flavor for ``qrels`` (and ``runs``) and the ``question`` (default ``overall``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "q.txt").write_text("q1 0 a 4\\nq1 0 b 2\\nq1 0 c 0\\nq2 0 a 3\\nq2 0 d 1\\n")
    >>> a = advise(str(d / "q.txt"), question="ranking")
    >>> a.scale, a.choice("gain").value, a.choice("gain").rule, a.choice("ideal").value
    ('ecommerce', 'exp2', 'G2', 'local')
    """
    if question is not None and question not in QUESTIONS:
        raise UsageError(f"--question {question!r}: expected one of {', '.join(QUESTIONS)}")
    q = question or "overall"
    f = facts(qrels, list(runs or []), k)
    choices, warn = _rules(f, q)
    if question is None:
        choices = [c if c.knob != "ideal" else Choice(c.knob, c.value, c.rule, c.reason + " (the default question; "
                   "--question ranking asks about the returned list only)") for c in choices]
    scale = f.scale
    measures = _measures(q, k)
    if match is not None:
        from rankflavor.presets import get_preset

        preset = get_preset(match)
        pinned = preset.flavor
        picked = []
        for c in choices:
            value = str(getattr(pinned, c.knob))
            if value != c.value:
                warn.append(f"--preset {preset.name} pins {c.knob}={value} where rule {c.rule} picks {c.value}: kept, "
                            "so the numbers compare with the preset's")
            picked.append(Choice(c.knob, value, "P1", f"{preset.name} sets {value} ({preset.summary.split(':')[0]})"))
        choices = picked
        sc_rel = None
        if scale is not None:
            from rankflavor.presets.scales import scale_named

            sc = scale_named(scale)
            sc_rel = sc.rel if sc is not None else None
        if sc_rel is not None and sc_rel != pinned.rel_threshold:
            warn.append(f"scale {scale} sets rel={sc_rel:g} where {preset.name} uses rel={pinned.rel}: the scale is "
                        "left out so binary measures stay the preset's")
            scale = None
        if preset.default_metrics:
            measures = list(preset.default_metrics)
        match = preset.name
    knobs = {c.knob: c.value for c in choices}
    warn += _warnings(f, knobs)
    return Advice(f, q, match, scale, choices, warn, measures)


def rules_text() -> str:
    return "\n".join(f"{k}: {v}" for k, v in RULES.items()) + "\n"


__all__ = ["CONDENSE_BELOW", "LOW_COVERAGE", "RULES", "Advice", "Choice", "Facts", "RunFacts", "advise", "facts",
           "rules_text"]

