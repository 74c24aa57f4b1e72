"""Documents for the web page's tests: a report, a command, a conversation and an ELOG
thread, some of them holding script that must never run in the page.

Every hostile piece sets ``window.__pwned`` and the document title when it runs, so a
browser test can tell that none did.
"""

from __future__ import annotations

from pathlib import Path

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


def record(mid: int, title: str, body: str, encoding: str = "plain", headers: str = "") -> str:
    """One ELOG record as elogd writes it."""
    return (
        f"$@MID@$: {mid}\nDate: Thu, 20 Nov 2025 08:0{mid % 10}:00 +0100\n{headers}"
        f"Author: T. Test\nCategory: Problem\nSystem: RF\nDomain: Aramis\nSection: \n"
        f"Title: {title}\nAttachment: \nEncoding: {encoding}\n{SEP}\n{body}\n"
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


def write_corpus(reports: Path, commands: Path, conversations: Path, elog: Path) -> None:
    """The documents above, each in its collection's folder."""
    files = {
        reports / COMMAND / REPORT: REPORT_TEXT,
        commands / f"{COMMAND}.md": COMMAND_TEXT,
        conversations / CONVERSATION: CONVERSATION_TEXT,
        elog / ELOG_FILE: ELOG_TEXT,
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
