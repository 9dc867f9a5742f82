"""The .deb wrapper and the package test's stderr filter, on a small stand-in for the bundle."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import build_info  # noqa: E402
import make_deb  # noqa: E402
import make_icons  # noqa: E402
import package_test  # noqa: E402


@pytest.fixture
def fake_bundle(tmp_path) -> Path:
    folder = tmp_path / "dpplanner"
    (folder / "_internal" / "resources" / "examples").mkdir(parents=True)
    exe = folder / "dpplanner"
    exe.write_text("#!/bin/sh\necho frozen\n")
    exe.chmod(0o755)
    (folder / "_internal" / "resources" / "examples" / "census.dpplan").write_text("{}\n")
    return folder


def test_deb_tree_puts_launcher_menu_entry_icons_and_mime_in_place(fake_bundle, tmp_path):
    stage = tmp_path / "stage"
    make_deb.stage_tree(fake_bundle, stage)
    launcher = stage / "usr" / "bin" / "dpplanner"
    assert launcher.is_symlink()
    assert launcher.resolve() == (stage / "opt" / "dpplanner" / "dpplanner").resolve()
    assert (stage / "opt/dpplanner/_internal/resources/examples/census.dpplan").is_file()
    assert (stage / "usr/share/applications/dpplanner.desktop").is_file()
    assert (stage / "usr/share/mime/packages/dpplanner.xml").is_file()
    for size in make_icons.PNG_SIZES:
        assert (stage / f"usr/share/icons/hicolor/{size}x{size}/apps/dpplanner.png").is_file()
    assert (stage / "usr/share/icons/hicolor/scalable/apps/dpplanner.svg").is_file()


def test_control_file_fields():
    control = make_deb.control_text("1.2.3", "amd64", 4096)
    fields = dict(line.split(": ", 1) for line in control.splitlines() if not line.startswith(" "))
    assert fields["Package"] == "dpplanner"
    assert fields["Version"] == "1.2.3"
    assert fields["Architecture"] == "amd64"
    assert fields["Installed-Size"] == "4096"
    assert "libegl1" in fields["Depends"]
    # every description continuation line starts with a space (Debian policy 5.6.13)
    assert all(line.startswith(" ") for line in control.splitlines()[fields_count(control):])


def fields_count(control: str) -> int:
    lines = control.splitlines()
    return next(i for i, line in enumerate(lines) if line.startswith("Description: ")) + 1


@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb is Debian's; not on this OS")
def test_deb_builds_and_lists_its_files(fake_bundle, tmp_path, monkeypatch):
    monkeypatch.setattr(build_info, "BUILD", tmp_path / "build")
    monkeypatch.setattr(build_info, "DIST", tmp_path / "dist")
    (tmp_path / "dist").mkdir()
    deb = make_deb.build_deb(fake_bundle, "0.9.1")
    info = subprocess.run(["dpkg-deb", "--field", str(deb), "Package", "Version"],
                          capture_output=True, text=True, check=True).stdout
    assert info.split() == ["Package:", "dpplanner", "Version:", "0.9.1"]
    listing = subprocess.run(["dpkg-deb", "--contents", str(deb)], capture_output=True, text=True,
                             check=True).stdout
    assert "./opt/dpplanner/dpplanner" in listing
    assert "./usr/bin/dpplanner -> ../../opt/dpplanner/dpplanner" in listing
    assert "./usr/share/mime/packages/dpplanner.xml" in listing
    assert "root/root" in listing                 # --root-owner-group: no build-user ids


@pytest.mark.parametrize("line", [
    "This plugin does not support propagateSizeHints()",
    "QStandardPaths: XDG_RUNTIME_DIR not set, defaulting to '/tmp/runtime-root'",
])
def test_known_harmless_stderr_is_accepted(line):
    assert any(p.match(line) for p in package_test.HARMLESS_STDERR)


@pytest.mark.parametrize("line", [
    "Traceback (most recent call last):",
    "qt.qpa.plugin: Could not load the Qt platform plugin \"offscreen\"",
    "This plugin does not support propagateSizeHints() and more",
])
def test_other_stderr_is_not_filtered(line):
    assert not any(p.match(line) for p in package_test.HARMLESS_STDERR)
