"""Giving memory back to the system after a peak (a watcher's start-up).

Python frees the objects of a piece of work when it ends, but the C library keeps the
freed heap for the process: a long-running process would go on holding its peak.
glibc's ``malloc_trim`` returns what it can. (The catch-up's walk, the largest such
peak, now runs in a child process; at 1M reports a watching `trove mcp` still holds
297 MB after its start-up without this, 282-284 MB with it.)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to call
        return None
    return trim


def release_free_memory() -> bool:
    """Return the heap's free memory to the system (after collecting what only cycles
    held); False where the C library cannot."""
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
