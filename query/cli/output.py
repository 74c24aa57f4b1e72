"""How the CLI prints a list of hits: a table on a wide terminal, one line per hit on a
narrow one, tab-separated lines when stdout is a pipe or a file.

- ``table``: a rich table (a terminal of at least ``WIDE`` columns, or ``--table``);
- ``lines``: the title, then one line per hit, its fields two spaces apart, cut to the
  terminal's width with ``…`` (the long text comes last, so the cut takes it);
- ``tsv``: one line per hit, fields separated by tabs, nothing cut, so ``cut``/``awk``
  work; the title and notes are comment lines starting with ``# ``.

A list whose table would take many lines a hit (`trove search`'s, whose every hit has a
title and a snippet) is printed on a wide terminal as ``blocks`` instead: two lines a hit,
unless ``--table`` asked for the table.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from query.cli.failures import err
from query.freshness import Freshness, warning

Shape = Literal["table", "lines", "tsv"]

# A terminal at least this wide gets tables; a narrower one, one line per hit.
WIDE = 100
# Width of a table forced (--table) onto a pipe, when $COLUMNS does not say.
PIPE_WIDTH = 120


@dataclass(frozen=True)
class Column:
    name: str
    right: bool = False  # numbers
    grow: bool = False  # the long text: takes the table's spare width
    fold: bool = False  # a name or path: folded in the table rather than cut


@dataclass(frozen=True)
class Block:
    """A hit in two lines: ``head``, the fields that name it (never cut: its id is copied
    from there), then ``tail`` on the same line; ``text`` on a line of its own. What does
    not fit the width is cut with ``…``."""

    head: Sequence[str]
    tail: str
    text: str


def pick_shape(force_table: bool = False) -> Shape:
    """The shape for this process's stdout."""
    if force_table:
        return "table"
    if not sys.stdout.isatty():
        return "tsv"
    return "table" if shutil.get_terminal_size().columns >= WIDE else "lines"


def width() -> int:
    return shutil.get_terminal_size((PIPE_WIDTH, 24)).columns


def one_line(value: str) -> str:
    """A field as one line: tabs, newlines and runs of spaces become one space."""
    return " ".join(value.split())


class Printer:
    """Prints answers in one shape on ``out``."""

    def __init__(self, out: Console, shape: Shape, forced: bool = False) -> None:
        self.out = out
        self.shape = shape
        self.forced = forced  # --table: tables even where blocks would be printed

    @property
    def blocks_fit(self) -> bool:
        """A wide terminal, where a list of ``Block`` is printed as blocks."""
        return self.shape == "table" and not self.forced

    def title(self, text: str) -> None:
        if self.shape == "tsv":
            sys.stdout.write(f"# {one_line(text)}\n")
        else:
            self.out.print(Text(text, style="bold"), soft_wrap=True)

    def freshness(self, fresh: Freshness | None, hits: Iterable[Any] = ()) -> None:
        """One line on stderr when the answer may not show the files as they are: no
        watcher keeps the index fresh, it is still catching up, or hits changed since
        (their ``stale``). On stderr: what stdout holds keeps its shape."""
        line = warning(fresh, sum(bool(getattr(h, "stale", False)) for h in hits))
        if line:
            err.print(f"trove: note: {line}", markup=False, soft_wrap=False)

    def more(self, next_offset: int | None) -> None:
        """Where the next page starts, on stderr, when there is one."""
        if next_offset is not None:
            err.print(f"trove: more: --offset {next_offset}", markup=False)

    def note(self, text: str) -> None:
        """A line about the answer (how the query matched, why nothing did)."""
        if self.shape == "tsv":
            sys.stdout.write(f"# {one_line(text)}\n")
        else:
            self.out.print(text, markup=False, soft_wrap=True)

    def table(self, table: Table) -> None:
        """A rich table as wide as the terminal; forced (--table) onto a pipe, as wide as
        $COLUMNS says, else ``PIPE_WIDTH``."""
        self.out.print(table, width=None if self.out.is_terminal else width())

    def rows(self, title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> None:
        if self.shape == "table":
            table = Table(title=Text(title))
            for c in columns:
                table.add_column(
                    c.name,
                    justify="right" if c.right else "left",
                    ratio=1 if c.grow else None,
                    overflow="fold" if c.fold else "ellipsis",
                    no_wrap=not (c.grow or c.fold),
                )
            for row in rows:
                table.add_row(*(Text(v) for v in row))
            self.table(table)
            return
        self.title(title)
        if self.shape == "tsv":
            for row in rows:
                sys.stdout.write("\t".join(one_line(v) for v in row) + "\n")
            return
        cut = width()
        for row in rows:
            line = Text("  ".join(one_line(v) for v in row if v))
            line.truncate(cut, overflow="ellipsis")
            self.out.print(line, soft_wrap=True)

    def blocks(self, title: str, blocks: Sequence[Block]) -> None:
        """The title, then each hit in two lines (see ``Block``)."""
        self.title(title)
        cut = width()
        for block in blocks:
            head = "  ".join(v for v in block.head if v)
            line = Text(head, style="bold")
            if block.tail and cell_len(head) + 2 < cut:
                line.append("  " + one_line(block.tail))
                line.truncate(cut, overflow="ellipsis")
            self.out.print(line, soft_wrap=True)
            if block.text:
                text = Text("  " + one_line(block.text))
                text.truncate(cut, overflow="ellipsis")
                self.out.print(text, soft_wrap=True)
