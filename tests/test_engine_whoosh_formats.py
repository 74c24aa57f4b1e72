"""The Whoosh engine's analyzer and postings formats: the postings Whoosh itself makes."""

from __future__ import annotations

import itertools
import random
import re
import zlib

import pytest
from whoosh.analysis import LowercaseFilter, RegexTokenizer  # noqa: TID251 (an engine test)
from whoosh.formats import Frequency, Positions  # noqa: TID251

from indexer.engine.postings import (
    HASH_BYTES,
    TermNumbers,
    frequency_bytes,
    next_tokens_frequency,
    token_hash,
)
from indexer.engine.whoosh.formats import FastFrequency, NextTokens, TokensAnalyzer
from indexer.sources import base, reports


def _random_texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    pieces = [
        "proxy", "Timeout", "WinHTTP", "407", "日志", "分析", "İstanbul", "ΟΔΟΣ", "ß", "ﬁle",
        "->", "...", " ", "\n", "\t", "_", "x86_64", "µm", "naïve", "", "Ǆ", "ς", "😀",
    ]  # fmt: skip
    return ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 40))) for _ in range(n)]


def _repetitive_texts(seed: int, n: int) -> list[str]:
    """Long texts of few words: frequencies of 128 and more (two bytes and more)."""
    rng = random.Random(seed)
    words = ["proxy", "timeout", "日志", "naïve", "x86_64"]
    return [" ".join(rng.choice(words) for _ in range(rng.randrange(100, 3000))) for _ in range(n)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_fast_formats_make_exactly_whooshs_postings(seed: int) -> None:
    frequency, fast_frequency = Frequency(field_boost=1.5), FastFrequency(field_boost=1.5)
    for text in _random_texts(seed, 300):
        # The tokenizers of the lower-cased text, and Whoosh's own tokenizer of it.
        for tokens, pattern in (
            (base.lower_words, base.TOKEN_PATTERN),
            (reports.tokens, reports.TOKEN_PATTERN),
        ):
            assert sorted(fast_frequency.word_values(text, TokensAnalyzer(tokens))) == sorted(
                frequency.word_values(text.lower(), RegexTokenizer(pattern))
            ), text


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_positions_are_those_of_whooshs_own_analyzer(seed: int) -> None:
    positions = Positions(field_boost=1.5)
    whooshs = RegexTokenizer(base.TOKEN_PATTERN) | LowercaseFilter()
    for text in _random_texts(seed, 300):
        assert sorted(positions.word_values(text, TokensAnalyzer(base.words))) == sorted(
            positions.word_values(text, whooshs)
        ), text


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_next_tokens_postings_hold_the_frequency_and_every_token_that_follows(seed: int) -> None:
    fmt = NextTokens(field_boost=1.5)
    analyzer = TokensAnalyzer(reports.tokens)
    for text in _random_texts(seed, 300) + _repetitive_texts(seed, 10):
        tokens = re.findall(reports.TOKEN_PATTERN, text.lower())
        values = list(fmt.word_values(text, analyzer))
        # Frequencies and weights as Whoosh's Frequency format has them.
        assert sorted((w, n, weight) for w, n, weight, _ in values) == sorted(
            (w, n, weight)
            for w, n, weight, _ in Frequency(field_boost=1.5).word_values(
                text.lower(), RegexTokenizer(reports.TOKEN_PATTERN)
            )
        ), text
        for term, n, _, value in values:
            assert fmt.decode_frequency(value) == n
            assert fmt.decode_weight(value) == n * 1.5
            after = {tokens[i + 1] for i in range(len(tokens) - 1) if tokens[i] == term}
            start = len(frequency_bytes(n))
            hashes = [value[i : i + HASH_BYTES] for i in range(start, len(value), HASH_BYTES)]
            assert hashes == sorted(set(hashes), key=lambda h: int.from_bytes(h, "little"))
            assert set(hashes) == {token_hash(t) for t in after}, (text, term)
        # Any other analyzer takes Whoosh's road through its tokens, to the same values.
        other = RegexTokenizer(reports.TOKEN_PATTERN)
        assert sorted(fmt.word_values(text.lower(), other)) == sorted(values), text


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pooled_columns_are_the_postings_word_values_makes(seed: int) -> None:
    """A document's postings as a writer pools them (its terms numbered across documents,
    weights times the document's boost) are word_values's."""
    fmt = NextTokens(field_boost=1.5)
    analyzer = TokensAnalyzer(reports.tokens)
    numbers = TermNumbers()
    texts = _random_texts(seed, 300) + _repetitive_texts(seed, 10)
    for text in random.Random(seed).sample(texts, len(texts)):
        pooled = fmt.pool_columns(text, analyzer, 2.0, numbers)
        assert pooled is not None
        doc, length, (words, sequence) = pooled
        tokens = reports.tokens(text)
        assert length == len(tokens) and [words[i] for i in sequence] == tokens
        ends = list(itertools.accumulate(doc.lengths.tolist()))
        values = [doc.values[start:end] for start, end in zip([0, *ends], ends)]
        assert len(doc.values) == (ends[-1] if ends else 0)
        got = [
            (numbers.words[k], weight, value)
            for k, weight, value in zip(doc.terms.tolist(), doc.weights.tolist(), values)
        ]
        expected = [(w, weight * 2.0, v) for w, _, weight, v in fmt.word_values(text, analyzer)]
        assert got == expected, text
    assert len(set(numbers.words)) == len(numbers.words)
    assert fmt.pool_columns(text, RegexTokenizer(reports.TOKEN_PATTERN), 1.0, numbers) is None


def test_a_frequency_takes_one_byte_below_128_and_reads_back_whatever_its_size() -> None:
    assert [len(frequency_bytes(n)) for n in (1, 127, 128, 16383, 16384, 2**32)] == [
        1,
        1,
        2,
        2,
        3,
        5,
    ]
    for n in [*range(1, 300), 16383, 16384, 2**21, 2**32 + 5]:
        # Read back with followers after it, whatever their bytes.
        assert next_tokens_frequency(frequency_bytes(n) + b"\xff\x80\x00") == n
    assert frequency_bytes(300) == bytes([300 & 0x7F | 0x80, 300 >> 7])
    for damaged in (b"", b"\x80", b"\xff\xff"):
        with pytest.raises(ValueError, match="not a next_tokens value"):
            next_tokens_frequency(damaged)


def test_a_tokens_hash_is_the_low_bytes_of_its_crc32() -> None:
    for token in ("proxy", "naïve", "日本", ""):
        crc = zlib.crc32(token.encode("utf-8"))
        assert token_hash(token) == crc.to_bytes(4, "little")[:HASH_BYTES]
    assert HASH_BYTES == 2


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_reports_tokens_are_the_token_patterns_matches_whatever_the_text(seed: int) -> None:
    rng = random.Random(seed)
    # ASCII, punctuation, every kind of space (Unicode ones too), accents and combining
    # marks, CJK, hangul, digits of other scripts, emoji.
    alphabet = (
        "aZ09_-.,;:!?()[]{}\"' \t\n\r\x0b\x0c\x1c\x85\u00a0\u1680\u2003\u2028\u3000\u200b"
        "\u00e9\u00df\u0130\u212a\u0301\u0660\u00b2\u2160\u4e2d\u6587\u3042\uac00\U0001f600"
    )
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        assert reports.tokens(text) == re.findall(reports.TOKEN_PATTERN, text.lower()), text
