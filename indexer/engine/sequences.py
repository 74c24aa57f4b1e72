"""Per segment: every document's tokens in order, each as a 16-bit code.

A query of several tokens whose words most documents hold (``the the``, ``token
validate``) is among the costliest a search meets: its tokens' postings leave most
documents, and counting it reads every stored text (query/reports/text_count.py). Yet the
query can only occur where consecutive tokens are each one of the terms its own tokens
can be (the first ends a term, the last starts one, those between equal one). So, as a
segment is written, each document's tokens (those its postings are made of) are kept in
order as codes, two bytes a token where the text takes about eight, and a search finds
such runs of tokens by comparing codes (``TokenSequences.runs``). A run is only where the
query may be (what lies between the tokens, and whether two occurrences overlap, are not
kept): the search counts in the texts of the documents that hold the most runs, first.

Codes number the segment's terms in code point order, so that the terms that start with
a string have consecutive codes. Past CODED distinct terms, those first seen later share
the code OTHER, which a search takes for any of them. Each document's tokens are followed
by BOUNDARY, and the codes start with one, so that no run spans two documents.

The table is written beside the segment's files when the segment is. All but its codes
are checked as it is opened (a checksum), and its codes a chunk at a time, each the first
time a search reads it (a checksum per chunk): at a million reports the codes are 2 GB,
which a process's first search would otherwise wait for. A table that is missing,
damaged or of another segment is not used, nor is one whose codes are found damaged from
then on, nor one cut short since it was opened. A search reads the codes a part at a time
(a process keeps none of them). A reconcile checks every chunk (``intact``).
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import queue
import struct
import threading
import weakref
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from indexer.engine.lexicon import Lexicon
from indexer.engine.postings import Numbering, TermNumbers, numbered

CODED = 0xFFFE  # terms with a code of their own, at most
OTHER = 0xFFFE  # the code of every term past those
BOUNDARY = 0xFFFF  # after each document's tokens
_CODES = 1 << 16
_RUN_CODES = 1 << 22  # codes read and compared in one go (one task)
_CHECKED_CODES = 1 << 18  # codes of a chunk: one checksum each, checked when first read
# The codes of a set that make at most _RANGES_MOST runs of consecutive codes are compared
# with each run; others are looked up in a table, which costs about _TABLE_WORK
# comparisons with a run; each run of tokens found costs about _FOUND_WORK (its other
# tokens looked up). Measured on the 100k bench corpus: a comparison with a run costs
# about 0.5 ns of CPU a code.
_RANGES_MOST = 3
_TABLE_WORK = 4
_FOUND_WORK = 60
T = TypeVar("T")
_MAGIC = b"TROVE-SEQS\x00\x02"
# magic, documents, codes, terms, bytes of the terms' UTF-8; padded to 8 bytes.
_HEADER = struct.Struct("<12sIQIQ4x")

log = logging.getLogger(__name__)

Codes = npt.NDArray[np.uint16]


def _padded(n: int) -> int:
    return -n % 8


class SequenceWriter:
    """Takes a segment's documents' tokens as they are added; ``table()`` makes the
    segment's table of them."""

    def __init__(self, numbers: TermNumbers | None = None) -> None:
        """``numbers``: the segment's terms numbered by its writer, which then adds each
        document with its terms' numbers (``add``); else the table numbers them itself.
        Either way a term's number is its order of first sight: the first CODED have
        codes of their own."""
        self._numbers = numbers or TermNumbers()
        self._stream = bytearray(BOUNDARY.to_bytes(2, "little"))
        self._extents = array("Q")  # by document number: its tokens and BOUNDARY, or 0

    def add(
        self, docnum: int, numbering: Numbering, terms: npt.NDArray[np.uint32] | None = None
    ) -> None:
        """Document ``docnum``'s tokens, ``words[i]`` for each ``i`` of ``numbers`` (a
        numbering: indexer/engine/postings.py), and the numbers of its words if the
        writer numbered them. Documents come in order of number; one never added has no
        tokens."""
        words, numbers = numbering
        if docnum < len(self._extents):
            raise ValueError(f"document {docnum} added after {len(self._extents) - 1}")
        self._extents.extend(itertools.repeat(0, docnum - len(self._extents)))
        if not len(numbers):
            self._extents.append(0)
            return
        if terms is None:
            terms = self._numbers.number(words)
        local = np.minimum(terms, OTHER).astype("<u2")  # (CODED is OTHER)
        self._stream += local[numbers].tobytes()
        self._stream += BOUNDARY.to_bytes(2, "little")
        self._extents.append(len(numbers) + 1)

    def add_tokens(self, docnum: int, tokens: list[str]) -> None:
        """``add`` for a document's tokens as a list."""
        self.add(docnum, numbered(tokens))

    def table(self, doc_count: int) -> bytes:
        """The table of the documents added (numbered below ``doc_count``)."""
        extents = np.zeros(doc_count, dtype=np.uint64)
        extents[: len(self._extents)] = np.frombuffer(self._extents, dtype=np.uint64)[:doc_count]
        starts = np.empty(doc_count + 1, dtype="<u8")
        starts[0] = 1
        np.cumsum(extents, out=starts[1:])
        starts[1:] += 1
        coded = self._numbers.words[:CODED]
        order = sorted(range(len(coded)), key=coded.__getitem__)
        terms = [coded[k] for k in order]
        remap = np.full(_CODES, OTHER, dtype="<u2")
        remap[BOUNDARY] = BOUNDARY
        remap[order] = np.arange(len(terms), dtype="<u2")
        stream = np.frombuffer(self._stream, dtype="<u2")
        codes = remap[stream[: int(starts[-1])]]
        totals = np.bincount(codes, minlength=_CODES).astype("<u8")
        kept = np.append(totals[: len(terms)], totals[OTHER])
        encoded = [t.encode("utf-8") for t in terms]
        names = b"".join(encoded)
        lengths = np.fromiter(map(len, encoded), dtype="<u4", count=len(encoded))
        data = codes.tobytes()
        sums = list(map(zlib.crc32, _chunks(memoryview(data))))
        head = [
            _HEADER.pack(_MAGIC, doc_count, len(codes), len(terms), len(names)),
            starts.tobytes(),
            kept.tobytes(),
        ]
        tail = [
            lengths.tobytes(),
            bytes(_padded(4 * len(lengths))),
            names,
            bytes(-len(names) % 4),
            np.array(sums, dtype="<u4").tobytes(),
        ]
        rest = [bytes(_padded(len(data))), *tail]  # after the codes
        crc = 0  # of all but the codes (theirs are in ``sums``)
        for part in [*head, *rest]:
            crc = zlib.crc32(part, crc)
        return b"".join([*head, data, *rest, crc.to_bytes(4, "little")])


class _Layout(NamedTuple):
    """Where each part of a table is, from its header (byte offsets)."""

    docs: int
    codes: int  # how many
    starts_at: int
    totals_at: int
    codes_at: int
    lengths_at: int
    names_at: int
    sums_at: int  # the codes' checksums, one a chunk
    chunks: int
    terms: int
    names: int  # bytes


def _layout(data: bytes, size: int, doc_count: int) -> _Layout | None:
    """The layout the header ``data`` (its first _HEADER.size bytes, at least) gives a
    table of ``size`` bytes in all; None if it is not that of one for a segment of
    ``doc_count`` documents."""
    if size < _HEADER.size + 4 or len(data) < _HEADER.size:
        return None
    magic, docs, n, terms, names = _HEADER.unpack_from(data)
    if magic != _MAGIC or docs != doc_count or terms > CODED:
        return None
    at = [_HEADER.size]
    for count, width in ((docs + 1, 8), (terms + 1, 8), (n, 2), (terms, 4)):
        end = at[-1] + count * width
        at.append(end + _padded(end))
    sums_at = at[-1] + names + -names % 4
    chunks = -(-n // _CHECKED_CODES)
    if size != sums_at + 4 * chunks + 4:
        return None
    starts_at, totals_at, codes_at, lengths_at, names_at = at
    return _Layout(
        docs, n, starts_at, totals_at, codes_at, lengths_at, names_at, sums_at, chunks, terms, names
    )


def _sums_hold(head: bytes, rest: bytes, trailer: bytes) -> bool:
    """Whether the table's checksum of all but its codes (the bytes before them and
    after them) holds."""
    return zlib.crc32(rest, zlib.crc32(head)) == int.from_bytes(trailer, "little")


def _sums(layout: _Layout, tail: bytes) -> list[int]:
    """The checksums of the codes' chunks, from the bytes after the codes."""
    at = layout.sums_at - layout.lengths_at
    return np.frombuffer(tail, dtype="<u4", count=layout.chunks, offset=at).tolist()


def _chunks(codes: memoryview | bytes) -> Iterator[memoryview | bytes]:
    """The bytes of the codes, a chunk (of _CHECKED_CODES) at a time."""
    step = 2 * _CHECKED_CODES
    return (codes[a : a + step] for a in range(0, len(codes), step))


def _chunk_holds(chunk: memoryview | bytes, crc: int) -> bool:
    return zlib.crc32(chunk) == crc


class _CheckedCodes:
    """Reads a table's codes from its file (``fd``; the codes at byte ``base``), each
    chunk checked against its checksum the first time it is read; once one is found
    damaged, the table's codes are no longer read (OSError, as for a file cut short)."""

    def __init__(self, fd: int, base: int, n: int, sums: list[int]) -> None:
        self.fd, self.base, self.n, self.sums = fd, base, n, sums
        self.checked = bytearray(len(sums))  # per chunk: 1 once it held
        self.damaged = False

    def __call__(self, start: int, stop: int) -> Codes:
        if stop <= start:
            return np.zeros(0, dtype="<u2")
        if self.damaged:
            raise OSError("token sequences damaged")
        first, last = start // _CHECKED_CODES, (stop - 1) // _CHECKED_CODES
        if all(self.checked[first : last + 1]):
            return self._read(start, stop)
        a, b = first * _CHECKED_CODES, min(self.n, (last + 1) * _CHECKED_CODES)
        data = os.pread(self.fd, 2 * (b - a), self.base + 2 * a)  # each chunk it touches
        for i, chunk in enumerate(_chunks(memoryview(data)), first):
            if len(chunk) == 2 * (min(self.n, (i + 1) * _CHECKED_CODES) - i * _CHECKED_CODES):
                if not self.checked[i] and not _chunk_holds(chunk, self.sums[i]):
                    self.damaged = True
                    log.warning("token sequences damaged (codes %d and on)", i * _CHECKED_CODES)
                    raise OSError("token sequences damaged")
                self.checked[i] = 1
        codes = np.frombuffer(data[: len(data) & ~1], dtype="<u2")
        return codes[start - a : stop - a]  # (cut short: the caller says so)

    def check_all(self) -> bool:
        """Whether every chunk holds (each read and checked, where not yet)."""
        try:
            for i in range(len(self.sums)):
                if not self.checked[i]:
                    at = i * _CHECKED_CODES
                    found = self(at, min(self.n, at + _CHECKED_CODES))
                    if len(found) != min(self.n, at + _CHECKED_CODES) - at:
                        return False
        except OSError:
            return False
        return True

    def _read(self, start: int, stop: int) -> Codes:
        data = os.pread(self.fd, 2 * (stop - start), self.base + 2 * start)
        return np.frombuffer(data[: len(data) & ~1], dtype="<u2")


class TokenSequences:
    """A segment's table: its documents' tokens as codes, and the runs of them a query
    of several tokens can be.

    The codes are read a part at a time as a search compares them (``read_codes``: from
    the file, or from the table in memory), so that a process holds none of them
    between searches; the rest (where each document starts, the terms) is held."""

    def __init__(
        self,
        n: int,
        read_codes: Callable[[int, int], Codes],
        starts: npt.NDArray[np.uint64],
        totals: npt.NDArray[np.uint64],
        lengths: npt.NDArray[np.uint32],
        names: bytes,
        fd: int | None = None,
    ) -> None:
        self._n = n
        self._read_codes = read_codes
        self.starts = starts.astype(np.int64)
        self._totals = totals  # tokens per code of a term, then OTHER's
        self._lengths = lengths
        self._names = names
        # The file ``read_codes`` reads, closed with this table (or by ``close``).
        self._closing = None if fd is None else weakref.finalize(self, os.close, fd)
        self._lexicon: tuple[Lexicon, dict[str, int] | None] | None = None

    def __len__(self) -> int:
        """How many codes (tokens and boundaries) it holds."""
        return self._n

    def close(self) -> None:
        """Closes the file the codes are read from, if any: they can no longer be read."""
        if self._closing is not None:
            self._closing()

    @property
    def doc_count(self) -> int:
        return len(self.starts) - 1

    def intact(self) -> bool:
        """Whether every chunk of its codes is as written (each read and checked, where
        not yet; a reconcile asks, to write a damaged table anew)."""
        check = getattr(self._read_codes, "check_all", None)
        return True if check is None else bool(check())

    def codes(self, start: int = 0, stop: int | None = None) -> Codes:
        """The codes from ``start`` to ``stop`` (the end if None); OSError if they can no
        longer be read."""
        stop = self._n if stop is None else min(stop, self._n)
        if self._closing is not None and not self._closing.alive:
            raise OSError("token sequences closed")
        found = self._read_codes(start, stop)
        if len(found) != max(0, stop - start):
            raise OSError(f"token sequences cut short: {len(found)} of {stop - start} codes")
        return found

    @classmethod
    def parse(cls, data: bytes, doc_count: int) -> TokenSequences | None:
        """The table written as ``data`` for a segment of ``doc_count`` documents; None
        if it is not one (cut short, damaged, of another segment or of another layout)."""
        size = len(data)
        layout = _layout(data, size, doc_count)
        if layout is None:
            return None
        codes_end = layout.codes_at + 2 * layout.codes
        head, rest = data[: layout.codes_at], data[codes_end : size - 4]
        if not _sums_hold(head, rest, data[size - 4 :]):
            return None
        tail = rest[layout.lengths_at - codes_end :]
        view = memoryview(data)[layout.codes_at : codes_end]
        if not all(map(_chunk_holds, _chunks(view), _sums(layout, tail))):
            return None
        codes = np.frombuffer(view, dtype="<u2")
        return cls._checked(layout, head, tail, lambda start, stop: codes[start:stop])

    @classmethod
    def read(cls, fd: int, doc_count: int) -> TokenSequences | None:
        """``parse`` for a table in a file (``fd``, open for reading): all but its codes
        read and checked now, the codes as searches ask for them (each chunk checked
        the first time). The table keeps the file open; the file is closed if it holds
        no table."""
        try:
            found = cls._read(fd, doc_count)
        except BaseException:
            os.close(fd)
            raise
        if found is None:
            os.close(fd)
        return found

    @classmethod
    def _read(cls, fd: int, doc_count: int) -> TokenSequences | None:
        size = os.fstat(fd).st_size
        layout = _layout(os.pread(fd, _HEADER.size, 0), size, doc_count)
        if layout is None:
            return None
        codes_end = layout.codes_at + 2 * layout.codes
        head = os.pread(fd, layout.codes_at, 0)
        rest = os.pread(fd, size - 4 - codes_end, codes_end)
        if not _sums_hold(head, rest, os.pread(fd, 4, size - 4)):
            return None
        tail = rest[layout.lengths_at - codes_end :]
        read_codes = _CheckedCodes(fd, layout.codes_at, layout.codes, _sums(layout, tail))
        return cls._checked(layout, head, tail, read_codes, fd)

    @classmethod
    def _checked(
        cls,
        layout: _Layout,
        head: bytes,
        tail: bytes,
        read_codes: Callable[[int, int], Codes],
        fd: int | None = None,
    ) -> TokenSequences | None:
        """From the bytes before the codes (``head``) and after them (``tail``), once the
        table's checksum held; None if what they say does not hold together."""
        docs, n, terms = layout.docs, layout.codes, layout.terms
        starts = np.frombuffer(head, dtype="<u8", count=docs + 1, offset=layout.starts_at)
        if n and (
            starts[0] != 1 or int(starts[-1]) != n or np.any(np.diff(starts.astype(np.int64)) < 0)
        ):
            return None
        lengths = np.frombuffer(tail, dtype="<u4", count=terms)
        if int(lengths.sum(dtype=np.uint64)) != layout.names:
            return None
        names_at = layout.names_at - layout.lengths_at
        return cls(
            n,
            read_codes,
            starts,
            np.frombuffer(head, dtype="<u8", count=terms + 1, offset=layout.totals_at),
            lengths,
            bytes(tail[names_at : names_at + layout.names]),
            fd,
        )

    # ---- what a query's tokens can be, as codes

    def terms(self) -> list[str]:
        """The terms with a code of their own, in order of code."""
        names = bytes(self._names)
        ends = np.cumsum(self._lengths, dtype=np.int64).tolist()
        return [names[a:b].decode("utf-8") for a, b in itertools.pairwise([0, *ends])]

    def codes_of(self, lexicon: Lexicon, ks: Sequence[int]) -> Codes | None:
        """The codes of terms ``ks`` of ``lexicon`` (the segment's, of the field the
        tokens are of), in order; None if the table does not hold every one (a term
        of the lexicon it has no code for, where it gave none OTHER)."""
        if self._lexicon is None or self._lexicon[0] is not lexicon:
            terms = self.terms()
            same = terms == lexicon.terms()
            self._lexicon = (lexicon, None if same else {t: c for c, t in enumerate(terms)})
        index = self._lexicon[1]
        if index is None:
            return np.unique(np.asarray(ks, dtype=np.uint16))
        found = [index.get(lexicon.term(k), OTHER) for k in ks]
        if OTHER in found and not self._totals[-1]:
            return None
        return np.unique(np.asarray(found, dtype=np.uint16))

    def _tokens_of(self, codes: Codes) -> int:
        """How many tokens have one of these codes."""
        at = np.minimum(codes.astype(np.int64), len(self._totals) - 1)  # OTHER: the last
        return int(self._totals[at].sum())

    def work(self, sets: Sequence[Codes]) -> float:
        """About how much work ``runs(sets)`` does, in comparisons of a code with a run of
        consecutive codes (what the plan of a search weighs it by)."""
        return min(map(self._work_from, sets), default=0.0)

    def _work_from(self, codes: Codes) -> float:
        """The work of ``runs`` starting from the tokens of ``codes``: every code compared
        with them, then the other tokens of each run found looked up."""
        per_code = _TABLE_WORK if _by_table(codes) else len(_ranges(codes))
        return self._n * per_code + self._tokens_of(codes) * _FOUND_WORK

    # ---- runs

    def runs(self, sets: Sequence[Codes]) -> npt.NDArray[np.int64]:
        """Per document, by number: how many runs of ``len(sets)`` consecutive tokens it
        holds whose ``j``-th token's code is one of ``sets[j]`` (sorted, distinct);
        OSError if the codes can no longer be read.

        The codes are read and compared a part at a time, the parts on every core: those
        of the set that fewest tokens have with every code, the other sets only where
        those are."""
        counts = np.zeros(self.doc_count, dtype=np.int64)
        n, k = self._n, len(sets)
        if not sets or any(len(s) == 0 for s in sets) or not n:
            return counts
        first = min(range(k), key=lambda j: self._work_from(sets[j]))
        rest = sorted(set(range(k)) - {first}, key=lambda j: self._tokens_of(sets[j]))

        def part(a: int, b: int) -> npt.NDArray[np.int64]:
            """The starts of the runs whose ``first``-th token is in ``a`` .. ``b`` - 1."""
            low = max(0, a - k + 1)  # the codes of every run that can be one
            codes = self.codes(low, min(n, b + k - 1))
            at = np.flatnonzero(_member(codes[a - low : b - low], sets[first])).astype(np.int64)
            at += a - low - first  # where each run would start, in ``codes``
            for j in rest:
                where = at + j
                inside = (where >= 0) & (where < len(codes))
                if not inside.all():
                    at, where = at[inside], where[inside]
                at = at[_member(codes[where], sets[j])]
            return at + low

        bounds = list(itertools.pairwise([*range(0, n, _RUN_CODES), n]))
        if len(bounds) == 1:
            found = part(*bounds[0])
        else:
            found = np.concatenate(_workers().map(lambda ab: part(*ab), bounds))
        if len(found):
            docs = np.searchsorted(self.starts, found, side="right") - 1
            counts += np.bincount(docs, minlength=self.doc_count)
        return counts


class _Workers:
    """Threads for comparing codes, one per core, kept for the process (started anew in a
    child forked from it): on a busy machine, starting a thread can take longer than
    comparing a segment's codes. Daemon threads: a process never waits for them."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._tasks: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        for i in range(os.cpu_count() or 1):
            threading.Thread(target=self._work, name=f"trove-runs-{i}", daemon=True).start()

    def _work(self) -> None:
        while True:
            call, future = self._tasks.get()
            try:
                future.set_result(call())
            except BaseException as exc:  # noqa: BLE001 (handed to the caller)
                future.set_exception(exc)

    def map(self, call: Callable[..., T], items: Iterable[Any]) -> list[T]:
        """``call(item)`` for each item, on the threads; the results in order."""
        futures: list[Future[T]] = []
        for item in items:
            future: Future[T] = Future()
            self._tasks.put((functools.partial(call, item), future))
            futures.append(future)
        return [future.result() for future in futures]


_WORKERS: _Workers | None = None
_WORKERS_LOCK = threading.Lock()


def _workers() -> _Workers:
    global _WORKERS
    with _WORKERS_LOCK:
        if _WORKERS is None or _WORKERS.pid != os.getpid():
            _WORKERS = _Workers()
        return _WORKERS


def _ranges(codes: Codes) -> list[Codes]:
    """``codes`` (sorted, distinct) cut into runs of consecutive codes."""
    return np.split(codes, np.flatnonzero(np.diff(codes.astype(np.int64)) != 1) + 1)


def _by_table(codes: Codes) -> bool:
    """Whether ``_member`` looks codes up in a table (they make many runs) rather than
    comparing with each run."""
    return int(np.count_nonzero(np.diff(codes.astype(np.int64)) != 1)) >= _RANGES_MOST


def _member(values: Codes, codes: Codes) -> npt.NDArray[np.bool_]:
    """Whether each of ``values`` is one of ``codes`` (sorted, distinct): by comparing
    with each run of consecutive codes where they make few runs, else by a table."""
    if not _by_table(codes):
        found: npt.NDArray[np.bool_] | None = None
        for run in _ranges(codes):
            low, width = run[0], np.uint16(len(run) - 1)
            # One comparison for a run: below ``low`` wraps around to a large number.
            inside = values == low if not width else (values - low) <= width
            found = inside if found is None else found | inside
        assert found is not None
        return found
    table = np.zeros(_CODES, dtype=bool)
    table[codes] = True
    return table[values]
