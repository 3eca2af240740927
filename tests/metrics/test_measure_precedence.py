"""Knob precedence in a measure: base (preset) < overrides (--flavor, -l, -M...) < brackets.

Regression: a knob given both as an override and in the brackets raised a bare TypeError
(``with_knobs() got multiple values for keyword argument``), exit status 1, instead of the
bracket's value winning as ``parse_measure`` documents.
"""

from __future__ import annotations

from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.metrics.measure import parse_measure


def test_bracket_knob_beats_override() -> None:
    m = parse_measure("AP[rel=2]", overrides={"rel": "1", "depth": "5"})
    assert (m.flavor.rel, m.flavor.depth) == ("2", "5")


def test_evaluate_override_and_bracket_on_the_same_knob() -> None:
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": {"a": 0.9, "b": 0.1}}
    res = rankflavor.evaluate(qrels, run, ["AP[rel=2]", "AP"], rel=1)
    # rel=2: only b is relevant, at rank 2 -> AP 1/2. rel=1: both relevant, ranks 1 and 2 -> AP 1.
    assert [m.mean for m in res] == [0.5, 1.0]


def test_cli_level_and_bracket(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "q").write_text("q 0 a 1\nq 0 b 2\n")
    (tmp_path / "r").write_text("q Q0 a 1 0.9 t\nq Q0 b 2 0.1 t\n")
    out = CliRunner().invoke(cli, ["eval", str(tmp_path / "q"), str(tmp_path / "r"), "-l", "1", "-m", "AP[rel=2]",
                                   "--format", "csv"])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert ",0.5," in out.output
