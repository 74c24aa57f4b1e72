"""The search engine seam: trove's indexes are kept and searched through these protocols.

- ``fields``: the fields sources declare, in terms no engine owns;
- ``postings``: what postings hold, computed from a document's terms alone;
- ``writing``: what the store's single writer asks of an engine (and ``Engine``);
- ``base``: what the searches ask of an engine; ``lexicon``: a segment's terms;
- ``whoosh``: the Whoosh implementation, the only package that imports ``whoosh``;
- ``scan``: the plain-scan reference engine (no index: the files read as they are).
"""

from __future__ import annotations

from indexer.engine.writing import Engine

ENGINES = ("whoosh", "scan")


def get_engine(name: str = "whoosh") -> Engine:
    """The engine of that name: "whoosh" keeps the indexes; "scan" keeps none and reads
    the files (the reference the differential tests check the others with)."""
    if name == "whoosh":
        from indexer.engine.whoosh import WhooshEngine

        return WhooshEngine()
    if name == "scan":
        from indexer.engine.scan import ScanEngine

        return ScanEngine()
    raise ValueError(f"unknown engine {name!r}; trove has {', '.join(ENGINES)}")
