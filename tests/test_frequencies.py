"""A term's postings read into arrays (indexer/engine/whoosh/frequencies.py): the blocks
as TroveCodec writes them are read without pickle's machinery, any other form through
pickle, with the same arrays. (Every term of a real index against Whoosh's own reading of
its blocks: tests/test_reports_related.py.)"""

from __future__ import annotations

import pickle
import zlib
from array import array
from typing import Any

import numpy as np
import pytest

from indexer.engine.whoosh import frequencies
from indexer.engine.whoosh.codec import PackedValues, compact
from indexer.engine.whoosh.frequencies import read_frequencies

MAGIC = b"TEST"


def posting_list(
    blocks: list[tuple[Any, Any]], *, protocol: int = 5, compress: bool = False
) -> bytes:
    """A posting list of these blocks (ids as differences, weights), each with its info,
    pickled as TroveCodec pickles them unless told otherwise."""
    out = bytearray(MAGIC)
    for i, (ids, weights) in enumerate(blocks):
        data = pickle.dumps((ids, weights, PackedValues.of([b"v"] * len(ids))), protocol)
        if compress:
            data = zlib.compress(data)
        # The max weight as TroveCodec writes it: an int when whole (pickled in 1 to 4
        # bytes), else a float.
        top = 1.0 if weights is None else weights if isinstance(weights, float) else max(weights)
        top = int(top) if float(top).is_integer() else top
        info = pickle.dumps((len(ids), sum(ids), top, int(compress), 0, 0), 2)
        body = info + data
        size = -len(body) if i == len(blocks) - 1 else len(body)
        out += size.to_bytes(4, "big", signed=True) + body
    return bytes(out)


def expected(blocks: list[tuple[Any, Any]]) -> tuple[list[int], list[float]]:
    docs: list[int] = []
    weights: list[float] = []
    for ids, w in blocks:
        docs.extend(np.cumsum(list(ids)).tolist())
        if w is None or isinstance(w, float):
            weights.extend([w or 1.0] * len(ids))
        else:
            weights.extend(float(x) for x in w)
    return docs, weights


# The largest id difference of each form of ids: compact() makes arrays of 1, 2, 4 bytes.
ID_RANGES = {"1 byte": 200, "2 bytes": 60_000, "4 bytes": 10**6}


def blocks_of(
    rng: np.random.Generator, sizes: list[int], weights: str, ids_form: str = "4 bytes"
) -> list[tuple[Any, Any]]:
    made = []
    for n in sizes:
        ids = compact(rng.integers(1, ID_RANGES[ids_form], n).tolist())
        if weights == "none":
            w: Any = None
        elif weights == "one float":
            w = 3.0
        elif weights == "floats":  # as a field boosted by 1.5 has them
            w = array("f", (rng.integers(1, 50, n) * 1.5).tolist())
        elif weights == "counts":
            w = compact(rng.integers(1, 50, n).tolist())
        elif weights == "large counts":
            w = compact(rng.integers(1, 60_000, n).tolist())
        else:  # "huge counts": past 2 bytes, kept as floats
            w = array("f", rng.integers(1, 100_000, n).astype(float).tolist())
        made.append((ids, w))
    return made


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("ids_form", list(ID_RANGES))
@pytest.mark.parametrize(
    "weights", ["none", "one float", "floats", "counts", "large counts", "huge counts"]
)
@pytest.mark.parametrize("sizes", [[1], [128], [128, 128, 7], [128] * 3 + [255]])
def test_trovecodec_blocks_are_read_without_pickle(
    monkeypatch: pytest.MonkeyPatch, sizes: list[int], weights: str, ids_form: str, compress: bool
) -> None:
    rng = np.random.default_rng(len(sizes) * 7 + sum(sizes))
    blocks = blocks_of(rng, sizes, weights, ids_form)
    data = posting_list(blocks, compress=compress)

    def no_pickle(*args: Any) -> Any:
        raise AssertionError("read through pickle")

    monkeypatch.setattr(frequencies, "loads", no_pickle)
    monkeypatch.setattr(frequencies, "Unpickler", no_pickle)
    docs, found = read_frequencies(data, MAGIC)
    assert docs.dtype == np.int64 and found.dtype == np.float64
    assert (docs.tolist(), found.tolist()) == expected(blocks)


@pytest.mark.parametrize(
    "form",
    [
        "protocol 4",
        "ids as a list",
        "weights as a tuple",
        "300 postings a block",
        "signed ids",
        "weights as doubles",
    ],
)
def test_blocks_in_any_other_form_are_read_through_pickle_the_same(form: str) -> None:
    rng = np.random.default_rng(5)
    sizes = [300, 12] if form == "300 postings a block" else [128, 40]
    blocks = blocks_of(rng, sizes, "floats")
    if form == "ids as a list":
        blocks = [(list(ids), w) for ids, w in blocks]
    elif form == "weights as a tuple":
        blocks = [(ids, tuple(w)) for ids, w in blocks]
    elif form == "signed ids":
        blocks = [(array("i", ids), w) for ids, w in blocks]
    elif form == "weights as doubles":
        blocks = [(ids, array("d", w)) for ids, w in blocks]
    data = posting_list(blocks, protocol=4 if form == "protocol 4" else 5)
    docs, found = read_frequencies(data, MAGIC)
    assert (docs.tolist(), found.tolist()) == expected(blocks)


def test_postings_of_another_codec_are_refused() -> None:
    with pytest.raises(ValueError, match="not of Whoosh's W3 codec"):
        read_frequencies(b"XXXX" + posting_list([(array("I", [1]), None)])[4:], MAGIC)


def test_a_block_cut_short_in_its_weights_is_refused_as_pickle_refuses_it() -> None:
    blocks = blocks_of(np.random.default_rng(9), [128], "floats")
    data = posting_list(blocks)
    cut = data[: data.index(bytes(blocks[0][1])[:8]) + 100]  # within the weights' bytes
    with pytest.raises(Exception):  # noqa: B017 (pickle's own error, whichever it is)
        read_frequencies(cut, MAGIC)
