"""The Whoosh codec trove writes its indexes with.

Whoosh 2.7.4 pickles each block of postings with pickle protocol 2, which encodes every
bytes object (a posting's value) as a call to ``_codecs.encode``: unpickling a block
of 128 postings with positions costs ~90 us, four times what protocol 5 costs (~20 us),
and a phrase search decodes thousands of blocks. TroveCodec is Whoosh's W3 codec with
protocol 5 blocks; Whoosh reads them with the same ``pickle.loads``.

Nor does it compress the blocks (unless given a compression level): ``zlib.decompress``
of a block of postings took ~15 us, more than unpickling it (~10 us), and a search for
a common word decodes hundreds. The index is larger for it: the 10k bench corpus takes
157 MB instead of 91 MB.

Every segment keeps its codec (pickled in the index's table of contents): this class
must keep its name and module, or indexes written with it no longer open.
"""

from __future__ import annotations

import zlib
from pickle import dumps
from typing import Any

from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC, W3Codec, W3PostingsWriter
from whoosh.util.numeric import length_to_byte

BLOCK_PROTOCOL = 5


class TroveCodec(W3Codec):
    """Whoosh's W3 codec, writing postings blocks with pickle protocol 5, and not
    compressing them unless asked to."""

    def __init__(self, blocklimit: int = 128, compression: int = 0, inlinelimit: int = 1):
        super().__init__(blocklimit, compression, inlinelimit)

    def postings_writer(self, dbfile: Any, byteids: bool = False) -> W3PostingsWriter:
        return _PostingsWriter(
            dbfile,
            blocklimit=self._blocklimit,
            byteids=byteids,
            compression=self._compression,
            inlinelimit=self._inlinelimit,
        )


class _PostingsWriter(W3PostingsWriter):
    def _write_block(self, last: bool = False) -> None:
        """W3PostingsWriter._write_block (Whoosh 2.7.4) with another pickle protocol
        for the block's data; the block's info tuple is unchanged."""
        if not self._blockcount:
            self._postfile.write(WHOOSH3_HEADER_MAGIC)
        self._terminfo.add_block(self)
        data = (self._mini_ids(), self._mini_weights(), self._mini_values())
        databytes = dumps(data, BLOCK_PROTOCOL)
        comp = self._compression
        if comp:
            databytes = zlib.compress(databytes, comp)
        ids = self._ids
        infobytes = dumps(
            (
                len(ids),
                ids[-1],
                self._maxweight,
                comp,
                length_to_byte(self._minlength),
                length_to_byte(self._maxlength),
            ),
            2,
        )
        blocklength = len(infobytes) + len(databytes)
        if last:
            blocklength *= -1  # the last block has a negative length
        self._postfile.write_int(blocklength)
        self._postfile.write(infobytes)
        self._postfile.write(databytes)
        self._blockcount += 1
        self._new_block()
