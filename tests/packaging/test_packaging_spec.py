"""The PyInstaller spec's platform branches, run with recording stand-ins for PyInstaller's
build classes, so the Windows and macOS branches are checked on any machine."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "packaging" / "dpplanner.spec"
sys.path.insert(0, str(ROOT / "packaging"))

import build_info  # noqa: E402

COLLECTED_DATAS = [
    ("PySide6/Qt/translations/qtbase_de.qm", "/src/qtbase_de.qm", "DATA"),
    ("resources/examples/census.dpplan", "/src/census.dpplan", "DATA"),
]
COLLECTED_BINARIES = [
    ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", "/src/libqgtk3.so", "BINARY"),
    ("PySide6/Qt/plugins/platforms/libqxcb.so", "/src/libqxcb.so", "BINARY"),
    ("libcairo.so.2", "/usr/lib/libcairo.so.2", "BINARY"),
    ("libglib-2.0.so.0", "/usr/lib/libglib-2.0.so.0", "BINARY"),
]


def run_spec(platform_name: str, workpath: Path, monkeypatch) -> dict:
    """Execute the spec as PyInstaller would, with ``sys.platform`` set; returns its namespace
    plus ``calls``: the keyword arguments each build class received."""
    monkeypatch.setattr(sys, "platform", platform_name)
    calls: dict[str, dict] = {}

    def recorder(name):
        def build(*args, **kwargs):
            calls[name] = {"args": args, **kwargs}
            return SimpleNamespace(datas=list(COLLECTED_DATAS), binaries=list(COLLECTED_BINARIES),
                                   pure=[], scripts=[])
        return build

    namespace = {"__name__": "__main__", "SPECPATH": str(SPEC.parent), "workpath": str(workpath),
                 **{n: recorder(n) for n in ("Analysis", "PYZ", "EXE", "COLLECT", "BUNDLE")}}
    exec(compile(SPEC.read_text(encoding="utf-8"), str(SPEC), "exec"), namespace)  # noqa: S102
    namespace["calls"] = calls
    return namespace


def test_linux_bundle(tmp_path, monkeypatch):
    spec = run_spec("linux", tmp_path, monkeypatch)
    analysis, exe = spec["calls"]["Analysis"], spec["calls"]["EXE"]
    assert analysis["args"][0] == [str(SPEC.parent / "launcher.py")]
    targets = {target: Path(source) for source, target in analysis["datas"]}
    assert targets["resources/icons"].is_dir() and targets["resources"].is_file()
    assert any(Path(s).name == "*.dpplan" for s, t in analysis["datas"] if t == "resources/examples")
    assert targets["docs"] == ROOT / "docs" and (ROOT / "docs" / "guide" / "window.md").is_file()
    assert {Path(s).name for s, t in analysis["datas"] if t == "."} == {"README.md", "CHANGELOG.md"}
    assert "PySide6.QtWebEngineCore" in analysis["excludes"]
    # imported by name when first read (engine/lazy.py): the analysis cannot see them
    assert {"dpplanner.engine.mechanisms.discrete_gaussian", "dpplanner.engine.optimal.lattice",
            "dpplanner.engine.compose"} <= set(analysis["hiddenimports"])
    assert "PySide6.QtQml" in analysis["excludes"]
    assert "PySide6.QtOpenGL" not in analysis["excludes"]      # pyqtgraph imports it
    assert exe["console"] is True and exe["hide_console"] is None
    assert exe["icon"] is None and exe["version"] is None and exe["upx"] is False
    assert "BUNDLE" not in spec["calls"]
    # Qt translations, the GTK3 theme plugin and the libraries only it needs are dropped.
    assert [d[0] for d in spec["a"].datas] == ["resources/examples/census.dpplan"]
    assert [b[0] for b in spec["a"].binaries] == ["PySide6/Qt/plugins/platforms/libqxcb.so",
                                                  "libglib-2.0.so.0"]


def test_windows_exe_gets_icon_version_resource_and_hidden_console(tmp_path, monkeypatch):
    spec = run_spec("win32", tmp_path, monkeypatch)
    exe = spec["calls"]["EXE"]
    assert Path(exe["icon"]) == ROOT / "resources" / "icons" / "dpplanner.ico"
    assert Path(exe["version"]).read_text(encoding="utf-8") == build_info.windows_version_text(
        build_info.read_version())
    assert Path(exe["version"]).parent == tmp_path
    assert exe["console"] is True and exe["hide_console"] == "hide-early"
    assert "BUNDLE" not in spec["calls"]
    # Translations go everywhere; the GTK filter is Linux-only and leaves these binaries alone.
    assert [d[0] for d in spec["a"].datas] == ["resources/examples/census.dpplan"]
    assert spec["a"].binaries == COLLECTED_BINARIES


def test_macos_app_bundle_declares_the_dpplan_document_type(tmp_path, monkeypatch):
    spec = run_spec("darwin", tmp_path, monkeypatch)
    exe, bundle = spec["calls"]["EXE"], spec["calls"]["BUNDLE"]
    assert exe["console"] is False            # console=True would make the .app background-only
    assert exe["argv_emulation"] is True
    assert Path(bundle["icon"]) == ROOT / "resources" / "icons" / "dpplanner.icns"
    assert bundle["name"] == "dpplanner.app"
    assert bundle["bundle_identifier"] == build_info.BUNDLE_ID
    plist = bundle["info_plist"]
    assert plist["CFBundleShortVersionString"] == build_info.read_version()
    assert plist["CFBundleDocumentTypes"] == build_info.mac_document_types()
    assert plist["UTExportedTypeDeclarations"] == build_info.mac_exported_types()


def test_spec_refuses_to_build_without_example_plans(tmp_path, monkeypatch):
    monkeypatch.setattr(build_info, "ROOT", tmp_path)
    with pytest.raises(SystemExit, match=r"no example plans \(\*\.dpplan\) in .*examples"):
        run_spec("linux", tmp_path, monkeypatch)
