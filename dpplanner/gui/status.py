"""The status bar: what happened last, the plan's name, and progress with Cancel for long jobs."""

from __future__ import annotations

from typing import Callable, Optional

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QProgressBar, QStatusBar, QToolButton

from dpplanner.gui import theme
from dpplanner.gui.fitted_label import FittedLabel

#: Progress is only shown for jobs that are still running after this long (no flicker).
PROGRESS_DELAY_MS = 250
#: How the message of a refused edit begins.
REFUSED = "Not changed: "
#: The bar shows the latest progress at most this often: QProgressBar.setValue repaints at once
#: (~1 ms of the GUI thread), and a long job reports every 50 ms.
PROGRESS_PAINT_MS = 200


class StatusArea(QObject):
    """Fills a window's status bar; owns the timers that clear messages and delay progress."""

    def __init__(self, bar: QStatusBar, busy_text: Callable[[], Optional[str]], editor=None) -> None:
        """``busy_text()`` says what is running ("Redistributing"), None when nothing is;
        ``editor`` (a PlanEditor) the edits whose refusals are said here."""
        super().__init__(bar)
        self.busy_text = busy_text
        # One line, elided: a long message must not widen the window (the whole text is in the
        # tooltip; errors are shown where they happened as well).
        self.label = FittedLabel("", tip="What happened last.")
        self.label.setAccessibleName("Status message")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(180)
        self.progress.setToolTip("Progress of the running computation.")
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip("Stop the running computation (the window keeps the last result).")
        self.plan_label = FittedLabel("", elide=Qt.TextElideMode.ElideMiddle,
                                      tip="The plan file and whether it has unsaved changes.")
        self.plan_label.setAccessibleName("Plan file")
        self.plan_label.setMinimumWidth(160)
        bar.addWidget(self.label, 1)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)
        bar.addPermanentWidget(self.plan_label)
        self.progress.hide()
        self.cancel_button.hide()
        self._showing_error = False
        self._busy_shown: Optional[str] = None      # the "…ing…" text shown while busy
        # Timers owned here die with the window (a bare singleShot could fire after it).
        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.timeout.connect(self._clear_message)
        self._progress_delay = QTimer(self)
        self._progress_delay.setSingleShot(True)
        self._progress_delay.setInterval(PROGRESS_DELAY_MS)
        self._progress_delay.timeout.connect(self._show_progress)
        self._fraction = 0.0
        self._progress_paint = QTimer(self)
        self._progress_paint.setSingleShot(True)
        self._progress_paint.setInterval(PROGRESS_PAINT_MS)
        self._progress_paint.timeout.connect(self._paint_progress)
        self._pending: Optional[str] = None         # show_pending's text, not shown yet
        self._pending_delay = QTimer(self)
        self._pending_delay.setSingleShot(True)
        self._pending_delay.setInterval(PROGRESS_DELAY_MS)
        self._pending_delay.timeout.connect(self._show_pending)
        if editor is not None:
            editor.refused.connect(lambda refusal: self.show_message(f"{REFUSED}{refusal.message}", 15000,
                                                                     error=True))
            editor.plan.subscribe(lambda _event: self._plan_changed(editor.last_refusal is not None))

    def show_message(self, text: str, timeout_ms: int = 5000, *, error: bool = False) -> None:
        self._drop_pending()            # (a refusal shown meanwhile stays readable)
        self._showing_error = error and bool(text)
        theme.red_text(self.label, error)
        self.label.setText(text)
        self._message_timer.stop()
        if timeout_ms:
            self._message_timer.start(timeout_ms)

    def _plan_changed(self, refused_last: bool) -> None:
        """The plan changed: a refusal shown is of the plan before, gone with it as beneath the
        table, unless the latest edit is the refused one (an edit typed before it just landed).
        (With redistribution off an edit changes the plan at once: no "Redistributing" message
        replaces the refusal, which read as the fate of the edit just made.)"""
        if not refused_last:
            self.retract(REFUSED)

    def show_pending(self, text: str) -> None:
        """Show ``text`` (work under way, until retracted) if it is still under way after a
        moment, as the progress bar: a redistribution of a few tens of ms flashed its message
        and laid the status bar and the window out twice an edit (~2.5 ms of the GUI thread).
        A message showing is cleared now, as the work's message would have replaced it: a refusal
        must not stay up beside the plan the work has just changed."""
        if self.label.text():
            self._clear_message()
        self._pending = text
        self._pending_delay.start()

    def _show_pending(self) -> None:
        text, self._pending = self._pending, None
        if text is not None:
            self.show_message(text, 0)

    def _drop_pending(self) -> None:
        self._pending = None
        self._pending_delay.stop()

    def retract(self, start: str) -> None:
        """Clear the message if it (still) begins with ``start``, or drop it if not shown yet;
        another one that replaced it stays."""
        if self._pending is not None and self._pending.startswith(start):
            self._drop_pending()
        if self.label.text().startswith(start):
            self._clear_message()

    def _clear_message(self) -> None:
        self._showing_error = False
        self.label.setText("")
        self.label.setStyleSheet("")

    def set_busy(self, busy: bool) -> None:
        """A job started (progress shows if it is still running after a moment) or all ended."""
        if busy:
            self._fraction = 0.0
            self.progress.setValue(0)
            self._progress_delay.start()
        else:
            self._progress_delay.stop()
            self._progress_paint.stop()
            self.progress.hide()
            self.cancel_button.hide()
            if self._busy_shown is not None:        # "Computing compositions…" is over
                self.retract(self._busy_shown)
                self._busy_shown = None

    def set_progress(self, fraction: float) -> None:
        """Show ``fraction`` done: on the bar within PROGRESS_PAINT_MS, with the later ones."""
        self._fraction = fraction
        if self.progress.isVisible() and not self._progress_paint.isActive():
            self._progress_paint.start()

    def _paint_progress(self) -> None:
        value = int(self._fraction * 1000)
        if value != self.progress.value():
            self.progress.setValue(value)

    def _show_progress(self) -> None:
        what = self.busy_text()
        if what is not None:
            if not self._showing_error:     # the bar says it is busy; a refusal must stay readable
                self._busy_shown = f"{what}…"
                self.label.setText(self._busy_shown)
            self._paint_progress()
            self.progress.show()
            self.cancel_button.show()
