"""get_command and list_commands: one command read from its file, and the listing."""

from __future__ import annotations

from rapidfuzz import fuzz, process

from indexer.files import SkipFile, read_file
from indexer.sources.base import is_hidden
from indexer.sources.commands import CommandsSource, _as_tags
from query import budget, paging, parts, tools
from query.args import check_name
from query.commands.catalog import catalog_of, catalogued, commands_root, marked, readable
from query.commands.models import CommandDetail, CommandList, CommandSummary
from query.commands.words import and_list, quoted
from query.context import QueryContext
from query.errors import TroveError


def get_command(
    ctx: QueryContext,
    name: str,
    offset: int | None = None,
    limit: int | None = None,
    *,
    whole: bool = False,
) -> CommandDetail:
    """One command, read from its file (``name`` without or with ``.md``): all of it, or
    its body from line ``offset`` (``limit`` lines, or as many as fit; query/parts.py).
    ``whole``: everything, whatever its size (the web page)."""
    name = check_name(name, "command name", "INVALID_ARGUMENT")
    first, count = parts.check_part(offset, limit)
    if name.lower().endswith(".md"):
        name = name[:-3]
    root = commands_root(ctx)
    rel = f"{name}.md"
    path = root / rel
    try:
        if is_hidden(rel) or not path.is_file():
            raise FileNotFoundError(rel)
        data = read_file(root, rel, parts.READ_MAX_BYTES)
    except (FileNotFoundError, SkipFile):
        raise TroveError(
            "NOT_FOUND",
            f"no command named {name!r}.{_suggest(ctx, name)} list_commands shows every command",
        ) from None
    doc = CommandsSource().parse(data).documents[0]
    meta = doc["frontmatter"]
    detail = CommandDetail(
        name=name,
        title=doc["title"],
        description=doc["description"],
        tags=_as_tags(meta.get("tags")),
        frontmatter=meta,
        **parts.unfilled(first),
        path=str(path),
        is_dependency=doc["is_dependency"],
    )
    crowded = not whole and budget.size(detail) > budget.DEFAULT_CHARS // 2
    if crowded:  # the metadata alone would leave the body little room: its long texts cut
        detail.title, detail.description = (
            budget.clip(detail.title),
            budget.clip(detail.description),
        )
        detail.tags = [budget.clip(t) for t in detail.tags[:100]]
        detail.frontmatter = budget.clip_values(meta)
    detail = parts.filled(detail, doc["body"], first, count, whole)
    if crowded:
        said = (
            "long texts of the frontmatter, title, description or tags were cut to "
            f"{budget.FIELD_CHARS:,} characters; the file ({detail.path}) has them whole"
        )
        detail.note = f"{said}; {detail.note}" if detail.note else said
    return detail


def _suggest(ctx: QueryContext, name: str) -> str:
    names = [c.name for c in catalog_of(ctx).commands]
    close = [
        n for n, _, _ in process.extract(name, names, scorer=fuzz.WRatio, limit=3, score_cutoff=60)
    ]
    return f" Did you mean {and_list([quoted(n) for n in close])}?" if close else ""


def list_commands(
    ctx: QueryContext,
    include_dependencies: bool = False,
    max_results: int = tools.LIST_COMMANDS_RESULTS.default,
    offset: int = 0,
) -> CommandList:
    """The commands (helpers marked is_dependency only when asked for), by name: the page
    of ``max_results`` from command ``offset`` on (the spec lists them all; a long list
    comes in pages to keep the answer's size)."""
    if not isinstance(include_dependencies, bool):
        raise TroveError(
            "INVALID_ARGUMENT",
            f"include_dependencies must be true or false, got {include_dependencies!r}",
        )
    tools.LIST_COMMANDS_RESULTS.check(max_results)
    offset = tools.LIST_OFFSET.check(offset)
    root = commands_root(ctx)
    with catalogued(ctx) as (catalog, snapshot):
        chosen = [
            c
            for c in catalog.commands
            if (include_dependencies or not c.is_dependency) and readable(root, c)
        ]
        shown, more = paging.page(chosen, offset, max_results)
        listed = [
            CommandSummary(
                id=c.name,
                name=c.name,
                description=budget.clip(c.description),
                tags=[budget.clip(t) for t in c.tags],
                is_dependency=c.is_dependency,
            )
            for c in shown
        ]
        answer = CommandList(
            commands=listed,
            total=len(chosen),
            next_offset=more,
            freshness=marked(ctx, snapshot, root, listed),
        )
    tools.LIST_COMMANDS_RESULTS.fit(answer, "commands", offset, max_results)
    return answer
