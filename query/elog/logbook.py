"""The logbook folder a search reads, and the link to one of its entries."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from query.context import QueryContext
from query.indexes import source_folder

COLLECTION = "elog"


def logbook_root(ctx: QueryContext) -> Path:
    """The configured logbook folder; DIRECTORY_NOT_FOUND if it is not one."""
    return source_folder(ctx.settings, COLLECTION, "ELOG logbook")


def entry_link(ctx: QueryContext, root: Path, fields: Mapping[str, Any]) -> str:
    """``[elog] link_base_url`` + the entry's id; a file:// URL when that is unset."""
    base = ctx.settings.elog.link_base_url.strip()
    mid = fields["elog_id"]
    if base:
        return f"{base.rstrip('/')}/{mid}"
    return (root / fields.get("file", "")).resolve().as_uri() + f"#{mid}"
