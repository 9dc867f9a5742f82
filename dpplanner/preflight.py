"""Before Qt starts: are the system libraries its window plugin needs installed? (no Qt imported)

Qt aborts with a long, cryptic message when, say, libxcb-cursor0 is missing on a fresh Debian.
``make run`` calls ``python -m dpplanner.preflight --install`` first: it asks ``ldd`` which
libraries Qt's platform plugin cannot find (plus libxcb-cursor, which Qt loads only at run time),
installs their Debian packages when it runs as root with apt, and otherwise stops with one line
naming the exact install command. With the libraries in place it checks there is a display to
open the window on: without one Qt aborts with a core dump, so it stops with a line that says so.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Optional, Sequence

#: Debian/Ubuntu package of each library Qt's xcb or wayland plugin may load.
PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "libxcb-cursor0", "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1", "libxcb-image.so.0": "libxcb-image0",
    "libxcb-randr.so.0": "libxcb-randr0", "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0", "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1", "libxcb-util.so.1": "libxcb-util1",
    "libxcb-render.so.0": "libxcb-render0", "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1", "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb-glx.so.0": "libxcb-glx0", "libxcb.so.1": "libxcb1", "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6", "libSM.so.6": "libsm6", "libICE.so.6": "libice6",
    "libxkbcommon.so.0": "libxkbcommon0", "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libEGL.so.1": "libegl1", "libGL.so.1": "libgl1", "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1", "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3", "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0", "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0", "libwayland-egl.so.1": "libwayland-egl1",
}

#: Loaded by the xcb plugin with dlopen at start-up, so ldd does not list it.
DLOPENED = {"xcb": ("libxcb-cursor.so.0",)}

#: Platforms that draw nothing on a desktop and need none of these libraries.
_HEADLESS = {"offscreen", "minimal", "vnc", "linuxfb", "eglfs", "minimalegl"}


def platform(env: dict) -> Optional[str]:
    """The Qt platform plugin the app will use ("xcb", "wayland"), or None when there is nothing
    to check (headless platforms, or not Linux)."""
    name = (env.get("QT_QPA_PLATFORM") or "").split(":")[0].split(";")[0].strip()
    if name in _HEADLESS:
        return None
    if name:
        return name if name in ("xcb", "wayland") else None
    if env.get("XDG_SESSION_TYPE") == "wayland" and env.get("WAYLAND_DISPLAY"):
        return "wayland"
    return "xcb"


def listed_platforms(env: dict) -> list[str]:
    """The desktop platforms Qt may try, in order: every name in QT_QPA_PLATFORM ("xcb;wayland"),
    else the session's (wayland on a wayland session, with xcb through XWayland)."""
    names = [n.split(":")[0].strip() for n in (env.get("QT_QPA_PLATFORM") or "").split(";")]
    names = [n for n in names if n]
    if names:
        return names
    return ["wayland", "xcb"] if env.get("XDG_SESSION_TYPE") == "wayland" else ["xcb"]


def has_display(name: str, env: dict) -> bool:
    """Whether the ``name`` platform has a display to open the window on. Wayland clients connect
    to the socket WAYLAND_DISPLAY names, or to wayland-0 in XDG_RUNTIME_DIR when it is unset."""
    if name == "xcb":
        return bool(env.get("DISPLAY"))
    if name == "wayland":
        runtime = env.get("XDG_RUNTIME_DIR")
        return bool(env.get("WAYLAND_DISPLAY")) or bool(runtime and (Path(runtime) / "wayland-0").exists())
    return True         # a platform we do not know: let Qt say


def no_display(env: dict) -> Optional[str]:
    """The line to print when none of the platforms Qt may try has a display."""
    names = listed_platforms(env)
    if any(n in _HEADLESS or has_display(n, env) for n in names):
        return None
    variables = " or ".join("DISPLAY" if n == "xcb" else "WAYLAND_DISPLAY" for n in names)
    return (f"dpplanner: the window cannot start: there is no display here ({variables} is not set). "
            "Run `make run` in a desktop session (or over ssh -X); dpplanner-cli works without one.")


def plugin_path(name: str) -> Optional[Path]:
    """PySide6's platform plugin file, found without importing (and so starting) Qt."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "Qt" / "plugins" / "platforms" / f"libq{name}.so"
    return path if path.exists() else None


def ldd_missing(path: Path) -> list[str]:
    """Sonames ldd reports as "not found" for ``path`` (transitively)."""
    try:
        out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.split()[0] for line in out.splitlines() if "not found" in line]


def loadable(soname: str) -> bool:
    import ctypes

    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_libraries(name: str, plugin: Optional[Path], *,
                      ldd: Callable[[Path], list[str]] = ldd_missing,
                      load: Callable[[str], bool] = loadable) -> list[str]:
    """Sonames the ``name`` platform plugin needs but the system lacks, in a stable order."""
    missing = list(ldd(plugin)) if plugin is not None else []
    missing += [s for s in DLOPENED.get(name, ()) if s not in missing and not load(s)]
    return sorted(dict.fromkeys(missing))


def install_command(missing: Sequence[str]) -> list[str]:
    """``apt-get install`` arguments for the packages of the missing libraries we know."""
    packages = sorted({PACKAGES[s] for s in missing if s in PACKAGES})
    return ["apt-get", "install", "-y", "--no-install-recommends", *packages] if packages else []


def advice(missing: Sequence[str], *, has_apt: bool) -> str:
    """The one line that says what is missing and the exact command that installs it."""
    unknown = [s for s in missing if s not in PACKAGES]
    command = install_command(missing)
    text = f"dpplanner: the window cannot start: Qt needs {', '.join(missing)}, missing here. "
    if command and has_apt:
        text += f"Install them with: sudo {' '.join(command[:2] + command[3:])}"
    elif command:
        text += (f"Install your distribution's packages for them (on Debian/Ubuntu: "
                 f"{' '.join(command[4:])}).")
    if unknown:
        text += f" (find the package of {', '.join(unknown)} with: apt-file search {unknown[0]})"
    return text


def main(argv: Optional[Sequence[str]] = None, *, env: Optional[dict] = None,
         run: Callable[[list[str]], int] = lambda cmd: subprocess.call(cmd),
         is_root: Optional[bool] = None, has_apt: Optional[bool] = None,
         find_missing: Optional[Callable[[str], list[str]]] = None) -> int:
    """0 when Qt can start (after installing what was missing, with --install as root, and with a
    display to open the window on), else 1."""
    parser = argparse.ArgumentParser(prog="python -m dpplanner.preflight")
    parser.add_argument("--install", action="store_true",
                        help="install missing Debian packages when running as root with apt")
    args = parser.parse_args(argv)
    env = dict(os.environ) if env is None else env
    if not sys.platform.startswith("linux"):
        return 0
    name = platform(env)
    if name is None:
        return 0
    if find_missing is None:
        def find_missing(n: str) -> list[str]:
            return missing_libraries(n, plugin_path(n))
    missing = find_missing(name)
    if not missing:
        return _display_check(env)
    is_root = (os.geteuid() == 0) if is_root is None else is_root
    has_apt = (shutil.which("apt-get") is not None) if has_apt is None else has_apt
    command = install_command(missing)
    if args.install and is_root and has_apt and command:
        print(f"dpplanner: installing the Qt libraries the window needs: {' '.join(command[4:])}",
              file=sys.stderr)
        if run(["apt-get", "update"]) == 0 and run(command) == 0:
            missing = find_missing(name)
            if not missing:
                return _display_check(env)
    print(advice(missing, has_apt=has_apt), file=sys.stderr)
    return 1


def _display_check(env: dict) -> int:
    line = no_display(env)
    if line is not None:
        print(line, file=sys.stderr)
    return 0 if line is None else 1


if __name__ == "__main__":
    sys.exit(main())
