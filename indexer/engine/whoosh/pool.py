"""The postings a segment writer collects, grouped by term.

Whoosh's PostingPool keeps every posting as a tuple and sorts them all when the segment
is written. A document's postings arrive in document order, so TermPool groups them by
term as they come, and only the terms are sorted; past ``limitmb`` it spills sorted runs
as Whoosh's does.

A field whose format gives a document's postings as columns (NextTokens: DocPostings,
its terms numbered per segment by TermNumbers) is kept as columns, ColumnPostings: a
document costs a few array appends, where grouping took a dictionary lookup and four
appends a posting, a fifth of a build's CPU. The columns are grouped by term once, as
the segment is written, into the same postings.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from whoosh.writing import PostingPool

from indexer.engine.postings import DocPostings, TermNumbers, weights_of
from indexer.engine.whoosh.codec import TermPostings

# A posting's and a term's size in memory (TermPostings), measured with tracemalloc
# (Python 3.11): ~18 bytes and the value's, and ~400 bytes a term.
_POSTING_BYTES = 18
_TERM_BYTES = 400
# Postings grouped at a time as columns are written (bounds the copies it makes).
_BATCH_POSTINGS = 1 << 20


class ColumnPostings:
    """One field's postings as columns, in the order they were added (documents in
    order): each posting's term number, frequency and the length of its value; the
    values one after another; each document's number, first posting and boosts. Twelve
    bytes a posting and its value, where TermPostings take eighteen."""

    def __init__(self, numbers: TermNumbers) -> None:
        self.numbers = numbers
        self._terms = array("I")
        self._counts = array("I")
        self._lengths = array("I")
        self._values = bytearray()
        self._docs = array("I")
        self._firsts = array("q")
        self._field_boosts = array("d")
        self._boosts = array("d")
        self.last_doc = -1
        self._grouped: tuple[list[int], list[int], npt.NDArray[Any]] | None = None

    def add(self, docnum: int, doc: DocPostings) -> None:
        self._docs.append(docnum)
        self._firsts.append(len(self._terms))
        self._field_boosts.append(doc.field_boost)
        self._boosts.append(doc.boost)
        self._terms.frombytes(doc.terms.tobytes())
        self._counts.frombytes(doc.counts.tobytes())
        self._lengths.frombytes(doc.lengths.tobytes())
        self._values += doc.values
        self.last_doc = docnum
        self._grouped = None

    def __len__(self) -> int:
        return len(self._terms)

    def _group(self) -> tuple[list[int], list[int], npt.NDArray[Any]]:
        """The term numbers with postings in order of their UTF-8, each one's count of
        postings, and the postings' places in that order (as added, within a term)."""
        if self._grouped is None:
            words = self.numbers.words
            terms = np.frombuffer(self._terms, dtype=np.uint32)
            per_term = np.bincount(terms, minlength=len(words))
            present = np.flatnonzero(per_term).tolist()
            present.sort(key=words.__getitem__)  # (code points sort as their UTF-8 does)
            rank = np.zeros(len(words), dtype=np.uint32)
            rank[present] = np.arange(len(present), dtype=np.uint32)
            counts = per_term[present]
            self._grouped = present, counts.tolist(), _stable_order(rank, terms, counts)
        return self._grouped

    def _weighed(
        self, picked: npt.NDArray[Any]
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.float64]]:
        """The documents and weights of these postings."""
        firsts = np.frombuffer(self._firsts, dtype=np.int64)
        of_doc = np.searchsorted(firsts, picked, side="right") - 1
        weights = weights_of(
            np.frombuffer(self._counts, dtype=np.uint32)[picked],
            np.frombuffer(self._field_boosts, dtype=np.float64)[of_doc],
            np.frombuffer(self._boosts, dtype=np.float64)[of_doc],
        )
        return np.frombuffer(self._docs, dtype=np.uint32)[of_doc], weights

    def words(self) -> list[str]:
        """The terms with postings, in order."""
        words = self.numbers.words
        return [words[k] for k in self._group()[0]]

    def numbered(self, least: int) -> Iterator[tuple[int, Any, Any]]:
        """Each term of at least ``least`` postings: its place among the terms in order,
        its documents and weights."""
        _, counts, order = self._group()
        start = 0
        for k, count in enumerate(counts):
            if count >= least:
                yield k, *self._weighed(order[start : start + count])
            start += count

    def postings(self) -> Iterator[tuple[bytes, TermPostings]]:
        """Each term (UTF-8) in order, with its postings: a batch of terms at a time."""
        present, counts, order = self._group()
        words = self.numbers.words
        lengths = np.frombuffer(self._lengths, dtype=np.uint32)
        values = np.frombuffer(self._values, dtype=np.uint8)
        # Where each posting's value ends (4 bytes a posting while the values fit).
        value_ends = np.cumsum(lengths, dtype=np.uint32 if len(values) < 1 << 32 else np.int64)
        ends = np.cumsum(counts, dtype=np.int64)
        k = start = 0
        while k < len(counts):
            last = max(k, int(np.searchsorted(ends, start + _BATCH_POSTINGS, side="right")) - 1)
            stop = int(ends[last])
            picked = order[start:stop].astype(np.int64)
            batch_lengths = lengths[picked]
            batch_ends = np.cumsum(batch_lengths, dtype=np.int64)
            # Each posting's value's bytes, the values in the batch's order.
            moved = value_ends[picked].astype(np.int64) - batch_ends
            at = np.repeat(moved, batch_lengths) + np.arange(int(batch_ends[-1]))
            batch_values = values[at]
            batch_docs, batch_weights = self._weighed(picked)
            # Each term's postings as slices of the batch's bytes (cheaper than arrays').
            docs_at, weights_at = batch_docs.tobytes(), batch_weights.tobytes()
            lengths_at, values_at = batch_lengths.tobytes(), batch_values.tobytes()
            batch_value_ends = [0, *batch_ends.tolist()]
            p = 0
            for i in range(k, last + 1):
                q = p + counts[i]
                yield (
                    words[present[i]].encode("utf-8"),
                    TermPostings.of_bytes(
                        docs_at[4 * p : 4 * q],
                        weights_at[8 * p : 8 * q],
                        values_at[batch_value_ends[p] : batch_value_ends[q]],
                        lengths_at[4 * p : 4 * q],
                    ),
                )
                p = q
            k, start = last + 1, stop


def _stable_order(
    rank: npt.NDArray[np.uint32], terms: npt.NDArray[np.uint32], counts: npt.NDArray[np.intp]
) -> npt.NDArray[Any]:
    """The postings' places grouped by their terms' ranks (``rank[terms]``), in the order
    they were added within a rank: a counting sort, a batch of postings at a time, which
    needs 4 bytes a posting where a stable argsort of them all took about 16."""
    order = np.empty(len(terms), dtype=np.uint32 if len(terms) < 1 << 32 else np.int64)
    free = np.cumsum(counts, dtype=np.int64) - counts  # each rank's next place
    for at in range(0, len(terms), _BATCH_POSTINGS):
        ranks = rank[terms[at : at + _BATCH_POSTINGS]]
        by_rank = np.argsort(ranks, kind="stable")
        ranked = ranks[by_rank]
        among = np.arange(len(ranked)) - np.searchsorted(ranked, ranked, side="left")
        order[free[ranked] + among] = by_rank + at
        free += np.bincount(ranks, minlength=len(free))
    return order


class TermPool(PostingPool):
    """A PostingPool that keeps each field's postings grouped by term, or as columns."""

    def __init__(self, tempstore: Any, segment: Any, limitmb: int = 128, **kwargs: Any) -> None:
        super().__init__(tempstore, segment, limitmb=limitmb, **kwargs)
        self._fields: dict[str, dict[bytes, TermPostings]] = {}
        self._columns: dict[str, ColumnPostings] = {}
        self._numbers: dict[str, TermNumbers] = {}
        # Per field with columns: its terms numbered, and their UTF-8, when last measured.
        self._measured: dict[str, tuple[int, int]] = {}
        self._in_order = True
        self._last_docnum = -1
        # False: past limitmb the pool only says it is ``full`` (its writer then ends the
        # segment) rather than spilling runs to disk.
        self.spill = True
        self.full = False

    def numbers(self, fieldname: str) -> TermNumbers:
        """The numbers of a field's terms, which its documents' DocPostings name."""
        numbers = self._numbers.get(fieldname)
        if numbers is None:
            numbers = self._numbers[fieldname] = TermNumbers()
        return numbers

    def add(self, item: tuple[str, bytes, int, float, bytes | None]) -> None:
        """One posting (a merged segment's, in term order: its documents may come before
        those pooled already)."""
        fieldname, text, docnum, weight, value = item
        self._ungroup(fieldname)
        postings = self._fields.get(fieldname, {}).get(text)
        if postings is not None and postings.ids[-1] > docnum:
            self._in_order = False
        self.add_terms(fieldname, docnum, ((text, weight, value),), checked=True)

    def add_terms(
        self,
        fieldname: str,
        docnum: int,
        terms: Sequence[tuple[bytes, float, bytes | None]],
        checked: bool = False,
    ) -> None:
        """Postings of one document in one field: (term, weight, value) each. A document
        before the last one added puts the postings out of order (sorted as they are
        written), unless ``checked`` (the caller saw to it)."""
        if not checked:
            self._saw(docnum)
        self._ungroup(fieldname)
        grouped = self._fields.get(fieldname)
        if grouped is None:
            grouped = self._fields[fieldname] = {}
        if terms and not grouped:
            self.fieldnames.add(fieldname)
        known = grouped.get
        size = _POSTING_BYTES * len(terms)
        for text, weight, value in terms:
            postings = known(text)
            if postings is None:
                postings = grouped[text] = TermPostings()
                size += _TERM_BYTES + len(text)
            postings.ids.append(docnum)
            postings.weights.append(weight)
            if value:
                postings.data += value
                postings.lengths.append(len(value))
                size += len(value)
            else:
                postings.lengths.append(0)
        self._grew(size)

    def add_columns(self, fieldname: str, docnum: int, doc: DocPostings) -> None:
        """Postings of one document in one field, as columns (its terms numbered by
        ``numbers(fieldname)``). Kept as columns unless the field's postings are grouped
        already, or the document comes before the last one the columns hold."""
        self._saw(docnum)
        columns = self._columns.get(fieldname)
        if self._fields.get(fieldname) or (columns is not None and docnum < columns.last_doc):
            self.add_terms(fieldname, docnum, self._as_terms(fieldname, doc), checked=True)
            return
        if columns is None:
            columns = self._columns[fieldname] = ColumnPostings(self.numbers(fieldname))
        columns.add(docnum, doc)
        if len(doc.terms):
            self.fieldnames.add(fieldname)
        # Measured as TermPostings would take them, so that segments end where they did:
        # the postings, and the terms numbered since the last document measured.
        numbers = columns.numbers
        words, text_bytes = self._measured.get(fieldname, (0, 0))
        self._measured[fieldname] = (len(numbers.words), numbers.text_bytes)
        self._grew(
            _POSTING_BYTES * len(doc.terms)
            + len(doc.values)
            + _TERM_BYTES * (len(numbers.words) - words)
            + numbers.text_bytes
            - text_bytes
        )

    def _as_terms(self, fieldname: str, doc: DocPostings) -> list[tuple[bytes, float, bytes]]:
        words = self.numbers(fieldname).words
        values, start, terms = doc.values, 0, []
        for k, weight, length in zip(
            doc.terms.tolist(), doc.weights.tolist(), doc.lengths.tolist(), strict=True
        ):
            terms.append((words[k].encode("utf-8"), weight, values[start : start + length]))
            start += length
        return terms

    def _saw(self, docnum: int) -> None:
        if docnum < self._last_docnum:
            self._in_order = False
        self._last_docnum = docnum

    def _grew(self, size: int) -> None:
        self.currentsize += size
        if self.currentsize > self.limit:
            if self.spill:
                self.save()
            else:
                self.full = True

    def _ungroup(self, fieldname: str) -> None:
        """A field's columns, if it has any, into grouped postings (before any posting is
        added another way)."""
        columns = self._columns.pop(fieldname, None)
        if columns is not None:
            self._fields[fieldname] = dict(columns.postings())

    def groups(self) -> Iterator[tuple[str, Iterator[tuple[bytes, TermPostings]]]] | None:
        """Each field, in order, with its terms in order and their postings; None once
        runs were spilled to disk (then only ``iter_postings`` has them all)."""
        if self.runs:
            return None
        # A field no document gave a term (empty values) is not started: Whoosh numbers
        # the fields it starts.
        return ((name, self._terms_of(name)) for name in self._names())

    def _names(self) -> list[str]:
        return sorted(
            {name for name, grouped in self._fields.items() if grouped}
            | {name for name, columns in self._columns.items() if columns}
        )

    def _terms_of(self, fieldname: str) -> Iterator[tuple[bytes, TermPostings]]:
        columns = self._columns.get(fieldname)
        if columns is not None:
            yield from columns.postings()
            return
        grouped = self._fields[fieldname]
        for text in sorted(grouped):
            postings = grouped[text]
            if not self._in_order:
                postings.sort()
            yield text, postings

    def terms(self, fieldname: str) -> list[str] | None:
        """A field's terms, in order; None once runs were spilled."""
        if self.runs:
            return None
        columns = self._columns.get(fieldname)
        if columns is not None:
            return columns.words()
        return [text.decode("utf-8") for text in sorted(self._fields.get(fieldname, ()))]

    def numbered(self, fieldname: str, least: int = 0) -> Iterator[tuple[int, Any, Any]] | None:
        """Each term of a field of at least ``least`` postings, with its number (its place
        among the field's terms, in order), its document numbers and weights; None once
        runs were spilled."""
        if self.runs:
            return None
        columns = self._columns.get(fieldname)
        if columns is not None:
            return columns.numbered(least)
        if fieldname not in self._fields:
            return iter(())
        return (
            (k, postings.ids, postings.weights)
            for k, (_, postings) in enumerate(self._terms_of(fieldname))
            if len(postings) >= least
        )

    def _flat(self) -> Iterator[tuple[str, bytes, int, float, bytes | None]]:
        for fieldname in self._names():
            for text, postings in self._terms_of(fieldname):
                for docnum, weight, value in postings.tuples():
                    yield fieldname, text, docnum, weight, value

    def save(self) -> None:
        """Spill what is held as a sorted run (Whoosh's runs, merged as Whoosh merges)."""
        self.current = list(self._flat())
        self._fields = {}
        self._columns = {}
        self._in_order = True
        PostingPool.save(self)

    def items(self, maxfiles: int = 128) -> Any:
        if not self.runs:
            return self._flat()
        self.save()
        return PostingPool.items(self, maxfiles)
