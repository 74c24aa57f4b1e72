"""The names under which existing indexes pickled trove's Whoosh codec.

The codec lives in indexer/engine/whoosh/codec.py. Indexes written before it moved there
pickled ``indexer.codec.TroveCodec`` into their table of contents and
``indexer.codec.PackedValues`` into their postings blocks; unpickling looks both up here,
so this module must keep naming them for those indexes to open.
"""

from indexer.engine.whoosh.codec import PackedValues, TroveCodec

__all__ = ["PackedValues", "TroveCodec"]
