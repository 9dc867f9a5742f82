"""Names, version metadata and platform branches shared by the PyInstaller spec and build scripts."""

from __future__ import annotations

import plistlib
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import build_info  # noqa: E402

import dpplanner  # noqa: E402


def test_version_is_read_from_the_package_source():
    assert build_info.read_version() == dpplanner.__version__


def test_version_without_assignment_is_refused(tmp_path):
    init = tmp_path / "__init__.py"
    init.write_text('"""no version here"""\nVERSION = "1.0"\n')
    with pytest.raises(ValueError, match=r"no string literal assignment to __version__"):
        build_info.read_version(init)


@pytest.mark.parametrize("version, expected", [
    ("0.1.0", (0, 1, 0, 0)),
    ("1.2.3rc1", (1, 2, 3, 0)),
    ("2", (2, 0, 0, 0)),
    ("1.2.3.4.5", (1, 2, 3, 4)),
    ("10.0.dev3", (10, 0, 0, 0)),
])
def test_windows_version_numbers(version, expected):
    assert build_info.version_tuple(version) == expected


@pytest.mark.parametrize("version, message", [
    ("dev", r"must start with a number"),
    ("1.70000", r"part '70000' exceeds 65535"),
])
def test_windows_version_numbers_refused(version, message):
    with pytest.raises(ValueError, match=message):
        build_info.version_tuple(version)


@pytest.mark.parametrize("platform_name, machine, tag", [
    ("linux", "x86_64", "linux-x86_64"),
    ("linux", "aarch64", "linux-arm64"),
    ("win32", "AMD64", "windows-x86_64"),
    ("darwin", "arm64", "macos-arm64"),
])
def test_platform_tag(monkeypatch, platform_name, machine, tag):
    monkeypatch.setattr(build_info.sys, "platform", platform_name)
    monkeypatch.setattr(build_info.platform, "machine", lambda: machine)
    assert build_info.platform_tag() == tag
    assert build_info.archive_stem("0.3.1") == f"dpplanner-0.3.1-{tag}"


@pytest.mark.parametrize("platform_name, relative", [
    ("linux", "dpplanner/dpplanner"),
    ("win32", "dpplanner/dpplanner.exe"),
    ("darwin", "dpplanner.app/Contents/MacOS/dpplanner"),
])
def test_frozen_executable_location(monkeypatch, tmp_path, platform_name, relative):
    monkeypatch.setattr(build_info.sys, "platform", platform_name)
    assert build_info.frozen_executable(tmp_path) == tmp_path / relative


def _evaluate_version_file(text: str) -> dict:
    """Evaluate the version file the way PyInstaller does (one Python expression over its
    constructor names), with recording stand-ins, so it is checked on any platform."""
    def recorder(name):
        return lambda *args, **kwargs: {"type": name, "args": args, **kwargs}
    names = ("VSVersionInfo", "FixedFileInfo", "StringFileInfo", "StringTable", "StringStruct",
             "VarFileInfo", "VarStruct")
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    return eval(body, {"__builtins__": {}}, {n: recorder(n) for n in names})  # noqa: S307


def test_windows_version_file_carries_the_version():
    info = _evaluate_version_file(build_info.windows_version_text("1.4.2rc1"))
    assert info["type"] == "VSVersionInfo"
    assert info["ffi"]["filevers"] == (1, 4, 2, 0)
    assert info["ffi"]["prodvers"] == (1, 4, 2, 0)
    string_table = info["kids"][0]["args"][0][0]
    strings = dict(s["args"] for s in string_table["args"][1])
    assert strings["ProductVersion"] == "1.4.2rc1"
    assert strings["FileVersion"] == "1.4.2rc1"
    assert strings["OriginalFilename"] == "dpplanner.exe"


def test_macos_document_types_declare_the_dpplan_extension():
    documents = build_info.mac_document_types()
    exported = build_info.mac_exported_types()
    # The document type must point at the UTI the app exports, or Finder ignores it.
    assert documents[0]["LSItemContentTypes"] == [exported[0]["UTTypeIdentifier"]]
    assert documents[0]["CFBundleTypeExtensions"] == ["dpplan"]
    tags = exported[0]["UTTypeTagSpecification"]
    assert tags["public.filename-extension"] == ["dpplan"]
    assert tags["public.mime-type"] == ["application/x-dpplan"]
    # BUNDLE writes Info.plist with plistlib: everything must be serialisable.
    plist = plistlib.loads(plistlib.dumps({"CFBundleDocumentTypes": documents,
                                           "UTExportedTypeDeclarations": exported}))
    assert plist["CFBundleDocumentTypes"][0]["CFBundleTypeIconFile"] == "dpplanner.icns"
    assert re.fullmatch(r"[A-Za-z0-9.-]+", exported[0]["UTTypeIdentifier"])
