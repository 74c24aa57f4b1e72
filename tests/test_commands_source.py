"""CommandsSource: a command file -> its document, frontmatter well-formed or not."""

from __future__ import annotations

from indexer.sources.base import FileData
from indexer.sources.commands import CommandsSource, first_paragraph


def fd(rel: str, text: str) -> FileData:
    data = text.encode()
    return FileData(rel=rel, data=data, mtime_ns=0, size=len(data))


def test_malformed_frontmatter_is_not_taken_as_the_description() -> None:
    text = "---\ntitle: DNS\ntags: [dns, resolver\n---\n# DNS\n\nChecks DNS resolution.\n"
    (doc,) = CommandsSource().parse(fd("dns.md", text)).documents
    assert doc["description"] == "Checks DNS resolution."
    assert "tags: [dns, resolver" in doc["body"]  # the body still indexes everything


def test_first_paragraph_skips_only_a_leading_closed_block() -> None:
    assert first_paragraph("\n---\na: [b\n---\n\nProse\nhere.\n") == "Prose here."
    assert first_paragraph("---\nnot closed\n") == "--- not closed"
    assert first_paragraph("Prose.\n\n---\na: b\n---\n") == "Prose."
