"""What the help page (/help) and the hint under the search box say about the query
language: the operators, as docs/QUERY-LANGUAGE.md's table has them row for row
(tests/test_site_browse.py checks that they agree), and examples, each a link that runs
it.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from markupsafe import Markup

from query.site import render

# docs/QUERY-LANGUAGE.md, "Operators": (write, means), in markdown.
OPERATORS: tuple[tuple[str, str], ...] = (
    ('`"exact phrase"`', "the words in this order, any whitespace between them, in any case"),
    (
        '`-word`, `-"a phrase"`',
        "leave out documents holding the word (as a whole word) or the phrase",
    ),
    ('`a OR b`, `"a b" OR c`', "either side; OR binds loosest: `a b OR c` is (a and b) or c"),
    (
        "`in:reports`",
        (
            "search this collection only: `reports`, `commands`, `conversations`, `elog`; "
            "several: `in:reports in:elog` or `in:reports,elog`"
        ),
    ),
    ("`command:NAME`", "one command's reports"),
    ("`since:2025-10-06`, `until:2025-10-06`", "from, through this day (both count)"),
    (
        "`since:2025-10`, `since:2025`",
        (
            "a month or a year: `since:` is its first day, `until:` its last "
            "(`until:2024-02` is 2024-02-29)"
        ),
    ),
    (
        "`category:`, `system:`, `domain:`",
        "the ELOG's attributes; any case, as the ELOG matches them",
    ),
)

# Queries over the sample data of data/ (what each shows), one or more per operator.
EXAMPLES: tuple[tuple[str, str], ...] = (
    ('"proxy timeout"', "the phrase, its words in this order"),
    ("proxy -pac", "proxy, leaving out what mentions pac"),
    ('timeout -"decode timeout"', "timeout, leaving out the phrase decode timeout"),
    ("klystron OR modulator", "either word"),
    ('"beam dump" OR undulator', "the phrase or the word"),
    ("in:reports proxy", "proxy in the reports only"),
    ("in:reports,elog timeout", "timeout in the reports and the ELOG"),
    ("command:proxy-slow-meeting-analysis-command 407", "407 in one command's reports"),
    ("since:2025-11-01 proxy", "proxy, from 1 November 2025 on"),
    ("until:2025-10 proxy", "proxy, up to the end of October 2025"),
    ("in:elog since:2025 beam", "beam in the ELOG's entries of 2025 and later"),
    ("category:Problem beam", "beam in the ELOG's problems"),
    ('category:"Shift summary" beam', "a value of two words, quoted"),
    ("system:RF klystron", "klystron in the ELOG's RF entries"),
    ("domain:Athos undulator", "undulator in the ELOG's Athos entries"),
)

# The line under the search box: the operators people reach for first.
HINT: tuple[str, ...] = ('"exact phrase"', "-leave_out", "a OR b", "in:elog", "since:2025-10")


@dataclass(frozen=True)
class Example:
    query: str
    what: str

    @property
    def url(self) -> str:
        return "/?" + urlencode({"q": self.query})


def operators() -> list[tuple[Markup, Markup]]:
    return [(render.inline_markdown(w), render.inline_markdown(m)) for w, m in OPERATORS]


def examples() -> list[Example]:
    return [Example(query, what) for query, what in EXAMPLES]
