"""Regenerate the application icons from the SVG master.

    .venv/bin/python packaging/make_icons.py

Qt's SVG renderer draws the master at each size (so small sizes are rendered, not downscaled from
a big bitmap, and stay sharp); Pillow packs the PNGs into the Windows ``.ico`` and the macOS
``.icns``. The outputs are committed, so building a package never needs this script; run it again
only after editing ``resources/icons/dpplanner.svg``.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

ICON_DIR = Path(__file__).resolve().parent.parent / "resources" / "icons"
MASTER = ICON_DIR / "dpplanner.svg"

#: PNG sizes shipped for Linux (hicolor theme) and used for the window icon.
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
#: Windows Explorer picks from these; 256 is the largest an .ico entry holds.
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
#: Sizes macOS asks for (retina variants reuse the next size up); Pillow writes the rest itself.
ICNS_SIZES = (16, 32, 64, 128, 256, 512)


def png_path(size: int) -> Path:
    return ICON_DIR / f"dpplanner-{size}.png"


def render_png(svg: Path, size: int) -> bytes:
    """Rasterise ``svg`` to a ``size`` x ``size`` RGBA PNG with Qt's SVG renderer."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg}: not a valid SVG for Qt's renderer")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data)


def main() -> int:
    # The renderer needs a QGuiApplication for fonts/painting, but never a screen.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PIL import Image
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    images: dict[int, Image.Image] = {}
    for size in PNG_SIZES:
        data = render_png(MASTER, size)
        png_path(size).write_bytes(data)
        images[size] = Image.open(io.BytesIO(data)).convert("RGBA")
        print(f"wrote {png_path(size).relative_to(ICON_DIR.parent.parent)}")

    largest = images[max(ICO_SIZES)]
    largest.save(
        ICON_DIR / "dpplanner.ico",
        format="ICO",
        sizes=[(s, s) for s in ICO_SIZES],
        append_images=[images[s] for s in ICO_SIZES if s != max(ICO_SIZES)],
    )
    print("wrote resources/icons/dpplanner.ico")

    images[512].save(
        ICON_DIR / "dpplanner.icns",
        format="ICNS",
        append_images=[images[s] for s in ICNS_SIZES if s != 512],
    )
    print("wrote resources/icons/dpplanner.icns")
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
