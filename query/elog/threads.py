"""get_elog_thread: an entry's thread, walked through ``In reply to`` and ``Reply to``
links, tolerating missing entries and cycles."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from query import budget
from query.context import QueryContext
from query.elog.index_access import ElogIndex, open_index
from query.elog.logbook import entry_link, logbook_root
from query.elog.models import ElogThreadEntry, ElogThreadResponse, shown
from query.errors import TroveError

MAX_THREAD_ENTRIES = 10_000
# A thread too long for the answer's budget keeps at least this much of each body.
FIRST_CHARS = 200


@dataclass
class _Walk:
    index: ElogIndex
    docs: dict[int, Mapping[str, Any] | None] = field(default_factory=dict)
    missing: set[int] = field(default_factory=set)
    kids: dict[int, list[int]] = field(default_factory=dict)

    def doc(self, mid: int) -> Mapping[str, Any] | None:
        if mid not in self.docs:
            fields = self.index.document(str(mid))
            self.docs[mid] = fields if fields and fields.get("kind") == "doc" else None
        return self.docs[mid]

    def children(self, mid: int) -> list[int]:
        """Replies of ``mid``: its ``Reply to`` list and entries ``In reply to`` it."""
        if mid in self.kids:
            return self.kids[mid]
        fields = self.doc(mid) or {}
        ids = {int(n) for n in fields.get("reply_to") or ()}
        for docnum in self.index.docs_with_number("in_reply_to", mid):
            stored = self.index.stored_fields(docnum)
            if stored.get("kind") == "doc":
                ids.add(stored["elog_id"])
                self.docs.setdefault(stored["elog_id"], stored)
        found = []
        for child in sorted(ids):
            if self.doc(child) is None:
                self.missing.add(child)
            elif child != mid:
                found.append(child)
        self.kids[mid] = found
        return found


def get_elog_thread(
    ctx: QueryContext,
    message_id: int,
    include_replies: bool = True,
    include_parents: bool = True,
    *,
    whole: bool = False,
) -> ElogThreadResponse:
    """The thread of an entry: both flags on, the root and every reply at every level;
    parents only, the chain from the root down to the entry; replies only, the entry and
    all its replies; neither, the entry alone. Missing links and cycles are tolerated.
    The answer keeps its size budget (query/budget.py: long metadata and bodies cut),
    unless ``whole`` (the web page and the CLI, for people).

    Raises `TroveError`: INVALID_ARGUMENT, NOT_FOUND, DIRECTORY_NOT_FOUND.
    """
    if isinstance(message_id, bool) or not isinstance(message_id, int) or message_id < 1:
        raise TroveError(
            "INVALID_ARGUMENT", f"message_id must be a positive whole number, got {message_id!r}"
        )
    for name, flag in (("include_replies", include_replies), ("include_parents", include_parents)):
        if not isinstance(flag, bool):
            raise TroveError("INVALID_ARGUMENT", f"{name} must be true or false, got {flag!r}")
    root = logbook_root(ctx)
    with open_index(ctx) as index:
        walk = _Walk(index)
        if walk.doc(message_id) is None:
            raise TroveError(
                "NOT_FOUND",
                f"no ELOG entry {message_id} in the logbook {root}; search_elog gives the "
                "ids of existing entries",
            )
        chain = [message_id]  # the entry, its parent, ... up to the root
        while True:
            parent = (walk.doc(chain[-1]) or {}).get("in_reply_to")
            if parent is None or parent in chain:
                break
            if walk.doc(parent) is None:
                walk.missing.add(parent)
                break
            chain.append(parent)
        root_id = chain[-1]
        depth_of_entry = len(chain) - 1
        placed: list[tuple[int, int]] = []
        if include_parents and include_replies:
            _subtree(walk, root_id, 0, placed)
        elif include_parents:
            placed = [(mid, depth) for depth, mid in enumerate(reversed(chain))]
        elif include_replies:
            _subtree(walk, message_id, depth_of_entry, placed)
        else:
            placed = [(message_id, depth_of_entry)]
        replies = {mid: walk.children(mid) for mid, _ in placed}
        docs = [walk.doc(mid) or {} for mid, _ in placed]
        stale = index.stale_files(root, (d for d in docs if "file" in d))
        entries = [
            _thread_entry(ctx, root, doc, depth, replies[mid], doc.get("file") in stale, whole)
            for doc, (mid, depth) in zip(docs, placed, strict=True)
        ]
        missing = sorted(walk.missing)
        fresh = index.freshness(ctx)
    answer = ElogThreadResponse(
        root_id=root_id, message_id=message_id, entries=entries, missing=missing, freshness=fresh
    )
    if not whole:
        _fit(answer, budget.limit_for(include_replies and include_parents))
    return answer


def _fit(answer: ElogThreadResponse, limit: int) -> None:
    """Cut the longest bodies, to the same length, until the answer's JSON fits ``limit``
    characters; each entry cut says so, and the note how to read it whole."""
    if budget.size(answer) <= limit:
        return
    bodies = [e.body for e in answer.entries]

    def size_at(cap: int) -> int:
        for entry, body in zip(answer.entries, bodies, strict=True):
            entry.body = body if len(body) <= cap else body[:cap] + budget.CUT_MARK
        return budget.size(answer)

    room = limit - 600  # for the note
    dropped: list[ElogThreadEntry] = []
    total = size_at(FIRST_CHARS)
    if total > room:
        # So many entries that even their bodies' starts cannot all fit: the thread is
        # shown up to the entry that fills it.
        sizes = [len(e.model_dump_json()) + 1 for e in answer.entries]
        used = total - sum(sizes)
        keep = 0
        while keep < len(sizes) - 1 and used + sizes[keep] <= room:
            used += sizes[keep]
            keep += 1
        keep = max(keep, 1)
        dropped = answer.entries[keep:]
        del answer.entries[keep:]
        del bodies[keep:]
    low, high = 0, max(len(b) for b in bodies)
    while low < high:  # the largest cap that fits
        cap = (low + high + 1) // 2
        if size_at(cap) <= room:
            low = cap
        else:
            high = cap - 1
    size_at(low)
    cut = [e for e, body in zip(answer.entries, bodies, strict=True) if len(body) > low]
    for entry in cut:
        entry.cut = True
    parts = []
    if cut:
        alone = len(answer.entries) == 1 and not dropped
        parts.append(
            f"{len(cut)} {'body' if len(cut) == 1 else 'bodies'} cut to {low:,} characters "
            f"to keep the answer under {limit:,}; "
            + (
                "the logbook holds it whole (its link)"
                if alone
                else "read one whole with get_elog_thread(message_id=ID, "
                "include_replies=false, include_parents=false)"
            )
        )
    if dropped:
        first = dropped[0]
        parts.append(
            f"the thread's last {len(dropped)} entries are left out (from {first.elog_id} "
            f"on); read them with get_elog_thread(message_id={first.elog_id}, "
            "include_parents=false) and the ids in replies"
        )
    answer.note = "; ".join(parts)


def _subtree(walk: _Walk, top: int, depth: int, placed: list[tuple[int, int]]) -> None:
    seen = {mid for mid, _ in placed}
    stack = [(top, depth)]
    while stack and len(placed) < MAX_THREAD_ENTRIES:
        mid, d = stack.pop()
        if mid in seen:
            continue  # a cycle, or a reply listed under two parents
        seen.add(mid)
        placed.append((mid, d))
        stack.extend((child, d + 1) for child in reversed(walk.children(mid)) if child not in seen)


def _thread_entry(
    ctx: QueryContext,
    root: Path,
    fields: Mapping[str, Any],
    depth: int,
    replies: list[int],
    stale: bool,
    whole: bool,
) -> ElogThreadEntry:
    limit = None if whole else budget.FIELD_CHARS
    return ElogThreadEntry(
        elog_id=fields["elog_id"],
        depth=depth,
        **{name: budget.clip(value, limit) for name, value in shown(fields).items()},  # type: ignore[arg-type]
        in_reply_to=fields.get("in_reply_to"),
        replies=replies,
        body=fields.get("body") or "",
        attachments=[budget.clip(a, limit) for a in list(fields.get("attachments") or ())],
        link=entry_link(ctx, root, fields),
        stale=stale,
    )
