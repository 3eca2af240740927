"""ERR (Chapelle et al. 2009) against gdeval.pl itself and the flavor-facts fingerprints."""

from __future__ import annotations

from pathlib import Path

import pytest

import rankflavor
from rankflavor.errors import FlavorError

from .test_presets_ir import _gdeval_script, _run_gdeval, _toy, ours, random_case, write_trec


def _section_4_3() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """flavor-facts §4.3 flavor-axis example (G = 3)."""
    grades = {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 3, "d6": 0, "d7": 2, "d8": 0, "d9": 1,
              "d11": 3, "d13": 2, "d14": 0, "d21": 3, "d22": 2, "d23": 1}
    order = ["d2", "d3", "d1", "d4", "d6", "dU", "d7", "d8", "d5", "d9",
             "d10", "d11", "d12", "d13", "d14", "d15", "d16", "d17", "d18", "d19"]
    return {"q": grades}, {"q": {d: float(20 - i) for i, d in enumerate(order)}}


def test_err_fingerprints_section_4_3() -> None:
    qrels, run = _section_4_3()
    assert round(ours(qrels, run, "ERR@10[max_grade=3]", "rankflavor")[0], 4) == 0.5676
    assert round(ours(qrels, run, "ERR@10[max_grade=4]", "rankflavor")[0], 4) == 0.3428
    assert round(ours(qrels, run, "ERR@10", "quepid")[0], 4) == 0.5676  # Quepid hard-wires G = 3


def test_gdeval_err_fingerprint_section_4_1() -> None:
    qrels, run = _toy()
    assert round(ours(qrels, run, "err@3", "gdeval")[1]["q1"], 5) == 0.21875
    assert round(ours(qrels, run, "err@10", "gdeval")[1]["q1"], 5) == 0.24988


def test_err_needs_the_top_grade() -> None:
    qrels, run = _section_4_3()
    with pytest.raises(FlavorError, match="max_grade"):
        rankflavor.evaluate(qrels, run, ["ERR@10"])


@pytest.mark.parametrize("k", [1, 5, 20])
def test_gdeval_err_random(tmp_path: Path, k: int) -> None:
    script = _gdeval_script()
    qrels, run = random_case(40 + k, 300, negatives=True, numeric_ids=True, max_grade=4)
    qpath, rpath = write_trec(tmp_path, qrels, run)
    want = _run_gdeval(script, qpath, rpath, k, column="err")
    mean, got = ours(qpath, rpath, f"err@{k}", "gdeval")
    assert len(want) > 150
    assert set(got) == set(want)
    for q, v in want.items():
        assert abs(got[q] - v) <= 5e-6 + 1e-12, (q, got[q], v)  # gdeval prints 5 decimals
    assert abs(mean - sum(want.values()) / len(want)) <= 5e-6
    # The test can fail: Quepid's G = 3 scale is far from gdeval's G = 4 on the same data.
    other = ours(qpath, rpath, f"ERR@{k}[max_grade=5]", "gdeval")[1]
    assert max(abs(other[q] - want[q]) for q in want) > 1e-3
