"""The three tiers of search_commands: the file name (tier 1), the content and
frontmatter (tier 2), the command's reports (tier 3); each scores within its own band
(see query/commands/__init__.py)."""

from __future__ import annotations

import bisect
import math
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

from rapidfuzz import fuzz, process

from indexer.engine.base import Snapshot
from query.commands.catalog import Command, CommandCatalog, CommandsCache
from query.commands.models import Tier
from query.commands.words import (
    CJK_WORD,
    and_list,
    first_word,
    quoted,
    word_match,
)
from query.errors import TroveError

# Each tier's score band (low, high): see the module docstring.
BANDS: dict[str, tuple[float, float]] = {
    "tier1": (0.45, 1.0),
    "tier2": (0.25, 0.80),
    "tier3": (0.10, 0.60),
}
# Below these raw scores (0-1) a tier does not report the command at all.
TIER1_MIN_COVERAGE = 0.3
TIER2_MIN = 0.35
TIER3_MIN_COVERAGE = 0.5
# Tier 2: how much a word found in each field counts.
FIELD_WEIGHTS = {"title": 1.0, "tags": 1.0, "description": 0.9, "frontmatter": 0.7, "body": 0.6}
FIELD_WORDS = {
    "title": "the title",
    "tags": "the tags",
    "description": "the description",
    "frontmatter": "the frontmatter",
    "body": "the text",
}
FUZZY_CUTOFF = 80  # rapidfuzz ratio, 0-100
# Tier 2: a CJK keyword whose character pairs a field holds, but not as one run.
CJK_PARTIAL = 0.9
# Tier 3: a report this many days old counts half as recent as one from today.
RECENCY_HALF_LIFE_DAYS = 180
# The most a command's other tiers add to its best score. Kept below the gaps between
# bands (a strong tier 1 match scores at least 0.835 against tier 2's 0.80, a strong
# tier 2 one 0.635 against tier 3's 0.60), so it orders matches, never tiers.
EVIDENCE_BONUS = 0.03


def check_deadline(deadline: float) -> None:
    if time.monotonic() >= deadline:
        raise TroveError(
            "SEARCH_TIMEOUT",
            "the command search took longer than [commands] search_timeout_ms allows; "
            "use fewer or more specific words, or raise the timeout",
        )


@dataclass
class Found:
    command: Command
    tier: Tier
    raw: float
    reason: str

    @property
    def score(self) -> float:
        low, high = BANDS[self.tier]
        return low + (high - low) * min(1.0, max(0.0, self.raw))


def tier1(catalog: list[Command], keywords: list[str]) -> list[Found]:
    """Keywords against the words of each command's name."""
    found: list[Found] = []
    for command in catalog:
        words = command.words
        if not words:
            continue
        matched: dict[int, str | None] = {}  # name word index -> the keyword, if not the same
        total = 0.0
        for kw in keywords:
            best, where = 0.0, -1
            for i, word in enumerate(words):
                m = word_match(kw, word)
                if m > best:
                    best, where = m, i
            for i in range(len(words) - 1):  # "speechsdk" for speech_sdk
                if best < 1.0 and kw == words[i] + words[i + 1]:
                    best, where = 1.0, i
                    matched[i + 1] = None
                    matched[i] = None
            if best > 0:
                total += best
                matched.setdefault(where, kw)
        coverage = total / len(keywords)
        if coverage < TIER1_MIN_COVERAGE:
            continue
        name_coverage = len(matched) / len(words)
        position = sum(1 - i / len(words) for i in matched) / len(matched)
        raw = 0.7 * coverage + 0.2 * name_coverage + 0.1 * position
        shown = [quoted(words[i], matched[i]) for i in sorted(matched)]
        found.append(Found(command, "tier1", raw, f"File name contains {and_list(shown)}"))
    return found


def _similar_words(catalog: CommandCatalog, keyword: str) -> dict[str, float]:
    """Vocabulary words close to the keyword, with a similarity 0-1: 1 the same word;
    0.6-0.9 a word it starts (more for a longer part of it); 0.5-0.8 a word that starts
    it (a stem); 0.68-0.85 a word within rapidfuzz's ratio cut-off (a typo)."""
    similar: dict[str, float] = {}
    if keyword in catalog.postings:
        similar[keyword] = 1.0
    if len(keyword) >= 3:
        vocab = catalog.vocabulary
        lo = bisect.bisect_right(vocab, keyword)
        hi = bisect.bisect_left(vocab, keyword + "\U0010ffff")
        for word in vocab[lo:hi]:
            similar[word] = max(similar.get(word, 0.0), 0.6 + 0.3 * len(keyword) / len(word))
        for end in range(3, len(keyword)):
            stem = keyword[:end]
            if stem in catalog.postings:
                similar[stem] = max(similar.get(stem, 0.0), 0.5 + 0.3 * end / len(keyword))
    if len(keyword) >= 4:
        for word, ratio, _ in process.extract(
            keyword, catalog.vocabulary, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=None
        ):
            similar[word] = max(similar.get(word, 0.0), 0.85 * ratio / 100)
    return similar


def _cjk_pieces(keyword: str, held: list[bool]) -> str:
    """The parts of a CJK keyword made of the character pairs a field holds, '…' between."""
    pieces: list[str] = []
    start = None
    for i, has in enumerate([*held, False]):
        if has and start is None:
            start = i
        elif not has and start is not None:
            pieces.append(keyword[start : i + 1])
            start = None
    return "…".join(pieces)


def _cjk_hits(catalog: CommandCatalog, keyword: str) -> Iterator[tuple[int, str, float, str]]:
    """(command, field, similarity, what matched) for a run of CJK characters: 1 where
    the field holds the run; else `CJK_PARTIAL` times the share of its character pairs
    the field holds (a phrase partly there, or all there but apart)."""
    pairs = [keyword[i : i + 2] for i in range(len(keyword) - 1)]
    # The index holds single characters: only fields with one of ours can match.
    candidates = {hit for char in set(keyword) for hit in catalog.postings.get(char, ())}
    for i, field_name in sorted(candidates):
        text = catalog.commands[i].cjk[field_name]
        if keyword in text:
            yield i, field_name, 1.0, keyword
            continue
        held = [pair in text for pair in pairs]
        if any(held):
            share = sum(held) / len(pairs)
            yield i, field_name, CJK_PARTIAL * share, _cjk_pieces(keyword, held)


def _keyword_hits(catalog: CommandCatalog, keyword: str) -> Iterator[tuple[int, str, float, str]]:
    """(command, field, similarity, what matched) for every field the keyword matches."""
    if CJK_WORD.fullmatch(keyword):
        yield from _cjk_hits(catalog, keyword)
        return
    for word, sim in _similar_words(catalog, keyword).items():
        for i, field_name in catalog.postings[word]:
            yield i, field_name, sim, word


def tier2(
    catalog: CommandCatalog, visible: set[int], keywords: list[str], deadline: float
) -> list[Found]:
    """Keywords, fuzzily, against title, tags, description, frontmatter and body."""
    # per command: keyword -> (value, field, word)
    best: dict[int, dict[str, tuple[float, str, str]]] = defaultdict(dict)
    for kw in keywords:
        check_deadline(deadline)
        for i, field_name, sim, word in _keyword_hits(catalog, kw):
            if i not in visible:
                continue
            value = sim * FIELD_WEIGHTS[field_name]
            have = best[i].get(kw)
            if have is None or value > have[0] or (value == have[0] and word == kw):
                best[i][kw] = (value, field_name, word)
    found: list[Found] = []
    for i, per_keyword in best.items():
        raw = sum(v for v, _, _ in per_keyword.values()) / len(keywords)
        if raw < TIER2_MIN:
            continue
        by_field: dict[str, list[str]] = defaultdict(list)
        for kw in keywords:
            if kw in per_keyword:
                _, field_name, word = per_keyword[kw]
                by_field[field_name].append(quoted(word, kw))
        parts = [
            f"{and_list(words)} in {FIELD_WORDS[f]}"
            for f in FIELD_WEIGHTS
            if (words := by_field.get(f))
        ]
        found.append(Found(catalog.commands[i], "tier2", raw, "Matches " + "; ".join(parts)))
    return found


def tier3(
    snapshot: Snapshot,
    cache: CommandsCache,
    by_name: dict[str, Command],
    words: list[str],
    today: date,
    deadline: float,
) -> list[Found]:
    """Commands whose reports hold the query's words."""
    if not words:
        return []
    mapping = cache.reports(snapshot)
    hits: Counter[int] = Counter()  # report -> how many query words it holds
    for segment, base in snapshot.segments():
        lex = segment.lexicon("content")
        for word in words:
            check_deadline(deadline)
            # Index terms are words, or words with the punctuation after them: any term
            # whose first word is this word holds it.
            terms = [t for k in lex.starting_with(word) if first_word(t := lex.term(k)) == word]
            docs = segment.docs_with("content", terms)
            hits.update(map(base.__add__, docs) if base else docs)
    per_command: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for docnum, n in hits.items():
        coverage = n / len(words)
        name = mapping.command.get(docnum)
        if coverage >= TIER3_MIN_COVERAGE and name in by_name:
            per_command[name].append((coverage, mapping.day.get(docnum, 0)))
    today_day = today.toordinal()
    found: list[Found] = []
    for name, reports in per_command.items():
        best = max(c for c, _ in reports)
        matching = [d for c, d in reports if c == best]
        newest = max(matching)
        recency = 0.5 ** (max(0, today_day - newest) / RECENCY_HALF_LIFE_DAYS) if newest else 0.0
        evidence = min(1.0, math.log1p(len(matching)) / math.log1p(20))
        raw = 0.55 * best + 0.30 * evidence + 0.15 * recency
        verb = "mentions" if len(matching) == 1 else "mention"
        held = (
            "every query word"
            if best == 1.0
            else f"{round(best * len(words))} of {len(words)} query words"
        )
        when = f" (newest {date.fromordinal(newest).isoformat()})" if newest else ""
        found.append(
            Found(
                by_name[name], "tier3", raw, f"{len(matching)} of its reports {verb} {held}{when}"
            )
        )
    return found
