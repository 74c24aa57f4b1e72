"""search_workspace: the arguments, the tiers in order, and the notes that say how the
query was matched or why nothing was."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from query import forgiving, neighbours, paging, tools
from query.args import check_query
from query.citations import heading_of_line
from query.context import QueryContext
from query.errors import TroveError
from query.forgiving import Ladder, corrected_query, forgive
from query.indexes import source_folder
from query.workspace import limits
from query.workspace.answers import Answer
from query.workspace.candidates import Lookup, look_up
from query.workspace.dates import check_date_range
from query.workspace.lines import excerpt, original_line
from query.workspace.models import Match, WorkspaceHit, WorkspaceSearchResponse
from query.workspace.tiers import exact_lines, related_lines, word_lines
from query.workspace.view import COLLECTION, View

FUZZY_FACTOR = 0.9


def search_workspace(
    ctx: QueryContext,
    query: str,
    date_range: str | None = None,
    max_results: int = tools.SEARCH_WORKSPACE_RESULTS.default,
    offset: int = 0,
) -> WorkspaceSearchResponse:
    """Conversation lines that match ``query``, best first, from the first tier that finds
    any (see the module docstring): the query as written (literal, case-insensitive),
    every word of it in any order, its unknown words corrected, some of its words or
    words of the same stem.

    ``date_range``: ``YYYY-MM`` (the month folder and its day folders) or ``YYYY-MM-DD``
    (that day's folder only); None searches every conversation. The page from hit
    ``offset`` on (query/paging.py).
    """
    literal = check_query(query)
    if "\n" in literal or "\r" in literal:
        raise TroveError(
            "INVALID_QUERY", "query spans several lines; search_workspace matches within one line"
        )
    dr = check_date_range(date_range)
    tools.SEARCH_WORKSPACE_RESULTS.check(max_results)
    offset = tools.check_offset(offset, max_results)
    root = source_folder(ctx.settings, COLLECTION)
    view = View(ctx, root, dr, offset, max_results)
    exact = exact_lines(view, literal, view.window)
    if exact.total:
        answer = _response(view, exact, "exact")
    else:
        answer = _forgive(view, literal, view.window)
    tools.SEARCH_WORKSPACE_RESULTS.fit(answer, "results", offset, max_results)
    return answer


def _forgive(view: View, literal: str, k: int) -> WorkspaceSearchResponse:
    """Tiers 2-4, once no line holds the query as written."""
    if view.range is not None:
        with view.snapshot() as segments:
            folders = any(view.in_range(segment) for segment, _ in segments)
        if not folders:
            return _empty(
                view,
                f"no conversation folder for {view.range.value}: nothing to search there; "
                "try another date_range or none",
            )
    words = forgiving.words(literal)
    if not words:
        return _empty(
            view, f"no conversation line holds {_short(literal)!r}; it has no words to look for"
        )
    cut = len(words) > limits.MAX_WORDS
    words = words[: limits.MAX_WORDS]
    stems = _stems(words)
    first_words = f"; only its first {limits.MAX_WORDS} words were used" if cut else ""
    if not stems:
        return _empty(
            view,
            f"no conversation line holds {_short(literal)!r}, and its words ({', '.join(words)}) "
            "are too common to find anything alone: add a word that says what to look for",
        )
    lookups: dict[tuple[str, ...], Lookup] = {}
    closest: dict[str, list[str]] = {}

    def lookup_of(of: list[str]) -> Lookup:
        if tuple(of) not in lookups:
            lookups[tuple(of)] = look_up(view, of)
        return lookups[tuple(of)]

    def as_written(text: str) -> _Found | None:
        if text != literal:  # (the literal itself found nothing: search_workspace asked)
            exact = exact_lines(view, text, k)
            if exact.total:
                return _Found(exact, "exact", False)
        answer, capped = word_lines(view, forgiving.words(text)[: limits.MAX_WORDS], k)
        return _Found(answer, "words", capped) if answer.total else None

    def related(text: str) -> _Found | None:
        of = stems if text == literal else _stems(forgiving.words(text)[: limits.MAX_WORDS])
        answer, capped = related_lines(view, lookup_of(of), len(of), k)
        return _Found(answer, "related", capped) if answer.total else None

    def unknown_of(of: list[str]) -> list[str]:
        return [w for w, known in zip(of, lookup_of(of).known, strict=True) if not known]

    def closest_to(unknown: list[str]) -> dict[str, list[str]]:
        closest.update(_closest(view, [w for w in unknown if w not in closest]))
        return {w: closest[w] for w in unknown}

    ladder: Ladder[str, _Found] = Ladder(
        as_written=as_written,
        related=related,
        unknown=unknown_of,
        closest=closest_to,
        correct=corrected_query,
    )
    found = forgive(ladder, literal, stems)
    # What the notes say of the words no conversation holds, however the query matched.
    unknown = found.unknown if found.how != "related" else unknown_of(stems)
    suggestions = list(dict.fromkeys(c for w in unknown for c in closest_to([w])[w]))
    absent = f"no conversation holds {_quoted(unknown)}" if unknown else ""
    answer = found.answer
    if answer is not None and found.how == "as written":
        note = f"no line holds {_short(literal)!r} as written; these hold every word of it, in any order"
        return _response(view, answer.lines, "words", note + first_words + _capped(answer.capped))
    if answer is not None and found.how == "related":
        note = (
            "no line holds every word of the query; these hold some of its words or words "
            "of the same stem, most words first"
        )
        if absent:
            note += f" ({absent}{_suggested(suggestions)})"
        return _response(
            view, answer.lines, "related", note + first_words + _capped(answer.capped), suggestions
        )
    if answer is not None:
        how = {
            "exact": "as written",
            "words": "every word, in any order",
            "related": "some of its words or words of the same stem, most words first",
        }[answer.match]
        note = f"{absent}; these lines hold {found.corrected!r} ({how})"
        return _response(
            view,
            answer.lines,
            "fuzzy",
            note + first_words + _capped(answer.capped),
            suggestions,
            found.corrected,
            FUZZY_FACTOR,
        )

    parts = [f"no conversation line holds {_short(literal)!r}, all its words or any of them"]
    if absent:
        parts.append(absent + _suggested(suggestions))
    if view.range is not None and not unknown:
        parts.append(
            f"its words are in conversations outside {view.range.value}: try without date_range"
        )
    common = [w for w in words if w in forgiving.STOP_WORDS]
    if common:
        parts.append(f"common words ({', '.join(common)}) never match alone")
    return _empty(view, "; ".join(parts) + first_words, suggestions)


@dataclass
class _Found:
    """A tier's answer, which tier, and whether files were left unread."""

    lines: Answer
    match: Match
    capped: bool


def _stems(words: list[str]) -> list[str]:
    """The words that can match alone, one per stem (the first), in order."""
    return list(
        {forgiving.stem(w): w for w in reversed(words) if w not in forgiving.STOP_WORDS}.values()
    )[::-1]


def _closest(view: View, unknown: list[str]) -> dict[str, list[str]]:
    """Per word no conversation holds, the closest indexed words (best first)."""
    found: dict[str, list[str]] = {}
    if not unknown:
        return found
    with view.snapshot() as segments:
        near = [seg.near(segment) for segment, seg in segments]
        first = neighbours.first_holder(near)

        def order(term: str) -> tuple[int, int, str]:  # the order of the pool below
            return first(term), len(term), term

        for word in unknown:
            n = len(word)
            if (
                n > limits.MAX_CORRECTED_LENGTH
                or n < forgiving.MIN_CORRECTABLE
                or not word.isalpha()
            ):
                found[word] = []
                continue
            close = neighbours.closest_near(word, near, order)
            if close is None:  # the pool may be cut at MAX_CANDIDATES: as the scan cuts it
                pool = dict.fromkeys(
                    term
                    for segment, seg in segments
                    for term in seg.words_of_length(segment, n - 2, n + 2)
                )
                close = forgiving.closest(word, pool)
            found[word] = close
    return found


def _quoted(words: Iterable[str]) -> str:
    return ", ".join(repr(_short(w)) for w in words)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _suggested(suggestions: list[str]) -> str:
    return f"; closest indexed words: {', '.join(suggestions)}" if suggestions else ""


def _capped(capped: bool) -> str:
    return f"; only the {limits.MAX_FILES_READ} most promising files were read" if capped else ""


def _empty(view: View, note: str, suggestions: list[str] | None = None) -> WorkspaceSearchResponse:
    return WorkspaceSearchResponse(
        results=[],
        total_found=0,
        note=note,
        suggestions=suggestions or [],
        freshness=view.freshness([]),
    )


def _response(
    view: View,
    answer: Answer,
    match: Match,
    note: str | None = None,
    suggestions: list[str] | None = None,
    corrected: str | None = None,
    factor: float = 1.0,
) -> WorkspaceSearchResponse:
    hits = []
    shown, more = paging.page(answer.top, view.offset, view.max_results)
    for ln in shown:
        original = answer.originals[ln.doc.key]
        line = original_line(original, ln)
        hits.append(
            WorkspaceHit(
                id=f"{ln.doc.key}:{ln.number}",
                conversation=ln.doc.conversation,
                date=ln.doc.date,
                path=str(view.root / ln.doc.key),
                line=ln.number,
                heading=None if original is None else heading_of_line(original, ln.number),
                excerpt=excerpt(line, ln.col, ln.length),
                score=ln.score if factor == 1.0 else round(ln.score * factor, 4),
                conversation_hits=answer.per_conversation[ln.doc.conv],
                match=match,
            )
        )
    return WorkspaceSearchResponse(
        results=hits,
        total_found=answer.total,
        note=note,
        suggestions=suggestions or [],
        corrected_query=corrected,
        next_offset=more,
        freshness=view.freshness(hits),
    )
