"""ELOG searches: ``search_elog`` (text, regex, dates, filters) and ``get_elog_thread``.

search_elog answers in one of four ways, named by the response's ``ranker``:
- no query: the entries in the date range and filters, newest first (``recency``);
- text: BM25F over stemmed title, body and attributes, entries holding more of the
  query's words first; words no entry holds corrected to the closest indexed ones
  (``note``, ``suggestions``, ``corrected_query``); then the top candidates reranked
  (``bm25+semantic`` or ``bm25+lexical``, see query/rerank.py; ``bm25`` when off);
- a regex (``.*``, ``.+``, ``.?``, a bounded repeat such as ``{3}``, ``|``, ``[...]``,
  ``\\d``, ``\\w``, ``\\s``, ``\\b``, a leading ``^`` or a trailing ``$``):
  case-insensitive over title and visible body, line by line,
  on the entries holding the literals the pattern cannot match without, under one time
  budget.
``since``/``until`` are days in the logbook's own time (each entry's offset); ``until``
is inclusive through the end of its day. A time of day given without an offset is read
in each entry's own offset too; one with an offset is an absolute instant.

The modules: ``search`` (search_elog), ``threads`` (get_elog_thread), ``models`` (the
answers), ``dates`` and ``filters`` (the arguments that select entries), ``text_query``
(the ranked query, as plain data), ``snippets``, ``regex_literals`` (what a regex
requires), ``regex_candidates`` (the entries holding it), ``regex_search`` (running a
regex under a deadline), ``caches`` (what is kept between queries), ``logbook`` (the
folder and links) and ``index_access`` (every read of the index).
"""

from query.elog.dates import check_dates
from query.elog.logbook import COLLECTION
from query.elog.models import (
    ElogHit,
    ElogSearchResponse,
    ElogThreadEntry,
    ElogThreadResponse,
    Ranker,
)
from query.elog.regex_literals import Lit, Need, required_literals
from query.elog.regex_search import compile_regex, is_regex
from query.elog.search import search_elog
from query.elog.snippets import snippet, snippet_at
from query.elog.text_query import TextQuery, text_query
from query.elog.threads import get_elog_thread

__all__ = [
    "COLLECTION",
    "ElogHit",
    "ElogSearchResponse",
    "ElogThreadEntry",
    "ElogThreadResponse",
    "Lit",
    "Need",
    "Ranker",
    "TextQuery",
    "check_dates",
    "compile_regex",
    "get_elog_thread",
    "is_regex",
    "required_literals",
    "search_elog",
    "snippet",
    "snippet_at",
    "text_query",
]
