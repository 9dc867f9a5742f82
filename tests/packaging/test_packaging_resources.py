"""The icon files, the .desktop entry and the .dpplan MIME type that the packages ship."""

from __future__ import annotations

import configparser
import struct
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import build_info  # noqa: E402
import make_icons  # noqa: E402

RESOURCES = ROOT / "resources"
ICONS = RESOURCES / "icons"
MIME_NS = "{http://www.freedesktop.org/standards/shared-mime-info}"


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("size", make_icons.PNG_SIZES)
def test_png_icons_have_their_nominal_size(size):
    assert png_size(make_icons.png_path(size)) == (size, size)


def test_svg_master_is_square_svg():
    root = ET.parse(ICONS / "dpplanner.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox") == "0 0 512 512"


def test_ico_holds_every_windows_size():
    data = (ICONS / "dpplanner.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, 1)          # 1 = icon (2 would be a cursor)
    sizes = set()
    for i in range(count):
        width, height = data[6 + 16 * i], data[7 + 16 * i]
        length, offset = struct.unpack("<II", data[14 + 16 * i: 22 + 16 * i])
        assert offset + length <= len(data), f"entry {i} points past the end of the file"
        sizes.add((width or 256, height or 256))   # 0 means 256 in an ICO directory
    assert sizes == {(s, s) for s in make_icons.ICO_SIZES}


def test_icns_chunks_cover_the_file_and_the_retina_sizes():
    data = (ICONS / "dpplanner.icns").read_bytes()
    magic, total = struct.unpack(">4sI", data[:8])
    assert magic == b"icns" and total == len(data)
    types, offset = set(), 8
    while offset < len(data):
        kind, length = struct.unpack(">4sI", data[offset:offset + 8])
        assert length >= 8 and offset + length <= len(data), f"chunk {kind!r} is malformed"
        types.add(kind)
        offset += length
    assert offset == len(data)
    # 512x512 (ic09), 512@2x (ic10), 256 (ic08), 128 (ic07), 32@2x (ic12), 16@2x (ic11)
    assert {b"ic07", b"ic08", b"ic09", b"ic10", b"ic11", b"ic12"} <= types


def read_desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str                   # keys are case-sensitive in .desktop files
    parser.read(RESOURCES / "dpplanner.desktop", encoding="utf-8")
    return parser["Desktop Entry"]


def test_desktop_entry_launches_the_app_with_a_file():
    entry = read_desktop_entry()
    assert entry["Type"] == "Application"
    assert entry["Exec"].split() == ["dpplanner", "%f"]
    assert entry["Icon"] == "dpplanner"
    assert entry["Terminal"] == "false"
    assert build_info.MIME_TYPE in entry["MimeType"].split(";")
    for key in ("Categories", "MimeType", "Keywords"):
        assert entry[key].endswith(";"), f"{key} must end with ';' (desktop entry spec)"


def test_mime_type_matches_the_desktop_entry():
    root = ET.parse(RESOURCES / "dpplanner-mime.xml").getroot()
    assert root.tag == f"{MIME_NS}mime-info"
    (mime,) = root.findall(f"{MIME_NS}mime-type")
    assert mime.get("type") == build_info.MIME_TYPE
    assert [g.get("pattern") for g in mime.findall(f"{MIME_NS}glob")] == [f"*.{build_info.PLAN_SUFFIX}"]
    assert mime.find(f"{MIME_NS}icon").get("name") == read_desktop_entry()["Icon"]
    assert mime.find(f"{MIME_NS}sub-class-of").get("type") == "application/json"
