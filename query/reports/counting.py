"""Counting a query's occurrences in each report of one segment, from the index: the
postings of its tokens, the texts the index keeps, or the fragment tops, whichever costs
less (query/count_plan.py holds the plan and the cost estimates it chooses by)."""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, compress, repeat
from operator import contains, mul
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from indexer.engine.base import BytesColumn, Segment, Snapshot, joined_values
from indexer.engine.fragments import FRAGMENTS, Best
from indexer.engine.lexicon import Lexicon
from indexer.engine.pairs import pair_key
from indexer.engine.postings import token_hash
from indexer.engine.sequences import Codes, TokenSequences
from indexer.engine.term_tops import keeps
from indexer.sources.reports import TOKEN_PATTERN
from query.count_plan import DEFAULT_COSTS, CountCosts, CountPlan
from query.reports import phrases, text_count
from query.reports.bounds import count_best

_TOKEN = re.compile(TOKEN_PATTERN)


def cost_us(
    lex: Lexicon,
    ks: list[int],
    per_posting: float,
    per_term: float,
    docs: int | None = None,
    block: int = 1 << 62,
) -> float:
    """About how long reading the postings of these terms takes, in blocks (of ``block``
    postings) that may hold one of ``docs`` documents if given."""
    most = block * docs if docs is not None else 1 << 62
    return sum(per_term + min(lex.doc_counts[k], most) * per_posting for k in ks)


class ReportSegment:
    """One segment of the reports index: counts occurrences in its documents."""

    def __init__(
        self, segment: Segment, plan: CountPlan = "cost", costs: CountCosts = DEFAULT_COSTS
    ) -> None:
        self.segment = segment
        self.deleted = segment.deleted
        self.plan = plan
        self.costs = costs

    def _postings_us(
        self,
        ks: list[int],
        docs: int | None = None,
        per_posting: float | None = None,
        per_term: float | None = None,
    ) -> float:
        """cost_us of these terms of the content field, by this search's estimates."""
        c = self.costs
        return cost_us(
            self.lexicon(),
            ks,
            c.posting_us if per_posting is None else per_posting,
            c.term_us if per_term is None else per_term,
            docs,
            self.segment.block_size,
        )

    def lexicon(self, fieldname: str = "content") -> Lexicon:
        return self.segment.lexicon(fieldname)

    def day_ranks(self) -> Sequence[int]:
        """Per document: its date's ordinal; 0 if undated (ranks last)."""
        return self.segment.int_column("day")

    def postings(
        self, k: int, within: Sequence[int] | None
    ) -> Iterator[tuple[Iterator[int], Iterable[float], Any]]:
        """(docnums, frequencies, NextTokens values) of each block of the content term
        k's postings that may hold one of ``within`` (all if None)."""
        return self.segment.blocks("content", k, within)

    def command_docs(self, command: str) -> list[int]:
        found = self.lexicon("command").equal_to(command)
        blocks = (self.segment.blocks("command", k) for k in found)
        return sorted(chain.from_iterable(ids for block in blocks for ids, _, _ in block))

    # ---- counting

    def occurrences(
        self, lowered: str, command: str | None, top: int | None = None
    ) -> dict[int, float]:
        """{docnum: occurrences of ``lowered`` in the document's lower-cased text}, for
        every document that holds it; with ``top``, documents that cannot be among the
        ``top`` best (most occurrences, newest) may be left out."""
        within = None if command is None else self.command_docs(command)
        if within == []:
            return {}
        if self.plan == "cost" and pair_key(lowered) is not None:
            found = self._from_pairs(lowered, within)
            if found is not None:
                return found
        spans = [m.span() for m in _TOKEN.finditer(lowered)]
        inside = len(spans) == 1 and spans[0] == (0, len(lowered))
        if inside and top is not None and self.plan == "cost":
            found = self._from_tops(lowered.encode("utf-8"), within, top)
            if found is not None:
                return found
        if self.plan == "texts":
            return self._count_texts(lowered.encode("utf-8"), within, top)
        if inside:
            lex = self.lexicon()
            near = None if within is None else len(within)
            holding = lex.containing(lowered)
            if top is not None and self.plan == "cost" and holding:
                found = self._from_term_tops(holding, lowered, within, top)
                if found is not None:
                    return found
            dense = sum(map(lex.doc_counts.__getitem__, holding)) > self.costs.dense_postings
            cost = (
                self._postings_us(holding, near, self.costs.dense_us, self.costs.dense_term_us)
                if dense
                else self._postings_us(holding, near, self.costs.inside_us)
            )
            if self._texts_cheaper(cost, within):
                return self._count_texts(lowered.encode("utf-8"), within, top)
            if dense or top is not None:
                # In an array, of which only the documents that can be among the ``top``
                # are kept: a word inside a few common terms is in tens of thousands.
                return self._kept(self._count_inside_dense(lowered, holding, within), within, top)
            counts = self._count_inside(lowered, holding, within)
            if within is not None:
                wanted = set(within)
                counts = {d: c for d, c in counts.items() if d in wanted}
            if self.deleted:
                for d in self.deleted.intersection(counts):
                    del counts[d]
            return counts
        choices = self._choices(lowered, spans)
        if not choices:
            return {}  # a token no term can be: the query is in no document
        docs = None if within is None else set(within) - self.deleted
        return self._count_across(lowered, choices, docs, top, within)

    def _from_tops(
        self, needle: bytes, within: list[int] | None, top: int
    ) -> dict[int, float] | None:
        """{docnum: occurrences} of the ``top`` documents (of ``within``; None: all) that
        hold ``needle`` most, from the segment's fragment tops: None where it keeps none
        for ``needle``, or too few of them are still live and of ``within``."""
        if needle not in FRAGMENTS:  # (before the segment's tops are read in)
            return None
        tops = self.segment.fragment_tops()
        best = None if tops is None else tops.best(needle)
        return None if best is None else self._first_live(best, within, top)

    def _from_term_tops(
        self, holding: list[int], lowered: str, within: list[int] | None, top: int
    ) -> dict[int, float] | None:
        """As ``_from_tops``, for a query inside the terms ``holding``, from the segment's
        term tops: None where they do not settle the ``top`` best.

        Held by one term, the query is in each document as often as the term, times how
        often the term holds it: the term's tops are the best. Held by several, the
        documents of their tops and of the postings of those too rare to keep tops of
        are the candidates: a document among none of them holds the query at most the
        sum of each kept term's least count kept, times how often the term holds the
        query (``outside``). What the tops and postings say of a candidate bounds its
        count from below (a term whose tops it is not among: none) and from above (that
        term's least count kept). Where ``top`` candidates hold it more often than
        ``outside`` by their lower bounds alone, those that can (by their upper bounds)
        are counted in their texts, and the best are among them."""
        tops = self.segment.term_tops()
        if tops is None:
            return None
        lex = self.lexicon()
        if len(holding) == 1:
            best = tops.best(holding[0])
            if best is None:
                return None
            return self._first_live(best, within, top, lex.term(holding[0]).count(lowered))
        known: dict[int, int] = {}  # candidate: occurrences the tops and postings say
        unknown: list[tuple[set[int], int]] = []  # per kept term: its tops, times least
        outside = 0
        for k in holding:
            times = lex.term(k).count(lowered)
            if keeps(lex.doc_counts[k]):
                best = tops.best(k)
                if best is None:
                    return None
                for d, n in zip(best.docs.tolist(), best.counts.tolist(), strict=True):
                    known[d] = known.get(d, 0) + n * times
                least = int(best.counts[-1]) * times
                unknown.append((set(best.docs.tolist()), least))
                outside += least
            else:
                for ids, weights, _ in self.postings(k, None):
                    for d, n in zip(ids, weights):
                        known[d] = known.get(d, 0) + int(n) * times
            if len(known) > self.costs.term_tops_texts:
                return None
        if not unknown:
            return None  # no term keeps tops: the postings are few (counted as before)
        wanted = None if within is None else set(within)
        live = [d for d in known if d not in self.deleted and (wanted is None or d in wanted)]
        if sum(known[d] > outside for d in live) < top:
            return None  # the tops cannot settle it
        texts = self.segment.bytes_column("text")
        needle = lowered.encode("utf-8")
        found: dict[int, float] = {}
        for d in live:
            more = sum(least for held, least in unknown if d not in held)
            if known[d] + more <= outside:
                continue  # cannot be among the best
            n = texts.value(d).count(needle) if more else known[d]
            if n > outside:
                found[d] = float(n)
        return found

    def _first_live(
        self, best: Best, within: list[int] | None, top: int, times: int = 1
    ) -> dict[int, float] | None:
        """{docnum: occurrences} of the first ``top`` of ``best`` still live and of
        ``within`` (None: all); None if too few are and others may be."""
        wanted = None if within is None else set(within)
        found: dict[int, float] = {}
        for d, n in zip(best.docs.tolist(), best.counts.tolist(), strict=True):
            if d not in self.deleted and (wanted is None or d in wanted):
                found[d] = float(n * times)
                if len(found) == top:
                    return found
        return found if best.complete else None

    def _from_pairs(self, pair: str, within: list[int] | None) -> dict[int, float] | None:
        """{docnum: occurrences} of a pair of CJK characters in the live documents of
        ``within`` (None: all), from the segment's CJK pairs; None if it has none."""
        pairs = self.segment.cjk_pairs()
        held = None if pairs is None else pairs.holders(pair)
        if held is None:
            return None
        docs, counts = held
        keep = np.ones(len(docs), dtype=bool)
        if self.deleted:
            keep &= ~np.isin(docs, np.fromiter(self.deleted, dtype=np.int64))
        if within is not None:
            keep &= np.isin(docs, np.array(within, dtype=np.int64))
        return dict(zip(docs[keep].tolist(), counts[keep].tolist(), strict=True))

    def _live(self, within: list[int] | None) -> int:
        """How many documents a search in ``within`` (None: all) may count in."""
        if within is None:
            return self.segment.doc_count_all - len(self.deleted)
        return len(within)

    def _texts_cheaper(
        self, postings_us: float, within: list[int] | None, runs_us: float = math.inf
    ) -> bool:
        """Whether counting in the texts of the live documents of ``within`` (None: all),
        or finding a query of several tokens from the runs of its tokens (``runs_us``,
        what that costs: _runs_plan), costs less than ``postings_us``, the work the
        postings would take (under the plan "cost"; "postings" never counts in every
        text)."""
        if self.plan != "cost":
            return self.plan == "texts"
        if runs_us < postings_us:
            return True
        live = self._live(within)
        if postings_us < live * self.costs.scan_floor_us:  # (spares adding up the texts' sizes)
            return False
        if within is not None and len(within) * self.costs.text_share < self.segment.doc_count_all:
            return len(within) * self.costs.text_us < postings_us
        return self._every_text_us() < postings_us

    def _every_text_us(self) -> float:
        """About what counting in every text of the segment costs."""
        return self.segment.bytes_column("text").total() * self.costs.scan_ns / 1000

    def _count_texts(
        self, needle: bytes, within: list[int] | None, top: int | None
    ) -> dict[int, float]:
        """{docnum: occurrences of ``needle``} counted in the lower-cased texts the index
        keeps (as ``bytes.count`` counts), for the live documents of ``within`` (None:
        all). With ``top``, only the documents with at least the ``top``-th highest count
        (the others cannot be among the best)."""
        texts = self.segment.bytes_column("text")
        n = self.segment.doc_count_all
        if within is not None and len(within) * self.costs.text_share < n:
            return self._count_some_texts(texts, needle, within, top)
        return self._kept(text_count.counts_in_column(texts, n, needle), within, top)

    def _kept(
        self, counts: npt.NDArray[Any], within: list[int] | None, top: int | None
    ) -> dict[int, float]:
        """{docnum: count} of the documents with a count, live and of ``within`` (None:
        all); with ``top``, only those with at least the ``top``-th highest count."""
        if within is not None:
            outside = np.ones(len(counts), dtype=bool)
            outside[within] = False
            counts[outside] = 0
        if self.deleted:
            counts[list(self.deleted)] = 0
        docs = np.flatnonzero(counts)
        if top is not None and len(docs) > top:
            docs = docs[counts[docs] >= nth_highest_count(counts[docs], top)]
        return dict(zip(docs.tolist(), counts[docs].astype(float).tolist(), strict=True))

    def _runs_plan(self, choices: list[list[int]], top: int | None) -> _Runs | None:
        """How a query of several tokens (``choices``: the terms each can be) would be
        found from the segment's token sequences: under the plan "cost", wanting the
        ``top`` only, where the segment keeps them and they hold its terms."""
        if top is None or self.plan != "cost":
            return None
        sequences = self.segment.token_sequences()
        if sequences is None:
            return None
        sets = phrases.code_sets(self.segment, sequences, choices)
        if sets is None:
            return None
        return _Runs(sequences, sets, sequences.work(sets) * self.costs.sequence_ns / 1000)

    def _texts_or_runs(
        self, needle: bytes, runs: _Runs | None, within: list[int] | None, top: int | None
    ) -> dict[int, float]:
        """_count_texts for a query of several tokens; or, where ``runs`` (_runs_plan)
        cost less, the best documents from the runs of tokens the query can be
        (query/reports/phrases.py), counting as many texts as the rest of what counting
        these texts would cost."""
        if runs is not None and top is not None:
            texts_us = self._texts_us(within)
            if runs.us < texts_us:
                left_us, per_text = texts_us - runs.us, self.costs.text_us
                budget = int(left_us / per_text) if per_text else self.segment.doc_count_all
                found = phrases.best_by_runs(
                    self.segment, runs.sequences, runs.sets, needle, within, top, budget
                )
                if found is not None:
                    return found
        return self._count_texts(needle, within, top)

    def _texts_us(self, within: list[int] | None) -> float:
        """About what _count_texts costs in the live documents of ``within`` (None: all)."""
        n = self.segment.doc_count_all
        if within is not None and len(within) * self.costs.text_share < n:
            return len(within) * self.costs.text_us
        return self._every_text_us()

    def _count_some_texts(
        self, texts: BytesColumn, needle: bytes, docs: list[int], top: int | None
    ) -> dict[int, float]:
        """_count_texts in a few documents, one at a time: a run of documents none of
        which is long enough to hold as many occurrences as the ``top``-th best so far
        is not read."""
        if self.deleted:
            docs = [d for d in docs if d not in self.deleted]
        counts: dict[int, float] = {}
        best: list[int] = []  # a heap of the top counts so far
        width = len(needle)
        for a in range(0, len(docs), self.costs.text_run):
            run = docs[a : a + self.costs.text_run]
            if (
                top is not None
                and len(best) >= top
                and max(map(texts.size, run)) // width < best[0]
            ):
                continue
            found = list(map(bytes.count, map(texts.value, run), repeat(needle)))
            counts.update((d, float(n)) for d, n in zip(run, found, strict=True) if n)
            if top is not None:
                for n in found:
                    if n and (len(best) < top or n > best[0]):
                        heapq.heappush(best, n)
                        if len(best) > top:
                            heapq.heappop(best)
        return counts

    def _choices(self, lowered: str, spans: list[tuple[int, int]]) -> list[list[int]]:
        """Per token of a query of several: the terms it can be (the first must end a
        term, the last start one, the others equal one); [] if one can be none."""
        lex = self.lexicon()
        choices: list[list[int]] = []
        for a, b in spans:
            token = lowered[a:b]
            if a == 0:
                choices.append(lex.ending_with(token))
            elif b == len(lowered):
                choices.append(lex.starting_with(token))
            else:
                choices.append(lex.equal_to(token))
            if not choices[-1]:
                return []
        return choices

    def all_words(self, words: list[str], command: str | None) -> dict[int, float]:
        """{docnum: occurrences of all words} for the documents that hold every word."""
        total: dict[int, float] | None = None
        for word in words:
            counts = self.occurrences(word, command)
            if total is None:
                total = counts
            else:
                total = {d: c + counts[d] for d, c in total.items() if d in counts}
            if not total:
                return {}
        return total or {}

    def _count_inside(
        self, s: str, holding: list[int], within: list[int] | None
    ) -> dict[int, float]:
        """Occurrences of ``s`` that lie inside one token: (times in the token) x (the
        token's frequency in the document), summed over the tokens that hold ``s``
        (``holding``)."""
        lex = self.lexicon()
        acc: dict[int, float] = {}
        for k in holding:
            times = float(lex.term(k).count(s))
            part: dict[int, float] = {}
            for ids, weights, _ in self.postings(k, within):
                part.update(zip(ids, weights if times == 1.0 else map(mul, weights, repeat(times))))
            acc = add_counts(acc, part)
        return acc

    def _count_inside_dense(
        self, s: str, holding: list[int], within: list[int] | None
    ) -> npt.NDArray[np.float64]:
        """_count_inside for terms of many postings, or where only the best are wanted,
        per document in an array (adding up dicts of tens of thousands of documents costs
        more than reading the postings)."""
        lex = self.lexicon()
        acc = np.zeros(self.segment.doc_count_all, dtype=np.float64)
        for k in holding:
            times = float(lex.term(k).count(s))
            if within is None:  # every posting: as arrays (a common term's are kept)
                docs, tf = self.segment.frequencies("content", k)
                acc[docs] += tf * times
                continue
            for ids, weights, _ in self.postings(k, within):
                where = np.fromiter(ids, dtype=np.intp)  # a term's documents are distinct
                if isinstance(weights, repeat):  # every posting's weight is the same
                    acc[where] += next(weights) * times
                else:
                    acc[where] += np.asarray(weights, dtype=np.float64)[: len(where)] * times
        return acc

    def _count_across(
        self,
        lowered: str,
        choices: list[list[int]],
        docs: set[int] | None,
        top: int | None,
        within: list[int] | None,
    ) -> dict[int, float]:
        """Occurrences of a query of several tokens (``choices``: the terms each can be),
        in the live documents ``docs`` (None: all; ``within``: the search's documents):
        the postings of its tokens find where it can be (where each is followed by the
        next), the texts count it. Where even the cheapest token's postings, or counting
        in the documents that they leave, would cost more than counting in every text
        (common words: most documents), every text is counted instead."""
        lex = self.lexicon()
        # follows[i]: the hashes of the terms token i + 1 can be, looked for in the
        # postings of token i (not when there are too many: a last token cut short).
        follows: list[list[bytes] | None] = [
            [token_hash(lex.term(k)) for k in after]
            if len(after) <= self.costs.follow_max
            else None
            for after in choices[1:]
        ] + [None]
        # Read the tokens' postings, cheapest first (a token that says what follows it
        # narrows the most: it counts as cheaper), each in the blocks that may hold the
        # documents left. Once reading the rest would cost more than counting in the
        # documents left, count in those. Wanting the top only, first try to settle it
        # in as many texts as reading the rest would cost: often the bounds the tokens
        # read give are tight enough, and the rest need not be read.
        costs = [
            self._postings_us(ks) / (self.costs.follow_gain if follows[i] else 1)
            for i, ks in enumerate(choices)
        ]
        order = sorted(range(len(choices)), key=costs.__getitem__)
        needle = lowered.encode("utf-8")
        runs = self._runs_plan(choices, top)
        runs_us = math.inf if runs is None else runs.us
        if self._texts_cheaper(costs[order[0]] * self.costs.follow_gain, within, runs_us):
            return self._texts_or_runs(needle, runs, within, top)
        read: list[dict[int, float]] = []  # per token read, {docnum: frequency}
        known: dict[int, int] = {}  # docnum: occurrences, for the texts counted so far
        for step, i in enumerate(order):
            if docs is not None:
                rest = sum(self._postings_us(choices[j], len(docs)) for j in order[step:])
                if rest > len(docs) * self.costs.text_us:
                    break
                # Trying costs ordering the documents left, and then at least the top.
                budget = int((rest - len(docs) * self.costs.bound_us) / self.costs.text_us)
                if top is not None and read and budget >= top:
                    done = self._count_best(read, docs, needle, top, known, budget)
                    if done is not None:
                        return done
            most = None
            if step == 0 and docs is None and self.plan == "cost" and self.costs.text_us:
                # Past this many documents left, every text is counted (below): reading
                # on is in vain once the postings searched so far say it will leave more.
                instead_us = min(self._every_text_us(), runs_us)
                most = int(
                    max(self._live(None) * self.costs.scan_floor_us, instead_us)
                    / self.costs.text_us
                )
            freqs = self._read_token(choices[i], docs, follows[i], most)
            if freqs is None:
                return self._texts_or_runs(needle, runs, within, top)
            read.append(freqs)
            docs = freqs.keys() - self.deleted if docs is None else docs.intersection(freqs)
            if not docs:
                return {}
            if step == 0 and self._texts_cheaper(len(docs) * self.costs.text_us, within, runs_us):
                return self._texts_or_runs(needle, runs, sorted(docs), top)
        assert docs is not None
        if top is not None and read:
            done = self._count_best(read, docs, needle, top, known)
            assert done is not None
            return done
        texts = self.segment.bytes_column("text")
        counts = ((d, texts.value(d).count(needle)) for d in docs)
        return {d: float(n) for d, n in counts if n}

    def _read_token(
        self,
        ks: list[int],
        docs: set[int] | None,
        follows: list[bytes] | None,
        most: int | None = None,
    ) -> dict[int, float] | None:
        """{docnum: summed frequency} of terms ``ks``, in the blocks that may hold one of
        ``docs``; given ``follows``, only where a term is followed by one of those tokens
        (see NextTokens), and only such terms counted, until most postings turn out to
        be followed: then all the documents of the rest (more candidates, never fewer).
        Given ``most``, None as soon as the postings searched (self.costs.follow_sample at least)
        say that more documents than that would be left."""
        within = None if docs is None else sorted(docs)
        postings = sum(map(self.lexicon().doc_counts.__getitem__, ks)) if most is not None else 0
        if follows is not None and len(follows) > 1:
            search = re.compile(b"|".join(map(re.escape, follows))).search
        acc: dict[int, float] = {}
        tested = passed = 0  # postings searched for what follows, and found followed
        for k in ks:
            part: dict[int, float] = {}
            for ids, weights, values in self.postings(k, within):
                if follows is None or (
                    tested >= self.costs.follow_sample and passed > tested * self.costs.follow_keep
                ):  # (where most are followed, searching each costs more than it saves)
                    part.update(zip(ids, weights))
                    continue
                # In C: the block's hashes searched at once (mostly in vain), then each
                # posting's.
                block = joined_values(values)
                tested += len(values)
                if len(follows) == 1:
                    if follows[0] in block:
                        tests = list(map(contains, values, repeat(follows[0])))
                        passed += sum(tests)
                        part.update(compress(zip(ids, weights), tests))
                elif search(block):
                    tests = list(map(bool, map(search, values)))
                    passed += sum(tests)
                    part.update(compress(zip(ids, weights), tests))
                if (
                    most is not None
                    and tested >= self.costs.follow_sample
                    and passed * postings > most * tested
                ):
                    return None
            acc = add_counts(acc, part)
        return acc

    def _count_best(
        self,
        read: list[dict[int, float]],
        docs: set[int],
        needle: bytes,
        top: int,
        known: dict[int, int],
        budget: int | None = None,
    ) -> dict[int, float] | None:
        """The counts of the ``top`` best documents (at least), counted in order of how
        often each holds its rarest token read (more occurrences it cannot have), newest
        first, until no document left can be among the best.

        The texts counted go into ``known``, and those already there are not counted
        again. Given a ``budget``, None as soon as more than that many texts would have
        to be counted."""
        order = list(docs)
        bounds = list(map(read[0].__getitem__, order))
        for freqs in read[1:]:
            bounds = list(map(min, bounds, map(freqs.__getitem__, order)))
        by_bound: dict[float, list[int]] = {}
        for d, bound in zip(order, bounds, strict=True):
            if (group := by_bound.get(bound)) is None:
                by_bound[bound] = [d]
            else:
                group.append(d)
        texts = self.segment.bytes_column("text")
        left = [budget]  # texts that may still be counted (None: any number)

        def count(d: int) -> int | None:
            if (n := known.get(d)) is None:
                if left[0] is not None:
                    if left[0] <= 0:
                        return None
                    left[0] -= 1
                n = known[d] = texts.value(d).count(needle)
            return n

        groups = ((most, by_bound[most]) for most in sorted(by_bound, reverse=True))
        return count_best(groups, self.day_ranks(), count, top)


class _Runs(NamedTuple):
    """A query of several tokens found from a segment's token sequences: the table, the
    codes each token can be, and what comparing them costs (us)."""

    sequences: TokenSequences
    sets: list[Codes]
    us: float


# Counts up to this are put in order by a histogram of them (np.partition slows down
# many times over on the many equal counts a common word has: 1.7 ms for 13,000 of them).
_HISTOGRAM_MAX = 1 << 16


def nth_highest_count(counts: npt.NDArray[Any], n: int) -> float:
    """The ``n``-th highest of these counts (whole numbers, at least 0; more than ``n``
    of them)."""
    most = int(counts.max())
    if most > _HISTOGRAM_MAX:
        return float(np.partition(counts, len(counts) - n)[len(counts) - n])
    at_least = np.cumsum(np.bincount(counts.astype(np.int64), minlength=most + 1)[::-1])
    return float(most - int(np.searchsorted(at_least, n)))


def add_counts(acc: dict[int, float], part: dict[int, float]) -> dict[int, float]:
    """``acc`` and ``part`` added key by key, in whichever of the two is larger (the
    first term's postings are not copied)."""
    if len(acc) < len(part):
        acc, part = part, acc
    for d in acc.keys() & part.keys():
        part[d] += acc[d]
    acc.update(part)
    return acc


def segments_of(
    snapshot: Snapshot, plan: CountPlan = "cost", costs: CountCosts = DEFAULT_COSTS
) -> list[ReportSegment]:
    return [ReportSegment(segment, plan, costs) for segment, _base in snapshot.segments()]
