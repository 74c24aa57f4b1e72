"""search_elog: reads the arguments, picks the way to answer (newest first, ranked text
or a regex), and makes the hits."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from query import budget, paging
from query.args import check_query, check_range
from query.context import QueryContext
from query.elog.caches import (
    DocTable,
    ElogCache,
    doc_table,
    elog_cache,
    indexed_neighbours,
    indexed_words,
)
from query.elog.dates import Bound, check_dates
from query.elog.filters import selected
from query.elog.index_access import ElogIndex, open_index
from query.elog.logbook import entry_link, logbook_root
from query.elog.models import ElogHit, ElogSearchResponse, Match, Ranker, shown
from query.elog.regex_search import compile_regex, is_regex, regex_hits
from query.elog.snippets import snippet
from query.elog.text_query import ENTRY_FIELD, TextQuery, text_query
from query.forgiving import FEW_WORDS, closest
from query.neighbours import closest_near
from query.rerank import (
    Candidate,
    LexicalReranker,
    RerankMode,
    choose_reranker,
    rerank_scores,
)

MAX_RESULTS = 50
# A text hit's score is the number of query words it holds plus its BM25F relative to the
# best candidate's times this (below 1: an entry holding more words always ranks higher
# before reranking).
COORDINATION_SHARE = 0.999
# Searches for candidates, one per number of words held (most first); the rest share one.
MAX_LEVEL_SEARCHES = 4
# How many BM25 hits a reranker reorders. The lexical one costs little per candidate;
# the semantic one embeds each (about 15 ms apiece on one core, cached by text), within
# bench_elog's 500 ms p95.
RERANK_DEPTH = {"lexical": 100, "semantic": 32}


def search_elog(
    ctx: QueryContext,
    query: str | None = None,
    since: str | date | None = None,
    until: str | date | None = None,
    category: str | None = None,
    system: str | None = None,
    domain: str | None = None,
    max_results: int = paging.DEFAULT_RESULTS,
    offset: int = 0,
    *,
    rerank: RerankMode | None = None,
) -> ElogSearchResponse:
    """Search the logbook: text (BM25F, reranked), a regex, or no query (newest first),
    within ``since``..``until`` (days, ``until`` inclusive) and the filters; the page from
    hit ``offset`` on (query/paging.py).

    ``rerank`` overrides ``[elog] rerank`` (``off``: BM25 alone); it is for callers that
    compare rankers (bench/, tests): the MCP tool and the CLI do not offer it.
    Raises `TroveError`: INVALID_QUERY, INVALID_ARGUMENT, INVALID_DATE_RANGE,
    DIRECTORY_NOT_FOUND, SEARCH_TIMEOUT.
    """
    text = check_query(query, optional=True)
    check_range(max_results, "max_results", 1, MAX_RESULTS)
    offset = paging.check_offset(offset, max_results)
    window = paging.window(offset, max_results)
    low, high = check_dates(since, until)
    mode = rerank or ctx.settings.elog.rerank
    pattern = compile_regex(text) if text and is_regex(text) else None
    tq: TextQuery | None = None
    reranker = None
    if text and pattern is None:
        tq = text_query(text)
        reranker = choose_reranker(mode, ctx.memo)
        if isinstance(reranker, LexicalReranker) and len(tq.stems) > FEW_WORDS:
            # What the lexical reranker adds (coverage, title, proximity) is coordination,
            # which a question of many words does better without: BM25 alone ranks CISI's
            # questions better (nDCG@10 0.358 against 0.350 reranked).
            reranker = None
    ranker: Ranker = (
        "recency" if text is None else "regex" if pattern is not None else _ranker(reranker)
    )
    root = logbook_root(ctx)
    filters = {"category": category, "system": system, "domain": domain}
    cache = elog_cache(ctx)

    with open_index(ctx) as index:
        fresh = index.freshness(ctx)
        table = doc_table(index, cache)
        allowed = selected(ctx, root, index, table, filters, low, high)
        if allowed is not None and not allowed:
            why = _empty_selection(ctx, root, index, table, filters, low, high, since, until)
            return ElogSearchResponse(hits=[], total=0, ranker=ranker, note=why, freshness=fresh)
        if text is None:
            docs = table.live if allowed is None else allowed
            newest, more = paging.page(table.newest(docs, window), offset, max_results)
            shown = [index.stored_fields(d) for d in newest]
            stale = index.stale_files(root, shown)
            hits = [
                _hit(ctx, root, fields, snippet(fields.get("body") or ""), 0.0, stale)
                for fields in shown
            ]
            return _fitted(
                ElogSearchResponse(
                    hits=hits, total=len(docs), ranker=ranker, next_offset=more, freshness=fresh
                ),
                offset,
                max_results,
            )

        if pattern is not None:
            found_regex, total = regex_hits(index, table, cache, pattern, text, allowed, window)
            page_regex, more = paging.page(found_regex, offset, max_results)
            stale = index.stale_files(root, (fields for fields, _, _ in page_regex))
            hits = [_hit(ctx, root, *hit, stale) for hit in page_regex]
            return _fitted(
                ElogSearchResponse(
                    hits=hits, total=total, ranker="regex", next_offset=more, freshness=fresh
                ),
                offset,
                max_results,
            )

        assert tq is not None
        # The reranker reorders the first reranked candidates, whatever the page: pages
        # then continue each other exactly.
        reranked = RERANK_DEPTH.get(getattr(reranker, "name", ""), 0) if reranker else 0
        depth = max(window, reranked)
        plan = _forgive(index, cache, tq, text)
        if plan.query is None:
            return ElogSearchResponse(
                hits=[],
                total=0,
                ranker=ranker,
                note=plan.note,
                suggestions=plan.suggestions,
                freshness=fresh,
            )
        tq = plan.query
        counts = _word_counts(index, cache, tq, allowed)
        if not counts and tq.required is not None:
            # No entry holds a quoted phrase as written: its words, anywhere, rather
            # than nothing (a pasted paragraph quotes words no entry holds in a row).
            loose = tq.without_phrases()
            counts = _word_counts(index, cache, loose, allowed) if loose.stems else {}
            if counts:
                tq = loose
                unquoted = "no entry holds the quoted phrase as written: searched for its words"
                plan.note = f"{plan.note}; {unquoted}" if plan.note else unquoted
        if not counts:
            why = plan.note or _why_no_match(index, cache, tq, allowed, filters, since, until)
            return ElogSearchResponse(
                hits=[],
                total=0,
                ranker=ranker,
                note=why,
                suggestions=plan.suggestions,
                corrected_query=plan.corrected_query,
                freshness=fresh,
            )
        candidates = _candidates(index, tq, counts, depth)
        total = len(counts)
        stale = index.stale_files(root, (c[0] for c in candidates))
        # The best BM25F of every entry that matches: the scale of the coordination
        # score, the same for every page.
        top = index.ranked_search(tq.query, 1, set(counts))[0].score or 1.0

    n = len(tq.stems)
    best = max(c[2] for c in candidates)
    note: str | None = plan.note
    if n > 1 and best < n:
        held_note = (
            f"no entry holds every word of the query ({', '.join(tq.words)}); "
            f"the best hold {best} of {n}"
        )
        note = f"{note}; {held_note}" if note else held_note
    match: Match = "fuzzy" if plan.corrected_query else "words"
    # Coordination (a query of few words): the words held first, BM25F (relative to the
    # best) among equals; a longer question by BM25F alone.
    coordinate = n <= FEW_WORDS
    found = [
        (f, (level if coordinate else 0) + COORDINATION_SHARE * score / top, held)
        for f, score, held, level in candidates
    ]
    # In coordination order; the first ``reranked`` reordered by the reranker.
    order = sorted(range(len(found)), key=lambda i: (-found[i][1], i))
    scores = [score for _, score, _ in found]
    snippets: dict[int, str] = {}

    def snippet_of(i: int) -> str:
        if i not in snippets:
            snippets[i] = snippet(found[i][0].get("body") or "", tq.shown)
        return snippets[i]

    if reranker is not None:
        head = order[:reranked]
        to_rerank = [
            Candidate(
                title=found[i][0].get("title") or "",
                snippet=snippet_of(i),
                bm25=found[i][1],
                fields={
                    k: found[i][0].get(k) or "" for k in ("category", "system", "domain", "section")
                },
            )
            for i in head
        ]
        new, used = rerank_scores(reranker, mode, ctx.memo, text, to_rerank)
        ranker = f"bm25+{used}"  # type: ignore[assignment]
        for i, score in zip(head, new, strict=True):
            scores[i] = score
        head.sort(key=lambda i: (-scores[i], i))
        order[:reranked] = head
    chosen, more = paging.page(order, offset, max_results)
    hits = []
    for i in chosen:
        fields, _, held = found[i]
        hit = _hit(ctx, root, fields, snippet_of(i), scores[i], stale)
        hit.match = match if held >= n else "fuzzy" if match == "fuzzy" else "related"
        hits.append(hit)
    return _fitted(
        ElogSearchResponse(
            hits=hits,
            total=total,
            ranker=ranker,
            note=note,
            suggestions=plan.suggestions,
            corrected_query=plan.corrected_query,
            next_offset=more,
            freshness=fresh,
        ),
        offset,
        max_results,
    )


def _fitted(answer: ElogSearchResponse, offset: int, max_results: int) -> ElogSearchResponse:
    by_default = max_results == paging.DEFAULT_RESULTS
    budget.fit_page(answer, "hits", offset, budget.limit_for(by_default))
    return answer


@dataclass
class Plan:
    """A text query after forgiving it: words no entry holds corrected or dropped."""

    query: TextQuery | None  # None: nothing left to search for (``note`` says why)
    note: str | None = None
    suggestions: list[str] = field(default_factory=list)
    corrected_query: str | None = None


def _forgive(index: ElogIndex, cache: ElogCache, tq: TextQuery, text: str) -> Plan:
    """Each word no entry holds (neither it nor another form of it) replaced by the
    closest indexed word, or dropped when none is close."""
    if not tq.words and tq.required is None:
        stop = ", ".join(tq.stop_words)
        return Plan(
            None,
            f"the query holds only stop words ({stop}), which never match alone: add a "
            "word that names what you look for, or quote a phrase",
        )
    words: list[str] = []
    replaced: dict[str, str] = {}
    missing: list[str] = []
    suggestions: list[str] = []
    for word, s in zip(tq.words, tq.stems, strict=True):
        if _word_docs(index, cache, s):
            words.append(word)
            continue
        # In code point order, as ``indexed_words`` holds them.
        close = closest_near(word, indexed_neighbours(index, cache), str)
        if close is None:  # the pool may be cut at MAX_CANDIDATES: as the scan cuts it
            close = closest(word, indexed_words(index, cache))
        suggestions += [c for c in close if c not in suggestions]
        if close:
            replaced[word] = close[0]
            words.append(close[0])
        else:
            missing.append(word)
    if not replaced and not missing:
        return Plan(tq)
    parts = []
    if replaced:
        parts.append(
            "no entry holds "
            + ", ".join(f"{w!r}: searched for {c!r} instead" for w, c in replaced.items())
        )
    if missing:
        quoted = ", ".join(repr(w) for w in missing)
        parts.append(
            f"no entry holds {quoted} (nor a word close to it)"
            + (": searched without it" if words else "")
        )
    note = "; ".join(parts)
    corrected = _corrected(text, replaced, missing) if replaced else None
    if not words and tq.required is None:
        return Plan(None, note, suggestions)
    return Plan(tq.with_words(words), note, suggestions, corrected)


def _corrected(text: str, replaced: dict[str, str], dropped: list[str]) -> str:
    """The query as written with each corrected word replaced and each dropped one left
    out."""
    for word, correction in [*replaced.items(), *((w, "") for w in dropped)]:
        text = re.sub(
            rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", correction, text, flags=re.IGNORECASE
        )
    return " ".join(text.split())


def _word_docs(index: ElogIndex, cache: ElogCache, s: str) -> set[int]:
    """The live entries holding a stem in their stemmed title, body or attributes."""
    return set(cache.postings.docs(index, ENTRY_FIELD, s))


def _word_counts(
    index: ElogIndex, cache: ElogCache, tq: TextQuery, allowed: set[int] | None
) -> dict[int, int]:
    """{entry: how many of the query's words it holds} for every entry the query matches
    (with quoted phrases: every entry holding them, some with no word)."""
    counts: Counter[int] = Counter()
    for s in tq.stems:
        counts.update(_word_docs(index, cache, s))
    if tq.required is not None:
        docs = index.matching_docs(tq.required)
        counts = Counter({d: counts.get(d, 0) for d in docs})
    if allowed is not None:
        counts = Counter({d: c for d, c in counts.items() if d in allowed})
    return dict(counts)


def _candidates(
    index: ElogIndex, tq: TextQuery, counts: dict[int, int], depth: int
) -> list[tuple[Mapping[str, Any], float, int, int]]:
    """Up to ``depth`` entries, (stored fields, BM25F score, words held, level): those
    holding more of the query's words first (their level), by BM25F among equals.

    One search per number of words held, from the most, until ``depth`` are found; the
    entries holding every word are found by the query requiring them all (it skips along
    the rarest word: 3-5x faster at 30k entries than any word). Past the first
    MAX_LEVEL_SEARCHES - 1 numbers, the rest share one search and one level (the highest
    of them), ranked by BM25F alone: so the first k of them are the same whatever
    ``depth`` is, and pages continue each other.
    """
    n = len(tq.stems)
    if n > FEW_WORDS:  # ranked by BM25F alone: the best of all that match
        hits = index.ranked_search(tq.query, depth, set(counts))
        return [(hit.fields, hit.score, counts[hit.docnum], 0) for hit in hits]
    by_level: dict[int, set[int]] = {}
    for d, c in counts.items():
        by_level.setdefault(c, set()).add(d)
    levels = sorted(by_level, reverse=True)
    groups = [[level] for level in levels[: MAX_LEVEL_SEARCHES - 1]]
    if levels[MAX_LEVEL_SEARCHES - 1 :]:
        groups.append(levels[MAX_LEVEL_SEARCHES - 1 :])
    found: list[tuple[Mapping[str, Any], float, int, int]] = []
    for group in groups:
        docs = set().union(*(by_level[level] for level in group))
        query = tq.strict if group == [n] and n > 1 else tq.query
        hits = index.ranked_search(query, depth - len(found), docs)
        found += [(hit.fields, hit.score, counts[hit.docnum], group[0]) for hit in hits]
        if len(found) >= depth:
            break
    return found


def _why_no_match(
    index: ElogIndex,
    cache: ElogCache,
    tq: TextQuery,
    allowed: set[int] | None,
    filters: dict[str, str | None],
    since: str | date | None,
    until: str | date | None,
) -> str:
    """Why a text query that has words entries hold found none: the dates and filters."""
    anywhere = len(_word_counts(index, cache, tq, None))
    if allowed is not None and anywhere:
        return (
            f"{anywhere} entr{'y' if anywhere == 1 else 'ies'} match the query, but none "
            f"within {_selection(filters, since, until)}: widen them"
        )
    if tq.required is not None:
        return "no entry holds the quoted phrase as written"
    return "no entry holds the query's words"


def _empty_selection(
    ctx: QueryContext,
    root: Path,
    index: ElogIndex,
    table: DocTable,
    filters: dict[str, str | None],
    low: Bound | None,
    high: Bound | None,
    since: str | date | None,
    until: str | date | None,
) -> str:
    """Which of the dates and filters left no entry: each that selects none alone, else
    all of them together."""
    empty: list[str] = []
    for name, value in filters.items():
        if value and value.strip():
            alone = selected(ctx, root, index, table, {name: value}, None, None)
            if alone is not None and not alone:
                empty.append(f"{name} {value!r}")
    if low is not None or high is not None:
        alone = selected(ctx, root, index, table, {}, low, high)
        if alone is not None and not alone:
            empty.append(_selection({}, since, until))
    if empty:
        return "no entry matches " + "; none matches ".join(empty)
    together = _selection(filters, since, until)
    return f"entries match each of {together}, but none matches all of them together"


def _selection(
    filters: dict[str, str | None], since: str | date | None, until: str | date | None
) -> str:
    """The dates and filters a caller gave, as words."""
    parts = [f"{name} {value!r}" for name, value in filters.items() if value and value.strip()]
    if since is not None:
        parts.append(f"since {str(since)!r}")
    if until is not None:
        parts.append(f"until {str(until)!r}")
    return ", ".join(parts) or "the selection"


def _hit(
    ctx: QueryContext,
    root: Path,
    fields: Mapping[str, Any],
    snippet_text: str,
    score: float,
    stale_files: set[str],
) -> ElogHit:
    return ElogHit(
        id=str(fields["elog_id"]),
        elog_id=fields["elog_id"],
        **{name: budget.clip(value) for name, value in shown(fields).items()},  # type: ignore[arg-type]
        snippet=snippet_text,
        score=round(float(score), 4),
        link=entry_link(ctx, root, fields),
        stale=fields.get("file") in stale_files,
    )


def _ranker(reranker: Any) -> Ranker:
    name = getattr(reranker, "name", None)
    return f"bm25+{name}" if name else "bm25"  # type: ignore[return-value]
