"""The entries a regex can match at all: those whose title or body has terms holding
the literals the regex requires (regex_literals.py), found in the index's term lists.

The index's terms are the maximal runs of letters and digits (and device names whole),
so a literal's word pieces lie inside terms; ``beam.*energy`` narrows to the entries
holding a term with ``beam`` in it and one with ``energy``.
"""

from __future__ import annotations

import re

from indexer.cjk import CJK_CHARS
from query.elog.caches import ElogCache, FoldedTerms
from query.elog.index_access import ElogIndex
from query.elog.regex_literals import Lit, Need

# A literal found in more index terms than this narrows nothing worth the postings reads.
MAX_LITERAL_TERMS = 3000
# The shortest literal piece worth looking up (one letter is in nearly every term).
MIN_LITERAL_CHARS = 2

_PIECE = re.compile(rf"[^\W_{CJK_CHARS}]+|[{CJK_CHARS}]")
_PLAIN = re.compile(rf"[^\W_{CJK_CHARS}]+|[{CJK_CHARS}]")
# Characters whose case-insensitive match a literal can be looked up exactly: ASCII
# (as the index lower-cases it, after _ASCII_FOLD) and CJK (caseless). Any other
# letter can match characters that neither lower() nor casefold() equate with it
# (the regex package's folding table is its own and newer), so it narrows nothing.
_EXACT = re.compile(rf"[\x00-\x7f{CJK_CHARS}]*")
# The only non-ASCII letters that match ASCII ones case-insensitively, as the index
# holds them: long s (matches s), dotless i (matches I), and the dotted capital I
# (matches i), lower-cased to "i" and a combining dot. The Kelvin sign is "k" already.
_ASCII_FOLD = str.maketrans({"\u017f": "s", "\u0131": "i", "\u0307": None})


def folded_terms(index: ElogIndex, cache: ElogCache) -> dict[str, FoldedTerms]:
    """The plain terms of title and body (words and device-name parts, no whole names
    or runs), cached per index version. A literal's word piece never spans a separator,
    so it lies inside a part whenever it lies inside a whole name."""
    return cache.folded_terms.get(index.version, lambda: _folded_terms(index))


def _folded_terms(index: ElogIndex) -> dict[str, FoldedTerms]:
    made = {}
    for name in ("title", "body"):
        plain: dict[str, None] = {}
        spelled: dict[str, list[str]] = {}
        for term in index.field_terms(name):
            folded = term if term.isascii() else term.translate(_ASCII_FOLD)
            if _PLAIN.fullmatch(folded):
                plain[folded] = None
                if folded != term:
                    spelled.setdefault(folded, []).append(term)
        made[name] = FoldedTerms("\n" + "\n".join(plain) + "\n", spelled)
    return made


def docs_with_literal(index: ElogIndex, cache: ElogCache, lit: Lit) -> set[int] | None:
    """Doc numbers whose title or body has terms holding every word piece of the literal
    (None when that narrows nothing).

    A piece with an ASCII non-word character or an anchor before it starts a term, and
    one with such a character or anchor after it ends one: ``^Re: RF`` needs the term
    ``re`` itself and a term starting with ``rf``. Pieces with other letters than ASCII
    and CJK are not looked up (see _EXACT).
    """
    text = lit.text.lower()
    fields = folded_terms(index, cache)
    postings = cache.postings
    result: set[int] | None = None
    for m in _PIECE.finditer(text):
        piece = m.group()
        if not _EXACT.fullmatch(piece):
            continue
        before, after = text[m.start() - 1 : m.start()], text[m.end() : m.end() + 1]
        starts = bool(_EXACT.fullmatch(before)) if before else lit.starts
        ends = bool(_EXACT.fullmatch(after)) if after else lit.ends
        if len(piece) < MIN_LITERAL_CHARS and piece.isascii() and not (starts and ends):
            continue
        needle = ("\n" if starts else "") + piece + ("\n" if ends else "")
        docs: set[int] = set()
        found = 0
        for name, folded in fields.items():
            joined = folded.joined
            terms: set[str] = set()
            for hit in re.finditer(re.escape(needle), joined):
                begin = joined.rfind("\n", 0, hit.start() + starts) + 1
                end = joined.find("\n", hit.end() - ends)
                terms.add(joined[begin:end])
            found += len(terms)
            if found > MAX_LITERAL_TERMS:
                break
            for term in terms:
                for spelling in (term, *folded.spelled.get(term, ())):
                    docs.update(postings.docs(index, name, spelling))
        if found > MAX_LITERAL_TERMS:
            continue
        result = docs if result is None else result & docs
    return result


def docs_for_need(index: ElogIndex, cache: ElogCache, need: Need) -> set[int] | None:
    """Doc numbers that can satisfy the and/or tree of literals (None: any)."""
    if need is None:
        return None
    if isinstance(need, Lit):
        return docs_with_literal(index, cache, need)
    kind, parts = need
    sets = [docs_for_need(index, cache, p) for p in parts]
    if kind == "or":
        if any(s is None for s in sets):
            return None
        return set().union(*sets)  # type: ignore[arg-type]
    known = [s for s in sets if s is not None]
    if not known:
        return None
    out = known[0]
    for s in known[1:]:
        out = out & s
    return out
