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

A block's data is the tuple Whoosh expects, but made of few objects: the ids (deltas)
and the weights as arrays, and values of varying size (a posting's NextTokens) as one
PackedValues, where Whoosh writes tuples of 128 ints, floats and bytes. Unpickling a
block of 128 reports postings takes ~3 us instead of ~9, and a search for what follows
a token looks in the values' one bytes. Each array is of the smallest type its numbers
fit (``compact``): a common word's ids differ by a few documents and its weights are
small counts, one byte each where four were. Blocks written before are read as well:
both are what Whoosh's reader takes.

Every segment keeps its codec (pickled in the index's table of contents), and every
block its PackedValues: indexes written before this module moved here pickled them as
``indexer.codec.TroveCodec`` and ``indexer.codec.PackedValues``, which indexer/codec.py
still names. Both classes must keep their names, and these two module paths must keep
them, or indexes written with them no longer open.
"""

from __future__ import annotations

import copyreg
import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, chain
from operator import sub
from pickle import dumps
from typing import Any, overload

from whoosh.codec.whoosh3 import (
    WHOOSH3_HEADER_MAGIC,
    W3Codec,
    W3FieldWriter,
    W3PostingsWriter,
    W3TermInfo,
)
from whoosh.system import pack_ushort
from whoosh.util.numeric import length_to_byte

from indexer.engine.postings import little_endian
from indexer.engine.whoosh.storage import abandon

BLOCK_PROTOCOL = 5
# Postings per block, as Whoosh's W3 codec writes them by default.
BLOCK_SIZE = 128
# Unsigned types from the smallest, with the largest number each holds.
_UNSIGNED = (("B", 0xFF), ("H", 0xFFFF), ("I", 0xFFFF_FFFF))
assert [array(t).itemsize for t, _ in _UNSIGNED] == [1, 2, 4]
_ENDS = "I"  # the ends' type before compact ones; little-endian


def compact(numbers: Sequence[int]) -> array[int]:
    """Non-negative ints (below 2**32) as an array of the smallest unsigned type that
    holds them all."""
    top = max(numbers, default=0)
    for typecode, most in _UNSIGNED:
        if top <= most:
            break
    else:
        raise ValueError(f"{top} does not fit 4 bytes")
    return (
        numbers
        if isinstance(numbers, array) and numbers.typecode == typecode
        else array(typecode, numbers)
    )


class PackedValues(Sequence[bytes]):
    """The values of a block's postings: all in one ``data``, value i ending at
    ``ends[i]``. Whoosh reads a value as ``values[i]``. Pickled with the ends' type
    (``compact``); blocks written before it pickled 4-byte ends and no type."""

    __slots__ = ("data", "ends")

    def __init__(self, data: bytes, ends: bytes, typecode: str = _ENDS) -> None:
        self.data = data
        self.ends = little_endian(array(typecode, ends))

    @classmethod
    def of(cls, values: Sequence[bytes]) -> PackedValues:
        return cls.from_lengths(b"".join(values), map(len, values))

    @classmethod
    def from_lengths(cls, data: bytes, lengths: Iterable[int]) -> PackedValues:
        """The values ``data`` holds one after another, of these lengths."""
        packed = cls.__new__(cls)
        packed.data = data
        packed.ends = compact(array(_ENDS, accumulate(lengths)))
        return packed

    def __reduce__(self) -> tuple[type[PackedValues], tuple[bytes, bytes, str]]:
        ends = self.ends
        return PackedValues, (
            self.data,
            little_endian(array(ends.typecode, ends)).tobytes(),
            ends.typecode,
        )

    def __len__(self) -> int:
        return len(self.ends)

    @overload
    def __getitem__(self, i: int) -> bytes: ...
    @overload
    def __getitem__(self, i: slice) -> list[bytes]: ...
    def __getitem__(self, i: int | slice) -> bytes | list[bytes]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self.ends)
        if not 0 <= i < len(self.ends):
            raise IndexError("PackedValues index out of range")
        end = self.ends[i]
        return self.data[self.ends[i - 1] if i else 0 : end]

    def __iter__(self) -> Iterator[bytes]:
        data = self.data
        return map(data.__getitem__, map(slice, (0, *self.ends[:-1]), self.ends))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PackedValues) and (self.data, self.ends) == (
            other.data,
            other.ends,
        )

    def __repr__(self) -> str:
        return f"PackedValues({list(self)!r})"


# Pickle's extension registry (codes 240-255 are for private use) names what a block
# holds in 2 bytes each, where the modules' and classes' names took 92 bytes a block
# (320 MB of postings at 1M reports). A process reads such blocks once this module is
# imported, which opening an index does: its table of contents names TroveCodec.
EXTENSIONS = {
    ("array", "_array_reconstructor"): 240,
    ("array", "array"): 241,
    (__name__, "PackedValues"): 242,
}
for (_module, _name), _code in EXTENSIONS.items():
    copyreg.add_extension(_module, _name, _code)


class TermPostings:
    """One term's postings, in document order, as a writer collects them: the document
    numbers, the weights, and the values one after another (value i is ``lengths[i]``
    bytes). About 18 bytes and the value a posting, where a tuple took ~136."""

    __slots__ = ("data", "ids", "lengths", "weights")

    def __init__(self) -> None:
        self.ids = array("I")
        self.weights = array("d")
        self.data = bytearray()
        self.lengths = array("I")

    @classmethod
    def of_bytes(cls, ids: bytes, weights: bytes, data: bytes, lengths: bytes) -> TermPostings:
        """Postings from the bytes of their numbers (native uint32 ids and lengths,
        float64 weights) and of their values."""
        postings = cls.__new__(cls)
        postings.ids = array("I", ids)
        postings.weights = array("d", weights)
        postings.data = bytearray(data)
        postings.lengths = array("I", lengths)
        return postings

    def __len__(self) -> int:
        return len(self.ids)

    def tuples(self) -> list[tuple[int, float, bytes]]:
        """(document number, weight, value) of each posting."""
        data, values, start = self.data, [], 0
        for n in self.lengths:
            values.append(bytes(data[start : start + n]))
            start += n
        return list(zip(self.ids, self.weights, values, strict=True))

    def sort(self) -> None:
        """In document order (as Whoosh sorts postings) after some came out of order."""
        ordered = sorted(self.tuples())
        self.ids = array("I", [p[0] for p in ordered])
        self.weights = array("d", [p[1] for p in ordered])
        self.data = bytearray(b"".join(p[2] for p in ordered))
        self.lengths = array("I", [len(p[2]) for p in ordered])

    def without(self, docnum: int) -> TermPostings:
        """These postings but those of ``docnum``."""
        kept = TermPostings()
        for doc, weight, value in self.tuples():
            if doc != docnum:
                kept.ids.append(doc)
                kept.weights.append(weight)
                kept.data += value
                kept.lengths.append(len(value))
        return kept


class TroveCodec(W3Codec):
    """Whoosh's W3 codec, writing postings blocks with pickle protocol 5, and not
    compressing them unless asked to."""

    def __init__(self, blocklimit: int = BLOCK_SIZE, compression: int = 0, inlinelimit: int = 1):
        super().__init__(blocklimit, compression, inlinelimit)

    def postings_writer(self, dbfile: Any, byteids: bool = False) -> W3PostingsWriter:
        return _PostingsWriter(
            dbfile,
            blocklimit=self._blocklimit,
            byteids=byteids,
            compression=self._compression,
            inlinelimit=self._inlinelimit,
        )

    def field_writer(self, storage: Any, segment: Any) -> W3FieldWriter:
        return _FieldWriter(self, storage, segment)


class _FieldWriter(W3FieldWriter):
    """Whoosh's W3 field writer, which also takes the postings a term at a time, and can
    give up the files it made (``abandon``): its segment writer's when that fails, and
    its own if it cannot make the postings file (a writer that fails while it is made is
    never handed back to be closed)."""

    def __init__(self, codec: Any, storage: Any, segment: Any) -> None:
        self._made: list[Any] = []
        try:
            super().__init__(codec, storage, segment)
        except BaseException:
            self.abandon()
            raise

    def _create_file(self, ext: str) -> Any:
        structfile = super()._create_file(ext)
        self._made.append(structfile)
        return structfile

    def abandon(self) -> None:
        """Close the files made (the terms table, the postings) without writing more."""
        for structfile in self._made:
            abandon(structfile)

    def add_groups(
        self,
        schema: Any,
        lengths: Any,
        groups: Iterable[tuple[str, Iterable[tuple[bytes, TermPostings]]]],
    ) -> None:
        """What ``add_postings`` writes, from each field's terms in order with their
        postings."""
        length_of = lengths.doc_field_length if lengths else None
        for fieldname, terms in groups:
            self.start_field(fieldname, schema[fieldname])
            postwriter = self._postwriter
            for text, postings in terms:
                if postings.ids[0] == -1:  # Whoosh's spelling words: not postings
                    postings = postings.without(-1)
                    if not postings:
                        continue
                lengths_of = (
                    [length_of(docnum, fieldname) for docnum in postings.ids] if length_of else None
                )
                if len(postings) == 1:  # of one document: half a segment's terms (keys, paths)
                    self._add_single(text, postings, lengths_of)
                    continue
                self.start_term(text)
                postwriter.add_all(postings, lengths_of)
                self.finish_term()
            self.finish_field()

    def _add_single(self, text: bytes, postings: TermPostings, lengths: list[int] | None) -> None:
        """start_term, add_all and finish_term of a term of one posting, in one go: the
        block, its term info and its row in the terms table are those they write (the
        segment compared with Whoosh's byte for byte, tests/test_engine_whoosh_codec.py),
        in 22-26 us where they took 32."""
        postwriter = self._postwriter
        postfile = postwriter._postfile
        terminfo = W3TermInfo()
        start = postfile.tell()
        postwriter._format = self._format
        postwriter._terminfo = terminfo
        postwriter._blockcount = 0
        postwriter._ids = postings.ids
        weight = postings.weights[0]
        postwriter._weights = array("f", postings.weights)
        postwriter._maxweight = max(0, weight)
        size = postings.lengths[0]
        postwriter._values = (
            PackedValues.from_lengths(bytes(postings.data), postings.lengths) if size else []
        )
        length = lengths[0] if lengths else 0
        postwriter._minlength = length or None
        postwriter._maxlength = length
        postwriter._write_block(last=True)
        terminfo.set_extent(start, postfile.tell() - start)
        postwriter._terminfo = None
        self._tindex.add(pack_ushort(self._fieldid) + text, terminfo.to_bytes())


class _PostingsWriter(W3PostingsWriter):
    """Whoosh's minified block data, as arrays where Whoosh makes tuples of numbers."""

    def add_all(self, postings: TermPostings, lengths: list[int] | None) -> None:
        """``add_posting`` of each posting of a term in turn (a term just started), a
        block at a time."""
        limit = self._blocklimit
        count = len(postings)
        last = (count - 1) // limit * limit
        data, sizes = postings.data, postings.lengths
        offset = 0
        for start in range(0, count, limit):
            stop = start + limit
            self._ids = postings.ids[start:stop]
            weights = postings.weights[start:stop]
            self._weights = array("f", weights)
            self._maxweight = max(0, max(weights))
            block_sizes = sizes[start:stop]
            end = offset + sum(block_sizes)
            values = PackedValues.from_lengths(bytes(data[offset:end]), block_sizes)
            # Whoosh leaves empty values out of a block: so must these.
            self._values = [v for v in values if v] if 0 in block_sizes else values
            offset = end
            if lengths is not None:
                present = [n for n in lengths[start:stop] if n]
                if present:
                    self._minlength = min(present)
                    self._maxlength = max(present)
            if start != last:
                self._write_block()

    def _mini_ids(self) -> Any:
        if self._byteids:
            return super()._mini_ids()
        ids = self._ids  # as Whoosh's delta_encode: each id less the one before
        return compact(array("I", map(sub, ids, chain((0,), ids))))

    def _mini_weights(self) -> Any:
        # Whoosh's: None if all are 1, the one weight if all are equal, else all of them
        # (here as an array, counted in C where Whoosh compares each in Python).
        weights = self._weights  # add_all's array, or Whoosh's list (add_posting)
        first = weights[0]
        if weights.count(first) == len(weights):
            return None if first == 1.0 else first
        floats = weights
        if not (isinstance(floats, array) and floats.typecode == "f"):
            floats = array("f", weights)
        if 0 <= min(floats) and max(floats) <= 0xFFFF:
            counts = array("I", map(int, floats))
            if array("f", counts) == floats:  # counts, as most weights are
                return compact(counts)
        return floats

    def _mini_values(self) -> Any:
        size = self._format.fixed_value_size()
        values = self._values
        if isinstance(values, PackedValues):  # packed by add_all
            if size is None or size < 0:
                return values
            return None if size == 0 else values.data
        if size is None or size < 0:
            return PackedValues.of(self._values)
        return super()._mini_values()

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
        maxweight = self._maxweight
        infobytes = dumps(
            (
                len(ids),
                ids[-1],
                # A count as an int: 2 or 3 bytes pickled, where a float takes 9.
                int(maxweight) if float(maxweight).is_integer() else maxweight,
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
