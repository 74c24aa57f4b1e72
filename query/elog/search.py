"""search_elog: reads the arguments, picks the way to answer (newest first, ranked text
or a regex), and makes the hits."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

from query.args import check_query, check_range
from query.context import QueryContext
from query.elog.caches import ElogCache, doc_table, elog_cache
from query.elog.dates import check_dates
from query.elog.filters import selected
from query.elog.index_access import ElogIndex, open_index
from query.elog.logbook import entry_link, logbook_root
from query.elog.models import ElogHit, ElogSearchResponse, Ranker
from query.elog.regex_search import compile_regex, is_regex, regex_hits
from query.elog.snippets import snippet
from query.elog.text_query import TextQuery, text_query
from query.rerank import Candidate, RerankMode, choose_reranker, rerank_scores

MAX_RESULTS = 50
# How many BM25 hits a reranker reorders.
RERANK_DEPTH = {"lexical": 30, "semantic": 16}


def search_elog(
    ctx: QueryContext,
    query: str | None = None,
    since: str | date | None = None,
    until: str | date | None = None,
    category: str | None = None,
    system: str | None = None,
    domain: str | None = None,
    max_results: int = 10,
    *,
    rerank: RerankMode | None = None,
) -> ElogSearchResponse:
    """Search the logbook: text (BM25F, reranked), a regex, or no query (newest first),
    within ``since``..``until`` (days, ``until`` inclusive) and the filters.

    ``rerank`` overrides ``[elog] rerank`` (``off``: BM25 alone); it is for callers that
    compare rankers (bench/, tests): the MCP tool and the CLI do not offer it.
    Raises `TroveError`: INVALID_QUERY, INVALID_ARGUMENT, INVALID_DATE_RANGE,
    DIRECTORY_NOT_FOUND, SEARCH_TIMEOUT.
    """
    text = check_query(query, optional=True)
    check_range(max_results, "max_results", 1, MAX_RESULTS)
    low, high = check_dates(since, until)
    mode = rerank or ctx.settings.elog.rerank
    pattern = compile_regex(text) if text and is_regex(text) else None
    tq: TextQuery | None = None
    reranker = None
    if text and pattern is None:
        tq = text_query(text)
        reranker = choose_reranker(mode, ctx.memo)
    ranker: Ranker = (
        "recency" if text is None else "regex" if pattern is not None else _ranker(reranker)
    )
    root = logbook_root(ctx)
    filters = {"category": category, "system": system, "domain": domain}
    cache = elog_cache(ctx)

    with open_index(ctx) as index:
        table = doc_table(index, cache)
        allowed = selected(ctx, root, index, table, filters, low, high)
        if allowed is not None and not allowed:
            return ElogSearchResponse(hits=[], total=0, ranker=ranker)
        if text is None:
            docs = table.live if allowed is None else allowed
            hits = []
            for docnum in table.newest(docs, max_results):
                fields = index.stored_fields(docnum)
                hits.append(_hit(ctx, root, fields, snippet(fields.get("body") or ""), 0.0))
            return ElogSearchResponse(hits=hits, total=len(docs), ranker=ranker)

        if pattern is not None:
            found_regex, total = regex_hits(
                index, table, cache, pattern, text, allowed, max_results
            )
            hits = [_hit(ctx, root, *hit) for hit in found_regex]
            return ElogSearchResponse(hits=hits, total=total, ranker="regex")

        assert tq is not None
        depth = max(max_results, RERANK_DEPTH.get(getattr(reranker, "name", ""), max_results))
        found = _candidates(index, tq, depth, max_results, allowed)
        total = len(_matching(index, cache, tq, allowed)) if found else 0

    if not found:
        return ElogSearchResponse(hits=[], total=total, ranker=ranker)
    snippets = [snippet(fields.get("body") or "", tq.words) for fields, _ in found]
    if reranker is None:
        scores = [score for _, score in found]
    else:
        candidates = [
            Candidate(
                title=fields.get("title") or "",
                snippet=snip,
                bm25=score,
                fields={
                    k: fields.get(k) or "" for k in ("category", "system", "domain", "section")
                },
            )
            for (fields, score), snip in zip(found, snippets, strict=True)
        ]
        scores, used = rerank_scores(reranker, mode, ctx.memo, text, candidates)
        ranker = f"bm25+{used}"  # type: ignore[assignment]
    order = sorted(range(len(found)), key=lambda i: (-scores[i], i))[:max_results]
    hits = [_hit(ctx, root, found[i][0], snippets[i], scores[i]) for i in order]
    return ElogSearchResponse(hits=hits, total=total, ranker=ranker)


def _candidates(
    index: ElogIndex, tq: TextQuery, depth: int, needed: int, allowed: set[int] | None
) -> list[tuple[Mapping[str, Any], float]]:
    """Up to ``depth`` BM25F hits for the reranker: the entries holding every word, best
    first; when fewer than ``needed`` hold them all, the best holding any fill up.

    Any of several common words makes every entry holding one of them scored (3-5x
    slower at 30k entries than all of them, which skips along the rarest word).
    """
    found: dict[int, tuple[Mapping[str, Any], float]] = {}
    if tq.strict is not None:
        for hit in index.ranked_search(tq.strict, depth, allowed):
            found[hit.docnum] = (hit.fields, hit.score)
    best = sorted(found.values(), key=lambda fs: -fs[1])
    if len(found) >= needed:
        return best
    rest = []
    for hit in index.ranked_search(tq.query, depth, allowed):
        if hit.docnum not in found:
            rest.append((hit.fields, hit.score))
    return best + rest[: depth - len(best)]


def _matching(
    index: ElogIndex, cache: ElogCache, tq: TextQuery, allowed: set[int] | None
) -> set[int]:
    """Every doc number the text query matches (for ``total``), from the postings: a
    scored count would cost a second pass, more than the search."""
    if tq.phrased:
        docs = index.matching_docs(tq.query)
    else:
        docs = set()
        for name, text in tq.terms:
            docs.update(cache.postings.docs(index, name, text))
    return docs if allowed is None else docs & allowed


def _hit(
    ctx: QueryContext, root: Path, fields: Mapping[str, Any], snippet_text: str, score: float
) -> ElogHit:
    return ElogHit(
        elog_id=fields["elog_id"],
        title=fields.get("title") or "",
        date=fields.get("date") or "",
        author=fields.get("author") or "",
        category=fields.get("category") or "",
        system=fields.get("system") or "",
        domain=fields.get("domain") or "",
        section=fields.get("section") or "",
        snippet=snippet_text,
        score=round(float(score), 4),
        link=entry_link(ctx, root, fields),
    )


def _ranker(reranker: Any) -> Ranker:
    name = getattr(reranker, "name", None)
    return f"bm25+{name}" if name else "bm25"  # type: ignore[return-value]
