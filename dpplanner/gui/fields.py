"""Number fields made from the model's rules: they hold exactly what was typed, or say why not.

A spin box silently drops characters it refuses ("150" becomes 15 when the maximum is 100). A
``RuleField`` is a line edit without a validator: on Enter or when it loses focus it reads the text
with ``validation.parse_text`` (the model's rule, never restated here). A number the rule or the
plan refuses stays in the field, marked, with the reason beneath it; the plan keeps its value and
Esc puts the plan's value back. ``set_value`` always shows the plan's value.
"""

from __future__ import annotations

from typing import Callable, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent, QPalette
from PySide6.QtWidgets import QApplication, QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from dpplanner.gui import theme
from dpplanner.gui.fitted_label import WrappingLabel
from dpplanner.gui.formatting import as_plain

from dpplanner.model import FieldRule, PlanError
from dpplanner.model.typed import format_value, parse_text
from dpplanner.model.validation import Number

#: How strongly the refusal red tints a refused field's background (of 255).
REFUSED_TINT = 40


def refused_style(edit: QLineEdit) -> str:
    """A red frame on the field's own background tinted red, opaque: a translucent tint let the
    cell's number beneath an open table editor show through ("-1" read "-10.2575"). (The
    application's base colour for the field: its own palette already holds a refusal's tint.)"""
    base, red = QApplication.palette(edit).color(QPalette.ColorRole.Base), QColor(theme.error_red())
    tint = QColor(*(round(b + (r - b) * REFUSED_TINT / 255) for b, r in
                    ((base.red(), red.red()), (base.green(), red.green()), (base.blue(), red.blue()))))
    return f"QLineEdit {{ border: 1px solid {red.name()}; background: {tint.name()}; }}"


def mark_refused(edit: QLineEdit) -> None:
    """Give ``edit`` the refusal's frame and tint (``setStyleSheet("")`` takes it off), blended
    again whenever the application's palette changes (a light/dark switch) while it is marked: a
    tint blended once would lie under the new scheme's text (a near-white pink behind light text)."""
    theme.follow_scheme(edit, lambda: refused_style(edit))


class _Edit(QLineEdit):
    """The line edit of a RuleField: Esc puts the plan's value back."""

    escaped = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.escaped.emit()
            event.accept()
            return
        super().keyPressEvent(event)


class RuleField(QWidget):
    """A number field for one ``FieldRule``; ``submitted`` carries the parsed (exact) value."""

    submitted = Signal(object)          # int, float or None (an emptied optional field)
    dismissed = Signal()                # Esc: the typed text was given up for the plan's value

    def __init__(self, rule: FieldRule, accessible_name: str, tip: str = "", *,
                 shown: Optional[Callable[[Number], str]] = None, parent: QWidget | None = None) -> None:
        """``shown`` turns a plan value into text when it is derived rather than typed (an error
        bound, rounded up); by default the field shows the exact value."""
        super().__init__(parent)
        self.rule = rule
        self._shown = shown
        self._value: Optional[Number] = None
        self.edit = _Edit()
        self.edit.setAccessibleName(accessible_name)
        self.set_tip(tip)
        self.edit.setPlaceholderText("—" if rule.optional else "")
        # Every line of the reason is shown (WrappingLabel): the allowed range is read here.
        self.message = WrappingLabel("")
        self.message.setTextFormat(Qt.TextFormat.PlainText)     # (it quotes what was typed)
        self.message.setAccessibleName(f"{accessible_name}: problem")
        self.message.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        if rule.percent:
            row.addWidget(QLabel("%"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addWidget(self.message)
        layout.addStretch(1)
        self._confirmed = False     # Return pressed: the editing about to finish is confirmed
        self.edit.returnPressed.connect(lambda: setattr(self, "_confirmed", True))
        self.edit.editingFinished.connect(self._finish)
        self.edit.escaped.connect(self.restore)
        self.edit.escaped.connect(self.dismissed)
        self.edit.textEdited.connect(lambda _t: self.message.isVisible() and self._clear_mark())

    def set_tip(self, tip: str) -> None:
        """The field's tooltip: ``tip`` (what it means), then what the rule allows."""
        allowed = f"Allowed: {self.rule.describe()}" + (" or empty." if self.rule.optional else ".")
        # (as plain text: a tip may quote the plan's own words, its unit of privacy)
        self.edit.setToolTip(as_plain(f"{tip}\n{allowed}" if tip else allowed))

    # -- the plan's side ------------------------------------------------------------------------
    def set_shown(self, shown: Optional[Callable[[Number], str]]) -> None:
        """How plan values are turned into text from now on (None: exactly, as typed)."""
        self._shown = shown

    def set_value(self, value: Optional[Number]) -> None:
        """Show the plan's value (dropping any refused text and its reason)."""
        self._value = value
        self.edit.setText(self._text(value))
        self._clear_mark()
        self.message.hide()

    def value(self) -> Optional[Number]:
        """The value the field stands for (the plan's, until a typed one is accepted)."""
        return self._value

    def restore(self) -> None:
        self.set_value(self._value)

    def show_refusal(self, message: str) -> None:
        """Keep the typed text, mark it, and say beneath it why the plan did not take it. A value
        typed elsewhere (the table's cell) leaves the plan's value here: the reason only, unmarked,
        with nothing for Esc to put back."""
        kept = self._text(self._value)
        typed = self.edit.text().strip() != kept
        keeps = f"The plan keeps {kept}" if kept else "The plan keeps this field empty"
        if typed:
            keeps += " (Esc puts it back)" if kept else " (Esc empties it again)"
        self.message.setText(f"Not applied: {message.rstrip('.')}. {keeps}.")
        theme.red_text(self.message)
        self.message.show()
        if typed:
            mark_refused(self.edit)
        else:
            self.edit.setStyleSheet("")
        self.edit.setAccessibleDescription(self.message.text())

    def show_prompt(self, message: str) -> None:
        """Ask for a value (a field a change of kind needs): said beneath the field in the
        normal text colour, the field not marked, nothing refused."""
        self.message.setText(message[:1].upper() + message[1:])
        theme.red_text(self.message, False)
        self.message.show()
        self.edit.setStyleSheet("")
        self.edit.setAccessibleDescription(self.message.text())

    def clear_message(self) -> None:
        """Nothing to say at this field any more (its typed text stays)."""
        self.message.hide()
        self._clear_mark()

    def detach_message(self) -> WrappingLabel:
        """Take the reason out of the field's own layout, for a form that shows it on a row of
        its own, as wide as the form (the field still shows and hides it)."""
        self.layout().removeWidget(self.message)
        return self.message

    def is_refused(self) -> bool:
        return self.message.isVisible()

    # -- the user's side ------------------------------------------------------------------------
    def parsed(self) -> Optional[Number]:
        """The typed value, exactly; raises PlanError saying why it cannot be stored."""
        return parse_text(self.rule, self.edit.text())

    def _finish(self) -> None:
        # a derived value shown (an error bound) typed over and confirmed with Return, even with
        # the same digits, is the user's own: a target (set_value's text clears the modified
        # flag); left by Tab or a click with the text as shown (a key typed and erased), nothing
        confirmed, self._confirmed = self._confirmed, False
        typed_over = self._shown is not None and self.edit.isModified() and confirmed
        if self.edit.text().strip() == self._text(self._value) and not self.is_refused() and not typed_over:
            return          # nothing new typed
        try:
            value = self.parsed()
        except PlanError as exc:
            self.show_refusal(str(exc))
            return
        # the same value typed again is no change (but not over a derived one)
        if value == self._value and type(value) is type(self._value) and self._shown is None:
            self.set_value(value)
            return
        self.submitted.emit(value)

    def _text(self, value: Optional[Number]) -> str:
        if value is None or self._shown is None:
            return format_value(self.rule, value)
        return self._shown(value)

    def _clear_mark(self) -> None:
        self.edit.setStyleSheet("")
        self.edit.setAccessibleDescription("")
