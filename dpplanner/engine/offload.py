"""One optional hook: compute one of two independent engine results somewhere else.

The engine itself stays single-threaded and knows nothing of processes. The compute layer, which
owns them, may install a runner (compute/jobs.py: the engine process's helper, when it is idle).
A runner is called with (fn, args, cancel) and returns either a callable that waits for
``fn(*args, cancel)`` computed elsewhere, or None when it cannot take the work now. The value is
the same wherever it is computed (the same pure function of the same inputs).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

Runner = Callable[[Callable, tuple, Any], Optional[Callable[[], Any]]]
_runner: Optional[Runner] = None


def set_runner(runner: Optional[Runner]) -> None:
    global _runner
    _runner = runner


def start(fn: Callable, args: tuple, cancel=None) -> Optional[Callable[[], Any]]:
    """A callable that waits for ``fn(*args, cancel)``, handed to the runner now; None where no
    runner takes it (then nothing is computed)."""
    return _runner(fn, args, cancel) if _runner is not None else None


def both(here: tuple[Callable, tuple], there: tuple[Callable, tuple], cancel=None) -> tuple[Any, Any]:
    """(here_fn(*here_args, cancel), there_fn(*there_args, cancel)), the second handed to the
    runner while the first is computed here (both here when no runner takes it)."""
    fn, args = there
    pending = start(fn, args, cancel)
    try:
        first = here[0](*here[1], cancel)
    except BaseException:
        if pending is not None:     # let it end (a cancellation reaches it through the same token)
            try:
                pending()
            except BaseException:  # noqa: BLE001 - the first failure is the one raised
                pass
        raise
    return first, (pending() if pending is not None else fn(*args, cancel))
