"""The command line as a person meets it: global options anywhere, --version and -h, hits
shaped for a pipe, a narrow or a wide terminal (real terminals: a pty and a subprocess),
errors as JSON under --json, messages that name commands, `trove init`, and `trove mcp`
explaining itself on a terminal."""

from __future__ import annotations

import fcntl
import json
import logging
import math
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
import tomllib
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import pytest
import typer.main
from site_corpus import (
    H_ATTACHMENT,
    H_AUTHOR,
    H_COMMAND,
    H_CONVERSATION_FOLDER,
    H_CONVERSATION_LONG_FOLDER,
    H_ENTITY,
    H_FOLDER,
    H_IMG,
    H_JS,
    H_LONG,
    H_LONG_IN_HITS,
    H_REPORT,
    H_REPORT_LONG,
    H_RICH,
    H_ROOT_ID,
    H_RTL,
    H_SCRIPT,
    H_TITLE,
    MARK,
    write_corpus,
)
from typer.testing import CliRunner

from indexer.config import load_settings
from query.cli import app
from query.cli.failures import TOOL_COMMANDS, cli_words
from query.cli.root import GLOBAL_FLAGS, GLOBAL_VALUES, HELP, hoist_globals

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
WAIT = 60.0
PROXY = "proxy-slow-meeting-analysis-command"

runner = CliRunner()


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    """The CLI points logging at its stderr, which the runner swaps: undone after."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture
def config(tmp_path: Path) -> str:
    """The sample data in data/, indexed into tmp_path."""
    cfg = tmp_path / "trove.toml"
    cfg.write_text(
        "[sources]\n"
        f'reports = "{DATA}/reports"\ncommands = "{DATA}/commands"\n'
        f'conversations = "{DATA}/conversations"\nelog = "{DATA}/elog/SwissFEL"\n'
        f'elog_config = "{DATA}/elog/elogd.cfg"\n'
        '[index]\ndir = "index"\n[elog]\nrerank = "lexical"\n',
        encoding="utf-8",
    )
    return str(cfg)


def invoke(*args: str) -> typer.testing.Result:
    return runner.invoke(app, list(args))


def on_a_terminal(args: list[str], columns: int) -> str:
    """Run `trove ARGS` with stdout on a pseudo-terminal ``columns`` wide; what it showed
    (colours removed)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "query.cli", *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=env,
    )
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + WAIT
    try:
        while True:
            left = deadline - time.monotonic()
            assert left > 0, "timed out reading the terminal"
            ready, _, _ = select.select([master], [], [], left)
            if not ready:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child has closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        assert proc.wait(timeout=WAIT) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()
    return ANSI.sub("", b"".join(chunks).decode()).replace("\r\n", "\n")


# --------------------------------------------------------------------------- global options


def test_global_options_work_after_the_subcommand_as_before_it(config) -> None:
    before = invoke("--config", config, "--quiet", "list", "reports", "speech", "--json")
    after = invoke("list", "reports", "speech", "--json", "--config", config, "--quiet")
    middle = invoke("list", "-c", config, "reports", "speech", "-q", "--json")
    assert before.exit_code == after.exit_code == middle.exit_code == 1  # no such command
    assert before.stdout == after.stdout == middle.stdout
    status = invoke("status", "--json", f"--config={config}", "--debug")
    assert status.exit_code == 0, status.output
    assert {c["collection"] for c in json.loads(status.stdout)["collections"]} >= {"reports"}


def test_debug_and_quiet_after_the_subcommand_set_the_log_level(config) -> None:
    r = invoke("search", "reports", "proxy", "--debug", "--config", config, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["results"]
    assert logging.getLogger().level == logging.DEBUG
    r = invoke("search", "reports", "proxy", "--config", config, "-q")
    assert r.exit_code == 0, r.output
    assert logging.getLogger().level == logging.ERROR


def test_words_after_a_double_dash_are_never_options(config) -> None:
    r = invoke("--config", config, "list", "reports", "--json", "--", "--debug")
    assert r.exit_code == 1
    assert "'--debug'" in json.loads(r.stdout)["error"]["message"]


def test_the_value_of_an_option_is_never_taken_for_a_global_option(config) -> None:
    r = invoke("search", "reports", "proxy", "--command-filter", "-q", "-c", config, "--json")
    assert r.exit_code == 1
    assert "'-q'" in json.loads(r.stdout)["error"]["message"]
    assert hoist_globals(["search", "x", "--since", "-V", "-V"], {"--since"}) == [
        "-V",
        "search",
        "x",
        "--since",
        "-V",
    ]


def test_no_subcommand_has_an_option_named_like_a_global_one() -> None:
    root = typer.main.get_command(app)
    reserved = set(GLOBAL_FLAGS) | set(GLOBAL_VALUES) | set(HELP)
    clashes: list[str] = []

    def walk(cmd, path):
        for sub_name, sub in getattr(cmd, "commands", {}).items():
            for p in sub.params:
                taken = set(getattr(p, "opts", [])) | set(getattr(p, "secondary_opts", []))
                clashes.extend(f"{' '.join([*path, sub_name])} {o}" for o in taken & reserved)
            walk(sub, [*path, sub_name])

    walk(root, ["trove"])
    assert not clashes


def test_version_prints_the_package_version() -> None:
    for flag in ("--version", "-V"):
        r = invoke(flag)
        assert r.exit_code == 0
        assert r.stdout == f"trove {version('trove')}\n"


def test_h_is_help_on_every_command() -> None:
    root = typer.main.get_command(app)
    paths: list[list[str]] = [[]]
    for name, cmd in getattr(root, "commands", {}).items():
        paths.append([name])
        paths += [[name, sub] for sub in getattr(cmd, "commands", {})]
    for path in paths:
        r = invoke(*path, "-h")
        assert r.exit_code == 0, (path, r.output)
        assert r.stdout.startswith("Usage: ") and "-h, --help" in r.stdout, path


# --------------------------------------------------------------------------- shapes of hits

# Each search/list command, how many hits it shows on the sample data, and how many
# tab-separated fields each has.
PIPED = [
    (["search", "reports", "proxy", "-n", "3"], 3, 4),
    (["search", "commands", "proxy meeting", "-n", "3"], 3, 5),
    (["search", "workspace", "proxy", "-n", "3"], 3, 5),
    (["search", "conversations", "proxy", "-n", "3"], 3, 5),
    (["search", "elog", "klystron", "-n", "3"], 3, 7),
    (["search", "proxy timeout", "-n", "3"], 3, 6),
    (["list", "reports", PROXY, "-n", "3"], 3, 3),
    (["list", "commands"], 7, 3),
]


@pytest.mark.parametrize(
    ("argv", "count", "fields"), PIPED, ids=[" ".join(a[:2]) for a, _, _ in PIPED]
)
def test_piped_hits_are_tab_separated_lines_with_the_title_as_a_comment(
    config, argv, count, fields
) -> None:
    r = invoke("--config", config, *argv)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("# ")  # the title
    hits = [line for line in lines if not line.startswith("# ")]
    assert len(hits) == count, lines
    assert all(len(line.split("\t")) == fields for line in hits), lines
    assert "│" not in r.stdout and "┃" not in r.stdout


def test_table_forces_a_table_when_piped(config) -> None:
    r = invoke("--config", config, "search", "reports", "proxy", "-n", "2", "--table")
    assert r.exit_code == 0, r.output
    assert "┃ count ┃" in r.stdout and "\t" not in r.stdout


def test_a_narrow_terminal_gets_one_line_per_hit_cut_to_its_width(config) -> None:
    for argv in (
        ["search", "reports", "proxy", "-n", "3"],
        ["search", "elog", "klystron", "-n", "3"],
        ["search", "proxy timeout", "-n", "3"],
    ):
        shown = on_a_terminal(["--config", config, *argv], columns=80)
        lines = [line for line in shown.splitlines() if line]
        assert len(lines) == 4, shown  # the title, then one line per hit
        assert all(len(line) <= 80 for line in lines), shown
        assert any(line.endswith("…") for line in lines[1:]), shown
        assert "\t" not in shown and "│" not in shown


def test_a_wide_terminal_gets_a_table(config) -> None:
    shown = on_a_terminal(["--config", config, "search", "reports", "proxy", "-n", "3"], 140)
    assert "┃ count ┃ date" in shown
    assert all(len(line) <= 140 for line in shown.splitlines())


def test_search_on_a_wide_terminal_takes_two_lines_a_hit(config) -> None:
    argv = ["--config", config, "search", "proxy timeout klystron", "-n", "8"]
    found = runner.invoke(app, [*argv, "--json"])
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)["hits"]
    assert {h["collection"] for h in hits} == {"reports", "commands", "conversations", "elog"}
    shown = on_a_terminal(argv, 140)
    lines = shown.splitlines()
    assert lines[0].startswith("'proxy timeout klystron': the best 8")
    assert len(lines) == 1 + 2 * len(hits), shown  # the title, then two lines a hit
    assert all(len(line) <= 140 for line in lines), shown
    assert "│" not in shown and "┃" not in shown and "\t" not in shown
    heads, texts = lines[1::2], lines[2::2]
    for hit, head, text in zip(hits, heads, texts, strict=True):
        # The id whole (it is what `trove get` takes), then its date and how it matched.
        assert head.startswith(f"{hit['collection']}  {hit['id']}  "), (head, hit)
        assert hit["match"] in head
        assert text.startswith("  ") and text.strip()
    elog = next(h for h in hits if h["collection"] == "elog")
    assert any(elog["title"] in head for head in heads), heads  # a title the id lacks


def test_search_on_a_100_column_terminal_takes_at_most_three_lines_a_hit(config) -> None:
    argv = ["--config", config, "search", "proxy timeout", "-n", "6"]
    shown = on_a_terminal(argv, 100)
    lines = shown.splitlines()[1:]
    assert len(lines) == 2 * 6, shown
    # A head longer than the terminal is a long id, printed whole: the terminal wraps it.
    rows = [math.ceil(len(head) / 100) + 1 for head in lines[0::2]]
    assert max(rows) <= 3, shown
    assert all(len(text) <= 100 for text in lines[1::2]), shown


def test_table_still_forces_the_table_on_a_wide_terminal(config) -> None:
    shown = on_a_terminal(["--config", config, "search", "proxy", "-n", "2", "--table"], 140)
    assert "┃ collection" in shown and "┃ snippet" in shown


# --------------------------------------------------------------------------- errors


def test_json_errors_are_json_on_stdout_with_the_exit_code(config, tmp_path) -> None:
    cases = [
        (["--config", config, "get", "command", "nope", "--json"], 1, "NOT_FOUND"),
        (["--config", config, "list", "reports", "x", "-n", "0", "--json"], 2, "INVALID_ARGUMENT"),
        (
            ["--config", config, "search", "reports", "x", "-n", "abc", "--json"],
            2,
            "INVALID_ARGUMENT",
        ),
        (["--config", config, "search", "elog", "--bogus", "--json"], 2, "INVALID_ARGUMENT"),
        (["--config", str(tmp_path / "none.toml"), "status", "--json"], 2, "INVALID_CONFIG"),
        (["--config", config, "reindex", "--collection", "x", "--json"], 2, "INVALID_ARGUMENT"),
    ]
    for argv, exit_code, code in cases:
        r = invoke(*argv)
        assert r.exit_code == exit_code, (argv, r.output)
        error = json.loads(r.stdout)["error"]
        assert error["code"] == code, argv
        assert error["message"] and error["message"] in r.stderr.replace("\n", " "), argv
    plain = invoke("--config", config, "get", "command", "nope")
    assert plain.exit_code == 1 and plain.stdout == "" and "NOT_FOUND" in plain.stderr


@pytest.mark.parametrize("tool", sorted(TOOL_COMMANDS))
def test_each_mcp_tool_in_a_message_becomes_its_command(tool) -> None:
    command = TOOL_COMMANDS[tool]
    assert cli_words(f"see {tool}('a b', 'c')") == f"see `{command} 'a b' c`"
    if tool != "search":
        assert cli_words(f"{tool} shows them") == f"`{command}` shows them"


def test_every_mcp_tool_has_a_command_and_plain_words_stay(make_settings) -> None:
    import anyio

    from query.mcp_server import build_server

    async def tool_names() -> set[str]:
        server = build_server(make_settings())
        try:
            return {t.name for t in await server.list_tools()}
        finally:
            server.close()

    assert anyio.run(tool_names) == set(TOOL_COMMANDS)
    plain = "the command search took too long; get_reports_dir and searches stay"
    assert cli_words(plain) == plain


def test_library_messages_name_cli_commands(config) -> None:
    cases = [
        (["get", "report", PROXY, "missing"], f"`trove list reports {PROXY}`", "list_command"),
        (["get", "report", PROXY, ".hidden"], f"`trove list reports {PROXY}`", "list_command"),
        (["get", "command", "nope"], "`trove list commands` shows every command", "list_commands"),
        (["thread", "424242"], "`trove search elog` gives the ids", "search_elog"),
        (["search", "workspace", "a\nb"], "`trove search workspace` matches", "search_workspace"),
    ]
    for argv, words, tool in cases:
        r = invoke("--config", config, *argv)
        assert r.exit_code in (1, 2), (argv, r.output)
        assert words in r.stderr and tool not in r.stderr, (argv, r.stderr)


# --------------------------------------------------------------------------- small commands


def test_get_report_takes_the_name_with_or_without_md(config) -> None:
    name = "proxy-report-2025-12-11-wideworld"
    bare = invoke("--config", config, "get", "report", PROXY, name)
    full = invoke("--config", config, "get", "report", PROXY, f"{name}.md")
    upper = invoke("--config", config, "get", "report", PROXY, f"{name}.MD")
    assert bare.exit_code == 0, bare.output
    assert bare.stdout == full.stdout and bare.stdout.startswith("# Proxy slow meeting join")
    assert upper.exit_code == 1 and "NOT_FOUND" in upper.stderr  # names are case-sensitive


def test_search_conversations_is_search_workspace(config) -> None:
    ours = invoke("--config", config, "search", "conversations", "proxy", "--json")
    theirs = invoke("--config", config, "search", "workspace", "proxy", "--json")
    assert ours.exit_code == 0, ours.output
    assert json.loads(ours.stdout)["results"] == json.loads(theirs.stdout)["results"] != []


def test_thread_takes_an_id_as_search_elog_shows_it(config) -> None:
    r = invoke("--config", config, "thread", "#31185", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["message_id"] == 31185
    bad = invoke("--config", config, "thread", "#x1", "--json")
    assert bad.exit_code == 2 and json.loads(bad.stdout)["error"]["code"] == "INVALID_ARGUMENT"


# --------------------------------------------------------------------------- hostile names


@pytest.fixture
def hostile_config(tmp_path: Path) -> tuple[str, Path]:
    """The web page's corpus (one document of each collection whose every name, title
    and attribute is hostile), in folders whose path holds rich markup; the config and
    that folder."""
    base = tmp_path / "src [bold]" / "a[" / "b] :warning:"  # '[/b]' in the path
    write_corpus(base / "reports", base / "commands", base / "conversations", base / "elog")
    sources = "".join(
        f"{name} = {json.dumps(str(base / name))}\n"
        for name in ("reports", "commands", "conversations", "elog")
    )
    cfg = tmp_path / "trove.toml"
    index = json.dumps(str(base / "index"))
    cfg.write_text(
        f'[sources]\n{sources}[index]\ndir = {index}\n[elog]\nrerank = "lexical"\n',
        encoding="utf-8",
    )
    return str(cfg), base


ELOG_SHOWN = [H_TITLE, H_AUTHOR, H_SCRIPT, H_JS]
HOSTILE_CLI = {
    "search": (
        ["search", MARK, "-n", "50"],
        [
            H_REPORT,
            H_REPORT_LONG,
            H_COMMAND,
            H_FOLDER,
            H_CONVERSATION_FOLDER,
            H_TITLE,
            H_LONG_IN_HITS,
        ],
    ),
    "search reports": (["search", "reports", MARK], [H_FOLDER, H_REPORT, H_REPORT_LONG]),
    "search commands": (["search", "commands", MARK], [H_COMMAND, H_FOLDER]),
    "search workspace": (
        ["search", "workspace", MARK],
        [H_CONVERSATION_FOLDER, H_CONVERSATION_LONG_FOLDER],
    ),
    "search elog": (["search", "elog", MARK], [*ELOG_SHOWN, H_LONG_IN_HITS, H_RTL]),
    "list commands": (["list", "commands"], [H_COMMAND, H_FOLDER, H_LONG_IN_HITS]),
    "list reports": (["list", "reports", H_FOLDER], [H_FOLDER, H_REPORT, H_REPORT_LONG]),
}


@pytest.mark.parametrize("shape", ["tsv", "table"])
@pytest.mark.parametrize("name", HOSTILE_CLI)
def test_hostile_names_print_as_they_are_in_lists_of_hits(
    hostile_config: tuple[str, Path], name: str, shape: str
) -> None:
    argv, values = HOSTILE_CLI[name]
    # A table as wide as the longest value, so that nothing is cut.
    r = runner.invoke(
        app,
        ["--config", hostile_config[0], *argv, *(["--table"] if shape == "table" else [])],
        env={"COLUMNS": "30000"},
    )
    assert r.exit_code == 0, r.output[-2000:]
    for value in values:
        assert " ".join(value.split()) in r.stdout, value[:80]


def test_hostile_names_print_as_they_are_in_a_thread_and_a_command(
    hostile_config: tuple[str, Path],
) -> None:
    config = hostile_config[0]
    thread = invoke("--config", config, "thread", str(H_ROOT_ID))
    assert thread.exit_code == 0, thread.output
    for value in [*ELOG_SHOWN, H_LONG, H_RTL, H_ATTACHMENT]:
        assert value in thread.stdout, value[:80]
    command = invoke("--config", config, "get", "command", H_COMMAND)
    assert command.exit_code == 0, command.output
    assert command.stdout.startswith(f"{H_TITLE}  (")
    for value in (H_LONG, f"tags: {H_IMG}, {H_JS}, {H_ENTITY}, {H_RTL}, {H_RICH}, {MARK}"):
        assert value in command.stdout, value[:80]
    report = invoke("--config", config, "get", "report", H_FOLDER, H_REPORT)
    assert report.exit_code == 0 and MARK in report.stdout, report.output
    # An error quotes the name as given ('/' makes it an invalid one).
    refused = invoke("--config", config, "get", "command", f"{H_RICH} <b>")
    assert refused.exit_code == 2 and f"{H_RICH} <b>" in refused.stderr, refused.stderr


def test_status_prints_folders_whose_paths_hold_rich_markup(
    hostile_config: tuple[str, Path],
) -> None:
    config, base = hostile_config
    r = runner.invoke(app, ["--config", config, "status"], env={"COLUMNS": "1000"})
    assert r.exit_code == 0, r.output
    assert f"trove status ({base / 'index'})" in r.stdout
    for name in ("reports", "commands", "conversations", "elog"):
        assert str(base / name) in r.stdout, name


# --------------------------------------------------------------------------- trove init


def test_init_writes_a_config_that_loads(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes" / "reports").mkdir(parents=True)
    (tmp_path / "cmds").mkdir()
    r = invoke("init", "--reports", "notes/reports", "--commands", "cmds", "--elog", str(DATA))
    assert r.exit_code == 0, r.output
    written = tmp_path / "trove.toml"
    raw = tomllib.loads(written.read_text(encoding="utf-8"))
    assert raw["sources"] == {"reports": "notes/reports", "commands": "cmds", "elog": str(DATA)}
    assert raw["index"] == {"dir": ".trove"}
    settings = load_settings(written)
    assert settings.sources.reports == tmp_path / "notes" / "reports"
    assert settings.sources.conversations is None
    assert settings.index_dir == tmp_path / ".trove"
    assert written.read_text(encoding="utf-8") in r.stdout
    assert "next: trove reindex" in r.stdout and r.stderr == ""
    # The config works as it is.
    status = invoke("status", "--json")
    assert status.exit_code == 0, status.output


def test_init_refuses_to_overwrite_without_force(tmp_path) -> None:
    target = tmp_path / "conf" / "trove.toml"
    assert invoke("init", "--config", str(target)).exit_code == 0
    before = target.read_text(encoding="utf-8")
    again = invoke("init", "--reports", str(tmp_path), "--config", str(target))
    assert again.exit_code == 2 and "already exists; pass --force" in again.stderr
    assert target.read_text(encoding="utf-8") == before
    forced = invoke("init", "--reports", str(tmp_path), "--config", str(target), "--force")
    assert forced.exit_code == 0, forced.output
    # Outside the config's folder: written absolute.
    assert tomllib.loads(target.read_text(encoding="utf-8"))["sources"] == {
        "reports": str(tmp_path)
    }
    assert f"trove --config {target} reindex" in forced.stdout


def test_init_warns_of_a_missing_folder_and_refuses_a_file(tmp_path) -> None:
    target = tmp_path / "trove.toml"
    r = invoke("init", "--conversations", str(tmp_path / "later"), "--config", str(target))
    assert r.exit_code == 0
    assert "no such folder yet" in r.stderr and "conversations" in r.stderr
    assert load_settings(target).sources.conversations == tmp_path / "later"
    (tmp_path / "file.md").write_text("x")
    bad = invoke("init", "--reports", str(tmp_path / "file.md"), "-c", str(tmp_path / "b.toml"))
    assert bad.exit_code == 2 and "not a folder" in bad.stderr
    assert not (tmp_path / "b.toml").exists()


# --------------------------------------------------------------------------- trove mcp


def _as_a_shell_starts_it() -> None:
    """SIGINT delivered and handled by default in the child, as a shell starts a command:
    a disposition or mask this test process took from earlier tests is not inherited."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _mcp(config: str, stdin: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "query.cli", "--config", config, "mcp"],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        preexec_fn=_as_a_shell_starts_it,  # noqa: PLW1509 (it only resets two signal settings)
    )


def _read_until(proc: subprocess.Popen[bytes], needle: bytes) -> bytes:
    assert proc.stderr is not None
    seen = b""
    deadline = time.monotonic() + WAIT
    while needle not in seen:
        left = deadline - time.monotonic()
        assert left > 0, seen
        ready, _, _ = select.select([proc.stderr], [], [], left)
        if ready:
            chunk = os.read(proc.stderr.fileno(), 4096)
            assert chunk, seen
            seen += chunk
    return seen


def test_mcp_on_a_terminal_explains_itself_then_serves_until_ctrl_d(config) -> None:
    master, slave = pty.openpty()
    proc = _mcp(config, slave)
    os.close(slave)
    try:
        said = _read_until(proc, b"Ctrl-D").decode()
        assert said.startswith("trove mcp speaks the Model Context Protocol")
        assert "'MCP clients'" in said and "Ctrl-C" in said
        assert proc.poll() is None  # it still serves
        os.write(master, b"\x04")
        assert proc.wait(timeout=WAIT) == 0
        assert proc.stdout is not None and proc.stdout.read() == b""
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            assert stream is not None
            stream.close()


def test_mcp_on_a_terminal_stops_on_ctrl_c(config) -> None:
    master, slave = pty.openpty()
    proc = _mcp(config, slave)
    os.close(slave)
    try:
        _read_until(proc, b"Ctrl-D")
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
        code = proc.wait(timeout=WAIT)
        assert code == 130, (code, proc.stderr.read() if proc.stderr else b"")
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            assert stream is not None
            stream.close()


def test_mcp_under_a_client_says_nothing_of_the_kind(config) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "query.cli", "--config", config, "mcp"],
        input=b"",
        capture_output=True,
        cwd=REPO,
        timeout=WAIT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert b"Model Context Protocol" not in proc.stderr and proc.stdout == b""


# --------------------------------------------------------------------------- MCP from Python


def test_the_python_mcp_client_example_runs_against_the_sample_data(config) -> None:
    proc = subprocess.run(
        [sys.executable, "contrib/mcp_client_example.py", "--config", config, "proxy timeout"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=WAIT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("tools: search_reports, ") and "search_web" in lines[0]
    assert any(line.startswith(f"reports       {PROXY}/") for line in lines)
    assert any(line.startswith("error: True ") and "NOT_FOUND" in line for line in lines)
    assert lines[-1].startswith('report: "# Proxy slow meeting join')
