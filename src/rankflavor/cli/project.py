"""The project commands: ``init`` (the flavor advisor), ``show`` (a results file in any format) and
``gate`` (CI), plus the part of ``eval`` that reads ``rankflavor.toml`` and writes results files.

Defined here and added to the group by :mod:`rankflavor.cli.main`; like it, this module imports only
click at module level, so that the command's process settings come before NumPy.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from rankflavor.cli.output import command_line, output_width, screen_options
from rankflavor.cli.vocabulary import RenamedChoice, deprecated_alias
from rankflavor.render import FORMATS

if TYPE_CHECKING:
    from rankflavor.engine.results import Results
    from rankflavor.project.config import Config

_CONFIG_HELP = "The rankflavor.toml to use (default: the nearest one from the working directory upward)."


def _named(value: str, names: dict[str, Any]) -> str | None:
    """``value`` as a name of the config (a dataset or run) when it is not an existing file."""
    return value if value in names and not os.path.exists(value) else None


@dataclass
class EvalProject:
    """What ``rankflavor eval`` takes from the config, and does with the results afterwards."""

    config: Config | None
    qrels: str
    run: str
    preset: str | None
    scale: str | None
    knobs: dict[str, Any]
    metrics: list[str] = field(default_factory=list)
    dataset: str | None = None
    run_name: str | None = None
    asked: list[str] = field(default_factory=list)

    def finish(self, results: Results, output: str | None, record: bool, history_db: str | None = None) -> Results:
        """The results with their provenance (project block; hashes, command and time when they
        are kept), written to ``output``, recorded when asked."""
        if self.config is None and output is None and not record:
            return results  # nothing to add or write
        from rankflavor.project.flagging import project_block
        from rankflavor.project.resultsfile import with_provenance, write_results

        block = None
        if self.config is not None:
            block = project_block(self.config, results, self.asked, dataset=self.dataset, run=self.run_name)
        keep = output is not None or record
        if keep:
            results = with_provenance(results, inputs={"qrels": self.qrels, "run": self.run}, command=command_line(),
                                      project=block)
        elif block is not None:
            results = with_provenance(results, project=block, stamp=False)
        if output is not None:
            write_results(output, results)
            click.echo(f"results written to {output}", err=True)
        if record:
            from rankflavor.project.hooks import record as record_results

            click.echo("rankflavor: " + record_results(self.config, results, dataset=self.dataset,
                                                       run=self.run_name, command=command_line(),
                                                       db_path=history_db), err=True)
        return results

    @staticmethod
    def note(results: Results, fmt: str) -> None:
        if "project" not in results.provenance:
            return  # (results of no project: nothing to note)
        from rankflavor.project.flagging import project_note

        out, err = project_note(results, fmt)
        if fmt == "table":  # sentences for a person: wrapped at the terminal's width
            from rankflavor.render.console import terminal_width
            from rankflavor.render.fit import wrap_lines

            width = output_width() or terminal_width()
            out, err = (wrap_lines(text, width) if text else text for text in (out, err))
        if out:
            click.echo(out, nl=False)
        if err:
            click.echo(err, nl=False, err=True)


def eval_project(config_path: str | None, qrels: str, run: str, metrics: list[str], preset: str | None,
                 knobs: dict[str, Any], scale: str | None) -> EvalProject:
    """``eval``'s inputs under the config: QRELS and RUN may name a dataset and a run of it; without
    ``-m`` the metric set is the project's; the pinned flavor (preset, ``[flavor]``, scale) applies
    unless the command sets its own (``--preset`` replaces the pinned preset and knobs; ``--flavor``
    knobs override single knobs), and :func:`rankflavor.project.flagging.project_block` then flags
    each knob that differs."""
    from rankflavor.project.locate import find_config

    found = config_path if config_path is not None else find_config()
    if found is None:  # no project: its reader is not even imported
        return EvalProject(None, qrels, run, preset, scale, knobs, asked=metrics)
    from rankflavor.project.config import project_config

    config = project_config(found)
    assert config is not None  # (a path given: loaded, or a ConfigError)
    config.require_file_or_name(qrels, "dataset")
    config.require_file_or_name(run, "run")
    dataset = _named(qrels, config.datasets)
    run_name = _named(run, config.runs)
    qrels_path = str(config.datasets[dataset]) if dataset else qrels
    run_path = str(config.runs[run_name].path) if run_name else run
    if run_name and dataset is None:  # a run name with a qrels path: its dataset when that is the file
        ds = config.dataset_of(run_name)
        dataset = ds if ds is not None and os.path.abspath(qrels) == str(config.datasets[ds]) else None
    if preset is None:
        preset, knobs = config.preset, {**config.knobs, **knobs}
    return EvalProject(config, qrels_path, run_path, preset, scale or config.scale, knobs,
                       [] if metrics else list(config.metric_texts), dataset, run_name, metrics)


# -- show -------------------------------------------------------------------------------------------

@click.command("show")
@click.argument("results_file", type=click.Path(dir_okay=False), metavar="RESULTS.json")
@click.option("-q", "per_query", is_flag=True, help="Per-query values as well as the summary.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table",
              show_default=True, help="As `rankflavor eval --format`: the same output, byte for byte.")
@screen_options
def show_cmd(results_file: str, per_query: bool, fmt: str) -> None:
    """Print a results file (`rankflavor eval ... -o RESULTS.json`) in any format, as eval printed it."""
    from rankflavor.project.resultsfile import read_results
    from rankflavor.render import render

    results = read_results(results_file)
    click.echo(render(results, fmt, per_query, output_width()), nl=False)
    EvalProject.note(results, fmt)


# -- init -------------------------------------------------------------------------------------------

@click.command("init")
@screen_options
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--question", type=click.Choice(("ranking", "overall", "coverage")), default=None,
              help="ranking: quality of what was returned (local ideal); overall: performance including recall "
              "(global ideal; the default); coverage: how much of the relevant set is found (global ideal, not cut).")
@click.option("--preset", "match", default=None, metavar="NAME",
              help="Pin a benchmark's or tool's flavor (beir, trec_dl, msmarco, ...; `rankflavor flavors --presets`) "
              "so the numbers compare with its leaderboard; the advisor still warns where the data disagrees.")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True,
              help="The cutoff the advice is for (coverage of the runs' top k).")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), default="rankflavor.toml",
              show_default=True, help="The config file to write.")
@click.option("--force", is_flag=True, help="Overwrite an existing config file.")
@click.option("--dry-run", is_flag=True, help="Print the advice and the config; write nothing.")
@deprecated_alias("--match", "--preset", "match")
def init_cmd(qrels: str, runs: tuple[str, ...], question: str | None, match: str | None, k: int, output: str,
             force: bool, dry_run: bool) -> None:
    """Recommend a flavor for QRELS (and RUNs): one reason per knob, warnings, and a rankflavor.toml."""
    from rankflavor.errors import UsageError
    from rankflavor.project.advisor import advise

    if not dry_run and os.path.exists(output) and not force:
        raise UsageError(f"{output} exists; pass --force to overwrite it, or -o another file")
    advice = advise(qrels, list(runs), question=question, match=match, k=k)
    from rankflavor.render.console import terminal_width
    from rankflavor.render.fit import wrap_lines

    click.echo(wrap_lines(advice.render(), output_width() or terminal_width()), nl=False)  # (the config is not wrapped)
    text = advice.toml(config_dir=os.path.dirname(os.path.abspath(output)))
    if dry_run:
        click.echo("\n" + text, nl=False)
        return
    with open(output, "w", encoding="utf-8") as f:
        f.write(text)
    click.echo(f"config written to {output}", err=True)


# -- gate -------------------------------------------------------------------------------------------

@click.command("gate")
@click.argument("runs", nargs=-1, type=str, metavar="[RUN]...")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, help=_CONFIG_HELP)
@click.option("--baseline-results", "baseline", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="The baseline's results file, as `eval -o` writes it (default: the config's [baselines] entry of "
              "the run's dataset).")
@click.option("--dataset", "dataset", default=None, metavar="NAME",
              help="The dataset of RUNs given as paths (default: the config's only dataset).")
@click.option("--record", is_flag=True, help="Append each run's results to the config's history database.")
@click.option("--format", "fmt", type=RenamedChoice(("table", "json", "md"), {"text": "table"}, "--format"),
              default="table", show_default=True,
              help="table: one line per check; json: every check with its numbers; md: Markdown (a CI job summary).")
@click.option("--github", "github", is_flag=True,
              help="For GitHub Actions: print the output between ::stop-commands:: markers (a name in it cannot act "
              "as a workflow command), then one ::error:: annotation per failed check and one ::warning:: per "
              "check whose mean fell below the baseline's; append the Markdown summary to the file "
              "$GITHUB_STEP_SUMMARY names (when set).")
@deprecated_alias("--baseline", "--baseline-results", "baseline", type=click.Path(dir_okay=False))
@screen_options
def gate_cmd(runs: tuple[str, ...], config_path: str | None, baseline: str | None, dataset: str | None, record: bool,
             fmt: str, github: bool = False) -> None:
    """Evaluate RUNs (names in rankflavor.toml, or paths; default: every run it names) under the pinned
    flavor and check the config's thresholds against the baseline. Exit 0 passed, 1 failed,
    2 usage or config error (a baseline of another flavor among them), 3 input error (a missing file)."""
    from rankflavor.errors import UsageError
    from rankflavor.project.config import project_config
    from rankflavor.project.gate import gate

    config = project_config(config_path)
    if config is None:
        raise UsageError("gate: no rankflavor.toml in the working directory or above it; pass --config or run "
                         "`rankflavor init QRELS RUN`")
    result = gate(config, list(runs), baseline=baseline, dataset=dataset, command=command_line())
    if record:
        from rankflavor.project.hooks import record as record_results

        for check in result.runs:
            click.echo("rankflavor: " + record_results(config, check.results, dataset=check.dataset, run=check.run,
                                                       command=command_line()), err=True)
    from rankflavor.render.gatefmt import render_gate

    text = render_gate(result, fmt, output_width())
    if github:
        # Workflow commands are off while the gate's own output is printed: a name in it (a run's
        # file name) could otherwise start a line with "::" and be read as a command of its own.
        import secrets

        token = secrets.token_hex(16)
        click.echo(f"::stop-commands::{token}")
        click.echo(text, nl=False)
        click.echo(f"::{token}::")
        _github(result)
    else:
        click.echo(text, nl=False)
    sys.exit(0 if result.passed else 1)


def _github(result: Any) -> None:
    """``gate --github``: the annotations on stdout (where the runner reads workflow commands), the
    Markdown appended to $GITHUB_STEP_SUMMARY (GitHub appends each step's; unset: not written)."""
    from rankflavor.render.gatefmt import github_annotations, render_gate_md

    config = os.path.abspath(str(result.config.path))
    inside = not os.path.relpath(config).startswith("..")
    for line in github_annotations(result, os.path.relpath(config) if inside else None):
        click.echo(line)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as f:
                f.write(render_gate_md(result) + "\n")
        except OSError as exc:
            from rankflavor.errors import InputError

            raise InputError(summary, None, f"cannot append the job summary to $GITHUB_STEP_SUMMARY: "
                             f"{exc.strerror}") from None


COMMANDS = (show_cmd, init_cmd, gate_cmd)

__all__ = ["COMMANDS", "EvalProject", "eval_project"]
