"""What every collection source has: which files belong to it, and file -> documents."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar, Protocol

import Stemmer

from indexer.cjk import CJK_CHARS
from indexer.engine.fields import Field

# Word runs, and each CJK character a token of its own (indexer/cjk.py).
TOKEN_PATTERN = rf"[{CJK_CHARS}]|[^\W{CJK_CHARS}]+"
_WORD = re.compile(TOKEN_PATTERN)


_CJK_START = re.compile(rf"[{CJK_CHARS}]")
_stemmer = Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The English Snowball stem of a lower-cased word (PyStemmer); CJK, numbers and
    device names (anything not all letters) as they are. The one stemming rule: the
    indexer's stemmed fields and the searches' query words both use it."""
    if _CJK_START.match(word) or not word.isalpha():
        return word
    return str(_stemmer.stemWord(word))


def words(text: str) -> list[str]:
    """Word runs and single CJK characters, each lower-cased; no stemming, no stop words.

    Stop words and stemming would make some exact substrings unfindable; the query
    layer verifies candidates on the text, so the index only has to never miss one.
    """
    return [w.lower() for w in _WORD.findall(text)]


def lower_words(text: str) -> list[str]:
    """Word runs and single CJK characters of the lower-cased text.

    Lower-casing first makes the words exactly the pieces of ``text.lower()``, the
    string a search counts occurrences in (lower-casing can change a text's length).
    """
    return _WORD.findall(text.lower())


@dataclass
class FileData:
    """One file as read from disk: its bytes (possibly capped) and how it was read."""

    rel: str
    data: bytes
    mtime_ns: int
    size: int
    truncated: bool = False
    # Set by text() when some bytes were not UTF-8 and were replaced.
    replaced: bool = False

    @property
    def hash(self) -> str:
        return hashlib.blake2b(self.data, digest_size=16).hexdigest()

    def text(self) -> str:
        """The bytes as text: UTF-8, undecodable bytes replaced (and ``replaced`` set)."""
        try:
            text = self.data.decode("utf-8")
        except UnicodeDecodeError:
            text = self.data.decode("utf-8", errors="replace")
            self.replaced = True
        return text.removeprefix("\ufeff")


@dataclass
class Parsed:
    """What a source made of one file: documents, plus notes worth reporting."""

    documents: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class Source(Protocol):
    """A collection's view of its folder. Adding a collection is one module like this."""

    name: ClassVar[str]
    # Bump when the schema or the mapping from files to documents changes: an index of
    # another version is rebuilt, never misread.
    schema_version: ClassVar[int]
    # Whether a search ranks this collection with BM25. Only then do the postings need
    # each document's field length; leaving it out saves ~18% of a build's CPU.
    scored: ClassVar[bool]

    def fields(self) -> tuple[Field, ...]:
        """Fields of this collection's documents (the engine adds the store's bookkeeping)."""
        ...

    def wants_dir(self, parts: tuple[str, ...]) -> bool:
        """Whether a folder (path parts relative to the root) may hold files of ours."""
        ...

    def wants_file(self, parts: tuple[str, ...]) -> bool:
        """Whether a file (path parts relative to the root) belongs to this collection."""
        ...

    def parse(self, file: FileData) -> Parsed:
        """The documents one file holds; each needs a unique ``key``."""
        ...


def is_hidden(name: str) -> bool:
    """Dot files, editor backups and swap files: never part of a collection."""
    return name.startswith((".", "#")) or name.endswith(("~", ".swp", ".swx", ".tmp"))
