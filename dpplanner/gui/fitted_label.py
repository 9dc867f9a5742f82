"""A read-out label that never changes the layout around it.

A QLabel asks for the width of its text: a long read-out (every curve's value under the mouse, a
refusal in the status bar, a long file name) raises the minimum width of every layout above it,
up to the window's, which then cannot be made narrower again. A ``FittedLabel`` asks for no width
and a fixed number of lines: the text is wrapped into those lines where it fits and elided where it
does not, and the whole text is in its tooltip and accessible description.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from dpplanner.gui.formatting import as_plain


class FittedLabel(QLabel):
    """At most ``lines`` lines of plain text, as wide as the layout gives it.

    Text is broken at ``separator`` (a run of spaces between read-out items: an item is never
    split unless it alone is wider than the label) and then at spaces; what does not fit in the
    last line is elided (``elide``). ``full_text()`` is the text as set.
    """

    def __init__(self, text: str = "", *, lines: int = 1, separator: str = "   ",
                 elide: Qt.TextElideMode = Qt.TextElideMode.ElideRight, tip: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lines = max(1, lines)
        self._separator = separator
        self._elide = elide
        self._tip = tip
        self._full = ""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(self._height())
        self.set_text(text)

    # -- the text -----------------------------------------------------------------------------
    def set_text(self, text: str) -> None:
        self._full = text
        described = text.strip()
        tip = "\n\n".join(t for t in (described, self._tip) if t)
        self.setToolTip(as_plain(tip))
        self.setAccessibleDescription(described)
        self.updateGeometry()
        self._fit()

    setText = set_text          # noqa: N815  (a drop-in for QLabel.setText)

    def full_text(self) -> str:
        return self._full

    def text(self) -> str:     # noqa: D401  (what callers of QLabel.text() mean: the whole text)
        return self._full

    def shown_text(self) -> str:
        """What is painted (wrapped and elided to the width)."""
        return super().text()

    def is_elided(self) -> bool:
        return " ".join(self.shown_text().split()) != " ".join(self._full.split())

    # -- size ---------------------------------------------------------------------------------
    def sizeHint(self) -> QSize:
        """As wide as the text on one line would like; the minimum (below) is what layouts
        must give, and it asks for no width at all."""
        one_line = " ".join(self._full.split())
        margins = self.contentsMargins()
        return QSize(self.fontMetrics().horizontalAdvance(one_line) + margins.left() + margins.right() + 4,
                     self._height())

    def minimumSizeHint(self) -> QSize:
        return QSize(0, self._height())

    def set_lines(self, lines: int) -> None:
        self._lines = max(1, lines)
        self.setFixedHeight(self._height())
        self._fit()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (event.Type.FontChange, event.Type.StyleChange):
            self.setFixedHeight(self._height())
            self._fit()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def _height(self) -> int:
        margins = self.contentsMargins()
        return (self.fontMetrics().lineSpacing() * self._lines + margins.top() + margins.bottom()
                + 2)

    def _fit(self) -> None:
        width = max(1, self.contentsRect().width())
        shown = fit_lines(self._full, self.fontMetrics(), width, self._lines, self._separator, self._elide)
        if super().text() != shown:
            super().setText(shown)


def fit_lines(text: str, metrics: QFontMetrics, width: int, lines: int, separator: str = "   ",
              elide: Qt.TextElideMode = Qt.TextElideMode.ElideRight) -> str:
    """``text`` broken into at most ``lines`` lines of at most ``width`` pixels: at ``separator``
    first, then at spaces; the remainder of the last line elided."""
    text = " ".join(text.split("\n"))
    if metrics.horizontalAdvance(text) <= width or lines <= 1:
        return metrics.elidedText(text, elide, width)
    chunks = [c for c in (text.split(separator) if separator else [text]) if c.strip()]
    out: list[str] = []
    current = ""
    rest = list(chunks)
    while rest and len(out) < lines - 1:
        chunk = rest[0].strip()
        candidate = f"{current}{separator}{chunk}" if current else chunk
        if metrics.horizontalAdvance(candidate) <= width:
            current = candidate
            rest.pop(0)
            continue
        if current:
            out.append(current)
            current = ""
            continue
        # one chunk wider than the line: break it at spaces
        words = chunk.split(" ")
        line = ""
        while words and metrics.horizontalAdvance(f"{line} {words[0]}".strip()) <= width:
            line = f"{line} {words.pop(0)}".strip()
        if not line:            # a single word wider than the line
            line = metrics.elidedText(words.pop(0), elide, width)
        out.append(line)
        rest[0] = " ".join(words)
        if not rest[0]:
            rest.pop(0)
    remainder = separator.join(c.strip() for c in rest)
    last = f"{current}{separator}{remainder}" if current and remainder else current or remainder
    if last:
        out.append(metrics.elidedText(last, elide, width))
    return "\n".join(out[:lines])


class WrappingLabel(QLabel):
    """A word-wrapped label that always gets every one of its lines.

    Qt lays a word-wrapped QLabel out at the height its text needs at some guessed width; at the
    width it really gets the text may need more lines, and they are cut off (a refusal's allowed
    range, read nowhere else). This label makes the height its text needs at its actual width its
    minimum height, so the layouts above it - and the splitter the panel sits in - make room.
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self._fitted: tuple = ()        # (text, format, width) the height was last fitted to
        self.setWordWrap(True)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self._fit_height()

    def setText(self, text: str) -> None:       # noqa: N802  (Qt's name)
        super().setText(text)
        self._fit_height()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_height()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (event.Type.FontChange, event.Type.StyleChange):
            self._fit_height(again=True)

    def needed_height(self) -> int:
        """The height all the lines of the text need at the label's current width."""
        if not self.text():
            return 0
        kept = self.minimumHeight()     # Qt's heightForWidth is never below the minimum height,
        if kept:                        # which _fit_height sets: without this it never shrinks
            self.setMinimumHeight(0)
        try:
            return self.heightForWidth(max(self.width(), 1))
        finally:
            if kept:
                self.setMinimumHeight(kept)

    def _fit_height(self, again: bool = False) -> None:
        # Measuring lays the window out again (needed_height moves the minimum height and back):
        # the same text set again at the same width (a result's note, every edit) is not measured.
        fitted = (self.text(), self.textFormat(), self.width())
        if fitted == self._fitted and not again:
            return
        self._fitted = fitted
        needed = self.needed_height() if self.width() > 1 else 0
        if needed != self.minimumHeight():
            self.setMinimumHeight(needed)
