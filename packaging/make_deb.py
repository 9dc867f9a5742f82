"""Wrap the PyInstaller folder into a Debian package with menu entry, icons and file type.

    .venv/bin/python packaging/build.py --deb    (what `make package-deb` runs)

Layout: the frozen folder in ``/opt/dpplanner``, ``/usr/bin/dpplanner`` linking to it, the
``.desktop`` entry, the hicolor icons and the shared-mime-info XML for ``.dpplan``. Debian's
triggers (shared-mime-info, desktop-file-utils, hicolor-icon-theme) refresh their caches on
install, so the package needs no maintainer scripts.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from pathlib import Path

import build_info

#: System libraries PyInstaller deliberately does not bundle (they must match the machine's
#: graphics stack) and that Qt's xcb / EGL code loads.
SYSTEM_DEPENDS = ("libegl1", "libgl1", "libxcb1")
#: Only needed when the build machine lacked them (then the bundle's xcb/wayland plugins look
#: for them on the system); `make deps-linux` installs them on the build machine.
SYSTEM_RECOMMENDS = ("libxcb-icccm4", "libxcb-keysyms1", "libxcb-cursor0", "libwayland-cursor0",
                     "libwayland-egl1")

DESCRIPTION = """\
Plan differential-privacy budgets before releasing statistics
 dpplanner composes the (epsilon, delta) privacy cost of many statistical releases
 under every composition theorem, plots the total against the number of queries and
 redistributes a global budget across the statistics with a sound optimal-composition
 engine. This package ships a self-contained build (Python, Qt, numpy and scipy
 included) in /opt/dpplanner."""


def deb_architecture() -> str:
    return subprocess.run(["dpkg", "--print-architecture"], check=True, capture_output=True,
                          text=True).stdout.strip()


def control_text(version: str, arch: str, installed_kib: int) -> str:
    libc, libc_version = platform.libc_ver()
    depends = list(SYSTEM_DEPENDS)
    if libc == "glibc" and libc_version:
        # The bundled Python and Qt were linked against this machine's glibc: older ones fail.
        depends.insert(0, f"libc6 (>= {libc_version})")
    return (f"Package: {build_info.APP_NAME}\n"
            f"Version: {version}\n"
            f"Architecture: {arch}\n"
            f"Maintainer: The dpplanner developers\n"
            f"Installed-Size: {installed_kib}\n"
            f"Depends: {', '.join(depends)}\n"
            f"Recommends: {', '.join(SYSTEM_RECOMMENDS)}\n"
            f"Section: science\n"
            f"Priority: optional\n"
            f"Description: {DESCRIPTION}\n")


def stage_tree(folder: Path, stage: Path) -> None:
    """Lay out the package's files under ``stage`` as they will be installed."""
    resources = build_info.ROOT / "resources"
    icons = resources / "icons"
    shutil.copytree(folder, stage / "opt" / build_info.APP_NAME, symlinks=True)
    bin_dir = stage / "usr" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / build_info.APP_NAME).symlink_to(f"../../opt/{build_info.APP_NAME}/{build_info.APP_NAME}")
    share = stage / "usr" / "share"
    (share / "applications").mkdir(parents=True)
    shutil.copy2(resources / "dpplanner.desktop", share / "applications" / "dpplanner.desktop")
    (share / "mime" / "packages").mkdir(parents=True)
    shutil.copy2(resources / "dpplanner-mime.xml", share / "mime" / "packages" / "dpplanner.xml")
    for png in sorted(icons.glob("dpplanner-*.png")):
        size = png.stem.rsplit("-", 1)[1]
        target = share / "icons" / "hicolor" / f"{size}x{size}" / "apps"
        target.mkdir(parents=True)
        shutil.copy2(png, target / "dpplanner.png")
    scalable = share / "icons" / "hicolor" / "scalable" / "apps"
    scalable.mkdir(parents=True)
    shutil.copy2(icons / "dpplanner.svg", scalable / "dpplanner.svg")


def build_deb(folder: Path, version: str) -> Path:
    arch = deb_architecture()
    stage = build_info.BUILD / "deb" / f"{build_info.APP_NAME}_{version}_{arch}"
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    stage_tree(folder, stage)
    installed = sum(p.stat().st_size for p in stage.rglob("*") if p.is_file() and not p.is_symlink())
    debian = stage / "DEBIAN"
    debian.mkdir()
    (debian / "control").write_text(control_text(version, arch, -(-installed // 1024)),
                                    encoding="utf-8")
    deb = build_info.DIST / f"{build_info.APP_NAME}_{version}_{arch}.deb"
    # gzip instead of dpkg-deb's default xz: about 20% larger but several times faster here.
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z6", "--build", str(stage), str(deb)],
                   check=True, stdout=subprocess.DEVNULL)
    return deb
