"""query/reports/text_count.py: counting in many texts at once gives bytes.count's counts."""

from __future__ import annotations

import random

import pytest

from indexer.engine.scan.segment import _Column
from query.reports import text_count
from query.reports.text_count import counts_in, counts_in_column

ALPHABET = [b"a", b"b", b" ", b"\xc3\xa9", b"e", b"\n"]  # 'é' is two bytes


def texts_and_needle(rng: random.Random) -> tuple[list[bytes], bytes]:
    texts = [
        b"".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 30)))
        for _ in range(rng.randint(0, 8))
    ]
    needle = b"".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 4)))
    long = [t for t in texts if len(t) > 9]
    if long and rng.random() < 0.3:  # longer than the bytes checked one at a time
        t = rng.choice(long)
        a = rng.randrange(len(t) - 9)
        needle = t[a : rng.randint(a + 9, len(t))]
    return texts, needle


def test_counts_are_those_of_bytes_count_in_each_text() -> None:
    """Matches never cross from one text into the next, and overlapping ones ('aa' in
    'aaa') count once, as bytes.count counts them."""
    rng = random.Random(5)
    for _ in range(3000):
        texts, needle = texts_and_needle(rng)
        got = counts_in(b"".join(texts), [len(t) for t in texts], needle).tolist()
        assert got == [t.count(needle) for t in texts], (texts, needle)


@pytest.mark.parametrize("run_bytes", [1, 7, 1 << 20])
def test_a_column_is_counted_in_runs_on_threads_all_the_same(monkeypatch, run_bytes) -> None:
    monkeypatch.setattr(text_count, "RUN_BYTES", run_bytes)
    rng = random.Random(run_bytes)
    for _ in range(200):
        texts, needle = texts_and_needle(rng)
        texts.append(b"")  # a document without text
        got = counts_in_column(_Column(texts), len(texts), needle).tolist()
        assert got == [t.count(needle) for t in texts], (texts, needle)
