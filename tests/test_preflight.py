"""`make run`'s preflight: missing Qt libraries are installed (root + apt) or named, before Qt starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dpplanner import preflight

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux libraries")


def test_platform_follows_the_environment():
    assert preflight.platform({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert preflight.platform({}) == "xcb"
    assert preflight.platform({"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}) == "wayland"
    assert preflight.platform({"QT_QPA_PLATFORM": "wayland;xcb"}) == "wayland"


def test_missing_cursor_library_is_found_though_ldd_cannot_see_it():
    missing = preflight.missing_libraries("xcb", Path("/x/libqxcb.so"),
                                          ldd=lambda _p: ["libxcb-icccm.so.4"],
                                          load=lambda soname: soname != "libxcb-cursor.so.0")
    assert missing == ["libxcb-cursor.so.0", "libxcb-icccm.so.4"]
    assert preflight.missing_libraries("xcb", None, ldd=lambda _p: [], load=lambda _s: True) == []


def test_ldd_output_is_parsed(monkeypatch):
    out = ("\tlinux-vdso.so.1 (0x00007ffd)\n\tlibxcb-icccm.so.4 => not found\n"
           "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n")
    monkeypatch.setattr(subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout=out, stderr=""))
    assert preflight.ldd_missing(Path("/x/libqxcb.so")) == ["libxcb-icccm.so.4"]


def _run(capsys, missing_before, missing_after, *, root, apt, argv=("--install",), env=None):
    calls, commands = [], []

    def find(_name):
        calls.append(1)
        return list(missing_before if len(calls) == 1 else missing_after)

    def run(cmd):
        commands.append(cmd)
        return 0

    env = {"DISPLAY": ":0"} if env is None else env
    code = preflight.main(list(argv), env=env, run=run, is_root=root, has_apt=apt, find_missing=find)
    return code, commands, capsys.readouterr().err


def test_nothing_missing_starts_silently(capsys):
    code, commands, err = _run(capsys, [], [], root=False, apt=True)
    assert (code, commands, err) == (0, [], "")


def test_not_root_stops_with_one_line_naming_the_command(capsys):
    code, commands, err = _run(capsys, ["libxcb-cursor.so.0"], [], root=False, apt=True)
    assert code == 1 and commands == []
    assert err.strip().count("\n") == 0
    assert "sudo apt-get install --no-install-recommends libxcb-cursor0" in err


def test_root_with_apt_installs_exactly_the_missing_packages(capsys):
    code, commands, _err = _run(capsys, ["libxcb-cursor.so.0", "libxcb-icccm.so.4"], [],
                                root=True, apt=True)
    assert code == 0
    assert commands == [["apt-get", "update"],
                        ["apt-get", "install", "-y", "--no-install-recommends", "libxcb-cursor0",
                         "libxcb-icccm4"]]


def test_install_that_does_not_help_still_stops(capsys):
    code, _commands, err = _run(capsys, ["libxcb-cursor.so.0"], ["libxcb-cursor.so.0"],
                                root=True, apt=True)
    assert code == 1 and "libxcb-cursor0" in err


def test_without_install_flag_root_only_advises(capsys):
    code, commands, err = _run(capsys, ["libxcb-cursor.so.0"], [], root=True, apt=True, argv=())
    assert code == 1 and commands == [] and "apt-get install" in err


def test_no_apt_names_the_packages_for_other_distributions(capsys):
    code, commands, err = _run(capsys, ["libxcb-cursor.so.0", "libweird.so.9"], [], root=True, apt=False)
    assert code == 1 and commands == []
    assert "libxcb-cursor0" in err and "sudo" not in err and "apt-file search libweird.so.9" in err


def test_no_display_stops_with_one_line_instead_of_a_qt_abort(capsys):
    code, commands, err = _run(capsys, [], [], root=False, apt=True, env={})
    assert code == 1 and commands == []
    assert err.strip().count("\n") == 0
    assert "no display here (DISPLAY is not set)" in err and "dpplanner-cli" in err


def test_no_display_is_said_after_the_libraries_are_installed(capsys):
    code, commands, err = _run(capsys, ["libxcb-cursor.so.0"], [], root=True, apt=True, env={})
    assert code == 1 and commands[-1][-1] == "libxcb-cursor0"
    assert "DISPLAY is not set" in err


def test_wayland_needs_its_own_display(capsys, tmp_path):
    code, _commands, err = _run(capsys, [], [], root=False, apt=True,
                                env={"QT_QPA_PLATFORM": "wayland", "DISPLAY": ":0"})
    assert code == 1 and "WAYLAND_DISPLAY is not set" in err
    code, _commands, err = _run(capsys, [], [], root=False, apt=True,
                                env={"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"})
    assert (code, err) == (0, "")
    (tmp_path / "wayland-0").touch()        # the default socket, used when WAYLAND_DISPLAY is unset
    code, _commands, err = _run(capsys, [], [], root=False, apt=True,
                                env={"QT_QPA_PLATFORM": "wayland", "XDG_RUNTIME_DIR": str(tmp_path)})
    assert (code, err) == (0, "")


def test_any_listed_platform_with_a_display_will_do(capsys):
    code, _commands, err = _run(capsys, [], [], root=False, apt=True,
                                env={"QT_QPA_PLATFORM": "xcb;wayland", "WAYLAND_DISPLAY": "wayland-0"})
    assert (code, err) == (0, "")
    code, _commands, err = _run(capsys, [], [], root=False, apt=True, env={"QT_QPA_PLATFORM": "xcb;wayland"})
    assert code == 1 and "DISPLAY or WAYLAND_DISPLAY is not set" in err


def test_offscreen_is_never_checked(capsys):
    def find(_name):
        raise AssertionError("offscreen needs no desktop libraries")

    assert preflight.main([], env={"QT_QPA_PLATFORM": "offscreen"}, find_missing=find) == 0


def test_preflight_does_not_import_qt():
    code = ("import sys, dpplanner.preflight as p\np.missing_libraries('xcb', p.plugin_path('xcb'))\n"
            "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
