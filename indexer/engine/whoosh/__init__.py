"""The Whoosh engine: the only package of trove that imports ``whoosh``.

- ``schema``: trove's fields as a Whoosh schema, with the store's bookkeeping fields;
- ``formats``: the analyzer wrapping a field's tokenizer, the postings formats, the bytes
  column;
- ``codec``: TroveCodec, Whoosh's W3 codec with postings blocks of few objects;
- ``storage``: opening and creating an index folder;
- ``writing``: the write protocol (indexer/engine/writing.py) and the engine object;
- ``reading``: the read protocol (indexer/engine/base.py).
"""

from indexer.engine.whoosh.writing import WhooshEngine

__all__ = ["WhooshEngine"]
