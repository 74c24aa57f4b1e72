"""search_elog's ``since``/``until``: read into the bounds of a date range.

A bound is a day, and maybe a time on it: aware (an absolute instant), or naive (read in
each entry's own offset). ``until`` given as a day is inclusive through its end.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime

from query.errors import TroveError


@dataclass(frozen=True)
class Bound:
    """One end of the date range: a day, and a time on it (aware, or naive = local)."""

    day: int  # YYYYMMDD
    moment: datetime | None  # None: the whole day counts

    @property
    def wall(self) -> datetime:
        """For comparing two bounds: the naive wall-clock time."""
        if self.moment is not None:
            return self.moment.replace(tzinfo=None)
        return datetime(self.day // 10000, self.day // 100 % 100, self.day % 100)


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_MONTH = re.compile(r"\d{4}-\d{2}")


def _parse_bound(value: str | date | None, name: str, end: bool) -> Bound | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        return Bound(value.year * 10000 + value.month * 100 + value.day, None)
    elif not isinstance(value, str):
        raise TroveError("INVALID_DATE_RANGE", f"{name} must be a date string, got {value!r}")
    else:
        text = value.strip()
        if not text:
            return None
        hint = "use YYYY-MM-DD or ISO 8601 such as 2025-10-06T08:00:00+02:00"
        try:
            if _DAY.fullmatch(text):
                d = date.fromisoformat(text)
                return Bound(d.year * 10000 + d.month * 100 + d.day, None)
            if _MONTH.fullmatch(text):
                year, month = int(text[:4]), int(text[5:])
                last = calendar.monthrange(year, month)[1] if 1 <= month <= 12 else 0
                d = date(year, month, last if end else 1)
                return Bound(d.year * 10000 + d.month * 100 + d.day, None)
            moment = datetime.fromisoformat(text)
        except ValueError as exc:
            raise TroveError(
                "INVALID_DATE_RANGE", f"{name} {value!r} is not a valid date ({exc}): {hint}"
            ) from None
    return Bound(moment.year * 10000 + moment.month * 100 + moment.day, moment)


def check_dates(
    since: str | date | None, until: str | date | None
) -> tuple[Bound | None, Bound | None]:
    """``since`` and ``until`` read; INVALID_DATE_RANGE if one is bad or since > until."""
    low = _parse_bound(since, "since", end=False)
    high = _parse_bound(until, "until", end=True)
    if low is not None and high is not None:
        if (
            low.moment is not None
            and high.moment is not None
            and (low.moment.tzinfo is not None and high.moment.tzinfo is not None)
        ):
            later = low.moment > high.moment
        else:  # wall-clock times; a bare day runs from 00:00 (since) to 24:00 (until)
            start, end = low.wall, high.wall
            # A day until: past its end is on a later day (24:00 of 9999-12-31 is no date).
            later = start > end if high.moment is not None else start.date() > end.date()
        if later:
            raise TroveError(
                "INVALID_DATE_RANGE",
                f"since ({since}) is after until ({until}); give since <= until",
            )
    return low, high
