"""The first-look commands: ``flavors`` (the metrics, knobs and presets rankflavor knows) and ``demo``
(a small generated collection, and how the flavor moves its NDCG).

Defined here and added to the group by :mod:`rankflavor.cli.main` (``LAZY_COMMANDS``) when first named."""

from __future__ import annotations

import click

from rankflavor.cli.output import (
    output_width,
    screen_options,
    working,
)


@click.command("flavors")
@click.option("--presets", "show_presets", is_flag=True, help="Show the preset table instead of the knobs.")
@screen_options
def flavors_cmd(show_presets: bool) -> None:
    """List every flavor knob with its values, default and meaning (or the presets)."""
    if show_presets:
        from rankflavor.render.presetsfmt import render_presets

        click.echo(render_presets(output_width()), nl=False)
        return
    from rankflavor.render.flavorsfmt import render_flavors

    click.echo(render_flavors(output_width()), nl=False)


@click.command("demo")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Also keep the generated qrels and runs in this folder.")
@screen_options
def demo_cmd(out_dir: str | None) -> None:
    """Generate a small judged collection and two runs, and show how the flavor moves NDCG."""
    from rankflavor.cli.demo import run_demo

    with working("demo: generating and evaluating"):
        text = run_demo(out_dir, output_width())
    click.echo(text, nl=False)


COMMANDS = [flavors_cmd, demo_cmd]
