"""What a command imports: only what it uses (issue 33, start-up).

Each case runs the command in a fresh interpreter (``sys.modules`` of this test process is full of
everything the suite imported) and reads which heavy packages the command left loaded. pandas is
the costly surprise: pyarrow imports it (about a third of a second) the first time a Python value
or list is converted (``pa.array([...])``, ``pa.scalar``, ``fill_null(False)``, ``np.asarray`` of
an Arrow array), and no command but those that return DataFrames needs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from rankflavor.cli.main import LAZY_COMMANDS, cli

HEAVY = ("numpy", "pyarrow", "pandas", "scipy", "sqlite3", *(f"rankflavor.cli.{m}" for m in set(LAZY_COMMANDS.values())))

PROBE = f"""
import json, sys
from rankflavor.cli.main import cli
try:
    cli(args=sys.argv[1:], prog_name="rankflavor", standalone_mode=False)
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(json.dumps({{"code": code, "loaded": [m for m in {HEAVY!r} if m in sys.modules]}}), file=sys.stderr)
"""


def loaded_by(*args: str, watched: tuple[str, ...] = HEAVY, cwd: Path | None = None) -> set[str]:
    probe = PROBE.replace(repr(HEAVY), repr(watched))
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=120, cwd=cwd)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] in (0, None, 1), (args, done.stderr[-2000:])  # check exits 1 on warnings
    return set(report["loaded"])


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    folder = tmp_path_factory.mktemp("startup")
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    qrels.write_text("".join(f"q{q} 0 d{d} {(q + d) % 4}\n" for q in range(6) for d in range(8)))
    run.write_text("".join(f"q{q} Q0 d{d} {d + 1} {round(1 - d / 10, 1)} r\n" for q in range(6) for d in range(0, 12, 1)))
    return str(qrels), str(run)


def test_version_imports_no_command_and_no_numpy() -> None:
    assert loaded_by("--version") == set()


def test_flavors_needs_the_metric_registry_but_no_arrow() -> None:
    # The metric table is read from the registry, whose declarations sit beside their NumPy kernels.
    assert loaded_by("flavors") & {"pyarrow", "pandas", "scipy", "sqlite3"} == set()


@pytest.mark.parametrize("command", [
    ["check"], ["eval"], ["eval", "--format", "json", "-q"], ["eval", "-m", "P@10", "--flavor", "unjudged=condensed"],
    ["spread"], ["identify", "--value", "0.5"], ["judgments", "--scale", "trec_dl"],
    ["explain", "-Q", "q1"], ["diff", "-", "ndcg@10", "ndcg@10[gain=linear]"],
])  # fmt: skip
def test_commands_on_files_do_not_import_pandas(files: tuple[str, str], command: list[str]) -> None:
    qrels, run = files
    args = [command[0], qrels, run, *command[1:]]
    if command[0] == "diff":
        args = ["diff", qrels, run, *command[2:]]
    loaded = loaded_by(*args)
    assert "pandas" not in loaded and "sqlite3" not in loaded, (command, loaded)
    own = {f"rankflavor.cli.{LAZY_COMMANDS[command[0]]}"} if command[0] in LAZY_COMMANDS else set()
    own |= {"rankflavor.cli.project"} if command[0] == "eval" else set()  # eval reads rankflavor.toml
    assert {m for m in loaded if m.startswith("rankflavor.cli.")} == own, (command, loaded)


#: What ``eval`` of small text files outside any project has no use for: the project's config
#: reader and the results-file writer (no rankflavor.toml, no ``-o``), the ir_datasets reader (no
#: ``irds:`` name), hashlib (no id of over 256 bytes), html (no notebook), pyarrow.compute (NumPy
#: reads a small file's integer docnos, MS MARCO's kind, and codes them: ``cli-small`` of
#: bench/readme.py; text docnos are dictionary-encoded by pyarrow.compute).
NOT_FOR_SMALL_EVAL = ("rankflavor.project.config", "rankflavor.project.flagging", "rankflavor.project.resultsfile",
                      "rankflavor.io.irds", "hashlib", "html", "pyarrow.compute")


def test_eval_of_small_files_outside_a_project_imports_only_what_it_uses(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"{q} 0 {d * 7919} {(q + d) % 4}\n" for q in range(6) for d in range(8)))
    run.write_text("".join(f"{q} Q0 {d * 7919} {d + 1} {round(1 - d / 10, 1)} r\n" for q in range(6) for d in range(12)))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    assert loaded_by("eval", str(qrels), str(run), "-m", "ndcg_cut.10", "--preset", "trec_eval", "--format", "json",
                     "-q", watched=NOT_FOR_SMALL_EVAL, cwd=outside) == set()
    # inside a project the config is read (and its flavor named after the output)
    (outside / "rankflavor.toml").write_text('[flavor]\ngain = "exp2"\n')
    assert "rankflavor.project.config" in loaded_by("eval", str(qrels), str(run), "-m", "ndcg@10",
                                                    watched=NOT_FOR_SMALL_EVAL, cwd=outside)


def test_every_lazy_command_is_registered_under_its_name() -> None:
    ctx = click.Context(cli)
    names = cli.list_commands(ctx)
    assert set(LAZY_COMMANDS) <= set(names)
    for name in names:
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name, name
    assert cli.get_command(ctx, "no-such-command") is None


def test_help_lists_the_lazy_commands_with_their_summaries() -> None:
    out = CliRunner().invoke(cli, ["--help"], env={"COLUMNS": "200"}).output
    commands = out.split("Commands:", 1)[1]
    for name in LAZY_COMMANDS:
        line = next((ln for ln in commands.splitlines() if ln.split()[:1] == [name]), None)
        assert line is not None and len(line.split()) > 1, (name, commands)


def test_an_unknown_command_is_a_usage_error_naming_it() -> None:
    result = CliRunner().invoke(cli, ["judgment"])
    assert result.exit_code == 2 and "No such command 'judgment'" in result.output


def test_a_lazy_command_runs_from_the_command_line(files: tuple[str, str], tmp_path: Path) -> None:
    qrels, run = files
    result = CliRunner().invoke(cli, ["pool", "--qrels", qrels, run, "-k", "10", "--scale", "trec_dl"])
    assert result.exit_code == 0, result.output
    # d8 and d9 are in the top 10 of every query and judged for none: 2 x 6 pairs to judge
    assert sorted(tuple(line.split()[:3]) for line in result.stdout.splitlines()) == sorted(
        (f"q{q}", "0", f"d{d}") for q in range(6) for d in (8, 9)), result.stdout
