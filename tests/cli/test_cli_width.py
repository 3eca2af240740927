"""What a person sees fits the terminal (issue #34): at COLUMNS=80 and COLUMNS=120, no line of
``eval``, ``judgments``, ``identify``, ``compare`` (``--flavors grid`` too), ``check``, ``spread``,
``pool``, ``gate``, ``history``, ``raters`` or ``explain`` on the DL19 runs is wider than the terminal, and no
number is split across lines.

The second check is independent of how the renderers lay text out: every number the 200-column
output prints (a token that is wholly a decimal number, or an integer of three digits or more)
must appear as a whole token in the narrow output at least as often. A number a terminal (or a
squeezed table column) broke in two, ``0.`` / ``5058`` or ``0.50…``, is missing there.

``identify`` runs on the first five DL19 queries with ``-m P@5`` (its flavor space at ``ndcg@10``
takes many seconds whatever the number of queries).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from rankflavor.cli.main import cli
from rankflavor.render.fit import Column, NameText, paged_tables, wrap

from ..conftest import shared_path

WIDTHS = (80, 120)
WIDE = 200
_EDGE = "│┃║|[](),;:"
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d+(?:e[-+]?\d+)?|\d{3,})%?")
RUNS = {"bm25": "rankllm.dl19.bm25.top100.run", "splade": "rankllm.dl19.splade-p-p-ensemble-distil.top100.run"}


def numbers(text: str) -> Counter[str]:
    """Every token of ``text`` (split at white space and table borders) that is wholly a number."""
    out: Counter[str] = Counter()
    for token in re.split(r"[\s│┃║]+", text):
        token = token.strip(_EDGE).rstrip(".")
        if _NUMBER.fullmatch(token):
            out[token] += 1
    return out


def test_numbers_reads_whole_tokens_only() -> None:
    assert numbers("│ 0.5058 │ [0.4305, 0.5786] │ 2257 (52.5%) │ ndcg@10 12") == Counter(
        {"0.5058": 1, "0.4305": 1, "0.5786": 1, "2257": 1, "52.5%": 1})
    split = numbers("value 0.\n5058 and 0.50…")  # a number broken by the edge, one cut short
    assert "0.5058" not in split and "0.50" not in split


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """DL19 passage qrels and two runs, a first-five-queries subset for identify, a project with a
    baseline and a history of three records, and a small ratings file."""
    root = tmp_path_factory.mktemp("width")
    qrels = shared_path("qrels", "qrels.dl19-passage.txt")
    runs = {name: str(shared_path("runs", file)) for name, file in RUNS.items()}
    first = sorted({line.split()[0] for line in qrels.read_text().splitlines()})[:5]
    for src, dst in ((qrels, "q5.txt"), (Path(runs["bm25"]), "bm25-5.run")):
        (root / dst).write_text("".join(line + "\n" for line in src.read_text().splitlines()
                                        if line.split()[0] in first))
    toml = ["[project]", "name = 'dl19'", "[metrics]", "measures = ['ndcg@10', 'P@10']", "[datasets.dl19]",
            f"qrels = '{qrels}'"]
    for name, path in runs.items():
        toml += [f"[runs.{name}]", f"path = '{path}'"]
    toml += ["[baselines]", "dl19 = 'base.json'", "[gate]", "floor = 0.3", "max_drop = 0.02", "alpha = 0.05"]
    (root / "rankflavor.toml").write_text("\n".join(toml) + "\n")
    (root / "ratings.csv").write_text("query,doc,rater,grade\n" + "".join(
        f"q{q},d{d},{r},{(q * 7 + d * 3 + len(r)) % 4}\n" for q in range(1, 4) for d in range(1, 3)
        for r in ("ann", "bob")))
    return {"root": str(root), "qrels": str(qrels), **runs}


def _run(project: dict[str, str], args: list[str], width: int, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    monkeypatch.chdir(project["root"])
    r = CliRunner().invoke(cli, args, env={"COLUMNS": str(width)})
    assert r.exit_code in (0, 1), (args, r.output, r.exception)  # gate exits 1 when a check fails
    return r.stdout, r.stderr


def _commands(p: dict[str, str]) -> dict[str, list[str]]:
    q, bm25, splade = p["qrels"], p["bm25"], p["splade"]
    return {
        "eval": ["eval", q, bm25],
        "eval -q": ["eval", q, bm25, "-q", "-m", "ndcg@10", "-m", "P@10", "-m", "AP"],
        "judgments": ["judgments", q, bm25, splade, "--scale", "trec_dl", "-m", "ndcg@10", "-m", "RBP@100"],
        "judgments -q": ["judgments", q, bm25, splade, "--scale", "trec_dl", "-q"],
        "identify": ["identify", "q5.txt", "bm25-5.run", "--value", "0.5", "-m", "P@5"],
        "compare": ["compare", q, bm25, splade, "--resamples", "200"],
        "compare --flavors grid": ["compare", q, bm25, splade, "--resamples", "100", "--flavors", "grid"],
        "check": ["check", q, bm25, splade],
        "spread": ["spread", q, bm25, splade],
        "pool": ["pool", bm25, splade, "--qrels", q, "--scale", "trec_dl", "--budget", "20"],
        "gate": ["gate", "bm25", "splade"],
        "history": ["history"],
        "raters": ["raters", "ratings.csv"],
        "explain": ["explain", q, bm25, "-Q", "1037798"],
    }


@pytest.fixture(scope="module")
def recorded(project: dict[str, str]) -> dict[str, str]:
    """The project's baseline results and three history records (bm25, splade, bm25 under exp2 gain)."""
    import os

    here = os.getcwd()
    os.chdir(project["root"])
    try:
        for args in (["eval", "dl19", "bm25", "-o", "base.json"], ["eval", "dl19", "bm25", "--record"],
                     ["eval", "dl19", "splade", "--record"], ["eval", "dl19", "bm25", "--record", "--flavor",
                                                              "gain=exp2"]):
            r = CliRunner().invoke(cli, args)
            assert r.exit_code == 0, r.output
    finally:
        os.chdir(here)
    return project


@pytest.mark.parametrize("name", ["eval", "eval -q", "judgments", "judgments -q", "identify", "compare",
                                  "compare --flavors grid", "check", "spread", "pool", "gate", "history", "raters",
                                  "explain"])
def test_every_line_fits_and_no_number_is_split(name: str, recorded: dict[str, str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    args = _commands(recorded)[name]
    wide = _run(recorded, args, WIDE, monkeypatch)
    want = numbers(wide[0]) + numbers(wide[1])
    assert want, f"{name}: no number in its output at {WIDE} columns"
    for width in WIDTHS:
        out, err = _run(recorded, args, width, monkeypatch)
        for stream, text in (("stdout", out), ("stderr", err)):
            too_wide = [line for line in text.splitlines() if len(line) > width]
            assert not too_wide, f"{name} at {width} columns, {stream}: {too_wide[:3]}"
        got = numbers(out) + numbers(err)
        lost = {n: c - got[n] for n, c in want.items() if got[n] < c}
        assert not lost, f"{name} at {width} columns: numbers split or cut (wanted whole, times missing): {lost}"


def test_wide_keeps_every_flavor_string_whole(project: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``--wide`` lays the table out beyond the terminal: the full canonical flavor on one line."""
    out, _ = _run(project, ["eval", project["qrels"], project["bm25"], "-m", "ndcg@10", "--wide"], 80, monkeypatch)
    flavor = ("ndcg@10[gain=linear,discount=log2,ideal=global,ideal_cut=k,unjudged=zero,negatives=unjudged,"
              "ties=docno_desc,precision=float64,depth=none,duplicates=error,missing=zero,empty=zero]")
    assert any(flavor in line for line in out.splitlines())
    narrow, _ = _run(project, ["eval", project["qrels"], project["bm25"], "-m", "ndcg@10"], 80, monkeypatch)
    assert not any(flavor in line for line in narrow.splitlines())


def test_flavors_is_readable_at_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    r = CliRunner().invoke(cli, ["flavors"], env={"COLUMNS": "80"})
    lines = r.stdout.splitlines()
    assert r.exit_code == 0 and max(map(len, lines)) <= 80
    assert len(lines) < 500  # (946 lines before: a table whose meaning column was 20 characters wide)
    assert "gain = linear  values: linear | exp2 | binary | {grade:gain,...}" in lines


# -- the layer itself, on random text -----------------------------------------------------------

_WORD = st.one_of(st.from_regex(r"[a-z]{1,12}", fullmatch=True),
                  st.floats(-10, 10, allow_nan=False).map(lambda x: f"{x:.4f}"),
                  st.from_regex(r"[a-z]{1,8}(=[a-z0-9]{1,8},){1,8}", fullmatch=True),  # a flavor-like word
                  st.from_regex(r"[a-z0-9]{25,70}", fullmatch=True))  # a word no separator cuts


@settings(max_examples=60, deadline=None)
@given(words=st.lists(_WORD, max_size=30), width=st.integers(20, 130), gaps=st.lists(st.integers(1, 3), max_size=30))
def test_wrap_fits_keeps_every_character_and_every_number_whole(words: list[str], width: int, gaps: list[int]) -> None:
    text = "".join(w + " " * (gaps[i] if i < len(gaps) else 1) for i, w in enumerate(words)).rstrip()
    lines = wrap(text, width, "  ", "    ")
    assert all(len(line) <= width for line in lines), lines
    assert "".join("".join(line.split()) for line in lines) == "".join(text.split())  # nothing lost or added
    for word in words:  # a number that fits a line is never cut
        if _NUMBER.fullmatch(word) and len(word) <= width - 4:
            assert any(word in line.split() for line in lines), (word, lines)


@settings(max_examples=25, deadline=None)
@given(cells=st.lists(st.lists(st.floats(-100, 100, allow_nan=False).map(lambda x: f"{x:.4f}"), min_size=3, max_size=3),
                      min_size=1, max_size=12),
       names=st.lists(st.from_regex(r"[a-z]{1,10}(\.[a-z]{1,10}){0,4}", fullmatch=True), min_size=12, max_size=12),
       width=st.integers(40, 130))
def test_paged_tables_fit_and_keep_every_number_whole(cells: list[list[str]], names: list[str], width: int) -> None:
    import io

    from rich.console import Console

    n_cols = 9
    columns = [Column("name", [NameText(names[i]) for i in range(len(cells))], wrap=True)]
    columns += [Column(f"value number {j}", [row[j % 3] for row in cells], "right") for j in range(n_cols)]
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None)
    for table in paged_tables(columns, width):
        console.print(table)
    out = buf.getvalue()
    assert all(len(line) <= width for line in out.splitlines())
    want = Counter(c for row in cells for j in range(n_cols) for c in [row[j % 3]])
    got = numbers(out)
    assert all(got[c] >= n for c, n in want.items()), (want, got)
