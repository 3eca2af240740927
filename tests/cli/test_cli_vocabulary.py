"""One option vocabulary (issue 34): an option name means one thing in every subcommand that has it,
and each renamed spelling still works for one release, warning on standard error.

The table :data:`MEANINGS` says what each shared name means; the walk reads every subcommand's
click parameters (the ``cli`` group and the commands other modules add to it) and checks each
option against it: the type family and a word every help text of that name carries. A name used
by two commands and missing from the table fails the walk, so a new clash cannot slip in."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from rankflavor.cli.inputs import FORMAT_NAMES
from rankflavor.cli.judgments import RATINGS_FORMATS
from rankflavor.cli.main import cli

#: Every subcommand, those registered lazily (``rankflavor.cli.main.LAZY_COMMANDS``) included.
COMMANDS: dict[str, click.Command] = {
    name: command for name in cli.list_commands(click.Context(cli))
    if (command := cli.get_command(click.Context(cli), name)) is not None
}  # fmt: skip

OUTPUT_FORMATS = {"table", "json", "csv", "trec", "md", "latex", "quepid"}

# name -> (meaning, type family, a word each help text has (lower case), metavar or None)
MEANINGS: dict[str, tuple[str, str, str, str | None]] = {
    "-m": ("the measure (canonical, dialect or PRESET:NAME)", "text", "measure", None),
    "--metric": ("the measure (canonical, dialect or PRESET:NAME)", "text", "measure", None),
    "--preset": ("a tool's or benchmark's flavor, by preset name", "text", "flavor", "NAME"),
    "--flavor": ("one knob of the flavor, KNOB=VALUE", "text", "knob", "KNOB=VALUE"),
    "--scale": ("a label scale: trec_dl, msmarco, beir, ecommerce", "text", "scale", "NAME"),
    "--format": ("the output format", "output-choice", "", None),
    "--qrels-format": ("the format of the judgments read", "input-choice", "format of qrels", None),
    "--run-format": ("the format of the runs read", "input-choice", "format of the run", None),
    "--ratings-format": ("the format of the ratings read", "input-choice", "format of ratings", None),
    "--columns": ("column names of tabular inputs", "text", "column names", "ROLE=NAME,..."),
    "--labels": ("which judgments to evaluate, by the kind of their label source", "text", "label source",
                 "any|human|llm|clicks|prefer=KIND"),
    "--label-source": ("the label source of judgments that name none, or a renaming of those they name", "text",
                       "label source", "SOURCE|NAME=SOURCE,..."),
    "--html": ("also write the HTML report to FILE", "path", "also write the html report", "FILE"),
    "-o": ("the file the command writes", "path", "", None),
    "--output": ("the file the command writes", "path", "", None),
    "-q": ("per-query values too", "flag", "per-query", None),
    "-k": ("the cutoff K", "int", "cutoff", None),
    "--seed": ("the seed of the random choices", "int", "seed", None),
    "--alpha": ("the error level: tests at significance alpha, intervals at 1 - alpha", "float", "level", None),
    "--resamples": ("the number of resamples (bootstrap, permutations)", "int", "resamples", None),
    "--include-defects": ("count the defect presets in the summaries", "flag", "defect", None),
    "--config": ("the rankflavor.toml", "path", "rankflavor.toml", None),
    "--record": ("append the results to the history database", "flag", "history", None),
    "--history-db": ("the history database", "path", "history database", "PATH"),
    "--dataset": ("a dataset's name", "text", "dataset", None),
    "--force": ("go ahead where the command would refuse", "flag", "", None),
    "--wide": ("lay the text out wide whatever the terminal's width", "flag", "wide", None),
    "--quiet": ("no progress bars", "flag", "progress", None),
    "--dry-run": ("say what would be done; write (or ask) nothing", "flag", "nothing", None),
    "--engine": ("where the evaluation runs: local or spark", "choice", "spark", None),
    "--spark-master": ("the Spark master of --engine spark", "text", "spark master", "URL"),
    "--spark-conf": ("a Spark setting of --engine spark", "text", "spark setting", "KEY=VALUE"),
}

# The old spellings: never a visible option of any command again.
RENAMED = {("diff", "--scale"): "--deltas", ("gate", "--baseline"): "--baseline-results",
           ("convert", "--from"): "--in-format", ("convert", "--to"): "--out-format",
           ("raters", "--input-format"): "--ratings-format", ("aggregate", "--input-format"): "--ratings-format",
           ("pool", "--depth"): "--cutoff", ("init", "--match"): "--preset"}


def family(p: click.Option) -> str:
    t = p.type
    if p.is_flag:
        return "flag"
    if isinstance(t, click.Choice):
        choices = {str(c) for c in t.choices}
        if choices <= set(FORMAT_NAMES) | set(RATINGS_FORMATS) and "auto" in choices:
            return "input-choice"
        if choices <= OUTPUT_FORMATS:
            return "output-choice"
        return "choice"
    if isinstance(t, click.Path):
        return "path"
    if isinstance(t, (click.types.IntParamType, click.IntRange)):
        return "int"
    if isinstance(t, click.types.FloatParamType):
        return "float"
    return "text"


def visible_options() -> dict[str, list[tuple[str, click.Option]]]:
    by_name: dict[str, list[tuple[str, click.Option]]] = defaultdict(list)
    for command_name, command in COMMANDS.items():
        for p in command.params:
            if isinstance(p, click.Option) and not p.hidden:
                for opt in (*p.opts, *p.secondary_opts):
                    by_name[opt].append((command_name, p))
    return by_name


def test_the_walk_sees_every_subcommand() -> None:
    assert {"eval", "spread", "explain", "diff", "identify", "report", "judgments", "pool", "raters", "aggregate",
            "history", "compare", "show", "init", "gate", "check", "convert", "flavors", "demo"} <= set(COMMANDS)


def test_each_shared_name_has_one_meaning() -> None:
    clashes = []
    for name, uses in sorted(visible_options().items()):
        if len({c for c, _ in uses}) < 2 or name in ("-h", "--help"):
            continue
        if name not in MEANINGS:
            clashes.append(f"{name} is used by {sorted({c for c, _ in uses})} and the vocabulary table does not say "
                           "what it means")
            continue
        _, fam, word, metavar = MEANINGS[name]
        for command, p in uses:
            if family(p) != fam:
                clashes.append(f"{command} {name}: a {family(p)} option, where {name} is a {fam} everywhere")
            if word and word not in (p.help or "").lower():
                clashes.append(f"{command} {name}: help {p.help!r} does not say {word!r}")
            if metavar and p.metavar not in (None, metavar):
                clashes.append(f"{command} {name}: metavar {p.metavar}, {metavar} elsewhere")
    assert not clashes, "\n".join(clashes)


def test_input_formats_are_named_by_their_input() -> None:
    """Every option choosing the format of a file read is ``--<input>-format`` and offers ``auto``;
    ``--format`` is always the output's."""
    for name, uses in visible_options().items():
        for command, p in uses:
            if family(p) == "input-choice":
                assert name.endswith("-format") and name != "--format", (command, name)
                assert p.default == "auto", (command, name)
            if name == "--format":
                assert family(p) == "output-choice" and "text" not in p.type.choices, (command, p.type)  # type: ignore[attr-defined]


def test_old_spellings_are_hidden() -> None:
    for (command, old), new in RENAMED.items():
        params = COMMANDS[command].params
        visible = {o for p in params if isinstance(p, click.Option) and not p.hidden for o in (*p.opts, *p.secondary_opts)}
        assert old not in visible and new in visible, (command, old, new)
        assert old not in COMMANDS[command].get_help(click.Context(COMMANDS[command])).split()


def test_label_scale_means_one_thing() -> None:
    """``--scale`` names a label scale in every command that has it (``diff``'s value|mean is ``--deltas``)."""
    for command, p in visible_options()["--scale"]:
        assert not isinstance(p.type, click.Choice), command
        assert any(s in (p.help or "") for s in ("trec_dl", "Label scale", "label scale")), (command, p.help)


# --- the deprecated aliases still work, and warn -----------------------------------------------------

QRELS = "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq2 0 a 1\nq2 0 d 3\n"
RUN_A = "q1 Q0 a 1 3.0 A\nq1 Q0 b 2 2.0 A\nq1 Q0 x 3 1.0 A\nq2 Q0 d 1 2.0 A\nq2 Q0 y 2 1.0 A\n"
RUN_B = "q1 Q0 c 1 3.0 B\nq1 Q0 a 2 2.0 B\nq2 Q0 y 1 2.0 B\nq2 Q0 a 2 1.0 B\nq2 Q0 d 3 0.5 B\n"
RATINGS = "q1 0 a 1 r1\nq1 0 a 2 r2\nq1 0 b 0 r1\nq1 0 b 0 r2\nq2 0 a 3 r1\nq2 0 a 2 r2\n"


@pytest.fixture()
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in {"q.txt": QRELS, "a.run": RUN_A, "b.run": RUN_B, "ratings.txt": RATINGS}.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args: str) -> click.testing.Result:
    return CliRunner().invoke(cli, list(args))


def warned(result: click.testing.Result, old: str, new: str) -> bool:
    return f"rankflavor: warning: {old} is deprecated and will be removed in the next release; use {new}" in result.stderr


ALIASES = [
    # (old spelling, new spelling, the old's warning names, the new's)
    (["diff", "q.txt", "a.run", "ndcg@10", "ndcg@10[gain=exp2]", "--scale", "mean"],
     ["diff", "q.txt", "a.run", "ndcg@10", "ndcg@10[gain=exp2]", "--deltas", "mean"], "--scale", "--deltas"),
    (["convert", "a.run", "a.tsv", "--from", "trec", "--to", "msmarco", "--lossy"],
     ["convert", "a.run", "a.tsv", "--in-format", "trec", "--out-format", "msmarco", "--lossy"], "--from", "--in-format"),
    (["raters", "ratings.txt", "--input-format", "trec", "--format", "json"],
     ["raters", "ratings.txt", "--ratings-format", "trec", "--format", "json"], "--input-format", "--ratings-format"),
    (["aggregate", "ratings.txt", "--rule", "max", "--input-format", "trec"],
     ["aggregate", "ratings.txt", "--rule", "max", "--ratings-format", "trec"], "--input-format", "--ratings-format"),
    (["pool", "a.run", "b.run", "--depth", "1", "--format", "csv"],
     ["pool", "a.run", "b.run", "-k", "1", "--format", "csv"], "--depth", "-k/--cutoff"),
    (["init", "q.txt", "a.run", "--match", "beir", "--dry-run"],
     ["init", "q.txt", "a.run", "--preset", "beir", "--dry-run"], "--match", "--preset"),
]


@pytest.mark.parametrize(("old", "new", "old_name", "new_name"), ALIASES, ids=[a[0][0] + a[2] for a in ALIASES])
def test_deprecated_alias_works_and_warns(files: Path, old: list[str], new: list[str], old_name: str,
                                          new_name: str) -> None:
    before = invoke(*old)
    out_old = before.stdout
    after = invoke(*new)
    assert before.exit_code == after.exit_code == 0, (before.output, after.output)
    assert warned(before, old_name, new_name), before.stderr
    assert "deprecated" not in after.stderr
    assert out_old == after.stdout  # the old spelling does exactly what the new one does
    if old[0] == "convert":
        assert warned(before, "--to", "--out-format")


def test_convert_old_spelling_writes_the_same_file(files: Path) -> None:
    assert invoke("convert", "a.run", "old.json", "--from", "trec").exit_code == 0
    assert invoke("convert", "a.run", "new.json", "--in-format", "trec").exit_code == 0
    assert (files / "old.json").read_text() == (files / "new.json").read_text()


def test_diff_scale_of_labels_is_refused_with_the_next_step(files: Path) -> None:
    r = invoke("diff", "q.txt", "a.run", "ndcg@10", "ndcg@10[gain=exp2]", "--scale", "trec_dl")
    assert r.exit_code == 2
    assert "diff takes no label scale (--scale trec_dl)" in r.stderr
    assert "--scale value|mean is the old spelling of --deltas value|mean" in r.stderr


def test_old_and_new_spelling_together_is_a_usage_error(files: Path) -> None:
    r = invoke("init", "q.txt", "--match", "beir", "--preset", "trec_dl", "--dry-run")
    assert r.exit_code == 2 and "--match is the old name of --preset; give only --preset" in r.stderr


def gate_project(root: Path) -> None:
    (root / "rankflavor.toml").write_text(
        "[project]\nname = 't'\n[metrics]\nmeasures = ['ndcg@10']\n[datasets.t]\nqrels = 'q.txt'\n"
        "[runs.a]\npath = 'a.run'\n[runs.b]\npath = 'b.run'\n[gate]\nfloor = 0.0\nmax_drop = 1.0\n")
    assert invoke("eval", "t", "a", "-o", "base.json").exit_code == 0


def test_gate_old_spellings(files: Path) -> None:
    gate_project(files)
    new = invoke("gate", "b", "--baseline-results", "base.json", "--format", "table")
    old = invoke("gate", "b", "--baseline", "base.json", "--format", "text")
    assert new.exit_code == old.exit_code == 0, new.output
    assert warned(old, "--baseline", "--baseline-results") and warned(old, "--format text", "--format table")
    assert "deprecated" not in new.stderr
    assert old.stdout == new.stdout and "baseline base.json" in " ".join(new.stdout.split())  # (wrapped at the width)
    as_json = json.loads(invoke("gate", "b", "--baseline-results", "base.json", "--format", "json").stdout)
    assert as_json["passed"] is True


def test_spread_writes_html(files: Path) -> None:
    r = invoke("spread", "q.txt", "a.run", "b.run", "--no-presets", "--vary", "gain=linear,exp2", "--html", "s.html")
    assert r.exit_code == 0, r.output
    assert "report written to s.html" in r.stderr
    html = (files / "s.html").read_text()
    assert "<html" in html and "spread of ndcg" in html


def test_every_help_renders_without_an_old_spelling() -> None:
    """Each subcommand's ``--help`` (what a person reads) shows only current spellings."""
    old_of = defaultdict(set)
    for (command, old), _ in RENAMED.items():
        old_of[command].add(old)
    for name in COMMANDS:
        r = CliRunner().invoke(cli, [name, "--help"], env={"COLUMNS": "200"})
        assert r.exit_code == 0, (name, r.output)
        words = set(r.stdout.replace(",", " ").split())
        assert not (old_of[name] & words), (name, old_of[name] & words)
        if name == "gate":
            assert "[table|json|md]" in r.stdout
