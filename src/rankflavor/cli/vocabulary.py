"""One option vocabulary across the subcommands, and the old spellings kept for one release.

The rule (README, section "Command line: one vocabulary"): an option name means one thing in
every command that has it. Where two commands used one name for two things, or two names for one
thing, one of them was renamed; the old spelling still works for one release as a hidden,
deprecated alias that prints a warning to standard error and then does what the new name does:

=====================  =====================  ==================================================
old spelling           new spelling           why
=====================  =====================  ==================================================
``diff --scale value`` ``diff --deltas value`` ``--scale`` is a label scale everywhere else
``gate --baseline``    ``--baseline-results``  ``--baseline`` is a run in ``compare``
``convert --from/-to`` ``--in-format/...``     every input format is ``--<input>-format``
``raters --input-...`` ``--ratings-format``    (``--qrels-format``, ``--run-format``)
``pool --depth``       ``pool -k/--cutoff``    ``depth`` is the knob that cuts the run (``-M``)
``gate --format text`` ``gate --format table`` every other command's human format is ``table``
``init --match``       ``init --preset``       ``--preset`` names a tool's flavor everywhere
=====================  =====================  ==================================================

Like :mod:`rankflavor.cli.main`, this module imports only click at module level.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import click

REMOVED_IN = "the next release"


def warn_deprecated(old: str, new: str) -> None:
    """The one warning every deprecated spelling prints (standard error, never standard output)."""
    click.echo(f"rankflavor: warning: {old} is deprecated and will be removed in {REMOVED_IN}; use {new}", err=True)


def deprecated_alias(old: str, new: str, dest: str, *, type: Any = None, is_flag: bool = False,
                     convert: Callable[[Any], Any] | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add ``old`` to a command as a hidden alias of its option ``new`` (parameter ``dest``).

    Given, it warns (:func:`warn_deprecated`) and its value becomes ``dest``'s; given together with
    ``new`` it is a usage error (two values for one setting). ``convert`` maps (or refuses, raising
    :class:`rankflavor.errors.UsageError`) the old option's value first. Apply it below
    ``@click.command`` like any option.
    """
    hidden_dest = "deprecated_" + old.lstrip("-").replace("-", "_")

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            value = kwargs.pop(hidden_dest)
            if value is not None and value is not False:
                ctx = click.get_current_context()
                if ctx.get_parameter_source(dest) == click.core.ParameterSource.COMMANDLINE:
                    from rankflavor.errors import UsageError

                    raise UsageError(f"{old} is the old name of {new}; give only {new}")
                if convert is not None:
                    value = convert(value)
                warn_deprecated(old, new)
                kwargs[dest] = value
            return command(*args, **kwargs)

        option = click.option(old, hidden_dest, hidden=True, is_flag=is_flag, default=None if not is_flag else False,
                              type=type, help=f"Deprecated spelling of {new}.")
        return option(wrapper)

    return decorate


def diff_old_scale(value: str) -> str:
    """``diff --scale``'s value: ``value`` or ``mean`` (the old spelling of ``--deltas``); any other
    value is refused, since ``--scale`` elsewhere names a label scale, which ``diff`` has no use for."""
    if value in ("value", "mean"):
        return value
    from rankflavor.errors import UsageError

    raise UsageError(f"diff takes no label scale (--scale {value}): it attributes the gap between the two flavors "
                     "you name, so put a scale's knobs in them (ndcg@10[rel=2,max_grade=3]) or in --flavor; "
                     "--scale value|mean is the old spelling of --deltas value|mean")


class RenamedChoice(click.Choice):  # type: ignore[type-arg]
    """A choice whose old values still work for one release: each warns and becomes its new name.

    ``--help`` lists only the current values.
    """

    def __init__(self, choices: tuple[str, ...], renamed: Mapping[str, str], option: str) -> None:
        super().__init__(choices)
        self.renamed = dict(renamed)
        self.option = option

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value in self.renamed:
            new = self.renamed[value]
            warn_deprecated(f"{self.option} {value}", f"{self.option} {new}")
            value = new
        return super().convert(value, param, ctx)


__all__ = ["RenamedChoice", "deprecated_alias", "diff_old_scale", "warn_deprecated"]
