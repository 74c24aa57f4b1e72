"""The query language of the one box (query/syntax.py) as the `search` tool answers it,
checked against the documents themselves, read by a plain scan of the files: on the
sample data in data/ and on a generated corpus.

- an excluded word or phrase is in no hit's document, and leaving it out takes away
  exactly the hits whose documents hold it;
- every hit of a quoted phrase holds it;
- ``a OR b`` answers the union of ``a`` and ``b``;
- ``in:``, ``since:``, ``until:``, ``command:`` and ``category:`` answer only what they admit;
- malformed queries answer INVALID_QUERY, naming the term.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from indexer.sources.elog import parse_logbook_file
from query.context import QueryContext
from query.errors import TroveError
from query.search_all import SearchResponse, search

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from gen_corpus import generate
from indexed import (  # bench/ is not a package: its folder is on the path
    indexed,
    settings_for,
)

DATA = Path(__file__).resolve().parent.parent / "data"
MANY = 50  # the search tool's largest page: every hit of these small corpora


@pytest.fixture(scope="module", params=["sample", "generated"])
def corpus(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Corpus]:
    tmp = tmp_path_factory.mktemp(request.param)
    if request.param == "sample":
        shutil.copytree(DATA, tmp / "data")
        root = tmp / "data"
    else:
        root = tmp / "corpus"
        generate(root, reports=300, commands=30, conversations=80)
        shutil.copytree(DATA / "elog", root / "elog")
    ctx = indexed(settings_for(root, tmp / "index"))
    yield Corpus(ctx, root)
    ctx.close()


class Corpus:
    """An indexed corpus and its documents read by a plain scan of the files."""

    def __init__(self, ctx: QueryContext, root: Path) -> None:
        self.ctx = ctx
        self.root = root
        self.base: str | None = None  # _base_word's word, found once
        self.entries: dict[str, tuple[str, str]] = {}  # ELOG id -> (text, category)
        for log in sorted((root / "elog" / "SwissFEL").rglob("*.log")):
            for entry in parse_logbook_file(log.read_bytes()):
                values = [v for k, v in entry.attributes.items()]
                text = "\n".join([entry.title, entry.text, *values])
                self.entries[str(entry.id)] = (text, entry.category)

    def text(self, collection: str, hit_id: str) -> str:
        if collection == "elog":
            return self.entries[hit_id][0]
        rel = {
            "reports": hit_id,
            "commands": f"{hit_id}.md",
            "conversations": hit_id.rpartition(":")[0],
        }[collection]
        return (self.root / collection / rel).read_text(encoding="utf-8", errors="replace")

    def ask(self, query: str, **options: Any) -> SearchResponse:
        return search(self.ctx, query, max_results=MANY, **options)

    def ids(self, query: str, **options: Any) -> set[tuple[str, str]]:
        answer = self.ask(query, **options)
        assert answer.next_offset is None, f"{query!r}: more than {MANY} hits"
        return {(h.collection, h.id) for h in answer.hits}

    def words_of(self, keys: set[tuple[str, str]]) -> Counter[str]:
        """In how many of these documents each word of letters appears."""
        seen: Counter[str] = Counter()
        for collection, hit_id in keys:
            seen.update(set(re.findall(r"[a-z]{4,}", self.text(collection, hit_id).casefold())))
        return seen


def _holds_word(text: str, word: str) -> bool:
    """The reference: ``word`` in ``text`` with no letter or digit run on to either end."""
    return re.search(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", text.casefold()) is not None


def _holds_phrase(text: str, phrase: str) -> bool:
    return " ".join(phrase.casefold().split()) in " ".join(text.casefold().split())


def _base_word(corpus: Corpus) -> str:
    """A word whose hits are many but at most half a page, in several collections (found
    once per corpus)."""
    if corpus.base is None:
        corpus.base = _find_base_word(corpus)
    return corpus.base


def _find_base_word(corpus: Corpus) -> str:
    for word in ("proxy", "timeout", "token", "beam", "error", "request", "latency"):
        try:
            answer = corpus.ask(word)
        except TroveError:
            continue
        if _fits(answer):
            return word
    some = {
        ("reports", p.relative_to(corpus.root / "reports").as_posix())
        for p in sorted((corpus.root / "reports").rglob("*.md"))[:20]
    }
    found = corpus.words_of(some)
    for word, _ in sorted(found.items(), key=lambda wn: (abs(wn[1] - 3), wn[0])):
        if _fits(corpus.ask(word)):
            return word
    raise AssertionError("no word with a few hits")


def _or_partner(corpus: Corpus, base: str) -> str:
    """A word with hits of its own that ``base`` lacks, the two together within a page."""
    every = corpus.ids(base)
    seen = corpus.words_of(every)
    for word in sorted(
        (w for w, n in seen.items() if 0 < n < len(every) and w != base), key=lambda w: (seen[w], w)
    ):
        answer = corpus.ask(word)
        if answer.next_offset is not None:
            continue
        theirs = {(h.collection, h.id) for h in answer.hits}
        if theirs - every and len(theirs | every) < MANY:
            return word
    raise AssertionError("no word to OR with")


def _fits(answer: SearchResponse) -> bool:
    """A few hits, at most half a page (room for an OR partner's), reports among them."""
    collections = {h.collection for h in answer.hits}
    return 6 <= len(answer.hits) <= MANY // 2 and "reports" in collections


def _splitting_word(corpus: Corpus, keys: set[tuple[str, str]], base: str) -> str:
    """A word some of these documents hold and some do not (as evenly as can be), whose
    own hits fit one page."""
    seen = corpus.words_of(keys)
    candidates = [w for w, n in seen.items() if 0 < n < len(keys) and w != base]
    for word in sorted(candidates, key=lambda w: (abs(2 * seen[w] - len(keys)), w)):
        if corpus.ask(word).next_offset is None:
            return word
    raise AssertionError("no word splits the hits")


# --------------------------------------------------------------------------- exclusions


def test_an_excluded_word_is_in_no_hit_and_takes_away_exactly_the_hits_that_hold_it(
    corpus: Corpus,
) -> None:
    base = _base_word(corpus)
    every = corpus.ids(base)
    word = _splitting_word(corpus, every, base)
    kept = corpus.ids(f"{base} -{word}")
    assert kept, (base, word)
    for collection, hit_id in kept:
        assert not _holds_word(corpus.text(collection, hit_id), word), (hit_id, word)
    holding = {k for k in every if _holds_word(corpus.text(*k), word)}
    assert kept == every - holding
    assert holding, "the excluded word took nothing away: the test proves nothing"


def test_an_excluded_phrase_is_in_no_hit(corpus: Corpus) -> None:
    base = _base_word(corpus)
    every = corpus.ids(base)
    collection, hit_id = min(every)
    m = re.search(r"\b([a-z]{4,}) +([a-z]{4,})\b", corpus.text(collection, hit_id).casefold())
    assert m is not None
    phrase = f"{m.group(1)} {m.group(2)}"
    kept = corpus.ids(f'{base} -"{phrase}"')
    for key in kept:
        assert not _holds_phrase(corpus.text(*key), phrase)
    assert (collection, hit_id) not in kept
    assert kept == {k for k in every if not _holds_phrase(corpus.text(*k), phrase)}


# --------------------------------------------------------------------------- phrases


def test_every_hit_of_a_quoted_phrase_holds_it(corpus: Corpus) -> None:
    base = _base_word(corpus)
    collection, hit_id = min(corpus.ids(base))
    text = corpus.text(collection, hit_id)
    m = re.search(rf"(?i)\b{re.escape(base)} +([a-z]{{3,}})\b", text)
    phrase = f"{base} {m.group(1)}" if m else base
    hits = corpus.ids(f'"{phrase}"')
    assert (collection, hit_id) in hits or not m
    for key in hits:
        assert _holds_phrase(corpus.text(*key), phrase), (key, phrase)


def test_a_phrase_no_document_holds_answers_nothing(corpus: Corpus) -> None:
    base = _base_word(corpus)
    answer = corpus.ask(f'"{base} zzyzxq"')
    assert answer.hits == []


# --------------------------------------------------------------------------- OR


def test_or_answers_the_union_of_its_alternatives(corpus: Corpus) -> None:
    base = _base_word(corpus)
    other = _or_partner(corpus, base)
    left, right = corpus.ids(base), corpus.ids(other)
    assert right - left and left - right  # a union that differs from either side
    assert corpus.ids(f"{base} OR {other}") == left | right
    assert corpus.ids(f"{other} OR {base}") == left | right


def test_or_takes_phrases_and_exclusions_apply_to_both_sides(corpus: Corpus) -> None:
    base = _base_word(corpus)
    other = _or_partner(corpus, base)
    union = corpus.ids(f'"{base}" OR {other}')
    minus = corpus.ids(f'"{base}" OR {other} -{other}')
    assert minus == {k for k in union if not _holds_word(corpus.text(*k), other)}


# --------------------------------------------------------------------------- filters


def test_in_answers_only_the_collections_it_names(corpus: Corpus) -> None:
    base = _base_word(corpus)
    every = corpus.ids(base)
    for names in (["reports"], ["elog"], ["reports", "conversations"]):
        typed = " ".join(f"in:{n}" for n in names)
        got = corpus.ids(f"{base} {typed}")
        assert {c for c, _ in got} <= set(names)
        assert got == {k for k in every if k[0] in names}
    assert corpus.ids(f"{base} in:reports,elog") == corpus.ids(f"{base} in:reports in:elog")


def test_since_and_until_answer_only_dated_documents_in_the_span(corpus: Corpus) -> None:
    base = _base_word(corpus)
    answer = corpus.ask(base)
    days = sorted(h.date[:10] for h in answer.hits if h.date and len(h.date) >= 10)
    low, high = days[len(days) // 4], days[3 * len(days) // 4]
    got = corpus.ask(f"{base} since:{low} until:{high}")
    assert got.hits
    for hit in got.hits:
        assert hit.collection != "commands" and hit.date
        first = hit.date[:10] if len(hit.date) >= 10 else hit.date[:7] + "-31"
        last = hit.date[:10] if len(hit.date) >= 10 else hit.date[:7] + "-01"
        assert first >= low and last <= high, (hit.id, hit.date)
    # The same span given as the tool's arguments answers the same.
    same = corpus.ask(base, since=low, until=high)
    assert [h.id for h in same.hits] == [h.id for h in got.hits]


def test_command_answers_only_that_commands_reports_and_itself(corpus: Corpus) -> None:
    base = _base_word(corpus)
    reports = [h for h in corpus.ask(f"{base} in:reports").hits]
    command = reports[0].id.split("/")[0]
    got = corpus.ask(f"{base} command:{command}")
    assert got.hits
    for hit in got.hits:
        assert hit.collection in ("reports", "commands")
        if hit.collection == "reports":
            assert hit.id.startswith(command + "/")
        else:
            assert hit.id == command
    expected = {h.id for h in reports if h.id.startswith(command + "/")}
    assert {h.id for h in got.hits if h.collection == "reports"} == expected


def test_category_answers_only_entries_of_that_category(corpus: Corpus) -> None:
    words = Counter(c.casefold() for _, c in corpus.entries.values() if c)
    category = words.most_common(1)[0][0]
    got = corpus.ask(f'category:"{category}"')  # no words: the logbook's newest entries
    assert got.hits and {h.collection for h in got.hits} == {"elog"}
    for hit in got.hits:
        held = [c.strip().casefold() for c in corpus.entries[hit.id][1].split("|")]
        assert category in held, (hit.id, corpus.entries[hit.id][1])


def test_the_note_says_how_the_query_was_read(corpus: Corpus) -> None:
    base = _base_word(corpus)
    note = corpus.ask(f"{base} -zzyzxq in:reports since:2020").note or ""
    assert note.startswith("read as:") and "zzyzxq" in note and "2020-01-01" in note
    assert not (corpus.ask(base).note or "").startswith("read as:")


# --------------------------------------------------------------------------- malformed

MALFORMED = [
    '"unclosed',
    'proxy "unclosed phrase',
    '""',
    "-proxy",
    '-"a phrase"',
    "-proxy -timeout",
    "-",
    "proxy -",
    "OR proxy",
    "proxy OR",
    "proxy OR OR timeout",
    "OR",
    "since:2025-13-01 proxy",
    "since:2025-02-30 proxy",
    "until:2025-00 proxy",
    "since:yesterday proxy",
    "since:20251001 proxy",
    "until:2025-1-1 proxy",
    "since:2025-10-02 until:2025-10-01 proxy",
    "in:nowhere proxy",
    "in:reports,nowhere proxy",
    "in:reports, proxy",
    "in: proxy",
    "command: proxy",
    'command:"" proxy',
    "command:../etc proxy",
    "command:a command:b proxy",
    "since:2025 since:2024 proxy",
    "-in:elog proxy",
    'proxy -"unclosed',
    "since:2025-01-01",
    "command:x category:y proxy",
    'category:"unclosed proxy',
    "category: proxy",
    "system:a system:b proxy",
    "in:commands since:2025 proxy",
    "in:conversations category:Problem proxy",
    "-a " * 300,
    '"' * 999,
    "OR " * 333,
]


def test_forty_malformed_queries(corpus: Corpus) -> None:
    assert len(MALFORMED) >= 40
    for query in MALFORMED:
        with pytest.raises(TroveError) as caught:
            corpus.ask(query)
        assert caught.value.code == "INVALID_QUERY", (query, caught.value)


def test_a_malformed_term_is_named_with_its_column(corpus: Corpus) -> None:
    with pytest.raises(TroveError) as caught:
        corpus.ask("proxy since:2025-13-01")
    assert "since:2025-13-01" in caught.value.message and "7" in caught.value.message


def test_a_plain_query_answers_as_before(corpus: Corpus) -> None:
    """Words without operators: the same hits as each collection's own search gives."""
    from query.reports import search_reports

    base = _base_word(corpus)
    fused = [h.id for h in corpus.ask(f"{base} in:reports").hits]
    own = [r.id for r in search_reports(corpus.ctx, base, max_results=MANY).results]
    assert fused == own
