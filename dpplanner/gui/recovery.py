"""Autosaved recovery copies of unsaved plans, offered again after a crash.

Each running window owns one file ``recovery-<pid>-<n>.json`` in the recovery folder; a clean
exit (or a save) deletes it. A file left behind by a process that no longer runs is what a crash
leaves, and the next start offers to restore it. Writes are atomic (temporary file + rename) so a
crash during autosave never leaves a half-written copy.
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from dpplanner.model.fileio import remove_stale_temporaries, temporary_pattern

_counter = itertools.count(1)


@dataclass(frozen=True)
class RecoveryCopy:
    path: Path                  # the recovery file itself
    plan_text: str              # the plan document, as the plan file format writes it
    source: Optional[str]       # the file the plan was opened from, if any
    saved_at: float             # time.time() of the autosave

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.saved_at))
        name = os.path.basename(self.source) if self.source else "an unsaved plan"
        return f"{name} (autosaved {when})"


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:     # exists, owned by someone else
        return True
    except OSError:
        return False
    return True


class RecoveryStore:
    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.file = self.directory / f"recovery-{os.getpid()}-{next(_counter)}.json"

    def save(self, plan_text: str, source: Optional[str]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
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
        """The plan is saved or the window closed cleanly: nothing to recover."""
        self.file.unlink(missing_ok=True)

    def orphans(self) -> list[RecoveryCopy]:
        """Copies left by processes that are gone (crashed), newest first."""
        if not self.directory.is_dir():
            return []
        # what a crash during an autosave leaves (the temporary file of save() below)
        remove_stale_temporaries(self.directory, temporary_pattern(".recovery-"))
        found = []
        for path in self.directory.glob("recovery-*.json"):
            try:
                pid = int(path.stem.split("-")[1])
            except (IndexError, ValueError):
                continue
            if path == self.file or _pid_alive(pid):
                continue
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                found.append(RecoveryCopy(path, str(data["plan"]), data.get("source"),
                                          float(data.get("saved_at", 0.0))))
            except (OSError, ValueError, KeyError, TypeError):
                path.unlink(missing_ok=True)   # unreadable leftovers would be offered forever
        return sorted(found, key=lambda c: c.saved_at, reverse=True)

    @staticmethod
    def forget(copy: RecoveryCopy) -> None:
        copy.path.unlink(missing_ok=True)
