"""What a serving process reads before its first search of the reports: per segment of
the index, what that search would read first (its lexicon, its day ranks, its fragment
tops, and its token sequences and term tops but what they read as searches ask, as
opening them checks them).

A process that serves (`trove mcp`, `trove serve`) starts this in a thread as it starts,
while the MCP SDK is imported and the client says hello: at a million reports it is
0.3 s of work, two segments at a time (much of it in numpy and zlib, which let go of the
GIL), which the first search would otherwise wait for. A search that comes meanwhile
waits for what it needs or reads it itself; the warm-up only ever fills the segments'
caches, and fails quietly (it is never needed).
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

from query.context import QueryContext
from query.reports.counting import ReportSegment, segments_of

log = logging.getLogger(__name__)

READERS = 2  # segments read at once


def warm_up(ctx: QueryContext) -> None:
    """Reads what the first search of the reports reads, every segment of the index;
    nothing if there is no index yet."""
    try:
        with ctx.indexes.snapshot("reports") as snapshot:
            if snapshot is None:
                return
            segments = segments_of(snapshot)
            with ThreadPoolExecutor(READERS, "trove-warm-up") as pool:
                for _ in pool.map(_read_first, segments):
                    pass
    except Exception:
        log.debug("warming up the reports index failed", exc_info=True)


def _read_first(segment: ReportSegment) -> None:
    segment.segment.token_sequences()
    segment.lexicon()
    segment.day_ranks()
    segment.segment.fragment_tops()
    segment.segment.term_tops()


def start_warm_up(ctx: QueryContext) -> threading.Thread:
    """warm_up in a thread of its own (a daemon thread: it never holds up an exit)."""
    thread = threading.Thread(target=warm_up, args=(ctx,), name="trove-warm-up", daemon=True)
    thread.start()
    return thread
