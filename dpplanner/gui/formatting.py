"""Display text for the window: bounds rounded in the safe direction (shared with the CLI and
the report, see ``dpplanner.model.display``), computation times, and tooltips, menu entries and
buttons that show plan text as it is."""

from __future__ import annotations

from PySide6.QtGui import Qt

from dpplanner.model.display import (count, error, error_with_units, exact, lower, percent_of, upper,
                                      value)

__all__ = ["count", "error", "error_with_units", "exact", "lower", "percent_of", "upper", "value",
           "seconds", "as_plain", "as_caption"]


def as_plain(text: str) -> str:
    """Text for a tooltip or a message box that Qt shows as the text it is. Qt renders such text
    as rich text when its first line looks like HTML, so a plan's name or variable (``<img
    src=...>``, ``<b>``) would be drawn as markup: such text is written as HTML that reads as the
    plain text."""
    if not text or not Qt.mightBeRichText(text):
        return text
    return Qt.convertFromPlainText(text, Qt.WhiteSpaceMode.WhiteSpacePre)


def as_caption(text: str) -> str:
    """Text for an action, a menu entry, a button or a group box's title that Qt shows as the
    text it is. There "&" marks the next letter as the keyboard accelerator (Qt's mnemonic), so
    a statistic named "Sales & returns" would read "Sales  returns", its space underlined."""
    return text.replace("&", "&&")


def seconds(value: float) -> str:
    if value < 1e-3:
        return "<1 ms"
    if value < 1.0:
        return f"{value * 1e3:.0f} ms"
    return f"{value:.2f} s"
