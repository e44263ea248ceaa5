"""Icons looked up by name: `icon("run")` renders resources/icons/run.svg.

The SVG files draw with `currentColor`; `icon()` paints them in the theme's
foreground colour (see ui/theme.py, which calls `set_icon_color`). An unknown
name raises `UnknownIcon` listing the names that exist: a typo must fail in the
first test, not show an empty button.
"""

from __future__ import annotations

import weakref
from functools import lru_cache
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QIcon, QPainter, QPixmap

_SIZES = (16, 24, 32, 48)
_color = "#444444"
_bound: list[tuple[weakref.ref[Any], str, int]] = []


class UnknownIcon(KeyError):
    """Raised for an icon name that has no SVG file."""


def icons_dir() -> Path:
    from core.paths import resources_dir
    return resources_dir() / "icons"


@lru_cache(maxsize=1)
def names() -> tuple[str, ...]:
    """Every icon name that exists, sorted."""
    return tuple(sorted(p.stem for p in icons_dir().glob("*.svg")))


def svg_text(name: str) -> str:
    if name not in names():
        raise UnknownIcon(f"no icon named {name!r}; known icons: {', '.join(names())}")
    return (icons_dir() / f"{name}.svg").read_text(encoding="utf-8")


def set_icon_color(color: str) -> None:
    """Colour used by later `icon()` calls (the theme sets it; cached icons are dropped)."""
    global _color
    if color != _color:
        _color = color
        _render.cache_clear()
        _refresh_bound()


def bind(widget: Any, name: str, size: int = 0) -> None:
    """Give `widget` the icon `name` (setIcon, or setPixmap at `size` px for a
    label), repainted when the theme changes the icon colour."""
    _apply(widget, name, size)
    _bound.append((weakref.ref(widget), name, size))


def _apply(widget: Any, name: str, size: int) -> None:
    if size:
        widget.setPixmap(icon(name).pixmap(size, size))
    else:
        widget.setIcon(icon(name))


def _refresh_bound() -> None:
    alive = []
    for ref, name, size in _bound:
        widget = ref()
        if widget is None:
            continue
        try:
            _apply(widget, name, size)
        except RuntimeError:  # the C++ side is gone; drop it
            continue
        alive.append((ref, name, size))
    _bound[:] = alive


def icon(name: str, color: str | None = None) -> QIcon:
    """The icon `name` painted in `color` (default: the theme's foreground)."""
    return _render(name, color or _color)


@lru_cache(maxsize=256)
def _render(name: str, color: str) -> QIcon:
    from PySide6.QtSvg import QSvgRenderer  # the SVG module loads with the first icon

    data = QByteArray(svg_text(name).replace("currentColor", color).encode("utf-8"))
    renderer = QSvgRenderer(data)
    if not renderer.isValid():
        raise UnknownIcon(f"icon {name!r} is not a valid SVG file")
    result = QIcon()
    for size in _SIZES:
        pixmap = QPixmap(size, size)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        renderer.render(painter, QRectF(0, 0, size, size))
        painter.end()
        result.addPixmap(pixmap)
    return result
