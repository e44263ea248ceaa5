"""Light, dark or follow-the-system theme.

The style sheet is the files in resources/styles/*.qss joined in name order,
with `@name` variables filled from one palette below. The Qt palette (Fusion
style) gets the same colours so that widgets the sheet does not cover match.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from ui import icons

log = logging.getLogger(__name__)

THEMES = ("system", "light", "dark")

PALETTES: dict[str, dict[str, str]] = {
    "light": {
        "bg": "#f6f6f4", "panel": "#ecebe8", "input": "#ffffff", "alt": "#f1f0ec",
        "fg": "#1f2328", "muted": "#6a737d", "border": "#cfcdc7",
        "accent": "#2f6fdd", "accent_fg": "#ffffff",
        "info": "#2f6fdd", "info_bg": "#e7effc",
        "warning": "#b7791f", "warning_bg": "#fdf3dc",
        "error": "#c53030", "error_bg": "#fde8e8",
        "ok": "#2f855a",
    },
    "dark": {
        "bg": "#1e1f22", "panel": "#2a2c30", "input": "#17181a", "alt": "#24262a",
        "fg": "#e3e5e8", "muted": "#9aa1aa", "border": "#3c3f45",
        "accent": "#5b8def", "accent_fg": "#0d1117",
        "info": "#5b8def", "info_bg": "#1d2940",
        "warning": "#e0a642", "warning_bg": "#3a2f17",
        "error": "#f07171", "error_bg": "#3d1f1f",
        "ok": "#5fbf8a",
    },
}

_VARIABLE = re.compile(r"@([a-z_]+)")


def styles_dir() -> Path:
    from core.paths import resources_dir
    return resources_dir() / "styles"


def resolve(theme: str) -> str:
    """'light' or 'dark' for a theme setting ('system' asks the OS)."""
    if theme not in THEMES:
        raise ValueError(f"unknown theme {theme!r}; use one of {', '.join(THEMES)}")
    if theme != "system":
        return theme
    scheme = QGuiApplication.styleHints().colorScheme()
    return "dark" if scheme == Qt.ColorScheme.Dark else "light"


def style_sheet(name: str) -> str:
    """The joined, filled style sheet for 'light' or 'dark'. An unknown
    variable in a .qss file raises KeyError naming the file. `@styles_dir` is the folder
    of the sheets (for their images)."""
    palette = {**PALETTES[name], "styles_dir": styles_dir().as_posix()}
    parts = []
    for path in sorted(styles_dir().glob("*.qss")):
        text = path.read_text(encoding="utf-8")

        def fill(match: re.Match[str], path: Path = path) -> str:
            key = match.group(1)
            if key not in palette:
                raise KeyError(f"{path.name}: unknown style variable @{key}")
            return palette[key]

        parts.append(f"/* {path.name} */\n" + _VARIABLE.sub(fill, text))
    return "\n".join(parts)


def qt_palette(name: str) -> QPalette:
    c = {k: QColor(v) for k, v in PALETTES[name].items()}
    pal = QPalette()
    role = QPalette.ColorRole
    pal.setColor(role.Window, c["bg"])
    pal.setColor(role.WindowText, c["fg"])
    pal.setColor(role.Base, c["input"])
    pal.setColor(role.AlternateBase, c["alt"])
    pal.setColor(role.Text, c["fg"])
    pal.setColor(role.Button, c["panel"])
    pal.setColor(role.ButtonText, c["fg"])
    pal.setColor(role.Highlight, c["accent"])
    pal.setColor(role.HighlightedText, c["accent_fg"])
    pal.setColor(role.ToolTipBase, c["panel"])
    pal.setColor(role.ToolTipText, c["fg"])
    pal.setColor(role.PlaceholderText, c["muted"])
    pal.setColor(role.Link, c["accent"])
    pal.setColor(QPalette.ColorGroup.Disabled, role.Text, c["muted"])
    pal.setColor(QPalette.ColorGroup.Disabled, role.ButtonText, c["muted"])
    pal.setColor(QPalette.ColorGroup.Disabled, role.WindowText, c["muted"])
    return pal


class ThemeManager(QObject):
    """Applies a theme to the application and follows the OS when set to 'system'.
    `changed` tells widgets that paint with their own colours to restyle."""

    changed = Signal(str)    # "light" | "dark"

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._app = app
        self.setting = "system"
        self.current = ""
        app.styleHints().colorSchemeChanged.connect(self._on_scheme_changed)

    def apply(self, setting: str) -> str:
        """Apply 'system', 'light' or 'dark'; returns the theme in effect."""
        name = resolve(setting)
        self.setting = setting
        if name != self.current:
            # Each of these re-polishes every widget (a second window's set-up: 1.3 s of its
            # 2.4 s at load 10): skipped when the application already has it.
            if self._app.property("rlmStyle") != "Fusion":    # (style() is a proxy under a sheet)
                self._app.setStyle("Fusion")
                self._app.setProperty("rlmStyle", "Fusion")
            palette = qt_palette(name)
            if self._app.palette() != palette:
                self._app.setPalette(palette)
            icons.set_icon_color(PALETTES[name]["fg"])
            sheet = style_sheet(name)
            if self._app.styleSheet() != sheet:
                self._app.setStyleSheet(sheet)
            self.current = name
            log.debug("theme %s (%s)", name, setting)
            self.changed.emit(name)
        return name

    def color(self, key: str) -> str:
        return PALETTES[self.current or "light"][key]

    def _on_scheme_changed(self, _scheme: Qt.ColorScheme) -> None:
        if self.setting == "system":
            self.apply("system")
