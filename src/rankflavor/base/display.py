"""What a notebook shows of a result object: ``_repr_html_``, ``_repr_markdown_`` and ``plot()``.

The result classes sit below the renderers in the import graph (:mod:`rankflavor.render` and
:mod:`rankflavor.report` read them), so a result cannot import its renderer. The views are
registered instead: :mod:`rankflavor.render.notebook`, imported by ``rankflavor/__init__.py`` (which
every ``import rankflavor...`` runs first), registers one view per result class by its qualified
name, and :class:`Shown` looks the view up when Jupyter asks. This module imports nothing of
rankflavor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: ``{module.Class: {"html" | "markdown" | "plot": view}}``, filled by :mod:`rankflavor.render.notebook`.
VIEWS: dict[str, dict[str, Callable[[Any], Any]]] = {}


def register(cls: str, kind: str, view: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Register ``view`` as the ``kind`` (``html``, ``markdown``, ``plot``) of class ``cls`` (``module.Class``)."""
    VIEWS.setdefault(cls, {})[kind] = view
    return view


def _view(obj: Any, kind: str) -> Callable[[Any], Any] | None:
    for cls in type(obj).__mro__:
        view = VIEWS.get(f"{cls.__module__}.{cls.__qualname__}", {}).get(kind)
        if view is not None:
            return view
    return None


def html_of(obj: Any) -> str | None:
    """The HTML a notebook shows for ``obj`` (None: no view, Jupyter falls back to the text repr)."""
    view = _view(obj, "html")
    return None if view is None else str(view(obj))


def markdown_of(obj: Any) -> str | None:
    """The Markdown a notebook shows for ``obj`` (None: no view)."""
    view = _view(obj, "markdown")
    return None if view is None else str(view(obj))


def plot_of(obj: Any) -> Any:
    """The plotly Figure of ``obj``."""
    view = _view(obj, "plot")
    if view is None:
        raise TypeError(f"{type(obj).__name__} has no plot")
    return view(obj)


class Shown:
    """``_repr_html_`` and ``_repr_markdown_`` of a result object, by the view registered for its class."""

    def _repr_html_(self) -> str | None:
        return html_of(self)

    def _repr_markdown_(self) -> str | None:
        return markdown_of(self)


__all__ = ["VIEWS", "Shown", "html_of", "markdown_of", "plot_of", "register"]
