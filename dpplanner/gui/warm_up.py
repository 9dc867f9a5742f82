"""After the window's first paint, import the rest of the engine in a background thread.

The first paint imports only what it needs (engine/lazy.py). What the window needs next - the
classes of the results unpickled from the engine process (engine.curve, engine.profile), the
discrete noise calibrations behind the table's privacy columns (engine.mechanisms, scipy.fft) -
would otherwise be imported on the GUI thread while a plan opens, a stall of a hundred
milliseconds or more on a busy machine. A thread imports them meanwhile; Python's interpreter
lock passes to the GUI thread every few milliseconds, and a module the GUI thread needs while the
thread imports it is waited for, never imported twice.
"""

from __future__ import annotations

import threading


def _import_engine() -> None:
    from dpplanner import engine

    for name in engine.__all__:
        getattr(engine, name)


_thread: threading.Thread | None = None


def start() -> threading.Thread:
    """Start importing (once per window; a second import of a module costs nothing)."""
    global _thread
    _thread = threading.Thread(target=_import_engine, name="dpplanner-warm-up", daemon=True)
    _thread.start()
    return _thread


def done() -> bool:
    """Whether the last warm-up started has finished."""
    return _thread is not None and not _thread.is_alive()
