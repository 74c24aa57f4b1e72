"""search_workspace: conversation lines that hold a query, in tiers that forgive.

The first tier that finds any line answers, so a lower tier never pushes out a higher:

1. ``exact``: the query as written (case-insensitive), as a literal. The index narrows
   the search to the files that hold every word of the query (a word cut off at either
   end of the query matches the index terms that contain it); only those files are
   read, and the literal is verified on their lines. A query without words
   (punctuation only) is verified on every file in the date range. Lines are ranked by
   how the literal sits in them (whole words, then the start of a word, the end of one,
   inside one), ties newest first.
2. ``words``: lines holding every word of the query, in any order (each word as a
   substring of the lower-cased line, as ``exact`` matches the literal).
3. ``fuzzy``: when words of the query are in no conversation (neither the word nor a
   word of its stem family), each is replaced by the closest indexed word and tiers 1,
   2 and 4 run again with the corrected query. It comes before ``related``: an answer
   that uses every word after correction ranks above one that drops a word.
4. ``related``: lines holding some of the query's content words or words of the same
   stem (stop words never match alone): most of the query's words first, then a BM25
   score over stems (idf from how many files hold the stem), then newest.

One result per matching line; a conversation's first LINES_PER_CONVERSATION lines come
before its other lines (an order that does not depend on the page asked for). The tiers below ``exact`` read at most
MAX_FILES_READ files (the most promising first), so each answers in bounded time.

Per process, a `WorkspaceCache` keeps what never changes within an index segment: the
stored fields of its documents, its words by length (for typo correction) and, within a
budget, the lower-cased text of the files already read.

The modules: ``search`` (search_workspace and its notes), ``get`` (get_conversation: a
file or a part of it, by a hit's id), ``models`` (the answers),
``dates`` (date_range), ``candidates`` (the files the index points at, and the query's
words in it), ``tiers`` (exact, words, related), ``lines`` (matching lines, excerpts),
``answers`` (a tier's answer), ``view`` (what a search reads), ``cache``
(WorkspaceCache) and ``limits`` (the bounds: read as ``limits.NAME``, so a test can
change one).
"""

from indexer.files import read_file
from query.workspace.cache import WorkspaceCache, read_text
from query.workspace.candidates import query_words
from query.workspace.dates import DATE_RANGE_HELP, DateRange, check_date_range
from query.workspace.get import get_conversation
from query.workspace.limits import (
    EXCERPT_CHARS,
    LINES_PER_CONVERSATION,
    MAX_EXPANSION,
    MAX_FILES_READ,
    MAX_WORDS,
    TEXT_CACHE_CHARS,
)
from query.workspace.models import Conversation, Match, WorkspaceHit, WorkspaceSearchResponse
from query.workspace.search import search_workspace
from query.workspace.view import COLLECTION

__all__ = [
    "COLLECTION",
    "DATE_RANGE_HELP",
    "EXCERPT_CHARS",
    "LINES_PER_CONVERSATION",
    "MAX_EXPANSION",
    "MAX_FILES_READ",
    "MAX_WORDS",
    "TEXT_CACHE_CHARS",
    "Conversation",
    "DateRange",
    "Match",
    "WorkspaceCache",
    "WorkspaceHit",
    "WorkspaceSearchResponse",
    "check_date_range",
    "get_conversation",
    "query_words",
    "read_file",
    "read_text",
    "search_workspace",
]
