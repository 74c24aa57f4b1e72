"""search_reports, list_command_reports, get_report: against the spec, read as a plain scan."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from corpus import COMMANDS, make_corpus, mutate, queries
from typer.testing import CliRunner

# Whoosh's own postings writer, for indexes written before trove's packed blocks.
from whoosh.codec.whoosh3 import W3PostingsWriter  # noqa: TID251

import indexer.engine.lexicon as lexicon_module
import indexer.engine.scan.segment as scan_segment
import indexer.engine.whoosh.reading as whoosh_reading
import indexer.engine.whoosh.writing as whoosh_writing
from indexer.config import Settings
from indexer.engine.postings import token_hash
from indexer.engine.whoosh import codec
from indexer.engine.whoosh.codec import TroveCodec
from indexer.sources.base import is_hidden
from indexer.sources.reports import ReportsSource, date_from_name
from indexer.store import Syncer
from query.cli import app
from query.context import QueryContext
from query.count_plan import PLANS as PLANS_OF_A_QUERY
from query.errors import TroveError
from query.reports import (
    LOWER_CHANGES_LENGTH,
    ReportSegment,
    excerpt,
    first_match,
    get_report,
    iso_date,
    list_command_reports,
    query_words,
    search_reports,
    segments_of,
)

# --------------------------------------------------------------------------- the reference


@dataclass
class Expected:
    command_name: str
    report_name: str
    date: str | None
    count: int
    match: str
    excerpt: str
    path: str


_TEXTS: dict[tuple[str, int, int], str] = {}


def read_text(path: Path) -> str:
    """A report's text as the spec reads it (UTF-8, bad bytes replaced, no BOM); kept
    while the file's mtime and size stay the same, to keep the comparison quick."""
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _TEXTS:
        data = path.read_bytes()
        _TEXTS[key] = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    return _TEXTS[key]


def reference_search(
    root: Path, query: str, command_filter: str | None = None, max_results: int = 10
) -> list[Expected]:
    """The search_reports spec as a plain scan: read every report, count the lower-cased
    query in the lower-cased text; rank by count, then date (newest, undated last), then
    path. If no report holds the query, reports holding all its words."""
    lowered_query = query.strip().lower()
    reports = []
    for command in sorted(os.listdir(root)):
        folder = root / command
        if is_hidden(command) or not folder.is_dir():
            continue
        if command_filter is not None and command != command_filter:
            continue
        for name in sorted(os.listdir(folder)):
            path = folder / name
            if is_hidden(name) or not name.lower().endswith(".md") or not path.is_file():
                continue
            reports.append((command, name, path, read_text(path)))

    def scan(needles: list[str], match: str) -> list[Expected]:
        hits = []
        for command, name, path, text in reports:
            lowered = text.lower()
            counts = [lowered.count(s) for s in needles]
            if all(counts):
                start, length = first_match(lowered, needles)
                hits.append(
                    Expected(
                        command_name=command,
                        report_name=name,
                        date=iso_date(date_from_name(name)),
                        count=sum(counts),
                        match=match,
                        excerpt=excerpt(text, lowered, start, start + length),
                        path=str(path),
                    )
                )
        return hits

    hits = scan([lowered_query], "exact")
    words = query_words(lowered_query)
    if not hits and words and words != [lowered_query]:
        hits = scan(words, "words")

    def order(hit: Expected) -> tuple:
        day = date_from_name(hit.report_name)
        return (-hit.count, -day.toordinal() if day else 1, hit.path)

    hits.sort(key=order)
    return hits[:max_results]


def as_expected(
    ctx: QueryContext, query: str, command_filter: str | None = None, max_results: int = 10
) -> list[Expected]:
    """search_reports' exact and words tiers, as the reference computes them: the lower
    tiers answer only when those found nothing (tested on their own)."""
    answer = search_reports(ctx, query, command_filter, max_results)
    got = [
        Expected(h.command_name, h.report_name, h.date, h.count, h.match, h.excerpt, h.path)
        for h in answer.results
        if h.match in ("exact", "words")
    ]
    assert not got or len(got) == len(answer.results)  # a lower tier never mixes in
    return got


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def reports_ctx(make_settings: Callable[..., Settings]) -> Iterator[Callable[..., QueryContext]]:
    """A QueryContext over tmp_path/reports (write the files first)."""
    made: list[QueryContext] = []

    def make(engine: str = "whoosh", **sections: dict) -> QueryContext:
        ctx = QueryContext.from_settings(make_settings(**sections), engine=engine)
        made.append(ctx)
        return ctx

    yield make
    for ctx in made:
        ctx.close()


def reindex(ctx: QueryContext) -> None:
    Syncer(ctx.settings, ReportsSource()).reconcile()


ZOOM = "analyze_zoom_speech_sdk_log"
PROXY = "proxy-slow-meeting-analysis-command"
SAMPLE = {
    f"{ZOOM}/Zoom_Speech_SDK_日志分析报告_20251120_decode_response_v6.md": (
        "# Decode response\n\nWe analysed decode response timing. Token validation shows "
        "no failures.\nThere is no decode timeout here.\n"
    ),
    f"{ZOOM}/speech_sdk_analysis_20251201_172952_v1.md": (
        "Decode timeout, decode TIMEOUT and decode timeout again: three decode timeouts."
    ),
    f"{ZOOM}/notes.md": "decode timeout (undated)",
    f"{PROXY}/proxy_报告_2025-12-01_v1.md": (
        "Detected proxy timeout issue during meeting join. 日志分析 shows the WinHTTP call "
        "waiting for the PAC file. decode timeout once."
    ),
    f"{PROXY}/.hidden.md": "decode timeout decode timeout",
    f"{PROXY}/readme.txt": "decode timeout decode timeout",
}


@pytest.fixture
def sample(tmp_path: Path, write: Callable[[str, str | bytes], Path]) -> Path:
    for rel, text in SAMPLE.items():
        write(f"reports/{rel}", text)
    return tmp_path / "reports"


# --------------------------------------------------------------------------- behaviour


def test_results_are_ranked_by_count_then_newest_date_then_undated(sample, reports_ctx) -> None:
    answer = search_reports(reports_ctx(), "decode timeout")
    got = [(h.report_name, h.count, h.date, h.match) for h in answer.results]
    assert got == [
        ("speech_sdk_analysis_20251201_172952_v1.md", 4, "2025-12-01T00:00:00.000Z", "exact"),
        ("proxy_报告_2025-12-01_v1.md", 1, "2025-12-01T00:00:00.000Z", "exact"),
        (
            "Zoom_Speech_SDK_日志分析报告_20251120_decode_response_v6.md",
            1,
            "2025-11-20T00:00:00.000Z",
            "exact",
        ),
        ("notes.md", 1, None, "exact"),
    ]


def test_a_report_dated_on_any_day_ranks_before_the_undated(write, reports_ctx) -> None:
    # 1969-12-31 was day -1 once, which also meant undated.
    for name in ("a_undated.md", "r_19691231.md", "r_00010101.md", "r_19700101.md"):
        write(f"reports/c/{name}", "alpha")
    answer = search_reports(reports_ctx(), "alpha")
    assert [(h.report_name, h.date) for h in answer.results] == [
        ("r_19700101.md", "1970-01-01T00:00:00.000Z"),
        ("r_19691231.md", "1969-12-31T00:00:00.000Z"),
        ("r_00010101.md", "0001-01-01T00:00:00.000Z"),
        ("a_undated.md", None),
    ]


def test_a_hit_has_path_file_link_and_an_excerpt_around_the_first_match(
    sample, reports_ctx
) -> None:
    hit = search_reports(reports_ctx(), "WINHTTP").results[0]
    rel = "proxy-slow-meeting-analysis-command/proxy_报告_2025-12-01_v1.md"
    assert hit.path == str(sample / rel)
    assert hit.link == (sample / rel).as_uri()
    assert hit.command_name == "proxy-slow-meeting-analysis-command"
    assert "shows the WinHTTP call" in hit.excerpt
    assert not hit.excerpt.startswith("...")  # the match is near the start


def test_the_link_uses_the_configured_base_url(sample, reports_ctx) -> None:
    ctx = reports_ctx(reports={"link_base_url": "https://reports.example.com/"})
    hit = search_reports(ctx, "WinHTTP").results[0]
    assert hit.link == (
        "https://reports.example.com/proxy-slow-meeting-analysis-command/"
        "proxy_%E6%8A%A5%E5%91%8A_2025-12-01_v1.md"
    )


def test_the_excerpt_keeps_about_100_characters_each_side_with_ellipses(write, reports_ctx) -> None:
    text = "x" * 300 + " Needle\n\nin the haystack " + "y" * 300
    write("reports/c/r.md", text)
    hit = search_reports(reports_ctx(), "needle").results[0]
    assert hit.excerpt.startswith("...") and hit.excerpt.endswith("...")
    assert "Needle in the haystack" in hit.excerpt  # original case, white space collapsed
    assert 200 <= len(hit.excerpt) <= 220


def test_lower_changes_length_lists_every_character_whose_lower_case_is_longer() -> None:
    longer = [
        chr(c)
        for c in range(sys.maxunicode + 1)
        if not 0xD800 <= c <= 0xDFFF and len(chr(c).lower()) != 1
    ]
    assert longer == list(LOWER_CHANGES_LENGTH)


def test_the_excerpt_is_cut_from_the_original_text_when_lower_casing_changes_lengths() -> None:
    text = "İİİİ " * 30 + "Target here"
    lowered = text.lower()
    start = lowered.find("target")
    assert len(lowered) != len(text)
    assert "Target here" in excerpt(text, lowered, start, start + 6)


@pytest.mark.parametrize(
    ("text", "query", "count"),
    [
        ("aaaa", "aa", 2),  # str.count: no overlaps
        ("a a a a", "a a", 2),
        ("a a a", "a a", 1),
        ("abab abab", "bab", 2),
        ("ab ab ab", "b a", 2),
        ("İstanbul ISTANBUL", "i̇stanbul", 1),
        ("İstanbul", "stanbul", 1),
        ("ΟΔΟΣ ΟΔΟΣ.", "οδος", 2),
        ("日志分析报告日志分析", "日志分析", 2),
        ("日志分析报告日志分析", "析报", 1),
        ("a->b -> c->", "->", 3),
        ("wait... done...", "..", 2),
        ("foo_bar foo-bar FOO BAR", "foo", 3),
        ("x86_64, X86_64.", "86_6", 2),
        ("Proxy: proxy:proxy", "proxy:", 2),
        ("end.\n\nNext end.\nNext", ".\nnext", 1),
        ("tab\there tab  here", "tab\th", 1),
        ("🙂🙂🙂 ok", "🙂🙂", 1),
        ("中中中", "中中", 1),
        ("word中文 word 中文", "d中", 1),
        ("straße STRASSE", "strasse", 1),
    ],
)
def test_counts_are_those_of_str_count_on_lower_cased_text(
    write, reports_ctx, text, query, count
) -> None:
    write("reports/c/r.md", text)
    answer = search_reports(reports_ctx(), query)
    assert text.lower().count(query.lower()) == count  # the spec's own arithmetic
    assert [h.count for h in answer.results] == [count]
    assert answer.results[0].match == "exact"


@pytest.mark.parametrize("query_plan", PLANS_OF_A_QUERY)
def test_a_token_of_the_same_hash_following_is_no_phrase(write, reports_ctx, query_plan) -> None:
    """A posting's value keeps 16-bit hashes of the tokens that follow: "chtv" and
    "timeout" share one, and the text tells them apart."""
    assert token_hash("chtv") == token_hash("timeout")
    for i in range(30):  # "connect" in many reports: its postings are read
        write(f"reports/c/r{i:02d}.md", "connect chtv closed\n" * (1 + i % 3))
    write("reports/c/real.md", "connect timeout closed")
    ctx = reports_ctx()
    ctx.plan = query_plan
    answer = search_reports(ctx, "connect timeout")
    assert [(h.report_name, h.count, h.match) for h in answer.results] == [("real.md", 1, "exact")]


def test_a_segment_of_file_records_only_is_searched_as_holding_no_report(
    sample, reports_ctx, write
) -> None:
    """A commit whose files give no report (a file not UTF-8: a record of it, skipped)
    writes a segment without the text column, as a parallel build's last segments can
    be: every kind of search passes over it."""
    ctx = reports_ctx()
    reindex(ctx)
    before = {q: search_reports(ctx, q) for q in ("timeout", "proxi timout decode", "ti")}
    write("reports/analyze_zoom_speech_sdk_log/broken_20251202.md", b"\xff\xfe\x00 not text")
    reindex(ctx)
    with ctx.indexes.snapshot("reports") as snapshot:
        segments = [s for s, _ in snapshot.segments()]
        assert len(segments) == 2 and not segments[1].reader.has_column("text")
    for query, answer in before.items():
        assert search_reports(ctx, query).results == answer.results, query


def test_when_nothing_holds_the_whole_query_reports_with_all_its_words_answer(
    sample, reports_ctx
) -> None:
    answer = search_reports(reports_ctx(), "timeout, decode!")
    assert {h.match for h in answer.results} == {"words"}
    counts = {h.report_name: h.count for h in answer.results}
    # occurrences of "timeout" + occurrences of "decode"
    assert counts["speech_sdk_analysis_20251201_172952_v1.md"] == 4 + 4
    assert counts["proxy_报告_2025-12-01_v1.md"] == 2 + 1
    assert "Zoom_Speech_SDK_日志分析报告_20251120_decode_response_v6.md" in counts


def test_no_match_and_no_common_words_is_an_empty_answer_that_says_why(sample, reports_ctx) -> None:
    ctx = reports_ctx()
    answer = search_reports(ctx, "zzqx")
    assert answer.results == [] and answer.note is not None and "'zzqx'" in answer.note
    assert search_reports(ctx, "-->").results == []
    # One word no report holds no longer empties the answer: the related tier answers.
    answer = search_reports(ctx, "decode zzqx")
    assert answer.results and {h.match for h in answer.results} == {"related"}
    assert answer.note is not None


def test_command_filter_limits_the_search_to_one_command(sample, reports_ctx) -> None:
    answer = search_reports(reports_ctx(), "decode timeout", "proxy-slow-meeting-analysis-command")
    assert [h.report_name for h in answer.results] == ["proxy_报告_2025-12-01_v1.md"]


def test_hidden_files_and_other_extensions_are_not_reports(sample, reports_ctx) -> None:
    names = {
        h.report_name for h in search_reports(reports_ctx(), "decode", max_results=100).results
    }
    assert ".hidden.md" not in names and "readme.txt" not in names


def test_max_results_limits_the_answer(sample, reports_ctx) -> None:
    answer = search_reports(reports_ctx(), "decode", max_results=2)
    assert [h.count for h in answer.results] == [4, 3]


def test_an_index_never_built_is_built_by_the_first_search(sample, reports_ctx, tmp_path) -> None:
    ctx = reports_ctx()
    assert not (tmp_path / "index" / "reports").exists()
    assert len(search_reports(ctx, "WinHTTP").results) == 1
    assert (tmp_path / "index" / "reports").exists()


def test_a_report_that_is_a_symlink_inside_the_root_is_searched_like_any(
    sample, reports_ctx, tmp_path
) -> None:
    os.symlink(sample / f"{ZOOM}/notes.md", sample / PROXY / "notes_link_2025-01-05.md")
    (tmp_path / "outside.md").write_text("decode timeout outside")
    os.symlink(tmp_path / "outside.md", sample / PROXY / "outside_2025-01-06.md")
    hits = search_reports(reports_ctx(), "(undated)").results
    assert sorted((h.report_name, h.excerpt) for h in hits) == [
        ("notes.md", "decode timeout (undated)"),
        ("notes_link_2025-01-05.md", "decode timeout (undated)"),
    ]
    assert "outside" not in {
        h.report_name[:7] for h in search_reports(reports_ctx(), "decode").results
    }


def test_a_command_folder_swapped_for_a_symlink_out_of_the_root_is_not_read(
    sample, reports_ctx, tmp_path
) -> None:
    ctx = reports_ctx()
    assert {h.command_name for h in search_reports(ctx, "decode").results} >= {ZOOM}
    outside = tmp_path / "outside"
    (sample / ZOOM).rename(outside)  # the index still names its reports
    os.symlink(outside, sample / ZOOM)
    hits = search_reports(ctx, "decode").results
    assert hits
    assert ZOOM not in {h.command_name for h in hits}


def test_a_reports_folder_without_reports_answers_nothing(tmp_path, reports_ctx) -> None:
    (tmp_path / "reports" / "empty_command").mkdir(parents=True)
    ctx = reports_ctx()
    assert search_reports(ctx, "anything").results == []
    assert list_command_reports(ctx, "empty_command").reports == []


def test_a_search_sees_changes_once_they_are_indexed(sample, reports_ctx, write, tmp_path) -> None:
    ctx = reports_ctx()
    assert search_reports(ctx, "brand new words").results == []
    write("reports/tls/tls_2025-01-05.md", "Brand new words.")
    (sample / "analyze_zoom_speech_sdk_log/notes.md").unlink()
    reindex(ctx)
    assert [h.report_name for h in search_reports(ctx, "brand new words").results] == [
        "tls_2025-01-05.md"
    ]
    assert "notes.md" not in {h.report_name for h in search_reports(ctx, "decode").results}


@pytest.mark.parametrize("query", ["", "   ", "\n\t", None])
def test_an_empty_query_is_invalid(sample, reports_ctx, query) -> None:
    with pytest.raises(TroveError) as err:
        search_reports(reports_ctx(), query)
    assert err.value.code == "INVALID_QUERY"


@pytest.mark.parametrize(
    "bad",
    [
        "../etc",
        "a/b",
        "a\\b",
        "..",
        ".",
        "x\x00y",
        "a\nb",
        "",
        " ",
        "x:y",
        "a*",
        "what?",
        "a|b",
        "<a>",
        " lead",
        "trail ",
    ],
)
def test_a_command_filter_that_is_not_one_name_is_invalid(sample, reports_ctx, bad) -> None:
    with pytest.raises(TroveError) as err:
        search_reports(reports_ctx(), "decode", bad)
    assert err.value.code == "INVALID_COMMAND_FILTER"


def test_an_unknown_command_filter_is_directory_not_found(sample, reports_ctx, tmp_path) -> None:
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", sample / "escape")
    for name in ("no_such_command", ".git", "escape"):
        with pytest.raises(TroveError) as err:
            search_reports(reports_ctx(), "decode", name)
        assert err.value.code == "DIRECTORY_NOT_FOUND"


@pytest.mark.parametrize("max_results", [0, 101, -1, True, 2.5])
def test_max_results_outside_1_to_100_is_invalid(sample, reports_ctx, max_results) -> None:
    with pytest.raises(TroveError) as err:
        search_reports(reports_ctx(), "decode", max_results=max_results)
    assert err.value.code == "INVALID_ARGUMENT"


def test_a_missing_reports_folder_is_directory_not_found(reports_ctx) -> None:
    ctx = reports_ctx()
    for call in (
        lambda: search_reports(ctx, "x"),
        lambda: list_command_reports(ctx, "c"),
        lambda: get_report(ctx, "c", "r.md"),
    ):
        with pytest.raises(TroveError) as err:
            call()
        assert err.value.code == "DIRECTORY_NOT_FOUND"


# --------------------------------------------------------------------------- listing, reading


def test_list_command_reports_is_newest_first_with_undated_last(sample, reports_ctx) -> None:
    answer = list_command_reports(reports_ctx(), "analyze_zoom_speech_sdk_log")
    assert [(r.report_name, r.date) for r in answer.reports] == [
        ("speech_sdk_analysis_20251201_172952_v1.md", "2025-12-01T00:00:00.000Z"),
        ("Zoom_Speech_SDK_日志分析报告_20251120_decode_response_v6.md", "2025-11-20T00:00:00.000Z"),
        ("notes.md", None),
    ]
    first = answer.reports[0]
    assert first.size == len(SAMPLE[f"analyze_zoom_speech_sdk_log/{first.report_name}"].encode())
    assert first.path == str(sample / "analyze_zoom_speech_sdk_log" / first.report_name)
    assert first.link.startswith("file://")
    assert answer.total == 3


def test_list_command_reports_honours_max_results_and_hides_non_reports(
    sample, reports_ctx
) -> None:
    ctx = reports_ctx()
    assert len(list_command_reports(ctx, "analyze_zoom_speech_sdk_log", 1).reports) == 1
    names = [
        r.report_name
        for r in list_command_reports(ctx, "proxy-slow-meeting-analysis-command").reports
    ]
    assert names == ["proxy_报告_2025-12-01_v1.md"]
    for bad in (0, 1001):
        with pytest.raises(TroveError) as err:
            list_command_reports(ctx, "tls", bad)
        assert err.value.code == "INVALID_ARGUMENT"


def test_list_command_reports_of_an_unknown_command_is_not_found(sample, reports_ctx) -> None:
    with pytest.raises(TroveError) as err:
        list_command_reports(reports_ctx(), "nope")
    assert err.value.code == "NOT_FOUND"
    with pytest.raises(TroveError) as err:
        list_command_reports(reports_ctx(), "../reports")
    assert err.value.code == "INVALID_COMMAND_FILTER"


def test_get_report_returns_the_full_content(sample, reports_ctx) -> None:
    rel = "proxy-slow-meeting-analysis-command/proxy_报告_2025-12-01_v1.md"
    command, name = rel.split("/")
    report = get_report(reports_ctx(), command, name)
    assert report.content == SAMPLE[rel]
    assert (report.command_name, report.report_name) == (command, name)
    assert report.date == "2025-12-01T00:00:00.000Z"
    assert report.path == str(sample / rel) and not report.truncated


@pytest.mark.parametrize(
    ("command", "name", "code"),
    [
        ("analyze_zoom_speech_sdk_log", "missing.md", "NOT_FOUND"),
        ("nope", "notes.md", "NOT_FOUND"),
        ("proxy-slow-meeting-analysis-command", "readme.txt", "NOT_FOUND"),
        ("proxy-slow-meeting-analysis-command", ".hidden.md", "NOT_FOUND"),
        (
            "analyze_zoom_speech_sdk_log",
            "../proxy-slow-meeting-analysis-command/x.md",
            "INVALID_COMMAND_FILTER",
        ),
        ("..", "notes.md", "INVALID_COMMAND_FILTER"),
        ("analyze_zoom_speech_sdk_log", "/etc/passwd", "INVALID_COMMAND_FILTER"),
        ("analyze_zoom_speech_sdk_log", "notes\x00.md", "INVALID_COMMAND_FILTER"),
    ],
)
def test_get_report_refuses_what_is_not_a_report_of_the_command(
    sample, reports_ctx, command, name, code
) -> None:
    with pytest.raises(TroveError) as err:
        get_report(reports_ctx(), command, name)
    assert err.value.code == code


def test_get_report_never_follows_a_symlink_out_of_the_reports_folder(
    sample, reports_ctx, tmp_path
) -> None:
    (tmp_path / "secret.md").write_text("secret")
    os.symlink(tmp_path / "secret.md", sample / "analyze_zoom_speech_sdk_log" / "leak.md")
    with pytest.raises(TroveError) as err:
        get_report(reports_ctx(), "analyze_zoom_speech_sdk_log", "leak.md")
    assert err.value.code == "NOT_FOUND"
    names = [
        r.report_name
        for r in list_command_reports(reports_ctx(), "analyze_zoom_speech_sdk_log").reports
    ]
    assert "leak.md" not in names


# --------------------------------------------------------------------------- against the reference


PLANS: list[tuple[int, dict[str, Any]]] = [
    (1, {}),  # as shipped: the postings, then the texts of the best candidates
    (2, {"text_us": 10**9}),  # the postings of every token
    (3, {"text_us": 0}),  # the texts, once a token has narrowed
    (4, {"follow_max": 0, "follow_gain": 1}),  # what follows a token is never used
    (5, {"SubFile": type("Other", (), {})}),  # texts read through Whoosh's column file
    (6, {"follow_max": 2}),  # what follows, only where the next token is 1-2 terms
    (7, {"blocklimit": 4}),  # postings in blocks of 4: blocks skipped and searched
    (8, {"blocklimit": 4, "text_us": 10**9}),
    # What follows is searched for in the first block only, or once any is found.
    (9, {"blocklimit": 4, "follow_sample": 1, "follow_keep": 0}),
    (10, {"follow_sample": 0, "follow_keep": 0, "text_us": 10**9}),
    (11, {"dense_postings": 0}),  # a fragment's postings added up in an array
    (12, {"dense_postings": 0, "blocklimit": 4}),
    # Reading a phrase's first token is given up, for every text, once one posting of it
    # is followed by the next token (as when the postings say most reports will be left).
    (13, {"follow_sample": 1, "text_us": 10**9}),
]


# Each with every query plan (QueryContext.plan): chosen by cost, the postings forced,
# counting in every text forced.
@pytest.mark.parametrize("query_plan", PLANS_OF_A_QUERY)
@pytest.mark.parametrize(
    ("seed", "plan", "engine"),
    [(seed, plan, "whoosh") for seed, plan in PLANS]
    # The plain-scan engine keeps no files: every plan of the search, blocks of 4 too.
    + [(seed, plan, "scan") for seed, plan in PLANS if "SubFile" not in plan],
)
def test_the_index_answers_exactly_as_a_plain_scan_of_the_files(
    tmp_path, reports_ctx, monkeypatch, seed, plan, engine, query_plan
) -> None:
    costs: dict[str, Any] = {}
    for name, value in plan.items():
        if name == "blocklimit" and engine == "scan":
            monkeypatch.setattr(scan_segment, "BLOCK", value)
        elif name == "blocklimit":
            monkeypatch.setattr(whoosh_writing, "TroveCodec", functools.partial(TroveCodec, value))
        elif name == "SubFile":
            monkeypatch.setattr(whoosh_reading, name, value)
        else:
            costs[name] = value
    root = tmp_path / "reports"
    corpus = make_corpus(root, seed, reports=70)
    ctx = reports_ctx(engine=engine)
    ctx.plan = query_plan
    ctx.costs = dataclasses.replace(ctx.costs, **costs)
    reindex(ctx)
    mutate(corpus, seed)  # a second segment, with deletions in the first
    reindex(ctx)
    check_against_reference(ctx, root, corpus, seed, 150)


def test_postings_blocks_written_by_whoosh_itself_are_read_all_the_same(
    tmp_path, reports_ctx, monkeypatch
) -> None:
    """Indexes written before TroveCodec packed its blocks hold tuples of ints, floats
    and bytes, as Whoosh writes them."""
    for name in ("_mini_ids", "_mini_weights", "_mini_values"):
        monkeypatch.setattr(codec._PostingsWriter, name, getattr(W3PostingsWriter, name))
    root = tmp_path / "reports"
    corpus = make_corpus(root, 8, reports=50)
    ctx = reports_ctx()
    reindex(ctx)
    with ctx.indexes.snapshot("reports") as snapshot:
        (segment,) = segments_of(snapshot)
        k = max(range(len(segment.lexicon().starts)), key=segment.lexicon().doc_counts.__getitem__)
        (_, _, values), *_ = segment.segment.blocks("content", k)
        assert isinstance(values, tuple)
    check_against_reference(ctx, root, corpus, 8, 100)


@pytest.mark.parametrize("text_us", [6, 30])
def test_counting_the_best_within_a_budget_gives_up_or_answers_exactly(
    tmp_path, reports_ctx, monkeypatch, text_us
) -> None:
    """A query of several tokens first tries to settle its best reports in as many texts
    as reading the rest of its tokens would cost; giving up there, it reads on."""
    outcomes: list[bool] = []
    count_best = ReportSegment._count_best

    def spy(self, read, docs, needle, top, known, budget=None):
        done = count_best(self, read, docs, needle, top, known, budget)
        if budget is not None:
            outcomes.append(done is not None)
        return done

    monkeypatch.setattr(ReportSegment, "_count_best", spy)
    root = tmp_path / "reports"
    corpus = make_corpus(root, 9, reports=70)
    ctx = reports_ctx()
    ctx.costs = dataclasses.replace(ctx.costs, text_us=text_us, bound_us=0)
    ctx.plan = "postings"  # (by cost, the texts may be counted before any budget is tried)
    reindex(ctx)
    check_against_reference(ctx, root, corpus, 9, 150)
    assert outcomes.count(True) and outcomes.count(False), outcomes  # both were tried


def check_against_reference(ctx: QueryContext, root: Path, corpus, seed: int, n: int) -> None:
    rng = random.Random(seed)
    kinds: dict[str, int] = {}
    for kind, query in queries(corpus, seed, n):
        command = rng.choice(COMMANDS) if rng.random() < 0.2 else None
        max_results = rng.choice((1, 3, 10, 100))
        expected = reference_search(root, query, command, max_results)
        got = as_expected(ctx, query, command, max_results)
        assert got == expected, (kind, query, command, max_results)
        kinds[kind] = kinds.get(kind, 0) + bool(expected)
    # The queries found something of every kind but the absent ones.
    assert all(kinds[k] for k in kinds if k != "absent"), kinds


# A lexicon answers its lookups by suffix from the suffixes in order its segment keeps;
# without them, its first lookups with a scan of its terms, then from its suffixes put in
# order one first character at a time: each way for every lookup.
@pytest.mark.parametrize("way", ["kept", "scan", "groups"])
def test_the_term_lookups_find_exactly_the_terms_a_scan_finds(
    tmp_path, reports_ctx, monkeypatch, way
) -> None:
    """The Lexicon's bisections (terms in order; their suffixes in order) against a scan of
    every term, with strings cut out of the terms (CJK, emoji, 'İ') and strings no term
    holds."""
    monkeypatch.setattr(lexicon_module, "SCANS_BEFORE_SORTING", 10**9 if way == "scan" else 0)
    make_corpus(tmp_path / "reports", 7, reports=40)
    ctx = reports_ctx()
    reindex(ctx)
    with ctx.indexes.snapshot("reports") as snapshot:
        (segment,) = segments_of(snapshot)
        lex = segment.lexicon()
        assert lex.ordered
        terms = [lex.term(k) for k in range(len(lex.starts))]
        if way != "kept":
            lex = lexicon_module.Lexicon(terms, lex.doc_counts)
            assert not lex.ordered
        assert len(terms) > 100 and any(not t.isascii() for t in terms)
        rng = random.Random(7)
        probes = {"", "zzqx", "\U0010ffff", terms[0], terms[-1], terms[-1] + "z"}
        for _ in range(400):
            t = rng.choice(terms)
            a = rng.randrange(len(t))
            probes.add(t[a : rng.randint(a + 1, len(t))] + rng.choice(("", "", "a", "中")))
        for s in sorted(probes - {""}):
            assert lex.equal_to(s) == [k for k, t in enumerate(terms) if t == s], s
            assert lex.starting_with(s) == [k for k, t in enumerate(terms) if t.startswith(s)]
            assert lex.ending_with(s) == [k for k, t in enumerate(terms) if t.endswith(s)], s
            assert lex.containing(s) == [k for k, t in enumerate(terms) if s in t], s


def test_the_reference_agrees_on_the_hand_written_sample(sample, reports_ctx) -> None:
    ctx = reports_ctx()
    for query in ("decode timeout", "DECODE", "日志分析", "timeout decode", "tim", ". ", "zzqx"):
        for command in (None, "analyze_zoom_speech_sdk_log"):
            assert as_expected(ctx, query, command) == reference_search(sample, query, command)


# --------------------------------------------------------------------------- command line


def write_config(tmp_path: Path) -> Path:
    config = tmp_path / "trove.toml"
    config.write_text(
        f'[sources]\nreports = "{tmp_path / "reports"}"\n[index]\ndir = "{tmp_path / "index"}"\n',
        encoding="utf-8",
    )
    return config


def test_cli_search_reports_prints_json(sample, tmp_path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "--config",
            str(write_config(tmp_path)),
            "search",
            "reports",
            "decode timeout",
            "--command",
            "analyze_zoom_speech_sdk_log",
            "--max-results",
            "2",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [r["report_name"] for r in data["results"]] == [
        "speech_sdk_analysis_20251201_172952_v1.md",
        "Zoom_Speech_SDK_日志分析报告_20251120_decode_response_v6.md",
    ]
    assert data["results"][0]["count"] == 4


def test_cli_search_reports_prints_a_table(sample, tmp_path) -> None:
    result = CliRunner().invoke(
        app, ["--config", str(write_config(tmp_path)), "search", "reports", "WinHTTP"]
    )
    assert result.exit_code == 0, result.output
    assert "the best 1" in result.stdout
    assert "proxy-slow-meeting" in result.stdout and "WinHTTP" in result.stdout


def test_cli_search_reports_with_a_bad_query_exits_2(sample, tmp_path) -> None:
    config = str(write_config(tmp_path))
    result = CliRunner().invoke(app, ["--config", config, "search", "reports", "  "])
    assert result.exit_code == 2
    assert "INVALID_QUERY" in result.stderr
    result = CliRunner().invoke(
        app, ["--config", config, "search", "reports", "x", "--command", "../x"]
    )
    assert result.exit_code == 2 and "INVALID_COMMAND_FILTER" in result.stderr


def test_the_excerpt_comes_from_the_file_as_it_is_when_it_changed_since_indexing(
    tmp_path, write, reports_ctx
) -> None:
    """The match is looked for in the index's copy of the text first: where the file
    no longer has it there, the excerpt is still cut around the match in the file."""
    write("reports/c/r_20251101.md", "x" * 50 + " Beta " + "y" * 400)
    ctx = reports_ctx()
    reindex(ctx)
    now = "q" * 300 + " Beta " + "y" * 150
    write("reports/c/r_20251101.md", now)  # not reindexed
    (hit,) = search_reports(ctx, "beta").results
    assert hit.excerpt == excerpt(now, now.lower(), 301, 305)
    assert "Beta" in hit.excerpt


def test_a_report_deleted_since_it_was_indexed_gives_its_place_to_the_next(
    tmp_path, write, reports_ctx
) -> None:
    for i in range(4):
        write(f"reports/c/r{i}_2025110{i + 1}.md", "alpha " * (i + 1))
    ctx = reports_ctx()
    first = search_reports(ctx, "alpha", max_results=3)
    assert [h.report_name for h in first.results] == [
        "r3_20251104.md",
        "r2_20251103.md",
        "r1_20251102.md",
    ]
    (tmp_path / "reports/c/r3_20251104.md").unlink()  # the index has not seen it yet
    again = search_reports(ctx, "alpha", max_results=3)
    assert [h.report_name for h in again.results] == [
        "r2_20251103.md",
        "r1_20251102.md",
        "r0_20251101.md",
    ]


@pytest.mark.parametrize("query_plan", PLANS_OF_A_QUERY)
def test_queries_of_one_character_runs_of_one_and_punctuation_answer_as_a_scan(
    tmp_path, reports_ctx, query_plan
) -> None:
    """What makes an index work hardest (issue 16's bad input): one character, a run of
    1,000 of one, only punctuation, runs of white space between words; past the query
    limit, INVALID_QUERY."""
    root = tmp_path / "reports"
    make_corpus(root, 11, reports=40)
    ctx = reports_ctx()
    ctx.plan = query_plan
    reindex(ctx)
    words = "the the the " * 3
    for query in (
        "e",
        ".",
        "a" * 1000,
        "e" * 1000,
        "!" * 1000,
        "a " * 499,
        ". " * 499,
        "the  \t the",
        words * 20,
        "(" * 1000,
        "-",
    ):
        assert as_expected(ctx, query) == reference_search(root, query, None, 10), query[:20]
    with pytest.raises(TroveError) as raised:
        search_reports(ctx, "a" * 10_000)
    assert raised.value.code == "INVALID_QUERY"
