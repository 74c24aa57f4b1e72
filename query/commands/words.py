"""The words of command names, queries and texts, as the command searches split them."""

from __future__ import annotations

import os
import re

from indexer.cjk import CJK_CHARS
from indexer.sources.base import TOKEN_PATTERN

TOKEN = re.compile(TOKEN_PATTERN)
# Name pieces: split on anything but letters and digits (so on _ and -), then at case
# changes (fooBar, HTTPLog) and between letters and digits.
_SEPARATORS = re.compile(r"[\W_]+")
# CJK runs are words of their own, apart from the letters around them ("SDK日志").
_SCRIPTS = re.compile(rf"[{CJK_CHARS}]+|[^{CJK_CHARS}]+")
CJK_WORD = re.compile(rf"[{CJK_CHARS}]{{2,}}")
# A CJK run may be wrapped over lines in markdown; it is still one run.
_CJK_RUN = re.compile(rf"[{CJK_CHARS}]+(?:[ \t]*\n\s*[{CJK_CHARS}]+)*")
_CASE_SPLIT = re.compile(
    r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z]{2})(?=[A-Z][a-z])|(?<=\D)(?=\d)|(?<=\d)(?=\D)"
)
STOP_WORDS = frozenset(
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
    kept = [w for w in words if w not in STOP_WORDS] or words
    return list(dict.fromkeys(kept))


def text_words(text: str) -> set[str]:
    """The words of a text for tier 2: index tokens, and their pieces split like names."""
    words: set[str] = set()
    for token in TOKEN.findall(text.lower()):
        words.add(token)
        if "_" in token or any(c.isdigit() for c in token):
            words.update(name_words(token))
    return words


def cjk_runs(text: str) -> str:
    """The CJK runs of a text, one space between runs, none inside a wrapped one."""
    return " ".join("".join(run.split()) for run in _CJK_RUN.findall(text))


def word_match(keyword: str, word: str) -> float:
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


def quoted(word: str, keyword: str | None = None) -> str:
    """'word', or 'word' (for 'keyword') when the query said it differently."""
    return f"'{word}'" if keyword is None or keyword == word else f"'{word}' (for '{keyword}')"


def and_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def report_words(query: str) -> list[str]:
    """The query's words as the reports index holds them, without stop words (unless that
    leaves none), each once."""
    words = [w for w in TOKEN.findall(query.lower()) if w not in STOP_WORDS]
    return list(dict.fromkeys(words or TOKEN.findall(query.lower())))


def first_word(term: str) -> str:
    m = TOKEN.match(term)
    return m.group() if m else ""
