from __future__ import annotations

from datetime import date

import pytest

from indexer.sources.base import FileData, words
from indexer.sources.commands import CommandsSource, first_paragraph
from indexer.sources.conversations import ConversationsSource, date_folder
from indexer.sources.reports import ReportsSource, date_from_name


def fd(rel: str, text: str | bytes) -> FileData:
    data = text.encode() if isinstance(text, str) else text
    return FileData(rel=rel, data=data, mtime_ns=0, size=len(data))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("speech_20251120_decode_v2.md", date(2025, 11, 20)),
        ("proxy-slow-meeting-analysis-command_报告_20251201_172952_v1.md", date(2025, 12, 1)),
        ("proxy-report-2025-11-18-acme.md", date(2025, 11, 18)),
        ("tls_2025_10_03.md", date(2025, 10, 3)),
        ("run_20251201172952.md", date(2025, 12, 1)),
        ("id_120251201.md", None),  # a YYYYMMDD must start its digit run
        ("bad_20251340.md", None),  # impossible month: no date, never rolled over
        ("bad_2025-02-30.md", None),
        ("leap_2024-02-29.md", date(2024, 2, 29)),
        ("first_invalid_then_valid_20251340_2025_03_01.md", date(2025, 3, 1)),
        ("two_2025-01-02_20240101.md", date(2025, 1, 2)),
        ("baseline-notes.md", None),
    ],
)
def test_report_date_comes_from_the_first_valid_date_in_the_name(name: str, expected) -> None:
    assert date_from_name(name) == expected


def test_a_report_becomes_one_document_with_command_and_day() -> None:
    parsed = ReportsSource().parse(fd("proxy-cmd/r_2025-11-18.md", "proxy timeout"))
    (doc,) = parsed.documents
    assert doc["key"] == "proxy-cmd/r_2025-11-18.md"
    assert doc["command"] == "proxy-cmd"
    assert doc["report_name"] == "r_2025-11-18.md"
    assert doc["day"] == date(2025, 11, 18).toordinal()
    assert ReportsSource().parse(fd("c/undated.md", "x")).documents[0]["day"] == 0
    # Every date has a day of its own, undated's 0 among none.
    for name in ("c/r_19691231.md", "c/r_19700101.md", "c/r_00010101.md"):
        assert ReportsSource().parse(fd(name, "x")).documents[0]["day"] > 0


def test_reports_are_markdown_files_one_folder_deep() -> None:
    src = ReportsSource()
    assert src.wants_file(("cmd", "r.md"))
    assert not src.wants_file(("r.md",))
    assert not src.wants_file(("cmd", "sub", "r.md"))
    assert not src.wants_file(("cmd", "r.txt"))
    assert not src.wants_file(("cmd", ".r.md.swp"))
    assert not src.wants_file((".git", "r.md"))


def test_command_frontmatter_fields() -> None:
    text = (
        "---\ntitle: Proxy analysis\ndescription: Finds slow joins\ntags: [proxy, network]\n"
        "is_dependency: false\n---\n# Heading\n\nBody text here.\n"
    )
    (doc,) = CommandsSource().parse(fd("proxy-analysis.md", text)).documents
    assert doc["name"] == "proxy-analysis"
    assert doc["title"] == "Proxy analysis"
    assert doc["description"] == "Finds slow joins"
    assert doc["tags"] == "proxy network"
    assert doc["is_dependency"] is False
    assert doc["frontmatter"]["tags"] == ["proxy", "network"]
    assert "Body text here." in doc["body"]


def test_command_without_description_takes_the_first_paragraph() -> None:
    text = "---\ntitle: T\nis_dependency: true\n---\n# Title\n\nFirst paragraph\ncontinues.\n\nSecond.\n"
    (doc,) = CommandsSource().parse(fd("c.md", text)).documents
    assert doc["description"] == "First paragraph continues."
    assert doc["is_dependency"] is True


def test_malformed_frontmatter_is_reported_and_the_file_indexed_as_text() -> None:
    text = "---\ntitle: [unclosed\ntags: x\n---\nThe body still counts.\n"
    parsed = CommandsSource().parse(fd("broken.md", text))
    (doc,) = parsed.documents
    assert "malformed frontmatter" in parsed.warnings[0]
    assert "The body still counts." in doc["body"]
    assert doc["title"] == "broken"
    assert doc["frontmatter"] == {}


def test_first_paragraph_skips_headings_and_code() -> None:
    assert first_paragraph("# H\n\n```\ncode\n```\n\nProse here.\n") == "Prose here."


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("2025-11", "month"),
        ("2025-11-10", "day"),
        ("2025-13", None),
        ("2025-02-30", None),
        ("2025-11-1", None),
        ("2025_11", None),
        ("notes", None),
    ],
)
def test_conversation_date_folders(name: str, kind: str | None) -> None:
    assert date_folder(name) == kind


def test_a_conversation_file_knows_its_folder() -> None:
    src = ConversationsSource()
    assert src.wants_file(("2025-11-10", "001-debug-auth", "conversation.md"))
    assert src.wants_file(("2025-11", "002-x", "sub", "notes.txt"))
    assert not src.wants_file(("2025-11", "conversation.md"))
    assert not src.wants_file(("misc", "001-x", "conversation.md"))
    assert not src.wants_file(("2025-11", "001-x", "image.png"))
    (doc,) = src.parse(fd("2025-11-10/001-debug-auth/conversation.md", "auth")).documents
    assert (doc["date"], doc["month"], doc["granularity"], doc["conversation"]) == (
        "2025-11-10",
        "2025-11",
        "day",
        "001-debug-auth",
    )


def test_analyzer_splits_words_and_cjk_characters() -> None:
    tokens = words("Proxy-Timeout 日志分析 SATUN18:GAP")
    assert tokens == ["proxy", "timeout", "日", "志", "分", "析", "satun18", "gap"]


def test_undecodable_bytes_are_replaced_not_fatal() -> None:
    (doc,) = ReportsSource().parse(fd("c/r.md", b"caf\xe9 ok")).documents
    assert doc["content"] == "caf\ufffd ok"
