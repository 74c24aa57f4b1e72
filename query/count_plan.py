"""How a search counts a query, and the cost estimates it chooses by.

``CountPlan``: "cost" chooses per query (per segment) whichever of the two others costs
less; "postings" always reads the postings of the terms the query implies; "texts" always
counts in the lower-cased texts the index keeps. Every plan gives the same answer (the
parity tests run with each forced).

``CountCosts``: the estimates, in microseconds, that search_reports weighs a query of
several tokens by (measured on the 100k bench corpus: a block of 128 postings reads in
15-20 us). A test passes others (``QueryContext.costs``) to force a path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CountPlan = Literal["cost", "postings", "texts"]
PLANS: tuple[CountPlan, ...] = ("cost", "postings", "texts")


@dataclass(frozen=True)
class CountCosts:
    """The estimates a search chooses how to count by (see the module's docstring)."""

    # Per term whose postings are read, and per posting.
    term_us: float = 15
    posting_us: float = 0.15
    # Per report whose text is counted.
    text_us: float = 6
    # Per posting, counting a fragment inside one token from its terms.
    inside_us: float = 0.6
    # Past this many postings, they are added up in an array, at this cost per posting
    # and per term.
    dense_postings: int = 20_000
    dense_us: float = 0.25
    dense_term_us: float = 5
    # Finding where a query of several tokens can be from a segment's token sequences
    # (query/reports/phrases.py), per unit of their work (TokenSequences.work: comparing
    # a code with a run of codes, about 0.5 ns of CPU, on every core).
    sequence_ns: float = 0.25
    # Counting in every text (query/reports/text_count.py), per byte of text; no query
    # whose postings cost less than scan_floor_us per document is worth comparing with it.
    scan_ns: float = 0.3
    scan_floor_us: float = 0.5
    # Ordering a document by its bound and date, to count the best first.
    bound_us: float = 0.3
    # Documents counted in one go when counting in some texts.
    text_run: int = 256
    # A search in fewer than 1/text_share of a segment's documents counts in their texts
    # one by one; in more, it counts in every text and keeps those.
    text_share: int = 4
    # A word inside several terms is counted in the texts of their term tops (and of the
    # postings of those too rare to keep tops of), up to this many documents.
    term_tops_texts: int = 2048
    # A token's postings are searched for the terms the next token can be, up to this many.
    follow_max: int = 32
    # Reading the postings of a token that is searched for what follows it leaves far
    # fewer reports than one that is not: to choose what to read first, its cost counts
    # this much less.
    follow_gain: float = 4
    # Once more than follow_keep of the postings searched for what follows (at least
    # follow_sample of them) are followed by it, the rest are taken without searching.
    follow_sample: int = 256
    follow_keep: float = 0.5


# What every search counts by, unless a test says otherwise.
DEFAULT_COSTS = CountCosts()
