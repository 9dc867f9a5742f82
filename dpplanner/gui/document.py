"""The document life cycle of one window: new, open, save, save as, recent files and recovery.

The window owns the widgets; this object owns which file the plan belongs to, whether it has
unsaved changes (the editor's undo stack is clean or not), and the autosaved recovery copy.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

from PySide6.QtCore import QObject, QStandardPaths, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QWidget

from dpplanner.gui.editing import PlanEditor
from dpplanner.gui.formatting import as_caption, as_plain
from dpplanner.gui.recovery import RecoveryCopy, RecoveryStore
from dpplanner.gui.recovery_dialog import RecoveryDialog
from dpplanner.gui.settings import Settings
from dpplanner.model import Plan, PlanEvent, display, files
from dpplanner.model.examples import examples_dir

PLAN_FILTER = "dpplanner plans (*.dpplan);;All files (*)"


class Document(QObject):
    """Which file the window's plan is, and getting it to and from disk without losing edits."""

    titleChanged = Signal()                 # the name or the modified state changed
    message = Signal(str, int, bool)        # text, timeout in ms, is an error (status bar)
    error = Signal(str, str)                # title, text (status bar and a warning box)
    aboutToLoad = Signal()                  # another plan is about to replace the window's plan
    loaded = Signal(bool)                   # it did: True for a new, empty plan (File > New)

    def __init__(self, window: QWidget, editor: PlanEditor, settings: Settings,
                 recovery_dir: Optional[str] = None) -> None:
        super().__init__(window)
        self.window = window
        self.editor = editor
        self.plan: Plan = editor.plan
        self.settings = settings
        self.path: Optional[Path] = None
        self.display_name = "untitled"
        self.recovery = RecoveryStore(recovery_dir or _default_recovery_dir())
        self.recovery_dialog: Optional[RecoveryDialog] = None
        self._autosave = QTimer(self)
        self._autosave.setSingleShot(True)
        self._autosave.setInterval(max(settings.get("autosave_seconds"), 1) * 1000)
        self._autosave.timeout.connect(self._autosave_in_background)
        # The copy's encoding, check and fsync take ~40 ms at 1000 statistics and ~1 s at 20,000:
        # one thread writes them in order while the window goes on (the GUI thread only takes
        # the plan's document, ~2 ms per 1000 statistics).
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpplanner-autosave")
        writer = self._writer
        self.destroyed.connect(lambda *_: writer.shutdown(wait=False))
        self.plan.subscribe(self._on_plan_event)
        editor.undo_stack.cleanChanged.connect(self._on_clean_changed)

    @property
    def modified(self) -> bool:
        return not self.editor.undo_stack.isClean()

    # -- opening --------------------------------------------------------------------------------
    def new_plan(self) -> bool:
        if not self.maybe_save():
            return False
        self.load(Plan(), None, "untitled")
        return True

    def start_folder(self) -> Path:
        """Where a file dialog starts: the plan's folder; for a plan without a file the folder of
        the most recent plan, else Documents - never the process's working folder (a packaged app
        started from a menu has /, or its own install folder)."""
        if self.path is not None:
            return self.path.parent
        recent = self.settings.recent_files()
        if recent:
            return Path(recent[0]).parent
        documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
        return Path(documents) if documents else Path.home()

    def open_dialog(self) -> None:
        if not self.maybe_save():
            return
        name, _ = QFileDialog.getOpenFileName(self.window, "Open plan", str(self.start_folder()),
                                              PLAN_FILTER)
        if name:
            self.open_path(name, confirm=False)

    def open_path(self, path: str | Path, *, confirm: bool = True) -> bool:
        if confirm and not self.maybe_save():
            return False
        path = Path(path)
        if _is_shipped_example(path):
            # `make run` and Open on resources/examples/ too: Save must never overwrite them.
            return self.open_example(path, confirm=False)
        try:
            plan = files.load_plan(path)
        except (OSError, ValueError) as exc:
            self.settings.remove_recent_file(str(path))
            self.error.emit("Cannot open the plan", str(exc))
            return False
        self.load(plan, path, path.name)
        self.settings.add_recent_file(str(path.resolve()))
        return True

    def open_example(self, path: Path, *, confirm: bool = True) -> bool:
        if confirm and not self.maybe_save():
            return False
        try:
            plan = files.load_plan(path)
        except (OSError, ValueError) as exc:
            self.error.emit("Cannot open the example", str(exc))
            return False
        # An example opens as an untitled copy: Save asks where, the shipped file stays intact.
        self.load(plan, None, f"{path.stem} (example)")
        return True

    def load(self, plan: Plan, path: Optional[Path], name: str) -> None:
        """Make ``plan`` the window's plan, unmodified, belonging to ``path`` (None: untitled)."""
        self.aboutToLoad.emit()
        self.plan.restore(plan.snapshot())
        self.path = path
        self.display_name = name
        self.editor.undo_stack.clear()
        self.editor.undo_stack.setClean()
        self.recovery.discard()
        self.titleChanged.emit()
        self.loaded.emit(path is None and not len(plan) and not plan.title)
        note = " ".join(f"Note: {n}." for n in plan.notes)
        if plan.defaults:   # what the file did not say: the defaults of its missing fields
            missing = display.counted(len(plan.defaults), "optional field")
            note += (f" Note: {missing} {'was' if len(plan.defaults) == 1 else 'were'} not in the "
                     f"file and took "
                     f"their defaults ({'; '.join(plan.defaults[:2])}"
                     f"{'; …' if len(plan.defaults) > 2 else ''}); dpplanner-cli validate lists them.")
        opened = (f"Opened {name}: {display.counted(len(self.plan), 'statistic')}, "
                  f"k = {display.count(self.plan.k)}")
        if path is None and name == "untitled" and not len(plan):
            opened = "A new plan, untitled: no statistics yet (+ Statistic adds one)"
        if name.endswith(" (example)"):
            opened += " (File > New starts a plan of your own, with a three-step guide)"
        self.message.emit(opened + (f". {note}" if note else ""), 20000 if note else 5000, False)

    def fill_recent_menu(self, menu: QMenu) -> None:
        menu.clear()
        recent = self.settings.recent_files()
        for path in recent:
            action = menu.addAction(as_caption(os.path.basename(path)))
            action.setToolTip(as_plain(path))
            action.triggered.connect(lambda _c=False, p=path: self.open_path(p))
        if not recent:
            empty = menu.addAction("(no recent plans)")
            empty.setEnabled(False)

    # -- saving ---------------------------------------------------------------------------------
    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        return self.save_to(self.path)

    def save_as(self) -> bool:
        start = str(self.path) if self.path else \
            str(self.start_folder() / (self.display_name.split(" ")[0] + files.SUFFIX))
        path = self._ask_save_path("Save plan", start)
        return path is not None and self.save_to(path)

    def _ask_save_path(self, title: str, start: str) -> Optional[Path]:
        """Where the user wants a plan saved (the .dpplan suffix added if none), or None."""
        name, _ = QFileDialog.getSaveFileName(self.window, title, start, PLAN_FILTER)
        if not name:
            return None
        path = Path(name)
        return path if path.suffix else path.with_suffix(files.SUFFIX)

    def save_to(self, path: Path) -> bool:
        try:
            note = files.save_plan(self.plan, path)
        except (OSError, ValueError) as exc:
            self.error.emit("Cannot save the plan", str(exc))
            return False
        self.path = path
        self.display_name = path.name
        self.editor.undo_stack.setClean()
        self.recovery.discard()
        self.settings.add_recent_file(str(path.resolve()))
        self.titleChanged.emit()
        self.message.emit(f"Saved {path}" + (f". Note: {note}." if note else ""),
                          15000 if note else 5000, False)
        return True

    def maybe_save(self) -> bool:
        """Ask before throwing away unsaved changes. True: go ahead."""
        if not self.modified:
            return True
        answer = QMessageBox.warning(
            self.window, "Unsaved changes",
            as_plain(f"The plan {self.display_name} has unsaved changes. Save them?"),
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def close(self) -> None:
        """The window closes cleanly: nothing is left to recover."""
        self._autosave.stop()
        self.recovery.discard()

    # -- recovery -------------------------------------------------------------------------------
    def write_recovery_copy(self) -> bool:
        """Copy the unsaved plan to this window's recovery file now (after any autosave still being
        written, which would otherwise overwrite it); False (and said) if it failed."""
        if not self.modified:
            self.recovery.discard()
            return True
        return self._writer.submit(self._write_copy, files.plan_to_document(self.plan), self._source(),
                                   None).result()

    def _autosave_in_background(self) -> None:
        """The timer's copy: the plan as it is now, written by the autosave thread (not at all if
        the plan is saved or the window closed before that thread gets to it)."""
        if not self.modified:
            self.recovery.discard()
            return
        self._writer.submit(self._write_copy, files.plan_to_document(self.plan), self._source(),
                            self.recovery.discards)

    def _source(self) -> Optional[str]:
        return str(self.path) if self.path else None

    def _write_copy(self, doc: dict, source: Optional[str], after: Optional[int]) -> bool:
        try:
            self.recovery.save(files.document_text(doc), source, after)
        except (OSError, ValueError) as exc:     # ValueError: PlanFileError, the plan cannot be written
            try:                                 # (from the autosave thread: queued to the window)
                self.message.emit(f"Could not write the recovery copy: {exc}", 10000, True)
            except RuntimeError:                 # the window closed meanwhile
                pass
            return False
        return True

    def offer_recovery(self) -> bool:
        """After a crash: every orphaned copy, listed with its plan, title, time and size. The
        user restores one, saves any as a plan file, deletes any (asked again), or keeps them for
        the next start; nothing is deleted unasked. True if one was restored into this window."""
        copies = self.recovery.orphans()
        if not copies:
            return False
        dialog = RecoveryDialog(copies, self._restore_copy, self._save_copy_as, self.window)
        self.recovery_dialog = dialog       # reachable while open (tests, accessibility tools)
        try:
            dialog.exec()
        finally:
            self.recovery_dialog = None
            RecoveryStore.release(dialog.remaining())     # kept: offered again next time
        return dialog.restored

    def _copy_plan(self, copy: RecoveryCopy) -> Optional[Plan]:
        try:
            return files.loads_plan(copy.plan_text)
        except ValueError as exc:
            self.error.emit("The recovery copy cannot be read", str(exc))
            return None

    def _restore_copy(self, copy: RecoveryCopy) -> bool:
        if not self.maybe_save():
            return False
        plan = self._copy_plan(copy)
        if plan is None:
            return False
        source = Path(copy.source) if copy.source else None
        self.load(plan, source, (source.name if source else "untitled") + " (recovered)")
        # Recovered changes are unsaved changes: mark the document modified.
        self.editor.undo_stack.resetClean()
        self.titleChanged.emit()
        if self.write_recovery_copy():      # this window's own copy holds them now
            RecoveryStore.forget(copy)
        return True

    def _save_copy_as(self, copy: RecoveryCopy) -> bool:
        plan = self._copy_plan(copy)
        if plan is None:
            return False
        path = self._ask_save_path("Save the recovered plan",
                                   copy.source or (plan.title or "recovered") + files.SUFFIX)
        if path is None:
            return False
        try:
            files.save_plan(plan, path)
        except (OSError, ValueError) as exc:
            self.error.emit("Cannot save the plan", str(exc))
            return False
        RecoveryStore.forget(copy)
        self.message.emit(f"Saved the recovered plan to {path}", 5000, False)
        return True

    def _on_plan_event(self, _event: PlanEvent) -> None:
        # The timer starts at the first unsaved edit and is not restarted by later ones, so a
        # copy is written at most N seconds after it however often the user edits (a restart on
        # every edit would postpone the copy for as long as the edits keep coming).
        if self.modified and not self._autosave.isActive():
            self._autosave.start()

    def _on_clean_changed(self, clean: bool) -> None:
        self.titleChanged.emit()
        if clean:
            self.recovery.discard()


def _is_shipped_example(path: Path) -> bool:
    folder = examples_dir()
    try:
        return folder is not None and path.resolve().parent == folder.resolve()
    except OSError:
        return False


def _default_recovery_dir() -> str:
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return os.path.join(base or os.path.expanduser("~/.dpplanner"), "recovery")
