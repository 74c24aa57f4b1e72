"""Per segment: every suffix of the terms of its reports' content, in order.

A search for a word, a fragment or a phrase's first and last words looks up the terms
that hold, end or start with a string: a bisection in the terms' suffixes in order
(indexer/engine/lexicon.py). A lexicon puts them in order itself, one first character
at a time on first use, some milliseconds a segment: at a million reports (17 segments)
each first character a process met cost its search about 10 ms more, and a process's
first searches scanned every term instead. Kept beside the segment, the order costs a
process nothing: the lexicon bisects in the file, mapped and read as asked.

The table is the number of terms and of their characters (joined as the lexicon joins
them), then each suffix's term and where the suffix starts in it (u4 each, little
endian), then a checksum of it all, checked as the file is opened. One that is damaged
or of another lexicon is not used: the lexicon puts its suffixes in order itself, as
before.
"""

from __future__ import annotations

import mmap
import os
import struct
import sys
import zlib

import numpy as np

from indexer.engine.lexicon import Lexicon
from indexer.engine.postings import little_endian

_MAGIC = b"TROVE-SUFX\x00\x01"
_HEADER = struct.Struct("<12sIQI")  # magic, terms, characters joined, suffixes
_CHECKED = 1 << 20  # bytes summed at a time as the file is opened (a multiple of 4)


def suffix_table(lexicon: Lexicon) -> bytes:
    """The table of a lexicon's suffixes in order (Lexicon.suffix_order)."""
    owners, offsets = lexicon.suffix_order()
    head = _HEADER.pack(_MAGIC, len(lexicon), len(lexicon.joined), len(owners))
    body = head + little_endian(owners).tobytes() + little_endian(offsets).tobytes()
    return body + zlib.crc32(body).to_bytes(4, "little")


class SuffixOrder:
    """A segment's table of suffixes in order, mapped: ``owners`` and ``offsets`` as the
    lexicon takes them (Lexicon.use_suffix_order)."""

    def __init__(self, mapped: mmap.mmap, terms: int, characters: int, count: int) -> None:
        self._mapped = mapped  # kept open while the order is used
        self.terms = terms
        self.characters = characters
        view = memoryview(mapped)
        at = _HEADER.size
        self.owners = view[at : at + 4 * count].cast("I")
        self.offsets = view[at + 4 * count : at + 8 * count].cast("I")

    @classmethod
    def read(cls, fd: int) -> SuffixOrder | None:
        """The table in the open file ``fd`` (closed here, mapped if it is whole and
        intact); None if it is damaged, or not a table of suffixes. Checked through
        reads (the page cache), not the mapping: a process maps the pages it bisects."""
        try:
            size = os.fstat(fd).st_size
            head = os.pread(fd, _HEADER.size, 0)
            if len(head) < _HEADER.size or sys.byteorder == "big":
                return None  # (written little endian: on such a machine, as if missing)
            magic, terms, characters, count = _HEADER.unpack(head)
            owners_end = _HEADER.size + 4 * count
            if magic != _MAGIC or size != owners_end + 4 * count + 4:
                return None
            crc = zlib.crc32(head)
            for at in range(_HEADER.size, size - 4, _CHECKED):
                part = os.pread(fd, min(_CHECKED, size - 4 - at), at)
                crc = zlib.crc32(part, crc)
                if at < owners_end:  # each owner a term of the lexicon
                    owned = np.frombuffer(part[: owners_end - at], dtype="<u4")
                    if len(owned) and int(owned.max()) >= terms:
                        return None
            if crc != int.from_bytes(os.pread(fd, 4, size - 4), "little"):
                return None
            mapped = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
        return cls(mapped, terms, characters, count)

    def of(self, lexicon: Lexicon) -> bool:
        """Whether this is the order of that lexicon's suffixes (as far as the counts of
        its terms and characters tell)."""
        return self.terms == len(lexicon) and self.characters == len(lexicon.joined)
