"""Documents for the web page's tests: a report, a command, a conversation and an ELOG
thread, some of them holding script that must never run in the page; and one more of
each whose every name, title and attribute is hostile (see "hostile metadata").

Every hostile piece sets ``window.__pwned`` and the document title when it runs, so a
browser test can tell that none did.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import yaml
from starlette.testclient import TestClient

from indexer.config import settings_from_dict
from indexer.reindex import reindex
from query.mcp_server import build_server
from query.serve import http_app

COMMAND = "klystron-check"
REPORT = "klystron_20251120_v1.md"
CONVERSATION = "2025-11-10/001-klystron-talk/notes.md"
ELOG_FILE = "2025/251120a.log"
# Ids well above the sample logbook's, so the thread can be added to a copy of it.
ROOT_ID, HTML_ID, LAST_ID = 90001, 90002, 90003
SEP = "=" * 40

PWN = "window.__pwned = {n}; document.title = 'pwned'"
SCRIPT = f"<script>{PWN.format(n=1)}</script>"
IMG = f'<img src=x onerror="{PWN.format(n=2)}">'
MD_JS_LINK = f"[run me](javascript:{PWN.format(n=3)})"
RAW_JS_LINK = f'<a href="javascript:{PWN.format(n=4)}">raw link</a>'

REPORT_TEXT = f"""# Klystron interlock report

The **klystron** interlock tripped twice; see `SINEG01-RKLY` below.

| unit | trips |
|------|-------|
| K1   | 2     |

{SCRIPT}

{IMG}

{MD_JS_LINK} and {RAW_JS_LINK}

```
2025-11-20 08:00 klystron interlock: reflected power
```
"""

COMMAND_TEXT = """---
title: Klystron check
description: Check a klystron after an interlock
tags: [rf, klystron]
---
# Steps

1. Read the klystron interlock log.
2. Write a report.
"""

CONVERSATION_TEXT = "We talked about the modulator.\nThe klystron interlock again.\nDone.\n"

ELOG_HTML_BODY = (
    "<p>Klystron <b>interlock</b> tripped again.</p>"
    f"<script>{PWN.format(n=5)}</script>"
    f'<img src=x onerror="{PWN.format(n=6)}">'
    f'<a href="javascript:{PWN.format(n=7)}">details</a>'
    f'<p onmouseover="{PWN.format(n=8)}">hover here</p>'
    '<p><a href="https://example.org/rf">RF notes</a></p>'
)


def record(
    mid: int,
    title: str,
    body: str,
    encoding: str = "plain",
    headers: str = "",
    author: str = "T. Test",
    category: str = "Problem",
    system: str = "RF",
    domain: str = "Aramis",
    section: str = "",
    attachment: str = "",
) -> str:
    """One ELOG record as elogd writes it."""
    return (
        f"$@MID@$: {mid}\nDate: Thu, 20 Nov 2025 08:0{mid % 10}:00 +0100\n{headers}"
        f"Author: {author}\nCategory: {category}\nSystem: {system}\nDomain: {domain}\n"
        f"Section: {section}\nTitle: {title}\nAttachment: {attachment}\n"
        f"Encoding: {encoding}\n{SEP}\n{body}\n"
    )


ELOG_TEXT = (
    record(
        ROOT_ID, "Klystron interlock", "The klystron tripped at 08:00.", headers="Reply to: 90002\n"
    )
    + record(
        HTML_ID,
        "Re: Klystron interlock",
        ELOG_HTML_BODY,
        encoding="HTML",
        headers="In reply to: 90001\nReply to: 90003\n",
    )
    + record(
        LAST_ID,
        "Re: Klystron interlock: fixed",
        "Reset; beam back.",
        headers="In reply to: 90002\n",
    )
)


# --------------------------------------------------------------------------- hostile metadata

# Strings for every field a page or a CLI table shows beside the bodies: names, titles,
# authors, attributes, attachments, tags and frontmatter values. Markup that would run;
# HTML entities, which must show as written (never decoded twice); a right-to-left
# override; rich markup and an emoji code, which the CLI must print as they are; and
# values of 10,000 characters. A name is a file name: no '/', at most 255 bytes (so no
# closing tag, and long names only up to that); a report's command folder is a portable
# name too (no < > : " | ? *).
MARK = "mallory"  # every hostile document holds it: one search finds them all
H_SCRIPT = f"<script>{PWN.format(n=11)}</script>"
H_IMG = f'<img src=x onerror="{PWN.format(n=12)}">'
H_SVG = f'<svg onload="{PWN.format(n=13)}">'
H_JS = f"javascript:{PWN.format(n=14)}"
H_ENTITY = "&lt;script&gt;alert(1)&lt;/script&gt; &amp;amp; &#60;b&#62;"
H_RTL = "\u202egnp.exe"
H_RICH = "[red]x[/red] [/] [bold]:warning:"
NAME_ENTITY = "&lt;script&gt;&amp;amp;&#60;b&#62;"
NAME_RICH = "[bold red]x[on blue] :warning:"
H_TITLE = f"{H_SCRIPT} {H_IMG} {H_ENTITY} {H_RTL} {H_RICH} {MARK}"
H_LONG = (f"{H_SCRIPT} {H_IMG} {H_SVG} {H_JS} {H_ENTITY} {H_RTL} {H_RICH} " * 60)[:10_000]
# As a hit shows it: a hit's metadata is cut at budget.FIELD_CHARS (the document whole).
H_LONG_IN_HITS = H_LONG[:1_000]
MAX_NAME_BYTES = 255


def _long_name(start: str, end: str) -> str:
    """A file name of exactly MAX_NAME_BYTES bytes."""
    return start + "y" * (MAX_NAME_BYTES - len((start + end).encode())) + end


H_FOLDER = f"{NAME_ENTITY} {H_RTL} [bold red]x[on blue] 'rf'=1;#"
H_REPORT = f"{H_IMG} {NAME_ENTITY} {H_RTL} {NAME_RICH} {MARK}_20251121.md"
H_REPORT_LONG = _long_name(f"{H_SVG} {MARK} ", "_20251122.md")
H_COMMAND = f"{H_IMG}{NAME_ENTITY} {H_RTL} {NAME_RICH} {MARK}"
H_CONVERSATION_FOLDER = f"002-{H_IMG} {NAME_ENTITY} {H_RTL} {NAME_RICH}"
H_CONVERSATION_FILE = f"{H_SVG} {MARK}.md"
H_CONVERSATION = f"2025-11-21/{H_CONVERSATION_FOLDER}/{H_CONVERSATION_FILE}"
H_CONVERSATION_OTHER_FILE = f"{H_IMG} {NAME_ENTITY} {H_RTL}.txt"  # listed before it
H_CONVERSATION_LONG_FOLDER = _long_name("003-", f" {MARK}")
H_CONVERSATION_LONG = f"2025-11-21/{H_CONVERSATION_LONG_FOLDER}/notes.md"
H_FRONTMATTER: dict[str, object] = {
    "title": H_TITLE,
    "description": H_LONG,
    "tags": [H_IMG, H_JS, H_ENTITY, H_RTL, H_RICH, MARK],
    "owner": H_SVG,
    "link": H_JS,
    "notes": H_LONG,
    "nested": {H_SCRIPT: H_ENTITY},
    H_SVG: MARK,  # a hostile key
}
H_COMMAND_TEXT = (
    "---\n"
    + yaml.safe_dump(H_FRONTMATTER, allow_unicode=True, width=float("inf"), sort_keys=False)
    + f"---\n# Steps\n\nAsk {MARK}.\n"
)
H_ROOT_ID, H_REPLY_ID = 90011, 90012
H_ELOG_FILE = "2025/251122a.log"
H_AUTHOR = f"{H_IMG} {H_ENTITY} {H_RICH}"
H_SECTION = f"{H_RTL} {H_RICH}"
H_ATTACHMENT = f"251122_080000_{H_SVG}.png"
H_ELOG_TEXT = record(
    H_ROOT_ID,
    H_TITLE,
    f"{MARK} was here.",
    headers=f"Reply to: {H_REPLY_ID}\n",
    author=H_AUTHOR,
    category=H_SCRIPT,
    system=H_JS,
    domain=H_ENTITY,
    section=H_SECTION,
    attachment=H_ATTACHMENT,
) + record(
    H_REPLY_ID,
    H_LONG,
    f"{MARK} again.",
    headers=f"In reply to: {H_ROOT_ID}\n",
    author=H_RTL,
    category=H_RICH,
    system=H_RTL,
    domain=H_SCRIPT,
)


def url_path(*names: str) -> str:
    """Names as the parts of a page's URL path, each quoted whole ('/' too)."""
    return "/".join(quote(name, safe="") for name in names)


def write_corpus(reports: Path, commands: Path, conversations: Path, elog: Path) -> None:
    """The documents above, each in its collection's folder."""
    files = {
        reports / COMMAND / REPORT: REPORT_TEXT,
        commands / f"{COMMAND}.md": COMMAND_TEXT,
        conversations / CONVERSATION: CONVERSATION_TEXT,
        elog / ELOG_FILE: ELOG_TEXT,
        reports / H_FOLDER / H_REPORT: f"# {MARK}\n\nA report of {MARK}.\n",
        reports / H_FOLDER / H_REPORT_LONG: f"{MARK} wrote a long name.\n",
        commands / f"{H_COMMAND}.md": H_COMMAND_TEXT,
        # The command of the hostile reports, whose page lists them.
        commands / f"{H_FOLDER}.md": f"---\ntitle: {MARK}'s reports\n---\nWrites reports.\n",
        conversations / H_CONVERSATION: f"{MARK} talked.\n",
        conversations / H_CONVERSATION.rsplit("/", 1)[0] / H_CONVERSATION_OTHER_FILE: "notes\n",
        conversations / H_CONVERSATION_LONG: f"{MARK} talked at length.\n",
        elog / H_ELOG_FILE: H_ELOG_TEXT,
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@contextmanager
def served(root: Path) -> Iterator[TestClient]:
    """A client of `trove serve`'s HTTP app over the documents above, written in ``root``
    (reports, commands, conversations, elog) and every collection indexed first."""
    folders = [root / name for name in ("reports", "commands", "conversations", "elog")]
    write_corpus(*folders)
    settings = settings_from_dict(
        {
            "sources": {f.name: str(f) for f in folders},
            "index": {"dir": str(root / "index")},
            "elog": {"rerank": "lexical"},
        },
        base=root,
    )
    reindex(settings)
    server = build_server(settings)
    try:
        with TestClient(http_app(server, "127.0.0.1", "")) as client:
            yield client
    finally:
        server.close()
