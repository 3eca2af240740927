"""Raters: the three rater-file layouts, aggregation rules on hand-worked examples, agreement
equal to the libraries' own (sklearn, statsmodels, krippendorff) on random ratings, bad input."""

from __future__ import annotations

import math
import re
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.errors import InputError, UsageError
from rankflavor.io.columns import to_strings
from rankflavor.io.trec import read_qrels
from rankflavor.raters import RULES, Ratings, aggregate_ratings, agreement
from rankflavor.raters.files import read_ratings

# ---------------------------------------------------------------------------------------------
# Aggregation rules, worked by hand.

#: (grades of one pair) -> {rule: expected grade}
HAND = {
    "a": ([1, 2, 2, 3], {"mean": 2.0, "rounded_mean": 2.0, "quepid": 2.0, "median": 2.0, "majority": 2.0,
                         "max": 3.0, "min": 1.0}),
    # Half away from zero (Ruby's Float#round), where NumPy's round would give 2.
    "b": ([2, 3], {"mean": 2.5, "rounded_mean": 3.0, "quepid": 3.0, "median": 2.5, "majority": 2.0,
                   "max": 3.0, "min": 2.0}),
    # Quepid: the top three (3, 3, 1) disagree, so their least.
    "c": ([3, 3, 1], {"mean": 7 / 3, "rounded_mean": 2.0, "quepid": 1.0, "median": 3.0, "majority": 3.0,
                      "max": 3.0, "min": 1.0}),
    # Quepid: the top three agree; the fourth rating does not count.
    "d": ([3, 0, 3, 3], {"mean": 2.25, "rounded_mean": 2.0, "quepid": 3.0, "median": 3.0, "majority": 3.0,
                         "max": 3.0, "min": 0.0}),
    # A tied vote goes to the lowest grade; a single rating is itself under every rule.
    "e": ([2, 1, 1, 2, 3], {"mean": 1.8, "rounded_mean": 2.0, "quepid": 2.0, "median": 2.0, "majority": 1.0,
                            "max": 3.0, "min": 1.0}),
    "f": ([0], dict.fromkeys(RULES, 0.0)),
    "g": ([0, 1], {"mean": 0.5, "rounded_mean": 1.0, "quepid": 1.0, "median": 0.5, "majority": 0.0,
                   "max": 1.0, "min": 0.0}),
}


def _hand_ratings() -> Ratings:
    rows = [("q1" if doc < "e" else "q2", doc, f"r{i}", g) for doc, (grades, _) in HAND.items()
            for i, g in enumerate(grades)]
    rng = np.random.default_rng(3)
    order = rng.permutation(len(rows))  # the rules must not depend on row order
    return Ratings.from_rows([rows[i] for i in order], "hand.csv")


@pytest.mark.parametrize("rule", list(RULES))
def test_each_rule_gives_the_hand_worked_grade(rule: str) -> None:
    qrels = aggregate_ratings(_hand_ratings(), rule)
    got = dict(zip(to_strings(qrels.doc), qrels.grade.tolist(), strict=True))
    assert got == pytest.approx({doc: want[rule] for doc, (_, want) in HAND.items()})
    assert to_strings(qrels.query) == ["q1"] * 4 + ["q2"] * 3
    assert qrels.source == f"hand.csv[raters={rule}]"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=6), min_size=1, max_size=12))
def test_rules_agree_with_numpy_on_random_groups(groups: list[list[int]]) -> None:
    rows = [("q", f"d{j:02d}", f"r{i}", g) for j, grades in enumerate(groups) for i, g in enumerate(grades)]
    r = Ratings.from_rows(rows)
    for rule, fn in (("mean", np.mean), ("median", np.median), ("max", np.max), ("min", np.min)):
        assert aggregate_ratings(r, rule).grade.tolist() == pytest.approx([fn(g) for g in groups])
    majority = aggregate_ratings(r, "majority").grade.tolist()
    for grades, got in zip(groups, majority, strict=True):
        counts = {g: grades.count(g) for g in grades}
        assert got == min(g for g, c in counts.items() if c == max(counts.values()))


def test_an_unknown_rule_is_a_usage_error_with_the_closest_name() -> None:
    with pytest.raises(UsageError, match=r"unknown raters rule 'medain'.*Did you mean 'median'"):
        aggregate_ratings(_hand_ratings(), "medain")


# ---------------------------------------------------------------------------------------------
# Agreement equals the libraries' own on random ratings.


def _random_ratings(seed: int, n_raters: int, missing: float) -> tuple[Ratings, np.ndarray, list[str]]:
    """Ratings of 6 queries x 8 docs by ``n_raters`` raters who agree more than chance, a share
    ``missing`` of the ratings left out; also the raters x pairs matrix (NaN: not rated) in
    (query, doc) order, and each pair's query."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, size=48)
    noisy = np.clip(truth[None, :] + rng.integers(-1, 2, size=(n_raters, 48)) * (rng.random((n_raters, 48)) < 0.4), 0, 3)
    matrix = noisy.astype(float)
    matrix[rng.random(matrix.shape) < missing] = np.nan
    pair_query = [f"q{j // 8}" for j in range(48)]
    rows = [(pair_query[j], f"d{j % 8}", f"rater{i}", matrix[i, j])
            for i in range(n_raters) for j in range(48) if not np.isnan(matrix[i, j])]
    order = rng.permutation(len(rows))
    return Ratings.from_rows([rows[i] for i in order], "random"), matrix, pair_query


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cohen_kappa_equals_sklearn_for_two_raters(seed: int) -> None:
    ratings, matrix, pair_query = _random_ratings(seed, 2, missing=0.1)
    both = ~np.isnan(matrix).any(axis=0)
    a = agreement(ratings)
    assert a.overall.complete_pairs == int(both.sum())
    assert a.overall.cohen_kappa == pytest.approx(cohen_kappa_score(matrix[0, both], matrix[1, both]))
    q = np.asarray(pair_query) == "q2"
    want = cohen_kappa_score(matrix[0, both & q], matrix[1, both & q], labels=[0, 1, 2, 3])
    assert a.per_query["q2"].cohen_kappa == pytest.approx(want)


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_fleiss_kappa_and_krippendorff_alpha_equal_the_libraries(seed: int) -> None:
    ratings, matrix, pair_query = _random_ratings(seed, 4, missing=0.15)
    a = agreement(ratings, grades=[0, 1, 2, 3])
    assert a.overall.cohen_kappa is None  # four raters
    complete = matrix[:, ~np.isnan(matrix).any(axis=0)]
    table, _ = aggregate_raters(complete.T.astype(int), n_cat=4)
    assert a.overall.fleiss_kappa == pytest.approx(fleiss_kappa(table))
    want = krippendorff.alpha(reliability_data=matrix, value_domain=[0, 1, 2, 3], level_of_measurement="ordinal")
    assert a.overall.krippendorff_alpha == pytest.approx(want)
    q = np.asarray(pair_query) == "q0"
    want_q = krippendorff.alpha(reliability_data=matrix[:, q], value_domain=[0, 1, 2, 3], level_of_measurement="ordinal")
    assert a.per_query["q0"].krippendorff_alpha == pytest.approx(want_q)
    assert a.overall.ratings == int((~np.isnan(matrix)).sum()) and a.overall.raters == 4


def test_agreement_on_one_grade_only_is_nan_not_an_error() -> None:
    r = Ratings.from_rows([("q", d, rater, 1) for d in "abc" for rater in ("x", "y")])
    s = agreement(r).overall
    assert math.isnan(s.fleiss_kappa) and math.isnan(s.krippendorff_alpha)
    assert agreement(r).to_dict()["overall"]["krippendorff_alpha"] is None


# ---------------------------------------------------------------------------------------------
# The three layouts read the same ratings.

TREC = "q1 0 d1 2 ann\nq1 0 d1 3 bob\nq1 0 d2 0 ann\n# comment\nq2 0 d1 1 bob\n"
CSV = "query,doc,rater,grade\nq1,d1,ann,2\nq1,d1,bob,3\nq1,d2,ann,0\nq2,d1,bob,1\n"
# Quepid's book judgements export: a column per judge, an empty cell where that judge gave none.
QUEPID = "query,docid,ann,bob\nq1,d1,2.0,3.0\nq1,d2,0.0,\nq2,d1,,1.0\n"


def _rows(r: Ratings) -> set[tuple[str, str, str, float]]:
    return {(str(q), str(d), str(x), float(g)) for q, d, x, g in zip(r.query, r.doc, r.rater, r.grade, strict=True)}


def test_the_three_layouts_read_the_same_ratings(write) -> None:  # type: ignore[no-untyped-def]
    want = {("q1", "d1", "ann", 2.0), ("q1", "d1", "bob", 3.0), ("q1", "d2", "ann", 0.0), ("q2", "d1", "bob", 1.0)}
    for name, text in (("r.txt", TREC), ("r.csv", CSV), ("q.csv", QUEPID)):
        assert _rows(read_ratings(write(name, text), grades=[0, 1, 2, 3])) == want, name
    assert read_ratings(write("r.txt", TREC)).lines.tolist() == [1, 2, 3, 5]


def test_quepid_guarded_query_text_and_anonymous_judge(write) -> None:  # type: ignore[no-untyped-def]
    r = read_ratings(write("q.csv", 'query,docid,Ann Smith,Anonymous\n" =cost",d1,1,1\n'))
    assert _rows(r) == {("=cost", "d1", "Ann Smith", 1.0), ("=cost", "d1", "Anonymous", 1.0)}


@pytest.mark.parametrize(
    ("name", "text", "line", "message"),
    [
        ("r.csv", "query,doc,rater,grade\nq1,d1,ann,2\nq1,d2,ann,\n", 3, "missing grade"),
        ("r.txt", "q1 0 d1 2 ann\nq1 0 d2 bob\n", 2, "found 4 (a missing grade or rater?)"),
        ("q.csv", "query,docid,ann,bob\nq1,d1,1,\nq1,d2,,\n", 3, "no judge rated"),
        ("r.csv", "query,doc,rater,grade\nq1,d1,ann,4\n", 2, "grade 4 is not on the label scale"),
        ("r.csv", "query,doc,rater,grade\nq1,d1,ann,high\n", 2, "grade 'high' is not a number"),
        ("r.csv", "query,doc,rater,grade\nq1,d1,ann,1\nq1,d1,ann,2\n", 3, "rates query 'q1' doc 'd1' again"),
        ("r.csv", "query,doc,grade\nq1,d1,1\n", 1, "lacks column(s) rater"),
    ],
)
def test_bad_rater_files_name_file_and_line(write, name: str, text: str, line: int, message: str) -> None:  # type: ignore[no-untyped-def]
    path = write(name, text)
    with pytest.raises(InputError, match=re.escape(message)) as err:
        read_ratings(path, grades=[0, 1, 2, 3])
    assert err.value.line == line and err.value.source == str(path)
    result = CliRunner().invoke(cli, ["raters", str(path), "--scale", "trec_dl"])
    assert result.exit_code == 3
    assert f"{path}:{line}:" in result.output and message in result.output


# ---------------------------------------------------------------------------------------------
# The command line, and the aggregated qrels in the ordinary engine.


def test_aggregate_writes_qrels_whose_header_names_the_rule(write, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write("r.csv", CSV)
    out = tmp_path / "qrels.txt"
    result = CliRunner().invoke(cli, ["aggregate", str(path), "--rule", "rounded_mean", "--scale", "trec_dl", "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert text.splitlines()[0] == f"# rankflavor aggregate: {path}[raters=rounded_mean], 2 raters"
    assert text.splitlines()[1:] == ["q1 0 d1 3", "q1 0 d2 0", "q2 0 d1 1"]
    q = read_qrels(out)
    assert q.comments == 1 and q.grade.tolist() == [3.0, 0.0, 1.0]


def test_the_rule_travels_into_the_results_provenance(write) -> None:  # type: ignore[no-untyped-def]
    qrels = aggregate_ratings(read_ratings(write("r.csv", CSV)), "median")
    results = rankflavor.evaluate(qrels, {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 1.0}}, "ndcg@10")
    assert results.provenance["qrels"]["source"].endswith("r.csv[raters=median]")
    assert results.measures[0].per_query() == {"q1": 1.0, "q2": 1.0}


def test_raters_command_json_and_table(write) -> None:  # type: ignore[no-untyped-def]
    path = write("r.csv", CSV)
    import json

    result = CliRunner().invoke(cli, ["raters", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["raters"] == ["ann", "bob"] and data["overall"]["pairs"] == 3 and set(data["per_query"]) == {"q1", "q2"}
    table = CliRunner().invoke(cli, ["raters", str(path)])
    assert table.exit_code == 0 and "cohen_kappa" in table.output and "q2" in table.output


def test_unknown_rule_and_scale_exit_with_usage_errors(write) -> None:  # type: ignore[no-untyped-def]
    path = write("r.csv", CSV)
    bad_rule = CliRunner().invoke(cli, ["aggregate", str(path), "--rule", "avg"])
    assert bad_rule.exit_code == 2 and "unknown raters rule 'avg'" in bad_rule.output
    bad_scale = CliRunner().invoke(cli, ["raters", str(path), "--scale", "trec_dll"])
    assert bad_scale.exit_code == 2 and "unknown label scale" in bad_scale.output
