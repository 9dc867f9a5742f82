"""Autosaved recovery copies of unsaved plans, offered again after a crash.

Each window's store writes one file ``recovery-<token>.json`` in the recovery folder, the token
unique to the store (not the process id: after a reboot or in a container a new start can get the
crashed process's id). While the copy exists the store holds an exclusive lock on
``recovery-<token>.lock``; the kernel drops that lock when the process ends, however it ends, so
a copy whose lock can be taken is one its window left behind - an orphan. A clean exit or a save
deletes the copy, then its lock.

Taking an orphan's lock also claims it: two windows starting at once never offer the same copy.
Orphans are deleted only on the user's word (restored, saved elsewhere, or deleted in the offer);
``release`` hands back those the user keeps for later. Writes are atomic (temporary file +
rename), so a crash during an autosave never leaves a half-written copy.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from dpplanner.model.fileio import remove_stale_temporaries, temporary_pattern

try:
    import fcntl
except ImportError:                 # Windows: a byte-range lock on the lock file instead
    fcntl = None
    import msvcrt


class _Lock:
    """An exclusive lock on a file, held until ``release`` or the process's end."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: Optional[int] = fd

    @classmethod
    def take(cls, path: Path) -> Optional["_Lock"]:
        """The lock if no one (alive) holds it, else None."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            os.close(fd)
            return None
        return cls(path, fd)

    def release(self, *, remove: bool = False) -> None:
        if self._fd is None:
            return
        if remove:                  # unlinked while held: a scan that opened it finds no copy
            self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None


@dataclass(frozen=True)
class RecoveryCopy:
    """An orphaned copy, claimed (its lock held) until forgotten or released."""

    path: Path                  # the recovery file itself
    plan_text: str              # the plan document, as the plan file format writes it ("" if unreadable)
    source: Optional[str]       # the file the plan was opened from, if any
    saved_at: float             # time.time() of the autosave
    title: str = ""
    statistics: Optional[int] = None
    size: int = 0               # bytes on disk
    problem: str = ""           # why it cannot be read (then it can only be deleted)
    lock: Optional[_Lock] = field(default=None, compare=False, repr=False)

    @property
    def name(self) -> str:
        return os.path.basename(self.source) if self.source else "an unsaved plan"

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.saved_at))
        return f"{self.name} (autosaved {when})"

    def summary(self) -> str:
        """What the offer lists: title, size."""
        if self.problem:
            return f"cannot be read: {self.problem}"
        title = f"“{self.title}”, " if self.title else ""
        count = ("" if self.statistics is None else
                 f"{self.statistics} statistic{'' if self.statistics == 1 else 's'}, ")
        return f"{title}{count}{_kilobytes(self.size)}"


def _kilobytes(size: int) -> str:
    return f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} kB"


class RecoveryStore:
    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.file = self.directory / f"recovery-{uuid.uuid4().hex}.json"
        self._lock: Optional[_Lock] = None
        # save() runs on the autosave thread, discard() on the GUI thread: one at a time, and a
        # save asked for before a discard (the plan was saved since) is not written after it
        self._guard = threading.Lock()
        self._discards = 0

    @property
    def discards(self) -> int:
        """How many times the copy was discarded: pass it to ``save`` as ``after``."""
        return self._discards

    def save(self, plan_text: str, source: Optional[str], after: Optional[int] = None) -> bool:
        """Write the copy (atomically); False, writing nothing, if it was discarded since
        ``discards`` read ``after`` (a copy of a plan that has been saved since)."""
        with self._guard:
            if after is not None and after != self._discards:
                return False
            self._save(plan_text, source)
            return True

    def _save(self, plan_text: str, source: Optional[str]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        if self._lock is None:      # before the copy exists, so it is never seen unlocked
            self._lock = _Lock.take(self.file.with_suffix(".lock"))
            if self._lock is None:
                raise OSError(f"the recovery lock {self.file.with_suffix('.lock')} is held elsewhere")
        payload = json.dumps({"source": source, "saved_at": time.time(), "plan": plan_text})
        fd, tmp = tempfile.mkstemp(prefix=".recovery-", suffix=".tmp", dir=self.directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.file)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def discard(self) -> None:
        """The plan is saved or the window closed cleanly: nothing to recover (waits for a copy
        being written; one asked for earlier and not yet started is then not written)."""
        with self._guard:
            self._discards += 1
            self.file.unlink(missing_ok=True)
            if self._lock is not None:
                self._lock.release(remove=True)
                self._lock = None

    def orphans(self) -> list[RecoveryCopy]:
        """Copies whose window is gone, newest first, each claimed by this store (``forget`` or
        ``release`` it). Unreadable ones are listed too, with the reason, for the user to delete."""
        if not self.directory.is_dir():
            return []
        # what a crash during an autosave leaves (the temporary file of save() above)
        remove_stale_temporaries(self.directory, temporary_pattern(".recovery-"))
        found = []
        for path in self.directory.glob("recovery-*.json"):
            if path == self.file:
                continue
            try:
                lock = _Lock.take(path.with_suffix(".lock"))
            except OSError:
                continue
            if lock is None:
                continue            # its window is running
            copy = _read(path, lock)
            if copy is None:
                lock.release(remove=True)       # gone meanwhile (saved or closed)
            else:
                found.append(copy)
        self._sweep_locks()
        return sorted(found, key=lambda c: c.saved_at, reverse=True)

    def _sweep_locks(self) -> None:
        """Lock files without a copy (a crash between the two deletions of ``discard``)."""
        for path in self.directory.glob("recovery-*.lock"):
            if path.with_suffix(".json").exists() or path == self.file.with_suffix(".lock"):
                continue
            try:
                lock = _Lock.take(path)
            except OSError:
                continue
            if lock is not None and not path.with_suffix(".json").exists():
                lock.release(remove=True)
            elif lock is not None:
                lock.release()

    @staticmethod
    def forget(copy: RecoveryCopy) -> None:
        """Delete an orphan (the user restored it, saved it elsewhere or deleted it)."""
        copy.path.unlink(missing_ok=True)
        if copy.lock is not None:
            copy.lock.release(remove=True)

    @staticmethod
    def release(copies) -> None:
        """Keep these orphans for the next start: they are no longer claimed."""
        for copy in copies:
            if copy.lock is not None:
                copy.lock.release()


def _read(path: Path, lock: _Lock) -> Optional[RecoveryCopy]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return RecoveryCopy(path, "", None, 0.0, problem=exc.strerror or str(exc), lock=lock)
    try:
        data = json.loads(raw.decode("utf-8"))
        plan = str(data["plan"])
        saved_at = float(data.get("saved_at", 0.0))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        try:
            written = path.stat().st_mtime
        except OSError:
            written = 0.0
        return RecoveryCopy(path, "", None, written, size=len(raw),
                            problem=f"not a recovery copy ({type(exc).__name__})", lock=lock)
    title, count = "", None
    try:                # what the list shows; the plan itself is checked when it is restored
        doc = json.loads(plan)
        title, count = str(doc.get("title") or ""), len(doc["statistics"])
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    return RecoveryCopy(path, plan, data.get("source"), saved_at, title, count, len(raw), lock=lock)
