"""Render the application icon resources/icons/rlm-studio.svg to the PNG sizes
a desktop entry, Windows (.ico) and macOS (.icns) want.

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/make_icons.py

Writes resources/icons/rlm-studio-<N>.png; run it again after editing the SVG.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"


def render(svg: Path, size: int, out: Path) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"not a valid SVG: {svg}")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    if not image.save(str(out), "PNG"):
        raise OSError(f"could not write {out}")


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    svg = ICONS / "rlm-studio.svg"
    for size in SIZES:
        out = ICONS / f"rlm-studio-{size}.png"
        render(svg, size, out)
        print(f"{out.relative_to(ICONS.parent.parent)}  {out.stat().st_size} bytes")
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
