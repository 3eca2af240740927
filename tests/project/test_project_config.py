"""rankflavor.toml: the schema's checks (every error names the key, the value and the valid ones),
discovery from the working directory upward, code smuggling as plain data, and eval under it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from rankflavor.cli.main import cli
from rankflavor.project import ConfigError, find_config, load_config, project_config, schema_markdown

from ..conftest import ROOT

QRELS = "q1 0 a 3\nq1 0 b 1\nq1 0 c 0\nq2 0 a 2\nq2 0 d 0\nq2 0 e 3\n"
RUN = "q1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0 r\nq1 Q0 x 3 1.0 r\nq2 Q0 e 1 2.5 r\nq2 Q0 d 2 1.5 r\n"

GOOD = """
[project]
name = "shop"
scale = "trec_dl"
[flavor]
gain = "exp2m1"
ties = "AVERAGED"
[metrics]
measures = ["ndcg", "P", "RR"]
cutoffs = [10, 5]
[datasets.dev]
qrels = "data/dev.qrels"
[runs.bm25]
path = "runs/bm25.run"
[baselines]
dev = "baselines/dev.json"
[gate]
floor = {"ndcg@10" = 0.3}
max_drop = 0.02
alpha = 0.05
test = "permutation"
[history]
path = "hist/history.sqlite"
"""


def write_config(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "rankflavor.toml"
    p.write_text(text)
    return p


def test_a_full_config_reads_into_checked_values(tmp_path: Path) -> None:
    c = load_config(write_config(tmp_path, GOOD))
    assert c.name == "shop" and c.scale == "trec_dl"
    assert c.knobs == {"gain": "exp2", "ties": "averaged"}  # canonical values, as the knob table reads them
    # Names without a cutoff are crossed with the cutoffs (first seen first); RR takes an optional one.
    assert c.metric_texts == ("ndcg@10", "ndcg@5", "P@10", "P@5", "RR@10", "RR@5")
    assert c.datasets == {"dev": tmp_path / "data" / "dev.qrels"}  # relative to the file
    assert c.runs["bm25"].path == tmp_path / "runs" / "bm25.run" and c.dataset_of("bm25") == "dev"
    assert c.baselines == {"dev": tmp_path / "baselines" / "dev.json"}
    assert c.history_path == tmp_path / "hist" / "history.sqlite"
    assert c.gate.floor_for("ndcg@10") == 0.3 and c.gate.floor_for("P@10") is None
    assert c.gate.max_drop_for("P@5") == 0.02 and c.gate.test == "permutation"
    # The pinned measures: the trec_dl scale's rel=2 on P, exp2 gain on NDCG, averaged ties everywhere.
    by_name = {m.name: m for m in c.measures()}
    assert by_name["P@10"].flavor.rel == "2" and by_name["ndcg@10"].flavor.gain == "exp2"
    assert {str(m.flavor.ties) for m in by_name.values()} == {"averaged"}


@pytest.mark.parametrize(("text", "named"), [
    ("[projcet]\nname = 'x'\n", ["'projcet'", "valid keys: project, flavor", "Did you mean 'project'?"]),
    ("[project]\nscael = 'trec_dl'\n", ["'scael' (= \"trec_dl\")", "[project]", "Did you mean 'scale'?"]),
    ("[project]\nscale = 'trec-dl5'\n", ['[project] scale = "trec-dl5"', "trec_dl, msmarco, beir, ecommerce"]),
    ("[project]\npreset = 'beri'\n", ['"beri"', "beir", "Did you mean 'beir'?"]),
    ("[project]\nquestion = 'recall'\n", ['"recall"', "ranking, overall, coverage"]),
    ("[flavor]\ngain = 'exp3'\n", ['[flavor] gain = "exp3"', "linear, exp2, binary"]),
    ("[flavor]\ngian = 'exp2'\n", ["'gian' (= \"exp2\")", "[flavor]", "Did you mean 'gain'?"]),
    ("[flavor]\ndepth = 2.5\n", ["[flavor] depth = 2.5", "whole number"]),
    ("[flavor]\nties = true\n", ["[flavor] ties = True", "docno_desc"]),
    ("[metrics]\ncutoffs = [10]\n", ["[metrics] lacks its required key 'measures'"]),
    ("[metrics]\nmeasures = ['ndcg']\ncutoffs = [0]\n", ["[metrics] cutoffs = [0]", "whole numbers from 1 to 2**53"]),
    ("[metrics]\nmeasures = ['ndgc@10']\n", ["[metrics] measures", "unknown metric 'ndgc'", "ndcg"]),
    ("[metrics]\nmeasures = 'ndcg@10'\n", ['[metrics] measures = "ndcg@10"', "list of strings"]),
    ("[datasets.dev]\npath = 'x'\n", ["'path'", "[datasets.dev]", "valid keys: qrels"]),
    ("[datasets.dev]\nqrels = 'q'\n[runs.a]\npath = 'r'\ndataset = 'test'\n",
     ['[runs.a] dataset = "test"', "dev"]),
    ("[datasets.dev]\nqrels = 'q'\n[baselines]\ntest = 'b.json'\n", ["[baselines] test", "dev"]),
    ("[gate]\nmax_drop = -0.1\n", ["[gate] max_drop = -0.1", "[0, inf)"]),
    ("[gate]\nalpha = 1.5\n", ["[gate] alpha = 1.5", "(0, 1)"]),
    ("[gate]\ntest = 'ttest'\n", ['[gate] test = "ttest"', "t, permutation, bootstrap, wilcoxon, sign"]),
    ("[metrics]\nmeasures = ['ndcg@10']\n[gate]\nfloor = {'ndcg@5' = 0.1}\n",
     ["'ndcg@5'", "[gate] floor", "ndcg@10"]),
    ("[history]\npath = 3\n", ["[history] path = 3", "non-empty string"]),
    ("project = 3\n", ["[project] = 3", "a table"]),
])
def test_bad_keys_and_values_name_key_value_and_valid_ones(tmp_path: Path, text: str, named: list[str]) -> None:
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert message.startswith(str(path))
    for part in named:
        assert part in message, message
    assert err.value.exit_code == 2


def test_cli_config_errors_exit_2_naming_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN)
    write_config(tmp_path, "[flavor]\ngain = 'cubic'\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["eval", "q.txt", "r.txt"])
    assert result.exit_code == 2
    assert 'rankflavor.toml: [flavor] gain = "cubic"' in result.stderr and "linear, exp2, binary" in result.stderr
    missing = CliRunner().invoke(cli, ["eval", "q.txt", "r.txt", "--config", "nowhere.toml"])
    assert missing.exit_code == 2 and "--config nowhere.toml: no such file" in missing.stderr


def test_not_toml_is_a_config_error_with_the_line(tmp_path: Path) -> None:
    path = write_config(tmp_path, "[project]\nname = \"x\"\nscale = \n")
    with pytest.raises(ConfigError, match=r"not valid TOML \(.*line 3"):
        load_config(path)


def test_smuggled_code_is_only_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A YAML-style ``!!python`` tag is not TOML (a parse error); an ``__import__`` string is a string:
    a name kept as text, a knob value refused by the knob's reader, and nothing runs."""
    marker = tmp_path / "pwned"
    tag = write_config(tmp_path / "a", f"[project]\nname = !!python/object/apply:os.system ['touch {marker}']\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(tag)
    code = f"__import__('os').system('touch {marker}')"
    kept = load_config(write_config(tmp_path / "b", f'[project]\nname = "{code}"\n'))
    assert kept.name == code  # just text
    with pytest.raises(ConfigError, match=r"\[flavor\] gain = \"__import__.*valid values: linear"):
        load_config(write_config(tmp_path / "c", f'[flavor]\ngain = "{code}"\n'))
    with pytest.raises(ConfigError, match=r"\[project\] preset = \"__import__"):
        load_config(write_config(tmp_path / "d", f'[project]\npreset = "{code}"\n'))
    with pytest.raises(ConfigError, match=r"\[metrics\] measures"):
        load_config(write_config(tmp_path / "e", f'[metrics]\nmeasures = ["{code}"]\n'))
    # The name is printed, never run, by a command that reads the config.
    (tmp_path / "b" / "q.txt").write_text(QRELS)
    (tmp_path / "b" / "r.txt").write_text(RUN)
    monkeypatch.chdir(tmp_path / "b")
    result = CliRunner().invoke(cli, ["eval", "q.txt", "r.txt", "-m", "ndcg@10", "--wide"])
    assert result.exit_code == 0, result.output
    assert code in " ".join(result.stdout.split())  # (the note is wrapped at spaces; --wide: no word is cut)
    assert not marker.exists()


def test_found_from_the_working_directory_upward(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outer = write_config(tmp_path, "[project]\nname = 'outer'\n")
    inner = write_config(tmp_path / "a", "[project]\nname = 'inner'\n")
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert find_config(deep) == inner.resolve()
    assert find_config(tmp_path / "a" / "..") == outer.resolve()
    monkeypatch.chdir(deep)
    cfg = project_config()
    assert cfg is not None and cfg.name == "inner"
    explicit = project_config(str(outer))
    assert explicit is not None and explicit.name == "outer"


def test_eval_uses_the_pinned_flavor_and_flags_each_differing_knob(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN)
    write_config(tmp_path, "[project]\nscale = 'trec_dl'\n[flavor]\ngain = 'exp2'\n[metrics]\nmeasures = ['ndcg@3', "
                 "'P@3']\n[datasets.toy]\nqrels = 'q.txt'\n[runs.r]\npath = 'r.txt'\n")
    monkeypatch.chdir(tmp_path)
    pinned = CliRunner().invoke(cli, ["eval", "toy", "r", "--format", "csv"])  # names from the config
    assert pinned.exit_code == 0, pinned.output
    rows = [line.split(",")[0] for line in pinned.stdout.splitlines()[1:]]
    assert rows == ["ndcg@3", "P@3"]
    assert "gain=exp2" in pinned.stdout and "P@3[rel=2," in pinned.stdout
    assert f"rankflavor: config: {tmp_path / 'rankflavor.toml'}" in pinned.stderr
    assert "every measure is under the pinned flavor" in pinned.stderr
    # The same by hand, with no config: the numbers the pinned flavor must give.
    monkeypatch.chdir(ROOT)
    by_hand = CliRunner().invoke(cli, ["eval", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "ndcg@3",
                                       "-m", "P@3", "--scale", "trec_dl", "--flavor", "gain=exp2", "--format", "csv"])
    assert by_hand.stdout == pinned.stdout and "config" not in by_hand.stderr
    monkeypatch.chdir(tmp_path)
    other = CliRunner().invoke(cli, ["eval", "toy", "r", "--flavor", "gain=linear,ideal=local", "-m", "ndcg@3",
                                     "-m", "P@3", "-m", "AP"])
    assert other.exit_code == 0, other.output
    out = other.stdout
    assert "FLAVOR DIFFERS from the pinned one" in out
    assert re.search(r"ndcg@3: gain=linear \(pinned exp2\), ideal=local \(pinned global\)", out), out
    assert "P@3:" not in out  # P reads neither knob
    assert "not in the project's metric set: AP" in out
    preset = CliRunner().invoke(cli, ["eval", "toy", "r", "--preset", "sklearn", "-m", "ndcg@3"])
    assert "gain=linear (pinned exp2)" in preset.stdout and "ideal=local (pinned global)" in preset.stdout


def test_readme_schema_table_is_the_schema() -> None:
    readme = (ROOT / "README.md").read_text()
    assert schema_markdown() in readme


def test_the_pinned_measures_are_built_as_evaluate_builds_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A typed knob beside a scale (rel = 1 with trec_dl's rel 2): whatever precedence evaluate
    applies, the pinned measures follow it, so eval under the config flags nothing."""
    import rankflavor

    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN)
    write_config(tmp_path, "[project]\nscale = 'trec_dl'\n[flavor]\nrel = 1\n[metrics]\nmeasures = ['P@3', 'ERR@3']\n")
    config = load_config(tmp_path / "rankflavor.toml")
    evaluated = rankflavor.evaluate(str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), list(config.metric_texts),
                                    scale="trec_dl", rel=1)
    assert [str(m.measure) for m in evaluated] == [str(m) for m in config.measures()]
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["eval", "q.txt", "r.txt", "--format", "csv"])
    assert result.exit_code == 0 and "every measure is under the pinned flavor" in result.stderr
