"""Replaces PyInstaller's pygments hook, which bundles every lexer (about 600
modules). The app highlights Python only (ui/highlight.py: PythonLexer and
HtmlFormatter, a style chosen by name), so only those are bundled, plus the
plain-text lexer pygments falls back to. Add a lexer module here if the app
starts highlighting another language."""

from PyInstaller.utils.hooks import collect_submodules

hiddenimports = [
    "pygments.lexers.python",
    "pygments.lexers.special",
    "pygments.formatters.html",
    "pygments.formatters._mapping",
    "pygments.lexers._mapping",
]
hiddenimports += collect_submodules("pygments.styles")
