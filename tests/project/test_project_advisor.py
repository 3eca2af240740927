"""The flavor advisor (rankflavor init) on the shipped real judgments (TREC DL 2019 graded, MS MARCO
binary) and on generated 0-4 e-commerce judgments: the recommendation, the rule each knob cites,
its reason and the warnings. The facts the rules read (grade set, coverage, ties) are derived here
from the files independently of rankflavor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from rankflavor.cli.main import cli
from rankflavor.project import load_config
from rankflavor.project.advisor import advise

from ..conftest import shared_path


def read_pairs(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        f = line.split()
        out.setdefault(f[0], {})[f[2]] = float(f[3])
    return out


def read_run(path: Path) -> dict[str, list[tuple[float, str]]]:
    out: dict[str, list[tuple[float, str]]] = {}
    for line in path.read_text().splitlines():
        f = line.split()
        out.setdefault(f[0], []).append((float(f[4]), f[2]))
    return out


def top(rows: list[tuple[float, str]], k: int) -> list[tuple[float, str]]:
    return sorted(rows, key=lambda r: (-r[0], [-b for b in r[1].encode()]))[:k]  # score desc, docno desc


def test_trec_dl_graded(tmp_path: Path) -> None:
    qrels = shared_path("qrels", "qrels.dl19-passage.txt")
    run = shared_path("runs", "rankllm.dl19.bm25.top100.run")
    grades = {g for d in read_pairs(qrels).values() for g in d.values()}
    assert grades == {0, 1, 2, 3}  # the trec_dl scale, four levels
    ranked = read_run(run)
    # No tied score in any query's top 10 (nor at its edge), so the tie rule cannot change NDCG@10.
    assert all(len({s for s, _ in top(rows, 11)}) == len(top(rows, 11)) for rows in ranked.values())
    a = advise(str(qrels), [str(run)])
    assert a.scale == "trec_dl" and a.question == "overall"
    assert a.scale_reason.startswith("[S1] the grades seen fit the trec_dl scale (grades {0,1,2,3}, relevant >= 2")
    expected = {"gain": ("linear", "G3"), "discount": ("log2", "D1"), "ideal": ("global", "N2"),
                "ideal_cut": ("k", "C1"), "unjudged": ("zero", "U1"), "ties": ("docno_desc", "T2"),
                "missing": ("zero", "M1"), "empty": ("zero", "E1")}
    assert {c.knob: (c.value, c.rule) for c in a.choices} == expected
    assert "4-level graded scale" in a.choice("gain").reason
    assert "no tie in the runs changes NDCG@10" in a.choice("ties").reason
    assert "the default question" in a.choice("ideal").reason
    assert a.measures == ["ndcg@10", "AP", "recall@100"]
    assert not any("low coverage" in w for w in a.warnings)  # BM25 made the DL19 pool
    ranking = advise(str(qrels), [str(run)], question="ranking")
    assert (ranking.choice("ideal").value, ranking.choice("ideal").rule) == ("local", "N1")
    # Queries with no positive grade in BM25's top 10 have an empty local ideal: local NDCG scores them 0.
    qr = read_pairs(qrels)
    no_gain = sum(1 for q, rows in ranked.items() if q in qr and not any(qr[q].get(d, 0) > 0 for _, d in top(rows, 10)))
    assert any(f"local ideal: {no_gain} of 43 queries have no positive grade" in w for w in ranking.warnings) == (no_gain > 0)


def test_ms_marco_binary() -> None:
    qrels = shared_path("qrels", "qrels.msmarco-passage.dev-subset.txt")
    grades = {g for d in read_pairs(qrels).values() for g in d.values()}
    assert grades == {1}  # only relevant passages are listed
    a = advise(str(qrels), question="ranking")
    assert a.scale == "msmarco" and a.facts.binary and a.scale_reason.startswith("[S1]")
    assert (a.choice("gain").value, a.choice("gain").rule) == ("linear", "G1")
    assert "binary" in a.choice("gain").reason and "moot" in a.choice("gain").reason
    assert (a.choice("unjudged").value, a.choice("unjudged").rule) == ("zero", "U3")
    assert "score every run 1" in a.choice("unjudged").reason
    assert (a.choice("ideal").value, a.choice("ideal").rule) == ("local", "N1")
    assert any("gain is moot" in w for w in a.warnings)
    assert any("no run given" in w for w in a.warnings)


def ecommerce(tmp_path: Path, judged_share: float, ties: bool, seed: int = 0) -> tuple[Path, Path, float]:
    """30 queries, 20 judged products each on 0-4; a run of 10 products per query of which about
    ``judged_share`` are judged; with ``ties`` the first two share a score. Returns the files and the
    mean judged share of the top 10, counted here."""
    rng = np.random.default_rng(seed)
    q_lines, r_lines = [], []
    shares = []
    for q in range(30):
        grades = rng.integers(0, 5, size=20)
        grades[0], grades[1] = 4, 1  # a sure difference between the first two
        q_lines += [f"q{q} 0 p{q}_{i} {g}" for i, g in enumerate(grades)]
        n_judged = int(rng.binomial(10, judged_share))
        docs = [f"p{q}_{i}" for i in range(n_judged)] + [f"u{q}_{i}" for i in range(10 - n_judged)]
        docs = list(rng.permutation(docs))
        if ties and n_judged >= 2:  # grade 1 and grade 4 first, tied below: docno order decides
            docs = [f"p{q}_1", f"p{q}_0", *(d for d in docs if d not in (f"p{q}_0", f"p{q}_1"))]
        scores = [10.0 - i for i in range(10)]
        if ties:
            scores[1] = scores[0]
        r_lines += [f"q{q} Q0 {d} {i + 1} {s} shop" for i, (d, s) in enumerate(zip(docs, scores, strict=True))]
        shares.append(n_judged / 10)
    qp, rp = tmp_path / "shop.qrels", tmp_path / "shop.run"
    qp.write_text("\n".join(q_lines) + "\n")
    rp.write_text("\n".join(r_lines) + "\n")
    return qp, rp, float(np.mean(shares))


def test_ecommerce_ranking_with_ties(tmp_path: Path) -> None:
    qrels, run, share = ecommerce(tmp_path, 1.0, ties=True)
    assert share == 1.0
    a = advise(str(qrels), [str(run)], question="ranking")
    assert a.scale == "ecommerce" and not a.facts.binary and a.facts.levels == 5
    assert (a.choice("gain").value, a.choice("gain").rule) == ("exp2", "G2")
    assert "5-level scale" in a.choice("gain").reason and "2^g-1" in a.choice("gain").reason
    assert (a.choice("ideal").value, a.choice("ideal").rule) == ("local", "N1")
    assert (a.choice("unjudged").value, a.choice("unjudged").rule) == ("zero", "U1")
    assert "100% of the runs' top 10 is judged" in a.choice("unjudged").reason
    # Every query ties a grade-4 and a grade-1 product at the top: the tie rule changes all 30.
    assert (a.choice("ties").value, a.choice("ties").rule) == ("averaged", "T1")
    assert "NDCG@10 of 30 queries of run shop" in a.choice("ties").reason


def test_ecommerce_overall_with_low_coverage_warns_on_the_global_ideal(tmp_path: Path) -> None:
    qrels, run, share = ecommerce(tmp_path, 0.65, ties=False, seed=3)
    assert 0.5 <= share < 0.8
    a = advise(str(qrels), [str(run)], question="overall")
    assert (a.choice("ideal").value, a.choice("ideal").rule) == ("global", "N2")
    assert (a.choice("unjudged").value, a.choice("unjudged").rule) == ("zero", "U1")
    assert (a.choice("ties").value, a.choice("ties").rule) == ("docno_desc", "T2")
    warning = next(w for w in a.warnings if w.startswith("global ideal with low coverage"))
    assert f"only {share:.0%} of run shop's top 10 is judged" in warning


def test_ecommerce_sparse_judgments_condense(tmp_path: Path) -> None:
    qrels, run, share = ecommerce(tmp_path, 0.3, ties=False, seed=5)
    assert share < 0.5
    a = advise(str(qrels), [str(run)], question="coverage")
    assert (a.choice("unjudged").value, a.choice("unjudged").rule) == ("condensed", "U2")
    assert f"only {share:.0%} of the runs' top 10 is judged" in a.choice("unjudged").reason
    assert (a.choice("ideal").value, a.choice("ideal_cut").value, a.choice("ideal_cut").rule) == ("global", "none", "N3")


def test_match_beir_pins_the_preset(tmp_path: Path) -> None:
    from rankflavor.presets import get_preset

    qrels = shared_path("qrels", "qrels.dl19-passage.txt")
    run = shared_path("runs", "rankllm.dl19.bm25.top100.run")
    a = advise(str(qrels), [str(run)], match="beir")
    beir = get_preset("beir").flavor
    assert a.match == "beir" and {c.rule for c in a.choices} == {"P1"}
    assert all(c.value == str(getattr(beir, c.knob)) for c in a.choices)
    assert a.measures == ["NDCG@10", "Recall@100", "MAP@10", "P@10"]
    # BEIR means over the answered queries (missing=skip), where rule M1 scores them 0.
    assert any("--preset beir pins missing=skip where rule M1 picks zero" in w for w in a.warnings)
    # The DL scale's rel=2 would change BEIR's binary measures (pytrec_eval relevance_level 1).
    assert a.scale is None and any("scale trec_dl sets rel=2 where beir uses rel=1" in w for w in a.warnings)
    assert a.scale_reason.startswith("[P1] left out")


def test_init_writes_a_config_the_project_then_evaluates_under(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels = shared_path("qrels", "qrels.dl19-passage.txt")
    run = shared_path("runs", "rankllm.dl19.bm25.top100.run")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["init", str(qrels), str(run)])
    assert result.exit_code == 0, result.output
    assert "[G3] a 4-level graded scale" in result.stdout
    config = load_config(tmp_path / "rankflavor.toml")
    assert config.scale == "trec_dl" and config.knobs["gain"] == "linear" and config.knobs["ties"] == "docno_desc"
    assert config.metric_texts == ("ndcg@10", "AP", "recall@100") and config.history_path is not None
    text = (tmp_path / "rankflavor.toml").read_text()
    assert "# [U1] unjudged documents count as grade 0" in text
    ev = CliRunner().invoke(cli, ["eval", "dl19-passage", "rankllm-dl19-bm25-top100", "--format", "trec"])
    assert ev.exit_code == 0, ev.output
    # trec_eval 9.0.8 -c on these files: ndcg_cut_10 0.5058 (shared/data/expected).
    assert "ndcg@10               \tall\t0.5058" in ev.stdout
    again = CliRunner().invoke(cli, ["init", str(qrels)])
    assert again.exit_code == 2 and "exists; pass --force" in again.stderr
    beir = CliRunner().invoke(cli, ["init", str(qrels), "--preset", "beir", "--force"])
    assert beir.exit_code == 0 and load_config(tmp_path / "rankflavor.toml").preset == "beir"
    bad = CliRunner().invoke(cli, ["init", str(qrels), "--preset", "bier", "--dry-run"])
    assert bad.exit_code == 2 and "Did you mean 'beir'?" in bad.stderr


def test_two_runs_of_one_file_name_stay_two(tmp_path: Path) -> None:
    qrels, run, _ = ecommerce(tmp_path, 1.0, ties=False)
    other = tmp_path / "b"
    other.mkdir()
    (other / "shop.run").write_text(run.read_text())
    a = advise(str(qrels), [str(run), str(other / "shop.run")])
    assert [r.name for r in a.facts.runs] == ["shop", "shop-2"]
    assert '[runs."shop-2"]' in a.toml(str(tmp_path))
