"""Cycles are collected on the GUI thread only (gui/gc_guard.py): a collection in the compute
worker destroyed Qt objects from the wrong thread (soak seed 106 crashed inside Edit > Undo)."""

from __future__ import annotations

import gc
import threading

from dpplanner.gui import gc_guard
from dpplanner.gui.app import make_application


def test_the_application_collects_on_the_gui_thread(qapp):
    collector = make_application().findChild(gc_guard.GuiThreadCollector)
    assert collector is not None and gc_guard.install(qapp) is collector
    assert not gc.isenabled()


def test_a_cycle_made_in_a_worker_thread_dies_on_the_gui_thread(qtbot):
    died_in = []

    class Node:
        def __del__(self):
            died_in.append(threading.current_thread())

    kept = []

    def worker():
        node = Node()
        node.cycle = node           # only the cyclic collector can free it
        del node
        kept.append([[] for _ in range(50_000)])   # allocations far past every threshold

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert died_in == [], "the cycle was collected in the worker thread"
    qtbot.waitUntil(lambda: bool(died_in))
    assert died_in == [threading.main_thread()]


def test_the_started_window_leaves_what_start_up_made_out_of_later_collections(qtbot, monkeypatch):
    """The first collection, due before the window's first paint, went through every object the
    window's imports had made. What exists once the window is up lives as long as the
    application, so later collections skip it (gc.freeze); a cycle made afterwards is still
    collected."""
    from dpplanner.gui import app

    monkeypatch.setattr(app, "engine_in_process", lambda: False)
    gc.unfreeze()
    try:
        window = app.start()
        qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
        assert window.isVisible() and len(window.plan) > 0
        assert gc.get_freeze_count() > 0
        died = []

        class Node:
            def __del__(self):
                died.append(1)

        node = Node()
        node.cycle = node
        del node
        gc.collect()
        assert died
    finally:
        gc.unfreeze()
