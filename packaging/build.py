"""Build the one-folder app with PyInstaller and pack it into a versioned archive.

    .venv/bin/python packaging/build.py          # what `make package` runs
    .venv/bin/python packaging/build.py --deb    # also a .deb (Linux, needs dpkg-deb)

Produces ``dist/dpplanner/`` (``dist/dpplanner.app`` on macOS) and, next to it,
``dist/dpplanner-<version>-<os>-<arch>.tar.gz`` on Linux, ``.zip`` on Windows and ``.dmg`` on
macOS (``hdiutil`` ships with macOS). Prints the build time and the sizes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_info  # noqa: E402

SPEC = Path(__file__).resolve().parent / "dpplanner.spec"


def run_pyinstaller(clean: bool) -> None:
    command = [sys.executable, "-m", "PyInstaller", str(SPEC), "--noconfirm",
               "--distpath", str(build_info.DIST),
               "--workpath", str(build_info.BUILD / "pyinstaller"),
               "--log-level", "WARN"]
    if clean:
        command.append("--clean")
    subprocess.run(command, check=True, cwd=build_info.ROOT)


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def make_tar_gz(folder: Path, archive: Path, top: str) -> None:
    # Level 6: within a few percent of level 9 on these binaries, at about half the time.
    with tarfile.open(archive, "w:gz", compresslevel=6) as tar:
        tar.add(folder, arcname=top)


def make_zip(folder: Path, archive: Path, top: str) -> None:
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for path in sorted(folder.rglob("*")):
            zf.write(path, Path(top) / path.relative_to(folder))


def make_dmg(app: Path, archive: Path) -> None:
    subprocess.run(["hdiutil", "create", "-volname", f"dpplanner {build_info.read_version()}",
                    "-srcfolder", str(app), "-ov", "-format", "UDZO", str(archive)], check=True)


def make_archive(version: str) -> Path:
    stem = build_info.archive_stem(version)
    if sys.platform == "darwin":
        archive = build_info.DIST / f"{stem}.dmg"
        make_dmg(build_info.DIST / f"{build_info.APP_NAME}.app", archive)
    elif sys.platform == "win32":
        archive = build_info.DIST / f"{stem}.zip"
        make_zip(build_info.DIST / build_info.APP_NAME, archive, f"{build_info.APP_NAME}-{version}")
    else:
        archive = build_info.DIST / f"{stem}.tar.gz"
        make_tar_gz(build_info.DIST / build_info.APP_NAME, archive, f"{build_info.APP_NAME}-{version}")
    return archive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="discard PyInstaller's cache first")
    parser.add_argument("--deb", action="store_true", help="also build a .deb (Linux only)")
    parser.add_argument("--skip-build", action="store_true",
                        help="only pack the existing dist/ folder (e.g. after code signing)")
    args = parser.parse_args(argv)
    if args.deb and not sys.platform.startswith("linux"):
        parser.error("--deb: a .deb can only be built on Linux")

    folder = build_info.DIST / (f"{build_info.APP_NAME}.app" if sys.platform == "darwin"
                                else build_info.APP_NAME)
    if args.skip_build and not folder.is_dir():
        parser.error(f"--skip-build: there is no {folder} to pack; build it first")
    version = build_info.read_version()
    started = time.perf_counter()
    if not args.skip_build:
        run_pyinstaller(args.clean)
    built = time.perf_counter()
    archive = make_archive(version)
    packed = time.perf_counter()

    print(f"package: {folder.relative_to(build_info.ROOT)} "
          f"({folder_size(folder) / 2**20:.0f} MiB unpacked)")
    print(f"package: {archive.relative_to(build_info.ROOT)} ({archive.stat().st_size / 2**20:.0f} MiB)")
    if args.deb:
        import make_deb

        deb = make_deb.build_deb(folder, version)
        print(f"package: {deb.relative_to(build_info.ROOT)} ({deb.stat().st_size / 2**20:.0f} MiB)")
    done = time.perf_counter()
    print(f"build_seconds={built - started:.1f} archive_seconds={packed - built:.1f} "
          f"total_seconds={done - started:.1f}")
    return 0


if __name__ == "__main__":
    # Run from anywhere: PyInstaller resolves the spec's relative paths from the repository root.
    os.chdir(build_info.ROOT)
    sys.exit(main())
