"""search_elog's filters: Category/System/Domain values (checked against the allowed
ones) and the date range, turned into the set of entries they select."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from rapidfuzz import process

from indexer.sources.elog import allowed_filter_values
from query.context import QueryContext
from query.elog.caches import DocTable, elog_cache
from query.elog.dates import Bound
from query.elog.index_access import ElogIndex
from query.errors import TroveError


def allowed_values(ctx: QueryContext, root: Path) -> dict[str, list[str]]:
    """Allowed Category/System/Domain values: ``[sources] elog_config``, else SwissFEL's."""
    config = ctx.settings.sources.elog_config
    stamp: tuple[str, int | None] | None
    try:
        stamp = (str(config), config.stat().st_mtime_ns) if config else None
    except OSError:
        stamp = (str(config), None)
    return elog_cache(ctx).allowed.get(stamp, lambda: _read_allowed(config, root))


def _read_allowed(config: Path | None, root: Path) -> dict[str, list[str]]:
    values = allowed_filter_values(config, root.name)
    if config is not None and not any(values.values()):
        values = allowed_filter_values(config)  # no section named after the folder
    return values


def _filter_term(name: str, value: str | None, allowed: list[str], index: ElogIndex) -> str | None:
    """The index term a filter value selects (lower-cased), or None for no filter."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TroveError("INVALID_ARGUMENT", f"{name} must be text, got {value!r}")
    text = value.strip()
    if not text:
        return None
    lowered = text.lower()
    if not allowed or lowered in {a.lower() for a in allowed}:
        return lowered
    if index.has_term(name, lowered):
        return lowered  # a value older entries carry
    close = process.extractOne(text, allowed, score_cutoff=70)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise TroveError(
        "INVALID_ARGUMENT",
        f"unknown {name} {text!r}{hint}; valid values: {', '.join(allowed)} "
        "(any case; values found in older entries work too)",
    )


def selected(
    ctx: QueryContext,
    root: Path,
    index: ElogIndex,
    table: DocTable,
    filters: dict[str, str | None],
    low: Bound | None,
    high: Bound | None,
) -> set[int] | None:
    """Doc numbers of the entries in the date range and filters (None: every entry)."""
    allowed = allowed_values(ctx, root)
    sets: list[set[int]] = []
    for name, value in filters.items():
        term = _filter_term(name, value, allowed.get(name.capitalize(), []), index)
        if term is not None:
            found = set(elog_cache(ctx).postings.docs(index, name, term))
            sets.append(found & table.live)
    days: list[int | None] = [None, None]
    times: list[int | None] = [None, None]
    walls: list[tuple[Bound, bool]] = []
    for i, bound in enumerate((low, high)):
        if bound is None:
            continue
        if bound.moment is not None and bound.moment.tzinfo is not None:
            times[i] = int(bound.moment.timestamp())
        else:
            days[i] = bound.day
            if bound.moment is not None:
                walls.append((bound, i == 0))
    if days != [None, None]:
        sets.append(table.in_days(*days))
    if times != [None, None]:
        sets.append(table.in_times(*times))
    if not sets:
        return None
    sets.sort(key=len)
    docs = sets[0].intersection(*sets[1:])
    for bound, is_low in walls:
        # A time of day without an offset: compare with each entry's own wall clock.
        wall = bound.moment.replace(tzinfo=None)  # type: ignore[union-attr]
        for docnum in docs & table.in_days(bound.day, bound.day):
            local = datetime.fromisoformat(index.stored_fields(docnum)["date"])
            local = local.replace(tzinfo=None)
            if (local < wall) if is_low else (local > wall):
                docs.discard(docnum)
    return docs
