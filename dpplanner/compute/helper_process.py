"""The engine process's helper: a second engine process, started from inside the first, for the
half of an evaluation that can run beside the other (compute/jobs.py) and a ``pld`` bracket's lower
twin (compute/handover.py). Only with two usable cores, and only once the first process has
answered: start-up should not share the cores with a second interpreter's imports.
"""

from __future__ import annotations

import atexit
import multiprocessing as mp
import os
import threading
from typing import Optional

from dpplanner.compute import engine_process
from dpplanner.compute.engine_process import EngineProcess

_helper: Optional[EngineProcess] = None
_helper_timer: Optional[threading.Timer] = None
_helper_lock = threading.Lock()
#: Seconds after the engine process's first result before it starts its helper: the window's
#: start-up and first drawing should not share the cores with a second interpreter's imports.
HELPER_DELAY_S = 2.0
#: What the helper imports before it is ready: what its jobs (an evaluation's generic half, see
#: jobs.evaluate; a pld bracket's lower twin, spectral.lower_end) import on first use. Left to its
#: first job, they were ~150-250 ms of CPU (scipy.optimize alone ~100-190, the optimal core ~45)
#: that the first edit after the helper started waited for (tests/gui/test_helper_warm_up.py).
HELPER_IMPORTS = ("dpplanner.compute.jobs", "dpplanner.engine.compose", "dpplanner.engine.curve",
                  "dpplanner.engine.optimal.bracket", "dpplanner.engine.optimal.prefix",
                  "dpplanner.engine.mechanisms.spectral", "scipy.fft", "scipy.optimize")


def usable_cpus() -> int:
    """The processors this process may run on: its affinity (one under ``taskset -c 0``, where a
    second engine process would only take turns with the first), not the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # (no affinity on macOS and Windows)
        return os.cpu_count() or 1


def helper(start: bool = True) -> Optional[EngineProcess]:
    """Inside the engine process: a second one, for the half of an evaluation that can run beside
    the other (see jobs.evaluate), or None - outside the engine process, with one usable core, or
    until it has started (``start``: have it started HELPER_DELAY_S from now, in the background;
    the caller computes alone meanwhile, so no result waits for a second interpreter)."""
    global _helper_timer
    if not engine_process._in_child or usable_cpus() < 2:
        return None
    with _helper_lock:
        if _helper is None:
            if start and _helper_timer is None:
                _helper_timer = threading.Timer(HELPER_DELAY_S, _start_helper)
                _helper_timer.daemon = True
                _helper_timer.start()
            return None
    return _helper if _helper.ready() else None


def _start_helper() -> None:
    global _helper
    # The engine process is a daemon (it must go with the window) and multiprocessing refuses
    # daemons children, for fear of orphans; the helper is a daemon of its own that ends with
    # its pipe when this process goes, so the flag is lifted just while it starts.
    with _helper_lock:
        config = mp.current_process()._config
        was = config.get("daemon")
        config["daemon"] = False
        try:
            _helper = EngineProcess(imports=HELPER_IMPORTS)
        finally:
            config["daemon"] = was
    atexit.register(_helper.close)
