"""The elog source: logbook files -> entries -> documents, and an index kept in line."""

from __future__ import annotations

import os
import re
import runpy
import shutil
from collections.abc import Callable, Collection
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import lookups
import pytest

from indexer.config import settings_from_dict
from indexer.engine.base import Segment
from indexer.sources.base import FileData
from indexer.sources.base import stem as stem_word
from indexer.sources.elog import (
    SWISSFEL_DEFAULTS,
    ElogEntry,
    ElogSource,
    allowed_filter_values,
    choices,
    device_positions,
    device_query_tokens,
    device_tokens,
    entry_document,
    parse_logbook_file,
    read_elog_config,
    stemmed_positions,
    stemmed_tokens,
)
from indexer.sources.elog_text import elcode_to_text, html_to_text
from indexer.sources.registry import SOURCES
from indexer.store import Syncer
from query.forgiving import stem

ROOT = Path(__file__).resolve().parent.parent
DEMO = Path(__file__).resolve().parent / "fixtures" / "elog" / "011108a.log"
SAMPLE = ROOT / "data" / "elog" / "SwissFEL"
SEP = "=" * 40
DATE = "Wed, 22 May 2024 06:06:38 +0200"
ZURICH = ZoneInfo("Europe/Zurich")


def rec(mid: int | str, headers: str = "", body: str = "text", date: str = DATE) -> str:
    """One record as elogd writes it: marker, Date, more header lines, separator, body."""
    return f"$@MID@$: {mid}\nDate: {date}\n{headers}{SEP}\n{body}\n"


def parse(text: str) -> list:
    return parse_logbook_file(text.encode("utf-8"))


def only(text: str):
    (entry,) = parse(text)
    return entry


# --------------------------------------------------------------------------- records


def test_the_elog_demo_file_reads_as_elogd_wrote_it() -> None:
    (entry,) = parse_logbook_file(DEMO.read_bytes())
    assert entry.id == 1
    assert entry.date == datetime(2001, 11, 8, 18, 37, 57, tzinfo=ZURICH)
    assert entry.date.utcoffset() == timedelta(hours=1)
    assert list(entry.attributes.items()) == [
        ("Author", "Stefan Ritt"),
        ("Type", "Routine"),
        ("Category", "General"),
        ("Subject", "Welcome"),
    ]
    assert (entry.title, entry.author, entry.category) == ("Welcome", "Stefan Ritt", "General")
    assert entry.attachments == []  # "Attachment: " with a trailing space
    assert entry.encoding == "ELCode"
    assert entry.body.startswith("[B]Congratulations for installing ELOG sucessfully!\n[/B]")
    assert entry.body.endswith('[I]"Delete"[/I] to delete this page.')
    assert "[" not in entry.text
    assert entry.text.startswith("Congratulations for installing ELOG sucessfully!\n\nThis is")
    assert 'Click "New" to add new pages and "Delete" to delete this page.' in entry.text
    assert entry.reply_to == [] and entry.in_reply_to is None
    assert entry.locked_by is None and entry.draft is False


def test_a_header_value_may_itself_hold_colon_space() -> None:
    entry = only(rec(5, "Title: Re: RF trip: S30CB09 at 02:41\nSection:S20\nEmpty:\n"))
    assert entry.title == "Re: RF trip: S30CB09 at 02:41"
    # The value starts two characters after the colon, whatever they are.
    assert entry.attributes["Section"] == "20"
    assert entry.attributes["Empty"] == ""


def test_attributes_keep_file_order_and_their_values_as_given() -> None:
    entry = only(
        rec(
            7,
            "When: 1716350786\nTitle: Gap\nAuthor: A. Brunner\nSection: SATUN18 \n"
            "Category: Problem\nZeta: z\nAlpha: a\nAttachment: x.png\nEncoding: plain\n",
        )
    )
    assert list(entry.attributes) == [
        "When",
        "Title",
        "Author",
        "Section",
        "Category",
        "Zeta",
        "Alpha",
    ]
    assert entry.attributes["Section"] == "SATUN18 "  # as given...
    assert entry.section == "SATUN18"  # ...and trimmed where it is used
    assert entry.attachments == ["x.png"]


def test_missing_and_empty_attributes_read_as_empty() -> None:
    entry = only(rec(8, "Author: S. Huber\nSystem: \nDomain: \nSubject: Old style\n"))
    assert (entry.category, entry.system, entry.domain, entry.section) == ("", "", "", "")
    assert entry.title == "Old style"  # no Title: the Subject
    assert entry.encoding == "plain"  # no Encoding header at all
    bare = only(f"$@MID@$: 9\n{SEP}\nbody\n")
    assert bare.date is None and bare.attributes == {} and bare.title == ""


def test_title_wins_over_subject() -> None:
    assert only(rec(1, "Subject: old\nTitle: new\n")).title == "new"


def test_the_first_occurrence_of_a_key_wins() -> None:
    entry = only(
        rec(
            3,
            "Author: first\nAuthor: second\nEncoding: HTML\nEncoding: plain\n"
            "In reply to: 1\nIn reply to: 2\n",
            body="<b>x</b>",
        )
    )
    assert entry.author == "first" and entry.attributes["Author"] == "first"
    assert entry.encoding == "HTML" and entry.text == "x"
    assert entry.in_reply_to == 1


def test_reserved_headers_are_not_attributes() -> None:
    entry = only(
        rec(
            4,
            "Reply to: 5\nIn reply to: 2\nAuthor: x\nAttachment: a.png, b.pdf\n"
            "Encoding: plain\nLocked by: Jane Doe on opc12\nDraft: jdoe\n",
        )
    )
    assert list(entry.attributes) == ["Author"]
    assert entry.attachments == ["a.png", "b.pdf"]
    assert entry.locked_by == "Jane Doe on opc12"
    assert entry.draft is True


def test_reply_links_are_read_both_ways() -> None:
    parent, child, root = parse(
        rec(33711, "Reply to: 33718, 33720,33722\nTitle: p\n")
        + rec(33718, "In reply to: 33711\nTitle: c\n")
        + rec(33730, "Title: r\n")
    )
    assert parent.reply_to == [33718, 33720, 33722] and parent.in_reply_to is None
    assert child.in_reply_to == 33711 and child.reply_to == []
    assert root.reply_to == [] and root.in_reply_to is None


def test_crlf_records_read_like_lf_ones() -> None:
    lf = rec(10, "Title: T\nAuthor: A\nEncoding: plain\n", body="line 1\nline 2")
    (a,) = parse(lf)
    (b,) = parse(lf.replace("\n", "\r\n"))
    assert (b.title, b.author, b.encoding, b.attributes) == (
        a.title,
        a.author,
        "plain",
        a.attributes,
    )
    assert b.date == a.date
    assert b.body == "line 1\r\nline 2"
    assert b.text == a.text == "line 1\nline 2"


def test_each_record_is_decoded_on_its_own() -> None:
    data = (
        rec(1, "Category: Schicht-Übergabe\nTitle: Übergabe\n", body="Frühschicht").encode()
        + rec(2, "Category: Überbrückung\nTitle: Strahlzeit für Messung\n", body="5 µC/h").encode(
            "cp1252"
        )
        + rec(3, "Title: after\n", body="größer").encode()
        + rec(4, "Title: odd\n", body="").encode()[:-1]
        + b"\x81\x8d\n"
    )
    a, b, c, d = parse_logbook_file(data)
    assert (a.category, a.title, a.body) == ("Schicht-Übergabe", "Übergabe", "Frühschicht")
    assert (b.category, b.title, b.body) == ("Überbrückung", "Strahlzeit für Messung", "5 µC/h")
    assert c.body == "größer"
    assert d.body == "\x81\x8d"  # bytes cp1252 leaves undefined: read as Latin-1


def test_a_utf8_bom_does_not_hide_the_first_record() -> None:
    (entry,) = parse_logbook_file(b"\xef\xbb\xbf" + rec(12, "Title: bom\n").encode())
    assert entry.id == 12 and entry.title == "bom"


def test_ids_of_zero_or_less_are_ignored_and_end_the_record_before() -> None:
    entries = parse(
        rec(1, body="one")
        + rec(0, body="zero")
        + rec(-3, body="minus")
        + rec("junk", body="junk")
        + rec(" 2", body="two")
    )
    assert [(e.id, e.body) for e in entries] == [(1, "one"), (2, "two")]


def test_a_marker_not_at_a_line_start_is_body_text() -> None:
    body = "see $@MID@$: 99 in the text\n $@MID@$: 98 indented\nend"
    (entry,) = parse(rec(5, body=body))
    assert entry.body == body


def test_only_a_line_of_exactly_40_equals_ends_the_headers() -> None:
    text = (
        f"$@MID@$: 6\nDate: {DATE}\n{'=' * 41}\n{'=' * 39}\nTitle: still a header\n"
        f"{SEP}\nbody\n{SEP}\nTitle: body too\n"
    )
    (entry,) = parse(text)
    assert entry.title == "still a header"
    assert entry.body == f"body\n{SEP}\nTitle: body too"


@pytest.mark.parametrize(
    ("tail", "body"),
    [
        (b"line\n", "line"),
        (b"line\n\n", "line\n"),
        (b"line\r\n", "line"),
        (b"line\r\n\r\n", "line\r\n"),
        (b"line", "line"),
        (b"line\r", "line"),
        (b"\n", ""),
        (b"", ""),
    ],
)
def test_a_body_loses_one_trailing_newline_then_one_cr(tail: bytes, body: str) -> None:
    data = f"$@MID@$: 1\nDate: {DATE}\n{SEP}\n".encode() + tail
    (entry,) = parse_logbook_file(data)
    assert entry.body == body
    if tail.endswith(b"\n"):  # the next marker starts a line
        (first, _) = parse_logbook_file(data + b"$@MID@$: 2\n")
        assert first.body == body


def test_dates_rfc2822_keep_their_offset_and_ctime_is_zurich_time() -> None:
    a, b, c, d = parse(
        rec(1)
        + rec(2, date="Sun Jul 14 02:10:00 2024")
        + rec(3, date="not a date")
        + rec(4, date="Tue, 14 Mar 2023 10:02:45 -0000")
    )
    assert a.date.isoformat() == "2024-05-22T06:06:38+02:00"
    assert b.date == datetime(2024, 7, 14, 2, 10, tzinfo=ZURICH)
    assert b.date.utcoffset() == timedelta(hours=2)
    assert c.date is None
    assert d.date == datetime(2023, 3, 14, 10, 2, 45, tzinfo=UTC)


# --------------------------------------------------------------------------- visible text


def test_elcode_tags_are_stripped_and_links_keep_text_and_address() -> None:
    body = (
        "[B]Bold[/B] and [i]italic[/i], [COLOR=red]red[/COLOR] [size=3]big[/size]\n"
        '[quote="T. Meier"]quoted text[/quote]\n'
        "[url=https://elog-gfa.psi.ch/SwissFEL/27421]RC exchange[/url] and "
        "[url]https://psi.ch[/url] and [url=https://x.ch][/url]\n"
        "[LIST]\n[*]one\n[*]two\n[/LIST]\n"
        "[TABLE border=1]\nA|B\n|-\nC|D\n[/TABLE]\n"
        "delay 5 [ms], array[3]"
    )
    text = elcode_to_text(body)
    assert "Bold and italic, red big" in text
    assert "quoted text" in text and "T. Meier" not in text
    assert "RC exchange (https://elog-gfa.psi.ch/SwissFEL/27421)" in text
    assert "and https://psi.ch and https://x.ch" in text
    assert "one\ntwo" in text
    assert "A | B\nC | D" in text
    assert text.endswith("delay 5 [ms], array[3]")  # brackets that are not tags stay


def test_html_is_stripped_to_what_a_reader_sees() -> None:
    body = (
        "<style>p {color: red}</style><script>alert('x')</script>"
        "<p>Netzger&auml;t&nbsp;S20SY02-MKDC050 meldet <strong>Fehler</strong></p>\n"
        "<!-- a comment -->\n<p>Reset   nicht\n m&ouml;glich &lt;b&gt; &#8211; ok</p>"
        "<ul><li>one</li><li>two</li></ul>"
        "<table><tr><td>A</td><td>B</td></tr><tr><td>C</td><td>D</td></tr></table>"
        "line<br />break"
    )
    text = html_to_text(body)
    assert "color" not in text and "alert" not in text and "comment" not in text
    assert text.startswith("Netzgerät S20SY02-MKDC050 meldet Fehler\n\n")
    assert "Reset nicht möglich <b> – ok" in text
    assert "one\ntwo" in text
    assert "A B\nC D" in text
    assert text.endswith("line\nbreak")


def test_plain_text_is_shown_as_written() -> None:
    (entry,) = parse(rec(1, "Encoding: plain\n", body="> quoted\n  indented\n\n\nend"))
    assert entry.text == "> quoted\n  indented\n\n\nend"
    (other,) = parse(rec(2, "Encoding: Markdown\n", body="*x*"))
    assert other.text == "*x*"  # an unknown encoding is shown as plain text


# --------------------------------------------------------------------------- analysis


def test_device_names_are_indexed_whole_and_in_parts() -> None:
    toks = device_tokens("Motor SATUN18-DDRM005-R; SATUN18:GAP und S20SY02-MKDC050.")
    for tok in [
        "satun18-ddrm005-r",
        "satun18-ddrm005",
        "ddrm005-r",
        "satun18",
        "ddrm005",
        "r",
        "satun18:gap",
        "gap",
        "s20sy02-mkdc050",
        "s20sy02",
        "mkdc050",
        "motor",
        "und",
    ]:
        assert tok in toks, tok
    pv = device_tokens("SARBD01-MBND100:ENERGY-OP SARUN10-UIND030:K_SET")
    for tok in ["sarbd01-mbnd100:energy-op", "mbnd100:energy-op", "energy", "op", "k_set", "k"]:
        assert tok in pv, tok


def test_parts_take_consecutive_positions_and_a_name_the_first() -> None:
    toks = device_positions("a S20SY02-MKDC050 b")
    assert ("a", 0) in toks and ("s20sy02-mkdc050", 1) in toks
    assert ("s20sy02", 1) in toks and ("mkdc050", 2) in toks and ("b", 3) in toks


def test_a_query_keeps_a_device_name_whole() -> None:
    assert device_query_tokens("SATUN18-DDRM005-R gap") == ["satun18-ddrm005-r", "gap"]
    assert device_query_tokens("Überbrückung 日本") == ["überbrückung", "日", "本"]


def test_choice_fields_index_each_choice_lower_cased() -> None:
    assert choices(" RF | Timing & Sync ") == ["rf", "timing & sync"]
    assert choices("Tipps & Tricks") == ["tipps & tricks"]
    assert choices("  ") == []


# --------------------------------------------------------------------------- the source


def test_the_source_is_registered() -> None:
    assert SOURCES["elog"] is ElogSource


@pytest.mark.parametrize(
    ("parts", "wanted"),
    [
        (("2024", "240522a.log"), True),
        (("24", "240522a.log"), True),
        (("011108a.log",), True),
        (("2024", "240522_133521_screenshot.png"), False),
        (("2024", "240522a.log.md5"), False),
        (("2024", "240522b.log"), False),
        (("attachments", "240522a.log"), False),
        (("2024", "05", "240522a.log"), False),
        (("elogd.cfg",), False),
    ],
)
def test_which_files_belong_to_the_logbook(parts: tuple[str, ...], wanted: bool) -> None:
    assert ElogSource().wants_file(parts) is wanted


def test_only_year_folders_are_entered() -> None:
    source = ElogSource()
    assert source.wants_dir(("2024",)) and source.wants_dir(("01",))
    assert not source.wants_dir(("attachments",))
    assert not source.wants_dir(("202",))
    assert not source.wants_dir(("2024", "05"))


def file_data(rel: str, text: str) -> FileData:
    data = text.encode()
    return FileData(rel=rel, data=data, mtime_ns=0, size=len(data))


def test_documents_are_keyed_by_id_and_drafts_are_left_out() -> None:
    parsed = ElogSource().parse(
        file_data(
            "2024/240522a.log",
            rec(5, "Title: a\n")
            + rec(6, "Title: draft\nDraft: jdoe\n")
            + rec(7, "Title: b\nIn reply to: 5\n"),
        )
    )
    assert [d["key"] for d in parsed.documents] == ["5", "7"]
    assert parsed.documents[1]["in_reply_to"] == 5
    assert "in_reply_to" not in parsed.documents[0]
    assert parsed.warnings == []


def test_a_duplicate_id_is_indexed_once_with_a_warning() -> None:
    parsed = ElogSource().parse(
        file_data("2024/240522a.log", rec(5, "Title: a\n") + rec(5, "Title: b\n"))
    )
    assert [d["title"] for d in parsed.documents] == ["a"]
    assert parsed.warnings == ["entry 5 appears twice; the first one is indexed"]


def test_an_undated_entry_is_dated_by_its_file_name() -> None:
    parsed = ElogSource().parse(file_data("2024/240522a.log", f"$@MID@$: 5\n{SEP}\nx\n"))
    (doc,) = parsed.documents
    assert doc["date"] == "2024-05-22T00:00:00+02:00" and doc["day"] == 20240522
    assert any("dated by its file name" in w for w in parsed.warnings)


def test_locked_by_is_read_but_never_part_of_the_document() -> None:
    plain = only(rec(5, "Title: a\nEncoding: plain\n"))
    locked = only(rec(5, "Title: a\nEncoding: plain\nLocked by: Jane Doe on opc12\n"))
    assert locked.locked_by == "Jane Doe on opc12"
    assert entry_document(locked) == entry_document(plain)
    assert not any("lock" in field.name for field in ElogSource().fields())


def test_a_document_holds_what_search_filters_and_get_need() -> None:
    entry = only(
        rec(
            31302,
            "Reply to: 31303, 31305\nWhen: 1713266500\nAuthor: K. Zehnder\nCategory: Problem\n"
            "System: RF | Timing & Sync\nDomain: Linac2\nSection: S20SY02\nEffect: \n"
            "Title: SF-PS Fehler S20SY02-MKDC050\nAttachment: a.png\nEncoding: HTML\n",
            body="<p>Netzger&auml;t</p>",
            date="Tue, 16 Apr 2024 13:21:40 +0200",
        )
    )
    doc = entry_document(entry)
    assert doc["key"] == "31302" and doc["elog_id"] == 31302
    assert doc["timestamp"] == int(datetime(2024, 4, 16, 11, 21, 40, tzinfo=UTC).timestamp())
    assert doc["day"] == 20240416 and doc["date"] == "2024-04-16T13:21:40+02:00"
    assert doc["title"] == "SF-PS Fehler S20SY02-MKDC050"
    assert doc["body"] == "Netzgerät" and doc["raw_body"] == "<p>Netzger&auml;t</p>"
    assert doc["encoding"] == "HTML" and doc["attachments"] == ["a.png"]
    assert doc["system"] == "RF | Timing & Sync" and doc["category"] == "Problem"
    assert doc["reply_to"] == [31303, 31305]
    # Searchable attribute text: every value but the title, the empty ones and epochs.
    assert doc["attributes"].split("\n") == [
        "K. Zehnder",
        "Problem",
        "RF | Timing & Sync",
        "Linac2",
        "S20SY02",
    ]
    # What text queries rank by: the title, the visible body and that attribute text.
    assert doc["entry_stems"] == f"{doc['title']}\nNetzgerät\n{doc['attributes']}"
    assert list(doc["attrs"]) == [
        "When",
        "Author",
        "Category",
        "System",
        "Domain",
        "Section",
        "Effect",
        "Title",
    ]
    assert set(doc) - {"in_reply_to"} <= {field.name for field in ElogSource().fields()} | {"key"}


# --------------------------------------------------------------------------- elogd.cfg


def test_elogd_cfg_options_are_read_for_the_logbook(tmp_path: Path) -> None:
    cfg = tmp_path / "elogd.cfg"
    cfg.write_text(
        "; comment\n"
        "[global]\n"
        "port = 8080\n"
        "Options Domain = Global\n"
        "Options Shared = from global\n"
        "[Other]\n"
        "Options Category = nope\n"
        "[SwissFEL]\n"
        "# another comment\n"
        "Attributes = Author, Category, System, Domain, Effect\n"
        'OPTIONS category = Info, "Shift summary, night", Tipps & Tricks, Problem{1}\n'
        "MOptions SYSTEM = RF, Timing & Sync\n"
        "ROptions  Domain =  Aramis , Athos\n"
        "IOptions Effect = None, Beam interruption\n"
        "Extendable Options = Category\n"
        "Options Category = ignored, the first one wins\n",
        encoding="utf-8",
    )
    options = read_elog_config(cfg, "SwissFEL")
    assert options["Category"] == ["Info", "Shift summary, night", "Tipps & Tricks", "Problem"]
    assert options["System"] == ["RF", "Timing & Sync"]
    assert options["Domain"] == ["Aramis", "Athos"]
    assert options["Effect"] == ["None", "Beam interruption"]
    assert options["Shared"] == ["from global"]
    assert read_elog_config(cfg, "other")["Category"] == ["nope"]
    assert read_elog_config(cfg)["Category"] == ["nope"]  # no name: the first logbook


def test_the_sample_elogd_cfg_and_the_defaults_agree() -> None:
    cfg = ROOT / "data" / "elog" / "elogd.cfg"
    assert allowed_filter_values(cfg, "SwissFEL") == SWISSFEL_DEFAULTS
    assert read_elog_config(cfg)["Effect"][-1] == "No beam, access"
    assert allowed_filter_values(None) == SWISSFEL_DEFAULTS
    assert allowed_filter_values(cfg.parent / "missing.cfg") == SWISSFEL_DEFAULTS


def test_a_config_without_a_filter_list_leaves_it_open(tmp_path: Path) -> None:
    cfg = tmp_path / "elogd.cfg"
    cfg.write_bytes("[demo]\nOptions Category = Überbrückung, Info\n".encode("cp1252"))
    assert allowed_filter_values(cfg) == {
        "Category": ["Überbrückung", "Info"],
        "System": [],
        "Domain": [],
    }


# --------------------------------------------------------------------------- the sample


def sample_entries() -> dict[int, ElogEntry]:
    entries: dict[int, ElogEntry] = {}
    for path in sorted(SAMPLE.rglob("*.log")):
        warnings: list[str] = []
        for entry in parse_logbook_file(path.read_bytes(), warnings):
            assert entry.id not in entries
            entries[entry.id] = entry
        assert warnings == [], path
    return entries


def test_the_committed_sample_is_what_make_sample_writes() -> None:
    build = runpy.run_path(str(ROOT / "data" / "elog" / "make_sample.py"), run_name="sample")[
        "build"
    ]
    on_disk = {str(p.relative_to(SAMPLE)): p.read_bytes() for p in SAMPLE.rglob("*.log")}
    assert build() == on_disk


def test_the_sample_logbook_has_what_it_promises() -> None:
    entries = sample_entries()
    assert len(entries) == 61
    assert [e.id for e in entries.values() if e.draft] == [34523]
    dates = [e.date for e in entries.values()]
    assert None not in dates
    years = {d.year for d in dates if d is not None}
    assert {2017, 2022, 2023, 2024, 2025} <= years
    # A thread three replies deep, and an entry with three replies.
    assert entries[31180].reply_to == [31181]
    assert entries[31181].reply_to == [31185] and entries[31181].in_reply_to == 31180
    assert entries[31185].reply_to == [31193] and entries[31193].in_reply_to == 31185
    assert entries[31302].reply_to == [31303, 31305, 31309]
    # The old top-level file: ctime dates, Subject instead of Title.
    assert entries[1187].title == "Pre-beam check injector done"
    assert entries[1187].date == datetime(2017, 6, 9, 7, 55, 12, tzinfo=ZURICH)
    # One cp1252 record in a UTF-8 file, one CRLF record.
    raw = (SAMPLE / "2023" / "230314a.log").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    assert "Schicht-Übergabe".encode() in raw and "Überbrückung".encode("cp1252") in raw
    assert entries[27130].title == "Überbrückung BLM SARBD01: Strahlzeit für Messung"
    assert entries[27130].category == "Überbrückung"
    assert b"\r\n" in (SAMPLE / "2024" / "240522a.log").read_bytes()
    assert entries[31410].body.count("\r\n") >= 3 and "\r" not in entries[31410].text
    encodings = {e.encoding for e in entries.values()}
    assert encodings == {"plain", "ELCode", "HTML"}
    assert entries[34530].category == "" and entries[34530].system == ""
    assert entries[27311].system == "RF | Timing & Sync"


# --------------------------------------------------------------------------- the index


@pytest.fixture
def logbook(tmp_path: Path):
    root = tmp_path / "SwissFEL"
    shutil.copytree(SAMPLE, root)
    settings = settings_from_dict(
        {"sources": {"elog": str(root)}, "index": {"dir": str(tmp_path / "ix")}}, base=tmp_path
    )
    syncer = Syncer(settings, ElogSource())
    summary = syncer.reconcile()
    return root, syncer, summary


def rewrite(path: Path, data: bytes) -> None:
    """Write a file as elogd would, with an mtime that surely differs from before."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_bytes(data)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def split_records(data: bytes) -> list[bytes]:
    starts = [m.start() for m in re.finditer(rb"(?m)^\$@MID@\$:", data)]
    return [data[a:b] for a, b in pairwise([*starts, len(data)])]


def record_of(data: bytes, mid: int) -> bytes:
    (found,) = [r for r in split_records(data) if r.startswith(f"$@MID@$: {mid}\n".encode())]
    return found


Select = Callable[[Segment], Collection[int]]


def search_ids(syncer: Syncer, select: Select) -> set[int]:
    """The ids of the live entries that ``select`` picks of each segment."""
    return {int(key) for key in lookups.keys_in(syncer.settings, "elog", select)}


def text_query(text: str) -> Select:
    """Entries holding any word of the query in their title, body or attributes."""
    words = device_query_tokens(text)
    return lambda seg: {
        doc for field in ("title", "body", "attributes") for doc in seg.docs_with(field, words)
    }


def term(field: str, text: str) -> Select:
    return lambda seg: seg.docs_with(field, [text])


def numeric_range(column: str, low: int, high: int) -> Select:
    return lambda seg: {doc for doc, v in enumerate(seg.int_column(column)) if low <= v <= high}


def number(field: str, value: int) -> Select:
    return lambda seg: {doc for doc, fields in seg.live_stored() if fields.get(field) == value}


def doc_count(syncer: Syncer) -> int:
    return syncer.index.doc_count()


def stored(syncer: Syncer, mid: int) -> list[dict[str, Any]]:
    return lookups.stored_with_key(syncer.settings, "elog", str(mid))


def test_the_sample_indexes_every_submitted_entry(logbook) -> None:
    _, syncer, summary = logbook
    assert (summary.added, summary.updated, summary.deleted) == (60, 0, 0)
    assert summary.warnings == [] and not summary.skipped
    assert doc_count(syncer) == 60
    assert stored(syncer, 34523) == []  # the draft
    (doc,) = stored(syncer, 27130)
    assert doc["title"] == "Überbrückung BLM SARBD01: Strahlzeit für Messung"
    assert doc["file"] == "2023/230314a.log"
    assert search_ids(syncer, text_query("Strahlzeit")) == {27130}
    again = syncer.reconcile()
    # Counted in entries, as added is (46 day files hold the 60).
    assert not again.changed and again.unchanged == 60


def test_device_names_are_found_whole_and_by_their_parts(logbook) -> None:
    _, syncer, _ = logbook
    ddrm = {24190, 31488, 31489, 34251, 34252, 34455}
    gap = {24163, 24190, 27240, 31489, 34251, 34402, 34455}
    assert search_ids(syncer, text_query("SATUN18-DDRM005-R")) == ddrm
    assert search_ids(syncer, text_query("SATUN18:GAP")) == gap
    satun18 = search_ids(syncer, text_query("SATUN18"))
    assert ddrm | gap | {27421} <= satun18
    assert 31611 not in satun18  # SATUN06
    mkdc = {24301, 31302, 31303, 31305, 31309}
    assert search_ids(syncer, text_query("S20SY02-MKDC050")) == mkdc
    assert search_ids(syncer, text_query("MKDC050")) == mkdc
    energy = {27051, 27188, 31180, 34077, 34402}
    assert search_ids(syncer, text_query("SARBD01-MBND100:ENERGY-OP")) == energy
    assert search_ids(syncer, text_query("MBND100:ENERGY-OP")) == energy
    assert search_ids(syncer, text_query("K_SET")) == {31240}


def test_filters_use_lower_cased_values_and_keep_the_originals(logbook) -> None:
    _, syncer, _ = logbook
    assert search_ids(syncer, term("category", "überbrückung")) == {27130}
    assert search_ids(syncer, term("system", "timing & sync")) == {27311}
    assert 27311 in search_ids(syncer, term("system", "rf"))
    assert search_ids(syncer, term("category", "vakuum")) == set()
    assert search_ids(syncer, term("category", "swissfel rf")) == {1188}
    (doc,) = stored(syncer, 27311)
    assert doc["system"] == "RF | Timing & Sync" and doc["domain"] == "Global"
    start = int(datetime(2024, 1, 1, tzinfo=ZURICH).timestamp())
    end = int(datetime(2025, 1, 1, tzinfo=ZURICH).timestamp()) - 1
    in_2024 = search_ids(syncer, numeric_range("timestamp", start, end))
    assert len(in_2024) == 18 and min(in_2024) == 31022 and max(in_2024) == 31811
    assert search_ids(syncer, numeric_range("day", 20240101, 20241231)) == in_2024


def test_thread_links_are_stored(logbook) -> None:
    _, syncer, _ = logbook
    (root,) = stored(syncer, 31180)
    (leaf,) = stored(syncer, 31193)
    (multi,) = stored(syncer, 31302)
    assert root["reply_to"] == [31181] and "in_reply_to" not in root
    assert leaf["in_reply_to"] == 31185 and leaf["reply_to"] == []
    assert multi["reply_to"] == [31303, 31305, 31309]
    assert search_ids(syncer, number("in_reply_to", 31302)) == {31303, 31305, 31309}


def test_a_lock_rewrite_changes_no_document(logbook) -> None:
    root, syncer, _ = logbook
    path = root / "2024" / "240416a.log"
    original = path.read_bytes()
    rec31302 = record_of(original, 31302)
    locked = rec31302.replace(
        b"Encoding: HTML\n", b"Encoding: HTML\nLocked by: Jane Doe on opc-sf-12\n"
    )
    rewrite(path, original.replace(rec31302, locked))
    summary = syncer.apply(["2024/240416a.log"])
    assert (summary.added, summary.updated, summary.deleted) == (0, 0, 0)
    rewrite(path, original)
    assert not syncer.apply(["2024/240416a.log"]).changed


def test_an_edited_entry_is_updated_alone(logbook) -> None:
    root, syncer, _ = logbook
    path = root / "2024" / "240416a.log"
    data = path.read_bytes()
    rewrite(path, data.replace(b"Dried, insulation", b"Dried with hot air, insulation"))
    summary = syncer.apply(["2024/240416a.log"])
    assert (summary.added, summary.updated, summary.deleted) == (0, 1, 0)
    assert search_ids(syncer, text_query("hot")) == {31303}
    assert doc_count(syncer) == 60


def test_an_id_moved_to_another_file_ends_up_once_from_the_new_file(logbook) -> None:
    root, syncer, _ = logbook
    old, new = root / "2025" / "251006a.log", root / "2025" / "251009a.log"
    data = old.read_bytes()
    moved = record_of(data, 34521)
    rewrite(old, data.replace(moved, b""))
    rewrite(new, moved.replace(b"Mon, 06 Oct 2025 07:05:10", b"Thu, 09 Oct 2025 08:00:00"))
    syncer.apply(["2025/251009a.log"])  # the new file first...
    syncer.apply(["2025/251006a.log"])  # ...then the old one
    (doc,) = stored(syncer, 34521)
    assert doc["file"] == "2025/251009a.log" and doc["day"] == 20251009

    # Both files in one batch, the old one first (as sorted).
    old2 = root / "2025" / "251007a.log"
    data2 = old2.read_bytes()
    moved2 = record_of(data2, 34522)
    rewrite(old2, data2.replace(moved2, b""))
    rewrite(new, new.read_bytes() + moved2)
    syncer.apply(["2025/251007a.log", "2025/251009a.log"])
    (doc2,) = stored(syncer, 34522)
    assert doc2["file"] == "2025/251009a.log"
    assert doc_count(syncer) == 60
    assert not syncer.reconcile().changed


def test_a_deleted_record_and_a_deleted_file_are_deleted(logbook) -> None:
    root, syncer, _ = logbook
    path = root / "2025" / "250513a.log"
    data = path.read_bytes()
    data = data.replace(record_of(data, 34252), b"").replace(b"Reply to: 34252\n", b"")
    rewrite(path, data)
    summary = syncer.apply(["2025/250513a.log"])
    assert (summary.added, summary.updated, summary.deleted) == (0, 1, 1)
    assert stored(syncer, 34252) == []
    (parent,) = stored(syncer, 34251)
    assert parent["reply_to"] == []

    (root / "2025" / "250915a.log").unlink()  # elogd removes a file it emptied
    summary = syncer.apply(["2025/250915a.log"])
    assert summary.deleted == 1 and stored(syncer, 34455) == []
    assert doc_count(syncer) == 58


# --------------------------------------------------------------------------- stems


def test_the_index_stems_words_as_the_query_side_does() -> None:
    words = {
        term
        for path in SAMPLE.rglob("*.log")
        for entry in parse_logbook_file(path.read_bytes())
        for term in device_tokens(f"{entry.title}\n{entry.text}")
    }
    words |= {"klystrons", "happy", "tripped", "überbrückung", "代理", "s30cb09-rmod", "k_set"}
    assert len(words) > 500
    assert {w: stem_word(w) for w in words} == {w: stem(w) for w in words}


def test_title_body_and_attributes_are_indexed_stemmed_too() -> None:
    assert ElogSource.schema_version >= 3  # 3 brought the stems
    names = {f.name for f in ElogSource().fields()}
    assert {"title_stems", "body_stems", "attributes_stems", "entry_stems"} <= names
    assert stemmed_tokens("Klystrons tripped at S30CB09-RMOD") == [
        "klystron",
        "trip",
        "at",
        "s30cb09-rmod",
        "s30cb09",
        "rmod",
    ]
    assert stemmed_positions("gaps moved") == [("gap", 0), ("move", 1)]
