"""A redistribution's statistics on their way to the engine process: the rows that process has
already, from its answer to the window's previous redistribution, travel as that answer's id.

After a redistribution the window's plan holds the statistics the engine process computed for it
(the same epsilons written back by the same function, with_epsilons), so the next edit's request
differs from that answer only in the rows the edit changed, which the window tells by identity.
Pickled for the pipe, an AllocateRequest whose ``base`` is that answer sends only those rows;
the engine process rebuilds the rest from the answers it keeps (``remember``). Whole, 1000
statistics are ~118 kB: ~1 ms to pickle in the window and ~2.5 ms to unpickle there, on every
edit's path. Where the answer is gone (a restarted process) or its epsilons differ from the
request's (a digest of them travels too), the rebuilt request has no statistics: the job says so
(``AllocateResult.resend``) and the window sends the request whole.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Optional

#: Answers the engine process keeps (each a plan's statistics): a window's last one, and the one
#: before it for an answer the window dropped (edits chained while one waited).
KEPT = 4
_kept: OrderedDict = OrderedDict()      # (owner, request id) -> statistics, in the engine process
_owners = itertools.count(1)


def new_owner() -> int:
    """A key for one window's answers (the engine process is shared by the windows)."""
    return next(_owners)


@dataclass(frozen=True, eq=False)
class Answered:
    """In the window: the statistics it holds that equal the engine process's answer ``key``
    (the answer's request id) to ``owner``'s request."""

    owner: int
    key: int
    statistics: tuple


def remember(owner: int, key: int, statistics: tuple) -> None:
    """In the engine process: keep an answer's statistics for the requests built on it."""
    if owner:
        _kept[(owner, key)] = statistics
        _kept.move_to_end((owner, key))
        while len(_kept) > KEPT:
            _kept.popitem(last=False)


def packed(request) -> Optional[tuple]:
    """``request``'s statistics as ``unpacked`` takes them (its base's id and the rows that are
    not the base's), or None where they go whole (no base, another length, most rows new)."""
    base = request.base
    stats = request.statistics
    if base is None or len(base.statistics) != len(stats):
        return None
    changed = {i: s for i, (s, b) in enumerate(zip(stats, base.statistics)) if s is not b}
    if 2 * len(changed) > len(stats):
        return None
    return base.owner, base.key, changed, len(stats), _digest(stats)


def unpacked(owner: int, key: int, changed: dict, n: int, digest: int) -> Optional[tuple]:
    """The statistics ``packed`` stands for, or None if the answer they build on is gone or does
    not match."""
    base = _kept.get((owner, key))
    if base is None or len(base) != n:
        return None
    stats = tuple(changed.get(i, s) for i, s in enumerate(base))
    return stats if _digest(stats) == digest else None


def _digest(stats: Any) -> int:
    return hash(tuple(s.epsilon for s in stats))
