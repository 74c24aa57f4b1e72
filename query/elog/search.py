"""search_elog: reads the arguments, picks the way to answer (newest first, ranked text
or a regex), and makes the hits."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from query import budget, paging, tools
from query.args import check_query
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
from query.forgiving import FEW_WORDS, Ladder, closest, corrected_query, forgive
from query.neighbours import closest_near
from query.rerank import (
    Candidate,
    LexicalReranker,
    RerankMode,
    choose_reranker,
    rerank_scores,
)

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
    max_results: int = tools.SEARCH_ELOG_RESULTS.default,
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
    tools.SEARCH_ELOG_RESULTS.check(max_results)
    offset = tools.check_offset(offset, max_results)
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
        if not tq.words and tq.required is None:
            stop = ", ".join(tq.stop_words)
            why = (
                f"the query holds only stop words ({stop}), which never match alone: add a "
                "word that names what you look for, or quote a phrase"
            )
            return ElogSearchResponse(hits=[], total=0, ranker=ranker, note=why, freshness=fresh)
        stems = dict(zip(tq.words, tq.stems, strict=True))

        def related(query: TextQuery) -> _Counted | None:
            return _counted(index, cache, query, allowed)

        ladder: Ladder[TextQuery, _Counted] = Ladder(
            related=related,
            unknown=lambda words: [w for w in words if not _word_docs(index, cache, stems[w])],
            closest=lambda unknown: {w: _closest_words(index, cache, w) for w in unknown},
            correct=lambda query, replaced, dropped: query.with_words(
                [replaced.get(w, w) for w in query.words if w not in dropped]
            ),
            relate_questions_first=False,
            drop_uncorrectable=True,
        )
        forgiven = forgive(ladder, tq, list(tq.words))
        replaced, dropped = forgiven.replaced, forgiven.dropped
        note = _corrections(replaced, dropped, any(w not in dropped for w in tq.words))
        corrected = corrected_query(text, replaced, dropped) if replaced else None
        counted = forgiven.answer
        if counted is None:
            searched = ladder.correct(tq, replaced, dropped) if replaced or dropped else tq
            why = note or _why_no_match(index, cache, searched, allowed, filters, since, until)
            return ElogSearchResponse(
                hits=[],
                total=0,
                ranker=ranker,
                note=why,
                suggestions=forgiven.suggestions,
                corrected_query=corrected,
                freshness=fresh,
            )
        tq, counts = counted.query, counted.counts
        if counted.unquoted:
            unquoted = "no entry holds the quoted phrase as written: searched for its words"
            note = f"{note}; {unquoted}" if note else unquoted
        candidates = _candidates(index, tq, counts, depth)
        total = len(counts)
        stale = index.stale_files(root, (c[0] for c in candidates))
        # The best BM25F of every entry that matches: the scale of the coordination
        # score, the same for every page.
        top = index.ranked_search(tq.query, 1, set(counts))[0].score or 1.0

    n = len(tq.stems)
    best = max(c[2] for c in candidates)
    if n > 1 and best < n:
        held_note = (
            f"no entry holds every word of the query ({', '.join(tq.words)}); "
            f"the best hold {best} of {n}"
        )
        note = f"{note}; {held_note}" if note else held_note
    match: Match = "fuzzy" if corrected else "words"
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
            suggestions=forgiven.suggestions,
            corrected_query=corrected,
            next_offset=more,
            freshness=fresh,
        ),
        offset,
        max_results,
    )


def _fitted(answer: ElogSearchResponse, offset: int, max_results: int) -> ElogSearchResponse:
    by_default = max_results == tools.SEARCH_ELOG_RESULTS.default
    budget.fit_page(answer, "hits", offset, budget.limit_for(by_default))
    return answer


@dataclass
class _Counted:
    """What the ranked tier found: the query it searched (its quoted phrases loosened if
    they matched nothing), per entry how many of its words the entry holds."""

    query: TextQuery
    counts: dict[int, int]
    unquoted: bool = False


def _counted(
    index: ElogIndex, cache: ElogCache, tq: TextQuery, allowed: set[int] | None
) -> _Counted | None:
    """The entries the query matches (None: none). No entry holding a quoted phrase as
    written: its words, anywhere, rather than nothing (a pasted paragraph quotes words no
    entry holds in a row)."""
    if not tq.stems and tq.required is None:
        return None
    counts = _word_counts(index, cache, tq, allowed)
    if counts:
        return _Counted(tq, counts)
    if tq.required is not None:
        loose = tq.without_phrases()
        counts = _word_counts(index, cache, loose, allowed) if loose.stems else {}
        if counts:
            return _Counted(loose, counts, unquoted=True)
    return None


def _closest_words(index: ElogIndex, cache: ElogCache, word: str) -> list[str]:
    """The indexed words closest to ``word``, best first, from their neighbourhoods (the
    scan of ``indexed_words`` when the pool may be cut at MAX_CANDIDATES, as it cuts it)."""
    close = closest_near(word, indexed_neighbours(index, cache), str)  # code point order
    return close if close is not None else closest(word, indexed_words(index, cache))


def _corrections(replaced: dict[str, str], dropped: list[str], words_left: bool) -> str | None:
    """What was corrected, in words (None: nothing); ``words_left``: words were searched."""
    parts = []
    if replaced:
        parts.append(
            "no entry holds "
            + ", ".join(f"{w!r}: searched for {c!r} instead" for w, c in replaced.items())
        )
    if dropped:
        quoted = ", ".join(repr(w) for w in dropped)
        parts.append(
            f"no entry holds {quoted} (nor a word close to it)"
            + (": searched without it" if words_left else "")
        )
    return "; ".join(parts) or None


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
