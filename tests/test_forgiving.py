"""query/forgiving.py: the similarity a typo correction needs, on the function and through
the three searches that correct words (reports, conversations, ELOG)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from rapidfuzz import fuzz

from indexer.config import Settings
from query.context import QueryContext
from query.elog import search_elog
from query.forgiving import MAX_CANDIDATES, closest, corrected_query
from query.reports import search_reports
from query.workspace import search_workspace

# Pairs each side of the cut-off, with their similarity (rapidfuzz's ratio, 0-100).
NOT_CLOSE = ("speech", "speed", 72.7)
CLOSE = ("token", "taken", 80.0)
AT_THE_CUT_OFF = ("word", "ward", 75.0)


@pytest.mark.parametrize("pair", [NOT_CLOSE, CLOSE, AT_THE_CUT_OFF])
def test_the_pairs_score_what_the_cut_off_tests_assume(pair: tuple[str, str, float]) -> None:
    word, term, score = pair
    assert fuzz.ratio(word, term) == pytest.approx(score, abs=0.05)


def test_a_word_less_similar_than_the_cut_off_is_never_corrected() -> None:
    assert closest("speech", ["speed"]) == []
    assert closest("speech", ["speed", "token"]) == []


def test_a_word_at_or_above_the_cut_off_is_corrected() -> None:
    assert closest("token", ["taken"]) == ["taken"]
    assert closest("word", ["ward"]) == ["ward"]


def test_the_closest_words_come_best_first_then_by_first_letter_then_in_order() -> None:
    # 'tokens' (90.9) beats 'taken' (80); of 'boken' and 'taken' (both 80), the one
    # starting like the word comes first, then the others alphabetically.
    assert closest("token", ["woken", "boken", "taken", "tokens"]) == ["tokens", "taken", "boken"]
    assert closest("token", ["woken", "taken", "tokens"], limit=1) == ["tokens"]
    assert closest("token", ["woken", "boken"]) == ["boken", "woken"]


def test_similarity_is_the_plain_ratio_not_a_weighted_one() -> None:
    # 'forms' is 88.9 similar to 'form', 'formal' 80 (rapidfuzz's WRatio would give
    # 'formal' 90, for holding the word whole).
    assert closest("form", ["formal", "forms"]) == ["forms", "formal"]


def test_at_most_three_words_are_offered_unless_asked() -> None:
    terms = ["taken", "tokens", "toke", "tolen", "tokes"]
    assert len(closest("token", terms)) == 3
    assert len(closest("token", terms, limit=5)) == 5


def test_of_many_equally_close_words_only_the_first_four_per_word_asked_are_ranked() -> None:
    # Five words 80 similar to 'token'; of the first four (4 x limit) in the order given,
    # the best by first letter and then alphabetically; 'taken', fifth, is not looked at.
    assert closest("token", ["woken", "boken", "poken", "roken", "taken"], limit=1) == ["boken"]


def test_at_most_max_candidates_terms_are_compared() -> None:
    assert closest("token", ["zzzzz"] * MAX_CANDIDATES + ["taken"]) == []
    assert closest("token", ["zzzzz"] * (MAX_CANDIDATES - 1) + ["taken"]) == ["taken"]


@pytest.mark.parametrize("word", ["abc", "t0ken", "2025", "代理"])
def test_a_short_word_or_a_word_with_digits_is_never_corrected(word: str) -> None:
    # A query's CJK words are pairs of characters (see ``words``): short words too.
    assert closest(word, ["abd", "token", "2026", "代替"]) == []


def test_a_corrected_query_replaces_whole_words_in_any_case_and_leaves_dropped_ones_out() -> None:
    assert corrected_query("Proxyy  timeout_proxyy", {"proxyy": "proxy"}) == ("proxy timeout_proxy")
    assert corrected_query("proxyyy proxyy", {"proxyy": "proxy"}) == "proxyyy proxy"
    assert corrected_query("a zzqxv b", {}, ["zzqxv"]) == "a b"


def test_a_correction_is_written_as_it_is_never_read_as_a_replacement_pattern() -> None:
    assert corrected_query("see tmep", {"tmep": r"c:\temp\1"}) == r"see c:\temp\1"


def test_a_term_more_than_two_letters_longer_or_shorter_is_never_offered() -> None:
    # 'tokenise' (76.9) and 'to' are three letters away; 'tokened' two, 'tokens' one.
    assert closest("token", ["tokenise", "to"]) == []
    assert closest("token", ["tokenise", "tokens", "tokened"]) == ["tokens", "tokened"]


# --------------------------------------------------------------- through the searches

SearchFor = Callable[[str], tuple[str | None, bool]]


@pytest.fixture
def contexts() -> Iterator[list[QueryContext]]:
    made: list[QueryContext] = []
    yield made
    for ctx in made:
        ctx.close()


def _open(settings: Settings, contexts: list[QueryContext]) -> QueryContext:
    contexts.append(QueryContext.from_settings(settings))
    return contexts[-1]


ELOG_RECORD = (
    "$@MID@$: 1\nDate: Mon, 06 Oct 2025 08:00:00 +0200\nAuthor: T. Test\nCategory: Info\n"
    "Title: notes\nAttachment: \nEncoding: plain\n" + "=" * 40 + "\n{body}\n"
)
TEXT = "The speed was taken down a notch."


@pytest.fixture(params=["reports", "conversations", "elog"])
def search_for(request, write, make_settings, contexts) -> SearchFor:
    """A search over one document holding TEXT: the query -> (corrected query, any hit)."""
    kind: str = request.param
    if kind == "reports":
        write("reports/net/notes_20251101.md", TEXT)
        ctx = _open(make_settings(), contexts)

        def reports(q: str) -> tuple[str | None, bool]:
            answer = search_reports(ctx, q)
            return answer.corrected_query, bool(answer.results)

        return reports
    if kind == "conversations":
        write("conversations/2025-11-10/001-notes/notes.md", TEXT + "\n")
        ctx = _open(make_settings(), contexts)

        def workspace(q: str) -> tuple[str | None, bool]:
            answer = search_workspace(ctx, q)
            return answer.corrected_query, bool(answer.results)

        return workspace
    write("elog/2025/251006a.log", ELOG_RECORD.format(body=TEXT))
    ctx = _open(make_settings(elog={"rerank": "lexical"}), contexts)

    def elog(q: str) -> tuple[str | None, bool]:
        answer = search_elog(ctx, q, rerank="off")
        return answer.corrected_query, bool(answer.hits)

    return elog


def test_a_search_corrects_a_word_at_the_cut_off_or_above(search_for: SearchFor) -> None:
    assert search_for("token") == ("taken", True)


def test_a_search_never_corrects_a_word_below_the_cut_off(search_for: SearchFor) -> None:
    assert search_for("speech") == (None, False)
    assert search_for("speed") == (None, True)
