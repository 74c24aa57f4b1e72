"""commands: ``{commands}/*.md``, markdown with YAML frontmatter."""

from __future__ import annotations

import logging
import re
from typing import Any, ClassVar

import frontmatter
import yaml

from indexer.engine.fields import Boolean, Field, Keyword, Stored, Text
from indexer.sources.base import FileData, Parsed, is_hidden, words

log = logging.getLogger(__name__)

# A frontmatter block at the start of a text: what a body still begins with when its
# YAML could not be parsed.
_LEADING_BLOCK = re.compile(r"\A\s*^---[ \t]*\n.*?^---[ \t]*$", re.DOTALL | re.MULTILINE)


def first_paragraph(body: str) -> str:
    """The first paragraph of prose in a markdown body (a leading ``---`` block, headings
    and fences skipped)."""
    lines: list[str] = []
    in_fence = False
    for line in _LEADING_BLOCK.sub("", body, count=1).splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
            if lines:
                break
            continue
        if in_fence:
            continue
        if not stripped:
            if lines:
                break
            continue
        if stripped.startswith("#") and not lines:
            continue
        lines.append(stripped)
    return " ".join(lines)


def _as_text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _as_tags(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    if isinstance(value, (list, tuple)):
        return [str(t).strip() for t in value if str(t).strip()]
    return [str(value)]


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1", "on")
    return bool(value)


class CommandsSource:
    name: ClassVar[str] = "commands"
    # 2: a file with malformed frontmatter no longer takes its YAML as the description.
    # 3: file records keep their stat in a column, which a reconcile reads fast.
    schema_version: ClassVar[int] = 3
    scored: ClassVar[bool] = False  # three tiers of trove's own scoring

    def fields(self) -> tuple[Field, ...]:
        return (
            Keyword("name", stored=True),
            Text("title", words, "positions", stored=True),
            Text("description", words, "positions", stored=True),
            Text("tags", words, "positions", stored=True),
            Boolean("is_dependency", stored=True),
            Stored("frontmatter"),
            Stored("frontmatter_error"),
            Text("body", words, "positions", stored=True),
        )

    def wants_dir(self, parts: tuple[str, ...]) -> bool:
        return False

    def wants_file(self, parts: tuple[str, ...]) -> bool:
        return len(parts) == 1 and not is_hidden(parts[0]) and parts[0].lower().endswith(".md")

    def parse(self, file: FileData) -> Parsed:
        text = file.text()
        warnings: list[str] = []
        meta: dict[str, Any] = {}
        body = text
        error = ""
        try:
            post = frontmatter.loads(text)
            if not isinstance(post.metadata, dict):
                raise yaml.YAMLError("frontmatter is not a mapping")
            meta, body = dict(post.metadata), post.content
        except (yaml.YAMLError, ValueError, TypeError) as exc:
            error = " ".join(str(exc).split())
            warnings.append(f"malformed frontmatter, indexed as plain text: {error}")
            log.warning("%s: malformed frontmatter, indexed as plain text: %s", file.rel, error)
        name = file.rel[: -len(".md")]
        description = _as_text(meta.get("description")) or first_paragraph(body)
        tags = _as_tags(meta.get("tags"))
        return Parsed(
            documents=[
                {
                    "key": file.rel,
                    "name": name,
                    "title": _as_text(meta.get("title")) or name,
                    "description": description,
                    "tags": " ".join(tags),
                    "is_dependency": _as_bool(meta.get("is_dependency", False)),
                    "frontmatter": _jsonable(meta),
                    "frontmatter_error": error,
                    "body": body,
                }
            ],
            warnings=warnings,
        )


def _jsonable(value: Any) -> Any:
    """Frontmatter as plain JSON types (YAML dates and the like become strings)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
