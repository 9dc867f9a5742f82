"""The archives build.py packs: one top folder named with the version, executable bit kept."""

from __future__ import annotations

import stat
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import build  # noqa: E402


@pytest.fixture
def folder(tmp_path) -> Path:
    root = tmp_path / "dpplanner"
    (root / "_internal" / "resources").mkdir(parents=True)
    exe = root / "dpplanner"
    exe.write_bytes(b"\x7fELF stand-in")
    exe.chmod(0o755)
    (root / "_internal" / "resources" / "census.dpplan").write_text("{}\n")
    return root


def test_tar_gz_has_one_versioned_top_folder_and_keeps_the_executable_bit(folder, tmp_path):
    archive = tmp_path / "dpplanner-1.0.0-linux-x86_64.tar.gz"
    build.make_tar_gz(folder, archive, "dpplanner-1.0.0")
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        exe = tar.getmember("dpplanner-1.0.0/dpplanner")
    assert {name.split("/")[0] for name in names} == {"dpplanner-1.0.0"}
    assert "dpplanner-1.0.0/_internal/resources/census.dpplan" in names
    assert exe.mode & stat.S_IXUSR


def test_zip_has_one_versioned_top_folder(folder, tmp_path):
    archive = tmp_path / "dpplanner-1.0.0-windows-x86_64.zip"
    build.make_zip(folder, archive, "dpplanner-1.0.0")
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        assert zf.read("dpplanner-1.0.0/_internal/resources/census.dpplan") == b"{}\n"
    assert {name.split("/")[0] for name in names} == {"dpplanner-1.0.0"}
    assert "dpplanner-1.0.0/dpplanner" in names


def test_skip_build_without_a_folder_is_refused(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(build.build_info, "DIST", tmp_path / "dist")
    with pytest.raises(SystemExit, match="^2$"):   # argparse usage error
        build.main(["--skip-build"])
    assert "there is no" in capsys.readouterr().err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux archive is a .tar.gz")
def test_package_test_rejects_an_archive_without_the_executable(folder, tmp_path, monkeypatch):
    import package_test

    monkeypatch.setattr(package_test.build_info, "DIST", tmp_path)
    stem = package_test.build_info.archive_stem("1.0.0")
    (folder / "dpplanner").unlink()
    build.make_tar_gz(folder, tmp_path / f"{stem}.tar.gz", "dpplanner-1.0.0")
    assert package_test.check_archive("1.0.0") == [
        f"{tmp_path / (stem + '.tar.gz')}: dpplanner-1.0.0/dpplanner missing"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux archive is a .tar.gz")
def test_package_test_accepts_a_good_archive(folder, tmp_path, monkeypatch):
    import package_test

    monkeypatch.setattr(package_test.build_info, "DIST", tmp_path)
    stem = package_test.build_info.archive_stem("1.0.0")
    build.make_tar_gz(folder, tmp_path / f"{stem}.tar.gz", "dpplanner-1.0.0")
    assert package_test.check_archive("1.0.0") == []
