"""Agreement on ratings small enough to work by hand: every JSON field, each statistic at the
edges of what it needs (one pair, two raters, one rater, no pair both rated), and the reason given
for each undefined statistic. tests/raters/test_raters.py checks the same statistics against sklearn,
statsmodels and krippendorff on random ratings; these pin what those comparisons cannot reach
(the keys, the reasons, the refusals) with values derived on paper.

Krippendorff's ordinal alpha below: with ``n_g`` ratings of grade ``g`` among the pairable ones
(``n`` of them), ``delta(c, k) = (sum_{g=c..k} n_g - (n_c + n_k) / 2) ** 2``,
``D_o = sum_u sum_{i != j in u} delta / (m_u - 1) / n`` and
``D_e = sum_{c != k} n_c n_k delta(c, k) / (n (n - 1))``, alpha = ``1 - D_o / D_e``
(Krippendorff, Computing Krippendorff's Alpha-Reliability, 2011).
"""

from __future__ import annotations

import json
import warnings

import pytest
from click.testing import CliRunner

from rankflavor.cli.main import cli
from rankflavor.errors import InputError
from rankflavor.raters import Ratings, agreement

SAME = "nan: every rating is the same grade, so the agreement expected by chance is perfect: 0/0"
NEEDS_COHEN = "nan: needs a pair both raters rated"
NEEDS_FLEISS = "nan: needs two raters and a pair every rater rated"
NEEDS_ALPHA = "nan: needs two raters and a pair rated twice"


def _ratings(rows: list[tuple[str, str, str, float]], source: str = "hand") -> Ratings:
    return Ratings.from_rows(rows, source)


#: query q: pairs a (x 0, y 1, z 1) and b (x 2, y 2, z 1); query p: pair c, rated by x alone.
THREE = [("q", "a", "x", 0), ("q", "a", "y", 1), ("q", "a", "z", 1),
         ("q", "b", "x", 2), ("q", "b", "y", 2), ("q", "b", "z", 1), ("p", "c", "x", 1)]
# Fleiss: P_a = (1 + 4 - 3) / 6 = 1/3, P_b = 1/3; shares of grades 1/6, 3/6, 2/6, sum of squares
# 14/36; kappa = (1/3 - 14/36) / (1 - 14/36) = -1/11. Alpha: n_0 = 1, n_1 = 3, n_2 = 2 (c is not
# pairable); delta(0,1) = 4, delta(1,2) = 6.25, delta(0,2) = 20.25; D_o = (4 x 4 / 2 + 4 x 6.25 / 2) / 6
# = 20.5 / 6; D_e = 2 (3 x 4 + 6 x 6.25 + 2 x 20.25) / 30 = 6; alpha = 1 - 20.5 / 36 = 31/72.
WHOLE = {"cohen_kappa": None, "fleiss_kappa": pytest.approx(-1 / 11), "krippendorff_alpha": pytest.approx(31 / 72)}
EXPECTED = {
    "source": "hand",
    "raters": ["x", "y", "z"],
    "overall": {"pairs": 3, "ratings": 7, "raters": 3, "complete_pairs": 2, **WHOLE},
    "per_query": {
        # one rater: nothing to agree with, whatever the grades
        "p": {"pairs": 1, "ratings": 1, "raters": 1, "complete_pairs": 1, "cohen_kappa": None, "fleiss_kappa": None,
              "krippendorff_alpha": None, "undefined": {"fleiss_kappa": NEEDS_FLEISS, "krippendorff_alpha": NEEDS_ALPHA}},
        "q": {"pairs": 2, "ratings": 6, "raters": 3, "complete_pairs": 2, **WHOLE},
    },
}


def test_every_json_field_by_hand() -> None:
    got = agreement(_ratings(THREE)).to_dict()
    assert got == EXPECTED
    assert list(got) == ["source", "raters", "overall", "per_query"]
    assert list(got["overall"]) == ["pairs", "ratings", "raters", "complete_pairs", "cohen_kappa", "fleiss_kappa",
                                    "krippendorff_alpha"]
    # the scale's grades as the value domain: grade 3, never given, changes none of the three
    assert agreement(_ratings(THREE), grades=[0, 1, 2, 3]).to_dict() == EXPECTED


def test_the_command_prints_the_same_result(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "ratings.csv"
    path.write_text("query,doc,rater,grade\n" + "".join(f"{q},{d},{r},{g}\n" for q, d, r, g in reversed(THREE)))
    res = CliRunner().invoke(cli, ["raters", str(path), "--format", "json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    assert got["source"] == str(path)
    assert {k: v for k, v in got.items() if k != "source"} == {k: v for k, v in EXPECTED.items() if k != "source"}


def test_two_raters_all_three_statistics() -> None:
    """x: 0 1 2 2, y: 0 2 2 1. Cohen: p_o = 2/4, p_e = 1/16 + 1/16 + 4/16 = 3/8, kappa = 1/5.
    Fleiss: P = 1, 0, 1, 0 (mean 1/2), shares 2/8, 2/8, 4/8, chance 3/8: 1/5. Alpha: n = 2, 2, 4;
    delta(1,2) = 9, delta(0,1) = 4, delta(0,2) = 25; D_o = 2 x 2 x 9 / 8 = 4.5,
    D_e = 2 (16 + 72 + 200) / 56 = 72/7; alpha = 1 - 4.5 x 7 / 72 = 9/16."""
    rows = [("q", d, r, g) for d, gx, gy in (("a", 0, 0), ("b", 1, 2), ("c", 2, 2), ("d", 2, 1))
            for r, g in (("x", gx), ("y", gy))]
    s = agreement(_ratings(rows)).overall
    assert (s.pairs, s.ratings, s.raters, s.complete_pairs) == (4, 8, 2, 4)
    assert s.cohen_kappa == pytest.approx(0.2) and s.fleiss_kappa == pytest.approx(0.2)
    assert s.krippendorff_alpha == pytest.approx(9 / 16) and s.undefined == {}
    assert s.to_dict() == {"pairs": 4, "ratings": 8, "raters": 2, "complete_pairs": 4, "cohen_kappa": pytest.approx(0.2),
                           "fleiss_kappa": pytest.approx(0.2), "krippendorff_alpha": pytest.approx(9 / 16)}


def test_one_pair_is_enough_for_each_statistic() -> None:
    """One pair, graded 0 and 1. Cohen: p_o = 0, margins (1, 0) and (0, 1), p_e = 0: kappa 0.
    Fleiss: P = (1 + 1 - 2) / 2 = 0, chance 1/2: -1. Alpha: n = 2, D_o = D_e = delta: 0."""
    s = agreement(_ratings([("q", "a", "x", 0), ("q", "a", "y", 1)])).overall
    assert (s.cohen_kappa, s.fleiss_kappa, s.krippendorff_alpha, s.undefined) == (0.0, -1.0, 0.0, {})


@pytest.mark.parametrize(("rows", "why"), [
    # one pair both rated, one grade: each statistic could be computed but is 0/0
    ([("q", "a", "x", 1), ("q", "a", "y", 1)],
     {"cohen_kappa": SAME, "fleiss_kappa": SAME, "krippendorff_alpha": SAME}),
    # the pair both rated agrees; b (rated by x alone, another grade) is read by none of them
    ([("q", "a", "x", 0), ("q", "a", "y", 0), ("q", "b", "x", 1)],
     {"cohen_kappa": SAME, "fleiss_kappa": SAME, "krippendorff_alpha": SAME}),
    # no pair both rated: the design is what is missing, though every grade is the same
    ([("q", "a", "x", 1), ("q", "b", "y", 1)],
     {"cohen_kappa": NEEDS_COHEN, "fleiss_kappa": NEEDS_FLEISS, "krippendorff_alpha": NEEDS_ALPHA}),
    ([("q", "a", "x", 0), ("q", "b", "y", 1)],
     {"cohen_kappa": NEEDS_COHEN, "fleiss_kappa": NEEDS_FLEISS, "krippendorff_alpha": NEEDS_ALPHA}),
    # one rater, two grades: no Cohen (not two raters), the others need a second rater
    ([("q", "a", "x", 0), ("q", "b", "x", 1)], {"fleiss_kappa": NEEDS_FLEISS, "krippendorff_alpha": NEEDS_ALPHA}),
    # three raters, a pair every rater rated, all agreeing: Cohen is not defined for three
    ([("q", "a", r, 2) for r in "xyz"], {"fleiss_kappa": SAME, "krippendorff_alpha": SAME}),
])
def test_each_undefined_statistic_says_why(rows: list[tuple[str, str, str, float]], why: dict[str, str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 0/0 is reported as NaN with its reason, never as a warning
        a = agreement(_ratings(rows))
    s = a.overall
    assert s.undefined == why
    assert all(getattr(s, name) != getattr(s, name) for name in why)  # NaN exactly where a reason is
    d = s.to_dict()
    assert d["undefined"] == why and all(d[name] is None for name in why)
    assert (s.cohen_kappa is None) == (len({r for _, _, r, _ in rows}) != 2)


def test_a_grade_off_the_scale_is_refused_not_counted_as_its_neighbour() -> None:
    rows = [("q", "a", "x", 1.5), ("q", "a", "y", 2), ("q", "b", "x", 7), ("q", "b", "y", 0)]
    with pytest.raises(InputError) as err:
        agreement(_ratings(rows, "mine.csv"), grades=[0, 1, 2, 3])
    assert str(err.value).startswith("mine.csv: ")
    assert "grade 1.5 is not on the label scale (grades 0, 1, 2, 3); 2 rating(s) off it" in str(err.value)


def test_the_readme_example_is_what_the_commands_print(monkeypatch: pytest.MonkeyPatch) -> None:
    """README's raters and aggregate example, run on the file it names (examples/ratings.csv),
    from the repository's root as README's reader runs it, at 100 columns."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = (root / "README.md").read_text()
    start = text.index("$ rankflavor raters examples/ratings.csv")
    block = text[start:text.index("```", start)].splitlines()
    agg = next(i for i, line in enumerate(block) if line.startswith("$ rankflavor aggregate"))
    monkeypatch.chdir(root)
    monkeypatch.setenv("COLUMNS", "100")
    shown = CliRunner().invoke(cli, ["raters", "examples/ratings.csv", "--scale", "trec_dl"])
    assert shown.exit_code == 0 and shown.stdout.splitlines() == block[1:agg]
    written = CliRunner().invoke(cli, ["aggregate", "examples/ratings.csv", "--rule", "median", "--scale", "trec_dl"])
    assert written.exit_code == 0 and written.stdout.splitlines() == block[agg + 1:]
