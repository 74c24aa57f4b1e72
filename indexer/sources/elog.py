"""elog: an elogd logbook folder, ``YYYY/YYMMDDa.log`` (or ``YYMMDDa.log`` at the top).

One document per submitted entry, keyed by its message id. The on-disk format is elogd's
own (a ``$@MID@$:`` header line opens each entry, attributes follow, then the body);
:func:`parse_logbook_file` reads it (from disk or from
``?cmd=download`` / ``?mode=Raw`` over HTTP) without touching anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from email.utils import parsedate_to_datetime
from itertools import pairwise
from pathlib import Path
from typing import Any, ClassVar
from zoneinfo import ZoneInfo

from indexer.cjk import CJK_CHARS
from indexer.engine.fields import Field, Keyword, Number, Stored, Text
from indexer.sources.base import FileData, Parsed, stem
from indexer.sources.elog_text import visible_text

# Old entries carry ctime dates without a zone: they are the server's local time.
# SwissFEL's elogd runs at PSI, so that zone is fixed here. An ambiguous local time
# (the repeated hour in October) is read as the first of the two (summer time).
SERVER_ZONE = ZoneInfo("Europe/Zurich")

SEPARATOR = "=" * 40
RESERVED_KEYS = frozenset(
    {"$@mid@$", "date", "reply to", "in reply to", "attachment", "encoding", "locked by", "draft"}
)

# Allowed filter values when no elogd.cfg is configured (the SwissFEL logbook's
# conventions). Older entries also hold values outside these lists.
SWISSFEL_DEFAULTS: dict[str, list[str]] = {
    "Category": [
        "Info",
        "Problem",
        "Pikett",
        "Access",
        "Measurement summary",
        "Shift summary",
        "Tipps & Tricks",
        "Überbrückung",
        "Schicht-Auftrag",
        "RC exchange minutes",
        "Weekly reference settings",
        "Schicht-Übergabe",
        "DCM minutes",
        "Laser- & Gun-Performance Routine",
        "Seed laser operation",
    ],
    "System": [
        "Beamdynamics",
        "Controls",
        "Diagnostics",
        "Electric supply",
        "Feedbacks",
        "Insertion-devices",
        "Laser",
        "Magnet Power Supplies",
        "Operation",
        "Photonics",
        "PLC",
        "RF",
        "Safety",
        "Timing & Sync",
        "Vacuum",
        "Water cooling & Ventilation",
        "Other",
        "Unknown",
    ],
    "Domain": [
        "Injector",
        "Linac1",
        "Linac2",
        "Linac3",
        "Aramis",
        "Aramis Beamlines",
        "Athos",
        "Athos Beamlines",
        "Global",
    ],
}
FILTER_ATTRIBUTES = ("Category", "System", "Domain")


# --------------------------------------------------------------------------- entries


@dataclass(slots=True)
class ElogEntry:
    """One record of a logbook file, as elogd wrote it."""

    id: int
    date: datetime | None  # aware; None when the Date header is missing or unreadable
    reply_to: list[int]  # direct children, from "Reply to"
    in_reply_to: int | None  # the parent, from "In reply to"
    attributes: dict[str, str]  # every non-reserved header, file order, values as given
    title: str  # attribute "Title", else "Subject"
    author: str
    category: str
    system: str
    domain: str
    section: str
    encoding: str  # "plain", "ELCode" or "HTML" as written ("plain" when missing)
    attachments: list[str]
    locked_by: str | None
    draft: bool
    body: str  # raw, as stored
    text: str  # what a reader sees: tags stripped, entities decoded


_MARKER = re.compile(rb"^\$@MID@\$:", re.MULTILINE)
_ATOI = re.compile(r"\s*([+-]?\d+)")
_SEPARATOR_LINE = re.compile(rf"^{SEPARATOR}\r?$", re.MULTILINE)
_NUMBERS = re.compile(r"\d+")
_CTIME = re.compile(
    r"\s*[A-Za-z]{3}\s+([A-Za-z]{3})\s+(\d{1,2})\s+(\d{1,2}):(\d{2}):(\d{2})\s+(\d{4})\s*$"
)
_MONTHS = {
    m: i
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1
    )
}


def parse_logbook_file(data: bytes, warnings: list[str] | None = None) -> list[ElogEntry]:
    """Every record with an id > 0 in a logbook file, drafts included, in file order.

    Each record is decoded on its own (UTF-8, else cp1252), since real logbooks mix
    them. Problems that do not stop parsing are appended to ``warnings`` if given.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    starts = [m.start() for m in _MARKER.finditer(data)]
    starts.append(len(data))
    entries: list[ElogEntry] = []
    for begin, end in pairwise(starts):
        entry = _parse_record(_decode(data[begin:end]), warnings)
        if entry is not None:
            entries.append(entry)
    return entries


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return raw.decode("cp1252")
    except UnicodeDecodeError:  # the five bytes cp1252 leaves undefined
        return raw.decode("latin-1")


def _parse_record(record: str, warnings: list[str] | None) -> ElogEntry | None:
    eol = record.find("\n")
    first = record[len("$@MID@$:") : eol if eol >= 0 else len(record)]
    m = _ATOI.match(first)  # elogd reads the id with atoi(): junk reads as 0
    msg_id = int(m.group(1)) if m else 0
    if msg_id <= 0:
        return None
    sep = _SEPARATOR_LINE.search(record)
    if sep is None:
        if warnings is not None:
            warnings.append(f"entry {msg_id}: no header separator line; read without a body")
        head, body = record, ""
    else:
        head = record[: sep.start()]
        body = record[sep.end() + 1 :]  # past the separator's "\n"
        body = body.removesuffix("\n")
        body = body.removesuffix("\r")

    reserved: dict[str, str] = {}
    attributes: dict[str, str] = {}
    for line in head.split("\n")[1:]:
        colon = line.find(":")
        if colon < 0:
            continue
        key = line[:colon]
        value = line[colon + 2 :]
        value = value.removesuffix("\r")
        lower = key.lower()
        if lower in RESERVED_KEYS:
            reserved.setdefault(lower, value)
        elif key not in attributes:
            attributes[key] = value

    by_name: dict[str, str] = {}
    for key, value in attributes.items():
        by_name.setdefault(key.strip().lower(), value.strip())

    when = parse_date(reserved.get("date", ""))
    if when is None and warnings is not None:
        warnings.append(f"entry {msg_id}: no readable Date ({reserved.get('date', '')!r})")
    parents = [n for n in map(int, _NUMBERS.findall(reserved.get("in reply to", ""))) if n > 0]
    encoding = reserved.get("encoding", "").strip() or "plain"
    return ElogEntry(
        id=msg_id,
        date=when,
        reply_to=[n for n in map(int, _NUMBERS.findall(reserved.get("reply to", ""))) if n > 0],
        in_reply_to=parents[0] if parents else None,
        attributes=attributes,
        title=by_name.get("title") or by_name.get("subject", ""),
        author=by_name.get("author", ""),
        category=by_name.get("category", ""),
        system=by_name.get("system", ""),
        domain=by_name.get("domain", ""),
        section=by_name.get("section", ""),
        encoding=encoding,
        attachments=[a.strip() for a in reserved.get("attachment", "").split(",") if a.strip()],
        locked_by=reserved.get("locked by"),
        draft="draft" in reserved,
        body=body,
        text=visible_text(body, encoding),
    )


def parse_date(value: str) -> datetime | None:
    """An entry's Date: RFC 2822 with its offset, or (25 chars or fewer) ctime local time."""
    value = value.strip()
    if not value:
        return None
    if len(value) <= 25:
        return _ctime(value) or _rfc2822(value)
    return _rfc2822(value) or _ctime(value)


def _ctime(value: str) -> datetime | None:
    m = _CTIME.match(value)
    if not m or m.group(1).lower() not in _MONTHS:
        return None
    try:
        return datetime(
            int(m.group(6)),
            _MONTHS[m.group(1).lower()],
            int(m.group(2)),
            int(m.group(3)),
            int(m.group(4)),
            int(m.group(5)),
            tzinfo=SERVER_ZONE,
        )
    except ValueError:
        return None


def _rfc2822(value: str) -> datetime | None:
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    # "-0000" means UTC with the local zone unknown.
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


_PART = rf"[^\W_{CJK_CHARS}]+"
_DEVICE_TOKEN = re.compile(rf"[{CJK_CHARS}]|{_PART}(?:[-:._]+{_PART})*")
_DEVICE_PART = re.compile(_PART)
_SEPARATORS = re.compile(r"[-:._]")
# Names with more parts than this index the whole and the parts only.
MAX_RUN_PARTS = 8


def device_positions(text: str) -> list[tuple[str, int]]:
    """Words, keeping device names whole and in parts, lower-cased, with their positions.

    ``SARBD01-MBND100:ENERGY-OP`` is indexed as the whole name, every run of two or
    more of its parts (``SARBD01-MBND100``, ``MBND100:ENERGY-OP``...) and each part
    (``SARBD01``, ``MBND100``, ``ENERGY``, ``OP``), split on ``- : . _``. Parts take
    consecutive positions; the whole and the runs take the position of their first part.
    No stemming.
    """
    found: list[tuple[str, int]] = []
    pos = 0
    for match in _DEVICE_TOKEN.finditer(text):
        word = match.group()
        parts = (
            [(p.start(), p.end()) for p in _DEVICE_PART.finditer(word)]
            if _SEPARATORS.search(word)
            else []
        )
        spans = [(0, len(word))]
        if len(parts) > 1:
            if len(parts) <= MAX_RUN_PARTS:
                spans += [
                    (parts[i][0], parts[j][1])
                    for i in range(len(parts))
                    for j in range(i + 1, len(parts))
                    if (i, j) != (0, len(parts) - 1)
                ]
            spans += parts
        else:
            parts = [(0, len(word))]
        first = {start: n for n, (start, _) in enumerate(parts)}
        found += [(word[start:end].lower(), pos + first[start]) for start, end in spans]
        pos += len(parts)
    return found


def device_tokens(text: str) -> list[str]:
    """The terms of :func:`device_positions`, without their positions."""
    return [term for term, _ in device_positions(text)]


def device_query_tokens(text: str) -> list[str]:
    """A query's words, lower-cased, device names whole: a device name or any run of its
    parts is then one exact term."""
    return [word.lower() for word in _DEVICE_TOKEN.findall(text)]


def stemmed_positions(text: str) -> list[tuple[str, int]]:
    """:func:`device_positions` with every word stemmed (``klystrons`` -> ``klystron``)."""
    return [(stem(term), pos) for term, pos in device_positions(text)]


def stemmed_tokens(text: str) -> list[str]:
    """The terms of :func:`stemmed_positions`, without their positions."""
    return [stem(term) for term in device_tokens(text)]


def choices(text: str) -> list[str]:
    """Each choice of an attribute value (``a | b`` holds two), trimmed and lower-cased."""
    return [choice.strip().lower() for choice in text.split("|") if choice.strip()]


# --------------------------------------------------------------------------- the source

_YEAR_DIR = re.compile(r"\d{2}|\d{4}")
_DAY_FILE = re.compile(r"(\d{2})(\d{2})(\d{2})a\.log")
# Date-typed attributes (SwissFEL's "When") hold epoch seconds: not worth searching.
_EPOCH_VALUE = re.compile(r"\d{9,11}")


class ElogSource:
    name: ClassVar[str] = "elog"
    # 2: stemmed title, body and attributes (title_stems, body_stems, attributes_stems).
    # 3: the three stemmed as one text (entry_stems): what text queries rank by.
    # 4: file records keep their stat in a column, which a reconcile reads fast.
    schema_version: ClassVar[int] = 4
    scored: ClassVar[bool] = True  # BM25F over stemmed title, body and attributes

    def fields(self) -> tuple[Field, ...]:
        return (
            Number("elog_id", stored=True, sortable=True),
            # Epoch seconds, and the day (YYYYMMDD) in the entry's own offset.
            Number("timestamp", bits=64, stored=True, sortable=True),
            Number("day", stored=True, sortable=True),
            Stored("date"),  # ISO 8601 with the entry's offset
            Text("title", device_tokens, "positions", stored=True, positions=device_positions),
            # The visible text.
            Text("body", device_tokens, "positions", stored=True, positions=device_positions),
            Text("attributes", device_tokens),
            # The same three stemmed: what text queries rank by.
            Text("title_stems", stemmed_tokens, "positions", positions=stemmed_positions),
            Text("body_stems", stemmed_tokens, "positions", positions=stemmed_positions),
            Text("attributes_stems", stemmed_tokens),
            # Title, body and attributes stemmed as one text: one BM25 over the whole entry.
            Text("entry_stems", stemmed_tokens),
            Stored("attrs"),  # {name: value}, every attribute in file order
            Keyword("author", stored=True, tokens=choices),
            Keyword("category", stored=True, tokens=choices),
            Keyword("system", stored=True, tokens=choices),
            Keyword("domain", stored=True, tokens=choices),
            Keyword("section", stored=True, tokens=choices),
            Stored("reply_to"),
            Number("in_reply_to", stored=True),  # absent on a thread's root
            Stored("encoding"),
            Stored("raw_body"),
            Stored("attachments"),
        )

    def wants_dir(self, parts: tuple[str, ...]) -> bool:
        return len(parts) == 1 and _YEAR_DIR.fullmatch(parts[0]) is not None

    def wants_file(self, parts: tuple[str, ...]) -> bool:
        if len(parts) == 2 and _YEAR_DIR.fullmatch(parts[0]) is None:
            return False
        return len(parts) in (1, 2) and _DAY_FILE.fullmatch(parts[-1]) is not None

    def parse(self, file: FileData) -> Parsed:
        warnings: list[str] = []
        fallback = _file_day(file.rel)
        documents: list[dict[str, Any]] = []
        seen: set[int] = set()
        for entry in parse_logbook_file(file.data, warnings):
            if entry.draft:
                continue
            if entry.id in seen:
                warnings.append(f"entry {entry.id} appears twice; the first one is indexed")
                continue
            seen.add(entry.id)
            if entry.date is None and fallback is not None:
                warnings.append(f"entry {entry.id}: dated by its file name")
            documents.append(entry_document(entry, fallback))
        return Parsed(documents=documents, warnings=warnings)


def entry_document(entry: ElogEntry, fallback: datetime | None = None) -> dict[str, Any]:
    """The index document of a submitted entry. ``Locked by`` is left out on purpose:
    opening the edit form rewrites the file, and must not rewrite the document."""
    when = entry.date or fallback or datetime(1970, 1, 1, tzinfo=UTC)
    attributes = "\n".join(
        value
        for key, value in entry.attributes.items()
        if key.strip().lower() not in ("title", "subject")
        and value.strip()
        and not _EPOCH_VALUE.fullmatch(value.strip())
    )
    doc: dict[str, Any] = {
        "key": str(entry.id),
        "elog_id": entry.id,
        "timestamp": int(when.timestamp()),
        "day": when.year * 10000 + when.month * 100 + when.day,
        "date": when.isoformat(),
        "title": entry.title,
        "body": entry.text,
        "attributes": attributes,
        "title_stems": entry.title,
        "body_stems": entry.text,
        "attributes_stems": attributes,
        "entry_stems": f"{entry.title}\n{entry.text}\n{attributes}",
        "attrs": dict(entry.attributes),
        "author": entry.author,
        "category": entry.category,
        "system": entry.system,
        "domain": entry.domain,
        "section": entry.section,
        "reply_to": list(entry.reply_to),
        "encoding": entry.encoding,
        "raw_body": entry.body,
        "attachments": list(entry.attachments),
    }
    if entry.in_reply_to is not None:
        doc["in_reply_to"] = entry.in_reply_to
    return doc


def _file_day(rel: str) -> datetime | None:
    m = _DAY_FILE.fullmatch(rel.rsplit("/", 1)[-1])
    if not m:
        return None
    yy, mm, dd = (int(g) for g in m.groups())
    try:
        day = date(2000 + yy if yy < 90 else 1900 + yy, mm, dd)
    except ValueError:
        return None
    return datetime.combine(day, time(), tzinfo=SERVER_ZONE)


# --------------------------------------------------------------------------- elogd.cfg

_OPTIONS_KEY = re.compile(r"[rmi]?options .+")
_CONDITION = re.compile(r"\{[^{}]*\}\s*$")


def read_elog_config(path: str | Path, logbook: str | None = None) -> dict[str, list[str]]:
    """Allowed values per attribute from an elogd.cfg: ``{"Category": [...], ...}``.

    ``Options``, ``ROptions``, ``MOptions`` and ``IOptions`` lines of ``[global]`` and
    of the logbook's section (the first logbook section when ``logbook`` is None); the
    logbook's own lines win. Attribute names are spelled as in its ``Attributes`` line.
    """
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", errors="replace")
    sections: dict[str, dict[str, tuple[str, str]]] = {}
    order: list[str] = []
    current: dict[str, tuple[str, str]] | None = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("[") and line.endswith("]"):
            name = line[1:-1].strip().lower()
            current = sections.setdefault(name, {})
            if name not in order:
                order.append(name)
            continue
        key, eq, value = line.partition("=")
        if not eq or current is None:
            continue
        key = " ".join(key.split())
        current.setdefault(key.lower(), (key, value.strip()))
    if logbook is None:
        logbook = next((n for n in order if not n.startswith("global")), "")
    own, shared = sections.get(logbook.lower(), {}), sections.get("global", {})
    attributes = _split_list((own.get("attributes") or shared.get("attributes", ("", "")))[1])
    spelled = {a.lower(): a for a in attributes}
    found: dict[str, tuple[str, list[str]]] = {}
    for section in (shared, own):  # the logbook's own lines win over [global]
        lists: dict[str, tuple[str, list[str]]] = {}
        for lower, (key, value) in section.items():
            if not _OPTIONS_KEY.fullmatch(lower):
                continue
            attr = key.split(None, 1)[1]
            values = [_CONDITION.sub("", v).strip() for v in _split_list(value)]
            lists.setdefault(attr.lower(), (attr, list(dict.fromkeys(v for v in values if v))))
        found.update(lists)
    options = {spelled.get(lower, attr): values for lower, (attr, values) in found.items()}
    return options


def _split_list(value: str) -> list[str]:
    """``a, b, "c, d"`` -> ``["a", "b", "c, d"]``."""
    items: list[str] = []
    current: list[str] = []
    quoted = False
    for ch in value:
        if ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            items.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    items.append("".join(current).strip())
    return [item for item in items if item]


def allowed_filter_values(
    config: str | Path | None, logbook: str | None = None
) -> dict[str, list[str]]:
    """Category, System and Domain values: from elogd.cfg when there is one, else
    SwissFEL's. An attribute the config gives no options for gets ``[]`` (free text)."""
    if config is None or not Path(config).is_file():
        return {name: list(values) for name, values in SWISSFEL_DEFAULTS.items()}
    options = {k.lower(): v for k, v in read_elog_config(config, logbook).items()}
    return {name: options.get(name.lower(), []) for name in FILTER_ATTRIBUTES}
