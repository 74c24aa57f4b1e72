"""The size every answer keeps: agents read answers through a context window (Claude Code
refuses a tool result over 25,000 tokens by default), so no answer's JSON exceeds
MAX_CHARS for any valid arguments, and answers with default arguments stay under
DEFAULT_CHARS. Where a limit cuts, the answer says so and how to get the rest.

Two means: free text a document carries in its metadata (a title, a description, an
attribute) is cut to FIELD_CHARS in hits; and a page of hits that still does not fit
ends early, its ``next_offset`` pointing at the first hit left out.
"""

from __future__ import annotations

from typing import Any

MAX_CHARS = 80_000
DEFAULT_CHARS = 40_000
# Metadata text shown in a hit (titles, descriptions, attributes, names): the rest is
# one get call away.
FIELD_CHARS = 1_000
CUT_MARK = "…"


def clip(text: str, limit: int | None = FIELD_CHARS) -> str:
    """``text``, or its first ``limit`` characters and CUT_MARK (None: no limit)."""
    return text if limit is None or len(text) <= limit else text[:limit] + CUT_MARK


def clip_values(value: Any, limit: int = FIELD_CHARS) -> Any:
    """A JSON-like value with every text in it clipped (lists past 100 items cut too)."""
    if isinstance(value, str):
        return clip(value, limit)
    if isinstance(value, dict):
        return {clip(str(k), limit): clip_values(v, limit) for k, v in list(value.items())[:100]}
    if isinstance(value, list):
        return [clip_values(v, limit) for v in value[:100]]
    return value


def size(answer: Any) -> int:
    """The characters of an answer's JSON (a pydantic model), as a client receives it."""
    return len(answer.model_dump_json())


def limit_for(by_default: bool) -> int:
    """The budget of an answer: DEFAULT_CHARS when the arguments that size it are their
    defaults, MAX_CHARS otherwise."""
    return DEFAULT_CHARS if by_default else MAX_CHARS


def fit_page(answer: Any, hits: str, offset: int, limit: int = MAX_CHARS) -> None:
    """Drop hits from the end of ``answer``'s list ``hits`` until its JSON fits ``limit``
    characters; then ``next_offset`` points at the first hit dropped and ``note`` says
    so. An answer that fits is left as it is."""
    shown: list[Any] = getattr(answer, hits)
    total = size(answer)
    if total <= limit:
        return
    # Per hit, its share of the JSON (its own JSON and a comma): dropped from the end.
    sizes = [len(hit.model_dump_json()) + 1 for hit in shown]
    keep = len(shown)
    while keep > 1 and total > limit - 200:  # room for the note
        keep -= 1
        total -= sizes[keep]
    del shown[keep:]
    answer.next_offset = offset + keep
    said = (
        f"cut to {keep} hit{'s' if keep != 1 else ''} to keep the answer under {limit:,} "
        f"characters; ask again with offset={offset + keep} for the rest"
    )
    answer.note = f"{answer.note}; {said}" if answer.note else said
