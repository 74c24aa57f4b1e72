"""date_range: a month folder and its day folders, or one day folder."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from query.errors import TroveError

_DATE_RANGE = re.compile(r"(\d{4})-(\d{2})(?:-(\d{2}))?")
DATE_RANGE_HELP = (
    "use YYYY-MM for a month (e.g. 2025-11: the folder 2025-11/ and every day folder "
    "2025-11-DD/) or YYYY-MM-DD for one day (e.g. 2025-11-10: only the folder 2025-11-10/)"
)


@dataclass(frozen=True)
class DateRange:
    """A validated date_range: a month (``2025-11``) or one day (``2025-11-10``)."""

    value: str

    @property
    def is_month(self) -> bool:
        return len(self.value) == 7

    def field(self) -> tuple[str, str]:
        """The index field and term that select this range's documents."""
        return ("month", self.value) if self.is_month else ("date", self.value)


def check_date_range(value: str | None) -> DateRange | None:
    """None for no filter; INVALID_DATE_RANGE for anything but YYYY-MM or YYYY-MM-DD."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise TroveError("INVALID_DATE_RANGE", f"date_range must be a string; {DATE_RANGE_HELP}")
    text = value.strip()
    m = _DATE_RANGE.fullmatch(text)
    valid = False
    if m and text.isascii():
        try:
            date(int(m.group(1)), int(m.group(2)), int(m.group(3) or 1))
            valid = True
        except ValueError:
            pass
    if not valid:
        raise TroveError(
            "INVALID_DATE_RANGE", f"date_range {value!r} is not valid; {DATE_RANGE_HELP}"
        )
    return DateRange(text)
