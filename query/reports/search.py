"""search_reports: the tiers in order (the query as written, its words, related words and
their stems, corrections), the hits and the notes that say how the query matched."""

from __future__ import annotations

from typing import NamedTuple

from indexer.config import Settings
from indexer.engine.base import Snapshot
from indexer.sources.reports import date_from_name
from query import paging, tools
from query.args import check_name, check_query
from query.citations import heading_above, line_of
from query.context import QueryContext
from query.forgiving import Ladder, content_weights, content_words, corrected_query, forgive, is_cjk
from query.freshness import mark_stale, of_snapshot
from query.indexes import Derived
from query.reports import tiers
from query.reports.counting import ReportSegment, segments_of
from query.reports.documents import command_dir, reports_root
from query.reports.files import ReportFiles
from query.reports.models import Match, ReportHit, SearchReportsResult
from query.reports.ranking import Ranked, best, best_related
from query.reports.text import (
    COLLECTION,
    around,
    first_match,
    first_match_indexed,
    in_text,
    iso_date,
    query_words,
    report_link,
)


def search_reports(
    ctx: QueryContext,
    query: str,
    command_filter: str | None = None,
    max_results: int = tools.SEARCH_REPORTS_RESULTS.default,
    offset: int = 0,
) -> SearchReportsResult:
    """Reports holding the query (case-insensitive), most occurrences first, then newest;
    the page from hit ``offset`` on (query/paging.py)."""
    q = check_query(query)
    if command_filter is not None:
        command_filter = check_name(
            command_filter, "command_filter", "INVALID_COMMAND_FILTER", command=True
        )
    tools.SEARCH_REPORTS_RESULTS.check(max_results)
    offset = tools.check_offset(offset, max_results)
    n = paging.window(offset, max_results)
    root = reports_root(ctx.settings)
    if command_filter is not None:
        command_dir(root, command_filter, "DIRECTORY_NOT_FOUND")
    files = ReportFiles(ctx.settings, root)
    with ctx.indexes.snapshot(COLLECTION, build=True) as snapshot:
        fresh = of_snapshot(ctx.watcher, COLLECTION, snapshot)
        if snapshot is None:
            return SearchReportsResult(results=[], freshness=fresh)
        segments = segments_of(snapshot, ctx.plan, ctx.costs)
        qwords = content_words(q)
        families = tiers.Families()

        def closest_words(unknown: list[str]) -> dict[str, list[str]]:
            memo: Derived[dict[int, list[str]]] = ctx.memo.setdefault(
                "reports.words_by_length", Derived()
            )
            by_length = memo.get(snapshot.stamp, lambda: tiers.words_by_length(segments))
            return tiers.corrections(by_length, unknown, tiers.neighbours(ctx.memo, segments))

        ladder: Ladder[str, _Tier] = Ladder(
            as_written=lambda text: _exact_or_words(segments, text.lower(), command_filter, n),
            related=lambda text: _related(ctx, snapshot, segments, text, command_filter, families),
            unknown=lambda words: tiers.unknown_words(segments, words, families),
            closest=closest_words,
            correct=corrected_query,
        )
        found = forgive(ladder, q, qwords)
        answer = found.answer
        if answer is None:
            return SearchReportsResult(
                results=[],
                note=_nothing(q, qwords, found.unknown, found.fixes, command_filter),
                suggestions=found.suggestions,
                freshness=fresh,
            )
        if found.how == "corrected":
            answer = answer._replace(match="fuzzy")
        note = _how(answer.match, found.corrected)
        ranked = _results(ctx, files, segments, answer, q.lower(), command_filter, n)
        results, more = paging.page(ranked, offset, max_results)
        mark_stale(snapshot, root, results, lambda h: h.id)
    answered = SearchReportsResult(
        results=results,
        note=note,
        suggestions=found.suggestions,
        corrected_query=found.corrected if answer.match == "fuzzy" else None,
        next_offset=more,
        freshness=fresh,
    )
    tools.SEARCH_REPORTS_RESULTS.fit(answered, "results", offset, max_results)
    return answered


class _Tier(NamedTuple):
    """The tier that answers, what it found per segment, and what to quote."""

    match: Match
    found: list[tuple[ReportSegment, dict[int, float]]]
    needles: list[str]
    related: list[tiers.Related] | None = None
    words: int = 0  # the related tier's content words


def _exact_or_words(
    segments: list[ReportSegment], lowered: str, command: str | None, top: int
) -> _Tier | None:
    found = [(s, s.occurrences(lowered, command, top)) for s in segments]
    if any(counts for _, counts in found):
        return _Tier("exact", found, [lowered])
    words = query_words(lowered)
    if words and words != [lowered]:
        found = [(s, s.all_words(words, command)) for s in segments]
        if any(counts for _, counts in found):
            return _Tier("words", found, words)
    return None


def _related(
    ctx: QueryContext,
    snapshot: Snapshot,
    segments: list[ReportSegment],
    query: str,
    command: str | None,
    families: tiers.Families,
) -> _Tier | None:
    qwords = content_words(query)
    if not qwords:
        return None
    memo: Derived[tiers.Stats] = ctx.memo.setdefault("reports.stats", Derived())
    st = memo.get(snapshot.stamp, lambda: tiers.stats(segments))
    found = tiers.related(segments, qwords, command, st, families, content_weights(query))
    if not any(r.matched for r in found):
        return None
    needles = [s.lexicon().term(k) for w in qwords for s in segments for k in families.of(s, w)]
    return _Tier(
        "related",
        [(s, r.occurrences) for s, r in zip(segments, found, strict=True)],
        list(dict.fromkeys(needles + [w for w in qwords if is_cjk(w)])),
        found,
        len(qwords),
    )


def _results(
    ctx: QueryContext,
    files: ReportFiles,
    segments: list[ReportSegment],
    answer: _Tier,
    lowered: str,
    command: str | None,
    max_results: int,
) -> list[ReportHit]:
    """The best hits of the tier that answered. A file deleted (or made unreadable) since
    the index saw it has no hit: the next best takes its place, so that a search still
    fills max_results when it can."""
    hits: dict[str, ReportHit | None] = {}
    found = answer.found
    n = max_results
    while True:
        if answer.related is not None:
            pairs = list(zip(segments, answer.related, strict=True))
            chosen = best_related(pairs, n, answer.words)
        else:
            chosen = best(found, n)
        for ranked in chosen:
            if ranked.key not in hits:
                hits[ranked.key] = report_hit(
                    ctx.settings, files, ranked, answer.match, answer.needles
                )
        results = [hit for ranked in chosen if (hit := hits[ranked.key]) is not None]
        if len(results) >= max_results or len(chosen) < n:
            return results[:max_results]
        n += max_results - len(results)
        if answer.match == "exact":  # counted for the best max_results only: now for n
            found = [(s, s.occurrences(lowered, command, n)) for s in segments]


def _how(match: Match, corrected: str | None) -> str | None:
    """How the query was matched, in words (None: as written)."""
    if match == "fuzzy":
        return f"no report holds the query as written; searched for {corrected!r}"
    if match == "related":
        return (
            "no report holds every word; reports holding some of the words or words of "
            "the same stem, most of the words first"
        )
    if match == "words":
        return "no report holds the whole query; reports holding every word, in any order"
    return None


def _nothing(
    query: str,
    qwords: list[str],
    unknown: list[str],
    fixes: dict[str, list[str]],
    command: str | None,
) -> str:
    """Why nothing matched, and what might."""
    where = f" of command {command!r}" if command is not None else ""
    if not qwords:
        return (
            f"no report{where} holds {query!r}, and it has only words too common to search "
            "by alone (stop words) or no words at all"
        )
    parts = [f"no report{where} holds {query!r} or any of its words"]
    if unknown:
        said = []
        for w in unknown:
            close = fixes.get(w) or []
            said.append(
                f"{w!r} (closest indexed: {', '.join(close)})"
                if close
                else f"{w!r} (no indexed word is close)"
            )
        parts.append("not in any report: " + ", ".join(said))
    return "; ".join(parts)


def report_hit(
    settings: Settings,
    files: ReportFiles,
    ranked: Ranked,
    match: Match,
    needles: list[str],
) -> ReportHit | None:
    command, name = ranked.key.split("/")
    text = files.text(ranked.key)
    if text is None:
        return None
    indexed = ranked.segment.segment.bytes_column("text").value(ranked.doc)
    if (found := first_match_indexed(text, indexed, needles)) is None:
        lowered = text.lower()
        start, length = first_match(lowered, needles)
        found = in_text(text, lowered, start, start + length)
    path = files.path(ranked.key)
    return ReportHit(
        id=ranked.key,
        report_name=name,
        command_name=command,
        date=iso_date(date_from_name(name)),
        excerpt=around(text, *found),
        line=line_of(text, found[0]),
        heading=heading_above(text, found[0]),
        link=report_link(settings, command, name, path),
        path=path,
        count=ranked.occurrences,
        match=match,
    )
