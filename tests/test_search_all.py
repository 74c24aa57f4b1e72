"""query/search_all.py: every collection searched at once, the lists fused by reciprocal
rank, over the sample data in data/ (each collection's own search is the reference)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from elog_threads import write_thread
from indexed import DATA, indexed_sample

from indexer.config import settings_from_dict
from query import budget, search_all, syntax
from query.commands import search_commands
from query.context import QueryContext
from query.elog import search_elog
from query.elog.models import ElogHit
from query.errors import TroveError
from query.freshness import Freshness
from query.reports import search_reports
from query.search_all import Hit, search
from query.workspace import search_workspace

ELOG_FILTERS = ("category", "system", "domain")


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueryContext]:
    context = indexed_sample(tmp_path_factory.mktemp("sample"))
    yield context
    context.close()


def _expected(ctx: QueryContext, query: str, names: list[str]) -> list[dict[str, Any]]:
    """Each collection's first 50 hits as search's hits, fused by hand: 1 / (60 + rank),
    ties in the order the collections were asked for."""
    lists: dict[str, list[dict[str, Any]]] = {}
    reports = search_reports(ctx, query, max_results=50).results
    lists["reports"] = [
        {
            "collection": "reports",
            "id": r.id,
            "title": r.report_name,
            "date": r.date,
            "snippet": r.excerpt,
            "link": r.link,
            "match": r.match,
            "line": r.line,
            "heading": r.heading,
            "stale": r.stale,
        }
        for r in reports
    ]
    lists["commands"] = [
        {
            "collection": "commands",
            "id": c.id,
            "title": c.name,
            "date": None,
            "snippet": c.description,
            "link": None,
            "match": search_all.COMMAND_MATCH[c.tier],
            "line": None,
            "heading": None,
            "stale": c.stale,
        }
        for c in search_commands(ctx, query, max_results=50).results
    ]
    lists["conversations"] = [
        {
            "collection": "conversations",
            "id": w.id,
            "title": w.conversation,
            "date": w.date,
            "snippet": w.excerpt,
            "link": None,
            "match": w.match,
            "line": w.line,
            "heading": w.heading,
            "stale": w.stale,
        }
        for w in search_workspace(ctx, query, max_results=50).results
    ]
    lists["elog"] = [
        {
            "collection": "elog",
            "id": e.id,
            "title": e.title,
            "date": e.date,
            "snippet": e.snippet,
            "link": e.link,
            "match": e.match or "words",
            "line": None,
            "heading": None,
            "stale": e.stale,
        }
        for e in search_elog(ctx, query, max_results=50).hits
    ]
    fused = [
        (rank, order, hit | {"score": round(1 / (60 + rank), 6)})
        for order, name in enumerate(names)
        for rank, hit in enumerate(lists[name], 1)
    ]
    fused.sort(key=lambda t: (t[0], t[1]))
    return [hit for _, _, hit in fused][:50]


@pytest.mark.parametrize("query", ["beam", "token", "report"])
def test_every_collections_hits_are_fused_by_reciprocal_rank(ctx: QueryContext, query: str) -> None:
    answer = search(ctx, query, max_results=50)
    assert [h.model_dump() for h in answer.hits] == _expected(
        ctx, query, list(search_all.COLLECTIONS)
    )
    if query != "beam":  # no command holds beam
        assert {h.collection for h in answer.hits} == set(search_all.COLLECTIONS)


def test_hits_that_tie_come_in_the_order_the_collections_were_asked_for(ctx: QueryContext) -> None:
    answer = search(ctx, "beam", collections=["elog", "reports", "elog"], max_results=50)
    assert [h.model_dump() for h in answer.hits] == _expected(ctx, "beam", ["elog", "reports"])
    assert [h.collection for h in answer.hits[:2]] == ["elog", "reports"]
    assert list(answer.by_collection) == ["elog", "reports"]


def test_by_collection_counts_every_match_of_each_collection(ctx: QueryContext) -> None:
    answer = search(ctx, "token")
    every_report = len(search_reports(ctx, "token", max_results=100).results)
    assert every_report > 11
    assert answer.by_collection == {
        # search_reports gives no total: the reports read, the page and one more.
        "reports": 11,
        "commands": search_commands(ctx, "token").total_found,
        "conversations": search_workspace(ctx, "token").total_found,
        "elog": search_elog(ctx, "token").total,
    }
    assert len(answer.hits) == 10 and answer.next_offset == 10
    assert answer.note is None


def test_the_next_page_continues_the_first_and_the_last_has_no_next_offset(
    ctx: QueryContext,
) -> None:
    every = search(ctx, "report", max_results=50)
    assert every.next_offset is None
    first = search(ctx, "report", max_results=7)
    second = search(ctx, "report", max_results=7, offset=7)
    assert first.hits + second.hits == every.hits[:14]
    assert second.next_offset == 14
    last = search(ctx, "report", max_results=7, offset=len(every.hits) - 3)
    assert last.hits == every.hits[-3:] and last.next_offset is None


def test_the_freshness_is_that_of_every_collection_read(ctx: QueryContext) -> None:
    answer = search(ctx, "beam", collections=["reports"])
    assert answer.freshness == search_reports(ctx, "beam").freshness


@pytest.mark.parametrize(
    ("kwargs", "code", "message"),
    [
        ({"max_results": 51}, "INVALID_ARGUMENT", "max_results must be between 1 and 50, got 51"),
        ({"max_results": 0}, "INVALID_ARGUMENT", "max_results must be between 1 and 50, got 0"),
        (
            {"max_results": 50, "offset": 951},
            "INVALID_ARGUMENT",
            "offset + max_results must be at most 1000, got 951 + 50",
        ),
        (
            {"collections": ["reports", "mail", "web"]},
            "INVALID_ARGUMENT",
            "unknown collection 'mail', 'web'; the collections are reports, commands, conversations",
        ),
        (
            {"since": "2025-11-02", "until": "2025-11-01"},
            "INVALID_DATE_RANGE",
            "since 2025-11-02 is after until 2025-11-01",
        ),
        (
            {"since": "2025-11"},
            "INVALID_DATE_RANGE",
            "since must be a day, YYYY-MM-DD; got '2025-11'",
        ),
        (
            {"until": "someday"},
            "INVALID_DATE_RANGE",
            "until must be a day, YYYY-MM-DD; got 'someday'",
        ),
        ({"query": "  "}, "INVALID_QUERY", None),
    ],
)
def test_bad_arguments_are_refused_with_what_is_wrong(
    ctx: QueryContext, kwargs: dict[str, Any], code: str, message: str | None
) -> None:
    with pytest.raises(TroveError) as caught:
        search(ctx, **({"query": "beam"} | kwargs))
    assert caught.value.code == code
    if message is not None:
        assert caught.value.message.startswith(message)


def test_fifty_hits_and_one_day_are_allowed(ctx: QueryContext) -> None:
    answer = search(ctx, "report", since="2025-11-18", until="2025-11-18", max_results=50)
    assert answer.hits
    assert all(h.date and h.date[:10] in ("2025-11-18", "2025-11") for h in answer.hits)


def test_a_date_range_leaves_out_commands_and_undated_hits_and_counts_what_it_shows(
    ctx: QueryContext,
) -> None:
    answer = search(ctx, "timeout", since="2025-11-01", until="2025-11-30", max_results=50)
    assert "commands" not in answer.by_collection
    assert answer.hits
    for hit in answer.hits:
        assert hit.date is not None
        assert hit.date[:7] == "2025-11", hit  # a day in the range, or the month folder
    shown = {name: sum(h.collection == name for h in answer.hits) for name in answer.by_collection}
    assert answer.by_collection["reports"] == shown["reports"]
    assert answer.by_collection["conversations"] == shown["conversations"]
    assert (
        answer.by_collection["elog"]
        == search_elog(ctx, "timeout", since="2025-11-01", until="2025-11-30").total
    )


def test_an_open_ended_range_keeps_what_is_after_since_or_before_until(ctx: QueryContext) -> None:
    after = search(ctx, "beam", since="2025-11-15", max_results=50)
    assert after.hits
    assert all(h.date and (h.date[:10] >= "2025-11-15" or h.date == "2025-11") for h in after.hits)
    assert "commands" not in after.by_collection
    before = search(ctx, "beam", until="2017-12-31", max_results=50)
    assert before.hits and all(h.date and h.date[:10] <= "2017-12-31" for h in before.hits)


def test_blank_dates_are_no_dates(ctx: QueryContext) -> None:
    answer = search(ctx, "token", since=" ", until="")
    assert "commands" in answer.by_collection


def test_a_collection_that_fails_is_named_in_the_note_and_the_others_answer(
    ctx: QueryContext,
) -> None:
    answer = search(ctx, "beam.*(")  # a regex for the logbook, and an invalid one
    assert answer.note is not None
    assert answer.note.startswith("elog: query 'beam.*(' reads as a regular expression")
    assert "elog" not in answer.by_collection
    assert answer.freshness is not None


def test_a_bad_query_for_the_only_collection_asked_is_an_error(ctx: QueryContext) -> None:
    with pytest.raises(TroveError) as caught:
        search(ctx, "beam.*(", collections=["elog"])
    assert caught.value.code == "INVALID_QUERY"


def test_a_collection_read_in_small_pages_gives_the_same_hits(
    ctx: QueryContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_all, "PAGE_SIZES", dict.fromkeys(search_all.COLLECTIONS, 3))
    answer = search(ctx, "token", max_results=50)
    assert [h.model_dump() for h in answer.hits] == _expected(
        ctx, "token", list(search_all.COLLECTIONS)
    )


def test_the_logbook_is_searched_in_the_dates_and_counts_every_entry_in_them(
    ctx: QueryContext,
) -> None:
    since, until = "2025-01-01", "2025-06-30"
    answer = search(ctx, "beam", since=since, until=until, max_results=1)
    total = search_elog(ctx, "beam", since=since, until=until).total
    assert total > 2  # more than the two hits the page reads
    assert answer.by_collection["elog"] == total
    assert total < search_elog(ctx, "beam", since=since).total
    assert total < search_elog(ctx, "beam", until=until).total


def test_with_dates_a_collection_counts_the_hits_in_them_it_read(ctx: QueryContext) -> None:
    answer = search(ctx, "beam", since="2025-11-01", max_results=50)
    every = search_reports(ctx, "beam", max_results=100).results
    after = [r for r in every if r.date and r.date[:10] >= "2025-11-01"]
    assert 0 < len(after) < len(every)
    assert answer.by_collection["reports"] == len(after)


def test_a_time_after_the_day_is_read_as_the_day(ctx: QueryContext) -> None:
    at_ten = search(ctx, "beam", since="2025-11-15T10:00", max_results=50)
    assert at_ten.hits == search(ctx, "beam", since="2025-11-15", max_results=50).hits


def test_the_collections_after_one_that_fails_are_still_searched(ctx: QueryContext) -> None:
    answer = search(ctx, "beam.*(", collections=["elog", "reports"])
    assert list(answer.by_collection) == ["reports"]
    assert answer.note is not None and answer.note.startswith("elog: ")


def test_every_collection_that_fails_is_named_in_the_note(tmp_path: Path) -> None:
    shutil.copytree(DATA / "reports", tmp_path / "reports")
    settings = settings_from_dict(
        {
            "sources": {
                "reports": str(tmp_path / "reports"),
                "commands": str(tmp_path / "no-commands"),
                "conversations": str(tmp_path / "no-conversations"),
                "elog": str(tmp_path / "no-elog"),
            },
            "index": {"dir": str(tmp_path / "index")},
        },
        base=tmp_path,
    )
    context = QueryContext.from_settings(settings)
    try:
        answer = search(context, "beam")
    finally:
        context.close()
    assert list(answer.by_collection) == ["reports"]
    assert answer.note is not None
    said = answer.note.split("; ")
    assert [
        part.split(":")[0] for part in said if part.split(":")[0] in search_all.COLLECTIONS
    ] == [
        "commands",
        "conversations",
        "elog",
    ]


def test_hits_whose_files_changed_since_the_index_read_them_are_stale(tmp_path: Path) -> None:
    context = indexed_sample(tmp_path)
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            st = path.stat()
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    try:
        answer = search(context, "token", max_results=50)
    finally:
        context.close()
    assert {h.collection for h in answer.hits} == set(search_all.COLLECTIONS)
    assert all(h.stale for h in answer.hits)


def _big_hits(tmp_path: Path) -> QueryContext:
    """A logbook of 60 entries whose links are 4,000 characters long."""
    write_thread(tmp_path / "elog", replies=59, body="a needle in the logbook")
    settings = settings_from_dict(
        {
            "sources": {"elog": str(tmp_path / "elog" / "SwissFEL")},
            "index": {"dir": str(tmp_path / "index")},
            "elog": {"rerank": "lexical", "link_base_url": "https://elog/" + "x" * 4_000 + "/"},
        },
        base=tmp_path,
    )
    return QueryContext.from_settings(settings)


def test_a_default_page_too_big_for_the_default_budget_is_cut(tmp_path: Path) -> None:
    context = _big_hits(tmp_path)
    try:
        answer = search(context, "needle", collections=["elog"], offset=20)
        bigger = search(context, "needle", collections=["elog"], max_results=11)
    finally:
        context.close()
    assert budget.size(answer) <= budget.DEFAULT_CHARS
    kept = len(answer.hits)
    assert 1 < kept < 10 and answer.next_offset == 20 + kept
    assert answer.note is not None and f"offset={20 + kept}" in answer.note
    # Any other page size has the larger budget.
    assert len(bigger.hits) == 11 and bigger.note is None
    assert budget.DEFAULT_CHARS < budget.size(bigger) <= budget.MAX_CHARS


# --------------------------------------------------------------------------- the pieces


def _fake(count: int, size: int, dated: bool = True) -> tuple[list[tuple[int, int]], Any]:
    """A collection of ``count`` hits served ``size`` at a time, and the pages asked."""
    asked: list[tuple[int, int]] = []
    fresh = Freshness(as_of=None, watcher=None, pending=0, catching_up=False)

    def page_of(n: int, at: int) -> search_all._Page:
        asked.append((n, at))
        found = [
            Hit(
                collection="reports",
                id=str(i),
                title="t",
                date=f"2025-01-{1 + i % 2:02d}" if dated else None,
                snippet="",
                link=None,
                score=0.0,
                match="exact",
            )
            for i in range(at, min(at + n, count))
        ]
        more = at + n if at + n < count else None
        return search_all._Page(found, count, fresh, more, None)

    return asked, page_of


def test_a_collection_is_read_page_after_page_until_it_holds_the_hits_wanted() -> None:
    asked, page_of = _fake(250, 100)
    hits, total, *_ = search_all._first(page_of, 100, 230, lambda h: True)
    assert [h.id for h in hits] == [str(i) for i in range(230)]
    assert total == 250
    assert asked == [(100, 0), (100, 100), (100, 200)]


def test_a_collection_that_ends_first_gives_what_it_has() -> None:
    asked, page_of = _fake(120, 100)
    hits, *_ = search_all._first(page_of, 100, 500, lambda h: True)
    assert len(hits) == 120 and asked == [(100, 0), (100, 100)]


def test_a_collection_is_read_until_enough_hits_fall_in_the_dates() -> None:
    asked, page_of = _fake(400, 100)
    day = date(2025, 1, 2)  # every other hit
    hits, *_ = search_all._first(page_of, 100, 120, lambda h: search_all._within(h.date, day, day))
    assert [h.id for h in hits] == [str(i) for i in range(1, 240, 2)]
    # Once a hit was left out, each page is twice the last (up to the largest), from
    # where the last one ended.
    assert asked == [(100, 0), (100, 100), (100, 200)]


def test_a_collection_is_never_read_past_the_first_1000_hits() -> None:
    asked, page_of = _fake(5000, 75)  # the last page the window allows holds 25
    day = date(2025, 1, 2)
    hits, *_ = search_all._first(page_of, 75, 1000, lambda h: search_all._within(h.date, day, day))
    assert len(hits) == 500
    assert sum(n for n, _ in asked) == 1000
    assert all(at + n <= 1000 for n, at in asked)


def test_the_dates_of_a_hit_are_within_a_range_by_day_or_by_month_folder() -> None:
    within = search_all._within
    d = date.fromisoformat
    assert within(None, None, None) and within("x", None, None)
    assert not within(None, d("2025-01-01"), None) and not within("", None, d("2025-01-01"))
    assert within("2025-01-05T00:00:00.000Z", d("2025-01-05"), d("2025-01-05"))
    assert not within("2025-01-04", d("2025-01-05"), None)
    assert not within("2025-01-06", None, d("2025-01-05"))
    # A month folder meets a span that overlaps any of its days.
    assert within("2025-01", d("2025-01-31"), d("2025-03-01"))
    assert not within("2025-01", d("2025-02-01"), None)
    assert within("2025-01", None, d("2025-01-01"))
    assert not within("2025-02", None, d("2025-01-31"))
    assert within("2025-12", d("2025-12-31"), None)
    assert not within("2025-12", d("2026-01-01"), None)
    assert within("2025-11-31", d("2025-11-30"), d("2025-11-30"))  # no such day: its month


def test_elog_hits_without_a_match_say_how_the_search_matched() -> None:
    entry = ElogHit(
        id="7",
        elog_id=7,
        title="Beam",
        date="2025-01-01T10:00:00+01:00",
        author="a",
        category="",
        system="",
        domain="",
        section="",
        snippet="s",
        score=1.5,
        link="https://elog/7",
    )
    (hit,) = search_all.elog_hits([entry])
    assert (hit.match, hit.score, hit.link, hit.stale) == ("words", 1.5, "https://elog/7", False)
    (regex,) = search_all.elog_hits([entry], "regex")
    assert regex.match == "regex"
    (matched,) = search_all.elog_hits([entry.model_copy(update={"match": "fuzzy", "stale": True})])
    assert (matched.match, matched.stale) == ("fuzzy", True)


# --------------------------------------------------------------------------- the scope


def _scope(
    query: str,
    collections: list[str] | None = None,
    since: str | None = None,
    until: str | None = None,
) -> search_all.Scope:
    return search_all.Scope.of(syntax.parse(query, require_words=False), collections, since, until)


def _refused(query: str, **kwargs: Any) -> tuple[str, str]:
    with pytest.raises(TroveError) as caught:
        _scope(query, **kwargs)
    return caught.value.code, caught.value.message


def test_the_scope_is_every_collection_once_in_the_order_asked() -> None:
    assert _scope("proxy") == search_all.Scope(
        list(search_all.COLLECTIONS), None, None, None, dict.fromkeys(ELOG_FILTERS)
    )
    assert _scope("proxy", ["elog", "reports", "elog"]).names == ["elog", "reports"]
    assert _refused("proxy", collections=["reports", "web", "x"]) == (
        "INVALID_ARGUMENT",
        "unknown collection 'web', 'x'; the collections are reports, commands, conversations, elog",
    )


def test_in_keeps_the_collections_it_names_of_those_asked() -> None:
    assert _scope("proxy in:elog,reports").names == ["reports", "elog"]
    assert _scope("proxy in:elog,reports", ["elog", "commands"]).names == ["elog"]


def test_the_days_are_the_narrowest_of_the_arguments_and_the_query() -> None:
    scope = _scope(
        "proxy since:2025-02-01 until:2025-11-30", since="2025-01-01", until="2025-10-31"
    )
    assert (scope.low, scope.high) == (date(2025, 2, 1), date(2025, 10, 31))
    assert scope.names == ["reports", "conversations", "elog"]  # commands have no date
    scope = _scope("proxy since:2025-03-01", since="2025-04-01T10:00", until="2026-01-01")
    assert (scope.low, scope.high) == (date(2025, 4, 1), date(2026, 1, 1))
    assert _refused("proxy until:2025-03-01", since="2025-04-01") == (
        "INVALID_DATE_RANGE",
        "since 2025-04-01 is after until 2025-03-01",
    )


def test_command_keeps_the_reports_and_commands_and_names_the_command() -> None:
    scope = _scope("proxy command:net-triage")
    assert (scope.names, scope.command) == (["reports", "commands"], "net-triage")
    assert _scope("proxy command:net-triage since:2025-01-01").names == ["reports"]


def test_an_elog_filter_keeps_the_elog_and_holds_the_values() -> None:
    scope = _scope("beam category:Problem system:RF")
    assert scope.names == ["elog"]
    assert scope.elog == {"category": "Problem", "system": "RF", "domain": None}
    assert _scope("beam domain:Aramis").elog == {
        "category": None,
        "system": None,
        "domain": "Aramis",
    }


def test_command_and_an_elog_filter_together_are_refused() -> None:
    message = (
        "command: is for reports and category:, system: and domain: for the ELOG: use "
        "one or the other"
    )
    for query in ("proxy command:x category:y", "proxy command:x domain:y"):
        assert _refused(query) == ("INVALID_QUERY", message)


def test_filters_that_leave_no_collection_are_refused() -> None:
    message = (
        "the collections asked for and the query's filters admit no collection "
        "(command: admits reports and commands, category:, system: and domain: the "
        "ELOG, a date every collection but commands)"
    )
    assert _refused("proxy in:commands since:2025-01-01") == ("INVALID_QUERY", message)
    assert _refused("proxy category:x", collections=["reports"]) == ("INVALID_QUERY", message)
    assert _refused("proxy command:x in:elog") == ("INVALID_QUERY", message)


def test_only_the_elog_may_be_asked_without_words() -> None:
    assert _scope("in:elog since:2025-01-01").names == ["elog"]
    assert _scope("-zzz category:Problem").names == ["elog"]
    message = (
        'the query has nothing to search for: add a word or "a phrase" (without '
        "words only the ELOG lists its newest entries: in:elog)"
    )
    assert _refused("in:reports,elog") == ("INVALID_QUERY", message)
    assert _refused("-proxy") == ("INVALID_QUERY", message)


# --------------------------------------------------------------------------- fused answers


def test_without_words_the_newest_entries_of_the_logbook_are_listed_in_pages(
    ctx: QueryContext,
) -> None:
    # From the 6th, 50 and one more wanted: a page of the ELOG's 50, then one of 6.
    answer = search(ctx, "in:elog", max_results=50, offset=5)
    newest = search_elog(ctx, None, max_results=50, offset=5)
    assert [h.id for h in answer.hits] == [h.id for h in newest.hits]
    assert {h.match for h in answer.hits} == {"newest"}
    assert answer.next_offset == 55 and answer.by_collection == {"elog": newest.total}


@pytest.mark.parametrize(
    ("key", "value"), [("category", "Problem"), ("system", "RF"), ("domain", "Aramis")]
)
def test_an_elog_filter_of_the_query_is_the_logbooks_own(
    ctx: QueryContext, key: str, value: str
) -> None:
    answer = search(ctx, f"beam {key}:{value}", max_results=50)
    filters: dict[str, Any] = {key: value}
    own = search_elog(ctx, "beam", max_results=50, **filters)
    assert 0 < own.total < search_elog(ctx, "beam").total
    assert [h.id for h in answer.hits] == [h.id for h in own.hits]


def test_a_regex_hit_of_the_logbook_matched_by_its_words(ctx: QueryContext) -> None:
    answer = search(ctx, "RF.*fault in:elog")
    assert answer.hits and {h.match for h in answer.hits} == {"words"}


def test_what_is_admitted_hit_by_hit_is_counted_as_found_not_as_the_collection_says(
    ctx: QueryContext,
) -> None:
    # One hit asked: two wanted (the page and one more), and no more are read.
    assert search(ctx, "the", max_results=1).by_collection["conversations"] > 2
    for query in ("the OR token", "the -meeting", '"the" timeout', 'the -"a b"'):
        assert search(ctx, query, max_results=1).by_collection["conversations"] == 2, query
    assert search(ctx, "the in:commands", max_results=1).by_collection["commands"] > 2
    commands = search(ctx, "the command:proxy-slow-meeting-analysis-command", max_results=1)
    assert commands.by_collection["commands"] == 1


def test_the_note_says_how_the_query_was_read_then_what_failed(ctx: QueryContext) -> None:
    answer = search(ctx, "beam.*( -zzz")
    assert answer.note is not None
    assert answer.note.startswith(
        "read as: beam.*(, without zzz; elog: query 'beam.*(' reads as a regular expression"
    )


def test_when_nothing_is_found_each_collection_says_why_in_its_own_words(
    ctx: QueryContext,
) -> None:
    word = "zzqxvw"
    answer = search(ctx, word)
    assert answer.hits == []
    own = {
        "reports": search_reports(ctx, word).note,
        "conversations": search_workspace(ctx, word).note,
        "elog": search_elog(ctx, word).note,
    }
    assert all(own.values()), own
    assert answer.note == "; ".join(f"{name}: {note}" for name, note in own.items())


def test_the_collections_own_notes_are_left_out_when_something_was_found(
    ctx: QueryContext,
) -> None:
    answer = search(ctx, "in:reports,elog klystron")
    assert answer.hits and answer.by_collection["reports"] == 0
    assert search_reports(ctx, "klystron").note  # it says why it found none, alone
    assert answer.note == "read as: klystron, in reports and elog"
