"""Edges a new user hit (issue "search the way people type"): `trove status` piped, a
config file that is not there, and the blocks `trove search` prints on a wide terminal
(test_cli_polish runs it on one)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console
from test_cli_polish import _logging_restored, on_a_terminal  # noqa: F401 (a fixture)
from typer.testing import CliRunner

from query.cli import app
from query.cli.output import Block, Printer

runner = CliRunner()
BOX = ("│", "┃", "━")


# --------------------------------------------------------------------------- trove status


@pytest.fixture
def long_paths(tmp_path: Path, write: Callable[[str, str], Path]) -> tuple[str, Path]:
    """A config whose report folder's path is longer than an 80-column table's cell (so
    the table wraps it), with one report indexed; conversations are not configured."""
    reports = "reports-of-the-network-team-kept-for-the-yearly-review/" * 2
    write(f"{reports}proxy/r_20251101.md", "proxy timeout")
    write("commands/c.md", "---\ntitle: C\n---\nbody")
    cfg = tmp_path / "trove.toml"
    cfg.write_text(
        f'[sources]\nreports = "{reports}"\ncommands = "commands"\n[index]\ndir = "index"\n',
        encoding="utf-8",
    )
    built = runner.invoke(app, ["--config", str(cfg), "reindex", "--json"])
    assert built.exit_code == 0, built.output
    return str(cfg), (tmp_path / reports).resolve()


def test_status_piped_prints_a_tab_separated_line_per_collection(long_paths) -> None:
    config, reports = long_paths
    r = runner.invoke(app, ["--config", config, "status"])
    assert r.exit_code == 0, r.output
    assert not any(box in r.stdout for box in BOX), r.stdout
    lines = r.stdout.splitlines()
    index = Path(config).parent / "index"
    assert lines[0] == f"# trove status ({index})"
    rows = {line.split("\t")[0]: line.split("\t") for line in lines if not line.startswith("#")}
    assert all(len(row) == 5 for row in rows.values()), rows
    # collection, documents, index size, last update, source: the path whole, never cut.
    assert rows["reports"][1] == "1" and rows["reports"][4] == str(reports)
    assert rows["commands"][1] == "1"
    assert rows["conversations"][4] == "(not configured)"
    assert "# watcher: none has run on this index" in r.stdout
    # --table still prints the table on a pipe.
    table = runner.invoke(app, ["--config", config, "status", "--table"])
    assert table.exit_code == 0 and "┃ collection" in table.stdout and "\t" not in table.stdout


def test_status_on_a_terminal_prints_the_table_whatever_its_width(long_paths) -> None:
    config, _ = long_paths
    for columns in (80, 140):
        shown = on_a_terminal(["--config", config, "status"], columns)
        assert "┃ collection" in shown and "\t" not in shown, shown
        table = [line for line in shown.splitlines() if line[:1] in "┏┃┡│└"]
        assert len(table) > 6 and all(len(line) <= columns for line in table), shown
        assert "watcher: none has run on this index" in shown


# --------------------------------------------------------------------------- no config file


INIT_HINT = "write one with `trove init`"


@pytest.mark.parametrize(
    "argv",
    [["status"], ["search", "proxy"], ["search", "reports", "proxy"], ["daemon"], ["serve"]],
)
def test_without_a_config_file_a_command_says_to_write_one_with_trove_init(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, argv)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert r.stderr == (
        "trove: no config file at ./trove.toml (nor $TROVE_CONFIG); write one with "
        "`trove init`, or pass --config PATH\n"
    )
    if argv[0] in ("status", "search"):  # those that take --json
        error = json.loads(runner.invoke(app, [*argv, "--json"]).stdout)["error"]
        assert error["code"] == "INVALID_CONFIG" and INIT_HINT in error["message"]


def test_a_missing_config_file_named_by_flag_or_env_gets_the_init_that_writes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    target = tmp_path / "my configs" / "trove.toml"
    r = runner.invoke(app, ["status", "--config", str(target)])
    assert r.exit_code == 2
    hint = f"`trove init --config '{target}'`"
    assert f"no config file at {target} (from --config)" in r.stderr and hint in r.stderr
    # The hint works as written: init there, then status answers.
    init = runner.invoke(app, ["init", "--config", str(target), "--reports", "reports"])
    assert init.exit_code == 0, init.output
    assert runner.invoke(app, ["status", "--config", str(target)]).exit_code == 0

    elsewhere = tmp_path / "elsewhere.toml"
    monkeypatch.setenv("TROVE_CONFIG", str(elsewhere))
    r = runner.invoke(app, ["status"])
    assert r.exit_code == 2
    assert f"no config file at {elsewhere} (from $TROVE_CONFIG)" in r.stderr
    assert "write one there with `trove init`" in r.stderr
    assert runner.invoke(app, ["init", "--reports", "reports"]).exit_code == 0
    assert elsewhere.is_file()
    assert runner.invoke(app, ["status"]).exit_code == 0


def test_a_config_file_that_is_there_but_wrong_keeps_its_own_message(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[sources\n", encoding="utf-8")
    r = runner.invoke(app, ["--config", str(bad), "status"])
    assert r.exit_code == 2 and "not valid TOML" in r.stderr
    assert "trove init" not in r.stderr


# --------------------------------------------------------------------------- blocks


def test_blocks_cut_the_tail_and_the_text_to_the_width_never_the_head(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    out = io.StringIO()
    shown = Printer(Console(file=out, width=40, color_system=None), "table")
    assert shown.blocks_fit and not Printer(shown.out, "table", forced=True).blocks_fit
    long_id = "a-command-with-a-long-name/its-report-2025-11-05.md"
    shown.blocks(
        "hits",
        [
            Block(["reports", long_id, "2025-11-05"], "a title", "short"),
            Block(["elog", "27052", ""], "RF trip S30CB09: klystron arc", "代理超时 " * 20),
            Block(["commands", "c"], "", ""),
        ],
    )
    lines = out.getvalue().splitlines()
    assert lines[0] == "hits"
    assert lines[1] == f"reports  {long_id}  2025-11-05"  # whole, and no room for a tail
    assert lines[2] == "  short"
    assert lines[3] == "elog  27052  RF trip S30CB09: klystron …"
    assert lines[4].startswith("  代理超时") and lines[4].endswith("…")
    assert cell_len(lines[4]) <= 40 < cell_len("  " + "代理超时 " * 20)
    assert lines[5:] == ["commands  c"]
