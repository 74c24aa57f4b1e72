"""An ELOG thread written as elogd writes it: a root entry and its replies, for tests of
answers about threads."""

from __future__ import annotations

from pathlib import Path

SEP = "=" * 40
FIRST_ID = 80001


def write_thread(root: Path, replies: int, body: str) -> list[int]:
    """A thread of a root and ``replies`` direct replies, each with ``body``, in one day
    file of the logbook folder ``root / "SwissFEL"``; their ids, the root first."""
    ids = list(range(FIRST_ID, FIRST_ID + replies + 1))
    records = []
    for n, mid in enumerate(ids):
        links = (
            f"Reply to: {', '.join(map(str, ids[1:]))}\n" if n == 0 else f"In reply to: {ids[0]}\n"
        )
        records.append(
            f"$@MID@$: {mid}\nDate: Thu, 20 Nov 2025 08:{n % 60:02d}:00 +0100\n{links}"
            f"Author: T. Test\nCategory: Info\nSystem: RF\nDomain: Aramis\nSection: \n"
            f"Title: {'Shift summary' if n == 0 else 'Re: Shift summary'}\nAttachment: \n"
            f"Encoding: plain\n{SEP}\n{body}\n"
        )
    path = root / "SwissFEL" / "2025" / "251120a.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(records), encoding="utf-8")
    return ids
