"""When compaction runs and what it re-indexes (indexer/store.py: Syncer.compact does it).

Segments fall in tiers by the power of ten of their live documents; many small segments
of one tier are re-indexed into one, as are small segments that are mostly deleted
documents, and segments without live documents are dropped.
"""

from __future__ import annotations

from collections import Counter

from indexer.engine.writing import SegmentStats

# Compaction (see Syncer.compact) re-indexes the documents of small segments into one
# when a tier (the power of ten of a segment's live documents) holds this many segments...
COMPACT_FACTOR = 4
# ...for tiers up to this one (segments under 100 live documents), so that it stays cheap.
COMPACT_MAX_TIER = 1


def _tier(segment: SegmentStats) -> int:
    return len(str(max(segment.live, 1))) - 1


def compaction_victims(segments: list[SegmentStats]) -> list[SegmentStats]:
    """The segments whose documents compaction re-indexes: every tier up to the highest one
    (at most COMPACT_MAX_TIER) holding COMPACT_FACTOR segments, and small segments that are
    mostly deleted documents."""
    live = [s for s in segments if s.live > 0]
    tiers = Counter(_tier(s) for s in live)
    top = max(
        (t for t, n in tiers.items() if n >= COMPACT_FACTOR and t <= COMPACT_MAX_TIER), default=-1
    )
    return [
        s for s in live if _tier(s) <= top or (_tier(s) <= COMPACT_MAX_TIER and s.deleted > s.live)
    ]


def needs_compaction(segments: list[SegmentStats]) -> bool:
    victims = compaction_victims(segments)
    return len(victims) > 1 or any(s.deleted for s in victims) or any(s.live == 0 for s in segments)
