"""Turning documents into safe HTML: query matches marked, markdown rendered with raw HTML
shown as text, ELOG HTML sanitised.

Every function here returns ``Markup`` built only from escaped text and tags it wrote
itself (or nh3's sanitised output): nothing a document holds reaches the page as markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape

from query import syntax
from query.errors import TroveError

# Words shorter than this are not marked (single letters would mark half a page), unless
# they are CJK characters, which are words of their own.
MIN_TERM_CHARS = 2
MAX_TERMS = 20
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# nh3's output: a tag, whose attribute values are always double-quoted; or text.
_TAG = re.compile(r'(<[^>"]*(?:"[^"]*"[^>"]*)*>)')
# ELOG bodies may link anywhere on the web, never to a script.
URL_SCHEMES = {"http", "https", "mailto"}


def query_terms(query: str | None) -> list[str]:
    """The words and phrases a query searches for (not what it leaves out, nor its
    filters: query/syntax.py reads it), worth marking in a text, longest first."""
    if not query:
        return []
    try:
        alternatives = syntax.parse(query, require_words=False).alternatives
    except TroveError:  # marked as words all the same
        clauses, phrases = [query.strip()], []
    else:
        clauses = [c.words_text() for c in alternatives]
        phrases = [p for c in alternatives for p in c.phrases]
    kept: list[str] = []
    for clause in clauses:
        words = [w for w in re.split(r"\W+", clause) if w]
        words = [w for w in words if len(w) >= MIN_TERM_CHARS or _CJK.match(w)]
        kept += words
        if len(words) > 1:
            kept.append(clause)
    kept += phrases
    unique = list(dict.fromkeys(w.lower() for w in kept))[:MAX_TERMS]
    return sorted(unique, key=len, reverse=True)


@lru_cache(maxsize=256)
def _pattern(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    if not terms:
        return None
    return re.compile("|".join(re.escape(t) for t in terms), re.IGNORECASE)


def highlight(text: str, terms: Sequence[str]) -> Markup:
    """``text`` escaped, with every occurrence of a term wrapped in <mark>: the matches are
    found in the raw text and each piece is escaped on its own, so a mark never splits an
    entity and no text becomes a tag."""
    pattern = _pattern(tuple(terms))
    if pattern is None:
        return escape(text)
    out: list[str] = []
    at = 0
    for m in pattern.finditer(text):
        if m.end() == m.start():
            continue
        out.append(str(escape(text[at : m.start()])))
        out.append(f"<mark>{escape(m.group())}</mark>")
        at = m.end()
    out.append(str(escape(text[at:])))
    return Markup("".join(out))


def highlight_html(safe_html: str, terms: Sequence[str]) -> Markup:
    """Marks in the text between the tags of already sanitised HTML."""
    if not terms:
        return Markup(safe_html)
    parts = _TAG.split(safe_html)
    for i in range(0, len(parts), 2):  # even parts are text, odd parts tags
        if parts[i]:
            parts[i] = str(highlight(html.unescape(parts[i]), terms))
    return Markup("".join(parts))


# --------------------------------------------------------------------------- markdown


def _markdown(terms: Sequence[str]) -> MarkdownIt:
    # html=False: raw HTML in a document is shown as text. markdown-it's own link check
    # refuses javascript:, vbscript:, file: and data: (but for images) URLs.
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table").enable("strikethrough")

    def text(
        self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        return str(highlight(tokens[idx].content, terms))

    def code_inline(
        self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        return f"<code>{highlight(tokens[idx].content, terms)}</code>"

    def code_block(
        self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        token = tokens[idx]
        info = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
        lang = f' class="language-{escape(info)}"' if info else ""
        return f"<pre><code{lang}>{highlight(token.content, terms)}</code></pre>\n"

    md.add_render_rule("text", text)
    md.add_render_rule("code_inline", code_inline)
    md.add_render_rule("code_block", code_block)
    md.add_render_rule("fence", code_block)
    return md


def markdown(text: str, terms: Sequence[str] = ()) -> Markup:
    """A markdown document as HTML: raw HTML shown as text, query terms marked, and an
    empty anchor ``<a id="L12">`` for every line of the source before the block that holds
    it (a hit's ``line`` links to ``#L12``)."""
    md = _markdown(terms)
    env: EnvType = {}
    tokens = md.parse(text, env)
    out: list[str] = []
    next_line = 1
    i = 0
    while i < len(tokens):
        # One top-level block: its opening token to the token that closes it.
        j, depth = i + 1, int(tokens[i].nesting)
        while depth > 0 and j < len(tokens):
            depth += tokens[j].nesting
            j += 1
        block = tokens[i].map
        if block is not None:
            out.extend(f'<a id="L{n}"></a>' for n in range(next_line, block[1] + 1))
            next_line = max(next_line, block[1] + 1)
        out.append(md.renderer.render(tokens[i:j], md.options, env))
        i = j
    return Markup("".join(out))


# --------------------------------------------------------------------------- ELOG bodies


def sanitise_html(body: str) -> str:
    """An ELOG HTML body with nothing that runs: no script or style elements, no event
    handler attributes, no URL but http(s) and mailto (relative ones stay)."""
    return nh3.clean(
        body,
        clean_content_tags={"script", "style"},
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
    )


def elog_body(raw: str, encoding: str, visible: str, terms: Sequence[str]) -> Markup:
    """An ELOG entry's body as the logbook shows it: HTML sanitised, plain text and ELCode
    (as its visible text) kept in their lines."""
    if encoding.strip().lower() == "html":
        return (
            Markup('<div class="elog-html">')
            + highlight_html(sanitise_html(raw), terms)
            + Markup("</div>")
        )
    text = raw if encoding.strip().lower() == "plain" else visible
    return Markup('<div class="elog-text">') + highlight(text, terms) + Markup("</div>")


def frontmatter_value(value: Any) -> str:
    """A frontmatter value as one line of text."""
    if isinstance(value, list):
        return ", ".join(frontmatter_value(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {frontmatter_value(v)}" for k, v in value.items())
    return "" if value is None else str(value)


def inline_markdown(text: str) -> Markup:
    """One line of markdown (code spans, emphasis, links) as HTML; raw HTML shown as
    text."""
    return Markup(_markdown(()).renderInline(text))
