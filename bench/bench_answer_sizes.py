"""How large trove's answers are, in characters of JSON (what an agent's context pays for).

    python bench/bench_answer_sizes.py [--workdir /tmp/trove-bench-sizes]

For every tool but search_web (its size is SearXNG's), the answer with default arguments
and with the largest valid ones, on two corpora: the sample data (data/), and a corpus of
long documents, long lines, long names and long metadata made here (reports of 45 lines
of 3,000 characters, commands with 10,000-character titles and descriptions and a
50,000-character frontmatter value, conversations of 5,000-character lines, a thread of
31 entries with 10,000-character bodies). The budget: 40,000 characters with defaults,
80,000 with any valid arguments (query/budget.py).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from indexer.config import Settings, settings_from_dict
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query import budget
from query.commands import get_command, list_commands, search_commands
from query.context import QueryContext
from query.elog import get_elog_thread, search_elog
from query.reports import get_report, list_command_reports, search_reports
from query.search_all import search
from query.workspace import get_conversation, search_workspace

REPO = Path(__file__).resolve().parent.parent
SEP = "=" * 40


def settings(root: Path, index: Path) -> Settings:
    return settings_from_dict(
        {
            "sources": {
                "reports": str(root / "reports"),
                "commands": str(root / "commands"),
                "conversations": str(root / "conversations"),
                "elog": str(root / "elog/SwissFEL"),
            },
            "index": {"dir": str(index)},
            "elog": {"rerank": "lexical"},
        },
        base=root,
    )


def long_corpus(root: Path) -> None:
    for c in range(3):
        folder = root / "reports" / (f"cmd{c}-" + "c" * 150)
        folder.mkdir(parents=True)
        for i in range(60):
            body = "# " + "h" * 5000 + "\n" + ("needle " + "w" * 3000 + "\n") * 45
            (folder / f"{i}{'r' * 200}_20251101.md").write_text(body)
    (root / "commands").mkdir(parents=True)
    for i in range(120):
        (root / "commands" / (f"cmd{i}-" + "n" * 150 + ".md")).write_text(
            f"---\ntitle: {'T' * 10000}\ndescription: needle {'d' * 10000}\n"
            f"other: {'o' * 50000}\n---\n" + ("needle " + "b" * 3000 + "\n") * 40
        )
    for i in range(40):
        conv = root / f"conversations/2025-11-{10 + i % 9:02d}/{i:03d}-{'s' * 150}"
        conv.mkdir(parents=True)
        (conv / "notes.md").write_text(("needle " + "q" * 5000 + "\n") * 50)
    ids = list(range(80001, 80032))
    records = [
        f"$@MID@$: {mid}\nDate: Thu, 20 Nov 2025 08:{n:02d}:00 +0100\n"
        + (f"Reply to: {', '.join(map(str, ids[1:]))}\n" if n == 0 else f"In reply to: {ids[0]}\n")
        + f"Author: A\nCategory: Info\nSystem: RF\nDomain: Aramis\nSection: \nTitle: needle "
        f"{'t' * 10000}\nAttachment: \nEncoding: plain\n{SEP}\n{'All well. ' * 1000}\n"
        for n, mid in enumerate(ids)
    ]
    day = root / "elog/SwissFEL/2025/251120a.log"
    day.parent.mkdir(parents=True)
    day.write_text("".join(records))


def indexed(root: Path, index: Path) -> QueryContext:
    conf = settings(root, index)
    for name in ("reports", "commands", "conversations", "elog"):
        syncer = Syncer(conf, get_source(name))
        syncer.parallel = False
        syncer.reconcile()
    return QueryContext.from_settings(conf)


def calls(ctx: QueryContext, word: str) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """Per tool: (with defaults, with the largest valid arguments)."""
    root = ctx.settings.source_root("reports")
    conv_root = ctx.settings.source_root("conversations")
    assert root is not None and conv_root is not None
    command = min(p.name for p in root.iterdir())
    report = min(p.name for p in (root / command).iterdir())
    conv = str(min(conv_root.rglob("*.md")).relative_to(conv_root))
    name = min(p.stem for p in (root.parent / "commands").glob("*.md"))
    thread = search_elog(ctx, None, max_results=1).hits[0].elog_id
    return {
        "search_reports": (
            lambda: search_reports(ctx, word),
            lambda: search_reports(ctx, word, max_results=100),
        ),
        "list_command_reports": (
            lambda: list_command_reports(ctx, command),
            lambda: list_command_reports(ctx, command, max_results=1000),
        ),
        "get_report": (
            lambda: get_report(ctx, command, report),
            lambda: get_report(ctx, command, report, limit=100_000),
        ),
        "search_commands": (
            lambda: search_commands(ctx, word),
            lambda: search_commands(ctx, word, max_results=100),
        ),
        "get_command": (
            lambda: get_command(ctx, name),
            lambda: get_command(ctx, name, limit=100_000),
        ),
        "list_commands": (
            lambda: list_commands(ctx),
            lambda: list_commands(ctx, True, max_results=1000),
        ),
        "search_workspace": (
            lambda: search_workspace(ctx, word),
            lambda: search_workspace(ctx, word, max_results=100),
        ),
        "get_conversation": (
            lambda: get_conversation(ctx, conv),
            lambda: get_conversation(ctx, conv, limit=100_000),
        ),
        "search_elog": (
            lambda: search_elog(ctx, word),
            lambda: search_elog(ctx, word, max_results=50),
        ),
        "get_elog_thread": (
            lambda: get_elog_thread(ctx, thread),
            lambda: get_elog_thread(ctx, thread),
        ),
        "search": (lambda: search(ctx, word), lambda: search(ctx, word, max_results=50)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/trove-bench-sizes"))
    args = parser.parse_args(argv)
    shutil.rmtree(args.workdir, ignore_errors=True)
    shutil.copytree(REPO / "data", args.workdir / "sample")
    long_corpus(args.workdir / "long")
    sizes: dict[str, list[int]] = {}
    for corpus, word in (("sample", "proxy"), ("long", "needle")):
        ctx = indexed(args.workdir / corpus, args.workdir / f"{corpus}-index")
        for tool, (default, largest) in calls(ctx, word).items():
            sizes.setdefault(tool, []).extend([budget.size(default()), budget.size(largest())])
        ctx.close()
    table = Table(title="answer sizes, characters of JSON (budget: 40,000 default, 80,000 any)")
    for col in ("tool", "sample: defaults", "sample: largest", "long: defaults", "long: largest"):
        table.add_column(col, justify="left" if col == "tool" else "right")
    for tool, row in sizes.items():
        table.add_row(tool, *(f"{n:,}" for n in row))
    Console().print(table)
    worst = max(max(row[0], row[2]) for row in sizes.values())
    print(f"largest with defaults: {worst:,}; largest of all: {max(map(max, sizes.values())):,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
