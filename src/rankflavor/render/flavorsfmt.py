"""``rankflavor flavors``: every flavor knob and every metric, readable at any terminal width.

A wide terminal (:data:`TABLE_FROM` columns or more, or ``--wide``) gets two tables: the knobs
(name, default, values, meaning) and the metrics (name, cutoff, knobs read, meaning). A narrower
one gets the same facts as blocks: each knob's name, default and values on one line and its
meaning wrapped under it; the knobs every metric reads stated once, and per metric only the
knobs it reads beside those.
"""

from __future__ import annotations

import io

from rankflavor.render.console import make_console
from rankflavor.render.fit import print_wrapped

#: From this many columns the knobs and metrics are tables.
TABLE_FROM = 160


def render_flavors(width: int | None = None) -> str:
    """The knobs and the metrics, ``width`` columns (default: the terminal's)."""
    buf = io.StringIO()
    console = make_console(buf, width)
    if console.width >= TABLE_FROM:
        _tables(console)
    else:
        _blocks(console)
    return buf.getvalue()


def _tables(console: object) -> None:
    from rich.markup import escape
    from rich.table import Table

    from rankflavor.flavor.flavor import KNOBS
    from rankflavor.metrics import REGISTRY

    t = Table(title="flavor knobs")
    t.add_column("knob", no_wrap=True)
    t.add_column("default", no_wrap=True)
    t.add_column("values")
    t.add_column("meaning")
    for knob in KNOBS.values():
        t.add_row(knob.name, knob.default, escape(knob.values), escape(knob.doc))
    console.print(t)  # type: ignore[attr-defined]
    m = Table(title="metrics")
    m.add_column("metric", no_wrap=True)
    m.add_column("cutoff")
    m.add_column("knobs it reads")
    m.add_column("meaning")
    for spec in REGISTRY.values():
        m.add_row(spec.name, spec.cutoff, ", ".join(_reads(spec)), escape(spec.doc))
    console.print(m)  # type: ignore[attr-defined]


def _reads(spec: object) -> tuple[str, ...]:
    knobs: tuple[str, ...] = spec.knobs  # type: ignore[attr-defined]
    return knobs + (("empty",) if spec.uses_empty else ())  # type: ignore[attr-defined]


def _blocks(console: object) -> None:
    from rankflavor.flavor.flavor import KNOBS
    from rankflavor.metrics import REGISTRY

    say = console.print  # type: ignore[attr-defined]
    print_wrapped(console, f"{len(KNOBS)} flavor knobs: name = default, its values, what it does "
                  f"(`rankflavor flavors --wide`: as tables)")
    for knob in KNOBS.values():
        say()
        print_wrapped(console, f"{knob.name} = {knob.default}  values: {knob.values}", "", "    ")
        print_wrapped(console, knob.doc, "  ", "  ")
    specs = list(REGISTRY.values())
    counts: dict[str, int] = {}
    for spec in specs:
        for k in _reads(spec):
            counts[k] = counts.get(k, 0) + 1
    usual = [k for k, n in counts.items() if 2 * n >= len(specs)]  # the knobs most metrics read
    say()
    print_wrapped(console, f"{len(specs)} metrics: name (cutoff), how the knobs it reads differ from those most "
                  "metrics read, what it computes")
    print_wrapped(console, "most metrics read: " + ", ".join(usual), "", "  ")
    for spec in specs:
        say()
        reads = _reads(spec)
        extra = [k for k in reads if k not in usual]
        lacks = [k for k in usual if k not in reads]
        differs = ([f"also reads {', '.join(extra)}"] if extra else []) + ([f"not {', '.join(lacks)}"] if lacks else [])
        print_wrapped(console, f"{spec.name} (cutoff {spec.cutoff})" + (f": {'; '.join(differs)}" if differs else ""),
                      "", "    ")
        print_wrapped(console, spec.doc, "  ", "  ")


__all__ = ["TABLE_FROM", "render_flavors"]
