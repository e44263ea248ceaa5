"""The coverage pictures paint what they say: each document as wide as its share of the
text, filled where its text was shown to a model, tinted where code ran over it."""

from __future__ import annotations

from PySide6.QtGui import QColor

from ui.coverage_view import DocumentShown, OverviewStrip, searched_color
from ui.highlight import is_dark
from ui.theme import PALETTES


def _palette():
    return PALETTES["dark" if is_dark() else "light"]


def _close(a: QColor, b: QColor, tolerance: int = 12) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a.getRgb()[:3], b.getRgb()[:3]))


def test_overview_strip_gives_each_document_its_share_and_paints_read_and_searched(qtbot):
    strip = OverviewStrip()
    qtbot.addWidget(strip)
    strip.resize(400, 16)
    # 300 characters, the first half read; 100 characters not read, but searched by code.
    strip.set_documents([DocumentShown("a.txt", 300, read=((0, 150),)),
                         DocumentShown("b.txt", 100, searched=True)])
    image = strip.grab().toImage()
    palette = _palette()
    ok, alt = QColor(palette["ok"]), QColor(palette["alt"])
    y = 8
    assert _close(image.pixelColor(50, y), ok)            # a.txt, read part (0..150 of 300 -> x 0..150)
    assert _close(image.pixelColor(220, y), alt)          # a.txt, unread part (x 150..300)
    tinted = image.pixelColor(350, y)                     # b.txt (x 300..400): tint over the background
    assert not _close(tinted, alt, 3) and not _close(tinted, ok)
    blend = searched_color(palette)
    assert all(min(c, a) - 1 <= t <= max(c, a) + 1
               for t, c, a in zip(tinted.getRgb()[:3], blend.getRgb()[:3], alt.getRgb()[:3]))
