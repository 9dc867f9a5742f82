"""A job's early answer: a part of its result handed to whoever waits for the job before the rest
is computed (an allocation's shares, which the window adopts and draws while the engine composes
their totals).

A job calls ``give(value)``; whoever runs the job listens around the call with ``to(listener)``:
the engine process sends the value down its pipe, the compute worker posts it to the GUI thread.
Where nobody listens the value is dropped (the job's result must hold it too).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

_local = threading.local()


def give(value: Any) -> None:
    listener = getattr(_local, "listener", None)
    if listener is not None:
        listener(value)


@contextmanager
def to(listener: Callable[[Any], None]) -> Iterator[None]:
    """``give`` calls ``listener`` on this thread while the block runs."""
    previous = getattr(_local, "listener", None)
    _local.listener = listener
    try:
        yield
    finally:
        _local.listener = previous
