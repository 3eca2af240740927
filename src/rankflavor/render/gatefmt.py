"""Render a :class:`rankflavor.project.gate.GateResult`: for the terminal at its width (one line a
check: ``PASS``/``FAIL``, measure, check, the sentence saying why, continued under the sentence
when it is longer than the line); JSON, the result's own (``GateResult.render("json")``);
Markdown, a CI job summary (:func:`render_gate_md`); and GitHub Actions annotations, one
workflow command a failed or dropped check (:func:`github_annotations`).

Names in a gate (datasets, runs, paths, measures) are untrusted: Markdown cells are escaped
(:func:`rankflavor.render.md.md_text`), and annotation properties and messages are escaped as
GitHub's runner reads them (:func:`workflow_command`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from rankflavor.engine.results import Results

# What these renderers read of a gate, so that render/ (below project/) never imports project.gate:
# rankflavor.project.gate's Check, RunGate and GateResult (and its Config) have these attributes.


class GateCheck(Protocol):
    """One threshold of one measure on one run (:class:`rankflavor.project.gate.Check`)."""

    @property
    def dataset(self) -> str: ...
    @property
    def run(self) -> str: ...
    @property
    def measure(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def passed(self) -> bool: ...
    @property
    def reason(self) -> str: ...
    @property
    def value(self) -> float: ...
    @property
    def baseline(self) -> float | None: ...
    @property
    def threshold(self) -> float | None: ...
    @property
    def pvalue(self) -> float | None: ...


class GateRun(Protocol):
    """One run evaluated on one dataset, with its checks (:class:`rankflavor.project.gate.RunGate`)."""

    @property
    def dataset(self) -> str: ...
    @property
    def run(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def baseline(self) -> str | None: ...
    @property
    def results(self) -> Results: ...
    @property
    def checks(self) -> Sequence[GateCheck]: ...


class GateConfig(Protocol):
    """The config a gate read (:class:`rankflavor.project.config.Config`): its file and pinned flavor."""

    @property
    def path(self) -> Path: ...
    def flavor_text(self) -> str: ...


class Gate(Protocol):
    """A gate's result (:class:`rankflavor.project.gate.GateResult`)."""

    @property
    def config(self) -> GateConfig: ...
    @property
    def runs(self) -> Sequence[GateRun]: ...
    @property
    def checks(self) -> Sequence[GateCheck]: ...
    def render(self, fmt: str = ...) -> str: ...


def render_gate(result: Gate, fmt: str = "table", width: int | None = None) -> str:
    """``table`` (text, ``width`` columns; default the terminal's), ``json`` or ``md``."""
    if fmt == "json":
        return result.render("json")
    if fmt == "md":
        return render_gate_md(result)
    from rankflavor.render.console import terminal_width
    from rankflavor.render.fit import printable, wrap

    width = width or terminal_width()
    def one_line(name: str) -> str:  # an untrusted name: a line break in it shows as \n
        return name.replace("\r", "\\r").replace("\n", "\\n")

    lines = wrap(printable(f"gate: config {one_line(str(result.config.path))}; pinned flavor: "
                           f"{result.config.flavor_text()}"), width)
    for r in result.runs:
        base = f"baseline {one_line(r.baseline)}" if r.baseline else "no baseline"
        lines += wrap(printable(f"dataset {one_line(r.dataset)}, run {one_line(r.run)} ({one_line(r.path)}), {base}"),
                      width)
        name_w = max((len(c.measure) for c in r.checks), default=0)
        lead = 2 + 4 + 2 + name_w + 2 + 12 + 1  # where the sentence starts
        for c in r.checks:
            head = f"  {'PASS' if c.passed else 'FAIL'}  {c.measure:<{name_w}}  {c.kind:<12} "
            hang = " " * lead if width - lead >= 30 else "      "
            lines += wrap(printable(head + c.reason), width, "", hang)
    failed = [c for c in result.checks if not c.passed]
    if failed:
        which = "; ".join(f"{c.measure} on {one_line(c.dataset)}/{one_line(c.run)}: {c.kind}" for c in failed)
        lines += wrap(printable(f"gate FAILED: {len(failed)} of {len(result.checks)} checks failed ({which})"), width)
    else:
        lines.append(f"gate passed: {len(result.checks)} checks")
    return "\n".join(lines) + "\n"


def _num(x: float | None, digits: int = 4) -> str:
    import math

    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x:.{digits}f}"


def render_gate_md(result: Gate) -> str:
    """The gate as GitHub-flavored Markdown (a job summary): verdict, config and pinned flavor; per
    run a table of its checks (value, baseline and threshold to 4 decimals, p to 4 significant
    digits, the sentence saying why) and each measure's canonical flavor; then the verdict line
    the text output ends with."""
    from rankflavor.render.md import md_code, md_text

    failed = [c for c in result.checks if not c.passed]
    verdict = "FAILED" if failed else "passed"
    lines = [f"## rankflavor gate {verdict}", "",
             f"Config {md_code(str(result.config.path))}; pinned flavor: {md_code(result.config.flavor_text())}"]
    for r in result.runs:
        base = f"baseline {md_code(r.baseline)}" if r.baseline else "no baseline"
        lines += ["", f"### {md_text(r.dataset)} / {md_text(r.run)}", "", f"Run {md_code(r.path)}, {base}", "",
                  "| result | measure | check | value | baseline | threshold | p | why |",
                  "|---|---|---|---:|---:|---:|---:|---|"]
        for c in r.checks:
            mark = "PASS" if c.passed else "**FAIL**"
            p = "" if c.pvalue is None else f"{c.pvalue:.4g}"
            lines.append(f"| {mark} | {md_text(c.measure)} | {c.kind} | {_num(c.value)} | {_num(c.baseline)} | "
                         f"{_num(c.threshold)} | {p} | {md_text(c.reason)} |")
        flavors = [str(m.measure) for m in r.results.measures]
        if flavors:
            lines += ["", "Flavors: " + ", ".join(md_code(f) for f in flavors)]
    lines.append("")
    if failed:
        which = "; ".join(f"{c.measure} on {c.dataset}/{c.run}: {c.kind}" for c in failed)
        lines.append(md_text(f"gate FAILED: {len(failed)} of {len(result.checks)} checks failed ({which})"))
    else:
        lines.append(f"gate passed: {len(result.checks)} checks")
    return "\n".join(lines) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(command: str, message: str, **properties: str | None) -> str:
    """One GitHub Actions workflow command line: ``::command key=value,...::message``.

    As GitHub's runner reads them (actions/toolkit, packages/core/src/command.ts: escapeData and
    escapeProperty): in the message ``%``, CR and LF are escaped as ``%25``, ``%0D``, ``%0A``;
    in a property value ``:`` and ``,`` too (``%3A``, ``%2C``), so that an untrusted name can
    neither end the property list nor start a command of its own line. Empty properties are
    left out, as the toolkit leaves them.

    >>> workflow_command("error", "AP fell 5%", title="run a,b: x")
    '::error title=run a%2Cb%3A x::AP fell 5%25'
    """
    props = ",".join(f"{k}={_escape_property(v)}" for k, v in properties.items() if v)
    return f"::{command}{' ' + props if props else ''}::{_escape_data(message)}"


def github_annotations(result: Gate, config_file: str | None = None) -> list[str]:
    """One annotation a check that regressed: ``::error`` for a failed check, ``::warning`` for a
    passed check whose mean fell below the baseline's (within the allowed drop, or not
    significantly). ``config_file`` (a path relative to the repository) is the file the
    annotations point at."""
    out = []
    for c in result.checks:
        dropped = c.baseline is not None and c.value < c.baseline
        if c.passed and not dropped:
            continue
        title = f"rankflavor gate: {c.measure} {c.kind} on {c.dataset}/{c.run}"
        message = f"{'FAIL' if not c.passed else 'dropped'}: {c.measure} on {c.dataset}/{c.run}: {c.reason}"
        out.append(workflow_command("error" if not c.passed else "warning", message, file=config_file, title=title))
    return out


__all__ = ["github_annotations", "render_gate", "render_gate_md", "workflow_command"]
