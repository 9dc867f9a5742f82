"""Issue 24.6: an exported SVG draws the same in Qt's renderer, resvg (both always run), librsvg and
Chromium (where installed) as the window does. Each rasterized SVG is compared with the window's
own pixels, curve colour by curve colour; markers are vector circles, never embedded images."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage

from dpplanner.gui import theme as themes
from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings
from dpplanner.gui.svg_export import export_plot, render_svg
from dpplanner.model.examples import example_path
from keys import show_tab, wait_idle

#: Cells of this many pixels: a curve counts as drawn in a cell when enough of its colour is there.
CELL = 12


@pytest.fixture(scope="module")
def shown_plots(qapp, tmp_path_factory):
    """The census example in a 1280 x 800 window, each plot tab shown once, light and dark."""
    tmp = tmp_path_factory.mktemp("svg")
    settings = Settings(QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp / "recovery"))
    window.resize(1280, 800)
    window.document.open_example(example_path("psi-survey"), confirm=False)
    window.show()
    out = {}
    from pytestqt.qtbot import QtBot
    bot = QtBot(qapp)
    for scheme in ("light", "dark"):
        window.appearance.set_scheme(scheme)
        for title, plot in (("Cost vs k", window.cost_plot), ("Privacy profile", window.profile_plot),
                            ("Shares & errors", window.shares_plot)):
            show_tab(window, title)
            wait_idle(bot, window)
            if plot is window.profile_plot:
                bot.waitUntil(lambda: len(window.profile_plot._eps) > 0, timeout=60000)
            bot.wait(50)
            path = tmp / f"{scheme}-{title[:4]}.svg"
            export_plot(plot.view, path)                # what File > Export Plot writes
            out[(scheme, title)] = (path.read_text(), plot.view.grab().toImage(), themes.current(), plot)
    yield out
    window.editor.undo_stack.setClean()
    window.close()


def as_array(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    width, height = image.width(), image.height()
    data = np.frombuffer(image.constBits(), np.uint8, count=image.bytesPerLine() * height)
    return data.reshape(height, image.bytesPerLine())[:, :width * 3].reshape(height, width, 3).astype(int)


def png_array(data: bytes) -> np.ndarray:
    image = QImage()
    assert image.loadFromData(data, "PNG")
    return as_array(image)


def rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)


def cells(pixels: np.ndarray, colour: str, background: str) -> np.ndarray:
    """Which CELL x CELL cells hold a few pixels of ``colour``: pixels that are the colour blended
    at least half with the background (a thin line is anti-aliased differently by each renderer)."""
    c, b = rgb(colour), rgb(background)
    span = c - b
    alpha = ((pixels - b) @ span) / max(float(span @ span), 1.0)
    residual = np.linalg.norm(pixels - (b + alpha[..., None] * span), axis=2)
    near = (alpha >= 0.45) & (residual < 45)
    h, w = near.shape
    h, w = h - h % CELL, w - w % CELL
    counts = near[:h, :w].reshape(h // CELL, CELL, w // CELL, CELL).sum(axis=(1, 3))
    return counts >= 3


def agreement(window: np.ndarray, rendered: np.ndarray, colour: str, background: str) -> float:
    """How far the cells where the colour is drawn coincide (each side counted where the other
    has the colour in the same or a neighbouring cell: glyphs and anti-aliasing differ by a pixel
    or two between renderers)."""
    a, b = cells(window, colour, background), cells(rendered, colour, background)
    if not a.any() and not b.any():
        return 1.0

    def grow(m):
        g = m.copy()
        g[1:] |= m[:-1]
        g[:-1] |= m[1:]
        g[:, 1:] |= m[:, :-1]
        g[:, :-1] |= m[:, 1:]
        return g
    return float(((a & grow(b)).sum() + (b & grow(a)).sum()) / (a.sum() + b.sum()))


def colours_drawn(svg: str, theme) -> list[str]:
    """Every colour the SVG strokes or fills with (curves, markers, bars, lines, text), but the
    background."""
    found = set(re.findall(r'(?:stroke|fill)="(#[0-9a-fA-F]{6})"', svg))
    return sorted(c.lower() for c in found if c.lower() != theme.background.lower())


def compare(shown, rasterize) -> None:
    for (scheme, title), (svg, grab, theme, plot) in shown.items():
        window = as_array(grab)
        rendered = rasterize(svg, grab.width(), grab.height())
        assert rendered.shape == window.shape, (scheme, title)
        checked = 0
        for colour in colours_drawn(svg, theme):
            if cells(window, colour, theme.background).sum() < 8:
                continue            # hardly on screen (a legend swatch alone, a hidden curve)
            checked += 1
            score = agreement(window, rendered, colour, theme.background)
            assert score >= 0.7, f"{scheme} {title}: colour {colour} agrees {score:.2f}"
        assert checked >= 2, (scheme, title)


def test_the_svg_is_plain_vectors(shown_plots):
    for (scheme, title), (svg, *_rest) in shown_plots.items():
        assert "vector-effect" not in svg and "<image" not in svg, (scheme, title)
        assert "clip-path" not in svg                       # Qt's renderer (SVG Tiny) has none
    svg = shown_plots[("light", "Cost vs k")][0]
    assert svg.count("<circle") >= 8                        # markers drawn as circles
    assert ">total ε</text>" in svg                         # the y title in one piece


def test_qt_renders_the_svg_as_the_window_shows_it(shown_plots):
    compare(shown_plots, lambda svg, w, h: as_array(render_svg(svg, w, h)))


def test_resvg_renders_the_svg_as_the_window_shows_it(shown_plots):
    resvg_py = pytest.importorskip("resvg_py", reason="the test extra installs resvg-py")
    compare(shown_plots, lambda svg, w, h: png_array(bytes(resvg_py.svg_to_bytes(svg_string=svg, width=w))))


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="librsvg's rsvg-convert is not installed")
def test_librsvg_renders_the_svg_as_the_window_shows_it(shown_plots):
    def rsvg(svg, w, h):
        done = subprocess.run(["rsvg-convert", "-w", str(w), "-h", str(h)], input=svg.encode(),
                              capture_output=True, check=True, timeout=60)
        return png_array(done.stdout)
    compare(shown_plots, rsvg)


CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_chromium_renders_the_svg_as_the_window_shows_it(shown_plots, tmp_path):
    def chromium(svg, w, h):
        page = tmp_path / "plot.svg"
        page.write_text(svg)
        shot = tmp_path / "shot.png"
        subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--window-size={w},{h}", f"--screenshot={shot}", page.as_uri()],
                       capture_output=True, check=True, timeout=120)
        return png_array(shot.read_bytes())
    compare(shown_plots, chromium)


def test_the_exported_png_is_the_svg_at_twice_the_pixels(shown_plots, tmp_path):
    _svg, _grab, theme, plot = shown_plots[("dark", "Cost vs k")]     # the scheme shown last
    show_tab(plot.window(), "Cost vs k")
    grab = plot.view.grab().toImage()
    path = tmp_path / "cost.png"
    export_plot(plot.view, path)
    image = QImage(str(path))
    assert (image.width(), image.height()) == (2 * plot.view.width(), 2 * plot.view.height())
    # the legend keeps its size relative to the plot (it was drawn at half size before)
    from PySide6.QtCore import Qt
    small = as_array(image.scaled(grab.width(), grab.height(), Qt.AspectRatioMode.IgnoreAspectRatio,
                                  Qt.TransformationMode.SmoothTransformation))
    # the text (axes, legend) and the two curves drawn apart from the others
    for colour in (theme.foreground, theme.curves["pld"], theme.curves["zcdp"]):
        if cells(as_array(grab), colour, theme.background).sum() >= 8:
            assert agreement(as_array(grab), small, colour, theme.background) >= 0.7, colour
