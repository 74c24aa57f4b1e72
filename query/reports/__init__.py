"""Reports: search_reports, list_command_reports and get_report (the search_reports spec).

A search counts the occurrences of the whole query in each report exactly as
``text.lower().count(query.lower())`` does, from the index (its schema is in
indexer/sources/reports.py; both sides cut the lower-cased text into the same tokens):

- a query inside one token (a word, part of one, one CJK character, a run of
  punctuation): every token of the index that holds it, times how often each report
  holds that token, from the postings' frequencies;
- any other query is cut into tokens like the text: its first token must end a token of
  the text, its middle tokens equal the tokens that follow and its last token start the
  next one. The postings of each token say which tokens follow it in each report (see
  NextTokens), so they find the reports where the query's tokens follow one another,
  and how often each holds each token (at least the occurrences); the query is then
  counted in the lower-cased text the index keeps, most promising reports first, until
  no report left can be among the best. When reading the postings of the tokens left
  would cost more than counting in the reports still possible, those are counted instead.

The index is read through the engine protocol (indexer/engine/base.py): matching terms
are found by bisection in a segment's lexicon, kept per segment by the engine. Only the files of the reports returned are read, for their excerpts.
When no report holds the whole query, reports holding every word of it are returned,
marked ``match: "words"``.

The modules: ``search`` (search_reports: the tiers in order, the hits, the notes),
``counting`` (counting a query in one segment, by the plan and cost estimates of
query/count_plan.py), ``text_count`` (counting a string in many texts at C speed),
``ranking`` (the best of what a tier counted), ``tiers`` (the related and fuzzy tiers'
words, stems and corrections), ``text`` (what a hit shows: date, excerpt, link),
``files`` (reading the reports a search shows), ``documents`` (list_command_reports,
get_report) and ``models`` (the answers).
"""

from query.reports.counting import ReportSegment, segments_of
from query.reports.documents import (
    command_dir,
    get_report,
    list_command_reports,
    reports_root,
)
from query.reports.models import (
    CommandReports,
    Match,
    Report,
    ReportHit,
    ReportInfo,
    SearchReportsResult,
)
from query.reports.search import search_reports
from query.reports.text import (
    COLLECTION,
    LOWER_CHANGES_LENGTH,
    excerpt,
    first_match,
    iso_date,
    query_words,
    report_link,
)

__all__ = [
    "COLLECTION",
    "LOWER_CHANGES_LENGTH",
    "CommandReports",
    "Match",
    "Report",
    "ReportHit",
    "ReportInfo",
    "ReportSegment",
    "SearchReportsResult",
    "command_dir",
    "excerpt",
    "first_match",
    "get_report",
    "iso_date",
    "list_command_reports",
    "query_words",
    "report_link",
    "reports_root",
    "search_reports",
    "segments_of",
]
