"""Build the package and test it as users get it: run the FROZEN app's ``--smoke-test``.

    .venv/bin/python packaging/package_test.py            # what `make package-test` runs
    .venv/bin/python packaging/package_test.py --no-build # test the existing dist/ again

Fails (exit 1) when the build fails, the bundle lacks its example plans or icons, the archive
lacks the executable, a core Qt library of the bundle cannot resolve its dependencies, or the
frozen smoke test exits non-zero or writes anything unexpected to stderr. Prints the frozen app's
start-up time (process launch to shown main window) for each run.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_info  # noqa: E402

SMOKE_TIMEOUT_S = 180

#: stderr lines that are expected and harmless when the frozen app runs offscreen. Anything else
#: on stderr fails the test. Each pattern says why it is harmless.
HARMLESS_STDERR = (
    # Qt's offscreen platform plugin cannot forward size hints to a window manager; it has none.
    re.compile(r"^This plugin does not support propagateSizeHints\(\)$"),
    # Qt falls back to a private /tmp runtime dir when the CI user has no XDG session.
    re.compile(r"^QStandardPaths: XDG_RUNTIME_DIR not set, defaulting to '.*'$"),
    re.compile(r"^QStandardPaths: runtime directory '.*' is not owned by UID \d+, but a directory "
               r"permissions 0?7\d\d owned by UID \d+ GID \d+$"),
)

#: Libraries whose unresolved dependencies mean the app cannot start at all (offscreen or not).
CORE_LIBRARIES = ("libQt6Core.so", "libQt6Gui.so", "libQt6Widgets.so", "libQt6Svg.so",
                  "libqoffscreen.so", "libpyside6.abi3.so", "libshiboken6.abi3.so")


def fail(message: str) -> int:
    print(f"package-test: FAILED: {message}", file=sys.stderr)
    return 1


def bundle_root() -> Path:
    """The folder whose ``_internal`` (sys._MEIPASS) holds the bundled data."""
    exe = build_info.frozen_executable()
    if sys.platform == "darwin":
        return exe.parent.parent / "Frameworks"
    return exe.parent / "_internal"


def check_bundle_contents() -> list[str]:
    problems = []
    data = bundle_root() / "resources"
    if not any((data / "examples").glob("*.dpplan")):
        problems.append(f"no example plans in {data / 'examples'}")
    for name in ("dpplanner.svg", "dpplanner-256.png"):
        if not (data / "icons" / name).is_file():
            problems.append(f"icon {name} missing from {data / 'icons'}")
    for page in ("docs/guide/window.md", "docs/screenshot.png", "CHANGELOG.md"):   # what Help shows
        if not (bundle_root() / page).is_file():
            problems.append(f"{page} missing from {bundle_root()} (the Help window shows it)")
    for part in ("template.py", "template_checks.py", "template_selection.py", "template_release.py"):
        # (joined by release/export.py)
        template = bundle_root() / "dpplanner" / "release" / part
        if not template.is_file():
            problems.append(f"the release script's template is missing ({template}): File > Export "
                            "Release Script would fail")
    return problems


def check_version(exe: Path, version: str) -> list[str]:
    """The frozen app's ``--version`` is the version the package was built from."""
    proc = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    said = proc.stdout.strip()
    if proc.returncode != 0 or said != f"{build_info.APP_NAME} {version}":
        return [f"`{exe.name} --version` printed {said!r} (exit {proc.returncode}), "
                f"expected '{build_info.APP_NAME} {version}'"]
    return []


def check_archive(version: str) -> list[str]:
    stem = build_info.archive_stem(version)
    top = f"{build_info.APP_NAME}-{version}"
    if sys.platform.startswith("linux"):
        archive = build_info.DIST / f"{stem}.tar.gz"
        if not archive.is_file():
            return [f"archive {archive} was not built"]
        with tarfile.open(archive) as tar:
            try:
                member = tar.getmember(f"{top}/{build_info.APP_NAME}")
            except KeyError:
                return [f"{archive}: {top}/{build_info.APP_NAME} missing"]
            if not member.isfile() or not member.mode & 0o111:
                return [f"{archive}: {member.name} is not an executable file"]
    elif sys.platform == "win32":
        archive = build_info.DIST / f"{stem}.zip"
        with zipfile.ZipFile(archive) as zf:
            if f"{top}/{build_info.APP_NAME}.exe" not in zf.namelist():
                return [f"{archive}: {top}/{build_info.APP_NAME}.exe missing"]
    elif not (build_info.DIST / f"{stem}.dmg").is_file():
        return [f"{build_info.DIST / (stem + '.dmg')} was not built"]
    return []


def unresolved_libraries() -> tuple[list[str], list[str]]:
    """(core, optional) ``library: missing dependency`` lines from ldd over the bundle (Linux)."""
    if not sys.platform.startswith("linux"):
        return [], []
    internal = bundle_root()
    env = dict(os.environ, LD_LIBRARY_PATH=str(internal))
    core, optional = [], []
    for lib in sorted(internal.rglob("*.so*")):
        if not lib.is_file():
            continue
        out = subprocess.run(["ldd", str(lib)], capture_output=True, text=True, env=env).stdout
        for line in out.splitlines():
            if "not found" in line:
                entry = f"{lib.relative_to(internal)}: {line.split()[0]}"
                (core if lib.name.startswith(CORE_LIBRARIES) else optional).append(entry)
    return core, optional


def run_smoke_test(exe: Path, home: Path) -> tuple[int, str, list[str], float]:
    """Run the frozen app once; returns (exit code, stdout, unexpected stderr lines, wall seconds)."""
    env = dict(os.environ)
    env.update({
        "QT_QPA_PLATFORM": "offscreen",
        # A throw-away home: the smoke test must not read or write the user's settings.
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"),
        "APPDATA": str(home / "appdata"), "LOCALAPPDATA": str(home / "localappdata"),
        # The smoke test reports start-up relative to this moment (wall clock, same machine).
        "DPPLANNER_LAUNCH_TIME": repr(time.time()),
    })
    env.pop("PYTHONPATH", None)       # the frozen app must not lean on the development tree
    started = time.perf_counter()
    proc = subprocess.run([str(exe), "--smoke-test"], capture_output=True, text=True, env=env,
                          timeout=SMOKE_TIMEOUT_S, cwd=home)
    wall = time.perf_counter() - started
    unexpected = [line for line in proc.stderr.splitlines()
                  if line.strip() and not any(p.match(line) for p in HARMLESS_STDERR)]
    return proc.returncode, proc.stdout, unexpected, wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-build", action="store_true", help="test the existing dist/ folder")
    parser.add_argument("--runs", type=int, default=3,
                        help="smoke-test runs (default 3); the first one pays for filling the disk cache")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)    # keep our lines in order with the build's output
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")

    version = build_info.read_version()
    if not args.no_build:
        build = subprocess.run([sys.executable, str(Path(__file__).with_name("build.py"))])
        if build.returncode != 0:
            return fail(f"build failed (exit {build.returncode})")

    exe = build_info.frozen_executable()
    if not exe.is_file():
        return fail(f"no frozen executable at {exe}")
    problems = check_bundle_contents() + check_archive(version) + check_version(exe, version)
    if problems:
        return fail("; ".join(problems))
    core, optional = unresolved_libraries()
    if core:
        return fail("bundled core libraries miss dependencies:\n  " + "\n  ".join(core))
    if optional:
        missing = sorted({entry.rsplit(": ", 1)[1] for entry in optional})
        print(f"package-test: note: {len(optional)} optional Qt plugins/libraries need system "
              f"libraries absent here ({', '.join(missing)}); `make deps-linux` installs them so "
              "the bundle carries them (the offscreen smoke test does not need them)")

    startups = []
    for run in range(1, args.runs + 1):
        with tempfile.TemporaryDirectory(prefix="dpplanner-smoke-home-") as home:
            try:
                code, stdout, unexpected, wall = run_smoke_test(exe, Path(home))
            except subprocess.TimeoutExpired:
                return fail(f"run {run}: the frozen smoke test did not finish in {SMOKE_TIMEOUT_S} s")
        sys.stdout.write("".join(f"  | {line}\n" for line in stdout.splitlines()))
        if code != 0:
            return fail(f"run {run}: frozen smoke test exited {code}; stderr:\n  "
                        + "\n  ".join(unexpected or ["(empty)"]))
        if unexpected:
            return fail(f"run {run}: unexpected stderr from the frozen app:\n  " + "\n  ".join(unexpected))
        match = re.search(r"^startup_seconds=([0-9.]+)$", stdout, re.MULTILINE)
        if match is None:
            return fail(f"run {run}: the smoke test printed no startup_seconds=")
        startups.append(float(match.group(1)))
        print(f"package-test: run {run}: smoke test passed, startup (launch to shown window) "
              f"{startups[-1]:.2f} s, whole smoke test {wall:.2f} s")

    summary = f"first run {startups[0]:.2f} s"
    if len(startups) > 1:
        summary += f", median of the other {len(startups) - 1} {statistics.median(startups[1:]):.2f} s"
    print(f"package-test: PASSED; frozen startup_seconds: {summary} ({exe.relative_to(build_info.ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
