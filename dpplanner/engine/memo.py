"""Bounded memories of pure engine results, and one call that forgets them all.

What is kept here is a pure function of its key (a bracket of given releases, a Gaussian
calibration; the model's OpenDP certifications use one too), so a hit returns exactly what
recomputing would. ``forget`` is for benchmarks, which time cold runs.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Hashable, Iterable

_ALL: list["Memo"] = []


class Memo:
    """At most ``size`` entries, the least recently used dropped first; safe from any thread (the
    compute worker fills it, the GUI thread may read it)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        _ALL.append(self)

    def get(self, key: Hashable) -> Any:
        """The value kept for ``key``, or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put_all(self, pairs: Iterable[tuple[Hashable, Any]]) -> None:
        with self._lock:
            for key, value in pairs:
                self._items[key] = value
                self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def put(self, key: Hashable, value: Any) -> None:
        self.put_all([(key, value)])

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


def forget() -> None:
    """Drop everything every memory keeps: results stay the same, only slower."""
    for memo in _ALL:
        memo.clear()
