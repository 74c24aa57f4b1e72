"""The search engine seam: trove's indexes are kept and searched through these protocols.

- ``fields``: the fields sources declare, in terms no engine owns;
- ``postings``: what postings hold, computed from a document's terms alone;
- ``writing``: what the store's single writer asks of an engine (and ``Engine``);
- ``base``: what the searches ask of an engine; ``lexicon``: a segment's terms;
- ``whoosh``: the Whoosh implementation, the only package that imports ``whoosh``.
"""

from __future__ import annotations

from indexer.engine.writing import Engine

ENGINES = ("whoosh",)


def get_engine(name: str = "whoosh") -> Engine:
    """The engine of that name."""
    if name == "whoosh":
        from indexer.engine.whoosh import WhooshEngine

        return WhooshEngine()
    raise ValueError(f"unknown engine {name!r}; trove has {', '.join(ENGINES)}")
