"""An ELOG entry's body as the text a reader sees: HTML without its markup (scripts and
styles dropped, blocks and cells on lines of their own), ELCode without its tags (links
keep their text and address), plain text as written."""

from __future__ import annotations

import html
import re


def visible_text(body: str, encoding: str) -> str:
    """The text a reader sees of a body in the given encoding."""
    kind = encoding.strip().lower()
    if kind == "html":
        return html_to_text(body)
    if kind == "elcode":
        return elcode_to_text(body)
    return body.replace("\r\n", "\n")


_HTML_DROP = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>|<!--.*?-->", re.IGNORECASE | re.DOTALL)
_HTML_SPACE = re.compile(r"[ \t\r\n\f]+")
_HTML_BLOCK = re.compile(
    r"<\s*/?\s*(?:p|div|h[1-6]|ul|ol|dl|table|blockquote|pre|hr|caption|section|article"
    r"|header|footer|figure|figcaption)\b[^>]*>",
    re.IGNORECASE,
)
_HTML_LINE = re.compile(r"<\s*(?:br|li|tr|dt|dd)\b[^>]*>", re.IGNORECASE)
_HTML_CELL = re.compile(r"<\s*/?\s*(?:td|th)\b[^>]*>", re.IGNORECASE)
_HTML_TAG = re.compile(r"<\s*/?\s*[A-Za-z][^>]*>|<![^>]*>|<\?[^>]*>")


def html_to_text(body: str) -> str:
    """Tags stripped (script and style with their contents), entities decoded."""
    text = _HTML_DROP.sub(" ", body)
    text = _HTML_SPACE.sub(" ", text)  # source line breaks are spaces in HTML
    text = _HTML_BLOCK.sub("\n\n", text)
    text = _HTML_LINE.sub("\n", text)
    text = _HTML_CELL.sub(" ", text)
    text = _HTML_TAG.sub("", text)
    return _tidy(html.unescape(text))


_ELCODE_URL = re.compile(r"\[url=([^\]\n]*)\](.*?)\[/url\]", re.IGNORECASE | re.DOTALL)
_ELCODE_TABLE = re.compile(r"\[table\b[^\]\n]*\](.*?)\[/table\]", re.IGNORECASE | re.DOTALL)
_ELCODE_ROW = re.compile(r"^[ \t]*\|-[ \t]*(?:\n|$)", re.MULTILINE)
_ELCODE_BREAK = re.compile(r"\n?[ \t]*\[(?:\*|line|hr|br)\]", re.IGNORECASE)
_ELCODE_TAG = re.compile(
    r"\[/?(?:b|i|u|s|h[1-6]|center|left|right|justify|quote|code\d?|list|table|img|email"
    r"|url|size|font|color|sub|sup|elog)(?:[= ][^\]\n]*)?\]|\[anchor:[^\]\n]*\]",
    re.IGNORECASE,
)


def elcode_to_text(body: str) -> str:
    """ELCode tags stripped; a link keeps its text and its address."""

    def link(m: re.Match[str]) -> str:
        url, label = m.group(1).strip().strip("\"'"), m.group(2)
        return f"{label} ({url})" if label.strip() and label.strip() != url else url

    def table(m: re.Match[str]) -> str:
        return "\n" + _ELCODE_ROW.sub("", m.group(1)).replace("|", " | ") + "\n"

    text = _ELCODE_URL.sub(link, body.replace("\r\n", "\n"))
    text = _ELCODE_TABLE.sub(table, text)
    text = _ELCODE_BREAK.sub("\n", text)
    text = _ELCODE_TAG.sub("", text)
    return _tidy(text)


_BLANK_LINES = re.compile(r"\n{3,}")


def _tidy(text: str) -> str:
    """Runs of spaces made one, lines trimmed, at most one blank line in a row."""
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


# --------------------------------------------------------------------------- analysis
