"""Reading and atomically replacing files the way a desktop app must.

- Only regular files are read: a FIFO, a folder or a device is refused at once (opened without
  blocking, then checked with fstat, so nothing can swap the path in between).
- A save writes a temporary file in the target's folder, fsyncs it and renames it over the target.
  Saving through a symbolic link replaces the link's target, not the link. A read-only target
  (no write permission for anyone, or not writable for this user) is refused, as a desktop editor
  does: the user made it read-only. A target with other hard links is replaced all the same (the
  other names keep the old contents) and the save says so. The temporary name is
  ``.NAME.XXXXXXXX.tmp`` with NAME cut so the whole fits the folder's longest file name.
- A crash between creating and renaming leaves that temporary file behind; the next open or save
  of the same file removes leftovers matching its own pattern once they are STALE_SECONDS old
  (a younger one may belong to a save in progress in another window).
"""

from __future__ import annotations

import os
import re
import secrets
import stat
import time
from pathlib import Path
from typing import Optional


class PlanFileError(ValueError):
    """A plan file cannot be read or written; the message says why (and where, if known)."""


#: Largest plan file read (and so written): checked before reading. The structural limits
#: (nesting, number of values, digits per number) are in ``jsontext``.
MAX_FILE_BYTES = 20 * 1024 * 1024


#: A temporary file this old cannot belong to a save in progress (a save takes well under this).
STALE_SECONDS = 30.0
_TOKEN_HEX = 8                     # random characters in a temporary name
_TEMP_EXTRA = len("..") + _TOKEN_HEX + len(".tmp")


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def read_regular_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; PlanFileError naming the path."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise PlanFileError(f"{path}: cannot read the file: {_reason(exc)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            what = ("a folder" if stat.S_ISDIR(info.st_mode)
                    else "not a regular file (a pipe, socket or device)")
            raise PlanFileError(f"{path}: is {what}; choose a plan file")
        if info.st_size > max_bytes:
            raise PlanFileError(f"{path}: the file is {info.st_size} bytes; at most {max_bytes} are "
                                "allowed")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise PlanFileError(f"{path}: cannot read the file: {_reason(exc)}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:      # it grew after fstat
        raise PlanFileError(f"{path}: the file is more than {max_bytes} bytes")
    return data


def _name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):   # no pathconf (Windows) or unknown
        return 255


def temporary_stem(folder: Path, name: str) -> str:
    """NAME cut (at a UTF-8 character boundary) so ``.NAME.XXXXXXXX.tmp`` fits the folder."""
    raw = os.fsencode(name)
    cut = max(1, _name_max(folder) - _TEMP_EXTRA)
    if len(raw) > cut:
        while cut > 0 and raw[cut] & 0xC0 == 0x80:     # do not split a multi-byte character
            cut -= 1
        raw = raw[:cut]
    return os.fsdecode(raw)


def temporary_pattern(stem_prefix: str) -> re.Pattern:
    """The names our own temporary files take: ``<prefix>XXXXXXXX.tmp``, with 8 random characters
    (hex from atomic_write; [a-z0-9_] from tempfile.mkstemp, used by the autosave and by earlier
    versions of atomic_write)."""
    return re.compile(re.escape(stem_prefix) + r"[0-9a-z_]{%d}\.tmp" % _TOKEN_HEX)


def remove_stale_temporaries(folder: Path, pattern: re.Pattern) -> None:
    """Delete regular files in ``folder`` whose whole name matches ``pattern`` and that are at
    least STALE_SECONDS old. Best effort: a folder we cannot list or clean is left alone."""
    limit = time.time() - STALE_SECONDS
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < limit:
                os.unlink(entry.path)
        except OSError:
            pass


def plan_leftovers(path: Path) -> re.Pattern:
    """The pattern of the temporary files a save of ``path`` creates."""
    return temporary_pattern(f".{temporary_stem(path.parent, path.name)}.")


def resolve_target(path: str | os.PathLike) -> Path:
    """The file a save of ``path`` must replace: the final target of any symbolic links."""
    return Path(os.path.realpath(path))


def atomic_write(path: str | os.PathLike, data: bytes) -> Optional[str]:
    """Replace the file at ``path`` (through symbolic links) with ``data`` atomically; returns a
    note for the user when there is something to know (the old file's other hard links keep its
    old contents), else None.

    A failure at any point leaves the previous file untouched and removes the temporary file.
    Raises OSError, or PlanFileError if the target exists but is not a regular file or is
    read-only.
    """
    target = resolve_target(path)
    folder = target.parent
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    old_mode = old.st_mode if old is not None else None
    if old_mode is not None and not stat.S_ISREG(old_mode):
        what = "a folder" if stat.S_ISDIR(old_mode) else "not a regular file"
        raise PlanFileError(f"{path}: is {what}; nothing was written")
    if old_mode is not None and (not old_mode & 0o222 or not os.access(target, os.W_OK)):
        # (mode bits too: for the administrator os.access says yes to any file)
        raise PlanFileError(f"{path}: the file is read-only; nothing was written (save under "
                            "another name, or make the file writable first)")
    pattern = plan_leftovers(target)
    remove_stale_temporaries(folder, pattern)
    stem = temporary_stem(folder, target.name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):      # a clash of 8 random hex digits is rare: 100 tries never all clash
        tmp = folder / f".{stem}.{secrets.token_hex(_TOKEN_HEX // 2)}.tmp"
        try:
            # 0o666 minus the umask, as for any new file; an existing file keeps its mode below
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise PlanFileError(f"{path}: cannot create a temporary file in {folder}")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if old_mode is not None:
            os.chmod(tmp, stat.S_IMODE(old_mode))
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable (POSIX); harmless where unsupported
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass
    others = old.st_nlink - 1 if old is not None else 0
    if others > 0:
        return (f"{path} had {others} other hard link{'s' if others > 1 else ''}: "
                f"{'they keep' if others > 1 else 'it keeps'} the previous contents (a save "
                "writes a new file)")
    return None


def atomic_write_text(path: str | os.PathLike, text: str) -> Optional[str]:
    """atomic_write of UTF-8 text; a text UTF-8 cannot hold (a lone surrogate) is a
    PlanFileError naming the path, and nothing is written."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PlanFileError(f"{path}: cannot save: the text holds a lone UTF-16 surrogate "
                            f"({exc.object[exc.start]!r}), which a UTF-8 file cannot hold") from None
    return atomic_write(path, data)
