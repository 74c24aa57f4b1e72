"""search_commands, get_command, list_commands: finding the command for a job.

search_commands runs three tiers and merges them:

1. the command's file name: query keywords against the words of the name (split on
   ``_``, ``-``, case changes and digits), whole words or word starts only;
2. fuzzy matching (rapidfuzz) of the keywords against the words of the title,
   description, tags, other frontmatter values and body;
3. the command's reports: commands whose reports hold the query words, by how well the
   best report matches, how many match and how recent the newest is.

Each tier scores 0-1 within its own band (tier 1: 0.45-1, tier 2: 0.25-0.80, tier 3:
0.10-0.60), so a strong match of a higher tier (tier 1 covering every keyword, tier 2
at 70 % or more) outranks anything a lower tier can score, while a weak higher-tier
match can still fall below a strong lower-tier one. A command found by several tiers
is listed once, under its highest tier, with the best of its scores plus a bonus of at
most `EVIDENCE_BONUS` for what its other tiers found (so report evidence orders
commands that match a query's words equally well), and every reason.

CJK text is indexed one character per token, so a CJK keyword (a run of characters) is
looked up by its characters and matched on the field's text, as a whole or by the
character pairs it shares with it.

Commands are few: their stored fields are read once per index generation into a
`CommandCatalog`, so tiers 1 and 2 are work in memory.

The package: words.py (how names, queries and texts split into words), catalog.py (the
commands of one index generation), tiers.py, search.py, documents.py (get_command,
list_commands), models.py (the answers).
"""

from __future__ import annotations

from query.commands.documents import get_command, list_commands
from query.commands.models import (
    COLLECTION,
    CommandDetail,
    CommandList,
    CommandMatch,
    CommandSearchResponse,
    CommandSummary,
)
from query.commands.search import search_commands
from query.commands.tiers import BANDS, EVIDENCE_BONUS
from query.commands.words import name_words, query_keywords

__all__ = [
    "BANDS",
    "COLLECTION",
    "EVIDENCE_BONUS",
    "CommandDetail",
    "CommandList",
    "CommandMatch",
    "CommandSearchResponse",
    "CommandSummary",
    "get_command",
    "list_commands",
    "name_words",
    "query_keywords",
    "search_commands",
]
