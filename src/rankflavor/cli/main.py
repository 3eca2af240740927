"""Command line: parse arguments, call the library, render, map errors to exit codes.

Exit codes: 0 ok, 2 usage or flavor error, 3 bad input file, 4 evaluation policy error
(``missing=error``/``empty=error``), 5 out of memory (:mod:`rankflavor.cli.errors`: the inputs
named, ``--chunk-rows`` suggested), 1 anything unexpected.
"""

from __future__ import annotations

import sys

import click

from rankflavor._version import __version__
from rankflavor.base.pages import prefer_small_pages, prefer_system_allocator
from rankflavor.cli.errors import CALLED, is_thread_limit, out_of_memory
from rankflavor.errors import RankflavorError


def _fail(exc: RankflavorError) -> None:
    click.echo(f"rankflavor: error: {exc}", err=True)
    sys.exit(exc.exit_code)


#: Commands defined in modules of their own, by name: the module is imported only when its command
#: is named (or ``--help`` lists every command), so ``rankflavor --version`` or ``flavors`` pays for
#: none of them. The one table such a command is registered in; each module lists its commands
#: in ``COMMANDS``.
LAZY_COMMANDS: dict[str, str] = {
    "eval": "evaluation", "flavors": "intro", "demo": "intro", "report": "report",
    "spread": "analysis", "explain": "analysis", "diff": "analysis", "identify": "analysis",
    "judgments": "judgments", "pool": "judgments", "raters": "judgments", "aggregate": "judgments",
    "history": "history", "compare": "compare", "show": "project", "init": "project",
    "gate": "project", "check": "check", "convert": "convert", "clicks": "clicks",
    "judge": "judge", "estimate": "estimate", "agreement": "estimate",
}  # fmt: skip


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            import importlib

            module = importlib.import_module(f"{__package__}.{LAZY_COMMANDS[cmd_name]}")
            for command in module.COMMANDS:
                self.add_command(command)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]):  # type: ignore[no-untyped-def]
        name, command, rest = super().resolve_command(ctx, args)
        ctx.meta[CALLED] = (name, command, list(rest))  # what an out-of-memory error names
        return name, command, rest

    def invoke(self, ctx: click.Context):  # type: ignore[no-untyped-def]
        try:
            return super().invoke(ctx)
        except RankflavorError as exc:
            _fail(exc)
        except MemoryError as exc:  # NumPy's _ArrayMemoryError and pyarrow's ArrowMemoryError too
            _fail(out_of_memory(ctx, exc))
        except RuntimeError as exc:
            if not is_thread_limit(exc):
                raise
            _fail(out_of_memory(ctx, exc))


_EPILOG = """Environment: the command sets NUMPY_MADVISE_HUGEPAGE=0 before NumPy is imported, so
fresh arrays come in ordinary pages (cheaper on virtual machines that back memory on first touch;
see rankflavor/base/pages.py), and ARROW_DEFAULT_MEMORY_POOL=system before pyarrow is, so a reader's
buffers go back to the system once freed. A value you set yourself is kept: NUMPY_MADVISE_HUGEPAGE=1
keeps NumPy's huge-page advice, ARROW_DEFAULT_MEMORY_POOL=mimalloc pyarrow's bundled allocator. The
Python library never changes either."""


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]}, epilog=_EPILOG)
@click.version_option(version=__version__, prog_name="rankflavor")  # (not package_name: no metadata lookup)
def cli() -> None:
    """Offline search-relevance evaluation where every number names its flavor."""


def main() -> None:
    """The ``rankflavor`` command. Its process settings come first: nothing has imported NumPy or
    pyarrow yet (this module imports only click and the errors)."""
    prefer_small_pages()
    prefer_system_allocator()
    cli(prog_name="rankflavor")

