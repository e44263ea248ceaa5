"""Code and text for the transcript's rich-text labels.

`code_html` turns Python into Qt rich text (pygments, inline styles, so no
style sheet is needed) in a monospace block. Results are cached: a replay
rebuilds the same cells again.
"""

from __future__ import annotations

import html
from functools import lru_cache

from PySide6.QtGui import QFontDatabase, QGuiApplication

LIGHT_STYLE = "default"
DARK_STYLE = "github-dark"


def is_dark() -> bool:
    """True when the application palette has a dark window colour."""
    app = QGuiApplication.instance()
    if app is None:
        return False
    return QGuiApplication.palette().window().color().lightness() < 128


@lru_cache(maxsize=1)
def mono_family() -> str:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()


def _pre(body: str) -> str:
    family = html.escape(mono_family(), quote=True)
    return (f'<pre style="font-family: \'{family}\', monospace; margin: 0; white-space: pre-wrap;">'
            f"{body}</pre>")


def code_html(code: str, dark: bool = False) -> str:
    """`code` as highlighted Python in a <pre> block."""
    return _code_html(code, dark)


@lru_cache(maxsize=1024)
def _code_html(code: str, dark: bool) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    formatter = HtmlFormatter(noclasses=True, nowrap=True, style=DARK_STYLE if dark else LIGHT_STYLE)
    body = highlight(code, PythonLexer(stripnl=False, ensurenl=False), formatter)
    return _pre(body.rstrip("\n"))


def warm_up() -> None:
    """Import pygments and its Python lexer now (about 50-100 ms, once), e.g.
    when a run starts, so the first code cell does not pay for it mid-stream."""
    code_html("x = 1", is_dark())
