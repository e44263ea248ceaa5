"""Radio buttons and check boxes can be seen in both themes: their indicator, drawn by
the real style with the theme's palette and style sheet, stands out from the page
(luminance contrast of its ring against the window colour), checked and not."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QCheckBox, QRadioButton, QStyle, QStyleOptionButton, QVBoxLayout, QWidget

from ui.theme import PALETTES, ThemeManager


def luminance(c: QColor) -> float:
    def ch(v: float) -> float:
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    return 0.2126 * ch(c.red()) + 0.7152 * ch(c.green()) + 0.0722 * ch(c.blue())


def contrast(a: QColor, b: QColor) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def best_contrast_in_indicator(button, page: QColor) -> float:
    option = QStyleOptionButton()
    button.initStyleOption(option)
    kind = (QStyle.SubElement.SE_RadioButtonIndicator if isinstance(button, QRadioButton)
            else QStyle.SubElement.SE_CheckBoxIndicator)
    rect = button.style().subElementRect(kind, option, button)
    image = button.grab().toImage()
    return max(contrast(QColor(image.pixel(x, y)), page)
               for x in range(rect.left(), rect.right() + 1) for y in range(rect.top(), rect.bottom() + 1))


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_radio_and_check_indicators_stand_out(qapp, qtbot, theme):
    manager = ThemeManager(qapp)
    try:
        manager.apply(theme)
        page = QWidget()
        layout = QVBoxLayout(page)
        widgets = [QRadioButton("ask before every batch"), QRadioButton("never ask"), QCheckBox("Also ask directly")]
        for w in widgets:
            layout.addWidget(w)
        widgets[0].setChecked(True)
        qtbot.addWidget(page)
        page.show()
        qapp.processEvents()
        bg = QColor(PALETTES[theme]["bg"])
        for w in widgets:
            ratio = best_contrast_in_indicator(w, bg)
            assert ratio >= 3.0, f"{type(w).__name__} {'checked' if w.isChecked() else 'unchecked'} " \
                                 f"indicator contrast {ratio:.2f} in {theme}"
    finally:
        manager.apply("light")
