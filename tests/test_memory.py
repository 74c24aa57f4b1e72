"""Giving freed heap back to the system (indexer/memory.py)."""

from __future__ import annotations

import platform

import pytest

from indexer import memory


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_the_heap_is_trimmed_where_the_c_library_can() -> None:
    assert memory.release_free_memory() is True


def test_without_malloc_trim_nothing_is_called_and_nothing_fails(monkeypatch) -> None:
    monkeypatch.setattr(memory.ctypes.util, "find_library", lambda name: None)
    memory._malloc_trim.cache_clear()
    try:
        assert memory.release_free_memory() is False
    finally:
        memory._malloc_trim.cache_clear()
