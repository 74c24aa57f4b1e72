"""Property tests (Hypothesis) of the parsers users feed: report file-name dates, the
workspace's date_range, ELOG records and dates, search_elog's since/until, and the rule
that makes an ELOG query a regex; and the paging contract of every search (a page at any
offset is that slice of the whole ranking, and pages followed by next_offset join up).
The query language has its own in tests/test_syntax.py.

Each test draws at most a few hundred examples and has no deadline, so it takes the same
short time on a busy machine; a failure prints the smallest example Hypothesis found.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from indexed import indexed_sample

from indexer.config import settings_from_dict
from indexer.sources.conversations import date_folder
from indexer.sources.elog import SERVER_ZONE, parse_date, parse_logbook_file
from indexer.sources.reports import date_from_name
from query.commands import search_commands
from query.context import QueryContext
from query.elog import is_regex, required_literals, search_elog
from query.elog.dates import Bound, check_dates
from query.errors import TroveError
from query.reports import search_reports
from query.search_all import search
from query.workspace import check_date_range, search_workspace

# The conftest's autouse fixtures (HOME in tmp_path, no thread left) hold for the whole
# test: sharing them between examples is what they are for.
BOUNDED = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

days = st.dates(min_value=date(1000, 1, 1), max_value=date(9999, 12, 31))
# Text that holds no digit (so no date): what a date is embedded in.
no_digits = st.text(
    st.characters(codec="utf-8", exclude_categories=["Nd"]), max_size=20
)  # Nd: what \d matches


def compact(d: date) -> str:
    return f"{d.year:04d}{d.month:02d}{d.day:02d}"


FORMS = {
    "YYYYMMDD": compact,
    "YYYY-MM-DD": lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}",
    "YYYY_MM_DD": lambda d: f"{d.year:04d}_{d.month:02d}_{d.day:02d}",
}
forms = st.sampled_from(sorted(FORMS))


# --------------------------------------------------------------------------- report names


def reference_date(name: str) -> date | None:
    """date_from_name's rule, written out: left to right, the first place where a date in
    one of the three forms starts a digit run (a dashed or underscored one also ends
    its run) and is a real calendar date."""

    def digits(text: str) -> bool:
        return bool(text) and all(c.isdecimal() for c in text)

    for i in range(len(name)):
        if i and name[i - 1].isdecimal():
            continue
        found: tuple[str, str, str] | None = None
        if digits(name[i : i + 8]) and len(name[i : i + 8]) == 8:
            run = name[i : i + 8]
            found = (run[:4], run[4:6], run[6:])
        else:
            part = name[i : i + 10]
            if (
                len(part) == 10
                and part[4] == part[7]
                and part[4] in "-_"
                and digits(part[:4] + part[5:7] + part[8:])
                and not name[i + 10 : i + 11].isdecimal()
            ):
                found = (part[:4], part[5:7], part[8:])
        if found is not None:
            try:
                return date(*map(int, found))
            except ValueError:
                continue
    return None


# Names made mostly of digits and separators, where dates and near-dates abound.
name_chars = st.sampled_from(list("0123456789" * 3 + "-_-_.x ") + ["٢", "０"])
report_names = st.text(name_chars, max_size=40) | st.text(max_size=40)


@BOUNDED
@given(report_names)
@example("20251120")
@example("120251120")  # 8 digits, but not at the start of their run
@example("2025-11-20-1")
@example("2025-11-200")
@example("20251399_2025-11-20")
def test_a_report_name_is_dated_by_its_first_valid_date_left_to_right(name: str) -> None:
    assert date_from_name(name) == reference_date(name)


@BOUNDED
@given(no_digits, days, forms, no_digits)
def test_a_valid_date_in_any_form_is_found_inside_any_text(
    before: str, day: date, form: str, after: str
) -> None:
    assert date_from_name(before + FORMS[form](day) + after) == day


@BOUNDED
@given(no_digits, days, forms, no_digits, days, forms, no_digits)
def test_of_two_dates_in_a_name_the_first_one_counts(
    a: str, first: date, form1: str, b: str, second: date, form2: str, c: str
) -> None:
    assume(b)  # something between them, else the two digit runs are one
    assert date_from_name(a + FORMS[form1](first) + b + FORMS[form2](second) + c) == first


impossible = st.one_of(
    st.tuples(st.integers(1000, 9999), st.integers(13, 99), st.integers(1, 28)),
    st.tuples(st.integers(1000, 9999), st.just(0), st.integers(1, 28)),
    st.tuples(st.integers(1000, 9999), st.integers(1, 12), st.integers(32, 99)),
    st.tuples(st.integers(1000, 9999), st.integers(1, 12), st.just(0)),
    st.tuples(st.integers(1000, 9999), st.sampled_from([4, 6, 9, 11]), st.just(31)),
    st.tuples(st.integers(1000, 9999), st.just(2), st.integers(30, 31)),
    st.tuples(
        st.integers(1, 2100).filter(lambda y: y % 4 or y % 400 and not y % 100),
        st.just(2),
        st.just(29),
    ),
    st.tuples(st.just(0), st.integers(1, 12), st.integers(1, 28)),
)


@BOUNDED
@given(no_digits, impossible, st.sampled_from(["", "-", "_"]), no_digits)
def test_an_impossible_date_never_dates_a_report(
    before: str, ymd: tuple[int, int, int], sep: str, after: str
) -> None:
    y, m, d = ymd
    assert date_from_name(f"{before}{y:04d}{sep}{m:02d}{sep}{d:02d}{after}") is None


@BOUNDED
@given(st.text(string.digits, min_size=1, max_size=3), days, no_digits)
def test_a_yyyymmdd_inside_a_longer_run_of_digits_is_not_that_date(
    lead: str, day: date, after: str
) -> None:
    name = lead + compact(day) + after
    # Only the run's own first eight digits can be a date.
    run = name[:8]
    try:
        own: date | None = date(int(run[:4]), int(run[4:6]), int(run[6:8]))
    except ValueError:
        own = None
    assert date_from_name(name) == own


# --------------------------------------------------------------------------- date_range


def valid_date_range(value: str) -> bool:
    """The rule of README.md's search_workspace: YYYY-MM or YYYY-MM-DD, ASCII digits, a
    real month or day (blanks around are ignored)."""
    m = re.fullmatch(r"([0-9]{4})-([0-9]{2})(?:-([0-9]{2}))?", value.strip())
    if not m:
        return False
    try:
        date(int(m[1]), int(m[2]), int(m[3] or 1))
    except ValueError:
        return False
    return True


date_range_chars = st.sampled_from(list("0123456789" * 2 + "-- /.T") + ["١", "２", "\t"])


@BOUNDED
@given(st.text(date_range_chars, min_size=1, max_size=12) | st.text(min_size=1, max_size=12))
@example("2025-1")
@example("2025-1-05")
@example("2025-11-5")
@example("0000-01")
@example("2025-02-29")
@example("２０２５-11")
def test_a_date_range_is_a_month_or_a_day_and_anything_else_is_invalid_date_range(
    value: str,
) -> None:
    assume(value.strip())  # blank: no filter
    if valid_date_range(value):
        checked = check_date_range(value)
        assert checked is not None and checked.value == value.strip()
        assert checked.is_month == (len(value.strip()) == 7)
    else:
        with pytest.raises(TroveError) as err:
            check_date_range(value)
        assert err.value.code == "INVALID_DATE_RANGE"


@BOUNDED
@given(st.one_of(st.integers(), st.floats(), st.lists(st.text(max_size=3)), st.booleans()))
def test_a_date_range_that_is_not_text_is_invalid_date_range(value: object) -> None:
    with pytest.raises(TroveError) as err:
        check_date_range(value)  # type: ignore[arg-type]
    assert err.value.code == "INVALID_DATE_RANGE"
    assert "must be a string" in err.value.message and "YYYY-MM-DD" in err.value.message


@BOUNDED
@given(days, st.booleans(), days, st.booleans())
def test_a_date_range_covers_exactly_its_day_or_the_folders_of_its_month(
    asked: date, by_month: bool, folder_day: date, month_folder: bool
) -> None:
    value = asked.isoformat()[:7] if by_month else asked.isoformat()
    folder = folder_day.isoformat()[:7] if month_folder else folder_day.isoformat()
    assert date_folder(folder) == ("month" if month_folder else "day")
    checked = check_date_range(value)
    assert checked is not None
    # What the indexer gives a conversation of that folder (conversations.py).
    fields = {("date", folder), ("month", folder[:7])}
    covered = checked.field() in fields
    if by_month:
        assert covered == (folder[:7] == value)
    else:
        assert covered == (folder == value)


# --------------------------------------------------------------------------- ELOG records

SEP = "=" * 40
# A header value: one line. The parser strips blanks at either end.
header_values = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=30)
bodies = st.text(st.characters(codec="utf-8"), max_size=200).filter(
    lambda b: not b.endswith("\r") and not re.search(r"^\$@MID@\$:", b, re.MULTILINE)
)
moments = st.datetimes(
    min_value=datetime(1971, 1, 1),
    max_value=datetime(2099, 12, 31),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=2)), timezone(-timedelta(hours=5))]),
).map(lambda d: d.replace(microsecond=0))


@st.composite
def records(draw: st.DrawFn) -> dict[str, object]:
    return {
        "id": draw(st.integers(1, 10**7)),
        "date": draw(moments),
        "reply_to": draw(st.lists(st.integers(1, 10**7), max_size=3)),
        "in_reply_to": draw(st.none() | st.integers(1, 10**7)),
        "title": draw(header_values),
        "author": draw(header_values),
        "category": draw(header_values),
        "system": draw(header_values),
        "domain": draw(header_values),
        "section": draw(header_values),
        "attachments": draw(
            st.lists(header_values.filter(lambda a: a.strip() and "," not in a), max_size=3)
        ),
        "encoding": draw(st.sampled_from(["plain", "HTML", "ELCode"])),
        "body": draw(bodies),
    }


def written(r: dict[str, object]) -> str:
    """A record as elogd writes it."""
    when = r["date"]
    assert isinstance(when, datetime)
    lines = [f"$@MID@$: {r['id']}", f"Date: {when.strftime('%a, %d %b %Y %H:%M:%S %z')}"]
    if r["in_reply_to"] is not None:
        lines.append(f"In reply to: {r['in_reply_to']}")
    if r["reply_to"]:
        lines.append("Reply to: " + ", ".join(map(str, r["reply_to"])))  # type: ignore[call-overload]
    for key in ("Author", "Category", "System", "Domain", "Section", "Title"):
        lines.append(f"{key}: {r[key.lower()]}")
    lines.append("Attachment: " + ",".join(r["attachments"]))  # type: ignore[arg-type]
    lines.append(f"Encoding: {r['encoding']}")
    return "\n".join([*lines, SEP, f"{r['body']}\n"])


@BOUNDED
@given(st.lists(records(), min_size=1, max_size=4))
def test_records_written_as_elogd_does_read_back_as_written(rs: list[dict[str, object]]) -> None:
    warnings: list[str] = []
    entries = parse_logbook_file("".join(map(written, rs)).encode(), warnings)
    assert warnings == []
    assert len(entries) == len(rs)
    for r, e in zip(rs, entries, strict=True):
        assert (e.id, e.date, e.reply_to, e.in_reply_to) == (
            r["id"],
            r["date"],
            r["reply_to"],
            r["in_reply_to"],
        )
        assert e.date is not None and e.date.utcoffset() == r["date"].utcoffset()  # type: ignore[attr-defined]
        got = (e.title, e.author, e.category, e.system, e.domain, e.section)
        keys = ("title", "author", "category", "system", "domain", "section")
        assert got == tuple(str(r[k]).strip() for k in keys)
        attachments = [str(a).strip() for a in r["attachments"]]  # type: ignore[attr-defined]
        assert (e.attachments, e.encoding, e.body) == (attachments, r["encoding"], r["body"])


@BOUNDED
@given(st.binary(max_size=300) | st.binary(max_size=300).map(lambda b: b"$@MID@$: 7\n" + b))
@example(b"$@MID@$: 1\n")
@example(b"$@MID@$: 99999999999999999999999\nDate: x\n" + b"=" * 40 + b"\n\xff\xfe")
def test_arbitrary_bytes_never_raise_out_of_the_logbook_parser(data: bytes) -> None:
    for entry in parse_logbook_file(data, []):
        assert entry.id > 0


@BOUNDED
@given(st.text(max_size=40))
@example("Thu Nov 20 08:01:00 2025")
@example("Mon, 06 Oct 2025 08:00:00 +9999")
def test_any_date_header_is_read_or_none_never_an_error(value: str) -> None:
    when = parse_date(value)
    assert when is None or when.tzinfo is not None


@BOUNDED
@given(st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2099, 12, 31)))
def test_a_ctime_date_reads_as_that_wall_time_in_the_servers_zone(moment: datetime) -> None:
    moment = moment.replace(microsecond=0)
    when = parse_date(moment.strftime("%a %b %d %H:%M:%S %Y"))
    assert when == moment.replace(tzinfo=SERVER_ZONE)
    assert when is not None and when.tzinfo is SERVER_ZONE


# --------------------------------------------------------------------------- since/until


def as_day(bound: object) -> date:
    day = bound.day  # type: ignore[attr-defined]
    return date(day // 10000, day // 100 % 100, day % 100)


@BOUNDED
@given(days, st.integers(-2, 2) | st.integers(-(10**5), 10**5))
def test_days_since_and_until_are_a_range_only_in_order(since: date, days_later: int) -> None:
    try:
        until = since + timedelta(days=days_later)
    except OverflowError:
        until = date.max
    if since <= until:
        low, high = check_dates(since.isoformat(), until.isoformat())
        assert (as_day(low), as_day(high)) == (since, until)
    else:
        with pytest.raises(TroveError) as err:
            check_dates(since.isoformat(), until.isoformat())
        assert err.value.code == "INVALID_DATE_RANGE"


@BOUNDED
@given(days)
def test_a_month_runs_from_its_first_day_since_to_its_last_until(day: date) -> None:
    month = day.isoformat()[:7]
    low, high = check_dates(month, month)
    first = day.replace(day=1)
    last = (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    assert (as_day(low), as_day(high)) == (first, last)


@BOUNDED
@given(moments, moments)
def test_instants_are_a_range_only_in_order(since: datetime, until: datetime) -> None:
    if since <= until:
        low, high = check_dates(since.isoformat(), until.isoformat())
        assert low is not None and low.moment == since
        assert high is not None and high.moment == until
    else:
        with pytest.raises(TroveError):
            check_dates(since.isoformat(), until.isoformat())


@BOUNDED
@given(
    st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2099, 12, 31)),
    st.integers(-2, 2),
)
def test_until_a_day_includes_its_whole_day(since: datetime, days_later: int) -> None:
    until = since.date() + timedelta(days=days_later)
    inside = since < datetime.combine(until + timedelta(days=1), datetime.min.time())
    if inside:
        check_dates(since.isoformat(), until.isoformat())
    else:
        with pytest.raises(TroveError):
            check_dates(since.isoformat(), until.isoformat())


@BOUNDED
@given(moments, st.booleans(), st.integers(-90, 90), st.booleans())
def test_times_without_an_offset_are_a_range_only_in_wall_clock_order(
    since: datetime, since_aware: bool, minutes_later: int, until_aware: bool
) -> None:
    # At least one of the two is read in each entry's own offset: their wall clocks
    # are compared (equal ones are a range).
    assume(not (since_aware and until_aware))
    until = since + timedelta(minutes=minutes_later)
    given_since = since if since_aware else since.replace(tzinfo=None)
    given_until = until if until_aware else until.replace(tzinfo=None)
    if minutes_later >= 0:
        check_dates(given_since.isoformat(), given_until.isoformat())
    else:
        with pytest.raises(TroveError):
            check_dates(given_since.isoformat(), given_until.isoformat())


@BOUNDED
@given(days, days, moments, moments)
def test_dates_and_datetimes_given_as_objects_read_as_their_iso_text(
    day1: date, day2: date, moment1: datetime, moment2: datetime
) -> None:
    low, high = sorted([day1, day2])
    assert check_dates(low, high) == check_dates(low.isoformat(), high.isoformat())
    start, end = sorted([moment1, moment2])
    assert check_dates(start, end) == check_dates(start.isoformat(), end.isoformat())
    assert check_dates(start, None)[0] == Bound(int(f"{start:%Y%m%d}"), start)


@BOUNDED
@given(st.one_of(st.integers(), st.floats(), st.lists(st.integers(), max_size=2)))
def test_a_since_that_is_not_text_or_a_date_is_invalid_date_range(value: object) -> None:
    with pytest.raises(TroveError) as err:
        check_dates(value, None)  # type: ignore[arg-type]
    assert err.value.code == "INVALID_DATE_RANGE"
    assert err.value.message == f"since must be a date string, got {value!r}"


def test_a_bad_date_says_which_forms_are_read() -> None:
    with pytest.raises(TroveError) as err:
        check_dates(None, "2025-10-32")
    assert err.value.message.startswith("until '2025-10-32' is not a valid date (")
    assert err.value.message.endswith(
        "): use YYYY-MM-DD or ISO 8601 such as 2025-10-06T08:00:00+02:00"
    )


date_chars = st.sampled_from(list("0123456789" * 2 + "-:T+Z. ") + ["W", "٣"])


@BOUNDED
@given(st.text(date_chars, max_size=30) | st.text(max_size=30), st.text(date_chars, max_size=30))
@example("2025-13", None)
@example("0000-01", None)
@example("2025-02-29", None)
@example("9999-12-31T23:59:59-23:59", "9999-12-31")
def test_any_since_or_until_reads_or_is_invalid_date_range(since: str, until: str | None) -> None:
    try:
        check_dates(since, until)
        check_dates(until, since)
    except TroveError as err:
        assert err.code == "INVALID_DATE_RANGE"


# --------------------------------------------------------------------------- the regex rule

REGEX_SIGNS = [".*", ".+", ".?", "|", "[ab]", r"\d", r"\w", r"\s", r"\b", "x{3}", "x{2,}", "){0,3}"]
# Text holding none of the characters a regex sign needs.
plain = st.text(st.characters(codec="utf-8", exclude_characters=".|[\\{^$"))


@BOUNDED
@given(plain, st.sampled_from(REGEX_SIGNS), plain)
def test_a_query_holding_a_regex_sign_is_a_regex(before: str, sign: str, after: str) -> None:
    assert is_regex(before + sign + after)


@BOUNDED
@given(plain)
@example("set {3}")
@example("5.8 GeV")
@example("a{b}")
def test_a_query_without_a_regex_sign_is_text(query: str) -> None:
    assert not is_regex(query)
    assert is_regex(f"^{query}") and is_regex(f"{query}$")


@BOUNDED
@given(st.text(max_size=60))
def test_any_text_is_read_as_a_regex_or_not_without_error(query: str) -> None:
    is_regex(query)
    required_literals(query)


@pytest.fixture(scope="module")
def logbook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueryContext]:
    """A logbook of a few entries, indexed once for the module."""
    tmp = tmp_path_factory.mktemp("properties")
    book = tmp / "book" / "2025" / "251006a.log"
    book.parent.mkdir(parents=True)
    text = "".join(
        written(
            {
                "id": i,
                "date": datetime(2025, 10, 6, 8, i, tzinfo=UTC),
                "reply_to": [],
                "in_reply_to": None,
                "title": title,
                "author": "T. Test",
                "category": "Info",
                "system": "RF",
                "domain": "Aramis",
                "section": "",
                "attachments": [],
                "encoding": "plain",
                "body": body,
            }
        )
        for i, (title, body) in enumerate(
            [
                ("klystron arc", "The klystron K1 arced at 5.8 GeV."),
                ("beam energy", "Beam energy raised; S10CB03 tuned. [ab] {3} | x"),
                ("Überbrückung", "Thyratron replaced; 代理超时 again\nline two"),
            ],
            1,
        )
    )
    book.write_text(text, encoding="utf-8")
    raw = {
        "sources": {"elog": str(tmp / "book")},
        "index": {"dir": str(tmp / "index")},
        "elog": {"rerank": "lexical"},
    }
    ctx = QueryContext.from_settings(settings_from_dict(raw, base=tmp))
    yield ctx
    ctx.close()


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(query=st.text(max_size=40))
@example(query="(a|aa)+$")
@example(query="[")
@example(query="\\")
def test_any_query_is_answered_or_refused_with_a_trove_error(
    logbook: QueryContext, query: str
) -> None:
    try:
        answer = search_elog(logbook, query, rerank="off")
    except TroveError as err:
        assert err.code in {"INVALID_QUERY", "SEARCH_TIMEOUT"}, err
    else:
        assert answer.total >= len(answer.hits)
        assert answer.ranker is not None


# --------------------------------------------------------------------------- pages of hits


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueryContext]:
    """The sample data in data/, indexed once for the module."""
    ctx = indexed_sample(tmp_path_factory.mktemp("paging"))
    yield ctx
    ctx.close()


# Every example asks two or more searches of the sample: fewer examples than the parsers'.
PAGES = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
# Each search with the most hits one call answers, and queries that reach its tiers and
# operators: exact words, a fragment, a question, a typo, a regex, no query at all, the
# query language.
SEARCHES: dict[str, tuple[Callable[..., Any], str, int, list[Any]]] = {
    "reports": (search_reports, "results", 100, ["proxy", "e", "why do meetings fail", "tokn"]),
    "conversations": (search_workspace, "results", 100, ["the", "token expiry", "tokn"]),
    "commands": (search_commands, "results", 100, ["proxy", "log analysis"]),
    "elog": (search_elog, "hits", 50, ["beam", "RF.*fault", None, "beem"]),
    "everything": (
        search,
        "hits",
        50,
        [
            "proxy",
            "the",
            '"token expiry" -meeting',
            "proxy OR beam",
            "in:reports since:2025-01-01 e",
        ],
    ),
}


@PAGES
@given(
    st.sampled_from(sorted(SEARCHES)).flatmap(
        lambda kind: st.tuples(st.just(kind), st.sampled_from(SEARCHES[kind][3]))
    ),
    st.integers(1, 12),
    st.integers(0, 60),
)
def test_a_page_at_any_offset_is_that_slice_of_the_whole_ranking_and_says_where_the_next_starts(
    sample: QueryContext, asked: tuple[str, Any], n: int, offset: int
) -> None:
    kind, query = asked
    call, hits, most, _ = SEARCHES[kind]
    assume(offset + n <= most)
    whole = call(sample, query, max_results=most, offset=0)
    ranking = [h.model_dump() for h in getattr(whole, hits)]
    page = call(sample, query, max_results=n, offset=offset)
    assert [h.model_dump() for h in getattr(page, hits)] == ranking[offset : offset + n]
    more = len(ranking) > offset + n or (whole.next_offset is not None)
    assert page.next_offset == (offset + n if more else None)


@PAGES
@given(
    st.sampled_from(sorted(SEARCHES)).flatmap(
        lambda kind: st.tuples(st.just(kind), st.sampled_from(SEARCHES[kind][3]))
    ),
    st.integers(1, 9),
)
def test_following_next_offset_from_the_first_page_joins_up_to_the_whole_ranking(
    sample: QueryContext, asked: tuple[str, Any], n: int
) -> None:
    kind, query = asked
    call, hits, most, _ = SEARCHES[kind]
    whole = call(sample, query, max_results=most, offset=0)
    ranking = [h.model_dump() for h in getattr(whole, hits)]
    joined: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None and offset + n <= most:
        page = call(sample, query, max_results=n, offset=offset)
        joined += [h.model_dump() for h in getattr(page, hits)]
        offset = page.next_offset
    assert joined == ranking[: len(joined)]
    if offset is None:  # the last page: nothing left out, and no hit twice
        assert joined == ranking
