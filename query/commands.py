"""search_commands, get_command, list_commands: finding the command for a job.

search_commands runs three tiers and merges them:

1. the command's file name: query keywords against the words of the name (split on
   ``_``, ``-``, case changes and digits), whole words or word starts only;
2. fuzzy matching (rapidfuzz) of the keywords against the words of the title,
   description, tags, other frontmatter values and body;
3. the command's reports: commands whose reports hold the query words, by how well the
   best report matches, how many match and how recent the newest is.

Each tier scores 0-1 within its own band (tier 1: 0.45-1, tier 2: 0.25-0.80, tier 3:
0.10-0.60), so a strong match of a higher tier (tier 1 covering every keyword, tier 2
at 70 % or more) outranks anything a lower tier can score, while a weak higher-tier
match can still fall below a strong lower-tier one. A command found by several tiers
is listed once, under its highest tier, with the best of its scores plus a bonus of at
most `EVIDENCE_BONUS` for what its other tiers found (so report evidence orders
commands that match a query's words equally well), and every reason.

CJK text is indexed one character per token, so a CJK keyword (a run of characters) is
looked up by its characters and matched on the field's text, as a whole or by the
character pairs it shares with it.

Commands are few: their stored fields are read once per index generation into a
`CommandCatalog`, so tiers 1 and 2 are work in memory.
"""

from __future__ import annotations

import bisect
import math
import os
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field
from rapidfuzz import fuzz, process

from indexer.engine.base import Snapshot
from indexer.files import SkipFile, read_file
from indexer.sources.base import CJK_CHARS, TOKEN_PATTERN, is_hidden
from indexer.sources.commands import CommandsSource, _as_tags
from query import budget, paging, parts, tools
from query.args import check_name, check_query
from query.context import QueryContext
from query.errors import TroveError
from query.freshness import Freshness, mark_stale, of_snapshot
from query.indexes import Derived, source_folder

COLLECTION = "commands"
Tier = Literal["tier1", "tier2", "tier3"]

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

_TOKEN = re.compile(TOKEN_PATTERN)
# Name pieces: split on anything but letters and digits (so on _ and -), then at case
# changes (fooBar, HTTPLog) and between letters and digits.
_SEPARATORS = re.compile(r"[\W_]+")
# CJK runs are words of their own, apart from the letters around them ("SDK日志").
_SCRIPTS = re.compile(rf"[{CJK_CHARS}]+|[^{CJK_CHARS}]+")
_CJK_WORD = re.compile(rf"[{CJK_CHARS}]{{2,}}")
# A CJK run may be wrapped over lines in markdown; it is still one run.
_CJK_RUN = re.compile(rf"[{CJK_CHARS}]+(?:[ \t]*\n\s*[{CJK_CHARS}]+)*")
_CASE_SPLIT = re.compile(
    r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z]{2})(?=[A-Z][a-z])|(?<=\D)(?=\d)|(?<=\d)(?=\D)"
)
_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "the",
        "this",
        "to",
        "what",
        "when",
        "where",
        "which",
        "why",
        "with",
    ]
)


# --------------------------------------------------------------------------- models


class CommandMatch(BaseModel):
    """One command found by search_commands."""

    id: str = Field(description="The command's name: what get_command and trove get take.")
    name: str = Field(description="Command name (the file name without .md).")
    score: float = Field(description="Relevance 0-1, higher is better; comparable across tiers.")
    tier: Tier = Field(
        description="The highest tier that found it: tier1 file name, tier2 content and "
        "frontmatter, tier3 the command's reports."
    )
    description: str = Field(
        description="The command's description (frontmatter, or its first paragraph)."
    )
    match_reason: str = Field(description="Why it matched: which words matched where.")
    stale: bool = Field(
        default=False,
        description="The command's file changed after the index read it: get_command shows it "
        "as it is.",
    )


class CommandSearchResponse(BaseModel):
    """The answer to search_commands."""

    results: list[CommandMatch] = Field(description="Best first.")
    search_time_ms: float = Field(description="Time the search took, in milliseconds.")
    total_found: int = Field(description="How many commands matched, before max_results.")
    next_offset: int | None = Field(default=None, description=paging.NEXT_OFFSET_DESCRIPTION)
    note: str | None = Field(default=None, description="Set when the page was cut to fit.")
    freshness: Freshness = Field(description="How current the index this answer read is.")


class CommandDetail(BaseModel):
    """One command in full (get_command)."""

    name: str = Field(description="Command name (the file name without .md).")
    title: str = Field(description="Title from the frontmatter (the name if none).")
    description: str = Field(
        description="Description from the frontmatter, or the first paragraph."
    )
    tags: list[str] = Field(description="Tags from the frontmatter.")
    frontmatter: dict[str, Any] = Field(
        description="The whole YAML frontmatter as JSON (empty if missing or malformed; a "
        "text over 1,000 characters is cut when the frontmatter would crowd the answer: "
        "see note)."
    )
    content: str = Field(
        description="The markdown body (the file without its frontmatter), lines start_line "
        "to end_line: a long body comes in parts (see next_offset)."
    )
    start_line: int = Field(description=parts.START_LINE + " Lines of the body.")
    end_line: int = Field(description=parts.END_LINE)
    total_lines: int = Field(description=parts.TOTAL_LINES)
    next_offset: int | None = Field(description=parts.NEXT_OFFSET)
    note: str | None = Field(default=None, description=parts.PART_NOTE)
    path: str = Field(description="Absolute path of the command file.")
    is_dependency: bool = Field(
        description="Whether it is a helper of other commands (is_dependency: true)."
    )


class CommandSummary(BaseModel):
    """One command in a listing."""

    id: str = Field(description="The command's name: what get_command and trove get take.")
    name: str = Field(description="Command name (the file name without .md).")
    description: str = Field(description="The command's description.")
    tags: list[str] = Field(description="Tags from the frontmatter.")
    is_dependency: bool = Field(description="Whether it is a helper of other commands.")
    stale: bool = Field(
        default=False, description="The command's file changed after the index read it."
    )


class CommandList(BaseModel):
    """The answer to list_commands."""

    commands: list[CommandSummary] = Field(description="By name.")
    total: int = Field(description="How many commands the listing holds in all.")
    next_offset: int | None = Field(default=None, description=paging.NEXT_OFFSET_DESCRIPTION)
    note: str | None = Field(default=None, description="Set when the list was cut to fit.")
    freshness: Freshness = Field(description="How current the index this answer read is.")


# --------------------------------------------------------------------------- words


def name_words(name: str) -> list[str]:
    """The words of a command name, lower-cased: split on _, -, case changes, digits and
    between CJK runs and other letters."""
    words: list[str] = []
    for part in _SEPARATORS.split(name):
        for run in _SCRIPTS.findall(part):
            words.extend(w.lower() for w in _CASE_SPLIT.split(run) if w)
    return words


def query_keywords(query: str) -> list[str]:
    """The query's keywords: its words split like names, without stop words (unless
    that leaves none), each once, in order."""
    words = name_words(query.lower())
    kept = [w for w in words if w not in _STOP_WORDS] or words
    return list(dict.fromkeys(kept))


def _text_words(text: str) -> set[str]:
    """The words of a text for tier 2: index tokens, and their pieces split like names."""
    words: set[str] = set()
    for token in _TOKEN.findall(text.lower()):
        words.add(token)
        if "_" in token or any(c.isdigit() for c in token):
            words.update(name_words(token))
    return words


def _cjk_runs(text: str) -> str:
    """The CJK runs of a text, one space between runs, none inside a wrapped one."""
    return " ".join("".join(run.split()) for run in _CJK_RUN.findall(text))


def _word_match(keyword: str, word: str) -> float:
    """How well a keyword matches one word of a name: 1 same word, 0.8 one starts the
    other, 0.7 a shared stem (analysis/analyze), else 0."""
    if keyword == word:
        return 1.0
    if keyword[:1] != word[:1]:  # every other match shares a start
        return 0.0
    if (len(keyword) >= 3 and word.startswith(keyword)) or (
        len(word) >= 3 and keyword.startswith(word)
    ):
        return 0.8
    common = len(os.path.commonprefix((keyword, word)))
    if common >= 4 and common >= 0.7 * min(len(keyword), len(word)):
        return 0.7
    return 0.0


def _shown(word: str, keyword: str | None = None) -> str:
    """'word', or 'word' (for 'keyword') when the query said it differently."""
    return f"'{word}'" if keyword is None or keyword == word else f"'{word}' (for '{keyword}')"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# --------------------------------------------------------------------------- the catalog


@dataclass
class Command:
    """A command as the index holds it."""

    name: str
    key: str
    title: str
    description: str
    tags: list[str]
    is_dependency: bool
    frontmatter: dict[str, Any]
    words: list[str]  # of the name
    fields: dict[str, set[str]]
    cjk: dict[str, str]  # per field, its CJK runs (see _cjk_runs)


@dataclass
class CommandCatalog:
    """Every command of one index generation, with the word lists tiers 1 and 2 use."""

    commands: list[Command]
    # word -> [(command index, field)] and the sorted words, for prefix look-ups
    postings: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    vocabulary: list[str] = field(default_factory=list)

    @classmethod
    def from_snapshot(cls, snapshot: Snapshot) -> CommandCatalog:
        commands: list[Command] = []
        everything = (s for segment, _ in snapshot.segments() for _, s in segment.live_stored())
        for stored in everything:
            if stored.get("kind") != "doc":
                continue
            meta = stored.get("frontmatter") or {}
            tags = _as_tags(meta.get("tags")) if "tags" in meta else stored.get("tags", "").split()
            other = " ".join(
                _flatten(v)
                for k, v in meta.items()
                if k not in ("title", "description", "tags", "is_dependency")
            )
            texts = {
                "title": stored.get("title", ""),
                "tags": " ".join(tags),
                "description": stored.get("description", ""),
                "frontmatter": other,
                "body": stored.get("body", ""),
            }
            commands.append(
                Command(
                    name=stored["name"],
                    key=stored["key"],
                    title=stored.get("title", ""),
                    description=stored.get("description", ""),
                    tags=tags,
                    is_dependency=bool(stored.get("is_dependency")),
                    frontmatter=meta,
                    words=name_words(stored["name"]),
                    fields={f: _text_words(text) for f, text in texts.items()},
                    cjk={f: _cjk_runs(text) for f, text in texts.items()},
                )
            )
        commands.sort(key=lambda c: c.name)
        catalog = cls(commands)
        postings: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for i, command in enumerate(commands):
            for field_name, words in command.fields.items():
                for word in words:
                    postings[word].append((i, field_name))
        catalog.postings = dict(postings)
        catalog.vocabulary = sorted(postings)
        return catalog


def _flatten(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(f"{k} {_flatten(v)}" for k, v in value.items())
    if isinstance(value, list):
        return " ".join(_flatten(v) for v in value)
    return "" if value is None or isinstance(value, bool) else str(value)


@dataclass
class _ReportMap:
    """Per document of the reports index: the command it belongs to and its day (a date
    ordinal; 0 undated)."""

    command: dict[int, str]
    day: dict[int, int]


class CommandsCache:
    """What the command searches keep between queries (one per process)."""

    def __init__(self) -> None:
        self._catalog: Derived[CommandCatalog] = Derived()
        self._reports: Derived[_ReportMap] = Derived()

    def catalog(self, snapshot: Snapshot) -> CommandCatalog:
        return self._catalog.get(snapshot.stamp, lambda: CommandCatalog.from_snapshot(snapshot))

    def reports(self, snapshot: Snapshot) -> _ReportMap:
        return self._reports.get(snapshot.stamp, lambda: _report_map(snapshot))


def _report_map(snapshot: Snapshot) -> _ReportMap:
    mapping = _ReportMap({}, {})
    for segment, base in snapshot.segments():
        days = segment.int_column("day")
        for name in segment.lexicon("command"):
            for docnum in segment.docs_with("command", [name]):
                mapping.command[base + docnum] = name
                mapping.day[base + docnum] = days[docnum]
    return mapping


# --------------------------------------------------------------------------- tiers


@dataclass
class _Found:
    command: Command
    tier: Tier
    raw: float
    reason: str

    @property
    def score(self) -> float:
        low, high = BANDS[self.tier]
        return low + (high - low) * min(1.0, max(0.0, self.raw))


def tier1(catalog: list[Command], keywords: list[str]) -> list[_Found]:
    """Keywords against the words of each command's name."""
    found: list[_Found] = []
    for command in catalog:
        words = command.words
        if not words:
            continue
        matched: dict[int, str | None] = {}  # name word index -> the keyword, if not the same
        total = 0.0
        for kw in keywords:
            best, where = 0.0, -1
            for i, word in enumerate(words):
                m = _word_match(kw, word)
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
        shown = [_shown(words[i], matched[i]) for i in sorted(matched)]
        found.append(_Found(command, "tier1", raw, f"File name contains {_and(shown)}"))
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
    if _CJK_WORD.fullmatch(keyword):
        yield from _cjk_hits(catalog, keyword)
        return
    for word, sim in _similar_words(catalog, keyword).items():
        for i, field_name in catalog.postings[word]:
            yield i, field_name, sim, word


def tier2(
    catalog: CommandCatalog, visible: set[int], keywords: list[str], deadline: float
) -> list[_Found]:
    """Keywords, fuzzily, against title, tags, description, frontmatter and body."""
    # per command: keyword -> (value, field, word)
    best: dict[int, dict[str, tuple[float, str, str]]] = defaultdict(dict)
    for kw in keywords:
        _check_deadline(deadline)
        for i, field_name, sim, word in _keyword_hits(catalog, kw):
            if i not in visible:
                continue
            value = sim * FIELD_WEIGHTS[field_name]
            have = best[i].get(kw)
            if have is None or value > have[0] or (value == have[0] and word == kw):
                best[i][kw] = (value, field_name, word)
    found: list[_Found] = []
    for i, per_keyword in best.items():
        raw = sum(v for v, _, _ in per_keyword.values()) / len(keywords)
        if raw < TIER2_MIN:
            continue
        by_field: dict[str, list[str]] = defaultdict(list)
        for kw in keywords:
            if kw in per_keyword:
                _, field_name, word = per_keyword[kw]
                by_field[field_name].append(_shown(word, kw))
        parts = [
            f"{_and(words)} in {FIELD_WORDS[f]}"
            for f in FIELD_WEIGHTS
            if (words := by_field.get(f))
        ]
        found.append(_Found(catalog.commands[i], "tier2", raw, "Matches " + "; ".join(parts)))
    return found


def _report_words(query: str) -> list[str]:
    words = [w for w in _TOKEN.findall(query.lower()) if w not in _STOP_WORDS]
    return list(dict.fromkeys(words or _TOKEN.findall(query.lower())))


def _first_word(term: str) -> str:
    m = _TOKEN.match(term)
    return m.group() if m else ""


def tier3(
    snapshot: Snapshot,
    cache: CommandsCache,
    by_name: dict[str, Command],
    words: list[str],
    today: date,
    deadline: float,
) -> list[_Found]:
    """Commands whose reports hold the query's words."""
    if not words:
        return []
    mapping = cache.reports(snapshot)
    hits: Counter[int] = Counter()  # report -> how many query words it holds
    for segment, base in snapshot.segments():
        lex = segment.lexicon("content")
        for word in words:
            _check_deadline(deadline)
            # Index terms are words, or words with the punctuation after them: any term
            # whose first word is this word holds it.
            terms = [t for k in lex.starting_with(word) if _first_word(t := lex.term(k)) == word]
            docs = segment.docs_with("content", terms)
            hits.update(map(base.__add__, docs) if base else docs)
    per_command: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for docnum, n in hits.items():
        coverage = n / len(words)
        name = mapping.command.get(docnum)
        if coverage >= TIER3_MIN_COVERAGE and name in by_name:
            per_command[name].append((coverage, mapping.day.get(docnum, 0)))
    today_day = today.toordinal()
    found: list[_Found] = []
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
            _Found(
                by_name[name], "tier3", raw, f"{len(matching)} of its reports {verb} {held}{when}"
            )
        )
    return found


# --------------------------------------------------------------------------- the searches


def _check_deadline(deadline: float) -> None:
    if time.monotonic() >= deadline:
        raise TroveError(
            "SEARCH_TIMEOUT",
            "the command search took longer than [commands] search_timeout_ms allows; "
            "use fewer or more specific words, or raise the timeout",
        )


def _commands_root(ctx: QueryContext) -> Path:
    return source_folder(ctx.settings, "commands")


def _catalog(ctx: QueryContext) -> CommandCatalog:
    with _catalogued(ctx) as (catalog, _):
        return catalog


@contextmanager
def _catalogued(ctx: QueryContext) -> Iterator[tuple[CommandCatalog, Snapshot | None]]:
    """The catalog, and the snapshot of the commands index it comes from (held open)."""
    cache: CommandsCache = _memo(ctx)
    # An index never built is built first (commands are few).
    with ctx.indexes.snapshot(COLLECTION, build=True) as snapshot:
        yield (CommandCatalog([]) if snapshot is None else cache.catalog(snapshot)), snapshot


_Listed = TypeVar("_Listed", "CommandMatch", "CommandSummary")


def _marked(
    ctx: QueryContext, snapshot: Snapshot | None, root: Path, hits: Sequence[_Listed]
) -> Freshness:
    """The answer's freshness, and each hit's ``stale`` set."""
    if snapshot is not None:
        mark_stale(snapshot, root, hits, lambda h: f"{h.name}.md")
    return of_snapshot(ctx.watcher, COLLECTION, snapshot)


def _readable(root: Path, command: Command) -> bool:
    return os.access(root / command.key, os.R_OK) and (root / command.key).is_file()


def search_commands(
    ctx: QueryContext,
    query: str,
    max_results: int = tools.SEARCH_COMMANDS_RESULTS.default,
    offset: int = 0,
) -> CommandSearchResponse:
    """Commands for a job, by file name (tier 1), content (tier 2) and reports (tier 3).

    Commands marked ``is_dependency: true`` and commands whose file is gone are left out.
    SEARCH_TIMEOUT past ``[commands] search_timeout_ms``.
    """
    started = time.monotonic()
    text = check_query(query)
    tools.SEARCH_COMMANDS_RESULTS.check(max_results)
    offset = tools.check_offset(offset, max_results)
    root = _commands_root(ctx)
    deadline = started + ctx.settings.commands.search_timeout_ms / 1000
    with _catalogued(ctx) as (catalog, snapshot):
        found = _search(ctx, catalog, snapshot, root, text, max_results, offset, started, deadline)
    budget.fit_page(
        found,
        "results",
        offset,
        budget.limit_for(max_results == tools.SEARCH_COMMANDS_RESULTS.default),
    )
    return found


def _search(
    ctx: QueryContext,
    catalog: CommandCatalog,
    snapshot: Snapshot | None,
    root: Path,
    text: str,
    max_results: int,
    offset: int,
    started: float,
    deadline: float,
) -> CommandSearchResponse:
    _check_deadline(deadline)
    visible = {i for i, c in enumerate(catalog.commands) if not c.is_dependency}
    keywords = query_keywords(text)

    found: list[_Found] = []
    if keywords:
        found += tier1([catalog.commands[i] for i in sorted(visible)], keywords)
        _check_deadline(deadline)
        found += tier2(catalog, visible, keywords, deadline)
        _check_deadline(deadline)
    reports_root = ctx.settings.source_root("reports")
    if reports_root is not None and reports_root.is_dir():
        by_name = {catalog.commands[i].name: catalog.commands[i] for i in visible}
        cache: CommandsCache = _memo(ctx)
        # A reports index never built is no evidence: building it (a minute for 10k
        # reports) is for reindex, the watcher or search_reports, not this deadline.
        with ctx.indexes.snapshot("reports") as reports:
            if reports is not None:
                found += tier3(reports, cache, by_name, _report_words(text), date.today(), deadline)
        _check_deadline(deadline)

    alive = [m for m in _merge(found) if _readable(root, m.found.command)]
    alive.sort(key=lambda m: (-m.score, -m.bonus, m.found.command.name))
    shown, more = paging.page(alive, offset, max_results)
    results = [
        CommandMatch(
            id=m.found.command.name,
            name=m.found.command.name,
            score=round(m.score, 3),
            tier=m.found.tier,
            description=budget.clip(m.found.command.description),
            match_reason=budget.clip(m.reason),
        )
        for m in shown
    ]
    fresh = _marked(ctx, snapshot, root, results)
    return CommandSearchResponse(
        results=results,
        search_time_ms=round((time.monotonic() - started) * 1000, 1),
        total_found=len(alive),
        next_offset=more,
        freshness=fresh,
    )


@dataclass
class _Merged:
    found: _Found  # of the highest tier
    score: float
    bonus: float  # what the other tiers added, up to EVIDENCE_BONUS
    reason: str


def _merge(found: list[_Found]) -> list[_Merged]:
    """One entry per command: its highest tier, its best score plus a bonus for what
    its other tiers found, every tier's reason."""
    by_name: dict[str, list[_Found]] = defaultdict(list)
    for f in found:
        by_name[f.command.name].append(f)
    merged = []
    for finds in by_name.values():
        finds.sort(key=lambda f: f.tier)
        best = max(finds, key=lambda f: f.score)
        # Each other tier's raw score closes part of the gap to a full bonus, so more
        # evidence counts for more, never past EVIDENCE_BONUS.
        missing = math.prod(1 - min(1.0, max(0.0, f.raw)) for f in finds if f is not best)
        bonus = EVIDENCE_BONUS * (1 - missing)
        merged.append(
            _Merged(
                finds[0],
                min(1.0, best.score + bonus),
                bonus,
                "; ".join(f.reason for f in finds),
            )
        )
    return merged


def get_command(
    ctx: QueryContext,
    name: str,
    offset: int | None = None,
    limit: int | None = None,
    *,
    whole: bool = False,
) -> CommandDetail:
    """One command, read from its file (``name`` without or with ``.md``): all of it, or
    its body from line ``offset`` (``limit`` lines, or as many as fit; query/parts.py).
    ``whole``: everything, whatever its size (the web page)."""
    name = check_name(name, "command name", "INVALID_ARGUMENT")
    first, count = parts.check_part(offset, limit)
    if name.lower().endswith(".md"):
        name = name[:-3]
    root = _commands_root(ctx)
    rel = f"{name}.md"
    path = root / rel
    try:
        if is_hidden(rel) or not path.is_file():
            raise FileNotFoundError(rel)
        data = read_file(root, rel, parts.READ_MAX_BYTES)
    except (FileNotFoundError, SkipFile):
        raise TroveError(
            "NOT_FOUND",
            f"no command named {name!r}.{_suggest(ctx, name)} list_commands shows every command",
        ) from None
    doc = CommandsSource().parse(data).documents[0]
    meta = doc["frontmatter"]
    detail = CommandDetail(
        name=name,
        title=doc["title"],
        description=doc["description"],
        tags=_as_tags(meta.get("tags")),
        frontmatter=meta,
        content="",
        start_line=first,
        end_line=first - 1,
        total_lines=0,
        next_offset=None,
        path=str(path),
        is_dependency=doc["is_dependency"],
    )
    crowded = not whole and budget.size(detail) > budget.DEFAULT_CHARS // 2
    if crowded:  # the metadata alone would leave the body little room: its long texts cut
        detail.title, detail.description = (
            budget.clip(detail.title),
            budget.clip(detail.description),
        )
        detail.tags = [budget.clip(t) for t in detail.tags[:100]]
        detail.frontmatter = budget.clip_values(meta)
    detail = parts.filled(detail, doc["body"], first, count, whole)
    if crowded:
        said = (
            "long texts of the frontmatter, title, description or tags were cut to "
            f"{budget.FIELD_CHARS:,} characters; the file ({detail.path}) has them whole"
        )
        detail.note = f"{said}; {detail.note}" if detail.note else said
    return detail


def _suggest(ctx: QueryContext, name: str) -> str:
    names = [c.name for c in _catalog(ctx).commands]
    close = [
        n for n, _, _ in process.extract(name, names, scorer=fuzz.WRatio, limit=3, score_cutoff=60)
    ]
    return f" Did you mean {_and([_shown(n) for n in close])}?" if close else ""


def list_commands(
    ctx: QueryContext,
    include_dependencies: bool = False,
    max_results: int = tools.LIST_COMMANDS_RESULTS.default,
    offset: int = 0,
) -> CommandList:
    """The commands (helpers marked is_dependency only when asked for), by name: the page
    of ``max_results`` from command ``offset`` on (the spec lists them all; a long list
    comes in pages to keep the answer's size)."""
    if not isinstance(include_dependencies, bool):
        raise TroveError(
            "INVALID_ARGUMENT",
            f"include_dependencies must be true or false, got {include_dependencies!r}",
        )
    tools.LIST_COMMANDS_RESULTS.check(max_results)
    offset = tools.LIST_OFFSET.check(offset)
    root = _commands_root(ctx)
    with _catalogued(ctx) as (catalog, snapshot):
        chosen = [
            c
            for c in catalog.commands
            if (include_dependencies or not c.is_dependency) and _readable(root, c)
        ]
        shown, more = paging.page(chosen, offset, max_results)
        listed = [
            CommandSummary(
                id=c.name,
                name=c.name,
                description=budget.clip(c.description),
                tags=[budget.clip(t) for t in c.tags],
                is_dependency=c.is_dependency,
            )
            for c in shown
        ]
        answer = CommandList(
            commands=listed,
            total=len(chosen),
            next_offset=more,
            freshness=_marked(ctx, snapshot, root, listed),
        )
    budget.fit_page(
        answer,
        "commands",
        offset,
        budget.limit_for(max_results == tools.LIST_COMMANDS_RESULTS.default),
    )
    return answer


def _memo(ctx: QueryContext) -> CommandsCache:
    memo = ctx.memo.get("commands")
    if memo is None:
        memo = ctx.memo.setdefault("commands", CommandsCache())
    return memo
