"""Issue 15 item 4: paths behave like a desktop app's (long names, symlinks, crash leftovers, FIFOs)."""

from __future__ import annotations

import os
import threading

import pytest

from dpplanner.model import Budget, Plan, Statistic
from dpplanner.model import fileio
from dpplanner.model.files import PlanFileError, load_plan, save_plan

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file system features")


def _plan(title: str = "t") -> Plan:
    return Plan(Budget(), [Statistic("c")], title=title)


@pytest.mark.parametrize("name_bytes", [242, 250, 255])
def test_names_up_to_the_longest_allowed_save_and_reopen(tmp_path, name_bytes):
    path = tmp_path / ("p" * (name_bytes - len(".dpplan")) + ".dpplan")
    save_plan(_plan("long"), path)
    assert load_plan(path).title == "long"
    save_plan(_plan("again"), path)          # replacing works too
    assert load_plan(path).title == "again"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_long_multibyte_name_is_cut_at_a_character_boundary(tmp_path):
    path = tmp_path / ("é" * 124 + ".dpplan")         # 248 + 7 = 255 bytes
    assert len(os.fsencode(path.name)) == 255
    save_plan(_plan("é"), path)
    assert load_plan(path).title == "é"
    stem = fileio.temporary_stem(tmp_path, path.name)
    assert stem.encode("utf-8").decode("utf-8") == stem and stem == "é" * 120


@posix_only
def test_saving_through_a_symlink_updates_its_target(tmp_path):
    real = tmp_path / "real" / "plan.dpplan"
    real.parent.mkdir()
    save_plan(_plan("old"), real)
    link = tmp_path / "link.dpplan"
    link.symlink_to(real)
    save_plan(_plan("new"), link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert load_plan(real).title == "new"
    assert sorted(p.name for p in real.parent.iterdir()) == ["plan.dpplan"]


@posix_only
def test_saving_through_a_dangling_symlink_creates_its_target(tmp_path):
    real = tmp_path / "plan.dpplan"
    link = tmp_path / "link.dpplan"
    link.symlink_to(real)
    save_plan(_plan("new"), link)
    assert link.is_symlink() and load_plan(real).title == "new"


def _leftover(folder, name, age):
    path = folder / name
    path.write_text("half a plan")
    t = path.stat().st_mtime - age
    os.utime(path, (t, t))
    return path


@pytest.mark.parametrize("action", ["save", "load"])
def test_stale_temporary_files_of_the_same_plan_are_removed(tmp_path, action):
    path = tmp_path / "p.dpplan"
    save_plan(_plan(), path)
    stale = [_leftover(tmp_path, ".p.dpplan.0a1b2c3d.tmp", 3600),
             _leftover(tmp_path, ".p.dpplan.k2x_9qzw.tmp", 60)]        # mkstemp-style name
    kept = [_leftover(tmp_path, ".p.dpplan.0a1b2c3e.tmp", 0),          # a save in progress
            _leftover(tmp_path, ".q.dpplan.0a1b2c3d.tmp", 3600),       # another plan's
            _leftover(tmp_path, ".p.dpplan.0a1b2c3d.tmp.bak", 3600),   # not our pattern
            _leftover(tmp_path, "p.dpplan.0a1b2c3d.tmp", 3600)]
    if action == "save":
        save_plan(_plan(), path)
    else:
        load_plan(path)
    assert not any(p.exists() for p in stale)
    assert all(p.exists() for p in kept)


def test_stale_temporary_files_of_a_long_name_are_found(tmp_path):
    path = tmp_path / ("p" * 248 + ".dpplan")
    save_plan(_plan(), path)
    stem = fileio.temporary_stem(tmp_path, path.name)
    assert len(stem) == 255 - 14
    stale = _leftover(tmp_path, f".{stem}.0a1b2c3d.tmp", 3600)
    save_plan(_plan(), path)
    assert not stale.exists()


@posix_only
def test_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe.dpplan"
    os.mkfifo(fifo)
    result = []
    reader = threading.Thread(target=lambda: result.append(_error(load_plan, fifo)), daemon=True)
    reader.start()
    reader.join(10)             # a hang detector, not a timing assertion
    assert not reader.is_alive(), "load_plan blocked on a FIFO"
    assert "pipe.dpplan: is not a regular file" in result[0]
    with pytest.raises(PlanFileError, match="pipe.dpplan: is not a regular file; nothing was written"):
        save_plan(_plan(), fifo)


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(PlanFileError, match="is a folder"):
        load_plan(tmp_path)


def _error(func, *args) -> str:
    try:
        func(*args)
    except PlanFileError as exc:
        return str(exc)
    return "no error"
