"""The docs cannot drift from the code: every module is on the architecture map and every
file the map names exists, every link resolves, every error code is documented with the
status it answers, every MCP tool is in the tools' table, and nothing cites a file outside
the repository."""

from __future__ import annotations

import asyncio
import re
import subprocess
from pathlib import Path

import pytest

from indexer.config import settings_from_dict
from query.errors import INPUT_CODES, ErrorCode
from query.mcp_server import build_server
from query.site.api import STATUS

REPO = Path(__file__).resolve().parent.parent
DOCS = sorted([REPO / "README.md", REPO / "bench" / "README.md", *(REPO / "docs").glob("*.md")])
LINK = re.compile(
    r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)|<img [^>]*src=\"([^\"]+)\""
)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)


def _expand(path: str) -> list[str]:
    """``a/{b,c}.py`` -> ``a/b.py``, ``a/c.py`` (one brace group)."""
    m = re.search(r"\{([^{}]+)\}", path)
    if m is None:
        return [path]
    return [path[: m.start()] + part + path[m.end() :] for part in m.group(1).split(",")]


def _map_table() -> str:
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    start = text.index("## Every module")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def _named_modules() -> set[str]:
    named: set[str] = set()
    for span in CODE_SPAN.findall(_map_table()):
        if span.startswith(("indexer/", "query/")):
            named.update(_expand(span))
    return named


def test_every_module_is_on_the_architecture_map() -> None:
    named = _named_modules()
    modules = {
        str(p.relative_to(REPO))
        for top in ("indexer", "query")
        for p in (REPO / top).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert sorted(modules - named) == [], "modules missing from docs/ARCHITECTURE.md"


def test_every_file_the_architecture_map_names_exists() -> None:
    missing = [name for name in sorted(_named_modules()) if not (REPO / name).exists()]
    assert missing == []


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.MULTILINE)}


def _links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return [next(g for g in m.groups() if g) for m in LINK.finditer(text)]


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(REPO)) for d in DOCS])
def test_every_link_of_the_docs_resolves(doc: Path) -> None:
    broken = []
    for link in _links(doc):
        if re.match(r"[a-z]+:", link):  # http:, mailto: (checked by people, not offline)
            continue
        target, _, anchor = link.partition("#")
        file = (doc.parent / target).resolve() if target else doc
        if not file.exists():
            broken.append(f"{link}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(f"{link}: no heading #{anchor} in {file.relative_to(REPO)}")
    assert broken == []


def test_the_link_check_finds_a_broken_link(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("# Title\n\n[ok](#title) [bad](missing.md) [bad anchor](#nowhere)\n")
    assert _links(doc) == ["#title", "missing.md", "#nowhere"]
    assert _anchors(doc) == {"title"}


def test_every_error_code_is_documented_with_its_status_and_exit_code() -> None:
    text = (REPO / "docs" / "ERRORS.md").read_text(encoding="utf-8")
    rows = {
        m.group(1): (int(m.group(2)), int(m.group(3)))
        for m in re.finditer(r"^\| `([A-Z_]+)` \|.*\| (\d{3}) \| (\d) \|$", text, re.MULTILINE)
    }
    codes: tuple[ErrorCode, ...] = ErrorCode.__args__  # type: ignore[attr-defined]
    assert sorted(rows) == sorted(codes)
    for code in codes:
        assert rows[code] == (STATUS[code], 2 if code in INPUT_CODES else 1), code


def test_every_mcp_tool_is_in_the_tools_table(tmp_path: Path) -> None:
    server = build_server(settings_from_dict({"index": {"dir": str(tmp_path)}}, tmp_path))
    try:
        tools = {t.name for t in asyncio.run(server.list_tools())}
    finally:
        server.close()
    text = (REPO / "docs" / "TOOLS.md").read_text(encoding="utf-8")
    table = text[text.index("| tool | arguments") :].split("\n\n", 1)[0]
    listed = set(re.findall(r"^\| ([a-z_]+) \|", table, re.MULTILINE)) - {"tool"}
    assert listed == tools
    count = {12: "twelve", 13: "thirteen", 14: "fourteen"}.get(len(tools), str(len(tools)))
    assert f"{count.capitalize()} read-only tools" in text
    assert f"{count} read-only tools" in (REPO / "README.md").read_text(encoding="utf-8")


def test_nothing_cites_a_file_outside_the_repository() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    citing = []
    for name in tracked:
        path = REPO / name
        if path.suffix not in (".py", ".md", ".toml", ".html", ".cfg", ".sh") or not path.is_file():
            continue
        if name in ("bench/bench_relevance.py", "bench/README.md", "tests/test_docs.py"):
            continue  # the CISI data is read from where it lies, given as an argument
        text = path.read_text(encoding="utf-8", errors="replace")
        if "../shared" in text or "DESIGN.md" in text:
            citing.append(name)
    assert citing == []
